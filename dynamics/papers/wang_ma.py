"""Wang & Ma (NeurIPS 2023): understanding multi-phase optimisation dynamics and rich
nonlinear behaviours of ReLU networks.

Two signals x₊, x₋ at a small angle, exponential loss, frozen output layer a_j = ±1/√m:
training goes through four phases (detected by `phases.wang_ma_phases`). The paper's
phase-time formulas are not available to us (only the reviewers' description): measured only,
no predicted times.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import phases, theory
from ..annotations import Direction
from ..config import Config
from ..phases import PhaseRules
from ..trajectory import Trajectory
from .base import (
    Annotations,
    BuiltinSweep,
    Knob,
    Paper,
    ReportFigure,
    Run,
    Showcase,
    dataset_view,
)
from .claims import Claim

ORDER = "I → II → III → IV"
NUMBERS: dict[str, Any] = {
    "phase_order": ORDER,  # the reviewers' description; no published phase times
    "angle_deg": 17.19,  # 0.3 rad between the signals
}


# ----------------------------------------------------------------------------- presets
def config(angle_deg: float = 17.19, scale: float = 1e-3, t_end: float = 2000.0,
           lr: float = 5e-3) -> Config:
    """Two signals at `angle_deg` (p = 2), m = 200, a_j = ±1/√m frozen, first-layer std
    `scale`, exponential loss (mean), GD with step `lr` (the paper's step is not available)."""
    return Config.from_dict({
        "data": {"kind": "two_signals", "angle_deg": angle_deg, "p": 2.0},
        "model": {"width": 200, "train_output": False},
        "loss": {"kind": "exponential", "reduction": "mean"},
        "init": {"scheme": "fixed_output", "scale": scale, "normalisation": "none",
                 "output_value": 1.0, "output_norm": "sqrt_m"},
        "integrator": {"method": "gd", "lr": lr, "t_end": t_end, "max_steps": 20_000_000},
        "record": {"frames": 160, "t_first": t_end * 1e-6}})


def presets(fast: bool = True) -> dict[str, Config]:
    return {"four_phases": config()}


# ----------------------------------------------------------------------------- claims
def claims(fast: bool, run: Run) -> list[Claim]:
    out: list[Claim] = []
    tr = run(config())
    ph, counts, summary = phases.wang_ma_phases(tr)
    names = [p.name for p in ph]
    starts = [p.start for p in ph]
    ordered = names == ["Phase I", "Phase II", "Phase III", "Phase IV"] and \
        all(ph[i].end <= ph[i + 1].start + 1e-12 for i in range(len(ph) - 1))
    rows = []
    for f in np.unique(np.r_[0, np.searchsorted(tr.t, starts), tr.n_frames - 1]):
        f = int(min(f, tr.n_frames - 1))
        rows.append({"t": float(tr.t[f]), "loss": float(tr.loss[f]),
                     "accuracy": float(tr.accuracy[f]),
                     **{k: int(v[f]) for k, v in counts.items()}})
    out.append(Claim(
        "wang_ma.four_phases", "two signals, frozen output, exponential loss: phases I–IV are "
        "detected in the reviewers' order", summary, ORDER, "order of detected "
        "starts; III (positives leave x₋) before IV (negatives return to x₊)", ordered,
        "; ".join(f"{p.name}: [{p.start:.4g}, {p.end:.4g}] ({p.evidence})" for p in ph)
        + ". Settings: x₋ at 17.19° (0.3 rad), p = 2, m = 200, a_j = ±1/√m fixed, first-layer "
        "std 1e-3, exponential loss (mean), GD lr 5e-3 (the paper's step is not available).",
        rows))
    grid = ([(17.19, 1e-3), (30.0, 1e-3), (17.19, 1e-4)] if fast else
            [(a, s) for a in (10.0, 17.19, 30.0, 45.0) for s in (1e-2, 1e-3, 1e-4)])
    rows2 = []
    for angle, scale in grid:
        trg = tr if (angle, scale) == (17.19, 1e-3) else run(config(angle, scale))
        phg, _, sm = phases.wang_ma_phases(trg)
        row: dict[str, Any] = {"angle (°)": angle, "init std": scale, "order": sm}
        for p in phg:
            row[p.name + " start"] = p.start
        rows2.append(row)
    in_order = [r for r in rows2 if r["order"] == ORDER]
    out.append(Claim(
        "wang_ma.sweep", "how the detected phase times move with the angle and the init scale",
        f"{len(in_order)} of {len(rows2)} settings in order", "shown", "—", None,
        "parameter region where the four phases come in order: " +
        ", ".join(f"({r['angle (°)']}°, {r['init std']:g})" for r in in_order), rows2))
    return out


def claims_for_run(traj: Trajectory) -> list[Claim]:
    """The order of the phases detected in this run."""
    ph, _c, summary = phases.wang_ma_phases(traj)
    return [Claim(
        "this run: phase order", "detected phases (no predicted times: not available)",
        summary, ORDER, "order of detected starts", summary == ORDER,
        "; ".join(f"{p.name}: [{p.start:.4g}, {p.end:.4g}]" for p in ph))]


# ----------------------------------------------------------------------------- analysis
def annotate(traj: Trajectory, rules: PhaseRules, ols_tol: float) -> Annotations:
    """Two-signal data: the derived directions of `theory.wang_ma_geometry`; with the output
    layer frozen, the detected phases I–IV and their summary."""
    out = Annotations()
    cfg = traj.config
    if cfg.data.kind != "two_signals":
        return out
    geo = theory.wang_ma_geometry(dataset_view(traj))
    out.directions += [Direction(dd.name, dd.vector, "target", dd.note)
                       for dd in geo.directions]
    if not cfg.model.train_output:
        wp, _counts, summary = phases.wang_ma_phases(traj, rules)
        out.phases.extend(wp)
        out.notes.append("Wang & Ma phases: " + summary)
    return out


def report_figure(fast: bool = True) -> ReportFigure:
    return ReportFigure(config(), "neuron counts", phases.wang_ma_counts)


# ----------------------------------------------------------------------------- sweeps
def _sweep_phase1_vs_angle(quick: bool) -> dict[str, Any]:
    angles = [20.0, 40.0, 60.0, 80.0] if quick else [10.0, 17.19, 25.0, 35.0, 45.0, 55.0,
                                                      65.0, 75.0, 85.0]
    return {
        "name": "Phase I time vs angle between x₊ and x₋",
        "description": "Wang & Ma's two-signal data, frozen output layer, exponential loss: "
                       "the detected end of Phase I (condensation and saddle escape) by the "
                       "angle between the signals. The paper's phase-time formulas are not "
                       "available: measured only.",
        "base": {"data": {"kind": "two_signals", "angle_deg": 17.19, "p": 2.0},
                 "model": {"width": 50, "train_output": False},
                 "init": {"scheme": "fixed_output", "normalisation": "none", "scale": 1e-2,
                          "output_value": 1.0, "output_norm": "sqrt_m"},
                 "loss": {"kind": "exponential", "reduction": "sum"},
                 "integrator": {"method": "gd", "lr": 0.01, "t_end": 200},
                 "record": {"frames": 120, "scalars": 400}},
        "axes": [{"field": "data.angle_deg", "values": angles}],
        "seeds": 2 if quick else 6,
    }


# ----------------------------------------------------------------------------- the paper
PAPER = Paper(
    key="wang_ma",
    order=40,
    title="Wang & Ma (NeurIPS 2023) — multi-phase dynamics of ReLU networks",
    short="Wang & Ma",
    text=(
        "Two signals x₊, x₋ at a small angle, exponential loss, the output layer frozen. "
        "Training goes through **four phases** (alignment/condensation, then phases where "
        "neurons change which signals they activate, ending in a max-margin-like solution). "
        "**The paper's phase-time formulas are not available to us** (only the reviewers' "
        "description): this section shows the phases *detected* in the run, with the rule "
        "that detected each, and no predicted times."),
    note=("Phase-time formulas of Wang & Ma are **not available**: the bands are phases "
          "*detected* in this run (hover a band for its rule); no dashed predicted times."),
    presets=presets,
    claims=claims,
    claims_for_run=claims_for_run,
    annotate=annotate,
    report_figure=report_figure,
    numbers=NUMBERS,
    knobs=(
        Knob("angle", "angle between x₊ and x₋ (°)", "data.angle_deg", 17.19, min_value=1.0,
             max_value=89.0, step=1.0, format="%g"),
        Knob("std", "first-layer init std", "init.scale", "1e-3",
             options=("1e-5", "1e-4", "1e-3", "1e-2")),
    ),
    showcases=(
        Showcase("four_phases", "Wang & Ma · four phases",
                 "Two signals, frozen output layer: four detected phases of the dynamics."),
    ),
    builtin_sweeps=(
        BuiltinSweep("phase1_vs_angle", "Phase I time against the angle of the two signals",
                     "Wang & Ma (two-signal data)",
                     "measured only: the paper's phase-time formulas are not available",
                     _sweep_phase1_vs_angle),
    ),
)
