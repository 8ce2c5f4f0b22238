"""`python -m dynamics bench`: the core against its peers, in one run, written to bench/REPORT.md.

Sections (each a table in the report, each goal a ratio measured in this same run):

1. GD step, µs per full-batch step (square loss, mean, float64) of the core, NumPy, PyTorch and
   JAX (jit + lax.scan) at four sizes; peers that do not import are skipped with a note. The
   methods are timed in interleaved rounds (core, numpy, torch, jax, core, ...) so that a load
   change on a shared machine hits all of them; the table shows medians over the rounds.
2. Adaptive gradient flow (`gf`) against SciPy's ``solve_ivp`` (RK23, RK45, LSODA) on the
   flattened parameters of the SAME ODE dθ/dt = −∇L(θ) with OUR loss L = (1/n)Σ ½(h − y)²
   (like for like; the papers' (1/n)Σ(h − y)² is 2L, i.e. their time t is our 2t), same rtol
   and atol, same t-span, same machine, same run; evaluations are right-hand-side calls (for
   LSODA including its finite-difference Jacobian columns). Boursier & Flammarion's three points
   to their t = 2000 (our t = 4000; plus fixed-step GD with their η = 1e-3, our 2e-3), and a
   Chistikov et al. teacher run (d = n = 16, m = 200, λ = 4⁻⁶) to a time where the loss is
   below 1e-6.
3. Kink sliding: Wang & Ma's example (examples/two_signals.json): evaluations, steps at the
   kink floor, and the distance to GD with a small learning rate.
4. Memory: bytes per frame of a Trajectory at m = 1000.
5. Threads: two simulations in two threads against one alone (the kernels release the GIL).
6. Start-up: a fresh process to its first result, with an empty numba cache (cold) and with
   the cache filled by the previous run (warm); a private NUMBA_CACHE_DIR, so the repository's
   cache is not touched.

Not a test: nothing here asserts a speed. ``--quick`` shrinks every section (smoke tests).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dynamics import core, split
from dynamics.blas import apply_numpy_blas_threads
from dynamics.core import GDStepper, GFStepper, Problem

from . import peers

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "REPORT.md"
#: Pause between two timed calls. OpenBLAS, PyTorch's OpenMP and JAX's pool keep their
#: worker threads spinning for a while after a call; measured right after a peer, the core's
#: threaded step (dynamics/split.py) ran ~2× slower than alone (20.9 ms vs ~11 ms at
#: (2000, 784, 100)) with a 0.05 s gap.
IDLE_GAP_S = 0.4
SIZES: list[tuple[int, int, int]] = [(3, 2, 100), (100, 10, 500), (2000, 64, 200),
                                     (2000, 784, 100)]
EMPTY = np.empty(0)
# Earlier measurements on this machine (issue 6), µs per GD step, for reference only.
ISSUE_US = {(3, 2, 100): (15.6, 372.0, 2.06), (100, 10, 500): (265.0, 1365.0, 181.0),
            (2000, 64, 200): (6553.0, 21988.0, 2392.0),
            (2000, 784, 100): (11714.0, 109350.0, 13676.0)}


# --------------------------------------------------------------------------- machine


def machine() -> dict[str, Any]:
    """CPU model, cores, BLAS libraries in use, versions, environment that changes BLAS."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    blas: list[str] = []
    try:
        import scipy.linalg
        from threadpoolctl import threadpool_info

        for info in threadpool_info():
            blas.append(f"{info.get('internal_api')} {info.get('version')} "
                        f"({Path(info.get('filepath', '')).name}, "
                        f"kernel {info.get('architecture')}, {info.get('num_threads')} threads)")
    except Exception as e:  # threadpoolctl missing: fall back to numpy's build info
        blas.append(f"threadpoolctl unavailable ({type(e).__name__}); see numpy.show_config()")
    import numba
    import scipy

    vers = {"python": platform.python_version(), "numba": numba.__version__,
            "scipy": scipy.__version__, **peers.versions()}
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    env = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                      "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                      "NUMBA_NUM_THREADS") if k in os.environ}
    return {"cpu": cpu, "cores": os.cpu_count(), "blas": blas, "versions": vers,
            "load": load, "env": env, "platform": platform.platform(),
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")}


def _core_blas_threads() -> str:
    try:
        from threadpoolctl import threadpool_info

        got = [str(i["num_threads"]) for i in threadpool_info()
               if "scipy" in Path(i.get("filepath", "")).parent.name]
        return ", ".join(got) or "unknown"
    except Exception:
        return "unknown"


# --------------------------------------------------------------------------- GD vs peers


def gd_problem(n: int, d: int, m: int, seed: int = 0) -> tuple[Problem, np.ndarray, np.ndarray]:
    """Random data (x ~ N(0, I/d)), targets N(0, 1), weights N(0, 1e-4): ReLU, c = 1."""
    rng = np.random.default_rng(seed)
    X = np.ascontiguousarray(rng.normal(size=(n, d)) / np.sqrt(d))
    p = Problem(X, rng.normal(size=n), np.ones(n), 0.0, 1.0, "square", "mean", True)
    return p, rng.normal(size=(m, d)) * 1e-2, rng.normal(size=m) * 1e-2


def _core_runner(p: Problem, W: np.ndarray, a: np.ndarray, lr: float):
    def run(n_steps: int) -> tuple[np.ndarray, np.ndarray]:
        g = GDStepper(p, W, a, lr)
        g.advance(n_steps, EMPTY)
        return g.W, g.a

    return run


def _timed(run, steps: int) -> float:
    t0 = time.perf_counter()
    run(steps)
    return time.perf_counter() - t0


def gd_table(sizes: list[tuple[int, int, int]], repeats: int, peer_names: list[str],
             target_s: float) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """µs per GD step for the core and each importable peer (interleaved rounds, medians)."""
    avail = peers.available()
    skipped = {k: v for k, v in avail.items() if v is not None and k in peer_names}
    names = ["core"] + [k for k in peer_names if avail.get(k) is None]
    rows = []
    lr = 1e-3
    for n, d, m in sizes:
        p, W, a = gd_problem(n, d, m)
        runners = {"core": _core_runner(p, W, a, lr)}
        for k in names[1:]:
            runners[k] = peers.MAKERS[k](p.X, p.y, W, a, lr, p.c)
        steps: dict[str, int] = {}
        check: dict[str, float] = {}
        ref = runners["core"](3)
        for k, run in runners.items():
            out = run(3)  # warm-up (JAX compiles for this length) and agreement check
            check[k] = float(max(np.max(np.abs(out[0] - ref[0])), np.max(np.abs(out[1] - ref[1])))
                             / max(np.max(np.abs(ref[0])), 1e-300))
            probe = 1
            while True:
                run(probe)  # warm-up at this length (JAX compiles one scan per length)
                dt = _timed(run, probe)
                if dt >= 0.02 or probe >= 1_000_000:
                    break
                probe *= 4
            steps[k] = max(probe, int(probe * target_s / max(dt, 1e-9)))
            if k == "jax":  # compile both scan lengths outside the timed rounds
                run(steps[k])
                run(2 * steps[k])
        times: dict[str, list[float]] = {k: [] for k in runners}
        for _ in range(repeats):
            for k, run in runners.items():
                # marginal cost of a step: (T(2s) − T(s)) / s, so each method's once-per-run
                # set-up (copies, Xᵀ, tensors, thread pool) is not spread over the steps
                t1 = _timed(run, steps[k])
                time.sleep(IDLE_GAP_S)  # let the previous call's spinning threads go idle
                t2 = _timed(run, 2 * steps[k])
                time.sleep(IDLE_GAP_S)
                times[k].append(max(t2 - t1, 1e-12) / steps[k] * 1e6)
        med = {k: statistics.median(v) for k, v in times.items()}
        row: dict[str, Any] = {"n": n, "d": d, "m": m,
                               "blocks": GDStepper(p, W, a, lr).blocks,
                               "path": "blas" if core.use_blas_path(n, d, m) else "fused",
                               "us": med, "spread": {k: (min(v), max(v)) for k, v in times.items()},
                               "steps": steps, "max_rel_diff": check}
        fastest_peer = min((k for k in med if k != "core"), key=lambda k: med[k], default=None)
        row["fastest_peer"] = fastest_peer
        row["ratio_best"] = med[fastest_peer] / med["core"] if fastest_peer else float("nan")
        row["ratio_numpy"] = med["numpy"] / med["core"] if "numpy" in med else float("nan")
        rows.append(row)
    return rows, skipped


_CORE2 = """
import json, sys
from bench.report import gd_table
rows, _ = gd_table({sizes!r}, {repeats}, [], {target})
print(json.dumps([[r["n"], r["d"], r["m"], r["us"]["core"]] for r in rows]))
"""

#: Other threading of the core, each measured in a fresh process right after the main table
#: (the table is the default: neuron blocks on EAE_CORE_THREADS threads, one BLAS thread each).
CORE_VARIANTS = {
    "one thread": {"EAE_CORE_THREADS": "1", "EAE_CORE_BLAS_THREADS": "1"},
    "OpenBLAS threads": {"EAE_CORE_THREADS": "1", "EAE_CORE_BLAS_THREADS": "0"},
}


def core_variants(sizes: list[tuple[int, int, int]], repeats: int,
                  target_s: float) -> dict[str, dict[str, float]]:
    """µs per core GD step under each CORE_VARIANTS environment: {variant: {"n,d,m": µs}}."""
    out: dict[str, dict[str, float]] = {}
    for name, extra in CORE_VARIANTS.items():
        env = dict(os.environ, **extra)
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        r = subprocess.run([sys.executable, "-c", _CORE2.format(sizes=sizes, repeats=repeats,
                                                                 target=target_s)],
                           env=env, cwd=str(REPO), capture_output=True, text=True,
                           timeout=1800)
        if r.returncode == 0:
            out[name] = {f"{n},{d},{m}": us for n, d, m, us
                         in json.loads(r.stdout.strip().splitlines()[-1])}
    return out


# --------------------------------------------------------------------------- GF vs SciPy


def _flat_rhs(p: Problem, m: int, d: int):
    counter = [0]

    def rhs(_t: float, th: np.ndarray) -> np.ndarray:
        counter[0] += 1
        _, gW, ga = core.loss_grad(p, th[: m * d].reshape(m, d), th[m * d:])
        return -np.concatenate((gW.ravel(), ga))

    return rhs, counter


def gf_vs_scipy(name: str, p: Problem, W0: np.ndarray, a0: np.ndarray, t_end: float,
                rtol: float, atol: float, methods: list[str], gd_lr: float | None = None,
                scipy_timeout_evals: int = 3_000_000) -> dict[str, Any]:
    """Our `gf` and solve_ivp on the same ODE; rows of evaluations, wall time, final loss."""
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
                 "loss": core.loss_value(p, gf.W, gf.a),
                 "balance_drift": float(np.max(np.abs(inv)) / scale),
                 "signs_kept": bool(np.all(np.sign(gf.a) == np.sign(a0)))})
    th0 = np.concatenate((W0.ravel(), a0))
    for meth in methods:
        rhs, counter = _flat_rhs(p, m, d)
        t0 = time.perf_counter()
        sol = solve_ivp(rhs, (0.0, t_end), th0, method=meth, rtol=rtol, atol=atol,
                        t_eval=[t_end])
        wall = time.perf_counter() - t0
        th = sol.y[:, -1] if sol.y.shape[1] else th0
        rows.append({"method": f"scipy {meth}", "evals": counter[0],
                     "steps": f"nfev {sol.nfev}, njev {sol.njev}", "wall_s": wall,
                     "loss": core.loss_value(p, th[: m * d].reshape(m, d), th[m * d:]),
                     "status": sol.message if not sol.success else "ok"})
    if gd_lr is not None:
        gd = GDStepper(p, W0, a0, gd_lr)
        gd.advance(2, EMPTY)
        gd = GDStepper(p, W0, a0, gd_lr)
        k = round(t_end / gd_lr)
        t0 = time.perf_counter()
        gd.advance(k, EMPTY)
        wall = time.perf_counter() - t0
        rows.append({"method": f"core gd η={gd_lr:g}", "evals": gd.n_evals,
                     "steps": f"{k} steps", "wall_s": wall,
                     "loss": core.loss_value(p, gd.W, gd.a)})
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


