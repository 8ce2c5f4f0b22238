"""The phase strip: an opaque, non-overlapping band of named phases above the time panels, and
the time markers as labelled vertical lines.

Layout (pixels above the top of the time panels, so any figure height keeps it): row 0 holds
the main story (alignment → fitting → convergence), further rows the phases that overlap it
(a paper's own phases, a plateau that sticks out), each phase in the first row where it
overlaps nothing. Generic plateaus that a drawn phase already covers are folded into that
phase's hover, not given a row. A block shows its phase's plain words (`viz.wording`) when
they fit, else a tab in the phase's colour in a label lane above the rows, else nothing: the
hover of every block names the phase as its paper does, with times and evidence. Detected
phases are filled; predicted ones are white with a dashed edge in the phase's colour.

Markers coinciding with a block's start are folded into its hover ("loss starts to fall" is
where fitting begins). Every other marker is a thin line through the time panels with its
name in a label lane; one that finds no room is not drawn as a line (its name is in the
hover of the block it falls in). Text widths are estimated (`viz.label_layout.text_px`) on an
axis at least `axis_px` wide, the narrowest the time panels get.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from dynamics.annotations import Analysis, Phase, TimeMarker

from .label_layout import text_px
from .style import INK, MARKER_COLOUR, Style, phase_colour, phase_key
from .time_axes import TimeAxisSpec, fmt_time
from .wording import FOLDABLE, STORY, marker_words, phase_words

FILL_ALPHA = 0.55  # opaque fill = the phase colour mixed with this much of itself on white
FOLD_TOL = 0.03  # a phase covered to within this fraction of the axis is folded
MARK_TOL = 0.012  # a marker this close (axis fraction) to a block's start is folded into it
AXIS_PX = 330.0  # narrowest time axis (normal mode, 1280 px window beside the sidebar)


def mix(hex_colour: str, alpha: float) -> str:
    """The opaque colour of `hex_colour` at opacity `alpha` over white ('#RRGGBB')."""
    h = hex_colour.lstrip("#")
    rgb = [int(h[i:i + 2], 16) for i in (0, 2, 4)]
    return "#" + "".join(f"{round(255 - alpha * (255 - c)):02X}" for c in rgb)


def row_px(size: float) -> int:
    """Height of one strip row (and of one label lane) for words of font `size`."""
    return round(size * 1.25 + 6)


@dataclass
class Block:
    """One drawn phase: display times x0 < x1, axis fractions f0 < f1, its row, the words
    inside it (or ""), the hover text and colours."""

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


@dataclass
class Label:
    """Words above the blocks: a phase's tab (bg in its colour, in a free spot of a higher
    row or in a lane) or a marker's name (in a lane)."""

    text: str
    f: float  # anchor fraction on the axis
    xanchor: str  # "center" | "left" | "right"
    lane: int  # level: 0 .. rows - 1 are the rows, then the lanes
    hover: str
    bg: str
    border: str
    name: str


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
    """The strip's plan: blocks, lane labels (tabs and marker names), drawn markers, the rows
    and lanes used."""

    blocks: list[Block] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    rows: int = 0
    lanes: int = 0
    axis_px: float = 330.0
    size: float = 12.6  # font size of the words

    def height_px(self) -> float:
        """Pixels the strip takes above the time panels (0 when empty)."""
        n = self.rows + self.lanes
        return 0.0 if n == 0 else 4 + n * row_px(self.size)


# ----------------------------------------------------------------------------- geometry
def _frac(spec: TimeAxisSpec, v: float) -> float:
    lo, hi = spec.range
    pos = math.log10(v) if spec.log else v
    return (pos - lo) / (hi - lo) if hi > lo else 0.0


def _axis_value(spec: TimeAxisSpec, f: float) -> float:
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
    who = f", {w.source}" if w.source else ""
    run = f"{group}: " if group else ""
    why = f"<br>{ph.evidence}" if ph.evidence else ""
    return (f"{run}<b>{w.plain}</b><br>{ph.name} ({ph.source}{who}): t = "
            f"{fmt_time(float(ph.start))} – {fmt_time(float(ph.end))}{why}")


def _text_w(text: str, size: float, axis_px: float) -> float:
    """Axis fraction taken by `text` at font `size`, with a little padding."""
    return (text_px(text, size)[0] + 8) / axis_px


