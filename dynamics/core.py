"""Numba kernels for two-layer (leaky) ReLU networks: loss, gradient, GD and gradient flow.

Model (float64 throughout)::

    h(x) = c · Σ_j a_j σ(⟨w_j, x⟩),   σ(u) = max(u, γu),   σ'(u) = 1 if u > 0 else γ

so σ'(0) = 0 for ReLU (a dead neuron stays dead, as in autograd). With z = X Wᵀ and
per-sample weights s::

    L = R Σ_i s_i ℓ(h_i, y_i),          R = 1/n ("mean") or 1 ("sum")
    r_i = R s_i ℓ'(h_i, y_i)
    ∂L/∂a_j = c Σ_i r_i σ(z_ij)          (≡ 0 when the output layer is frozen)
    ∂L/∂w_j = c a_j Σ_i r_i σ'(z_ij) x_i

Losses: square ½(ŷ−y)²; logistic ln(1+e^{−yŷ}) (softplus, stable); exponential e^{−yŷ}.

Integrators (both advance in place, one compiled call per ``advance``, GIL released):

* ``GDStepper``: θ_{k+1} = θ_k − η ∇L(θ_k), t = k·η from the integer step count.
* ``GFStepper``: dθ/dt = −∇L(θ) by adaptive Bogacki–Shampine 3(2) with FSAL and the
  step-size controller of scipy's RK23 (RMS error norm with scale atol + rtol·max(|θ|,|θ_new|)).

Two evaluation paths give the same numbers to round-off: a fused triple loop (small
problems) and a BLAS path (``np.dot`` inside numba) for large ones, chosen by n·m·d.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import numba
import numpy as np

LOSS_CODES = {"square": 0, "logistic": 1, "exponential": 2}

#: Use the BLAS path when n·m·d reaches this (measured crossover: the fused loops only win
#: for tiny problems, e.g. (n, d, m) = (3, 2, 10); BLAS + vectorised elementwise passes
#: are faster from (3, 2, 100) up).
BLAS_MIN_WORK = 256
#: Recommended gradient-flow tolerances: rtol, and atol = DEFAULT_ATOL_SCALE · max|θ0|.
DEFAULT_RTOL = 1e-6
DEFAULT_ATOL_SCALE = 1e-9
#: A parameter of magnitude above this (or non-finite) counts as divergence.
DIVERGENCE_BOUND = 1e150
# Floor of the adaptive step for neurons sliding along a ReLU kink (⟨w_j, x_i⟩ = 0 held from
# both sides: a Filippov sliding mode). There the right-hand side is discontinuous and the
# error controller would shrink the step without bound. The floor is
# h_floor = KINK_REL · rtol^(1/3) / max_j(‖∇θ_j L‖/‖θ_j‖), a tenth of the controller's smooth
# step scale; it engages only after KINK_STREAK consecutive accepted steps below it (a single
# kink crossing needs a few small steps, sliding needs them forever). At the floor a step is
# accepted if it does not increase the loss, so the flow chatters across the kink like GD
# with that step; such steps are counted (n_forced). The streak is kept across ``advance``
# calls (the driver calls once per frame) and its threshold depends on rtol (kink_streak_for:
# 8 at rtol = 1e-6). It was a fixed 50, reset on every call: on Wang & Ma's example
# (examples/two_signals.json, t = 2000) that cost 243k evaluations in the driver; now ~39k,
# and the end point is closer to GD with a small learning rate (‖ΔW‖/‖W‖ ≈ 5e-4 against GD
# η = 1e-4 instead of 1e-1: before, a neuron left the kink to the other side, as GD with
# η = 1e-3 does). See bench/REPORT.md.
KINK_REL = 0.1
KINK_STREAK = 3
#: PI step-size control (Gustafsson): after an accepted step with scaled error e_n (previous
#: accepted e_{n-1}), h ← h·min(10, 0.9·e_n^−PI_ALPHA·e_{n-1}^PI_BETA); after a rejection the
#: plain rule h·max(0.2, 0.9·e^−1/3). scipy's RK23 is PI_ALPHA = 1/3, PI_BETA = 0. Where the step
#: is held by stability (the stiff tail at a minimum) or by kink crossings (alignment), the
#: plain rule alternates growth and rejection; the memory term damps that. Measured on
#: bench/REPORT.md's two runs: rejected steps 985 → 575 and 3326 → 539 (with the per-neuron
#: error norm of _bs_error).
PI_ALPHA = 0.27
PI_BETA = 0.08


def kink_streak_for(rtol: float) -> int:
    """Accepted steps below the floor before it engages: max(KINK_STREAK, ⌈2·log10(h_floor /
    h_kink)⌉ + 2) with h_kink ≈ rtol (a step across a kink errs at first order) and h_floor ≈
    0.1·rtol^(1/3): the steps a single crossing needs to shrink to h_kink and grow back by ≤ 10×
    each, plus two. 8 at rtol = 1e-6, 14 at 1e-10 (tight tolerances keep following crossings
    exactly rather than chattering across them)."""
    r = min(max(float(rtol), 1e-300), 0.1)
    return max(KINK_STREAK, int(np.ceil(2.0 * np.log10(0.1 * r ** (-2.0 / 3.0)) - 1e-9)) + 2)

#: Threads of the BLAS that the BLAS path's GEMMs run on (numba's np.dot calls SciPy's
#: OpenBLAS, a library separate from NumPy's). 1 by default, set once when the first BLAS-path
#: object is built: on a shared 2-core host, a 2-thread GEMM next to another session or job
#: spin-waits and runs up to ~8× slower than one thread (measured: (2000, 64, 200) GD step
#: 17 ms with 1 thread vs 138 ms with 2 under load), and two concurrent simulations then
#: scale. Environment EAE_CORE_BLAS_THREADS = k sets k; 0 leaves the library's default.
#: NumPy's own BLAS is never touched. Results do not depend on it (GEMM splits no sums).
BLAS_THREADS_ENV = "EAE_CORE_BLAS_THREADS"
_blas_lock = threading.Lock()
_blas_done = False


def _limit_core_blas() -> None:
    """Apply EAE_CORE_BLAS_THREADS (default 1) to SciPy's BLAS, once; silent if unavailable."""
    global _blas_done
    if _blas_done:
        return
    with _blas_lock:
        if _blas_done:
            return
        _blas_done = True
        try:
            k = int(os.environ.get(BLAS_THREADS_ENV, "1"))
        except ValueError:
            k = 1
        if k <= 0:
            return
        try:
            import scipy.linalg.cython_blas  # noqa: F401  (the library numba binds)
            from threadpoolctl import ThreadpoolController

            ctl = ThreadpoolController()
            paths = [i["filepath"] for i in ctl.info() if i.get("user_api") == "blas"
                     and "scipy" in os.path.basename(os.path.dirname(i["filepath"]))]
            if paths:
                ctl.select(filepath=paths).limit(limits=k)
        except Exception:  # no threadpoolctl or an unknown BLAS: keep the library default
            pass


