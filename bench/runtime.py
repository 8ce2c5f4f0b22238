"""Memory per frame, two simulations in two threads, and start-up of a fresh process."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .problems import EMPTY, EXAMPLES, REPO, from_config


def memory_section(quick: bool) -> dict[str, Any]:
    """Trajectory.nbytes() / frames for the teacher preset at width 1000 (100 when quick)."""
    from dynamics.limits import get_limits
    from dynamics.simulate import simulate

    cfg, _, _, _ = from_config(EXAMPLES / "teacher.json")
    width = 100 if quick else 1000
    cfg = cfg.with_updates({"model.width": str(width), "integrator.t_end": "30" if quick
                            else "300", "record.frames": "20" if quick else "150"})
    tr = simulate(cfg)
    return {"width": width, "frames": tr.n_frames, "d": tr.X.shape[1], "n": tr.X.shape[0],
            "nbytes": tr.nbytes(), "per_frame": tr.nbytes() / tr.n_frames,
            "W_frames": len(tr.W_frames), "budget_mb": get_limits().full_w_budget_mb,
            "status": tr.status}


def one_vs_two(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median wall time of one call of `fn`, and of two calls in two threads at once."""
    one, two = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        one.append(time.perf_counter() - t0)
        ths = [threading.Thread(target=fn) for _ in range(2)]
        t0 = time.perf_counter()
        for th in ths:
            th.start()
        for th in ths:
            th.join()
        two.append(time.perf_counter() - t0)
    return statistics.median(one), statistics.median(two)


def threads_section(quick: bool, repeats: int) -> dict[str, Any]:
    """Wall time of two simulations in two threads over one alone (mid-size teacher run),
    the same for the bare kernels, and whether a kernel call lets other Python threads run."""
    from dynamics.blas import apply_numpy_blas_threads
    from dynamics.kernels import GDStepper, use_blas_path
    from dynamics.simulate import simulate

    from .machine import loadavg

    cfg, _, _, _ = from_config(EXAMPLES / "teacher.json")
    cfg = cfg.with_updates({"data.n": "64", "model.width": "100" if quick else "400",
                            "integrator.method": "gd", "integrator.lr": "0.05",
                            "integrator.t_end": "5" if quick else "500",
                            "record.frames": "10", "record.scalars": "100"})
    simulate(cfg)  # warm-up
    # NumPy's default BLAS threads first (applying the service's setting is one-way)
    d1, d2 = one_vs_two(lambda: simulate(cfg), repeats)
    np_threads = apply_numpy_blas_threads()  # as the service does (dynamics/blas.py)
    t1, t2 = one_vs_two(lambda: simulate(cfg), repeats)
    # the kernels alone: GD steps on the same problem, one stepper vs two in two threads
    p = from_config(EXAMPLES / "teacher.json", **{"data.n": 64})[1]
    rng = np.random.default_rng(0)
    m = 100 if quick else 400
    W = rng.normal(size=(m, p.X.shape[1])) * 1e-2
    a = rng.normal(size=m) * 1e-2
    steps = 200 if quick else 10_000

    def kern() -> None:
        GDStepper(p, W, a, 1e-3).take_steps(steps, EMPTY)

    kern()
    kt1, kt2 = one_vs_two(kern, repeats)
    # GIL check: a pure-Python counter keeps running while a kernel call is in progress
    cnt, stop = [0], [False]

    def spin() -> None:
        while not stop[0]:
            cnt[0] += 1

    sp = threading.Thread(target=spin)
    sp.start()
    time.sleep(0.1)
    c0, t0 = cnt[0], time.perf_counter()
    time.sleep(0.3)
    alone = (cnt[0] - c0) / (time.perf_counter() - t0)
    c0, t0 = cnt[0], time.perf_counter()
    kern()
    during = (cnt[0] - c0) / (time.perf_counter() - t0)
    stop[0] = True
    sp.join()
    return {"one_s": t1, "two_s": t2, "ratio": t2 / t1, "default_ratio": d2 / d1,
            "numpy_blas_threads": np_threads, "k_one_s": kt1, "k_two_s": kt2,
            "k_ratio": kt2 / kt1, "k_steps": steps, "gil_rate": during / alone,
            "load1": loadavg()[0], "n": 64, "d": 16, "m": m,
            "path": "blas" if use_blas_path(64, 16, m) else "fused"}


def startup_section() -> dict[str, Any]:
    """Fresh-process time to the first simulate() result: empty numba cache, then filled.

    Runs `python -m bench.first_result` three times with a private NUMBA_CACHE_DIR (so the
    repository's cache is not touched): "cold" compiles, "warm" and "warm2" load the cache.
    """
    path = str(EXAMPLES / "three_point.json")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="eae-numba-cache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        for label in ("cold", "warm", "warm2"):
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "bench.first_result", path], env=env,
                               cwd=str(REPO), capture_output=True, text=True, timeout=600)
            total = time.perf_counter() - t0
            if r.returncode != 0:
                out[label] = {"error": r.stderr.strip().splitlines()[-1:]}
                continue
            imp, first = (float(v) for v in r.stdout.split()[-2:])
            out[label] = {"process_s": total, "import_s": imp, "simulate_s": first}
    return out
