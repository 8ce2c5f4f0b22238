"""Loss and gradient kernels, the packed layout, and the state a run's drivers share.

With z = X Wᵀ and per-sample weights s::

    L = R Σ_i s_i ℓ(h_i, y_i),          R = 1/n ("mean") or 1 ("sum")
    r_i = R s_i ℓ'(h_i, y_i)
    ∂L/∂a_j = c Σ_i r_i σ(z_ij)          (≡ 0 when the output layer is frozen)
    ∂L/∂w_j = c a_j Σ_i r_i σ'(z_ij) x_i

The kernels return G = D∇L, the flow's velocity with a minus sign, with per-layer rates D: the
factors c_w = c·lr_w and c_a = c·lr_a replace c in the two gradients (problem.py; with rates 1
they are c itself, so the same bits as ∇L).

Losses: square ½(ŷ−y)²; logistic ln(1+e^{−yŷ}) (softplus, stable); exponential e^{−yŷ}.

Two evaluation paths give the same numbers to round-off: a fused triple loop (small problems)
and a BLAS path (``np.dot`` inside numba) for large ones, chosen by n·m·d.

Determinism: kernels are compiled without value-changing fast-math flags (no reassociation,
no FMA contraction; cache.jit), so a kernel compiled in this process and one loaded from
numba's disk cache give the same bits. Sums over neurons, which LLVM could otherwise only
vectorise by reassociating, are written as four interleaved partial sums added in a fixed
order (``_dot_sigma``): independent chains that overlap in the pipeline without changing the
order (their cost: bench/REPORT.md).

Layout: inside the kernels the parameters are one (d+1, m) matrix P whose rows 0..d−1 are
Wᵀ (row k = coordinate k of every neuron) and whose row d is a; gradients G use the same
layout. Every inner loop then runs over neurons with unit stride, whatever d is (d = 2 is
common), Runge–Kutta stage combinations are flat loops over the trained rows, and X Wᵀ is a
plain GEMM on a contiguous block. The public (m, d) W and (m,) a are packed into P at the start
of each compiled call and unpacked at its end (O(md), no allocation).
"""

from __future__ import annotations

import numpy as np

from .cache import call, jit
from .problem import DIVERGENCE_BOUND, LOSS_CODES, Problem, Samples
from .threads import limit_core_blas

#: Use the BLAS path when n·m·d reaches this (measured crossover: the fused loops only win
#: for tiny problems, e.g. (n, d, m) = (3, 2, 10); BLAS + vectorised elementwise passes
#: are faster from (3, 2, 100) up).
BLAS_MIN_WORK = 256


@jit
def ell(h: float, y: float, code: int) -> tuple[float, float]:
    """Return (ℓ(h, y), ∂ℓ/∂h) for loss ``code``; logistic via stable softplus/sigmoid."""
    if code == 0:
        r = h - y
        return 0.5 * r * r, r
    if code == 1:
        u = -y * h
        if u > 0.0:
            e = np.exp(-u)
            return u + np.log1p(e), -y / (1.0 + e)
        e = np.exp(u)
        return np.log1p(e), -y * e / (1.0 + e)
    e = np.exp(-y * h)
    return e, -y * e


@jit
def _dot_sigma(u, z, gamma):
    """Σ_j u_j σ(z_j) in a fixed order: lanes j mod 4 summed separately, then
    (s0 + s1) + (s2 + s3), then the tail in order."""
    m = z.shape[0]
    m4 = m - m % 4
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for j in range(0, m4, 4):
        v0 = z[j]
        v1 = z[j + 1]
        v2 = z[j + 2]
        v3 = z[j + 3]
        s0 += u[j] * (v0 if v0 > 0.0 else gamma * v0)
        s1 += u[j + 1] * (v1 if v1 > 0.0 else gamma * v1)
        s2 += u[j + 2] * (v2 if v2 > 0.0 else gamma * v2)
        s3 += u[j + 3] * (v3 if v3 > 0.0 else gamma * v3)
    s = (s0 + s1) + (s2 + s3)
    for j in range(m4, m):
        v = z[j]
        s += u[j] * (v if v > 0.0 else gamma * v)
    return s


@jit
def sum4(v):
    """Σ_j v_j in a fixed order (four interleaved partial sums, as ``_dot_sigma``)."""
    m = v.shape[0]
    m4 = m - m % 4
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for j in range(0, m4, 4):
        s0 += v[j]
        s1 += v[j + 1]
        s2 += v[j + 2]
        s3 += v[j + 3]
    s = (s0 + s1) + (s2 + s3)
    for j in range(m4, m):
        s += v[j]
    return s


