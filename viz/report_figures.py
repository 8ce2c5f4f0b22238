"""The per-paper PNGs of the reproduction report: for each paper, one run's loss (left) and a
key quantity (right) against time on log axes, with the analysis' time markers (dashed:
predicted, solid: detected).

    python -m viz.report_figures [paper] [--quick | --full] [--out reports]

writes `<out>/<paper>.png` (the files `reports/reproduce_*.md` link to). Each paper names the
run and the quantity (`dynamics.papers.ReportFigure`); this module only draws. PNGs go through
plotly + kaleido driving a headless Chromium (BROWSER_PATH, default /usr/bin/chromium) — set
here, never in the library.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dynamics.analysis import analyse
from dynamics.annotations import Analysis
from dynamics.config import Config
from dynamics.papers import PAPERS, ReportFigure, get_paper
from dynamics.simulate import simulate
from dynamics.trajectory import Trajectory

from .export import chromium_path

DEFAULT_BROWSER = "/usr/bin/chromium"
WIDTH, HEIGHT = 1000, 380


def report_spec(paper: str, quick: bool = True) -> ReportFigure:
    """The paper's report figure: its run's Config, the right panel's title and series."""
    return get_paper(paper).report_figure(quick)


def report_figure(paper: str, traj: Trajectory, analysis: Analysis | None, *,
                  spec: ReportFigure | None = None) -> go.Figure:
    """Loss and the paper's key quantity against t (log axes; t = 0 drawn at t₁/2), with the
    analysis' markers on both panels. `spec` defaults to `report_spec(paper)`."""
    spec = spec or report_spec(paper)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("loss", spec.panel_title))
    t = np.maximum(traj.t, traj.t[1] * 0.5)
    fig.add_trace(go.Scatter(x=t, y=traj.loss, name="loss"), 1, 1)
    for name, values in spec.series(traj).items():
        fig.add_trace(go.Scatter(x=t, y=values, name=name), 1, 2)
    for m in analysis.markers if analysis is not None else ():
        for col in (1, 2):
            fig.add_vline(x=m.time, line_dash="dash" if m.source == "predicted" else "solid",
                          line_width=1, row=1, col=col)
    fig.update_xaxes(type="log", title="t")
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_layout(width=WIDTH, height=HEIGHT,
                      title=f"{paper}: {traj.config.data.kind}")
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
