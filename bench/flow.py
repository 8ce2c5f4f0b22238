"""Adaptive gradient flow (`gf`) against SciPy's solve_ivp and diffrax, and its accuracy at
kinks.

`gf_vs_scipy` integrates the SAME ODE dθ/dt = −∇L(θ) (OUR loss L = (1/n)Σ ½(h − y)²) with the
core's adaptive stepper and with solve_ivp on the flattened parameters: same rtol and atol,
same t-span, same machine, same run. Evaluations are right-hand-side calls (for LSODA including
its finite-difference Jacobian columns).

`kink_section` measures accuracy on kinked runs: the drift of the invariant a_j² − ‖w_j‖² at
several rtol, for gf (the kink floor: steps where neurons slide on ReLU kinks), diffrax and
SciPy RK23.

`end_to_end` times what a user waits for: the bare stepper, `simulate()` with every frame's
metrics, diffrax (JAX's adaptive ODE library: Bosh3, the same Bogacki–Shampine pair, at the same
rtol/atol and frame times, the whole solve jit-compiled, compile time apart) and SciPy RK23 on
the same ODE and starting point.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dynamics.kernels import (
    GDStepper,
    GFStepper,
    Problem,
    default_atol,
    loss_grad,
    loss_value,
    make_stepper,
)

from . import peers
from .machine import loadavg
from .problems import DASHBOARD_RUN, EMPTY, FLOW_GOALS, flow_runs


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


#: The kinked runs of the accuracy table: leaky ReLU (γ = 0.1), logistic loss, three clusters
#: with a bias input (~900 kink crossings by t = 60); Wang & Ma's two signals with a trained,
#: balanced output layer (their preset freezes it, where a_j² − ‖w_j‖² is not conserved):
#: negative neurons slide on x₊'s kink and leave it in Phase IV.
KINKED = {
    "leaky clusters": {"data": {"kind": "clusters", "bias": True},
                       "model": {"gamma": 0.1}, "loss": {"kind": "logistic"}},
    "Wang & Ma, trained a": "wang_ma",
}


def _kinked_config(name: str, quick: bool) -> Any:
    from dynamics.config import Config
    from dynamics.papers import wang_ma

    spec = KINKED[name]
    if spec == "wang_ma":
        cfg = wang_ma.config(t_end=20.0 if quick else 2000.0).with_updates(
            {"model.train_output": True, "init.scheme": "balanced"})
    else:
        cfg = Config.from_dict(spec)  # type: ignore[arg-type]
        if quick:
            cfg = cfg.with_updates({"integrator.t_end": 6.0})
    return cfg


def _balance_drift(W: np.ndarray, a: np.ndarray, W0: np.ndarray, a0: np.ndarray) -> float:
    """max over frames of max_j |Δ(a_j² − ‖w_j‖²)| / max_j (a_j² + ‖w_j‖²); W (F, m, d)."""
    b0 = a0 ** 2 - np.sum(W0 ** 2, axis=1)
    b = a ** 2 - np.sum(W ** 2, axis=2)
    s = a ** 2 + np.sum(W ** 2, axis=2)
    return float(np.max(np.max(np.abs(b - b0), axis=1) / np.max(s, axis=1)))


def kink_section(quick: bool) -> dict[str, Any]:
    """Accuracy at kinks: on each of `KINKED`, at rtol 1e-6, 1e-8, 1e-10 (quick: 1e-6) and the
    default atol rule, the drift of a_j² − ‖w_j‖² over 60 log-spaced frames (conserved
    exactly by the flow, sliding included) for the core's gf (kink floor), diffrax Bosh3
    with a PID controller (optional) and SciPy RK23, with their evaluations and wall time.
    The peers integrate the same field (σ'(0) = γ) as a smooth ODE: they take ever smaller
    steps at kinks and stop at their caps; a capped row reports how far it got."""
    from dynamics.data import build_dataset
    from dynamics.init import init_weights
    from dynamics.simulate import build_problem

    try:
        import diffrax  # noqa: F401

        why_not = None
    except Exception as e:  # not installed (optional), or a broken install
        why_not = f"not importable ({type(e).__name__}: {e})"[:160]
    rtols = (1e-6,) if quick else (1e-6, 1e-8, 1e-10)
    caps = (20_000, 30_000) if quick else (500_000, 1_500_000)
    out: dict[str, Any] = {"rows": [], "diffrax_skipped": why_not, "caps": caps,
                           "load": [loadavg()[0]]}
    for name in KINKED:
        cfg = _kinked_config(name, quick)
        ds = build_dataset(cfg)
        W0, a0 = init_weights(cfg, ds.d)
        p = build_problem(cfg, ds)
        m, d = W0.shape
        T = float(cfg.integrator.t_end)
        ts = np.r_[0.0, np.geomspace(T * 1e-4, T, 60)]
        for rtol in rtols:
            atol = default_atol(W0, a0, rtol)
            row: dict[str, Any] = {"run": name, "m": m, "d": d, "n": ds.n, "t_end": T,
                                   "rtol": rtol}
            GFStepper(p, W0, a0, rtol, atol).advance(1e-3, 100, EMPTY)  # compile
            gf = GFStepper(p, W0, a0, rtol, atol)
            Ws, As = [W0.copy()], [a0.copy()]
            t0 = time.perf_counter()
            for tt in ts[1:]:
                gf.advance(float(tt), 10**10, EMPTY)
                Ws.append(gf.W.copy())
                As.append(gf.a.copy())
            row.update({"gf_s": time.perf_counter() - t0, "gf_evals": gf.n_evals,
                        "gf_steps": f"{gf.n_accepted} / {gf.n_rejected}",
                        "gf_floor": gf.n_forced,
                        "gf_drift": _balance_drift(np.array(Ws), np.array(As), W0, a0)})
            if why_not is None:
                run, compile_s = diffrax_solver(p, W0, a0, ts, rtol, atol, caps[0])
                t0 = time.perf_counter()
                ys, steps, _acc, _rej, ok = run()
                row["diffrax_s"] = time.perf_counter() - t0
                ys = np.asarray(ys)
                done = np.all(np.isfinite(ys), axis=1)
                row.update({"diffrax_compile_s": compile_s, "diffrax_steps": int(steps),
                            "diffrax_ok": bool(ok),
                            "diffrax_t": float(ts[done].max()) if done.any() else 0.0,
                            "diffrax_drift": (_balance_drift(
                                ys[done, : m * d].reshape(-1, m, d), ys[done, m * d:], W0, a0)
                                if done.any() else float("nan"))})
            rhs, counter = flat_rhs(p, m, d)
            reached = [0.0]

            def capped(t: float, th: np.ndarray, rhs=rhs, counter=counter,
                       reached=reached) -> np.ndarray:
                if counter[0] >= caps[1]:
                    raise _Capped
                reached[0] = max(reached[0], t)
                return rhs(t, th)

            from scipy.integrate import solve_ivp

            t0 = time.perf_counter()
            try:
                sol = solve_ivp(capped, (0.0, T), np.concatenate((W0.ravel(), a0)),
                                method="RK23", rtol=rtol, atol=atol, t_eval=ts)
                y = sol.y.T
                row.update({"rk23_t": T if sol.success else reached[0],
                            "rk23_drift": _balance_drift(y[:, : m * d].reshape(-1, m, d),
                                                         y[:, m * d:], W0, a0)})
            except _Capped:
                row.update({"rk23_t": reached[0], "rk23_drift": float("nan")})
            row.update({"rk23_s": time.perf_counter() - t0, "rk23_evals": counter[0]})
            out["rows"].append(row)
    out["load"].append(loadavg()[0])
    return out


# ----------------------------------------------------------------------------- end to end
class _Capped(Exception):
    """A peer used its evaluation cap."""


def jax_flow(p: Problem, m: int, d: int) -> Callable[..., Any]:
    """−∇L on the flattened θ = (W.ravel(), a) in JAX (float64), the same model and loss as
    the kernels: σ(u) = max(u, γu) with σ'(0) = γ (0 for ReLU), L = R Σ_i s_i ℓ(h_i, y_i);
    a frozen output layer has da/dt = 0."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    X, y, sw = jnp.asarray(p.X), jnp.asarray(p.y), jnp.asarray(p.sw)
    R = 1.0 / p.X.shape[0] if p.reduction == "mean" else 1.0
    gamma, c = float(p.gamma), float(p.c)

    def loss(th: Any) -> Any:
        W, a = th[: m * d].reshape(m, d), th[m * d:]
        Z = X @ W.T
        h = c * (jnp.where(Z > 0, Z, gamma * Z) @ a)
        if p.loss == "square":
            ell = 0.5 * (h - y) ** 2
        elif p.loss == "logistic":
            ell = jnp.logaddexp(0.0, -y * h)
        else:
            ell = jnp.exp(-y * h)
        return R * jnp.sum(sw * ell)

    grad = jax.grad(loss)
    frozen = jnp.r_[jnp.ones(m * d), jnp.full(m, 1.0 if p.train_output else 0.0)]

    def f(_t: Any, th: Any, _args: Any) -> Any:
        return -grad(th) * frozen

    return f


def diffrax_solver(p: Problem, W0: np.ndarray, a0: np.ndarray, ts: np.ndarray, rtol: float,
                   atol: float, max_steps: int) -> tuple[Callable[[], Any], float]:
    """diffrax's Bosh3 (the Bogacki–Shampine 3(2) pair of `gf`) with a PIDController at the
    same rtol/atol, SaveAt the frame times ``ts``, the whole solve one jit-compiled function;
    returns (run, compile seconds). ``run()`` → (ys at ts (inf where not reached), steps,
    accepted, rejected, ok); not ok when ``max_steps`` ran out first."""
    import diffrax
    import jax
    import jax.numpy as jnp

    m, d = W0.shape
    term = diffrax.ODETerm(jax_flow(p, m, d))
    ts_j = jnp.asarray(ts)

    def solve(th0: Any) -> Any:
        sol = diffrax.diffeqsolve(
            term, diffrax.Bosh3(), t0=0.0, t1=float(ts[-1]), dt0=None, y0=th0,
            saveat=diffrax.SaveAt(ts=ts_j),
            stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol),
            max_steps=max_steps, throw=False)
        st = sol.stats
        return (sol.ys, st["num_steps"], st["num_accepted_steps"], st["num_rejected_steps"],
                sol.result == diffrax.RESULTS.successful)

    th0 = jnp.asarray(np.concatenate((W0.ravel(), a0)))
    t0 = time.perf_counter()
    compiled = jax.jit(solve).lower(th0).compile()
    compile_s = time.perf_counter() - t0

    def run() -> Any:
        out = compiled(th0)
        jax.block_until_ready(out)
        return out

    return run, compile_s


