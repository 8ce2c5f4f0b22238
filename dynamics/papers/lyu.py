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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import phases, theory
from ..annotations import Analysis, Direction, Phase
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
    full_w,
    gate,
    loss_and_series,
    run_label,
    run_name,
)
from .claims import Claim, fmt
from .experiments import Experiment, Times

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
MARGIN_TOL = 0.02
"""q(θ(t)) approaches q* like 1/ln t in the late phase (Lyu & Li 2020's smoothed margin): at
t = 10⁴ the 2-D preset is 1.0 % below q* under gf and GD alike, the generated one 0.9 % at
t = 10⁶; 2 % fails a run stopped early in the late phase (t = 20: 20 % below)."""
ANGLE_TOL = 2.0
EVEN_TOL = 0.02


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
    """The data's hard-margin linear classifier through 0 (scikit-learn's SVC, an independent
    solver): unit direction `w_star`, margin `gamma_star` = min_i y_i⟨w*, x_i⟩, and the net's
    global max normalised margin q* = c(1 + α)γ*/4 (D3); `separable` False when no linear
    classifier through 0 separates the data."""

    w_star: np.ndarray
    gamma_star: float
    q_star: float
    separable: bool


def max_margin(X: np.ndarray, y: np.ndarray, alpha: float, c: float = 1.0) -> MaxMargin:
    """(D3) from scikit-learn's SVC (linear kernel, C = 1e8: the hard margin; its intercept is
    0 on symmetric data, and the margin is measured through 0 from the direction alone)."""
    from sklearn.svm import SVC

    svm = SVC(kernel="linear", C=1e8, tol=1e-10).fit(X, y)
    w = np.asarray(svm.coef_[0], float)
    u = w / max(float(np.linalg.norm(w)), 1e-300)
    gam = float(np.min(y * (X @ u)))
    return MaxMargin(u, gam, c * (1.0 + alpha) * gam / 4.0, bool(gam > 0))


def _mm(traj: Trajectory) -> MaxMargin:
    return max_margin(np.asarray(traj.X, float), np.asarray(traj.y, float),
                      float(traj.config.model.gamma), float(traj.config.model.c))


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


def early_outputs(traj: Trajectory, t: np.ndarray) -> np.ndarray:
    """f(x_i) at times t under the early-phase flow (D2), exactly ((len(t), n)): per neuron,
    p_k = ⟨w_k, μ̂⟩ and a_k obey d/dt (p, a) = ρ (a, p), so p ± a = (p₀ ± a₀) e^{±ρt}; w_k's
    part ⊥ μ stays w_k(0)'s."""
    X = np.asarray(traj.X, float)
    m = mu(traj)
    nm = float(np.linalg.norm(m))
    alpha, c = float(traj.config.model.gamma), float(traj.config.model.c)
    rho = c * (1.0 + alpha) * nm / 2.0
    mh = m / nm
    W0, a0 = full_w(traj, 0), np.asarray(traj.a[0], float)
    p0 = W0 @ mh
    perp = W0 - p0[:, None] * mh[None]
    ep, em = np.exp(rho * t)[:, None], np.exp(-rho * t)[:, None]
    plus, minus = (p0 + a0)[None] / 2.0, (p0 - a0)[None] / 2.0
    p, a = plus * ep + minus * em, plus * ep - minus * em  # (T, m)
    Z = p[:, :, None] * (X @ mh)[None, None]  # (T, m, n), σ applied in place
    Z += (perp @ X.T)[None]
    if alpha == 0.0:
        np.maximum(Z, 0.0, out=Z)
    else:
        np.multiply(Z, alpha, out=Z, where=Z <= 0)
    return c * np.einsum("tk,tkn->tn", a, Z)


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
    fine = np.geomspace(max(t[1], 1e-6), horizon, 4000)
    pred = early_outputs(traj, fine) @ y / len(y)
    return _cross_log(t, fit, level), _cross_log(fine, pred, level)


