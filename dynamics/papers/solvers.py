"""Bounded solvers for the papers' claims and overlays: planned from the problem's size and a
multiply-add budget before any work, stopped by an iteration bound (and, as a backstop, a
wall-clock deadline), and saying how they stopped.

`max_margin_direction`: the hard-margin linear classifier through 0 of points z_i = y_i x_i,

    γ* = max_{‖u‖ = 1} min_i ⟨u, z_i⟩ = min_{p ∈ conv{z_i}} ‖p‖   (when positive; minimax),

so every unit u gives a lower bound γ(u) = min_i ⟨u, z_i⟩ ≤ γ* and every p of the convex hull
an upper bound ‖p‖ ≥ γ* (also when γ* ≤ 0): a solution is a certified interval, whatever
stopped the solver. Small problems are solved exactly as Lawson & Hanson's least-distance
program (min ‖w‖ s.t. Z w ≥ 1, by scipy's NNLS of [Zᵀ; 1ᵀ] u ≈ e_{d+1}: the residual r gives
w = −r_{1:d}/r_{d+1}, and r = 0 says 0 ∈ conv{z_i}: not separable); larger ones (or an NNLS
that hits its bound) by pairwise Frank–Wolfe on the hull, O(n d) per iteration.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

WORK = 1e8
"""Multiply-adds one solve may plan (≈ 0.1–0.3 s on one core): the same budget as the
analysis' extremal-vector search (`dynamics.analysis.analyse`)."""
DEADLINE_S = 10.0
"""Wall-clock backstop of one solve: the work budget binds first on any machine that runs a
page (it is a guard against a pathological BLAS, never reached in the tests)."""
RTOL = 1e-10
"""Stop when the certified interval is this narrow relative to its upper end."""
SEPARABLE_FLOOR = 1e-9
"""γ* ≤ 1e-9 · max_i ‖z_i‖ counts as not separable: 0 is in the hull to rounding, and no run
could maximise such a margin."""


@dataclass(frozen=True)
class MarginSolution:
    """A certified bracket lower ≤ γ* ≤ upper of the max margin through 0, the direction `w`
    (unit; zeros when none) achieving `lower`, how it was found (`method`, `iterations`), why
    it stopped early (`stopped`: "" when the bracket is within RTOL, else the bound reached)
    and the separability floor."""

    w: np.ndarray
    lower: float
    upper: float
    method: str
    iterations: int
    stopped: str = ""
    floor: float = 0.0  # SEPARABLE_FLOOR · max_i ‖z_i‖

    @property
    def separable(self) -> bool | None:
        """True: certified (lower > 0); False: γ* ≤ `floor` (certified by the hull point);
        None: not decided within the bounds (`stopped` says why)."""
        if self.lower > 0:
            return True
        return False if self.upper <= self.floor else None

    @property
    def gap(self) -> float:
        """upper − lower: how far the solver is from γ* at most."""
        return self.upper - self.lower

    def note(self) -> str:
        """One line: the bracket, the method and how it stopped."""
        how = f"{self.method}, {self.iterations} iterations"
        if self.stopped:
            how += f"; stopped: {self.stopped}"
        return f"γ* ∈ [{self.lower:.6g}, {self.upper:.6g}] ({how})"


