"""Kunin et al. (2024): the exact single neuron against scipy, the conserved δ_j under gf and
GD, the upstream/downstream ordering on new seeds under gf and GD at two small steps, each claim
failing on a deliberately wrong run, and gated outside the setting."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.papers import kunin
from dynamics.simulate import simulate

NEW_SEEDS = range(100, 108)


@functools.cache
def _run(cfg: Config):
    return simulate(cfg)


def test_riccati_solution_against_scipy():
    for u0, s, d, lw, la in ((0.3, 1.0, 0.5, 2.0, 0.5), (2.0, 0.7, -1.0, 1.0, 1.0),
                             (-0.2, 1.3, 0.0, 0.5, 3.0)):
        t = np.linspace(0, 8, 50)
        def rhs(_t, u, s=s, d=d, lw=lw, la=la):
            return lw * s * s - d * u - la * u * u

        sol = solve_ivp(rhs, (0, 8), [u0], t_eval=t, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(kunin.riccati(t, u0, s, d, lw, la), sol.y[0], rtol=1e-8)


@pytest.mark.parametrize(("integ", "seeds"), [
    ({}, NEW_SEEDS[:4]), pytest.param({}, NEW_SEEDS, marks=pytest.mark.slow),
    ({"method": "gd", "lr": 0.01}, NEW_SEEDS[:2]),
    pytest.param({"method": "gd", "lr": 0.005}, NEW_SEEDS[:2], marks=pytest.mark.slow)])
def test_upstream_is_rich_sooner_and_downstream_lazy_on_new_seeds(integ, seeds):
    """Eight new seeds under gf (four in the fast loop), two under GD at 0.01 and 0.005."""
    for s in seeds:
        runs = [_run(kunin.config(d, seed=s, **integ)) for d in (1.0, 0.0, -1.0)]
        c = kunin.rich_claim(*runs)
        assert c.passed is True, (s, c.measured)
        assert kunin.conservation_claim(runs[0]).passed is True


def test_rich_claim_fails_on_a_start_that_is_not_downstream():
    """δ = −0.05 is barely unbalanced: its kernel moves (0.15) — not lazy, the claim fails."""
    runs = [_run(kunin.config(d, seed=100)) for d in (1.0, 0.0, -0.05)]
    assert kunin.rich_claim(*runs).passed is False


@pytest.mark.parametrize("integ", [{}, {"method": "gd", "lr": 0.02},
                                   {"method": "gd", "lr": 0.01}])
def test_single_neuron_follows_the_exact_solution(integ):
    c = kunin.single_neuron_claim(_run(kunin.single_config(lr_w=2.0, lr_a=0.5, **integ)))
    assert c.passed is True, c.measured
    c0 = kunin.single_neuron_claim(_run(kunin.single_config(0.0, **integ)))
    assert c0.passed is True, c0.measured


def test_single_neuron_fails_on_a_coarse_flow_and_is_gated_off_whitened_data():
    coarse = _run(kunin.single_config(lr_w=2.0, lr_a=0.5, **{"integrator.rtol": 1e-3}))
    assert kunin.single_neuron_claim(coarse).passed is False
    skew = _run(kunin.single_config(**{"data.points": [[1.5, 0.0], [0.3, 1.4]]}))
    c = kunin.single_neuron_claim(skew)
    assert c.passed is None and "not whitened" in c.details


def test_conservation_fails_when_a_layer_rate_is_ignored():
    """δ computed with the wrong rates (a run with η_w = 2 read as if η_w = 1) drifts."""
    tr = _run(kunin.config(1.0, seed=100, **{"integrator.lr_w": 2.0}))
    assert kunin.conservation_claim(tr).passed is True
    wrong = tr.config.with_updates({"integrator.lr_w": 1.0})
    tr2 = type(tr)(**{**tr.__dict__, "config": wrong})
    assert kunin.conservation_claim(tr2).passed is False


def test_outside_the_setting_and_the_page():
    leaky = _run(kunin.config(1.0, **{"model.gamma": 0.2}))
    assert kunin.conservation_claim(leaky).passed is None
    bal = _run(Config.from_dict({"model": {"width": 10}, "integrator": {"t_end": 5.0},
                                 "record": {"frames": 5}}))
    assert not kunin.applies_to(bal.config) and kunin.PAPER.run_claims(bal) == []
    tr = _run(kunin.presets(True)["downstream"])
    an = analyse(tr)
    assert any(p.name == "lazy" for p in an.phases)
    up = _run(kunin.presets(True)["upstream"])
    assert any(m.name == "kernel half way" for m in analyse(up).markers)
    assert kunin.regime_figure(up) is not None
    assert kunin.single_figure(_run(kunin.presets(True)["single_neuron"])) is not None
    from dynamics.sweeps import summarise
    got = summarise(up, record=("kunin_kernel_distance", "kunin_test_loss"))
    assert got["kunin_kernel_distance"] > 0 and got["kunin_test_loss"] < 0.01
