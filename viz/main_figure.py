"""The main figure: a `Scene` the browser player composes and animates.

Left: the 2D neuron panel (`viz.neuron_panel`) — each neuron w_j at its direction in the
trajectory's plane, coloured by sign(a_j) and sized by norm, with the data, the activation-cone
boundaries and the theory's directions. Right: per-neuron norms, the loss and the accuracy on
one shared time axis (`viz.time_axes`, `viz.time_panels`) with a moving time cursor, the
phases of an `Analysis` as a strip above them and its time markers as labelled lines
(`viz.phase_strip`); under the slider, a sentence per frame (`viz.commentary`). The player
(`viz/player/`, in the page or an exported HTML file) draws Play/Pause and the time slider.

Pure: Trajectory (+ Analysis) and `FigureOptions` in, `Scene` out; nothing here integrates
and no Plotly object is built. The run's arrays go as they are (norms, in-plane directions,
signs, loss, accuracy); the player composes the neurons of each frame from them, so frames
update only the traces that move (neurons, the frame caption, cursors).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dynamics.annotations import Analysis
from dynamics.trajectory import Trajectory

from .commentary import captions
from .data_edit import edit_spec
from .glossary import glossary_line
from .header import (
    DESIGN_WIDTH_PX,
    MODEBAR_PX,
    PRESENTER_WIDTH_PX,
    cap_legend,
    header,
    header_layout,
    legend_names,
    titled_legend,
)
from .label_layout import PANEL_PX, text_px, wrap_to_px
from .neuron_panel import (
    PANEL_LIMIT,
    NeuronLook,
    RadiusScale,
    cone_trace,
    data_traces,
    guide_traces,
    neuron_subset,
    neuron_traces,
    neurons_item,
    radius_scale,
)
from .options import FigureOptions
from .panel_labels import caption_below, panel_overlays, ring_ticks
from .phase_strip import AXIS_PX, Strip, StripLayout, plan_strip
from .player import fit_any_height, frame_ms
from .scene import Frames, Panel, Scene, grid, narrowed, panel_title
from .strip_draw import strip_items, tint_shapes
from .style import GRID, INK, NEGATIVE, NEUTRAL, POSITIVE, Style
from .time_axes import (
    MAX_LOG_LABELS,
    TimeAxisSpec,
    fmt_time,
    frame_indices,
    log_dtick,
    log_range,
    time_axis_spec,
    y_axis_px,
)
from .time_panels import (
    Curves,
    cursor_trace,
    envelope_traces,
    loss_series,
    norm_range,
    norms_item,
    run_norms,
)
from .wording import LEGEND_WORDS

MARGIN_L, MARGIN_R = 64, 16
H_SPACE = 0.085  # between the neuron panel and the time panels (of the plot area's width)
# narrowest time axis in presenter mode: 558 px at a 1280 px window (no sidebar) on every page
PRESENTER_AXIS_PX = 540
LOSS_DECADES = 300.0  # the loss axis reaches down to the lowest loss shown (no clipped curve)
NORMAL_LANES = 3  # lanes of words (tabs, markers' names) in the strip, normal mode
# presenter mode at 1280×720: the page above and the player below leave the figure 530 px
# (Explorer, under the lesson bar); its plots keep ≥ 45 % of the window (324 px), so its top
# margin stays small: a smaller title, a one-row legend, a strip of at most two levels (two
# rows of phases when every block's words fit, else one row and a lane for the words of
# the blocks too narrow for them; the other row's phases are named in the hovers)
PRESENTER_LEVELS = 2


# ----------------------------------------------------------------------------- the figure
def _title(traj: Trajectory, style: Style, n_drawn: int, size: float, width_px: float) -> str:
    """The run in one line at font `size`, its end on a smaller line when it would reach
    Plotly's toolbar (at the top right, on hover) in a figure `width_px` wide."""
    c = traj.config
    act = "ReLU" if c.model.gamma == 0 else f"leaky ReLU γ = {c.model.gamma:g}"
    parts = [f"{act}, width m = {traj.width}", f"ε = {c.init.scale:g}",
             f"{c.loss.kind} loss ({c.loss.reduction})"]
    if n_drawn < traj.width:
        parts.append(f"{n_drawn} of {traj.width} neurons drawn")
    lines = wrap_to_px(" · ".join(parts), size, width_px - MODEBAR_PX, sep=" · ")
    title = lines[0] + "".join(f"<br><span style='font-size:{style.font:.0f}px'>{line}</span>"
                               for line in lines[1:])
    if traj.status != "completed":
        msg = traj.message or traj.status
        for line in wrap_to_px(f"⚠ {traj.status}: {msg}", style.font, DESIGN_WIDTH_PX - 20):
            title += (f"<br><span style='color:{NEGATIVE};font-size:{style.font:.0f}px'>"
                      f"{line}</span>")
    return title


