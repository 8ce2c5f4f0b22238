"""Min et al.'s two-class experiment (their Figure 5) at the scale of the data at hand.

Views of one trajectory on classification data (labels ±1):

* alignment curves: cos(w̄₊, x₊) for the mean neuron w̄₊ of V₊ = {j : a_j(t) > 0}, with a
  band from min_j to max_j of cos(w_j, x₊) over j ∈ V₊; the same for V₋ and x₋. V± are
  taken at each time from sign(a_j(t)), as Min et al. do for their unbalanced start. x± are
  the sums of the two classes' points (Min et al.'s x₊ = Σ_{y_i=+1} x_i);
* the loss (log scale), the stable rank ‖W‖_F²/‖W‖₂² and ‖W‖₂², on the same time axis;
* w̄₊, w̄₋ beside the class means x̄₊ = x₊/|I₊|, x̄₋ = x₋/|I₋|, as images when the data are
  images (`meta["image_shape"]`), else as bars over the input coordinates; a slider picks the
  time. Each picture is scaled by its own largest |entry| (the neurons' norms grow by orders
  of magnitude; the shape is what is compared).

Pure: Trajectory in, `Scene` out (the browser composes and animates it). The numbers (x±, w̄±,
the alignment curves) come from `dynamics.readouts`. Frames come from the recorded ones; the
mean neurons need full W, which is recorded when it fits the budget (`Trajectory.W_at`).
"""

from __future__ import annotations

import math

import numpy as np

from dynamics.annotations import Analysis
from dynamics.readouts import AlignmentCurves, alignment_curves
from dynamics.trajectory import Trajectory

from .commentary import REAL_DATA, captions
from .header import DESIGN_WIDTH_PX, PRESENTER_WIDTH_PX, toolbar_clear_title
from .options import FigureOptions
from .phase_strip import Strip, StripLayout, plan_strip
from .player import fit_any_height, frame_ms
from .real_data_pictures import bar_traces, image_traces, picture_frames
from .scene import Frames, Panel, Scene, grid, narrowed, panel_title
from .strip_draw import strip_items, tint_shapes
from .style import GRID, INK, NEGATIVE, NEUTRAL, POSITIVE, Style, rgba
from .time_axes import (
    TimeAxisSpec,
    fmt_time,
    frame_indices,
    log_dtick,
    log_range,
    time_axis_spec,
    y_axis_px,
)
from .time_panels import cursor_trace

STRIP_AXIS_PX = 255  # narrowest time panel (258 px at a 1600 px window beside the sidebar)


# ----------------------------------------------------------------------------- figure
def _band_traces(scene: Scene, name: str, t: np.ndarray, cur: AlignmentCurves, colour: str,
                 label: str, style_line: float) -> list[dict]:
    ok = np.isfinite(cur.lo) & np.isfinite(cur.hi)
    tt = scene.array(f"{name}.t_band", t[ok])
    okm = np.isfinite(cur.mean_neuron)
    return [
        {"type": "scatter", "x": tt, "y": scene.array(f"{name}.hi", cur.hi[ok]),
         "mode": "lines", "line": {"width": 0, "color": colour}, "showlegend": False,
         "hoverinfo": "skip", "name": f"max cos {label}"},
        {"type": "scatter", "x": tt, "y": scene.array(f"{name}.lo", cur.lo[ok]),
         "mode": "lines", "line": {"width": 0, "color": colour}, "fill": "tonexty",
         "fillcolor": rgba(colour, 0.22), "name": f"min–max {label}", "hoverinfo": "skip",
         "showlegend": False},
        {"type": "scatter", "x": scene.array(f"{name}.t_mean", t[okm]),
         "y": scene.array(f"{name}.mean", cur.mean_neuron[okm]), "mode": "lines",
         "name": label, "line": {"color": colour, "width": 2.5 * style_line / 2},
         "showlegend": False,
         "hovertemplate": f"{label} = %{{y:.3f}}<br>t = %{{x:.3g}}<extra></extra>"},
    ]


TimePanels = list[tuple[Panel, tuple[float, float], bool]]  # (panel, y range, log y)


