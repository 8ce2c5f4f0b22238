"""Boursier, Pillaud-Vivien & Flammarion (2022): the theory against independent references,
every claim passing on the presets under gf and GD at two small steps, failing on a
deliberately wrong run, and gated outside the paper's setting."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import linprog

from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.papers import bpf
from dynamics.simulate import simulate


@functools.cache
def _run(cfg: Config):
    return simulate(cfg)


def _preset(name: str = "orthogonal_4", **upd):
    cfg = bpf.presets(True)[name]
    return _run(cfg.with_updates(upd) if upd else cfg)


CLAIMS = (bpf.alignment_claim, bpf.saddle_claim, bpf.limit_claim)


# ----------------------------------------------------------------------------- the theory
def test_min_variation_norm_matches_an_independent_linear_program():
    """(D4) against scipy's linprog: the smallest Σ|c_i| with Σ c_i σ(⟨u_i, x_k⟩) = y_k over a
    dictionary of unit ReLU neurons is V* when β̂± are in the dictionary, and no smaller than
    V* over 3000 random directions (a lower bound holds for any interpolator)."""
    tr = _preset()
    g = bpf.groups(tr)
    X, y = tr.X, tr.y
    rng = np.random.default_rng(0)
    U = rng.standard_normal((3000, X.shape[1]))
    U /= np.linalg.norm(U, axis=1, keepdims=True)

    def lp(dirs: np.ndarray) -> float:
        A = np.maximum(dirs @ X.T, 0.0).T  # (n, k)
        res = linprog(np.ones(2 * len(dirs)), A_eq=np.hstack([A, -A]), b_eq=y,
                      bounds=(0, None), method="highs")
        assert res.status == 0
        return float(res.fun)

    with_opt = np.vstack([U, g.beta_plus / np.linalg.norm(g.beta_plus),
                          g.beta_minus / np.linalg.norm(g.beta_minus)])
    assert lp(with_opt) == pytest.approx(g.V_min, rel=1e-9)
    assert lp(U) >= g.V_min * (1 - 1e-9)
    assert g.V_min == pytest.approx(bpf.NUMBERS["min_variation_norm_4"].value, rel=1e-12)
    # h* interpolates
    assert bpf.min_norm_function(tr, X) == pytest.approx(y, abs=1e-12)


def test_closed_form_deactivations_match_scipy_on_the_linear_flow():
    """(D2) in closed form against solve_ivp on dz_k/dt = c a b_k‖x_k‖² 1[z_k > 0],
    da/dt = c Σ_k b_k σ(z_k) with terminal events at z_k = 0, for a few neurons."""
    tr = _preset()
    X = tr.X
    b = np.asarray(tr.y) / len(tr.y)  # square loss, mean: b_k = y_k/n
    nx2 = np.einsum("ij,ij->i", X, X)
    W0, a0 = tr.W_at(0), tr.a[0]
    checked = 0
    for j in range(8):
        segs = bpf.linear_segments(W0[j], a0[j], X, b, 1.0, 60.0)
        z, a, t0 = X @ W0[j], float(a0[j]), 0.0
        for s_prev, s_next in itertools.pairwise(segs):
            act = z > 0

            def rhs(_t, u, act=act):
                zz, aa = u[:-1], u[-1]
                return np.r_[aa * b * nx2 * act, (b * np.maximum(zz, 0) * act).sum()]

            events = []
            for k in np.flatnonzero(act):
                def ev(_t, u, k=k):
                    return u[k]
                ev.terminal, ev.direction = True, -1  # type: ignore[attr-defined]
                events.append(ev)
            sol = solve_ivp(rhs, (0, 60.0), np.r_[z, a], events=events, rtol=1e-11,
                            atol=1e-24)
            hit = [(te[0], k) for te, k in zip(sol.t_events, np.flatnonzero(act),
                                                 strict=True) if te.size]
            assert hit, (j, s_prev.t0)
            tau, k = min(hit)
            assert t0 + tau == pytest.approx(s_next.t0, rel=1e-6)
            assert not s_next.active[k] and s_prev.active[k]
            z, a = sol.y[:-1, -1].copy(), float(sol.y[-1, -1])
            z[k] = 0.0
            t0 += tau
            checked += 1
    assert checked >= 4


def test_growth_rates_and_levels_follow_from_the_data():
    g = bpf.groups(_preset())
    # r_g = ‖Σ_{k∈g} y_k x_k‖/n for the square loss (mean) and c = 1
    assert g.r_plus == pytest.approx(np.hypot(1.0, 0.7 * 0.8) / 4)
    assert g.r_minus == pytest.approx(np.hypot(0.6 * 1.2, 0.4 * 0.9) / 4)
    assert g.fast == 1 and g.L_mid == pytest.approx((0.36 + 0.16) / 8)
    assert g.L0 == pytest.approx((1 + 0.49 + 0.36 + 0.16) / 8)


# ----------------------------------------------------------------------------- claims
INTEGRATORS = {"gf": {}, "gd 0.02": {"integrator.method": "gd", "integrator.lr": 0.02},
               "gd 0.01": {"integrator.method": "gd", "integrator.lr": 0.01}}


@pytest.mark.parametrize("preset", list(bpf.presets(True)))
@pytest.mark.parametrize("integ", list(INTEGRATORS))
def test_every_claim_holds_under_gf_and_small_step_gd(preset, integ):
    tr = _preset(preset, **INTEGRATORS[integ])
    for claim in CLAIMS:
        c = claim(tr)
        assert c.passed is True, (c.name, c.measured, c.expected, c.details)
        assert c.tolerance and c.justification and c.integrator.startswith(integ.split()[0])
        assert c.name.startswith(claim(tr).name.split("[")[0] + f"[{preset}")


def test_the_paper_claims_on_its_presets_pass():
    cl = bpf.claims(True, _run)
    assert len(cl) == 6 and all(c.passed is True for c in cl), [(c.name, c.passed) for c in cl]
    assert {c.name for c in cl} >= {"bpf.alignment[orthogonal_4]",
                                    "bpf.saddle_to_saddle[orthogonal_6_generated]",
                                    "bpf.limit[orthogonal_4]"}


def test_each_claim_fails_on_a_deliberately_wrong_run():
    """λ = 1e-3 is still a small start (max |h(0)| = 3e-5) but too large for the picture:
    two neurons are still on the other sign's points when the loss moves, the saddle sits
    30 % above L_mid, the limit is 4 % above V*. GD with η = 0.5 (far from the flow) breaks
    the saddle claim."""
    big = _preset(**{"init.scale": 1e-3})
    for claim in CLAIMS:
        c = claim(big)
        assert c.passed is False, (c.name, c.measured)
    assert "100 of 102" in bpf.alignment_claim(big).measured
    coarse = _preset(**{"integrator.method": "gd", "integrator.lr": 0.5})
    assert bpf.saddle_claim(coarse).passed is False


@pytest.mark.parametrize(("upd", "why"), [
    ({"model.gamma": 0.1}, "γ = 0.1"),
    ({"init.scheme": "gaussian"}, "not balanced"),
    ({"init.scale": 0.1}, "not a small start"),
])
def test_claims_are_illustrations_outside_the_setting(upd, why):
    tr = _preset(**upd)
    for claim in CLAIMS:
        c = claim(tr)
        assert c.passed is None and why in c.details, (c.name, c.details)
        assert c.name.split("[")[1].startswith("orthogonal_4, ")


def test_not_orthogonal_inputs_leave_the_paper_out():
    pts = [list(p) for p in bpf.POINTS_4]
    pts[0][1] = 0.3  # tilt the first input: ⟨x₁, x₂⟩ ≠ 0
    cfg = bpf.config(**{"data.points": pts})
    assert not bpf.applies_to(cfg) and bpf.applies_to(bpf.config())
    tr = _run(cfg)
    assert bpf.PAPER.run_claims(tr) == []
    c = bpf.limit_claim(tr)
    assert c.passed is None and "not orthogonal" in c.details


# ----------------------------------------------------------------------------- the page
def test_overlay_figures_and_summary():
    tr = _preset()
    an = analyse(tr)
    names = {d.name for d in an.directions}
    assert {"β₊", "β₋"} <= names
    (sad,) = [p for p in an.phases if p.name.startswith("saddle")]
    g = bpf.groups(tr)
    esc = bpf.escape_times(tr)
    assert esc["positive"][0] < sad.start < sad.end < esc["negative"][0]
    assert sad.plain and "L_mid" in sad.evidence
    assert any("V* =" in n for n in an.notes_of("bpf"))
    fig = bpf.saddle_figure(tr)
    assert fig is not None and g.L_mid in [s.value for s in fig.series()
                                            if type(s).__name__ == "Rule"]
    nf = bpf.norm_figure(tr)
    assert nf is not None and nf.series()[0].y[-1] == pytest.approx(g.V_min, rel=0.01)
    from dynamics.sweeps import summarise

    assert summarise(tr, record=("bpf_norm_excess",))["bpf_norm_excess"] == pytest.approx(
        bpf.variation_norm(tr) / g.V_min - 1)


def test_builtin_sweep_shows_the_excess_vanishing_as_the_scale_shrinks(tmp_path):
    """The quick built-in sweep (5 scales × 2 seeds, serial, own cache): the variation-norm
    excess falls with λ and is below 1 % at the smallest."""
    from dynamics import sweeps as sw
    from dynamics.service import Service

    spec = sw.builtin_sweep("bpf_norm_vs_scale", quick=True)
    df = sw.run_sweep_serial(spec, service=Service(cache_dir=tmp_path)).frame
    assert set(df["status"]) == {"completed"} and len(df) == 10
    med = df.groupby("init.scale")["bpf_norm_excess"].median().sort_index()
    assert med.iloc[0] < 0.01 < med.iloc[-1] and med.is_monotonic_increasing
