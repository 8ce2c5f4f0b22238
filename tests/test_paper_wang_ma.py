"""Wang & Ma: every claim passes on the preset, fails on a deliberately wrong run, and gives
the same verdict under the flow and GD at small steps."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics import papers, phases
from dynamics.config import Config
from dynamics.papers import wang_ma
from dynamics.simulate import simulate as _simulate
from dynamics.trajectory import Trajectory

_RUNS: dict[str, Trajectory] = {}


def simulate(cfg: Config) -> Trajectory:
    """`simulate`, once per config in this module (by its cache key): the flow-limit claim
    derives its step from GD runs that the small-step and integrator checks run again."""
    key = cfg.cache_key()
    if key not in _RUNS:
        _RUNS[key] = _simulate(cfg)
    return _RUNS[key]


@pytest.fixture(scope="module")
def flow():
    return simulate(wang_ma.config())


@pytest.fixture(scope="module")
def short():
    """A run too short for Phases III and IV (t_end = 300)."""
    return simulate(wang_ma.config(t_end=300.0))


@pytest.mark.heavy
def test_claims_quick_pass_with_fields_filled():
    claims = papers.check_claims("wang_ma", quick=True)
    assert [c.name for c in claims] == ["wang_ma.four_phases[four_phases]",
                                        "wang_ma.reactivation[four_phases]",
                                        "wang_ma.flow_limit[four_phases]", "wang_ma.sweep"]
    for c in claims:
        assert c.passed is True, (c.name, c.measured, c.expected, c.details)
        assert c.tolerance and c.justification and c.integrator
    flow_rows = {r["integrator"]: r for r in claims[2].table}
    coarse = flow_rows["gd η = 0.005"]
    assert coarse["IV predicted"] < 0.7 * flow_rows["gf rtol 1e-08"]["IV predicted"]
    assert "not in the flow limit: gd η = 0.005" in claims[2].details  # shown, and said


def test_four_phases_fails_on_a_short_run(flow, short):
    assert wang_ma.check_four_phases(flow).passed is True
    bad = wang_ma.check_four_phases(short)
    assert bad.passed is False and bad.measured.startswith("I → II (no ")
    # outside the setting (the output layer trained): an illustration, named by its run
    trained = simulate(wang_ma.config(t_end=50.0).with_updates(
        {"model.train_output": True, "init.scheme": "gaussian"}))
    ill = wang_ma.check_four_phases(trained)
    assert ill.passed is None and "output layer is trained" in ill.details
    assert ill.name.startswith("wang_ma.four_phases[four_phases, ")


def test_reactivation_fails_on_a_short_run_and_a_large_angle(short):
    bad = wang_ma.check_reactivation(short)
    assert bad.passed is False and "does not reach" in bad.measured
    wide = wang_ma.check_reactivation(simulate(wang_ma.config(45.0)))  # no Phase IV at 45°
    assert wide.passed is False and "does not reach" in wide.measured


ISSUE = dict(angle_deg=22.0, p=3.0, t_end=400.0)
"""δ = 22°, p = 3, seed 11, m = 150: GD at η = 1e-3 starts Phase IV 10 % before the flow. The
flow at gf's default rtol 1e-6, as measured in the report of this case (at rtol 1e-8 gf's
kink floor puts its t_pred 12 % after GD's η → 0 limit on this case: the gf kernel's kink
accuracy, not a property of the flow)."""


def _issue(**kw):
    """The case; GD with the step bound `flow_step` gives its runs (the same configs, so the
    module's runs are shared)."""
    cfg = wang_ma.config(**{**ISSUE, **kw}).with_updates(
        {"seed": 11, "model.width": 150, "integrator.rtol": 1e-6})
    return wang_ma.gd_at(cfg, kw["lr"]) if kw.get("method") == "gd" else cfg


@pytest.fixture(scope="module")
def issue_flow():
    return simulate(_issue())


def test_reactivation_is_measured_on_the_neurons_not_the_sliding_test(issue_flow):
    """The visible departure (cos∠(w_j, x₊) > 0.01, read from W) comes after the predicted
    time, by the lag the leaving speed gives; the phase detector's sliding test starts Phase
    IV within a frame of the prediction (it reads the same inequality), the neurons do not."""
    r = wang_ma.reactivation(issue_flow)
    assert r.t_pred is not None and r.t_visible is not None and r.t_visible_pred is not None
    assert r.n_held > 0 and r.lag is not None and r.lag > 0.1 * r.t_pred
    assert abs(r.t_visible - r.t_visible_pred) <= wang_ma.REACT_TOL * r.t_visible_pred
    det = wang_ma.phase_starts(issue_flow)[0]["Phase IV"]
    assert abs(det - r.t_pred) <= 0.05 * r.t_pred < r.t_visible - r.t_pred
    W = issue_flow.W_at(issue_flow.frame_at(r.t_visible) - 1)
    xp = issue_flow.directions["x₊ signal"]
    cos = W[r.neuron] @ xp / np.linalg.norm(W[r.neuron]) / np.linalg.norm(xp)
    assert cos <= wang_ma.DEPART_COS  # still on the kink one frame before
    c = wang_ma.check_reactivation(issue_flow)
    assert c.passed is True and "lag" in c.details and "Why a lag" in c.details
    # a threshold the neurons never reach within the run: the claim fails
    assert wang_ma.check_reactivation(issue_flow, theta=0.5).passed is False


def test_reactivation_holds_under_small_step_gd(issue_flow):
    """GD at two steps of its flow limit: the claim passes on each, and the two visible
    departures agree (and with the flow's)."""
    got = []
    for lr in (6.25e-4, 3.125e-4):
        gd = simulate(_issue(method="gd", lr=lr))
        c = wang_ma.check_reactivation(gd)
        assert c.passed is True, c.details
        got.append(wang_ma.reactivation(gd).t_visible)
    assert abs(got[0] / got[1] - 1) <= 1e-3
    assert abs(got[0] / wang_ma.reactivation(issue_flow).t_visible - 1) <= wang_ma.FLOW_TOL


@pytest.mark.heavy
def test_flow_limit_derives_the_step_from_the_run(issue_flow):
    """On this case GD at η = 1e-3 is not in the flow limit (Phase IV 10 % early): the derived
    step is below it and agrees with gf; a run function that changes p fails the claim."""
    gd1 = simulate(_issue(method="gd", lr=1e-3))
    t_f, t_g = wang_ma.flow_times(issue_flow), wang_ma.flow_times(gd1)
    assert t_g["IV predicted"] < (1 - 0.08) * t_f["IV predicted"]
    eta, runs = wang_ma.flow_step(issue_flow, simulate)
    assert eta is not None and eta < 1e-3 and len(runs) >= 3
    ok = wang_ma.check_flow_limit(issue_flow, simulate)
    assert ok.passed is True and ok.measured <= wang_ma.FLOW_TOL
    assert f"derived flow-limit step η = {eta:g}" in ok.details

    def wrong(cfg):  # the GD runs of another class weight
        return simulate(cfg.with_updates({"data.p": 4.0}))

    assert wang_ma.check_flow_limit(issue_flow, wrong).passed is False


def test_sweep_fails_when_the_runs_are_too_short(flow):
    good = [wang_ma.sweep_row(flow), wang_ma.sweep_row(simulate(wang_ma.config(10.0)))]
    assert wang_ma.check_sweep(good, 2000.0).passed is True
    short = [wang_ma.sweep_row(simulate(wang_ma.config(a, t_end=300.0))) for a in (10.0, 17.19)]
    bad = wang_ma.check_sweep(short, 300.0)
    assert bad.passed is False and bad.measured == "0 of 2 settings"


def test_annotation_draws_the_predicted_marker_beside_the_detected_phase(flow):
    from dynamics.analysis import analyse

    an = analyse(flow)
    (mk,) = [m for m in an.markers if m.name == "Phase IV (predicted)"]
    iv = next(p for p in an.phases if p.name == "Phase IV")
    assert mk.source == "predicted" and abs(mk.time - iv.start) <= 0.1 * mk.time
    assert all(name in wang_ma.PAPER.text for name, _rule in phases.WANG_MA_RULES)


@pytest.mark.heavy
def test_phase_times_builtin_sweep_is_small_and_consistent(tmp_path):
    """The quick phase-time sweep: 12 gf runs; where Phase IV is detected it sits at the
    predicted time, and it is detected wherever it is predicted."""
    from dynamics import sweeps as sw
    from dynamics.service import Service

    spec = sw.builtin_sweep("phase_times", quick=True)
    assert spec.n_points() <= 12
    df = sw.run_sweep_serial(spec, service=Service(cache_dir=tmp_path)).frame
    assert set(df["status"]) == {"completed"}
    det, pred = df["t_phase_IV"].to_numpy(float), df["t_phase_IV_pred"].to_numpy(float)
    assert np.array_equal(np.isfinite(det), np.isfinite(pred))
    ok = np.isfinite(det)
    assert ok.sum() >= 6 and np.all(np.abs(det[ok] - pred[ok]) <= 0.1 * pred[ok])


def _with(upd):
    """A claim's `run` with its runs moved to `upd`'s integrator; the GD ladder of the
    flow-limit claim (`flow_step`: configs already GD, each at its own step and step bound)
    runs as it is, since its step is what that claim derives."""
    def run(cfg):
        if cfg.integrator.method == "gd":
            return simulate(cfg)
        if upd["integrator.method"] == "gd":
            return simulate(wang_ma.gd_at(cfg, upd["integrator.lr"]))
        return simulate(cfg.with_updates(upd))
    return run


def test_integrator_independence_quick():
    """The per-run checks on the flow and on GD at two steps in its flow limit: same
    verdicts."""
    verdicts = []
    for kw in ({}, {"method": "gd", "lr": 6.25e-4}, {"method": "gd", "lr": 3.125e-4}):
        tr = simulate(_issue(**kw))
        verdicts.append((wang_ma.check_four_phases(tr).verdict,
                         wang_ma.check_reactivation(tr).verdict))
    assert verdicts == [("pass", "pass")] * 3


@pytest.mark.slow
def test_integrator_independence_all_claims():
    """Every claim with all its runs under gf, GD η = 1.25e-3 and GD η = 3e-4."""
    got = {}
    for name, upd in (("gf", {"integrator.method": "gf"}),
                      ("gd 1.25e-3", {"integrator.method": "gd", "integrator.lr": 1.25e-3}),
                      ("gd 3e-4", {"integrator.method": "gd", "integrator.lr": 3e-4})):
        got[name] = [c.verdict for c in wang_ma.claims(True, _with(upd))]
    assert got["gf"] == got["gd 1.25e-3"] == got["gd 3e-4"] == ["pass"] * 4, got


def test_knobs_set_angle_and_std():
    assert wang_ma.PAPER.knob_updates({"angle": 30, "std": "1e-4"}) == {
        "data.angle_deg": 30.0, "init.scale": 1e-4}


def test_preset_is_the_papers_setting():
    wm = wang_ma.presets(True)["four_phases"]
    assert wm.init.scheme == "fixed_output" and not wm.model.train_output
    assert wm.loss.kind == "exponential" and wm.init.output_norm == "sqrt_m"


def test_wang_ma_four_phases_in_order_quick():
    tr = simulate(wang_ma.config(t_end=1000.0))
    ph, counts, summary = phases.wang_ma_phases(tr)
    assert summary == "I → II → III → IV"
    starts = [p.start for p in ph]
    assert starts == sorted(starts)
    # the counts the reviewers describe: positives leave x₋, negatives return to x₊
    assert counts["pos_on_minus"][-1] < counts["pos_on_minus"].max()
    assert counts["neg_on_plus"][-1] > counts["neg_on_plus"].min()