def real_data_figure(traj: Trajectory, analysis: Analysis | None = None,
                     options: FigureOptions | None = None, *, max_frames: int = 150,
                     iterations: bool | None = None) -> Scene:
    """The Figure-5 view of one run (see the module docstring), animated over its frames, shown
    as `options` say (time axis, presenter mode).

    iterations: label the slider with GD iterations k = t/η too (default: when the run used GD).
    """
    opts = options or FigureOptions()
    presenter, style = opts.presenter, opts.style
    spec = time_axis_spec(traj, opts.time_axis, "t")
    if iterations is None:
        iterations = traj.config.integrator.method == "gd"
    is_image = traj.meta.get("image_shape") is not None
    F = traj.n_frames
    with_w = np.array([traj.W_at(f) is not None for f in range(F)])
    cand = np.flatnonzero(with_w) if with_w.any() else np.arange(F)
    fidx = cand[frame_indices(cand.size, max_frames)]
    scene = Scene("real_data")
    panels, at = _panels(is_image, presenter, style.font)
    scene.panels = list(panels)
    shapes: list[dict] = []
    time_panels = _time_traces(scene, traj, spec, at, style, shapes)
    pics = picture_frames(traj, fidx)  # the pictures
    if is_image:
        image_traces(scene, at, pics)
    else:
        bar_traces(scene, at, pics)
    pictures_x0 = at[(0, 2)].domain_x[0]  # right of the time panels
    _caption_and_cursors(scene, traj, spec.show(np.asarray(traj.t, float)), fidx,
                         (pictures_x0, iterations), style, time_panels)
    _time_axes(time_panels, spec, at)
    strip = plan_strip(analysis, spec, style,
                       StripLayout(axis_px=STRIP_AXIS_PX, max_rows=1, max_lanes=1,
                                   markers=False, size=style.small * 0.8))
    anns = _strip_items(strip, spec, time_panels, at, style, shapes)
    lift = strip.height_px()
    title_anns = []
    for panel, text in zip(panels, _titles(is_image, presenter), strict=True):
        ann = panel_title(panel, text, style.small, INK)
        if panel.domain_y[1] > 0.99 and panel.domain_x[0] < pictures_x0:  # row 1, time panels
            ann["yshift"] = lift
        title_anns.append(ann)
    scene.frames = _frames(traj, analysis, fidx, iterations)
    _layout(scene, traj, fidx, (is_image, presenter, lift), style,
            (shapes, [*title_anns, *anns]))
    if presenter:
        fit_any_height(scene)
    return scene


def _panels(is_image: bool, presenter: bool, font: float
            ) -> tuple[list[Panel], dict[tuple[int, int], Panel]]:
    """The panels in drawing order and by (row, column): time panels in two columns, the
    pictures (images or bars) right of them."""
    widths = [0.34, 0.32, 0.17, 0.17]
    if is_image:
        cells = [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3), (2, 0), (2, 1)]
    else:
        cells = [(0, 0), (0, 1), (0, 2, 1, 2), (1, 0), (1, 1), (1, 2, 1, 2), (2, 0), (2, 1)]
    panels = grid(widths, [1.0, 1.0, 1.0], cells, hspace=0.06, vspace=0.12)
    # the second column of time panels leaves the first one's neighbour room for its tick
    # labels ("100%", "10⁻¹⁰"; its titles are above the panels)
    plot = (PRESENTER_WIDTH_PX if presenter else DESIGN_WIDTH_PX) - 56 - 16
    room = y_axis_px(font, title=False) + 6 - 0.06 * plot
    panels = [narrowed(p, plot, left_px=room) if c[1] == 1 else p
              for c, p in zip(cells, panels, strict=True)]
    return panels, {c[:2]: p for c, p in zip(cells, panels, strict=True)}


