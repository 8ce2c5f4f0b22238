"""Gradient flow dθ/dt = −∇L(θ) by adaptive Bogacki–Shampine 3(2) with FSAL, PI step-size
control and an error norm per neuron; steps at a kink floor for neurons sliding along a ReLU
kink. One compiled call (``_gf_run``) per ``advance``, GIL released.

The method is data, named as scipy's ``integrate/_ivp/rk.py`` names it: the tableau (C, A, B,
E, ORDER, ERROR_ESTIMATOR_ORDER, N_STAGES) and the controller's SAFETY, MIN_FACTOR, MAX_FACTOR.
The controller is scipy's RK23 (safety 0.9, factor in [0.2, 10], no growth right after a
rejection) with the changes documented at KINK_REL, PI_ALPHA and ``_bs_error``. The kernels'
state and results travel as records (``Tolerances``, ``Stages``, ``GFState``, ``GFCounts``,
``FrameBuffers``; loss.py's ``Net``, ``Point``, ``Recorder``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .cache import call, jit
from .loss import (
    Recorder,
    Workspace,
    WorkspaceViews,
    evaluate,
    first_grid_after,
    pack,
    params_ok,
    recorder,
    sample,
    samples_from,
    shift,
    sum4,
    unpack,
)
from .problem import (
    BUDGET,
    DIVERGED,
    KERNEL_STATUS,
    OK,
    Advance,
    FramesAdvance,
    FrameStates,
    Problem,
    Samples,
    StepStatus,
)

#: Recommended gradient-flow tolerances: rtol, and atol = DEFAULT_ATOL_SCALE · max|θ0|.
DEFAULT_RTOL = 1e-6
DEFAULT_ATOL_SCALE = 1e-9

# ------------------------------------------------------------ the method (scipy's RK23 names)
#: Bogacki–Shampine 3(2) on y' = f(y), here f = −∇L: stage s at t + C[s]·h, θ + h Σ_r A[s][r]
#: k_r; the step θ + h Σ_s B[s] k_s (third order); its FSAL fourth stage k_4 = f(θ_new) and the
#: error estimate h Σ_s E[s] k_s over the four stages (E = B − B̂, B̂ the embedded second
#: order weights). Exactly scipy's RK23.C, .A, .B, .E.
ORDER = 3
ERROR_ESTIMATOR_ORDER = 2
N_STAGES = 3
C = (0.0, 1.0 / 2.0, 3.0 / 4.0)
A = ((0.0, 0.0, 0.0), (1.0 / 2.0, 0.0, 0.0), (0.0, 3.0 / 4.0, 0.0))
B = (2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0)
E = (5.0 / 72.0, -1.0 / 12.0, -1.0 / 9.0, 1.0 / 8.0)
#: The step-size controller (scipy's rk.py): factor = SAFETY · err^ERROR_EXPONENT, clipped to
#: [MIN_FACTOR, MAX_FACTOR] (the PI rule after an accepted step: PI_ALPHA, PI_BETA).
SAFETY = 0.9
MIN_FACTOR = 0.2
MAX_FACTOR = 10.0
ERROR_EXPONENT = -1.0 / (ERROR_ESTIMATOR_ORDER + 1)

# Floor of the adaptive step for neurons sliding along a ReLU kink (⟨w_j, x_i⟩ = 0 held from
# both sides: a Filippov sliding mode). There the right-hand side is discontinuous and the
# error controller would shrink the step without bound. The floor is
# h_floor = KINK_REL · rtol^(1/3) / max_j(‖∇θ_j L‖/‖θ_j‖), a tenth of the controller's smooth
# step scale; it engages only after kink_streak consecutive accepted steps below it (a single
# kink crossing needs a few small steps, sliding needs them forever). At the floor a step is
# accepted if it does not increase the loss, so the flow chatters across the kink like GD
# with that step; such steps are counted (n_forced). The streak is kept across ``advance``
# calls, so where a run is cut into calls does not change when the floor engages, and its
# threshold grows as rtol tightens (kink_streak_for): tight tolerances follow single crossings
# exactly rather than chattering across them.
KINK_REL = 0.1
KINK_STREAK = 3
#: PI step-size control (Gustafsson): after an accepted step with scaled error e_n (previous
#: accepted e_{n-1}), h ← h·min(10, 0.9·e_n^−PI_ALPHA·e_{n-1}^PI_BETA); after a rejection the
#: plain rule h·max(0.2, 0.9·e^−1/3). scipy's RK23 is PI_ALPHA = 1/3, PI_BETA = 0. Where the step
#: is held by stability (the stiff tail at a minimum) or by kink crossings (alignment), the
#: plain rule alternates growth and rejection; the memory term damps that (rejections measured
#: in bench/REPORT.md).
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


class Tolerances(NamedTuple):
    """The run's accuracy settings: rtol, atol, the kink floor's KINK_REL and streak."""

    rtol: float
    atol: float
    kink_rel: float
    kink_streak: int


class Stages(NamedTuple):
    """Buffers of a step, (d+1, m) in the packed layout: the new point Pn, the stage point Pt,
    the stage gradients G2, G3, G4 (G1 is ``Point.G``, the FSAL gradient) and (2, m) scratch
    ``sc`` of the kink-floor rate and the error norm."""

    Pn: np.ndarray
    Pt: np.ndarray
    G2: np.ndarray
    G3: np.ndarray
    G4: np.ndarray
    sc: np.ndarray


class GFState(NamedTuple):
    """What a gf run carries from one compiled call to the next: time t, the next step h
    (≤ 0: not chosen yet), the loss L at t and whether ``Point.G`` holds ∇L there (``have_f``),
    the kink-floor streak, the PI controller's last accepted error and whether the step in
    progress was rejected (no growth on its retry)."""

    t: float
    h: float
    L: float
    have_f: bool
    streak: int
    err_prev: float
    rejected: bool


class GFCounts(NamedTuple):
    """A call's counts: samples recorded, evaluations, accepted, rejected and forced steps."""

    samples: int
    evals: int
    accepted: int
    rejected: int
    forced: int


