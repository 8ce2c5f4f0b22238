"""Per-frame measurements of a network state in one compiled pass (what ``simulate`` records).

``FrameProbe`` holds a run's buffers; per frame it evaluates the loss and gradient (the kernel
of ``loss_grad``, same bits), the activation pattern W Xᵀ > 0 (one GEMM) and
everything else in ``frame_stats``: norms, projections, cosines to directions, singular-value
metrics (``singular_stats``), ‖θ‖², balance drift, Min et al.'s rates, accuracy, pattern
changes, and the max and mean pairwise angle between active neurons (``angle_stats``).

Angles follow ``metrics.angle_matrix`` without its (k, k) matrices: rows of cosines come from
GEMMs into a fixed buffer and are reduced at once. Between unit vectors u_i = w_i/‖w_i‖: if
every cosine exceeds 0.99 (a tight bundle), from the chord to the bundle's mean direction c,
θ = 2 asin(‖(u_i − c) − (u_j − c)‖/2), which keeps tiny angles (1e-9 rad) to ~8 digits;
otherwise θ = acos(u_i·u_j). ``_acos``/``_asin`` are fdlibm's rational approximation (within
2 ulp of π of libm), written as selects and compiled with IEEE division (no check per
division) so LLVM vectorises a row of pairs (a per-frame NumPy arccos over the m × m matrix
costs several times the integration itself). Sums run in a fixed order and nothing uses
fast-math, so a state gives the same bits in every process.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from .cache import call  # (importing it installs the package-wide cache stamp)
from .loss import Point, net_of, use_blas_path
from .loss import _grad as grad_kernel
from .problem import Problem
from .threads import limit_core_blas

#: ``cache.jit`` with IEEE division: x/0 gives ±inf or NaN instead of raising, so no check per
#: division and loops with divisions vectorise; the bits of every division are unchanged.
jit = numba.njit(cache=True, nogil=True, error_model="numpy")

# fdlibm e_asin.c: asin(x) = x + x·R(x²) on [0, 0.5], R = z·P(z)/Q(z).
_P0 = 1.66666666666666657415e-01
_P1 = -3.25565818622400915405e-01
_P2 = 2.01212532134862925881e-01
_P3 = -4.00555345006794114027e-02
_P4 = 7.91534994289814532176e-04
_P5 = 3.47933107596021167570e-05
_Q1 = -2.40339491173441421878e00
_Q2 = 2.02094576023350569471e00
_Q3 = -6.88283971605453293030e-01
_Q4 = 7.70381505559019352791e-02
_HALF_PI = 1.57079632679489655800e00
_PI = 3.14159265358979311600e00
#: Floats of pairwise-cosine rows computed per GEMM (8 MB at most, whatever the width).
GRAM_BUFFER = 1 << 20
#: Singular values below √DEFLATE·s₁ are recomputed from a Gram at their own scale (1e-8
#: gave the same accuracy on the tests' rank-deficient matrices, 1e-13 lost two digits).
DEFLATE = 1e-12
#: Every cosine above this: the bundle is tight and angles come from chords.
TIGHT_COS = 0.99
_ALPHA = float(np.arccos(TIGHT_COS))
#: min_i ∠(u_i, mean direction) below α/2 (above α): surely tight (surely not); 1e-6 rad apart.
_SURE_TIGHT = float(np.cos(_ALPHA / 2 - 1e-6))
_SURE_WIDE = float(np.cos(_ALPHA + 1e-6))


@jit
def _asin_core(s, z):
    """s + s·R(z): asin(s) when z = s², s ≤ 0.5."""
    p = z * (_P0 + z * (_P1 + z * (_P2 + z * (_P3 + z * (_P4 + z * _P5)))))
    q = 1.0 + z * (_Q1 + z * (_Q2 + z * (_Q3 + z * _Q4)))
    return s + s * (p / q)


@jit
def _acos(c):
    """acos(c) for c in [−1, 1]: |c| ≤ ½ as π/2 − asin(c); else 2 asin(√((1 − |c|)/2)),
    reflected for c < 0. Both candidates are computed and one selected: no branch, so a loop
    over pairs vectorises."""
    ac = abs(c)
    small = ac <= 0.5
    zb = 0.5 * (1.0 - ac)
    sb = np.sqrt(zb)
    z = c * c if small else zb
    s = c if small else sb
    r = _asin_core(s, z)
    big = 2.0 * r
    return _HALF_PI - r if small else (big if c > 0.0 else _PI - big)


@jit
def _asin(x):
    """asin(x) for x in [0, 1], branch-free like ``_acos``."""
    small = x <= 0.5
    zb = 0.5 * (1.0 - x)
    sb = np.sqrt(zb)
    z = x * x if small else zb
    s = x if small else sb
    r = _asin_core(s, z)
    return r if small else _HALF_PI - 2.0 * r


@jit
def _unit_rows(W, sel, U):
    """U[:k] ← w_j/‖w_j‖ for the selected nonzero neurons, in order; returns k."""
    m, d = W.shape
    k = 0
    for j in range(m):
        if not sel[j]:
            continue
        s = 0.0
        for q in range(d):
            s += W[j, q] * W[j, q]
        if s > 0.0:
            nn = np.sqrt(s)
            for q in range(d):
                U[k, q] = W[j, q] / nn
            k += 1
    return k


@jit
def _min4(r):
    """min of r (four lanes, then combined; min is exact, so the order does not matter)."""
    n = r.shape[0]
    n4 = n - n % 4
    g0 = g1 = g2 = g3 = np.inf
    for j in range(0, n4, 4):
        g0 = r[j] if r[j] < g0 else g0
        g1 = r[j + 1] if r[j + 1] < g1 else g1
        g2 = r[j + 2] if r[j + 2] < g2 else g2
        g3 = r[j + 3] if r[j + 3] < g3 else g3
    g = min(min(g0, g1), min(g2, g3))
    for j in range(n4, n):
        g = r[j] if r[j] < g else g
    return g


@jit
def _sum_max4(r):
    """(Σ r, max r): four interleaved partial sums added as (s0 + s1) + (s2 + s3), then the
    tail in order (a fixed order, as ``loss.sum4``)."""
    n = r.shape[0]
    n4 = n - n % 4
    s0 = s1 = s2 = s3 = 0.0
    g0 = g1 = g2 = g3 = 0.0
    for j in range(0, n4, 4):
        s0 += r[j]
        s1 += r[j + 1]
        s2 += r[j + 2]
        s3 += r[j + 3]
        g0 = r[j] if r[j] > g0 else g0
        g1 = r[j + 1] if r[j + 1] > g1 else g1
        g2 = r[j + 2] if r[j + 2] > g2 else g2
        g3 = r[j + 3] if r[j + 3] > g3 else g3
    s = (s0 + s1) + (s2 + s3)
    g = max(max(g0, g1), max(g2, g3))
    for j in range(n4, n):
        s += r[j]
        g = r[j] if r[j] > g else g
    return s, g


@jit
def _gram_rows(Uk, UT, i0, i1, buf):
    """Rows i0..i1−1 of Uk Ukᵀ (one GEMM) as a C-contiguous view of the flat ``buf``."""
    k = Uk.shape[0]
    Gb = buf[:(i1 - i0) * k].reshape((i1 - i0, k))
    np.dot(Uk[i0:i1], UT, Gb)
    return Gb


@jit
def _min_pair_cos(U, k, buf):
    """min over i < j of ⟨u_i, u_j⟩ of the rows U[:k] (``buf``: flat GEMM scratch)."""
    Uk = U[:k]
    UT = np.ascontiguousarray(Uk.T)
    b = max(1, buf.shape[0] // k)
    g = np.inf
    for i0 in range(0, k - 1, b):
        i1 = min(i0 + b, k - 1)
        Gb = _gram_rows(Uk, UT, i0, i1, buf)
        for i in range(i0, i1):
            g = min(g, _min4(Gb[i - i0, i + 1:k]))
    return g


@jit
def _is_tight(U, k, c, buf):
    """Whether every pairwise cosine of U[:k] exceeds TIGHT_COS; c (d,) ← the normalised sum.

    Decided in O(kd) from β_i = ∠(u_i, c) when clear: pairwise angles are ≤ β_i + β_j, and
    β_i ≤ max_j ∠(u_i, u_j) when that is below 90° (u_i·Σu ≥ k cos R_i ≥ ‖Σu‖ cos R_i), so
    max β < α/2 means tight and max β > α means not (α = acos TIGHT_COS, margins 1e-6 rad,
    far above rounding); in between, every pair is checked."""
    d = U.shape[1]
    for q in range(d):
        c[q] = 0.0
    for j in range(k):
        for q in range(d):
            c[q] += U[j, q]
    cn = 0.0
    for q in range(d):
        cn += c[q] * c[q]
    cn = np.sqrt(cn)
    if cn > 0.0:
        for q in range(d):
            c[q] /= cn
        cmin = np.inf
        for j in range(k):
            s = 0.0
            for q in range(d):
                s += U[j, q] * c[q]
            cmin = s if s < cmin else cmin
        if cmin > _SURE_TIGHT:
            return True
        if cmin < _SURE_WIDE:
            return False
    return False if cn == 0.0 else _min_pair_cos(U, k, buf) > TIGHT_COS


@jit
def angle_stats(W, sel, U, buf):
    """(max, sum, k) of the pairwise angles (radians) between the selected nonzero neurons,
    ``sum`` over pairs i < j. Scratch: U (m, d) and a flat ``buf`` that takes ⌊len/k⌋ rows of
    cosines (or chord products) at a time from one GEMM, so memory stays O(len(buf)) however
    many neurons there are."""
    d = W.shape[1]
    k = _unit_rows(W, sel, U)
    if k < 2:
        return 0.0, 0.0, k
    c = np.empty(d)
    tight = _is_tight(U, k, c, buf)
    sq = np.empty(k)
    if tight:
        for j in range(k):
            s = 0.0
            for q in range(d):
                U[j, q] -= c[q]  # offsets at the bundle's scale keep the chords precise
                s += U[j, q] * U[j, q]
            sq[j] = s
    Uk = U[:k]
    UT = np.ascontiguousarray(Uk.T)
    b = max(1, buf.shape[0] // k)
    amax = 0.0
    total = 0.0
    for i0 in range(0, k - 1, b):
        i1 = min(i0 + b, k - 1)
        Gb = _gram_rows(Uk, UT, i0, i1, buf)
        for i in range(i0, i1):
            r = Gb[i - i0, i + 1:k]  # pairs (i, j > i); views from 0 so the loops vectorise
            n = r.shape[0]
            if tight:
                si = sq[i]
                sj = sq[i + 1:k]
                for j in range(n):
                    d2 = si + sj[j] - 2.0 * r[j]
                    d2 = d2 if d2 > 0.0 else 0.0
                    h = 0.5 * np.sqrt(d2)
                    r[j] = 2.0 * _asin(h if h < 1.0 else 1.0)
            else:
                for j in range(n):
                    v = r[j]
                    v = v if v < 1.0 else 1.0
                    r[j] = _acos(v if v > -1.0 else -1.0)
            s, g = _sum_max4(r)
            total += s
            amax = g if g > amax else amax
    return amax, total, k


@jit
def singular_stats(W):
    """(Σ s², s₁², Σ s) of W's singular values s (s₁ the largest), to ~1e-15 relative like
    LAPACK's SVD at a third of its cost for W (200, 16) (one SVD took more than the rest of a
    frame). With A = W/max|W| (or its transpose, whichever has fewer columns p) and V the
    eigenvectors of the p × p Gram AᵀA: s_i = ‖A v_i‖ (√eig(AᵀA) would lose half the digits of
    the small ones). Eigenvectors of eigenvalues below DEFLATE·s₁², within rounding of s₁² of
    each other, are mixed, so those s_i are the √eigenvalues of (A V_T)ᵀ(A V_T), a Gram at
    their own scale. Σ s² = ‖W‖_F².
    Zero W: (0, 0, 0)."""
    m, d = W.shape
    scale = 0.0
    for j in range(m):
        for q in range(d):
            v = abs(W[j, q])
            scale = v if v > scale else scale
    if scale == 0.0:
        return 0.0, 0.0, 0.0
    A = W / scale if d <= m else np.ascontiguousarray(W.T) / scale
    rows, p = A.shape
    _, V = np.linalg.eigh(np.dot(A.T, A))
    B = np.dot(A, V)
    ss = np.zeros(p)
    fro = 0.0
    for j in range(rows):
        for i in range(p):
            ss[i] += B[j, i] * B[j, i]
            fro += A[j, i] * A[j, i]
    top = 0.0
    for i in range(p):
        top = ss[i] if ss[i] > top else top
    nt = 0
    for i in range(p):
        nt += 1 if ss[i] < DEFLATE * top else 0
    nuc = 0.0
    BT = np.empty((rows, nt))
    c = 0
    for i in range(p):
        if ss[i] < DEFLATE * top:
            for j in range(rows):
                BT[j, c] = B[j, i]
            c += 1
        else:
            nuc += np.sqrt(ss[i])
    if nt > 0:
        mu = np.linalg.eigvalsh(np.dot(BT.T, BT))
        for i in range(nt):
            nuc += np.sqrt(mu[i]) if mu[i] > 0.0 else 0.0
    return fro * scale * scale, top * scale * scale, nuc * scale


#: Columns of a frame's metrics row (``frame_stats``'s ``fm``), as Trajectory.frame_metrics.
FRAME_METRICS = ("stable_rank", "spectral_sq", "nuclear_norm", "theta_sq", "max_angle",
                 "mean_angle", "balance_drift", "n_active", "n_dead", "norm_rate", "dir_rate",
                 "max_norm")


class FrameSpec(NamedTuple):
    """A run's constants of ``frame_stats``: the plane (2, d), directions D (k_dirs, d),
    b0 (m,), pair_mask (m,), c, γ, labels y ((0,): no accuracy) and the layers' rates."""

    plane: np.ndarray
    D: np.ndarray
    b0: np.ndarray
    pair_mask: np.ndarray
    c: float
    gamma: float
    y: np.ndarray
    lw: float
    la: float