def _time_traces(scene: Scene, traj: Trajectory, spec: TimeAxisSpec,
                 at: dict[tuple[int, int], Panel], style: Style, shapes: list[dict]
                 ) -> TimePanels:
    """The time panels' curves: alignment bands, stable rank (its level 2 dotted, into
    `shapes`), ‖W‖²₂, loss, accuracy; returns each panel with its y range and scale."""
    t = np.asarray(traj.t, float)
    keep, ts = spec.keep(t), spec.show(t)
    time_panels: TimePanels = []
    for row, cur, colour, label in ((0, alignment_curves(traj, +1), POSITIVE, "cos(w̄₊, x₊)"),
                                    (1, alignment_curves(traj, -1), NEGATIVE, "cos(w̄₋, x₋)")):
        for tr in _band_traces(scene, f"band{row}", ts, cur, colour, label, style.line):
            scene.trace(at[(row, 0)], tr)
        time_panels.append((at[(row, 0)], (-1.05, 1.05), False))
    fm = traj.frame_metrics
    for row, key, label in ((0, "stable_rank", "stable rank"), (1, "spectral_sq", "‖W‖²₂")):
        v = np.asarray(fm.get(key, np.full(traj.n_frames, np.nan)), float)
        ok = keep & np.isfinite(v) & (v > 0)
        panel = at[(row, 1)]
        scene.trace(panel, _curve(scene, key, label, ts[ok], v[ok], style, "%{y:.4g}"))
        if key == "stable_rank":
            hi = float(np.nanmax(v[ok])) if ok.any() else 2.0
            shapes.append({"type": "line", "xref": f"{panel.x} domain", "yref": panel.y,
                           "x0": 0, "x1": 1, "y0": 2.0, "y1": 2.0,
                           "line": {"color": NEUTRAL, "dash": "dot", "width": 1}})
            time_panels.append((panel, (0.8, max(hi * 1.1, 2.3)), False))
        else:
            time_panels.append((panel, log_range(v[ok]), True))
    loss = np.asarray(traj.loss, float)
    okl = keep & np.isfinite(loss) & (loss > 0)
    scene.trace(at[(2, 0)], _curve(scene, "loss", "loss", ts[okl], loss[okl], style,
                                   "%{y:.4g}"))
    time_panels.append((at[(2, 0)], log_range(loss[okl], 12.0), True))
    acc = np.asarray(traj.accuracy, float)
    oka = keep & np.isfinite(acc)
    scene.trace(at[(2, 1)], _curve(scene, "accuracy", "accuracy", ts[oka], acc[oka], style,
                                   "%{y:.1%}"))
    time_panels.append((at[(2, 1)], (-0.04, 1.06), False))
    return time_panels


def _curve(scene: Scene, key: str, label: str, x: np.ndarray, y: np.ndarray, style: Style,
           y_format: str) -> dict:
    """One time panel's line (accuracy as steps, its values as float32; the others float64)."""
    line: dict = {"color": INK, "width": 2.5 * style.line / 2}
    if key == "accuracy":
        line = {"color": POSITIVE, "width": 2.5 * style.line / 2, "shape": "hv"}
    return {"type": "scatter", "x": scene.array(f"{key}.t", x),
            "y": scene.array(key, y) if key == "accuracy" else scene.array(key, y, "f8"),
            "mode": "lines", "name": label, "showlegend": False, "line": line,
            "hovertemplate": f"{label} = {y_format}<br>t = %{{x:.3g}}<extra></extra>"}


def _caption_and_cursors(scene: Scene, traj: Trajectory, ts: np.ndarray, fidx: np.ndarray,
                         where: tuple[float, bool], style: Style,
                         time_panels: TimePanels) -> None:
    """The frame's caption in the corner right of the time panels (from x = `where[0]`; GD's
    iteration too when `where[1]`) and a cursor on every time panel."""
    pictures_x0, iterations = where
    t, loss, lr = np.asarray(traj.t, float), np.asarray(traj.loss, float), \
        float(traj.config.integrator.lr)

    def caption_text(f: int) -> str:
        tt = float(t[f])
        it = f" · iteration {round(tt / lr):,}" if iterations else ""
        na, nb = int((traj.a[f] > 0).sum()), int((traj.a[f] < 0).sum())
        # three short lines fit the corner right of the time panels at 1280 px (two did not)
        return (f"t = {fmt_time(tt)}{it}<br>|V₊| = {na}, |V₋| = {nb}<br>"
                f"loss = {float(loss[f]):.3g}")

    corner = Panel("x20", "y20", (pictures_x0, 1.0), (0.0, 0.2),
                   {"range": [0, 1], "visible": False}, {"range": [0, 1], "visible": False})
    scene.panels.append(corner)
    texts = [caption_text(int(f)) for f in fidx]
    scene.trace(corner, {"type": "scatter", "x": [0.5], "y": [0.5], "mode": "text",
                         "text": [texts[0]], "showlegend": False, "hoverinfo": "skip",
                         "cliponaxis": False, "textfont": {"size": style.font, "color": INK}},
                tracks=[{"attr": "text", "texts": [[x] for x in texts]}])
    xs = ts[fidx]
    for panel, (lo, hi), _log in time_panels:
        cursor_trace(xs, (lo, hi), scene, panel, "cursor", width=6)


