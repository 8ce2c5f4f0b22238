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
from dynamics.readouts import AlignmentCurves, alignment_curves, class_means, mean_neurons
from dynamics.trajectory import Trajectory

from .commentary import REAL_DATA, captions
from .header import DESIGN_WIDTH_PX, PRESENTER_WIDTH_PX, toolbar_clear_title
from .options import FigureOptions
from .phase_strip import plan_strip
from .player import fit_any_height, frame_ms
from .scene import Frames, Panel, Scene, grid, narrowed, panel_title
from .strip_draw import strip_items, tint_shapes
from .style import GRID, INK, NEGATIVE, NEUTRAL, POSITIVE, rgba
from .time_axes import fmt_time, frame_indices, log_dtick, log_range, time_axis_spec, y_axis_px
from .time_panels import cursor_trace

IMAGE_SCALE = [[0.0, "#B2182B"], [0.25, "#EF8A62"], [0.5, "#F7F7F7"], [0.75, "#67A9CF"],
               [1.0, "#2166AC"]]  # diverging, 0 = white; readable in grey and for CVD
MAX_BAR_COORDS = 64
STRIP_AXIS_PX = 255  # narrowest time panel (258 px at a 1600 px window beside the sidebar)


# ----------------------------------------------------------------------------- pictures
def _strip_bias(traj: Trajectory, v: np.ndarray) -> np.ndarray:
    return v[:-1] if traj.meta.get("bias") else v


def picture(traj: Trajectory, v: np.ndarray | None) -> np.ndarray | None:
    """A vector as the data's image (bias coordinate dropped), or None if it is not one."""
    shape = traj.meta.get("image_shape")
    if v is None or shape is None:
        return None
    v = _strip_bias(traj, np.asarray(v, float))
    h, w = (int(s) for s in shape)
    return v.reshape(h, w) if v.size == h * w else None


def unit_scaled(v: np.ndarray) -> np.ndarray:
    """v / max|v| (zeros stay zeros; NaNs stay NaNs)."""
    v = np.asarray(v, float)
    top = float(np.nanmax(np.abs(v))) if v.size and np.isfinite(v).any() else 0.0
    return v / top if top > 0 else v


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


def _picture_frames(traj: Trajectory, fidx: np.ndarray) -> list[list[np.ndarray | None]]:
    """[w̄₊, x̄₊, w̄₋, x̄₋] at each frame of `fidx` as unit-scaled pictures (or vectors); None
    where the frame has no stored W."""
    mp, mm = class_means(traj)
    stored = set((np.asarray(traj.W_frames, dtype=int) % max(traj.n_frames, 1)).tolist())
    plus, minus = mean_neurons(traj, +1), mean_neurons(traj, -1)
    fixed = [_shown(traj, mp), _shown(traj, mm)]
    out: list[list[np.ndarray | None]] = []
    for f in (int(f) for f in fidx):
        if f in stored:
            out.append([_shown(traj, plus[f]), fixed[0], _shown(traj, minus[f]), fixed[1]])
        else:
            out.append([None, fixed[0], None, fixed[1]])
    return out


def _shown(traj: Trajectory, v: np.ndarray) -> np.ndarray:
    img = picture(traj, v)
    return unit_scaled(img if img is not None else _strip_bias(traj, v))


