"""Two runs side by side on one time grid: the Compare page's figure and differences table.

`compare_figure` draws one Plotly figure with frames: the neuron panels of run A and run B
side by side (the same drawing as the main figure's neuron panel) and, on the right, shared
time panels (max/median neuron norm, loss, accuracy) with both runs' curves and one time
cursor. Frames follow a common time grid (`common_grid`: the union of both runs' frame times,
thinned to at most `max_frames`); at each grid time a run shows its last frame with t ≤ that
time, so a shorter run stays on its final frame.

`difference_rows` tabulates what differs: detected phase times, final loss, accuracy, stable
rank, max angle, status. Pure: trajectories and analyses in, figure or rows out.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dynamics.annotations import Analysis
from dynamics.trajectory import Trajectory

from .main_figure import (
    PANEL_LIMIT,
    RadiusMode,
    TimeAxis,
    TimeAxisSpec,
    _cone_trace,
    _data_traces,
    _direction_traces,
    _f32,
    _guide_traces,
    _log_range,
    _loss_series,
    _neuron_frame,
    fmt_time,
    frame_ms,
    frame_step,
    neuron_subset,
    player,
    radius_scale,
)
from .style import GRID, INK, NEGATIVE, OKABE_ITO, POSITIVE, rgba, style_for

RUN_COLOURS = (INK, OKABE_ITO["orange"])  # run A, run B on the time panels
RUN_DASH = ("solid", "dash")
PHASE_EVENTS = ("alignment", "fitting", "plateau", "convergence", "OLS plateau")


# ----------------------------------------------------------------------------- time grid
def common_grid(t_a: np.ndarray, t_b: np.ndarray, max_frames: int = 200) -> np.ndarray:
    """Sorted union of two runs' frame times, thinned to ≤ max_frames (first and last kept)."""
    t = np.unique(np.r_[np.asarray(t_a, float), np.asarray(t_b, float)])
    t = t[np.isfinite(t)]
    if t.size <= max_frames:
        return t
    idx = np.unique(np.round(np.linspace(0, t.size - 1, max(2, max_frames))).astype(int))
    return t[idx]