def _time_axes(time_panels: TimePanels, spec: TimeAxisSpec,
               at: dict[tuple[int, int], Panel]) -> None:
    """The time panels' axes: one time axis per column, at the bottom; log y where asked,
    accuracy in %."""
    for panel, (lo, hi), logy in time_panels:
        bottom = panel in (at[(2, 0)], at[(2, 1)])
        panel.xaxis.update(type="log" if spec.log else "linear", range=spec.range,
                           gridcolor=GRID, exponentformat="power",
                           showticklabels=bottom,  # one time axis per column, at the bottom
                           title={"text": "time t" if bottom else None, "standoff": 4})
        if spec.log and spec.range[1] - spec.range[0] <= 6:
            panel.xaxis["dtick"] = 1
        if logy:
            panel.yaxis.update(type="log", range=[math.log10(lo), math.log10(hi)],
                               gridcolor=GRID, exponentformat="power", dtick=log_dtick(lo, hi))
        elif panel is at[(2, 1)]:
            panel.yaxis.update(range=[lo, hi], gridcolor=GRID, tickformat=".0%", dtick=0.5)
        else:
            panel.yaxis.update(range=[lo, hi], gridcolor=GRID)


def _strip_items(strip: Strip, spec: TimeAxisSpec, time_panels: TimePanels,
                 at: dict[tuple[int, int], Panel], style: Style, shapes: list[dict]
                 ) -> list[dict]:
    """The phase strip over each column of time panels (their top titles move up over it)
    and a faint tint of its first row on every time panel: shapes into `shapes`, the
    strip's annotations returned."""
    time_axes = [(p.x, p.y) for p, _r, _l in time_panels]
    shapes += tint_shapes(strip, time_axes)
    anns: list[dict] = []
    for col in (0, 1):
        col_axes = [(p.x, p.y) for p, _r, _l in time_panels if p in (at[(0, col)], at[(1, col)],
                                                                    at[(2, col)])]
        sh, an = strip_items(strip, spec, at[(0, col)].x, col_axes, style)
        shapes += sh
        anns += an
    return anns


def _frames(traj: Trajectory, analysis: Analysis | None, fidx: np.ndarray,
            iterations: bool) -> Frames:
    """The frames: their slider labels (GD's k = t/η too) and commentary (pictures need a
    redraw)."""
    t, lr = np.asarray(traj.t, float), float(traj.config.integrator.lr)
    labels = ["t = " + fmt_time(float(t[f])) + (f" (k = {round(float(t[f]) / lr):,})"
                                                if iterations else "") for f in fidx]
    return Frames(int(fidx.size), tuple(labels), tuple(captions(traj, analysis, fidx, REAL_DATA)),
                  max(50, frame_ms(int(fidx.size))), redraw=True)