def real_data_figure(traj: Trajectory, analysis: Analysis | None = None,
                     options: FigureOptions | None = None, *, max_frames: int = 150,
                     iterations: bool | None = None) -> Scene:
    """The Figure-5 view of one run (see the module docstring), animated over its frames, shown
    as `options` say (time axis, presenter mode).

    iterations: label the slider with GD iterations k = t/η too (default: when the run used GD).
    """
    opts = options or FigureOptions()
    presenter, time_axis = opts.presenter, opts.time_axis
    style = opts.style
    spec = time_axis_spec(traj, time_axis, "t")
    cfg = traj.config
    if iterations is None:
        iterations = cfg.integrator.method == "gd"
    lr = float(cfg.integrator.lr)
    is_image = traj.meta.get("image_shape") is not None
    F = traj.n_frames
    with_w = np.array([traj.W_at(f) is not None for f in range(F)])
    cand = np.flatnonzero(with_w) if with_w.any() else np.arange(F)
    fidx = cand[frame_indices(cand.size, max_frames)]

    t = np.asarray(traj.t, float)
    keep = spec.keep(t)
    ts = spec.show(t)
    pos_c, neg_c = alignment_curves(traj, +1), alignment_curves(traj, -1)
    titles = _titles(is_image, presenter)
    scene = Scene("real_data")
    widths = [0.34, 0.32, 0.17, 0.17]
    if is_image:
        cells = [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3), (2, 0), (2, 1)]
    else:
        cells = [(0, 0), (0, 1), (0, 2, 1, 2), (1, 0), (1, 1), (1, 2, 1, 2), (2, 0), (2, 1)]
    panels = grid(widths, [1.0, 1.0, 1.0], cells, hspace=0.06, vspace=0.12)
    # the second column of time panels leaves the first one's neighbour room for its tick
    # labels ("100%", "10⁻¹⁰"; its titles are above the panels)
    plot = (PRESENTER_WIDTH_PX if presenter else DESIGN_WIDTH_PX) - 56 - 16
    room = y_axis_px(style.font, title=False) + 6 - 0.06 * plot
    panels = [narrowed(p, plot, left_px=room) if c[1] == 1 else p
              for c, p in zip(cells, panels, strict=True)]
    at = {c[:2]: p for c, p in zip(cells, panels, strict=True)}
    scene.panels = list(panels)
    shapes: list[dict] = []

    # -- time panels: (panel, y range, log)
    time_panels: list[tuple[Panel, tuple[float, float], bool]] = []
    for row, cur, colour, label in ((0, pos_c, POSITIVE, "cos(w̄₊, x₊)"),
                                    (1, neg_c, NEGATIVE, "cos(w̄₋, x₋)")):
        for tr in _band_traces(scene, f"band{row}", ts, cur, colour, label, style.line):
            scene.trace(at[(row, 0)], tr)
        time_panels.append((at[(row, 0)], (-1.05, 1.05), False))
    fm = traj.frame_metrics
    for row, key, label in ((0, "stable_rank", "stable rank"), (1, "spectral_sq", "‖W‖²₂")):
        v = np.asarray(fm.get(key, np.full(F, np.nan)), float)
        ok = keep & np.isfinite(v) & (v > 0)
        panel = at[(row, 1)]
        scene.trace(panel, {
            "type": "scatter", "x": scene.array(f"{key}.t", ts[ok]),
            "y": scene.array(key, v[ok], "f8"), "mode": "lines", "name": label,
            "showlegend": False, "line": {"color": INK, "width": 2.5 * style.line / 2},
            "hovertemplate": f"{label} = %{{y:.4g}}<br>t = %{{x:.3g}}<extra></extra>"})
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
    scene.trace(at[(2, 0)], {
        "type": "scatter", "x": scene.array("loss.t", ts[okl]),
        "y": scene.array("loss", loss[okl], "f8"), "mode": "lines", "name": "loss",
        "showlegend": False, "line": {"color": INK, "width": 2.5 * style.line / 2},
        "hovertemplate": "loss = %{y:.4g}<br>t = %{x:.3g}<extra></extra>"})
    time_panels.append((at[(2, 0)], log_range(loss[okl], 12.0), True))
    acc = np.asarray(traj.accuracy, float)
    oka = keep & np.isfinite(acc)
    scene.trace(at[(2, 1)], {
        "type": "scatter", "x": scene.array("accuracy.t", ts[oka]),
        "y": scene.array("accuracy", acc[oka]), "mode": "lines", "name": "accuracy",
        "showlegend": False,
        "line": {"color": POSITIVE, "width": 2.5 * style.line / 2, "shape": "hv"},
        "hovertemplate": "accuracy = %{y:.1%}<br>t = %{x:.3g}<extra></extra>"})
    time_panels.append((at[(2, 1)], (-0.04, 1.06), False))

    # -- pictures
    pics = _picture_frames(traj, fidx)
    if is_image:
        _image_traces(scene, at, pics)
    else:
        _bar_traces(scene, at, pics)

    # -- caption (frame time) and cursors
    def caption_text(f: int) -> str:
        tt = float(t[f])
        it = f" · iteration {round(tt / lr):,}" if iterations else ""
        na, nb = int((traj.a[f] > 0).sum()), int((traj.a[f] < 0).sum())
        # three short lines fit the corner right of the time panels at 1280 px (two did not)
        return (f"t = {fmt_time(tt)}{it}<br>|V₊| = {na}, |V₋| = {nb}<br>"
                f"loss = {float(loss[f]):.3g}")

    pictures_x0 = at[(0, 2)].domain_x[0]  # right of the time panels
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

    # -- axes
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
    # the phase strip over each column of time panels (their top titles move up over it),
    # and a faint tint of its first row on every time panel
    strip = plan_strip(analysis, spec, style, axis_px=STRIP_AXIS_PX, max_rows=1,
                       max_lanes=1, markers=False, size=style.small * 0.8)
    time_axes = [(p.x, p.y) for p, _r, _l in time_panels]
    shapes += tint_shapes(strip, time_axes)
    anns: list[dict] = []
    for col in (0, 1):
        col_axes = [(p.x, p.y) for p, _r, _l in time_panels if p in (at[(0, col)], at[(1, col)],
                                                                    at[(2, col)])]
        sh, an = strip_items(strip, spec, at[(0, col)].x, col_axes, style)
        shapes += sh
        anns += an
    lift = strip.height_px()
    title_anns = []
    for panel, text in zip(panels, titles, strict=True):
        ann = panel_title(panel, text, style.small, INK)
        if panel.domain_y[1] > 0.99 and panel.domain_x[0] < pictures_x0:  # row 1, time panels
            ann["yshift"] = lift
        title_anns.append(ann)

    # -- frames: labels and commentary (pictures need a redraw)
    labels = ["t = " + fmt_time(float(t[f])) + (f" (k = {round(float(t[f]) / lr):,})"
                                                if iterations else "") for f in fidx]
    scene.frames = Frames(int(fidx.size), tuple(labels),
                          tuple(captions(traj, analysis, fidx, REAL_DATA)),
                          max(50, frame_ms(int(fidx.size))), redraw=True)
    data_name = _data_name(traj)
    title, extra = toolbar_clear_title(
        f"{data_name} · m = {traj.width} · ε = {cfg.init.scale:g} ({cfg.init.scheme}) · "
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
        "shapes": shapes, "annotations": [*title_anns, *anns], "meta": meta,
    }
    if not is_image:
        scene.layout.update(barmode="group", bargap=0.25)
    scene.meta = dict(meta)
    if presenter:
        fit_any_height(scene)
    return scene


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


