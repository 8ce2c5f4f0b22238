"""Room in the phase strip (`viz.phase_strip`): its levels and what they hold along the axis,
the tabs of the blocks whose words do not fit inside them, and the way a marker's line goes
up to its name. Pure geometry in axis fractions (0 … 1 along the time axis); text widths are
estimated (`viz.label_layout.text_px`).

- `Level`: a row of blocks or a lane of words, with its spans ("block", "words" — a block's
  own words, which may slide inside it —, "text" — a tab, a marker's name —, "stem" — a line
  passing through).
- `Lanes`: the levels while a strip is planned; `marker` finds a marker's name a lane whose
  line up to it crosses no words (sliding a block's own words aside when that clears it).
- `tab_plan`: the tabs of blocks too narrow for their words, in as few lanes as possible
  between the rows or above them, each touching its block or joined to it by a leader.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .label_layout import text_px

STEM_PX = 3.0  # the room a line (a marker's, a leader) takes on each side: no words closer
MIN_TOUCH_PX = 6.0  # a tab overlapping its block less than this is joined to it by a leader


def text_w(text: str, size: float, axis_px: float) -> float:
    """Axis fraction taken by `text` at font `size`, with a little padding."""
    return (text_px(text, size)[0] + 8) / axis_px


@dataclass(eq=False)
class Level:
    """One level of the strip, bottom-up: a row of blocks of one `origin` or a lane of words;
    `spans` are what it holds along the axis, [f0, f1, kind]."""

    kind: str  # "row" | "lane"
    origin: str = ""
    spans: list[list[Any]] = field(default_factory=list)

    def free(self, a: float, b: float, kinds: Sequence[str], but: Any = None) -> bool:
        """Whether [a, b] meets no span of `kinds` (other than the span `but`)."""
        return not any(not (b <= u[0] or a >= u[1]) for u in self.spans
                       if u[2] in kinds and u is not but)

    def add(self, a: float, b: float, kind: str) -> list[Any]:
        span = [a, b, kind]
        self.spans.append(span)
        return span


class Spanned(Protocol):
    """What the planning reads of a block: its span along the axis and its level."""

    f0: float
    f1: float
    at: Level | None


@dataclass(eq=False)
class Words:
    """A block's own words inside it: their span (in `level`), the block's bounds they may
    slide within, and the block (its `text_f` follows a slide)."""

    span: list[Any]
    lo: float
    hi: float
    owner: Any


class Lanes:
    """The strip's levels while it is planned: rows first, lanes inserted as words need them
    (at most `max_lanes`), and the blocks' own words by level."""

    def __init__(self, max_lanes: int):
        self.levels: list[Level] = []
        self.max_lanes = max_lanes
        self.words: dict[int, list[Words]] = {}

    @property
    def lanes(self) -> int:
        return sum(lv.kind == "lane" for lv in self.levels)

    def add_lane(self, index: int) -> Level | None:
        if self.lanes >= self.max_lanes:
            return None
        lane = Level("lane")
        self.levels.insert(index, lane)
        return lane

    def top_row(self) -> int:
        return max((i for i, lv in enumerate(self.levels) if lv.kind == "row"), default=-1)

    def add_words(self, level: Level, a: float, b: float, lo: float, hi: float,
                  owner: Any) -> None:
        """A block's own words [a, b] inside it (its bounds [lo, hi])."""
        self.words.setdefault(id(level), []).append(Words(level.add(a, b, "words"), lo, hi,
                                                          owner))

    def _clear(self, upto: int, f: float, stem: float
               ) -> list[tuple[Words, float]] | None:
        """The slides that keep a line at f (± `stem`) through levels [0, upto) off every
        word, or None when some words cannot move aside (a tab, a marker's name, or a block's
        words with no room left in their block)."""
        moves: list[tuple[Words, float]] = []
        for lv in self.levels[:upto]:
            if not lv.free(f - stem, f + stem, ("text",)):
                return None
            for w in self.words.get(id(lv), []):
                a, b = w.span[0], w.span[1]
                if b <= f - stem or a >= f + stem:
                    continue
                width = b - a
                for na in (f + stem, f - stem - width):  # right of the line, or left of it
                    if w.lo <= na and na + width <= w.hi and lv.free(
                            na, na + width, ("words", "text", "stem"), but=w.span):
                        moves.append((w, na))
                        break
                else:
                    return None
        return moves

    def marker(self, a: float, b: float, f: float, stem: float) -> Level | None:
        """A lane above the rows for a marker's name [a, b] whose line at f (± `stem`) runs up
        to it: the name clear of words and other lines, the line clear of words below (a
        block's own words slide aside when that clears it)."""
        first = self.top_row() + 1
        moves: list[tuple[Words, float]] | None = None
        lv: Level | None = None
        for i in range(first, len(self.levels)):
            if self.levels[i].free(a, b, ("block", "words", "text", "stem")):
                moves = self._clear(i, f, stem)
                if moves is not None:
                    lv = self.levels[i]
                    break
        if lv is None:
            i = len(self.levels)
            moves = self._clear(i, f, stem)
            if moves is None:
                return None
            lv = self.add_lane(i)
            if lv is None:
                return None
        assert moves is not None
        for w, na in moves:
            width = w.span[1] - w.span[0]
            w.span[0], w.span[1] = na, na + width
            w.owner.text_f = na + width / 2
        lv.add(a, b, "text")
        for below in self.levels[:i]:
            below.add(f - stem, f + stem, "stem")
        return lv


