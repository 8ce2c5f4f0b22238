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
# with that step; such steps are counted (n_forced).
KINK_REL = 0.1
KINK_STREAK = 50

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


@_jit_fast
def _grad_fused(X, y, sw, W, a, gamma, c, code, R, train_out, zrow, gW, ga):
    """L and ∇L by fused loops over samples (O(nmd), only an (m,) scratch row)."""
    n, d = X.shape
    m = W.shape[0]
    gW[:, :] = 0.0
    ga[:] = 0.0
    L = 0.0
    for i in range(n):
        hi = 0.0
        for j in range(m):
            s = 0.0
            for k in range(d):
                s += X[i, k] * W[j, k]
            zrow[j] = s
            hi += a[j] * (s * (1.0 if s > 0.0 else gamma))
        hi *= c
        li, dli = _ell(hi, y[i], code)
        L += sw[i] * li
        ri = R * sw[i] * dli
        for j in range(m):
            s = zrow[j]
            coef = ri * (1.0 if s > 0.0 else gamma)  # r_i σ'(z_ij); σ(z) = σ'(z) z
            ga[j] += coef * s
            for k in range(d):
                gW[j, k] += coef * X[i, k]
    for j in range(m):
        f = c * a[j]
        for k in range(d):
            gW[j, k] *= f
        ga[j] = c * ga[j] if train_out else 0.0
    return R * L


@_jit_fast
def _grad_blas(X, y, sw, W, a, gamma, c, code, R, train_out, Z, gW, ga):
    """L and ∇L with two BLAS products: Z = X Wᵀ, then gW = (r ⊙ σ'(Z))ᵀ X (Z reused)."""
    n = X.shape[0]
    m = W.shape[0]
    np.dot(X, W.T, Z)
    ga[:] = 0.0
    L = 0.0
    for i in range(n):
        hi = 0.0
        for j in range(m):
            s = Z[i, j]
            hi += a[j] * (s * (1.0 if s > 0.0 else gamma))
        hi *= c
        li, dli = _ell(hi, y[i], code)
        L += sw[i] * li
        ri = R * sw[i] * dli
        for j in range(m):
            s = Z[i, j]
            coef = ri * (1.0 if s > 0.0 else gamma)
            ga[j] += coef * s
            Z[i, j] = coef
    np.dot(Z.T, X, gW)
    d = X.shape[1]
    for j in range(m):
        f = c * a[j]
        for k in range(d):
            gW[j, k] *= f
        ga[j] = c * ga[j] if train_out else 0.0
    return R * L


@_jit
def _grad(X, y, sw, W, a, gamma, c, code, R, train_out, use_blas, zrow, Z, gW, ga):
    """Dispatch to the BLAS or the fused path; returns L and fills gW, ga."""
    if use_blas:
        return _grad_blas(X, y, sw, W, a, gamma, c, code, R, train_out, Z, gW, ga)
    return _grad_fused(X, y, sw, W, a, gamma, c, code, R, train_out, zrow, gW, ga)


@_jit
def _forward(X, W, a, gamma, c, use_blas, Z, out):
    """out_i = c Σ_j a_j σ(⟨w_j, x_i⟩)."""
    n, d = X.shape
    m = W.shape[0]
    if use_blas:
        np.dot(X, W.T, Z)
    for i in range(n):
        hi = 0.0
        for j in range(m):
            if use_blas:
                s = Z[i, j]
            else:
                s = 0.0
                for k in range(d):
                    s += X[i, k] * W[j, k]
            hi += a[j] * (s * (1.0 if s > 0.0 else gamma))
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
def _rates(W, gW):
    """(Σ_j 2⟨−g_j, w_j⟩, Σ_{‖w_j‖>0} ‖g_j − ⟨g_j,w_j⟩w_j/‖w_j‖²‖ / ‖w_j‖)."""
    m, d = W.shape
    nr = 0.0
    dr = 0.0
    for j in range(m):
        ww = 0.0
        gw = 0.0
        for k in range(d):
            ww += W[j, k] * W[j, k]
            gw += gW[j, k] * W[j, k]
        nr -= 2.0 * gw
        if ww > 0.0:
            q = gw / ww
            pp = 0.0
            for k in range(d):
                v = gW[j, k] - q * W[j, k]
                pp += v * v
            dr += np.sqrt(pp / ww)
    return nr, dr


