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

Pure: Trajectory in, `go.Figure` out. The numbers (x±, w̄±, the alignment curves) come from
`dynamics.readouts`. Frames come from the recorded ones; the mean neurons need full W, which
is recorded when it fits the budget (`Trajectory.W_at`).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dynamics.annotations import Analysis
from dynamics.readouts import AlignmentCurves, alignment_curves, class_means, mean_neuron
from dynamics.trajectory import Trajectory

from .animation import AnimatedFigure, Animation
from .arrays import f32, f64
from .commentary import REAL_DATA, captions
from .options import FigureOptions
from .phase_strip import plan_strip, strip_items, tint_shapes
from .player import fit_any_height, frame_ms
from .style import GRID, INK, NEGATIVE, NEUTRAL, POSITIVE, rgba, white_template
from .time_axes import fmt_time, frame_indices, log_dtick, log_range, time_axis_spec
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
def _band_traces(t: np.ndarray, cur: AlignmentCurves, colour: str, label: str,
                 style_line: float) -> list[go.Scatter]:
    ok = np.isfinite(cur.lo) & np.isfinite(cur.hi)
    tt, lo, hi = t[ok], cur.lo[ok], cur.hi[ok]
    traces = [
        go.Scatter(x=f32(tt), y=f32(hi), mode="lines", line={"width": 0, "color": colour},
                   showlegend=False, hoverinfo="skip", name=f"max cos {label}"),
        go.Scatter(x=f32(tt), y=f32(lo), mode="lines", line={"width": 0, "color": colour},
                   fill="tonexty", fillcolor=rgba(colour, 0.22), name=f"min–max {label}",
                   hoverinfo="skip", showlegend=False),
    ]
    okm = np.isfinite(cur.mean_neuron)
    traces.append(go.Scatter(
        x=f32(t[okm]), y=f32(cur.mean_neuron[okm]), mode="lines", name=label,
        line={"color": colour, "width": 2.5 * style_line / 2}, showlegend=False,
        hovertemplate=f"{label} = %{{y:.3f}}<br>t = %{{x:.3g}}<extra></extra>"))
    return traces


def _picture_frames(traj: Trajectory, f: int) -> list[np.ndarray | None]:
    """[w̄₊, x̄₊, w̄₋, x̄₋] at frame f as unit-scaled pictures (or vectors)."""
    mp, mm = class_means(traj)
    out: list[np.ndarray | None] = []
    for v in (mean_neuron(traj, f, +1), mp, mean_neuron(traj, f, -1), mm):
        if v is None:
            out.append(None)
            continue
        img = picture(traj, v)
        out.append(unit_scaled(img if img is not None else _strip_bias(traj, v)))
    return out


