"""The paper registry: one interface, discovered modules, and everything the pages, the sweeps
and the analysis take from it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dynamics import papers, phases
from dynamics.config import Config
from dynamics.papers import PAPERS, Paper
from dynamics.simulate import simulate


def test_registry_discovers_the_four_papers_in_order():
    assert list(PAPERS) == ["min", "chistikov", "boursier", "wang_ma"]
    assert all(isinstance(p, Paper) and p.key == k for k, p in PAPERS.items())
    orders = [p.order for p in PAPERS.values()]
    assert orders == sorted(orders)
    with pytest.raises(ValueError, match="choose from min, chistikov"):
        papers.get_paper("nobody")


@pytest.mark.parametrize("key", list(PAPERS))
def test_every_paper_fills_the_interface(key):
    p = PAPERS[key]
    assert p.title and p.short and p.text and p.numbers
    for fast in (True, False):
        pre = p.presets(fast)
        assert pre and all(isinstance(c, Config) for c in pre.values())
    for sc in p.showcases:  # the Overview's buttons open existing presets
        assert sc.preset in p.presets(True)
    for k in p.knobs:  # the default widget value gives a valid run
        cfg = next(iter(p.presets(True).values()))
        cfg.with_updates(p.knob_updates({k.key: k.default}))
    fig = p.report_figure(True)
    assert isinstance(fig.config, Config) and fig.panel_title
    for c in p.comparisons.values():
        assert isinstance(c.a, Config) and isinstance(c.b, Config) and c.a != c.b
    for b in p.builtin_sweeps:
        assert b.build(True)["axes"]


def test_knobs_keep_the_preset_or_set_a_field():
    mn = PAPERS["min"]
    assert mn.knob_updates({"eps": "preset", "width": 0, "gamma": -0.5}) == {}
    assert mn.knob_updates({"eps": "1e-4", "width": 30, "gamma": 0.1}) == {
        "init.scale": 1e-4, "model.width": 30, "model.gamma": 0.1}
    ch = PAPERS["chistikov"]
    assert ch.knob_updates({"log4_lambda": -4, "seed": 3}) == {"init.scale": 4.0**-4,
                                                              "seed": 3}
    wm = PAPERS["wang_ma"]
    assert wm.knob_updates({"angle": 30, "std": "1e-4"}) == {"data.angle_deg": 30.0,
                                                             "init.scale": 1e-4}


def test_builtin_sweeps_come_from_the_papers():
    from dynamics import sweeps

    owners = {b.name: k for k, p in PAPERS.items() for b in p.builtin_sweeps}
    assert list(sweeps.BUILTINS) == list(owners)
    assert owners["trap_probability"] == "boursier" and owners["alignment_vs_mu"] == "min"


def _toy_run() -> object:
    toy = Config().with_updates({"model.width": 20, "record.frames": 30})
    return simulate(toy)


def test_one_cone_time_rule_for_claims_and_sweeps():
    """`phases.cone_time` is "from this frame to the end, every neuron dead or in its cone";
    the sweep summary t_cone is the same number (NaN for None)."""
    from dynamics.sweeps import summarise

    tr = _toy_run()
    ok = phases.cone_frames(tr)
    t_c = phases.cone_time(tr)
    assert ok[-1] and t_c is not None
    k = int(np.searchsorted(tr.t, t_c))
    assert ok[k:].all() and (k == 0 or not ok[k - 1])
    assert summarise(tr, record=("t_cone",))["t_cone"] == t_c
    # a frame that passes but is followed by one that fails does not count
    assert not ok[0]


def test_cone_time_uses_the_full_w_when_no_activation_pattern():
    """Without a recorded activation pattern the rule reads ⟨w_j, x_i⟩ > 0 from the full W
    (same answer); with neither, no frame can be confirmed."""
    tr = _toy_run()
    assert tr.active is not None
    expect = phases.cone_time(tr)
    assert phases.cone_time(dataclasses.replace(tr, active=None)) == expect
    none = dataclasses.replace(tr, active=None, W=tr.W[:0], W_frames=tr.W_frames[:0])
    assert phases.cone_time(none) is None


def test_analysis_takes_each_papers_annotations():
    from dynamics.analysis import analyse

    tr = simulate(PAPERS["boursier"].presets(True)["three_point_balanced"].with_updates(
        {"integrator.t_end": 300.0, "model.width": 40}))
    an = analyse(tr)
    assert any(p.name == "OLS plateau" for p in an.phases)
    assert any(d.name == "OLS direction" for d in an.directions)
    toy = analyse(_toy_run())
    names = [d.name for d in toy.directions]
    assert names.index("x₊") < names.index("x₋")
    # the default run has the square loss: Min et al.'s theorem does not apply, a note says so
    assert not any(m.name == "Min et al. T bound" for m in toy.markers)
    assert any(n.startswith("Min et al.") and "square" in n for n in toy.notes)
    # their toy preset (exponential loss, balanced, μ > 0, ReLU) gets the T bound
    mn = analyse(simulate(PAPERS["min"].presets(True)["toy_2d_alpha1e-6"]))
    assert any(m.name == "Min et al. T bound" and m.source == "predicted" for m in mn.markers)