@_jit
def _params_ok(W, a):
    """True iff every parameter is finite with magnitude ≤ DIVERGENCE_BOUND."""
    m, d = W.shape
    for j in range(m):
        if not abs(a[j]) <= 1e150:
            return False
        for k in range(d):
            if not abs(W[j, k]) <= 1e150:
                return False
    return True


@_jit
def _shift(W, a, alpha, gW, ga, train_out, Wt, at):
    """(Wt, at) = (W, a) − α (gW, ga); a is copied unchanged when frozen. No allocation."""
    m, d = W.shape
    for j in range(m):
        for k in range(d):
            Wt[j, k] = W[j, k] - alpha * gW[j, k]
        at[j] = a[j] - alpha * ga[j] if train_out else a[j]


@_jit
def _first_grid_after(grid, t):
    """Index of the first grid time strictly greater than t."""
    return np.searchsorted(grid, t, side="right")


@_jit
def _gd_run(X, y, sw, W, a, gamma, c, code, R, train_out, use_blas, lr, k0, n_steps,
            grid, zrow, Z, gW, ga, have_grad, L0, out_t, out_l, out_nr, out_dr):
    """Run ``n_steps`` GD steps in place from step k0; returns (status, k, n_samp, n_eval, L).

    The gradient at the current point is cached between calls (``have_grad``), so each
    step costs one evaluation whose forward pass also gives the loss that is recorded.
    On divergence the state is left at the first offending iterate.
    """
    ng = grid.shape[0]
    gi = _first_grid_after(grid, k0 * lr)
    ns = 0
    ne = 0
    k = k0
    L = L0
    if not have_grad:
        L = _grad(X, y, sw, W, a, gamma, c, code, R, train_out, use_blas, zrow, Z, gW, ga)
        ne += 1
    if not np.isfinite(L) or not _params_ok(W, a):
        return _DIVERGED, k, ns, ne, L
    kend = k0 + n_steps
    m, d = W.shape
    while True:
        t = k * lr
        if k > k0 and gi < ng and t >= grid[gi]:
            nr, dr = _rates(W, gW)
            out_t[ns] = t
            out_l[ns] = L
            out_nr[ns] = nr
            out_dr[ns] = dr
            ns += 1
            while gi < ng and grid[gi] <= t:
                gi += 1
        if k == kend:
            break
        ok = True
        for j in range(m):
            for q in range(d):
                v = W[j, q] - lr * gW[j, q]
                W[j, q] = v
                if not abs(v) <= 1e150:
                    ok = False
        if train_out:
            for j in range(m):
                v = a[j] - lr * ga[j]
                a[j] = v
                if not abs(v) <= 1e150:
                    ok = False
        k += 1
        if not ok:
            return _DIVERGED, k, ns, ne, np.nan
        L = _grad(X, y, sw, W, a, gamma, c, code, R, train_out, use_blas, zrow, Z, gW, ga)
        ne += 1
        if not np.isfinite(L):
            return _DIVERGED, k, ns, ne, L
    return _OK, k, ns, ne, L


@_jit
def _copy(W, a, Wo, ao):
    """(Wo, ao) ← (W, a) without allocation."""
    m, d = W.shape
    for j in range(m):
        for k in range(d):
            Wo[j, k] = W[j, k]
        ao[j] = a[j]


@_jit
def _rms_scaled(UW, Ua, W, a, atol, rtol, train_out):
    """RMS over trained parameters of U / (atol + rtol·|θ|) (scipy's initial-step norm)."""
    m, d = W.shape
    s = 0.0
    for j in range(m):
        for k in range(d):
            e = UW[j, k] / (atol + rtol * abs(W[j, k]))
            s += e * e
        if train_out:
            e = Ua[j] / (atol + rtol * abs(a[j]))
            s += e * e
    return np.sqrt(s / (m * d + (m if train_out else 0)))


@_jit
def _max_rel_rate(W, a, gW, ga, train_out):
    """max_j ‖∇_{θ_j}L‖ / ‖θ_j‖ over nonzero neurons (θ_j = (w_j, a_j)); ≥ 1e-300."""
    m, d = W.shape
    best = 1e-300
    for j in range(m):
        num = 0.0
        den = 0.0
        for q in range(d):
            num += gW[j, q] * gW[j, q]
            den += W[j, q] * W[j, q]
        if train_out:
            num += ga[j] * ga[j]
        den += a[j] * a[j]
        if den > 0.0:
            r = np.sqrt(num / den)
            if r > best:
                best = r
    return best


