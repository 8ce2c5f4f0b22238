"""What a new chart costs the server and the wire, per page figure: the analysis of the run
and the figure's description and encoding (CPU seconds in this process, the simulation
excluded: the runs are computed first) and the bytes sent (raw and gzip-compressed, as the
websocket and HTTP compress them).

    .venv/bin/python -m bench figures             # every page's figure
    .venv/bin/python -m bench figures --json out.json

Each figure is built `--repeats` times and the median CPU time is kept; so is the analysis
(`dynamics.analysis.analyse`, computed once per run by the service). A chart is the payload
the player fetches (`viz.payload`); a checkout from before the browser composed its figures
(figures as `AnimatedFigure`, or as `go.Figure` before the player) is measured the same way —
the same file runs on all: `cd OTHER && PYTHONPATH=. .venv/bin/python
/path/to/bench/bench_figures.py`. The CPU's model name is printed first: figures hold for one
class of host.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _payload(fig: Any) -> bytes:
    """The bytes a chart sends: the player's payload, or an old figure's Plotly JSON."""
    if hasattr(fig, "to_json") and not hasattr(fig, "animation"):
        return fig.to_json().encode()
    from viz.payload import encode
    return encode(fig)


def _cases() -> list[tuple[str, Callable[[], tuple[Any, ...]], Callable[..., Any]]]:
    """(page figure, make the runs, build the figure from them)."""
    from dynamics.analysis import analyse
    from dynamics.config import Config
    from dynamics.papers import PAPERS
    from dynamics.papers.min import digits_config
    from dynamics.simulate import simulate
    from viz.compare import compare_figure
    from viz.main_figure import main_figure
    from viz.real_data import real_data_figure

    def run(cfg: Config) -> tuple[Any, Any]:
        tr = simulate(cfg)
        return tr, analyse(tr)

    from dynamics.timescales import with_auto_time

    out: list[tuple[str, Callable[[], tuple[Any, ...]], Callable[..., Any]]] = [
        ("Explorer default", lambda: run(with_auto_time(Config())[0]), main_figure)]
    for key, paper in PAPERS.items():
        name, cfg = next(iter(paper.presets(True).items()))
        out.append((f"Papers {key} ({name})", lambda c=cfg: run(c), main_figure))

    def two() -> tuple[Any, ...]:
        a = run(Config.from_dict({"init": {"scale": 1e-6}, "integrator": {"t_end": 100.0}}))
        b = run(Config.from_dict({"init": {"scale": 1.0}, "integrator": {"t_end": 100.0}}))
        return a[0], b[0], a[1], b[1]

    out.append(("Compare default", two, compare_figure))
    out.append(("Real data default",
                lambda: run(digits_config(quick=False).with_updates({"integrator.t_end": 2.0})),
                real_data_figure))
    return out


def _analysis_cpu(args: tuple[Any, ...], repeats: int, cold: bool) -> float:
    """Median CPU seconds of analysing the case's runs (each once, as the service does);
    `cold`: on data met for the first time (the extremal vectors of G, which depend on the
    data only and are kept per data set, computed again)."""
    from dynamics.analysis import analyse

    try:
        from dynamics.extremal import forget
    except ImportError:  # a checkout that keeps nothing between analyses
        def forget() -> None:
            return None

    trajs = [a for a in args if hasattr(a, "config") and hasattr(a, "norms")]
    cpu = []
    for _ in range(repeats):
        if cold:
            forget()
        t0 = time.process_time()
        for tr in trajs:
            analyse(tr)
        cpu.append(time.process_time() - t0)
    return statistics.median(cpu)


def measure(repeats: int = 5) -> list[dict[str, Any]]:
    from .machine import cpu_model

    print(f"CPU: {cpu_model()}", flush=True)
    rows = []
    for name, make, build in _cases():
        args = make()
        build(*args)  # imports, caches of the first build
        cpu, raw = [], b""
        for _ in range(repeats):
            t0 = time.process_time()
            raw = _payload(build(*args))
            cpu.append(time.process_time() - t0)
        fig_s = statistics.median(cpu)
        cold, warm = _analysis_cpu(args, repeats, True), _analysis_cpu(args, repeats, False)
        rows.append({"figure": name, "cpu_s": fig_s, "analysis_cold_cpu_s": cold,
                     "analysis_cpu_s": warm, "chart_cpu_s": fig_s + warm,
                     "chart_cold_cpu_s": fig_s + cold, "bytes": len(raw),
                     "gzip_bytes": len(gzip.compress(raw, 6))})
        print(f"{name:42} figure {fig_s * 1000:5.1f} ms + analysis {warm * 1000:5.1f} ms "
              f"(new data {cold * 1000:5.1f}) = {(fig_s + warm) * 1000:5.1f} ms "
              f"({(fig_s + cold) * 1000:5.1f}) CPU  {len(raw) / 1e3:6.1f} kB"
              f" ({rows[-1]['gzip_bytes'] / 1e3:5.1f} kB gzip)", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench figures",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args(argv)
    rows = measure(args.repeats)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