# ----------------------------------------------------------------------------- planning
def plan_strip(analysis: Analysis | None, spec: TimeAxisSpec, style: Style, *,
               axis_px: float = AXIS_PX, max_rows: int = 3, max_lanes: int = 2,
               group: str = "", markers: bool = True, first_row: int = 0,
               own_first: bool = False, inside_first: bool = False,
               size: float | None = None) -> Strip:
    """The blocks, tabs and marker labels of `analysis` on the axis `spec` (see the module
    docstring): at most `max_rows` rows of blocks and `max_lanes` label lanes. `group` names
    the run (Compare); rows are counted from `first_row`; `markers`: draw time markers;
    `own_first`: a paper's own phases take the first row before the main story (one row per
    run on Compare: "stuck on the least-squares fit" says more than "loss falls");
    `inside_first`: short words inside a block before its full words on a tab (small
    multiples); `size`: the words' font (default 0.9 × the style's small size)."""
    strip = Strip(axis_px=axis_px, size=size or style.small * 0.9)
    if analysis is None:
        return strip
    items = []
    for ph in analysis.phases:
        span = _span(spec, ph.start, ph.end)
        if span is not None:
            items.append((ph, span))
    items.sort(key=lambda it: (_rank(it[0], own_first), it[1][0]))
    rows: list[list[Block]] = []
    folded: list[tuple[Phase, float, float]] = []
    for ph, (x0, x1) in items:
        f0, f1 = _frac(spec, x0), _frac(spec, x1)
        if phase_key(ph.name) in FOLDABLE and _covered(rows, f0, f1):
            folded.append((ph, f0, f1))
            continue
        r = next((k for k, row in enumerate(rows)
                  if all(f1 <= b.f0 + 1e-9 or f0 >= b.f1 - 1e-9 for b in row)), len(rows))
        if r >= max_rows:
            folded.append((ph, f0, f1))
            continue
        if r == len(rows):
            rows.append([])
        colour = phase_colour(ph.name)
        predicted = ph.source == "predicted"
        block = Block(ph, x0, x1, f0, f1, first_row + r, "", [_hover(ph, group)],
                      "#FFFFFF" if predicted else mix(colour, FILL_ALPHA), colour, predicted,
                      group)
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
    # levels: the rows of blocks, then the label lanes; what each holds, (a, b, is a block)
    levels: list[list[tuple[float, float, bool]]] = [
        [(b.f0, b.f1, True) for b in row] for row in rows]
    top = len(rows) + max_lanes

    def take(a: float, b: float, low: int, tab: bool) -> int | None:
        """The first level from `low` up where [a, b] is free, taken; a tab stands right over
        its block: it may rise past other labels but not past a block."""
        for lv in range(low, top):
            while lv >= len(levels):
                levels.append([])
            hit = [blk for u0, u1, blk in levels[lv] if not (b <= u0 or a >= u1)]
            if not hit:
                levels[lv].append((a, b, False))
                return lv
            if tab and any(hit):
                return None
        return None

    # words inside the blocks, else a tab right above them (in a free spot of a higher row, or
    # in a lane), the main story first (in its order), then the longest blocks: the plain
    # words inside, then as a tab, then the short words inside, then as a tab

    for b in sorted(strip.blocks, key=lambda b: (*_rank(b.phase), -(b.f1 - b.f0))):
        w = phase_words(b.phase)
        order = ((w.plain, True), (w.short, True), (w.plain, False), (w.short, False)) \
            if inside_first else \
            ((w.plain, True), (w.plain, False), (w.short, True), (w.short, False))
        for t, inside in order:
            width = _text_w(t, strip.size, axis_px)
            if inside:
                if width <= b.f1 - b.f0:
                    b.text = t
                    break
                continue
            c = min(max((b.f0 + b.f1) / 2, width / 2), 1 - width / 2)
            if c - width / 2 >= b.f1 or c + width / 2 <= b.f0:
                continue  # the tab would not touch its block
            lane = take(c - width / 2, c + width / 2, b.row - first_row + 1, True)
            if lane is not None:
                strip.labels.append(Label(t, c, "center", lane, "".join(b.hover), b.fill,
                                          b.edge, f"phase:{b.phase.name}"))
                break
    if markers:
        _plan_markers(strip, analysis.markers, spec, axis_px,
                      lambda a, b: take(a, b, len(rows), False), group)
    used = [lv for lv, held in enumerate(levels) if held and lv >= len(rows)]
    strip.lanes = used[-1] - len(rows) + 1 if used else 0
    return strip


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
                  axis_px: float, take, group: str) -> None:
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
            width = _text_w(text, strip.size, axis_px) + 4 / axis_px
            if f + width <= 1:
                a, b, anchor = f, f + width, "left"
            else:
                a, b, anchor = f - width, f, "right"
            if a < 0:
                continue
            lane = take(a, b)
            if lane is not None:
                placed = Label(text, f, anchor, lane, hover, "rgba(255,255,255,0.92)",
                               MARKER_COLOUR, f"marker:{mks[0].name}")
                break
        if placed is None:  # no room for its name: no line; named in the hover
            for b in strip.blocks:
                if b.f0 <= f <= b.f1:
                    b.hover.append(f"<br>{hover}")
            continue
        strip.labels.append(placed)
        strip.marks.append(Mark(v, f, predicted, placed, group))