def frames_on_grid(t_run: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """For each grid time, the index of the run's last frame with t ≤ grid time (0 before
    its first frame)."""
    t_run = np.asarray(t_run, float)
    idx = np.searchsorted(t_run, np.asarray(grid, float) * (1 + 1e-12), side="right") - 1
    return np.clip(idx, 0, max(t_run.size - 1, 0)).astype(int)


def shared_time_spec(trajs: Sequence[Trajectory], time_axis: TimeAxis) -> TimeAxisSpec:
    """One time axis covering every run (log: from below the first positive frame time)."""
    ts = np.concatenate([np.asarray(tr.t, float) for tr in trajs])
    t_end = float(ts.max()) if ts.size and ts.max() > 0 else 1.0
    if time_axis == "log":
        pos = ts[ts > 0]
        first = float(pos.min()) if pos.size else t_end * 1e-4
        return TimeAxisSpec(1.0, True, first / 1.6, t_end * 1.05, "time t")
    return TimeAxisSpec(1.0, False, 0.0, t_end, "time t")


# ----------------------------------------------------------------------------- table
def _phase_time(an: Analysis | None, name: str, edge: str = "start") -> float | None:
    if an is None:
        return None
    for ph in an.phases:
        if ph.name == name and ph.source == "detected":
            return float(ph.end if edge == "end" else ph.start)
    return None


def _marker_time(an: Analysis | None, name: str) -> float | None:
    if an is None:
        return None
    for mk in an.markers:
        if mk.name == name and mk.source == "detected":
            return float(mk.time)
    return None


def _last(traj: Trajectory, name: str) -> float:
    v = traj.frame_metrics.get(name)
    return float(v[-1]) if v is not None and len(v) else float("nan")


def _fmt(v: float | None, spec: str = ".4g") -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    return format(v, spec)


def run_summary(traj: Trajectory, analysis: Analysis | None) -> dict[str, Any]:
    """The numbers of one run that the differences table shows (None: not detected)."""
    acc = np.asarray(traj.accuracy, float)
    return {
        "status": traj.status,
        "alignment ends": _phase_time(analysis, "alignment", "end"),
        "saddle escape": _marker_time(analysis, "saddle escape"),
        "plateau escape": _marker_time(analysis, "plateau escape"),
        "convergence from": _phase_time(analysis, "convergence"),
        "final loss": float(traj.loss[-1]),
        "final accuracy": float(acc[-1]) if acc.size and np.isfinite(acc[-1]) else None,
        "stable rank (final)": _last(traj, "stable_rank"),
        "max angle (final, °)": _last(traj, "max_angle"),
        "max ‖w_j‖ (final)": float(np.nanmax(traj.norms[-1])) if traj.width else None,
        "end time t": float(traj.t[-1]),
    }


def difference_rows(traj_a: Trajectory, traj_b: Trajectory, analysis_a: Analysis | None,
                    analysis_b: Analysis | None, labels: Sequence[str] = ("A", "B")
                    ) -> list[dict[str, str]]:
    """Rows {quantity, A, B, differs} of the differences table; times in gradient-flow t."""
    sa, sb = run_summary(traj_a, analysis_a), run_summary(traj_b, analysis_b)
    la, lb = labels[0], labels[1]
    rows: list[dict[str, str]] = []
    for k in sa:
        va, vb = sa[k], sb[k]
        if k == "status":
            fa, fb = str(va), str(vb)
        elif k == "final accuracy":
            fa, fb = _fmt(va, ".1%"), _fmt(vb, ".1%")
        else:
            fa, fb = _fmt(va), _fmt(vb)
        rows.append({"quantity": k, la: fa, lb: fb, "differs": "●" if fa != fb else ""})
    return rows


# ----------------------------------------------------------------------------- figure
def _short_label(traj: Trajectory) -> str:
    c = traj.config
    act = "ReLU" if c.model.gamma == 0 else f"leaky γ={c.model.gamma:g}"
    init = {"balanced": "balanced", "gaussian": "Gaussian", "dominated": "dominated",
            "fixed_output": "fixed a"}[c.init.scheme]
    return f"{act} · m={traj.width} · ε={c.init.scale:g} · {init}"


def _envelopes(traj: Trajectory, spec: TimeAxisSpec) -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray]:
    t = np.asarray(traj.t, float)
    keep = t > 0 if spec.log else np.ones(t.shape, bool)
    nk = np.asarray(traj.norms, float)[keep]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN frames of diverged runs
        mx = np.nanmax(nk, axis=1) if nk.size else np.zeros(0)
        md = np.nanmedian(nk, axis=1) if nk.size else np.zeros(0)
    return spec.show(t[keep]), mx, md


def _event_times(an: Analysis | None) -> list[tuple[str, float]]:
    """Detected phase starts (and the alignment end) worth a line on the time panels."""
    if an is None:
        return []
    out: list[tuple[str, float]] = []
    for ph in an.phases:
        if ph.source != "detected" or ph.name not in PHASE_EVENTS:
            continue
        if ph.name == "alignment":
            out.append(("alignment ends", float(ph.end)))
        elif ph.start > 0:
            out.append((ph.name, float(ph.start)))
    return out


