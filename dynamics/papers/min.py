"""Min, Mallada & Vidal (ICLR 2024): early neuron alignment in two-layer ReLU networks with
small initialisation.

Claims: for a time T = log(1/(√h ε))/(4 n X_max) the norms stay O(ε) while every neuron with
a_j > 0 turns into the cone S₊ of the class sum x₊ (a_j < 0: S₋, x₋); the final first layer
is low-rank (stable rank ≤ 2); training only the first layer shows no two phases (A.5).
Time: their loss is a SUM with c = 1, as our "sum" reduction (ours = theirs).

Every claim is pass/fail on a run where it can fail (the stable rank on the 64-dimensional
digits, not on 2-D data). T is a theorem's bound: it is drawn only on runs meeting the
theorem's assumptions (`assumption_failures`), otherwise a note says which one fails.

Theorem 1's statements (the cones, t_cones ≤ T) also need its ε condition, eq. (28): its
second term is exactly T ≥ t₁ — the alignment phase outlasts the time the neurons need to
turn. With the proof's constant t₁ = 16 log n/(√min{ζ,ξ} √μ X_min) it asks ε below the
smallest double for most data (ξ's set K is not in our transcription either), so the claims
check its sharp form T ≥ t₁*, where t₁* is the alignment time of the ε-free flow eq. (4)
itself from the run's start (`zero_output.directional_flow`, exact): Theorem 1 holds for that
flow, so t₁* ≤ t₁ and eq. (28) implies T ≥ t₁*. A run with T < t₁* is certainly outside the
theorem — its claims are illustrations naming eq. (28) and the ε that would meet it
(`theorem_failures`); the alignment still happens there, on the ε-free clock
(`time_outside_claim`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import phases, theory
from ..annotations import Direction, TimeMarker
from ..config import Config
from ..phases import PhaseRules
from ..trajectory import Trajectory
from .base import (
    BuiltinSweep,
    Comparison,
    Paper,
    PaperOverlay,
    Published,
    ReportFigure,
    Run,
    Showcase,
    Summary,
    Tolerances,
    dataset_view,
    full_w,
    gate,
    loss_and_series,
    rate_failures,
    run_label,
    run_name,
    scale_width_gamma_knobs,
)
from .claims import Claim, fmt
from .experiments import Experiment, Times
from .zero_output import directional_flow

_FIG5 = "Figure 5 (MNIST 0 vs 1; h = 50, α = 1e-6, GD η = 2e-3)"
NUMBERS: dict[str, Published] = {
    "width": Published(50, _FIG5), "alpha": Published(1e-6, _FIG5),
    "lr": Published(2e-3, _FIG5),
    # "good alignment after ~2000 iterations"
    "aligned_by_iteration": Published(2000, _FIG5),
    # "after ~3000 iterations ||W||_2^2 grows, loss decreases"
    "loss_drop_from_iteration": Published(3000, _FIG5),
    "final_stable_rank": Published(1.0, _FIG5 + ": 'below 2 and ≈ 1'"),
}


# ----------------------------------------------------------------------------- presets
def toy_config(scale: float = 1e-20, **updates: Any) -> Config:
    """Their Appendix A.1-style toy data in R² (four points, two classes), m = 50, exponential
    loss summed, balanced start of entry scale `scale`, adaptive gf to t = 120 (at ε = 1e-20
    the loss falls from t ≈ 20 and is below 1e-2 by t ≈ 60: the fit is on screen)."""
    cfg = Config.from_dict({
        "data": {"kind": "points", "angles_deg": [10.0, 60.0, 200.0, 250.0],
                 "radii": [1.0, 0.8, 1.0, 0.9], "labels": [1.0, 1.0, -1.0, -1.0]},
        "model": {"width": 50}, "loss": {"kind": "exponential", "reduction": "sum"},
        "init": {"scheme": "balanced", "scale": scale, "normalisation": "none"},
        "integrator": {"method": "gf", "t_end": 120.0, "rtol": 1e-7},
        "record": {"frames": 200, "t_first": 1e-3}})
    return cfg.with_updates(updates) if updates else cfg


def digits_config(quick: bool = True, *, first_layer_only: bool = False) -> Config:
    """Their Figure 5 on scikit-learn's 8×8 digits 0 vs 1 (60 per class when quick, else all),
    m = 50, Gaussian start of std 1e-6, GD η = 2e-3 to t = 40 (20 000 iterations). With
    `first_layer_only` the output layer is frozen at a_j = ±1 (their Appendix A.5)."""
    d: dict[str, Any] = {
        "data": {"kind": "digits", "classes": [0, 1], "n_per_class": 60 if quick else None},
        "model": {"width": 50}, "loss": {"kind": "exponential", "reduction": "sum"},
        "init": {"scheme": "gaussian", "scale": 1e-6, "normalisation": "none"},
        "integrator": {"method": "gd", "lr": 2e-3, "t_end": 40.0},
        "record": {"frames": 120, "t_first": 2e-3}}
    if first_layer_only:
        d["model"] = {"width": 50, "train_output": False}
        d["init"] = {"scheme": "fixed_output", "scale": 1e-6, "normalisation": "none",
                     "output_value": 1.0, "output_norm": "none"}
    return Config.from_dict(d)


def presets(quick: bool = True) -> dict[str, Config]:
    """name → Config (the digits use 60 images per class when quick, all otherwise)."""
    return {"toy_2d": toy_config(), "toy_2d_alpha1e-6": toy_config(1e-6),
            "digits_0v1": digits_config(quick),
            "digits_first_layer_only": digits_config(quick, first_layer_only=True)}


# ----------------------------------------------------------------------------- claims
def _mean_pos_cos(traj: Trajectory, f: int, target: np.ndarray) -> float:
    W = full_w(traj, f)
    sel = traj.a[f] > 0
    wbar = W[sel].mean(axis=0)
    return float(wbar @ target / max(np.linalg.norm(wbar) * np.linalg.norm(target), 1e-300))


def _cone_fraction(W: np.ndarray, traj: Trajectory, a: np.ndarray) -> tuple[float, int]:
    """Fraction of non-dead neurons in their sign's cone (S₊ for a_j > 0, S₋ for a_j < 0)."""
    cone = theory.min_cones(W, traj.X, traj.y)
    live = cone != "dead"
    good = np.where(a > 0, cone == "S+", cone == "S-")
    return (float(good[live].mean()) if live.any() else 0.0), int(live.sum())


