"""Curves on the time panels shared by the figures: per-neuron norms (or their max/median
envelope), the loss (frames merged with the finer scalar samples) and the moving time cursor.
"""

from __future__ import annotations

import warnings

import numpy as np
import plotly.graph_objects as go

from dynamics.trajectory import Trajectory

from .arrays import f32
from .neuron_panel import neuron_subset
from .style import INK, NEGATIVE, POSITIVE, Style
from .time_axes import TimeAxisSpec, log_range

CURSOR_LINE = {"color": "rgba(26,26,26,0.28)", "width": 7}  # the moving time cursor


def norm_traces(traj: Trajectory, spec: TimeAxisSpec, max_curves: int,
                style: Style) -> tuple[list[go.Scatter], tuple[float, float], int]:
    """Per-neuron norm curves (≤ max_curves, one trace per sign with gaps) and, for larger
    widths, the max/median envelope. Returns traces, y range and the number of curves."""
    norms = np.asarray(traj.norms, dtype=float)
    t = np.asarray(traj.t, dtype=float)
    keep = t > 0 if spec.log else np.ones(t.shape, bool)
    tx = spec.show(t[keep])
    nk = norms[keep]
    m = norms.shape[1]
    sel = neuron_subset(norms[-1], max_curves)
    sign = np.asarray(traj.a[-1], dtype=float) >= 0
    traces: list[go.Scatter] = []
    for positive, colour, name in ((True, POSITIVE, "‖w_j‖, a_j > 0"),
                                   (False, NEGATIVE, "‖w_j‖, a_j < 0")):
        js = sel[sign[sel] == positive]
        if js.size == 0:
            continue
        k = tx.size + 1
        xs = np.full(js.size * k, np.nan)
        ys = np.full(js.size * k, np.nan)
        for i, j in enumerate(js):
            xs[i * k:i * k + tx.size] = tx
            ys[i * k:i * k + tx.size] = np.where(nk[:, j] > 0, nk[:, j], np.nan)
        traces.append(go.Scatter(
            x=f32(xs), y=f32(ys), mode="lines", name=name, showlegend=False,
            legendgroup="pos" if positive else "neg", hoverinfo="skip",
            line={"color": colour, "width": 1.1 * style.line / 2}, opacity=0.5))
    if m > max_curves:
        with np.errstate(invalid="ignore"):
            traces.append(go.Scatter(
                x=f32(tx), y=f32(np.nanmax(nk, axis=1)), mode="lines", name="max ‖w_j‖",
                line={"color": INK, "width": 2.5 * style.line / 2}, showlegend=False,
                hovertemplate="max ‖w‖ = %{y:.3g}<extra></extra>"))
            traces.append(go.Scatter(
                x=f32(tx), y=f32(np.nanmedian(nk, axis=1)), mode="lines",
                name="median ‖w_j‖", showlegend=False,
                line={"color": INK, "width": 2 * style.line / 2, "dash": "dash"},
                hovertemplate="median ‖w‖ = %{y:.3g}<extra></extra>"))
    lo, hi = log_range(nk, include=smallest_initial_norm(traj))
    return traces, (lo, hi), int(sel.size)


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


def cursor_trace(x: float, y_range: tuple[float, float], width: float = 7) -> go.Scatter:
    """The time cursor: a wide translucent vertical line at axis value x; frames move its x."""
    lo, hi = y_range
    return go.Scatter(x=[x, x], y=[lo, hi], mode="lines", line={**CURSOR_LINE, "width": width},
                      hoverinfo="skip", showlegend=False, name="time cursor")


__all__ = ["CURSOR_LINE", "cursor_trace", "loss_series", "norm_envelopes", "norm_traces",
           "smallest_initial_norm"]
