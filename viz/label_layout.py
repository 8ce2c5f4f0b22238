"""Text that must not collide: estimated text boxes and label placement in the neuron panel.

Plotly lays text out in the browser, so the figures estimate it here: a line of n characters
at font size s is n·CHAR_EM·s pixels wide and LINE_EM·s tall (conservative for the sans-serif
fonts of `style.Style.family`). The neuron panel (±PANEL_LIMIT in data units) is assumed to be
PANEL_PX pixels wide: the narrowest it gets at a 1280 px browser window beside the sidebar,
so boxes in data units are as large as they ever are on screen.

`place_panel_labels` moves the panel's labels (theory rays, data values, log-radius rings)
to positions where their boxes overlap neither each other nor the frame caption ("t, max ‖w‖,
loss"), wrapping long names onto two lines and hiding, as a last resort, a label that fits
nowhere (its name stays in the ray's hover). `panel_text_boxes` recomputes every text box of
a finished figure from its spec (the tests check them pairwise). Titles and legends:
`viz.header`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from .animation import AnimatedFigure

CHAR_EM = 0.58  # mean character width / font size (DejaVu/Inter/Arial, a little generous)
LINE_EM = 1.25  # line height / font size
PANEL_PX = 300.0  # on-screen width of the neuron panel's ±PANEL_LIMIT square (a lower bound)
TEXT_PAD_PX = 3.0  # plotly's gap between a point and its text

POSITIONS = ("top left", "top center", "top right", "middle left", "middle right",
             "bottom left", "bottom center", "bottom right")
_TAG = re.compile(r"<[^>]+>")
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)


@dataclass(frozen=True)
class Box:
    """An axis-aligned box [x0, x1] × [y0, y1] (data units or pixels)."""

    x0: float
    x1: float
    y0: float
    y1: float

    def overlaps(self, other: Box) -> bool:
        return (self.x0 < other.x1 and other.x0 < self.x1
                and self.y0 < other.y1 and other.y0 < self.y1)

    def inside(self, other: Box, tol: float = 1e-9) -> bool:
        return (self.x0 >= other.x0 - tol and self.x1 <= other.x1 + tol
                and self.y0 >= other.y0 - tol and self.y1 <= other.y1 + tol)

    def crosses_segment(self, a: tuple[float, float], b: tuple[float, float]) -> bool:
        """Whether the segment a–b passes through the box (Liang–Barsky clipping)."""
        (ax, ay), (bx, by) = a, b
        dx, dy = bx - ax, by - ay
        lo, hi = 0.0, 1.0
        for p, q in ((-dx, ax - self.x0), (dx, self.x1 - ax), (-dy, ay - self.y0),
                     (dy, self.y1 - ay)):
            if p == 0:
                if q < 0:
                    return False
                continue
            r = q / p
            if p < 0:
                lo = max(lo, r)
            else:
                hi = min(hi, r)
            if lo > hi:
                return False
        return True


def text_lines(text: str) -> list[str]:
    """The lines of a plotly text (split at <br>, tags removed)."""
    return [_TAG.sub("", line) for line in _BR.split(text or "")]


def text_px(text: str, size: float) -> tuple[float, float]:
    """Estimated (width, height) in pixels of `text` at font size `size`."""
    lines = text_lines(text)
    return max(len(line) for line in lines) * CHAR_EM * size, len(lines) * LINE_EM * size


def text_box(x: float, y: float, text: str, size: float, position: str, unit_px: float,
             pad_px: float = TEXT_PAD_PX) -> Box:
    """Box in data units of `text` drawn at (x, y) with plotly's `textposition`
    ("top left" = above and to the left of the point); `unit_px` pixels per data unit."""
    w, h = (v / unit_px for v in text_px(text, size))
    pad = pad_px / unit_px
    vert, _, horiz = position.partition(" ")
    horiz = horiz or "center"
    if horiz == "left":
        x0 = x - pad - w
    elif horiz == "right":
        x0 = x + pad
    else:
        x0 = x - w / 2
    if vert == "top":
        y0 = y + pad
    elif vert == "bottom":
        y0 = y - pad - h
    else:
        y0 = y - h / 2
    return Box(x0, x0 + w, y0, y0 + h)


def wrap_variants(text: str) -> list[str]:
    """`text`, then split onto two lines at the comma nearest its middle (if it has one)."""
    parts = text.split(", ")
    out = [text]
    if len(parts) >= 2:
        best = min(range(1, len(parts)), key=lambda k: abs(len(", ".join(parts[:k]))
                                                           - len(", ".join(parts[k:]))))
        out.append(", ".join(parts[:best]) + ",<br>" + ", ".join(parts[best:]))
    return out


def wrap_to_px(text: str, size: float, max_px: float, sep: str = " ") -> list[str]:
    """The parts of `text` between `sep`s regrouped into lines no wider than `max_px` (a long
    part gets a line of its own)."""
    lines: list[str] = []
    for word in text.split(sep):
        if lines and text_px(f"{lines[-1]}{sep}{word}", size)[0] <= max_px:
            lines[-1] = f"{lines[-1]}{sep}{word}"
        else:
            lines.append(word)
    return lines or [""]


# ----------------------------------------------------------------------------- placement
@dataclass
class _Item:
    trace: go.Scatter
    point: int  # index in the trace's text array
    anchors: list[tuple[float, float]]
    text: str
    size: float
    pad_px: float
    first: str  # preferred textposition
    ray: tuple[float, float] | None  # the label's own ray end (avoid covering the ray)
    movable: bool = True


def ray_label_position(x: float, y: float) -> str:
    """Beside a ray's tip, extending back over the panel (not out of it)."""
    vert = "top" if y > 0.25 else "bottom" if y < -0.25 else "middle"
    horiz = "left" if x > 0.25 else "right" if x < -0.25 else "center"
    pos = f"{vert} {horiz}"
    return "top center" if pos == "middle center" else pos