class FrameBuffers(NamedTuple):
    """Frame k's state: W (K, m, d), a (K, m), L (K,), the FSAL gradient G (K, d+1, m)."""

    W: np.ndarray
    a: np.ndarray
    L: np.ndarray
    G: np.ndarray


@jit
def _rms_scaled(U, P, atol, rtol, rows):
    """RMS over trained parameters of U / (atol + rtol·|θ|) (scipy's initial-step norm)."""
    m = P.shape[1]
    s = 0.0
    for k in range(rows):
        for j in range(m):
            e = U[k, j] / (atol + rtol * abs(P[k, j]))
            s += e * e
    return np.sqrt(s / (rows * m))


@jit
def _col_sq_norms(U, V, rows, u2, v2):
    """u2[j] = Σ_{k<rows} U[k, j]², v2[j] = Σ_{k<rows} V[k, j]² (row sweeps, unit stride)."""
    m = U.shape[1]
    for j in range(m):
        u2[j] = 0.0
        v2[j] = 0.0
    for k in range(rows):
        for j in range(m):
            u2[j] += U[k, j] * U[k, j]
            v2[j] += V[k, j] * V[k, j]


@jit
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


@jit
def _bs_combine(P, hs, G1, G2, G3, Pn, rows):
    """Pn = P + hs Σ_s B[s] k_s with k = −G: P − hs(2/9 G1 + 1/3 G2 + 4/9 G3) (rows ≥ ``rows``
    copied)."""
    b1 = hs * B[0]
    b2 = hs * B[1]
    b3 = hs * B[2]
    m = P.shape[1]
    for k in range(P.shape[0]):
        if k < rows:
            for j in range(m):
                Pn[k, j] = P[k, j] - (b1 * G1[k, j] + b2 * G2[k, j] + b3 * G3[k, j])
        else:
            for j in range(m):
                Pn[k, j] = P[k, j]