# ----------------------------------------------------------------------------- hypotheses
def _symmetric(X: np.ndarray, y: np.ndarray) -> bool:
    """Every (x_i, y_i) has its mirror (−x_i, −y_i) in the data (to SYMMETRY_TOL)."""
    for x, lab in zip(X, y, strict=True):
        d = np.abs(X + x[None]).max(axis=1)
        if not np.any((d <= SYMMETRY_TOL * max(1.0, float(np.abs(x).max()))) & (y == -lab)):
            return False
    return True


def applies_to(config: Config) -> bool:
    """Binary classification on symmetric data (checked on the built data)."""
    if not config.is_classification:
        return False
    n, _d = data_shape(config.data)
    if n > 2000:
        return False
    ds = build_dataset(config)
    return _symmetric(ds.X, ds.y)


def setting_failures(traj: Trajectory) -> list[str]:
    """The theorem's setting ([] = met): ±1 labels, logistic or exponential loss, leaky ReLU
    0 < α < 1, both layers trained, symmetric data, separable through 0, a small start (max
    |f(x_i)| ≤ 0.01 at t = 0)."""
    cfg = traj.config
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    if not traj.classification:
        return ["the labels are not ±1 (a classification theorem)"]
    out = []
    if cfg.loss.kind not in ("logistic", "exponential"):
        out.append(f"the loss is {cfg.loss.kind}, not logistic or exponential")
    if not 0 < cfg.model.gamma < 1:
        out.append(f"α = γ = {cfg.model.gamma:g}: the theorem is for leaky ReLU, 0 < α < 1")
    if not cfg.model.train_output:
        out.append("the output layer is frozen (the theorem trains both layers)")
    if not _symmetric(X, y):
        out.append("the data are not symmetric (some (x_i, y_i) has no (−x_i, −y_i))")
    elif not _mm(traj).separable:
        out.append("no linear classifier through 0 separates the data")
    h0 = network_output(traj, 0, X)
    if h0 is not None and np.abs(h0).max() > SMALL_START:
        out.append(f"not a small start: max |f(x_i)| = {np.abs(h0).max():.3g} at t = 0 "
                   f"(> {SMALL_START:g})")
    return out


def _name(base: str, tr: Trajectory) -> str:
    return f"{base}[{run_name(presets, tr.config)}]"


# ----------------------------------------------------------------------------- claims
def early_claim(traj: Trajectory, angle_tol: float = 5.0) -> Claim:
    """[derived, (D2)] The simplicity bias of the early phase: when the early phase ends (the
    mean y_i f(x_i) reaches 0.1, at the time (D2) predicts within 3 %), every neuron of
    norm ≥ 10 % of the largest is within `angle_tol` of ±μ̂ — sign(a_k) — so the classifier
    is the linear sign⟨μ, x⟩ (it agrees on ≥ 99 % of random inputs)."""
    t_m, t_p = early_end(traj)
    m = mu(traj)
    mh = m / max(float(np.linalg.norm(m)), 1e-300)
    ok_time = t_m is not None and t_p is not None and abs(t_m - t_p) <= 0.03 * t_p
    worst, agree = float("nan"), float("nan")
    if t_m is not None:
        f = max(traj.frame_at(t_m) - 1, 1)
        W, a = full_w(traj, f), np.asarray(traj.a[f], float)
        nw = np.linalg.norm(W, axis=1)
        big = nw >= 0.1 * nw.max()
        cos = (W[big] @ mh) * np.sign(a[big]) / nw[big]
        worst = float(np.degrees(np.arccos(np.clip(cos.min(), -1.0, 1.0))))
        rng = np.random.default_rng(1)
        U = rng.standard_normal((1000, traj.X.shape[1]))
        h = network_output(traj, f, U)
        agree = float(np.mean(np.sign(h) == np.sign(U @ m))) if h is not None else 0.0
    ok = bool(ok_time and worst <= angle_tol and agree >= 0.99)
    return gate(Claim(
        _name("lyu.early", traj),
        "simplicity bias early in training [derived form]: before the loss moves, every "
        "neuron turns to ±μ̂ (μ = Σ b_i x_i), so the net is the linear classifier sign⟨μ, x⟩; "
        "the early phase ends when (D2) says",
        f"end at t = {fmt(t_m)}; worst neuron {worst:.3g}° from ±μ̂; {100 * agree:.1f} % "
        "agreement with sign⟨μ, x⟩",
        f"end at t = {fmt(t_p)}; ≤ {angle_tol:g}°; ≥ 99 %",
        f"end within 3 % of (D2)'s; neurons of norm ≥ 10 % of the largest within "
        f"{angle_tol:g}° of ±μ̂; ≥ 99 % agreement on 1000 random inputs", ok,
        "The end of the early phase: the mean of y_i f(x_i) reaches 0.1 (measured on the "
        "recorded outputs, interpolated in ln between frames); the neurons are read one frame "
        f"before it. μ̂ is {_angle(mh, _mm(traj).w_star):.3g}° from the SVM direction w*: the "
        "early classifier is linear, not yet the max-margin one.",
        justification="(D2) is exact for f = 0: at 10 % of the fit its error is a few % of "
        "f, under 1 % of the time; the part of w_k ⊥ μ is the start's scale against a norm "
        "grown e^{ρt}-fold (measured ≤ 2° at σ = 1e-4; 86° at σ = 1e-2)",
        integrator=run_label(traj.config)), setting_failures(traj))