def two_phase_fraction(tr: Trajectory, xp: np.ndarray) -> float:
    """ln(max‖w‖(t_al)/max‖w‖(0)) / ln(1/max‖w‖(0)) at t_al, the first frame where
    cos(mean positive neuron, x₊) ≥ 0.9: how far to O(1) the norms have grown when the
    directions are aligned (< 0.5: two phases)."""
    mx = tr.norms.max(axis=1)
    f_al = tr.n_frames - 1
    for f in range(1, tr.n_frames):
        if (tr.a[f] > 0).any() and _mean_pos_cos(tr, f, xp) >= 0.9:
            f_al = f
            break
    return float(np.log(mx[f_al] / mx[0]) / np.log(1.0 / mx[0]))


def separability(X: np.ndarray, y: np.ndarray) -> float:
    """Assumption 1's μ = min_{i,j} cos(y_i x_i, y_j x_j) (> 0: μ-orthogonally separable);
    −inf when a point is zero (no direction)."""
    Z = np.asarray(X, float) * np.asarray(y, float)[:, None]
    nz = np.linalg.norm(Z, axis=1)
    if not len(Z) or (nz == 0).any():
        return float("-inf")
    U = Z / nz[:, None]
    return float(np.min(U @ U.T))


def bound_for(traj: Trajectory) -> theory.MinBound:
    """`theory.min_alignment_bound` for this run (W_max from the recorded W(0))."""
    return theory.min_alignment_bound(traj.config, dataset_view(traj), traj.W_at(0))


def assumption_failures(traj: Trajectory) -> list[str]:
    """Which of Lemma 1 / Theorem 1's assumptions this run breaks ([] = all met): ±1 labels,
    exponential or logistic loss, ReLU (γ = 0), both layers trained from a balanced start,
    Assumption 1 (μ > 0) and Lemma 1's ε ≤ 1/(4√h X_max W_max²)."""
    cfg = traj.config
    out: list[str] = []
    if not traj.classification:
        return ["the labels are not ±1 (a classification theorem)"]
    if cfg.loss.kind not in ("exponential", "logistic"):
        out.append(f"the loss is {cfg.loss.kind}, not exponential or logistic")
    if cfg.model.gamma != 0:
        out.append(f"γ = {cfg.model.gamma:g}: leaky ReLU, the theorem is for ReLU (γ = 0)")
    if not cfg.model.train_output:
        out.append("the output layer is frozen (the theorem trains both layers)")
    if cfg.init.scheme != "balanced":
        out.append(f"the start is {cfg.init.scheme}, not balanced (|a_j| = ‖w_j‖, eq. 3)")
    out += rate_failures(cfg)
    mu = separability(traj.X, traj.y)
    if not mu > 0:
        out.append(f"the data are not separable in Assumption 1's sense: μ = min cos(y_i x_i, "
                   f"y_j x_j) = {mu:.3g} ≤ 0")
    if traj.W_at(0) is not None:
        mb = bound_for(traj)
        if not mb.lemma_condition:
            lim = 1.0 / (4.0 * np.sqrt(mb.h) * mb.X_max * mb.W_max**2)
            out.append(f"Lemma 1's ε condition fails: ε = σ₀√D = {mb.epsilon:.3g} > "
                       f"1/(4√h X_max W_max²) = {lim:.3g}")
    else:
        out.append("W(0) was not recorded (the ε condition needs W_max)")
    return out


