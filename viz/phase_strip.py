"""The phase strip: an opaque, non-overlapping band of named phases above the time panels, and
the time markers as labelled vertical lines.

Layout (pixels above the top of the time panels, so any figure height keeps it): levels
stacked upwards, each a *row* of phase blocks or a *lane* of words. A row holds the phases of
one origin (`Phase.by`): the first the phases every run is read for (the main story,
alignment → fitting → convergence, and the plateaus that stick out of it), then one row per
paper whose theory names phases of this run; each row is named at its left, in the gap
beside the time panels ("this run", "Lyu et al. 2021"; `row_name`), with a hover saying what
found its phases. Generic plateaus that a drawn phase already covers are folded into that
phase's hover, not given a row.

Every block is labelled in plain words (`viz.wording`): inside it when they fit, else on a
tab in the phase's colour right above it — in a free stretch of the level above, or in a
lane put in between for it (so a narrow block under a row of long ones still gets its words)
— with the short words when the full ones find no room; the hover of every block names the
phase as its paper does, with times and evidence. Detected phases are filled; predicted ones
are white with a dashed edge in the phase's colour.

Markers coinciding with a block's start are folded into its hover ("loss starts to fall" is
where fitting begins). Every other marker is a thin line through the time panels and the
strip with its name in a lane above the rows, a few pixels clear of its line; a line never
crosses words (a block's, a tab's or another marker's), and a marker that finds no such place
is not drawn as a line (its name is in the hover of the block it falls in). Text widths are
estimated (`viz.label_layout.text_px`) on an axis at least `axis_px` wide, the narrowest the
time panels get.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dynamics.annotations import Analysis, Phase, TimeMarker

from .strip_lanes import STEM_PX, Lanes, Level, tab_plan, text_w
from .style import MARKER_COLOUR, Style, phase_colour, phase_key
from .time_axes import TimeAxisSpec, fmt_time
from .wording import FOLDABLE, STORY, marker_words, phase_words

FILL_ALPHA = 0.55  # opaque fill = the phase colour mixed with this much of itself on white
FOLD_TOL = 0.03  # a phase covered to within this fraction of the axis is folded
MARK_TOL = 0.012  # a marker this close (axis fraction) to a block's start is folded into it
AXIS_PX = 330.0  # narrowest time axis (normal mode, 1280 px window beside the sidebar)
MARK_GAP_PX = 4.0  # a marker's name starts this far from its line
RUN_ROW = "this run"  # the name of the row of phases every run is read for
NAME_EM = 0.85  # a row's name: this fraction of the strip's font


def mix(hex_colour: str, alpha: float) -> str:
    """The opaque colour of `hex_colour` at opacity `alpha` over white ('#RRGGBB')."""
    h = hex_colour.lstrip("#")
    rgb = [int(h[i:i + 2], 16) for i in (0, 2, 4)]
    return "#" + "".join(f"{round(255 - alpha * (255 - c)):02X}" for c in rgb)


def row_px(size: float) -> int:
    """Height of one strip row (and of one label lane) for words of font `size`."""
    return round(size * 1.25 + 6)


def row_name(origin: str) -> str:
    """The name of a row of phases of `origin` (`Phase.by`): the paper's, or `RUN_ROW`."""
    return origin or RUN_ROW


def row_hover(origin: str) -> str:
    """What a row's name says on hover: who found its phases."""
    if not origin:
        return ("<b>this run</b>: phases read off this run's own curves (the loss, the "
                "norms, the directions) by the same rules for every run")
    return (f"<b>{origin}</b>: the phases {origin}'s theory describes, found in this run by "
            "the paper's own criteria (hover a block for its rule)")


@dataclass(eq=False)
class Block:
    """One drawn phase: display times x0 < x1, axis fractions f0 < f1, its row, the words
    inside it (or ""), the hover text and colours; `level` is its vertical slot (absolute,
    counted from the strip's first row)."""

    phase: Phase
    x0: float
    x1: float
    f0: float
    f1: float
    row: int
    text: str
    hover: list[str]
    fill: str
    edge: str
    predicted: bool
    group: str = ""  # a run's name on Compare ("A", "B"), else ""
    level: int = 0
    at: Level | None = None  # (planning)
    text_f: float | None = None  # the words' centre when slid aside for a marker's line


