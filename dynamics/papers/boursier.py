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

from typing import Any

import numpy as np

from .. import theory
from ..annotations import Direction, Phase
from ..config import Config
from ..data import build_dataset
from ..phases import PhaseRules, true_runs
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
    scale_width_gamma_knobs,
)
from .claims import Claim

# Section 5 three-point data and the author code's settings.
NUMBERS: dict[str, Any] = {
    "x": (-0.75, -0.5, 0.125), "y": (1.1, 0.1, 0.8),
    "init_scale": 1e-3,  # per-entry std λ/√m
    "lr": 1e-3, "iterations": 2_000_000,
    # [derived] reference runs: OLS plateau reached (within 1e-3) by t ≈ 10–13;
    # unbalanced / leaky γ = 0.05 escape at t ≈ 100–135.
    "plateau_reached_by_t": 13.0,
    "escape_window_t": (100.0, 135.0),
    "extremal_polar_angle_deg": 111.2,  # [derived], checked against theory.py's computation
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


def presets(fast: bool = True) -> dict[str, Config]:
    """One run per variant to our t = 1000 (their 500); m = 200 when fast, else 2000."""
    return {f"three_point_{v}": config(v, 0, 1000.0, 200 if fast else 2000) for v in VARIANTS}


# ----------------------------------------------------------------------------- claims
def claims(fast: bool, run: Run) -> list[Claim]:
    out: list[Claim] = []
    cfg0 = config("balanced", 0, 1000.0, 200)
    ds = build_dataset(cfg0)
    ex = theory.extremal_for_config(cfg0, ds)
    maxima = [e for e in ex if e.kind == "max"]
    ang = theory.polar_angle_deg(maxima[0].vector) if len(maxima) == 1 else float("nan")
    exp_ang = NUMBERS["extremal_polar_angle_deg"]
    out.append(Claim("boursier.extremal", "G has a single non-trivial critical point (a maximum) "
                     "for the three-point data; its polar angle", f"{len(maxima)} max at "
                     f"{ang:.3f}°", f"1 max at {exp_ang}°", "± 0.05° (rounding of 111.2)",
                     len(maxima) == 1 and abs(ang - exp_ang) <= 0.05,
                     f"all critical points: {[(e.kind, round(e.value, 4)) for e in ex]}"))
    fit = theory.ols_fit(cfg0, ds)
    out.append(Claim("boursier.ols", "the least-squares fit on [x, 1] has all fitted values > 0 "
                     "(one ReLU unit represents it)", np.round(fit.fitted, 4).tolist(), "> 0",
                     "exact", fit.all_positive,
                     f"β = {np.round(fit.beta, 5).tolist()}, L_OLS = {fit.loss:.6g} (½-mean); "
                     f"their MSELoss(mean) = {2 * fit.loss:.6g}"))
    t_end = 600.0 if fast else 4000.0  # ours; their t = ours / 2
    for variant in VARIANTS:
        rows: list[dict[str, Any]] = []
        # fast: 3 seeds for the trap, 1 for each escape; the unbalanced escape needs the
        # reference runs' width (m = 2000; with m = 200 it stays at OLS up to their t = 500)
        seeds = range(5) if not fast else range(3 if variant == "balanced" else 1)
        width = 2000 if (not fast or variant == "unbalanced") else 200
        for s in seeds:
            tr = run(config(variant, s, t_end, width))
            L = tr.loss
            gap = float(abs(L[-1] - fit.loss))
            pl = None
            close = np.abs(L - fit.loss) <= 1e-3
            if close.any():
                pl = float(tr.t[np.argmax(close)]) / 2.0
            rows.append({"variant": variant, "seed": s, "final loss": float(L[-1]),
                         "|L − L_OLS|": gap, "first within 1e-3 of OLS (their t)": pl,
                         "status": tr.status})
        if variant == "balanced":
            ok = all(r["|L − L_OLS|"] <= 1e-3 for r in rows)
            out.append(Claim("boursier.trap", "balanced init, λ = 1e-3, ReLU: the loss stalls at "
                             "the computed least-squares value for every seed",
                             max(r["|L − L_OLS|"] for r in rows), f"L_OLS = {fit.loss:.6g}",
                             "|L − L_OLS| ≤ 1e-3", ok,
                             f"m = {width}, GD lr 2e-3 on ½-mean = their lr 1e-3 on MSE(mean); "
                             f"to our t = {t_end:g} (their t = {t_end / 2:g})", rows))
        else:
            ok = all(r["final loss"] <= 1e-4 for r in rows)
            what = {"large_init": "λ = 1", "leaky": "leaky γ = 0.05",
                    "unbalanced": "unbalanced Gaussian init"}[variant]
            out.append(Claim(f"boursier.escape[{variant}]", f"{what}: the network escapes and "
                             "reaches near-zero loss", max(r["final loss"] for r in rows),
                             "≈ 0", "final loss ≤ 1e-4 (reference run: 1e-4 by their t ≈ 214)",
                             ok, f"m = {width}; their t = {t_end / 2:g}", rows))
    return out


def claims_for_run(traj: Trajectory) -> list[Claim]:
    """Trapped at the least-squares loss, escaped to near zero, or neither (any data)."""
    fit = theory.ols_fit(traj.config)
    gap = float(abs(traj.loss[-1] - fit.loss))
    trapped = gap <= 1e-3
    return [Claim(
        "this run: trap or escape", "final loss vs the least-squares loss L_OLS",
        float(traj.loss[-1]), f"L_OLS = {fit.loss:.6g}",
        "trapped if |L − L_OLS| ≤ 1e-3; escaped if L ≤ 1e-4", None,
        "trapped at the least-squares fit" if trapped else
        ("escaped (near-zero loss)" if traj.loss[-1] <= 1e-4 else "neither (yet)"))]


# ----------------------------------------------------------------------------- analysis
def ols_plateau(traj: Trajectory, level: float, tol: float = 1e-3) -> tuple[float, float] | None:
    """The longest run of frames with |L − level| ≤ tol (absolute), as (start, end)."""
    close = np.abs(traj.loss - level) <= tol
    runs = true_runs(close)
    if not runs:
        return None
    i, j = max(runs, key=lambda r: traj.t[r[1]] - traj.t[r[0]])
    return float(traj.t[i]), float(traj.t[j])


def annotate(traj: Trajectory, rules: PhaseRules, ols_tol: float) -> Annotations:
    """Regression with square loss: the least-squares fit (a note); when one ReLU unit can
    represent it, its direction and the detected "OLS plateau" — the longest stretch with
    |L − L_OLS| ≤ ols_tol, Boursier & Flammarion's trap level (computed, never typed)."""
    out = Annotations()
    cfg = traj.config
    if traj.classification or cfg.loss.kind != "square":
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
                                    "(Boursier & Flammarion's trap level, computed)"))
    return out