def epsilon_free_alignment(traj: Trajectory) -> tuple[float, str]:
    """t₁*: the time at which the ε-free flow eq. (4) (`zero_output.directional_flow` from the
    run's W(0), signs sign a_j(0), its loss's field weights) has every neuron in its cone for
    good — dead, or in S₊ with a_j > 0, or in S₋ with a_j < 0 (cones are trapping for that
    flow: inside S₊ the field is x₊ and the neuron moves on to x̄₊ ∈ S₊). Returns (t₁*, "")
    or (inf, why it has none: a neuron slides along a kink or ends outside its cone, or a
    bound stopped the flow)."""
    W0 = traj.W_at(0)
    if W0 is None:
        return float("inf"), "W(0) was not recorded (the ε-free flow starts from it)"
    cfg = traj.config
    b = theory.field_weights(traj.y, traj.sw, cfg.loss.kind, cfg.loss.reduction)
    s = np.where(traj.a[0] >= 0, 1.0, -1.0)
    fl = directional_flow(traj.X, b, W0, s, cfg.model.c, cfg.model.gamma)
    if fl.stopped:
        return float("inf"), f"the ε-free flow's alignment was {fl.stopped}"
    pos = np.asarray(traj.y) > 0
    A = fl.active
    ok = ~A.any(axis=1) | ((A == pos).all(axis=1) & (s > 0)) | ((A == ~pos).all(axis=1) & (s < 0))
    if fl.sliding.any() or not ok.all():
        bad = int((fl.sliding | ~ok).sum())
        return float("inf"), (f"the ε-free flow eq. (4) from this start leaves {bad} neuron(s) "
                              "outside their cones (sliding along a kink or ending elsewhere)")
    return float(fl.last_change.max(initial=0.0)), ""


def eq28_failures(traj: Trajectory) -> list[str]:
    """Theorem 1's ε condition, eq. (28), in the forms a run can check ([] = met). First
    term: ε ≤ min{μ,ζ,ξ}√μ X_min/(4√h n X_max²) ≤ μ^{3/2} X_min/(4√h n X_max²) (checked
    against the latter: necessary). Second term: T ≥ t₁ (the alignment phase outlasts the
    turning), checked as T ≥ t₁* (`epsilon_free_alignment`; t₁* ≤ t₁, so necessary too). Call
    it on runs that meet `assumption_failures` (μ > 0, balanced, W(0) recorded)."""
    mb = bound_for(traj)
    mu = separability(traj.X, traj.y)
    x_min = float(np.linalg.norm(traj.X, axis=1).min())
    out: list[str] = []
    first = mu ** 1.5 * x_min / (4.0 * np.sqrt(mb.h) * mb.n * mb.X_max ** 2)
    if not mb.epsilon <= first:
        out.append(f"eq. (28)'s first term fails: ε = {mb.epsilon:.3g} > μ^(3/2) X_min/(4√h n "
                   f"X_max²) = {first:.3g} (the term, min{{μ,ζ,ξ}}√μ X_min/(4√h n X_max²), is "
                   "at most that)")
    t1s, why = epsilon_free_alignment(traj)
    if why:
        out.append(why)
    elif mb.T_ours < t1s:
        unit = theory.time_per_sum_unit(traj.config, mb.n)
        eps_ok = float(np.exp(-4.0 * mb.n * mb.X_max * t1s / unit) / np.sqrt(mb.h))
        scale_ok = traj.config.init.scale * eps_ok / mb.epsilon
        out.append(f"eq. (28)'s second term (T ≥ t₁) fails: T = {mb.T_ours:.4g} < t₁* = "
                   f"{t1s:.4g}, the alignment time of the ε-free flow eq. (4) from this start "
                   "(≤ t₁): the norms leave Lemma 1's window before the neurons reach their "
                   f"cones; it needs ε ≤ e^(−4 n X_max t₁*)/√h = {eps_ok:.3g} (init scale ≤ "
                   f"{scale_ok:.3g})")
    return out


def theorem_failures(traj: Trajectory) -> list[str]:
    """Theorem 1's hypotheses a run can check: `assumption_failures` (Lemma 1's), then eq.
    (28) (`eq28_failures`)."""
    fails = assumption_failures(traj)
    return fails or eq28_failures(traj)


def _eps_text(traj: Trajectory, mb: theory.MinBound) -> str:
    """ε as the figure's title gives it (the config's init scale) and in the paper's
    normalisation W(0) = ε W₀, W₀ entries N(0, 1/D)."""
    return (f"ε = {traj.config.init.scale:g} (this run's init scale, "
            f"{traj.config.init.normalisation} normalisation; in the paper's W(0) = ε W₀ with "
            f"W₀ entries N(0, 1/D): σ₀√D = {mb.epsilon:.3g})")


def _name(base: str, tr: Trajectory) -> str:
    """A claim's name with the run it got (`base.run_name`: the preset's name or what
    differs from the nearest preset)."""
    return f"{base}[{run_name(presets, tr.config)}]"


def setting_failures(traj: Trajectory) -> list[str]:
    """The structural setting of the paper's experiments (Figure 5, Appendix A.5), which the
    observation claims need: ±1 labels, exponential or logistic loss, ReLU. (The init scale
    is what those claims test, so it is not gated.)"""
    cfg = traj.config
    if not traj.classification:
        return ["the labels are not ±1 (a classification setting)"]
    out = []
    if cfg.loss.kind not in ("exponential", "logistic"):
        out.append(f"the loss is {cfg.loss.kind}, not exponential or logistic")
    if cfg.model.gamma != 0:
        out.append(f"γ = {cfg.model.gamma:g}: leaky ReLU (the paper's network is ReLU)")
    return out + rate_failures(cfg)