# ----------------------------------------------------------------------------- drawing
def strip_items(strip: Strip, spec: TimeAxisSpec, xaxis: str,
                time_axes: Sequence[tuple[str, str]], style: Style, *, base_px: float = 0.0,
                anchor: float = 1.0) -> tuple[list[dict], list[dict]]:
    """(shapes, annotations) drawing `strip` above the time panels whose x axis is `xaxis`
    (the blocks and tabs), with marker lines on every one of `time_axes`; `base_px`: pixels
    between the panels' top (at paper y = `anchor`) and the strip's first row."""
    rp = row_px(strip.size)
    shapes: list[dict] = []
    anns: list[dict] = []
    font = {"size": strip.size, "color": INK}

    def px(row: float) -> float:
        return base_px + 2 + row * rp

    for b in strip.blocks:
        y0, y1 = px(b.row), px(b.row + 1) - 2
        shapes.append(dict(
            type="rect", xref=xaxis, yref="paper", ysizemode="pixel", yanchor=anchor,
            x0=b.x0, x1=b.x1, y0=y0, y1=y1, fillcolor=b.fill, layer="above",
            line={"color": b.edge if b.predicted else "#FFFFFF",
                  "width": 1.5 if b.predicted else 1, "dash": "dash" if b.predicted else "solid"},
            name=f"strip:{b.phase.name}:{b.phase.source}"))
        anns.append(dict(
            x=_axis_value(spec, (b.f0 + b.f1) / 2), xref=xaxis, y=anchor, yref="paper",
            yshift=(y0 + y1) / 2, yanchor="middle", xanchor="center", showarrow=False,
            text=b.text or " ", font=font, hovertext="".join(b.hover),
            width=max(6.0, (b.f1 - b.f0) * strip.axis_px - 4,
                      text_px(b.text, strip.size)[0] + 4), height=y1 - y0,
            name=f"strip-text:{b.phase.name}"))
    first = min((b.row for b in strip.blocks), default=0)
    for lab in strip.labels:
        anns.append(dict(
            x=_axis_value(spec, lab.f), xref=xaxis, y=anchor, yref="paper",
            yshift=px(first + lab.lane) + (rp - 2) / 2, yanchor="middle", xanchor=lab.xanchor,
            showarrow=False, text=lab.text, font=font, bgcolor=lab.bg, bordercolor=lab.border,
            borderwidth=1, borderpad=1, hovertext=lab.hover, name=f"strip-label:{lab.name}"))
    for mk in strip.marks:
        dash = "dash" if mk.predicted else "solid"
        line = {"color": MARKER_COLOUR, "width": 1.3, "dash": dash}
        for xa, ya in time_axes:
            shapes.append(dict(type="line", xref=xa, yref=f"{ya} domain", x0=mk.x, x1=mk.x,
                               y0=0, y1=1, line=line, layer="above",
                               name=f"marker:{mk.label.name}"))
        shapes.append(dict(type="line", xref=xaxis, yref="paper", ysizemode="pixel",
                           yanchor=anchor, x0=mk.x, x1=mk.x, y0=0,
                           y1=px(first + mk.label.lane) + rp - 2, line=line, layer="above",
                           name=f"marker-stem:{mk.label.name}"))
    return shapes, anns


def tint_shapes(strip: Strip, time_axes: Sequence[tuple[str, str]]) -> list[dict]:
    """A faint tint of the first row's phases on every time panel (they never overlap)."""
    out = []
    for b in strip.blocks:
        if b.row != 0 or b.predicted:
            continue
        out += [dict(type="rect", xref=xa, yref=f"{ya} domain", x0=b.x0, x1=b.x1, y0=0, y1=1,
                     layer="below", fillcolor=mix(b.edge, 0.07), line={"width": 0},
                     name=f"tint:{b.phase.name}") for xa, ya in time_axes]
    return out


__all__ = ["AXIS_PX", "Block", "Label", "Mark", "Strip", "mix", "plan_strip", "row_px",
           "strip_items", "tint_shapes"]