@_jit
def _gf_run(X, y, sw, W, a, gamma, c, code, R, train_out, use_blas, t, t_target,
            max_evals, rtol, atol, h, have_f, L, grid, zrow, Z, kink_rel,
            g1W, g1a, g2W, g2a, g3W, g3a, g4W, g4a, Wt, at, Wn, an,
            out_t, out_l, out_nr, out_dr):
    """Bogacki–Shampine 3(2) on dθ/dt = −∇L(θ) from t to exactly t_target (in place).

    Returns (status, t, h_next, L, have_f, n_samples, n_evals, n_accepted, n_rejected,
    n_forced). Steps at the kink floor (see KINK_REL) are accepted when the loss does not
    increase and counted in n_forced.
    g1* holds ∇L at the current point (FSAL). Controller as scipy RK23: safety 0.9,
    factor in [0.2, 10], exponent −1/3, no growth right after a rejection. When the last
    step is clipped to land on t_target, the unclipped proposal is kept for the next call.
    State on "diverged": the first accepted point whose loss or parameters are non-finite
    or exceed DIVERGENCE_BOUND, or the last accepted point if the step size collapses.
    """
    m, d = W.shape
    N = m * d + (m if train_out else 0)
    ng = grid.shape[0]
    gi = _first_grid_after(grid, t)
    ns = 0
    ne = 0
    nacc = 0
    nrej = 0
    nforced = 0
    streak = 0  # consecutive accepted steps below the kink floor
    if not have_f:
        L = _grad(X, y, sw, W, a, gamma, c, code, R, train_out, use_blas, zrow, Z, g1W, g1a)
        ne += 1
        have_f = True
    if not np.isfinite(L) or not _params_ok(W, a):
        return _DIVERGED, t, h, L, have_f, ns, ne, nacc, nrej, nforced
    if h <= 0.0:
        # scipy's select_initial_step (order 3), with f = −∇L
        d0 = _rms_scaled(W, a, W, a, atol, rtol, train_out)
        d1 = _rms_scaled(g1W, g1a, W, a, atol, rtol, train_out)
        h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
        _shift(W, a, h0, g1W, g1a, train_out, Wt, at)
        _grad(X, y, sw, Wt, at, gamma, c, code, R, train_out, use_blas, zrow, Z, g2W, g2a)
        ne += 1
        _shift(g2W, g2a, 1.0, g1W, g1a, True, g3W, g3a)  # g3 = f1 − f0 (sign irrelevant)
        d2 = _rms_scaled(g3W, g3a, W, a, atol, rtol, train_out) / h0
        if d1 <= 1e-15 and d2 <= 1e-15:
            h1 = max(1e-6, h0 * 1e-3)
        else:
            h1 = (0.01 / max(d1, d2)) ** (1.0 / 3.0)
        h = min(100.0 * h0, h1)
        if not h > 0.0 or not np.isfinite(h):
            h = 1e-6

    while t < t_target:
        rejected = False
        h_floor = kink_rel * rtol ** (1.0 / 3.0) / _max_rel_rate(W, a, g1W, g1a, train_out)
        while True:
            if ne + 3 > max_evals:
                return _BUDGET, t, h, L, have_f, ns, ne, nacc, nrej, nforced
            min_step = 10.0 * (np.nextafter(t, np.inf) - t)
            if h < min_step:
                return _DIVERGED, t, h, L, have_f, ns, ne, nacc, nrej, nforced
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
            _shift(W, a, 0.5 * hs, g1W, g1a, train_out, Wt, at)
            _grad(X, y, sw, Wt, at, gamma, c, code, R, train_out, use_blas, zrow, Z, g2W, g2a)
            _shift(W, a, 0.75 * hs, g2W, g2a, train_out, Wt, at)
            _grad(X, y, sw, Wt, at, gamma, c, code, R, train_out, use_blas, zrow, Z, g3W, g3a)
            b1 = hs * (2.0 / 9.0)
            b2 = hs * (1.0 / 3.0)
            b3 = hs * (4.0 / 9.0)
            for j in range(m):
                for q in range(d):
                    Wn[j, q] = W[j, q] - (b1 * g1W[j, q] + b2 * g2W[j, q] + b3 * g3W[j, q])
            if train_out:
                for j in range(m):
                    an[j] = a[j] - (b1 * g1a[j] + b2 * g2a[j] + b3 * g3a[j])
            else:
                an[:] = a
            L_new = _grad(X, y, sw, Wn, an, gamma, c, code, R, train_out, use_blas, zrow, Z,
                          g4W, g4a)
            ne += 3
            # err = h Σ E_s k_s with E = (5/72, −1/12, −1/9, 1/8) and k = −g
            e1 = -hs * (5.0 / 72.0)
            e2 = hs * (1.0 / 12.0)
            e3 = hs * (1.0 / 9.0)
            e4 = -hs * (1.0 / 8.0)
            s = 0.0
            for j in range(m):
                for q in range(d):
                    er = e1 * g1W[j, q] + e2 * g2W[j, q] + e3 * g3W[j, q] + e4 * g4W[j, q]
                    sc = atol + rtol * max(abs(W[j, q]), abs(Wn[j, q]))
                    s += (er / sc) ** 2
            if train_out:
                for j in range(m):
                    er = e1 * g1a[j] + e2 * g2a[j] + e3 * g3a[j] + e4 * g4a[j]
                    sc = atol + rtol * max(abs(a[j]), abs(an[j]))
                    s += (er / sc) ** 2
            err = np.sqrt(s / N)
            if err < 1.0:
                if err == 0.0:
                    factor = 10.0
                else:
                    factor = min(10.0, 0.9 * err ** (-1.0 / 3.0))
                if rejected:
                    factor = min(1.0, factor)
                h = hs * factor
                if clipped and not rejected:
                    h = max(h, h_prop)
                break
            floor_on = streak >= KINK_STREAK
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
        # accept
        nacc += 1
        streak = streak + 1 if hs < h_floor * 1.000001 else 0
        t = t_new
        _copy(Wn, an, W, a)
        _copy(g4W, g4a, g1W, g1a)
        L = L_new
        if not np.isfinite(L) or not _params_ok(W, a):
            return _DIVERGED, t, h, L, have_f, ns, ne, nacc, nrej, nforced
        if gi < ng and t >= grid[gi]:
            nr, dr = _rates(W, g1W)
            out_t[ns] = t
            out_l[ns] = L
            out_nr[ns] = nr
            out_dr[ns] = dr
            ns += 1
            while gi < ng and grid[gi] <= t:
                gi += 1
    return _OK, t, h, L, have_f, ns, ne, nacc, nrej, nforced


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
    """h_i = c Σ_j a_j σ(⟨w_j, x_i⟩) on X (default p.X)."""
    X = p.X if X is None else np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    m = W.shape[0]
    blas = _resolve_path(p, m, path)
    Z = np.empty((n, m) if blas else (0, 0))
    out = np.empty(n)
    _forward(X, W, a, float(p.gamma), float(p.c), blas, Z, out)
    return out


