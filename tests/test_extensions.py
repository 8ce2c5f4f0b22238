"""The model extensions the papers of Dana et al., Kunin et al., Tsoy & Konstantinov, Luo et al.
and Boursier & Flammarion (2025) need: the output power c·m^(−p), per-layer rates (gf and gd),
the (τ, δ), exp-margin, power-law and mirrored initialisations, the new data (skew-XOR, a ReLU
teacher, a noisy linear teacher, 1-D formulas) and the regime metrics — each against an
independent reference, with the defaults leaving every earlier configuration as it was."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dynamics import metrics, theory
from dynamics.config import Config, ConfigError, from_query
from dynamics.data import build_dataset, held_out
from dynamics.init import init_weights, tau_delta_norms
from dynamics.kernels import GDStepper, GFStepper, Problem, loss_grad
from dynamics.readouts import regime_curves
from dynamics.simulate import simulate

DEFAULT_KEY = "ef1735dbbf3feeb96ba29992f53ef6f8b5e967273c0b9ccaa98bd658674501e7"


def test_earlier_configurations_keep_their_cache_keys():
    """The new fields at their defaults are left out of the key: the default config's key is
    the one it had before them (recorded from the main branch), and moving any new field
    changes it."""
    base = Config()
    assert base.cache_key() == DEFAULT_KEY
    keys = {base.cache_key()}
    for upd in ({"model.output_power": 1.0}, {"integrator.lr_w": 2.0}, {"init.mirror": True},
                {"init.imbalance": 0.5}, {"init.a_power": 1.0}, {"integrator.lr_a": 0.5}):
        keys.add(base.with_updates(upd).cache_key())
    assert len(keys) == 7


@pytest.mark.parametrize("query", [
    {"model.output_power": "1", "init.scheme": "exp_margin", "init.output_value": "0.01"},
    {"init.scheme": "tau_delta", "init.imbalance": "-0.5", "integrator.lr_w": "3",
     "integrator.lr_a": "0.2", "init.mirror": "true"},
    {"init.scheme": "gaussian", "init.a_power": "1.5", "init.w_power": "0.5"},
    {"data.kind": "generated", "data.generator": "skew_xor", "data.n": "40", "data.d": "2",
     "data.angle_deg": "60", "data.noise": "0.05"},
    {"data.kind": "generated", "data.generator": "relu_teacher", "data.teacher_width": "4"},
    {"data.kind": "function", "data.formula": "sin(3*x) + 0.5*sin(6*x)", "data.n": "40",
     "data.x_max": "1.5", "data.spacing": "uniform"},
])
def test_new_fields_travel_in_links(query):
    cfg = from_query(query)
    assert from_query(cfg.to_query()) == cfg
    assert Config.from_json(cfg.to_json()) == cfg


@pytest.mark.parametrize(("upd", "path", "words"), [
    ({"init.mirror": True, "model.width": 7}, "init.mirror", "even"),
    ({"data.kind": "generated", "data.generator": "skew_xor", "data.n": 10}, "data.n",
     "multiple of 4"),
    ({"data.kind": "function", "data.formula": "x.__class__"}, "data.formula", "may not"),
    ({"data.kind": "function", "data.formula": "__import__('os')"}, "data.formula",
     "unknown function"),
    ({"data.kind": "function", "data.formula": "1/x"}, "data.formula", "x = 0"),
    ({"data.kind": "function", "data.x_min": 2.0}, "data.x_max", "larger than x_min"),
    ({"integrator.lr_w": 0.0}, "integrator.lr_w", ""),
    ({"model.output_power": -1.0}, "model.output_power", ""),
])
def test_bad_values_are_named_messages(upd, path, words):
    with pytest.raises(ConfigError) as e:
        Config().with_updates(upd)
    assert any(p == path and words in m for p, m in e.value.errors), e.value.errors


# ----------------------------------------------------------------------------- rates
def _problem(rng, n=6, d=3, lr_w=1.0, lr_a=1.0, c=1.0, gamma=0.0):
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    return Problem(X, y, np.ones(n), gamma, c, "square", "mean", True, lr_w, lr_a)


def test_rates_scale_each_layers_gradient_and_default_to_the_plain_gradient():
    rng = np.random.default_rng(0)
    W, a = rng.standard_normal((5, 3)), rng.standard_normal(5)
    p1 = _problem(np.random.default_rng(1))
    p2 = _problem(np.random.default_rng(1), lr_w=3.0, lr_a=0.25)
    L1, gW1, ga1 = loss_grad(p1, W, a)
    L2, gW2, ga2 = loss_grad(p2, W, a)
    assert L1 == L2
    np.testing.assert_allclose(gW2, 3.0 * gW1, rtol=1e-14)
    np.testing.assert_allclose(ga2, 0.25 * ga1, rtol=1e-14)


def _flow(p, W0, a0, t, rtol=1e-10):
    gf = GFStepper(p, W0, a0, rtol, 1e-14)
    gf.advance(t, 10**7, np.zeros(0))
    return gf.W.copy(), gf.a.copy()


def test_rates_are_the_flow_of_the_rescaled_variables():
    """dθ/dt = −D∇L equals plain gradient flow in u = w/√η_w, v = a/√η_a with output scale
    c√(η_w η_a) (an exact change of variables): the two integrations agree to their tolerance
    (γ = 1: a smooth flow, no kink crossings, whose errors are first order), and gf conserves
    δ_j = η_w a_j² − η_a ‖w_j‖² (Kunin et al.'s conserved quantity) with ReLU too."""
    lw, la = 4.0, 0.3
    p = _problem(np.random.default_rng(3), lr_w=lw, lr_a=la, gamma=1.0)
    rng = np.random.default_rng(4)
    W0, a0 = 0.3 * rng.standard_normal((7, 3)), 0.3 * rng.standard_normal(7)
    W, a = _flow(p, W0, a0, 5.0)
    q = Problem(p.X, p.y, p.sw, 1.0, np.sqrt(lw * la), "square", "mean", True)
    U, v = _flow(q, W0 / np.sqrt(lw), a0 / np.sqrt(la), 5.0)
    np.testing.assert_allclose(W, np.sqrt(lw) * U, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(a, np.sqrt(la) * v, rtol=1e-7, atol=1e-9)
    p = _problem(np.random.default_rng(3), lr_w=lw, lr_a=la)  # ReLU
    W, a = _flow(p, W0, a0, 5.0)
    delta0 = metrics.balance(W0, a0, lw, la)
    # ReLU kinks: steps at the kink floor (0.1·rtol^(1/3) of the rate scale, GD-like) move δ
    # by O(h²) each; 1e-5 of δ bounds them here, while a²−‖w‖² itself moves by O(1)
    assert np.abs(metrics.balance(W, a, lw, la) - delta0).max() <= 1e-5 * np.abs(delta0).max()
    assert np.abs(metrics.balance(W, a) - metrics.balance(W0, a0)).max() > 1e-3  # not a²−‖w‖²


def test_gd_with_rates_steps_each_layer_and_approaches_the_flow():
    lw, la = 2.0, 0.5
    p = _problem(np.random.default_rng(5), lr_w=lw, lr_a=la)
    rng = np.random.default_rng(6)
    W0, a0 = 0.3 * rng.standard_normal((4, 3)), 0.3 * rng.standard_normal(4)
    gd = GDStepper(p, W0, a0, 1e-3)
    gd.take_steps(1, np.zeros(0))
    _, gW, ga = loss_grad(_problem(np.random.default_rng(5)), W0, a0)
    np.testing.assert_allclose(gd.W, W0 - 1e-3 * lw * gW, rtol=1e-13)
    np.testing.assert_allclose(gd.a, a0 - 1e-3 * la * ga, rtol=1e-13)
    Wf, af = _flow(p, W0, a0, 2.0)
    errs = []
    for lr in (4e-3, 2e-3):
        g = GDStepper(p, W0, a0, lr)
        g.take_steps(round(2.0 / lr), np.zeros(0))
        errs.append(np.abs(np.r_[g.W.ravel() - Wf.ravel(), g.a - af]).max())
    assert errs[1] < 0.6 * errs[0] and errs[1] < 1e-2  # first order in η


def test_simulate_reports_the_rates_conserved_quantity():
    cfg = Config.from_dict({"model": {"width": 12}, "init": {"scale": 0.3},
                            "integrator": {"t_end": 20.0, "lr_w": 3.0, "lr_a": 0.5},
                            "record": {"frames": 12}})
    tr = simulate(cfg)
    assert tr.meta["accuracy"]["within_tolerance"], tr.meta
    assert tr.frame_metrics["balance_drift"].max() < 1e-5


# ----------------------------------------------------------------------------- output power
def test_output_power_is_a_factor_m_to_the_minus_p():
    base = {"model": {"width": 20}, "init": {"scale": 0.5}, "integrator": {"t_end": 5.0},
            "record": {"frames": 4}}
    p1 = Config.from_dict({**base, "model": {"width": 20, "output_power": 1.0}})
    assert p1.model.output_scale == pytest.approx(1 / 20, rel=1e-15)
    assert Config().model.output_scale == Config().model.c  # exactly c at p = 0
    c1 = Config.from_dict({**base, "model": {"width": 20, "c": 1 / 20}})
    a, b = simulate(p1), simulate(c1)
    np.testing.assert_allclose(a.loss, b.loss, rtol=1e-9)


# ----------------------------------------------------------------------------- init
def _init(**upd):
    cfg = Config.from_dict({"model": {"width": 400}, "init": upd,
                            "data": {"kind": "generated", "generator": "orthogonal", "n": 3,
                                     "d": 5}})
    return cfg, init_weights(cfg, 5)


def test_exp_margin_start_has_an_exponential_margin():
    _, (W, a) = _init(scheme="exp_margin", scale=0.1, normalisation="none", output_value=0.5)
    margin = np.abs(a) - np.linalg.norm(W, axis=1)
    assert (margin > 0).all()
    assert stats.kstest(margin / 0.5, "expon").pvalue > 1e-3  # Exp(1) × output_value


@pytest.mark.parametrize(("tau", "delta", "lw", "la"), [(0.1, 0.0, 1.0, 1.0),
                                                        (0.1, 1.0, 1.0, 1.0),
                                                        (0.5, -0.7, 2.0, 0.5)])
def test_tau_delta_start_sets_the_product_and_the_imbalance(tau, delta, lw, la):
    cfg = Config.from_dict({"model": {"width": 10},
                            "init": {"scheme": "tau_delta", "scale": tau,
                                     "normalisation": "none", "imbalance": delta},
                            "integrator": {"lr_w": lw, "lr_a": la}})
    W, a = init_weights(cfg, 3)
    nw = np.linalg.norm(W, axis=1)
    np.testing.assert_allclose(np.abs(a) * nw, tau**2, rtol=1e-12)
    np.testing.assert_allclose(lw * a**2 - la * nw**2, delta, atol=1e-12)
    assert tau_delta_norms(1e-3, -1.0) [0] > 0  # no cancellation for δ ≪ −τ²
    # the theory's first-layer std (the Explorer's auto time, the edit panel) is this start's
    assert theory.entry_std(cfg, 3) * 3**0.5 == pytest.approx(nw[0], rel=1e-12)


def test_gaussian_powers_and_the_mirror():
    cfg, (W, a) = _init(scheme="gaussian", scale=1.0, normalisation="none", a_power=1.0,
                        w_power=0.5)
    assert np.std(W) == pytest.approx(400**-0.5, rel=0.06)
    assert theory.entry_std(cfg, W.shape[1]) == pytest.approx(400**-0.5, rel=1e-12)
    assert np.std(a) == pytest.approx(400**-1.0, rel=0.15)
    cfg, (W, a) = _init(scheme="balanced", mirror=True)
    np.testing.assert_array_equal(W[:200], W[200:])
    np.testing.assert_array_equal(a[:200], -a[200:])
    tr = simulate(cfg.with_updates({"integrator.t_end": 1.0, "record.frames": 3}))
    assert tr.loss[0] == pytest.approx(0.5 * np.mean(build_dataset(cfg).y ** 2), rel=1e-12)


# ----------------------------------------------------------------------------- data
def test_skew_xor_blobs_labels_and_truncation():
    cfg = Config.from_dict({"data": {"kind": "generated", "generator": "skew_xor", "n": 400,
                                     "d": 3, "angle_deg": 60.0, "noise": 0.1 / 2**0.5}})
    ds = build_dataset(cfg)
    sigma = 0.1 / np.sqrt(2)
    u = np.array([np.cos(np.pi / 3), np.sin(np.pi / 3), 0.0])
    e1 = np.eye(3)[0]
    centres = np.stack([e1, -e1, u, -u])
    nearest = np.argmin(((ds.X[:, None] - centres[None]) ** 2).sum(-1), axis=1)
    assert np.bincount(nearest).tolist() == [100] * 4
    np.testing.assert_array_equal(ds.y, np.where(nearest < 2, -1.0, 1.0))
    # the reflection keeps the distance to the centre: in-plane offsets below 2√2σ
    off = ds.X - centres[nearest]
    assert np.hypot(off[:, 0], off[:, 1]).max() < 2 * np.sqrt(2) * sigma
    assert np.std(off[:, 2]) == pytest.approx(sigma, rel=0.15)
    assert ds.classification


def test_teachers_and_their_held_out_points():
    rt = Config.from_dict({"data": {"kind": "generated", "generator": "relu_teacher",
                                    "n": 30, "d": 4, "teacher_width": 2}, "seed": 3})
    ds = build_dataset(rt)
    U = np.array([ds.directions["u_1 (teacher)"], ds.directions["u_2 (teacher)"]])
    Xt, yt = held_out(rt, 500)
    fit = np.linalg.lstsq(np.maximum(Xt @ U.T, 0.0), yt, rcond=None)
    assert fit[1][0] < 1e-20 and np.allclose(np.abs(fit[0]), 1.0)  # y = Σ ±σ(⟨u_k, x⟩)
    assert not np.allclose(Xt[:30], ds.X)  # another draw
    lt = Config.from_dict({"data": {"kind": "generated", "generator": "linear_teacher",
                                    "n": 4000, "d": 3, "noise": 0.1}})
    ds = build_dataset(lt)
    beta = np.linalg.lstsq(ds.X, ds.y, rcond=None)[0]
    np.testing.assert_allclose(beta, ds.directions["β* (teacher)"], atol=0.02)
    assert abs(np.std(ds.X) - 1.0) < 0.05 and abs(np.mean(ds.X)) < 0.05


def test_function_data_follow_the_formula():
    cfg = Config.from_dict({"data": {"kind": "function", "n": 9}})
    ds = build_dataset(cfg)
    x = np.linspace(-1, 1, 9)
    r = lambda u: np.maximum(u, 0)  # noqa: E731
    want = -r(x) + r(2 * (x + 0.3)) - r(1.5 * (x - 0.4)) + r(0.5 * (x - 0.8))
    np.testing.assert_allclose(ds.y, want, atol=1e-15)
    np.testing.assert_array_equal(ds.X, np.c_[x, np.ones(9)])
    Xt, yt = held_out(cfg, 50)
    assert Xt.shape == (50, 2) and (np.abs(Xt[:, 0]) <= 1).all()
    r = lambda u: np.maximum(u, 0)  # noqa: E731
    np.testing.assert_allclose(yt, -r(Xt[:, 0]) + r(2 * (Xt[:, 0] + 0.3))
                               - r(1.5 * (Xt[:, 0] - 0.4)) + r(0.5 * (Xt[:, 0] - 0.8)))


# ----------------------------------------------------------------------------- metrics
def test_tangent_kernel_is_the_jacobians_gram():
    """K against the explicit Jacobian of h (finite differences), with rates and γ."""
    rng = np.random.default_rng(0)
    X, W, a = rng.standard_normal((5, 3)), rng.standard_normal((4, 3)), rng.standard_normal(4)
    c, g, lw, la = 0.7, 0.2, 2.0, 0.5

    def h(theta):
        Wt, at = theta[:12].reshape(4, 3), theta[12:]
        Z = X @ Wt.T
        return c * np.where(Z > 0, Z, g * Z) @ at

    th = np.r_[W.ravel(), a]
    eps = 1e-6
    J = np.stack([(h(th + eps * e) - h(th - eps * e)) / (2 * eps) for e in np.eye(16)], 1)
    D = np.r_[np.full(12, lw), np.full(4, la)]
    np.testing.assert_allclose(metrics.tangent_kernel(W, a, X, c, g, lw, la),
                               (J * D) @ J.T, rtol=1e-6)


def test_regime_metrics():
    rng = np.random.default_rng(1)
    K = rng.standard_normal((4, 4))
    K = K @ K.T
    assert metrics.kernel_distance(K, 3.0 * K) == pytest.approx(0.0, abs=1e-15)
    assert metrics.kernel_distance(np.eye(2), np.diag([0.0, 1.0])) == pytest.approx(
        1 - 1 / np.sqrt(2))
    W0 = np.array([[1.0, 0.0], [0.0, 1.0]])
    X = np.array([[1.0, 0.1], [-1.0, 0.2]])
    assert metrics.pattern_change(W0, -W0, X) == 1.0 and metrics.pattern_change(W0, W0, X) == 0
    assert metrics.relative_distance(W0, 3 * W0) == pytest.approx(2.0)
    ax = np.array([[1.0, 0], [-1, 0], [0, 1], [0, -1]])
    Wr = np.array([[np.cos(0.1), np.sin(0.1)], [0.0, -2.0], [1e-9, 0.0]])
    np.testing.assert_allclose(metrics.axis_angles(Wr, ax), [np.degrees(0.1), 0, 0])
    assert metrics.axis_deviation(Wr, ax, 100.0) == pytest.approx(np.degrees(0.1))
    assert metrics.axis_deviation(Wr, ax, 100.0, min_share=0.5) == pytest.approx(0.0)


def test_regime_curves_of_a_run_start_at_zero():
    cfg = Config.from_dict({"model": {"width": 10}, "init": {"scale": 0.5},
                            "integrator": {"t_end": 30.0}, "record": {"frames": 8}})
    r = regime_curves(simulate(cfg))
    assert len(r["t"]) == 8 and r["t"][0] == 0.0
    for k in ("kernel_distance", "pattern_change", "relative_distance"):
        assert r[k][0] == pytest.approx(0.0, abs=1e-12) and r[k][-1] > 0


def test_papers_of_the_plain_flow_gate_per_layer_rates():
    """Per-layer rates leave every theorem but Kunin et al.'s: Min et al.'s toy run with
    η_w = 2 keeps its measurements, and every claim on it is an illustration naming the
    rates (never a verdict)."""
    from dynamics.papers import PAPERS, min

    tr = simulate(min.toy_config(1e-6, **{"integrator.lr_w": 2.0, "integrator.t_end": 30.0,
                                          "record.frames": 20}))
    assert any("per-layer rates" in f for f in min.assumption_failures(tr))
    claims = PAPERS["min"].run_claims(tr)
    assert claims and all(c.passed is None for c in claims if not c.name.startswith("this run"))
    assert all("per-layer rates" in c.details for c in claims
               if not c.name.startswith("this run"))