def main_figure(traj: Trajectory, analysis: Analysis | None = None,
                options: FigureOptions | None = None, *, max_frames: int = 200,
                max_curves: int = 150, max_neurons: int = 600) -> Scene:
    """The animated main figure (see the module docstring), shown as `options` say (radius and
    time axes, time unit, presenter mode). At most `max_frames` animation frames,
    `max_curves` norm curves, `max_neurons` neurons.
    """
    opts = options or FigureOptions()
    presenter = opts.presenter
    style = opts.style
    spec = time_axis_spec(traj, opts.time_axis, opts.time_scale)
    scale = radius_scale(traj, opts.radius)
    classification = bool(traj.classification and np.isfinite(traj.accuracy).any())
    n_time = 3 if classification else 2
    fidx = frame_indices(traj.n_frames, max_frames)
    final = np.asarray(traj.norms[-1], dtype=float)
    sel = neuron_subset(final, max_neurons)
    curves = neuron_subset(final, max_curves)

    scene = Scene("main")
    scene.panels = panels = _panels(n_time, style, presenter)
    left, time_panels = panels[0], panels[1:]
    radius_title = ("radius ‖w_j‖ / max‖w‖" if scale.mode == "normalised"
                    else "radius log‖w_j‖")
    titles = [panel_title(left, f"neurons · {radius_title}", style.font, INK)]
    drawn, fixed = _neuron_layers(scene, left, traj, analysis, scale, (fidx, sel, curves), style)
    y_ranges = _time_curves(scene, time_panels, traj, spec, style,
                            (drawn, traj.width > max_curves), classification)
    t_frames = spec.show(np.asarray(traj.t, dtype=float)[fidx])
    for k, yr in enumerate(y_ranges):
        cursor_trace(t_frames, yr, scene, time_panels[k], "cursor")
    # -- axes
    _neuron_axes(left, traj, scale, style, PANEL_PX / (2 * PANEL_LIMIT))
    _time_axes(time_panels, spec, y_ranges, style, presenter)
    # -- frames: labels and the commentary; the phase strip; the header
    labels = [f"t = {fmt_time(float(traj.t[f]))}" for f in fidx]
    scene.frames = Frames(int(fidx.size), tuple(labels),
                          tuple(captions(traj, analysis, fidx)), frame_ms(int(fidx.size)))
    strip = _strip(analysis, spec, style, presenter)
    time_axes = [(p.x, p.y) for p in time_panels]
    shapes, anns = strip_items(strip, spec, time_panels[0].x, time_axes, style,
                               name_room_px=_name_room(left, time_panels[0], titles[0],
                                                       style, presenter))
    _layout(scene, traj, spec, opts, strip, (titles, anns, shapes, time_axes),
            {"frames": int(fidx.size), "neurons_drawn": int(sel.size),
             "norm_curves": int(curves.size), "signs_fixed": fixed})
    edit = edit_spec(traj, spec)
    if edit is not None:  # the browser lets the visitor move the data (`viz/player/edit.js`)
        scene.meta["edit"] = edit
    if presenter:
        fit_any_height(scene)
    return scene


def _panels(n_time: int, style: Style, presenter: bool) -> list[Panel]:
    """The neuron panel (a square as wide as its column at the narrowest figure, leaving the
    gap to the time panels their y axes' labels and titles) and `n_time` time panels."""
    panels = grid([0.47, 0.53], [1.0] * n_time,
                  [(0, 0, n_time), *((k, 1) for k in range(n_time))],
                  hspace=H_SPACE, vspace=0.075)
    plot = (PRESENTER_WIDTH_PX if presenter else DESIGN_WIDTH_PX) - MARGIN_L - MARGIN_R
    panels[0] = narrowed(panels[0], plot, right_px=y_axis_px(style.font) - H_SPACE * plot)
    return panels