def compare_figure(traj_a: Trajectory, traj_b: Trajectory, analysis_a: Analysis | None = None,
                   analysis_b: Analysis | None = None, labels: Sequence[str] = ("A", "B"), *,
                   radius: RadiusMode = "normalised", time_axis: TimeAxis = "log",
                   max_frames: int = 160, presenter: bool = False,
                   max_neurons: int = 300) -> go.Figure:
    """Both runs on one animated figure with a shared time cursor (see the module docstring).

    labels: names of the runs (legend, panel titles, table columns)."""
    style = style_for(presenter)
    trajs = (traj_a, traj_b)
    analyses = (analysis_a, analysis_b)
    spec = shared_time_spec(trajs, time_axis)
    grid = common_grid(traj_a.t, traj_b.t, max_frames)
    fmaps = [frames_on_grid(tr.t, grid) for tr in trajs]
    classification = any(tr.classification and np.isfinite(tr.accuracy).any() for tr in trajs)
    n_time = 3 if classification else 2

    specs: list[list[dict | None]] = [[{"rowspan": n_time}, {"rowspan": n_time}, {}]]
    specs += [[None, None, {}] for _ in range(n_time - 1)]
    titles = [f"<b>{labels[0]}</b>: {_short_label(traj_a)}",
              f"<b>{labels[1]}</b>: {_short_label(traj_b)}", "max and median ‖w_j‖"]
    titles += ["loss", "accuracy"][: n_time - 1]
    fig = make_subplots(rows=n_time, cols=3, specs=specs, column_widths=[0.31, 0.31, 0.38],
                        horizontal_spacing=0.05, vertical_spacing=0.09,
                        subplot_titles=titles)

    moving: list[int] = []  # trace indices updated by frames, in frame-data order
    frame_builders = []
    for side, tr in enumerate(trajs):
        col = side + 1
        scale = radius_scale(tr, radius)
        sel = neuron_subset(np.asarray(tr.norms[-1], float), max_neurons)
        for g in _guide_traces(scale, style):
            fig.add_trace(g, row=1, col=col)
        cone = _cone_trace(tr, analyses[side])
        if cone is not None:
            cone.showlegend = side == 0
            fig.add_trace(cone, row=1, col=col)
        for g in _data_traces(tr, style):
            g.showlegend = False if side else g.showlegend
            fig.add_trace(g, row=1, col=col)
        for g in _direction_traces(tr, analyses[side], style):
            g.showlegend = False if side else g.showlegend
            fig.add_trace(g, row=1, col=col)
        f0 = int(fmaps[side][0])
        pos0, neg0, _ = _neuron_frame(tr, f0, sel, scale, style, True)
        hover = ("neuron %{customdata[0]:.0f}<br>‖w‖ = %{customdata[1]:.3g}"
                 f"<extra>{labels[side]}: %{{fullData.name}}</extra>")
        for d0, colour, symbol, name, grp in ((pos0, POSITIVE, "circle", "a_j > 0", "pos"),
                                              (neg0, NEGATIVE, "square", "a_j < 0", "neg")):
            moving.append(len(fig.data))
            fig.add_trace(go.Scatter(
                mode="markers", name=name, legendgroup=grp, showlegend=side == 0,
                hovertemplate=hover, x=d0["x"], y=d0["y"], customdata=d0["customdata"],
                marker={"color": colour, "symbol": symbol, "opacity": 0.85,
                        "size": d0["marker"]["size"], "line": {"width": 0.8,
                                                               "color": "white"}}),
                row=1, col=col)

        def caption(f: int, tr: Trajectory = tr) -> dict:
            top = float(np.nanmax(tr.norms[f])) if tr.width else 0.0
            return {"x": [-PANEL_LIMIT * 0.97], "y": [-PANEL_LIMIT * 0.97],
                    "text": [f"t = {fmt_time(float(tr.t[f]))}<br>max ‖w‖ = {top:.2g}"
                             f"<br>loss = {float(tr.loss[f]):.3g}"]}

        moving.append(len(fig.data))
        fig.add_trace(go.Scatter(mode="text", textposition="top right", hoverinfo="skip",
                                 showlegend=False, textfont={"size": style.small, "color": INK},
                                 **caption(f0)), row=1, col=col)
        frame_builders.append((tr, sel, scale, caption))

    # -- shared time panels
    y_ranges: list[tuple[float, float]] = []
    norm_vals: list[np.ndarray] = []
    loss_vals: list[np.ndarray] = []
    for side, tr in enumerate(trajs):
        colour, dash = RUN_COLOURS[side], RUN_DASH[side]
        lab = labels[side]
        tx, mx, md = _envelopes(tr, spec)
        norm_vals += [mx, md]
        fig.add_trace(go.Scatter(
            x=_f32(tx), y=_f32(mx), mode="lines", name=f"{lab}: max ‖w_j‖",
            legendgroup=f"run{side}", line={"color": colour, "dash": dash,
                                            "width": 2.5 * style.line / 2},
            hovertemplate=f"{lab}: max ‖w‖ = %{{y:.3g}}<br>t = %{{x:.3g}}<extra></extra>"),
            row=1, col=3)
        fig.add_trace(go.Scatter(
            x=_f32(tx), y=_f32(md), mode="lines", name=f"{lab}: median ‖w_j‖",
            legendgroup=f"run{side}", showlegend=False, opacity=0.55,
            line={"color": colour, "dash": dash, "width": 1.5 * style.line / 2},
            hovertemplate=f"{lab}: median ‖w‖ = %{{y:.3g}}<br>t = %{{x:.3g}}<extra></extra>"),
            row=1, col=3)
        t_loss, loss = _loss_series(tr)
        keep = (t_loss > 0 if spec.log else np.ones(t_loss.shape, bool)) & (loss > 0)
        loss_vals.append(loss[keep])
        fig.add_trace(go.Scatter(
            x=_f32(spec.show(t_loss[keep])), y=_f32(loss[keep]), mode="lines",
            name=f"{lab}: loss", legendgroup=f"run{side}", showlegend=False,
            line={"color": colour, "dash": dash, "width": 2.5 * style.line / 2},
            hovertemplate=f"{lab}: loss = %{{y:.3g}}<br>t = %{{x:.3g}}<extra></extra>"),
            row=2, col=3)
        if n_time == 3 and tr.classification:
            ta = np.asarray(tr.t, float)
            ka = ta > 0 if spec.log else np.ones(ta.shape, bool)
            fig.add_trace(go.Scatter(
                x=_f32(spec.show(ta[ka])), y=_f32(tr.accuracy[ka]), mode="lines",
                name=f"{lab}: accuracy", legendgroup=f"run{side}", showlegend=False,
                line={"color": colour, "dash": dash, "width": 2.5 * style.line / 2,
                      "shape": "hv"},
                hovertemplate=f"{lab}: accuracy = %{{y:.0%}}<br>t = %{{x:.3g}}<extra></extra>"),
                row=3, col=3)
    y_ranges.append(_log_range(np.concatenate(norm_vals) if norm_vals else np.zeros(0)))
    y_ranges.append(_log_range(np.concatenate(loss_vals) if loss_vals else np.zeros(0), 10.0))
    if n_time == 3:
        y_ranges.append((-0.04, 1.06))

    # detected events of each run: thin vertical lines in the run's colour and dash, and a
    # marker on top of the first time panel whose hover names the event
    time_axes = [(f"x{k + 3}", f"y{k + 3}") for k in range(n_time)]
    lo_t = spec.t0 if spec.log else 0.0
    for side, an in enumerate(analyses):
        events = [(name, float(spec.show(t_ev))) for name, t_ev in _event_times(an)]
        events = [(name, v) for name, v in events if lo_t <= v <= spec.t1]
        colour = RUN_COLOURS[side] if side else "#555555"
        for _name, v in events:
            for xa, ya in time_axes:
                fig.add_shape(type="line", xref=xa, yref=f"{ya} domain", x0=v, x1=v, y0=0,
                              y1=1, layer="below",
                              line={"color": rgba(colour, 0.7), "width": 1.3,
                                    "dash": "dot" if side == 0 else "dash"},
                              name=f"event:{labels[side]}:{_name}")
        if events:
            top = y_ranges[0][1]
            fig.add_trace(go.Scatter(
                x=[v for _, v in events], y=[top / (1.35 if side == 0 else 1.9)] * len(events),
                mode="markers", name=f"{labels[side]}: detected phases",
                legendgroup=f"run{side}", showlegend=False,
                marker={"symbol": "triangle-down", "size": 11 * style.line / 2,
                        "color": RUN_COLOURS[side], "line": {"width": 0}},
                hovertext=[f"{labels[side]}: {name} at t = {fmt_time(float(v))}"
                           for name, v in events],
                hovertemplate="%{hovertext}<extra></extra>"), row=1, col=3)

    cursor_idx: list[int] = []
    t_first = float(spec.show(grid[0])) if grid.size else 0.0
    for k, (lo, hi) in enumerate(y_ranges):
        cursor_idx.append(len(fig.data))
        fig.add_trace(go.Scatter(
            x=[t_first, t_first], y=[lo, hi], mode="lines", hoverinfo="skip",
            line={"color": "rgba(26,26,26,0.28)", "width": 7}, showlegend=False,
            name="time cursor"), row=k + 1, col=3)

    # -- axes
    lim = [-PANEL_LIMIT, PANEL_LIMIT]
    for col, tr in ((1, traj_a), (2, traj_b)):
        xname, yname = tr.plane_names
        fig.update_xaxes(range=lim, row=1, col=col, zeroline=True, zerolinecolor=GRID,
                         showgrid=False, ticks="", showticklabels=False, constrain="domain",
                         title={"text": xname, "standoff": 2})
        fig.update_yaxes(range=lim, row=1, col=col, zeroline=True, zerolinecolor=GRID,
                         showgrid=False, ticks="", showticklabels=False, constrain="domain",
                         scaleanchor="x" if col == 1 else "x2", scaleratio=1,
                         title={"text": yname, "standoff": 2})
    for k in range(n_time):
        bottom = k == n_time - 1
        fig.update_xaxes(type="log" if spec.log else "linear", range=spec.range, row=k + 1,
                         col=3, matches=None if k == 0 else "x3", showticklabels=bottom,
                         gridcolor=GRID, exponentformat="power",
                         dtick=1 if spec.log and spec.range[1] - spec.range[0] <= 8 else None,
                         title={"text": spec.title if bottom else None, "standoff": 6})
        lo, hi = y_ranges[k]
        if k < 2:
            span = math.log10(hi) - math.log10(lo)
            fig.update_yaxes(type="log", range=[math.log10(lo), math.log10(hi)], row=k + 1,
                             col=3, gridcolor=GRID, exponentformat="power",
                             dtick=1 if span <= 5 else 2 if span <= 10 else 3)
        else:
            fig.update_yaxes(range=[lo, hi], row=k + 1, col=3, gridcolor=GRID,
                             tickformat=".0%", dtick=0.5)

    # -- frames and slider
    frames, steps = [], []
    for n, tg in enumerate(grid):
        data: list[dict] = []
        for side, (tr, sel, scale, caption) in enumerate(frame_builders):
            f = int(fmaps[side][n])
            pos, neg, _ = _neuron_frame(tr, f, sel, scale, style, True)
            data += [pos, neg, caption(f)]
        tc = float(spec.show(tg))
        data += [{"x": [tc, tc]} for _ in cursor_idx]
        frames.append({"name": str(n), "data": [{"type": "scatter", **d} for d in data],
                       "traces": [*moving, *cursor_idx]})
        steps.append(frame_step(str(n), fmt_time(float(tg))))
    fig.frames = frames
    height = int(style.height * 0.95)
    top_px, bottom_px = 110, 112
    plot_px = max(height - top_px - bottom_px, 200)
    below = -(56.0 * style.font / 15.0) / plot_px
    fig.update_layout(
        **player(steps, style, below, plot_px, redraw=False, slider_x=0.17,
                 min_ms=35),
        template="plotly_white",
        title={"text": f"{labels[0]} vs {labels[1]} — one time grid, one cursor",
               "x": 0.005, "xanchor": "left", "xref": "container", "y": 1.0,
               "yref": "container", "yanchor": "top", "pad": {"t": 8},
               "font": {"size": style.title, "color": INK}},
        font={"family": style.family, "size": style.font, "color": INK},
        height=height, margin={"l": 20, "r": 16, "t": top_px, "b": bottom_px},
        legend={"orientation": "h", "x": 0.0, "xanchor": "left", "yanchor": "bottom",
                "y": 1.0 + 34.0 / plot_px, "font": {"size": style.small},
                "itemsizing": "constant", "bgcolor": "rgba(255,255,255,0)"},
        hovermode="closest", hoverlabel={"font": {"size": style.small}},
        paper_bgcolor="white", plot_bgcolor="white", uirevision="compare-figure",
        meta={"frames": len(frames), "grid_t": [float(x) for x in grid[[0, -1]]]
              if grid.size else [], "labels": list(labels),
              "frame_duration_ms": frame_ms(len(frames))},
    )
    for ann in fig.layout.annotations[: len(titles)]:
        ann.font = {"size": style.small, "color": INK}
    return fig


__all__ = ["common_grid", "compare_figure", "difference_rows", "frames_on_grid",
           "run_summary", "shared_time_spec"]
