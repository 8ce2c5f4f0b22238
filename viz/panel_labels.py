"""The neuron panel's named things: theory rays (coinciding directions merged into one ray),
their labels and the regression values placed on the rim (`viz.rim_labels`) with leader
lines, and the log-radius rings' tick labels.

Words come from `viz.wording` ("where positive neurons go"); every symbol and note is in the
hover of the ray and of its label. Pure: Trajectory (+ Analysis) in, Plotly traces out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dynamics.annotations import Analysis, Direction
from dynamics.trajectory import Trajectory

from .label_layout import text_px
from .neuron_panel import (
    ARROW_SCALE,
    MAX_VALUE_LABELS,
    PANEL_LIMIT,
    RAY_LENGTH,
    RadiusScale,
    data_xy,
)
from .rim_labels import Placed, Rim, RimLabel, clear_radius, place_rim
from .style import DEFAULT_DIRECTION_STYLE, DIRECTION_STYLE, INK, Style
from .wording import direction_words

LEADER = "#8C8C8C"  # leader lines from rim labels to what they name


def value_labels(traj: Trajectory, style: Style) -> list[RimLabel]:
    """Rim labels "y = 1.3" of regression targets (at most MAX_VALUE_LABELS points), each
    pointing at its data point."""
    y = np.asarray(traj.y, dtype=float)
    if y.size == 0 or y.size > MAX_VALUE_LABELS or np.all(np.isin(y, (-1.0, 1.0))):
        return []
    out = []
    for i, (p, v) in enumerate(zip(data_xy(traj), y, strict=True)):
        r = float(np.hypot(*p))
        if r < 1e-9:
            continue
        out.append(RimLabel([f"y = {v:.2g}"], [(float(p[0]) / r, float(p[1]) / r)],
                            label_size(style), INK, f"data point x<sub>{i + 1}</sub>: y = {v:.4g}",
                            f"value:{i}"))
    return out


@dataclass
class RayGroup:
    """Directions that coincide in the plane, drawn as one ray: unit vector `u` in the plane,
    `length` (< 1 when the directions leave the plane), the members (most important first)
    and the words naming them."""

    u: np.ndarray
    length: float
    members: list[Direction]
    words: str
    rank: int
    v: np.ndarray  # the unit direction in input space (groups merge on it)


def ray_groups(traj: Trajectory, analysis: Analysis | None) -> list[RayGroup]:
    """The analysis' directions and the data's signal directions, projected onto the plane and
    merged where they coincide in input space (cos > 0.9995): one ray, one label, every name in
    its hover."""
    P = np.asarray(traj.plane, dtype=float)
    items: list[Direction] = list(analysis.directions) if analysis is not None else []
    names = {d.name for d in items}
    for name, v in traj.directions.items():
        if name not in names and name.removesuffix(" signal") not in names:
            items.append(Direction(name=name, vector=np.asarray(v, dtype=float), kind="signal"))
    groups: list[RayGroup] = []
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
        words, rank = direction_words(d)
        full = v / nv
        same = next((g for g in groups if float(g.v @ full) > 0.9995), None)
        if same is None:
            groups.append(RayGroup(u / lu, lu, [d], words, rank, full))
        else:
            same.members.append(d)
            if rank < same.rank:
                same.words, same.rank = words, rank
    for g in groups:
        g.members.sort(key=lambda d: direction_words(d)[1])
    return groups


def direction_traces(traj: Trajectory, analysis: Analysis | None, style: Style,
                     length: float = RAY_LENGTH) -> list[dict]:
    """One ray per direction group (`ray_groups`) from the origin to `length` (times its
    in-plane share), styled by its most important member's kind, named in words; the hover
    gives every member's symbol and note. No text: `ray_labels` names them on the rim."""
    traces: list[dict] = []
    for g in ray_groups(traj, analysis):
        kind = g.members[0].kind
        st = DIRECTION_STYLE.get(kind, DEFAULT_DIRECTION_STYLE)
        end = g.u * g.length * length
        names = ", ".join(d.name for d in g.members)
        notes = "".join(f"<br>{d.name}: {d.note}" if d.note else f"<br>{d.name}"
                        for d in g.members)
        off_plane = f"<br>{g.length:.0%} in the plane" if g.length < 0.99 else ""
        traces.append({
            "type": "scatter", "x": [0.0, round(float(end[0]), 5)],
            "y": [0.0, round(float(end[1]), 5)], "mode": "lines",
            "line": {"color": str(st["color"]), "dash": str(st["dash"]),
                     "width": float(st["width"]) * style.line / 2},
            "name": g.words, "legendgroup": f"ray:{g.words}", "legendrank": 20 + g.rank,
            "showlegend": False, "cliponaxis": False,
            "hovertemplate": f"<b>{g.words}</b>{notes}{off_plane}<extra></extra>",
            "meta": {"direction": names, "kind": kind, "words": g.words, "rank": g.rank,
                     "u": [float(g.u[0]), float(g.u[1])]},
            "opacity": 0.8 if kind == "signal" else 1.0})
    return traces


def label_size(style: Style) -> float:
    """Font size of the panel's rim labels: the small size, a little less on a projector (the
    rim holds more of them)."""
    return style.small * (0.8 if style.small > 16 else 1.0)