# status codes returned by the kernels
_OK, _DIVERGED, _BUDGET = 0, 1, 2
_STATUS = {_OK: "ok", _DIVERGED: "diverged", _BUDGET: "budget"}

_jit = numba.njit(cache=True, nogil=True)
# Reassociation lets LLVM vectorise the fused reductions; NaN/Inf semantics are kept
# (no "nnan"/"ninf"), so divergence checks stay valid. Results stay deterministic.
_jit_fast = numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract", "nsz"})


# --------------------------------------------------------------------------- data types


@dataclass(frozen=True)
class Problem:
    """Data and model hyper-parameters (validated by the config layer, not here)."""

    X: np.ndarray  # (n, d) float64 C-contiguous
    y: np.ndarray  # (n,)
    sw: np.ndarray  # (n,) sample weights s_i
    gamma: float
    c: float
    loss: str  # "square" | "logistic" | "exponential"
    reduction: str  # "mean" | "sum"
    train_output: bool


@dataclass
class Samples:
    """Scalars recorded at integrator points: time, loss and Min et al.'s two rates.

    norm_rate = Σ_j d‖w_j‖²/dt = Σ_j 2⟨−∇_{w_j}L, w_j⟩;
    dir_rate = Σ_{j: w_j≠0} ‖P⊥_{w_j}(−∇_{w_j}L)‖ / ‖w_j‖.
    """

    t: np.ndarray
    loss: np.ndarray
    norm_rate: np.ndarray
    dir_rate: np.ndarray


@dataclass
class Advance:
    """Result of one ``advance`` call: "ok", "diverged" or "budget", and the samples."""

    status: str
    samples: Samples


# --------------------------------------------------------------------------- kernels
#
# Layout: inside the kernels the parameters are one (d+1, m) matrix P whose rows 0..d−1 are
# Wᵀ (row k = coordinate k of every neuron) and whose row d is a; gradients G use the same
# layout. Every inner loop then runs over neurons with unit stride, so LLVM vectorises it
# whatever d is (d = 2 is common), Runge–Kutta stage combinations are flat loops over the
# trained rows, and X Wᵀ is a plain GEMM on a contiguous block. The public (m, d) W and (m,)
# a are packed into P at the start of each compiled call and unpacked at its end (O(md), no
# allocation), so the Python side never sees this layout.


@_jit
def _ell(h: float, y: float, code: int) -> tuple[float, float]:
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


