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


def test_deadline_takes_effect_within_seconds_on_a_large_problem() -> None:
    """Chunks are sized from the measured cost of an evaluation (the first is one step), so a
    1 s deadline stops a run whose evaluations take ~0.1 s each within a few seconds."""
    import time

    c = Config().with_updates({"data.kind": "teacher", "data.d": 128, "data.n": 2000,
                               "model.width": 1000, "integrator.method": "gf",
                               "integrator.t_end": 100000.0, "record.frames": 2,
                               "record.spacing": "linear"})
    simulate(c.with_updates({"data.n": 20, "model.width": 20}))  # compile outside the clock
    t0 = time.perf_counter()
    tr = simulate(c, deadline=1.0)
    wall = time.perf_counter() - t0
    assert tr.status == "deadline" and "time limit" in tr.message
    assert wall < 3.5, wall