@dataclass(eq=False)
class Label:
    """Words above the blocks: a phase's tab (bg in its colour, in a free spot of a higher
    row or in a lane) or a marker's name (in a lane). `lane` is its level (absolute)."""

    text: str
    f: float  # anchor fraction on the axis
    xanchor: str  # "center" | "left" | "right"
    lane: int
    hover: str
    bg: str
    border: str
    name: str
    at: Level | None = None  # (planning)
    leader: tuple[float, float] | None = None  # a tab beside its block: (block's x, tab's edge)
    block: Block | None = None  # the block a tab names


@dataclass
class Mark:
    """A drawn time marker: display time x, fraction f, predicted or detected, and its label."""

    x: float
    f: float
    predicted: bool
    label: Label
    group: str = ""


@dataclass
class Strip:
    """The strip's plan: blocks, labels (tabs and marker names), drawn markers, the number of
    rows and lanes, and each row's (level, origin) for its name."""

    blocks: list[Block] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    rows: int = 0
    lanes: int = 0
    axis_px: float = 330.0
    size: float = 12.6  # font size of the words
    names: list[tuple[int, str]] = field(default_factory=list)

    def height_px(self) -> float:
        """Pixels the strip takes above the time panels (0 when empty)."""
        n = self.rows + self.lanes
        return 0.0 if n == 0 else 4 + n * row_px(self.size)

    def unlabelled(self) -> list[Block]:
        """The blocks with no words inside and no tab (none, when the plan found room)."""
        tabbed = {lab.name for lab in self.labels}
        return [b for b in self.blocks
                if not b.text and f"phase:{b.phase.name}" not in tabbed]


# ----------------------------------------------------------------------------- geometry
def _frac(spec: TimeAxisSpec, v: float) -> float:
    lo, hi = spec.range
    pos = math.log10(v) if spec.log else v
    return (pos - lo) / (hi - lo) if hi > lo else 0.0


def axis_value(spec: TimeAxisSpec, f: float) -> float:
    """Annotation x of axis fraction f (log10 on log axes)."""
    lo, hi = spec.range
    return lo + f * (hi - lo)


def _span(spec: TimeAxisSpec, start: float, end: float) -> tuple[float, float] | None:
    x_lo, x_hi = spec.lo, spec.t1
    x0 = min(max(float(spec.show(start)), x_lo), x_hi)
    x1 = min(max(float(spec.show(end)), x_lo), x_hi)
    return (x0, x1) if x1 > x0 else None


def _rank(ph: Phase, own_first: bool = False) -> tuple:
    key = phase_key(ph.name)
    if key in STORY:
        return (1 if own_first else 0, STORY.index(key))
    if key in FOLDABLE:
        return (2, FOLDABLE.index(key))
    return (0 if own_first else 1, 0)


def _hover(ph: Phase, group: str) -> str:
    w = phase_words(ph)
    who = f", {ph.by or w.source}" if (ph.by or w.source) else ""
    run = f"{group}: " if group else ""
    why = f"<br>{ph.evidence}" if ph.evidence else ""
    return (f"{run}<b>{w.plain}</b><br>{ph.name} ({ph.source}{who}): t = "
            f"{fmt_time(float(ph.start))} – {fmt_time(float(ph.end))}{why}")


# ----------------------------------------------------------------------------- planning
@dataclass(frozen=True)
class StripLayout:
    """How `plan_strip` lays a strip out."""

    axis_px: float = AXIS_PX  # the narrowest the time axis gets (words' widths are set on it)
    max_rows: int = 3  # rows of blocks at most
    max_lanes: int = 2  # lanes of words at most
    group: str = ""  # the run's name (Compare)
    markers: bool = True  # draw the time markers
    first_row: int = 0  # the levels are counted from this one
    own_first: bool = False  # a paper's own phases take the first row before the main story
    size: float | None = None  # the words' font (None: 0.9 × the style's small size)