def _layout(scene: Scene, traj: Trajectory, fidx: np.ndarray,
            shape: tuple[bool, bool, float], style: Style,
            items: tuple[list[dict], list[dict]]) -> None:
    """The scene's layout and meta: the title (the data, m, ε, the loss; the run's status
    when it did not complete), the height (`shape`: image pictures?, presenter?, the strip's
    lift), margins, the shapes and annotations (`items`)."""
    is_image, presenter, lift = shape
    shapes, annotations = items
    cfg = traj.config
    title, extra = toolbar_clear_title(
        f"{_data_name(traj)} · m = {traj.width} · ε = {cfg.init.scale:g} ({cfg.init.scheme}) · "
        f"{cfg.loss.kind} loss ({cfg.loss.reduction})", style.title, presenter)
    height = int(style.height * 1.12 + lift + extra)
    top_px, bottom_px = round(70 + lift + extra), 46
    height -= 100 - bottom_px  # the player's controls are outside the figure
    meta = {"frames": int(fidx.size), "picture": "image" if is_image else "bars",
            "frame_indices": [int(f) for f in fidx]}
    scene.layout = {
        "title": {"text": title
                          + (f" · <span style='color:{NEGATIVE}'>⚠ {traj.status}</span>"
                             if traj.status != "completed" else ""),
                  "x": 0.005, "xanchor": "left", "xref": "container", "y": 1.0,
                  "yref": "container", "yanchor": "top",
                  # Plotly lifts a title's first line by ~0.65 em per extra line: pad it down
                  "pad": {"t": 8 + round(0.65 * extra / 1.25)},
                  "font": {"size": style.title, "color": INK}},
        "font": {"family": style.family, "size": style.font, "color": INK},
        "height": height, "margin": {"l": 56, "r": 16, "t": top_px, "b": bottom_px},
        "hovermode": "closest", "hoverlabel": {"font": {"size": style.small}},
        "paper_bgcolor": "white", "plot_bgcolor": "white", "uirevision": "real-data-figure",
        "shapes": shapes, "annotations": annotations, "meta": meta,
    }
    if not is_image:
        scene.layout.update(barmode="group", bargap=0.25)
    scene.meta = dict(meta)


def _titles(is_image: bool, presenter: bool) -> list[str]:
    """The subplot titles, in the panels' order (short ones in presenter mode: its font
    leaves a quarter of the width per title)."""
    if is_image:
        titles = ["cos(w̄₊, x₊), band: min–max, a_j > 0", "stable rank ‖W‖²_F/‖W‖²₂",
                  "w̄₊ (mean neuron)", "x̄₊ (class mean)",  # narrow columns; hover: more
                  "cos(w̄₋, x₋), band: min–max, a_j < 0", "‖W‖²₂",
                  "w̄₋ (mean neuron)", "x̄₋ (class mean)",
                  "loss", "training accuracy"]
    else:
        titles = ["cos(w̄₊, x₊), band: min–max, a_j > 0", "stable rank ‖W‖²_F/‖W‖²₂",
                  "w̄₊ and x̄₊ per input coordinate (each ÷ max|·|)",
                  "cos(w̄₋, x₋), band: min–max, a_j < 0", "‖W‖²₂",
                  "w̄₋ and x̄₋ per input coordinate (each ÷ max|·|)",
                  "loss", "training accuracy"]
    if not presenter:
        return titles
    short = {"cos(w̄₊, x₊), band: min–max, a_j > 0": "cos(w̄₊, x₊), a_j > 0",
             "cos(w̄₋, x₋), band: min–max, a_j < 0": "cos(w̄₋, x₋), a_j < 0",
             "stable rank ‖W‖²_F/‖W‖²₂": "stable rank",
             "w̄₊ (mean neuron)": "w̄₊ (mean)", "w̄₋ (mean neuron)": "w̄₋ (mean)",
             "x̄₊ (class mean)": "x̄₊ class mean", "x̄₋ (class mean)": "x̄₋ class mean",
             "w̄₊ and x̄₊ per input coordinate (each ÷ max|·|)": "w̄₊ and x̄₊ (÷ max|·|)",
             "w̄₋ and x̄₋ per input coordinate (each ÷ max|·|)": "w̄₋ and x̄₋ (÷ max|·|)"}
    return [short.get(x, x) for x in titles]


def _data_name(traj: Trajectory) -> str:
    d = traj.config.data
    if d.kind == "digits":
        a, b = d.classes
        return f"digits {a} (+1) vs {b} (−1), n = {traj.X.shape[0]}"
    return f"uploaded data, n = {traj.X.shape[0]}, d = {traj.X.shape[1]}"


__all__ = ["real_data_figure"]