@jit
def pack(W, a, P):
    """P[:d] ← Wᵀ, P[d] ← a."""
    m, d = W.shape
    for j in range(m):
        for k in range(d):
            P[k, j] = W[j, k]
        P[d, j] = a[j]


@jit
def unpack(P, W, a):
    """W ← P[:d]ᵀ, a ← P[d]."""
    m, d = W.shape
    for j in range(m):
        for k in range(d):
            W[j, k] = P[k, j]
        a[j] = P[d, j]


@jit
def _finish_grad(P, G, cw, ca, train_out):
    """G[:d] holds Σ_i r_i σ'(z_ij) x_i and G[d] Σ_i r_i σ(z_ij): scale to D∇L (c_w = c·lr_w,
    c_a = c·lr_a; c itself for rates 1)."""
    d = P.shape[0] - 1
    m = P.shape[1]
    for k in range(d):
        for j in range(m):
            G[k, j] *= cw * P[d, j]
    for j in range(m):
        G[d, j] = ca * G[d, j] if train_out else 0.0


@jit
def _eval_fused(X, y, sw, P, gamma, c, cw, ca, code, R, train_out, zrow, G):
    """L and ∇L (into G) by loops over samples, vectorised over neurons; (m,) scratch only."""
    n, d = X.shape
    m = P.shape[1]
    for k in range(d + 1):
        for j in range(m):
            G[k, j] = 0.0
    L = 0.0
    a = P[d]
    for i in range(n):
        xk = X[i, 0]
        for j in range(m):
            zrow[j] = xk * P[0, j]
        for k in range(1, d):
            xk = X[i, k]
            for j in range(m):
                zrow[j] += xk * P[k, j]
        li, dli = ell(c * _dot_sigma(a, zrow, gamma), y[i], code)
        L += sw[i] * li
        ri = R * sw[i] * dli
        rg = ri * gamma
        for j in range(m):
            s = zrow[j]
            coef = ri if s > 0.0 else rg  # r_i σ'(z_ij), σ'(0) = γ (0 for ReLU)
            G[d, j] += coef * s  # r_i σ(z_ij) = r_i σ'(z_ij) z_ij
            zrow[j] = coef
        for k in range(d):
            xk = X[i, k]
            for j in range(m):
                G[k, j] += xk * zrow[j]
    _finish_grad(P, G, cw, ca, train_out)
    return R * L


@jit
def _eval_blas(X, XT, y, sw, P, gamma, c, cw, ca, code, R, train_out, Z, G):
    """L and ∇L with two GEMMs: Z = X P[:d] (n, m), then G[:d] = Xᵀ (r ⊙ σ'(Z)) (Z reused).
    Passes over Z run along neurons (unit stride), which suits the small-n problems of the
    papers; h_i is a fixed-order sum (``_dot_sigma``)."""
    n, d = X.shape
    m = P.shape[1]
    np.dot(X, P[:d], Z)
    for j in range(m):
        G[d, j] = 0.0
    L = 0.0
    a = P[d]
    for i in range(n):
        zi = Z[i]
        li, dli = ell(c * _dot_sigma(a, zi, gamma), y[i], code)
        L += sw[i] * li
        ri = R * sw[i] * dli
        rg = ri * gamma
        for j in range(m):
            s = zi[j]
            coef = ri if s > 0.0 else rg
            G[d, j] += coef * s
            zi[j] = coef
    np.dot(XT, Z, G[:d])
    _finish_grad(P, G, cw, ca, train_out)
    return R * L


@jit
def evaluate(X, XT, y, sw, P, gamma, c, cw, ca, code, R, train_out, use_blas, zrow, Z, G):
    """Dispatch to the BLAS or the fused path; returns L and fills G = D∇L (packed layout).
    ``zrow`` is (m,) scratch of the fused path; ``Z`` (n, m) that of the BLAS path."""
    if use_blas:
        return _eval_blas(X, XT, y, sw, P, gamma, c, cw, ca, code, R, train_out, Z, G)
    return _eval_fused(X, y, sw, P, gamma, c, cw, ca, code, R, train_out, zrow, G)


@jit
def _grad(X, XT, y, sw, W, a, gamma, c, cw, ca, code, R, train_out, use_blas, zrow, Z, P, G,
          gW, ga):
    """L and D∇L = (lr_w ∂L/∂W, lr_a ∂L/∂a) in the public layout (one evaluation; used by
    loss_grad)."""
    pack(W, a, P)
    L = evaluate(X, XT, y, sw, P, gamma, c, cw, ca, code, R, train_out, use_blas, zrow, Z, G)
    unpack(G, gW, ga)
    return L