class FrameRows(NamedTuple):
    """Where ``frame_stats`` writes a frame: norms (m,), proj (m, 2), cos (k_dirs, m) and the
    metrics fm (12,)."""

    norms: np.ndarray
    proj: np.ndarray
    cos: np.ndarray
    fm: np.ndarray


class FrameScratch(NamedTuple):
    """Scratch of ``frame_stats``: unit rows U (m, d) and a block of pairwise cosines."""

    U: np.ndarray
    buf: np.ndarray


@jit
def frame_stats(spec, W, a, gW, Z, pattern, prev, rows, scratch):
    """One frame's rows and metrics; returns (pattern changes since ``prev``, accuracy).

    Inputs: Z = W Xᵀ (m, n) and pattern = Z > 0 (neuron j active on point i), prev the last
    frame's pattern (same as pattern at t = 0), gW = lw ∇_W L and from ``spec`` (a
    ``FrameSpec``) b0 = lw a² − la ‖w‖² at t = 0 (the quantity the flow with per-layer rates
    lw, la conserves; a² − ‖w‖² for rates 1); ``scratch`` a ``FrameScratch``.
    Writes into ``rows`` norms (m,) ‖w_j‖, proj (m, 2) W·planeᵀ, cos (k_dirs, m) cos∠(w_j,
    D_r) (0 for zero neurons or directions) and fm (12,) in FRAME_METRICS order: stable rank
    ‖W‖_F²/‖W‖₂², ‖W‖₂², nuclear norm, ‖θ‖², max and mean pairwise angle (degrees) between
    active neurons within ``pair_mask``, max_j |(lw a_j² − la ‖w_j‖²) − b0_j|, active and dead
    counts (active: on some point), Σ_j 2⟨−g_j, w_j⟩, Σ_j ‖P⊥(−g_j)‖/‖w_j‖, max_j ‖w_j‖.
    Accuracy: fraction of points with sign(h_i) = y_i, h_i = c Σ_j a_j σ(z_ji) (NaN unless
    ``y`` is given, non-empty).
    """
    plane, D, b0, pair_mask, c, gamma, y, lw, la = spec
    norms, proj, cos, fm = rows
    U, buf = scratch
    m, d = W.shape
    n = pattern.shape[1]
    nd = D.shape[0]
    theta = 0.0
    drift = 0.0
    nr = 0.0
    dr = 0.0
    nmax = 0.0
    nact = 0
    changes = 0
    sel = np.empty(m, np.bool_)
    dn = np.empty(nd)
    for r in range(nd):
        dd = 0.0
        for q in range(d):
            dd += D[r, q] * D[r, q]
        dn[r] = np.sqrt(dd)
    for j in range(m):
        ww = 0.0
        gw = 0.0
        p0 = 0.0
        p1 = 0.0
        for q in range(d):
            w = W[j, q]
            ww += w * w
            gw += gW[j, q] * w
            p0 += w * plane[0, q]
            p1 += w * plane[1, q]
        nw = np.sqrt(ww)
        norms[j] = nw
        proj[j, 0] = p0
        proj[j, 1] = p1
        theta += ww + a[j] * a[j]
        bj = abs((lw * a[j] * a[j] - la * ww) - b0[j])
        drift = bj if bj > drift else drift
        nmax = nw if nw > nmax else nmax
        nr -= 2.0 * gw
        if ww > 0.0:
            g = gw / ww
            pp = 0.0
            for q in range(d):
                v = gW[j, q] - g * W[j, q]
                pp += v * v
            dr += np.sqrt(pp / ww)
        for r in range(nd):
            num = 0.0
            for q in range(d):
                num += W[j, q] * D[r, q]
            den = nw * dn[r]
            cos[r, j] = num / den if den > 0.0 else 0.0
        act = False
        for i in range(n):
            act = act or pattern[j, i]
            changes += 1 if pattern[j, i] != prev[j, i] else 0
        sel[j] = act and pair_mask[j]
        nact += 1 if act else 0
    amax, total, k = angle_stats(W, sel, U, buf)
    fro, top, nuc = singular_stats(W)
    fm[0] = fro / top if top > 0.0 else np.nan
    fm[1] = top
    fm[2] = nuc
    fm[3] = theta
    fm[4] = np.degrees(amax) if k > 1 else 0.0
    fm[5] = np.degrees(total) / (k * (k - 1) / 2) if k > 1 else 0.0
    fm[6] = drift
    fm[7] = nact
    fm[8] = m - nact
    fm[9] = nr
    fm[10] = dr
    fm[11] = nmax
    acc = np.nan
    if y.shape[0] > 0:
        good = 0
        for i in range(n):
            h = 0.0
            for j in range(m):
                z = Z[j, i]
                h += a[j] * (z if z > 0.0 else gamma * z)
            h *= c
            good += 1 if (h > 0.0 and y[i] == 1.0) or (h < 0.0 and y[i] == -1.0) else 0
        acc = good / n
    return changes, acc


