"""Metrics against independent references (direct formulas, scipy)."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics import metrics


def _angles_reference(U: np.ndarray) -> np.ndarray:
    """Pairwise angles by atan2(|u×v|, u·v): accurate for tiny and large angles alike."""
    out = []
    for i in range(len(U)):
        for j in range(i + 1, len(U)):
            u, v = U[i], U[j]
            cross = np.sqrt(max((u @ u) * (v @ v) - (u @ v) ** 2, 0.0))
            # |u×v| via the Lagrange identity loses precision for tiny angles; use the
            # orthogonal component instead
            perp = v - (u @ v) / (u @ u) * u
            cross = np.linalg.norm(perp) * np.linalg.norm(u)
            out.append(np.degrees(np.arctan2(cross, u @ v)))
    return np.array(out)


@pytest.mark.parametrize("spread", [1.0, 1e-2, 1e-6, 1e-9])
def test_pairwise_angles_small_and_large(spread: float) -> None:
    rng = np.random.default_rng(0)
    centre = rng.standard_normal(7)
    W = centre + spread * rng.standard_normal((9, 7))
    ref = _angles_reference(W)
    got = metrics.pairwise_angles(W)
    # relative 1e-6: tiny angles keep ~8 significant digits through the tangent-plane route
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-12)


def test_max_mean_angle_only_active_neurons() -> None:
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    W = np.array([[1.0, 0.1], [1.0, -0.1], [-1.0, -1.0], [0.1, 1.0]])  # third is dead
    mx, mean = metrics.max_mean_angle(W, X)
    ref = _angles_reference(W[[0, 1, 3]])
    assert mx == pytest.approx(ref.max()) and mean == pytest.approx(ref.mean())


def test_norms_ranks_and_balance() -> None:
    rng = np.random.default_rng(1)
    W = np.outer(rng.standard_normal(5), rng.standard_normal(3))  # rank one
    assert metrics.stable_rank(W) == pytest.approx(1.0)
    assert metrics.nuclear_norm(W) == pytest.approx(np.linalg.norm(W, "nuc"))
    W2 = rng.standard_normal((6, 4))
    s = np.linalg.svd(W2, compute_uv=False)
    assert metrics.stable_rank(W2) == pytest.approx((s**2).sum() / s[0] ** 2)
    assert metrics.spectral_sq(W2) == pytest.approx(np.linalg.norm(W2, 2) ** 2)
    a = rng.standard_normal(6)
    assert metrics.theta_sq(W2, a) == pytest.approx((W2**2).sum() + (a**2).sum())
    assert metrics.balance_drift(W2, a, W2, a) == 0.0


def test_direction_rates_match_definitions() -> None:
    rng = np.random.default_rng(2)
    W, G = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    nr, dr = metrics.direction_rates(W, G)
    # d‖w‖²/dt along −G is 2⟨w, −G⟩; direction speed is the tangential part over ‖w‖
    assert nr == pytest.approx(sum(2 * w @ (-g) for w, g in zip(W, G, strict=True)))
    ref = 0.0
    for w, g in zip(W, G, strict=True):
        u = w / np.linalg.norm(w)
        ref += np.linalg.norm(-g - (u @ -g) * u) / np.linalg.norm(w)
    assert dr == pytest.approx(ref)


def test_cosines_and_patterns() -> None:
    W = np.array([[1.0, 0.0], [0.0, 0.0], [-1.0, 1.0]])
    c = metrics.cosines(W, np.array([1.0, 1.0]))
    assert c == pytest.approx([np.sqrt(0.5), 0.0, 0.0])
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert metrics.activation_pattern(W, X).tolist() == [[True, False], [False, False],
                                                         [False, True]]
    assert metrics.active_dead_counts(W, X) == (2, 1)
    assert metrics.accuracy(np.array([0.5, -0.2, 0.0]), np.array([1.0, -1.0, 1.0])) == \
        pytest.approx(2 / 3)
