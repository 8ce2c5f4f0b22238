"""The 2D neuron panel shared by the main and compare figures.

Each neuron w_j is drawn at its direction in the trajectory's plane P (2 × d), at a radius
that is its norm relative to the largest in the frame ("normalised") or log‖w_j‖ on a fixed
scale ("log"), coloured by sign(a_j) and sized by norm. Static layers: reference circles, the
data as arrows (or points), the activation-cone boundaries ⟨w, x_i⟩ = 0 cut by the plane, and
the theory's directions as named rays. The unit circle is the largest neuron; the panel spans
±PANEL_LIMIT.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import plotly.graph_objects as go

from dynamics.annotations import Analysis, Direction
from dynamics.trajectory import Trajectory

from .arrays import f32, typed
from .label_layout import caption_anchor, ray_label_position
from .style import (
    DEFAULT_DIRECTION_STYLE,
    DIRECTION_STYLE,
    GRID,
    INK,
    NEGATIVE,
    NEUTRAL,
    POSITIVE,
    REGRESSION_SCALE,
    Style,
)

RadiusMode = Literal["normalised", "log"]

PANEL_LIMIT = 1.38  # half-width of the neuron panel (unit circle = the largest neuron)
RAY_LENGTH = 1.2  # theory rays end just outside the unit circle
LOG_DECADES = 8.0  # log-radius mode shows at most this many decades of ‖w_j‖
MAX_ARROWS = 40  # more data points than this are drawn as dots, not arrows
MAX_CONES = 40  # more boundaries than this are left out (they would fill the panel)
MAX_VALUE_LABELS = 6  # regression labels are written next to at most this many points


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


def neuron_frame(traj: Trajectory, f: int, sel: np.ndarray, scale: RadiusScale,
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
        cd = (f32(np.stack([sel[mask], norms[mask]], axis=1)) if with_index
              else f32(norms[mask]))
        out.append({"x": f32(xy[mask, 0]), "y": f32(xy[mask, 1]),
                    "marker": {"size": typed(np.round(size[mask]), "uint8")},
                    "customdata": cd})
    return out[0], out[1], top


def guide_traces(scale: RadiusScale, style: Style) -> list[go.Scatter]:
    """Reference circles: the unit circle (normalised) or decade rings (log)."""
    th = np.linspace(0, 2 * np.pi, 121)
    traces: list[go.Scatter] = []
    if scale.mode == "normalised":
        traces.append(go.Scatter(
            x=f32(np.cos(th)), y=f32(np.sin(th)), mode="lines", hoverinfo="skip",
            line={"color": GRID, "width": 1.5, "dash": "dot"}, showlegend=False,
            name="largest norm"))
        return traces
    decades = range(math.ceil(scale.lo), math.floor(scale.hi) + 1)
    for k in decades:
        r = scale.of_value(10.0 ** k)
        if r <= 0:
            continue
        traces.append(go.Scatter(
            x=f32(r * np.cos(th)), y=f32(r * np.sin(th)), mode="lines", hoverinfo="skip",
            line={"color": GRID, "width": 1.2, "dash": "dot"}, showlegend=False))
        traces.append(go.Scatter(
            x=[r * math.cos(math.radians(100))], y=[r * math.sin(math.radians(100))],
            mode="text", text=[f"10<sup>{k}</sup>"], hoverinfo="skip", showlegend=False,
            textfont={"size": style.small * 0.9, "color": NEUTRAL}))
    return traces


def cone_trace(traj: Trajectory, analysis: Analysis | None) -> go.Scatter | None:
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


def data_traces(traj: Trajectory, style: Style) -> list[go.Scatter]:
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
            legendrank=5, meta={"data": True},
            legendgroup=name, text=text, textposition="top center",
            textfont={"size": style.small, "color": INK}, hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>"))
    return traces


def direction_traces(traj: Trajectory, analysis: Analysis | None,
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
            textposition=ray_label_position(float(end[0]), float(end[1])),
            textfont={"size": style.small * (1.0 if is_signal else 1.1),
                      "color": str(st["color"])},
            line={"color": str(st["color"]), "dash": str(st["dash"]),
                  "width": float(st["width"]) * style.line / 2},
            name=legend_name, legendgroup=d.kind, legendrank=20, cliponaxis=False,
            showlegend=show, hovertemplate=f"{hname}{note}{off_plane}<extra></extra>",
            meta={"direction": hname, "kind": d.kind}, opacity=0.8 if is_signal else 1.0))
    return traces


def neuron_marker(colour: str, symbol: str, size: object) -> dict:
    """Marker of the moving neuron traces (a white rim keeps overlapping neurons apart)."""
    return {"color": colour, "symbol": symbol, "opacity": 0.85, "size": size,
            "line": {"width": 0.8, "color": "white"}}


def caption_xy(corner: str) -> dict:
    """Position and textposition of a frame caption in a corner of the panel ("top left", …;
    `label_layout.caption_anchor`)."""
    x, y, pos = caption_anchor(corner, PANEL_LIMIT)
    return {"x": [x], "y": [y], "textposition": pos}


__all__ = ["LOG_DECADES", "MAX_ARROWS", "MAX_CONES", "PANEL_LIMIT", "RAY_LENGTH", "RadiusMode",
           "RadiusScale", "caption_xy", "cone_trace", "data_traces", "direction_traces",
           "guide_traces", "neuron_frame", "neuron_marker", "neuron_subset", "radius_scale"]