def loss_value(p: Problem, W: np.ndarray, a: np.ndarray) -> float:
    """L = R Σ_i s_i ℓ(h_i, y_i)."""
    return float(_loss_from_h(forward(p, W, a), p.y, p.sw, LOSS_CODES[p.loss], _R(p)))


def loss_grad(p: Problem, W: np.ndarray, a: np.ndarray,
              path: str | None = None) -> tuple[float, np.ndarray, np.ndarray]:
    """(L, ∂L/∂W (m, d), ∂L/∂a (m,)); ∂L/∂a ≡ 0 when the output layer is frozen."""
    n, d = p.X.shape
    m = W.shape[0]
    blas = _resolve_path(p, m, path)
    gW = np.empty((m, d))
    ga = np.empty(m)
    L = _grad(p.X, p.y, p.sw, W, a, float(p.gamma), float(p.c), LOSS_CODES[p.loss], _R(p),
              bool(p.train_output), blas, np.empty(m), np.empty((n, m) if blas else (0, 0)),
              gW, ga)
    return float(L), gW, ga


class _Base:
    """Shared state: copied parameters, gradient buffers and scratch for one problem."""

    def __init__(self, p: Problem, W: np.ndarray, a: np.ndarray, path: str | None) -> None:
        self.p = p
        self.W = np.array(W, dtype=np.float64, order="C")
        self.a = np.array(a, dtype=np.float64)
        n, d = p.X.shape
        m = self.W.shape[0]
        self.use_blas = _resolve_path(p, m, path)
        self._args = (p.X, p.y, p.sw)
        self._model = (float(p.gamma), float(p.c), LOSS_CODES[p.loss], _R(p),
                       bool(p.train_output), self.use_blas)
        self._zrow = np.empty(m)
        self._Z = np.empty((n, m) if self.use_blas else (0, 0))
        self._gW = np.empty((m, d))
        self._ga = np.empty(m)
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
                 path: str | None = None) -> None:
        super().__init__(p, W, a, path)
        self.lr = float(lr)
        self.k = 0

    @property
    def t(self) -> float:
        return self.k * self.lr

    def advance(self, n_steps: int, grid: np.ndarray) -> Advance:
        """Take ``n_steps`` steps; sample at the first step k·η ≥ g for each g in (t0, t1]."""
        t0 = self.k * self.lr
        t1 = (self.k + n_steps) * self.lr
        cap = int(np.searchsorted(grid, t1, "right") - np.searchsorted(grid, t0, "right"))
        buf = _empty_samples(max(cap, 0))
        st, k, ns, ne, L = _gd_run(*self._args, self.W, self.a, *self._model, self.lr,
                                   self.k, int(n_steps), grid, self._zrow, self._Z, self._gW,
                                   self._ga, self._have_grad, self._L, *buf)
        self.k = int(k)
        self.n_evals += int(ne)
        self._L = float(L)
        self._have_grad = st == _OK
        return Advance(_STATUS[st], _samples(buf, ns))