def _image_traces(scene: Scene, at: dict[tuple[int, int], Panel],
                  pics: list[list[np.ndarray | None]]) -> None:
    """w̄± (moving: one image per frame) and x̄± (fixed) as heatmaps, each ÷ its max|·|."""
    names = ("w̄₊", "x̄₊", "w̄₋", "x̄₋")
    cells = ((0, 2), (0, 3), (1, 2), (1, 3))
    for k, (cell, name) in enumerate(zip(cells, names, strict=True)):
        panel = at[cell]
        frames = [p[k] if p[k] is not None else np.full((8, 8), np.nan) for p in pics]
        z0 = frames[0]
        trace = {"type": "heatmap", "z": np.round(z0, 4).tolist(), "zmin": -1, "zmax": 1,
                 "colorscale": IMAGE_SCALE, "showscale": k == 3, "name": name,
                 "colorbar": {"len": 0.55, "y": 0.72, "thickness": 12,
                              "title": {"text": "÷ max|·|", "side": "right"}},
                 "hovertemplate": f"{name}[%{{y}}, %{{x}}] = %{{z:.3f}} (÷ max|·|)"
                                  "<extra></extra>"}
        tracks = []
        if k in (0, 2):  # the mean neurons move; the class means do not
            tracks = [{"attr": "z", "values": scene.array(f"pic{k}", np.stack(frames))}]
        scene.trace(panel, trace, tracks=tracks)
        panel.xaxis.update(showticklabels=False, ticks="", showgrid=False, zeroline=False,
                           constrain="domain")
        panel.yaxis.update(showticklabels=False, ticks="", showgrid=False, zeroline=False,
                           autorange="reversed", scaleanchor=panel.x, constrain="domain")


def _bar_traces(scene: Scene, at: dict[tuple[int, int], Panel],
                pics: list[list[np.ndarray | None]]) -> None:
    """w̄± (moving) beside x̄± (outlined) per input coordinate, each ÷ its max|·|."""
    for row, (iw, im), colour, sgn in ((0, (0, 1), POSITIVE, "₊"), (1, (2, 3), NEGATIVE, "₋")):
        panel = at[(row, 2)]
        m_v = pics[0][im]
        d = 0 if m_v is None else min(m_v.size, MAX_BAR_COORDS)
        xs = [f"x{i + 1}" for i in range(d)]
        ys = np.stack([_bar_values(p[iw], d) for p in pics]) if d else np.zeros((len(pics), 0))
        scene.trace(panel, {"type": "bar", "x": xs, "y": _clean(ys[0]), "name": f"w̄{sgn}",
                            "marker": {"color": colour}, "showlegend": False,
                            "hovertemplate": f"w̄{sgn} %{{x}}: %{{y:.3f}}<extra></extra>"},
                    tracks=[{"attr": "y", "values": scene.array(f"bars{row}", ys)}])
        scene.trace(panel, {"type": "bar", "x": xs, "y": _clean(_bar_values(m_v, d)),
                            "name": f"x̄{sgn}",
                            "marker": {"color": "rgba(0,0,0,0)", "line": {"color": INK,
                                                                          "width": 2}},
                            "showlegend": False,
                            "hovertemplate": f"x̄{sgn} %{{x}}: %{{y:.3f}}<extra></extra>"})
        panel.yaxis.update(range=[-1.1, 1.1], gridcolor=GRID)


def _clean(v: np.ndarray) -> list[float | None]:
    return [None if not math.isfinite(x) else round(float(x), 4) for x in v]


def _bar_values(v: np.ndarray | None, d: int) -> np.ndarray:
    if v is None:
        return np.full(d, np.nan)
    return np.asarray(v[:d], dtype=float)


def _data_name(traj: Trajectory) -> str:
    d = traj.config.data
    if d.kind == "digits":
        a, b = d.classes
        return f"digits {a} (+1) vs {b} (−1), n = {traj.X.shape[0]}"
    return f"uploaded data, n = {traj.X.shape[0]}, d = {traj.X.shape[1]}"


__all__ = ["picture", "real_data_figure", "unit_scaled"]
