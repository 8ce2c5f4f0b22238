"""Tsoy & Konstantinov (ICML 2024, arXiv 2405.17299), "Simplicity bias of two-layer networks
beyond linearly separable data".

What we read (docs/papers/tsoy.md): the abstract [paper] and the authors' replication code
`nikita-tsoy98/simplicity-bias-beyond-linear-replication` [code]: Fig. 2's bias-free ReLU
network of width 4096 on 2-D "skew-XOR" data (n = 512; blobs of std 0.1/√2 truncated at 0.2
around ±e₁, class 0, and their reflection at angle α, class 1), PyTorch's default start scaled
by 2⁻⁷, full-batch GD with step 2⁻⁴ for 8192 epochs on BCE-with-logits, and the alignment
metric: the 95th percentile of the neurons' angular deviation from {0, ±π/2, ±π}. The
theorems were not readable. Checked here:

(D1) [abstract: "in the early training phases, network features cluster around a few
     directions that do not depend on the size of the hidden layer"; derived] While h ≈ 0 a
     neuron turns towards the extremal directions of G(u) = Σ_i b_i σ(⟨u, x_i⟩) on the
     sphere (b_i = −ℓ'(0, y_i)/n: maxima for a_j > 0, minima for a_j < 0), a property of
     the data alone (`theory.extremal_vectors`): when its norm has grown tenfold, every
     neuron but the few still turning sits on one of them, whatever the width.
(D2) [code, Fig. 2; derived for α = 90°] For XOR (α = 90°) those directions are the axes
     (G = (|u₂| − |u₁|)/4 for the blob centres: maxima ±e₂, minima ±e₁), and the trained
     network keeps its features there: the code's metric stays small at the end of training.
     For α < 90° the extremal directions are ±e₂ and ⊥(cos α, sin α) — not the axes — and the
     tool shows where the features go (an illustration: the paper's own result for α = π/3
     could not be read).
Labels: class 0 (±e₁) is y = −1, class 1 is y = +1; BCE-with-logits on {0, 1} is our logistic
loss on ±1 (mean), so their GD time 2⁻⁴ × 8192 = 512 is ours.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import metrics, theory
from ..annotations import Analysis, Direction, Phase, PhaseText, TimeMarker
from ..config import Config
from ..figure_spec import Axis, FigureSpec, Line, Panel, Points
from ..phases import PhaseRules
from ..trajectory import Trajectory
from .base import (
    BuiltinSweep,
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
    rate_failures,
    run_label,
    run_name,
)
from .claims import Claim
from .experiments import Experiment

_CODE = "replication code nikita-tsoy98/simplicity-bias-beyond-linear-replication"
NUMBERS: dict[str, Published] = {
    "fig2_setting": Published("d = 2, n = 512, m = 4096, init ×2⁻⁷, GD 2⁻⁴ × 8192 epochs",
                              _CODE + ", code-figs-2.ipynb"),
    "metric": Published("95th percentile of the deviation from {0, ±π/2, ±π}",
                        _CODE + ", code-figs-2.ipynb, last cell"),
    "width_independent": Published(True, "abstract: features cluster around a few directions "
                                   "that do not depend on the size of the hidden layer"),
}
AXES = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
PHASE_TEXT: dict[str, PhaseText] = {
    "early clustering": PhaseText("neurons gather on a few lines"),
}
"""The phase's plain words (`Phase.plain`)."""
TOLERANCES = {"growth": 10.0, "deg": 5.0, "q": 95.0}
"""`growth`: the early phase ends when the largest ‖w_j‖ is 10× its start (h is still ~10⁻³ of
the labels at the presets' scale); `deg`: the 95th percentile (`q`) of the angles to the
nearest direction is at most 5° — a ninth of the 45° a random direction is from the nearest
axis, and the 5 % the percentile leaves out (at least 3 neurons at the widths ≥ 64 used here)
are the neurons that started near a boundary of two basins and still turn."""


