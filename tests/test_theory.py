"""Theory: direction field, extremal vectors (exact 2D vs search vs simulated neurons), the
per-paper quantities."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics import metrics, phases, theory
from dynamics.config import Config, ThreePointData
from dynamics.simulate import simulate


def test_field_weights_slopes():
    # ∂ℓ(0, y) from finite differences of the three losses (independent of the formula table)
    y = np.array([1.0, -1.0])
    losses = {"square": lambda h, y: 0.5 * (h - y) ** 2,
              "logistic": lambda h, y: np.log1p(np.exp(-y * h)),
              "exponential": lambda h, y: np.exp(-y * h)}
    for name, f in losses.items():
        fd = (f(1e-6, y) - f(-1e-6, y)) / 2e-6
        np.testing.assert_allclose(theory.loss_slope_at_zero(name, y), fd, rtol=1e-6)
    b = theory.field_weights(y, np.array([2.0, 1.0]), "square", "mean")
    np.testing.assert_allclose(b, [1.0, -0.5])


def test_G_is_w_dot_D():
    rng = np.random.default_rng(0)
    X, b = rng.standard_normal((7, 4)), rng.standard_normal(7)
    W = rng.standard_normal((5, 4))
    for gam in (0.0, 0.3):
        np.testing.assert_allclose(theory.G_value(W, X, b, gam),
                                   np.sum(W * theory.direction_field(W, X, b, gam), axis=1))


@pytest.mark.parametrize("gamma", [0.0, 0.1, 0.5])
def test_exact_2d_matches_search(gamma):
    """Two independent methods (piecewise-sinusoid analysis vs multi-start search + KKT snap)
    give the same set of maxima and minima, boundary kinks included."""
    rng = np.random.default_rng(11)
    n_boundary = 0
    for _ in range(12):
        n = int(rng.integers(2, 7))
        X = rng.standard_normal((n, 2))
        b = rng.choice([-1.0, 1.0], n) / n
        e1 = theory.extremal_vectors(X, b, gamma)
        e2 = theory.extremal_vectors(X, b, gamma, method="search")
        s1 = sorted((e.kind, round(float(np.arctan2(e.vector[1], e.vector[0])), 6)) for e in e1)
        s2 = sorted((e.kind, round(float(np.arctan2(e.vector[1], e.vector[0])), 6)) for e in e2)
        assert s1 == s2
        n_boundary += sum(bool(e.boundary) for e in e1)
        # every reported point is critical: its kind agrees with a dense scan of G on the circle
        th = np.linspace(-np.pi, np.pi, 200001)
        G = theory.G_value(np.c_[np.cos(th), np.sin(th)], X, b, gamma)
        for e in e1:
            if e.kind == "max":
                k = np.argmin(np.abs(th - np.arctan2(e.vector[1], e.vector[0])))
                win = G[max(k - 50, 0):k + 50]
                # grid error: |G'| ≤ S = Σ|b_i|‖x_i‖ times the grid spacing
                tol = np.sum(np.abs(b) * np.linalg.norm(X, axis=1)) * (th[1] - th[0]) * 1.01
                assert G[k] >= win.max() - tol
    assert n_boundary > 0  # the data sets do exercise boundary critical points


def test_three_point_extremal_vector():
    c = Config(data=ThreePointData())
    ex = theory.extremal_for_config(c)
    assert [e.kind for e in ex] == ["max"]
    v = ex[0].vector
    # independent reference: the maximiser activates all three points, so it is Σ y_i x̃_i
    X = np.c_[np.array(c.data.x), np.ones(3)]
    ref = (np.array(c.data.y) @ X) / np.linalg.norm(np.array(c.data.y) @ X)
    np.testing.assert_allclose(v, ref, atol=1e-12)
    assert abs(theory.polar_angle_deg(v) - 111.2) < 0.05  # the paper's angle, derived: 111.2°


@pytest.mark.parametrize("gamma,seed", [(0.0, 1), (0.2, 2), (0.5, 3)])
def test_simulated_neurons_reach_extremal_vectors(gamma, seed):
    """Random 2D data, tiny balanced init: at the detected end of alignment every neuron that
    has stopped turning sits at an extremal vector of its type (max for a_j > 0, min for
    a_j < 0)."""
    rng = np.random.default_rng(seed)
    n = 5
    labels = rng.choice([-1.0, 1.0], n)
    labels[:2] = [1.0, -1.0]
    cfg = Config.from_dict({
        "data": {"kind": "points", "angles_deg": rng.uniform(0, 360, n).tolist(),
                 "radii": rng.uniform(0.5, 1.5, n).tolist(), "labels": labels.tolist()},
        "model": {"width": 30, "gamma": gamma}, "loss": {"kind": "square", "reduction": "sum"},
        "init": {"scheme": "balanced", "scale": 1e-12, "normalisation": "none"},
        # GD (η = 1e-3): the adaptive gf steps collapse when neurons slide along a kink
        "integrator": {"method": "gd", "t_end": 60.0, "lr": 1e-3},
        "record": {"frames": 80, "t_first": 1e-2}, "seed": seed})
    tr = simulate(cfg)
    t_a, _ = phases.alignment_end(tr)
    f = tr.frame_at(t_a)
    f_half = tr.frame_at(0.5 * t_a)
    W, a, Wh = tr.W_at(f), tr.a[f], tr.W_at(f_half)
    X, b = theory.config_field(cfg)
    ex = theory.extremal_vectors(X, b, gamma)
    turn = np.degrees(np.arccos(np.clip(np.sum(W * Wh, axis=1) / (
        np.linalg.norm(W, axis=1) * np.linalg.norm(Wh, axis=1)), -1, 1)))
    live = metrics.active_mask(W, tr.X) if gamma == 0 else np.ones(len(a), bool)
    settled = live & (turn < 0.1)  # turned < 0.1° over the second half of the alignment
    assert settled.sum() >= 8
    angles = np.array([theory.nearest_extremal(W[j], ex, "max" if a[j] > 0 else "min")[1]
                       for j in np.flatnonzero(settled)])
    # 1°: a settled neuron converges exponentially (interior) or in finite time (kink) to its
    # critical point; GD with η = 1e-3 chatters across a kink by ≈ η‖D‖/‖w‖-relative ≪ 1°
    assert angles.max() < 1.0, angles


def test_min_cones_and_bound():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -0.2]])
    y = np.array([1.0, 1.0, -1.0])
    W = np.array([[1.0, 1.0], [-1.0, -1.0], [-1.0, 1.0], [0.5, -1.0], [-0.1, -1.0]])
    cones = theory.min_cones(W, X, y)
    assert cones.tolist() == ["S+", "S-", "none", "none", "S-"]
    cfg = Config.from_dict({"model": {"width": 50}, "loss": {"reduction": "sum"},
                            "init": {"scale": 1e-6, "normalisation": "none"}})
    mb = theory.min_alignment_bound(cfg)
    # T = log(1/(√h ε))/(4 n X_max) with ε = σ₀√D (D = 2), n = 4, X_max = 1
    assert np.isclose(mb.T_theirs, np.log(1 / (np.sqrt(50) * 1e-6 * np.sqrt(2))) / 16)
    mean = cfg.with_updates({"loss.reduction": "mean"})
    assert np.isclose(theory.min_alignment_bound(mean).T_ours, 4 * mb.T_ours)  # mean: ×n


def test_chistikov_quantities():
    cfg = Config.from_dict({"data": {"kind": "teacher", "d": 8}, "model": {"width": 30},
                            "init": {"scale": 4.0 ** -5, "normalisation": "sqrt_dm"}})
    assert np.isclose(theory.chistikov_lambda(cfg, 8), 4.0 ** -5)
    lim = theory.chistikov_limit(np.eye(8)[0])
    assert lim == {"sum_w_sq": 1.0, "nuclear_norm": 1.0, "theta_sq": 2.0}
    # independent check of the limit numbers: a random balanced rank-1 network on v*
    rng = np.random.default_rng(0)
    r = rng.random(30)
    r /= np.sqrt((r**2).sum())
    W = r[:, None] * np.eye(8)[0]
    assert np.isclose(metrics.nuclear_norm(W), lim["nuclear_norm"])
    assert np.isclose(metrics.theta_sq(W, r), lim["theta_sq"])


def test_ols_and_time_maps():
    c = Config(data=ThreePointData())
    fit = theory.ols_fit(c)
    X = np.c_[np.array(c.data.x), np.ones(3)]
    y = np.array(c.data.y)
    beta_ref = np.linalg.solve(X.T @ X, X.T @ y)  # normal equations, independent of lstsq
    np.testing.assert_allclose(fit.beta, beta_ref, atol=1e-12)
    assert fit.all_positive
    assert np.isclose(fit.loss, np.mean(0.5 * (X @ beta_ref - y) ** 2))
    assert theory.boursier_time_factor(c, 3) == 2.0
    assert np.isclose(theory.boursier_time_factor(c.with_updates({"loss.reduction": "sum"}), 3),
                      2 / 3)


def test_wang_ma_geometry_is_derived_directions():
    from dynamics.config import TwoSignalsData
    from dynamics.data import build_dataset

    ds = build_dataset(Config(data=TwoSignalsData(angle_deg=30.0, p=2.0),
                              loss={"kind": "exponential"}))
    geo = theory.wang_ma_geometry(ds)
    assert geo.p == 2.0
    perp = geo.directions[1].vector
    assert abs(perp @ geo.x_minus) < 1e-12 and perp @ geo.x_plus > 0
    assert all(dd.tag == "derived" for dd in geo.directions)
