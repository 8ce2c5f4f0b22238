"""The main figure: one Plotly figure with frames, animated in the browser.

Left: the 2D neuron panel — each neuron w_j at its direction in the trajectory's plane, with a
radius that is its norm relative to the largest in the frame (or log‖w_j‖ on a fixed scale),
coloured by sign(a_j) and sized by norm; the data as arrows (or points), the activation-cone
boundaries ⟨w, x_i⟩ = 0, and the theory's directions as named rays. Right: per-neuron norms,
the loss and the accuracy on one shared time axis with a moving time cursor, and the phases and
time markers of an `Analysis` on every time axis.

Pure: Trajectory (+ Analysis) and options in, `go.Figure` out; nothing here integrates.
Frames update only the traces that move (neurons, the frame caption and the cursors).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dynamics.annotations import Analysis, Direction, Phase, TimeMarker
from dynamics.trajectory import Trajectory

from .style import (
    DEFAULT_DIRECTION_STYLE,
    DIRECTION_STYLE,
    GRID,
    INK,
    MARKER_COLOUR,
    NEGATIVE,
    NEUTRAL,
    PHASE_COLOURS,
    POSITIVE,
    REGRESSION_SCALE,
    Style,
    rgba,
    style_for,
)

RadiusMode = Literal["normalised", "log"]
TimeAxis = Literal["log", "linear"]
TimeScale = Literal["t", "t_over_log_inv_eps"]

PANEL_LIMIT = 1.38  # half-width of the neuron panel (unit circle = the largest neuron)
RAY_LENGTH = 1.2  # theory rays end just outside the unit circle
LOG_DECADES = 8.0  # log-radius mode shows at most this many decades of ‖w_j‖
MAX_ARROWS = 40  # more data points than this are drawn as dots, not arrows
MAX_CONES = 40  # more boundaries than this are left out (they would fill the panel)
MAX_VALUE_LABELS = 6  # regression labels are written next to at most this many points
PLAY_SECONDS = 9.0  # one pass of the animation, whatever the number of frames


# ----------------------------------------------------------------------------- small helpers
def frame_indices(n_frames: int, max_frames: int = 200) -> np.ndarray:
    """At most `max_frames` frame indices, evenly spread, always including the first and last."""
    if n_frames <= 0:
        return np.zeros(0, dtype=int)
    k = max(1, min(int(max_frames), n_frames))
    if k == 1:
        return np.array([n_frames - 1])
    return np.unique(np.round(np.linspace(0, n_frames - 1, k)).astype(int))


def neuron_subset(final_norms: np.ndarray, k: int) -> np.ndarray:
    """A deterministic subset of ≤ k neuron indices (sorted): the largest final norms (two
    thirds) and an even spread through the rest in order of final norm (one third)."""
    m = final_norms.shape[0]
    if m <= k:
        return np.arange(m)
    order = np.argsort(-np.nan_to_num(final_norms, nan=-np.inf), kind="stable")
    top = max(1, (2 * k) // 3)
    rest = order[top:]
    spread = rest[np.round(np.linspace(0, rest.size - 1, k - top)).astype(int)]
    return np.sort(np.unique(np.r_[order[:top], spread]))


def time_divisor(traj: Trajectory, time_scale: TimeScale) -> tuple[float, str]:
    """(divisor, axis title): 1 and "time t", or ln(1/ε) and "t / ln(1/ε)" (ε = init scale)."""
    if time_scale == "t_over_log_inv_eps":
        eps = float(traj.config.init.scale)
        if 0 < eps < 1:
            return math.log(1.0 / eps), "t / ln(1/ε)"
        return 1.0, "time t (ε ≥ 1: not rescaled)"
    return 1.0, "time t"


def fmt_time(t: float) -> str:
    """Compact time label: 0, 0.0123, 4.56, 1.2e+03."""
    if t == 0:
        return "0"
    return f"{t:.3g}"


@dataclass(frozen=True)
class TimeAxisSpec:
    """How times map onto the shared axis: divide by `div`; on a log axis t = 0 sits at `t0`."""

    div: float
    log: bool
    t0: float  # display value of t = 0 (log axis) or 0
    t1: float  # right end
    title: str

    def show(self, t: np.ndarray | float) -> np.ndarray:
        v = np.asarray(t, dtype=float) / self.div
        return np.maximum(v, self.t0) if self.log else v

    @property
    def range(self) -> list[float]:
        if self.log:
            return [math.log10(self.t0), math.log10(self.t1)]
        return [0.0, self.t1]

    def axis_value(self, t: float) -> float:
        """Position for annotations (which take log10 values on log axes)."""
        v = float(self.show(t))
        return math.log10(v) if self.log else v


def time_axis_spec(traj: Trajectory, time_axis: TimeAxis, time_scale: TimeScale) -> TimeAxisSpec:
    div, title = time_divisor(traj, time_scale)
    t = np.asarray(traj.t, dtype=float) / div
    t_end = float(t[-1]) if t.size and t[-1] > 0 else 1.0
    if time_axis == "log":
        pos = t[t > 0]
        first = float(pos[0]) if pos.size else t_end * 1e-4
        t0 = first / 1.6
        return TimeAxisSpec(div, True, t0, t_end * 1.05, title)
    return TimeAxisSpec(div, False, 0.0, t_end, title)


def _log_range(values: np.ndarray, floor_decades: float = 12.0) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return 1e-3, 1.0
    hi = float(v.max())
    lo = max(float(v.min()), hi * 10.0 ** (-floor_decades))
    if hi <= lo:
        lo, hi = hi / 10, hi * 10
    return lo / 1.6, hi * 1.6


_SHORT = {"float32": "f4", "float64": "f8", "uint8": "u1", "int32": "i4", "uint16": "u2"}


def _typed(x: np.ndarray | Sequence[float], dtype: str = "float32") -> dict | list:
    """A plotly.js typed-array spec {"dtype", "bdata"[, "shape"]}: compact JSON, and plotly.py
    passes it through without its (slow) per-array validation."""
    with np.errstate(over="ignore", invalid="ignore"):  # diverged runs: ±inf is fine to draw
        v = np.ascontiguousarray(np.asarray(x, dtype=dtype))
    if v.size == 0:
        return []
    spec: dict = {"dtype": _SHORT[dtype], "bdata": base64.b64encode(v.tobytes()).decode("ascii")}
    if v.ndim > 1:
        spec["shape"] = ", ".join(str(k) for k in v.shape)
    return spec


def _f32(x: np.ndarray | Sequence[float]) -> dict | list:
    return _typed(x, "float32")


def as_array(v: object) -> np.ndarray:
    """Decode a trace array of this figure (typed-array spec, list or array) to numpy."""
    if isinstance(v, dict) and "bdata" in v:
        inv = {s: k for k, s in _SHORT.items()}
        arr = np.frombuffer(base64.b64decode(v["bdata"]), dtype=inv[v["dtype"]])
        if "shape" in v:
            arr = arr.reshape([int(k) for k in str(v["shape"]).split(",")])
        return arr
    if v is None:
        return np.zeros(0)
    return np.asarray(v, dtype=float) if not isinstance(v, np.ndarray) else v


# ----------------------------------------------------------------------------- neuron panel
@dataclass(frozen=True)
class RadiusScale:
    """Maps norms to panel radii: per-frame relative (normalised) or a fixed log scale."""

    mode: RadiusMode
    lo: float = 0.0  # log10 norm drawn at radius R_MIN (log mode)
    hi: float = 0.0  # log10 norm drawn at radius 1 (log mode)

    R_MIN = 0.08

    def radius(self, norms: np.ndarray) -> np.ndarray:
        n = np.asarray(norms, dtype=float)
        if self.mode == "log":
            with np.errstate(divide="ignore"):
                ln = np.log10(np.where(n > 0, n, np.nan))
            span = max(self.hi - self.lo, 1e-12)
            r = self.R_MIN + (1 - self.R_MIN) * (ln - self.lo) / span
            return np.nan_to_num(np.clip(r, 0.0, 1.0), nan=0.0)
        top = float(np.max(n)) if n.size else 0.0
        return n / top if top > 0 else np.zeros_like(n)

    def of_value(self, norm: float) -> float:
        return float(self.radius(np.array([norm]))[0])


def radius_scale(traj: Trajectory, mode: RadiusMode) -> RadiusScale:
    if mode != "log":
        return RadiusScale("normalised")
    norms = np.asarray(traj.norms, dtype=float)
    pos = norms[np.isfinite(norms) & (norms > 0)]
    if pos.size == 0:
        return RadiusScale("log", -1.0, 0.0)
    hi = float(np.log10(pos.max()))
    lo = max(float(np.log10(pos.min())), hi - LOG_DECADES)
    if hi - lo < 1.0:
        lo = hi - 1.0
    return RadiusScale("log", lo, hi)


def _neuron_frame(traj: Trajectory, f: int, sel: np.ndarray, scale: RadiusScale,
                  style: Style, with_index: bool = True) -> tuple[dict, dict, float]:
    """Positive and negative neuron trace updates at frame f, and the frame's max norm.

    customdata holds (neuron index, ‖w_j‖), or only ‖w_j‖ when `with_index` is False (the
    split by sign never changes, so the index is stored once in the base trace's `text`)."""
    norms = np.asarray(traj.norms[f, sel], dtype=float)
    proj = np.asarray(traj.proj[f, sel], dtype=float)
    good = np.isfinite(norms) & np.all(np.isfinite(proj), axis=1)
    norms = np.where(good, norms, 0.0)
    proj = np.where(good[:, None], proj, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit = np.where(norms[:, None] > 0, proj / norms[:, None], 0.0)
    r = scale.radius(norms)
    xy = unit * r[:, None]
    top = float(norms.max()) if norms.size else 0.0
    rel = norms / top if top > 0 else np.zeros_like(norms)
    size = style.marker_min + (style.marker_max - style.marker_min) * np.sqrt(rel)
    a = np.asarray(traj.a[f, sel], dtype=float)
    out = []
    for mask in (a >= 0, a < 0):
        cd = (_f32(np.stack([sel[mask], norms[mask]], axis=1)) if with_index
              else _f32(norms[mask]))
        out.append({"x": _f32(xy[mask, 0]), "y": _f32(xy[mask, 1]),
                    "marker": {"size": _typed(np.round(size[mask]), "uint8")},
                    "customdata": cd})
    return out[0], out[1], top


def _guide_traces(scale: RadiusScale, style: Style) -> list[go.Scatter]:
    """Reference circles: the unit circle (normalised) or decade rings (log)."""
    th = np.linspace(0, 2 * np.pi, 121)
    traces: list[go.Scatter] = []
    if scale.mode == "normalised":
        traces.append(go.Scatter(
            x=_f32(np.cos(th)), y=_f32(np.sin(th)), mode="lines", hoverinfo="skip",
            line={"color": GRID, "width": 1.5, "dash": "dot"}, showlegend=False,
            name="largest norm"))
        return traces
    decades = range(math.ceil(scale.lo), math.floor(scale.hi) + 1)
    for k in decades:
        r = scale.of_value(10.0 ** k)
        if r <= 0:
            continue
        traces.append(go.Scatter(
            x=_f32(r * np.cos(th)), y=_f32(r * np.sin(th)), mode="lines", hoverinfo="skip",
            line={"color": GRID, "width": 1.2, "dash": "dot"}, showlegend=False))
        traces.append(go.Scatter(
            x=[r * math.cos(math.radians(100))], y=[r * math.sin(math.radians(100))],
            mode="text", text=[f"10<sup>{k}</sup>"], hoverinfo="skip", showlegend=False,
            textfont={"size": style.small * 0.9, "color": NEUTRAL}))
    return traces


def _cone_trace(traj: Trajectory, analysis: Analysis | None) -> go.Scatter | None:
    """Activation-cone boundaries {w : ⟨w, x_i⟩ = 0} cut by the plane: lines ⟂ P x_i."""
    normals: np.ndarray | None = None
    if analysis is not None and analysis.cone_normals is not None:
        normals = np.atleast_2d(np.asarray(analysis.cone_normals, dtype=float))
    elif traj.X.shape[1] == 2 and traj.X.shape[0] <= MAX_CONES:
        normals = np.asarray(traj.X, dtype=float)
    if normals is None or normals.size == 0 or normals.shape[0] > MAX_CONES:
        return None
    if normals.shape[1] != traj.plane.shape[1]:
        return None
    u = normals @ np.asarray(traj.plane, dtype=float).T  # (k, 2)
    xs: list[float | None] = []
    ys: list[float | None] = []
    seen: list[np.ndarray] = []
    for v in u:
        nv = float(np.linalg.norm(v))
        if nv < 1e-9:
            continue
        p = np.array([-v[1], v[0]]) / nv
        if any(abs(float(p @ q)) > 0.99995 for q in seen):
            continue  # the same line twice
        seen.append(p)
        L = PANEL_LIMIT * 1.5
        xs += [-L * p[0], L * p[0], None]
        ys += [-L * p[1], L * p[1], None]
    if not seen:
        return None
    return go.Scatter(x=xs, y=ys, mode="lines", name="cone edges", legendrank=30,
                      line={"color": "#9A9A9A", "width": 1.3, "dash": "dot"},
                      hoverinfo="skip", legendgroup="cones")


def _data_traces(traj: Trajectory, style: Style) -> list[go.Scatter]:
    """The data projected onto the plane, scaled so the longest x_i has length 1."""
    X = np.asarray(traj.X, dtype=float)
    y = np.asarray(traj.y, dtype=float)
    if X.size == 0:
        return []
    P = np.asarray(traj.plane, dtype=float)
    scale = float(np.linalg.norm(X, axis=1).max()) or 1.0
    xy = (X @ P.T) / scale
    n = X.shape[0]
    traces: list[go.Scatter] = []
    arrows = n <= MAX_ARROWS
    classification = bool(np.all(np.isin(y, (-1.0, 1.0))))
    if classification:
        groups = [(y > 0, POSITIVE, "y = +1"), (y < 0, NEGATIVE, "y = −1")]
    else:
        groups = [(np.ones(n, bool), None, "data (colour = y)")]
    for mask, colour, name in groups:
        if not mask.any():
            continue
        pts = xy[mask]
        lab = y[mask]
        idx = np.flatnonzero(mask)
        hover = [f"x<sub>{i + 1}</sub>, y = {v:.3g}" for i, v in zip(idx, lab, strict=True)]
        if arrows:
            lx: list[float | None] = []
            ly: list[float | None] = []
            for px, py in pts:
                lx += [0.0, float(px), None]
                ly += [0.0, float(py), None]
            traces.append(go.Scatter(
                x=lx, y=ly, mode="lines", hoverinfo="skip", showlegend=False,
                legendgroup=name, line={"color": colour or INK, "width": style.line * 1.1},
                opacity=0.75))
            angles = 90.0 - np.degrees(np.arctan2(pts[:, 1], pts[:, 0]))
            marker: dict = {"symbol": "arrow", "size": style.marker_max * 1.05,
                            "angle": angles.tolist(), "line": {"width": 0}}
        else:
            marker = {"symbol": "diamond", "size": style.marker_min, "opacity": 0.55,
                      "line": {"width": 0}}
        if colour is not None:
            marker["color"] = colour
        else:
            marker.update({"color": lab.tolist(), "colorscale": REGRESSION_SCALE,
                           "showscale": False})
        text = None
        mode = "markers"
        if not classification and n <= MAX_VALUE_LABELS:
            text = [f"y={v:.2g}" for v in lab]
            mode = "markers+text"
        traces.append(go.Scatter(
            x=pts[:, 0].tolist(), y=pts[:, 1].tolist(), mode=mode, marker=marker, name=name,
            legendrank=5,
            legendgroup=name, text=text, textposition="top center",
            textfont={"size": style.small, "color": INK}, hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>"))
    return traces


def _label_position(x: float, y: float) -> str:
    """Text beside a ray's tip, extending back over the panel (not out of it)."""
    vert = "top" if y > 0.25 else "bottom" if y < -0.25 else "middle"
    horiz = "left" if x > 0.25 else "right" if x < -0.25 else "center"
    pos = f"{vert} {horiz}"
    return "top center" if pos == "middle center" else pos


def _direction_traces(traj: Trajectory, analysis: Analysis | None,
                      style: Style) -> list[go.Scatter]:
    """Rays for the analysis' directions (styled by kind) and the data-signal directions."""
    P = np.asarray(traj.plane, dtype=float)
    items: list[Direction] = list(analysis.directions) if analysis is not None else []
    names = {d.name for d in items}
    for name, v in traj.directions.items():
        if name not in names:
            items.append(Direction(name=name, vector=np.asarray(v, dtype=float), kind="signal"))
    drawn: list[tuple[np.ndarray, float, Direction, list[str], list[str]]] = []
    for d in items:
        v = np.asarray(d.vector, dtype=float).ravel()
        if v.shape[0] != P.shape[1] or not np.all(np.isfinite(v)):
            continue
        nv = float(np.linalg.norm(v))
        if nv == 0:
            continue
        u = P @ v / nv  # length < 1 when v leaves the plane
        lu = float(np.linalg.norm(u))
        if lu < 0.05:
            continue  # nearly orthogonal to the plane: nothing to draw
        same = next((e for e in drawn if float(e[0] @ u) / (lu * e[1]) > 0.9995), None)
        if same is not None:
            same[3].append(d.name)  # one label on the ray for both names
            if same[2].kind == d.kind:
                same[4].append(d.name)
                continue
            drawn.append((u, lu, d, [], [d.name]))  # its own style, no second label
        else:
            drawn.append((u, lu, d, [d.name], [d.name]))
    traces: list[go.Scatter] = []
    kinds_shown: set[str] = set()
    for u, lu, d, label_names, names_here in drawn:
        st = DIRECTION_STYLE.get(d.kind, DEFAULT_DIRECTION_STYLE)
        end = u * RAY_LENGTH
        label = ", ".join(label_names)
        hname = ", ".join(names_here)
        is_signal = d.kind == "signal"
        kind = d.kind.replace("_", " ")
        show = d.kind not in kinds_shown
        kinds_shown.add(d.kind)
        legend_name = "data signals" if is_signal else kind
        note = f"<br>{d.note}" if d.note else ""
        off_plane = f"<br>{lu:.0%} in the plane" if lu < 0.99 else ""
        traces.append(go.Scatter(
            x=[0.0, float(end[0])], y=[0.0, float(end[1])],
            mode="lines+text" if label else "lines", text=["", label] if label else None,
            textposition=_label_position(float(end[0]), float(end[1])),
            textfont={"size": style.small * (1.0 if is_signal else 1.1),
                      "color": str(st["color"])},
            line={"color": str(st["color"]), "dash": str(st["dash"]),
                  "width": float(st["width"]) * style.line / 2},
            name=legend_name, legendgroup=d.kind, legendrank=20, cliponaxis=False,
            showlegend=show, hovertemplate=f"{hname}{note}{off_plane}<extra></extra>",
            meta={"direction": hname, "kind": d.kind}, opacity=0.8 if is_signal else 1.0))
    return traces


# ----------------------------------------------------------------------------- time panels
LANE_PX = 21  # height of one row of phase/marker labels above the time panels (14 px text)


def lane_px(style: Style) -> int:
    """Label-row height for this style: LANE_PX scaled with the label font (presenter mode)."""
    return round(LANE_PX * style.small / 14.0)
AXIS_PX_GUESS = 430  # typical pixel width of the time axes (for label-overlap estimates)
MAX_LANES = 6


@dataclass(frozen=True)
class _Label:
    text: str
    x: float  # axis value (log10 on log axes)
    xanchor: str
    lane: int
    bg: str
    border: str
    hover: str
    name: str


def _frac(spec: TimeAxisSpec, v: float) -> float:
    lo, hi = spec.range
    pos = math.log10(v) if spec.log else v
    return (pos - lo) / (hi - lo) if hi > lo else 0.0


def _unfrac(spec: TimeAxisSpec, f: float) -> float:
    lo, hi = spec.range
    return lo + f * (hi - lo)


def time_labels(analysis: Analysis | None, spec: TimeAxisSpec,
                style: Style | None = None) -> list[_Label]:
    """Phase and marker labels placed in rows (lanes) above the time panels so that they do not
    overlap: each goes into the first lane where it fits (estimated text widths)."""
    if analysis is None:
        return []
    style = style or style_for(False)
    x_lo, x_hi = (spec.t0 if spec.log else 0.0), spec.t1
    char = style.small * 0.6 / AXIS_PX_GUESS
    items: list[tuple[float, float, float, str, str, str, str, str]] = []
    for i, ph in enumerate(analysis.phases):
        x0 = float(np.clip(spec.show(ph.start), x_lo, x_hi))
        x1 = float(np.clip(spec.show(ph.end), x_lo, x_hi))
        if not x1 > x0:
            continue
        colour = PHASE_COLOURS[i % len(PHASE_COLOURS)]
        predicted = ph.source == "predicted"
        text = f"{ph.name}{' (predicted)' if predicted else ''}"
        w = len(text) * char + 10 / AXIS_PX_GUESS
        c = (_frac(spec, x0) + _frac(spec, x1)) / 2
        c = min(max(c, w / 2), 1 - w / 2)
        items.append((c - w / 2, c + w / 2, c, "center", text, rgba(colour, 0.45),
                      colour if predicted else rgba(colour, 0.45), ph.evidence or ph.name))
    for mk in analysis.markers:
        v = float(spec.show(mk.time))
        if not (x_lo <= v <= x_hi) or not math.isfinite(v):
            continue
        text = f"┆ {mk.name}" if mk.source == "predicted" else f"│ {mk.name}"
        w = len(text) * char + 10 / AXIS_PX_GUESS
        f = _frac(spec, v)
        if f + w <= 1:
            items.append((f, f + w, f, "left", text, "rgba(255,255,255,0.9)", MARKER_COLOUR,
                          mk.note or mk.name))
        else:
            text = f"{mk.name} {text[0]}"
            items.append((f - w, f, f, "right", text, "rgba(255,255,255,0.9)", MARKER_COLOUR,
                          mk.note or mk.name))
    lane_end: list[float] = []
    out: list[_Label] = []
    for a, b, c, anchor, text, bg, border, hover in sorted(items, key=lambda it: it[0]):
        lane = next((k for k, e in enumerate(lane_end) if e <= a), len(lane_end))
        if lane >= MAX_LANES:
            lane = min(range(MAX_LANES), key=lambda k: lane_end[k])  # crowded: least overlap
        if lane == len(lane_end):
            lane_end.append(b)
        else:
            lane_end[lane] = max(lane_end[lane], b)
        out.append(_Label(text, _unfrac(spec, c), anchor, lane, bg, border, hover,
                          text.strip("┆│ ")))
    return out


def add_time_annotations(fig: go.Figure, analysis: Analysis | None,
                         axes: Sequence[tuple[str, str]], spec: TimeAxisSpec,
                         style: Style | None = None, plot_px: float | None = None) -> int:
    """Draw Analysis.phases (bands) and Analysis.markers (vertical lines) on every time axis,
    with their labels in non-overlapping rows above the first (top) axis. Returns the number
    of label rows (the caller leaves lane_px(style) pixels of top margin for each).

    `axes` are (xaxis, yaxis) ids like ("x2", "y2"). Detected phases: solid translucent fill;
    predicted: dashed outline, light fill. Markers: dashed (predicted) or solid (detected).
    `plot_px` is the plot area's height in pixels (default: the figure's height less margins).
    """
    if analysis is None or not axes:
        return 0
    style = style or style_for(False)
    x_lo, x_hi = spec.t0 if spec.log else 0.0, spec.t1
    for i, ph in enumerate(analysis.phases):
        colour = PHASE_COLOURS[i % len(PHASE_COLOURS)]
        x0 = float(np.clip(spec.show(ph.start), x_lo, x_hi))
        x1 = float(np.clip(spec.show(ph.end), x_lo, x_hi))
        if not x1 > x0:
            continue
        predicted = ph.source == "predicted"
        for xa, ya in axes:
            fig.add_shape(
                type="rect", xref=xa, yref=f"{ya} domain", x0=x0, x1=x1, y0=0, y1=1,
                layer="below", fillcolor=rgba(colour, 0.06 if predicted else 0.16),
                line={"color": colour, "width": 2 if predicted else 0,
                      "dash": "dash" if predicted else "solid"},
                name=f"phase:{ph.name}:{ph.source}")
    for mk in analysis.markers:
        v = float(spec.show(mk.time))
        if not (x_lo <= v <= x_hi) or not math.isfinite(v):
            continue
        predicted = mk.source == "predicted"
        for xa, ya in axes:
            fig.add_shape(
                type="line", xref=xa, yref=f"{ya} domain", x0=v, x1=v, y0=0, y1=1,
                line={"color": MARKER_COLOUR, "width": 1.4,
                      "dash": "dash" if predicted else "solid"},
                name=f"marker:{mk.name}:{mk.source}")
    labels = time_labels(analysis, spec, style)
    if plot_px is None:
        m = fig.layout.margin
        plot_px = float((fig.layout.height or 700) - (m.t or 80) - (m.b or 80))
    xa, _ = axes[0]
    for lab in labels:
        fig.add_annotation(
            x=lab.x, xref=xa, y=1.0 + (4 + lane_px(style) * lab.lane) / plot_px, yref="paper",
            xanchor=lab.xanchor, yanchor="bottom", showarrow=False, text=lab.text,
            font={"size": style.small * 0.95, "color": INK}, bgcolor=lab.bg,
            bordercolor=lab.border, borderwidth=1, borderpad=1, hovertext=lab.hover,
            name=f"time-label:{lab.name}")
    return 1 + max(lab.lane for lab in labels) if labels else 0


def _norm_traces(traj: Trajectory, spec: TimeAxisSpec, max_curves: int,
                 style: Style) -> tuple[list[go.Scatter], tuple[float, float], int]:
    """Per-neuron norm curves (≤ max_curves, one trace per sign with gaps) and, for larger
    widths, the max/median envelope. Returns traces, y range and the number of curves."""
    norms = np.asarray(traj.norms, dtype=float)
    t = np.asarray(traj.t, dtype=float)
    keep = t > 0 if spec.log else np.ones(t.shape, bool)
    tx = spec.show(t[keep])
    nk = norms[keep]
    m = norms.shape[1]
    sel = neuron_subset(norms[-1], max_curves)
    sign = np.asarray(traj.a[-1], dtype=float) >= 0
    traces: list[go.Scatter] = []
    for positive, colour, name in ((True, POSITIVE, "‖w_j‖, a_j > 0"),
                                   (False, NEGATIVE, "‖w_j‖, a_j < 0")):
        js = sel[sign[sel] == positive]
        if js.size == 0:
            continue
        k = tx.size + 1
        xs = np.full(js.size * k, np.nan)
        ys = np.full(js.size * k, np.nan)
        for i, j in enumerate(js):
            xs[i * k:i * k + tx.size] = tx
            ys[i * k:i * k + tx.size] = np.where(nk[:, j] > 0, nk[:, j], np.nan)
        traces.append(go.Scatter(
            x=_f32(xs), y=_f32(ys), mode="lines", name=name, showlegend=False,
            legendgroup="pos" if positive else "neg", hoverinfo="skip",
            line={"color": colour, "width": 1.1 * style.line / 2}, opacity=0.5))
    if m > max_curves:
        with np.errstate(invalid="ignore"):
            traces.append(go.Scatter(
                x=_f32(tx), y=_f32(np.nanmax(nk, axis=1)), mode="lines", name="max ‖w_j‖",
                line={"color": INK, "width": 2.5 * style.line / 2}, showlegend=False,
                hovertemplate="max ‖w‖ = %{y:.3g}<extra></extra>"))
            traces.append(go.Scatter(
                x=_f32(tx), y=_f32(np.nanmedian(nk, axis=1)), mode="lines",
                name="median ‖w_j‖", showlegend=False,
                line={"color": INK, "width": 2 * style.line / 2, "dash": "dash"},
                hovertemplate="median ‖w‖ = %{y:.3g}<extra></extra>"))
    lo, hi = _log_range(nk)
    return traces, (lo, hi), int(sel.size)


def _loss_series(traj: Trajectory) -> tuple[np.ndarray, np.ndarray]:
    ts, ls = traj.scalars.get("t"), traj.scalars.get("loss")
    t = np.asarray(traj.t, dtype=float)
    loss = np.asarray(traj.loss, dtype=float)
    if ts is not None and ls is not None and len(ts) == len(ls) and len(ts) > 0:
        t = np.r_[t[:1], np.asarray(ts, dtype=float)]
        loss = np.r_[loss[:1], np.asarray(ls, dtype=float)]
        order = np.argsort(t, kind="stable")
        t, loss = t[order], loss[order]
    return t, loss


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
        title += (f"<br><span style='color:{NEGATIVE};font-size:{style.font:.0f}px'>"
                  f"⚠ {traj.status}: {msg}</span>")
    return title


def main_figure(traj: Trajectory, analysis: Analysis | None = None, *,
                radius: RadiusMode = "normalised", time_axis: TimeAxis = "log",
                time_scale: TimeScale = "t", max_frames: int = 200, presenter: bool = False,
                max_curves: int = 150, max_neurons: int = 600) -> go.Figure:
    """The animated main figure (see the module docstring).

    radius: "normalised" (‖w_j‖ / max_k ‖w_k‖ per frame) or "log" (log‖w_j‖ on a fixed scale).
    time_axis: "log" or "linear"; time_scale: "t" or "t_over_log_inv_eps" (t / ln(1/ε)).
    At most `max_frames` animation frames, `max_curves` norm curves, `max_neurons` neurons.
    """
    style = style_for(presenter)
    spec = time_axis_spec(traj, time_axis, time_scale)
    scale = radius_scale(traj, radius)
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

    # -- neuron panel: static layers first, neurons on top
    for tr in _guide_traces(scale, style):
        fig.add_trace(tr, row=1, col=1)
    cone = _cone_trace(traj, analysis)
    if cone is not None:
        fig.add_trace(cone, row=1, col=1)
    for tr in _data_traces(traj, style):
        fig.add_trace(tr, row=1, col=1)
    for tr in _direction_traces(traj, analysis, style):
        fig.add_trace(tr, row=1, col=1)
    f_start = int(fidx[0]) if fidx.size else 0
    signs = np.asarray(traj.a, dtype=float)[np.ix_(fidx, sel)] >= 0 if fidx.size else None
    fixed = signs is None or bool(np.all(signs == signs[:1]))
    pos0, neg0, top0 = _neuron_frame(traj, f_start, sel, scale, style, not fixed)
    if fixed:
        hover = "%{text}<br>‖w‖ = %{customdata:.3g}<extra>%{fullData.name}</extra>"
        s0 = signs[0] if signs is not None else np.ones(sel.size, bool)
        pos0["text"] = [f"neuron {j}" for j in sel[s0]]
        neg0["text"] = [f"neuron {j}" for j in sel[~s0]]
    else:
        hover = ("neuron %{customdata[0]:.0f}<br>‖w‖ = %{customdata[1]:.3g}"
                 "<extra>%{fullData.name}</extra>")
    i_pos = len(fig.data)
    fig.add_trace(go.Scatter(
        mode="markers", name="a_j > 0", legendgroup="pos", hovertemplate=hover, legendrank=1,
        x=pos0["x"], y=pos0["y"], customdata=pos0["customdata"], text=pos0.get("text"),
        marker={"color": POSITIVE, "symbol": "circle", "opacity": 0.85,
                "size": pos0["marker"]["size"], "line": {"width": 0.8, "color": "white"}}),
        row=1, col=1)
    i_neg = len(fig.data)
    fig.add_trace(go.Scatter(
        mode="markers", name="a_j < 0", legendgroup="neg", hovertemplate=hover, legendrank=2,
        x=neg0["x"], y=neg0["y"], customdata=neg0["customdata"], text=neg0.get("text"),
        marker={"color": NEGATIVE, "symbol": "square", "opacity": 0.85,
                "size": neg0["marker"]["size"], "line": {"width": 0.8, "color": "white"}}),
        row=1, col=1)
    i_cap = len(fig.data)

    def caption(f: int, top: float) -> dict:
        loss = float(traj.loss[f])
        text = (f"t = {fmt_time(float(traj.t[f]))}<br>max ‖w‖ = {top:.2g}"
                f"<br>loss = {loss:.3g}")
        return {"x": [-PANEL_LIMIT * 0.97], "y": [PANEL_LIMIT * 0.97], "text": [text]}

    fig.add_trace(go.Scatter(mode="text", textposition="bottom right", hoverinfo="skip",
                             showlegend=False, textfont={"size": style.font, "color": INK},
                             **caption(f_start, top0)), row=1, col=1)

    # -- time panels
    cursor_idx: list[int] = []
    y_ranges: list[tuple[float, float]] = []
    norm_traces, (nlo, nhi), n_curves = _norm_traces(traj, spec, max_curves, style)
    for tr in norm_traces:
        fig.add_trace(tr, row=1, col=2)
    y_ranges.append((nlo, nhi))
    t_loss, loss = _loss_series(traj)
    keep = (t_loss > 0 if spec.log else np.ones(t_loss.shape, bool)) & (loss > 0)
    fig.add_trace(go.Scatter(
        x=_f32(spec.show(t_loss[keep])), y=_typed(loss[keep], "float64"), mode="lines", name="loss",
        showlegend=False, line={"color": INK, "width": 2.5 * style.line / 2},
        hovertemplate="t = %{x:.3g}<br>loss = %{y:.3g}<extra></extra>"), row=2, col=2)
    y_ranges.append(_log_range(loss[keep], floor_decades=10.0))
    if classification:
        ta = np.asarray(traj.t, dtype=float)
        ka = ta > 0 if spec.log else np.ones(ta.shape, bool)
        fig.add_trace(go.Scatter(
            x=_f32(spec.show(ta[ka])), y=_f32(traj.accuracy[ka]), mode="lines",
            name="accuracy", showlegend=False,
            line={"color": POSITIVE, "width": 2.5 * style.line / 2, "shape": "hv"},
            hovertemplate="t = %{x:.3g}<br>accuracy = %{y:.0%}<extra></extra>"), row=3, col=2)
        y_ranges.append((-0.04, 1.06))
    for k, (lo, hi) in enumerate(y_ranges):
        cursor_idx.append(len(fig.data))
        fig.add_trace(go.Scatter(
            x=[float(spec.show(traj.t[f_start]))] * 2, y=[lo, hi], mode="lines",
            line={"color": "rgba(26,26,26,0.28)", "width": 7}, hoverinfo="skip",
            showlegend=False, name="time cursor"), row=k + 1, col=2)

    # -- axes
    lim = [-PANEL_LIMIT, PANEL_LIMIT]
    d = traj.X.shape[1]
    xname, yname = traj.plane_names
    fig.update_xaxes(range=lim, row=1, col=1, zeroline=True, zerolinecolor=GRID,
                     showgrid=False, constrain="domain", ticks="", showticklabels=False,
                     title={"text": f"{xname}" + (" (plane axis 1)" if d > 2 else ""),
                            "standoff": 4})
    fig.update_yaxes(range=lim, row=1, col=1, zeroline=True, zerolinecolor=GRID,
                     showgrid=False, scaleanchor="x", scaleratio=1, constrain="domain",
                     ticks="", showticklabels=False,
                     title={"text": f"{yname}" + (" (plane axis 2)" if d > 2 else ""),
                            "standoff": 2})
    for k, (_xa, _ya) in enumerate(time_axes):
        bottom = k == n_time - 1
        fig.update_xaxes(
            type="log" if spec.log else "linear", range=spec.range, row=k + 1, col=2,
            matches=None if k == 0 else "x2", showticklabels=bottom, gridcolor=GRID,
            exponentformat="power", dtick=1 if spec.log else None,
            title={"text": spec.title if bottom else None, "standoff": 6})
        lo, hi = y_ranges[k]
        if k < 2:
            span = math.log10(hi) - math.log10(lo)
            fig.update_yaxes(type="log", range=[math.log10(lo), math.log10(hi)], row=k + 1,
                             col=2, gridcolor=GRID, exponentformat="power",
                             dtick=1 if span <= 5 else 2 if span <= 10 else 3,
                             title={"text": time_titles[k], "standoff": 4})
        else:
            fig.update_yaxes(range=[lo, hi], row=k + 1, col=2, gridcolor=GRID,
                             tickformat=".0%", dtick=0.5,
                             title={"text": time_titles[k], "standoff": 4})

    # -- frames, slider, buttons
    frames = []
    steps = []
    for n, f in enumerate(fidx):
        f = int(f)
        pos, neg, top = _neuron_frame(traj, f, sel, scale, style, not fixed)
        tc = float(spec.show(traj.t[f]))
        data: list[dict] = [pos, neg, caption(f, top)]
        data += [{"x": [tc, tc]} for _ in cursor_idx]
        frames.append({"name": str(n), "data": [{"type": "scatter", **d} for d in data],
                       "traces": [i_pos, i_neg, i_cap, *cursor_idx]})
        steps.append(frame_step(str(n), fmt_time(float(traj.t[f]))))
    fig.frames = frames  # validated once here (arrays are typed-array specs: cheap)
    lanes = len({lab.lane for lab in time_labels(analysis, spec, style)})
    top_px = (118 if traj.status != "completed" else 96) + lanes * lane_px(style)
    bottom_px = 118
    height = style.height + lanes * lane_px(style)
    plot_px = max(height - top_px - bottom_px, 200)
    add_time_annotations(fig, analysis, time_axes, spec, style, plot_px=plot_px)
    below = -(58.0 * style.font / 15.0) / plot_px  # controls sit under the time-axis title
    fig.update_layout(**player(steps, style, below, plot_px))

    fig.update_layout(
        template="plotly_white",
        title={"text": _title(traj, style, int(sel.size)), "x": 0.005, "xanchor": "left",
               "xref": "container", "y": 1.0, "yref": "container", "yanchor": "top",
               "pad": {"t": 8}, "font": {"size": style.title, "color": INK}},
        font={"family": style.family, "size": style.font, "color": INK},
        height=height,
        margin={"l": 64, "r": 16, "t": top_px, "b": bottom_px},
        legend={"orientation": "h", "x": 0.0, "xanchor": "left",
                "y": 1.0 + (30.0 * style.font / 15.0 + lanes * lane_px(style)) / plot_px,
                "yanchor": "bottom",
                "font": {"size": style.small}, "itemsizing": "constant",
                "bgcolor": "rgba(255,255,255,0)", "tracegroupgap": 0},
        hovermode="closest",
        hoverlabel={"font": {"size": style.small}},
        paper_bgcolor="white", plot_bgcolor="white",
        uirevision="main-figure",
        meta={"frames": len(frames), "neurons_drawn": int(sel.size),
              "norm_curves": n_curves, "time_axis": spec.title,
              "frame_duration_ms": frame_ms(len(frames))},
    )
    fig.layout.annotations[0].font = {"size": style.font, "color": INK}  # panel title
    return fig


def figure_json_size(fig: go.Figure) -> int:
    """Bytes of the figure's JSON, as sent to the browser."""
    return len(fig.to_json().encode())


__all__ = [
    "Phase",
    "TimeAxisSpec",
    "TimeMarker",
    "add_time_annotations",
    "as_array",
    "figure_json_size",
    "frame_indices",
    "main_figure",
    "neuron_subset",
    "time_axis_spec",
    "time_divisor",
]


def frame_ms(n_frames: int, min_ms: int = 35) -> int:
    """Milliseconds per frame so that one pass lasts about PLAY_SECONDS (35–250 ms)."""
    return int(np.clip(PLAY_SECONDS * 1000 / max(n_frames, 1), min_ms, 250))


def frame_step(name: str, label: str, redraw: bool = False) -> dict:
    """One slider step that jumps to animation frame `name`."""
    return {"method": "animate", "label": label,
            "args": [[name], {"mode": "immediate", "transition": {"duration": 0},
                              "frame": {"duration": 0, "redraw": redraw}}]}


def player(steps: list[dict], style: Style, below: float, plot_px: float, *,
           redraw: bool = False, slider_x: float = 0.2, min_ms: int = 35) -> dict:
    """Play/Pause buttons and the time slider under the plots (layout keys `updatemenus` and
    `sliders`). One pass of the animation lasts about PLAY_SECONDS whatever the frame count."""
    play = {"frame": {"duration": frame_ms(len(steps), min_ms), "redraw": redraw},
            "fromcurrent": True, "transition": {"duration": 0}, "mode": "immediate"}
    pause = {"frame": {"duration": 0, "redraw": False}, "mode": "immediate",
             "transition": {"duration": 0}}
    return {
        "updatemenus": [{
            "type": "buttons", "direction": "left", "showactive": False,
            "x": 0.0, "xanchor": "left", "y": below, "yanchor": "top",
            "pad": {"t": 0, "r": 8}, "font": {"size": style.font},
            "buttons": [
                {"label": "▶ Play", "method": "animate", "args": [None, play]},
                {"label": "❚❚ Pause", "method": "animate", "args": [[None], pause]},
            ]}],
        "sliders": [{
            "active": 0, "steps": steps, "x": slider_x, "len": 1.0 - slider_x,
            "xanchor": "left", "y": below + 12.0 / plot_px, "yanchor": "top",
            "pad": {"t": 0, "b": 0},
            "currentvalue": {"prefix": "t = ", "font": {"size": style.font, "color": INK},
                             "xanchor": "right", "offset": 6},
            "font": {"size": 1, "color": "rgba(0,0,0,0)"},  # hide per-step tick labels
            "ticklen": 0, "minorticklen": 0, "tickcolor": "rgba(0,0,0,0)",
            "transition": {"duration": 0}}],
    }
