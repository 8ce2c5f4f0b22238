"""`python -m bench`: the core against its peers, measured in one run and written to
bench/REPORT.md (bench.measure, then bench.render); ``python -m bench TOOL ...`` runs one of the
other benchmarks (see `TOOLS`).

Not a test: nothing here asserts a speed. ``--quick`` shrinks every section (smoke tests).
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
from pathlib import Path

from . import peers
from .gd_peers import parse_sizes
from .measure import SECTIONS, Options, measure
from .problems import REPO
from .render import render

DEFAULT_OUT = REPO / "bench" / "REPORT.md"
#: The other benchmarks, each its own module with its own options: `python -m bench NAME -h`.
TOOLS = {
    "core": ("bench.bench_core", "quick view: core vs a NumPy loop, GD vs GF on three points"),
    "service": ("bench.bench_service", "service: cache hits, blob size, concurrent requests"),
    "sweep": ("bench.bench_sweep", "sweep throughput: Dask LocalCluster vs a serial loop"),
    "page": ("bench.bench_page", "Explorer latency in a browser (first chart, settings "
             "changes: --changes N) and under AppTest"),
    "pages": ("bench.bench_pages", "first chart of every page; quick built-in sweeps"),
    "load": ("bench.load", "a classroom on one link (--students N: protocol-level sessions, "
             "--browsers N); without --students, browser sessions at once"),
    "figures": ("bench.bench_figures", "server CPU and bytes of a new chart, per page figure"),
    "drag": ("bench.bench_drag", "scrub a control live: family arrival, updates per second "
             "while dragging ε and γ (real Chromium)"),
    "edit": ("bench.bench_edit", "move a data point in the neuron panel: theory updates and "
             "runs per second while dragging, release to the new animation (real Chromium)"),
    "precompute": ("bench.precompute", "auto end time and analysis at every size up to the "
                   "limits, before -> after"),
    "soak": ("bench.soak", "protocol-level sessions for minutes: RSS, files, threads, cache"),
    "hosting": ("bench.hosting", "the hosted instance's hard cases: heavy links and an upload "
                "beside other visitors, upload races, health probes, sweep specs, a lost Dask "
                "cluster, CSV (--repo: another checkout)"),
}


def build_parser() -> argparse.ArgumentParser:
    """The report's options (the other tools parse their own)."""
    tools = "\n".join(f"  {k:<8} {why}" for k, (_, why) in TOOLS.items())
    ap = argparse.ArgumentParser(
        prog="python -m bench", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Benchmark the core against NumPy, PyTorch, JAX and SciPy; write a "
        "Markdown report.",
        epilog=f"Other benchmarks: python -m bench TOOL [options] (TOOL -h for its options)\n"
        f"{tools}")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="report path (bench/REPORT.md)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, short runs (smoke test)")
    ap.add_argument("--sizes", help="'n,d,m;n,d,m' GD sizes (default: bench.gd_peers.SIZES)")
    ap.add_argument("--repeats", type=int, default=None, help="interleaved timing rounds")
    ap.add_argument("--peers", default=",".join(peers.PEERS), help="comma list of peers")
    ap.add_argument("--skip", default="", help="comma list of sections to skip: "
                    + ", ".join(SECTIONS))
    ap.add_argument("--only", default="", help="comma list of the only sections to run (the "
                    "others are skipped), e.g. --only flow")
    ap.add_argument("--json", help="also write the raw results as JSON here")
    return ap


def run_tool(name: str, argv: list[str]) -> int:
    """Run the benchmark module of `TOOLS[name]` as ``__main__`` with `argv`; its exit code."""
    module = TOOLS[name][0]
    saved = sys.argv
    sys.argv = [f"python -m bench {name}", *argv]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = saved
    return 0


def main(argv: list[str] | None = None) -> int:
    """Measure, render, write the report (and print it); or run one of `TOOLS`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in TOOLS:
        return run_tool(argv[0], argv[1:])
    args = build_parser().parse_args(argv)
    skip = frozenset(s.strip() for s in args.skip.split(",") if s.strip())
    only = frozenset(s.strip() for s in args.only.split(",") if s.strip())
    unknown = (skip | only) - set(SECTIONS)
    if unknown:
        print(f"unknown section(s) in --skip/--only: {', '.join(sorted(unknown))}",
              file=sys.stderr)
        return 2
    if only:
        skip |= frozenset(SECTIONS) - only
    opts = Options(quick=args.quick, sizes=parse_sizes(args.sizes) if args.sizes else None,
                   repeats=args.repeats,
                   peers=tuple(p.strip() for p in args.peers.split(",") if p.strip()),
                   skip=skip, argv=(" " + " ".join(argv)) if argv else "")
    res = measure(opts)
    text = render(res)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps(res, default=str, indent=1), encoding="utf-8")
    print(text)
    print(f"wrote {out}", file=sys.stderr)
    return 0