def _candidates(item: _Item, unit_px: float) -> Iterable[tuple[int, str, str, Box]]:
    variants = wrap_variants(item.text) if item.movable else [item.text]
    for a, (ax, ay) in enumerate(item.anchors):
        for text in variants:
            boxes = [(p, text_box(ax, ay, text, item.size, p, unit_px, item.pad_px))
                     for p in ((item.first,) if not item.movable else POSITIONS)]

            def rank(pb: tuple[str, Box], ax: float = ax, ay: float = ay) -> tuple:
                p, b = pb
                crosses = item.ray is not None and b.crosses_segment((0.0, 0.0), item.ray)
                cx, cy = (b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2
                return (p != item.first, crosses, math.hypot(cx, cy))

            for p, b in sorted(boxes, key=rank):
                yield a, p, text, b


def _items(traces: Sequence[go.Scatter], style_small: float) -> list[_Item]:
    """The movable labels of the panel's traces, most important first."""
    rank = {"extremal_max": 0, "extremal_min": 1, "target": 2, "teacher": 3,
            "extremal_saddle": 4, "signal": 6}
    out: list[tuple[float, _Item]] = []
    for tr in traces:
        if tr.text is None or tr.name == "frame caption":
            continue
        texts = [tr.text] if isinstance(tr.text, str) else list(tr.text)
        size = float(tr.textfont.size or style_small) if tr.textfont else style_small
        meta = tr.meta if isinstance(tr.meta, dict) else {}
        xs, ys = list(tr.x), list(tr.y)
        if "direction" in meta:  # a theory ray: label at its tip, or further in
            k = next(i for i, t in enumerate(texts) if t)
            ex, ey = float(xs[k]), float(ys[k])
            anchors = [(ex * f, ey * f) for f in (1.0, 0.8, 0.6, 0.4)]
            item = _Item(tr, k, anchors, texts[k], size, TEXT_PAD_PX,
                         ray_label_position(ex, ey), (ex, ey))
            out.append((rank.get(str(meta.get("kind")), 5), item))
            continue
        mode = tr.mode or ""
        pad = TEXT_PAD_PX + (float(tr.marker.size) / 2 if "markers" in mode
                             and isinstance(tr.marker.size, int | float) else 0.0)
        ring = mode == "text"  # log-radius ring labels: fixed spots, shown if they fit
        for k, t in enumerate(texts):
            if not t:
                continue
            x, y = float(xs[k]), float(ys[k])
            first = tr.textposition if isinstance(tr.textposition, str) else "top center"
            out.append((8 if ring else 7, _Item(tr, k, [(x, y)], t, size, pad, first,
                                                (x, y) if not ring else None, not ring)))
    out.sort(key=lambda ri: ri[0])
    return [item for _, item in out]


def place_panel_labels(traces: Sequence[go.Scatter], obstacles: Sequence[Box], *,
                       limit: float, small: float,
                       unit_px: float | None = None) -> tuple[int, int, int]:
    """Move the text of the neuron panel's `traces` so that no two labels overlap each other
    or an obstacle (the frame caption) and all stay inside ±limit. Tries, in order: each
    anchor (a ray's tip, then points further in), one line then two, the preferred position
    then the others; of the boxes that fit, the one crossing the fewest rays and data arrows
    wins (neurons gather along them). A label that fits nowhere is hidden (its name stays in
    the hover). Edits the traces; returns (labels hidden, labels moved in from their tip,
    crossings of rays and arrows): lower is better."""
    unit = unit_px or PANEL_PX / (2 * limit)
    bounds = Box(-limit, limit, -limit, limit)
    segments = panel_segments(traces)
    placed: list[Box] = list(obstacles)
    hidden = inner = crossings = 0
    positions: dict[int, list[str]] = {}
    for item in _items(traces, small):
        tr = item.trace
        texts = [tr.text] if isinstance(tr.text, str) else list(tr.text)
        pos = positions.setdefault(id(tr), [
            tr.textposition if isinstance(tr.textposition, str) else "top center"] * len(texts))
        # of the boxes that fit: at the tip if possible, then crossing the fewest rays and
        # arrows (neurons gather along them), then the earliest
        fits = [(a > 0, sum(b.crosses_segment((0.0, 0.0), s) for s in segments), k,
                 (a, p, t, b))
                for k, (a, p, t, b) in enumerate(_candidates(item, unit))
                if b.inside(bounds) and not any(b.overlaps(o) for o in placed)]
        choice = min(fits)[3] if fits else None
        if choice is None:
            texts[item.point] = ""
            hidden += 1
        else:
            inner += int(min(fits)[0])
            crossings += min(fits)[1]
            a, p, t, b = choice
            placed.append(b)
            pos[item.point] = p
            texts[item.point] = t
            if a > 0:  # a point further in along the ray carries the label
                ax, ay = item.anchors[a]
                tr.x = [0.0, ax, float(tr.x[-1])]
                tr.y = [0.0, ay, float(tr.y[-1])]
                texts, pos = ["", t, ""], [p, p, p]
                positions[id(tr)] = pos
        tr.text = texts
        tr.textposition = pos if len(set(pos)) > 1 else pos[0]
        if not any(texts) and "+text" in (tr.mode or ""):
            tr.mode = tr.mode.replace("+text", "")
    return hidden, inner, crossings


def caption_anchor(corner: str, limit: float) -> tuple[float, float, str]:
    """(x, y, textposition) of a frame caption in `corner` ("top left", "bottom right", …;
    "top"/"bottom" alone: the left ones) of the ±limit panel: text runs into the panel."""
    vert, _, horiz = corner.partition(" ")
    horiz = horiz or "left"
    x = -limit * 0.97 if horiz == "left" else limit * 0.97
    y = limit * 0.97 if vert == "top" else -limit * 0.97
    pos = f"{'bottom' if vert == 'top' else 'top'} {'right' if horiz == 'left' else 'left'}"
    return x, y, pos


def caption_box(corner: str, text: str, size: float, limit: float,
                unit_px: float | None = None) -> Box:
    """Box of the frame caption `text` in `corner` of the ±limit panel."""
    x, y, pos = caption_anchor(corner, limit)
    return text_box(x, y, text, size, pos, unit_px or PANEL_PX / (2 * limit), 0.0)


# the widest frame caption there can be (t and loss to 3 significant digits, max ‖w‖ to 2)
CAPTION_TEMPLATE = "t = 1.23e+03<br>max ‖w‖ = 1.2e-05<br>loss = 1.23e-12"


def panel_segments(traces: Sequence[go.Scatter]) -> list[tuple[float, float]]:
    """Ends of the panel's rays (theory directions, cut at the unit circle, beyond which no
    neuron goes) and of its data arrows; each segment starts at the origin."""
    out: list[tuple[float, float]] = []
    for tr in traces:
        meta = tr.meta if isinstance(tr.meta, dict) else {}
        if "direction" in meta:
            ex, ey = float(tr.x[-1]), float(tr.y[-1])
            r = max(math.hypot(ex, ey), 1.0)
            out.append((ex / r, ey / r))
        elif meta.get("data") and len(tr.x) <= 40:  # arrows; a cloud of dots is no ray
            out += [(float(x), float(y)) for x, y in zip(tr.x, tr.y, strict=False)
                    if x is not None and y is not None]
    return out


def layout_panel(traces: Sequence[go.Scatter], *, limit: float, small: float,
                 caption_size: float, prefer: Sequence[str], unit_px: float | None = None,
                 captions: Sequence[str] = (CAPTION_TEMPLATE,)) -> str:
    """Put the frame caption in the corner (of `prefer`) where the panel's labels fit best
    around it — fewest hidden, then fewest moved in from their tips, then fewest crossings of
    rays and arrows by labels and caption — and place the labels (`place_panel_labels`);
    returns the corner. `captions`: the frame captions (the widest counts); `unit_px`:
    pixels per data unit (default: a PANEL_PX-wide panel)."""
    widest = max(captions, key=lambda t: text_px(t, 1.0)[0])
    segments = panel_segments(traces)

    def score(corner: str) -> tuple:
        box = caption_box(corner, widest, caption_size, limit, unit_px)
        trial = [go.Scatter(tr) for tr in traces]
        hidden, inner, cross = place_panel_labels(trial, [box], limit=limit, small=small,
                                                  unit_px=unit_px)
        cross += sum(box.crosses_segment((0.0, 0.0), s) for s in segments)
        return hidden, inner, cross, list(prefer).index(corner)

    corner = min(prefer, key=score)
    box = caption_box(corner, widest, caption_size, limit, unit_px)
    place_panel_labels(traces, [box], limit=limit, small=small, unit_px=unit_px)
    return corner


# ----------------------------------------------------------------------------- spec boxes
def _frame_texts(fig: AnimatedFigure, index: int) -> list[str]:
    out: list[str] = []
    for tr in fig.animation.tracks:
        if tr.trace == index and tr.attr == "text" and tr.texts is not None:
            for t in tr.texts:
                out += [t] if isinstance(t, str) else list(t or ())
    return out


def panel_text_boxes(fig: go.Figure | AnimatedFigure, xaxis: str = "x",
                     unit_px: float | None = None,
                     limit: float = 1.38) -> list[tuple[str, Box]]:
    """(text, box) of every text drawn in the neuron panel on `xaxis`, from the figure spec;
    a frame caption's box is the widest over all frames."""
    animated = fig if isinstance(fig, AnimatedFigure) else None
    fig = fig.figure if isinstance(fig, AnimatedFigure) else fig
    unit = unit_px or PANEL_PX / (2 * limit)
    out: list[tuple[str, Box]] = []
    for i, tr in enumerate(fig.data):
        if (tr.xaxis or "x") != xaxis or tr.text is None or "text" not in (tr.mode or ""):
            continue
        texts = [tr.text] if isinstance(tr.text, str) else list(tr.text)
        if tr.name == "frame caption":
            more = _frame_texts(animated, i) if animated is not None else []
            texts = [max(texts + more, key=lambda t: text_px(t, 1.0)[0])]
        pos = tr.textposition
        size = float(tr.textfont.size) if tr.textfont and tr.textfont.size else 14.0
        pad = 0.0 if tr.name == "frame caption" else TEXT_PAD_PX
        if "markers" in (tr.mode or "") and isinstance(tr.marker.size, int | float):
            pad += float(tr.marker.size) / 2
        for k, t in enumerate(texts):
            if t:
                p = pos if isinstance(pos, str) else list(pos)[k]
                out.append((t, text_box(float(tr.x[k]), float(tr.y[k]), t, size,
                                        p or "middle center", unit, pad)))
    return out


__all__ = [
    "CAPTION_TEMPLATE",
    "CHAR_EM",
    "LINE_EM",
    "PANEL_PX",
    "POSITIONS",
    "Box",
    "caption_anchor",
    "caption_box",
    "layout_panel",
    "panel_segments",
    "panel_text_boxes",
    "place_panel_labels",
    "ray_label_position",
    "text_box",
    "text_lines",
    "text_px",
    "wrap_to_px",
    "wrap_variants",
]