def cone_claim(tr: Trajectory) -> Claim:
    """At the detected end of alignment every non-dead neuron is in its sign's cone (Theorem
    1, part 1; gated by its hypotheses, `theorem_failures`: outside eq. (28) the norms can
    grow before the turning is over — at ε = 1e-6 the detected end comes before the cones on
    some data)."""
    t_a, why = phases.alignment_end(tr)
    f = tr.frame_at(t_a if t_a is not None else tr.t[-1])
    frac, n_live = _cone_fraction(full_w(tr, f), tr, tr.a[f])
    return gate(Claim(
        _name("min.cones", tr),
        "at the detected end of alignment every non-dead neuron with a_j > 0 is in S₊ "
        "(a_j < 0: S₋)",
        f"{100 * frac:.0f} % of {n_live} non-dead neurons", "100 %", "exact (every neuron)",
        frac == 1.0 and n_live > 0, f"{why}; cones at frame t = {tr.t[f]:.4g}",
        justification="Theorem 1, part 1 is a statement about every neuron; a cone is a "
                      "sign pattern of ⟨w_j, x_i⟩, exact in floating point",
        integrator=run_label(tr.config)), theorem_failures(tr))


def time_claim(tr: Trajectory) -> Claim:
    """t_cones ≤ T (Theorem 1: under eq. (28) the neurons are in their cones by t₁ ≤ T).
    Gated by the hypotheses a run can check (`theorem_failures`: Lemma 1's, then eq. (28) with
    its second term as T ≥ t₁*, the ε-free flow's own alignment time); outside them an
    illustration naming the failed one, labelled with the run it got. Tolerance: none on T (a
    bound); t_cones is the first recorded frame from which every neuron stays in its cone, so
    the frames can only make it later — it is compared with T⁺, the first frame at or after
    T."""
    mb = bound_for(tr)
    t_c = phases.cone_time(tr)
    k = int(np.searchsorted(tr.t, mb.T_ours, side="left"))
    t_plus = float(tr.t[k]) if k < tr.n_frames else float("inf")
    t1s, _why = epsilon_free_alignment(tr) if tr.W_at(0) is not None else (np.inf, "")
    return gate(Claim(
        _name("min.time", tr),
        "for ε small enough that T = log(1/(√h ε))/(4 n X_max) exceeds the alignment time "
        "(eq. 28), every neuron is in its cone (for good) by T",
        f"t_cones = {fmt(t_c)}", f"≤ T = {mb.T_ours:.4g} (first frame at or after it: "
        f"{t_plus:.4g})", "none (a bound; read on the frames)",
        t_c is not None and t_c <= t_plus,
        f"{_eps_text(tr, mb)}; ε-free flow's alignment time t₁* = {t1s:.4g}; time in the "
        "paper's units (sum loss, c = 1: ours = theirs)",
        justification="T is an upper bound of the theorem under eq. (28); t_cones is the first "
                      "recorded time from which every neuron stays in its cone, later than "
                      "the true time by less than a frame, so it is held to the first frame "
                      "at or after T",
        integrator=run_label(tr.config)), theorem_failures(tr))


def _outside_failures(tr: Trajectory, tr_small: Trajectory) -> list[str]:
    """`time_outside_claim`'s setting: the run inside Lemma 1's assumptions
    (`assumption_failures`: T is its window) but above eq. (28)'s second term (T < t₁*: the
    case the claim is about), and the reference run inside Theorem 1's hypotheses
    (`theorem_failures`: its t_cones is the theorem's)."""
    fails = assumption_failures(tr)
    if not fails and not any("second term" in f for f in eq28_failures(tr)):
        fails.append("this run meets eq. (28)'s second term (T ≥ t₁*): T bounds its "
                     "alignment, which min.time checks")
    return fails + [f"the reference run breaks: {f}" for f in theorem_failures(tr_small)]


def frame_step(tr: Trajectory, t: float) -> float:
    """The relative spacing t_{k+1}/t_k − 1 of the recorded frames around t (the larger of the
    two intervals touching the frame nearest t): how far apart two first-frame readings of the
    same instant can be."""
    k = int(np.clip(np.searchsorted(tr.t, t), 1, tr.n_frames - 1))
    ratios = [tr.t[i + 1] / tr.t[i] - 1.0 for i in (k - 1, k) if 0 < i < tr.n_frames - 1
              and tr.t[i] > 0]
    return float(max(ratios, default=np.inf))