class GFStepper(_Base):
    """Gradient flow dθ/dt = −∇L(θ) by adaptive Bogacki–Shampine 3(2) (scipy RK23 control).

    ``h0=None`` picks the first step by scipy's rule. On "diverged" the state is at the
    first accepted point with non-finite loss/parameters or |θ| > DIVERGENCE_BOUND, or at the
    last accepted point if the step size collapsed below 10 ulp(t).
    """

    def __init__(self, p: Problem, W: np.ndarray, a: np.ndarray, rtol: float, atol: float,
                 h0: float | None = None, path: str | None = None,
                 kink_rel: float = KINK_REL) -> None:
        super().__init__(p, W, a, path)
        self.rtol = float(rtol)
        self.atol = float(atol)
        self.h = float(h0) if h0 is not None else 0.0
        self.t = 0.0
        self.n_accepted = 0
        self.n_rejected = 0
        self.n_forced = 0  # steps accepted at the kink floor (sliding neurons)
        self.kink_rel = float(kink_rel)
        m, d = self.W.shape
        self._stage = (np.empty((m, d)), np.empty(m), np.empty((m, d)), np.empty(m),
                       np.empty((m, d)), np.empty(m), np.empty((m, d)), np.empty(m),
                       np.empty((m, d)), np.empty(m))

    def advance(self, t_target: float, max_evals: int, grid: np.ndarray) -> Advance:
        """Integrate to exactly ``t_target`` or until ``max_evals`` evaluations (this call).

        Samples at the first accepted step end ≥ g for each grid time g in (t0, t_reached].
        """
        t_target = float(t_target)
        cap = int(np.searchsorted(grid, t_target, "right")
                  - np.searchsorted(grid, self.t, "right"))
        buf = _empty_samples(max(cap, 0))
        st, t, h, L, hf, ns, ne, na, nr, nf = _gf_run(
            *self._args, self.W, self.a, *self._model, self.t, t_target, int(max_evals),
            self.rtol, self.atol, self.h, self._have_grad, self._L, grid, self._zrow, self._Z,
            self.kink_rel, self._gW, self._ga, *self._stage, *buf)
        self.t = float(t)
        self.h = float(h)
        self._L = float(L)
        self._have_grad = bool(hf) and st != _DIVERGED
        self.n_evals += int(ne)
        self.n_accepted += int(na)
        self.n_rejected += int(nr)
        self.n_forced += int(nf)
        return Advance(_STATUS[st], _samples(buf, ns))