# ----------------------------------------------------------------------------- presets
def config(alpha: float = 90.0, *, width: int = 64, n: int = 32, seed: int = 0,
           t_end: float = 512.0, method: str = "gf", lr: float = 2**-4,
           **updates: Any) -> Config:
    """Skew-XOR (α = `alpha`, d = 2), a bias-free ReLU net, logistic loss (mean), a Gaussian
    start like PyTorch's default × 2⁻⁷ (w entries std 2⁻⁷/√6, a std 2⁻⁷/√(6m)), gf at rtol
    1e-7 to t = 512 (their 8192 epochs of 2⁻⁴)."""
    cfg = Config.from_dict({
        "data": {"kind": "generated", "generator": "skew_xor", "n": n, "d": 2,
                 "angle_deg": alpha, "noise": 0.1 / 2**0.5},
        "model": {"width": width}, "loss": {"kind": "logistic", "reduction": "mean"},
        "init": {"scheme": "gaussian", "scale": 2**-7 / 6**0.5, "normalisation": "none",
                 "a_power": 0.5},
        "integrator": {"method": method, "t_end": t_end, "lr": lr, "rtol": 1e-7},
        "record": {"frames": 120, "t_first": 0.1}, "seed": seed})
    return cfg.with_updates(updates) if updates else cfg


def presets(quick: bool = True) -> dict[str, Config]:
    """XOR (α = 90°) and the skew α = 60° (Fig. 2's π/2 and π/3), width 64 (quick) or 256."""
    w = 64 if quick else 256
    n = 32 if quick else 128
    return {"xor": config(90.0, width=w, n=n), "skew_60": config(60.0, width=w, n=n)}


# ----------------------------------------------------------------------------- theory
def cluster_directions(config: Config) -> np.ndarray:
    """(D1): the unit extremal directions of the data's h = 0 field (maxima and minima)."""
    ext = theory.extremal_for_config(config)
    E = [e.vector / np.linalg.norm(e.vector) for e in ext if e.kind in ("max", "min")]
    return np.array(E) if E else np.zeros((0, 2))


def axes(d: int) -> np.ndarray:
    """XOR's features ±e₁, ±e₂ in R^d (the code's {0, ±π/2, ±π} in the plane of the blobs)."""
    out = np.zeros((len(AXES), max(d, 2)))
    out[:, :2] = AXES
    return out


def early_frame(traj: Trajectory, growth: float = TOLERANCES["growth"]) -> int:
    """The first frame whose largest ‖w_j‖ is `growth` × its start (the last frame if none)."""
    nrm = np.asarray(traj.frame_metrics["max_norm"], float)
    hit = np.flatnonzero(nrm >= growth * nrm[0])
    return int(hit[0]) if hit.size else traj.n_frames - 1


def deviation(traj: Trajectory, frame: int, axes: np.ndarray,
              q: float = TOLERANCES["q"]) -> float:
    """The q-th percentile of the neurons' angles (°) to the nearest of `axes` at `frame`."""
    return metrics.axis_deviation(full_w(traj, frame), axes, q)


# ----------------------------------------------------------------------------- hypotheses
def applies_to(config: Config) -> bool:
    """Skew-XOR data (the paper's XOR-like pattern)."""
    return config.data.kind == "generated" and config.data.generator == "skew_xor"


def setting_failures(traj: Trajectory) -> list[str]:
    """Bias-free ReLU, both layers trained, a small start (|h| ≤ 1 % of the labels at t = 0),
    the logistic loss."""
    cfg = traj.config
    out = []
    if cfg.model.gamma != 0:
        out.append(f"γ = {cfg.model.gamma:g}: leaky ReLU (the paper's nets are ReLU)")
    if cfg.data.bias:
        out.append("a bias coordinate (the paper's network is bias-free)")
    if not cfg.model.train_output:
        out.append("the output layer is frozen")
    out += rate_failures(cfg)
    if cfg.loss.kind != "logistic":
        out.append(f"the {cfg.loss.kind} loss, not the logistic (BCE) loss")
    W0 = traj.W_at(0)
    if W0 is not None:
        Z = np.asarray(traj.X, float) @ W0.T
        h0 = cfg.model.output_scale * np.maximum(Z, 0) @ np.asarray(traj.a[0], float)
        if np.abs(h0).max() > 0.01:
            out.append(f"not a small start: max |h(x_i)| = {np.abs(h0).max():.3g} at t = 0")
    return out


def _name(base: str, tr: Trajectory) -> str:
    return f"{base}[{run_name(presets, tr.config)}]"


