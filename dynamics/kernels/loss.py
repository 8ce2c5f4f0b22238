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

from typing import NamedTuple

import numpy as np

from .cache import call, jit
from .problem import DIVERGENCE_BOUND, LOSS_CODES, Problem, Samples
from .threads import limit_core_blas

#: Use the BLAS path when n·m·d reaches this (measured crossover: the fused loops only win
#: for tiny problems, e.g. (n, d, m) = (3, 2, 10); BLAS + vectorised elementwise passes
#: are faster from (3, 2, 100) up).
BLAS_MIN_WORK = 256


# ----------------------------------------------------------------- records the kernels take
# Named tuples (numba types them field by field; its disk cache keeps working): a kernel's
# arguments travel as a few records instead of a dozen positions, with the same operations.


class Data(NamedTuple):
    """The samples: X (n, d), Xᵀ (d, n; (0, 0) on the fused path), targets y, weights s."""

    X: np.ndarray
    XT: np.ndarray
    y: np.ndarray
    sw: np.ndarray


class Model(NamedTuple):
    """The network and loss: leak γ, output scale c, the layers' factors c_w = c·lr_w and
    c_a = c·lr_a, loss code, reduction R, output layer trained, BLAS path."""

    gamma: float
    c: float
    cw: float
    ca: float
    code: int
    R: float
    train_out: bool
    use_blas: bool


class Scratch(NamedTuple):
    """Scratch of an evaluation: ``zrow`` (m,) of the fused path, ``Z`` (n, m) of BLAS's."""

    zrow: np.ndarray
    Z: np.ndarray


class Net(NamedTuple):
    """What ``evaluate`` needs besides the point: data, model and scratch."""

    data: Data
    model: Model
    scratch: Scratch


class Point(NamedTuple):
    """A run's point: public W (m, d) and a (m,), packed P (d+1, m) and its gradient G."""

    W: np.ndarray
    a: np.ndarray
    P: np.ndarray
    G: np.ndarray


class GDState(NamedTuple):
    """Where a GD run is between calls: step k (t = kη), the loss L at θ_k and whether
    ``point.G`` holds ∇L(θ_k) (then L is valid too)."""

    k: int
    L: float
    have_grad: bool


class Recorder(NamedTuple):
    """Sample times ``grid`` and the buffers samples go to (t, loss and Min et al.'s rates)."""

    grid: np.ndarray
    t: np.ndarray
    loss: np.ndarray
    norm_rate: np.ndarray
    dir_rate: np.ndarray


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
def _eval_fused(net, P, G):
    """L and ∇L (into G) by loops over samples, vectorised over neurons; (m,) scratch only."""
    X, y, sw = net.data.X, net.data.y, net.data.sw
    gamma, c, code, R = net.model.gamma, net.model.c, net.model.code, net.model.R
    zrow = net.scratch.zrow
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
    _finish_grad(P, G, net.model.cw, net.model.ca, net.model.train_out)
    return R * L


@jit
def _eval_blas(net, P, G):
    """L and ∇L with two GEMMs: Z = X P[:d] (n, m), then G[:d] = Xᵀ (r ⊙ σ'(Z)) (Z reused).
    Passes over Z run along neurons (unit stride), which suits the small-n problems of the
    papers; h_i is a fixed-order sum (``_dot_sigma``)."""
    X, XT, y, sw = net.data
    gamma, c, code, R = net.model.gamma, net.model.c, net.model.code, net.model.R
    Z = net.scratch.Z
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
    _finish_grad(P, G, net.model.cw, net.model.ca, net.model.train_out)
    return R * L


@jit
def evaluate(net, P, G):
    """Dispatch to the BLAS or the fused path (``net.model.use_blas``); returns L at P and
    fills G = D∇L (packed layout)."""
    if net.model.use_blas:
        return _eval_blas(net, P, G)
    return _eval_fused(net, P, G)