def _neuron_layers(scene: Scene, left: Panel, traj: Trajectory, analysis: Analysis | None,
                   scale: RadiusScale, picks: tuple[np.ndarray, np.ndarray, np.ndarray],
                   style: Style) -> tuple[Curves, bool]:
    """The neuron panel: static layers, the rays and their rim labels, the neurons of each
    frame on top (`picks`: the frames, the neurons drawn, the neurons with a norm curve) and
    the caption under it. Returns the norm curves (their neurons, and their columns in the
    run's norms array) and whether no drawn neuron's sign of a_j changes."""
    fidx, sel, curves = picks
    unit_px = PANEL_PX / (2 * PANEL_LIMIT)
    rays, label_traces = panel_overlays(traj, analysis, style, unit_px)
    cone = cone_trace(traj, analysis)
    for tr in [*guide_traces(scale, style), *([cone] if cone is not None else []),
               *data_traces(traj, style), *rays, *label_traces]:
        scene.trace(left, tr)
    norms_ref, (cols_n, cols_c) = run_norms(scene, traj, [sel, curves])
    a_fixed = np.asarray(traj.a, dtype=float)[np.ix_(fidx, sel)] >= 0 if fidx.size else None
    fixed = a_fixed is None or bool(np.all(a_fixed == a_fixed[:1]))
    who = "neuron %{customdata[0]:.0f}"
    cd = "%{customdata[1]:.3g}"
    hover = (f"{who}, a_j > 0<br>‖w_j‖ = {cd}<extra></extra>",
             f"{who}, a_j < 0<br>‖w_j‖ = {cd}<extra></extra>")
    traces = neuron_traces(LEGEND_WORDS["pos"], LEGEND_WORDS["neg"], hover, style)
    neurons_item(scene, left, traj, fidx, sel, NeuronLook(scale, style, traces),
                 norms_ref=(norms_ref, fidx, cols_n))
    tops = np.nanmax(np.where(np.isfinite(traj.norms[fidx][:, sel]),
                              traj.norms[fidx][:, sel], 0.0), axis=1) if sel.size else \
        np.zeros(fidx.size)
    texts = [f"t = {fmt_time(float(traj.t[f]))} · max ‖w‖ = {top:.2g}"
             for f, top in zip(fidx, tops, strict=True)]
    scene.trace(left, caption_below(texts, style),
                tracks=[{"attr": "text", "texts": [[x] for x in texts]}], swap=True)
    return Curves(norms_ref, cols_c, curves), fixed


def _time_curves(scene: Scene, time_panels: list[Panel], traj: Trajectory,
                 spec: TimeAxisSpec, style: Style, norms: tuple[Curves, bool],
                 classification: bool) -> list[tuple[float, float]]:
    """The time panels' curves: the norm curves (`norms`: the curves, and whether envelopes
    go beside them), the loss and, for a classification, the accuracy. Returns each panel's
    y range."""
    drawn, envelopes = norms
    y_ranges: list[tuple[float, float]] = [norm_range(traj, spec)]
    norms_item(scene, time_panels[0], traj, spec, drawn, style)
    if envelopes:
        for tr in envelope_traces(scene, traj, spec, style):
            scene.trace(time_panels[0], tr, swap=True)
    t_loss, loss = loss_series(traj)
    keep = spec.keep(t_loss) & (loss > 0)
    scene.trace(time_panels[1], {
        "type": "scatter", "x": scene.array("t_loss", spec.show(t_loss[keep])),
        "y": scene.array("loss", loss[keep], "f8"), "mode": "lines", "name": "loss",
        "showlegend": False, "line": {"color": INK, "width": 2.5 * style.line / 2},
        "hovertemplate": "t = %{x:.3g}<br>loss = %{y:.3g}<extra></extra>"}, swap=True)
    y_ranges.append(log_range(loss[keep], floor_decades=LOSS_DECADES))
    if classification:
        ta = np.asarray(traj.t, dtype=float)
        ka = spec.keep(ta)
        scene.trace(time_panels[2], {
            "type": "scatter", "x": scene.array("t_acc", spec.show(ta[ka])),
            "y": scene.array("accuracy", traj.accuracy[ka]), "mode": "lines",
            "name": "accuracy", "showlegend": False,
            "line": {"color": POSITIVE, "width": 2.5 * style.line / 2, "shape": "hv"},
            "hovertemplate": "t = %{x:.3g}<br>accuracy = %{y:.0%}<extra></extra>"}, swap=True)
        y_ranges.append((-0.04, 1.06))
    return y_ranges