@_jit
def _pack(W, a, P):
    """P[:d] ← Wᵀ, P[d] ← a."""
    m, d = W.shape
    for j in range(m):
        for k in range(d):
            P[k, j] = W[j, k]
        P[d, j] = a[j]


@_jit
def _unpack(P, W, a):
    """W ← P[:d]ᵀ, a ← P[d]."""
    m, d = W.shape
    for j in range(m):
        for k in range(d):
            W[j, k] = P[k, j]
        a[j] = P[d, j]


@_jit_fast
def _finish_grad(P, G, c, train_out):
    """G[:d] holds Σ_i r_i σ'(z_ij) x_i and G[d] Σ_i r_i σ(z_ij): scale to ∇L."""
    d = P.shape[0] - 1
    m = P.shape[1]
    for k in range(d):
        for j in range(m):
            G[k, j] *= c * P[d, j]
    for j in range(m):
        G[d, j] = c * G[d, j] if train_out else 0.0


@_jit_fast
def _eval_fused(X, y, sw, P, gamma, c, code, R, train_out, zrow, G):
    """L and ∇L (into G) by loops over samples, vectorised over neurons; (m,) scratch only."""
    n, d = X.shape
    m = P.shape[1]
    for k in range(d + 1):
        for j in range(m):
            G[k, j] = 0.0
    L = 0.0
    for i in range(n):
        xk = X[i, 0]
        for j in range(m):
            zrow[j] = xk * P[0, j]
        for k in range(1, d):
            xk = X[i, k]
            for j in range(m):
                zrow[j] += xk * P[k, j]
        hi = 0.0
        for j in range(m):
            s = zrow[j]
            hi += P[d, j] * (s if s > 0.0 else gamma * s)
        li, dli = _ell(c * hi, y[i], code)
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
    _finish_grad(P, G, c, train_out)
    return R * L


@_jit_fast
def _eval_blas(X, XT, y, sw, P, gamma, c, code, R, train_out, Z, G):
    """L and ∇L with two GEMMs: Z = X P[:d], then G[:d] = Xᵀ (r ⊙ σ'(Z)) (Z reused)."""
    n, d = X.shape
    m = P.shape[1]
    np.dot(X, P[:d], Z)
    for j in range(m):
        G[d, j] = 0.0
    L = 0.0
    for i in range(n):
        hi = 0.0
        for j in range(m):
            s = Z[i, j]
            hi += P[d, j] * (s if s > 0.0 else gamma * s)
        li, dli = _ell(c * hi, y[i], code)
        L += sw[i] * li
        ri = R * sw[i] * dli
        rg = ri * gamma
        for j in range(m):
            s = Z[i, j]
            coef = ri if s > 0.0 else rg
            G[d, j] += coef * s
            Z[i, j] = coef
    np.dot(XT, Z, G[:d])
    _finish_grad(P, G, c, train_out)
    return R * L


@_jit
def _eval(X, XT, y, sw, P, gamma, c, code, R, train_out, use_blas, zrow, Z, G):
    """Dispatch to the BLAS or the fused path; returns L and fills G."""
    if use_blas:
        return _eval_blas(X, XT, y, sw, P, gamma, c, code, R, train_out, Z, G)
    return _eval_fused(X, y, sw, P, gamma, c, code, R, train_out, zrow, G)


@_jit
def _grad(X, XT, y, sw, W, a, gamma, c, code, R, train_out, use_blas, zrow, Z, P, G, gW, ga):
    """L and (∂L/∂W, ∂L/∂a) in the public layout (one evaluation; used by loss_grad)."""
    _pack(W, a, P)
    L = _eval(X, XT, y, sw, P, gamma, c, code, R, train_out, use_blas, zrow, Z, G)
    _unpack(G, gW, ga)
    return L


@_jit_fast
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
        hi = 0.0
        for j in range(m):
            s = zrow[j]
            hi += a[j] * (s if s > 0.0 else gamma * s)
        out[i] = c * hi


@_jit
def _loss_from_h(h, y, sw, code, R):
    """L = R Σ_i s_i ℓ(h_i, y_i)."""
    L = 0.0
    for i in range(h.shape[0]):
        li, _ = _ell(h[i], y[i], code)
        L += sw[i] * li
    return R * L


@_jit
def _sample(P, G, t, L, grid, gi, ns, out_t, out_l, out_nr, out_dr):
    """Record (t, L, Min et al.'s two rates) as sample `ns` and skip every grid time ≤ t;
    returns the new (grid index, sample count)."""
    nr, dr = _rates(P, G)
    out_t[ns] = t
    out_l[ns] = L
    out_nr[ns] = nr
    out_dr[ns] = dr
    ns += 1
    while gi < grid.shape[0] and grid[gi] <= t:
        gi += 1
    return gi, ns


@_jit
def _rates(P, G):
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