@jit
def _forward(X, W, a, gamma, c, zrow, out):
    """out_i = c Σ_j a_j σ(⟨w_j, x_i⟩)."""
    n, d = X.shape
    m = W.shape[0]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for k in range(d):
                s += X[i, k] * W[j, k]
            zrow[j] = s
        out[i] = c * _dot_sigma(a, zrow, gamma)


@jit
def _loss_from_h(h, y, sw, code, R):
    """L = R Σ_i s_i ℓ(h_i, y_i)."""
    L = 0.0
    for i in range(h.shape[0]):
        li, _ = ell(h[i], y[i], code)
        L += sw[i] * li
    return R * L


@jit
def rates(P, G):
    """(Σ_j 2⟨−g_j, w_j⟩, Σ_{‖w_j‖>0} ‖g_j − ⟨g_j,w_j⟩w_j/‖w_j‖²‖ / ‖w_j‖)."""
    d = P.shape[0] - 1
    m = P.shape[1]
    nr = 0.0
    dr = 0.0
    for j in range(m):
        ww = 0.0
        gw = 0.0
        for k in range(d):
            ww += P[k, j] * P[k, j]
            gw += G[k, j] * P[k, j]
        nr -= 2.0 * gw
        if ww > 0.0:
            q = gw / ww
            pp = 0.0
            for k in range(d):
                v = G[k, j] - q * P[k, j]
                pp += v * v
            dr += np.sqrt(pp / ww)
    return nr, dr


@jit
def sample(P, G, t, L, grid, gi, ns, out_t, out_l, out_nr, out_dr):
    """Record (t, L, Min et al.'s two rates) as sample `ns` and skip every grid time ≤ t;
    returns the new (grid index, sample count)."""
    nr, dr = rates(P, G)
    out_t[ns] = t
    out_l[ns] = L
    out_nr[ns] = nr
    out_dr[ns] = dr
    ns += 1
    while gi < grid.shape[0] and grid[gi] <= t:
        gi += 1
    return gi, ns


@jit
def params_ok(P):
    """True iff every parameter is finite with magnitude ≤ DIVERGENCE_BOUND."""
    nbad = 0
    for k in range(P.shape[0]):
        for j in range(P.shape[1]):
            nbad += 0 if abs(P[k, j]) <= DIVERGENCE_BOUND else 1
    return nbad == 0


@jit
def shift(P, alpha, G, Pt):
    """Pt = P − α G over all rows (G[d] ≡ 0 when a is frozen, so a is copied exactly)."""
    for k in range(P.shape[0]):
        for j in range(P.shape[1]):
            Pt[k, j] = P[k, j] - alpha * G[k, j]


@jit
def first_grid_after(grid, t):
    """Index of the first grid time strictly greater than t."""
    return np.searchsorted(grid, t, side="right")


# --------------------------------------------------------------------------- Python side


def use_blas_path(n: int, d: int, m: int) -> bool:
    """Size rule for the evaluation path: BLAS iff n·m·d ≥ BLAS_MIN_WORK."""
    return n * m * d >= BLAS_MIN_WORK


def _resolve_path(p: Problem, m: int, path: str | None) -> bool:
    if path is None:
        n, d = p.X.shape
        return use_blas_path(n, d, m)
    return path == "blas"


def reduction_factor(p: Problem) -> float:
    """R = 1/n for "mean", 1 for "sum"."""
    return 1.0 / p.X.shape[0] if p.reduction == "mean" else 1.0


def _xt(X: np.ndarray, blas: bool) -> np.ndarray:
    """Xᵀ as a C-contiguous (d, n) array for the second GEMM (unused by the fused path)."""
    return np.ascontiguousarray(X.T) if blas else np.empty((0, 0))


