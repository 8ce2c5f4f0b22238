"""Dana, Bach & Pillaud-Vivien (2025) and the 2026 follow-up: the exact coverage probability
against an independent Monte Carlo, each claim holding on new seeds under gf and GD at small
steps, failing on a deliberately wrong run, and gated outside the paper's setting."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.papers import dana
from dynamics.simulate import simulate

NEW_SEEDS = range(100, 110)  # seeds no preset uses


@functools.cache
def _run(cfg: Config):
    return simulate(cfg)


def test_coverage_probability_against_a_monte_carlo_and_the_union_bound():
    """(D2) against direct draws of the signs and activations (fair, independent coins), and
    the union bound and width rule of the authors' code."""
    rng = np.random.default_rng(0)
    for n_plus, n_minus, p in ((3, 5, 6), (4, 4, 10), (1, 0, 2)):
        draws = 40_000
        s = rng.choice([-1, 1], size=(draws, p))
        act = rng.random((draws, p, n_plus + n_minus)) < 0.5
        sign = np.r_[np.ones(n_plus), -np.ones(n_minus)]
        cov = ((s[:, :, None] * sign[None, None, :] > 0) & act).any(axis=1).all(axis=1)
        exact = dana.coverage_probability(n_plus, n_minus, p)
        assert abs(cov.mean() - exact) <= 4 * math.sqrt(exact * (1 - exact) / draws) + 1e-9
        assert exact >= dana.union_bound(n_plus + n_minus, p) - 1e-12
    assert dana.width_rule(1300, 0.05) == dana.NUMBERS["width_rule_1300"].value == 36
    assert 1300 * 0.75 ** 36 <= 0.05 < 1300 * 0.75 ** 35


def _coverage(seed: int, **upd):
    cfg = dana.presets(True)["coverage"].with_updates({"seed": seed, "record.frames": 20, **upd})
    return _run(cfg)


INTEGRATORS = {"gf": {}, "gd 0.05": {"integrator.method": "gd", "integrator.lr": 0.05},
               "gd 0.025": {"integrator.method": "gd", "integrator.lr": 0.025}}


@pytest.mark.parametrize("integ", list(INTEGRATORS))
def test_coverage_decides_convergence_on_new_seeds(integ):
    runs = [_coverage(s, **INTEGRATORS[integ]) for s in NEW_SEEDS]
    c = dana.coverage_claim(runs)
    assert c.passed is True, (c.measured, c.table)
    assert c.integrator.startswith(integ.split()[0])


def test_probability_claim_on_new_starts_and_its_failure():
    base = dana.presets(True)["coverage"].with_updates({"seed": 500})
    runs = [_coverage(s) for s in NEW_SEEDS]
    c = dana.probability_claim(base, 2000, runs)
    assert c.passed is True, (c.measured, c.expected)
    # a deliberately wrong run: GD with a step far too large does not interpolate although
    # its start covers every point
    coarse = [_coverage(s, **{"integrator.method": "gd", "integrator.lr": 8.0})
              for s in NEW_SEEDS]
    assert any(dana.start_covers(t) and not dana.interpolates(t) for t in coarse)
    assert dana.probability_claim(base, 200, coarse).passed is False
    assert dana.coverage_claim(coarse).passed is False
    # mirrored pairs break the independence the formula needs: an illustration
    assert dana.probability_claim(base.with_updates({"init.mirror": True}), 50).passed is None


def _jumps(scale: float, seed: int = 1, **upd):
    return _run(dana.incremental_config(scale, seed=seed, frames=150, **upd))


@pytest.mark.parametrize(("seed", "upd"), [(1, {}), (2, {}), (4, {}),
                                           (2, {"integrator.method": "gd",
                                                "integrator.lr": 0.2})])
def test_exits_scale_with_log_one_over_lambda(seed, upd):
    c = dana.jump_claim(_jumps(1e-30, seed, **upd), _jumps(1e-60, seed, **upd))
    assert c.passed is True, (c.measured, c.table, c.details)


def test_jumps_fail_from_a_large_start():
    """λ = 1e-2 vs 1e-4: the O(1) part of the exits is no longer small against T ln(1/λ)."""
    big = _jumps(1e-2, 1, **{"integrator.t_end": 400.0})
    less = _jumps(1e-4, 1, **{"integrator.t_end": 600.0})
    c = dana.jump_claim(big, less)
    assert c.passed is False, (c.measured, c.table)


@pytest.mark.parametrize(("upd", "why"), [({"model.gamma": 0.1}, "γ = 0.1"),
                                          ({"loss.kind": "logistic"}, "")])
def test_outside_the_setting_is_an_illustration(upd, why):
    if "loss.kind" in upd:  # real labels: the logistic loss is refused outright
        with pytest.raises(Exception, match="labels ±1"):
            _coverage(0, **upd)
        return
    tr = _coverage(0, **upd)
    (c,) = dana.claims_for_run(tr)
    assert c.passed is None and why in c.details
    bal = _coverage(0, **{"init.scheme": "balanced"})
    assert not dana.applies_to(bal.config) and dana.PAPER.run_claims(bal) == []


def test_overlay_figure_and_summaries():
    tr = _jumps(1e-30)
    an = analyse(tr)
    names = [m.name for m in an.markers]
    assert sum("switches on" in n for n in names) == 3
    assert any("covered at t = 0" in n for n in an.notes_of("dana"))
    fig = dana.exits_figure(tr)
    assert fig is not None and len(fig.panels) == 2
    from dynamics.sweeps import summarise

    got = summarise(tr, record=("dana_interpolates", "dana_covered", "dana_norm_ratio"))
    assert got["dana_interpolates"] == 1.0 == got["dana_covered"]
    assert got["dana_norm_ratio"] >= 1.0  # no interpolator is below the minimal norm


def _check_success_frame(df):
    assert set(df["status"]) == {"completed"} and len(df) == 32
    assert (df["dana_interpolates"] == df["dana_covered"]).all()
    for n, part in df.groupby("data.n"):
        freq = part.groupby("model.width")["dana_interpolates"].mean().sort_index()
        assert freq.iloc[-1] > freq.iloc[0], (n, freq)


def test_builtin_success_sweep_follows_the_coverage(tmp_path):
    """The quick built-in sweep over (n, width, seed) on the sweep engine (serial, own
    cache): every point interpolates iff its start covers every point, and the success rate
    rises with the width at each n."""
    from dynamics import sweeps as sw
    from dynamics.service import Service

    spec = sw.builtin_sweep("dana_success_vs_width", quick=True)
    _check_success_frame(sw.run_sweep_serial(spec, service=Service(cache_dir=tmp_path)).frame)


@pytest.mark.slow
def test_builtin_success_sweep_on_a_dask_cluster():
    """The same study on a Dask LocalCluster of two worker processes (the Sweeps page's
    engine): the same rows."""
    from dynamics import sweeps as sw

    client = sw.default_clusters().local(2)
    try:
        res = sw.run_sweep(sw.builtin_sweep("dana_success_vs_width", quick=True),
                           client=client)
        assert res.n_workers == 2
        _check_success_frame(res.frame)
    finally:
        sw.default_clusters().close()
