"""Labels of the neuron panel placed on its rim, outside the disc the neurons move in, with
leader lines to what they name.

Every neuron is drawn at radius ≤ 1 (the unit circle is the largest neuron, or the top of the
log scale), with a marker at most `marker_px` pixels across; data arrows end at radius ≤ 1
too. So a label whose box keeps a distance `clear_radius` from the centre never covers a
neuron or an arrow head, in any frame. The panel (±limit data units) is assumed to be
`unit_px · 2·limit` pixels wide — a lower bound of its size on screen (`PANEL_PX`): on a
larger panel text and markers take fewer data units and every box shrinks towards its anchor,
so nothing that was apart comes together.

`place_rim` puts each label (most important first) at the angle nearest its target where its
box fits inside the panel, clear of the disc and of every box and leader placed before it —
trying one line, then two, then three. A label that fits nowhere is returned as hidden (the
figure names it in the legend or the hover). The frame caption (time, largest norm) is drawn
under the panel, where no neuron goes either.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .label_layout import Box, text_px

ANGLE_STEP = 5.0  # degrees between candidate positions
MAX_TURN = 150.0  # farthest a label may sit from its target's angle (degrees)
LINE_PENALTY = 12.0  # a second line costs as much as this many degrees of turn
LEADER_MIN_PX = 5.0  # a label closer than this to its target needs no leader
EDGE_PX = 2.0  # labels keep this far inside the panel's edge
CLEAR_PAD_PX = 3.0  # gap between the neurons' largest marker and any label


def clear_radius(unit_px: float, marker_px: float, pad_px: float = CLEAR_PAD_PX) -> float:
    """Radius (data units) outside which no neuron marker or arrow head reaches: 1 plus half
    the largest marker, its white rim and a pad, in data units."""
    return 1.0 + (marker_px / 2 + 1.0 + pad_px) / unit_px


@dataclass
class RimLabel:
    """A label to place: `variants` (its text on 1, 2, … lines), `targets` (unit vectors of the
    directions it names: a ray, a data point), font size, colour, hover text, name."""

    variants: Sequence[str]
    targets: Sequence[tuple[float, float]]
    size: float
    colour: str
    hover: str
    name: str


@dataclass
class Placed:
    """A placed label: its text, box (data units) and leader segments."""

    label: RimLabel
    text: str
    box: Box
    leaders: list[tuple[tuple[float, float], tuple[float, float]]] = field(default_factory=list)

    @property
    def centre(self) -> tuple[float, float]:
        return (self.box.x0 + self.box.x1) / 2, (self.box.y0 + self.box.y1) / 2


def _dist(cx: float, cy: float, hw: float, hh: float) -> float:
    """Distance from the origin to the box centred at (cx, cy) with half-sizes hw, hh."""
    return math.hypot(max(abs(cx) - hw, 0.0), max(abs(cy) - hh, 0.0))


def _reach(phi: float, hw: float, hh: float, r: float) -> float:
    """The smallest s ≥ 0 such that the box centred at s·(cos φ, sin φ) keeps distance ≥ r
    from the origin."""
    a, b = abs(math.cos(phi)), abs(math.sin(phi))
    best = math.inf
    if a > 1e-12:
        s = (r + hw) / a
        if s * b <= hh + 1e-12:
            best = min(best, s)
    if b > 1e-12:
        s = (r + hh) / b
        if s * a <= hw + 1e-12:
            best = min(best, s)
    p = a * hw + b * hh
    disc = p * p - (hw * hw + hh * hh - r * r)
    if disc >= 0:
        s = p + math.sqrt(disc)
        if s * a >= hw - 1e-12 and s * b >= hh - 1e-12:
            best = min(best, s)
    return best


def _nearest(box: Box, x: float, y: float) -> tuple[float, float]:
    return min(max(x, box.x0), box.x1), min(max(y, box.y0), box.y1)


def _segment_radius(p: tuple[float, float], q: tuple[float, float]) -> float:
    """Smallest distance from the origin to the segment p–q."""
    (px, py), (qx, qy) = p, q
    dx, dy = qx - px, qy - py
    n = dx * dx + dy * dy
    t = 0.0 if n == 0 else max(0.0, min(1.0, -(px * dx + py * dy) / n))
    return math.hypot(px + t * dx, py + t * dy)


def _shrink(b: Box, e: float) -> Box:
    return Box(b.x0 + e, b.x1 - e, b.y0 + e, b.y1 - e)


def box_size(text: str, size: float, unit_px: float) -> tuple[float, float]:
    """(width, height) in data units of `text` at font `size`."""
    w, h = text_px(text, size)
    return w / unit_px, h / unit_px


class Rim:
    """The state of a panel being labelled: bounds, the clear disc, boxes and leaders so far."""

    def __init__(self, limit: float, unit_px: float, clear: float,
                 obstacles: Sequence[Box] = ()) -> None:
        self.limit, self.unit, self.clear = limit, unit_px, clear
        edge = EDGE_PX / unit_px
        self.bounds = Box(-limit + edge, limit - edge, -limit + edge, limit - edge)
        self.boxes: list[Box] = list(obstacles)
        self.leaders: list[tuple[tuple[float, float], tuple[float, float]]] = []

    def free(self, box: Box) -> bool:
        if not box.inside(self.bounds):
            return False
        if any(box.overlaps(o) for o in self.boxes):
            return False
        inner = _shrink(box, 1e-9)  # a leader may touch a box's edge, not enter it
        return not any(inner.crosses_segment(p, q) for p, q in self.leaders)

    def leader_ok(self, p: tuple[float, float], q: tuple[float, float], own: Box) -> bool:
        if _segment_radius(p, q) < 1.0:
            return False  # it would cross the neurons
        return not any(_shrink(b, 1e-9).crosses_segment(p, q)
                       for b in self.boxes if b is not own)

    def place(self, label: RimLabel) -> Placed | None:
        """The best free spot for `label` (see the module docstring), taken; None if none."""
        if not label.targets:
            return None
        tx, ty = label.targets[0]
        theta = math.atan2(ty, tx)
        sizes = [box_size(v, label.size, self.unit) for v in label.variants]
        steps = int(MAX_TURN // ANGLE_STEP)
        cands = sorted((abs(k) * ANGLE_STEP + LINE_PENALTY * i, k, i)
                       for i in range(len(sizes)) for k in range(-steps, steps + 1))
        for _score, k, i in cands:
            w, h = sizes[i]
            phi = theta + math.radians(k * ANGLE_STEP)
            s = _reach(phi, w / 2, h / 2, self.clear)
            if not math.isfinite(s):
                continue
            cx, cy = s * math.cos(phi), s * math.sin(phi)
            box = Box(cx - w / 2, cx + w / 2, cy - h / 2, cy + h / 2)
            if not self.free(box):
                continue
            leaders = []
            ok = True
            for j, (ux, uy) in enumerate(label.targets):
                a = (self.clear * ux, self.clear * uy)
                q = _nearest(box, *a)
                if math.hypot(q[0] - a[0], q[1] - a[1]) * self.unit < LEADER_MIN_PX:
                    continue
                if not self.leader_ok(a, q, box):
                    if j == 0:
                        ok = False
                        break
                    continue  # a further target of the same words: no leader to it
                leaders.append((a, q))
            if not ok:
                continue
            self.boxes.append(box)
            self.leaders += leaders
            return Placed(label, label.variants[i], box, leaders)
        return None


def place_rim(labels: Sequence[RimLabel], rim: Rim) -> tuple[list[Placed], list[RimLabel]]:
    """Place `labels` in order on `rim`: (placed, hidden)."""
    placed: list[Placed] = []
    hidden: list[RimLabel] = []
    for lab in labels:
        got = rim.place(lab)
        if got is None:
            hidden.append(lab)
        else:
            placed.append(got)
    return placed, hidden


__all__ = ["Placed", "Rim", "RimLabel", "box_size", "clear_radius", "place_rim"]
