"""Min, Mallada & Vidal: every claim can fail (a deliberately wrong run fails it), the theory
markers appear only where the theorem's assumptions hold (with the run's own ε in the hover),
and the verdicts do not depend on the integrator."""

from __future__ import annotations

import functools

import pytest

from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.papers import min as mn
from dynamics.simulate import simulate


@functools.cache
def _run(cfg: Config):
    return simulate(cfg)


def _toy(scale: float = 1e-20, **updates):
    return _run(mn.toy_config(scale, **updates))


def _digits(first_layer_only: bool = False, **updates):
    cfg = mn.digits_config(True, first_layer_only=first_layer_only)
    return _run(cfg.with_updates(updates) if updates else cfg)


# ----------------------------------------------------------------------------- each claim fails
def test_cone_claim_passes_and_fails_on_an_unfinished_run():
    c = mn.cone_claim(_toy())
    assert c.passed is True and c.name == "min.cones[toy_2d]"
    short = _toy(**{"integrator.t_end": 0.5, "record.t_first": 1e-4})  # stopped mid-turn
    c = mn.cone_claim(short)
    assert c.passed is False and c.justification and c.integrator == "gf rtol 1e-07"
    assert c.name == "min.cones[toy_2d, integrator.t_end = 0.5, record.t_first = 0.0001]"


def test_time_claim_fails_when_T_is_shorter_than_the_alignment():
    assert mn.time_claim(_toy()).passed is True
    # the paper's α = 1e-6: T = 0.72 < t_cones = 2.44, so "t_cones ≤ T" is a fail
    c = mn.time_claim(_toy(1e-6))
    assert c.passed is False and "0.7196" in c.expected


def test_time_outside_claim_is_pass_fail():
    """At α = 1e-6 the claim is 'T is exceeded and t_cones is the ε-free one': it fails when
    T is not exceeded (ε = 1e-20 given as the α = 1e-6 run) and when the alignment clock is
    different (data at half the radius: the directional flow runs at half the speed)."""
    c = mn.time_outside_claim(_toy(1e-6), _toy())
    assert c.passed is True and c.verdict == "pass"
    assert "2.433" in c.measured and "0.7196" in c.measured
    assert mn.time_outside_claim(_toy(), _toy()).passed is False
    slow = _toy(1e-6, **{"data.radii": [0.5, 0.4, 0.5, 0.45]})
    assert mn.time_outside_claim(slow, _toy()).passed is False


def test_digits_alignment_fails_without_a_small_start():
    assert mn.digits_alignment_claim(_digits()).passed is True
    big = _digits(**{"init.scale": 0.3})  # no alignment phase: the loss falls at once
    assert mn.digits_alignment_claim(big).passed is False


def test_digits_stable_rank_can_fail():
    """On the 64-dimensional digits the start has stable rank ≈ 16, so a run that has not
    trained fails the claim (on 2-D data it could not: W is m × 2)."""
    c = mn.digits_stable_rank_claim(_digits())
    assert c.passed is True and c.measured.startswith("15.9")
    early = _digits(**{"integrator.t_end": 0.02})
    assert mn.digits_stable_rank_claim(early).passed is False


def test_first_layer_only_claim_fails_when_the_runs_are_swapped():
    both, first = _digits(), _digits(first_layer_only=True)
    assert mn.first_layer_only_claim(both, first).passed is True
    # a large start trains both layers without two phases: the claim fails
    assert mn.first_layer_only_claim(_digits(**{"init.scale": 0.1}), first).passed is False
    # swapped runs break the claim's setting: an illustration, not a verdict
    swapped = mn.first_layer_only_claim(first, both)
    assert swapped.passed is None and "reference run does not train both" in swapped.details


def test_no_claim_that_cannot_fail():
    """The 2-D stable-rank check is gone from the claims; on a 2-D run the per-run check is an
    illustration (not counted)."""
    names = {c.name for c in mn.claims(True, _run)}
    assert not any(n.startswith("min.stable_rank") for n in names)
    assert "min.digits.stable_rank[digits_0v1]" in names
    rows = {c.name: c for c in mn.claims_for_run(_toy(1e-6))}
    assert rows["this run: stable rank"].passed is None
    assert rows["this run: stable rank"].verdict == "illustration"
    assert rows["this run: cones"].passed is True