@jit
def _bs_error(P, Pn, hs, G1, stages, tol, rows):
    """RMS over trained parameters of the embedded error h Σ E_s k_s, E = (5/72, −1/12, −1/9,
    1/8), k = −g (G1 and ``stages``' G2, G3, G4), each scaled by its neuron's tolerance
    atol + rtol·max(‖θ_j‖, ‖θ_j,new‖).

    Per neuron, not per component (scipy's RK23 uses atol + rtol·max(|θ|, |θ_new|) per
    component): during alignment neurons rotate, so their components keep passing through
    zero, where a per-component scale collapses to atol and forces tiny steps although the
    neuron as a whole is followed to relative accuracy rtol.
    """
    G2, G3, G4, sc = stages.G2, stages.G3, stages.G4, stages.sc
    atol, rtol = tol.atol, tol.rtol
    e1 = -hs * E[0]  # h E_s k_s = (−h E_s) g_s
    e2 = -hs * E[1]
    e3 = -hs * E[2]
    e4 = -hs * E[3]
    m = P.shape[1]
    n0 = sc[0]
    n1 = sc[1]
    _col_sq_norms(P, Pn, rows, n0, n1)
    for j in range(m):
        n0[j] = 1.0 / (atol + rtol * np.sqrt(max(n0[j], n1[j])))
        n1[j] = 0.0
    for k in range(rows):  # per-neuron sums (unit stride), then a fixed-order sum over j
        for j in range(m):
            er = e1 * G1[k, j] + e2 * G2[k, j] + e3 * G3[k, j] + e4 * G4[k, j]
            q = er * n0[j]
            n1[j] += q * q
    return np.sqrt(sum4(n1) / (rows * m))


@jit
def _copy2(U, V):
    """V ← U (same shape, no allocation)."""
    for k in range(U.shape[0]):
        for j in range(U.shape[1]):
            V[k, j] = U[k, j]


@jit
def _initial_step(net, P, G1, Pt, G2, G3, tol, rows):
    """scipy's select_initial_step (error estimator order 2), with f = −∇L = −G1 at P: h0 from
    ‖θ‖ and ‖f‖ (scaled RMS norms d0, d1), one evaluation at θ + h0 f for d2 ≈ ‖f'‖, then
    min(100 h0, (0.01 / max(d1, d2))^(1/(q+1))); 1e-6 when that is not positive and finite."""
    atol, rtol = tol.atol, tol.rtol
    d0 = _rms_scaled(P, P, atol, rtol, rows)
    d1 = _rms_scaled(G1, P, atol, rtol, rows)
    h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    shift(P, h0, G1, Pt)
    evaluate(net, Pt, G2)
    shift(G2, 1.0, G1, G3)  # G3 = f1 − f0 (sign irrelevant)
    d2 = _rms_scaled(G3, P, atol, rtol, rows) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1.0 / (ERROR_ESTIMATOR_ORDER + 1))
    h = min(100.0 * h0, h1)
    if not h > 0.0 or not np.isfinite(h):
        h = 1e-6
    return h


