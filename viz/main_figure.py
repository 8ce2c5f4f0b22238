"""The main figure: a Plotly figure and its frames as arrays, animated by the browser player.

Left: the 2D neuron panel (`viz.neuron_panel`) — each neuron w_j at its direction in the
trajectory's plane, coloured by sign(a_j) and sized by norm, with the data, the activation-cone
boundaries and the theory's directions. Right: per-neuron norms, the loss and the accuracy on
one shared time axis (`viz.time_axes`, `viz.time_panels`) with a moving time cursor, the
phases of an `Analysis` as a strip above them and its time markers as labelled lines
(`viz.phase_strip`); under the slider, a sentence per frame (`viz.commentary`). The player
(`viz/player/`, in the page or an exported HTML file) draws Play/Pause and the time slider.

Pure: Trajectory (+ Analysis) and `FigureOptions` in, `AnimatedFigure` out; nothing here
integrates. Frames update only the traces that move (neurons, the frame caption, cursors).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dynamics.annotations import Analysis
from dynamics.trajectory import Trajectory

from .animation import AnimatedFigure, Animation
from .arrays import f32, f64
from .commentary import captions
from .header import (
    DESIGN_WIDTH_PX,
    PRESENTER_WIDTH_PX,
    cap_legend,
    header,
    header_layout,
    legend_names,
    titled_legend,
)
from .label_layout import PANEL_PX, wrap_to_px
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
from .panel_labels import caption_below, panel_overlays, ring_ticks
from .phase_strip import AXIS_PX, plan_strip, strip_items, tint_shapes
from .player import fit_any_height, frame_ms
from .style import GRID, INK, NEGATIVE, POSITIVE, Style, white_template
from .time_axes import (
    fmt_time,
    frame_indices,
    log_dtick,
    log_range,
    time_axis_spec,
)
from .time_panels import cursor_trace, loss_series, norm_traces
from .wording import LEGEND_WORDS

MARGIN_L, MARGIN_R = 64, 16
# narrowest time axis in presenter mode: 558 px at a 1280 px window (no sidebar) on every page
PRESENTER_AXIS_PX = 540
# presenter mode at 1280×720: the page above and the player below leave the figure 530 px
# (Explorer, under the lesson bar); its plots keep ≥ 45 % of the window (324 px), so its top
# margin stays under ~136 px: a smaller title, a one-row legend, a strip of at most two
# levels (two rows, or a row and a lane for its tabs and markers)
PRESENTER_LEVELS = 2


# ----------------------------------------------------------------------------- the figure
def _title(traj: Trajectory, style: Style, n_drawn: int) -> str:
    c = traj.config
    act = "ReLU" if c.model.gamma == 0 else f"leaky ReLU γ = {c.model.gamma:g}"
    parts = [f"{act}, width m = {traj.width}", f"ε = {c.init.scale:g}",
             f"{c.loss.kind} loss ({c.loss.reduction})"]
    if n_drawn < traj.width:
        parts.append(f"{n_drawn} of {traj.width} neurons drawn")
    title = " · ".join(parts)
    if traj.status != "completed":
        msg = traj.message or traj.status
        for line in wrap_to_px(f"⚠ {traj.status}: {msg}", style.font, DESIGN_WIDTH_PX - 20):
            title += (f"<br><span style='color:{NEGATIVE};font-size:{style.font:.0f}px'>"
                      f"{line}</span>")
    return title


def main_figure(traj: Trajectory, analysis: Analysis | None = None,
                options: FigureOptions | None = None, *, max_frames: int = 200,
                max_curves: int = 150, max_neurons: int = 600) -> AnimatedFigure:
    """The animated main figure (see the module docstring), shown as `options` say (radius and
    time axes, time unit, presenter mode). At most `max_frames` animation frames,
    `max_curves` norm curves, `max_neurons` neurons.
    """
    opts = options or FigureOptions()
    presenter = opts.presenter
    style = opts.style
    spec = time_axis_spec(traj, opts.time_axis, opts.time_scale)
    scale = radius_scale(traj, opts.radius)
    classification = traj.classification and np.isfinite(traj.accuracy).any()
    n_time = 3 if classification else 2
    F = traj.n_frames
    fidx = frame_indices(F, max_frames)
    sel = neuron_subset(np.asarray(traj.norms[-1], dtype=float), max_neurons)

    specs: list[list[dict | None]] = [[{"rowspan": n_time}, {}]]
    specs += [[None, {}] for _ in range(n_time - 1)]
    time_titles = ["‖w_j‖", "loss", "accuracy"][:n_time]
    radius_title = ("radius ‖w_j‖ / max‖w‖" if scale.mode == "normalised"
                    else "radius log‖w_j‖")
    fig = make_subplots(
        rows=n_time, cols=2, specs=specs, column_widths=[0.47, 0.53],
        horizontal_spacing=0.085, vertical_spacing=0.075,
        subplot_titles=[f"neuron directions · {radius_title}"])
    time_axes = [(f"x{k + 2}", f"y{k + 2}") for k in range(n_time)]

    def caption_text(f: int, top: float) -> str:
        return f"t = {fmt_time(float(traj.t[f]))} · max ‖w‖ = {top:.2g}"

    # -- neuron panel: static layers, the rays and their rim labels, neurons on top
    unit_px = PANEL_PX / (2 * PANEL_LIMIT)
    rays, label_traces = panel_overlays(traj, analysis, style, unit_px)
    cone = cone_trace(traj, analysis)
    panel = [*guide_traces(scale, style), *([cone] if cone is not None else []),
             *data_traces(traj, style), *rays, *label_traces]
    for tr in panel:
        fig.add_trace(tr, row=1, col=1)
    f_start = int(fidx[0]) if fidx.size else 0
    signs = np.asarray(traj.a, dtype=float)[np.ix_(fidx, sel)] >= 0 if fidx.size else None
    fixed = signs is None or bool(np.all(signs == signs[:1]))
    pos0, neg0, top0 = neuron_frame(traj, f_start, sel, scale, style, not fixed)
    if fixed:
        s0 = signs[0] if signs is not None else np.ones(sel.size, bool)
        pos0["text"] = [f"neuron {j}" for j in sel[s0]]
        neg0["text"] = [f"neuron {j}" for j in sel[~s0]]
        cd = "%{customdata:.3g}"
        who = "%{text}"
    else:
        cd = "%{customdata[1]:.3g}"
        who = "neuron %{customdata[0]:.0f}"
    i_pos = len(fig.data)
    fig.add_trace(go.Scatter(
        mode="markers", name=LEGEND_WORDS["pos"], legendgroup="pos", legendrank=1,
        hovertemplate=f"{who}, a_j > 0<br>‖w_j‖ = {cd}<extra></extra>",
        x=pos0["x"], y=pos0["y"], customdata=pos0["customdata"], text=pos0.get("text"),
        marker=neuron_marker(POSITIVE, "circle", pos0["marker"]["size"])),
        row=1, col=1)
    i_neg = len(fig.data)
    fig.add_trace(go.Scatter(
        mode="markers", name=LEGEND_WORDS["neg"], legendgroup="neg", legendrank=2,
        hovertemplate=f"{who}, a_j < 0<br>‖w_j‖ = {cd}<extra></extra>",
        x=neg0["x"], y=neg0["y"], customdata=neg0["customdata"], text=neg0.get("text"),
        marker=neuron_marker(NEGATIVE, "square", neg0["marker"]["size"])),
        row=1, col=1)
    i_cap = len(fig.data)
    fig.add_trace(caption_below(caption_text(f_start, top0), style), row=1, col=1)

    # -- time panels
    cursor_idx: list[int] = []
    y_ranges: list[tuple[float, float]] = []
    norm_curves, (nlo, nhi), n_curves = norm_traces(traj, spec, max_curves, style)
    for tr in norm_curves:
        fig.add_trace(tr, row=1, col=2)
    y_ranges.append((nlo, nhi))
    t_loss, loss = loss_series(traj)
    keep = spec.keep(t_loss) & (loss > 0)
    fig.add_trace(go.Scatter(
        x=f32(spec.show(t_loss[keep])), y=f64(loss[keep]), mode="lines", name="loss",
        showlegend=False, line={"color": INK, "width": 2.5 * style.line / 2},
        hovertemplate="t = %{x:.3g}<br>loss = %{y:.3g}<extra></extra>"), row=2, col=2)
    y_ranges.append(log_range(loss[keep], floor_decades=10.0))
    if classification:
        ta = np.asarray(traj.t, dtype=float)
        ka = spec.keep(ta)
        fig.add_trace(go.Scatter(
            x=f32(spec.show(ta[ka])), y=f32(traj.accuracy[ka]), mode="lines",
            name="accuracy", showlegend=False,
            line={"color": POSITIVE, "width": 2.5 * style.line / 2, "shape": "hv"},
            hovertemplate="t = %{x:.3g}<br>accuracy = %{y:.0%}<extra></extra>"), row=3, col=2)
        y_ranges.append((-0.04, 1.06))
    for k, (lo, hi) in enumerate(y_ranges):
        cursor_idx.append(len(fig.data))
        fig.add_trace(cursor_trace(float(spec.show(traj.t[f_start])), (lo, hi)),
                      row=k + 1, col=2)

    # -- axes
    lim = [-PANEL_LIMIT, PANEL_LIMIT]
    d = traj.X.shape[1]
    xname, yname = traj.plane_names
    rings, ring_text = ring_ticks(scale, style.small * 0.9, unit_px)
    fig.update_xaxes(range=lim, row=1, col=1, zeroline=True, zerolinecolor=GRID,
                     showgrid=False, constrain="domain", ticks="", showticklabels=False,
                     title={"text": f"{xname}" + (" (plane axis 1)" if d > 2 else ""),
                            "standoff": round(style.small * 1.25 + 8)})
    fig.update_yaxes(range=lim, row=1, col=1, zeroline=True, zerolinecolor=GRID,
                     showgrid=False, scaleanchor="x", scaleratio=1, constrain="domain",
                     ticks="", showticklabels=bool(rings), tickvals=rings or None,
                     ticktext=ring_text or None, tickfont={"size": style.small * 0.9},
                     title={"text": f"{yname}" + (" (plane axis 2)" if d > 2 else "")
                            + (" · rings: ‖w_j‖" if rings else ""), "standoff": 2})
    for k, (_xa, _ya) in enumerate(time_axes):
        bottom = k == n_time - 1
        fig.update_xaxes(
            type="log" if spec.log else "linear", range=spec.range, row=k + 1, col=2,
            matches=None if k == 0 else "x2", showticklabels=bottom, gridcolor=GRID,
            exponentformat="power", dtick=1 if spec.log else None,
            title={"text": spec.title if bottom else None, "standoff": 6})
        lo, hi = y_ranges[k]
        if k < 2:
            dtick = log_dtick(lo, hi)
            if presenter:  # short panels at 1280×720: at most ~4 labels of large text
                dtick = max(dtick, math.ceil((math.log10(hi) - math.log10(lo)) / 3))
            fig.update_yaxes(type="log", range=[math.log10(lo), math.log10(hi)], row=k + 1,
                             col=2, gridcolor=GRID, exponentformat="power", dtick=dtick,
                             title={"text": time_titles[k], "standoff": 4,
                                    "font": {"size": style.small}})
        else:
            fig.update_yaxes(range=[lo, hi], row=k + 1, col=2, gridcolor=GRID,
                             tickformat=".0%", dtick=0.5,
                             title={"text": time_titles[k], "standoff": 4,
                                    "font": {"size": style.small}})

    # -- frames: the moving traces' values, played by the browser, with the commentary
    frames: list[list[dict]] = []
    labels: list[str] = []
    for f in (int(f) for f in fidx):
        pos, neg, top = neuron_frame(traj, f, sel, scale, style, not fixed)
        tc = float(spec.show(traj.t[f]))
        frames.append([pos, neg, {"text": [caption_text(f, top)]},
                       *({"x": [tc, tc]} for _ in cursor_idx)])
        labels.append(f"t = {fmt_time(float(traj.t[f]))}")
    anim = Animation.from_frames(frames, [i_pos, i_neg, i_cap, *cursor_idx], labels,
                                 frame_ms=frame_ms(len(frames)),
                                 captions=captions(traj, analysis, fidx),
                                 dtypes={"marker.size": "u1"})
    # the phase strip above the time panels, laid out for their narrowest width (presenter:
    # a window without sidebar, wider axes, at most PRESENTER_LEVELS levels)
    if presenter:
        strip = plan_strip(analysis, spec, style, axis_px=PRESENTER_AXIS_PX, max_rows=2,
                           max_lanes=0, size=style.small * 0.8)
        if strip.rows < PRESENTER_LEVELS:
            strip = plan_strip(analysis, spec, style, axis_px=PRESENTER_AXIS_PX,
                               max_rows=PRESENTER_LEVELS, size=style.small * 0.8,
                               max_lanes=PRESENTER_LEVELS - strip.rows)
    else:
        strip = plan_strip(analysis, spec, style, axis_px=AXIS_PX, max_lanes=2)
    shapes, anns = strip_items(strip, spec, "x2", time_axes, style)
    fig.layout.shapes = (*tint_shapes(strip, time_axes), *shapes)
    title = _title(traj, style, int(sel.size))
    subtitle_px = style.font * 1.25 + 8  # the neuron panel's title, above its top
    below_px = max(subtitle_px, strip.height_px())
    title_size = style.font if presenter else style.title
    wrap = PRESENTER_WIDTH_PX - MARGIN_L - MARGIN_R if presenter else DESIGN_WIDTH_PX
    cap_legend(fig, rows=(1, style.small, wrap - 10.0) if presenter else None)
    hd = header(title, title_size, style.font, legend_names(fig), style.small, below_px,
                width_px=wrap)
    top_px = max(hd.top_px, 72.0)
    plot_px = style.height - 96 - 118  # the plot area keeps its height
    bottom_px = round(52 * style.font / 15.0)  # tick labels and the time axis' title
    height = round(plot_px + top_px + bottom_px)
    fig.layout.annotations = (*fig.layout.annotations, *anns)

    head = header_layout(hd, height, style.small)
    head["title"] = {**head["title"], "text": title, "font": {"size": title_size, "color": INK}}
    if presenter:  # any height (the figure fills the window): see `viz.header.pixel_anchored`
        head["legend"] = titled_legend(head["legend"], head["title"])
        head["title"] = {"text": ""}
    white_template(fig)
    fig.update_layout(
        title=head["title"],
        font={"family": style.family, "size": style.font, "color": INK},
        height=height,
        margin={"l": MARGIN_L, "r": MARGIN_R, "t": top_px, "b": bottom_px},
        legend=head["legend"],
        hovermode="closest",
        hoverlabel={"font": {"size": style.small}},
        paper_bgcolor="white", plot_bgcolor="white",
        uirevision="main-figure",
    )
    fig.layout.annotations[0].font = {"size": style.font, "color": INK}  # panel title
    meta = {"frames": len(frames), "neurons_drawn": int(sel.size), "norm_curves": n_curves,
            "time_axis": spec.title, "frame_duration_ms": anim.frame_ms,
            "legend_rows": hd.legend_rows,
            "strip_rows": strip.rows, "label_lanes": strip.lanes}
    fig.update_layout(meta=meta)
    if presenter:
        fit_any_height(fig)
    return AnimatedFigure(fig, anim, meta)


__all__ = ["main_figure"]