def test_every_claim_has_all_fields():
    for c in mn.claims(True, _run):
        assert c.passed is not None, c.name
        assert c.measured != "" and c.expected != "" and c.tolerance, c.name
        assert c.justification and c.integrator, c.name


# ----------------------------------------------------------------------------- theory markers
def _markers(tr):
    an = analyse(tr)
    return {m.name: m for m in an.markers}, list(an.notes_of("min"))


def test_markers_only_where_the_theorem_applies():
    marks, notes = _markers(_toy(1e-6))
    assert "Min et al. T bound" in marks and "Min et al. cones reached" in marks and not notes
    # square loss (the Explorer's default run) and leaky ReLU: no marker, a note saying why
    marks, notes = _markers(_run(Config().with_updates({"model.width": 20,
                                                        "record.frames": 30})))
    assert "Min et al. T bound" not in marks and "square" in notes[0]
    marks, notes = _markers(_toy(1e-6, **{"model.gamma": 0.5}))
    assert "Min et al. T bound" not in marks and "γ = 0.5" in notes[0]
    marks, notes = _markers(_digits())  # centred digits: not μ-separable, Gaussian start
    assert "Min et al. T bound" not in marks
    assert "separable" in notes[0] and "balanced" in notes[0]
    marks, notes = _markers(_toy(0.5))  # ε condition of Lemma 1 fails
    assert "Min et al. T bound" not in marks and "ε condition" in notes[0]


@pytest.mark.parametrize("scale,norm", [(1e-6, "none"), (1e-3, "sqrt_m")])
def test_hover_quotes_the_runs_epsilon(scale, norm):
    """The hover gives ε as the figure's title does (config.init.scale), then the paper's
    normalisation σ₀√D, and the T it draws."""
    tr = _toy(scale, **{"init.normalisation": norm})
    m = _markers(tr)[0]["Min et al. T bound"]
    assert f"ε = {tr.config.init.scale:g} (" in m.note
    mb = mn.bound_for(tr)
    assert f"σ₀√D = {mb.epsilon:.3g}" in m.note and f"{mb.T_ours:.4g}" in m.note
    assert m.time == pytest.approx(mb.T_ours)


# ----------------------------------------------------------------------------- integrators
def _with(method: str, lr: float | None = None):
    def run(cfg: Config):
        up: dict[str, object] = {"integrator.method": method}
        if lr is not None:
            up["integrator.lr"] = lr
        else:
            up["integrator.rtol"] = 1e-7
        return _run(cfg.with_updates(up))

    return run


@pytest.mark.heavy
def test_verdicts_agree_between_gf_and_gd_at_two_step_sizes():
    """gf (rtol 1e-7) and GD at η = 2e-3 (the paper's) and 1e-3: the same verdicts, and the
    cone time within one frame (the claims read it on the same frame grid)."""
    verdicts = {}
    for name, run in {"gf": _with("gf"), "gd 2e-3": _with("gd", 2e-3),
                      "gd 1e-3": _with("gd", 1e-3)}.items():
        claims = mn.claims(True, run)
        verdicts[name] = [(c.name.split("[")[0], c.verdict) for c in claims]
        assert all(name.split()[0] in c.integrator for c in claims), name
    assert verdicts["gf"] == verdicts["gd 2e-3"] == verdicts["gd 1e-3"]
    assert {v for _n, v in verdicts["gf"]} == {"pass"}


# ----------------------------------------------------------------------------- registry parts
def test_knobs_show_the_preset_and_set_a_field():
    """The knobs start at the preset's own values (no "0: preset" sentinels): those change
    nothing, other values set their field."""
    from dynamics.papers import PAPERS

    p = PAPERS["min"]
    pre = p.presets(True)["toy_2d"]
    shown = {k.key: k.shown(pre) for k in p.knobs}
    assert shown == {"eps": 1e-20, "width": 50, "gamma": 0.0}
    assert p.knob_updates(shown, pre) == {}
    assert p.knob_updates({"eps": 1e-4, "width": 30, "gamma": 0.1}, pre) == {
        "init.scale": 1e-4, "model.width": 30, "model.gamma": 0.1}
    assert 1e-20 in p.knobs[0].choices(pre)


