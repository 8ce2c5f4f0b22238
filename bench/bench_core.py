"""Core speed: µs per GD step (core vs a plain NumPy loop) and GD vs GF on B&F's 3 points.

Run ``python -m bench core`` for this quick view. The full comparison (NumPy, PyTorch,
JAX, SciPy's solve_ivp, kinks, memory, threads, start-up) is ``python -m bench``
(bench/measure.py, bench/render.py), which writes bench/REPORT.md. Not a test. Times are
wall-clock medians.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.gd_peers import SIZES
from bench.peers import make_numpy
from bench.problems import EMPTY, gd_problem, three_point
from dynamics.kernels import GDStepper, GFStepper, Problem, default_tolerances


def numpy_gd(p: Problem, W: np.ndarray, a: np.ndarray, lr: float, n_steps: int):
    """GD written the way a user would, in NumPy (square loss, mean reduction; ReLU)."""
    return make_numpy(p.X, p.y, W, a, lr, p.c)(n_steps)


def _median_time(fn, repeats: int) -> float:
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def run_core_bench(sizes: list[tuple[int, int, int]] | None = None,
                   repeats: int = 3) -> list[dict]:
    """For each (n, d, m): µs per GD step of the core and of NumPy, and the speed-up."""
    out = []
    for n, d, m in sizes or SIZES:
        p, W, a = gd_problem(n, d, m)
        work = n * d * m
        steps_core = int(min(200_000, max(20, 3e8 / work)))  # amortise set-up
        steps_np = int(min(20_000, max(3, 3e7 / work)))
        GDStepper(p, W, a, 1e-3).take_steps(2, EMPTY)  # compile / warm up

        def core_run(steps=steps_core, p=p, W=W, a=a):
            GDStepper(p, W, a, 1e-3).take_steps(steps, EMPTY)

        t_core = _median_time(core_run, repeats) / steps_core * 1e6
        t_np = _median_time(lambda p=p, W=W, a=a, s=steps_np: numpy_gd(p, W, a, 1e-3, s),
                            repeats) / steps_np * 1e6
        out.append({"n": n, "d": d, "m": m, "path": "blas" if GDStepper(p, W, a, 1e-3).use_blas
                    else "fused", "core_us_per_step": t_core, "numpy_us_per_step": t_np,
                    "speedup": t_np / t_core})
    return out


def three_point_bench(m: int = 200, t_end: float = 2000.0, lr: float = 1e-3,
                      seed: int = 0) -> list[dict]:
    """Boursier & Flammarion's 3 points, balanced init N(0, (1e-3/√m)²): GD vs GF to t_end."""
    p, W0, a0 = three_point(m, seed)
    beta = np.linalg.lstsq(p.X, p.y, rcond=None)[0]
    ols = 0.5 * np.mean((p.X @ beta - p.y) ** 2)
    grid = np.array([t_end])
    rows = []
    gd = GDStepper(p, W0, a0, lr)
    t0 = time.perf_counter()
    res = gd.take_steps(round(t_end / lr), grid)
    rows.append({"method": f"gd lr={lr:g}", "status": res.status, "evals": gd.n_evals,
                 "wall_s": time.perf_counter() - t0, "final_loss": res.samples.loss[-1],
                 "ols_loss": ols})
    rtol, atol = default_tolerances(W0, a0)
    gf = GFStepper(p, W0, a0, rtol, atol)
    t0 = time.perf_counter()
    res = gf.advance(t_end, 10**8, grid)
    rows.append({"method": f"gf rtol={rtol:g} atol={atol:.1e}", "status": res.status,
                 "evals": gf.n_evals, "wall_s": time.perf_counter() - t0,
                 "final_loss": res.samples.loss[-1], "ols_loss": ols})
    return rows


def main(argv: list[str] | None = None) -> None:
    """Print the core-vs-NumPy table and the three-point GD/GF comparison."""
    argparse.ArgumentParser(prog="python -m bench core",
                            description=__doc__.splitlines()[0]).parse_args(argv)
    print(f"{'(n, d, m)':>18} {'path':>6} {'core µs/step':>13} {'numpy µs/step':>14} "
          f"{'numpy/core':>11}")
    for r in run_core_bench():
        size = f"({r['n']}, {r['d']}, {r['m']})"
        print(f"{size:>18} {r['path']:>6} {r['core_us_per_step']:13.2f} "
              f"{r['numpy_us_per_step']:14.2f} {r['speedup']:10.1f}x")
    print("\nBoursier & Flammarion 3 points, m=200, balanced, λ=1e-3, t_end=2000")
    for r in three_point_bench():
        print(f"  {r['method']:<32} {r['status']:<4} evals={r['evals']:>8d} "
              f"wall={r['wall_s']:7.2f}s  L={r['final_loss']:.15f}  "
              f"L-OLS={r['final_loss'] - r['ols_loss']:.2e}")


if __name__ == "__main__":
    main()
