"""The driver: data, init, recording, statuses, determinism, save/load, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from dynamics.config import DATA_CLASSES, DATA_KINDS, Config
from dynamics.data import build_dataset
from dynamics.init import entry_std, init_weights
from dynamics.simulate import frame_times, simulate
from dynamics.trajectory import Trajectory

ROOT = Path(__file__).resolve().parents[1]

SMALL = Config().with_updates({"model.width": 12, "record.frames": 20, "record.scalars": 50,
                               "integrator.t_end": 30.0})


def _assert_same(a: Trajectory, b: Trajectory) -> None:
    for k, v in a.to_arrays().items():
        w = b.to_arrays()[k]
        assert v.shape == w.shape and v.dtype == w.dtype, k
        assert np.array_equal(v, w, equal_nan=True), k
    assert a.status == b.status and a.n_evals == b.n_evals


# ----------------------------------------------------------------------------- data & init
@pytest.mark.parametrize("kind", DATA_KINDS)
def test_every_data_kind_builds_and_runs(kind: str) -> None:
    c = SMALL.with_updates({"data.kind": kind, "record.frames": 8,
                            "integrator.t_end": 2.0})
    if kind == "digits":
        c = c.with_updates({"data.n_per_class": 20})
    ds = build_dataset(c)
    assert ds.X.ndim == 2 and ds.X.shape[0] == ds.y.shape[0] == ds.sw.shape[0]
    assert np.all(np.isfinite(ds.X))
    tr = simulate(c)
    assert tr.status == "completed", tr.message
    assert np.all(np.isfinite(tr.loss))
    assert tr.proj.shape == (tr.n_frames, 12, 2)


def test_data_kinds_follow_their_definitions() -> None:
    c = Config().with_updates({"data.kind": "two_signals", "data.angle_deg": 30.0,
                               "data.p": 3.0})
    ds = build_dataset(c)
    assert np.allclose(ds.X, [[1, 0], [np.cos(np.pi / 6), np.sin(np.pi / 6)]])
    assert list(ds.y) == [1, -1] and list(ds.sw) == [3, 1]
    t = build_dataset(Config().with_updates({"data.kind": "teacher", "data.d": 8}))
    vstar = t.directions["v*"]
    assert np.isclose(np.linalg.norm(vstar), 1.0)
    assert np.all(t.X @ vstar > 0)  # every angle to the teacher below 90°
    assert np.allclose(t.y, np.maximum(t.X @ vstar, 0))
    dg = build_dataset(Config().with_updates({"data.kind": "digits"}))
    assert dg.X.shape[1] == 64 and np.allclose(dg.X.mean(axis=0), 0, atol=1e-12)
    tp = build_dataset(Config().with_updates({"data.kind": "three_point"}))
    assert np.allclose(tp.X, [[-0.75, 1], [-0.5, 1], [0.125, 1]])
    # any dimension: explicit coordinates, or a named generator with its parameters
    v = build_dataset(Config().with_updates({"data.kind": "vectors", "data.points":
                                             [[1, 2, 3, 4], [0, -1, 0, 2]],
                                             "data.labels": [1, -1]}))
    assert v.X.shape == (2, 4) and np.array_equal(v.X[1], [0, -1, 0, 2])
    sym = build_dataset(Config().with_updates({"data.kind": "generated", "data.n": 12,
                                               "data.d": 6, "data.margin": 0.3}))
    u = sym.directions["u (generator)"]
    assert np.array_equal(sym.X[6:], -sym.X[:6]) and np.array_equal(sym.y[6:], -sym.y[:6])
    assert np.all(sym.y * (sym.X @ u) >= 0.3 - 1e-12)  # separable through 0, margin kept
    orth = build_dataset(Config().with_updates({
        "data.kind": "generated", "data.generator": "orthogonal", "data.n": 5, "data.d": 7,
        "data.labels": "real", "loss.kind": "square"}))
    G = orth.X @ orth.X.T
    assert np.abs(G - np.diag(np.diag(G))).max() < 1e-12 and not orth.classification
    assert list(np.sign(orth.y)) == [1, -1, 1, -1, 1]
    # x₊ and x₋ are sums (Min et al.), not means
    p = build_dataset(Config())
    assert np.allclose(p.directions["x₊"], p.X[p.y > 0].sum(axis=0))


@pytest.mark.parametrize("scheme", ["balanced", "gaussian", "dominated", "fixed_output"])
def test_init_schemes(scheme: str) -> None:
    upd = {"init.scheme": scheme, "model.width": 4000, "init.scale": 0.5}
    if scheme == "fixed_output":
        upd["model.train_output"] = False
    c = Config().with_updates(upd)
    W, a = init_weights(c, 2)
    std = entry_std(c, 2)
    assert np.isclose(std, 0.5 / np.sqrt(4000))
    nw = np.linalg.norm(W, axis=1)
    if scheme == "balanced":
        assert np.allclose(np.abs(a), nw, rtol=1e-15)
    elif scheme == "dominated":
        assert np.all(np.abs(a) >= nw) and np.abs(W).max() <= std
    elif scheme == "fixed_output":
        assert np.allclose(np.abs(a), 1 / np.sqrt(4000))
    else:  # independent Gaussian: sample std within 5 % (m = 4000 → s.e. ≈ 1.1 %)
        assert abs(a.std() / std - 1) < 0.05
    if scheme != "dominated":
        assert abs(W.std() / std - 1) < 0.05
    assert 0.4 < (a > 0).mean() < 0.6  # random signs


# ----------------------------------------------------------------------------- recording
def test_frames_land_exactly_on_record_times() -> None:
    tr = simulate(SMALL)
    assert np.array_equal(tr.t, frame_times(SMALL))
    assert tr.t[0] == 0 and tr.t[-1] == SMALL.integrator.t_end
    assert tr.W.shape[0] == tr.n_frames  # fits the budget: W at every frame
    # the stored projection is W onto the plane at every frame
    for f in (0, 7, tr.n_frames - 1):
        assert np.allclose(tr.proj[f], tr.W_at(f) @ tr.plane.T)
        assert np.allclose(tr.norms[f], np.linalg.norm(tr.W_at(f), axis=1))
    st = tr.scalars["t"]
    assert np.all(np.diff(st) > 0) and len(st) > 10


def test_gd_frames_are_whole_steps() -> None:
    c = SMALL.with_updates({"integrator.method": "gd", "integrator.lr": 0.05})
    tr = simulate(c)
    k = tr.t / 0.05
    assert np.allclose(k, np.round(k), atol=1e-9)
    assert tr.n_steps == round(30.0 / 0.05)


def test_activation_events_match_patterns() -> None:
    tr = simulate(SMALL.with_updates({"init.scale": 1e-2}))
    assert tr.active is not None
    changes = int((tr.active[1:] != tr.active[:-1]).sum())
    assert changes == tr.events["t"].size > 0
    f = int(np.searchsorted(tr.t, tr.events["t"][0]))
    j, i = tr.events["neuron"][0], tr.events["point"][0]
    assert tr.active[f, j, i] == tr.events["on"][0]


def test_explicit_initial_weights() -> None:
    W = np.array([[1e-3, 2e-3], [-1e-3, 1e-3]])
    a = np.array([2e-3, -1.5e-3])
    c = SMALL.with_updates({"model.width": 2})
    tr = simulate(c, initial=(W, a))
    assert np.array_equal(tr.W[0], W) and np.array_equal(tr.a[0], a)


# ----------------------------------------------------------------------------- statuses
def test_diverging_run_returns_partial_trajectory() -> None:
    # square loss on unit-norm data: GD is unstable once lr exceeds 2/λ_max of the Hessian
    c = Config().with_updates({"integrator.method": "gd", "integrator.lr": 4.0,
                               "integrator.t_end": 4000.0, "init.scale": 1.0,
                               "init.normalisation": "none", "record.frames": 50,
                               "record.spacing": "linear"})
    tr = simulate(c)
    assert tr.status == "diverged"
    assert "diverged" in tr.message and "lr" in tr.message
    assert 1 <= tr.n_frames < 50 and np.all(np.isfinite(tr.loss))
    assert tr.t[-1] < 5000.0


def test_cancel_and_deadline_keep_partial_results() -> None:
    c = SMALL.with_updates({"integrator.method": "gd", "integrator.lr": 1e-4,
                            "integrator.t_end": 100.0, "model.width": 200})
    ev = threading.Event()
    calls = []

    def progress(frac: float, text: str) -> None:
        calls.append(frac)
        if frac > 0.05:
            ev.set()

    tr = simulate(c, progress=progress, cancel=ev)
    assert tr.status == "cancelled" and "Cancelled" in tr.message
    assert tr.t[-1] < 100.0 and calls
    tr2 = simulate(c, deadline=0.2)
    assert tr2.status == "deadline" and "time limit" in tr2.message
    assert tr2.t[-1] < 100.0


def test_step_limit_status() -> None:
    c = SMALL.with_updates({"integrator.max_steps": 20})
    tr = simulate(c)
    assert tr.status == "max_steps" and "step limit" in tr.message


def test_status_writes_each_simulation_message() -> None:
    """Every status simulate returns has its sentence: where the run stopped, and the fix."""
    from dynamics.status import RunEnd, Status, divergence_fix

    end = RunEnd(t=3.5, t_end=30.0, n_evals=120, method="the adaptive integrator",
                 diverged_why="the flow blows up", max_steps=60, deadline=2.0)
    texts = {s: s.message_for(end) for s in Status.simulation()}
    assert texts[Status.COMPLETED] == "Completed: t = 30, 120 gradient evaluations."
    assert "3.5" in texts[Status.CANCELLED]
    for s in (Status.DEADLINE, Status.MAX_STEPS):
        assert "3.5" in texts[s] and texts[s].endswith(s.fix), s
    # a divergence's fix points the right way (status.divergence_fix): under gf never "lower
    # lr"; from a start too small for floating point, a larger ε
    assert "3.5" in texts[Status.DIVERGED]
    assert texts[Status.DIVERGED].endswith(divergence_fix("gf", 1.0))
    gd = Status.DIVERGED.message_for(RunEnd(**{**end.__dict__, "method_key": "gd"}))
    assert gd.endswith(Status.DIVERGED.fix) and "Lower lr" in gd
    tiny = Status.DIVERGED.message_for(RunEnd(**{**end.__dict__, "init_scale": 1e-300}))
    assert "too small for floating point" in tiny and "Raise the init scale" in tiny
    assert "(2 s)" in texts[Status.DEADLINE] and "(60)" in texts[Status.MAX_STEPS]
    assert "the flow blows up" in texts[Status.DIVERGED]
    stalled = Status.MAX_STEPS.message_for(RunEnd(**{**end.__dict__, "stalled": True}))
    assert "no progress" in stalled
    kinks = Status.COMPLETED.message_for(RunEnd(**{**end.__dict__, "kink_floor_steps": 7}))
    assert "7 adaptive steps were taken at the kink floor" in kinks
    assert [s for s in Status if s.has_summaries] == [Status.COMPLETED, Status.MAX_STEPS]


# ----------------------------------------------------------------------------- determinism
def test_bit_identical_in_two_threads() -> None:
    c = SMALL.with_updates({"init.scheme": "gaussian", "seed": 7})
    out: list[Trajectory] = []
    threads = [threading.Thread(target=lambda: out.append(simulate(c))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _assert_same(out[0], out[1])


def test_bit_identical_in_two_processes(tmp_path: Path) -> None:
    c = SMALL.with_updates({"seed": 3, "data.kind": "clusters"})
    cfg = tmp_path / "c.json"
    cfg.write_text(c.to_json())
    outs = []
    for i in range(2):
        out = tmp_path / f"r{i}.npz"
        r = subprocess.run([sys.executable, "-m", "dynamics", "run", str(cfg), "--out", str(out),
                            "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(Trajectory.load(out))
    _assert_same(outs[0], outs[1])
    _assert_same(outs[0], simulate(c))


# ----------------------------------------------------------------------------- save/load
def test_save_load_round_trip_is_exact(tmp_path: Path) -> None:
    tr = simulate(SMALL.with_updates({"data.kind": "teacher", "data.d": 5}))
    npz, js = tr.save(tmp_path / "run.npz")
    assert npz.exists() and js.exists()
    back = Trajectory.load(npz)
    _assert_same(tr, back)
    assert back.config == tr.config and back.plane_names == tr.plane_names
    again = Trajectory.from_bytes(tr.to_bytes())
    _assert_same(tr, again)
    header = json.loads(js.read_text())
    assert header["config"] == tr.config.to_dict()


# ----------------------------------------------------------------------------- CLI
def test_cli_reports_every_bad_field(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "dynamics", "run", "--set", "model.width=-2",
                        "--set", "model.gamma=7", "--out", str(tmp_path / "x.npz")],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "model.width" in r.stderr and "model.gamma" in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_set_overrides(tmp_path: Path) -> None:
    out = tmp_path / "o.npz"
    r = subprocess.run([sys.executable, "-m", "dynamics", "run", "--set", "model.width=5",
                        "--set", "record.frames=6", "--set", "integrator.t_end=1",
                        "--out", str(out), "--quiet"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["status"] == "completed"
    tr = Trajectory.load(out)
    assert tr.width == 5 and tr.n_frames == 6


def test_data_classes_cover_kinds() -> None:
    assert set(DATA_CLASSES) == set(DATA_KINDS)


def test_chunks_are_sized_to_chunk_s_of_the_measured_cost() -> None:
    """Between chunks the deadline and the cancel flag are checked; a chunk after the first
    holds about CHUNK_S seconds of evaluations at the measured cost (never fewer than
    FIRST_CHUNK, growing at most 20× a chunk), so a deadline takes effect within a chunk."""
    from dynamics.simulate import CHUNK_S, FIRST_CHUNK, MAX_CHUNK, _next_chunk

    for per_eval in (1e-6, 1e-4, 1e-2, 0.05):  # the next chunk's cost at the measured speed
        evals = 1000
        nxt = _next_chunk(evals, evals * per_eval)
        assert nxt * per_eval <= CHUNK_S * (1 + 1e-9) or nxt == FIRST_CHUNK
        assert nxt <= 20 * evals and nxt <= MAX_CHUNK
    assert _next_chunk(4, 4 * 0.1) == FIRST_CHUNK  # evaluations of 0.1 s: 4 a chunk
    assert _next_chunk(4, 4e-9) == 20 * FIRST_CHUNK  # cold caches measured: grow 20× at most
    assert _next_chunk(10**6, 1e-9) == MAX_CHUNK


def test_the_deadline_and_cancel_flag_are_checked_between_chunks() -> None:
    """Counts, not a clock: a spent deadline stops a run before any compiled chunk; a cancel
    flag raised at its third check stops the run after two chunks on a large problem, whose
    evaluations take ~0.1 s each."""
    from dynamics.simulate import FIRST_CHUNK

    c = Config().with_updates({"data.kind": "teacher", "data.d": 128, "data.n": 2000,
                               "model.width": 1000, "integrator.method": "gf",
                               "integrator.t_end": 100000.0, "record.frames": 2,
                               "record.spacing": "linear"})
    tr = simulate(c, deadline=0.0)
    assert tr.status == "deadline" and "time limit" in tr.message
    assert tr.n_evals == 0
    checks = []

    def cancel() -> bool:
        checks.append(1)
        return len(checks) >= 3

    tr = simulate(c, cancel=cancel)
    assert tr.status == "cancelled"
    assert len(checks) == 3  # before chunk 1, before chunk 2, then the stop
    # two chunks ran and no more: the first's budget FIRST_CHUNK, the second's ≤ 20× that,
    # each overshooting by at most one step's 3 evaluations (Bogacki–Shampine, FSAL)
    assert 2 <= tr.n_evals <= 21 * FIRST_CHUNK + 2 * 3
    assert tr.t[-1] < 100000.0


# ------------------------------- compiled frame measurements = the NumPy reference formulas
def _numpy_frame(tr: Trajectory, f: int) -> dict[str, object]:
    """One frame's measurements by NumPy and LAPACK (the reference of the compiled ones):
    loss_grad, W Xᵀ > 0, LAPACK SVD, the (k, k) angle matrix, metrics.* formulas."""
    from dynamics import metrics
    from dynamics.kernels import forward, loss_grad
    from dynamics.simulate import build_problem
    from tests.test_metrics import _max_mean_before

    c = tr.config
    ds = build_dataset(c)
    p = build_problem(c, ds)
    W, a = tr.W_at(f), tr.a[f]
    W0, a0 = tr.W_at(0), tr.a[0]
    loss, gW, _ = loss_grad(p, W, a)
    pattern = (W @ ds.X.T) > 0
    s = np.linalg.svd(W, compute_uv=False)
    act = pattern.any(axis=1)
    mx, mean = _max_mean_before(W, act)
    nr, dr = metrics.direction_rates(W, gW)
    norms = np.linalg.norm(W, axis=1)
    return {
        "loss": loss, "pattern": pattern, "norms": norms, "proj": W @ tr.plane.T,
        "accuracy": (metrics.accuracy(forward(p, W, a), ds.y) if ds.classification
                     else np.nan),
        "cosines": {k: metrics.cosines(W, v) for k, v in tr.directions.items()},
        "fm": {"stable_rank": (s**2).sum() / s[0] ** 2, "spectral_sq": s[0] ** 2,
               "nuclear_norm": s.sum(), "theta_sq": metrics.theta_sq(W, a), "max_angle": mx,
               "mean_angle": mean, "balance_drift": metrics.balance_drift(W, a, W0, a0),
               "n_active": act.sum(), "n_dead": (~act).sum(), "norm_rate": nr,
               "dir_rate": dr, "max_norm": norms.max()},
        # magnitudes of the terms behind the two differences, for their round-off
        "atol": {"balance_drift": 1e-14 * (a**2 + norms**2).max(),
                 "norm_rate": 1e-14 * 2.0 * np.abs(gW * W).sum()}}


RECORDED = {
    "two_signals": SMALL,
    "teacher": Config().with_updates({
        "data.kind": "teacher", "data.d": 6, "model.width": 40, "record.frames": 15,
        "integrator.t_end": 50.0, "init.scale": 1e-4}),
    "three_point": Config().with_updates({
        "data.kind": "three_point", "model.width": 30, "record.frames": 15,
        "integrator.t_end": 400.0}),
    "wang_ma_gd": Config().with_updates({
        "data.kind": "two_signals", "loss.kind": "exponential", "model.train_output": False,
        "init.scheme": "fixed_output", "model.width": 25, "record.frames": 15,
        "integrator.method": "gd", "integrator.lr": 0.01, "integrator.t_end": 20.0}),
    "digits_m_below_d": Config().with_updates({
        "data.kind": "digits", "data.n_per_class": 10, "model.width": 30,
        "record.frames": 6, "integrator.t_end": 2.0}),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_frames_equal_the_numpy_reference(name: str) -> None:
    """Loss, patterns, events and accuracy exactly; the compiled metrics to round-off
    (relative 1e-12, angles within 1e-9 rad) — over every frame of runs covering tight and wide
    bundles, gd and gf, frozen outputs, classification and regression, m < d."""
    from dynamics.kernels.measure import FRAME_METRICS
    from tests.test_metrics import ANGLE_TOL_RAD

    tr = simulate(RECORDED[name])
    assert tr.status == "completed", tr.message
    assert len(tr.W_frames) == tr.n_frames and tr.active is not None
    assert sorted(tr.frame_metrics) == sorted(FRAME_METRICS)
    ev = []
    for f in range(tr.n_frames):
        ref = _numpy_frame(tr, f)
        assert tr.loss[f] == ref["loss"]
        assert np.array_equal(tr.active[f], ref["pattern"])
        np.testing.assert_array_equal(tr.accuracy[f], ref["accuracy"])
        for key in ("norms", "proj"):
            r = np.asarray(ref[key])
            np.testing.assert_allclose(getattr(tr, key)[f], r, rtol=1e-12,
                                       atol=1e-14 * np.abs(r).max())
        for k, v in ref["cosines"].items():
            np.testing.assert_allclose(tr.cosines[k][f], v, rtol=1e-12, atol=1e-14)
        for k, v in ref["fm"].items():
            got = tr.frame_metrics[k][f]
            if k.endswith("_angle"):
                assert abs(np.radians(got - v)) <= ANGLE_TOL_RAD, (k, f, got, v)
            else:
                np.testing.assert_allclose(got, v, rtol=1e-12, err_msg=k,
                                           atol=ref["atol"].get(k, 1e-300))  # type: ignore
        if f:
            j, i = np.nonzero(tr.active[f] != tr.active[f - 1])
            ev += [(tr.t[f], jj, ii, tr.active[f][jj, ii]) for jj, ii in zip(j, i, strict=True)]
    got_ev = list(zip(tr.events["t"], tr.events["neuron"], tr.events["point"], tr.events["on"],
                      strict=True))
    assert got_ev == ev


@pytest.mark.parametrize("method", ["gf", "gd"])
def test_recording_leaves_the_trajectory_bit_identical(method: str, monkeypatch) -> None:
    """W, a, loss and the dense scalars of simulate() equal the bare stepper's over the same
    frame times: recording reads the state and never writes it. (Chunks are fixed here: gf's
    results can depend on where a budget cuts a run after a rejected step.)"""
    import dynamics.simulate as sim
    from dynamics.kernels import make_stepper

    monkeypatch.setattr(sim, "_next_chunk", lambda evals, dt: sim.MAX_CHUNK)
    c = RECORDED["teacher"].with_updates({"integrator.method": method,
                                          "integrator.lr": 0.05})
    tr = simulate(c)
    ds = build_dataset(c)
    W0, a0 = init_weights(c, ds.d)
    policy = sim.RecordPolicy.from_config(c)
    st = make_stepper(method, sim.build_problem(c, ds), W0, a0, c.integrator)
    grid = policy.scalars
    loss = []
    for f, target in enumerate(st.landing_times(policy.frames[1:]), start=1):
        r = st.advance(float(target), 10**9, grid[(grid > st.t) & (grid <= target)])
        assert r.status == "ok"
        loss.append(r.samples.loss)
        assert np.array_equal(tr.W_at(f), st.W) and np.array_equal(tr.a[f], st.a)
        assert tr.t[f] == st.t
    assert np.array_equal(tr.scalars["loss"], np.concatenate(loss))


@pytest.mark.parametrize("name", ["teacher", "three_point", "two_signals", "gd", "max_steps"])
def test_frame_blocks_worker_thread_and_reused_gradient_give_the_same_bits(
        name: str, monkeypatch) -> None:
    """The fast path (gf: many frames per compiled call, each frame's loss and gradient from
    the stepper's own last evaluation; frames measured on the worker thread, in small blocks
    here) equals the plain one (one `advance` per frame, `loss_grad` per frame, measured
    inline) bit for bit, also when the run stops on its step limit."""
    import dynamics.simulate as sim
    from dynamics.kernels import FramewiseAdvance, GFStepper

    c = {"gd": SMALL.with_updates({"integrator.method": "gd", "record.frames": 12}),
         "max_steps": SMALL.with_updates({"integrator.max_steps": 60})}.get(name)
    c = RECORDED[name] if c is None else c
    monkeypatch.setattr(sim, "_spare_cpu", lambda: True)
    monkeypatch.setattr(sim, "FRAME_BLOCK_BYTES", 4000)  # a few frames per call and batch
    fast = simulate(c)
    assert fast.status == ("max_steps" if name == "max_steps" else "completed")
    # the plain path: the protocol's default advance_frames (one advance per frame, no L, ∇L)
    monkeypatch.setattr(GFStepper, "advance_frames", FramewiseAdvance.advance_frames)
    monkeypatch.setattr(sim, "PIPELINE_MIN_FRAMES", 10**9)
    _assert_same(fast, simulate(c))


def test_advance_frames_equals_advance_per_frame() -> None:
    """`GFStepper.advance_frames` reaches each target with the state, loss and gradient that
    one `advance` per target gives, whatever its evaluation budget."""
    from dynamics.kernels import GFStepper, loss_grad

    c = RECORDED["three_point"]
    ds = build_dataset(c)
    W0, a0 = init_weights(c, ds.d)
    p = __import__("dynamics.simulate", fromlist=["build_problem"]).build_problem(c, ds)
    targets = np.geomspace(0.1, 50.0, 9)
    grid = np.geomspace(0.05, 50.0, 30)
    ref = GFStepper(p, W0, a0, 1e-6, 1e-12)
    states = []
    for tt in targets:
        ref.advance(tt, 10**9, grid[(grid > ref.t) & (grid <= tt)])
        states.append((ref.W.copy(), ref.a.copy()))
    for budget in (10**9, 7):
        st = GFStepper(p, W0, a0, 1e-6, 1e-12)
        k = 0
        while k < len(targets):
            _, r, fs = st.advance_frames(targets[k:], budget, grid[grid > st.t])
            for j in range(r):
                W, a = states[k + j]
                assert np.array_equal(fs.W[j], W) and np.array_equal(fs.a[j], a)
                L, gW, ga = loss_grad(p, W, a)
                assert fs.L[j] == L and np.array_equal(fs.G[j][:-1].T, gW)
                assert np.array_equal(fs.G[j][-1], ga)
            k += r
        assert (st.n_accepted, st.n_rejected) == (ref.n_accepted, ref.n_rejected)


def test_an_error_while_recording_reaches_the_caller(monkeypatch) -> None:
    """A frame that fails on the worker thread raises in simulate()'s thread."""
    import dynamics.simulate as sim

    real = sim._FrameTable.add
    threads: list[str] = []

    def boom(self, t, *args, **kw):  # type: ignore[no-untyped-def]
        if t > 1.0:  # the frame at t = 0 is recorded before the worker starts
            threads.append(threading.current_thread().name)
            raise RuntimeError("frame failed")
        return real(self, t, *args, **kw)

    monkeypatch.setattr(sim, "_spare_cpu", lambda: True)
    monkeypatch.setattr(sim._FrameTable, "add", boom)
    with pytest.raises(RuntimeError, match="frame failed"):
        simulate(SMALL.with_updates({"record.frames": 12}))
    assert threads == ["eae-measure"]  # measured on the worker, raised here; then no more