def time_outside_claim(tr: Trajectory, tr_small: Trajectory) -> Claim:
    """At the paper's α = 1e-6 (above eq. (28): T < t₁*) the alignment time is ε-free (eq.
    4) — the reference run's, at an ε inside Theorem 1's hypotheses — and exceeds T.
    Tolerance: both times are first-frame readings of the same ε-free instant (Lemma 1's
    error is O(ε)), so they may differ by one frame interval (`frame_step`)."""
    mb = bound_for(tr)
    t_c, t_ref = phases.cone_time(tr), phases.cone_time(tr_small)
    n = tr.X.shape[0]
    rel_tol = max(frame_step(tr, t_ref), frame_step(tr_small, t_ref)) if t_ref else np.inf
    ok = (t_c is not None and t_ref is not None and abs(t_c / t_ref - 1.0) <= rel_tol + 1e-12
          and t_c > mb.T_ours)
    t_theirs = (t_ref or np.nan) / theory.time_per_sum_unit(tr.config, n)
    eps_c = float(np.exp(-4.0 * n * mb.X_max * t_theirs) / np.sqrt(mb.h))
    ref = f"ε = {tr_small.config.init.scale:g}"
    return gate(Claim(
        _name("min.time", tr),
        "at the paper's α = 1e-6 (above Theorem 1's ε condition) T is no bound: the neurons "
        "reach their cones at the ε-free time of eq. (4) — that of a run inside the condition "
        "— which is later than T",
        f"t_cones = {fmt(t_c)} ({ref} run: {fmt(t_ref)}); T = {mb.T_ours:.4g}",
        f"t_cones = {fmt(t_ref)} ± {100 * rel_tol:.2g} % and > T",
        f"± one frame interval ({100 * rel_tol:.2g} %) on t_cones; t_cones > T strict", ok,
        f"{_eps_text(tr, mb)}. T ≥ t_cones needs ε ≤ exp(−4 n X_max t_cones)/√h = "
        f"{eps_c:.2g} (the second term of Theorem 1's ε condition, eq. 28, is exactly T ≥ t₁); "
        "above it the alignment still happens, on the same clock, but the theorem does not "
        "cover it",
        justification="eq. (4) has no ε (Lemma 1's error is O(ε)), so the alignment time "
                      "does not change with ε; each run reads it as the first frame after "
                      "it, so the two readings differ by at most one frame interval",
        integrator=run_label(tr.config)), _outside_failures(tr, tr_small))


def digits_alignment_claim(tr: Trajectory) -> Claim:
    xp, _ = theory.min_signals(tr.X, tr.y)
    t_e = phases.saddle_escape(tr)
    f_before = max(tr.frame_at(t_e) - 1, 1) if t_e is not None else tr.n_frames - 1
    cos_b = _mean_pos_cos(tr, f_before, xp)
    return gate(Claim(
        _name("min.digits.alignment", tr),
        "digits 0 vs 1: cos(mean positive neuron, x₊) > 0.9 before the loss starts to fall",
        cos_b, "> 0.9", "threshold 0.9", bool(cos_b > 0.9),
        f"frame t = {tr.t[f_before]:.4g}, saddle escape at t = {fmt(t_e)}; n = {tr.X.shape[0]}; "
        "exponential loss (their choice is not available), sum reduction; V₊ by sign(a_j(t)) "
        "(Gaussian start)",
        justification="Figure 5 reports 'good alignment' without a number; 0.9 (25.8°) is far "
                      "from the ≈ 0 cosine of the start in D = 64 and below the ≈ 0.99 the "
                      "runs reach, so neither a random nor a near-miss run passes by chance",
        integrator=run_label(tr.config)),
        setting_failures(tr) + ([] if tr.config.model.train_output else
                                ["the output layer is frozen (Figure 5 trains both layers)"]))


def digits_stable_rank_claim(tr: Trajectory) -> Claim:
    sr = tr.frame_metrics["stable_rank"]
    s0, s1 = float(sr[0]), float(sr[-1])
    D = tr.X.shape[1]
    return gate(Claim(
        _name("min.digits.stable_rank", tr),
        "digits 0 vs 1 (D = 64, m = 50: rank up to 50): the stable rank ‖W‖_F²/‖W‖₂² falls "
        "from its random start (> 2) to ≤ 2 (Theorem 1), ≈ 1 (Figure 5)",
        f"{s0:.3g} → {s1:.4g}", f"> 2 → {NUMBERS['final_stable_rank'].value:g} (paper: < 2, ≈ 1)",
        "start > 2; |sr − 1| ≤ 0.3 at the end",
        bool(s0 > 2.0 and abs(s1 - 1.0) <= 0.3),
        f"at t = {tr.t[-1]:.4g} (iteration {round(tr.t[-1] / 2e-3)}); the digits are not "
        "μ-separable (μ < 0), so this is Figure 5's observation, not Theorem 1 in its "
        "hypotheses",
        justification="the paper says 'below 2 and ≈ 1'; ± 0.3 keeps the end far below 2 and "
                      "covers the finite-time excess (rank-2 cos(x₊, x₋) ≈ −1 data end near "
                      "1); 'start > 2' makes sure the data could show a higher rank",
        integrator=run_label(tr.config)),
        setting_failures(tr) + ([] if tr.config.model.train_output else
                                ["the output layer is frozen (Figure 5 trains both layers)"])
        + ([] if min(D, tr.width) > 2 else
           [f"a {D}-dimensional input has stable rank ≤ {D}: the check cannot fail"]))