@_jit
def _params_ok(P):
    """True iff every parameter is finite with magnitude ≤ DIVERGENCE_BOUND."""
    nbad = 0
    for k in range(P.shape[0]):
        for j in range(P.shape[1]):
            nbad += 0 if abs(P[k, j]) <= 1e150 else 1
    return nbad == 0


@_jit_fast
def _shift(P, alpha, G, Pt):
    """Pt = P − α G over all rows (G[d] ≡ 0 when a is frozen, so a is copied exactly)."""
    for k in range(P.shape[0]):
        for j in range(P.shape[1]):
            Pt[k, j] = P[k, j] - alpha * G[k, j]


@_jit
def _first_grid_after(grid, t):
    """Index of the first grid time strictly greater than t."""
    return np.searchsorted(grid, t, side="right")


@_jit_fast
def _gd_update(P, G, lr, rows):
    """P[:rows] −= lr G[:rows]; returns the number of entries now non-finite or > 1e150."""
    nbad = 0
    m = P.shape[1]
    for k in range(rows):
        for j in range(m):
            v = P[k, j] - lr * G[k, j]
            P[k, j] = v
            nbad += 0 if abs(v) <= 1e150 else 1
    return nbad


@_jit
def _gd_run(X, XT, y, sw, W, a, gamma, c, code, R, train_out, use_blas, lr, k0, n_steps,
            grid, zrow, Z, P, G, have_grad, L0, out_t, out_l, out_nr, out_dr):
    """Run ``n_steps`` GD steps in place from step k0; returns (status, k, n_samp, n_eval, L).

    The gradient at the current point is cached between calls in G (``have_grad``), so each
    step costs one evaluation whose forward pass also gives the loss that is recorded.
    On divergence the state is left at the first offending iterate.
    """
    _pack(W, a, P)
    d = P.shape[0] - 1
    rows = d + 1 if train_out else d
    ng = grid.shape[0]
    gi = _first_grid_after(grid, k0 * lr)
    ns = 0
    ne = 0
    k = k0
    L = L0
    st = _OK
    if not have_grad:
        L = _eval(X, XT, y, sw, P, gamma, c, code, R, train_out, use_blas, zrow, Z, G)
        ne += 1
    if not np.isfinite(L) or not _params_ok(P):
        return _DIVERGED, k, ns, ne, L
    kend = k0 + n_steps
    while True:
        t = k * lr
        if k > k0 and gi < ng and t >= grid[gi]:
            gi, ns = _sample(P, G, t, L, grid, gi, ns, out_t, out_l, out_nr, out_dr)
        if k == kend:
            break
        nbad = _gd_update(P, G, lr, rows)
        k += 1
        if nbad > 0:
            st = _DIVERGED
            L = np.nan
            break
        L = _eval(X, XT, y, sw, P, gamma, c, code, R, train_out, use_blas, zrow, Z, G)
        ne += 1
        if not np.isfinite(L):
            st = _DIVERGED
            break
    _unpack(P, W, a)
    return st, k, ns, ne, L


@_jit
def _rms_scaled(U, P, atol, rtol, rows):
    """RMS over trained parameters of U / (atol + rtol·|θ|) (scipy's initial-step norm)."""
    m = P.shape[1]
    s = 0.0
    for k in range(rows):
        for j in range(m):
            e = U[k, j] / (atol + rtol * abs(P[k, j]))
            s += e * e
    return np.sqrt(s / (rows * m))


@_jit_fast
def _col_sq_norms(A, B, rows, a2, b2):
    """a2[j] = Σ_{k<rows} A[k, j]², b2[j] = Σ_{k<rows} B[k, j]² (row sweeps, unit stride)."""
    m = A.shape[1]
    for j in range(m):
        a2[j] = 0.0
        b2[j] = 0.0
    for k in range(rows):
        for j in range(m):
            a2[j] += A[k, j] * A[k, j]
            b2[j] += B[k, j] * B[k, j]


@_jit_fast
def _max_rel_rate(P, G, sc):
    """max_j ‖∇_{θ_j}L‖ / ‖θ_j‖ over nonzero neurons (θ_j = (w_j, a_j)); ≥ 1e-300.

    Row sweeps into the (2, m) scratch ``sc`` (unit stride, vectorised), one sqrt at the end.
    """
    m = P.shape[1]
    num = sc[0]
    den = sc[1]
    _col_sq_norms(G, P, P.shape[0], num, den)  # G[d] ≡ 0 when a is frozen
    best = 0.0
    for j in range(m):
        if den[j] > 0.0:
            r = num[j] / den[j]
            best = r if r > best else best
    return max(np.sqrt(best), 1e-300)


