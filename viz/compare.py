"""Two runs side by side on one time grid: the Compare page's figure and differences table.

`compare_figure` draws one Plotly figure with frames: the neuron panels of run A and run B
side by side (the same drawing as the main figure's neuron panel) and, on the right, shared
time panels (max/median neuron norm, loss, accuracy) with both runs' curves, one time cursor
and each run's phase strip above them; a narrower player stacks the neuron panels above the
time panels (`viz.compare_layout`). The sentence under the slider names each run's phase.
Frames follow a common time grid (`time_axes.common_grid`: the union of both runs'
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
from .commentary import compare_captions
from .compare_layout import (
    COLUMN_WIDTHS,
    H_SPACING,
    MARGIN_L,
    MARGIN_R,
    NARROW_PX,
    PANEL_PX_COMPARE,
    column_px,
    stacked_layout,
    strips_items,
    style_axes,
)
from .header import (
    DESIGN_WIDTH_PX,
    PRESENTER_WIDTH_PX,
    cap_legend,
    header,
    header_layout,
    legend_names,
)
from .label_layout import wrap_to_px
from .neuron_panel import (
    PANEL_LIMIT,
    cone_trace,
    data_traces,
    guide_traces,
    neuron_frame,
    neuron_marker,
    neuron_subset,
    radius_scale,
)
from .options import FigureOptions
from .panel_labels import caption_below, panel_overlays
from .phase_strip import plan_strip, row_px
from .player import fit_any_height, frame_ms
from .style import INK, NEGATIVE, OKABE_ITO, POSITIVE, white_template
from .time_axes import (
    common_grid,
    fmt_time,
    frames_on_grid,
    log_range,
    shared_time_spec,
)
from .time_panels import cursor_trace, loss_series, norm_envelopes
from .wording import LEGEND_WORDS

RUN_COLOURS = (INK, OKABE_ITO["orange"])  # run A, run B on the time panels
RUN_DASH = ("solid", "dash")


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
    return f"t = {fmt_time(float(tr.t[f]))} · max ‖w‖ = {top:.2g}"


def compare_figure(traj_a: Trajectory, traj_b: Trajectory, analysis_a: Analysis | None = None,
                   analysis_b: Analysis | None = None, labels: Sequence[str] = ("A", "B"),
                   options: FigureOptions | None = None, *, max_frames: int = 160,
                   max_neurons: int = 300) -> AnimatedFigure:
    """Both runs on one animated figure with a shared time cursor (see the module docstring),
    shown as `options` say (radius, time axis, presenter mode). Below NARROW_PX (normal mode)
    the player stacks the two neuron panels above the time panels (`viz.compare_layout`).

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
    # run titles wrapped (at " · ") to their column's width at the narrowest figure
    narrowest = PRESENTER_WIDTH_PX - 60.0 if presenter else DESIGN_WIDTH_PX
    titles = ["<br>".join(wrap_to_px(f"<b>{labels[k]}</b>: {_short_label(tr)}", style.small,
                                     column_px(k, narrowest) - 8, sep=" · "))
              for k, tr in enumerate(trajs)]
    fig = make_subplots(rows=n_time, cols=3, specs=specs, column_widths=list(COLUMN_WIDTHS),
                        horizontal_spacing=H_SPACING, vertical_spacing=0.06,
                        subplot_titles=[*titles, *[""] * n_time])

    moving: list[int] = []  # trace indices updated by frames, in frame-data order
    frame_builders = []
    unit_px = PANEL_PX_COMPARE / (2 * PANEL_LIMIT)
    for side, tr in enumerate(trajs):
        col = side + 1
        scale = radius_scale(tr, radius)
        sel = neuron_subset(np.asarray(tr.norms[-1], float), max_neurons)
        cone = cone_trace(tr, analyses[side])
        rays, label_traces = panel_overlays(tr, analyses[side], style, unit_px, size=0.9)
        panel = [*guide_traces(scale, style), *([cone] if cone is not None else []),
                 *data_traces(tr, style), *rays, *label_traces]
        for g in panel:
            if side:  # the legend names each kind once, from run A's panel
                g.showlegend = False
            fig.add_trace(g, row=1, col=col)
        f0 = int(fmaps[side][0])
        pos0, neg0, top0 = neuron_frame(tr, f0, sel, scale, style, True)
        for d0, colour, symbol, key, sign in ((pos0, POSITIVE, "circle", "pos", ">"),
                                              (neg0, NEGATIVE, "square", "neg", "<")):
            moving.append(len(fig.data))
            fig.add_trace(go.Scatter(
                mode="markers", name=LEGEND_WORDS[key], legendgroup=key, legendrank=1,
                showlegend=side == 0, x=d0["x"], y=d0["y"], customdata=d0["customdata"],
                hovertemplate=(f"{labels[side]}: neuron %{{customdata[0]:.0f}}, a_j {sign} 0"
                               "<br>‖w_j‖ = %{customdata[1]:.3g}<extra></extra>"),
                marker=neuron_marker(colour, symbol, d0["marker"]["size"])),
                row=1, col=col)
        moving.append(len(fig.data))
        cap = caption_below(_caption_text(tr, f0, top0), style)
        cap.textfont.size = style.small * 0.9
        fig.add_trace(cap, row=1, col=col)
        frame_builders.append((tr, sel, scale))

    # -- shared time panels
    y_ranges: list[tuple[float, float]] = []
    norm_vals: list[np.ndarray] = []
    loss_vals: list[np.ndarray] = []
    for side, tr in enumerate(trajs):
        colour, dash = RUN_COLOURS[side], RUN_DASH[side]
        lab = labels[side]
        tx, mx, md = norm_envelopes(tr, spec)
        norm_vals += [mx, md]
        line = {"color": colour, "dash": dash, "width": 2.5 * style.line / 2}
        fig.add_trace(go.Scatter(
            x=f32(tx), y=f32(mx), mode="lines", name=f"run {lab}", legendrank=3 + side,
            legendgroup=f"run{side}", line=line,
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
            name=f"{lab}: loss", legendgroup=f"run{side}", showlegend=False, line=line,
            hovertemplate=f"{lab}: loss = %{{y:.3g}}<br>t = %{{x:.3g}}<extra></extra>"),
            row=2, col=3)
        if n_time == 3 and tr.classification:
            ta = np.asarray(tr.t, float)
            ka = spec.keep(ta)
            fig.add_trace(go.Scatter(
                x=f32(spec.show(ta[ka])), y=f32(tr.accuracy[ka]), mode="lines",
                name=f"{lab}: accuracy", legendgroup=f"run{side}", showlegend=False,
                line={**line, "shape": "hv"},
                hovertemplate=f"{lab}: accuracy = %{{y:.0%}}<br>t = %{{x:.3g}}<extra></extra>"),
                row=3, col=3)
    first = [v[0] for v in norm_vals if v.size and np.isfinite(v[0]) and v[0] > 0]
    y_ranges.append(log_range(np.concatenate(norm_vals) if norm_vals else np.zeros(0),
                              include=min(first) if first else None))
    y_ranges.append(log_range(np.concatenate(loss_vals) if loss_vals else np.zeros(0), 10.0))
    if n_time == 3:
        y_ranges.append((-0.04, 1.06))

    cursor_idx: list[int] = []
    t_first = float(spec.show(grid[0])) if grid.size else 0.0
    for k, (lo, hi) in enumerate(y_ranges):
        cursor_idx.append(len(fig.data))
        fig.add_trace(cursor_trace(t_first, (lo, hi)), row=k + 1, col=3)
    style_axes(fig, trajs, spec, y_ranges, n_time)

    # -- frames: the moving traces' values, played by the browser, with the commentary
    frames: list[list[dict]] = []
    labels_t: list[str] = []
    for n, tg in enumerate(grid):
        data: list[dict] = []
        for side, (tr, sel, scale) in enumerate(frame_builders):
            f = int(fmaps[side][n])
            pos, neg, top = neuron_frame(tr, f, sel, scale, style, True)
            data += [pos, neg, {"text": [_caption_text(tr, f, top)]}]
        tc = float(spec.show(tg))
        data += [{"x": [tc, tc]} for _ in cursor_idx]
        frames.append(data)
        labels_t.append(f"t = {fmt_time(float(tg))}")
    runs = [(labels[k], trajs[k], analyses[k]) for k in (0, 1)]
    anim = Animation.from_frames(frames, [*moving, *cursor_idx], labels_t,
                                 frame_ms=frame_ms(len(frames)),
                                 captions=compare_captions(runs, fmaps),
                                 dtypes={"marker.size": "u1"})

    # -- the two runs' phase strips above the time panels, the header, the narrow layout
    axis_px = column_px(2, PRESENTER_WIDTH_PX if presenter else NARROW_PX)
    strips = []
    row = 0
    for side in (0, 1):
        st = plan_strip(analyses[side], spec, style, axis_px=axis_px, max_lanes=0,
                        markers=False, group=labels[side], first_row=row, max_rows=1,
                        own_first=True, size=style.small * (0.8 if presenter else 0.9))
        row += st.rows
        strips.append(st)
    n_rows = row
    strip_px = 0.0 if n_rows == 0 else 4 + n_rows * row_px(strips[0].size)
    title = f"{labels[0]} vs {labels[1]} — one time grid, one cursor"
    # presenter mode: the plots keep ≥ 45 % of a 720 px window (a one-row legend, a title at
    # body size); under the panels, the frame caption and the axis title fit the bottom margin
    title_size = style.font if presenter else style.title
    cap_legend(fig, rows=(1, style.small, PRESENTER_WIDTH_PX - MARGIN_L - MARGIN_R - 10)
               if presenter else None)
    n_lines = max(len(t.split("<br>")) for t in titles[:2])
    hd = header(title, title_size, style.font, legend_names(fig), style.small,
                max(n_lines * style.small * 1.25 + 8, strip_px + 4))
    top_px, bottom_px = max(hd.top_px, 72.0), round(52 * style.font / 15)
    plot_px = int(style.height * 0.95) - 110 - 112  # the plot area keeps its height
    height = round(plot_px + top_px + bottom_px)
    head = header_layout(hd, height, style.small)
    time_axes = [(f"x{k + 3}", f"y{k + 3}") for k in range(n_time)]
    shapes, anns = strips_items(strips, labels, spec, time_axes, style, 1.0)
    fig.layout.shapes = shapes
    fig.layout.annotations = (*fig.layout.annotations[:2], *anns)
    white_template(fig)
    fig.update_layout(
        title={**head["title"], "text": title, "font": {"size": title_size, "color": INK}},
        font={"family": style.family, "size": style.font, "color": INK},
        height=height, margin={"l": MARGIN_L, "r": MARGIN_R, "t": top_px, "b": bottom_px},
        legend=head["legend"],
        hovermode="closest", hoverlabel={"font": {"size": style.small}},
        paper_bgcolor="white", plot_bgcolor="white", uirevision="compare-figure",
    )
    for ann in fig.layout.annotations[:2]:
        ann.font = {"size": style.small, "color": INK}
    meta = {"frames": len(frames), "grid_t": [float(x) for x in grid[[0, -1]]]
            if grid.size else [], "labels": list(labels),
            "frame_duration_ms": anim.frame_ms, "legend_rows": hd.legend_rows,
            "strip_rows": n_rows}
    fig.update_layout(meta=meta)
    narrow = () if presenter else (
        (NARROW_PX, stacked_layout(fig, strips, labels, spec, time_axes, style, strip_px)),)
    if presenter:
        fit_any_height(fig)
    return AnimatedFigure(fig, anim, meta, narrow=narrow)


__all__ = ["COLUMN_WIDTHS", "NARROW_PX", "PANEL_PX_COMPARE", "column_px", "compare_figure",
           "difference_rows", "run_summary"]