def three_point(m: int = 200, seed: int = 0) -> tuple[Problem, np.ndarray, np.ndarray]:
    """B&F's x = (−0.75, −0.5, 0.125) with a bias input, y = (1.1, 0.1, 0.8), balanced,
    λ = 1e-3/√m."""
    x = np.array([-0.75, -0.5, 0.125])
    p = Problem(np.ascontiguousarray(np.c_[x, np.ones(3)]), np.array([1.1, 0.1, 0.8]),
                np.ones(3), 0.0, 1.0, "square", "mean", True)
    rng = np.random.default_rng(seed)
    W0 = rng.normal(0.0, 1e-3 / np.sqrt(m), (m, 2))
    a0 = np.linalg.norm(W0, axis=1) * rng.choice([-1.0, 1.0], m)
    return p, W0, a0


def _from_config(path: Path, **updates: Any):
    from dynamics.config import Config
    from dynamics.data import build_dataset
    from dynamics.init import init_weights
    from dynamics.simulate import build_problem

    cfg = Config.from_json(path.read_text())
    if updates:
        cfg = cfg.with_updates({k: json.dumps(v) if not isinstance(v, str) else v
                                for k, v in updates.items()})
    ds = build_dataset(cfg)
    W0, a0 = init_weights(cfg, ds.d)
    return cfg, build_problem(cfg, ds), W0, a0