@_jit_fast
def _bs_combine(P, hs, G1, G2, G3, G4, Pn, rows):
    """Pn = P − hs(2/9 G1 + 1/3 G2 + 4/9 G3) (rows ≥ ``rows`` copied)."""
    b1 = hs * (2.0 / 9.0)
    b2 = hs * (1.0 / 3.0)
    b3 = hs * (4.0 / 9.0)
    m = P.shape[1]
    for k in range(P.shape[0]):
        if k < rows:
            for j in range(m):
                Pn[k, j] = P[k, j] - (b1 * G1[k, j] + b2 * G2[k, j] + b3 * G3[k, j])
        else:
            for j in range(m):
                Pn[k, j] = P[k, j]


@_jit_fast
def _bs_error(P, Pn, hs, G1, G2, G3, G4, atol, rtol, rows, sc):
    """RMS over trained parameters of the embedded error h Σ E_s k_s, E = (5/72, −1/12, −1/9,
    1/8), k = −g, each scaled by its neuron's tolerance atol + rtol·max(‖θ_j‖, ‖θ_j,new‖).

    Per neuron, not per component (scipy's RK23 uses atol + rtol·max(|θ|, |θ_new|) per
    component): during alignment neurons rotate, so their components keep passing through
    zero, where a per-component scale collapses to atol and forces tiny steps although the
    neuron as a whole is followed to relative accuracy rtol.
    """
    e1 = -hs * (5.0 / 72.0)
    e2 = hs * (1.0 / 12.0)
    e3 = hs * (1.0 / 9.0)
    e4 = -hs * (1.0 / 8.0)
    m = P.shape[1]
    n0 = sc[0]
    n1 = sc[1]
    _col_sq_norms(P, Pn, rows, n0, n1)
    for j in range(m):
        n0[j] = 1.0 / (atol + rtol * np.sqrt(max(n0[j], n1[j])))
    s = 0.0
    for k in range(rows):
        for j in range(m):
            er = e1 * G1[k, j] + e2 * G2[k, j] + e3 * G3[k, j] + e4 * G4[k, j]
            q = er * n0[j]
            s += q * q
    return np.sqrt(s / (rows * m))


@_jit
def _copy2(A, B):
    """B ← A (same shape, no allocation)."""
    for k in range(A.shape[0]):
        for j in range(A.shape[1]):
            B[k, j] = A[k, j]