def sample_buffers(cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Output arrays (t, loss, norm_rate, dir_rate) for up to ``cap`` samples."""
    k = max(int(cap), 0)
    return np.empty(k), np.empty(k), np.empty(k), np.empty(k)


def samples_from(buf: tuple[np.ndarray, ...], ns: int) -> Samples:
    """The first ``ns`` samples of ``buf`` (copied)."""
    return Samples(buf[0][:ns].copy(), buf[1][:ns].copy(), buf[2][:ns].copy(),
                   buf[3][:ns].copy())


def forward(p: Problem, W: np.ndarray, a: np.ndarray, X: np.ndarray | None = None,
            path: str | None = None) -> np.ndarray:
    """h_i = c Σ_j a_j σ(⟨w_j, x_i⟩) on X (default p.X); both paths agree to round-off."""
    X = p.X if X is None else np.ascontiguousarray(X, dtype=np.float64)
    W = np.ascontiguousarray(W, dtype=np.float64)
    a = np.ascontiguousarray(a, dtype=np.float64)
    n = X.shape[0]
    m = W.shape[0]
    if _resolve_path(p, m, path):
        with np.errstate(all="ignore"):  # overflow is reported by the caller's checks
            Z = X @ W.T
            return float(p.c) * (np.where(Z > 0.0, Z, float(p.gamma) * Z) @ a)
    out = np.empty(n)
    call(_forward)(X, W, a, float(p.gamma), float(p.c), np.empty(m), out)
    return out


def loss_value(p: Problem, W: np.ndarray, a: np.ndarray) -> float:
    """L = R Σ_i s_i ℓ(h_i, y_i)."""
    return float(call(_loss_from_h)(forward(p, W, a), p.y, p.sw, LOSS_CODES[p.loss],
                              reduction_factor(p)))


def loss_grad(p: Problem, W: np.ndarray, a: np.ndarray,
              path: str | None = None) -> tuple[float, np.ndarray, np.ndarray]:
    """(L, ∂L/∂W (m, d), ∂L/∂a (m,)), each times its layer's rate (p.lr_w, p.lr_a: the flow's
    D∇L; ∇L itself for rates 1); ∂L/∂a ≡ 0 when the output layer is frozen."""
    n, d = p.X.shape
    W = np.ascontiguousarray(W, dtype=np.float64)
    a = np.ascontiguousarray(a, dtype=np.float64)
    m = W.shape[0]
    blas = _resolve_path(p, m, path)
    if blas:
        limit_core_blas()
    gW = np.empty((m, d))
    ga = np.empty(m)
    L = call(_grad)(p.X, _xt(p.X, blas), p.y, p.sw, W, a, float(p.gamma), float(p.c), p.c_w,
                    p.c_a, LOSS_CODES[p.loss], reduction_factor(p), bool(p.train_output), blas,
                    np.empty(m), np.empty((n, m) if blas else (0, 0)), np.empty((d + 1, m)),
                    np.empty((d + 1, m)), gW, ga)
    return float(L), gW, ga


class Workspace:
    """One run's state, shared by the drivers that advance it (gd, gd_split, gf).

    ``W``/``a`` are the public copies of the parameters (updated in place); ``P``/``G`` the
    packed parameters and the gradient at the current point (valid when ``have_grad``), whose
    loss is ``L``. ``data`` and ``model`` are the leading arguments of ``evaluate``.
    """

    def __init__(self, p: Problem, W: np.ndarray, a: np.ndarray, path: str | None) -> None:
        self.problem = p
        self.W = np.array(W, dtype=np.float64, order="C")
        self.a = np.array(a, dtype=np.float64)
        n, d = p.X.shape
        m = self.W.shape[0]
        self.use_blas = _resolve_path(p, m, path)
        if self.use_blas:
            limit_core_blas()
        self.data = (p.X, _xt(p.X, self.use_blas), p.y, p.sw)
        self.model = (float(p.gamma), float(p.c), p.c_w, p.c_a, LOSS_CODES[p.loss],
                      reduction_factor(p), bool(p.train_output), self.use_blas)
        self.zrow = np.empty(m)  # scratch of the fused path
        self.Z = np.empty((n, m) if self.use_blas else (0, 0))  # scratch of the BLAS path
        self.P = np.empty((d + 1, m))
        self.G = np.empty((d + 1, m))
        self.have_grad = False
        self.L = np.nan

    @property
    def shape(self) -> tuple[int, int, int]:
        """(n, d, m)."""
        n, d = self.problem.X.shape
        return n, d, self.W.shape[0]

    @property
    def loss(self) -> float:
        """Loss at the current point if already evaluated, else NaN."""
        return self.L if self.have_grad else float("nan")


class WorkspaceViews:
    """The state views every stepper exposes from its ``ws: Workspace`` (the ``Stepper``
    protocol's ``W``, ``a``, ``use_blas`` and ``loss``): one definition for gd and gf."""

    ws: Workspace

    @property
    def W(self) -> np.ndarray:
        return self.ws.W

    @property
    def a(self) -> np.ndarray:
        return self.ws.a

    @property
    def use_blas(self) -> bool:
        return self.ws.use_blas

    @property
    def loss(self) -> float:
        return self.ws.loss
