"""`python -m dynamics sweep SWEEP.json --out results.parquet [--scheduler ADDR]
[--builtin NAME [--quick | --full]] [--workers N] [--list]`."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..limits import get_limits
from .builtins import BUILTINS, builtin_sweep
from .engine import Clusters, run_sweep, scheduler_address
from .spec import Sweep, SweepError


def cli_main(argv: Sequence[str] | None = None) -> int:
    """Run a sweep file or a built-in on Dask and write the table (.parquet or .csv); prints a
    JSON summary. Exit codes: 0 done, 1 cancelled, 2 bad spec or cluster, 130 interrupted."""
    ap = argparse.ArgumentParser(prog="python -m dynamics sweep",
                                 description="Run a parameter sweep on Dask (a LocalCluster, or "
                                 "the scheduler named by --scheduler / DASK_SCHEDULER_ADDRESS).")
    ap.add_argument("spec", nargs="?", help="sweep JSON file (or use --builtin)")
    ap.add_argument("--out", default="sweep.parquet", help="results: .parquet or .csv")
    ap.add_argument("--scheduler", default=None, help="address of a running dask scheduler")
    ap.add_argument("--builtin", default=None, choices=sorted(BUILTINS),
                    help="run a built-in sweep instead of a file")
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="built-in: quick size (default)")
    size.add_argument("--full", action="store_true", help="built-in: full size")
    ap.add_argument("--workers", type=int, default=None, help="LocalCluster workers (default: "
                    "cores)")
    ap.add_argument("--no-workers-timeout", type=float, default=None, metavar="S",
                    help="stop when the cluster has had no workers for S seconds (default: "
                    "wait for one to join; finished points are kept either way)")
    ap.add_argument("--list", action="store_true", help="list the built-ins and exit")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(list(argv) if argv is not None else None)
    if args.list:
        for b in BUILTINS.values():
            print(f"{b.name:22s} {b.title} — {b.paper}")
        return 0
    try:
        if args.builtin:
            sweep = builtin_sweep(args.builtin, quick=not args.full)
        elif args.spec:
            p = Path(args.spec)
            if not p.is_file():
                raise SweepError([("SWEEP", f"no such file: {args.spec}")])
            limit = get_limits().max_spec_mb * 2**20
            if p.stat().st_size > limit:  # refused before it is read
                raise SweepError([("SWEEP", f"{args.spec} is {p.stat().st_size / 2**20:,.1f} "
                                   f"MB, over the limit of {limit / 2**20:g} MB for a sweep "
                                   f"spec ({get_limits().env_name('max_spec_mb')})")])
            sweep = Sweep.from_json(p.read_bytes())
        else:
            ap.error("give a sweep JSON file or --builtin NAME")
    except SweepError as e:
        print("The sweep is not valid:", file=sys.stderr)
        for path, msg in e.errors:
            print(f"  - {path}: {msg}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if out.suffix not in (".parquet", ".csv"):
        print(f"error: --out must end in .parquet or .csv (got {out.name})", file=sys.stderr)
        return 2
    shown = [-1]

    def progress(done: int, total: int, row: dict[str, Any]) -> None:
        step = max(1, total // 20)
        if not args.quiet and (done == total or done - shown[0] >= step):
            shown[0] = done
            print(f"  {done}/{total} points  (last: {row.get('status')})", file=sys.stderr)

    cancel = threading.Event()
    where = scheduler_address(args.scheduler) or \
        f"LocalCluster ({args.workers or os.cpu_count()} workers)"
    if not args.quiet:
        print(f"sweep {sweep.name!r}: {sweep.n_points()} points on {where}", file=sys.stderr)
    with Clusters() as clusters:
        try:
            res = run_sweep(sweep, scheduler=args.scheduler, n_workers=args.workers,
                            clusters=clusters, progress=progress, cancel=cancel,
                            notice=lambda text: print(f"  {text}", file=sys.stderr),
                            no_workers_timeout=args.no_workers_timeout)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return 130
        except OSError as e:
            print(f"error: could not reach the Dask cluster: {e}", file=sys.stderr)
            return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(res.to_csv_bytes() if out.suffix == ".csv" else res.to_parquet_bytes())
    summary = {"name": sweep.name, "points": len(res.frame), "statuses": res.status_counts(),
               "elapsed_s": round(res.elapsed_s, 2), "scheduler": res.scheduler,
               "workers": res.n_workers, "out": str(out)}
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    return 1 if res.cancelled else 0
