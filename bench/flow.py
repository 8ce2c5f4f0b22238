"""Adaptive gradient flow (`gf`) against SciPy's solve_ivp, and Wang & Ma's kink sliding.

`gf_vs_scipy` integrates the SAME ODE dθ/dt = −∇L(θ) (OUR loss L = (1/n)Σ ½(h − y)²) with the
core's adaptive stepper and with solve_ivp on the flattened parameters: same rtol and atol,
same t-span, same machine, same run. Evaluations are right-hand-side calls (for LSODA including
its finite-difference Jacobian columns).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dynamics.kernels import GDStepper, GFStepper, Problem, default_atol, loss_grad, loss_value

from . import peers
from .problems import EMPTY, EXAMPLES, from_config


def flat_rhs(p: Problem, m: int, d: int) -> tuple[Callable[[float, np.ndarray], np.ndarray],
                                                 list[int]]:
    """−∇L on the flattened θ = (W.ravel(), a), and a one-element list counting its calls."""
    counter = [0]

    def rhs(_t: float, th: np.ndarray) -> np.ndarray:
        counter[0] += 1
        _, gW, ga = loss_grad(p, th[: m * d].reshape(m, d), th[m * d:])
        return -np.concatenate((gW.ravel(), ga))

    return rhs, counter


def gf_vs_scipy(name: str, p: Problem, W0: np.ndarray, a0: np.ndarray, t_end: float,
                rtol: float, atol: float, methods: list[str], gd_lr: float | None = None,
                ) -> dict[str, Any]:
    """Our `gf` and solve_ivp on the same ODE; rows of evaluations, wall time, final loss.

    With `gd_lr`, also fixed-step GD to t_end (core, and a NumPy loop estimated from a
    shorter timed run).
    """
    from scipy.integrate import solve_ivp

    m, d = W0.shape
    rows: list[dict[str, Any]] = []
    GFStepper(p, W0, a0, rtol, atol).advance(min(t_end, 1e-3), 100, EMPTY)  # compile
    gf_walls, gf = [], None
    for _ in range(3):
        gf = GFStepper(p, W0, a0, rtol, atol)
        t0 = time.perf_counter()
        res = gf.advance(t_end, 10**9, EMPTY)
        gf_walls.append(time.perf_counter() - t0)
        assert res.status == "ok", res.status
    assert gf is not None
    inv = (gf.a ** 2 - np.sum(gf.W ** 2, axis=1)) - (a0 ** 2 - np.sum(W0 ** 2, axis=1))
    scale = float(np.max(gf.a ** 2 + np.sum(gf.W ** 2, axis=1)))
    rows.append({"method": "core gf (BS23)", "evals": gf.n_evals,
                 "steps": f"{gf.n_accepted} acc / {gf.n_rejected} rej / {gf.n_forced} floor",
                 "wall_s": statistics.median(gf_walls),
                 "loss": loss_value(p, gf.W, gf.a),
                 "balance_drift": float(np.max(np.abs(inv)) / scale),
                 "signs_kept": bool(np.all(np.sign(gf.a) == np.sign(a0)))})
    th0 = np.concatenate((W0.ravel(), a0))
    for meth in methods:
        rhs, counter = flat_rhs(p, m, d)
        t0 = time.perf_counter()
        sol = solve_ivp(rhs, (0.0, t_end), th0, method=meth, rtol=rtol, atol=atol,
                        t_eval=[t_end])
        wall = time.perf_counter() - t0
        th = sol.y[:, -1] if sol.y.shape[1] else th0
        rows.append({"method": f"scipy {meth}", "evals": counter[0],
                     "steps": f"nfev {sol.nfev}, njev {sol.njev}", "wall_s": wall,
                     "loss": loss_value(p, th[: m * d].reshape(m, d), th[m * d:]),
                     "status": sol.message if not sol.success else "ok"})
    if gd_lr is not None:
        gd = GDStepper(p, W0, a0, gd_lr)
        gd.take_steps(2, EMPTY)
        gd = GDStepper(p, W0, a0, gd_lr)
        k = round(t_end / gd_lr)
        t0 = time.perf_counter()
        gd.take_steps(k, EMPTY)
        wall = time.perf_counter() - t0
        rows.append({"method": f"core gd η={gd_lr:g}", "evals": gd.n_evals,
                     "steps": f"{k} steps", "wall_s": wall,
                     "loss": loss_value(p, gd.W, gd.a)})
        np_run = peers.make_numpy(p.X, p.y, W0, a0, gd_lr, p.c)
        probe = max(100, min(k, 20_000))
        t0 = time.perf_counter()
        np_run(probe)
        per = (time.perf_counter() - t0) / probe
        rows.append({"method": f"numpy gd η={gd_lr:g} (est.)", "evals": k + 1,
                     "steps": f"{probe} steps timed, ×{k / probe:.0f}", "wall_s": per * k,
                     "loss": float("nan")})
    sp = [r for r in rows if r["method"].startswith("scipy")]
    out: dict[str, Any] = {"name": name, "t_end": t_end, "rtol": rtol, "atol": atol,
                           "rows": rows, "m": m, "d": d, "n": p.X.shape[0]}
    g = rows[0]
    rk23 = next((r for r in sp if r["method"] == "scipy RK23"), None)
    if sp:
        best = min(sp, key=lambda r: r["wall_s"])
        out["best_scipy"] = best["method"]
        out["wall_ratio"] = best["wall_s"] / g["wall_s"]
    if rk23 is not None:
        out["evals_vs_rk23"] = g["evals"] / rk23["evals"]
        out["dloss_vs_rk23"] = abs(g["loss"] - rk23["loss"])
    return out


def kink_section(quick: bool) -> dict[str, Any]:
    """Wang & Ma (examples/two_signals.json): gf cost and distance to small-η GD at t_end."""
    cfg, p, W0, a0 = from_config(EXAMPLES / "two_signals.json")
    t_end = 20.0 if quick else float(cfg.integrator.t_end)
    rtol = float(cfg.integrator.rtol)
    atol = default_atol(W0, a0, rtol)
    GFStepper(p, W0, a0, rtol, atol).advance(1e-3, 100, EMPTY)
    gf = GFStepper(p, W0, a0, rtol, atol)
    t0 = time.perf_counter()
    gf.advance(t_end, 10**9, EMPTY)
    wall = time.perf_counter() - t0
    rows: list[dict[str, Any]] = [
        {"method": f"gf rtol={rtol:g}", "evals": gf.n_evals, "floor": gf.n_forced,
         "accepted": gf.n_accepted, "rejected": gf.n_rejected, "wall_s": wall,
         "loss": loss_value(p, gf.W, gf.a), "W": gf.W.copy()}]
    for lr in ((1e-2,) if quick else (1e-2, 1e-3, 2.5e-4)):
        gd = GDStepper(p, W0, a0, lr)
        t0 = time.perf_counter()
        gd.take_steps(round(t_end / lr), EMPTY)
        rows.append({"method": f"gd η={lr:g}", "evals": gd.n_evals, "floor": 0,
                     "accepted": gd.k, "rejected": 0, "wall_s": time.perf_counter() - t0,
                     "loss": loss_value(p, gd.W, gd.a), "W": gd.W.copy()})
    ref = rows[-1]["W"]
    for r in rows:
        r["dist_to_finest_gd"] = float(np.linalg.norm(r.pop("W") - ref) / np.linalg.norm(ref))
    return {"t_end": t_end, "rows": rows, "m": W0.shape[0]}