def margin_claim(traj: Trajectory, tol: float = MARGIN_TOL) -> Claim:
    """[abstract; D3] The flow maximises the normalised margin globally: q(θ(t)) rises to
    q* = c(1 + α)γ*/4 (γ* from scikit-learn's SVM) — within `tol` at the end, and never
    above q* at any frame (D3's bound)."""
    mm = _mm(traj)
    q = np.array([normalised_margin(traj, f) for f in range(traj.n_frames)])
    q_end = float(q[-1])
    above = float(np.nanmax(q)) > mm.q_star * (1 + 1e-6)
    ok = bool(mm.separable and np.isfinite(q_end) and q_end >= (1 - tol) * mm.q_star
              and not above)
    return gate(Claim(
        _name("lyu.max_margin", traj),
        "gradient flow reaches the global max margin: q(θ) = min_i y_i f(x_i)/‖θ‖² → "
        "q* = (1 + α)γ*/4, the margin of the max-margin linear classifier (D3)",
        q_end, mm.q_star, f"q(end) ≥ (1 − {tol:g}) q*, q ≤ q* at every frame", ok,
        f"γ* = {mm.gamma_star:.6g} (scikit-learn SVC, linear kernel, C = 1e8); q(end)/q* = "
        f"{q_end / mm.q_star:.4f} at t = {traj.t[-1]:.3g}; max q over the run "
        f"{np.nanmax(q):.6g}" + (" — ABOVE q*: (D3) is violated" if above else ""),
        justification="q* is an upper bound for every θ on symmetric data (D3), so a run can "
        "only approach it; the late phase's approach is ∝ 1/ln t (Lyu & Li 2020), 1.0 % at "
        "t = 10⁴ on the preset",
        integrator=run_label(traj.config)), setting_failures(traj))


def limit_claim(traj: Trajectory) -> Claim:
    """[abstract; D1, D3] The limit is the max-margin *linear* classifier: the odd part's
    weight v = Σ a_k w_k points along the SVM direction w* (within ANGLE_TOL) and the even
    part of f is ≤ EVEN_TOL of its odd part."""
    mm = _mm(traj)
    f = traj.n_frames - 1
    ang = _angle(odd_weight(traj, f), mm.w_star)
    ev = even_part(traj, f)
    ok = bool(mm.separable and ang <= ANGLE_TOL and ev <= EVEN_TOL)
    return gate(Claim(
        _name("lyu.linear_limit", traj),
        "the limit is the max-margin linear classifier: f(x) ∝ ⟨w*, x⟩ (odd part along the "
        "SVM direction, even part gone)",
        f"∠(v, w*) = {ang:.3g}°; even/odd = {ev:.3g}", "0°; 0",
        f"∠ ≤ {ANGLE_TOL:g}°, even part ≤ {EVEN_TOL:.0%} of the odd part", ok,
        f"v = Σ a_k w_k at t = {traj.t[-1]:.3g}; w* from scikit-learn's SVC; the even part "
        "max_u |f(u) + f(−u)| over 400 random unit u. The early direction μ̂ is "
        f"{_angle(mu(traj), mm.w_star):.3g}° from w*: the late phase turns the net there.",
        justification="the direction converges like 1/ln t too (0.8° at t = 10⁴ on the "
        "preset); a max-margin net has no even part on the data (D3's equalities), and the "
        "preset's reaches 0.1 %",
        integrator=run_label(traj.config)), setting_failures(traj))