class FrameProbe:
    """One run's per-frame measurements: buffers allocated once, then per frame one gradient
    evaluation (the kernel ``loss_grad`` runs, so the loss has the same bits), one GEMM for
    the activation pattern and one ``frame_stats`` call.

    ``plane`` (2, d), ``D`` (k_dirs, d) directions, ``b0`` = lr_w a² − lr_a ‖w‖² at t = 0,
    ``pair_mask`` (m,) neurons eligible for the angle statistics; accuracy only when
    ``classification``."""

    def __init__(self, p: Problem, m: int, plane: np.ndarray, D: np.ndarray, b0: np.ndarray,
                 pair_mask: np.ndarray, classification: bool) -> None:
        n, d = p.X.shape
        self.p = p
        self.blas = use_blas_path(n, d, m)
        limit_core_blas()  # the pairwise cosines are GEMMs on SciPy's BLAS
        self.net = net_of(p, m, self.blas)
        self.packed = (np.empty((d + 1, m)), np.empty((d + 1, m)))
        self.gW, self.ga = np.empty((m, d)), np.empty(m)
        self.XT = p.X.T
        self.Z = np.empty((m, n))
        self.spec = FrameSpec(np.ascontiguousarray(plane, dtype=float),
                              np.ascontiguousarray(D, dtype=float).reshape(-1, d),
                              np.ascontiguousarray(b0, dtype=float),
                              np.ascontiguousarray(pair_mask, dtype=bool), float(p.c),
                              float(p.gamma), p.y if classification else np.empty(0),
                              float(p.lr_w), float(p.lr_a))
        # unit rows, and rows of pairwise cosines (a block at a time)
        self.scratch = FrameScratch(np.empty((m, d)), np.empty(max(GRAM_BUFFER, m)))

    def loss_grad(self, W: np.ndarray, a: np.ndarray) -> float:
        """L at (W, a); ∇_W L in ``self.gW`` (the kernel and arguments of ``loss_grad``)."""
        P, G = self.packed
        return float(call(grad_kernel)(self.net, Point(W, a, P, G), self.gW, self.ga))

    def measure(self, W: np.ndarray, a: np.ndarray, pattern: np.ndarray,
                prev: np.ndarray | None, rows: FrameRows,
                gW: np.ndarray | None = None) -> tuple[int, float]:
        """Fill ``pattern`` (m, n) with W xᵢ > 0 and ``rows`` (``frame_stats``); ∇_W L is
        ``gW`` ((m, d) C-contiguous) or else ``self.gW`` (call ``loss_grad`` at the same state
        first); returns (pattern changes since ``prev``, accuracy)."""
        np.greater(np.matmul(W, self.XT, out=self.Z), 0.0, out=pattern)
        changes, acc = call(frame_stats)(
            self.spec, W, a, self.gW if gW is None else gW, self.Z, pattern,
            pattern if prev is None else prev, rows, self.scratch)
        return int(changes), float(acc)