# --------------------------------------------------------------------------- kinks


def kink_section(quick: bool) -> dict[str, Any]:
    """Wang & Ma (examples/two_signals.json): gf cost and distance to small-η GD at t_end."""
    cfg, p, W0, a0 = _from_config(REPO / "examples" / "two_signals.json")
    t_end = 20.0 if quick else float(cfg.integrator.t_end)
    rtol = float(cfg.integrator.rtol)
    from dynamics.simulate import default_atol

    atol = default_atol(W0, a0, rtol)
    GFStepper(p, W0, a0, rtol, atol).advance(1e-3, 100, EMPTY)
    gf = GFStepper(p, W0, a0, rtol, atol)
    t0 = time.perf_counter()
    gf.advance(t_end, 10**9, EMPTY)
    wall = time.perf_counter() - t0
    rows = [{"method": f"gf rtol={rtol:g}", "evals": gf.n_evals, "floor": gf.n_forced,
             "accepted": gf.n_accepted, "rejected": gf.n_rejected, "wall_s": wall,
             "loss": core.loss_value(p, gf.W, gf.a), "W": gf.W.copy()}]
    for lr in ((1e-2,) if quick else (1e-2, 1e-3, 2.5e-4)):
        gd = GDStepper(p, W0, a0, lr)
        t0 = time.perf_counter()
        gd.advance(round(t_end / lr), EMPTY)
        rows.append({"method": f"gd η={lr:g}", "evals": gd.n_evals, "floor": 0,
                     "accepted": gd.k, "rejected": 0, "wall_s": time.perf_counter() - t0,
                     "loss": core.loss_value(p, gd.W, gd.a), "W": gd.W.copy()})
    ref = rows[-1]["W"]
    for r in rows:
        r["dist_to_finest_gd"] = float(np.linalg.norm(r.pop("W") - ref) / np.linalg.norm(ref))
    return {"t_end": t_end, "rows": rows, "m": W0.shape[0]}


