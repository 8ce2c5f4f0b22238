"""Min, Mallada & Vidal: every claim can fail (a deliberately wrong run fails it), the theory
markers appear only where the theorem's assumptions hold (with the run's own ε in the hover),
the verdicts do not depend on the integrator, and on new data sets from the toy's generator
every claim passes or says which hypothesis of Theorem 1 the run breaks."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from dynamics import phases
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
    assert mn.cone_claim(_flipped(_toy())).passed is False  # the wrong labels
    # too large a start (ε = 1e-3, inside Lemma 1's condition): the norms grow before the
    # turning is over — outside eq. (28), an illustration saying so, never a FAIL
    c = mn.cone_claim(_toy(1e-3))
    assert c.passed is None and "eq. (28)'s second term" in c.details


def _flipped(tr):
    """The wrong data: the run read with every label flipped (μ, X and T unchanged; S₊ and
    S₋ trade places)."""
    return dataclasses.replace(tr, y=-np.asarray(tr.y))


def test_time_claim_is_gated_by_eq28_and_fails_on_wrong_runs():
    """ε = 1e-20 on the toy: T = 2.734 ≥ t₁* = 2.357 (the ε-free flow's alignment), the
    claim is judged and passes. The paper's α = 1e-6: T = 0.72 < t₁*, eq. (28)'s second term
    fails — an illustration naming it, not a FAIL. Stopped mid-turn and the wrong labels
    FAIL."""
    c = mn.time_claim(_toy())
    assert c.passed is True and "2.357" in c.details
    c = mn.time_claim(_toy(1e-6))
    assert c.passed is None and "0.7196" in c.expected
    assert "eq. (28)'s second term" in c.details and "init scale ≤" in c.details
    short = _toy(**{"integrator.t_end": 0.5, "record.t_first": 1e-4})
    assert mn.time_claim(short).passed is False
    assert not mn.theorem_failures(_flipped(_toy()))
    assert mn.time_claim(_flipped(_toy())).passed is False


def test_time_outside_claim_is_pass_fail():
    """At α = 1e-6 the claim is 'T is exceeded and t_cones is the ε-free one', within one
    frame interval of the two runs' grids: it fails when the alignment clock is different
    (data at half the radius: the directional flow runs at half the speed); given a run that
    meets eq. (28) (ε = 1e-20 as the α = 1e-6 run) it is not its case: an illustration."""
    c = mn.time_outside_claim(_toy(1e-6), _toy())
    assert c.passed is True and c.verdict == "pass"
    assert "2.433" in c.measured and "0.7196" in c.measured
    assert "one frame interval (6.1 %)" in c.tolerance
    # the ε = 1e-20 run meets eq. (28): T bounds it — not this claim's case
    c = mn.time_outside_claim(_toy(), _toy())
    assert c.passed is None and "meets eq. (28)'s second term" in c.details
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
    rows = {c.name: c for c in mn.claims_for_run(_toy())}
    assert rows["this run: stable rank"].passed is None
    assert rows["this run: stable rank"].verdict == "illustration"
    assert rows["this run: cones"].passed is True


def _counted_or_outside_eq28(claims):
    """Every claim is counted, except the paper's α = 1e-6 read against Theorem 1's cones:
    that start is above eq. (28) (an illustration saying so; its alignment clock is checked
    by min.time[toy_2d_alpha1e-6])."""
    for c in claims:
        if c.name == "min.cones[toy_2d_alpha1e-6]":
            assert c.passed is None and "eq. (28)'s second term" in c.details, c.details
        else:
            assert c.passed is not None, c.name


def test_every_claim_has_all_fields():
    claims = mn.claims(True, _run)
    _counted_or_outside_eq28(claims)
    for c in claims:
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
    assert {v for _n, v in verdicts["gf"]} == {"pass", "illustration"}
    assert [n for n, v in verdicts["gf"] if v == "illustration"] == ["min.cones"]


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
    # every Min claim is counted (pass/fail) but the one outside eq. (28)
    _counted_or_outside_eq28(claims)


def test_claims_for_run_checks_the_current_run():
    """The Papers page's quick checks come from the library: a toy run from a start inside
    eq. (28) ends in its cones; from the default start (above it) the check says so."""
    from dynamics import papers

    toy = Config().with_updates({"model.width": 20, "record.frames": 30, "loss.kind":
                                 "exponential", "loss.reduction": "sum"})
    checks = {c.name: c for c in papers.claims_for_run(simulate(toy), "min")}
    assert checks["this run: cones"].passed is None
    assert "eq. (28)'s second term" in checks["this run: cones"].details
    tiny = toy.with_updates({"init.scale": 1e-30})
    checks = {c.name: c for c in papers.claims_for_run(simulate(tiny), "min")}
    assert checks["this run: cones"].passed is True
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


# ----------------------------------------------------------------------------- new draws
def draw(k: int, scale: float = 1e-20, **upd) -> Config:
    """New data sets from the toy's generator that no tolerance was set on: n = 4–8 points in
    R² (2–4 per class) with every y_i x_i within an arc of 20–80° around a random direction
    (so μ > 0: Assumption 1), radii 0.5–1.5, seeds 101–108; the toy preset otherwise (m = 50,
    exponential loss summed, balanced start, gf to t = 120)."""
    rng = np.random.default_rng(4000 + k)
    npos, nneg = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    centre, spread = float(rng.uniform(0, 360)), float(rng.uniform(20, 80))
    z = centre + rng.uniform(-spread / 2, spread / 2, npos + nneg)
    pos = np.arange(npos + nneg) < npos
    cfg = mn.toy_config(scale, **{
        "data.angles_deg": [round(float(a), 3) for a in np.where(pos, z, z + 180.0) % 360],
        "data.radii": [round(float(r), 3) for r in rng.uniform(0.5, 1.5, npos + nneg)],
        "data.labels": np.where(pos, 1.0, -1.0).tolist(), "seed": 101 + k})
    return cfg.with_updates(upd) if upd else cfg


DRAWS = range(8)
TINY = 1e-100  # inside eq. (28)'s sharp form on every draw: T ≥ 4.7 > t₁* ≤ 3.04


def _theorem_claims(tr):
    return [mn.cone_claim(tr), mn.time_claim(tr),
            *[c for c in mn.claims_for_run(tr) if c.name == "this run: cones"]]


@pytest.mark.parametrize("k", DRAWS)
def test_claims_on_new_draws_pass_or_name_eq28(k):
    """ε = 1e-20 (the toy's): T ≥ t₁* on draws 3 and 4 — every claim passes; T < t₁* on the
    six others — eq. (28)'s second term fails and every claim says so (before: min.time
    FAILed there, passing on 2 of 8). The ε-free flow predicts each run's alignment: t_cones
    is the first frame at or after t₁*."""
    tr = _run(draw(k))
    assert not mn.assumption_failures(tr)
    t1s, why = mn.epsilon_free_alignment(tr)
    assert not why
    t_c = phases.cone_time(tr)
    assert t_c is not None and t1s <= t_c <= t1s * (1 + mn.frame_step(tr, t1s))
    inside = mn.bound_for(tr).T_ours >= t1s
    assert inside == (k in (3, 4))
    for c in _theorem_claims(tr):
        if inside:
            assert c.passed is True, (c.name, c.measured, c.expected, c.details)
        else:
            assert c.passed is None and "eq. (28)'s second term" in c.details, c.details


@pytest.mark.parametrize("k", DRAWS)
def test_claims_hold_on_new_draws_inside_eq28(k):
    """The same data from ε = 1e-100, inside eq. (28)'s sharp form: every claim passes."""
    tr = _run(draw(k, TINY))
    assert not mn.theorem_failures(tr)
    for c in _theorem_claims(tr):
        assert c.passed is True, (c.name, c.measured, c.expected, c.details)


@pytest.mark.parametrize("k", DRAWS)
def test_alignment_clock_is_epsilon_free_on_new_draws(k):
    """The paper's α = 1e-6, above eq. (28) on every draw: the cones come at the ε-free time
    (the ε = 1e-100 run's, within one frame) and after T."""
    c = mn.time_outside_claim(_run(draw(k, 1e-6)), _run(draw(k, TINY)))
    assert c.passed is True, (c.measured, c.expected, c.details)


def _gd(cfg: Config, lr: float) -> Config:
    """GD at step lr to t = 20 (past every draw's t₁* ≤ 3.04; the claims need no more)."""
    return cfg.with_updates({"integrator.method": "gd", "integrator.lr": lr,
                             "integrator.t_end": 20.0})


@pytest.mark.parametrize("k", [1, 5])
def test_claims_hold_on_new_draws_under_small_step_gd(k):
    """GD at the paper's η = 2e-3 on the two draws with the latest and the most crowded
    alignment (t₁* = 3.03 with n = 6; n = 8)."""
    for c in _theorem_claims(_run(_gd(draw(k, TINY), 2e-3))):
        assert c.passed is True, (c.name, c.measured, c.details)


@pytest.mark.slow
@pytest.mark.parametrize("lr", [2e-3, 1e-3])
@pytest.mark.parametrize("k", DRAWS)
def test_claims_hold_on_every_new_draw_under_gd(k, lr):
    assert [c.verdict for c in _theorem_claims(_run(_gd(draw(k, TINY), lr)))] == ["pass"] * 3


def test_each_claim_fails_on_a_deliberately_wrong_new_draw():
    """On a new draw inside eq. (28): stopped at t = 0.5 (before t₁* = 1.36) and read with
    the labels flipped, the cone and time claims FAIL; from too large a start (ε = 1e-3,
    inside Lemma 1's condition) they are illustrations naming eq. (28), never a FAIL."""
    short = _run(draw(0, TINY, **{"integrator.t_end": 0.5, "record.t_first": 1e-4}))
    wrong = _flipped(_run(draw(0, TINY)))
    for claim in (mn.cone_claim, mn.time_claim):
        assert claim(short).passed is False, claim.__name__
        assert claim(wrong).passed is False, claim.__name__
        big = claim(_run(draw(0, 1e-3)))
        assert big.passed is None and "eq. (28)'s second term" in big.details