@_jit
def _gf_run(X, XT, y, sw, W, a, gamma, c, code, R, train_out, use_blas, t, t_target,
            max_evals, rtol, atol, h, have_f, L, grid, zrow, Z, kink_rel, kink_streak,
            streak, err_prev, P, Pn, Pt, G1, G2, G3, G4, sc, out_t, out_l, out_nr, out_dr):
    """Bogacki–Shampine 3(2) on dθ/dt = −∇L(θ) from t to exactly t_target (in place).

    Returns (status, t, h_next, L, have_f, n_samples, n_evals, n_accepted, n_rejected,
    n_forced, streak, err_prev). ``streak`` (consecutive accepted steps below the kink floor)
    carries over between calls, so chunked driving engages the floor as early as one long call.
    Steps at the kink floor (see KINK_REL) are accepted when the loss does not increase and
    counted in n_forced.
    G1 holds ∇L at the current point (FSAL), kept between calls. Controller: PI (PI_ALPHA,
    PI_BETA; the error memory ``err_prev`` carries over between calls), otherwise as scipy
    RK23: safety 0.9, factor in [0.2, 10], no growth right after a rejection; the error norm
    is per neuron (_bs_error). When the last step is clipped to land on t_target, the
    unclipped proposal is kept for the next call. State on "diverged": the first accepted
    point whose loss or parameters are non-finite or exceed DIVERGENCE_BOUND, or the last
    accepted point if the step size collapses. Accepted points and FSAL gradients are
    swapped in, not copied.
    """
    odd = False  # G1/G4 swapped an odd number of times
    _pack(W, a, P)
    d = P.shape[0] - 1
    rows = d + 1 if train_out else d
    ng = grid.shape[0]
    gi = _first_grid_after(grid, t)
    ns = 0
    ne = 0
    nacc = 0
    nrej = 0
    nforced = 0
    st = _OK
    if not have_f:
        L = _eval(X, XT, y, sw, P, gamma, c, code, R, train_out, use_blas, zrow, Z, G1)
        ne += 1
        have_f = True
    if not np.isfinite(L) or not _params_ok(P):
        return _DIVERGED, t, h, L, have_f, ns, ne, nacc, nrej, nforced, streak, err_prev
    if h <= 0.0:
        # scipy's select_initial_step (order 3), with f = −∇L
        d0 = _rms_scaled(P, P, atol, rtol, rows)
        d1 = _rms_scaled(G1, P, atol, rtol, rows)
        h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
        _shift(P, h0, G1, Pt)
        _eval(X, XT, y, sw, Pt, gamma, c, code, R, train_out, use_blas, zrow, Z, G2)
        ne += 1
        _shift(G2, 1.0, G1, G3)  # G3 = f1 − f0 (sign irrelevant)
        d2 = _rms_scaled(G3, P, atol, rtol, rows) / h0
        if d1 <= 1e-15 and d2 <= 1e-15:
            h1 = max(1e-6, h0 * 1e-3)
        else:
            h1 = (0.01 / max(d1, d2)) ** (1.0 / 3.0)
        h = min(100.0 * h0, h1)
        if not h > 0.0 or not np.isfinite(h):
            h = 1e-6

    while t < t_target:
        rejected = False
        h_floor = kink_rel * rtol ** (1.0 / 3.0) / _max_rel_rate(P, G1, sc)
        while True:
            if ne + 3 > max_evals:
                st = _BUDGET
                break
            min_step = 10.0 * (np.nextafter(t, np.inf) - t)
            if h < min_step:
                st = _DIVERGED
                break
            h_prop = h
            t_new = t + h
            clipped = False
            if t_new >= t_target:
                t_new = t_target
                hs = t_new - t
                clipped = True
            else:
                hs = h
            # stage 2: θ + h/2 k1 ; stage 3: θ + 3h/4 k2 ; k = −g
            _shift(P, 0.5 * hs, G1, Pt)
            _eval(X, XT, y, sw, Pt, gamma, c, code, R, train_out, use_blas, zrow, Z, G2)
            _shift(P, 0.75 * hs, G2, Pt)
            _eval(X, XT, y, sw, Pt, gamma, c, code, R, train_out, use_blas, zrow, Z, G3)
            _bs_combine(P, hs, G1, G2, G3, G4, Pn, rows)
            L_new = _eval(X, XT, y, sw, Pn, gamma, c, code, R, train_out, use_blas, zrow, Z,
                          G4)
            ne += 3
            err = _bs_error(P, Pn, hs, G1, G2, G3, G4, atol, rtol, rows, sc)
            if err < 1.0:
                if err == 0.0:
                    factor = 10.0
                else:
                    factor = min(10.0, 0.9 * err ** (-PI_ALPHA) * err_prev ** PI_BETA)
                err_prev = max(err, 1e-4)
                if rejected:
                    factor = min(1.0, factor)
                h = hs * factor
                if clipped and not rejected:
                    h = max(h, h_prop)
                break
            floor_on = streak >= kink_streak
            if floor_on and hs <= h_floor * 1.000001 and np.isfinite(L_new) and L_new <= L:
                nforced += 1  # at the kink floor: accept a loss-decreasing step
                h = h_floor
                break
            # rejected (NaN/inf error also lands here)
            if np.isfinite(err):
                h = hs * max(0.2, 0.9 * err ** (-1.0 / 3.0))
            else:
                h = hs * 0.2
            if floor_on and h < h_floor and hs > h_floor * 1.000001:
                h = h_floor
            rejected = True
            nrej += 1
        if st != _OK:
            break
        # accept: swap the new point and its gradient in (FSAL)
        nacc += 1
        if not clipped:  # a step cut short to land on t_target says nothing about kinks
            streak = streak + 1 if hs < h_floor * 1.000001 else 0
        t = t_new
        P, Pn = Pn, P
        G1, G4 = G4, G1
        odd = not odd
        L = L_new
        if not np.isfinite(L) or not _params_ok(P):
            st = _DIVERGED
            break
        if gi < ng and t >= grid[gi]:
            gi, ns = _sample(P, G1, t, L, grid, gi, ns, out_t, out_l, out_nr, out_dr)
    _unpack(P, W, a)
    if odd:  # the caller's G1 buffer is now the local G4
        _copy2(G1, G4)
    return st, t, h, L, have_f, ns, ne, nacc, nrej, nforced, streak, err_prev


# --------------------------------------------------------------------------- wrappers


def use_blas_path(n: int, d: int, m: int) -> bool:
    """Size rule for the evaluation path: BLAS iff n·m·d ≥ BLAS_MIN_WORK."""
    return n * m * d >= BLAS_MIN_WORK


def default_tolerances(W0: np.ndarray, a0: np.ndarray) -> tuple[float, float]:
    """(rtol, atol) = (1e-6, 1e-9 · max|θ0|): atol scales with the initialisation size."""
    scale = max(float(np.max(np.abs(W0), initial=0.0)), float(np.max(np.abs(a0), initial=0.0)))
    return DEFAULT_RTOL, DEFAULT_ATOL_SCALE * (scale if scale > 0.0 else 1.0)


def _resolve_path(p: Problem, m: int, path: str | None) -> bool:
    if path is None:
        n, d = p.X.shape
        return use_blas_path(n, d, m)
    return path == "blas"


