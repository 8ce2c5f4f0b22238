"""Small extra figures for the Papers page. Pure: Trajectory and numbers in, go.Figure out.

* `three_point_fit_figure`: Boursier & Flammarion's three-point data in the (x, y) plane, the
  least-squares line ⟨β, (x, 1)⟩ (the trap), and the network's function h(x) over x ∈ [−1, 1]
  at a few recorded times (h comes from `dynamics.readouts.function_curves`, the kernels'
  forward pass on stored weights).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from dynamics.readouts import function_curves
from dynamics.trajectory import Trajectory

from .style import GRID, INK, OKABE_ITO, POSITIVE, style_for
from .time_axes import fmt_time


def three_point_fit_figure(traj: Trajectory, ols_beta: np.ndarray, ols_loss: float, *,
                           n_curves: int = 5, presenter: bool = False,
                           height: int | None = None) -> go.Figure:
    """Data points, the least-squares line and h(x) on [−1, 1] at a few recorded times
    (light → dark as time goes on; the last one bold)."""
    style = style_for(presenter)
    xs = np.linspace(-1.0, 1.0, 201)
    has_bias = traj.X.shape[1] == 2
    Xg = np.column_stack([xs, np.ones_like(xs)]) if has_bias else xs[:, None]
    fig = go.Figure()
    beta = np.asarray(ols_beta, dtype=float)
    y_ols = Xg @ beta if beta.size == Xg.shape[1] else np.full_like(xs, np.nan)
    curves = function_curves(traj, Xg, n_curves)
    shades = np.linspace(0.25, 1.0, max(len(curves.frames), 1))
    for k, (t_k, h) in enumerate(zip(curves.t, curves.h, strict=True)):
        last = k == len(curves.frames) - 1
        fig.add_trace(go.Scatter(
            x=xs, y=h, mode="lines",
            name=f"h(x) at t = {fmt_time(float(t_k))}",
            opacity=float(shades[k]),
            line={"color": POSITIVE, "width": (3.2 if last else 1.6) * style.line / 2},
            hovertemplate="x = %{x:.2f}<br>h = %{y:.3f}<extra>%{fullData.name}</extra>"))
    # drawn on top of h(x): in the trap the final h(x) lies on it
    fig.add_trace(go.Scatter(
        x=xs, y=y_ols, mode="lines", name=f"least squares (loss {ols_loss:.4g})",
        line={"color": OKABE_ITO["vermillion"], "dash": "dash", "width": 3 * style.line / 2},
        hovertemplate="x = %{x:.2f}<br>OLS = %{y:.3f}<extra></extra>"))
    x_data = traj.X[:, 0]
    fig.add_trace(go.Scatter(
        x=x_data, y=traj.y, mode="markers", name="data (x_i, y_i)",
        marker={"color": INK, "size": style.marker_max, "symbol": "diamond"},
        hovertemplate="x = %{x:.3f}<br>y = %{y:.3f}<extra>data</extra>"))
    ys = np.concatenate([traj.y, y_ols[np.isfinite(y_ols)]])
    lo, hi = float(min(ys.min(), 0.0)), float(ys.max())
    pad = 0.15 * (hi - lo + 1e-9)
    fig.update_layout(
        template="plotly_white", height=height or int(380 * (1.2 if presenter else 1.0)),
        margin={"l": 60, "r": 16, "t": 48, "b": 50},
        title={"text": "Network function h(x) vs the least-squares line",
               "font": {"size": style.title, "color": INK}, "x": 0.01},
        font={"family": style.family, "size": style.font, "color": INK},
        legend={"font": {"size": style.small}},
        xaxis={"title": "x", "range": [-1.0, 1.0], "gridcolor": GRID, "zeroline": True},
        yaxis={"title": "y, h(x)", "range": [lo - pad, hi + pad], "gridcolor": GRID},
        paper_bgcolor="white", plot_bgcolor="white")
    return fig


__all__ = ["three_point_fit_figure"]
