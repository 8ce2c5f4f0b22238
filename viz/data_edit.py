"""What the browser needs to let a visitor move the data of a 2-D run in the neuron panel, and to
draw the theory that follows a moved point at display rate (`viz/player/edit.js`).

Editable runs: `points` (each point a handle: angle, radius, label), `clusters` (each centre a
handle; its samples move with it — the noise is drawn apart from the centres), `vectors` (each
point a handle, moved freely), `two_signals` (x₊ along its axis, x₋ anywhere in the upper half
plane; their copies move with them) and `three_point` (each x_i a handle on the line
bias = 1; its target y_i stays), all of input dimension 2 (no appended bias otherwise). The
description carries the data in input space, the handles, the model's field —
b_i = −R s_i ∂ℓ(0, y_i)/∂ŷ, with which the browser computes G(w) = Σ_i b_i σ(⟨w, x_i⟩), its
extremal directions (the exact sweep of `dynamics.extremal`), the on/off edges ⟨w, x_i⟩ = 0 —
and the pieces of the predicted alignment end of `dynamics.timescales`
(t_align = max(ln(w*/‖w(0)‖), 1)/r, r = c·max(G_max, −G_min), w* = √(ȳ/(c·m̄)),
‖w(0)‖ = σ₀√d), which the browser evaluates for the moved data. The fields
the page edits are named in `fields`; limits in `limits`; what a click may do in `can`; for
the three-point data, `trap`: Boursier–Flammarion's trap predicted from the data
(`dynamics.trap`, which the browser re-evaluates for moved data) and what the run did
(`boursier.trap_state`). Pure: Trajectory in, dict out.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dynamics import trap
from dynamics.limits import get_limits
from dynamics.papers.base import dataset_view
from dynamics.papers.boursier import ESCAPE_LOSS, TRAP_TOL, trap_state
from dynamics.theory import entry_std
from dynamics.trajectory import Trajectory

from .time_axes import TimeAxisSpec

EDITABLE = ("points", "clusters", "three_point", "two_signals", "vectors")


def _r(v: Any, digits: int = 9) -> list[Any]:
    return np.round(np.asarray(v, dtype=float), digits).tolist()


def edit_spec(traj: Trajectory, spec: TimeAxisSpec) -> dict[str, Any] | None:
    """The editing description of a run (see the module docstring), or None when its data
    cannot be moved in the panel (another kind, or not two-dimensional)."""
    cfg = traj.config
    data = cfg.data
    X = np.asarray(traj.X, dtype=float)
    if data.kind not in EDITABLE or X.ndim != 2 or X.shape[1] != 2:
        return None
    if data.kind == "three_point":
        handles = X.copy()
        groups = list(range(len(X)))
        labels = list(data.y)
        fields = {"x": list(data.x), "y": list(data.y)}
    elif data.kind == "clusters":
        angles = np.radians(np.asarray(data.angles_deg, dtype=float))
        handles = data.radius * np.c_[np.cos(angles), np.sin(angles)]
        groups = np.repeat(np.arange(len(angles)), data.n_per).tolist()
        labels = list(data.labels)
        fields = {"angles_deg": list(data.angles_deg), "labels": list(data.labels),
                  "radius": data.radius}
    elif data.kind == "two_signals":
        handles = np.array([[data.norm_plus, 0.0],
                            data.norm_minus * np.array([math.cos(math.radians(data.angle_deg)),
                                                        math.sin(math.radians(data.angle_deg))])])
        groups = [0] * data.n_per + [1] * data.n_per
        labels = [1.0, -1.0]
        fields = {"angle_deg": data.angle_deg, "norm_plus": data.norm_plus,
                  "norm_minus": data.norm_minus}
    elif data.kind == "vectors":
        handles = X.copy()
        groups = list(range(len(X)))
        labels = list(data.labels)
        fields = {"points": [list(p) for p in data.points], "labels": list(data.labels)}
    else:
        handles = X.copy()
        groups = list(range(len(X)))
        labels = list(data.labels)
        fields = {"angles_deg": list(data.angles_deg), "radii": list(data.radii),
                  "labels": list(data.labels)}
    d, m = X.shape[1], cfg.model.width
    lim = get_limits()
    return {
        "kind": data.kind, "fields": fields, "handles": _r(handles), "labels": _r(labels),
        "X": _r(X), "y": _r(traj.y), "sw": _r(traj.sw), "groups": groups,
        "plane": _r(traj.plane), "gamma": float(cfg.model.gamma), "c": float(cfg.model.c),
        "loss": cfg.loss.kind, "reduction": cfg.loss.reduction,
        "w0": float(entry_std(cfg, d) * math.sqrt(d)), "m_bar": max(1.0, m / 2.0),
        "time": {"div": spec.div, "log": spec.log},
        "limits": {"max_points": lim.max_points if data.kind != "clusters"
                   else max(1, lim.max_points // max(1, getattr(data, "n_per", 1))),
                   "min_points": 1},
        # what a click may do besides moving: add a point (a label to give it), remove one,
        # flip its label (x₊ and x₋ of two signals only move; three points' targets stay)
        "can": {"add": data.kind in ("points", "clusters", "vectors"),
                "remove": data.kind != "two_signals",
                "flip": data.kind in ("points", "clusters", "vectors")},
        "trap": _trap(traj) if data.kind == "three_point" else None,
    }


def _trap(traj: Trajectory) -> dict[str, Any]:
    """Boursier–Flammarion's trap for the three-point data: the settings the browser's
    prediction needs (`dynamics.trap`), the prediction and what this run did."""
    cfg = traj.config
    pred = trap.predict(cfg, dataset_view(traj))
    got = trap_state(traj, TRAP_TOL)
    ran = ("trapped at the least-squares line" if got.trapped else
           "escaped" if float(traj.loss[-1]) <= ESCAPE_LOSS else
           "not trapped: " + got.why if got.trapped is False else got.why)
    return {"start_ok": cfg.init.scheme in ("balanced", "dominated"), "scheme": cfg.init.scheme,
            "tol": trap.TRAP_TOL, "margin": trap.RACE_MARGIN, "verdict": pred.verdict,
            "why": pred.why, "t_cone": _finite(pred.t_cone), "t_align": _finite(pred.t_align),
            "run": {"trapped": got.trapped, "text": ran}}


def _finite(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


__all__ = ["EDITABLE", "edit_spec"]