# ----------------------------------------------------------------------------- claims
def early_claim(runs: Sequence[Trajectory], tol: Tolerances | None = None,
                widths: int = 2) -> Claim:
    """[abstract; derived, (D1)] At the end of the early phase every run's neurons sit on the
    data's extremal directions (95th percentile ≤ 5°), the same directions at every width
    (at least `widths` different widths among `runs`)."""
    tol = {**TOLERANCES, **(tol or {})}
    rows, worst = [], 0.0
    dirs = [cluster_directions(tr.config) for tr in runs]
    same = all(d.shape == dirs[0].shape and np.allclose(d, dirs[0], atol=1e-6) for d in dirs)
    for tr, E in zip(runs, dirs, strict=True):
        f = early_frame(tr, tol["growth"])
        dev = deviation(tr, f, E, tol["q"]) if len(E) else float("inf")
        worst = max(worst, dev)
        rows.append({"width": tr.width, "seed": tr.config.seed, "t (early end)": float(tr.t[f]),
                     f"angle to nearest direction, {tol['q']:g}th pct (°)": dev,
                     "directions (°)": ", ".join(f"{np.degrees(np.arctan2(e[1], e[0])):.1f}"
                                                  for e in E)})
    want = widths
    seen = sorted({tr.width for tr in runs})
    ok = worst <= tol["deg"] and same and len(seen) >= want
    fails = sorted({f for tr in runs for f in setting_failures(tr)})
    return gate(Claim(
        _name("tsoy.early_clusters", runs[0]),
        "early in training the features cluster around a few directions that do not depend "
        "on the width: the extremal directions of the data's h = 0 field",
        f"largest {tol['q']:g}th percentile {worst:.3g}° over widths {seen}",
        f"≤ {tol['deg']:g}°, the same directions at every width",
        f"{tol['q']:g}th percentile of the angles to the nearest direction ≤ {tol['deg']:g}° "
        f"when the largest ‖w_j‖ is {tol['growth']:g}× its start", ok,
        f"{len(dirs[0])} directions, computed from the data alone.", rows,
        justification="(D1): the directions are exact for the data; 5° is a ninth of a random "
        "direction's mean distance to them (45°); the percentile leaves out the few neurons "
        "still turning from a basin boundary", integrator=run_label(runs[0].config)), fails)


def xor_claim(traj: Trajectory, tol: Tolerances | None = None) -> Claim:
    """[code Fig. 2; derived, (D2)] XOR: at the end of training the features are on the axes
    (the code's metric ≤ 5°)."""
    tol = {**TOLERANCES, **(tol or {})}
    dev = deviation(traj, traj.n_frames - 1, axes(np.asarray(traj.X).shape[1]), tol["q"])
    fails = setting_failures(traj)
    alpha = float(traj.config.data.angle_deg)  # type: ignore[union-attr]
    if abs(alpha - 90.0) > 1e-9:
        fails.append(f"α = {alpha:g}°: the axes are the features only for XOR (α = 90°)")
    return gate(Claim(
        _name("tsoy.xor_axes", traj),
        "[derived for XOR] the learned features of XOR lie on the axes {0, ±π/2, π}: the "
        "authors' alignment metric is small at the end of training",
        f"{tol['q']:g}th percentile {dev:.3g}° at t = {traj.t[-1]:.4g}", "0°",
        f"≤ {tol['deg']:g}°", dev <= tol["deg"],
        f"loss {traj.loss[-1]:.3g} at the end.",
        justification="(D2): the axes are XOR's extremal directions, and the fitted "
        "network's neurons stay on them; 5° as in the early claim",
        integrator=run_label(traj.config)), fails)


def claims(quick: bool, run: Run) -> list[Claim]:
    p = presets(quick)
    xor = run(p["xor"])
    wide = run(p["xor"].with_updates({"model.width": 4 * p["xor"].model.width,
                                      "integrator.t_end": 60.0}))
    skew = run(p["skew_60"])
    skew_wide = run(p["skew_60"].with_updates({"model.width": 4 * p["skew_60"].model.width,
                                               "integrator.t_end": 60.0}))
    return [early_claim([xor, wide]), early_claim([skew, skew_wide]), xor_claim(xor),
            xor_claim(skew)]


def claims_for_run(traj: Trajectory) -> list[Claim]:
    return [early_claim([traj], widths=1), xor_claim(traj)]


