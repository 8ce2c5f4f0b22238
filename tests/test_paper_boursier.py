"""Boursier & Flammarion: the trap criterion (a stationary point on the least-squares line,
decided from the dynamics at the plateau), the trap sweep against long runs, and every claim
failing on a deliberately wrong run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dynamics import theory
from dynamics.data import build_dataset
from dynamics.papers import boursier
from dynamics.simulate import simulate


@pytest.fixture(scope="module")
def fit():
    return theory.ols_fit(boursier.config())


@pytest.fixture(scope="module")
def trapped():
    return simulate(boursier.config("balanced", 0, 600.0, 200))


@pytest.fixture(scope="module")
def leaky():
    return simulate(boursier.config("leaky", 0, 600.0, 200))


def test_trap_state_reads_the_dynamics_at_the_plateau(trapped):
    st = boursier.trap_state(trapped)
    assert st.trapped is True and st.at_level and st.escapers == 0
    # put one neuron with a usable norm in the {x₁}-only sector (active on x₁ = −0.75 only):
    # G_r > 0 there, so a positive neuron grows — not a stationary point any more
    f = trapped.n_frames - 1
    k = int(np.flatnonzero(trapped.W_frames == f)[0])
    W = trapped.W.copy()
    a = trapped.a.copy()
    w = np.array([-1.0, -0.6])  # ⟨w, (x, 1)⟩ > 0 only for x < −0.6
    W[k, 0] = 1e-6 * w
    a[f, 0] = 1e-6 * np.linalg.norm(w)
    moved = dataclasses.replace(trapped, W=W, a=a)
    st2 = boursier.trap_state(moved)
    assert st2.trapped is False and st2.escapers == 1 and st2.rate > 0
    # the same neuron on the decaying mode (negative, balanced) shrinks: still trapped
    a[f, 0] = -a[f, 0]
    assert boursier.trap_state(dataclasses.replace(trapped, W=W, a=a)).trapped is True


# the quick sweep's points whose "trapped" verdict is least clear-cut, and a control of each kind
_POINTS = [({"init.scale": 1e-3, "init.scheme": "balanced", "model.gamma": 0.05}, 0),
           ({"init.scale": 1e-3, "init.scheme": "gaussian", "model.gamma": 0.0}, 0),
           ({"init.scale": 1e-3, "init.scheme": "gaussian", "model.gamma": 0.0}, 1),
           ({"init.scale": 1e-3, "init.scheme": "balanced", "model.gamma": 0.0}, 0),
           ({"init.scale": 1.0, "init.scheme": "balanced", "model.gamma": 0.0}, 0)]


@pytest.mark.parametrize("values,seed", _POINTS)
def test_quick_trap_sweep_points_agree_with_long_runs(values, seed):
    """Each point's "trapped" (quick settings, t = 600) equals what a run 8× longer does: a
    trapped point is still on the OLS line at t = 5000 under the flow (and stationary there);
    an escaped one has left it."""
    from dynamics import sweeps as sw

    spec = sw.builtin_sweep("trap_probability", quick=True)
    cfg = spec.base.with_updates({**values, "seed": seed})
    row = sw.summarise(simulate(cfg), record=("trapped", "ols_loss", "final_loss"))
    long = simulate(cfg.with_updates({"integrator.method": "gf", "integrator.t_end": 5000.0}))
    st = boursier.trap_state(long)
    assert row["trapped"] == st.trapped == st.at_level, (row, st)


def test_leaky_network_can_sit_exactly_at_the_ols_point():
    """γ = 0.05, width 50: every neuron ends active on all points or on none — both linear —
    so the normal equations make it exactly stationary: trapped, and still there 8× later."""
    from dynamics import sweeps as sw

    cfg = sw.builtin_sweep("trap_probability", quick=True).base.with_updates(
        {"init.scale": 1e-3, "model.gamma": 0.05, "seed": 0})
    tr = simulate(cfg.with_updates({"integrator.t_end": 5000.0}))
    assert boursier.trap_state(tr).trapped is True
    assert np.ptp(tr.loss[tr.frame_at(600.0):]) <= 1e-12


def test_trap_headline_agrees_with_the_criterion():
    claim = boursier.PAPER.builtin_sweeps[0].claim
    assert "leaky" in claim and "stationary" in claim and "escape" in claim


# ----------------------------------------------------------------------------- claims
def test_trap_claim_shows_loss_beside_loss(trapped, leaky, fit):
    c = boursier.check_trap([trapped], fit)
    assert c.passed is True and c.expected == pytest.approx(fit.loss)
    assert abs(c.measured - c.expected) <= 1e-3 and "gap" in c.details
    assert c.justification and c.integrator == "gd η = 0.002"
    assert c.name == "boursier.trap[three_point_balanced]"
    # a large start (inside the trap's hypotheses: ReLU, balanced) escapes: the claim fails
    large = simulate(boursier.config("balanced", 0, 600.0, 200).with_updates(
        {"init.scale": 1.0}))
    bad = boursier.check_trap([trapped, large], fit)
    assert bad.passed is False and "×2 seeds" in bad.name
    # a leaky run is outside the trap's hypotheses: an illustration naming γ, never a verdict
    ill = boursier.check_trap([trapped, leaky], fit)
    assert ill.passed is None and "γ = 0.05" in ill.details


def test_escape_claims_fail_on_a_trapped_run(trapped, leaky, fit):
    assert boursier.check_escape("leaky", [leaky], fit).passed is True
    # stopped before the escape (their t ≈ 100–135 = our 200–270): still at the OLS loss
    early = simulate(boursier.config("leaky", 0, 150.0, 200))
    bad = boursier.check_escape("leaky", [early], fit)
    assert bad.passed is False and bad.measured == pytest.approx(fit.loss, abs=1e-3)
    short = simulate(boursier.config("large_init", 0, 20.0, 200))  # a run too short
    assert boursier.check_escape("large_init", [short], fit).passed is False
    # the trapped ReLU run has no leak: outside the claim, an illustration
    assert boursier.check_escape("leaky", [trapped], fit).passed is None


def test_extremal_and_ols_claims_fail_on_other_data():
    cfg = boursier.config()
    ds = build_dataset(cfg)
    assert boursier.check_extremal(theory.extremal_for_config(cfg, ds)).passed is True
    assert boursier.check_ols(theory.ols_fit(cfg, ds)).passed is True
    # other labels (middle point far above the outer ones): the fit dips below zero and G
    # has a different critical-point structure
    ds2 = build_dataset(cfg.with_updates({"data.y": [0.1, 2.0, -0.5]}))
    assert boursier.check_ols(theory.ols_fit(cfg, ds2)).passed is False
    ex2 = theory.extremal_vectors(ds2.X, theory.field_weights(ds2.y, ds2.sw, "square", "mean"))
    assert boursier.check_extremal(ex2).passed is False


def test_integrator_independence_quick(fit):
    """Trap and leaky escape (m = 200, seed 0) under gf and GD at two steps: same verdicts."""
    verdicts = []
    for upd in ({"integrator.method": "gf"}, {"integrator.lr": 2e-3}, {"integrator.lr": 1e-3}):
        tr = simulate(boursier.config("balanced", 0, 600.0, 200).with_updates(upd))
        lk = simulate(boursier.config("leaky", 0, 600.0, 200).with_updates(upd))
        verdicts.append((boursier.check_trap([tr], fit).verdict,
                         boursier.check_escape("leaky", [lk], fit).verdict))
    assert verdicts == [("pass", "pass")] * 3


@pytest.mark.slow
def test_integrator_independence_all_claims():
    from dynamics.papers import check_claims

    got = {}
    for name, upd in (("gf", {"integrator.method": "gf"}), ("gd 2e-3", {}),
                      ("gd 1e-3", {"integrator.lr": 1e-3})):
        got[name] = [c.verdict for c in check_claims(
            "boursier", True, lambda cfg, u=upd: simulate(cfg.with_updates(u)))]
    assert got["gf"] == got["gd 2e-3"] == got["gd 1e-3"] == ["pass"] * 6, got


def test_analysis_shows_the_ols_plateau_and_direction():
    from dynamics.analysis import analyse

    tr = simulate(boursier.presets(True)["three_point_balanced"].with_updates(
        {"integrator.t_end": 300.0, "model.width": 40}))
    an = analyse(tr)
    assert any(p.name == "OLS plateau" for p in an.phases)
    assert any(d.name == "OLS direction" for d in an.directions)
    # the paper's own tolerance reaches its overlay, and only its overlay: with a level
    # tolerance above L(0) − L_OLS the "plateau" starts at t = 0
    start = next(p.start for p in an.phases if p.name == "OLS plateau")
    loose = analyse(tr, tolerances={"boursier": {"ols": 0.5}})
    assert start > 0 and next(p.start for p in loose.phases if p.name == "OLS plateau") == 0
    assert [p for p in loose.phases if "OLS" not in p.name] == \
        [p for p in an.phases if "OLS" not in p.name]


def test_trap_sweep_is_owned_by_the_paper():
    from dynamics import sweeps

    assert sweeps.BUILTINS["trap_probability"].paper.startswith("Boursier")
    assert {"trapped", "ols_loss"} <= {s.name for s in boursier.PAPER.summaries}


def test_boursier_trap_and_leaky_escape_quick():
    """One seed each at m = 200 (3 s each): the balanced ReLU run sits at the computed OLS loss;
    the leaky one leaves it. The OLS loss is computed, never typed."""
    cfg = boursier.config("balanced", 0, 600.0, 200)
    L_ols = theory.ols_fit(cfg).loss
    tr = simulate(cfg)
    assert abs(tr.loss[-1] - L_ols) <= 1e-3  # the claim's tolerance (TOLERANCES: 1e-3)
    # it sits there: over the last third of the run (their t 200–300) the loss moves by
    # ≤ 1e-9 (reference runs: unchanged to 1e-16 up to their t = 2000)
    f = tr.frame_at(400.0)
    assert np.ptp(tr.loss[f:]) <= 1e-9
    trl = simulate(boursier.config("leaky", 0, 600.0, 200))
    assert trl.loss[-1] <= 1e-4


def test_claims_for_run_checks_the_current_run():
    """The Papers page's quick check: a balanced ReLU three-point run ends trapped at the
    computed least-squares loss."""
    from dynamics import papers
    from dynamics.config import Config

    tp = Config().with_updates({"data.kind": "three_point", "model.width": 40,
                                "integrator.t_end": 60.0, "record.frames": 30})
    (claim,) = papers.claims_for_run(simulate(tp), "boursier")
    assert claim.details == "trapped at the least-squares fit"
    assert abs(claim.measured - theory.ols_fit(tp).loss) <= 1e-3