# ----------------------------------------------------------------------------- tabs
Tab = tuple[Any, str, int, int, float, float, "tuple[float, float] | None"]
TabPlan = tuple[list[tuple[int, int]], list[Tab]]


def tab_plan(blocks: Sequence[Spanned], rows: Sequence[Level], max_lanes: int,
             words: Callable[[Any], tuple[str, str]], size: float, axis_px: float
             ) -> TabPlan | None:
    """Where the tabs of `blocks` go: (the lanes, as (gap, k) — the k-th lane right above row
    `gap` —, and per block (block, words, gap, k, centre, width, leader)), or None when they
    need more than `max_lanes` lanes. `words(block)` gives its (full, short) words. A block
    of row r may use the gap above it (r) or the one below (r − 1, not under the first row);
    every assignment is tried (the blocks are few), with the full words and with the short
    ones: the fewest lanes win, then the full words, then the least displacement."""
    index = {id(lv): i for i, lv in enumerate(rows)}
    row_of = [index[id(b.at)] for b in blocks]
    best: tuple[tuple[float, ...], TabPlan] | None = None
    for short in (False, True):
        texts = [words(b)[1 if short else 0] for b in blocks]
        widths = [text_w(t, size, axis_px) for t in texts]
        if any(w > 1 for w in widths):
            continue
        choices = [[r] + ([r - 1] if r > 0 else []) for r in row_of]
        for pick in itertools.product(*choices):
            lanes: list[tuple[int, int]] = []
            tabs: list[Tab] = []
            cost = 0.0
            crossed = False
            for gap in sorted(set(pick)):
                members = [i for i, g in enumerate(pick) if g == gap]
                packed = pack_lanes([blocks[i] for i in members],
                                    [widths[i] for i in members])
                for k, lane in enumerate(packed):
                    lanes.append((gap, k))
                    placed = []
                    for m, c in lane:
                        i = members[m]
                        lead = leader(blocks[i], c, widths[i], axis_px)
                        cost += abs(c - (blocks[i].f0 + blocks[i].f1) / 2) + (lead is not None)
                        tabs.append((blocks[i], texts[i], gap, k, c, widths[i], lead))
                        placed.append((c - widths[i] / 2, c + widths[i] / 2, lead))
                    crossed = crossed or _crossing(placed)
            if len(lanes) > max_lanes or crossed:
                continue
            key = (len(lanes), int(short), cost)  # fewest lanes, then the full words
            if best is None or key < best[0]:
                best = (key, (lanes, tabs))
    return best[1] if best is not None else None