# ----------------------------------------------------------------------------- overlay
def annotate(traj: Trajectory, rules: PhaseRules, tol: Tolerances) -> PaperOverlay:
    out = PaperOverlay()
    E = cluster_directions(traj.config)
    for k, e in enumerate(E):
        out.directions.append(Direction(f"feature {k + 1}", e, "target",
                                        "Tsoy & Konstantinov: an extremal direction of the "
                                        "data (early features cluster here)"))
    f = early_frame(traj, float(tol.get("growth", 10.0)))
    if 0 < f < traj.n_frames - 1:
        out.markers.append(TimeMarker("early phase ends", float(traj.t[f]), "detected",
                                      "the largest ‖w_j‖ is 10× its start"))
        out.phases.append(Phase("early clustering", 0.0, float(traj.t[f]), "detected",
                                "neurons turn to the extremal directions while ‖w‖ is small "
                                "(Tsoy & Konstantinov)", PHASE_TEXT["early clustering"].plain))
    if len(E) and traj.W_at(f) is not None:
        out.notes.append(f"{len(E)} feature directions; {tol.get('q', 95.0):g}th percentile "
                         f"of the angles to them at the early end: "
                         f"{deviation(traj, f, E, float(tol.get('q', 95.0))):.3g}°")
    return out


# ----------------------------------------------------------------------------- figures
def _wrap(deg: np.ndarray, lo: float) -> np.ndarray:
    """Angles (°) into [lo, lo + 360)."""
    return lo + np.mod(np.asarray(deg, float) - lo, 360.0)


def _cut(dirs: np.ndarray) -> float:
    """Where to cut the circle of angles: the middle of the widest gap between the extremal
    directions (−180° without any), so no direction and its neurons sit on both edges."""
    if not len(dirs):
        return -180.0
    v = np.sort(np.mod(np.asarray(dirs, float), 360.0))
    gaps = np.diff(np.r_[v, v[0] + 360.0])
    k = int(np.argmax(gaps))
    return float(v[k] + gaps[k] / 2.0) - 360.0 * (v[k] + gaps[k] / 2.0 >= 180.0)


def angle_figure(traj: Trajectory, _an: Analysis | None = None) -> FigureSpec | None:
    """Fig. 2's lower panels: each neuron's final angle against its share of ‖θ‖²."""
    if not applies_to(traj.config) or traj.W_at(-1) is None:
        return None
    W = full_w(traj, traj.n_frames - 1)
    share = (W**2).sum(axis=1) / max(float((W**2).sum()), 1e-300)
    E = cluster_directions(traj.config)
    dirs = np.degrees(np.arctan2(E[:, 1], E[:, 0])) if len(E) else np.zeros(0)
    lo = _cut(dirs)  # angles in [lo, lo + 360): no direction near the seam
    ang = _wrap(np.degrees(np.arctan2(W[:, 1], W[:, 0])), lo)
    rules = tuple(Line(np.array([0.0, float(share.max()) * 1.05]), np.full(2, v),
                       "extremal directions of the data", "theory", "dash", 1.0, group="dirs")
                  for v in _wrap(dirs, lo))
    ticks = tuple(float(v) for v in np.arange(np.ceil(lo / 45.0) * 45.0, lo + 360.0, 45.0))
    panel = Panel("features at the end", Axis("relative scale ‖w_j‖² / Σ‖w‖²"),
                  Axis("angle (°)", range=(lo - 5.0, lo + 365.0), tickvals=ticks,
                       ticktext=tuple(f"{v:g}°" for v in ticks)),
                  (*rules, Points(share, ang, "neurons", "ink", size=6)))
    return FigureSpec(f"Angle vs relative scale, α = {traj.config.data.angle_deg:g}°",  # type: ignore[union-attr]
                      (panel,), caption="The authors' Fig. 2 view: the neurons that carry "
                      "the network sit on a few directions (dashed: the data's extremal "
                      "directions).")


def report_figure(quick: bool = True) -> ReportFigure:
    def series(tr: Trajectory) -> dict[str, np.ndarray]:
        return {"95th pct angle to the axes (°)": np.array([
            metrics.axis_deviation(W, axes(W.shape[1])) for W in tr.W])}
    return ReportFigure(config(), loss_and_series("tsoy", "angle (°)", series))


# ----------------------------------------------------------------------------- sweeps
def _early_dev(tr: Trajectory, _p: Sequence[Phase], _o: object) -> float:
    if not applies_to(tr.config):
        return float("nan")
    E = cluster_directions(tr.config)
    return deviation(tr, early_frame(tr), E) if len(E) else float("nan")


def _end_axes(tr: Trajectory, _p: Sequence[Phase], _o: object) -> float:
    if not applies_to(tr.config) or tr.W_at(-1) is None:
        return float("nan")
    return deviation(tr, tr.n_frames - 1, axes(np.asarray(tr.X).shape[1]))