# --------------------------------------------------------------------------- memory


def memory_section(quick: bool) -> dict[str, Any]:
    """Trajectory.nbytes() / frames for the teacher preset at width 1000 (100 when quick)."""
    from dynamics.limits import get_limits
    from dynamics.simulate import simulate

    cfg, _, _, _ = _from_config(REPO / "examples" / "teacher.json")
    width = 100 if quick else 1000
    cfg = cfg.with_updates({"model.width": str(width), "integrator.t_end": "30" if quick
                            else "300", "record.frames": "20" if quick else "150"})
    tr = simulate(cfg)
    return {"width": width, "frames": tr.n_frames, "d": tr.X.shape[1], "n": tr.X.shape[0],
            "nbytes": tr.nbytes(), "per_frame": tr.nbytes() / tr.n_frames,
            "W_frames": len(tr.W_frames), "budget_mb": get_limits().full_w_budget_mb,
            "status": tr.status}


# --------------------------------------------------------------------------- threads


def _one_vs_two(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
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
    """Wall time of two simulations in two threads over one alone (mid-size teacher run)."""
    from dynamics.simulate import simulate

    cfg, _, _, _ = _from_config(REPO / "examples" / "teacher.json")
    cfg = cfg.with_updates({"data.n": "64", "model.width": "100" if quick else "400",
                            "integrator.method": "gd", "integrator.lr": "0.05",
                            "integrator.t_end": "5" if quick else "500",
                            "record.frames": "10", "record.scalars": "100"})
    simulate(cfg)  # warm-up
    # NumPy's default BLAS threads first (applying the service's setting is one-way)
    d1, d2 = _one_vs_two(lambda: simulate(cfg), repeats)
    np_threads = apply_numpy_blas_threads()  # as the service does (dynamics/blas.py)
    t1, t2 = _one_vs_two(lambda: simulate(cfg), repeats)
    # the kernels alone: GD steps on the same problem, one stepper vs two in two threads
    p = _from_config(REPO / "examples" / "teacher.json", **{"data.n": 64})[1]
    rng = np.random.default_rng(0)
    m = 100 if quick else 400
    W = rng.normal(size=(m, p.X.shape[1])) * 1e-2
    a = rng.normal(size=m) * 1e-2
    steps = 200 if quick else 10_000

    def kern() -> None:
        GDStepper(p, W, a, 1e-3).advance(steps, EMPTY)

    kern()
    kt1, kt2 = _one_vs_two(kern, repeats)
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
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    return {"one_s": t1, "two_s": t2, "ratio": t2 / t1, "default_ratio": d2 / d1,
            "numpy_blas_threads": np_threads, "k_one_s": kt1, "k_two_s": kt2,
            "k_ratio": kt2 / kt1, "k_steps": steps, "gil_rate": during / alone,
            "load1": load, "n": 64,
            "d": 16, "m": 100 if quick else 400, "path": "blas" if core.use_blas_path(
                64, 16, 100 if quick else 400) else "fused"}


# --------------------------------------------------------------------------- start-up


_FIRST = """
import time, numpy as np
t0 = time.perf_counter()
from dynamics.config import Config
from dynamics.simulate import simulate
cfg = Config.from_json(open({path!r}).read()).with_updates({{"record.frames": "10",
    "integrator.t_end": "10"}})
t1 = time.perf_counter()
tr = simulate(cfg)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def startup_section() -> dict[str, Any]:
    """Fresh-process time to the first simulate() result: empty numba cache, then filled."""
    code = _FIRST.format(path=str(REPO / "examples" / "three_point.json"))
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="eae-numba-cache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        for label in ("cold", "warm", "warm2"):
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(REPO),
                               capture_output=True, text=True, timeout=600)
            total = time.perf_counter() - t0
            if r.returncode != 0:
                out[label] = {"error": r.stderr.strip().splitlines()[-1:]}
                continue
            imp, first = (float(v) for v in r.stdout.split()[-2:])
            out[label] = {"process_s": total, "import_s": imp, "simulate_s": first}
    return out


# --------------------------------------------------------------------------- report


def _fmt_us(x: float) -> str:
    return f"{x:,.2f}" if x < 100 else f"{x:,.0f}"


def _yes(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def render(res: dict[str, Any]) -> str:
    mc = res["machine"]
    L: list[str] = ["# Core benchmark report", "",
                    f"Generated by `python -m dynamics bench{res['argv']}` on {mc['date']}. "
                    "Wall-clock medians; the machine is shared, so the load average is shown. "
                    "Regenerate with the same command; nothing here is asserted by tests.", "",
                    "## Machine", "",
                    f"- CPU: {mc['cpu']}, {mc['cores']} logical cores ({mc['platform']})",
                    f"- BLAS: {'; '.join(mc['blas'])}",
                    "- Versions: " + ", ".join(f"{k} {v}" for k, v in mc["versions"].items()),
                    f"- Load average at start: {', '.join(f'{x:.2f}' for x in mc['load'])}; "
                    f"at end: {', '.join(f'{x:.2f}' for x in res['load_end'])}",
                    f"- Core GEMM threads (SciPy's OpenBLAS, which numba's np.dot calls): "
                    f"{res.get('core_blas_threads', '?')} (EAE_CORE_BLAS_THREADS; NumPy's BLAS "
                    "is left alone); core threads for large GD steps: "
                    f"{os.environ.get(split.THREADS_ENV, 'auto')} (EAE_CORE_THREADS; "
                    f"{split._cpus()} CPUs usable)",
                    "- BLAS-related environment: " + (", ".join(
                        f"{k}={v}" for k, v in mc["env"].items()) or "none set"), ""]
    goals: list[tuple[str, str, str]] = []
    gd = res.get("gd")
    if gd is not None:
        rows, skipped = gd
        names = ["core"] + [k for k in peers.PEERS if any(k in r["us"] for r in rows)]
        L += ["## GD step vs peers (µs per step, lower is better)", "",
              "Full-batch GD, ReLU, square loss ½(ŷ−y)² averaged, both layers trained, float64. "
              "Peers are written the way users would (bench/peers.py): NumPy forward + "
              "hand-written backward; PyTorch autograd; JAX `jax.grad` inside `jit` + "
              "`lax.scan`. A cell is the marginal cost of a step, (T(2s) − T(s))/s for s "
              "steps taking ~0.25 s, so once-per-run set-up is left out for every method; the "
              "median of interleaved rounds, with a pause between calls; `[min–max]` is the "
              "spread. `best peer / core` > 1 means the core is faster.", "",
              "| size (n, d, m) | path | " + " | ".join(names)
              + " | best peer / core | NumPy / core |",
              "|---|---|" + "---|" * len(names) + "---|---|"]
        for r in rows:
            cells = []
            for k in names:
                if k in r["us"]:
                    lo, hi = r["spread"][k]
                    cells.append(f"{_fmt_us(r['us'][k])} [{_fmt_us(lo)}–{_fmt_us(hi)}]")
                else:
                    cells.append("skipped")
            L.append(f"| ({r['n']}, {r['d']}, {r['m']}) | {r['path']} | " + " | ".join(cells)
                     + f" | {r['ratio_best']:.2f}× ({r['fastest_peer']}) | "
                       f"{r['ratio_numpy']:.1f}× |")
        for k, why in skipped.items():
            L.append(f"\n_{k} skipped: {why}_")
        lib = res.get("gd_variants") or {}
        if lib:
            L += ["", "The table's core is the default: from n·d·m = "
                  f"{split.SPLIT_MIN_WORK:,} the samples are cut into blocks stepped on "
                  "parallel threads (dynamics/split.py, EAE_CORE_THREADS; blocks per size: "
                  + ", ".join(f"({r['n']}, {r['d']}, {r['m']}) {r.get('blocks', '?')}"
                              for r in rows)
                  + "), each GEMM on one BLAS thread (EAE_CORE_BLAS_THREADS). The same core "
                  "on one thread, and on one thread with OpenBLAS's own 2-thread GEMMs "
                  "(EAE_CORE_BLAS_THREADS=0), each in a fresh process just after the table "
                  "(`best peer / core` against the table's best peer):", "",
                  "| size (n, d, m) | core (table) | " + " | ".join(
                      f"core, {k} | best peer / core, {k}" for k in lib) + " |",
                  "|---|---|" + "---|---|" * len(lib)]
            for r in rows:
                key = f"{r['n']},{r['d']},{r['m']}"
                bp = r["us"][r["fastest_peer"]] if r["fastest_peer"] else float("nan")
                cells = []
                for v in lib.values():
                    us2 = v.get(key)
                    cells += (["—", "—"] if us2 is None
                              else [_fmt_us(us2), f"{bp / us2:.2f}×"])
                L.append(f"| ({r['n']}, {r['d']}, {r['m']}) | {_fmt_us(r['us']['core'])} | "
                         + " | ".join(cells) + " |")
        L += ["", "Agreement after 3 steps (max |Δθ| / max |θ| against the core): " + "; ".join(
            f"({r['n']}, {r['d']}, {r['m']}) " + ", ".join(
                f"{k} {v:.0e}" for k, v in r["max_rel_diff"].items() if k != "core")
            for r in rows), ""]
        ok_all = all(r["ratio_best"] >= 1.0 for r in rows)
        goals.append(("GD step ≥ fastest peer at every size",
                      ", ".join(f"{r['ratio_best']:.2f}×" for r in rows), _yes(ok_all)))
        small = min(rows, key=lambda r: r["n"] * r["d"] * r["m"])
        goals.append((f"GD step ≥ 10× NumPy at the smallest size ({small['n']}, {small['d']}, "
                      f"{small['m']})", f"{small['ratio_numpy']:.1f}×",
                      _yes(small["ratio_numpy"] >= 10.0)))
    for key in ("three_point", "chistikov"):
        g = res.get(key)
        if g is None:
            continue
        L += [f"## Gradient flow vs SciPy: {g['name']}", "",
              f"n = {g['n']}, d = {g['d']}, m = {g['m']}; t from 0 to {g['t_end']:g} (the "
              f"papers' time {g['t_end'] / 2:g}); "
              f"rtol = {g['rtol']:g}, atol = {g['atol']:.3g} for every adaptive method. All "
              "solve the same ODE dθ/dt = −∇L(θ) with our loss L = (1/n)Σ½(h−y)² (the "
              "papers' (1/n)Σ(h−y)² = 2L: their time is half ours). SciPy integrates the "
              "flattened (W, a) with the core's gradient as right-hand side (a fast RHS; "
              "SciPy's own overhead dominates). `balance drift` = max_j |Δ(a_j² − ‖w_j‖²)| / "
              "max_j (a_j² + ‖w_j‖²). LSODA (a stiff/non-stiff switcher; ~10⁵–10⁶ "
              "evaluations on these non-stiff, kinked flows) runs on the three-point problem "
              "only.", "",
              "| method | gradient evaluations | steps | wall (s) | final loss |",
              "|---|---|---|---|---|"]
        for r in g["rows"]:
            extra = ""
            if "balance_drift" in r:
                extra = (f" (balance drift {r['balance_drift']:.1e}, signs kept: "
                         f"{r['signs_kept']})")
            st = "" if r.get("status", "ok") == "ok" else f" — {r['status']}"
            loss = "—" if not np.isfinite(r["loss"]) else f"{r['loss']:.12f}"
            L.append(f"| {r['method']}{st} | {r['evals']:,} | {r['steps']} | "
                     f"{r['wall_s']:.3f} | {loss}{extra} |")
        L.append("")
        if "evals_vs_rk23" in g:
            gfr = g["rows"][0]
            goals.append((f"gf evaluations ≤ RK23 ({g['name']})",
                          f"{g['evals_vs_rk23']:.2f}× RK23's",
                          _yes(g["evals_vs_rk23"] <= 1.0)))
            goals.append((f"gf final loss = RK23's ± 1e-6 ({g['name']})",
                          f"|ΔL| = {g['dloss_vs_rk23']:.1e}", _yes(g["dloss_vs_rk23"] <= 1e-6)))
            goals.append((f"gf wall ≥ 10× faster than the best SciPy method ({g['name']})",
                          f"{g['wall_ratio']:.1f}× ({g['best_scipy']})",
                          _yes(g["wall_ratio"] >= 10.0)))
            goals.append((f"gf invariants ({g['name']}): balance kept, signs fixed",
                          f"drift {gfr['balance_drift']:.1e}, signs {gfr['signs_kept']}",
                          _yes(gfr["balance_drift"] < 1e-6 and gfr["signs_kept"])))
    k = res.get("kink")
    if k is not None:
        L += ["## Kink sliding (Wang & Ma, examples/two_signals.json)", "",
              f"m = {k['m']}, exponential loss, frozen output layer, t from 0 to "
              f"{k['t_end']:g}. `distance` is ‖W − W_GD(finest η)‖ / ‖W_GD(finest η)‖ at "
              "t_end (GD converges to the flow as η → 0 at first order).", "",
              "| method | evaluations | accepted | rejected | at kink floor | wall (s) | "
              "final loss | distance to finest GD |", "|---|---|---|---|---|---|---|---|"]
        for r in k["rows"]:
            L.append(f"| {r['method']} | {r['evals']:,} | {r['accepted']:,} | "
                     f"{r['rejected']:,} | {r['floor']:,} | {r['wall_s']:.3f} | "
                     f"{r['loss']:.10f} | {r['dist_to_finest_gd']:.2e} |")
        L.append("")
    mem = res.get("memory")
    if mem is not None:
        L += ["## Memory", "",
              f"Teacher preset at width m = {mem['width']} (d = {mem['d']}, n = {mem['n']}), "
              f"{mem['frames']} frames: Trajectory.nbytes() = {mem['nbytes']:,} B, i.e. "
              f"**{mem['per_frame']:,.0f} bytes per frame**; full W kept at "
              f"{mem['W_frames']} frames (EAE_FULL_W_BUDGET_MB = {mem['budget_mb']:g}).", ""]
        goals.append((f"Trajectory bytes per frame at m = {mem['width']}",
                      f"{mem['per_frame']:,.0f} B", "reported"))
    th = res.get("threads")
    if th is not None:
        L += ["## Threads", "",
              f"simulate() of a teacher run (n = {th['n']}, d = {th['d']}, m = {th['m']}, "
              f"gd, {th['path']} path): one alone {th['one_s']:.3f} s; two in two threads "
              f"{th['two_s']:.3f} s; **ratio {th['ratio']:.2f}** (1.0 = perfect overlap; "
              "2.0 = serialised), with NumPy's BLAS on "
              f"{th.get('numpy_blas_threads') or 'its default'} thread(s) as the service sets "
              "it (EAE_NUMPY_BLAS_THREADS, dynamics/blas.py); with NumPy's default BLAS "
              f"threads, measured just before: ratio {th.get('default_ratio', float('nan')):.2f} "
              "(its workers spin ~0.1 s after each small product and take the other "
              "simulation's core). The kernels alone (GDStepper.advance, "
              f"{th['k_steps']} steps, same size): one {th['k_one_s']:.3f} s, two in two "
              f"threads {th['k_two_s']:.3f} s, ratio {th['k_ratio']:.2f}. 1-minute load "
              f"average at the end of this section: {th['load1']:.2f} — other jobs on this "
              "2-core machine take cores from the second thread and inflate both ratios. "
              "GIL check: a pure-Python counter thread runs at "
              f"{100 * th['gil_rate']:.0f}% of its solo rate while a kernel call is in "
              "progress (≈ 0% if the kernel held the GIL).", ""]
        goals.append(("two simulations in two threads ≤ 1.2× one",
                      f"{th['ratio']:.2f}× (kernels alone {th['k_ratio']:.2f}×; load "
                      f"{th['load1']:.1f})", _yes(th["ratio"] <= 1.2)))
    su = res.get("startup")
    if su is not None:
        L += ["## Start-up (fresh process to the first simulate() result)", "",
              "| numba cache | process wall (s) | imports (s) | first simulate (s) |",
              "|---|---|---|---|"]
        for label, v in su.items():
            if "error" in v:
                L.append(f"| {label} | error: {v['error']} | | |")
            else:
                L.append(f"| {label} | {v['process_s']:.2f} | {v['import_s']:.2f} | "
                         f"{v['simulate_s']:.2f} |")
        L.append("")
        if "process_s" in su.get("cold", {}) and "process_s" in su.get("warm", {}):
            goals.append(("start-up, cold / warm numba cache",
                          f"{su['cold']['process_s']:.1f} s / {su['warm']['process_s']:.1f} s",
                          "reported"))
    L[L.index("## Machine"):L.index("## Machine")] = [
        "## Goals (issue 6)", "", "| goal | measured | status |", "|---|---|---|",
        *[f"| {a} | {b} | {c} |" for a, b, c in goals], ""]
    return "\n".join(L) + "\n"


def _parse_sizes(s: str) -> list[tuple[int, int, int]]:
    out = []
    for part in s.split(";"):
        n, d, m = (int(v) for v in part.split(","))
        out.append((n, d, m))
    return out


def cli_main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dynamics bench",
                                 description="Benchmark the core against NumPy, PyTorch, JAX "
                                 "and SciPy; write a Markdown report.")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="report path (bench/REPORT.md)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, short runs (smoke test)")
    ap.add_argument("--sizes", help="'n,d,m;n,d,m' GD sizes (default: the four of issue 6)")
    ap.add_argument("--repeats", type=int, default=None, help="interleaved timing rounds")
    ap.add_argument("--peers", default=",".join(peers.PEERS), help="comma list of peers")
    ap.add_argument("--skip", default="", help="comma list of sections to skip: gd, blas2, "
                    "three_point, chistikov, lsoda, kink, memory, threads, startup")
    ap.add_argument("--json", help="also write the raw results as JSON here")
    args = ap.parse_args(argv or [])
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    quick = args.quick
    repeats = args.repeats or (1 if quick else 7)
    sizes = _parse_sizes(args.sizes) if args.sizes else ([(3, 2, 10)] if quick else SIZES)
    peer_names = [p.strip() for p in args.peers.split(",") if p.strip()]
    res: dict[str, Any] = {"machine": machine(), "gd_variants": {},
                           "argv": (" " + " ".join(argv)) if argv else ""}

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if "gd" not in skip:
        say("GD step vs peers ...")
        res["gd"] = gd_table(sizes, repeats, peer_names, 0.02 if quick else 0.25)
        if "blas2" not in skip:
            big = [sz for sz in sizes if sz[0] * sz[1] * sz[2] > 262_144]  # threaded sizes
            if big:
                say("core GD on one thread / with OpenBLAS threads (subprocesses) ...")
                res["gd_variants"] = core_variants(big, repeats, 0.02 if quick else 0.25)
    methods = ["RK23"] if quick else ["RK23", "RK45"] + ([] if "lsoda" in skip else ["LSODA"])
    if "three_point" not in skip:
        say("three points: gf vs solve_ivp ...")
        p, W0, a0 = three_point(20 if quick else 200)
        # The issue's run: loss (1/n)Σ(h−y)² = 2L to t = 2000, i.e. our flow to t = 4000, and
        # its GD with η = 1e-3 on 2L is ours with η = 2e-3.
        res["three_point"] = gf_vs_scipy(
            "Boursier & Flammarion three points", p, W0, a0, 40.0 if quick else 4000.0,
            1e-6, 1e-12, methods, gd_lr=None if quick else 2e-3)
    if "chistikov" not in skip:
        say("Chistikov teacher run: gf vs solve_ivp ...")
        _, p, W0, a0 = _from_config(REPO / "examples" / "teacher.json",
                                    **({"model.width": 20} if quick else {}))
        rtol, atol = core.default_tolerances(W0, a0)
        res["chistikov"] = gf_vs_scipy(
            "Chistikov et al. teacher (centred, d = n = 16, λ = 4⁻⁶)", p, W0, a0,
            20.0 if quick else 1000.0, rtol, atol, [m for m in methods if m != "LSODA"])
    if "kink" not in skip:
        say("kink sliding ...")
        res["kink"] = kink_section(quick)
    if "memory" not in skip:
        say("memory ...")
        res["memory"] = memory_section(quick)
    if "threads" not in skip:
        say("threads ...")
        res["threads"] = threads_section(quick, 1 if quick else 7)
    if "startup" not in skip:
        say("start-up ...")
        res["startup"] = startup_section()
    res["core_blas_threads"] = _core_blas_threads()
    try:
        res["load_end"] = os.getloadavg()
    except OSError:
        res["load_end"] = (float("nan"),) * 3
    text = render(res)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps(res, default=str, indent=1), encoding="utf-8")
    print(text)
    say(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(cli_main(sys.argv[1:]))
