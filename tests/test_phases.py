"""Phase detection on synthetic trajectories with known answers, and on real runs."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics import phases
from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.papers import wang_ma
from dynamics.trajectory import Trajectory


def _traj(t, loss, norms, *, a=None, acc=None, cos_plus=None, cos_minus=None, proj=None,
          scalars=None, events=None, kind="points", store_w=True) -> Trajectory:
    F, m = norms.shape
    a = np.ones((F, m)) if a is None else a
    cfg = Config() if kind == "points" else Config.from_dict(
        {"data": {"kind": "two_signals"}, "model": {"train_output": False},
         "loss": {"kind": "exponential"}, "init": {"scheme": "fixed_output"}})
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    cos = {}
    if cos_plus is not None:
        cos = {"x₊ signal": cos_plus, "x₋ signal": cos_minus}
    W = np.stack([np.c_[norms[f], np.zeros(m)] for f in range(F)])
    return Trajectory(
        config=cfg, t=np.asarray(t, float), loss=np.asarray(loss, float),
        accuracy=np.full(F, np.nan) if acc is None else np.asarray(acc, float), a=a,
        norms=norms, proj=np.zeros((F, m, 2)) if proj is None else proj, plane=np.eye(2),
        plane_names=("x₁", "x₂"), W=W if store_w else W[:0],
        W_frames=np.arange(F) if store_w else np.zeros(0, int), X=X, y=np.array([1.0, -1.0]),
        sw=np.ones(2), active=None,
        events=events or {"t": np.zeros(0), "neuron": np.zeros(0, int),
                          "point": np.zeros(0, int), "on": np.zeros(0, bool)},
        frame_metrics={}, cosines=cos, directions={"x₊ signal": X[0], "x₋ signal": X[1]},
        scalars=scalars or {"t": np.zeros(0), "loss": np.zeros(0), "norm_rate": np.zeros(0),
                            "dir_rate": np.zeros(0)})


def _grid():
    return np.r_[0.0, np.geomspace(1e-3, 1e3, 121)]


def test_alignment_end_from_norm_scale():
    t = _grid()
    # norms grow as 1e-8·e^t: √(1e-8) = 1e-4 is reached at t = ln(1e4) = 9.21
    norms = np.minimum(1e-8 * np.exp(np.minimum(t, 60.0)), 1.0)[:, None] * np.ones((1, 3))
    loss = np.where(t < 15, 1.0, 1e-6)
    tr = _traj(t, loss, norms)
    t_a, why = phases.alignment_end(tr)
    first_after = t[np.argmax(t >= np.log(1e4))]
    assert t_a == first_after and "Lemma 3" in why
    # rate crossing earlier wins
    sc = {"t": np.array([1.0, 2.0, 3.0]), "loss": np.ones(3), "norm_rate": np.array([0, 5, 9.]),
          "dir_rate": np.array([1.0, 4.0, 1.0])}
    tr2 = _traj(t, loss, norms, scalars=sc)
    assert phases.alignment_end(tr2)[0] == 2.0
    # not small: no alignment phase
    tr3 = _traj(t, loss, np.ones_like(norms))
    assert phases.alignment_end(tr3)[0] is None


def test_escape_convergence_and_plateaus():
    t = _grid()
    lt = np.log10(np.maximum(t, 1e-3))
    # plateau at 1 until t = 1, drop to a second plateau 0.1 on [10, 100], then to 1e-8
    loss = np.where(lt < 0, 1.0, np.where(lt < 1, 10 ** -lt, np.where(lt < 2, 0.1,
                                                                    0.1 * 10 ** (-7 * (lt - 2)))))
    loss[0] = 1.0
    tr = _traj(t, loss, np.full((len(t), 2), 1e-6))
    te = phases.saddle_escape(tr)
    assert 1.0 <= te <= 1.13  # first frame past t = 1 (grid ratio 10^0.05 ≈ 1.12)
    tc = phases.convergence_start(tr)
    assert 100 <= tc <= 100 * 10 ** (3 / 7 + 0.05)  # L ≤ 1e-3 once 0.1·10^(−7(lt−2)) ≤ 1e-3
    pl = phases.loss_plateaus(tr)
    assert len(pl) == 2
    (a0, a1, l0), (b0, b1, l1) = pl
    assert a0 == t[1] and np.isclose(l0, 1.0) and 0.9 <= a1 <= 1.13
    assert np.isclose(l1, 0.1) and 9 <= b0 <= 11.3 and 89 <= b1 <= 113
    ph, mk = phases.detect_phases(tr)
    names = [p.name for p in ph]
    assert "initial plateau" in names and "plateau" in names and "fitting" in names
    assert any(m.name == "plateau escape" and 89 <= m.time <= 113 for m in mk)


def test_a_loss_that_stops_above_zero_settles_and_fitting_ends_there():
    """The loss falls from 1 at t = 1 to 0.1 at t = 10 and stays there to the end (a trap, or
    the linear estimator's level): fitting ends where the final plateau starts, which is the
    story's "settled" phase (not "norms grow, loss falls" to the end); the same curve falling
    on to 1e-8 after t = 100 converges instead and has no settled phase."""
    t = _grid()
    lt = np.log10(np.maximum(t, 1e-3))
    loss = np.where(lt < 0, 1.0, np.where(lt < 1, 10 ** -lt, 0.1))
    loss[0] = 1.0
    ph, _ = phases.detect_phases(_traj(t, loss, np.full((len(t), 2), 1e-6)))
    by = {p.name: p for p in ph}
    assert "convergence" not in by and "plateau" not in by
    settled, fit = by["settled"], by["fitting"]
    assert 9 <= settled.start <= 11.3 and settled.end == t[-1]
    assert fit.end == settled.start and settled.plain == phases.PLAIN["settled"]
    on = np.where(lt < 2, loss, 0.1 * 10 ** (-7 * (lt - 2)))
    names = {p.name for p in phases.detect_phases(_traj(t, on, np.full((len(t), 2), 1e-6)))[0]}
    assert "settled" not in names and {"fitting", "convergence", "plateau"} <= names


def test_accuracy_plateau_and_activation_changes():
    t = _grid()
    acc = np.where(t < 5, 0.5, 1.0)
    ev = {"t": np.array([t[10], t[10], t[50]]), "neuron": np.array([0, 1, 1]),
          "point": np.array([0, 0, 1]), "on": np.array([False, True, False])}
    a = np.ones((len(t), 2))
    a[:, 1] = -1
    tr = _traj(t, np.ones(len(t)), np.full((len(t), 2), 1e-6), acc=acc, a=a, events=ev)
    ap = phases.accuracy_plateaus(tr)
    assert len(ap) == 1 and ap[0][2] == 0.5 and ap[0][0] == t[1] and 4 <= ap[0][1] <= 5.7
    ch = phases.activation_changes(tr)
    assert ch["pos_off"][10] == 1 and ch["neg_on"][10] == 1 and ch["neg_off"][50] == 1
    assert ch["pos_on"].sum() == 0
    mk = {m.name: m.time for m in phases.activation_markers(tr)}
    assert mk["last activation change (a > 0)"] == t[10]
    assert mk["last activation change (a < 0)"] == t[50]


def test_wang_ma_phases_on_crafted_counts():
    """Phases I–IV from crafted neuron states: 4 positive, 4 negative neurons (no full W
    stored: the cosine fallback of `kink_states`)."""
    t = _grid()
    F = len(t)
    m = 8
    a = np.r_[np.ones(4), -np.ones(4)][None].repeat(F, 0)
    # directions: positives at 30°, negatives at −60° (condensed from frame 5 on)
    ang = np.zeros((F, m))
    rng = np.random.default_rng(0)
    ang[:5] = rng.uniform(-180, 180, (5, m))
    ang[5:, :4] = 30.0
    ang[5:, 4:] = -60.0
    proj = np.stack([np.cos(np.radians(ang)), np.sin(np.radians(ang))], -1)
    cp = np.ones((F, m))
    cm = np.ones((F, m))
    cp[:, 4:] = np.where(t[:, None] < 100, -0.5, 0.5)  # negatives return to x₊ at t = 100 (IV)
    cm[:, :4] = np.where(t[:, None] < 10, 0.5, -0.5)  # positives leave x₋ at t = 10 (III)
    loss = np.where(t < 0.1, 1.0, 0.5)
    acc = np.where(t < 3, 0.5, 1.0)
    tr = _traj(t, loss, np.full((F, m), 1e-3), a=a, acc=acc, cos_plus=cp, cos_minus=cm,
               proj=proj, kind="two_signals", store_w=False)
    assert not wang_ma.kink_states(tr).filippov.any()
    ph, counts, summary = wang_ma.wang_ma_phases(tr)
    assert summary == "I → II → III → IV"
    got = {p.name: (p.start, p.end) for p in ph}
    assert 0.1 <= got["Phase I"][1] <= 0.113
    assert 3 <= got["Phase II"][1] <= 3.4
    assert 10 <= got["Phase III"][0] <= 11.3
    assert 100 <= got["Phase IV"][0] <= 113
    assert counts["pos_on_minus"][0] == 4 and counts["pos_on_minus"][-1] == 0
    assert counts["neg_on_plus"][0] == 0 and counts["neg_on_plus"][-1] == 4


def test_analyse_real_run_is_consistent():
    from dynamics.simulate import simulate

    cfg = Config.from_dict({"init": {"scale": 1e-8, "normalisation": "none"},
                            "loss": {"kind": "exponential", "reduction": "sum"},
                            "integrator": {"t_end": 40.0}})
    tr = simulate(cfg)
    an = analyse(tr)  # its cost at every size: python -m bench precompute
    names = {p.name for p in an.phases}
    assert {"alignment", "fitting", "initial plateau"} <= names
    al = next(p for p in an.phases if p.name == "alignment")
    fit = next(p for p in an.phases if p.name == "fitting")
    assert al.end <= fit.start  # alignment ends before the loss falls
    kinds = {d.kind for d in an.directions}
    assert {"extremal_max", "extremal_min", "signal"} <= kinds
    assert any(m.source == "predicted" and m.name.startswith("Min") for m in an.markers)
    assert an.cone_normals is not None and an.cone_normals.shape == (4, 2)


# ----------------------------------------------------------------------------- Wang & Ma kinks
def _two_signal_residuals(h_plus: float, h_minus: float, delta: float = 0.3, p: float = 2.0):
    """X = [x₊, x₋] at angle δ, y = (+1, −1), class weight p, exponential loss (mean): the
    residual weights r_i = −R s_i ∂ℓ(h_i, y_i)."""
    X = np.array([[1.0, 0.0], [np.cos(delta), np.sin(delta)]])
    y = np.array([1.0, -1.0])
    sw = np.array([p, 1.0])
    r = -0.5 * sw * phases.loss_derivative("exponential", np.array([h_plus, h_minus]), y)
    return X, y, r


def test_kink_side_follows_the_filippov_condition():
    """A negative neuron on x₊'s kink, active on x₋, slides (inactive on x₊) while
    h(x₊) + h(x₋) < ln(p/cos δ) = 0.7388 and is active once the sum is above, whichever side of
    the kink it sits on within the band; off the band the sign decides."""
    thr = np.log(2.0 / np.cos(0.3))
    assert thr == pytest.approx(0.7388, abs=1e-4)
    X, y, _ = _two_signal_residuals(0, 0)
    # ⟨w, x₊⟩ = ±1e-4 (on the kink) and ±0.1 (off it), ⟨w, x₋⟩ > 0 for all four
    W = np.array([[1e-4, 1.0], [-1e-4, 1.0], [0.1, 1.0], [-0.1, 1.0]])
    a = -np.ones(4)
    for total, slides in ((thr - 0.01, True), (thr + 0.01, False)):
        _, _, r = _two_signal_residuals(1.5, total - 1.5)
        # one frame: the batched form takes (frames, neurons, d), (frames, neurons), (frames, n)
        active, sliding = wang_ma._side_of_kink(W[None], a[None], X[0], y > 0, X, r[None], 0.0,
                                                1.0, 5e-3)
        active, sliding = active[0], sliding[0]
        assert list(sliding[:2]) == [slides, slides]
        assert list(active[:2]) == [not slides, not slides]
        assert list(active[2:]) == [True, False] and not sliding[2:].any()


def test_wang_ma_flow_phases_and_predicted_reactivation():
    """The preset under the flow: four phases in order, IV where h(x₊) + h(x₋) reaches
    ln(p/cos δ); GD with the coarse η = 5e-3 crosses both conditions early."""
    from dynamics.simulate import simulate

    tr = simulate(wang_ma.config(t_end=1000.0))
    ph, _counts, summary = wang_ma.wang_ma_phases(tr)
    assert summary == "I → II → III → IV"
    st = {p.name: p.start for p in ph}
    t_pred, why = wang_ma.predicted_reactivation(tr)
    assert t_pred is not None and "Filippov" in why
    assert abs(st["Phase IV"] - t_pred) <= 0.1 * t_pred
    assert st["Phase III"] < st["Phase IV"]
    hs = wang_ma.signal_output_sum(tr)
    f = tr.frame_at(t_pred)
    assert hs[f] >= wang_ma.reactivation_threshold(tr) > hs[f - 1]
    gd = simulate(wang_ma.config(t_end=1000.0, method="gd", lr=5e-3))
    st_gd = {p.name: p.start for p in wang_ma.wang_ma_phases(gd)[0]}
    assert st_gd["Phase IV"] < 0.7 * st["Phase IV"]  # not the flow limit