def first_layer_only_claim(tr: Trajectory, tr1: Trajectory) -> Claim:
    xp, _ = theory.min_signals(tr.X, tr.y)
    f_both = two_phase_fraction(tr, xp)
    f_first = two_phase_fraction(tr1, xp)
    fails = setting_failures(tr) + [f"first-layer run: {f}" for f in setting_failures(tr1)]
    if not tr.config.model.train_output:
        fails.append("the reference run does not train both layers")
    if tr1.config.model.train_output:
        fails.append("the first-layer run trains the output layer too (A.5 freezes it)")
    if not np.array_equal(tr.X, tr1.X):
        fails.append("the two runs have different data")
    return gate(Claim(
        _name("min.first_layer_only", tr1),
        "two-phase behaviour with both layers trained, none with only the first layer "
        "(Appendix A.5)",
        f"both: {f_both:.2f}; first only: {f_first:.2f}", "both < 0.5 ≤ first only",
        "0.5 of the way (in log norm) from the start to O(1)", bool(f_both < 0.5 <= f_first),
        "Measure: ln(max‖w‖(t_al)/max‖w‖(0)) / ln(1/max‖w‖(0)) at t_al, the first frame where "
        "cos(mean positive neuron, x₊) ≥ 0.9 — the fraction of the way to O(1) norms the "
        "neurons have grown when the directions are aligned. < 0.5: aligned while the norms "
        "are still at the small scale (two phases); ≥ 0.5: norms grew with the directions. "
        "Frames start at t = 2e-3 (one step of the paper's GD); under the flow the first "
        "layer alone also aligns before that frame, with O(1) norms by then.",
        justification="Lemma 3 bounds the norms by O(√ε) during alignment, i.e. half of the "
                      "log-way to O(1); the runs sit far from 0.5 on both sides (≈ 0.02 and "
                      "≈ 0.8)",
        integrator=f"{run_label(tr.config)}; {run_label(tr1.config)}"), fails)


def claims(quick: bool, run: Run) -> list[Claim]:
    P = presets(quick)
    tr20 = run(P["toy_2d"])
    tr6 = run(P["toy_2d_alpha1e-6"])
    tr = run(P["digits_0v1"])
    tr1 = run(P["digits_first_layer_only"])
    return [cone_claim(tr20), time_claim(tr20), cone_claim(tr6), time_outside_claim(tr6, tr20),
            digits_alignment_claim(tr), digits_stable_rank_claim(tr),
            first_layer_only_claim(tr, tr1)]


def claims_for_run(traj: Trajectory) -> list[Claim]:
    """Cones and stable rank at the end of this run (classification with full W only). A
    check that cannot fail here (stable rank ≤ 2 with D ≤ 2) or whose theorem does not apply
    (assumptions broken) is an illustration, not a claim."""
    W_end = traj.W_at(-1)
    if not traj.classification or W_end is None:
        return []
    fails = theorem_failures(traj)
    why = ("" if not fails else "not a claim here: " + "; ".join(fails))
    frac, n_live = _cone_fraction(W_end, traj, traj.a[-1])
    sr = float(traj.frame_metrics["stable_rank"][-1])
    D = traj.X.shape[1]
    can_fail = min(D, traj.width) > 2
    sr_why = "; ".join(s for s in (why, "" if can_fail else
                                   f"a {D}-dimensional input has stable rank ≤ {D}") if s)
    label = run_label(traj.config)
    return [
        Claim("this run: cones", "at the end every non-dead neuron with aⱼ > 0 is in S₊ "
              "(aⱼ < 0: S₋)", f"{100 * frac:.0f} % of {n_live}", "100 %", "exact",
              (frac == 1.0) if not fails else None, why,
              justification="Theorem 1, part 1 (every neuron)", integrator=label),
        Claim("this run: stable rank", "stable rank ≤ 2 at the end", sr, "≤ 2",
              "+1e-6 (finite-time O(ε) term)",
              (sr <= 2.0 + 1e-6) if (can_fail and not fails) else None, sr_why,
              justification="Theorem 1, part 2: ‖W‖_F² ≤ 2‖W‖₂² + O(ε)", integrator=label),
    ]


# ----------------------------------------------------------------------------- analysis
def applies_to(config: Config) -> bool:
    """Binary classification (labels ±1): the setting of the paper."""
    return config.is_classification


def annotate(traj: Trajectory, rules: PhaseRules, tol: Tolerances) -> PaperOverlay:
    """The signals x₊, x₋; when the run meets the theorem's assumptions
    (`assumption_failures`), the bound T = log(1/(√h ε))/(4 n X_max) in our time
    (`theory.min_alignment_bound`) and the detected cone time; otherwise a note naming the
    assumptions that fail."""
    out = PaperOverlay()
    if not traj.classification:
        return out
    xp, xm = theory.min_signals(traj.X, traj.y)
    out.directions += [Direction("x₊", xp, "signal",
                                 "Min et al.: the sum of the points labelled +1"),
                       Direction("x₋", xm, "signal",
                                 "Min et al.: the sum of the points labelled −1")]
    fails = assumption_failures(traj)
    if fails:
        out.notes.append("Min et al.'s T bound and cone time are not drawn: "
                         + "; ".join(fails) + ".")
        return out
    mb = bound_for(traj)
    if np.isfinite(mb.T_ours) and mb.T_ours > 0:
        out.markers.append(TimeMarker(
            "Min et al. T bound", mb.T_ours, "predicted",
            f"T = log(1/(√h ε))/(4 n X_max) = {mb.T_ours:.4g} in this run's time "
            f"({mb.T_theirs:.4g} in the paper's: sum loss, c = 1); {_eps_text(traj, mb)}; "
            f"h = {mb.h}, n = {mb.n}, X_max = {mb.X_max:.4g}, W_max = {mb.W_max:.4g}; "
            "Lemma 1's condition ε ≤ 1/(4√h X_max W_max²) holds", "theory: aligned by T"))
    t_c = phases.cone_time(traj)
    if t_c is not None:
        rel = "≤" if t_c <= mb.T_ours else ">"
        out.markers.append(TimeMarker(
            "Min et al. cones reached", t_c, "detected",
            f"from t = {t_c:.4g} every neuron stays dead or in its cone (S₊ for a_j > 0, S₋ "
            f"for a_j < 0); t_cones {rel} T = {mb.T_ours:.4g}"
            + ("" if rel == "≤" else " — T bounds the alignment only for ε below Theorem "
               "1's condition (eq. 28)"), "neurons in their cones"))
    return out