# ------------------------------------------------------ achieved accuracy beside the requested
def test_achieved_accuracy_is_reported_and_agrees_with_the_weights() -> None:
    """gf with a trained output layer reports the drift of a_j² − ‖w_j‖² (conserved by the
    flow) beside its rtol; recomputed here from the stored weights with NumPy; GD and a frozen
    output layer (nothing conserved) report nothing; past 10·rtol the message says so."""
    from dynamics import metrics
    from dynamics.simulate import ACCURACY_SLACK, _report_accuracy

    c = Config.from_dict({"data": {"kind": "clusters", "bias": True}, "model": {"gamma": 0.1},
                          "loss": {"kind": "logistic"}, "integrator": {"t_end": 20.0}})
    tr = simulate(c)
    acc = tr.meta["accuracy"]
    assert acc["rtol"] == c.integrator.rtol and 0 < acc["balance_drift"] < 1e-3
    assert acc["within_tolerance"] == (acc["balance_drift"] <= ACCURACY_SLACK * acc["rtol"])
    W0, a0 = tr.W_at(0), tr.a[0]
    ref = max(np.abs(metrics.balance(tr.W_at(f), tr.a[f]) - metrics.balance(W0, a0)).max()
              / ((tr.a[f] ** 2).max() + (np.linalg.norm(tr.W_at(f), axis=1) ** 2).max())
              for f in range(tr.n_frames) if tr.W_at(f) is not None)
    assert acc["balance_drift"] == pytest.approx(ref, rel=1e-6, abs=1e-15)
    assert "accuracy" not in simulate(c.with_updates({"integrator.method": "gd"})).meta
    assert "accuracy" not in simulate(c.with_updates({"model.train_output": False})).meta
    # the sentence appears exactly when the drift is past the slack (here: a demanded rtol
    # far below what this run achieved)
    strict = simulate(c)
    strict.config = c.with_updates({"integrator.rtol": acc["balance_drift"] / 100})
    _report_accuracy(strict)
    assert strict.meta["accuracy"]["within_tolerance"] is False
    assert ("Achieved accuracy" in strict.message and "Achieved accuracy" not in tr.message) \
        or not acc["within_tolerance"]


