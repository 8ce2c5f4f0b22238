"""Sweep throughput: LocalCluster (2 worker processes, 1 thread each) against a serial loop.

64 small, distinct runs (never cached: new seeds for every timing), after a warm-up that loads
the compiled kernels in every process; best of --repeat timings per side. Reports runs per
second, the speed-up (goal ≥ 1.7× on 2 cores), and Dask's overhead per run two ways: from the
timings
(elapsed × workers − serial elapsed) / runs, and as the round trip of a no-op task.

    .venv/bin/python -m bench sweep [--runs 64] [--workers 2] [--json out.json]

Not a test: numbers depend on the machine and on what else runs on it (see `loadavg`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def _noop(i: int) -> int:
    return i


def make_sweep(runs: int, offset: int = 0):
    """`runs` distinct points: the default four-point data, width 100, gf to t = 60 (about
    0.1–0.3 s each on one core)."""
    from dynamics.sweeps import Sweep

    return Sweep.from_dict({
        "name": "bench", "base": {"model": {"width": 100},
                                  "integrator": {"method": "gf", "t_end": 60.0},
                                  "record": {"frames": 60, "scalars": 400}},
        "axes": [{"field": "init.scale", "values": [1e-3, 3e-3]}],
        "seeds": list(range(offset, offset + runs // 2)),
    })


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many timings per side")
    ap.add_argument("--json", default=None, help="also write the numbers here")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="eae-bench-sweep-"))
    os.environ["EAE_CACHE_DIR"] = str(tmp / "dask")  # the workers' cache: fresh

    from dynamics import sweep as sw
    from dynamics.service import Service

    warm = make_sweep(2 * args.workers, offset=0)
    svc = Service(cache_dir=tmp / "serial")  # serial: this process, its own fresh cache
    sw.run_sweep_serial(warm, service=svc)
    client = sw.default_clusters().local(args.workers)
    sw.run_sweep(warm, client=client)  # kernels loaded in every worker before timing
    t_serials, t_dasks = [], []
    for r in range(args.repeat):  # alternate; distinct configs every time: nothing cached
        sweep = make_sweep(args.runs, offset=1000 * (r + 1))
        t0 = time.perf_counter()
        ser = sw.run_sweep_serial(sweep, service=svc)
        t_serials.append(time.perf_counter() - t0)
        sweep = make_sweep(args.runs, offset=1000 * (r + 1) + 500)
        t0 = time.perf_counter()
        par = sw.run_sweep(sweep, client=client)
        t_dasks.append(time.perf_counter() - t0)
    t_serial, t_dask = min(t_serials), min(t_dasks)
    ser_check = sw.run_sweep_serial(sweep, service=Service(cache_dir=tmp / "check"))

    futs = [client.submit(_noop, i, pure=False) for i in range(args.runs)]
    t0 = time.perf_counter()
    client.gather(futs)
    t_noop = time.perf_counter() - t0
    del futs

    n = len(sweep.points())
    same = par.frame.drop(columns="wall_time_s").equals(
        ser_check.frame.drop(columns="wall_time_s"))
    compute = float(par.frame["wall_time_s"].sum())
    out = {
        "runs": n, "workers": sw.n_workers_of(client), "cores": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "serial_s": round(t_serial, 3), "dask_s": round(t_dask, 3),
        "serial_s_all": [round(t, 3) for t in t_serials],
        "dask_s_all": [round(t, 3) for t in t_dasks],
        "serial_runs_per_s": round(n / t_serial, 2), "dask_runs_per_s": round(n / t_dask, 2),
        "speedup": round(t_serial / t_dask, 2), "goal": 1.7,
        "mean_run_s_serial": round(float(ser.frame["wall_time_s"].mean()), 4),
        "mean_run_s_dask": round(compute / n, 4),
        # extra worker-seconds per run against the serial loop (same work per run)
        "dask_overhead_per_run_ms": round(1e3 * (t_dask * args.workers - t_serial) / n, 1),
        "noop_task_ms": round(1e3 * t_noop / args.runs, 2),
        "same_results": bool(same),
        "statuses": par.status_counts(),
    }
    sw.default_clusters().close()
    print(json.dumps(out, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