def ray_labels(rays: Sequence[dict], style: Style) -> list[RimLabel]:
    """One rim label per distinct words among the `rays` (most important first), pointing at
    every ray it names; long words may wrap onto two or three lines."""
    by_words: dict[str, list[dict]] = {}
    for tr in sorted(rays, key=lambda t: t["meta"]["rank"]):
        by_words.setdefault(tr["meta"]["words"], []).append(tr)
    out = []
    for words, trs in by_words.items():
        colour = str(trs[0]["line"]["color"])
        hover = "<br>".join(str(t["hovertemplate"]).removesuffix("<extra></extra>")
                            for t in trs)
        out.append(RimLabel(wrap_lines(words), [tuple(t["meta"]["u"]) for t in trs],
                            label_size(style), colour, hover, f"ray:{words}"))
    return out


def wrap_lines(text: str) -> list[str]:
    """`text` on one line, then on two and three lines of about equal length (at spaces)."""
    words = text.split(" ")
    out = [text]
    for n in (2, 3):
        if len(words) < n:
            break
        best = None
        for cuts in _splits(len(words), n):
            lines = [" ".join(words[a:b]) for a, b in zip((0, *cuts), (*cuts, len(words)),
                                                           strict=True)]
            w = max(len(x) for x in lines)
            if best is None or w < best[0]:
                best = (w, "<br>".join(lines))
        if best is not None:
            out.append(best[1])
    return out


def _splits(n: int, parts: int) -> list[tuple[int, ...]]:
    if parts == 2:
        return [(k,) for k in range(1, n)]
    return [(a, b) for a in range(1, n - 1) for b in range(a + 1, n)]


def rim_traces(placed: Sequence[Placed]) -> list[dict]:
    """The placed rim labels as one text trace (boxes centred on their spots, hover = what
    they name) and their leader lines as one thin line trace."""
    if not placed:
        return []
    lx: list[float | None] = []
    ly: list[float | None] = []
    for p in placed:
        for (ax, ay), (bx, by) in p.leaders:
            lx += [ax, bx, None]
            ly += [ay, by, None]
    out = []
    if lx:
        out.append({"type": "scatter", "x": lx, "y": ly, "mode": "lines", "hoverinfo": "skip",
                    "showlegend": False, "name": "leader lines",
                    "line": {"color": LEADER, "width": 1}})
    out.append({
        "type": "scatter", "x": [p.centre[0] for p in placed],
        "y": [p.centre[1] for p in placed], "mode": "text",
        "text": [p.text for p in placed], "textposition": "middle center",
        "showlegend": False, "name": "panel labels", "cliponaxis": False,
        "textfont": {"size": [p.label.size for p in placed],
                     "color": [p.label.colour for p in placed]},
        "hovertext": [p.label.hover for p in placed],
        "hovertemplate": "%{hovertext}<extra></extra>", "meta": {"rim": True}})
    return out


def ring_ticks(scale: RadiusScale, size: float, unit_px: float) -> tuple[list[float], list[str]]:
    """Log-radius mode: the decade rings' radii and names ("10⁻³") for the panel's x axis,
    thinned from the outside in so that no two tick labels touch."""
    if scale.mode != "log":
        return [], []
    vals: list[float] = []
    texts: list[str] = []
    last = math.inf
    for k in range(math.floor(scale.hi), math.ceil(scale.lo) - 1, -1):
        r = scale.of_value(10.0 ** k)
        if r <= 0:
            continue
        text = f"10<sup>{k}</sup>"
        half = (text_px(f"10{k}", size)[0] / 2 + 3) / unit_px
        if last - r >= 2 * half:
            vals.append(r)
            texts.append(text)
            last = r
    return vals[::-1], texts[::-1]


def panel_overlays(traj: Trajectory, analysis: Analysis | None, style: Style,
                   unit_px: float, size: float = 1.0) -> tuple[list[dict], list[dict]]:
    """The neuron panel's rays and their rim labels with leaders (`viz.rim_labels`) for a
    panel at least `unit_px` pixels per data unit, label fonts scaled by `size`: (ray traces,
    label traces). A ray whose label found no room is named in the legend instead."""
    clear = clear_radius(unit_px, style.marker_max * ARROW_SCALE)
    rays = direction_traces(traj, analysis, style, length=clear)
    labels = [*ray_labels(rays, style), *value_labels(traj, style)]
    for lab in labels:
        lab.size *= size
    placed, hidden = place_rim(labels,
                               Rim(PANEL_LIMIT, unit_px, clear))
    names = {lab.name for lab in hidden}
    named: set[str] = set()
    for tr in rays:  # rays of one name share a legend group: one entry toggles them all
        words = tr["meta"]["words"]
        if f"ray:{words}" in names and words not in named:
            tr["showlegend"] = True
            named.add(words)
    return rays, rim_traces(placed)


def caption_below(texts: Sequence[str], style: Style, size: float | None = None) -> dict:
    """The frame caption (time, largest norm) under the neuron panel, `texts[k]` at frame k:
    no neuron goes there (the scene adds the texts as its track)."""
    return {"type": "scatter", "x": [0.0], "y": [-PANEL_LIMIT], "mode": "text",
            "text": [texts[0] if texts else ""], "textposition": "bottom center",
            "cliponaxis": False, "hoverinfo": "skip", "showlegend": False,
            "name": "frame caption", "textfont": {"size": size or style.small, "color": INK}}


__all__ = [
    "LEADER",
    "RayGroup",
    "caption_below",
    "direction_traces",
    "label_size",
    "panel_overlays",
    "ray_groups",
    "ray_labels",
    "rim_traces",
    "ring_ticks",
    "value_labels",
    "wrap_lines",
]
