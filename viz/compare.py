"""Two runs side by side on one time grid: the Compare page's figure and differences table.

`compare_figure` draws one Plotly figure with frames: the neuron panels of run A and run B
side by side (the same drawing as the main figure's neuron panel) and, on the right, shared
time panels (max/median neuron norm, loss, accuracy) with both runs' curves and one time
cursor. Frames follow a common time grid (`time_axes.common_grid`: the union of both runs'
frame times, thinned to at most `max_frames`); at each grid time a run shows its last frame
with t ≤ that time, so a shorter run stays on its final frame.

`difference_rows` tabulates what differs: detected phase times, final loss, accuracy, stable
rank, max angle, status. Pure: trajectories and analyses in, figure or rows out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dynamics.annotations import Analysis
from dynamics.trajectory import Trajectory

from .animation import AnimatedFigure, Animation
from .arrays import f32
from .header import DESIGN_WIDTH_PX, PRESENTER_WIDTH_PX, header, header_layout, legend_names
from .label_layout import layout_panel, wrap_to_px
from .neuron_panel import (
    PANEL_LIMIT,
    caption_xy,
    cone_trace,
    data_traces,
    direction_traces,
    guide_traces,
    neuron_frame,
    neuron_marker,
    neuron_subset,
    radius_scale,
)
from .options import FigureOptions
from .phase_marks import add_event_lines, event_times, phase_legend_traces
from .player import fit_any_height, frame_ms
from .style import GRID, INK, NEGATIVE, OKABE_ITO, POSITIVE, phase_colour
from .time_axes import (
    common_grid,
    fmt_time,
    frames_on_grid,
    log_dtick,
    log_range,
    shared_time_spec,
)
from .time_panels import cursor_trace, loss_series, norm_envelopes

RUN_COLOURS = (INK, OKABE_ITO["orange"])  # run A, run B on the time panels
RUN_DASH = ("solid", "dash")
COLUMN_WIDTHS = (0.31, 0.31, 0.38)  # neuron panel A, neuron panel B, time panels
H_SPACING = 0.05
MARGIN_L, MARGIN_R = 20, 16


def column_px(k: int, width_px: float = DESIGN_WIDTH_PX) -> float:
    """Pixel width of column k (0, 1: the neuron panels; 2: the time panels) of the compare
    figure `width_px` wide."""
    plot = width_px - MARGIN_L - MARGIN_R
    return plot * (1 - 2 * H_SPACING) * COLUMN_WIDTHS[k] / sum(COLUMN_WIDTHS)


PANEL_PX_COMPARE = column_px(0)  # each neuron panel is a square this wide (a lower bound)


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


def _caption_text(tr: Trajectory, f: int, top: float) -> str:
    return (f"t = {fmt_time(float(tr.t[f]))}<br>max ‖w‖ = {top:.2g}"
            f"<br>loss = {float(tr.loss[f]):.3g}")


def compare_figure(traj_a: Trajectory, traj_b: Trajectory, analysis_a: Analysis | None = None,
                   analysis_b: Analysis | None = None, labels: Sequence[str] = ("A", "B"),
                   options: FigureOptions | None = None, *, max_frames: int = 160,
                   max_neurons: int = 300) -> AnimatedFigure:
    """Both runs on one animated figure with a shared time cursor (see the module docstring),
    shown as `options` say (radius, time axis, presenter mode).

    labels: names of the runs (legend, panel titles, table columns)."""
    opts = options or FigureOptions()
    presenter, radius, time_axis = opts.presenter, opts.radius, opts.time_axis
    style = opts.style
    trajs = (traj_a, traj_b)
    analyses = (analysis_a, analysis_b)
    spec = shared_time_spec(trajs, time_axis)
    grid = common_grid(traj_a.t, traj_b.t, max_frames)
    fmaps = [frames_on_grid(tr.t, grid) for tr in trajs]
    classification = any(tr.classification and np.isfinite(tr.accuracy).any() for tr in trajs)
    n_time = 3 if classification else 2

    specs: list[list[dict | None]] = [[{"rowspan": n_time}, {"rowspan": n_time}, {}]]
    specs += [[None, None, {}] for _ in range(n_time - 1)]
    # run titles wrapped (at " · ") to their column's width at the narrowest figure (presenter
    # mode: a window-wide figure beside a column legend of phases, see viz.header)
    narrowest = PRESENTER_WIDTH_PX - 240.0 if presenter else DESIGN_WIDTH_PX
    titles = ["<br>".join(wrap_to_px(f"<b>{labels[k]}</b>: {_short_label(tr)}", style.small,
                                     column_px(k, narrowest) - 8, sep=" · "))
              for k, tr in enumerate(trajs)]
    titles += ["max and median ‖w_j‖", "loss", "accuracy"][:n_time]
    fig = make_subplots(rows=n_time, cols=3, specs=specs, column_widths=list(COLUMN_WIDTHS),
                        horizontal_spacing=H_SPACING, vertical_spacing=0.09,
                        subplot_titles=titles)

    moving: list[int] = []  # trace indices updated by frames, in frame-data order
    frame_builders = []
    for side, tr in enumerate(trajs):
        col = side + 1
        scale = radius_scale(tr, radius)
        sel = neuron_subset(np.asarray(tr.norms[-1], float), max_neurons)
        cone = cone_trace(tr, analyses[side])
        if cone is not None:
            cone.showlegend = side == 0
        panel = [*guide_traces(scale, style), *([cone] if cone is not None else [])]
        for g in [*data_traces(tr, style), *direction_traces(tr, analyses[side], style)]:
            g.showlegend = False if side else g.showlegend
            if isinstance(g.meta, dict) and "direction" in g.meta:
                g.textfont.size = style.small * 0.9  # two panels side by side: smaller names
            panel.append(g)
        with np.errstate(all="ignore"):
            tops = np.nanmax(np.asarray(tr.norms, float)[fmaps[side]], axis=1) \
                if tr.width else np.zeros(len(grid))
        texts = [_caption_text(tr, int(f), float(v))
                 for f, v in zip(fmaps[side], tops, strict=True)]
        corner = layout_panel(panel, limit=PANEL_LIMIT, small=style.small,
                              caption_size=style.small, unit_px=PANEL_PX_COMPARE / 2.76,
                              prefer=("bottom left", "top left", "bottom right", "top right"),
                              captions=texts or ["t"])
        for g in panel:
            fig.add_trace(g, row=1, col=col)
        f0 = int(fmaps[side][0])
        pos0, neg0, _ = neuron_frame(tr, f0, sel, scale, style, True)
        hover = ("neuron %{customdata[0]:.0f}<br>‖w‖ = %{customdata[1]:.3g}"
                 f"<extra>{labels[side]}: %{{fullData.name}}</extra>")
        for d0, colour, symbol, name, grp in ((pos0, POSITIVE, "circle", "a_j > 0", "pos"),
                                              (neg0, NEGATIVE, "square", "a_j < 0", "neg")):
            moving.append(len(fig.data))
            fig.add_trace(go.Scatter(
                mode="markers", name=name, legendgroup=grp, showlegend=side == 0,
                hovertemplate=hover, x=d0["x"], y=d0["y"], customdata=d0["customdata"],
                marker=neuron_marker(colour, symbol, d0["marker"]["size"])),
                row=1, col=col)

        where = caption_xy(corner)

        def caption(f: int, tr: Trajectory = tr, where: dict = where) -> dict:
            top = float(np.nanmax(tr.norms[f])) if tr.width else 0.0
            return {"x": where["x"], "y": where["y"], "text": [_caption_text(tr, f, top)]}

        moving.append(len(fig.data))
        fig.add_trace(go.Scatter(mode="text", textposition=where["textposition"],
                                 hoverinfo="skip", name="frame caption", showlegend=False,
                                 textfont={"size": style.small, "color": INK},
                                 **caption(f0)), row=1, col=col)
        frame_builders.append((tr, sel, scale, caption))

    # -- shared time panels
    y_ranges: list[tuple[float, float]] = []
    norm_vals: list[np.ndarray] = []
    loss_vals: list[np.ndarray] = []
    for side, tr in enumerate(trajs):
        colour, dash = RUN_COLOURS[side], RUN_DASH[side]
        lab = labels[side]
        tx, mx, md = norm_envelopes(tr, spec)
        norm_vals += [mx, md]
        fig.add_trace(go.Scatter(
            x=f32(tx), y=f32(mx), mode="lines", name=f"{lab}: max ‖w_j‖",
            legendgroup=f"run{side}", line={"color": colour, "dash": dash,
                                            "width": 2.5 * style.line / 2},
            hovertemplate=f"{lab}: max ‖w‖ = %{{y:.3g}}<br>t = %{{x:.3g}}<extra></extra>"),
            row=1, col=3)
        fig.add_trace(go.Scatter(
            x=f32(tx), y=f32(md), mode="lines", name=f"{lab}: median ‖w_j‖",
            legendgroup=f"run{side}", showlegend=False, opacity=0.55,
            line={"color": colour, "dash": dash, "width": 1.5 * style.line / 2},
            hovertemplate=f"{lab}: median ‖w‖ = %{{y:.3g}}<br>t = %{{x:.3g}}<extra></extra>"),
            row=1, col=3)
        t_loss, loss = loss_series(tr)
        keep = spec.keep(t_loss) & (loss > 0)
        loss_vals.append(loss[keep])
        fig.add_trace(go.Scatter(
            x=f32(spec.show(t_loss[keep])), y=f32(loss[keep]), mode="lines",
            name=f"{lab}: loss", legendgroup=f"run{side}", showlegend=False,
            line={"color": colour, "dash": dash, "width": 2.5 * style.line / 2},
            hovertemplate=f"{lab}: loss = %{{y:.3g}}<br>t = %{{x:.3g}}<extra></extra>"),
            row=2, col=3)
        if n_time == 3 and tr.classification:
            ta = np.asarray(tr.t, float)
            ka = spec.keep(ta)
            fig.add_trace(go.Scatter(
                x=f32(spec.show(ta[ka])), y=f32(tr.accuracy[ka]), mode="lines",
                name=f"{lab}: accuracy", legendgroup=f"run{side}", showlegend=False,
                line={"color": colour, "dash": dash, "width": 2.5 * style.line / 2,
                      "shape": "hv"},
                hovertemplate=f"{lab}: accuracy = %{{y:.0%}}<br>t = %{{x:.3g}}<extra></extra>"),
                row=3, col=3)
    first = [v[0] for v in norm_vals if v.size and np.isfinite(v[0]) and v[0] > 0]
    y_ranges.append(log_range(np.concatenate(norm_vals) if norm_vals else np.zeros(0),
                              include=min(first) if first else None))
    y_ranges.append(log_range(np.concatenate(loss_vals) if loss_vals else np.zeros(0), 10.0))
    if n_time == 3:
        y_ranges.append((-0.04, 1.06))

    # detected events of each run: thin vertical lines in the run's colour and dash, and a
    # marker on top of the first time panel whose hover names the event
    time_axes = [(f"x{k + 3}", f"y{k + 3}") for k in range(n_time)]
    for side, an in enumerate(analyses):
        events = [(name, float(spec.show(t_ev))) for name, t_ev in event_times(an)]
        events = [(name, v) for name, v in events if spec.lo <= v <= spec.t1]
        add_event_lines(fig, events, time_axes, RUN_COLOURS[side] if side else "#555555",
                        "dot" if side == 0 else "dash", labels[side])
        if events:
            top = y_ranges[0][1]
            fig.add_trace(go.Scatter(
                x=[v for _, v in events], y=[top / (1.35 if side == 0 else 1.9)] * len(events),
                mode="markers", name=f"{labels[side]}: detected phases",
                legendgroup=f"run{side}", showlegend=False,
                marker={"symbol": "triangle-down", "size": 12 * style.line / 2,
                        "color": [phase_colour(name) for name, _ in events],
                        "line": {"width": 1.5, "color": RUN_COLOURS[side]}},
                hovertext=[f"{labels[side]}: {name} at t = {fmt_time(float(v))}"
                           for name, v in events],
                hovertemplate="%{hovertext}<extra></extra>"), row=1, col=3)

    for g in phase_legend_traces([name for an in analyses for name, _ in event_times(an)],
                                 style):
        fig.add_trace(g)  # the legend of phases: the triangles' colours

    cursor_idx: list[int] = []
    t_first = float(spec.show(grid[0])) if grid.size else 0.0
    for k, (lo, hi) in enumerate(y_ranges):
        cursor_idx.append(len(fig.data))
        fig.add_trace(cursor_trace(t_first, (lo, hi)), row=k + 1, col=3)

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
            fig.update_yaxes(type="log", range=[math.log10(lo), math.log10(hi)], row=k + 1,
                             col=3, gridcolor=GRID, exponentformat="power",
                             dtick=log_dtick(lo, hi))
        else:
            fig.update_yaxes(range=[lo, hi], row=k + 1, col=3, gridcolor=GRID,
                             tickformat=".0%", dtick=0.5)

    # -- frames: the moving traces' values, played by the browser
    frames: list[list[dict]] = []
    labels_t: list[str] = []
    for n, tg in enumerate(grid):
        data: list[dict] = []
        for side, (tr, sel, scale, caption) in enumerate(frame_builders):
            f = int(fmaps[side][n])
            pos, neg, _ = neuron_frame(tr, f, sel, scale, style, True)
            data += [pos, neg, caption(f)]
        tc = float(spec.show(tg))
        data += [{"x": [tc, tc]} for _ in cursor_idx]
        frames.append(data)
        labels_t.append(f"t = {fmt_time(float(tg))}")
    anim = Animation.from_frames(frames, [*moving, *cursor_idx], labels_t,
                                 frame_ms=frame_ms(len(frames)),
                                 dtypes={"marker.size": "u1"})
    title = f"{labels[0]} vs {labels[1]} — one time grid, one cursor"
    n_lines = max(len(t.split("<br>")) for t in titles[:2])
    hd = header(title, style.title, style.font, legend_names(fig), style.small,
                n_lines * style.small * 1.25 + 8)
    top_px, bottom_px = max(hd.top_px, 72.0), round(52 * style.font / 15.0)
    plot_px = int(style.height * 0.95) - 110 - 112  # the plot area keeps its height
    height = round(plot_px + top_px + bottom_px)
    head = header_layout(hd, height, style.small)
    fig.update_layout(
        template="plotly_white",
        title={**head["title"], "text": title, "font": {"size": style.title, "color": INK}},
        font={"family": style.family, "size": style.font, "color": INK},
        height=height, margin={"l": MARGIN_L, "r": MARGIN_R, "t": top_px, "b": bottom_px},
        legend=head["legend"],
        hovermode="closest", hoverlabel={"font": {"size": style.small}},
        paper_bgcolor="white", plot_bgcolor="white", uirevision="compare-figure",
    )
    for ann in fig.layout.annotations[: len(titles)]:
        ann.font = {"size": style.small, "color": INK}
    meta = {"frames": len(frames), "grid_t": [float(x) for x in grid[[0, -1]]]
            if grid.size else [], "labels": list(labels),
            "frame_duration_ms": anim.frame_ms, "legend_rows": hd.legend_rows}
    fig.update_layout(meta=meta)
    if presenter:
        fit_any_height(fig)
    return AnimatedFigure(fig, anim, meta)


__all__ = ["COLUMN_WIDTHS", "PANEL_PX_COMPARE", "column_px", "compare_figure",
           "difference_rows", "run_summary"]