def _R(p: Problem) -> float:
    return 1.0 / p.X.shape[0] if p.reduction == "mean" else 1.0


def _empty_samples(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return np.empty(k), np.empty(k), np.empty(k), np.empty(k)


def _samples(buf: tuple[np.ndarray, ...], ns: int) -> Samples:
    return Samples(buf[0][:ns].copy(), buf[1][:ns].copy(), buf[2][:ns].copy(),
                   buf[3][:ns].copy())


def forward(p: Problem, W: np.ndarray, a: np.ndarray, X: np.ndarray | None = None,
            path: str | None = None) -> np.ndarray:
    """h_i = c Σ_j a_j σ(⟨w_j, x_i⟩) on X (default p.X). ``path`` is accepted for
    compatibility; both paths give the same numbers to round-off."""
    X = p.X if X is None else np.ascontiguousarray(X, dtype=np.float64)
    W = np.ascontiguousarray(W, dtype=np.float64)
    a = np.ascontiguousarray(a, dtype=np.float64)
    n = X.shape[0]
    m = W.shape[0]
    blas = _resolve_path(p, m, path)
    if blas:
        with np.errstate(all="ignore"):  # overflow is reported by the caller's checks
            Z = X @ W.T
            return float(p.c) * (np.where(Z > 0.0, Z, float(p.gamma) * Z) @ a)
    out = np.empty(n)
    _forward(X, W, a, float(p.gamma), float(p.c), np.empty(m), out)
    return out


def loss_value(p: Problem, W: np.ndarray, a: np.ndarray) -> float:
    """L = R Σ_i s_i ℓ(h_i, y_i)."""
    return float(_loss_from_h(forward(p, W, a), p.y, p.sw, LOSS_CODES[p.loss], _R(p)))


def loss_grad(p: Problem, W: np.ndarray, a: np.ndarray,
              path: str | None = None) -> tuple[float, np.ndarray, np.ndarray]:
    """(L, ∂L/∂W (m, d), ∂L/∂a (m,)); ∂L/∂a ≡ 0 when the output layer is frozen."""
    n, d = p.X.shape
    W = np.ascontiguousarray(W, dtype=np.float64)
    a = np.ascontiguousarray(a, dtype=np.float64)
    m = W.shape[0]
    blas = _resolve_path(p, m, path)
    if blas:
        _limit_core_blas()
    gW = np.empty((m, d))
    ga = np.empty(m)
    L = _grad(p.X, _xt(p.X, blas), p.y, p.sw, W, a, float(p.gamma), float(p.c), LOSS_CODES[p.loss],
              _R(p), bool(p.train_output), blas, np.empty(m),
              np.empty((n, m) if blas else (0, 0)), np.empty((d + 1, m)), np.empty((d + 1, m)),
              gW, ga)
    return float(L), gW, ga



def _xt(X: np.ndarray, blas: bool) -> np.ndarray:
    """Xᵀ as a C-contiguous (d, n) array for the second GEMM (unused by the fused path)."""
    return np.ascontiguousarray(X.T) if blas else np.empty((0, 0))


class _Base:
    """Shared state: copied parameters, gradient buffers and scratch for one problem."""

    def __init__(self, p: Problem, W: np.ndarray, a: np.ndarray, path: str | None) -> None:
        self.p = p
        self.W = np.array(W, dtype=np.float64, order="C")
        self.a = np.array(a, dtype=np.float64)
        n, d = p.X.shape
        m = self.W.shape[0]
        self.use_blas = _resolve_path(p, m, path)
        if self.use_blas:
            _limit_core_blas()
        self._args = (p.X, _xt(p.X, self.use_blas), p.y, p.sw)
        self._model = (float(p.gamma), float(p.c), LOSS_CODES[p.loss], _R(p),
                       bool(p.train_output), self.use_blas)
        self._zrow = np.empty(m)
        self._Z = np.empty((n, m) if self.use_blas else (0, 0))
        self._P = np.empty((d + 1, m))  # packed parameters (see "Layout" above)
        self._G = np.empty((d + 1, m))  # gradient at the current point, same layout
        self._have_grad = False
        self._L = np.nan
        self.n_evals = 0

    @property
    def loss(self) -> float:
        """Loss at the current point if already evaluated, else NaN."""
        return self._L if self._have_grad else float("nan")


class GDStepper(_Base):
    """Full-batch gradient descent θ_{k+1} = θ_k − η ∇L(θ_k); time t = k·η.

    On divergence the state is left at the first offending iterate (non-finite loss, or a
    parameter non-finite or above DIVERGENCE_BOUND in magnitude); ``k``/``t`` point to it.
    """

    def __init__(self, p: Problem, W: np.ndarray, a: np.ndarray, lr: float,
                 path: str | None = None, blocks: int | None = None) -> None:
        super().__init__(p, W, a, path)
        self.lr = float(lr)
        self.k = 0
        from .split import blocks_for  # split.py builds on this module

        n, d = p.X.shape
        m = self.W.shape[0]
        #: sample blocks stepped on parallel threads (dynamics/split.py; BLAS path only);
        #: 1 = this module's loop. None: by size and EAE_CORE_THREADS.
        if not self.use_blas:
            self.blocks = 1
        elif blocks is None:
            self.blocks = blocks_for(n, d, m)
        else:
            self.blocks = max(1, min(int(blocks), n))
        self._split_xt: list[np.ndarray] | None = None  # per-block Xᵀ, made on first use

    @property
    def t(self) -> float:
        return self.k * self.lr

    def advance(self, n_steps: int, grid: np.ndarray) -> Advance:
        """Take ``n_steps`` steps; sample at the first step k·η ≥ g for each g in (t0, t1]."""
        t0 = self.k * self.lr
        t1 = (self.k + n_steps) * self.lr
        cap = int(np.searchsorted(grid, t1, "right") - np.searchsorted(grid, t0, "right"))
        buf = _empty_samples(max(cap, 0))
        if self.blocks > 1:
            from .split import gd_advance

            st, k, ns, ne, L = gd_advance(self, self.blocks, int(n_steps), grid, buf)
        else:
            st, k, ns, ne, L = _gd_run(*self._args, self.W, self.a, *self._model, self.lr,
                                       self.k, int(n_steps), grid, self._zrow, self._Z,
                                       self._P, self._G, self._have_grad, self._L, *buf)
        self.k = int(k)
        self.n_evals += int(ne)
        self._L = float(L)
        self._have_grad = st == _OK
        return Advance(_STATUS[st], _samples(buf, ns))


class GFStepper(_Base):
    """Gradient flow dθ/dt = −∇L(θ) by adaptive Bogacki–Shampine 3(2), PI step control,
    error per neuron relative to ‖θ_j‖ (see _bs_error).

    ``h0=None`` picks the first step by scipy's rule. On "diverged" the state is at the
    first accepted point with non-finite loss/parameters or |θ| > DIVERGENCE_BOUND, or at the
    last accepted point if the step size collapsed below 10 ulp(t).
    """

    def __init__(self, p: Problem, W: np.ndarray, a: np.ndarray, rtol: float, atol: float,
                 h0: float | None = None, path: str | None = None,
                 kink_rel: float = KINK_REL, kink_streak: int | None = None) -> None:
        super().__init__(p, W, a, path)
        self.rtol = float(rtol)
        self.atol = float(atol)
        self.h = float(h0) if h0 is not None else 0.0
        self.t = 0.0
        self.n_accepted = 0
        self.n_rejected = 0
        self.n_forced = 0  # steps accepted at the kink floor (sliding neurons)
        self.kink_rel = float(kink_rel)
        self.kink_streak = int(kink_streak if kink_streak is not None
                               else kink_streak_for(self.rtol))
        self._streak = 0  # consecutive accepted steps below the kink floor (kept across calls)
        self._err_prev = 1e-4  # last accepted step's scaled error (PI controller memory)
        self._sc = np.empty((2, self.W.shape[0]))  # scratch of the kink-floor rate
        self._stage = tuple(np.empty_like(self._P) for _ in range(5))  # Pn, Pt, G2, G3, G4

    def advance(self, t_target: float, max_evals: int, grid: np.ndarray) -> Advance:
        """Integrate to exactly ``t_target`` or until ``max_evals`` evaluations (this call).

        Samples at the first accepted step end ≥ g for each grid time g in (t0, t_reached].
        """
        t_target = float(t_target)
        cap = int(np.searchsorted(grid, t_target, "right")
                  - np.searchsorted(grid, self.t, "right"))
        buf = _empty_samples(max(cap, 0))
        Pn, Pt, G2, G3, G4 = self._stage
        st, t, h, L, hf, ns, ne, na, nr, nf, streak, ep = _gf_run(
            *self._args, self.W, self.a, *self._model, self.t, t_target, int(max_evals),
            self.rtol, self.atol, self.h, self._have_grad, self._L, grid, self._zrow, self._Z,
            self.kink_rel, self.kink_streak, self._streak, self._err_prev, self._P, Pn, Pt,
            self._G, G2, G3, G4, self._sc, *buf)
        self.t = float(t)
        self.h = float(h)
        self._L = float(L)
        self._have_grad = bool(hf) and st != _DIVERGED
        self.n_evals += int(ne)
        self.n_accepted += int(na)
        self.n_rejected += int(nr)
        self.n_forced += int(nf)
        self._streak = int(streak)
        self._err_prev = float(ep)
        return Advance(_STATUS[st], _samples(buf, ns))
