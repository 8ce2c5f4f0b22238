"""Service benchmark (not a test): what a page waits for when a config is cached or not.

Prints, for the Explorer default `Config()`: cold compute through the service (kernels already
loaded), a memory hit, a disk hit (fresh Service over the same directory), the trajectory
blob size, and the cost of 30 concurrent identical requests. Run:

    .venv/bin/python -m bench service [--repeat 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynamics.config import Config
from dynamics.service import Service
from dynamics.simulate import simulate


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.3f} s "


def _median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=200, help="repetitions for hit timings")
    args = ap.parse_args()
    cfg = Config()
    # load the compiled kernels once (numba cache) so "cold" means: not in any cache
    simulate(Config.from_dict({"model": {"width": 4}, "record": {"frames": 4, "scalars": 10},
                               "integrator": {"t_end": 1.0}}))
    with tempfile.TemporaryDirectory() as tmp:
        svc = Service(tmp)
        t0 = time.perf_counter()
        traj = svc.run(cfg)
        cold = time.perf_counter() - t0
        blob = traj.to_bytes()
        mem = _median_time(lambda: svc.run(cfg), args.repeat)

        def disk_hit() -> None:
            svc.clear_memory()
            svc.run(cfg)

        disk = _median_time(disk_hit, max(5, args.repeat // 10))
        fresh = Service(tmp)
        t0 = time.perf_counter()
        fresh.run(cfg)
        restart = time.perf_counter() - t0

        crowd = Service(Path(tmp) / "crowd")
        barrier = threading.Barrier(30)

        def ask() -> None:
            barrier.wait()
            crowd.run(cfg)

        threads = [threading.Thread(target=ask) for _ in range(30)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        crowd_t = time.perf_counter() - t0
        st = crowd.stats()

    print(f"config: Explorer default Config() — width {cfg.model.width}, "
          f"{cfg.integrator.method}, t_end {cfg.integrator.t_end:g}, "
          f"{cfg.record.frames} frames, {cfg.record.scalars} scalars")
    print(f"cold compute via service     {_fmt(cold)}  (simulate wall {traj.wall_time:.3f} s, "
          f"{traj.n_evals} gradient evaluations, status {traj.status})")
    print(f"memory hit (median)          {_fmt(mem)}")
    print(f"disk hit (median)            {_fmt(disk)}")
    print(f"disk hit after restart       {_fmt(restart)}  (first request of a new Service)")
    print(f"30 identical concurrent      {_fmt(crowd_t)}  (computations {st['computations']}, "
          f"joined {st['joined']}, memory hits {st['memory_hits']})")
    print(f"trajectory blob              {len(blob):,} bytes on disk; "
          f"{traj.nbytes():,} bytes of arrays in memory")


if __name__ == "__main__":
    main()
