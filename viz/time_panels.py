"""Curves on the time panels shared by the figures: per-neuron norms (or their max/median
envelope), the loss (frames merged with the finer scalar samples) and the moving time cursor.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from dynamics.trajectory import Trajectory

from .scene import Panel, Scene
from .style import INK, NEGATIVE, POSITIVE, Style
from .time_axes import TimeAxisSpec, log_range

CURSOR_LINE = {"color": "rgba(26,26,26,0.28)", "width": 7}  # the moving time cursor


def run_norms(scene: Scene, traj: Trajectory, sels: Sequence[np.ndarray], prefix: str = ""
              ) -> tuple[dict, list[np.ndarray]]:
    """The run's norms ‖w_j(t)‖ at every frame for the union of the neuron subsets `sels`, as
    the scene's array `{prefix}norms` (frames × columns, NaN where not finite); returns its
    reference and, per subset, its columns in it."""
    union = np.unique(np.concatenate([np.asarray(s, dtype=int) for s in sels]))
    ref = scene.array(f"{prefix}norms", np.asarray(traj.norms, dtype=float)[:, union])
    return ref, [np.searchsorted(union, s) for s in sels]


class Curves(NamedTuple):
    """The neurons `sel` whose norm curves are drawn and their columns `cols` in the run's
    norms array in the scene (`ref`, `run_norms`)."""

    ref: dict
    cols: np.ndarray
    sel: np.ndarray


def norms_item(scene: Scene, panel: Panel, traj: Trajectory, spec: TimeAxisSpec,
               curves: Curves, style: Style, prefix: str = "") -> None:
    """Per-neuron norm curves (`Scene` item ``norms``: one trace per final sign, the curves of
    the neurons `curves.sel` — columns `curves.cols` of the run's norms — with gaps between
    them)."""
    norms_ref, cols, sel = curves
    t = np.asarray(traj.t, dtype=float)
    rows = np.flatnonzero(spec.keep(t))
    sign = np.asarray(traj.a[-1], dtype=float)[sel] >= 0
    traces = [{"type": "scatter", "mode": "lines", "name": name, "showlegend": False,
               "legendgroup": group, "hoverinfo": "skip", "opacity": 0.5,
               "line": {"color": colour, "width": 1.1 * style.line / 2}}
              for name, group, colour in (("‖w_j‖, a_j > 0", "pos", POSITIVE),
                                          ("‖w_j‖, a_j < 0", "neg", NEGATIVE))]
    scene.add("norms", panel, traces, swap=True,
              t=scene.array(f"{prefix}t_norms", spec.show(t[rows])),
              rows=scene.array(f"{prefix}rows_norms", rows, "i4"), norms=norms_ref,
              cols=scene.array(f"{prefix}cols_norms", cols, "i4"),
              sign=scene.array(f"{prefix}sign_norms", np.where(sign, 1, -1), "i1"))


def envelope_traces(scene: Scene, traj: Trajectory, spec: TimeAxisSpec, style: Style,
                    prefix: str = "") -> list[dict]:
    """The max and median of ‖w_j‖ over the neurons at every frame (beside the curves of a
    wide network), as two lines."""
    tx, mx, md = norm_envelopes(traj, spec)
    x = scene.array(f"{prefix}t_env", tx)
    return [{"type": "scatter", "x": x, "y": scene.array(f"{prefix}max_norm", mx),
             "mode": "lines",
             "name": "max ‖w_j‖", "showlegend": False,
             "line": {"color": INK, "width": 2.5 * style.line / 2},
             "hovertemplate": "max ‖w‖ = %{y:.3g}<extra></extra>"},
            {"type": "scatter", "x": x, "y": scene.array(f"{prefix}median_norm", md),
             "mode": "lines",
             "name": "median ‖w_j‖", "showlegend": False,
             "line": {"color": INK, "width": 2 * style.line / 2, "dash": "dash"},
             "hovertemplate": "median ‖w‖ = %{y:.3g}<extra></extra>"}]


def norm_range(traj: Trajectory, spec: TimeAxisSpec) -> tuple[float, float]:
    """The norm axis' range: every finite positive ‖w_j(t)‖ the axis shows, down to the
    smallest initial norm (`smallest_initial_norm`)."""
    t = np.asarray(traj.t, dtype=float)
    nk = np.asarray(traj.norms, dtype=float)[spec.keep(t)]
    return log_range(nk, include=smallest_initial_norm(traj))


def smallest_initial_norm(traj: Trajectory) -> float | None:
    """min_j ‖w_j(0)‖ over the positive finite initial norms (None: there are none). The norm
    axis always reaches down to it, so the alignment phase at a tiny ε stays visible."""
    n0 = np.asarray(traj.norms[0], dtype=float) if traj.n_frames else np.zeros(0)
    n0 = n0[np.isfinite(n0) & (n0 > 0)]
    return float(n0.min()) if n0.size else None


def loss_series(traj: Trajectory) -> tuple[np.ndarray, np.ndarray]:
    """(t, loss): the frames' loss merged with the finer scalar samples, sorted by t."""
    ts, ls = traj.scalars.get("t"), traj.scalars.get("loss")
    t = np.asarray(traj.t, dtype=float)
    loss = np.asarray(traj.loss, dtype=float)
    if ts is not None and ls is not None and len(ts) == len(ls) and len(ts) > 0:
        t = np.r_[t[:1], np.asarray(ts, dtype=float)]
        loss = np.r_[loss[:1], np.asarray(ls, dtype=float)]
        order = np.argsort(t, kind="stable")
        t, loss = t[order], loss[order]
    return t, loss


def norm_envelopes(traj: Trajectory, spec: TimeAxisSpec
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(axis times, max_j ‖w_j‖, median_j ‖w_j‖) at the frames the axis can show."""
    t = np.asarray(traj.t, float)
    keep = t > 0 if spec.log else np.ones(t.shape, bool)
    nk = np.asarray(traj.norms, float)[keep]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN frames of diverged runs
        mx = np.nanmax(nk, axis=1) if nk.size else np.zeros(0)
        md = np.nanmedian(nk, axis=1) if nk.size else np.zeros(0)
    return spec.show(t[keep]), mx, md


def cursor_trace(x: np.ndarray, y_range: tuple[float, float], scene: Scene, panel: Panel,
                 name: str, width: float = 7) -> dict:
    """The time cursor: a wide translucent vertical line whose x is `x[k]` at frame k (a
    track of the scene's array `name`)."""
    lo, hi = y_range
    x = np.asarray(x, dtype=float)
    values = scene.array(name, np.repeat(x[:, None], 2, axis=1))
    return scene.trace(panel, {"type": "scatter", "x": [float(x[0])] * 2 if x.size else [],
                               "y": [lo, hi], "mode": "lines",
                               "line": {**CURSOR_LINE, "width": width}, "hoverinfo": "skip",
                               "showlegend": False, "name": "time cursor"},
                       tracks=[{"attr": "x", "values": values}], swap=True)


__all__ = ["CURSOR_LINE", "Curves", "cursor_trace", "envelope_traces", "loss_series",
           "norm_envelopes", "norm_range", "norms_item", "run_norms", "smallest_initial_norm"]
