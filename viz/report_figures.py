"""The per-paper PNGs of the reproduction report: for each paper, its report figure (a
declarative `dynamics.figure_spec.FigureSpec`, usually one run's loss beside a key quantity on
log axes with the analysis' time markers) drawn by `viz.paper_figures.render`.

    python -m viz.report_figures [paper] [--quick | --full] [--out reports]

writes `<out>/<paper>.png` (the files `reports/reproduce_*.md` link to). Each paper names the
run and the figure (`dynamics.papers.ReportFigure`); this module only draws. PNGs go through
plotly + kaleido driving a headless Chromium (BROWSER_PATH, default /usr/bin/chromium) — set
here, never in the library.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import plotly.graph_objects as go

from dynamics.analysis import analyse
from dynamics.annotations import Analysis
from dynamics.config import Config
from dynamics.papers import PAPERS, ReportFigure, get_paper
from dynamics.simulate import simulate
from dynamics.trajectory import Trajectory

from .export import chromium_path
from .paper_figures import render

DEFAULT_BROWSER = "/usr/bin/chromium"
WIDTH, HEIGHT = 1000, 380


def report_spec(paper: str, quick: bool = True) -> ReportFigure:
    """The paper's report figure: its run's Config and how to build the figure from it."""
    return get_paper(paper).report_figure(quick)


def report_figure(paper: str, traj: Trajectory, analysis: Analysis | None, *,
                  spec: ReportFigure | None = None) -> go.Figure:
    """The paper's report figure for this run (`spec` defaults to `report_spec(paper)`),
    rendered at the report's size."""
    spec = spec or report_spec(paper)
    fig = render(spec.figure(traj, analysis), height=HEIGHT)
    fig.update_layout(width=WIDTH)
    return fig


def use_chromium() -> None:
    """Point kaleido at a Chromium (BROWSER_PATH, unless already set)."""
    os.environ.setdefault("BROWSER_PATH", chromium_path() or DEFAULT_BROWSER)


def write_report_figures(out: Path, papers: Sequence[str] | None = None, quick: bool = True,
                         run: Callable[[Config], Trajectory] = simulate) -> list[str]:
    """Run each paper's report configuration and write `<out>/<paper>.png`. Returns the
    names written; a paper whose PNG cannot be rendered (kaleido or Chromium missing) is
    reported on stderr and skipped."""
    use_chromium()
    out.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    for paper in papers or tuple(PAPERS):
        spec = report_spec(paper, quick)
        traj = run(spec.config)
        fig = report_figure(paper, traj, analyse(traj), spec=spec)
        name = f"{paper}.png"
        try:
            fig.write_image(str(out / name))
        except Exception as e:  # kaleido/Chromium missing: the report's tables still stand
            print(f"figure {name} not written: {e}", file=sys.stderr)
            continue
        written.append(name)
    return written


__all__ = ["main", "report_figure", "report_spec", "use_chromium",
           "write_report_figures"]


def main(argv: list[str] | None = None) -> int:
    """python -m viz.report_figures [paper] [--quick | --full] [--out reports]"""
    ap = argparse.ArgumentParser(prog="python -m viz.report_figures")
    ap.add_argument("paper", nargs="?", default="all", choices=("all", *PAPERS))
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", default=True)
    g.add_argument("--full", action="store_true")
    ap.add_argument("--out", default="reports")
    args = ap.parse_args(argv)
    papers = None if args.paper == "all" else [args.paper]
    names = write_report_figures(Path(args.out), papers, quick=not args.full)
    for name in names:
        print(f"wrote {Path(args.out) / name}")
    return 0 if names else 1


if __name__ == "__main__":
    sys.exit(main())