def test_the_plane_is_finite_for_one_dimensional_and_degenerate_data():
    """The drawing plane is always an orthonormal pair, or (d = 1) the line and a zero row:
    1-D inputs gave a NaN second axis (0/0, a RuntimeWarning) before; a second direction
    parallel to the first (x₋ = −2x₊ with the signals plane) and a zero first direction (no
    positive point) fall back to coordinate axes."""
    import warnings

    from dynamics.simulate import plane_for

    line = SMALL.with_updates({"data": {"kind": "vectors", "points": [[1.0], [-0.5], [2.0]],
                                        "labels": [1.0, -1.0, 1.0]}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no invalid division
        tr = simulate(line)
    assert tr.plane.shape == (2, 1) and abs(tr.plane[0, 0]) == 1.0 and tr.plane[1, 0] == 0.0
    assert np.isfinite(tr.proj).all() and np.isfinite(tr.W).all()
    for kind in ("auto", "pca", "axes", "signals"):
        P, _ = plane_for(line, build_dataset(line), kind)
        assert np.isfinite(P).all() and np.linalg.norm(P[0]) == pytest.approx(1.0), kind
    flat = SMALL.with_updates({"data": {"kind": "vectors", "points": [[1.0, 0.0, 0.0],
                                                                     [-2.0, 0.0, 0.0]],
                                        "labels": [1.0, -1.0]}})
    one_sign = flat.with_updates({"data.labels": [-1.0, -1.0]})
    for cfg in (flat, one_sign):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            P, _ = plane_for(cfg, build_dataset(cfg), "signals")
        assert P @ P.T == pytest.approx(np.eye(2), abs=1e-15)
