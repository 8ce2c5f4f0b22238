"""Small extra figures for the Papers page. Pure: Trajectory and numbers in, go.Figure out.

* `three_point_fit_figure`: Boursier & Flammarion's three-point data in the (x, y) plane, the
  least-squares line ⟨β, (x, 1)⟩ (the trap), and the network's function h(x) over x ∈ [−1, 1]
  at a few recorded times (h comes from `dynamics.readouts.function_curves`, the kernels'
  forward pass on stored weights).
* `table1_figure`: Chistikov et al.'s Table 1 as a distribution — per d (one panel each), every
  seed's final max angle against λ, the simulated per-trial median, the central 90 % interval
  of 5-trial medians, and the published 5-trial medians (`dynamics.papers.chistikov.Table1`:
  the statistics come from the library, the figure only draws them).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dynamics.papers.chistikov import Table1
from dynamics.readouts import function_curves
from dynamics.trajectory import Trajectory

from .style import GRID, INK, NEGATIVE, NEUTRAL, OKABE_ITO, POSITIVE, style_for
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


def table1_figure(tab: Table1, *, presenter: bool = False, height: int | None = None
                  ) -> go.Figure:
    """One panel per d: per-seed max angles (grey dots, spread a little in x), the simulated
    per-trial median (blue line), the central 90 % of 5-trial medians (blue bars) and the
    published 5-trial median (vermillion diamonds) against λ = 4^k, log–log."""
    style = style_for(presenter)
    ds, ks = tab.d_values, tab.k_values
    rows = tab.stats()
    fig = make_subplots(rows=1, cols=len(ds), shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[f"d = {d}" for d in ds])
    n = len(tab.seeds)
    jitter = np.linspace(-0.12, 0.12, n) if n > 1 else np.zeros(1)
    for col, d in enumerate(ds, start=1):
        first = col == 1
        mine = [r for r in rows if r["d"] == d]
        lam = np.array([4.0 ** r["log4 λ"] for r in mine])
        px = np.concatenate([4.0 ** (k + jitter) for k in ks])
        py = np.concatenate([np.asarray(tab.angles[(d, k)], float) for k in ks])
        seeds = np.tile(np.asarray(tab.seeds), len(ks))
        fig.add_trace(go.Scatter(
            x=px, y=py, mode="markers", name=f"one seed ({n} per λ)", legendgroup="seed",
            showlegend=first, customdata=seeds,
            marker={"color": NEUTRAL, "size": max(style.marker_max * 0.45, 4), "opacity": 0.55},
            hovertemplate="seed %{customdata}<br>max angle %{y:.4g}°<extra>d = " + str(d)
                          + "</extra>"), row=1, col=col)
        med = np.array([r["median"] for r in mine])
        lo = np.array([r["lo"] for r in mine])
        hi = np.array([r["hi"] for r in mine])
        fig.add_trace(go.Scatter(
            x=lam, y=med, mode="lines+markers",
            name="simulated median (bars: central 90 % of 5-trial medians)",
            legendgroup="median", showlegend=first,
            line={"color": POSITIVE, "width": 2 * style.line / 2},
            marker={"color": POSITIVE, "size": style.marker_max * 0.6},
            error_y={"type": "data", "symmetric": False, "array": hi - med,
                     "arrayminus": med - lo, "color": POSITIVE, "thickness": 2, "width": 6},
            customdata=np.column_stack([lo, hi]),
            hovertemplate="λ = %{x:.3g}<br>median %{y:.4g}°<br>90 % of 5-trial medians: "
                          "%{customdata[0]:.3g}–%{customdata[1]:.3g}°<extra></extra>"),
            row=1, col=col)
        pub = np.array([r["published"] for r in mine])
        pge = np.array([r["p_ge"] for r in mine])
        fig.add_trace(go.Scatter(
            x=lam, y=pub, mode="markers", name="published 5-trial median (Table 1)",
            legendgroup="pub", showlegend=first, customdata=pge,
            marker={"color": NEGATIVE, "symbol": "diamond", "size": style.marker_max * 0.8,
                    "line": {"color": INK, "width": 1}},
            hovertemplate="λ = %{x:.3g}<br>published %{y:.4g}°<br>P(5-trial median ≥ it) = "
                          "%{customdata:.2f}<extra></extra>"), row=1, col=col)
        fig.update_xaxes(type="log", title_text="λ", gridcolor=GRID, row=1, col=col,
                         tickvals=[4.0**k for k in ks], ticktext=[f"4^{k}" for k in ks])
    fig.update_yaxes(type="log", gridcolor=GRID)
    fig.update_yaxes(title_text="final max angle (°)", row=1, col=1)
    size = "fast form: few seeds, wide intervals" if tab.fast else f"{n} seeds"
    fig.update_layout(
        template="plotly_white", height=height or int(420 * (1.2 if presenter else 1.0)),
        margin={"l": 64, "r": 16, "t": 72, "b": 50},
        title={"text": f"Table 1 as a distribution ({size}; {tab.integrator})",
               "font": {"size": style.title, "color": INK}, "x": 0.01},
        font={"family": style.family, "size": style.font, "color": INK},
        legend={"font": {"size": style.small}, "orientation": "h", "y": -0.18},
        paper_bgcolor="white", plot_bgcolor="white")
    return fig


__all__ = ["table1_figure", "three_point_fit_figure"]