def claims(quick: bool, run: Run) -> list[Claim]:
    out = []
    for cfg in presets(quick).values():
        tr = run(cfg)
        out += [early_claim(tr), margin_claim(tr), limit_claim(tr)]
    return out


def claims_for_run(traj: Trajectory) -> list[Claim]:
    """The three claims on the run on screen (gated: outside the setting, illustrations)."""
    return [early_claim(traj), margin_claim(traj), limit_claim(traj)]


# ----------------------------------------------------------------------------- overlay
def annotate(traj: Trajectory, rules: PhaseRules, tol: Tolerances) -> PaperOverlay:
    """μ (the early direction) and w* (the SVM direction, where the net ends); the early
    phase [0, its end] and the late phase (from the loss's fall to the end) as phases."""
    out = PaperOverlay()
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    if not _symmetric(X, y):
        return out
    mm = _mm(traj)
    out.directions += [Direction("μ (early)", mu(traj), "signal",
                                 "Lyu et al.: the early phase's direction Σ b_i x_i (D2)")]
    if mm.separable:
        out.directions.append(Direction("w* (max margin)", mm.w_star, "target",
                                        f"Lyu et al.: the SVM direction, γ* = "
                                        f"{mm.gamma_star:.4g}"))
    t_m, t_p = early_end(traj, float(tol.get("early_fit", TOLERANCES["early_fit"])))
    if t_m is not None:
        out.phases.append(Phase("early phase", 0.0, t_m, "detected",
                                f"mean y_i f(x_i) below {tol.get('early_fit', 0.1):g} "
                                f"(predicted end {fmt(t_p)}, (D2))",
                                "neurons turn to ±μ, classifier linear"))
        t_esc = phases.saddle_escape(traj) or t_m
        out.phases.append(Phase("late phase", max(t_m, t_esc), float(traj.t[-1]), "detected",
                                "the loss falls; the normalised margin rises to q*",
                                "margin grows slowly, neurons turn to w*"))
    out.notes.append(f"max-margin linear classifier: γ* = {mm.gamma_star:.4g}, q* = "
                     f"{mm.q_star:.4g} (scikit-learn SVC)")
    return out


# ----------------------------------------------------------------------------- figures
def _time(traj: Trajectory) -> np.ndarray:
    return np.maximum(np.asarray(traj.t, float), float(traj.t[1]) * 0.5)


def margin_figure(traj: Trajectory, _an: Analysis | None = None) -> FigureSpec | None:
    """The normalised margin q(θ(t)) against t with q*, and the angle of v = Σ a_k w_k to
    μ and to w* (log t)."""
    if not applies_to(traj.config) or len(traj.W_frames) < traj.n_frames:
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
    if not applies_to(tr.config) or tr.W_at(-1) is None:
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
    claims=claims,
    claims_for_run=claims_for_run,
    annotate=annotate,
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
        Knob("gamma", "leaky slope α", "model.gamma", 0.2, min_value=0.0, max_value=1.0,
             step=0.05, format="%g", help="The theorem needs 0 < α < 1; q* = (1 + α)γ*/4."),
        Knob("std", "init std σ", "init.scale", "preset",
             options=("preset", "1e-6", "1e-4", "1e-3", "1e-2"),
             help="'preset': 1e-4. Larger: a shorter, blurrier early phase.",
             keep=lambda v: v == "preset"),
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
