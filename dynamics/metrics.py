"""Metrics of a network state (W (m, d), a (m,)) or of a sequence of states.

All functions are pure (NumPy, or a compiled kernel where a frame's cost mattered). Angles are
in degrees. A neuron is *active* when it
is nonzero and ⟨w_j, x_i⟩ > 0 for some data point (σ'(0) = 0 convention); *dead* otherwise.
"""

from __future__ import annotations

import numpy as np

from .kernels.cache import call
from .kernels.measure import GRAM_BUFFER, angle_stats

_TINY = 1e-300


def cosines(W: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """cos∠(w_j, v) per neuron (0 for zero neurons)."""
    nw = np.linalg.norm(W, axis=-1)
    nv = np.linalg.norm(direction)
    num = W @ direction
    return np.where((nw > 0) & (nv > 0), num / np.maximum(nw * nv, _TINY), 0.0)


def activation_pattern(W: np.ndarray, X: np.ndarray) -> np.ndarray:
    """(m, n) bool: neuron j active on point i, ⟨w_j, x_i⟩ > 0."""
    return (W @ X.T) > 0


def active_mask(W: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Neurons active on at least one point."""
    return np.asarray(activation_pattern(W, X).any(axis=1))


def angle_matrix(W: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """(k, k) angles (degrees) between the selected nonzero neurons; zero diagonal.

    For a tight bundle (all cosines > 0.99) arccos loses precision (Chistikov et al. report
    angles down to 1e-6 degrees), so angles are computed from offsets to the
    bundle's mean direction: chord ‖u_i − u_j‖ = ‖(u_i − c) − (u_j − c)‖ and angle
    2 arcsin(chord/2), exact and precise for tiny angles.
    """
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
        T = U - c  # offsets at the bundle's scale, so chords keep their relative precision
        sq = (T * T).sum(axis=1)
        D2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (T @ T.T), 0.0)
        ang = 2.0 * np.arcsin(np.minimum(np.sqrt(D2) / 2.0, 1.0))
    else:
        ang = np.arccos(np.clip(G, -1.0, 1.0))
    np.fill_diagonal(ang, 0.0)
    return np.degrees(ang)


def pairwise_angles(W: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Angles (degrees) between all pairs of the selected neurons (upper triangle, flat)."""
    A = angle_matrix(W, mask)
    return A[np.triu_indices(A.shape[0], k=1)]


def max_mean_angle(W: np.ndarray, X: np.ndarray, mask: np.ndarray | None = None
                   ) -> tuple[float, float]:
    """Max and mean pairwise angle (degrees) among active neurons (optionally also within
    `mask`); 0 when fewer than two. The angles of ``angle_matrix`` (to ~1e-13 rad), computed
    a block of rows at a time in compiled code (``kernels.measure.angle_stats``): no (k, k)
    matrix (at every frame, building it would cost more than the integration)."""
    sel = active_mask(W, X) if mask is None else (active_mask(W, X) & mask)
    W = np.ascontiguousarray(W, dtype=float)
    amax, total, k = call(angle_stats)(W, np.ascontiguousarray(sel, dtype=bool), np.empty(W.shape),
                                 np.empty(max(GRAM_BUFFER, W.shape[0])))
    if k < 2:
        return 0.0, 0.0
    return float(np.degrees(amax)), float(np.degrees(total) / (k * (k - 1) / 2))


def stable_rank(W: np.ndarray) -> float:
    """‖W‖_F² / ‖W‖₂² (1 for rank one; NaN for W = 0)."""
    s = np.linalg.svd(W, compute_uv=False)
    return float((s**2).sum() / s[0] ** 2) if s.size and s[0] > 0 else float("nan")


def spectral_sq(W: np.ndarray) -> float:
    """‖W‖₂² (largest squared singular value)."""
    s = np.linalg.svd(W, compute_uv=False)
    return float(s[0] ** 2) if s.size else 0.0


def nuclear_norm(W: np.ndarray) -> float:
    """Σ singular values of W (Chistikov et al.'s Tables 5–6)."""
    return float(np.linalg.svd(W, compute_uv=False).sum())


def theta_sq(W: np.ndarray, a: np.ndarray) -> float:
    """‖θ‖² = ‖W‖_F² + ‖a‖² (→ 2 for Chistikov et al.'s rank-1 limit)."""
    return float((W**2).sum() + (a**2).sum())


def balance(W: np.ndarray, a: np.ndarray, lr_w: float = 1.0, lr_a: float = 1.0) -> np.ndarray:
    """η_w a_j² − η_a ‖w_j‖² per neuron, η the per-layer rates: conserved by gradient flow
    with a trained output layer (Kunin et al.'s δ_j; a_j² − ‖w_j‖² for rates 1)."""
    if lr_w == 1.0 and lr_a == 1.0:
        return a**2 - (W**2).sum(axis=-1)
    return lr_w * a**2 - lr_a * (W**2).sum(axis=-1)


def balance_drift(W: np.ndarray, a: np.ndarray, W0: np.ndarray, a0: np.ndarray) -> float:
    """max_j |(a_j² − ‖w_j‖²)(t) − (a_j² − ‖w_j‖²)(0)|."""
    return float(np.abs(balance(W, a) - balance(W0, a0)).max())


def relative_balance_drift(drift: np.ndarray, max_norm: np.ndarray, a: np.ndarray) -> float:
    """The integrator's achieved accuracy on a run, from its frames: max over frames of
    max_j |Δ(a_j² − ‖w_j‖²)| / (max_j a_j² + max_j ‖w_j‖²) — `drift` and `max_norm` the
    frames' `balance_drift` and `max_norm` (F,), `a` the output weights (F, m). Gradient flow
    with a trained output layer conserves a_j² − ‖w_j‖² exactly (kinks and sliding included),
    so this is the error of the integration, comparable with its rtol. nan without frames."""
    if len(drift) == 0:
        return float("nan")
    scale = np.max(a**2, axis=1) + max_norm**2
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(scale > 0, drift / scale, 0.0)
    return float(np.nanmax(rel))


def active_dead_counts(W: np.ndarray, X: np.ndarray) -> tuple[int, int]:
    act = active_mask(W, X)
    return int(act.sum()), int((~act).sum())


def direction_rates(W: np.ndarray, gW: np.ndarray) -> tuple[float, float]:
    """Min et al.'s two diagnostics from the gradient gW = ∇_W L:
    Σ_j d‖w_j‖²/dt = Σ_j 2⟨−g_j, w_j⟩ and Σ_j ‖P⊥_{w_j}(−g_j)‖/‖w_j‖ (zero neurons skipped)."""
    norm_rate = float(-2.0 * (gW * W).sum())
    nw = np.linalg.norm(W, axis=1)
    ok = nw > 0
    u = W[ok] / nw[ok, None]
    g = -gW[ok]
    perp = g - (g * u).sum(axis=1, keepdims=True) * u
    dir_rate = float((np.linalg.norm(perp, axis=1) / nw[ok]).sum())
    return norm_rate, dir_rate


def accuracy(h: np.ndarray, y: np.ndarray) -> float:
    """Fraction of points with sign(h_i) = y_i (h_i = 0 counts as wrong)."""
    return float(np.mean(np.sign(h) == y))


# ----------------------------------------------------------------------------- regimes
def tangent_kernel(W: np.ndarray, a: np.ndarray, X: np.ndarray, c: float, gamma: float = 0.0,
                   lr_w: float = 1.0, lr_a: float = 1.0) -> np.ndarray:
    """The flow's tangent kernel on the inputs X (n, n): K = Σ_θ η_θ ∂h/∂θ ∂h/∂θᵀ, i.e.
    K_ik = c² [η_a Σ_j σ(z_ij) σ(z_kj) + η_w ⟨x_i, x_k⟩ Σ_j a_j² σ'(z_ij) σ'(z_kj)],
    z = X Wᵀ (the NTK of h = c Σ a_j σ(⟨w_j, x⟩) for rates 1; Kunin et al.'s kernel)."""
    Z = X @ W.T
    S = np.where(Z > 0.0, Z, gamma * Z)
    D = np.where(Z > 0.0, 1.0, gamma) * np.abs(a)[None, :]
    return (c * c) * (lr_a * (S @ S.T) + lr_w * (X @ X.T) * (D @ D.T))


def kernel_distance(K0: np.ndarray, K: np.ndarray) -> float:
    """1 − ⟨K₀, K⟩_F / (‖K₀‖_F ‖K‖_F) (Kunin et al.'s S(0, t); 0: the kernel only rescaled,
    up to 1: orthogonal); NaN when a kernel is 0."""
    n0, n1 = float(np.linalg.norm(K0)), float(np.linalg.norm(K))
    if n0 == 0.0 or n1 == 0.0:
        return float("nan")
    return float(1.0 - np.sum(K0 * K) / (n0 * n1))


def pattern_change(W0: np.ndarray, W: np.ndarray, X: np.ndarray) -> float:
    """Fraction of (neuron, point) pairs whose activation 1[⟨w_j, x_i⟩ > 0] differs from
    t = 0 (Kunin et al.'s activation Hamming distance, divided by m·n)."""
    return float(np.mean((X @ W0.T > 0.0) != (X @ W.T > 0.0)))


def relative_distance(W0: np.ndarray, W: np.ndarray) -> float:
    """RD = ‖W − W₀‖_F / ‖W₀‖_F, Luo et al.'s order parameter of the input weights (bias
    coordinate included); NaN when W₀ = 0."""
    n0 = float(np.linalg.norm(W0))
    return float(np.linalg.norm(W - W0) / n0) if n0 > 0.0 else float("nan")


def axis_angles(W: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """Angle (degrees) of each nonzero neuron w_j to the nearest of the unit vectors `axes`
    (k, d): arccos max_r ⟨w_j/‖w_j‖, u_r⟩ (give both u and −u for a line)."""
    nw = np.linalg.norm(W, axis=1)
    keep = nw > 0.0
    U = np.asarray(axes, float)
    U = U / np.linalg.norm(U, axis=1, keepdims=True)
    cos = (W[keep] / nw[keep, None]) @ U.T
    return np.degrees(np.arccos(np.clip(cos.max(axis=1), -1.0, 1.0)))


def axis_deviation(W: np.ndarray, axes: np.ndarray, q: float = 95.0,
                   min_share: float = 0.0) -> float:
    """The q-th percentile of the angles (degrees) of the neurons to their nearest axis
    (Tsoy & Konstantinov's clustering metric: q = 95 with the axes 0, ±π/2, π), over the
    neurons whose share ‖w_j‖² / Σ_k ‖w_k‖² is at least `min_share` (0: every nonzero
    neuron); NaN when none qualifies."""
    nw2 = (W**2).sum(axis=1)
    total = float(nw2.sum())
    if total == 0.0:
        return float("nan")
    sel = (nw2 > 0.0) & (nw2 >= min_share * total)
    if not sel.any():
        return float("nan")
    return float(np.percentile(axis_angles(W[sel], axes), q))
