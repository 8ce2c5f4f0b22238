"""Text that must not collide: estimated text boxes, and the boxes of a finished figure.

Plotly lays text out in the browser, so the figures estimate it here: a line of n characters
at font size s is n·CHAR_EM·s pixels wide and LINE_EM·s tall (conservative for the sans-serif
fonts of `style.Style.family`). The neuron panel (±PANEL_LIMIT in data units) is assumed to be
PANEL_PX pixels wide: the narrowest it gets at a 1280 px browser window beside the sidebar,
so boxes in data units are as large as they ever are on screen.

From a figure's scene: `panel_text_boxes` gives every text box drawn in a neuron panel,
`marker_boxes` the box of every neuron marker at every animation frame (as the player
composes them from the run's arrays) — the tests check that no two of them overlap. Placing the
panel's labels: `viz.rim_labels`; titles and legends: `viz.header`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .scene import Scene, neuron_points

CHAR_EM = 0.58  # mean character width / font size (DejaVu/Inter/Arial, a little generous)
LINE_EM = 1.25  # line height / font size
PANEL_PX = 300.0  # on-screen width of the neuron panel's ±PANEL_LIMIT square (a lower bound)
TEXT_PAD_PX = 3.0  # plotly's gap between a point and its text

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


# ----------------------------------------------------------------------------- scene boxes
def panel_text_boxes(scene: Scene, xaxis: str = "x", unit_px: float | None = None,
                     limit: float = 1.5) -> list[tuple[str, Box]]:
    """(text, box) of every text drawn in the neuron panel on `xaxis`, from the scene; a frame
    caption's box is the widest over all frames."""
    unit = unit_px or PANEL_PX / (2 * limit)
    out: list[tuple[str, Box]] = []
    for item in scene.items:
        if item["kind"] != "trace":
            continue
        tr = scene.resolve(item["trace"])
        if tr.get("xaxis", "x") != xaxis or tr.get("text") is None \
                or "text" not in (tr.get("mode") or ""):
            continue
        texts = [tr["text"]] if isinstance(tr["text"], str) else list(tr["text"])
        if tr.get("name") == "frame caption":
            more = [t for track in item.get("tracks", ()) if track["attr"] == "text"
                    for frame in track["texts"] for t in frame]
            texts = [max(texts + more, key=lambda t: text_px(t, 1.0)[0])]
        pos = tr.get("textposition")
        font = tr.get("textfont") or {}
        sizes = font.get("size", 14.0)
        pad = 0.0 if tr.get("name") == "frame caption" else TEXT_PAD_PX
        marker = tr.get("marker") or {}
        if "markers" in (tr.get("mode") or "") and isinstance(marker.get("size"), int | float):
            pad += float(marker["size"]) / 2
        for k, t in enumerate(texts):
            if t:
                p = pos if isinstance(pos, str) or pos is None else list(pos)[k]
                size = float(sizes if isinstance(sizes, int | float) else list(sizes)[k])
                out.append((t, text_box(float(tr["x"][k]), float(tr["y"][k]), t, size,
                                        p or "middle center", unit, pad)))
    return out


def marker_boxes(scene: Scene, item: dict, unit_px: float, rim_px: float = 1.0
                 ) -> list[list[Box]]:
    """Per animation frame, the box (data units, `unit_px` pixels per unit) of every neuron
    marker of a `neurons` item (their positions and sizes as the player composes them,
    `viz.scene.neuron_points`; a marker's white rim adds `rim_px`)."""
    out: list[list[Box]] = []
    for k in range(scene.frames.n):
        xs, ys, sizes, _pos = neuron_points(scene, item, k)
        boxes: list[Box] = []
        for x, y, d in zip(xs, ys, sizes, strict=True):
            if np.isfinite(x) and np.isfinite(y):
                h = (d / 2 + rim_px) / unit_px
                boxes.append(Box(x - h, x + h, y - h, y + h))
        out.append(boxes)
    return out


__all__ = [
    "CHAR_EM",
    "LINE_EM",
    "PANEL_PX",
    "Box",
    "marker_boxes",
    "panel_text_boxes",
    "text_box",
    "text_lines",
    "text_px",
    "wrap_to_px",
]