def report_figure(quick: bool = True) -> ReportFigure:
    return ReportFigure(digits_config(quick), loss_and_series(
        "min", "stable rank", lambda tr: {"stable_rank": tr.frame_metrics["stable_rank"]}))


# ----------------------------------------------------------------------------- sweep summaries
def _nan(v: float | None) -> float:
    return float("nan") if v is None else float(v)


def _mu(tr: Trajectory, _ph: object, _o: object) -> float:
    # the all-pairs minimum is quadratic in n: not for large uploads
    return separability(tr.X, tr.y) if 2 <= len(tr.y) <= 4000 else float("nan")


def _t_min_bound(tr: Trajectory, _ph: object, _o: object) -> float:
    return (float(theory.min_alignment_bound(tr.config).T_ours) if tr.config.is_classification
            else float("nan"))


SUMMARIES = (
    Summary("t_cone", "Min et al.: first time from which every non-dead neuron stays in S₊ "
            "(a>0) or S₋ (a<0)", lambda tr, _p, _o: _nan(phases.cone_time(tr))
            if tr.n_frames else float("nan")),
    Summary("mu", "Min et al.'s separability min cos(y_i x_i, y_j x_j)", _mu),
    Summary("t_min_bound", "Min et al.'s alignment bound T in our time", _t_min_bound),
)


# ----------------------------------------------------------------------------- sweeps
def _sweep_alignment_vs_mu(quick: bool) -> dict[str, Any]:
    mus = [0.01, 0.03, 0.1, 0.3, 0.6] if quick else [0.003, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4,
                                                    0.6, 0.8]
    angles = [[0.0, float(f"{90 - math.degrees(math.asin(m)):.6g}")] for m in mus]
    return {
        "name": "alignment time vs separation μ",
        "description": "Min et al., Appendix A.2: two points labelled +1 at angle 90° − "
                       "asin μ; the time until every non-dead neuron is in its cone S₊/S₋ "
                       "(their t₁ = O(log n/√μ)).",
        "base": {"data": {"kind": "points", "angles_deg": [0.0, 84.27], "radii": [1.0, 1.0],
                          "labels": [1.0, 1.0]},
                 "model": {"width": 50},
                 "init": {"scheme": "gaussian", "normalisation": "none", "scale": 1e-6},
                 "loss": {"kind": "exponential", "reduction": "sum"},
                 "integrator": {"method": "gf", "t_end": 60},
                 "record": {"frames": 120, "scalars": 400}},
        "axes": [{"field": "data.angles_deg", "values": angles}],
        "seeds": 3 if quick else 8,
    }


# ----------------------------------------------------------------------------- experiments
_FREEZE = {"model.train_output": False, "init.scheme": "fixed_output", "init.output_value": 1.0,
           "init.output_norm": "none"}
