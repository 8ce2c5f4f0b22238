"""The 2D neuron panel shared by the main and compare figures.

Each neuron w_j is drawn at its direction in the trajectory's plane P (2 × d), at a radius
that is its norm relative to the largest in the frame ("normalised") or log‖w_j‖ on a fixed
scale ("log"), coloured by sign(a_j) and sized by norm. Static layers: reference circles, the
data as arrows (or points) and the activation-cone boundaries ⟨w, x_i⟩ = 0 cut by the plane;
the theory's rays and every label are in `viz.panel_labels`. The unit circle is the largest
neuron, and nothing a frame draws goes beyond it but the rays and the labels on the rim; the
panel spans ±PANEL_LIMIT.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dynamics.annotations import Analysis
from dynamics.trajectory import Trajectory

from .options import Radius
from .scene import R_MIN, U_SCALE, Panel, Scene
from .style import (
    GRID,
    INK,
    NEGATIVE,
    POSITIVE,
    REGRESSION_SCALE,
    Style,
)
from .wording import LEGEND_WORDS

PANEL_LIMIT = 1.5  # half-width of the neuron panel (unit circle = the largest neuron)
RAY_LENGTH = 1.1  # theory rays end just outside the unit circle (figures: the labels' ring)
ARROW_SCALE = 1.05  # data arrow heads: this × the largest neuron marker
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

    mode: Radius
    lo: float = 0.0  # log10 norm drawn at radius R_MIN (log mode)
    hi: float = 0.0  # log10 norm drawn at radius 1 (log mode)

    R_MIN = R_MIN

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


def radius_scale(traj: Trajectory, mode: Radius) -> RadiusScale:
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


def _lst(v: np.ndarray, digits: int = 4) -> list[float]:
    """Short coordinates for the JSON of a static trace (4 decimals: < 0.1 px on a panel)."""
    return np.round(np.asarray(v, dtype=float), digits).tolist()


@dataclass(frozen=True)
class NeuronLook:
    """How the moving neurons are drawn: radii by `scale`, marker sizes from `style`, as
    `traces` (a_j ≥ 0, a_j < 0; `neuron_traces`)."""

    scale: RadiusScale
    style: Style
    traces: Sequence[dict]


def neurons_item(scene: Scene, panel: Panel, traj: Trajectory, fidx: np.ndarray,
                 sel: np.ndarray, look: NeuronLook, prefix: str = "",
                 norms_ref: tuple[dict, np.ndarray, np.ndarray] | None = None) -> dict:
    """The neuron panel's moving neurons (`Scene` item ``neurons``): the run's in-plane unit
    vectors at the animation frames `fidx` for the neurons `sel`, their norms and signs, drawn
    as `look` says. `norms_ref` = (reference, rows of the animation frames, columns of `sel`)
    when the run's norms are in the scene already (the norm curves')."""
    scale, style = look.scale, look.style
    proj = np.asarray(traj.proj, dtype=float)[np.ix_(fidx, sel)]
    norms = np.asarray(traj.norms, dtype=float)
    nsel = norms[np.ix_(fidx, sel)]
    good = np.isfinite(nsel) & np.all(np.isfinite(proj), axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(good[..., None] & (nsel[..., None] > 0), proj / nsel[..., None], 0.0)
    a = np.asarray(traj.a, dtype=float)[np.ix_(fidx, sel)]
    sign = np.where(a >= 0, 1, -1)
    fixed = bool(np.all(sign == sign[:1])) if sign.size else True
    if norms_ref is None:
        ref_n = scene.array(f"{prefix}norms_n", np.where(good, nsel, np.nan))
        rows, cols = np.arange(fidx.size), np.arange(sel.size)
    else:
        ref_n, rows, cols = norms_ref
    item = scene.add(
        "neurons", panel, look.traces, swap=True,
        u=scene.array(f"{prefix}u", np.round(np.clip(u, -1, 1) * U_SCALE), "i2"),
        norms=ref_n, rows=scene.array(f"{prefix}rows", rows, "i4"),
        cols=scene.array(f"{prefix}cols", cols, "i4"),
        sign=scene.array(f"{prefix}sign", sign[:1] if fixed else sign, "i1"),
        index=scene.array(f"{prefix}index", sel, "i4"),
        radius={"mode": scale.mode, "lo": scale.lo, "hi": scale.hi},
        size=[style.marker_min, style.marker_max])
    return item


def neuron_traces(pos_name: str, neg_name: str, hover: tuple[str, str], style: Style,
                  showlegend: bool = True) -> list[dict]:
    """The static properties of the two moving neuron traces (a_j ≥ 0 blue circles, a_j < 0
    vermillion squares); `hover` their hover templates (the player fills customdata with
    (neuron, ‖w_j‖))."""
    out = []
    for name, group, colour, symbol, hov, rank in (
            (pos_name, "pos", POSITIVE, "circle", hover[0], 1),
            (neg_name, "neg", NEGATIVE, "square", hover[1], 2)):
        out.append({"type": "scatter", "mode": "markers", "name": name, "legendgroup": group,
                    "legendrank": rank, "showlegend": showlegend, "hovertemplate": hov,
                    "marker": neuron_marker(colour, symbol, style.marker_min)})
    return out


def guide_traces(scale: RadiusScale, style: Style) -> list[dict]:
    """Reference circles: the unit circle (normalised) or decade rings (log; their values are
    the panel's x tick labels, `ring_ticks`, and on hover)."""
    th = np.linspace(0, 2 * np.pi, 121)
    traces: list[dict] = []
    if scale.mode == "normalised":
        traces.append({"type": "scatter",
            "x": _lst(np.cos(th)), "y": _lst(np.sin(th)), "mode": "lines", "hoverinfo": "skip",
            "line": {"color": GRID, "width": 1.5, "dash": "dot"}, "showlegend": False,
            "name": "largest norm"})
        return traces
    decades = range(math.ceil(scale.lo), math.floor(scale.hi) + 1)
    for k in decades:
        r = scale.of_value(10.0 ** k)
        if r <= 0:
            continue
        traces.append({"type": "scatter",
            "x": _lst(r * np.cos(th[::6])), "y": _lst(r * np.sin(th[::6])), "mode": "lines",
            "line": {"color": GRID, "width": 1.2, "dash": "dot"}, "showlegend": False,
            "name": f"‖w_j‖ = 10^{k}", "hovertemplate": f"ring: ‖w_j‖ = 10<sup>{k}</sup>"
                                                        "<extra></extra>"})
    return traces


def cone_trace(traj: Trajectory, analysis: Analysis | None) -> dict | None:
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
        xs += [round(-L * p[0], 5), round(L * p[0], 5), None]
        ys += [round(-L * p[1], 5), round(L * p[1], 5), None]
    if not seen:
        return None
    return {"type": "scatter", "x": xs, "y": ys, "mode": "lines", "name": LEGEND_WORDS["cones"],
            "legendrank": 30, "line": {"color": "#9A9A9A", "width": 1.3, "dash": "dot"},
            "hoverinfo": "skip", "legendgroup": "cones"}


def data_traces(traj: Trajectory, style: Style) -> list[dict]:
    """The data projected onto the plane, scaled so the longest x_i has length 1: arrows from
    the origin (dots beyond MAX_ARROWS points), blue for label +1, vermillion for −1, a
    light-to-dark scale for regression targets (their values are labelled on the rim:
    `value_labels`)."""
    X = np.asarray(traj.X, dtype=float)
    y = np.asarray(traj.y, dtype=float)
    if X.size == 0:
        return []
    xy = data_xy(traj)
    n = X.shape[0]
    traces: list[dict] = []
    arrows = n <= MAX_ARROWS
    classification = bool(np.all(np.isin(y, (-1.0, 1.0))))
    if classification:  # one legend entry: the arrows' colours are the neurons' colours
        groups = [(y > 0, POSITIVE, LEGEND_WORDS["data±"]), (y < 0, NEGATIVE,
                                                            LEGEND_WORDS["data±"])]
    else:
        groups = [(np.ones(n, bool), None, LEGEND_WORDS["data"])]
    shown = False
    for mask, colour, name in groups:
        if not mask.any():
            continue
        pts = xy[mask]
        lab = y[mask]
        idx = np.flatnonzero(mask)
        hover = [f"data point x<sub>{i + 1}</sub>, label y = {v:.3g}"
                 for i, v in zip(idx, lab, strict=True)]
        if arrows:
            lx: list[float | None] = []
            ly: list[float | None] = []
            for px, py in np.round(pts, 5).tolist():
                lx += [0.0, px, None]
                ly += [0.0, py, None]
            traces.append({"type": "scatter",
                "x": lx, "y": ly, "mode": "lines", "hoverinfo": "skip", "showlegend": False,
                "legendgroup": "data", "line": {"color": colour or INK, "width": style.line * 1.1},
                "opacity": 0.75})
            angles = 90.0 - np.degrees(np.arctan2(pts[:, 1], pts[:, 0]))
            marker: dict = {"symbol": "arrow", "size": style.marker_max * ARROW_SCALE,
                            "angle": _lst(angles, 3), "line": {"width": 0}}
        else:
            marker = {"symbol": "diamond", "size": style.marker_min, "opacity": 0.55,
                      "line": {"width": 0}}
        if colour is not None:
            marker["color"] = colour
        else:
            marker.update({"color": _lst(lab, 6), "colorscale": REGRESSION_SCALE,
                           "showscale": False})
        traces.append({"type": "scatter",
            "x": _lst(pts[:, 0], 5), "y": _lst(pts[:, 1], 5), "mode": "markers",
            "marker": marker, "name": name, "legendrank": 5, "meta": {"data": True},
            "legendgroup": "data", "showlegend": not shown, "hovertext": hover,
            "hovertemplate": "%{hovertext}<extra></extra>"})
        shown = True
    return traces


def data_xy(traj: Trajectory) -> np.ndarray:
    """(n, 2) data points in the panel (projected, the longest scaled to length 1)."""
    X = np.asarray(traj.X, dtype=float)
    P = np.asarray(traj.plane, dtype=float)
    scale = float(np.linalg.norm(X, axis=1).max()) if X.size else 1.0
    return (X @ P.T) / (scale or 1.0)


def neuron_marker(colour: str, symbol: str, size: object) -> dict:
    """Marker of the moving neuron traces (a white rim keeps overlapping neurons apart)."""
    return {"color": colour, "symbol": symbol, "opacity": 0.85, "size": size,
            "line": {"width": 0.8, "color": "white"}}


__all__ = ["ARROW_SCALE", "LOG_DECADES", "MAX_ARROWS", "MAX_CONES", "MAX_VALUE_LABELS",
           "PANEL_LIMIT", "RAY_LENGTH", "NeuronLook", "RadiusScale", "cone_trace",
           "data_traces", "data_xy", "guide_traces", "neuron_marker", "neuron_subset",
           "neuron_traces", "neurons_item", "radius_scale"]
