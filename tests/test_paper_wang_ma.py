"""Wang & Ma: every claim passes on the preset, fails on a deliberately wrong run, and gives
the same verdict under the flow and GD at small steps."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics import papers, phases
from dynamics.papers import wang_ma
from dynamics.simulate import simulate


@pytest.fixture(scope="module")
def flow():
    return simulate(wang_ma.config())


@pytest.fixture(scope="module")
def short():
    """A run too short for Phases III and IV (t_end = 300)."""
    return simulate(wang_ma.config(t_end=300.0))


def test_claims_fast_pass_with_fields_filled():
    claims = papers.check_claims("wang_ma", fast=True)
    assert [c.name for c in claims] == ["wang_ma.four_phases", "wang_ma.reactivation",
                                        "wang_ma.flow_limit", "wang_ma.sweep"]
    for c in claims:
        assert c.passed is True, (c.name, c.measured, c.expected, c.details)
        assert c.tolerance and c.justification and c.integrator
    flow_rows = {r["integrator"]: r for r in claims[2].table}
    coarse = flow_rows["gd η = 0.005"]
    assert coarse["Phase IV start"] < 0.7 * flow_rows["gf rtol 1e-06"]["Phase IV start"]
    assert "gd η = 0.005 differs" in claims[2].details  # shown beside the flow, and said


def test_four_phases_fails_on_a_short_run(flow, short):
    assert wang_ma.check_four_phases(flow).passed is True
    bad = wang_ma.check_four_phases(short)
    assert bad.passed is False and bad.measured.startswith("I → II (no ")


def test_reactivation_fails_on_a_short_run_and_a_large_angle(short):
    assert wang_ma.check_reactivation(short).passed is False
    wide = wang_ma.check_reactivation(simulate(wang_ma.config(45.0)))  # no Phase IV at 45°
    assert wide.passed is False and wide.measured is None


def test_flow_limit_fails_for_a_wrong_class_weight(flow):
    fine = simulate(wang_ma.config(method="gd", lr=1.25e-3))
    ok = wang_ma.check_flow_limit([("gf", flow), ("gd η = 1.25e-3", fine)])
    assert ok.passed is True and ok.measured <= 0.1
    wrong = simulate(wang_ma.config(method="gd", lr=1.25e-3, p=4.0))
    bad = wang_ma.check_flow_limit([("gf", flow), ("gd η = 1.25e-3, p = 4", wrong)])
    assert bad.passed is False


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
    return lambda cfg: simulate(cfg.with_updates(upd))


def test_integrator_independence_fast():
    """The preset's own checks on the flow and on GD at two small steps: same verdicts."""
    verdicts = []
    for upd in ({}, {"integrator.method": "gd", "integrator.lr": 1.25e-3},
                {"integrator.method": "gd", "integrator.lr": 6.25e-4}):
        tr = _with(upd)(wang_ma.config(t_end=1000.0))
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