def _crossing(placed: Sequence[tuple[float, float, tuple[float, float] | None]]) -> bool:
    """Whether a leader in a lane runs through another tab of that lane (placed: each tab's
    span and leader)."""
    for a0, a1, lead in placed:
        if lead is None:
            continue
        lo, hi = min(lead), max(lead)
        if any(b0 < hi and b1 > lo and (b0, b1) != (a0, a1) for b0, b1, _l in placed):
            return True
    return False


def pack_lanes(blocks: Sequence[Spanned], widths: Sequence[float]
               ) -> list[list[tuple[int, float]]]:
    """The tabs of `blocks` (`widths`, axis fractions) in as few lanes as it takes: in each
    lane, side by side in the order of their blocks, each as near its block's middle as the
    others and the axis' ends let it ((index, centre) per lane)."""
    order = sorted(range(len(blocks)), key=lambda i: (blocks[i].f0 + blocks[i].f1) / 2)
    lanes: list[list[int]] = [[]]
    for i in order:  # fill a lane while the tabs' widths fit it
        if sum(widths[j] for j in lanes[-1]) + widths[i] > 1.0:
            lanes.append([])
        lanes[-1].append(i)
    out = []
    for lane in lanes:
        want = [(blocks[i].f0 + blocks[i].f1) / 2 for i in lane]
        w = [widths[i] for i in lane]
        out.append(list(zip(lane, side_by_side(want, w), strict=True)))
    return out


def side_by_side(want: Sequence[float], widths: Sequence[float]) -> list[float]:
    """Centres of boxes `widths` wide, in this order, none overlapping, inside [0, 1], each
    as near `want` as the others allow (clusters of touching boxes are centred on the mean
    of their wishes)."""
    clusters: list[list[int]] = []
    centre: list[float] = []

    def place(k: int) -> None:
        members = clusters[k]
        total = sum(widths[i] for i in members)
        mid = sum(want[i] - (sum(widths[j] for j in members[:n]) + widths[i] / 2 - total / 2)
                  for n, i in enumerate(members)) / len(members)
        centre[k] = min(max(mid, total / 2), 1 - total / 2)

    for i in range(len(want)):
        clusters.append([i])
        centre.append(0.0)
        place(len(clusters) - 1)
        while len(clusters) > 1:
            a, b = len(clusters) - 2, len(clusters) - 1
            wa = sum(widths[j] for j in clusters[a])
            wb = sum(widths[j] for j in clusters[b])
            if centre[a] + wa / 2 <= centre[b] - wb / 2 + 1e-12:
                break
            clusters[a] += clusters.pop()
            centre.pop()
            place(a)
    out = [0.0] * len(want)
    for members, c in zip(clusters, centre, strict=True):
        x = c - sum(widths[i] for i in members) / 2
        for i in members:
            out[i] = x + widths[i] / 2
            x += widths[i]
    return out


def leader(block: Spanned, c: float, width: float, axis_px: float
           ) -> tuple[float, float] | None:
    """A tab centred at c: None when it overlaps its block by MIN_TOUCH_PX (or covers all of a
    narrower block), else the leader (x on the block nearest the tab, the tab's edge nearest
    the block)."""
    lo, hi = c - width / 2, c + width / 2
    touch = min(hi, block.f1) - max(lo, block.f0)
    if touch >= min(MIN_TOUCH_PX / axis_px, block.f1 - block.f0) - 1e-9:
        return None
    stem = STEM_PX / axis_px
    x = min(max(c, block.f0 + stem), block.f1 - stem) if block.f1 - block.f0 > 2 * stem \
        else (block.f0 + block.f1) / 2
    edge = lo if x < lo else hi
    return x, edge


__all__ = ["MIN_TOUCH_PX", "STEM_PX", "Lanes", "Level", "Tab", "TabPlan", "Words", "leader",
           "pack_lanes", "side_by_side", "tab_plan", "text_w"]
