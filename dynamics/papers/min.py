"""Min, Mallada & Vidal (ICLR 2024): early neuron alignment in two-layer ReLU networks with
small initialisation.

Claims: for a time T = log(1/(√h ε))/(4 n X_max) the norms stay O(ε) while every neuron with
a_j > 0 turns into the cone S₊ of the class sum x₊ (a_j < 0: S₋, x₋); the final first layer
is low-rank (stable rank ≤ 2); training only the first layer shows no two phases (A.5).
Time: their loss is a SUM with c = 1, as our "sum" reduction (ours = theirs).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import phases, theory
from ..annotations import Direction, TimeMarker
from ..config import Config
from ..data import build_dataset
from ..phases import PhaseRules
from ..trajectory import Trajectory
from .base import (
    Annotations,
    BuiltinSweep,
    Comparison,
    Paper,
    ReportFigure,
    Run,
    Showcase,
    dataset_view,
    full_w,
    scale_width_gamma_knobs,
)
from .claims import Claim, fmt

# Figure 5 (MNIST 0 vs 1; h = 50, α = 1e-6, GD η = 2e-3) [paper]
NUMBERS = {
    "width": 50, "alpha": 1e-6, "lr": 2e-3,
    "aligned_by_iteration": 2000,  # "good alignment after ~2000 iterations"
    "loss_drop_from_iteration": 3000,  # "after ~3000 iterations ||W||_2^2 grows, loss decreases"
    "final_stable_rank": 1.0,  # "below 2 and ≈ 1"
}


# ----------------------------------------------------------------------------- presets
def toy_config(scale: float = 1e-20, **updates: Any) -> Config:
    """Their Appendix A.1-style toy data in R² (four points, two classes), m = 50, exponential
    loss summed, balanced start of entry scale `scale`, adaptive gf to t = 30."""
    cfg = Config.from_dict({
        "data": {"kind": "points", "angles_deg": [10.0, 60.0, 200.0, 250.0],
                 "radii": [1.0, 0.8, 1.0, 0.9], "labels": [1.0, 1.0, -1.0, -1.0]},
        "model": {"width": 50}, "loss": {"kind": "exponential", "reduction": "sum"},
        "init": {"scheme": "balanced", "scale": scale, "normalisation": "none"},
        "integrator": {"method": "gf", "t_end": 30.0, "rtol": 1e-7},
        "record": {"frames": 150, "t_first": 1e-3}})
    return cfg.with_updates(updates) if updates else cfg


def digits_config(fast: bool = True, *, first_layer_only: bool = False) -> Config:
    """Their Figure 5 on scikit-learn's 8×8 digits 0 vs 1 (60 per class when fast, else all),
    m = 50, Gaussian start of std 1e-6, GD η = 2e-3 to t = 40 (20 000 iterations). With
    `first_layer_only` the output layer is frozen at a_j = ±1 (their Appendix A.5)."""
    d: dict[str, Any] = {
        "data": {"kind": "digits", "classes": [0, 1], "n_per_class": 60 if fast else None},
        "model": {"width": 50}, "loss": {"kind": "exponential", "reduction": "sum"},
        "init": {"scheme": "gaussian", "scale": 1e-6, "normalisation": "none"},
        "integrator": {"method": "gd", "lr": 2e-3, "t_end": 40.0},
        "record": {"frames": 120, "t_first": 2e-3}}
    if first_layer_only:
        d["model"] = {"width": 50, "train_output": False}
        d["init"] = {"scheme": "fixed_output", "scale": 1e-6, "normalisation": "none",
                     "output_value": 1.0, "output_norm": "none"}
    return Config.from_dict(d)


def presets(fast: bool = True) -> dict[str, Config]:
    """name → Config (the digits use 60 images per class when fast, all otherwise)."""
    return {"toy_2d": toy_config(), "toy_2d_alpha1e-6": toy_config(1e-6),
            "digits_0v1": digits_config(fast),
            "digits_first_layer_only": digits_config(fast, first_layer_only=True)}


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


def claims(fast: bool, run: Run) -> list[Claim]:
    P = presets(fast)
    out: list[Claim] = []
    for key in ("toy_2d", "toy_2d_alpha1e-6"):
        cfg = P[key]
        tr = run(cfg)
        ds = build_dataset(cfg)
        t_a, why = phases.alignment_end(tr)
        f = tr.frame_at(t_a if t_a is not None else tr.t[-1])
        frac, n_live = _cone_fraction(full_w(tr, f), tr, tr.a[f])
        mb = theory.min_alignment_bound(cfg, ds, tr.W_at(0))
        t_c = phases.cone_time(tr)
        out.append(Claim(
            f"min.cones[{key}]",
            "at the detected end of alignment every non-dead neuron with a_j > 0 is in S₊ "
            "(a_j < 0: S₋)",
            f"{100 * frac:.0f} % of {n_live} non-dead neurons", "100 %", "exact",
            frac == 1.0, f"{why}; cones at frame t = {tr.t[f]:.4g}"))
        within = t_c is not None and t_c <= mb.T_ours
        out.append(Claim(
            f"min.time[{key}]",
            "the neurons reach their cones (for good) within the theory's bound T = "
            "log(1/(√h ε))/(4 n X_max)",
            f"t_cones = {fmt(t_c)}", f"≤ T = {mb.T_ours:.4g} (ε = {mb.epsilon:.3g})",
            "t_cones ≤ T", within if key == "toy_2d" else None,
            "Theorem 1 needs ε ≤ (1/√h)exp(−64 n X_max log n/(√min{ζ,ξ}√μ X_min)), "
            "astronomically small: with ε = 1.4e-20 the bound holds; with Min's α = 1e-6 "
            "(ε ≈ 1.4e-6) T is shorter than the actual alignment and the bound is not met "
            "(this is expected, not a contradiction). Time in the sum-loss units of the paper "
            "(c = 1, sum: ours = theirs)."))
        sr = float(tr.frame_metrics["stable_rank"][-1])
        out.append(Claim(f"min.stable_rank[{key}]", "stable rank ‖W‖_F²/‖W‖₂² ≤ 2 at the end",
                         sr, "≤ 2", "+1e-6 (finite-time O(ε) term)", sr <= 2.0 + 1e-6))
    # digits
    cfg = P["digits_0v1"]
    tr = run(cfg)
    ds = build_dataset(cfg)
    xp, _ = theory.min_signals(ds.X, ds.y)
    t_e = phases.saddle_escape(tr)
    f_before = max(tr.frame_at(t_e) - 1, 1) if t_e is not None else tr.n_frames - 1
    cos_b = _mean_pos_cos(tr, f_before, xp)
    out.append(Claim(
        "min.digits.alignment",
        "digits 0 vs 1: cos(mean positive neuron, x₊) > 0.9 before the loss starts to fall",
        cos_b, "> 0.9", "threshold of the claim", cos_b > 0.9,
        f"frame t = {tr.t[f_before]:.4g} (iteration {round(tr.t[f_before] / 2e-3)}), saddle "
        f"escape at t = {fmt(t_e)}; n = {ds.n}; exponential loss (their choice is not "
        "available), sum reduction; V₊ by sign(a_j(t)) (Gaussian start)"))
    sr = float(tr.frame_metrics["stable_rank"][-1])
    out.append(Claim(
        "min.digits.stable_rank", "digits 0 vs 1: the stable rank ends near 1 (paper: < 2, ≈ 1)",
        sr, NUMBERS["final_stable_rank"], "|sr − 1| ≤ 0.3 (paper: '≈ 1')",
        abs(sr - 1.0) <= 0.3, f"at t = {tr.t[-1]:.4g} (iteration {round(tr.t[-1] / 2e-3)})"))
    # first layer only: no two-phase behaviour
    tr1 = run(P["digits_first_layer_only"])
    f_both = two_phase_fraction(tr, xp)
    f_first = two_phase_fraction(tr1, xp)
    out.append(Claim(
        "min.first_layer_only",
        "two-phase behaviour with both layers trained, none with only the first layer "
        "(Appendix A.5)",
        f"both: {f_both:.2f}; first only: {f_first:.2f}", "both < 0.5 ≤ first only",
        "0.5 = Lemma 3's √ε scale", f_both < 0.5 <= f_first,
        "Measure: ln(max‖w‖(t_al)/max‖w‖(0)) / ln(1/max‖w‖(0)) at t_al, the first frame where "
        "cos(mean positive neuron, x₊) ≥ 0.9 — the fraction of the way to O(1) norms the "
        "neurons have grown when the directions are aligned. < 0.5: aligned while the norms "
        "are still at the small scale (two phases); ≥ 0.5: norms grew with the directions "
        "(GD, η = 2e-3: one step already moves w by η a_j D ≫ α)."))
    return out


def claims_for_run(traj: Trajectory) -> list[Claim]:
    """Cones and stable rank at the end of this run (classification with full W only)."""
    W_end = traj.W_at(-1)
    if not traj.classification or W_end is None:
        return []
    frac, n_live = _cone_fraction(W_end, traj, traj.a[-1])
    sr = float(traj.frame_metrics["stable_rank"][-1])
    return [
        Claim("this run: cones", "at the end every non-dead neuron with aⱼ > 0 is in S₊ "
              "(aⱼ < 0: S₋)", f"{100 * frac:.0f} % of {n_live}", "100 %", "exact",
              frac == 1.0),
        Claim("this run: stable rank", "stable rank ≤ 2 at the end", sr, "≤ 2", "+1e-6",
              sr <= 2.0 + 1e-6),
    ]


# ----------------------------------------------------------------------------- analysis
def annotate(traj: Trajectory, rules: PhaseRules, ols_tol: float) -> Annotations:
    """Classification: the signals x₊, x₋; with a trained output layer, the predicted end of
    alignment T = log(1/(√h ε))/(4 n X_max) in our time (`theory.min_alignment_bound`)."""
    out = Annotations()
    if not traj.classification:
        return out
    xp, xm = theory.min_signals(traj.X, traj.y)
    out.directions += [Direction("x₊", xp, "signal", "Min et al.: Σ_{y_i=+1} x_i"),
                       Direction("x₋", xm, "signal", "Min et al.: Σ_{y_i=−1} x_i")]
    cfg = traj.config
    if cfg.model.train_output:
        mb = theory.min_alignment_bound(cfg, dataset_view(traj), traj.W_at(0))
        if np.isfinite(mb.T_ours) and mb.T_ours > 0:
            out.markers.append(TimeMarker(
                "Min et al. T bound", mb.T_ours, "predicted",
                f"T = log(1/(√h ε))/(4 n X_max) = {mb.T_theirs:.4g} (their time, sum loss), "
                f"ε = {mb.epsilon:.3g}; Lemma 1 condition "
                f"{'holds' if mb.lemma_condition else 'fails'}; stated for balanced starts"))
    return out


def report_figure(fast: bool = True) -> ReportFigure:
    return ReportFigure(digits_config(fast), "stable rank",
                        lambda tr: {"stable_rank": tr.frame_metrics["stable_rank"]})


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


# ----------------------------------------------------------------------------- the paper
PAPER = Paper(
    key="min",
    order=10,
    title="Min, Mallada & Vidal (ICLR 2024) — early neuron alignment with small initialisation",
    short="Min et al.",
    text=(
        "Binary classification, exponential or logistic loss summed over the data, both layers "
        "trained from a balanced start of scale ε. For a time T ≈ log(1/(√h ε))/(4 n X_max) "
        "the norms stay O(ε) while every neuron turns: those with aⱼ > 0 toward the cone S₊ "
        "of the class sum **x₊** = Σ_{yᵢ=+1} xᵢ, those with aⱼ < 0 toward **x₋**. Then the "
        "loss falls, and the final first layer is low-rank (stable rank ≤ 2). Overlays: x₊ "
        "and x₋ (grey dash-dot), extremal vectors, and T (dashed line)."),
    presets=presets,
    claims=claims,
    claims_for_run=claims_for_run,
    annotate=annotate,
    report_figure=report_figure,
    numbers=NUMBERS,
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
            "Only W trained, a_j = ±1/√m fixed: no two-phase picture (Min et al., Appendix "
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
