"""Two runs side by side on one time grid: the Compare page's figure and differences table.

`compare_figure` describes one animated figure (a `Scene` the player composes): the neuron
panels of run A and run B side by side (the same drawing as the main figure's neuron panel)
and, on the right, shared time panels (max/median neuron norm, loss, accuracy) with both
runs' curves, one time cursor and each run's phase strip above them; a narrower player
stacks the neuron panels above the time panels (`viz.compare_layout`). The sentence under
the slider names each run's phase.
Frames follow a common time grid (`time_axes.common_grid`: the union of both runs'
frame times, thinned to at most `max_frames`); at each grid time a run shows its last frame
with t ≤ that time, so a shorter run stays on its final frame.

`difference_rows` tabulates what differs: detected phase times, final loss, accuracy, stable
rank, max angle, status. Pure: trajectories and analyses in, scene or rows out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dynamics.annotations import Analysis
from dynamics.trajectory import Trajectory

from .commentary import compare_captions
from .compare_layout import (
    COLUMN_WIDTHS,
    H_SPACING,
    MARGIN_L,
    MARGIN_R,
    NARROW_PX,
    PANEL_PX_COMPARE,
    column_px,
    make_room,
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
    NeuronLook,
    cone_trace,
    data_traces,
    guide_traces,
    neuron_subset,
    neuron_traces,
    neurons_item,
    radius_scale,
)
from .options import FigureOptions
from .panel_labels import caption_below, panel_overlays
from .phase_strip import Strip, StripLayout, plan_strip, row_px
from .player import fit_any_height, frame_ms
from .scene import Frames, Panel, Scene, grid, panel_title
from .style import INK, OKABE_ITO, Style
from .time_axes import (
    TimeAxisSpec,
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
            "fixed_output": "fixed a", "exp_margin": "|a| = ‖w‖ + Exp",
            "tau_delta": f"τ-δ, δ = {c.init.imbalance:g}"}[c.init.scheme]
    return f"{act} · m={traj.width} · ε={c.init.scale:g} · {init}"


def _caption_text(tr: Trajectory, f: int, top: float) -> str:
    return f"t = {fmt_time(float(tr.t[f]))} · max ‖w‖ = {top:.2g}"


def compare_figure(traj_a: Trajectory, traj_b: Trajectory, analysis_a: Analysis | None = None,
                   analysis_b: Analysis | None = None, labels: Sequence[str] = ("A", "B"),
                   options: FigureOptions | None = None, *, max_frames: int = 160,
                   max_neurons: int = 300) -> Scene:
    """Both runs on one animated figure with a shared time cursor (see the module docstring),
    shown as `options` say (radius, time axis, presenter mode). Below NARROW_PX (normal mode)
    the player stacks the two neuron panels above the time panels (`viz.compare_layout`).

    labels: names of the runs (legend, panel titles, table columns)."""
    opts = options or FigureOptions()
    presenter, style = opts.presenter, opts.style
    trajs = (traj_a, traj_b)
    analyses = (analysis_a, analysis_b)
    spec = shared_time_spec(trajs, opts.time_axis)
    grid_t = common_grid(traj_a.t, traj_b.t, max_frames)
    fmaps = [frames_on_grid(tr.t, grid_t) for tr in trajs]
    classification = any(tr.classification and np.isfinite(tr.accuracy).any() for tr in trajs)
    n_time = 3 if classification else 2

    scene = Scene("compare")
    scene.panels = grid(list(COLUMN_WIDTHS), [1.0] * n_time,
                        [(0, 0, n_time), (0, 1, n_time), *((k, 2) for k in range(n_time))],
                        hspace=H_SPACING, vspace=0.06)
    scene.panels[2:] = make_room(scene.panels[2:], style,
                                 PRESENTER_WIDTH_PX if presenter else DESIGN_WIDTH_PX)
    neuron_panels, time_panels = scene.panels[:2], scene.panels[2:]
    # run titles wrapped (at " · ") to their column's width at the narrowest figure
    narrowest = PRESENTER_WIDTH_PX - 60.0 if presenter else DESIGN_WIDTH_PX
    titles = ["<br>".join(wrap_to_px(f"<b>{labels[k]}</b>: {_short_label(tr)}", style.small,
                                     column_px(k, narrowest) - 8, sep=" · "))
              for k, tr in enumerate(trajs)]
    for side, tr in enumerate(trajs):
        _neuron_side(scene, neuron_panels[side], (labels[side], tr, analyses[side]), side,
                     fmaps[side], opts, max_neurons)
    # -- shared time panels
    curves = [_run_curves(scene, time_panels, side, labels[side], tr, spec, style, n_time)
              for side, tr in enumerate(trajs)]
    y_ranges = _time_ranges(curves, n_time)
    for k, yr in enumerate(y_ranges):
        cursor_trace(spec.show(grid_t), yr, scene, time_panels[k], "cursor")
    style_axes(scene.panels, trajs, spec, y_ranges, n_time)
    # -- frames with the commentary; the two runs' phase strips, the header, the narrow layout
    labels_t = [f"t = {fmt_time(float(tg))}" for tg in grid_t]
    runs = [(labels[k], trajs[k], analyses[k]) for k in (0, 1)]
    scene.frames = Frames(int(grid_t.size), tuple(labels_t),
                          tuple(compare_captions(runs, fmaps)), frame_ms(int(grid_t.size)))
    strips, n_rows = _strips(analyses, labels, spec, style, presenter)
    _layout(scene, (strips, n_rows), labels, titles, spec, style, presenter, grid_t)
    if presenter:
        fit_any_height(scene)
    return scene


def _neuron_side(scene: Scene, panel: Panel, run: tuple[str, Trajectory, Analysis | None],
                 side: int, fidx: np.ndarray, opts: FigureOptions, max_neurons: int) -> None:
    """One run's neuron panel (`run`: its label, trajectory, analysis; `fidx`: its frame at
    each grid time): guides, cone, data, rays and labels (the legend from run A's panel),
    the neurons of each frame and the caption under the panel."""
    label, tr, analysis = run
    style = opts.style
    unit_px = PANEL_PX_COMPARE / (2 * PANEL_LIMIT)
    scale = radius_scale(tr, opts.radius)
    sel = neuron_subset(np.asarray(tr.norms[-1], float), max_neurons)
    cone = cone_trace(tr, analysis)
    rays, label_traces = panel_overlays(tr, analysis, style, unit_px, size=0.9)
    for g in [*guide_traces(scale, style), *([cone] if cone is not None else []),
              *data_traces(tr, style), *rays, *label_traces]:
        if side:  # the legend names each kind once, from run A's panel
            g["showlegend"] = False
        scene.trace(panel, g)
    hover = tuple(f"{label}: neuron %{{customdata[0]:.0f}}, a_j {sign} 0"
                  "<br>‖w_j‖ = %{customdata[1]:.3g}<extra></extra>" for sign in (">", "<"))
    look = NeuronLook(scale, style,
                      neuron_traces(LEGEND_WORDS["pos"], LEGEND_WORDS["neg"],
                                    (hover[0], hover[1]), style, showlegend=side == 0))
    neurons_item(scene, panel, tr, fidx, sel, look, prefix=f"{side}.")
    norms = np.asarray(tr.norms, dtype=float)[np.ix_(fidx, sel)]
    tops = np.max(np.where(np.isfinite(norms), norms, 0.0), axis=1) if sel.size else \
        np.zeros(fidx.size)
    texts = [_caption_text(tr, int(f), float(top)) for f, top in zip(fidx, tops, strict=True)]
    scene.trace(panel, caption_below(texts, style, style.small * 0.9),
                tracks=[{"attr": "text", "texts": [[x] for x in texts]}], swap=True)


def _run_curves(scene: Scene, time_panels: Sequence[Panel], side: int, lab: str,
                tr: Trajectory, spec: TimeAxisSpec, style: Style, n_time: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One run's curves on the shared time panels (max and median ‖w_j‖, loss, accuracy when
    there is a third panel); returns its max and median norms and its loss as drawn."""
    colour, dash = RUN_COLOURS[side], RUN_DASH[side]
    tx, mx, md = norm_envelopes(tr, spec)
    line = {"color": colour, "dash": dash, "width": 2.5 * style.line / 2}
    t_ref = scene.array(f"{side}.t_env", tx)
    scene.trace(time_panels[0], {
        "type": "scatter", "x": t_ref, "y": scene.array(f"{side}.max_norm", mx),
        "mode": "lines", "name": f"run {lab}", "legendrank": 3 + side,
        "legendgroup": f"run{side}", "line": line,
        "hovertemplate": f"{lab}: max ‖w‖ = %{{y:.3g}}<br>t = %{{x:.3g}}<extra></extra>"})
    scene.trace(time_panels[0], {
        "type": "scatter", "x": t_ref, "y": scene.array(f"{side}.median_norm", md),
        "mode": "lines", "name": f"{lab}: median ‖w_j‖", "legendgroup": f"run{side}",
        "showlegend": False, "opacity": 0.55,
        "line": {"color": colour, "dash": dash, "width": 1.5 * style.line / 2},
        "hovertemplate": f"{lab}: median ‖w‖ = %{{y:.3g}}<br>t = %{{x:.3g}}<extra></extra>"})
    t_loss, loss = loss_series(tr)
    keep = spec.keep(t_loss) & (loss > 0)
    scene.trace(time_panels[1], {
        "type": "scatter", "x": scene.array(f"{side}.t_loss", spec.show(t_loss[keep])),
        "y": scene.array(f"{side}.loss", loss[keep]), "mode": "lines",
        "name": f"{lab}: loss", "legendgroup": f"run{side}", "showlegend": False,
        "line": line,
        "hovertemplate": f"{lab}: loss = %{{y:.3g}}<br>t = %{{x:.3g}}<extra></extra>"})
    if n_time == 3 and tr.classification:
        ta = np.asarray(tr.t, float)
        ka = spec.keep(ta)
        scene.trace(time_panels[2], {
            "type": "scatter", "x": scene.array(f"{side}.t_acc", spec.show(ta[ka])),
            "y": scene.array(f"{side}.accuracy", tr.accuracy[ka]), "mode": "lines",
            "name": f"{lab}: accuracy", "legendgroup": f"run{side}", "showlegend": False,
            "line": {**line, "shape": "hv"},
            "hovertemplate": f"{lab}: accuracy = %{{y:.0%}}<br>t = %{{x:.3g}}"
                             "<extra></extra>"})
    return mx, md, loss[keep]


def _time_ranges(curves: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
                 n_time: int) -> list[tuple[float, float]]:
    """The time panels' y ranges from both runs' curves: norms (log, from the first norm
    drawn), loss (log, ten decades at most), accuracy."""
    norm_vals = [v for mx, md, _loss in curves for v in (mx, md)]
    loss_vals = [loss for _mx, _md, loss in curves]
    first = [v[0] for v in norm_vals if v.size and np.isfinite(v[0]) and v[0] > 0]
    y_ranges = [log_range(np.concatenate(norm_vals) if norm_vals else np.zeros(0),
                          include=min(first) if first else None),
                log_range(np.concatenate(loss_vals) if loss_vals else np.zeros(0), 10.0)]
    if n_time == 3:
        y_ranges.append((-0.04, 1.06))
    return y_ranges


def _strips(analyses: Sequence[Analysis | None], labels: Sequence[str], spec: TimeAxisSpec,
            style: Style, presenter: bool) -> tuple[list[Strip], int]:
    """The two runs' phase strips (one row each, lanes for the words of narrow blocks in
    normal mode) and their rows in all."""
    axis_px = column_px(2, PRESENTER_WIDTH_PX if presenter else NARROW_PX)
    strips = []
    row = 0
    # lanes for the words of blocks too narrow for them: in presenter mode one, shared by both
    # runs (the plots keep their 45 % of a 720 px window; without it a sliver such as B's
    # "fitted" at the end had no words but a hover)
    lanes = 1 if presenter else 2
    for side in (0, 1):
        st = plan_strip(analyses[side], spec, style,
                        StripLayout(axis_px=axis_px, max_lanes=min(1, lanes), markers=False,
                                    group=labels[side], first_row=row, max_rows=1,
                                    own_first=True,
                                    size=style.small * (0.75 if presenter else 0.9)))
        row += st.rows + st.lanes
        lanes -= st.lanes
        strips.append(st)
    return strips, row


def _layout(scene: Scene, strips: tuple[list[Strip], int], labels: Sequence[str],
            titles: Sequence[str], spec: TimeAxisSpec, style: Style, presenter: bool,
            grid_t: np.ndarray) -> None:
    """The header (title, legend, the strips' rows: `strips` and their count), the layout and
    meta, and the narrow (stacked) layout in normal mode."""
    strip_list, n_rows = strips
    neuron_panels, time_panels = scene.panels[:2], scene.panels[2:]
    strip_px = 0.0 if n_rows == 0 else 4 + n_rows * row_px(strip_list[0].size)
    title = f"{labels[0]} vs {labels[1]} — one time grid, one cursor"
    # presenter mode: the plots keep ≥ 45 % of a 720 px window (a one-row legend, a title at
    # body size); under the panels, the frame caption and the axis title fit the bottom margin
    title_size = style.font if presenter else style.title
    cap_legend(scene, rows=(1, style.small, PRESENTER_WIDTH_PX - MARGIN_L - MARGIN_R - 10)
               if presenter else None)
    n_lines = max(len(t.split("<br>")) for t in titles[:2])
    hd = header(title, title_size, style.font, legend_names(scene), style.small,
                max(n_lines * style.small * 1.25 + 8, strip_px + 4))
    top_px, bottom_px = max(hd.top_px, 72.0), round(52 * style.font / 15)
    plot_px = int(style.height * 0.95) - 110 - 112  # the plot area keeps its height
    height = round(plot_px + top_px + bottom_px)
    head = header_layout(hd, height, style.small)
    time_axes = [(p.x, p.y) for p in time_panels]
    shapes, anns = strips_items(strip_list, labels, spec, time_axes, style, 1.0)
    run_titles = [panel_title(p, t, style.small, INK) for p, t in zip(neuron_panels, titles,
                                                                        strict=True)]
    meta = {"frames": int(grid_t.size), "grid_t": [float(x) for x in grid_t[[0, -1]]]
            if grid_t.size else [], "labels": list(labels),
            "frame_duration_ms": scene.frames.ms, "legend_rows": hd.legend_rows,
            "strip_rows": n_rows}
    scene.layout = {
        "title": {**head["title"], "text": title, "font": {"size": title_size, "color": INK}},
        "font": {"family": style.family, "size": style.font, "color": INK},
        "height": height, "margin": {"l": MARGIN_L, "r": MARGIN_R, "t": top_px, "b": bottom_px},
        "legend": head["legend"], "hovermode": "closest",
        "hoverlabel": {"font": {"size": style.small}}, "paper_bgcolor": "white",
        "plot_bgcolor": "white", "uirevision": "compare-figure", "shapes": shapes,
        "annotations": [*run_titles, *anns], "meta": meta,
    }
    scene.meta = dict(meta)
    if not presenter:
        scene.narrow = [(NARROW_PX, {"layout": stacked_layout(
            scene.layout, strip_list, labels, spec, time_axes, style, strip_px)})]


__all__ = ["COLUMN_WIDTHS", "NARROW_PX", "PANEL_PX_COMPARE", "column_px", "compare_figure",
           "difference_rows", "run_summary"]
