"""Boursier & Flammarion (JMLR 2025): early alignment in two-layer networks is a two-edged
sword.

Claims (Section 5's three points in 1-D with a bias, square loss, ReLU, balanced start
λ = 10⁻³): early alignment sends every useful neuron to the single extremal vector (polar
angle 111.2°) and training stalls at the least-squares fit, a spurious stationary point whose
loss is computed (`theory.ols_fit`); a large start, a leaky ReLU or an unbalanced start
escapes. Time: their GD (lr 1e-3 on MSELoss(mean) = 2 × our ½-square mean) makes the same
iterates as our GD with lr 2e-3; their t = ours / 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import theory
from ..annotations import Analysis, Direction, Phase, PhaseText
from ..config import Config
from ..data import build_dataset
from ..figure_spec import Axis, FigureSpec, Line, Panel, Points
from ..phases import PhaseRules, true_runs
from ..readouts import function_curves, network_output
from ..trajectory import Trajectory
from .base import (
    BuiltinSweep,
    Comparison,
    Paper,
    PaperOverlay,
    Published,
    ReportFigure,
    Run,
    Section,
    Showcase,
    Summary,
    Tolerances,
    dataset_view,
    gate,
    loss_and_series,
    rate_failures,
    run_label,
    run_name,
    scale_width_gamma_knobs,
)
from .claims import Claim
from .experiments import Experiment, Times

# Section 5 three-point data and the author code's settings.
_S5 = "Section 5 and the author code eboursier/early_alignment"
NUMBERS: dict[str, Published] = {
    "x": Published((-0.75, -0.5, 0.125), _S5), "y": Published((1.1, 0.1, 0.8), _S5),
    "init_scale": Published(1e-3, _S5 + ": per-entry std λ/√m"),
    "lr": Published(1e-3, _S5), "iterations": Published(2_000_000, _S5),
    # reference runs: OLS plateau reached (within 1e-3) by t ≈ 10–13; unbalanced / leaky
    # γ = 0.05 escape at t ≈ 100–135
    "plateau_reached_by_t": Published(13.0, "reference runs (their time)", "derived"),
    "escape_window_t": Published((100.0, 135.0), "reference runs (their time)", "derived"),
    # checked against theory.py's computation
    "extremal_polar_angle_deg": Published(111.2, "the extremal direction of the data",
                                          "derived"),
}
VARIANTS = ("balanced", "large_init", "leaky", "unbalanced")


# ----------------------------------------------------------------------------- presets
def config(variant: str = "balanced", seed: int = 0, t_end: float = 1000.0,
           width: int = 200) -> Config:
    """The three points, square loss (mean), balanced start of entry std λ/√m with λ = 1e-3,
    GD lr 2e-3 (= their lr 1e-3 on MSELoss(mean)). Variants: "large_init" (λ = 1), "leaky"
    (γ = 0.05), "unbalanced" (independent Gaussian a_j, w_j)."""
    init: dict[str, Any] = {"scheme": "balanced", "scale": 1e-3, "normalisation": "sqrt_m"}
    model: dict[str, Any] = {"width": width}
    if variant == "large_init":
        init["scale"] = 1.0
    elif variant == "leaky":
        model["gamma"] = 0.05
    elif variant == "unbalanced":
        init["scheme"] = "gaussian"
    return Config.from_dict({
        "data": {"kind": "three_point"}, "model": model,
        "loss": {"kind": "square", "reduction": "mean"}, "init": init,
        "integrator": {"method": "gd", "lr": 2e-3, "t_end": t_end, "max_steps": 5_000_000},
        "record": {"frames": 100, "t_first": 0.02}, "seed": seed})


def presets(quick: bool = True) -> dict[str, Config]:
    """One run per variant: m = 200 to our t = 600 (their 300: past the escapes at their
    t ≈ 100–135) when quick, else m = 2000 to our t = 4000 (their 2000, the reference runs')."""
    return {f"three_point_{v}": config(v, 0, 600.0 if quick else 4000.0, 200 if quick else 2000)
            for v in VARIANTS}


# ----------------------------------------------------------------------------- the trap
@dataclass(frozen=True)
class TrapState:
    """Whether a run sits at the spurious stationary point on the least-squares line at its
    last frame (`trap_state`): at_level — |L − L_OLS| ≤ tol; escapers — neurons that can still
    grow there; rate — the largest growth rate c|G_r(w̄_j)| among them (0: none); why — one
    line."""

    trapped: bool | None
    at_level: bool
    escapers: int
    rate: float
    why: str


def trap_state(traj: Trajectory, tol: float = 1e-3, frame: int = -1) -> TrapState:
    """Is the run trapped at the least-squares (OLS) point — a stationary point with nonzero
    loss — rather than passing by it? Decided from the dynamics at the plateau, not from a
    horizon, so a slow escape is never counted as a trap.

    At frame `frame` (default the last) with outputs h and residual weights
    r_i = −R s_i (h_i − y_i), a neuron moves by dw_j/dt = c a_j D_r(w_j), da_j/dt = c G_r(w_j)
    with D_r(w) = Σ_i r_i σ'(⟨w, x_i⟩) x_i and G_r(w) = ⟨w, D_r(w)⟩ = Σ_i r_i σ(⟨w, x_i⟩)
    (`theory.G_value` with the plateau residuals). Along a fixed direction w̄ the pair
    (a_j, ‖w_j‖) has a growing mode a_j = sign(G)‖w_j‖ of rate c|G_r(w̄)| and a decaying one;
    a_j² − ‖w_j‖² is conserved. So on the OLS line:

    * a neuron active on every point, or on none, sits in a linear cone where
      D_r = (1 or γ) Σ_i r_i x_i = 0 (the normal equations): it is stationary (with ReLU the
      inactive ones are dead and frozen; with leaky ReLU they are linear units of slope γ);
    * any other neuron (active on some points only) can grow — it escapes — unless it lies on
      the decaying mode: sign(a_j) ≠ sign(G_r(w̄_j)) and |a_j| ≥ ‖w_j‖ (balanced or
      output-dominated; up to a relative 1e-6 for rounding), when it shrinks toward zero.

    The run is *trapped* when its loss is within `tol` of L_OLS and no neuron can grow; it is
    not when some can (a slow escape, however long it takes) or when it is off the level. This
    holds for leaky ReLU too: a width-50 leaky network whose neurons all ended in the two linear
    cones is exactly stationary on the OLS line (checked to t = 5000 in
    tests/test_paper_boursier.py); wide ones (the reference runs, m = 2000) keep neurons in
    partial sectors and escape. trapped = None when the OLS loss is ≤ tol (an interpolating fit
    is the global minimum, not a trap) or the W of that frame is not stored."""
    cfg = traj.config
    fit = theory.ols_fit(cfg, dataset_view(traj))
    L = float(traj.loss[frame])
    at = bool(np.isfinite(L) and abs(L - fit.loss) <= tol)
    if not fit.loss > tol:
        return TrapState(None, at, 0, 0.0, "the least-squares fit interpolates: no trap level")
    f = frame % traj.n_frames
    W = traj.W_at(f)
    if W is None:
        return TrapState(None, at, 0, 0.0, "full W not stored at that frame")
    if not at:
        return TrapState(False, at, 0, 0.0, f"|L − L_OLS| = {abs(L - fit.loss):.3g} > {tol:g}")
    gamma = float(cfg.model.gamma)
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    h = network_output(traj, f, X)
    R = 1.0 / len(y) if cfg.loss.reduction == "mean" else 1.0
    r = -R * np.asarray(traj.sw, float) * (np.asarray(h, float) - y)
    a = np.asarray(traj.a[f], float)
    nw = np.linalg.norm(W, axis=1)
    Z = W @ X.T
    cone = (Z > 0).all(axis=1) | (Z <= 0).all(axis=1) | (nw == 0)
    G = theory.G_value(W / np.maximum(nw, 1e-300)[:, None], X, r, gamma)
    grows = (np.sign(a) == np.sign(G)) | (nw > np.abs(a) * (1 + 1e-6))
    esc = ~cone & (G != 0) & grows
    if esc.any():
        rate = float(cfg.model.c * np.abs(G[esc]).max())
        return TrapState(False, at, int(esc.sum()), rate,
                         f"at the OLS level but {int(esc.sum())} neuron(s) can still grow "
                         f"(largest rate c|G_r| = {rate:.3g}): a slow escape")
    act = (Z > 0).all(axis=1)
    return TrapState(True, at, 0, 0.0, f"at the OLS level and nothing can grow: "
                     f"{int(act.sum())} neurons active on every point, "
                     f"{int((~act & cone).sum())} on none, {int((~cone).sum())} shrinking")


# ----------------------------------------------------------------------------- claims
ESCAPE_LOSS = 1e-4
TRAP_TOL = 1e-3
_TRAP_WHY = ("GD/flow reach the OLS level within 1e-3 by their t ≈ 13 (reference runs); 1e-3 "
             "of a loss 0.0875 separates it from both the start (L(0) ≈ 0.33) and zero; "
             "'nothing can grow' is exact (trap_state)")


def check_extremal(ex: list[theory.Extremal]) -> Claim:
    maxima = [e for e in ex if e.kind == "max"]
    ang = theory.polar_angle_deg(maxima[0].vector) if len(maxima) == 1 else float("nan")
    exp_ang = NUMBERS["extremal_polar_angle_deg"].value
    return Claim("boursier.extremal", "G has a single non-trivial critical point (a maximum) "
                 "for the three-point data; its polar angle", f"{len(maxima)} max at "
                 f"{ang:.3f}°", f"1 max at {exp_ang}°", "one maximum, ± 0.05°", len(maxima) == 1
                 and abs(ang - exp_ang) <= 0.05,
                 f"all critical points: {[(e.kind, round(e.value, 4)) for e in ex]}",
                 justification="111.2° is given to 0.1°: ± 0.05° is its rounding",
                 integrator="none (computed from the data)")


def check_ols(fit: theory.OLSFit) -> Claim:
    return Claim("boursier.ols", "the least-squares fit on [x, 1] has all fitted values > 0 "
                 "(one ReLU unit represents it)", float(np.min(fit.fitted)), "> 0",
                 "smallest fitted value > 0", fit.all_positive,
                 f"fitted {np.round(fit.fitted, 4).tolist()}, β = "
                 f"{np.round(fit.beta, 5).tolist()}, L_OLS = {fit.loss:.6g} (½-mean); their "
                 f"MSELoss(mean) = {2 * fit.loss:.6g}",
                 justification="exact arithmetic (np.linalg.lstsq); the sign decides whether "
                 "a single ReLU unit can sit on the OLS line",
                 integrator="none (computed from the data)")


def trap_rows(runs: list[Trajectory], fit: theory.OLSFit) -> list[dict[str, Any]]:
    rows = []
    for tr in runs:
        L = tr.loss
        close = np.abs(L - fit.loss) <= TRAP_TOL
        first = float(tr.t[np.argmax(close)]) / 2.0 if close.any() else None
        st = trap_state(tr, TRAP_TOL)
        rows.append({"seed": tr.config.seed, "width": tr.config.model.width,
                     "final loss": float(L[-1]), "|L − L_OLS|": float(abs(L[-1] - fit.loss)),
                     "first within 1e-3 of OLS (their t)": first, "trapped": st.trapped,
                     "can grow": st.escapers, "status": tr.status})
    return rows


def _common_failures(traj: Trajectory) -> list[str]:
    """What every claim of the three-point section needs: regression with the square loss and
    both layers trained."""
    cfg = traj.config
    out = []
    if cfg.loss.kind != "square" or traj.classification:
        out.append("not regression with the square loss")
    if not cfg.model.train_output:
        out.append("the output layer is frozen (the paper trains both layers)")
    return out + rate_failures(cfg)


def trap_failures(traj: Trajectory) -> list[str]:
    """The trap's hypotheses ([] = met): the common ones, ReLU (γ = 0), a start with
    |a_j| ≥ ‖w_j‖ (balanced or output-dominated: a_j² − ‖w_j‖² ≥ 0 is conserved, so no neuron
    can keep a norm while its output weight shrinks), and a least-squares fit with nonzero
    loss that one ReLU unit represents (all fitted values > 0). The init scale is what the
    claim tests (λ = 1 escapes), so it is not gated."""
    cfg = traj.config
    out = _common_failures(traj)
    if cfg.model.gamma != 0:
        out.append(f"γ = {cfg.model.gamma:g}: leaky ReLU (the trap is for ReLU)")
    if cfg.init.scheme not in ("balanced", "dominated"):
        out.append(f"the start is {cfg.init.scheme}: |a_j| ≥ ‖w_j‖ does not hold"
                   if cfg.init.scheme == "gaussian" else f"the start is {cfg.init.scheme}, "
                   "not the balanced or output-dominated small start")
    if not out:
        fit = theory.ols_fit(cfg, dataset_view(traj))
        if not fit.all_positive:
            out.append("the least-squares fit is not one ReLU unit (a fitted value ≤ 0)")
        elif not fit.loss > TRAP_TOL:
            out.append(f"the least-squares fit interpolates (loss ≤ {TRAP_TOL:g}): no trap")
    return out


def _label(runs: list[Trajectory]) -> str:
    name = run_name(presets, runs[0].config)
    return name + (f" ×{len(runs)} seeds" if len(runs) > 1 else "")


def _where(cfg: Config) -> str:
    return (f"m = {cfg.model.width}, γ = {cfg.model.gamma:g}, {cfg.init.scheme} start of "
            f"scale {cfg.init.scale:g} ({cfg.init.normalisation}), to our t = "
            f"{cfg.integrator.t_end:g} (their t = {cfg.integrator.t_end / 2:g})")


def check_trap(runs: list[Trajectory], fit: theory.OLSFit) -> Claim:
    """Every run ends at the OLS loss and at a stationary point there (nothing can grow);
    gated by `trap_failures` of every run."""
    rows = trap_rows(runs, fit)
    worst = max(rows, key=lambda r: r["|L − L_OLS|"])
    ok = bool(rows) and all(r["trapped"] is True for r in rows)
    cfg = runs[0].config
    fails = sorted({f for tr in runs for f in trap_failures(tr)})
    return gate(Claim(
        f"boursier.trap[{_label(runs)}]", "ReLU from a small start with |a_j| ≥ ‖w_j‖: every "
        "seed stalls at the least-squares loss, a stationary point (no neuron can grow)",
        worst["final loss"], fit.loss, f"|L − L_OLS| ≤ {TRAP_TOL:g} and nothing can grow, "
        "every seed", ok,
        f"measured: the plateau loss (seed farthest from L_OLS); gap |L − L_OLS| = "
        f"{worst['|L − L_OLS|']:.2g}. {_where(cfg)}; GD lr 2e-3 on ½-mean = their lr 1e-3 "
        "on MSE(mean)", rows, justification=_TRAP_WHY, integrator=run_label(cfg)), fails)


ESCAPES = {"large_init": "a large start (λ ≥ 0.5)", "leaky": "a leaky ReLU (γ > 0)",
           "unbalanced": "an unbalanced Gaussian start"}


def escape_failures(variant: str, traj: Trajectory) -> list[str]:
    """An escape claim's hypotheses: the common ones and the variant's defining change."""
    cfg = traj.config
    out = _common_failures(traj)
    has = {"large_init": cfg.init.scale >= 0.5, "leaky": cfg.model.gamma > 0,
           "unbalanced": cfg.init.scheme == "gaussian"}[variant]
    if not has:
        out.append(f"the run does not have {ESCAPES[variant]}")
    return out


def check_escape(variant: str, runs: list[Trajectory], fit: theory.OLSFit) -> Claim:
    """With the variant's change the network leaves the least-squares point and reaches
    near-zero loss (every seed); gated by `escape_failures`."""
    rows = trap_rows(runs, fit)
    worst = max(r["final loss"] for r in rows)
    cfg = runs[0].config
    fails = sorted({f for tr in runs for f in escape_failures(variant, tr)})
    return gate(Claim(
        f"boursier.escape[{_label(runs)}]", f"with {ESCAPES[variant]} the network escapes "
        "and reaches near-zero loss", worst, f"≤ {ESCAPE_LOSS:g}",
        f"final loss ≤ {ESCAPE_LOSS:g}, every seed", worst <= ESCAPE_LOSS,
        f"{_where(cfg)}; L_OLS = {fit.loss:.4g}", rows,
        justification="reference runs: loss 1e-4 by their t ≈ 214 after leaving the OLS line "
        "at t ≈ 100–135; 1e-4 is 900× below the trap level",
        integrator=run_label(cfg)), fails)


def claims(quick: bool, run: Run) -> list[Claim]:
    cfg0 = config("balanced", 0, 1000.0, 200)
    ds = build_dataset(cfg0)
    fit = theory.ols_fit(cfg0, ds)
    out = [check_extremal(theory.extremal_for_config(cfg0, ds)), check_ols(fit)]
    P = presets(quick)
    for variant in VARIANTS:
        # quick: 3 seeds for the trap, 1 for each escape; the unbalanced escape needs the
        # reference runs' width (m = 2000; with m = 200 it stays at OLS up to their t = 500)
        seeds = range(5) if not quick else range(3 if variant == "balanced" else 1)
        base = P[f"three_point_{variant}"]
        if quick and variant == "unbalanced":
            base = base.with_updates({"model.width": 2000})
        runs = [run(base.with_updates({"seed": s})) for s in seeds]
        out.append(check_trap(runs, fit) if variant == "balanced"
                   else check_escape(variant, runs, fit))
    return out


def claims_for_run(traj: Trajectory) -> list[Claim]:
    """Trapped at the least-squares point (at its loss, nothing can grow), escaping, escaped
    to near zero, or neither (any square-loss data): a readout, not a claim."""
    fit = theory.ols_fit(traj.config)
    st = trap_state(traj, TRAP_TOL)
    L = float(traj.loss[-1])
    if st.trapped:
        what = "trapped at the least-squares fit"
    elif st.at_level:
        what = f"at the least-squares loss but not trapped: {st.why}"
    else:
        what = "escaped (near-zero loss)" if L <= ESCAPE_LOSS else "neither (yet)"
    return [Claim(
        "this run: trap or escape", "final loss vs the least-squares loss L_OLS", L, fit.loss,
        f"trapped: |L − L_OLS| ≤ {TRAP_TOL:g} and no neuron can grow; escaped: L ≤ "
        f"{ESCAPE_LOSS:g}", None, what, justification=_TRAP_WHY,
        integrator=run_label(traj.config))]


# ----------------------------------------------------------------------------- analysis
def ols_plateau(traj: Trajectory, level: float, tol: float = 1e-3) -> tuple[float, float] | None:
    """The longest run of frames with |L − level| ≤ tol (absolute), as (start, end)."""
    close = np.abs(traj.loss - level) <= tol
    runs = true_runs(close)
    if not runs:
        return None
    i, j = max(runs, key=lambda r: traj.t[r[1]] - traj.t[r[0]])
    return float(traj.t[i]), float(traj.t[j])


PHASE_TEXT: dict[str, PhaseText] = {
    "OLS plateau": PhaseText(
        "stuck on the least-squares line",
        "{plain}: the loss sits at {loss}, the best straight line's level, and goes no lower "
        "in this run.",
        "{plain}: the loss sits at {loss}, the best straight line's level, until t ≈ {end}.",
        short="stuck"),
}
"""The trap's plain words (`Phase.plain`), the commentary's sentence in it (escaping before the
run ends, or not) and the strip's short words."""

TOLERANCES = {"ols": 1e-3}
"""The OLS plateau: |L − L_OLS| ≤ ols (absolute): the trap level within 1e-3 separates it from
the start (L(0) ≈ 0.33) and from zero (reference runs reach it within 1e-3 by t ≈ 13)."""

OLS_MAX_WORK = 2e8
"""Largest n·d² of the least-squares fit the analysis computes (≈ 0.1–0.2 s); bigger data (e.g.
teacher data in high dimension) get a note instead."""


def applies_to(config: Config) -> bool:
    """Regression with the square loss (the least-squares fit and its plateau)."""
    return config.loss.kind == "square" and not config.is_classification


def annotate(traj: Trajectory, rules: PhaseRules, tol: Tolerances) -> PaperOverlay:
    """The least-squares fit (a note); when one ReLU unit can represent it, its direction and
    the detected "OLS plateau" — the longest stretch with |L − L_OLS| ≤ tol["ols"], Boursier
    & Flammarion's trap level (computed, never typed)."""
    out = PaperOverlay()
    cfg = traj.config
    ols_tol = float(tol.get("ols", TOLERANCES["ols"]))
    if traj.classification or cfg.loss.kind != "square":
        return out
    n, d = traj.X.shape
    if n * d * d > OLS_MAX_WORK:  # least squares costs n·d² multiply-adds: bounded up front
        out.notes.append(f"least-squares fit not computed: it would take n·d² = {n * d * d:.2g} "
                         f"multiply-adds, over the analysis budget {OLS_MAX_WORK:.0e}")
        return out
    fit = theory.ols_fit(cfg, dataset_view(traj))
    out.notes.append(f"least-squares fit: β = {np.round(fit.beta, 4).tolist()}, loss "
                     f"{fit.loss:.6g} ({cfg.loss.reduction} of ½(ŷ−y)²); "
                     + ("one ReLU unit can represent it (all fitted values > 0)"
                        if fit.all_positive else "not representable by one ReLU unit"))
    if fit.all_positive:
        out.directions.append(Direction("OLS direction", fit.beta, "target",
                                        f"least-squares fit; plateau loss {fit.loss:.6g}"))
        # an interpolating least-squares fit (e.g. n ≤ d teacher data) is the global
        # minimum, not a trap: label a plateau only at a nonzero OLS loss
        trap_level = fit.loss > 1e-9 * max(float(traj.loss[0]), 1e-300)
        pl = ols_plateau(traj, fit.loss, ols_tol) if trap_level else None
        if pl is not None and pl[1] > pl[0]:
            out.phases.append(Phase("OLS plateau", pl[0], pl[1], "detected",
                                    f"|L − L_OLS| ≤ {ols_tol:g} with L_OLS = {fit.loss:.6g} "
                                    "(Boursier & Flammarion's trap level, computed)",
                                    PHASE_TEXT["OLS plateau"].plain))
    return out


def report_figure(quick: bool = True) -> ReportFigure:
    return ReportFigure(config("balanced", 0, 1000.0, 200), loss_and_series(
        "boursier", "max ‖w_j‖", lambda tr: {"max_norm": tr.frame_metrics["max_norm"]}))


def fit_figure(traj: Trajectory, _analysis: Analysis | None = None, *,
               n_curves: int = 5) -> FigureSpec | None:
    """Univariate data (with or without the bias coordinate): the points (x_i, y_i), the
    least-squares line ⟨β, (x, 1)⟩ (the trap) and the network's h(x) on [−1, 1] at a few
    recorded times (`readouts.function_curves`: the kernels' forward pass on stored weights),
    light to dark as time goes on. None for other data or losses."""
    X = traj.X
    has_bias = X.shape[1] == 2 and np.allclose(X[:, 1], 1.0)
    if not applies_to(traj.config) or not (X.shape[1] == 1 or has_bias):
        return None
    fit = theory.ols_fit(traj.config, dataset_view(traj))
    xs = np.linspace(-1.0, 1.0, 201)
    Xg = np.column_stack([xs, np.ones_like(xs)]) if has_bias else xs[:, None]
    curves = function_curves(traj, Xg, n_curves)
    k = len(curves.frames)
    shades = np.linspace(0.25, 1.0, max(k, 1))
    lines = tuple(Line(xs, h, f"h(x) at t = {float(t_k):.3g}", "positive",
                       width=3.2 if i == k - 1 else 1.6, opacity=float(shades[i]))
                  for i, (t_k, h) in enumerate(zip(curves.t, curves.h, strict=True)))
    y_ols = Xg @ np.asarray(fit.beta, float)
    ys = np.concatenate([traj.y, y_ols])
    lo, hi = float(min(ys.min(), 0.0)), float(ys.max())
    pad = 0.15 * (hi - lo + 1e-9)
    panel = Panel("", Axis("x", range=(-1.0, 1.0)), Axis("y, h(x)", range=(lo - pad, hi + pad)),
                  (*lines,
                   # drawn on top of h(x): in the trap the final h(x) lies on it
                   Line(xs, y_ols, f"least squares (loss {fit.loss:.4g})", "accent", "dash",
                        3.0),
                   Points(X[:, 0], traj.y, "data (x_i, y_i)", "ink", "diamond", 12)))
    return FigureSpec("Network function h(x) vs the least-squares line", (panel,))


# ----------------------------------------------------------------------------- sweep summaries
def ols_loss(config: Config) -> float:
    """The least-squares loss of the config's data under its square loss (NaN otherwise), from
    `theory.ols_fit` (np.linalg.lstsq of y on the inputs, bias column included)."""
    if config.loss.kind != "square":
        return float("nan")
    return float(theory.ols_fit(config).loss)


def _trapped(tr: Trajectory, _p: object, opts: Any) -> bool | None:
    """Final loss ≥ trap_threshold when one is given, else the spurious stationary point
    decided from the dynamics at the last frame (`trap_state`): |final − OLS| ≤ trap_tol and
    no neuron can still grow there, so a slow escape is not a trap, whatever the horizon.
    Without a stored final W, the level test alone."""
    final = float(tr.loss[-1])
    if opts.get("trap_threshold") is not None:
        return bool(np.isfinite(final) and final >= opts["trap_threshold"])
    tol = float(opts.get("trap_tol", TRAP_TOL))
    ols = ols_loss(tr.config)
    if not (np.isfinite(ols) and ols > tol and np.isfinite(final)):
        return None
    if abs(final - ols) > tol:
        return False
    st = trap_state(tr, tol)
    return True if st.trapped is None else st.trapped


SUMMARIES = (
    Summary("ols_loss", "least-squares (OLS) loss of the data (square loss)",
            lambda tr, _p, _o: ols_loss(tr.config)),
    Summary("trapped", "the run ended at the spurious OLS stationary point: at the OLS loss "
            "and no neuron can still grow (or above trap_threshold)", _trapped),
)


# ----------------------------------------------------------------------------- sweeps
def _sweep_trap(quick: bool) -> dict[str, Any]:
    return {
        "name": "spurious OLS trap: probability",
        "description": "Boursier & Flammarion's three-point data: the fraction of seeds that "
                       "end trapped at the least-squares point — final loss within 1e-3 of the "
                       "OLS loss and no neuron able to grow there (`trap_state`), so a slow "
                       "escape is not counted — by init scale, init scheme and leaky slope γ.",
        "base": {"data": {"kind": "three_point"}, "model": {"width": 50 if quick else 200},
                 "init": {"scheme": "balanced", "normalisation": "sqrt_m", "scale": 1e-3},
                 "loss": {"kind": "square", "reduction": "mean"},
                 "integrator": {"method": "gd", "lr": 0.01 if quick else 0.005,
                                "t_end": 600 if quick else 2000},
                 "record": {"frames": 50, "scalars": 300}},
        "axes": [{"field": "init.scale", "log": [1e-3, 1.0, 4] if quick else [1e-4, 1.0, 9]},
                 {"field": "init.scheme", "values": ["balanced", "gaussian", "dominated"]},
                 {"field": "model.gamma", "values": [0.0, 0.05] if quick else [0.0, 0.05, 0.1]}],
        "seeds": 2 if quick else 8,
        "trap_tol": 1e-3,
    }


# ----------------------------------------------------------------------------- experiments
_ESCAPE_LOOK = ("The loss leaves the least-squares level (dashed line below) after a while "
                "and falls to zero: the network fits all three points.")
EXPERIMENTS = {
    "three_point_balanced": (
        Experiment("leaky", "Leaky ReLU γ = 0.05", {"model.gamma": 0.05},
                   _ESCAPE_LOOK + " With a leaky slope no neuron is ever completely off, so "
                   "one can leave the bundle.", "boursier.escape"),
        Experiment("large", "Start large: λ = 1", {"init.scale": 1.0},
                   "No early alignment, so no bundle: the neurons spread over the data and "
                   "the loss goes straight to zero without stopping at the least-squares "
                   "line.", "boursier.escape"),
        Experiment("wider", "Ten times more neurons", {"model.width": Times(10.0)},
                   "Still trapped: every useful neuron joins the same bundle, so more "
                   "neurons do not help — the final h(x) lies on the least-squares line.",
                   "boursier.trap"),
    ),
    "three_point_large_init": (
        Experiment("small", "Back to a small start (λ = 10⁻³)", {"init.scale": 1e-3},
                   "Early alignment returns: the neurons first bundle at 111°, then the "
                   "network stalls at the least-squares loss for good.", "boursier.trap"),
        Experiment("medium", "λ = 0.1", {"init.scale": 0.1},
                   "In between: watch whether the bundle forms before the neurons grow — "
                   "with a balanced start it still does, and the run stalls.",
                   "boursier.trap"),
    ),
    "three_point_leaky": (
        Experiment("relu", "Back to ReLU (γ = 0)", {"model.gamma": 0.0},
                   "The escape is gone: the loss stops at the least-squares level and stays.",
                   "boursier.trap"),
        Experiment("more_leak", "More leak: γ = 0.2", {"model.gamma": 0.2},
                   "The escape comes sooner: neurons off the data still move at 0.2 of the "
                   "speed, so one leaves the bundle earlier.", "boursier.escape"),
    ),
    "three_point_unbalanced": (
        Experiment("balanced", "Balanced start instead", {"init.scheme": "balanced"},
                   "With |aⱼ| = ‖wⱼ‖ every neuron that shrinks loses its output weight too: "
                   "none can escape, and the run stalls at the least-squares loss.",
                   "boursier.trap"),
        Experiment("dominated", "Output-dominated start", {"init.scheme": "dominated"},
                   "|aⱼ| > ‖wⱼ‖ at the start: like the balanced start, nothing can escape; "
                   "the loss stays at the least-squares level.", "boursier.trap"),
    ),
}


# ----------------------------------------------------------------------------- the paper
_COMPARE_T_END = 600.0  # our t (their 300): long enough to see the escapes

PAPER = Paper(
    key="boursier",
    phase_text=PHASE_TEXT,
    order=30,
    title="Boursier & Flammarion (JMLR 2025) — early alignment is a two-edged sword",
    short="Boursier & Flammarion",
    text=(
        "Three points in 1-D with a bias, square loss, ReLU, balanced start of scale λ = 10⁻³. "
        "Early alignment sends all useful neurons to the single extremal vector (polar angle "
        "111.2°) and the network gets **stuck at the least-squares fit** — a spurious "
        "stationary point whose loss we compute exactly. A large start (λ = 1), a leaky ReLU "
        "or an unbalanced start **escapes** and reaches zero loss. Overlays: extremal vectors, "
        "the least-squares direction, the OLS loss level; below, h(x) against the "
        "least-squares line."),
    presets=presets,
    preset_titles={
        "three_point_balanced": "Three points, balanced start · stuck at the least-squares "
                                "fit (Section 5)",
        "three_point_large_init": "Three points, large start λ = 1 · escapes (Section 5's "
                                  "contrast)",
        "three_point_leaky": "Three points, leaky ReLU γ = 0.05 · escapes (Section 5's "
                             "contrast)",
        "three_point_unbalanced": "Three points, unbalanced Gaussian start · Section 5's "
                                  "contrast",
    },
    claims=claims,
    claims_for_run=claims_for_run,
    annotate=annotate,
    applies_to=applies_to,
    tolerances=TOLERANCES,
    report_figure=report_figure,
    numbers=NUMBERS,
    summaries=SUMMARIES,
    experiments=EXPERIMENTS,
    sections=(Section("h(x) against the least-squares line",
                      "The network's function at a few times (light to dark) against the "
                      "least-squares line through the data (dashed): in the trap the final "
                      "h(x) lies on it.", fit_figure),),
    knobs=scale_width_gamma_knobs("λ"),
    showcases=(
        Showcase("three_point_balanced", "Boursier & Flammarion · the trap",
                 "Three 1-D points: early alignment lands the network on the least-squares "
                 "line. Drag the middle point along its line until the network escapes."),
        Showcase("three_point_leaky", "Boursier & Flammarion · the escape",
                 "The same data with a leaky ReLU: the network escapes and fits."),
    ),
    comparisons={
        "bf_leaky": Comparison(
            "Trapped vs escaping: balanced ReLU vs leaky γ = 0.05 (three points)",
            "Boursier & Flammarion's three points, m = 200, λ = 1e-3. The ReLU network stays "
            "on the least-squares line (a spurious stationary point, loss ≈ 0.0875); the leaky "
            "one leaves that plateau (reference runs: their t ≈ 100–135, our t ≈ 200–270, "
            "since their MSELoss(mean) is twice our loss) and reaches zero loss.",
            config("balanced", 0, _COMPARE_T_END), config("leaky", 0, _COMPARE_T_END)),
        "bf_gaussian": Comparison(
            "Balanced vs unbalanced Gaussian initialisation (three points)",
            "The same data and ReLU. Balanced |aⱼ| = ‖wⱼ‖ is conserved, so negative neurons "
            "shrink to zero and nothing can leave the least-squares line; with independent "
            "Gaussian aⱼ and wⱼ some neurons keep a usable norm and later escape.",
            config("balanced", 0, _COMPARE_T_END), config("unbalanced", 0, _COMPARE_T_END)),
    },
    builtin_sweeps=(
        BuiltinSweep("trap_probability", "Probability of the spurious OLS trap",
                     "Boursier & Flammarion (Section 5)",
                     "ReLU with a balanced or output-dominated start (λ ≤ 0.1) stays at the "
                     "least-squares point; λ = 1 escapes. Gaussian init and leaky γ = 0.05 "
                     "escape for some seeds only: at width 50 the others end with every neuron "
                     "active on all points or on none — an exact stationary point on the OLS "
                     "line (nothing can grow), not a slow escape", _sweep_trap),
    ),
)