def report_figure(fast: bool = True) -> ReportFigure:
    return ReportFigure(config("balanced", 0, 1000.0, 200), "max ‖w_j‖",
                        lambda tr: {"max_norm": tr.frame_metrics["max_norm"]})


# ----------------------------------------------------------------------------- sweeps
def _sweep_trap(quick: bool) -> dict[str, Any]:
    return {
        "name": "spurious OLS trap: probability",
        "description": "Boursier & Flammarion's three-point data: the fraction of seeds that "
                       "end on the least-squares line (final loss within 1e-3 of the OLS "
                       "loss) by init scale, init scheme and leaky slope γ.",
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


# ----------------------------------------------------------------------------- the paper
_COMPARE_T_END = 600.0  # our t (their 300): long enough to see the escapes

PAPER = Paper(
    key="boursier",
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
    claims=claims,
    claims_for_run=claims_for_run,
    annotate=annotate,
    report_figure=report_figure,
    numbers=NUMBERS,
    knobs=scale_width_gamma_knobs(),
    showcases=(
        Showcase("three_point_balanced", "Boursier & Flammarion · the trap",
                 "Three 1-D points: early alignment lands the network on the least-squares "
                 "line."),
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
            "The same data and ReLU. Balanced |a_j| = ‖w_j‖ is conserved, so negative neurons "
            "shrink to zero and nothing can leave the least-squares line; with independent "
            "Gaussian a_j and w_j some neurons keep a usable norm and later escape.",
            config("balanced", 0, _COMPARE_T_END), config("unbalanced", 0, _COMPARE_T_END)),
    },
    builtin_sweeps=(
        BuiltinSweep("trap_probability", "Probability of the spurious OLS trap",
                     "Boursier & Flammarion (Section 5)",
                     "balanced/dominated ReLU from small init stay on the OLS line; gaussian "
                     "init, leaky γ > 0 or large λ escape", _sweep_trap),
    ),
)