def _default_toy():
    return simulate(Config().with_updates({"model.width": 20, "record.frames": 30}))


def test_one_cone_time_rule_for_claims_and_sweeps():
    """`phases.cone_time` is "from this frame to the end, every neuron dead or in its cone";
    the sweep summary t_cone (Min et al.'s) is the same number (NaN for None)."""
    import numpy as np

    from dynamics import phases
    from dynamics.sweeps import summarise

    tr = _default_toy()
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
    import dataclasses

    from dynamics import phases

    tr = _default_toy()
    assert tr.active is not None
    expect = phases.cone_time(tr)
    assert phases.cone_time(dataclasses.replace(tr, active=None)) == expect
    none = dataclasses.replace(tr, active=None, W=tr.W[:0], W_frames=tr.W_frames[:0])
    assert phases.cone_time(none) is None


def test_analysis_draws_the_bound_only_inside_the_theorem():
    toy = analyse(_default_toy())
    names = [d.name for d in toy.directions]
    assert names.index("x₊") < names.index("x₋")
    # the default run has the square loss: the theorem does not apply, a note says so
    assert not any(m.name == "Min et al. T bound" for m in toy.markers)
    assert any("square" in n for n in toy.notes_of("min"))
    # their toy preset (exponential loss, balanced, μ > 0, ReLU) gets the T bound
    an = analyse(simulate(mn.presets(True)["toy_2d_alpha1e-6"]))
    assert any(m.name == "Min et al. T bound" and m.source == "predicted" for m in an.markers)


def test_min_claims_quick():
    from dynamics import papers

    calls = []

    def run(cfg):  # the service can be plugged in; here a counting wrapper around simulate
        calls.append(cfg.cache_key())
        return simulate(cfg)

    claims = papers.check_claims("min", quick=True, run=run)
    assert len(calls) >= 4
    failed = [c.name for c in claims if c.passed is False]
    assert not failed, failed
    names = {c.name for c in claims}
    assert {"min.cones[toy_2d]", "min.time[toy_2d]", "min.time[toy_2d_alpha1e-6]",
            "min.digits.alignment[digits_0v1]", "min.digits.stable_rank[digits_0v1]",
            "min.first_layer_only[digits_first_layer_only]"} <= names
    # every Min claim is counted (pass/fail), none "shown"
    assert all(c.passed is not None for c in claims)


def test_claims_for_run_checks_the_current_run():
    """The Papers page's quick checks come from the library: a toy run ends in its cones."""
    from dynamics import papers

    toy = Config().with_updates({"model.width": 20, "record.frames": 30, "loss.kind":
                                 "exponential", "loss.reduction": "sum"})
    checks = {c.name: c for c in papers.claims_for_run(simulate(toy), "min")}
    assert checks["this run: cones"].passed
    # 2-D inputs: the stable rank cannot exceed 2, so the row is an illustration
    assert checks["this run: stable rank"].verdict == "illustration"


def test_time_claim_gates_its_hypotheses_and_names_the_run():
    """Outside Theorem 1's checkable assumptions (leaky γ = 0.2, a Gaussian start) the time
    claim is an illustration naming the failing assumption, labelled with the run it got —
    never a pass, never `min.time[toy_2d]`."""
    for upd, why in (({"model.gamma": 0.2}, "γ = 0.2"),
                     ({"init.scheme": "gaussian"}, "not balanced")):
        c = mn.time_claim(_toy(**upd))
        assert c.passed is None and c.verdict == "illustration", upd
        assert why in c.details and c.name != "min.time[toy_2d]"
        key, value = next(iter(upd.items()))
        assert c.name.startswith("min.time[toy_2d, ") and f"{key} = {value}" in c.name
    # the cone claim is gated the same way
    assert mn.cone_claim(_toy(**{"model.gamma": 0.2})).passed is None