def plan_strip(analysis: Analysis | None, spec: TimeAxisSpec, style: Style,
               layout: StripLayout = StripLayout()) -> Strip:
    """The blocks, tabs and marker labels of `analysis` on the axis `spec` (see the module
    docstring), laid out as `layout` says (`own_first`: one row per run on Compare, where
    "stuck on the least-squares fit" says more than "loss falls")."""
    axis_px, group, first_row = layout.axis_px, layout.group, layout.first_row
    strip = Strip(axis_px=axis_px, size=layout.size or style.small * 0.9)
    if analysis is None:
        return strip
    items = []
    for ph in analysis.phases:
        span = _span(spec, ph.start, ph.end)
        if span is not None:
            items.append((ph, span))
    items.sort(key=lambda it: (_rank(it[0], layout.own_first), it[1][0]))
    levels = Lanes(layout.max_lanes)
    rows: list[list[Block]] = []
    folded: list[tuple[Phase, float, float]] = []
    for ph, (x0, x1) in items:
        f0, f1 = _frac(spec, x0), _frac(spec, x1)
        if phase_key(ph.name) in FOLDABLE and _covered(rows, f0, f1):
            folded.append((ph, f0, f1))
            continue
        origin = ph.by if group == "" else ""  # Compare: one row per run, whoever found it
        r = next((k for k, row in enumerate(rows)
                  if levels.levels[k].origin == origin
                  and all(f1 <= b.f0 + 1e-9 or f0 >= b.f1 - 1e-9 for b in row)), len(rows))
        if r >= layout.max_rows:
            folded.append((ph, f0, f1))
            continue
        if r == len(rows):
            rows.append([])
            levels.levels.append(Level("row", origin))
        colour = phase_colour(ph.name)
        predicted = ph.source == "predicted"
        block = Block(ph, x0, x1, f0, f1, first_row + r, "", [_hover(ph, group)],
                      "#FFFFFF" if predicted else mix(colour, FILL_ALPHA), colour, predicted,
                      group, at=levels.levels[r])
        levels.levels[r].add(f0, f1, "block")
        rows[r].append(block)
        strip.blocks.append(block)
    for ph, f0, f1 in folded:  # named in the hover of every block it overlaps
        w = phase_words(ph)
        note = (f"<br>also <b>{w.plain}</b>: {ph.name} ({ph.source}), t = "
                f"{fmt_time(float(ph.start))} – {fmt_time(float(ph.end))}")
        for b in strip.blocks:
            if b.f0 < f1 and f0 < b.f1:
                b.hover.append(note)
    strip.rows = len(rows)
    _plan_words(strip, levels)
    if layout.markers:
        _plan_markers(strip, analysis.markers, spec, axis_px, levels.marker, group)
    # levels: drop lanes that hold nothing; then number what is left
    levels.levels = [lv for lv in levels.levels if lv.kind == "row" or any(
        k == "text" for *_ab, k in lv.spans)]
    index = {id(lv): first_row + i for i, lv in enumerate(levels.levels)}
    for b in strip.blocks:
        assert b.at is not None
        b.level = index[id(b.at)]
    for lab in strip.labels:
        assert lab.at is not None
        lab.lane = index[id(lab.at)]
    strip.lanes = levels.lanes
    strip.names = [(index[id(lv)], lv.origin) for lv in levels.levels if lv.kind == "row"]
    return strip


def _plan_words(strip: Strip, levels: Lanes) -> None:
    """Words for every block. Inside it when they fit (the full words, then the short ones).
    The others go on tabs in lanes between the rows or above the top one, each lane next to
    the rows it serves (a tab touches its block from above or from below); each lane's tabs
    are packed side by side, as near their blocks as the others let them, the full words
    when every tab's fit, else the short ones; a tab pushed off its block is joined to it by
    a leader. The lanes are chosen for the fewest (at most `levels.max_lanes`), then the
    least displacement. When they cannot hold every tab, a block with a tag of its paper's
    ("IV", defined on the paper's page) that fits inside shows it, and the others are tried
    again."""
    rows = [lv for lv in levels.levels if lv.kind == "row"]
    left: list[Block] = []
    for b in sorted(strip.blocks, key=lambda b: (*_rank(b.phase), -(b.f1 - b.f0))):
        w = phase_words(b.phase)
        for t in (w.plain, w.short):
            if text_w(t, strip.size, strip.axis_px) <= b.f1 - b.f0:
                b.text = t
                break
        if not b.text:
            left.append(b)
    plan = tab_plan(left, rows, levels.max_lanes, _words, strip.size, strip.axis_px) \
        if left and levels.max_lanes > 0 else None
    if left and plan is None:  # no room for every tab: the papers' tags inside, the rest on tabs
        for b in list(left):
            tag = phase_words(b.phase).tag
            if tag and text_w(tag, strip.size, strip.axis_px) <= b.f1 - b.f0:
                b.text = tag
                left.remove(b)
        plan = tab_plan(left, rows, levels.max_lanes, _words, strip.size, strip.axis_px) \
            if left and levels.max_lanes > 0 else None
    if left:
        if plan is not None:
            gaps, tabs = plan
            lanes: dict[tuple[int, int], Level] = {}
            for gap, k in sorted(gaps, reverse=True):  # lanes right above row `gap`
                lanes[(gap, k)] = Level("lane")
                levels.levels.insert(levels.levels.index(rows[gap]) + 1, lanes[(gap, k)])
            for b, text, gap, k, c, width, lead in tabs:
                lv = lanes[(gap, k)]
                lv.add(c - width / 2, c + width / 2, "text")
                if lead is not None:
                    lv.add(min(lead) - STEM_PX / strip.axis_px,
                           max(lead) + STEM_PX / strip.axis_px, "stem")
                strip.labels.append(Label(text, c, "center", 0, "".join(b.hover), b.fill,
                                          b.edge, f"phase:{b.phase.name}", at=lv,
                                          leader=lead, block=b))
    for b in strip.blocks:
        if b.text:
            c, width = (b.f0 + b.f1) / 2, text_w(b.text, strip.size, strip.axis_px)
            assert b.at is not None
            levels.add_words(b.at, c - width / 2, c + width / 2, b.f0, b.f1, b)