SUMMARIES = (
    Summary("tsoy_early_deviation", "Tsoy & Konstantinov: 95th percentile angle (°) to the "
            "data's extremal directions when max ‖w_j‖ is 10× its start", _early_dev),
    Summary("tsoy_axes_deviation", "Tsoy & Konstantinov: 95th percentile angle (°) to the "
            "axes {0, ±90°, 180°} at the end (their metric)", _end_axes),
)


def _sweep_width(quick: bool) -> dict[str, Any]:
    base = config(t_end=60.0).to_dict()
    base["record"] = {"frames": 60, "t_first": 0.1}
    return {"name": "early clustering vs width",
            "description": "XOR: the 95th percentile angle to the data's extremal directions "
                           "at the end of the early phase, by width — flat (the directions "
                           "do not depend on the width).",
            "base": base, "axes": [{"field": "model.width", "values": [16, 64, 256] if quick
                                    else [16, 64, 256, 1024]}],
            "seeds": 2 if quick else 8, "record": ["final_loss", "tsoy_early_deviation"]}


EXPERIMENTS = {
    "xor": (
        Experiment("wider", "Four times wider: m = 256", {"model.width": 256},
                   "More markers, the same four lines: the early features do not depend on "
                   "the width.", "tsoy.early_clusters"),
        Experiment("big", "A large start: 2⁻⁷ → 1", {"init.scale": 1.0},
                   "Without a small start there is no early phase: the neurons fit the data "
                   "where they started, spread over every angle (the claims become "
                   "illustrations).", "tsoy.xor_axes"),
    ),
    "skew_60": (
        Experiment("xor", "Back to XOR: α = 90°", {"data.angle_deg": 90.0},
                   "The features fall on the axes again: ±e₂ for the positive class, ±e₁ "
                   "for the negative one.", "tsoy.xor_axes"),
        Experiment("skew_30", "A sharper skew: α = 30°", {"data.angle_deg": 30.0},
                   "The negative neurons' lines turn with the skew (perpendicular to the "
                   "positive blobs), the positive ones stay at ±90°.", "tsoy.early_clusters"),
    ),
}


PAPER = Paper(
    key="tsoy",
    order=60,
    title="Tsoy & Konstantinov (ICML 2024) — simplicity bias beyond linear separability",
    short="Tsoy & Konstantinov 2024",
    text=(
        "Skew-XOR data: two blobs ±e₁ of one class and their reflection at angle α of the "
        "other — not linearly separable. From a small start the features **cluster around a "
        "few directions** early in training, the extremal directions of the data (green), "
        "and these **do not depend on the width**. For XOR (α = 90°) they are the axes, "
        "where the trained network keeps them. Below: each neuron's final angle against its "
        "share of ‖θ‖² (the authors' Fig. 2 view)."),
    presets=presets,
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
        Section("Angle vs relative scale", "Each neuron's final direction against its share "
                "of ‖θ‖²; dashed: the data's extremal directions.", angle_figure),
    ),
    experiments=EXPERIMENTS,
    knobs=(
        Knob("alpha", "skew angle α (°)", "data.angle_deg",
             options=(30.0, 45.0, 60.0, 75.0, 90.0), format="%g",
             help="90: XOR. Smaller: the positive blobs move towards the negative ones."),
        Knob("width", "width m (hidden neurons)", "model.width", min_value=1, max_value=2000,
             step=16, convert=int, back=int,
             help="Hidden neurons: the early directions do not depend on it."),
    ),
    preset_titles={
        "xor": "XOR data (α = 90°) · early features on the axes",
        "skew_60": "Skewed XOR (α = 60°) · early features on a few directions",
    },
    showcases=(
        Showcase("xor", "Tsoy & Konstantinov 2024 · XOR's features",
                 "Not linearly separable: the neurons still gather on four lines, the axes, "
                 "before the loss moves."),
    ),
    comparisons={
        "tsoy_alpha": Comparison(
            "XOR (α = 90°) vs skew-XOR (α = 60°)",
            "The same blobs, the positive class reflected at 90° or 60°: the negative "
            "neurons' lines follow the skew.", config(90.0), config(60.0)),
    },
    builtin_sweeps=(
        BuiltinSweep("tsoy_width", "Early clustering against the width",
                     "Tsoy & Konstantinov (2024)", "early features cluster around a few "
                     "directions independent of the width", _sweep_width),
    ),
)
