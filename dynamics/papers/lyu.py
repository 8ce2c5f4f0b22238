"""Lyu, Li, Wang & Arora (NeurIPS 2021, arXiv 2110.13905): gradient descent on two-layer nets —
margin maximization and simplicity bias.

What the paper states (read from its abstract and introduction, §1; its theorems' numbering and
constants were not available to us): for two-layer *leaky* ReLU nets trained by gradient flow
from a *small* initialisation on *linearly separable and symmetric* data, with the logistic
(cross-entropy) loss, (i) the flow converges to a *global* max-margin solution, whatever the
width — a linear classifier; (ii) early in training the net is biased towards *linear*
classifiers (the simplicity bias of Kalimeris et al. 2019); (iii) the result is fragile: a
simple change of the data can make the flow converge to a linear classifier of suboptimal
margin. §1 also names the two stages of the analysis: an *early phase* near the small start
and the *late phase* of margin maximisation (Lyu & Li 2020's KKT analysis). The checkable
forms below are derived here from that setting, each marked [derived].

Network f(x) = c Σ_k a_k φ(⟨w_k, x⟩), φ(u) = max(u, αu), 0 < α < 1 (our γ); symmetric data:
every (x_i, y_i) comes with (−x_i, −y_i). Since φ(u) − φ(−u) = (1 + α)u:

(D1)  f(x) − f(−x) = c(1 + α)⟨v, x⟩ with v = Σ_k a_k w_k: the odd part of f is linear.

(D2)  Early phase [derived]: near θ = 0 the flow follows G(θ) = Σ_i b_i f(x_i) (b_i = −R s_i
      ℓ'(0) y_i), which symmetric data make bilinear, G = c((1 + α)/2) Σ_k a_k ⟨w_k, μ⟩ with
      μ = Σ_i b_i x_i: each (⟨w_k, μ̂⟩, a_k) grows like e^{ρt}, ρ = c(1 + α)‖μ‖/2, with
      ⟨w_k, μ̂⟩ → sign(a_k)|a_k| (`early_outputs` solves it exactly); the part of w_k ⊥ μ
      stays at the start's scale. So every neuron turns to ±μ̂ and sign f(x) = sign⟨μ, x⟩:
      a linear classifier, before the loss moves.

(D3)  Margin [derived]: for any θ, min_i y_i f(x_i) ≤ ½ min_i y_i (f(x_i) − f(−x_i)) =
      (c(1 + α)/2) min_i y_i⟨v, x_i⟩ ≤ (c(1 + α)/2) ‖v‖ γ*, with γ* the max margin of a
      linear classifier through 0 (a hard-margin SVM), and ‖v‖ ≤ Σ|a_k|‖w_k‖ ≤ ‖θ‖²/2. So
      the normalised margin q(θ) = min_i y_i f(x_i)/‖θ‖² ≤ q* = c(1 + α)γ*/4, reached by the
      linear net of two balanced neurons ±w* (w* the SVM direction). The paper's theorem: the
      flow's q(θ(t)) → q* (the global max margin), so the limit is linear along w*.

(D4)  Late phase, at a finite time [derived from Lyu & Li 2020, whose analysis §1 names]: once
      the sum loss L_s = Σ_i s_i ℓ(y_i f(x_i)) is below ℓ(0) (ln 2, logistic; 1, exponential)
      the smoothed margin γ̃ = ln(1/(e^{L_s} − 1))/‖θ‖² (logistic; ln(1/L_s)/‖θ‖²,
      exponential) never decreases, γ̃ ≤ q ≤ q*, and ‖θ‖² grows like ln(t)/q_∞: the flow
      closes the gap at the 1/ln t rate, with no finite-time constant a run could be held to.
      What a run can show is the trend: G = (q* − γ̃)‖θ‖² stays bounded when q_∞ = q*, and
      grows like (q* − q_∞)‖θ‖² (∝ ln t) towards a suboptimal limit. And the bound it reaches:
      since γ(v̂) = min_i y_i⟨v̂, x_i⟩ ≥ γ* q/q* (from (D3)) and γ(u) ≤ γ* cos∠(u, w*) for
      every unit u (γ* w* is a point of conv{y_i x_i}), the linear part is within
      arccos(q/q*) of w*; on every mirrored pair the even part is |f(x_i) + f(−x_i)| ≤
      y_i(f(x_i) − f(−x_i)) − 2q‖θ‖², which at the point closest to v̂'s margin is
      ≤ 2(q* − q)‖θ‖²: the net is the max-margin linear classifier to the margin's accuracy.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import ladders, phases, theory
from ..annotations import Analysis, Direction, Phase, PhaseText
from ..config import Config, data_shape
from ..data import build_dataset
from ..figure_spec import Axis, FigureSpec, Line, Panel, Rule
from ..phases import PhaseRules
from ..readouts import network_output, network_outputs
from ..trajectory import Trajectory
from .base import (
    Comparison,
    Knob,
    Paper,
    PaperOverlay,
    Published,
    ReportFigure,
    Run,
    Section,
    Showcase,
    Summary,
    Tolerances,
    achieved_accuracy,
    full_w,
    gate,
    loss_and_series,
    rate_failures,
    run_label,
    run_name,
    unmeasured,
    w_recorded,
)
from .claims import Claim, fmt
from .experiments import Experiment, Times
from .solvers import MarginSolution, max_margin_direction

_ABS = "abstract and §1 (introduction)"
NUMBERS: dict[str, Published] = {
    "global_max_margin": Published(
        "regardless of the width", _ABS + ": global optimality of the margin for two-layer "
        "leaky ReLU nets, gradient flow, linearly separable symmetric data"),
    "simplicity_bias": Published("linear classifiers, early in training", _ABS),
    "fragility": Published("a simple data manipulation gives a suboptimal-margin linear "
                           "classifier", _ABS),
    "max_margin_2d": Published(0.3, "the preset's data (α = 0.2, γ* = 1 of its SVM): "
                                    "q* = (1 + α)γ*/4 (D3)", "derived"),
}

SYMMETRY_TOL = 1e-12
SMALL_START = 1e-2
"""A small start: max_i |f(x_i)| ≤ 0.01 at t = 0 (0.2 % of the distance to a margin of 1 for
the logistic loss; 7e-6 at the preset's σ = 1e-4)."""
TOLERANCES = {"early_fit": 0.1}
"""The early phase ends when the mean of y_i f(x_i) reaches 0.1: still near the start (the
logistic loss has moved 5 % from ln 2), where (D2) holds."""
PHASE_TEXT: dict[str, PhaseText] = {
    "early phase": PhaseText("neurons line up, the net acts linear", short="neurons line up"),
    "late phase": PhaseText("margin grows, neurons turn to the widest-margin line",
                            short="margin grows"),
}
"""The two phases' plain words (`Phase.plain`) and the strip's short words (the commentary
says what it says of any phase)."""
MAX_POINTS = 2000
"""Largest n the paper's overlay and claims look at (its symmetry test and max-margin solve
are bounded below that too)."""
SOLVER_RTOL = 1e-6
"""The max-margin bracket must be this narrow (relative) for the claims to use q*: a wider
one (the solver's work bound reached, `solvers.max_margin_direction`) makes them
illustrations that say so."""
FRAME_SAMPLE = 100
"""Late-phase frames read by the margin claims at most (evenly spaced in the frame index):
bounds their cost by 100 forward passes."""


# ----------------------------------------------------------------------------- presets
POINTS_2D = ((1.0, 0.6), (1.0, -0.6), (3.0, 2.5))


def config(*, t_end: float = 1e4, method: str = "gf", lr: float = 0.05, scale: float = 1e-4,
           gamma: float = 0.2, generated: bool = False, seed: int = 0, **updates: Any
           ) -> Config:
    """Symmetric linearly separable data, leaky ReLU α = `gamma`, m = 50, logistic loss
    (mean), independent Gaussian start of entry std `scale` (w and a), gf at rtol 1e-8 or GD
    with step `lr`. Data: three points of R² and their mirror images (explicit coordinates;
    its SVM direction is e₁, γ* = 1, while μ points 26.6° away), or (`generated`) 20 points
    of R⁵ from the `symmetric_separable` generator (margin 0.1)."""
    pts = [list(p) for p in POINTS_2D]
    data: dict[str, Any] = (
        {"kind": "generated", "generator": "symmetric_separable", "n": 10, "d": 3,
         "margin": 0.3} if generated else
        {"kind": "vectors", "points": pts + [[-a for a in p] for p in pts],
         "labels": [1.0, 1.0, 1.0, -1.0, -1.0, -1.0]})
    cfg = Config.from_dict({
        "data": data, "model": {"width": 50, "gamma": gamma},
        "loss": {"kind": "logistic", "reduction": "mean"},
        "init": {"scheme": "gaussian", "scale": scale, "normalisation": "none"},
        "integrator": {"method": method, "lr": lr, "t_end": t_end, "rtol": 1e-8,
                       "max_steps": 20_000_000},
        "record": {"frames": 300, "t_first": 1e-3}, "seed": seed})
    return cfg.with_updates(updates) if updates else cfg


def presets(quick: bool = True) -> dict[str, Config]:
    """The 2-D points (to t = 10⁴) and 10 generated points of R³ (to t = 10⁶). The late phase
    approaches q* like 1/ln t, at a pace set by the data: on these two runs the margin is
    within 1 % of q* by the end; other generated draws (e.g. 20 points of R⁵) are still 3–5 %
    below it at t = 10⁶ and climbing — see the experiments."""
    return {"symmetric_2d": config(), "symmetric_3d_generated": config(generated=True,
                                                                        t_end=1e6)}


# ----------------------------------------------------------------------------- theory
@dataclass(frozen=True)
class MaxMargin:
    """The data's hard-margin linear classifier through 0 (`solvers.max_margin_direction`: a
    bounded, certified solve): unit direction `w_star`, margin `gamma_star` (the bracket's
    upper end, ≥ the true γ*: never an optimistic q*), the net's global max normalised margin
    q* = c(1 + α)γ*/4 (D3), `separable` (True only when certified) and the `solution` with its
    bracket and how the solver stopped."""

    w_star: np.ndarray
    gamma_star: float
    q_star: float
    separable: bool
    solution: MarginSolution

    @property
    def solved(self) -> bool:
        """The bracket is within SOLVER_RTOL (relative): q* is known well enough to check."""
        s = self.solution
        return bool(s.upper > 0 and s.gap <= SOLVER_RTOL * s.upper)

    def failure(self) -> str | None:
        """Why the claims cannot use q* (None: they can)."""
        sep = self.solution.separable
        if sep is False:
            return "no linear classifier through 0 separates the data"
        if sep is None or not self.solved:
            return ("the max-margin problem was not solved within its work bound: "
                    + self.solution.note())
        return None


def max_margin(X: np.ndarray, y: np.ndarray, alpha: float, c: float = 1.0) -> MaxMargin:
    """(D3) from the bounded max-margin solver (`solvers.max_margin_direction`): exact (an
    active-set least-distance program) for small data, a certified bracket for large."""
    sol = max_margin_direction(np.asarray(X, float), np.asarray(y, float))
    gam = max(float(sol.upper), 0.0)
    return MaxMargin(np.asarray(sol.w, float), gam, c * (1.0 + alpha) * gam / 4.0,
                     sol.separable is True, sol)


_MM_CACHE: OrderedDict[tuple[str, float, float], MaxMargin] = OrderedDict()


def _mm(traj: Trajectory) -> MaxMargin:
    """`max_margin` of the run's data, memoised by the data's bytes (the claims, the overlay
    and the setting check each ask for it; a large solve runs once)."""
    X, y = np.ascontiguousarray(traj.X, float), np.ascontiguousarray(traj.y, float)
    digest = hashlib.sha1(X.tobytes() + y.tobytes() + str(X.shape).encode()).hexdigest()
    key = (digest, float(traj.config.model.gamma), float(traj.config.model.c))
    got = _MM_CACHE.get(key)
    if got is None:
        got = max_margin(X, y, key[1], key[2])
        _MM_CACHE[key] = got
        while len(_MM_CACHE) > 16:
            _MM_CACHE.popitem(last=False)
    return got


def mu(traj: Trajectory) -> np.ndarray:
    """μ = Σ_i b_i x_i, b_i = −R s_i ℓ'(0) y_i (D2): the direction of the early phase."""
    cfg = traj.config
    b = theory.field_weights(traj.y, traj.sw, cfg.loss.kind, cfg.loss.reduction)
    return np.asarray(b @ np.asarray(traj.X, float), float)


def _theta_sq(traj: Trajectory, f: int) -> float:
    return float((full_w(traj, f) ** 2).sum() + (np.asarray(traj.a[f]) ** 2).sum())


def normalised_margin(traj: Trajectory, f: int) -> float:
    """q(θ) = min_i y_i f(x_i)/‖θ‖² at frame f (f is 2-homogeneous in θ = (W, a))."""
    h = network_output(traj, f, np.asarray(traj.X, float))
    if h is None:
        return float("nan")
    return float(np.min(np.asarray(traj.y) * h) / max(_theta_sq(traj, f), 1e-300))


def odd_weight(traj: Trajectory, f: int) -> np.ndarray:
    """v = Σ_k a_k w_k: f(x) − f(−x) = c(1 + α)⟨v, x⟩ (D1)."""
    return np.asarray(traj.a[f], float) @ full_w(traj, f)


def even_part(traj: Trajectory, f: int, n_dirs: int = 400) -> float:
    """max_u |f(u) + f(−u)| / max_u |f(u) − f(−u)| over random unit u: how far f is from
    linear (0: f is linear)."""
    rng = np.random.default_rng(0)
    U = rng.standard_normal((n_dirs, traj.X.shape[1]))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    hp, hm = network_output(traj, f, U), network_output(traj, f, -U)
    if hp is None or hm is None:
        return float("nan")
    return float(np.abs(hp + hm).max() / max(float(np.abs(hp - hm).max()), 1e-300))


def _angle(u: np.ndarray, v: np.ndarray) -> float:
    c = float(u @ v) / max(float(np.linalg.norm(u) * np.linalg.norm(v)), 1e-300)
    return float(np.degrees(np.arccos(np.clip(c, -1.0, 1.0))))


EARLY_WORK = 2e7
"""Multiply-adds of (D2)'s predicted outputs (times × m × n) `early_end` spends at most: its
fine time grid has 4000 points when that fits, fewer (≥ 200, log-spaced) otherwise."""


def early_outputs(traj: Trajectory, t: np.ndarray) -> np.ndarray:
    """f(x_i) at times t under the early-phase flow (D2), exactly ((len(t), n)): per neuron,
    p_k = ⟨w_k, μ̂⟩ and a_k obey d/dt (p, a) = ρ (a, p), so p ± a = (p₀ ± a₀) e^{±ρt}; w_k's
    part ⊥ μ stays w_k(0)'s. Computed in blocks of times (memory ≤ ~16 MB whatever m, n)."""
    X = np.asarray(traj.X, float)
    t = np.asarray(t, float)
    m = mu(traj)
    nm = float(np.linalg.norm(m))
    alpha, c = float(traj.config.model.gamma), float(traj.config.model.c)
    rho = c * (1.0 + alpha) * nm / 2.0
    mh = m / max(nm, 1e-300)
    W0, a0 = full_w(traj, 0), np.asarray(traj.a[0], float)
    p0 = W0 @ mh
    base = (W0 - p0[:, None] * mh[None]) @ X.T  # (m, n): the part ⊥ μ, constant
    xm = X @ mh  # (n,)
    out = np.empty((len(t), X.shape[0]))
    block = max(1, int(2e6 // max(base.size, 1)))
    plus, minus = (p0 + a0)[None] / 2.0, (p0 - a0)[None] / 2.0
    for i in range(0, len(t), block):
        tt = t[i:i + block]
        ep, em = np.exp(rho * tt)[:, None], np.exp(-rho * tt)[:, None]
        p, a = plus * ep + minus * em, plus * ep - minus * em  # (T, m)
        Z = p[:, :, None] * xm[None, None]  # (T, m, n), σ applied in place
        Z += base[None]
        if alpha == 0.0:
            np.maximum(Z, 0.0, out=Z)
        else:
            np.multiply(Z, alpha, out=Z, where=Z <= 0)
        out[i:i + block] = c * np.einsum("tk,tkn->tn", a, Z)
    return out


def _cross_log(t: np.ndarray, u: np.ndarray, level: float) -> float | None:
    hit = np.flatnonzero(u >= level)
    if not hit.size or hit[0] == 0:
        return None
    g = int(hit[0])
    lo, hi = u[g - 1], u[g]
    if lo <= 0 or hi <= lo:
        return float(t[g])
    return float(t[g - 1] + (t[g] - t[g - 1]) * np.log(level / lo) / np.log(hi / lo))


def early_end(traj: Trajectory, level: float = TOLERANCES["early_fit"]
              ) -> tuple[float | None, float | None]:
    """(measured, predicted) time the mean of y_i f(x_i) reaches `level`: on the recorded
    outputs, and under the early-phase flow (D2)."""
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    t = np.asarray(traj.t, float)
    frames, h = network_outputs(traj, X)
    fit = np.full(traj.n_frames, np.nan)
    fit[frames] = h @ y / len(y)
    m = float(np.linalg.norm(mu(traj)))
    rho = float(traj.config.model.c) * (1.0 + float(traj.config.model.gamma)) * m / 2.0
    horizon = min(float(t[-1]), 100.0 / max(rho, 1e-300))  # e^{2ρt} stays finite
    per = float(traj.width) * float(X.shape[0])
    fine = np.geomspace(max(t[1], 1e-6), horizon, int(np.clip(EARLY_WORK / per, 200, 4000)))
    pred = early_outputs(traj, fine) @ y / len(y)
    return _cross_log(t, fit, level), _cross_log(fine, pred, level)


# ----------------------------------------------------------------------------- hypotheses
def _symmetric(X: np.ndarray, y: np.ndarray) -> bool:
    """Every (x_i, y_i) has its mirror (−x_i, −y_i) in the data (to SYMMETRY_TOL), in
    O(n d + n log n): the points are sorted by a fixed random projection s_i = ⟨x_i, r⟩, the
    mirror's s is −s_i, so only the points whose s lies within the tolerance of −s_i are
    compared coordinate-wise (bounded: at most 64 candidates per point)."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    n = len(X)
    if n == 0:
        return True
    r = np.random.default_rng(0).standard_normal(X.shape[1])
    s = X @ r
    order = np.argsort(s, kind="stable")
    ss = s[order]
    scale = np.maximum(1.0, np.abs(X).max(axis=1))  # per point
    slack = SYMMETRY_TOL * scale * float(np.abs(r).sum()) * 4.0 + 1e-300
    lo = np.searchsorted(ss, -s - slack, side="left")
    hi = np.searchsorted(ss, -s + slack, side="right")
    for i in range(n):
        cand = order[lo[i]:min(hi[i], lo[i] + 64)]
        if not cand.size:
            return False
        d = np.abs(X[cand] + X[i][None]).max(axis=1)
        if not np.any((d <= SYMMETRY_TOL * scale[i]) & (y[cand] == -y[i])):
            return False
    return True


def data_failures(X: np.ndarray, y: np.ndarray) -> list[str]:
    """The data's part of the setting ([] = met): ±1 labels, at most MAX_POINTS points, and
    symmetric. `applies_to` is exactly "none of these" on the built data, and
    `setting_failures` starts from them: the two cannot disagree."""
    if not np.all(np.isin(y, (-1.0, 1.0))):
        return ["the labels are not ±1 (a classification theorem)"]
    if len(y) > MAX_POINTS:
        return [f"{len(y)} points: the paper's checks look at ≤ {MAX_POINTS}"]
    if not _symmetric(X, y):
        return ["the data are not symmetric (some (x_i, y_i) has no (−x_i, −y_i))"]
    return []


def applies_to(config: Config) -> bool:
    """Binary classification by the logistic or exponential loss on symmetric data of ≤
    MAX_POINTS points (`data_failures` on the built data). Under the square loss the margin
    does not grow without bound: the paper's late phase has no counterpart, so its row is not
    put on such a run (the Explorer's default showed "margin grows" beside a square loss)."""
    if not config.is_classification or config.loss.kind not in ("logistic", "exponential"):
        return False
    n, _d = data_shape(config.data)
    if n > MAX_POINTS:
        return False
    ds = build_dataset(config)
    return not data_failures(ds.X, ds.y)


def setting_failures(traj: Trajectory) -> list[str]:
    """The theorem's setting ([] = met): the data's (`data_failures`), logistic or exponential
    loss, leaky ReLU 0 < α < 1, both layers trained, separable through 0 (certified by the
    bounded solver, which must also have pinned q* down: `MaxMargin.failure`), a small start
    (max |f(x_i)| ≤ 0.01 at t = 0), and the full W recorded at every frame (the claims read
    the neurons)."""
    cfg = traj.config
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    out = data_failures(X, y)
    if out and not out[0].startswith("the data are not symmetric"):
        return out
    if cfg.loss.kind not in ("logistic", "exponential"):
        out.append(f"the loss is {cfg.loss.kind}, not logistic or exponential")
    if not 0 < cfg.model.gamma < 1:
        out.append(f"α = γ = {cfg.model.gamma:g}: the theorem is for leaky ReLU, 0 < α < 1")
    if not cfg.model.train_output:
        out.append("the output layer is frozen (the theorem trains both layers)")
    out += rate_failures(cfg)
    if not out:
        why = _mm(traj).failure()
        if why:
            out.append(why)
    if not w_recorded(traj):
        out.append("the full W was not recorded at every frame (the claims read the neurons)")
        return out
    h0 = network_output(traj, 0, X)
    if h0 is not None and len(h0) and np.abs(h0).max() > SMALL_START:
        out.append(f"not a small start: max |f(x_i)| = {np.abs(h0).max():.3g} at t = 0 "
                   f"(> {SMALL_START:g})")
    return out


def _measurable(fails: Sequence[str]) -> bool:
    """Whether a claim can be measured despite `fails` (it is then an illustration): not
    when the data are not ±1 / too many / W is missing / q* is unknown."""
    blocking = ("the labels are not", "points: the paper", "the full W was not",
                "not solved within", "no linear classifier", "not symmetric")
    return not any(b in f for f in fails for b in blocking)


def _name(base: str, tr: Trajectory) -> str:
    return f"{base}[{run_name(presets, tr.config)}]"


# ----------------------------------------------------------------------------- claims
EARLY_STATEMENT = ("simplicity bias early in training [derived form]: before the loss moves, "
                   "every neuron turns to ±μ̂ (μ = Σ b_i x_i), so the net is the linear "
                   "classifier sign⟨μ, x⟩; the early phase ends when (D2) says")


def early_claim(traj: Trajectory, angle_tol: float = 5.0) -> Claim:
    """[derived, (D2)] The simplicity bias of the early phase: the early phase ends (the mean
    y_i f(x_i) reaches ℓ = 0.1) when (D2) predicts, every neuron of norm ≥ 10 % of the
    largest is then within `angle_tol` of ±μ̂ — sign(a_k) — where (D2) puts it, and the
    classifier is the linear sign⟨μ, x⟩ (≥ 99 % agreement on random inputs).

    Tolerances from (D2)'s error, not calibrated: (D2) is exact for the h = 0 flow on
    symmetric data; the true flow's residual weights are smaller by the factor
    (1 − y_i f(x_i)/2) (logistic; e^{−y f} exponential), so with z = max_i y_i f(x_i) at the
    crossing the growth's exponent falls short by ≤ ∫ ρ z(s) ds = z/2 (z grows like e^{2ρs}):
    the crossing comes later by ≤ z/(4ρ). GD at η grows by (1 + ηρ)² per step, e^{2ρη(1 − ηρ/2)}:
    later by t·ηρ/2. The crossing is read between frames (ln-linear: exact for an exponential;
    the curvature above adds ≤ Δt²ρz/8; z is read at the frame after the crossing, an upper
    bound). The directions: (D2) gives each neuron's angle to
    ±μ̂ exactly (its part ⊥ μ stays, ⟨w_k, μ̂⟩ grows); the nonlinearity turns them by ≤ z
    radians."""
    name = _name("lyu.early", traj)
    fails = setting_failures(traj)
    if not _measurable(fails):
        return unmeasured(name, EARLY_STATEMENT, fails, run_label(traj.config))
    t_m, t_p = early_end(traj)
    m = mu(traj)
    mh = m / max(float(np.linalg.norm(m)), 1e-300)
    cfg = traj.config
    rho = float(cfg.model.c) * (1.0 + float(cfg.model.gamma)) * float(np.linalg.norm(m)) / 2.0
    eta = float(cfg.integrator.lr) if cfg.integrator.method == "gd" else 0.0
    worst, worst_pred, agree, z, tol_t = (float("nan"),) * 5
    ok_time = False
    if t_m is not None and t_p is not None:
        fc = traj.frame_at(t_m)  # the last frame before the crossing
        after = min(fc + 1, traj.n_frames - 1)  # z there bounds z at the crossing
        h_c = network_output(traj, after, np.asarray(traj.X, float))
        z = float(np.max(np.asarray(traj.y) * h_c)) if h_c is not None else float("nan")
        dt = float(traj.t[after] - traj.t[fc])
        tol_t = z / (4.0 * rho) + t_p * eta * rho / 2.0 + dt * dt * rho * z / 8.0
        ok_time = bool(abs(t_m - t_p) <= tol_t)
        f = max(fc - 1, 1)
        W, a = full_w(traj, f), np.asarray(traj.a[f], float)
        nw = np.linalg.norm(W, axis=1)
        big = nw >= 0.1 * nw.max()
        sg = np.sign(a[big])
        cos = (W[big] @ mh) * sg / nw[big]
        worst = float(np.degrees(np.arccos(np.clip(cos.min(), -1.0, 1.0))))
        # (D2)'s angles at that frame: the part ⊥ μ of w_k(0) against ⟨w_k, μ̂⟩(t)
        W0, a0 = full_w(traj, 0)[big], np.asarray(traj.a[0], float)[big]
        p0 = W0 @ mh
        perp = np.linalg.norm(W0 - p0[:, None] * mh[None], axis=1)
        tf = float(traj.t[f])
        p_t = ((p0 + a0) * np.exp(rho * tf) + (p0 - a0) * np.exp(-rho * tf)) / 2.0
        worst_pred = float(np.degrees(np.arctan2(perp, sg * p_t)).max())
        rng = np.random.default_rng(1)
        U = rng.standard_normal((1000, traj.X.shape[1]))
        h = network_output(traj, f, U)
        agree = float(np.mean(np.sign(h) == np.sign(U @ m))) if h is not None else 0.0
    ang_tol = float(np.degrees(z)) + 0.05 if np.isfinite(z) else float("nan")
    ok_dir = bool(worst <= angle_tol and abs(worst - worst_pred) <= ang_tol)
    ok = bool(ok_time and ok_dir and agree >= 0.99)
    return gate(Claim(
        name, EARLY_STATEMENT,
        f"end at t = {fmt(t_m)}; worst neuron {worst:.3g}° from ±μ̂; {100 * agree:.1f} % "
        "agreement with sign⟨μ, x⟩",
        f"end at t = {fmt(t_p)}; {worst_pred:.3g}° ((D2)), ≤ {angle_tol:g}°; ≥ 99 %",
        f"end within z/(4ρ) + tηρ/2 + Δt²ρz/8 = {tol_t:.3g} of (D2)'s (z = max y_i f(x_i) = "
        f"{z:.3g} at the end, ρ = {rho:.4g}); neurons of norm ≥ 10 % of the largest within "
        f"{angle_tol:g}° of ±μ̂ and within z rad ({ang_tol:.3g}°) of (D2)'s angle; ≥ 99 % "
        "agreement on 1000 random inputs", ok,
        "The end of the early phase: the mean of y_i f(x_i) reaches 0.1 (measured on the "
        "recorded outputs, interpolated in ln between frames); the neurons are read one frame "
        f"before it. μ̂ is {_angle(mh, _mm(traj).w_star):.3g}° from the SVM direction w*: the "
        "early classifier is linear, not yet the max-margin one.",
        justification="(D2) is exact for the h = 0 flow on symmetric data; the neglected "
        "nonlinearity delays the end by ≤ z/(4ρ) and turns neurons by ≤ z rad (the docstring "
        "derives both); the angle to ±μ̂ itself shrinks like e^(−ρt)·‖wₖ⊥(0)‖ — a start too "
        "large for it to fall under 5° before the loss moves has no early linear phase",
        integrator=run_label(traj.config)), fails)


@dataclass(frozen=True)
class MarginSeries:
    """The late phase's quantities (D4) on the frames read (`margin_series`): `frames`,
    t, ‖θ‖², q(θ), the sum loss L_s, the smoothed margin γ̃ (NaN before the late phase) and
    `late` (L_s < ℓ(0) · min_i s_i)."""

    frames: np.ndarray
    t: np.ndarray
    theta2: np.ndarray
    q: np.ndarray
    loss_sum: np.ndarray
    smoothed: np.ndarray
    late: np.ndarray


def _neg_log_smooth(z: np.ndarray, sw: np.ndarray, loss: str) -> tuple[float, float]:
    """(L_s, −ln of the smoothed loss): exponential −ln L_s, logistic −ln(e^{L_s} − 1), both
    by log-sum-exp so that tiny losses keep their digits."""
    lw = np.log(np.maximum(sw, 1e-300))
    if loss == "exponential":
        ln_l = float(np.logaddexp.reduce(lw - z))
        return float(np.exp(ln_l)), -ln_l
    terms = np.logaddexp(0.0, -z)  # ln(1 + e^{−z})
    L = float(np.sum(sw * terms))
    if L > 1e-8:
        return L, -float(np.log(np.expm1(L)))
    ln_l = float(np.logaddexp.reduce(lw + np.log(np.maximum(terms, 1e-300))))
    return L, -ln_l - L / 2.0  # ln(e^L − 1) = ln L + L/2 + O(L²)


def margin_series(traj: Trajectory) -> MarginSeries:
    """(D4)'s quantities on at most FRAME_SAMPLE frames (every frame when there are fewer;
    always the first and the last)."""
    F = traj.n_frames
    frames = np.unique(np.round(np.linspace(0, F - 1, min(F, FRAME_SAMPLE))).astype(int))
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    sw = np.asarray(traj.sw, float)
    loss = traj.config.loss.kind
    ell0 = float(np.log(2.0)) if loss == "logistic" else 1.0
    th2, q, Ls, sm = (np.full(len(frames), np.nan) for _ in range(4))
    for i, f in enumerate(frames):
        h = network_output(traj, int(f), X)
        if h is None:
            continue
        z = y * h
        th2[i] = _theta_sq(traj, int(f))
        q[i] = float(np.min(z)) / max(th2[i], 1e-300)
        Ls[i], nl = _neg_log_smooth(z, sw, loss)
        sm[i] = nl / max(th2[i], 1e-300)
    late = Ls < ell0 * float(np.min(sw))
    late = late & (np.cumsum(~late[::-1])[::-1] == 0)  # from the last entry into it on
    return MarginSeries(frames, np.asarray(traj.t, float)[frames], th2, q, Ls,
                        np.where(late, sm, np.nan), late)


@dataclass(frozen=True)
class LateChecks:
    """(D4)'s checks on a `MarginSeries` (see `margin_claim`): the late phase `reached` (≥ 3
    frames read in it), γ̃'s largest fall (in q*) and whether it is within 4ε (`mono`), the
    slope of G = (q* − γ̃)‖θ‖² against ‖θ‖² over the last half of the late phase (in q*), its
    tolerance and whether it is within it (`trend`), G at the ends of that half."""

    reached: bool
    n_late: int
    drop: float
    mono: bool
    slope: float
    tol_slope: float
    trend: bool
    G0: float
    G1: float


def late_checks(sr: MarginSeries, q_star: float, eps: float) -> LateChecks:
    """`LateChecks` from the series, q* and the achieved accuracy ε."""
    idx = np.flatnonzero(sr.late)
    nan = float("nan")
    if idx.size < 3:
        return LateChecks(False, int(idx.size), nan, False, nan, nan, False, nan, nan)
    g = sr.smoothed[idx]
    drop = float(max(0.0, -np.min(np.diff(g)))) / q_star
    th2 = sr.theta2[idx]
    half = th2 >= 0.5 * (th2[0] + th2[-1])
    G = (q_star - g) * th2
    if half.sum() < 2 or not th2[half][-1] > th2[half][0]:
        return LateChecks(True, int(idx.size), drop, drop <= 4 * eps, nan, nan, False, nan, nan)
    slope = float(np.polyfit(th2[half], G[half], 1)[0]) / q_star
    tol = 4.0 * eps * float(th2[-1]) / float(th2[half][-1] - th2[half][0])
    return LateChecks(True, int(idx.size), drop, drop <= 4.0 * eps, slope, tol, slope <= tol,
                      float(G[half][0] / q_star), float(G[half][-1] / q_star))


MARGIN_STATEMENT = ("gradient flow maximises the margin globally: q(θ) = min_i y_i f(x_i)/‖θ‖² "
                    "→ q* = (1 + α)γ*/4, the margin of the max-margin linear classifier (D3) "
                    "— in a run: the late phase's smoothed margin never falls and closes its "
                    "gap to q* at the 1/ln t rate (D4), q never above q*")


def margin_claim(traj: Trajectory, series: MarginSeries | None = None) -> Claim:
    """[abstract; D3, D4] On the run, the finite-time form of q(θ(t)) → q*: (a) the run
    reaches the late phase (L_s < ℓ(0): Lyu & Li's condition, every point classified with
    room); (b) q ≤ q* at every frame read (D3: an exact bound); (c) the smoothed margin γ̃
    never decreases in the late phase; (d) the rate: G = (q* − γ̃)‖θ‖² does not grow over the
    last half of the late phase (its slope against ‖θ‖² ≤ tolerance): with q_∞ = q* it stays
    bounded, a suboptimal limit would make it grow at slope q* − q_∞ — the run bounds that
    deficit, and the bound is stated.

    Tolerances from the achieved accuracy ε (`achieved_accuracy`): a relative error ε in θ
    moves each y_i f(x_i) by 2ε (f is 2-homogeneous), so −ln L_s by ≤ 2εq‖θ‖² and γ̃ by
    ≤ 4εq*: (c) allows a fall of 4εq* between frames; (d) a slope of 4εq*‖θ_end‖²/Δ‖θ‖²."""
    name = _name("lyu.max_margin", traj)
    fails = setting_failures(traj)
    if not _measurable(fails):
        return unmeasured(name, MARGIN_STATEMENT, fails, run_label(traj.config))
    mm = _mm(traj)
    sr = series or margin_series(traj)
    qs = mm.q_star
    eps, eps_text = achieved_accuracy(traj)
    q_end = float(sr.q[-1])
    above = bool(np.nanmax(sr.q) > qs * (1 + 1e-9))
    lc = late_checks(sr, qs, eps)
    idx = np.flatnonzero(sr.late)
    reached, mono, trend = lc.reached, lc.mono, lc.trend
    drop, slope, tol_slope, G0, G1 = lc.drop, lc.slope, lc.tol_slope, lc.G0, lc.G1
    ok = bool(reached and not above and mono and trend)
    t_late = f"{sr.t[idx[0]]:.4g}" if idx.size else "never"
    detail = (f"q(end)/q* = {q_end / qs:.4f}, smoothed margin γ̃/q* = "
              f"{sr.smoothed[-1] / qs:.4f} at t = {traj.t[-1]:.3g}; late phase from t = "
              f"{t_late} ({idx.size} of {len(sr.frames)} frames read); γ̃'s largest fall "
              f"{drop:.2g} q*; G/q* = (1 − γ̃/q*)‖θ‖² {G0:.4g} → {G1:.4g} over the last half, "
              f"slope {slope:.3g} per unit ‖θ‖² — a suboptimal limit q_∞ with q* − q_∞ > "
              f"{max(slope, 0.0) + tol_slope:.2g} q* would have shown as a larger slope. "
              f"{mm.solution.note()}; {eps_text}")
    if above:
        detail += " — q ABOVE q*: (D3) is violated"
    if not reached:
        detail += (f". The late phase (L_s < ℓ(0)) is not reached by t = {traj.t[-1]:.3g}: "
                   "the run stops before margin maximisation starts")
    return gate(Claim(
        name, MARGIN_STATEMENT, q_end, qs,
        f"late phase reached; q ≤ q*; γ̃ falls ≤ 4ε q* = {4 * eps:.2g} q*; slope of G ≤ "
        f"{tol_slope:.2g} q*", ok, detail,
        justification="Lyu & Li 2020: in the late phase γ̃ is non-decreasing and ‖θ‖² ∝ ln t, "
        "so q → q* at the 1/ln t rate with no constant a finite run could be held to (the "
        "flow can rest near a lower KKT margin for decades of t): the trend of G, not a fixed "
        "distance to q*, is what a run can check; q ≤ q* holds for every θ on symmetric data "
        "(D3); the tolerances are the achieved accuracy's effect (docstring)",
        integrator=run_label(traj.config)), fails)


LIMIT_STATEMENT = ("the limit is the max-margin linear classifier: f(x) ∝ ⟨w*, x⟩ (odd part "
                   "along the SVM direction, even part gone) — in a run, as close as its "
                   "margin deficit allows (D4)")


def limit_claim(traj: Trajectory, series: MarginSeries | None = None) -> Claim:
    """[abstract; D1, D3, D4] The limit is the max-margin *linear* classifier, checked at the
    run's end to the accuracy its margin allows (D4): the run reaches the late phase and its
    margin deficit is closing (`late_checks`' trend: the bounds below shrink to 0); the odd
    part's weight v = Σ a_k w_k is within arccos(q/q*) of w* (plus the solver's bracket,
    arccos(γ_lo/γ_hi)); the even part at the support point of v̂'s margin is
    ≤ 2(q* − q)‖θ‖²; and the even part over random inputs (relative to the odd part) is
    smaller at the end than where the late phase starts."""
    name = _name("lyu.linear_limit", traj)
    fails = setting_failures(traj)
    if not _measurable(fails):
        return unmeasured(name, LIMIT_STATEMENT, fails, run_label(traj.config))
    mm = _mm(traj)
    sr = series or margin_series(traj)
    f = traj.n_frames - 1
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    v = odd_weight(traj, f)
    ang = _angle(v, mm.w_star)
    q_end, qs = float(sr.q[-1]), mm.q_star
    sol = mm.solution
    slack = float(np.degrees(np.arccos(np.clip(sol.lower / sol.upper, -1.0, 1.0))))
    ang_bound = float(np.degrees(np.arccos(np.clip(q_end / qs, -1.0, 1.0)))) + slack + 1e-6
    vn = v / max(float(np.linalg.norm(v)), 1e-300)
    i = int(np.argmin(y * (X @ vn)))
    hp, hm = network_output(traj, f, X[i:i + 1]), network_output(traj, f, -X[i:i + 1])
    even_i = float(abs(hp[0] + hm[0])) if hp is not None and hm is not None else float("inf")
    th2 = _theta_sq(traj, f)
    even_bound = 2.0 * max(qs - q_end, 0.0) * th2 * (1 + 1e-9) + 1e-12 * th2
    eps, eps_text = achieved_accuracy(traj)
    lc = late_checks(sr, qs, eps)
    idx = np.flatnonzero(sr.late)
    ev_end = even_part(traj, f)
    ev_late = even_part(traj, int(sr.frames[idx[0]])) if lc.reached else float("nan")
    ok = bool(lc.reached and lc.trend and ang <= ang_bound and even_i <= even_bound
              and ev_end <= ev_late)
    return gate(Claim(
        name, LIMIT_STATEMENT,
        f"∠(v, w*) = {ang:.3g}°; even part at the support point {even_i:.3g}; even/odd "
        f"{ev_late:.3g} → {ev_end:.3g}",
        f"≤ {ang_bound:.3g}°; ≤ {even_bound:.3g}; decreasing",
        "late phase reached and its margin deficit closing (G's slope as in lyu.max_margin); "
        "∠(v, w*) ≤ arccos(q/q*); |f(x_i) + f(−x_i)| ≤ 2(q* − q)‖θ‖² at the support point; "
        "the even part relative to the odd part smaller at the end than where the late phase "
        "starts", ok,
        f"v = Σ a_k w_k at t = {traj.t[-1]:.3g}, q/q* = {q_end / qs:.4f}: the margin deficit "
        f"allows {ang_bound:.3g}° (it closes like 1/ln t, so does this bound); the even part "
        "max_u |f(u) + f(−u)|/max_u |f(u) − f(−u)| over 400 random unit u. The early direction "
        f"μ̂ is {_angle(mu(traj), mm.w_star):.3g}° from w*: the late phase turns the net there. "
        + ("" if lc.reached else "The late phase (L_s < ℓ(0)) is not reached: the run stops "
           "before margin maximisation starts. ")
        + (f"G's slope {lc.slope:.3g} (tolerance {lc.tol_slope:.2g}) over the last half of the "
           "late phase. " if lc.reached else "") + mm.solution.note() + f"; {eps_text}",
        justification="(D3)'s chain of inequalities turns the margin deficit into bounds on "
        "the direction and on the even part (D4), exact for every θ; the margin converges like "
        "1/ln t, so a run at finite t can be held to these bounds, not to a fixed angle",
        integrator=run_label(traj.config)), fails)


def claims(quick: bool, run: Run) -> list[Claim]:
    out = []
    for cfg in presets(quick).values():
        tr = run(cfg)
        out += claims_for_run(tr)
    return out


def claims_for_run(traj: Trajectory) -> list[Claim]:
    """The three claims on the run on screen (gated: outside the setting, illustrations)."""
    fails = setting_failures(traj)
    series = margin_series(traj) if _measurable(fails) else None
    return [early_claim(traj), margin_claim(traj, series), limit_claim(traj, series)]


# ----------------------------------------------------------------------------- overlay
def annotate(traj: Trajectory, rules: PhaseRules, tol: Tolerances) -> PaperOverlay:
    """μ (the early direction) and w* (the SVM direction, where the net ends); the early
    phase [0, its end] and the late phase (from the loss's fall to the end) as phases."""
    out = PaperOverlay()
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    if data_failures(X, y):
        return out
    mm = _mm(traj)
    out.directions += [Direction("μ (early)", mu(traj), "signal",
                                 "Lyu et al.: the early phase's direction Σ b_i x_i (D2)")]
    if mm.separable:
        out.directions.append(Direction("w* (max margin)", mm.w_star, "target",
                                        f"Lyu et al.: the SVM direction, γ* = "
                                        f"{mm.gamma_star:.4g}"))
    t_m, t_p = (early_end(traj, float(tol.get("early_fit", TOLERANCES["early_fit"])))
                if traj.W_at(0) is not None else (None, None))
    if t_m is not None:
        out.phases.append(Phase("early phase", 0.0, t_m, "detected",
                                f"mean y_i f(x_i) below {tol.get('early_fit', 0.1):g} "
                                f"(predicted end {fmt(t_p)}, (D2))",
                                PHASE_TEXT["early phase"].plain))
        t_esc = phases.saddle_escape(traj) or t_m
        out.phases.append(Phase("late phase", max(t_m, t_esc), float(traj.t[-1]), "detected",
                                "the loss falls; the normalised margin rises to q*",
                                PHASE_TEXT["late phase"].plain))
    why = mm.failure()
    out.notes.append(f"max-margin linear classifier: γ* = {mm.gamma_star:.4g}, q* = "
                     f"{mm.q_star:.4g} ({mm.solution.note()})" if why is None else
                     f"max-margin linear classifier: {why}")
    return out


# ----------------------------------------------------------------------------- figures
def _time(traj: Trajectory) -> np.ndarray:
    return np.maximum(np.asarray(traj.t, float), float(traj.t[1]) * 0.5)


def margin_figure(traj: Trajectory, _an: Analysis | None = None) -> FigureSpec | None:
    """The normalised margin q(θ(t)) against t with q*, and the angle of v = Σ a_k w_k to
    μ and to w* (log t)."""
    if not applies_to(traj.config) or not w_recorded(traj) or _mm(traj).failure():
        return None
    mm = _mm(traj)
    t = _time(traj)
    q = np.array([normalised_margin(traj, f) for f in range(traj.n_frames)])
    v = [odd_weight(traj, f) for f in range(traj.n_frames)]
    m = mu(traj)
    left = Panel("normalised margin", Axis("t", "log"), Axis("q(θ) = min y f/‖θ‖²"),
                 (Line(t, q, "q(θ(t))", "positive"),
                  Rule(mm.q_star, "y", "q* = (1 + α)γ*/4 (max margin)", "theory")))
    right = Panel("direction of the linear part", Axis("t", "log"), Axis("angle (°)"),
                  (Line(t, np.array([_angle(x, m) for x in v]), "∠(Σ a_k w_k, μ)", "neutral",
                        "dash"),
                   Line(t, np.array([_angle(x, mm.w_star) for x in v]), "∠(Σ a_k w_k, w*)",
                        "positive")))
    return FigureSpec("Early: along μ; late: the max-margin direction w*", (left, right),
                      caption="The net first turns to μ (angle to μ near 0) as a linear "
                      "classifier; then the margin creeps up to q* while it turns to w*.")


def report_figure(quick: bool = True) -> ReportFigure:
    return ReportFigure(config(), loss_and_series(
        "lyu", "normalised margin", lambda tr: {"q(θ)": np.array(
            [normalised_margin(tr, f) for f in range(tr.n_frames)])}))


# ----------------------------------------------------------------------------- sweeps
def _margin_ratio(tr: Trajectory, _p: Sequence[Phase], _o: object) -> float:
    if not applies_to(tr.config) or tr.W_at(-1) is None or _mm(tr).failure():
        return float("nan")
    return normalised_margin(tr, tr.n_frames - 1) / _mm(tr).q_star


SUMMARIES = (
    Summary("lyu_margin_ratio", "Lyu et al.: q(θ)/q* at the end (symmetric data; 1 = the "
            "global max margin)", _margin_ratio),
)


# ----------------------------------------------------------------------------- experiments
_NOT_SYM = {"data.points": [list(p) for p in POINTS_2D] + [[-1.0, -0.6], [-1.0, 0.6]],
            "data.labels": [1.0, 1.0, 1.0, -1.0, -1.0]}
EXPERIMENTS = {
    "symmetric_2d": (
        Experiment("relu", "Plain ReLU (α = 0)", {"model.gamma": 0.0},
                   "The theorem needs a leaky slope: the claims become illustrations. Watch "
                   "the margin — with ReLU the net need not stay linear, and q may stop "
                   "short of the dashed q*.", "lyu.max_margin"),
        Experiment("asymmetric", "Drop one mirrored point", _NOT_SYM,
                   "The data are no longer symmetric (−(3, 2.5) is gone): the paper warns "
                   "that such a change can end at a linear classifier of smaller margin; "
                   "the claims no longer apply.", "lyu.linear_limit"),
        Experiment("bigger", "Start large: σ = 10⁻²", {"init.scale": 1e-2},
                   "No clean early phase: the neurons do not all turn to ±μ before the loss "
                   "moves, so the early classifier is not yet linear — the early claim "
                   "fails. The late phase still heads for q*.", "lyu.early"),
    ),
    "symmetric_3d_generated": (
        Experiment("more_leak", "More leak: α = 0.5", {"model.gamma": 0.5},
                   "q* = (1 + α)γ*/4 grows with α: the dashed level moves up and the margin "
                   "climbs towards it — more slowly: at t = 10⁶ it is still 2 % short (the "
                   "late phase closes the gap like 1/ln t).", "lyu.max_margin"),
        Experiment("other_draw", "Other random points (seed 1)", {"seed": 1},
                   "The same theorem, but a slower late phase: at t = 10⁶ the margin is still "
                   "well below q* and the linear part a few degrees off w*, both still "
                   "closing in — the limit is reached only as t → ∞.", "lyu.linear_limit"),
        Experiment("smaller", "Start 100 times smaller", {"init.scale": Times(0.01)},
                   "The early phase lasts longer, by ln(100)/ρ, and the neurons line up on "
                   "±μ even more tightly before the loss moves.", "lyu.early"),
    ),
}


# ----------------------------------------------------------------------------- the paper
PAPER = Paper(
    key="lyu",
    order=50,
    title="Lyu, Li, Wang & Arora (NeurIPS 2021) — margin maximization and simplicity bias",
    short="Lyu et al. 2021",
    text=(
        "Leaky ReLU (slope α), logistic loss, **linearly separable and symmetric** data (every "
        "(xᵢ, yᵢ) comes with (−xᵢ, −yᵢ)), both layers trained from a tiny Gaussian start. "
        "**Early**, the net is a *linear* classifier: every neuron turns to ±μ, "
        "μ = Σ bᵢ xᵢ, before the loss moves (the simplicity bias). **Late**, gradient flow "
        "maximises the normalised margin q = min yᵢ f(xᵢ)/‖θ‖² **globally**, whatever the "
        "width: it reaches q* = (1 + α)γ*/4, the margin of the max-margin *linear* "
        "classifier w* (γ* from an SVM), and the net becomes linear along w*. Without "
        "symmetry this can fail (the paper's warning). Overlays: μ (grey) and w* (green); "
        "below, q(θ(t)) against q* and the angle of the linear part to μ and w*."),
    presets=presets,
    preset_titles={
        "symmetric_2d": "Three points and their mirror images in the plane · early linear, "
                        "late max margin (§1)",
        "symmetric_3d_generated": "Five points drawn in R³ and their mirror images · the "
                                  "same on new data",
    },
    claims=claims,
    claims_for_run=claims_for_run,
    annotate=annotate,
    phase_text=PHASE_TEXT,
    applies_to=applies_to,
    tolerances=TOLERANCES,
    report_figure=report_figure,
    numbers=NUMBERS,
    summaries=SUMMARIES,
    sections=(
        Section("Margin maximisation", "the normalised margin rises to the max-margin level q* "
                "while the linear part turns from μ to the SVM direction w*.", margin_figure),
    ),
    experiments=EXPERIMENTS,
    knobs=(
        Knob("gamma", "leaky slope α", "model.gamma", min_value=0.0, max_value=1.0,
             step=ladders.GAMMA_STEP, format="%g",
             help="σ(u) = max(u, αu). The theorem needs 0 < α < 1; the best margin is "
                  "q* = (1 + α)γ*/4."),
        Knob("std", "init std σ", "init.scale", options=ladders.EPS, format="%g",
             help="Spread of the Gaussian initial weights. Larger: a shorter, blurrier "
                  "early phase."),
    ),
    showcases=(
        Showcase("symmetric_2d", "Lyu et al. 2021 · max margin",
                 "Symmetric 2-D data: first a linear classifier along μ, then the margin "
                 "climbs to the SVM's."),
    ),
    comparisons={
        "lyu_relu": Comparison(
            "Leaky ReLU α = 0.2 vs ReLU (Lyu et al.'s symmetric 2-D data)",
            "The same symmetric points. With a leaky slope the net ends linear at the global "
            "max margin; with ReLU the theorem does not apply.",
            config(), config(gamma=0.0)),
    },
)