def _bare(p: Problem, W0: np.ndarray, a0: np.ndarray, it: Any, targets: np.ndarray,
          grid: np.ndarray) -> Any:
    """The stepper alone over the same frame times and scalar grid as simulate(): gf in one
    ``advance_frames`` call (as simulate drives it, without the chunks), others by one
    ``advance`` per frame."""
    st = make_stepper(it.method, p, W0, a0, it)
    if isinstance(st, GFStepper):
        adv, k, _ = st.advance_frames(targets, 10**9, grid[np.searchsorted(grid, 0.0, "right"):
                                                           np.searchsorted(grid, targets[-1],
                                                                           "right")])
        assert k == len(targets) or adv.status != "ok"
        return st
    for tt in targets:
        st.advance(float(tt), 10**9, grid[np.searchsorted(grid, st.t, "right"):
                                          np.searchsorted(grid, tt, "right")])
    return st


def _rk23(p: Problem, W0: np.ndarray, a0: np.ndarray, ts: np.ndarray, rtol: float,
          atol: float, cap: int) -> dict[str, Any]:
    """SciPy RK23 to ts[-1] with `t_eval` = ts, stopped after `cap` evaluations."""
    from scipy.integrate import solve_ivp

    m, d = W0.shape
    rhs, counter = flat_rhs(p, m, d)
    reached = [0.0]

    def capped(t: float, th: np.ndarray) -> np.ndarray:
        if counter[0] >= cap:
            raise _Capped
        reached[0] = max(reached[0], t)
        return rhs(t, th)

    t0 = time.perf_counter()
    try:
        sol = solve_ivp(capped, (0.0, float(ts[-1])), np.concatenate((W0.ravel(), a0)),
                        method="RK23", rtol=rtol, atol=atol, t_eval=ts)
        loss = (loss_value(p, sol.y[: m * d, -1].reshape(m, d), sol.y[m * d:, -1])
                if sol.success else float("nan"))
        note = "" if sol.success else str(sol.message)
    except _Capped:
        loss, note = float("nan"), f"stopped at {cap:,} evaluations, t = {reached[0]:.4g}"
    return {"rk23_s": time.perf_counter() - t0, "rk23_evals": counter[0], "rk23_note": note,
            "rk23_loss": loss}