EXPERIMENTS = {
    "toy_2d": (
        Experiment("eps_up", "Start a million times larger (ε × 10⁶)", {"init.scale": Times(1e6)},
                   "The neurons turn to the same two rays just as fast — the turning does not "
                   "depend on ε — but they start bigger, so the norms grow and the loss falls "
                   "earlier. T shrinks by ln(10⁶)/(4n·Xₘₐₓ).", "min.time"),
        Experiment("leaky", "Leaky ReLU γ = 0.2", {"model.gamma": 0.2},
                   "The theorem is for ReLU: the dashed T line disappears and the claim "
                   "becomes an illustration. Neurons that see no point keep a small gradient, "
                   "so none stays frozen where it started.", "min.time"),
        Experiment("gaussian", "Unbalanced Gaussian start", {"init.scheme": "gaussian"},
                   "aⱼ and wⱼ start independent, not |aⱼ| = ‖wⱼ‖ (eq. 3): the theorem no "
                   "longer covers the run, yet most neurons still reach their cones; a few "
                   "with aⱼ ≈ 0 may change sign and go the other way.", "min.cones"),
    ),
    "toy_2d_alpha1e-6": (
        Experiment("eps_tiny", "Back to ε = 10⁻²⁰", {"init.scale": 1e-20},
                   "Now Lemma 1's ε condition holds: the dashed T line appears, and every "
                   "neuron is in its cone before it. At 10⁻⁶ the cones are reached at the "
                   "same time, but T is earlier, so it is no bound there.", "min.time"),
        Experiment("wider", "Ten times more neurons", {"model.width": Times(10.0)},
                   "More markers on the same two rays: alignment does not depend on the width; "
                   "the cone time stays where it was.", "min.cones"),
    ),
    "digits_0v1": (
        Experiment("big_start", "Start large: init scale 0.3", {"init.scale": 0.3},
                   "No alignment phase: the loss falls at once and the positive neurons never "
                   "gather at x₊ before it does — the alignment claim fails on this run.",
                   "min.digits.alignment"),
        Experiment("freeze", "Freeze the output layer (aⱼ = ±1)", _FREEZE,
                   "Appendix A.5: with only W trained the norms grow while the directions "
                   "turn — no separate alignment phase.", "min.first_layer_only"),
        Experiment("three_eight", "Other digits: 3 against 8", {"data.classes": [3, 8]},
                   "A harder pair: the neurons still align to x₊/x₋ before the loss falls, "
                   "and the first layer still ends close to rank 1.",
                   "min.digits.stable_rank"),
    ),
    "digits_first_layer_only": (
        Experiment("both", "Train both layers again",
                   {"model.train_output": True, "init.scheme": "gaussian"},
                   "The two phases come back: directions first while the norms stay tiny, "
                   "then growth and the fall of the loss.", "min.first_layer_only"),
        Experiment("smaller", "Start 100 times smaller", {"init.scale": Times(0.01)},
                   "With the output layer frozen a smaller start only delays everything: "
                   "norms and directions still change together.", "min.first_layer_only"),
    ),
}


# ----------------------------------------------------------------------------- the paper
PAPER = Paper(
    key="min",
    order=10,
    title="Min, Mallada & Vidal (ICLR 2024) — early neuron alignment with small initialisation",
    short="Min et al.",
    text=(
        "Binary classification, exponential or logistic loss summed over the data, both layers "
        "trained from a balanced start of scale ε. For a time T ≈ ln(1/(√m ε))/(4n·Xₘₐₓ) "
        "(m neurons, n points, Xₘₐₓ the largest ‖xᵢ‖) the norms stay O(ε) while every "
        "neuron turns: those with output weight aⱼ > 0 toward the cone S₊ of the class sum "
        "**x₊** (the sum of the points labelled +1), those with aⱼ < 0 toward **x₋**. Then the "
        "loss falls, and the final first layer is low-rank (stable rank ≤ 2). Overlays: x₊ "
        "and x₋ (grey dash-dot), extremal vectors, and T (dashed line)."),
    presets=presets,
    preset_titles={
        "toy_2d": "Four points in the plane, ε = 10⁻²⁰ · the toy example (Appendix A.1, Figure 6)",
        "toy_2d_alpha1e-6": "Four points in the plane, ε = 10⁻⁶ · the toy example at the "
                            "experiments' α (Appendix A.1)",
        "digits_0v1": "Digits 0 vs 1 · Figure 5 (MNIST there; scikit-learn's 8×8 digits here)",
        "digits_first_layer_only": "Digits 0 vs 1, output layer frozen · no two phases "
                                   "(Appendix A.5)",
    },
    claims=claims,
    claims_for_run=claims_for_run,
    annotate=annotate,
    applies_to=applies_to,
    report_figure=report_figure,
    numbers=NUMBERS,
    summaries=SUMMARIES,
    experiments=EXPERIMENTS,
    knobs=scale_width_gamma_knobs(),
    showcases=(
        Showcase("toy_2d", "Min et al. · 2-D toy",
                 "Four points, two classes: positive neurons gather at x₊, negative ones at "
                 "x₋."),
        Showcase("digits_0v1", "Min et al. · digits 0 vs 1",
                 "8×8 images: alignment to x₊ before the loss falls; stable rank → 1."),
    ),
    comparisons={
        "relu_leaky": Comparison(
            "ReLU vs leaky ReLU γ = 0.2 (Min et al.'s toy data)",
            "Exponential loss, α = 1e-6. With ReLU, neurons that see no data stay dead; with a "
            "leaky slope every neuron keeps a gradient and turns.",
            toy_config(1e-6), toy_config(1e-6, **{"model.gamma": 0.2})),
        "output_layer": Comparison(
            "Trained vs fixed output layer (Min et al. A.5)",
            "Both layers trained: directions change while norms stay flat, then norms grow. "
            "Only W trained, aⱼ = ±1/√m fixed: no two-phase picture (Min et al., Appendix "
            "A.5).",
            toy_config(1e-6),
            toy_config(1e-6, **{"model.train_output": False, "init.scheme": "fixed_output",
                                "init.output_value": 1.0, "init.output_norm": "sqrt_m"})),
    },
    builtin_sweeps=(
        BuiltinSweep("alignment_vs_mu", "Alignment time against the separation μ",
                     "Min et al. (Theorem 1, Appendix A.2)",
                     "t₁ = O(log n/√μ): smaller μ, slower alignment", _sweep_alignment_vs_mu),
    ),
)