@jit
def _gf_run(net, tol, point, stages, state, t_target, max_evals, rec):
    """Bogacki–Shampine 3(2) on dθ/dt = −∇L(θ) from state.t to exactly t_target (in place:
    ``point``'s W, a and its FSAL gradient G, the G1 of the tableau); samples go to ``rec``.

    Returns (status, state after, counts): a ``GFState`` and ``GFCounts``. ``rejected`` (the
    step in progress was rejected: no growth on its retry) carries over when the budget ends a
    call mid-step, so where a chunk ends never changes the steps taken (same bits however the
    run is chunked). ``streak`` (consecutive accepted steps below the kink floor) carries over
    between calls, so chunked driving engages the floor as early as one long call.
    Steps at the kink floor (see KINK_REL) are accepted when the loss does not increase and
    counted as forced.
    G1 holds ∇L at the current point (FSAL), kept between calls. Controller: PI (PI_ALPHA,
    PI_BETA; the error memory ``err_prev`` carries over between calls), otherwise as scipy
    RK23: SAFETY, factor in [MIN_FACTOR, MAX_FACTOR], no growth right after a rejection; the
    error norm is per neuron (_bs_error). When the last step is clipped to land on t_target,
    the unclipped proposal is kept for the next call. State on "diverged": the first accepted
    point whose loss or parameters are non-finite or exceed DIVERGENCE_BOUND, or the last
    accepted point if the step size collapses. Accepted points and FSAL gradients are
    swapped in, not copied.
    """
    W, a, P, G1 = point
    Pn, Pt, G2, G3, G4, sc = stages
    t, h, L, have_f, streak, err_prev, rejected_in = state
    rtol = tol.rtol
    grid = rec.grid
    odd = False  # G1/G4 swapped an odd number of times
    pack(W, a, P)
    d = P.shape[0] - 1
    rows = d + 1 if net.model.train_out else d
    ng = grid.shape[0]
    gi = first_grid_after(grid, t)
    ns = 0
    ne = 0
    nacc = 0
    nrej = 0
    nforced = 0
    st = OK
    if not have_f:
        L = evaluate(net, P, G1)
        ne += 1
        have_f = True
    if not np.isfinite(L) or not params_ok(P):
        return (DIVERGED, GFState(t, h, L, have_f, streak, err_prev, False),
                GFCounts(ns, ne, nacc, nrej, nforced))
    if h <= 0.0:
        h = _initial_step(net, P, G1, Pt, G2, G3, tol, rows)
        ne += 1

    carry = rejected_in
    rejected = rejected_in
    while t < t_target:
        rejected = carry
        carry = False
        h_floor = tol.kink_rel * rtol ** (1.0 / 3.0) / _max_rel_rate(P, G1, sc)
        while True:
            if ne + N_STAGES > max_evals:
                st = BUDGET
                break
            min_step = 10.0 * (np.nextafter(t, np.inf) - t)
            if h < min_step:
                st = DIVERGED
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
            # stage 2: θ + A[1][0]·h k1 ; stage 3: θ + A[2][1]·h k2 ; k = −g
            shift(P, A[1][0] * hs, G1, Pt)
            evaluate(net, Pt, G2)
            shift(P, A[2][1] * hs, G2, Pt)
            evaluate(net, Pt, G3)
            _bs_combine(P, hs, G1, G2, G3, Pn, rows)
            L_new = evaluate(net, Pn, G4)  # the FSAL stage k4 = −∇L(θ_new)
            ne += N_STAGES
            err = _bs_error(P, Pn, hs, G1, Stages(Pn, Pt, G2, G3, G4, sc), tol, rows)
            if err < 1.0:
                if err == 0.0:
                    factor = MAX_FACTOR
                else:
                    factor = min(MAX_FACTOR,
                                 SAFETY * err ** (-PI_ALPHA) * err_prev ** PI_BETA)
                err_prev = max(err, 1e-4)
                if rejected:
                    factor = min(1.0, factor)
                h = hs * factor
                if clipped and not rejected:
                    h = max(h, h_prop)
                break
            floor_on = streak >= tol.kink_streak
            if floor_on and hs <= h_floor * 1.000001 and np.isfinite(L_new) and L_new <= L:
                nforced += 1  # at the kink floor: accept a loss-decreasing step
                h = h_floor
                break
            # rejected (NaN/inf error also lands here)
            if np.isfinite(err):
                h = hs * max(MIN_FACTOR, SAFETY * err ** ERROR_EXPONENT)
            else:
                h = hs * MIN_FACTOR
            if floor_on and h < h_floor and hs > h_floor * 1.000001:
                h = h_floor
            rejected = True
            nrej += 1
        if st != OK:
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
        if not np.isfinite(L) or not params_ok(P):
            st = DIVERGED
            break
        if gi < ng and t >= grid[gi]:
            gi, ns = sample(P, G1, t, L, rec, gi, ns)
    unpack(P, W, a)
    if odd:  # the caller's G1 buffer is now the local G4
        _copy2(G1, G4)
    return (st, GFState(t, h, L, have_f, streak, err_prev, rejected and st == BUDGET),
            GFCounts(ns, ne, nacc, nrej, nforced))