def _certificate(Z: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(unit direction of p, γ(p̂), ‖p‖) for a hull point p."""
    norm = float(np.linalg.norm(p))
    if norm == 0.0:
        return np.zeros(Z.shape[1]), -np.inf, 0.0
    u = p / norm
    return u, float(np.min(Z @ u)), norm


def _nnls_plan(n: int, d: int, maxiter: int) -> float:
    """Multiply-adds of Lawson–Hanson NNLS on a (d+1) × n matrix: per outer iteration the
    gradient (n(d+1)) and a least-squares solve on the passive set (≤ (d+1)·min(n, d+1)²)."""
    k = min(n, d + 1)
    return float(maxiter) * ((d + 1) * n + (d + 1) * k * k)


def _ldp(Z: np.ndarray, maxiter: int) -> np.ndarray | None:
    """Lawson & Hanson's least-distance program by NNLS: the hull point p = Zᵀu/Σu of the
    solution (None when scipy's NNLS reaches `maxiter`)."""
    n, d = Z.shape
    E = np.vstack([Z.T, np.ones((1, n))])
    f = np.zeros(d + 1)
    f[-1] = 1.0
    try:
        u, _rnorm = nnls(E, f, maxiter=maxiter)
    except RuntimeError:  # "Maximum number of iterations reached."
        return None
    s = float(u.sum())
    if s <= 0.0:  # u = 0: f is not reachable at all (cannot happen for n ≥ 1)
        return None
    return Z.T @ u / s


def _pairwise_fw(Z: np.ndarray, max_iter: int, deadline: float, rtol: float,
                 alpha0: np.ndarray | None = None) -> tuple[np.ndarray, int, str]:
    """Pairwise Frank–Wolfe for min ‖Zᵀα‖² over the simplex (exact line search): each
    iteration moves weight from the worst active vertex to the best one. Returns (the hull
    point, iterations, why it stopped — "" when the certified gap is within rtol)."""
    n, _d = Z.shape
    alpha = np.full(n, 1.0 / n) if alpha0 is None else alpha0.copy()
    p = Z.T @ alpha
    g = Z @ p  # ⟨z_i, p⟩
    it = 0
    while True:
        norm2 = float(p @ p)
        s = int(np.argmin(g))
        lower_num = float(g[s])
        if norm2 == 0.0:
            return p, it, ""
        norm = np.sqrt(norm2)
        if norm - lower_num / norm <= rtol * norm:
            return p, it, ""
        if it >= max_iter:
            return p, it, f"iteration bound {max_iter} (work budget)"
        if it % 64 == 0 and time.monotonic() > deadline:
            return p, it, f"deadline {DEADLINE_S:g} s"
        act = np.flatnonzero(alpha > 0)
        a = int(act[np.argmax(g[act])])
        dz = Z[s] - Z[a]
        dd = float(dz @ dz)
        if dd == 0.0:
            return p, it, ""
        step = min(max(-float(p @ dz) / dd, 0.0), float(alpha[a]))
        if step == 0.0:
            return p, it, ""
        alpha[s] += step
        alpha[a] -= step
        p = p + step * dz
        g = g + step * (Z @ dz)
        it += 1


def max_margin_direction(X: np.ndarray, y: np.ndarray, work: float = WORK,
                         deadline_s: float = DEADLINE_S, rtol: float = RTOL) -> MarginSolution:
    """The max-margin linear classifier through 0 of (X, y), bounded (module docstring): NNLS
    with at most half of `work` (`_nnls_plan`), then — when it did not certify γ* to `rtol`,
    or instead when too few iterations fit — pairwise Frank–Wolfe with the rest (2 n d
    multiply-adds per iteration). Never raises for finite data; an empty or all-zero set gives
    the bracket [−inf, 0]."""
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    Z = y[:, None] * X
    n, d = Z.shape
    scale = float(np.max(np.linalg.norm(Z, axis=1), initial=0.0))
    floor = SEPARABLE_FLOOR * scale
    if n == 0 or scale == 0.0:
        return MarginSolution(np.zeros(d), -np.inf, 0.0, "none (no nonzero point)", 0, "",
                              floor)
    Zs = Z / scale  # conditioning: the margin scales with the data
    deadline = time.monotonic() + deadline_s
    # NNLS gets up to half the work: its bound is 3n outer iterations (scipy's default), cut to
    # the budget; it needs about as many as the hull's support (≤ d + 1) plus a few
    maxiter = int(min(3 * n, 0.5 * work / _nnls_plan(n, d, 1)))
    spent, notes = 0.0, []
    if maxiter >= min(3 * n, 2 * min(n, d + 1) + 2):
        p = _ldp(Zs, maxiter)
        spent = _nnls_plan(n, d, maxiter)
        if p is not None:
            u, lo, hi = _certificate(Zs, p)
            if hi <= SEPARABLE_FLOOR or hi - lo <= max(rtol * hi, 1e-14):
                return MarginSolution(u, lo * scale, hi * scale, "least-distance program "
                                      f"(scipy NNLS, exact active set, ≤ {maxiter} "
                                      "iterations)", maxiter, "", floor)
            notes.append("NNLS certified a loose bracket (rounding); refined")
        else:
            notes.append(f"NNLS reached its bound of {maxiter} iterations")
    else:
        notes.append(f"NNLS skipped (its {min(3 * n, 2 * min(n, d + 1) + 2)} iterations "
                     f"would exceed the work budget {work:.2g})")
    fw_iter = max(int((work - spent) / max(2.0 * n * d, 1.0)), 16)
    p, it, why = _pairwise_fw(Zs, fw_iter, deadline, rtol)
    u, lo, hi = _certificate(Zs, p)
    return MarginSolution(u, lo * scale, hi * scale, "pairwise Frank–Wolfe", it,
                          "; ".join([*notes, why]) if why else "", floor)