def _layout(scene: Scene, traj: Trajectory, spec: TimeAxisSpec, opts: FigureOptions,
            strip: Strip, items: tuple[list[dict], list[dict], list[dict], list],
            counts: dict[str, Any]) -> None:
    """The header (title, legend, the strip's room), the glossary line (in the figure but in
    presenter mode), the layout and meta (`counts`: frames, neurons and curves drawn, signs
    fixed); `items`: the panel titles, the strip's annotations and shapes, the time axes."""
    presenter, style = opts.presenter, opts.style
    titles, anns, shapes, time_axes = items
    subtitle_px = style.font * 1.25 + 8  # the neuron panel's title, above its top
    below_px = max(subtitle_px, strip.height_px())
    title_size = style.font if presenter else style.title
    wrap = PRESENTER_WIDTH_PX - MARGIN_L - MARGIN_R if presenter else DESIGN_WIDTH_PX
    title = _title(traj, style, counts["neurons_drawn"], title_size, wrap)
    cap_legend(scene, rows=(1, style.small, wrap - 10.0) if presenter else None)
    hd = header(title, title_size, style.font, legend_names(scene), style.small, below_px,
                width_px=wrap)
    top_px = max(hd.top_px, 72.0)
    plot_px = style.height - 96 - 118  # the plot area keeps its height
    axis_px = round(52 * style.font / 15.0)  # tick labels and the time axis' title
    d = traj.X.shape[1]
    plane = (f"the neuron panel shows the plane of {traj.plane_names[0]} and "
             f"{traj.plane_names[1]} (the data have d = {d} dimensions)") if d > 2 else ""
    gloss = _glossary(scene, [title, *(a["text"] for a in [*titles, *anns]),
                              *scene.frames.captions, *scene.frames.labels],
                      style, wrap, axis_px, plane)
    # presenter mode: the plots keep the window's height; the line goes under the player
    in_figure = gloss is not None and not presenter
    bottom_px = axis_px + (gloss["height"] if in_figure and gloss else 0)
    height = round(plot_px + top_px + bottom_px)
    head = header_layout(hd, height, style.small)
    head["title"] = {**head["title"], "text": title, "font": {"size": title_size, "color": INK}}
    if presenter:  # any height (the figure fills the window): see `viz.header.pixel_anchored`
        head["legend"] = titled_legend(head["legend"], head["title"])
        head["title"] = {"text": ""}
    meta = {"frames": counts["frames"], "neurons_drawn": counts["neurons_drawn"],
            "norm_curves": counts["norm_curves"], "time_axis": spec.title,
            "frame_duration_ms": scene.frames.ms, "legend_rows": hd.legend_rows,
            "strip_rows": strip.rows, "label_lanes": strip.lanes,
            "signs_fixed": counts["signs_fixed"], "glossary": gloss["line"] if gloss else ""}
    scene.layout = {
        "title": head["title"], "legend": head["legend"],
        "font": {"family": style.family, "size": style.font, "color": INK},
        "height": height, "margin": {"l": MARGIN_L, "r": MARGIN_R, "t": top_px, "b": bottom_px},
        "hovermode": "closest", "hoverlabel": {"font": {"size": style.small}},
        "paper_bgcolor": "white", "plot_bgcolor": "white", "uirevision": "main-figure",
        "shapes": [*tint_shapes(strip, time_axes), *shapes],
        "annotations": [*titles, *anns,
                        *([gloss["annotation"]] if in_figure and gloss else [])],
        "meta": meta,
    }
    scene.meta = dict(meta)


def _strip(analysis: Analysis | None, spec: TimeAxisSpec, style: Style, presenter: bool
           ) -> Strip:
    """The phase strip above the time panels, laid out for their narrowest width (presenter:
    a window without sidebar, wider axes, at most PRESENTER_LEVELS levels: the first plan
    whose every block has its words — two rows; or one row and a lane for its tabs, the
    run's own phases or, when they are more, a paper's — else the two rows)."""
    if not presenter:
        return plan_strip(analysis, spec, style, StripLayout(AXIS_PX, max_lanes=NORMAL_LANES))
    plans = [plan_strip(analysis, spec, style, StripLayout(
        PRESENTER_AXIS_PX, rows, PRESENTER_LEVELS - rows, own_first=own, size=style.small * 0.8))
             for rows, own in ((2, False), (1, False), (1, True))]
    whole = [p for p in plans if not p.unlabelled()]
    return max(whole, key=lambda p: len(p.blocks)) if whole else plans[0]


def _name_room(left: Panel, right: Panel, title: dict, style: Style, presenter: bool
               ) -> tuple[float, float]:
    """Pixels for the strip rows' names left of the time panels, at the narrowest figure:
    beside the neuron panel's title (the first row, at its height) and above it (the
    others)."""
    width = (PRESENTER_WIDTH_PX if presenter else DESIGN_WIDTH_PX) - MARGIN_L - MARGIN_R
    gap = (right.domain_x[0] - left.domain_x[1]) * width
    left_px = (left.domain_x[1] - left.domain_x[0]) * width
    title_px = text_px(str(title["text"]), float(title["font"]["size"]))[0]
    beside = gap + max(0.0, (left_px - title_px) / 2) - 8
    return beside, gap + left_px - 8


