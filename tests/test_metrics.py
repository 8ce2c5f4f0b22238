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


# ------------------------------------------------------------------ compiled frame metrics
def _angle_matrix_before(W: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """The former metrics.angle_matrix-based statistics' input, kept as the reference: (k, k)
    angles (degrees) by arccos of the cosine matrix, or for a tight bundle (every cosine >
    0.99) by 2 asin(chord/2) with chords between offsets to the bundle's mean direction."""
    V = W if mask is None else W[mask]
    nv = np.linalg.norm(V, axis=1)
    U = V[nv > 0] / nv[nv > 0, None]
    k = U.shape[0]
    if k < 2:
        return np.zeros((k, k))
    G = U @ U.T
    if G.min() > 0.99:
        c = U.sum(axis=0)
        c /= np.linalg.norm(c)
        T = U - c
        sq = (T * T).sum(axis=1)
        D2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (T @ T.T), 0.0)
        ang = 2.0 * np.arcsin(np.minimum(np.sqrt(D2) / 2.0, 1.0))
    else:
        ang = np.arccos(np.clip(G, -1.0, 1.0))
    np.fill_diagonal(ang, 0.0)
    return np.degrees(ang)


def _max_mean_before(W: np.ndarray, sel: np.ndarray) -> tuple[float, float]:
    A = _angle_matrix_before(W, sel)
    k = A.shape[0]
    return (float(A.max()), float(A.sum() / (k * (k - 1)))) if k > 1 else (0.0, 0.0)


#: Stated tolerance of the compiled angle statistics against the former NumPy ones.
ANGLE_TOL_RAD = 1e-9


@pytest.mark.parametrize("spread", [3.0, 1.0, 0.2, 0.07, 1e-2, 1e-4, 1e-6, 1e-9])
@pytest.mark.parametrize("d", [2, 3, 16])
def test_max_mean_angle_matches_the_former_matrix_route(spread: float, d: int) -> None:
    """Wide sets (arccos), tight bundles (chords) and the band around the 0.99 switch, where
    the O(kd) pre-test hands over to the full pairwise check."""
    rng = np.random.default_rng(int(spread * 1e3) + d)
    for m in (2, 3, 9, 61):
        W = rng.standard_normal(d) + spread * rng.standard_normal((m, d))
        W[rng.random(m) < 0.1] = 0.0  # zero neurons are skipped
        X = rng.standard_normal((5, d))
        sel = metrics.active_mask(W, X)
        got = metrics.max_mean_angle(W, X)
        ref = _max_mean_before(W, sel)
        np.testing.assert_allclose(np.radians(got), np.radians(ref), rtol=0,
                                   atol=ANGLE_TOL_RAD)


def test_tight_switch_agrees_with_the_exact_cosine_test() -> None:
    """Bundles whose smallest cosine is just above or below 0.99 take the same branch as the
    former `G.min() > 0.99` (a wrong branch would show as a difference of ~1e-14 rad only at
    ~1e-9 rad angles, so check the branch itself)."""
    from dynamics.kernels.measure import TIGHT_COS, _is_tight

    alpha = np.arccos(TIGHT_COS)
    for eps in (-1e-7, -1e-9, 1e-9, 1e-7, 0.3 * alpha, -0.3 * alpha):
        th = alpha + eps  # the widest pair; the rest in between (β_max near α/2 and α)
        for extra in (0, 5):
            angles = np.r_[0.0, th, np.linspace(0.0, th, extra)]
            U = np.c_[np.cos(angles), np.sin(angles), np.zeros_like(angles)]
            exact = (U @ U.T).min() > TIGHT_COS
            assert _is_tight(U.copy(), U.shape[0], np.empty(3), np.empty(64)) == exact


def test_fast_acos_asin_are_libm_accurate() -> None:
    import numba

    from dynamics.kernels.measure import _acos, _asin

    @numba.njit
    def both(x, oa, os):
        for i in range(x.shape[0]):
            oa[i] = _acos(x[i])
            os[i] = _asin(abs(x[i]))

    x = np.r_[np.linspace(-1, 1, 200_001), 1 - np.geomspace(1e-17, 0.5, 2000),
              -1 + np.geomspace(1e-17, 0.5, 2000), np.geomspace(1e-300, 0.5, 2000)]
    oa, os = np.empty_like(x), np.empty_like(x)
    both(x, oa, os)
    np.testing.assert_allclose(oa, np.arccos(x), rtol=1e-15, atol=5e-16)
    np.testing.assert_allclose(os, np.arcsin(np.abs(x)), rtol=1e-15, atol=5e-16)


@pytest.mark.parametrize("shape", [(200, 2), (200, 16), (50, 64), (7, 30), (1, 3)])
def test_singular_stats_match_lapack(shape: tuple[int, int]) -> None:
    """Σs², s₁², Σs from the Gram route against LAPACK's SVD, including rank-deficient W whose
    small singular values are below √DEFLATE·s₁ (recomputed at their own scale)."""
    from dynamics.kernels.measure import singular_stats

    rng = np.random.default_rng(shape[0] + shape[1])
    m, d = shape
    cases = [rng.standard_normal(shape), np.zeros(shape), 1e-150 * rng.standard_normal(shape)]
    for r in range(1, min(m, d) + 1, 3):
        for tiny in (0.0, 1e-12, 1e-8, 1e-4):
            cases.append(rng.standard_normal((m, r)) @ rng.standard_normal((r, d))
                         + tiny * rng.standard_normal(shape))
    for W in cases:
        s = np.linalg.svd(W, compute_uv=False)
        got = singular_stats(np.ascontiguousarray(W))
        ref = ((s**2).sum(), s[0] ** 2, s.sum())
        np.testing.assert_allclose(got, ref, rtol=1e-13, atol=0)