@jit
def _gf_frames(net, tol, point, stages, state, targets, max_evals, rec, frames):
    """``_gf_run`` to each of ``targets`` in turn (the same calls, arguments and state
    hand-over as ``GFStepper.advance`` once per target, so the same bits), within
    ``max_evals`` evaluations in all; after each target reached, W, a, L and the FSAL
    gradient G1 are copied to row k of ``frames``' W, a, L, G. Samples of ``rec.grid`` (times
    in (t, targets[-1]]) go to ``rec``'s buffers in order.

    Returns ``_gf_run``'s (status, state, counts) (counts summed over the calls; status OK
    when every target was reached) and the number of targets reached.
    """
    ns = 0
    ne = 0
    nacc = 0
    nrej = 0
    nforced = 0
    st = OK
    k = 0
    grid = rec.grid
    for k in range(targets.shape[0]):
        tt = targets[k]
        if state.t < tt:
            lo = first_grid_after(grid, state.t)
            hi = first_grid_after(grid, tt)
            part = Recorder(grid[lo:hi], rec.t[ns:], rec.loss[ns:], rec.norm_rate[ns:],
                            rec.dir_rate[ns:])
            st, state, cnt = _gf_run(net, tol, point, stages, state, tt,
                                     max(max_evals - ne, 0), part)
            ns += cnt.samples
            ne += cnt.evals
            nacc += cnt.accepted
            nrej += cnt.rejected
            nforced += cnt.forced
            if st != OK:
                return st, state, GFCounts(ns, ne, nacc, nrej, nforced), k
        W, a, G1 = point.W, point.a, point.G
        m, d = W.shape
        for j in range(m):
            for q in range(d):
                frames.W[k, j, q] = W[j, q]
            frames.a[k, j] = a[j]
        frames.L[k] = state.L
        for q in range(d + 1):
            for j in range(m):
                frames.G[k, q, j] = G1[q, j]
    return st, state, GFCounts(ns, ne, nacc, nrej, nforced), targets.shape[0]


def default_tolerances(W0: np.ndarray, a0: np.ndarray) -> tuple[float, float]:
    """(rtol, atol) = (1e-6, 1e-9 · max|θ0|): atol scales with the initialisation size."""
    scale = max(float(np.max(np.abs(W0), initial=0.0)), float(np.max(np.abs(a0), initial=0.0)))
    return DEFAULT_RTOL, DEFAULT_ATOL_SCALE * (scale if scale > 0.0 else 1.0)


def default_atol(W: np.ndarray, a: np.ndarray, rtol: float) -> float:
    """Absolute tolerance scaled to the initial parameters: rtol × 1e-3 × max|θ₀|, so that
    small-initialisation runs are resolved in relative terms from the start."""
    scale = max(float(np.abs(W).max(initial=0.0)), float(np.abs(a).max(initial=0.0)), 1e-300)
    return rtol * 1e-3 * scale