def _words(b: Block) -> tuple[str, str]:
    w = phase_words(b.phase)
    return w.plain, w.short


def _covered(rows: Sequence[Sequence[Block]], f0: float, f1: float) -> bool:
    """Whether [f0, f1] lies (to FOLD_TOL) inside the union of one row's blocks."""
    for row in rows:
        spans = sorted((b.f0, b.f1) for b in row)
        reach = f0
        for a, b in spans:
            if a <= reach + FOLD_TOL and b > reach:
                reach = b
        if reach >= f1 - FOLD_TOL and any(a <= f0 + FOLD_TOL for a, _ in spans):
            return True
    return False


def _plan_markers(strip: Strip, markers: Sequence[TimeMarker], spec: TimeAxisSpec,
                  axis_px: float, take: Callable[[float, float, float, float], Level | None],
                  group: str) -> None:
    merged: list[tuple[float, float, list[TimeMarker]]] = []
    for mk in markers:
        v = float(spec.show(mk.time))
        if not (spec.lo <= v <= spec.t1) or not math.isfinite(v):
            continue
        f = _frac(spec, v)
        same = next((m for m in merged if abs(m[1] - f) <= MARK_TOL / 2
                     and (m[2][0].source == mk.source)), None)
        if same is not None:
            same[2].append(mk)
        else:
            merged.append((v, f, [mk]))
    # detected events first, then predictions
    merged.sort(key=lambda m: (m[2][0].source != "detected", m[1]))
    gap, stem = MARK_GAP_PX / axis_px, STEM_PX / axis_px
    for v, f, mks in merged:
        hover = "<br>".join(f"<b>{marker_words(m)}</b>: {m.name} ({m.source}), t = "
                            f"{fmt_time(float(m.time))}" + (f"<br>{m.note}" if m.note else "")
                            for m in mks)
        start = next((b for b in strip.blocks if abs(b.f0 - f) <= MARK_TOL), None)
        if start is not None:  # "loss starts to fall" where fitting starts
            start.hover.append(f"<br>starts at: {hover}")
            continue
        predicted = mks[0].source == "predicted"
        words = " = ".join(dict.fromkeys(marker_words(m) for m in mks))
        run = f"{group}: " if group else ""
        placed = None
        for text in (f"{run}{words}", f"{run}{marker_words(mks[0])}"):
            width = text_w(text, strip.size, axis_px)
            if f + gap + width <= 1:
                a, b, anchor = f + gap, f + gap + width, "left"
            else:
                a, b, anchor = f - gap - width, f - gap, "right"
            if a < 0:
                continue
            lane = take(a, b, f, stem)
            if lane is not None:
                placed = Label(text, f, anchor, 0, hover, "rgba(255,255,255,0.92)",
                               MARKER_COLOUR, f"marker:{mks[0].name}", at=lane)
                break
        if placed is None:  # no room for its name: no line; named in the hover
            for b in strip.blocks:
                if b.f0 <= f <= b.f1:
                    b.hover.append(f"<br>{hover}")
            continue
        strip.labels.append(placed)
        strip.marks.append(Mark(v, f, predicted, placed, group))


__all__ = ["AXIS_PX", "MARK_GAP_PX", "NAME_EM", "RUN_ROW", "Block", "Label", "Mark", "Strip",
           "StripLayout", "axis_value", "mix", "plan_strip", "row_hover", "row_name", "row_px"]