def _timed(walls: list[float], cpus: list[float], fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args), its wall and CPU seconds (this process, every thread) appended."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn(*args)
    walls.append(time.perf_counter() - t0)
    cpus.append(time.process_time() - c0)
    return out


def end_to_end(quick: bool, repeats: int) -> dict[str, Any]:
    """Per run of `problems.flow_runs`: the bare stepper (`make_stepper(...).advance` over the
    frame times), `simulate()` end to end (data, init, integration, every frame's metrics, the
    Trajectory), diffrax (optional: skipped with the reason when it does not import) and SciPy
    RK23 (`t_eval` at the frame times; timed once, it is slow; not run on `DASHBOARD_RUN`,
    where one solve takes minutes). Medians over `repeats` interleaved rounds (at most 3 on
    `DASHBOARD_RUN`: diffrax takes seconds per solve there) of wall and CPU time (this
    process's, all threads); diffrax's compile time is reported apart. Peers that grind (kinks
    make an error-controlled solver without a kink floor take ever smaller steps) stop at
    `caps`: diffrax's max_steps, RK23's evaluations; the row says how far they got."""
    from dynamics.data import build_dataset
    from dynamics.init import init_weights
    from dynamics.simulate import RecordPolicy, build_problem, simulate

    try:
        import diffrax

        why_not, dfx_version = None, str(diffrax.__version__)
    except Exception as e:  # not installed (optional), or a broken install
        why_not, dfx_version = f"not importable ({type(e).__name__}: {e})"[:160], None
    caps = (20_000, 30_000) if quick else (200_000, 600_000)
    out: dict[str, Any] = {"rows": [], "diffrax": dfx_version, "diffrax_skipped": why_not,
                           "repeats": repeats, "caps": caps}
    for name, cfg in flow_runs(quick).items():
        ds = build_dataset(cfg)
        W0, a0 = init_weights(cfg, ds.d)
        p = build_problem(cfg, ds)
        it = cfg.integrator
        rtol = float(it.rtol)
        atol = float(it.atol) if it.atol is not None else default_atol(W0, a0, rtol)
        policy = RecordPolicy.from_config(cfg)
        st0 = make_stepper(it.method, p, W0, a0, it)
        targets = st0.landing_times(policy.frames[1:])
        ts = np.r_[0.0, targets]
        simulate(cfg)  # compile / warm every kernel
        _bare(p, W0, a0, it, targets[:2], policy.scalars)
        dfx_run, compile_s = (None, float("nan"))
        if why_not is None:
            dfx_run, compile_s = diffrax_solver(p, W0, a0, ts, rtol, atol, caps[0])
            dfx_run()
        walls: dict[str, list[float]] = {"bare": [], "simulate": [], "diffrax": []}
        cpus: dict[str, list[float]] = {"bare": [], "simulate": [], "diffrax": []}

        big = name == DASHBOARD_RUN
        load0 = loadavg()[0]
        for _ in range(min(repeats, 3) if big else repeats):
            st = _timed(walls["bare"], cpus["bare"], _bare, p, W0, a0, it, targets,
                        policy.scalars)
            tr = _timed(walls["simulate"], cpus["simulate"], simulate, cfg)
            if dfx_run is not None:
                dfx = _timed(walls["diffrax"], cpus["diffrax"], dfx_run)
        m, d = W0.shape
        rk = ({"rk23_s": float("nan"), "rk23_evals": 0, "rk23_loss": float("nan"),
               "rk23_note": "not run"} if big and not quick
              else _rk23(p, W0, a0, ts, rtol, atol, caps[1]))
        med = statistics.median
        row: dict[str, Any] = {
            "run": name, "goal": FLOW_GOALS.get(name), "m": m, "d": d, "n": ds.n,
            "t_end": float(ts[-1]), "frames": len(ts),
            "rtol": rtol, "atol": atol, "loss": cfg.loss.kind, "rounds": len(walls["bare"]),
            "bare_s": med(walls["bare"]), "bare_evals": st.n_evals,
            "bare_accepted": st.n_accepted, "bare_rejected": st.n_rejected,
            "simulate_s": med(walls["simulate"]), "sim_evals": tr.n_evals,
            "sim_status": str(tr.status), "loss_end": float(tr.loss[-1]),
            "bare_min_s": min(walls["bare"]), "simulate_min_s": min(walls["simulate"]),
            "bare_cpu_s": med(cpus["bare"]), "simulate_cpu_s": med(cpus["simulate"]),
            "load": [load0, loadavg()[0]],
            **rk, "diffrax_compile_s": compile_s}
        if dfx_run is not None:
            ys, steps, acc, rej, ok = dfx
            ys = np.asarray(ys)
            done = np.all(np.isfinite(ys), axis=1)
            th = ys[-1]
            row.update({"diffrax_s": med(walls["diffrax"]),
                        "diffrax_cpu_s": med(cpus["diffrax"]),
                        "diffrax_t": float(ts[done].max()) if done.any() else 0.0,
                        "diffrax_max_steps": caps[0],
                        "diffrax_min_s": min(walls["diffrax"]),
                        "diffrax_steps": int(steps), "diffrax_accepted": int(acc),
                        "diffrax_rejected": int(rej), "diffrax_ok": bool(ok),
                        "diffrax_loss": (loss_value(p, th[: m * d].reshape(m, d), th[m * d:])
                                         if np.all(np.isfinite(th)) else float("nan"))})
        out["rows"].append(row)
    return out