@jit
def _grad(net, point, gW, ga):
    """L and D∇L = (lr_w ∂L/∂W, lr_a ∂L/∂a) at (point.W, point.a) in the public layout (one
    evaluation, packed into point.P and point.G; used by loss_grad)."""
    pack(point.W, point.a, point.P)
    L = evaluate(net, point.P, point.G)
    unpack(point.G, gW, ga)
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
def sample(P, G, t, L, rec, gi, ns):
    """Record (t, L, Min et al.'s two rates) as sample `ns` of ``rec`` and skip every grid
    time ≤ t; returns the new (grid index, sample count)."""
    nr, dr = rates(P, G)
    rec.t[ns] = t
    rec.loss[ns] = L
    rec.norm_rate[ns] = nr
    rec.dir_rate[ns] = dr
    ns += 1
    grid = rec.grid
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


def recorder(grid: np.ndarray, cap: int) -> Recorder:
    """A ``Recorder`` of ``grid`` with room for up to ``cap`` samples."""
    k = max(int(cap), 0)
    return Recorder(grid, np.empty(k), np.empty(k), np.empty(k), np.empty(k))


def samples_from(rec: Recorder, ns: int) -> Samples:
    """The first ``ns`` samples of ``rec``: its own buffers when it is full (handed over, not
    copied), else copies."""
    if ns == rec.t.shape[0]:
        return Samples(rec.t, rec.loss, rec.norm_rate, rec.dir_rate)
    return Samples(rec.t[:ns].copy(), rec.loss[:ns].copy(), rec.norm_rate[:ns].copy(),
                   rec.dir_rate[:ns].copy())


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
    d = p.X.shape[1]
    W = np.ascontiguousarray(W, dtype=np.float64)
    a = np.ascontiguousarray(a, dtype=np.float64)
    m = W.shape[0]
    blas = _resolve_path(p, m, path)
    if blas:
        limit_core_blas()
    gW = np.empty((m, d))
    ga = np.empty(m)
    point = Point(W, a, np.empty((d + 1, m)), np.empty((d + 1, m)))
    L = call(_grad)(net_of(p, m, blas), point, gW, ga)
    return float(L), gW, ga


def model_of(p: Problem, blas: bool) -> Model:
    """The ``Model`` record of ``p`` (on the BLAS path or not)."""
    return Model(float(p.gamma), float(p.c), p.c_w, p.c_a, LOSS_CODES[p.loss],
                 reduction_factor(p), bool(p.train_output), blas)


def net_of(p: Problem, m: int, blas: bool) -> Net:
    """``evaluate``'s ``Net`` for ``p`` at width ``m`` (on the BLAS path or not), with fresh
    scratch."""
    n = p.X.shape[0]
    return Net(Data(p.X, _xt(p.X, blas), p.y, p.sw), model_of(p, blas),
               Scratch(np.empty(m), np.empty((n, m) if blas else (0, 0))))


class Workspace:
    """One run's state, shared by the drivers that advance it (gd, gd_split, gf).

    ``W``/``a`` are the public copies of the parameters (updated in place); ``P``/``G`` the
    packed parameters and the gradient at the current point (valid when ``have_grad``), whose
    loss is ``L``; ``point`` holds the four. ``net`` (``data``, ``model`` and scratch) is
    ``evaluate``'s first argument.
    """

    def __init__(self, p: Problem, W: np.ndarray, a: np.ndarray, path: str | None) -> None:
        self.problem = p
        self.W = np.array(W, dtype=np.float64, order="C")
        self.a = np.array(a, dtype=np.float64)
        d = p.X.shape[1]
        m = self.W.shape[0]
        self.use_blas = _resolve_path(p, m, path)
        if self.use_blas:
            limit_core_blas()
        self.net = net_of(p, m, self.use_blas)
        self.P = np.empty((d + 1, m))
        self.G = np.empty((d + 1, m))
        self.point = Point(self.W, self.a, self.P, self.G)
        self.have_grad = False
        self.L = np.nan

    @property
    def data(self) -> Data:
        return self.net.data

    @property
    def model(self) -> Model:
        return self.net.model

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