def real_data_figure(traj: Trajectory, analysis: Analysis | None = None,
                     options: FigureOptions | None = None, *, max_frames: int = 150,
                     iterations: bool | None = None) -> AnimatedFigure:
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

    if is_image:
        specs = [[{}, {}, {}, {}], [{}, {}, {}, {}], [{}, {}, None, None]]
        titles = ["cos(w̄₊, x₊), band: min–max, a_j > 0", "stable rank ‖W‖²_F/‖W‖²₂",
                  "w̄₊ (mean neuron)", "x̄₊ (class mean)",  # narrow columns; hover: more
                  "cos(w̄₋, x₋), band: min–max, a_j < 0", "‖W‖²₂",
                  "w̄₋ (mean neuron)", "x̄₋ (class mean)",
                  "loss", "training accuracy"]
        widths = [0.34, 0.32, 0.17, 0.17]
    else:
        specs = [[{}, {}, {"colspan": 2}, None], [{}, {}, {"colspan": 2}, None],
                 [{}, {}, None, None]]
        titles = ["cos(w̄₊, x₊), band: min–max, a_j > 0", "stable rank ‖W‖²_F/‖W‖²₂",
                  "w̄₊ and x̄₊ per input coordinate (each ÷ max|·|)",
                  "cos(w̄₋, x₋), band: min–max, a_j < 0", "‖W‖²₂",
                  "w̄₋ and x̄₋ per input coordinate (each ÷ max|·|)",
                  "loss", "training accuracy"]
        widths = [0.34, 0.32, 0.17, 0.17]
    if presenter:  # the presenter font leaves a quarter of the width per title: short ones
        short = {"cos(w̄₊, x₊), band: min–max, a_j > 0": "cos(w̄₊, x₊), a_j > 0",
                 "cos(w̄₋, x₋), band: min–max, a_j < 0": "cos(w̄₋, x₋), a_j < 0",
                 "stable rank ‖W‖²_F/‖W‖²₂": "stable rank",
                 "w̄₊ (mean neuron)": "w̄₊ (mean)", "w̄₋ (mean neuron)": "w̄₋ (mean)",
                 "x̄₊ (class mean)": "x̄₊ class mean", "x̄₋ (class mean)": "x̄₋ class mean",
                 "w̄₊ and x̄₊ per input coordinate (each ÷ max|·|)": "w̄₊ and x̄₊ (÷ max|·|)",
                 "w̄₋ and x̄₋ per input coordinate (each ÷ max|·|)": "w̄₋ and x̄₋ (÷ max|·|)"}
        titles = [short.get(x, x) for x in titles]
    fig = make_subplots(rows=3, cols=4, specs=specs, column_widths=widths,
                        horizontal_spacing=0.06, vertical_spacing=0.12, subplot_titles=titles)

    # -- time panels: (row, col) -> yaxis range
    panels: list[tuple[int, int, tuple[float, float], bool]] = []
    for row, cur, colour, label in ((1, pos_c, POSITIVE, "cos(w̄₊, x₊)"),
                                    (2, neg_c, NEGATIVE, "cos(w̄₋, x₋)")):
        for tr in _band_traces(ts, cur, colour, label, style.line):
            fig.add_trace(tr, row=row, col=1)
        panels.append((row, 1, (-1.05, 1.05), False))
    fm = traj.frame_metrics
    for row, key, colour, label in ((1, "stable_rank", INK, "stable rank"),
                                    (2, "spectral_sq", INK, "‖W‖²₂")):
        v = np.asarray(fm.get(key, np.full(F, np.nan)), float)
        ok = keep & np.isfinite(v) & (v > 0)
        fig.add_trace(go.Scatter(
            x=f32(ts[ok]), y=f64(v[ok]), mode="lines", name=label, showlegend=False,
            line={"color": colour, "width": 2.5 * style.line / 2},
            hovertemplate=f"{label} = %{{y:.4g}}<br>t = %{{x:.3g}}<extra></extra>"),
            row=row, col=2)
        if key == "stable_rank":
            hi = float(np.nanmax(v[ok])) if ok.any() else 2.0
            fig.add_hline(y=2.0, line={"color": NEUTRAL, "dash": "dot", "width": 1},
                          row=row, col=2)
            panels.append((row, 2, (0.8, max(hi * 1.1, 2.3)), False))
        else:
            panels.append((row, 2, log_range(v[ok]), True))
    loss = np.asarray(traj.loss, float)
    okl = keep & np.isfinite(loss) & (loss > 0)
    fig.add_trace(go.Scatter(
        x=f32(ts[okl]), y=f64(loss[okl]), mode="lines", name="loss", showlegend=False,
        line={"color": INK, "width": 2.5 * style.line / 2},
        hovertemplate="loss = %{y:.4g}<br>t = %{x:.3g}<extra></extra>"), row=3, col=1)
    panels.append((3, 1, log_range(loss[okl], 12.0), True))
    acc = np.asarray(traj.accuracy, float)
    oka = keep & np.isfinite(acc)
    fig.add_trace(go.Scatter(
        x=f32(ts[oka]), y=f32(acc[oka]), mode="lines", name="accuracy", showlegend=False,
        line={"color": POSITIVE, "width": 2.5 * style.line / 2, "shape": "hv"},
        hovertemplate="accuracy = %{y:.1%}<br>t = %{x:.3g}<extra></extra>"), row=3, col=2)
    panels.append((3, 2, (-0.04, 1.06), False))

    # -- pictures
    pics0 = _picture_frames(traj, int(fidx[0]))
    moving: list[int] = []
    if is_image:
        cells = ((1, 3), (1, 4), (2, 3), (2, 4))
        names = ("w̄₊", "x̄₊", "w̄₋", "x̄₋")
        for k, ((row, col), img) in enumerate(zip(cells, pics0, strict=True)):
            z = img if img is not None else np.full((8, 8), np.nan)
            if k in (0, 2):
                moving.append(len(fig.data))
            fig.add_trace(go.Heatmap(
                z=np.round(z, 4).tolist(), zmin=-1, zmax=1, colorscale=IMAGE_SCALE,
                showscale=k == 3, name=names[k],
                colorbar={"len": 0.55, "y": 0.72, "thickness": 12,
                          "title": {"text": "÷ max|·|", "side": "right"}},
                hovertemplate=f"{names[k]}[%{{y}}, %{{x}}] = %{{z:.3f}} (÷ max|·|)"
                              "<extra></extra>"), row=row, col=col)
            fig.update_xaxes(row=row, col=col, showticklabels=False, ticks="",
                             showgrid=False, zeroline=False, constrain="domain")
            fig.update_yaxes(row=row, col=col, showticklabels=False, ticks="",
                             showgrid=False, zeroline=False, autorange="reversed",
                             scaleanchor=f"x{_axis_no(fig, row, col)}", constrain="domain")
    else:
        for row, (w_v, m_v), colour, sgn in ((1, (pics0[0], pics0[1]), POSITIVE, "₊"),
                                              (2, (pics0[2], pics0[3]), NEGATIVE, "₋")):
            d = 0 if m_v is None else min(m_v.size, MAX_BAR_COORDS)
            xs = [f"x{i + 1}" for i in range(d)]
            moving.append(len(fig.data))
            fig.add_trace(go.Bar(
                x=xs, y=_bar_values(w_v, d), name=f"w̄{sgn}", marker={"color": colour},
                showlegend=False, hovertemplate=f"w̄{sgn} %{{x}}: %{{y:.3f}}<extra></extra>"),
                row=row, col=3)
            fig.add_trace(go.Bar(
                x=xs, y=_bar_values(m_v, d), name=f"x̄{sgn}",
                marker={"color": "rgba(0,0,0,0)", "line": {"color": INK, "width": 2}},
                showlegend=False, hovertemplate=f"x̄{sgn} %{{x}}: %{{y:.3f}}<extra></extra>"),
                row=row, col=3)
            fig.update_yaxes(range=[-1.1, 1.1], row=row, col=3, gridcolor=GRID)
        fig.update_layout(barmode="group", bargap=0.25)

    # -- caption (frame time) and cursors
    def caption_text(f: int) -> str:
        tt = float(t[f])
        it = f" · iteration {round(tt / lr):,}" if iterations else ""
        na, nb = int((traj.a[f] > 0).sum()), int((traj.a[f] < 0).sum())
        sep = "<br>"  # two lines fit the corner right of the time panels
        return (f"t = {fmt_time(tt)}{it}{sep}|V₊| = {na}, |V₋| = {nb} · "
                f"loss = {float(loss[f]):.3g}")

    i_cap = len(fig.data)
    fig.add_trace(go.Scatter(x=[0.5], y=[0.5], mode="text", text=[caption_text(int(fidx[0]))],
                             showlegend=False, hoverinfo="skip",
                             textfont={"size": style.font, "color": INK}, xaxis="x20",
                             yaxis="y20"))
    pictures_x0 = float(fig.get_subplot(1, 3).xaxis.domain[0])  # right of the time panels
    fig.update_layout(xaxis20={"domain": [pictures_x0, 1.0], "range": [0, 1], "visible": False,
                               "anchor": "y20"},
                      yaxis20={"domain": [0.0, 0.2], "range": [0, 1], "visible": False,
                               "anchor": "x20"})
    cursor_idx: list[int] = []
    x_first = float(ts[int(fidx[0])])
    for row, col, (lo, hi), _log in panels:
        cursor_idx.append(len(fig.data))
        fig.add_trace(cursor_trace(x_first, (lo, hi), width=6), row=row, col=col)

    # -- axes
    time_axes = []
    for row, col, (lo, hi), logy in panels:
        fig.update_xaxes(type="log" if spec.log else "linear", range=spec.range, row=row,
                         col=col, gridcolor=GRID, exponentformat="power",
                         dtick=1 if spec.log and spec.range[1] - spec.range[0] <= 6 else None,
                         showticklabels=row == 3,  # one time axis per column, at the bottom
                         title={"text": "time t" if row == 3 else None, "standoff": 4})
        if logy:
            fig.update_yaxes(type="log", range=[math.log10(lo), math.log10(hi)], row=row,
                             col=col, gridcolor=GRID, exponentformat="power",
                             dtick=log_dtick(lo, hi))
        elif (row, col) == (3, 2):
            fig.update_yaxes(range=[lo, hi], row=row, col=col, gridcolor=GRID,
                             tickformat=".0%", dtick=0.5)
        else:
            fig.update_yaxes(range=[lo, hi], row=row, col=col, gridcolor=GRID)
        n = _axis_no(fig, row, col)
        time_axes.append((f"x{n if n > 1 else ''}", f"y{n if n > 1 else ''}"))
    # the phase strip over each column of time panels (their top titles move up over it),
    # and a faint tint of its first row on every time panel
    strip = plan_strip(analysis, spec, style, axis_px=STRIP_AXIS_PX, max_rows=1,
                       max_lanes=1, markers=False, inside_first=True, size=style.small * 0.8)
    shapes: list[dict] = tint_shapes(strip, time_axes)
    anns: list[dict] = []
    for col in (1, 2):
        xa = time_axes[[c for _r, c, _rg, _l in panels].index(col)][0]
        col_axes = [ax for ax, (_r, c, _rg, _l) in zip(time_axes, panels, strict=True)
                    if c == col]
        sh, an = strip_items(strip, spec, xa, col_axes, style)
        shapes += sh
        anns += an
    lift = strip.height_px()
    for ann in fig.layout.annotations[:len(titles)]:
        if ann.y is not None and ann.y > 0.99 and ann.x < pictures_x0:  # row 1, time panels
            ann.yshift = lift
    fig.layout.shapes = (*fig.layout.shapes, *shapes)
    fig.layout.annotations = (*fig.layout.annotations, *anns)

    # -- frames: the moving traces' values, played by the browser (pictures need a redraw)
    frames: list[list[dict]] = []
    labels: list[str] = []
    for f in (int(f) for f in fidx):
        pics = _picture_frames(traj, f)
        data: list[dict] = []
        if is_image:
            for img in (pics[0], pics[2]):
                data.append({"z": img if img is not None else np.full((8, 8), np.nan)})
        else:
            for w_v, m_v in ((pics[0], pics[1]), (pics[2], pics[3])):
                d = 0 if m_v is None else min(m_v.size, MAX_BAR_COORDS)
                data.append({"y": _bar_values(w_v, d)})
        data.append({"text": [caption_text(f)]})
        tc = float(ts[f])
        data += [{"x": [tc, tc]} for _ in cursor_idx]
        frames.append(data)
        labels.append("t = " + fmt_time(float(t[f])) + (f" (k = {round(float(t[f]) / lr):,})"
                                                       if iterations else ""))
    anim = Animation.from_frames(frames, [*moving, i_cap, *cursor_idx], labels,
                                 frame_ms=max(50, frame_ms(len(frames))), redraw=True,
                                 captions=captions(traj, analysis, fidx, REAL_DATA))
    height = int(style.height * 1.12 + lift)
    top_px, bottom_px = round(70 + lift), 46
    height -= 100 - bottom_px  # the player's controls are outside the figure
    data_name = _data_name(traj)
    white_template(fig)
    fig.update_layout(
        title={"text": f"{data_name} · m = {traj.width} · ε = {cfg.init.scale:g} "
                       f"({cfg.init.scheme}) · {cfg.loss.kind} loss ({cfg.loss.reduction})"
                       + (f" · <span style='color:{NEGATIVE}'>⚠ {traj.status}</span>"
                          if traj.status != "completed" else ""),
               "x": 0.005, "xanchor": "left", "xref": "container", "y": 1.0,
               "yref": "container", "yanchor": "top", "pad": {"t": 8},
               "font": {"size": style.title, "color": INK}},
        font={"family": style.family, "size": style.font, "color": INK},
        height=height, margin={"l": 56, "r": 16, "t": top_px, "b": bottom_px},
        hovermode="closest", hoverlabel={"font": {"size": style.small}},
        paper_bgcolor="white", plot_bgcolor="white", uirevision="real-data-figure",
    )
    for ann in fig.layout.annotations[: len(titles)]:
        ann.font = {"size": style.small, "color": INK}
    meta = {"frames": len(frames), "picture": "image" if is_image else "bars",
            "frame_indices": [int(f) for f in fidx]}
    fig.update_layout(meta=meta)
    if presenter:
        fit_any_height(fig)
    return AnimatedFigure(fig, anim, meta)


def _bar_values(v: np.ndarray | None, d: int) -> list[float | None]:
    if v is None:
        return [None] * d
    return [None if not math.isfinite(x) else round(float(x), 4) for x in v[:d]]


def _axis_no(fig: go.Figure, row: int, col: int) -> int:
    """The number of the x axis of subplot (row, col) ("x" = 1)."""
    ref = fig.get_subplot(row, col)
    name = ref.xaxis.plotly_name  # "xaxis" or "xaxis7"
    return int(name[5:] or 1)


def _data_name(traj: Trajectory) -> str:
    d = traj.config.data
    if d.kind == "digits":
        a, b = d.classes
        return f"digits {a} (+1) vs {b} (−1), n = {traj.X.shape[0]}"
    return f"uploaded data, n = {traj.X.shape[0]}, d = {traj.X.shape[1]}"


__all__ = ["picture", "real_data_figure", "unit_scaled"]
