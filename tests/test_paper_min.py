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
    assert mn.cone_claim("toy_2d", _toy()).passed is True
    short = _toy(**{"integrator.t_end": 0.5, "record.t_first": 1e-4})  # stopped mid-turn
    c = mn.cone_claim("toy_2d", short)
    assert c.passed is False and c.justification and c.integrator == "gf rtol 1e-07"


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
    assert "2.444" in c.measured and "0.7196" in c.measured
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
    assert mn.first_layer_only_claim(first, both).passed is False


def test_no_claim_that_cannot_fail():
    """The 2-D stable-rank check is gone from the claims; on a 2-D run the per-run check is an
    illustration (not counted)."""
    names = {c.name for c in mn.claims(True, _run)}
    assert not any(n.startswith("min.stable_rank") for n in names)
    assert "min.digits.stable_rank" in names
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
    return {m.name: m for m in an.markers}, [n for n in an.notes if n.startswith("Min et al.")]


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


def test_verdicts_agree_between_gf_and_gd_at_two_step_sizes():
    """gf (rtol 1e-7) and GD at η = 2e-3 (the paper's) and 1e-3: the same verdicts, and the
    cone time within one frame (the claims read it on the same frame grid)."""
    verdicts = {}
    for name, run in {"gf": _with("gf"), "gd 2e-3": _with("gd", 2e-3),
                      "gd 1e-3": _with("gd", 1e-3)}.items():
        claims = mn.claims(True, run)
        verdicts[name] = {c.name: c.verdict for c in claims}
        assert all(name.split()[0] in c.integrator for c in claims), name
    assert verdicts["gf"] == verdicts["gd 2e-3"] == verdicts["gd 1e-3"]
    assert set(verdicts["gf"].values()) == {"pass"}