def _glossary(scene: Scene, texts: list[str], style: Style, width_px: float,
              below_px: float, note: str = "") -> dict | None:
    """The glossary line under the figure (`viz.glossary`: the symbols its texts use, each
    in words and formula), wrapped to `width_px`, below the time axis' title: the line, its
    annotation and its height (`note`, e.g. which plane the neuron panel shows, ends the
    line); None when there is nothing to say. (`layout.meta`
    carries the line: in presenter mode the page shows it under the player.)"""
    texts = texts + [str(scene.resolve(it["trace"]).get("text") or "") for it in scene.items
                     if it["kind"] == "trace"
                     and isinstance(scene.resolve(it["trace"]).get("text"), str)]
    texts += [str(t) for it in scene.items if it["kind"] == "trace"
              for t in (scene.resolve(it["trace"]).get("text") or [])
              if not isinstance(scene.resolve(it["trace"]).get("text"), str)]
    texts += [str((p.xaxis.get("title") or {}).get("text") or "") for p in scene.panels]
    texts += [str((p.yaxis.get("title") or {}).get("text") or "") for p in scene.panels]
    line = " · ".join(x for x in (glossary_line(texts), note) if x)
    line = line[:1].upper() + line[1:]
    if not line:
        return None
    size = style.small * 0.85
    lines = wrap_to_px(line, size, width_px - 12, sep=" · ")
    text = "<br>".join(lines)
    return {"line": line, "height": len(lines) * size * 1.3 + 8, "annotation": dict(
        text=text, x=0.0, xref="paper", xanchor="left", xshift=-(MARGIN_L - 6), y=0.0,
        yref="paper", yanchor="top", yshift=-(below_px + 2), align="left", showarrow=False,
        font={"size": size, "color": NEUTRAL}, name="glossary")}


def _neuron_axes(panel: Panel, traj: Trajectory, scale: RadiusScale, style: Style,
                 unit_px: float) -> None:
    """The neuron panel's square axes: ±PANEL_LIMIT, the plane's axis names, log rings."""
    lim = [-PANEL_LIMIT, PANEL_LIMIT]
    xname, yname = traj.plane_names
    rings, ring_text = ring_ticks(scale, style.small * 0.9, unit_px)
    panel.xaxis.update(range=lim, zeroline=True, zerolinecolor=GRID, showgrid=False,
                       constrain="domain", ticks="", showticklabels=False,
                       title={"text": xname, "standoff": round(style.small * 1.25 + 8)})
    panel.yaxis.update(range=lim, zeroline=True, zerolinecolor=GRID, showgrid=False,
                       scaleanchor=panel.x, scaleratio=1, constrain="domain", ticks="",
                       showticklabels=bool(rings), tickfont={"size": style.small * 0.9},
                       title={"text": yname + (" · rings: ‖w_j‖" if rings else ""),
                              "standoff": 2})
    if rings:
        panel.yaxis.update(tickvals=rings, ticktext=ring_text)


def _time_axes(panels: list[Panel], spec: TimeAxisSpec, y_ranges: list[tuple[float, float]],
               style: Style, presenter: bool) -> None:
    """The shared time axis (log or linear, ticks on the bottom panel) and each panel's y
    axis: ‖w_j‖ and the loss on log scales, the accuracy in percent."""
    titles = ["‖w_j‖", "loss", "accuracy"]
    for k, p in enumerate(panels):
        bottom = k == len(panels) - 1
        p.xaxis.update(type="log" if spec.log else "linear", range=spec.range,
                       showticklabels=bottom, gridcolor=GRID, exponentformat="power",
                       title={"text": spec.title if bottom else None, "standoff": 6})
        if spec.log:
            p.xaxis["dtick"] = 1
        if k > 0:
            p.xaxis["matches"] = panels[0].x
        lo, hi = y_ranges[k]
        if k < 2:  # short panels at 1280×720 (presenter): at most 4 labels of large text
            dtick = log_dtick(lo, hi, 4 if presenter else MAX_LOG_LABELS)
            p.yaxis.update(type="log", range=[math.log10(lo), math.log10(hi)], gridcolor=GRID,
                           exponentformat="power", dtick=dtick)
        else:
            p.yaxis.update(range=[lo, hi], gridcolor=GRID, tickformat=".0%", dtick=0.5)
        p.yaxis["title"] = {"text": titles[k], "standoff": 4, "font": {"size": style.small}}


__all__ = ["main_figure"]