class GFStepper(WorkspaceViews):
    """Gradient flow by adaptive Bogacki–Shampine 3(2); implements the ``Stepper`` protocol.

    ``h0=None`` picks the first step by scipy's rule. ``max_steps`` bounds accepted + rejected
    steps over the run (None: no bound). On "diverged" the state is at the first accepted point
    with non-finite loss/parameters or |θ| > DIVERGENCE_BOUND, or at the last accepted point if
    the step size collapsed below 10 ulp(t).
    """

    def __init__(self, p: Problem, W: np.ndarray, a: np.ndarray, rtol: float, atol: float,
                 h0: float | None = None, path: str | None = None,
                 kink_rel: float = KINK_REL, kink_streak: int | None = None,
                 max_steps: int | None = None) -> None:
        self.ws = Workspace(p, W, a, path)
        self.rtol = float(rtol)
        self.atol = float(atol)
        self.h = float(h0) if h0 is not None else 0.0
        self.t = 0.0
        self.n_evals = 0
        self.n_accepted = 0
        self.n_rejected = 0
        self.n_forced = 0  # steps accepted at the kink floor (sliding neurons)
        self.max_steps = int(max_steps) if max_steps is not None else None
        self.kink_rel = float(kink_rel)
        self.kink_streak = int(kink_streak if kink_streak is not None
                               else kink_streak_for(self.rtol))
        self._streak = 0  # consecutive accepted steps below the kink floor (kept across calls)
        self._err_prev = 1e-4  # last accepted step's scaled error (PI controller memory)
        self._rejected = False  # a call ended on its budget right after a rejected step
        m = self.ws.W.shape[0]
        self.tol = Tolerances(self.rtol, self.atol, self.kink_rel, self.kink_streak)
        P = self.ws.P
        self.stages = Stages(np.empty_like(P), np.empty_like(P), np.empty_like(P),
                             np.empty_like(P), np.empty_like(P), np.empty((2, m)))

    @property
    def n_steps(self) -> int:
        return self.n_accepted


    def _state(self) -> GFState:
        """The state a compiled call continues from."""
        ws = self.ws
        return GFState(self.t, self.h, ws.L, ws.have_grad, self._streak, self._err_prev,
                       self._rejected)

    def _take(self, st: int, state: GFState, counts: GFCounts) -> StepStatus:
        """Take over a compiled call's returned state and counts; how the call ended."""
        ws = self.ws
        self.t = float(state.t)
        self.h = float(state.h)
        ws.L = float(state.L)
        ws.have_grad = bool(state.have_f) and st != DIVERGED
        self.n_evals += int(counts.evals)
        self.n_accepted += int(counts.accepted)
        self.n_rejected += int(counts.rejected)
        self.n_forced += int(counts.forced)
        self._streak = int(state.streak)
        self._err_prev = float(state.err_prev)
        self._rejected = bool(state.rejected)
        status = KERNEL_STATUS[st]
        if st == BUDGET and self.max_steps is not None and (
                self.n_accepted + self.n_rejected >= self.max_steps):
            status = StepStatus.MAX_STEPS
        return status

    def landing_times(self, times: np.ndarray) -> np.ndarray:
        """Any time: the flow lands exactly on each (the last step is clipped)."""
        return np.asarray(times, dtype=float)

    def advance(self, t_target: float, budget: int, grid: np.ndarray) -> Advance:
        """Integrate to exactly ``t_target``, using at most ``budget`` evaluations in this call
        (at least 4: one step, plus the first call's start-up evaluations when they fit).

        Samples at the first accepted step end ≥ g for each grid time g in (t0, t_reached].
        """
        t_target = float(t_target)
        if self.t >= t_target:
            return Advance(StepStatus.OK, Samples.empty())
        max_evals = max(4, int(budget))
        if self.max_steps is not None:
            left = self.max_steps - (self.n_accepted + self.n_rejected)
            if left <= 0:
                return Advance(StepStatus.MAX_STEPS, Samples.empty())
            max_evals = max(4, min(int(budget), 3 * left))  # 3 evaluations per step (FSAL)
        ws = self.ws
        # ndarray.searchsorted: np.searchsorted's result without its Python wrapper (per call)
        rec = recorder(grid, int(grid.searchsorted(t_target, "right")
                                 - grid.searchsorted(self.t, "right")))
        st, state, counts = call(_gf_run)(ws.net, self.tol, ws.point, self.stages,
                                          self._state(), t_target, max_evals, rec)
        status = self._take(st, state, counts)
        # the buffers are this call's own: when full, handed over instead of copied
        return Advance(status, samples_from(rec, int(counts.samples)))

    def advance_frames(self, targets: np.ndarray, budget: int,
                       grid: np.ndarray) -> FramesAdvance:
        """``advance`` to each of ``targets`` (increasing) in turn in one compiled call, with
        at most ``budget`` evaluations in all (the same steps and bits as calling ``advance``
        once per target, as its chunks never change the steps taken). Returns how the call
        ended (OK: every target reached), the number of targets reached and their states:
        W (k, m, d), a (k, m), L (k,) and the packed FSAL gradient ∇L (k, d + 1, m), each
        array this call's own. ``grid``: sample times, as in ``advance``, up to the last
        target."""
        targets = np.ascontiguousarray(targets, dtype=float)
        ws = self.ws
        m, d = ws.W.shape
        K = targets.shape[0]
        empty = FrameStates(np.empty((0, m, d)), np.empty((0, m)), np.empty(0),
                            np.empty((0, d + 1, m)))
        max_evals = max(4, int(budget))
        if self.max_steps is not None:
            left = self.max_steps - (self.n_accepted + self.n_rejected)
            if left <= 0:
                return FramesAdvance(Advance(StepStatus.MAX_STEPS, Samples.empty()), 0, empty)
            max_evals = max(4, min(int(budget), 3 * left))
        if K == 0:
            return FramesAdvance(Advance(StepStatus.OK, Samples.empty()), 0, empty)
        rec = recorder(grid, int(grid.searchsorted(targets[-1], "right")
                                 - grid.searchsorted(self.t, "right")))
        fr = FrameBuffers(np.empty((K, m, d)), np.empty((K, m)), np.empty(K),
                          np.empty((K, d + 1, m)))
        st, state, counts, k = call(_gf_frames)(ws.net, self.tol, ws.point, self.stages,
                                                self._state(), targets, max_evals, rec, fr)
        status = self._take(st, state, counts)
        k = int(k)
        return FramesAdvance(Advance(status, samples_from(rec, int(counts.samples))), k,
                             FrameStates(fr.W[:k], fr.a[:k], fr.L[:k], fr.G[:k]))
