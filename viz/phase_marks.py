"""Phases and time markers of an `Analysis` on time axes, a legend of phases and a phase table.

Phases are bands (detected: solid translucent fill; predicted: dashed outline, light fill) in
the phase's own colour (`style.phase_colour`: fixed per name, the same in every run and on
every page), markers vertical lines (detected: solid; predicted: dashed). At most MAX_LABELS
of them get a label above the top time axis (alignment and fitting first, then the longest
phases, then markers), in rows (lanes) so that labels never overlap (text widths estimated).
Every phase and marker is named in the hover of a small symbol at the top of the first time
panel, in the legend (one entry per phase name) and in `phase_table`, which a page shows under
the figure. Compare's per-run events are thin lines in the run's colour.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from dynamics.annotations import Analysis

from .style import INK, MARKER_COLOUR, Style, phase_colour, phase_key, rgba, style_for
from .time_axes import TimeAxisSpec, fmt_time

LANE_PX = 21  # height of one row of phase/marker labels above the time panels (14 px text)
AXIS_PX_GUESS = 330  # narrowest pixel width of the time axes (for label-overlap estimates)
MAX_LANES = 3
MAX_LABELS = 3  # labels drawn on the figure; the rest are in hover, legend and phase table
# phases labelled first, in this order; then the others by length on the axis
LABEL_FIRST = ("alignment", "fitting", "OLS plateau", "convergence")
# the phases worth a band or a line where space is short (real-data and compare figures)
MAIN_PHASES = ("alignment", "fitting", "convergence")
EVENT_PHASES = ("alignment", "fitting", "plateau", "convergence", "OLS plateau")


def _append(fig: go.Figure, what: str, items: list[dict]) -> None:
    """Append `items` to layout.shapes or layout.annotations in one assignment: Plotly's
    add_shape/add_annotation re-validate every earlier item on each call (quadratic)."""
    if items:
        fig.layout[what] = (*fig.layout[what], *items)


def lane_px(style: Style) -> int:
    """Label-row height for this style: LANE_PX scaled with the label font (presenter mode)."""
    return round(LANE_PX * style.small / 14.0)


@dataclass(frozen=True)
class TimeLabel:
    """One phase or marker label: its text, axis position and anchor, lane and colours."""

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


def _span(spec: TimeAxisSpec, start: float, end: float) -> tuple[float, float] | None:
    """The phase [start, end] as display values clipped to the axis (None: not on it)."""
    x_lo, x_hi = (spec.t0 if spec.log else 0.0), spec.t1
    x0 = float(np.clip(spec.show(start), x_lo, x_hi))
    x1 = float(np.clip(spec.show(end), x_lo, x_hi))
    return (x0, x1) if x1 > x0 else None


def _priority(name: str, source: str, frac_len: float, marker: bool) -> tuple:
    key = phase_key(name)
    first = LABEL_FIRST.index(key) if key in LABEL_FIRST and not marker else len(LABEL_FIRST)
    return (marker, source != "detected", first, -frac_len)


def time_labels(analysis: Analysis | None, spec: TimeAxisSpec, style: Style | None = None,
                max_labels: int = MAX_LABELS, max_lanes: int = MAX_LANES,
                axis_px: float = AXIS_PX_GUESS) -> list[TimeLabel]:
    """The (at most `max_labels`) most important phase and marker labels, placed in at most
    `max_lanes` rows (lanes) above the time panels so that they do not overlap (estimated
    text widths on an axis at least `axis_px` wide): each goes into the first lane where it
    fits; one that fits in no lane is left out."""
    if analysis is None:
        return []
    style = style or style_for(False)
    char = style.small * 0.6 / axis_px
    items: list[tuple[tuple, float, float, float, str, str, str, str, str]] = []
    for ph in analysis.phases:
        span = _span(spec, ph.start, ph.end)
        if span is None:
            continue
        x0, x1 = span
        colour = phase_colour(ph.name)
        predicted = ph.source == "predicted"
        text = f"{ph.name}{' (predicted)' if predicted else ''}"
        w = len(text) * char + 10 / axis_px
        c = (_frac(spec, x0) + _frac(spec, x1)) / 2
        c = min(max(c, w / 2), 1 - w / 2)
        rank = _priority(ph.name, ph.source, _frac(spec, x1) - _frac(spec, x0), False)
        items.append((rank, c - w / 2, c + w / 2, c, "center", text, rgba(colour, 0.45),
                      colour if predicted else rgba(colour, 0.45), ph.evidence or ph.name))
    for mk in analysis.markers:
        v = float(spec.show(mk.time))
        if not (spec.lo <= v <= spec.t1) or not math.isfinite(v):
            continue
        text = f"┆ {mk.name}" if mk.source == "predicted" else f"│ {mk.name}"
        w = len(text) * char + 10 / axis_px
        f = _frac(spec, v)
        rank = _priority(mk.name, mk.source, 0.0, True)
        if f + w <= 1:
            items.append((rank, f, f + w, f, "left", text, "rgba(255,255,255,0.9)",
                          MARKER_COLOUR, mk.note or mk.name))
        else:
            text = f"{mk.name} {text[0]}"
            items.append((rank, f - w, f, f, "right", text, "rgba(255,255,255,0.9)",
                          MARKER_COLOUR, mk.note or mk.name))
    lanes: list[list[tuple[float, float]]] = []
    out: list[TimeLabel] = []
    for _rank, a, b, c, anchor, text, bg, border, hover in sorted(items, key=lambda it: it[0]):
        if len(out) >= max_labels:
            break
        lane = next((k for k, used in enumerate(lanes)
                     if all(b <= u0 or a >= u1 for u0, u1 in used)), len(lanes))
        if lane >= max_lanes:
            continue
        if lane == len(lanes):
            lanes.append([])
        lanes[lane].append((a, b))
        out.append(TimeLabel(text, _unfrac(spec, c), anchor, lane, bg, border, hover,
                             text.strip("┆│ ")))
    return out


def phase_table(analysis: Analysis | None) -> list[dict[str, object]]:
    """One row per phase and time marker of `analysis`, in order of time, for a table under
    the figure: {"what": "phase" | "time marker", "name", "source" ("detected" |
    "predicted"), "from t", "to t" (None for a marker), "colour" ('#RRGGBB', the band's),
    "evidence"}. Times in gradient-flow time t."""
    if analysis is None:
        return []
    rows: list[dict[str, object]] = []
    for ph in analysis.phases:
        rows.append({"what": "phase", "name": ph.name, "source": ph.source,
                     "from t": float(ph.start), "to t": float(ph.end),
                     "colour": phase_colour(ph.name), "evidence": ph.evidence})
    for mk in analysis.markers:
        rows.append({"what": "time marker", "name": mk.name, "source": mk.source,
                     "from t": float(mk.time), "to t": None, "colour": MARKER_COLOUR,
                     "evidence": mk.note})
    rows.sort(key=lambda r: (float(r["from t"]) if math.isfinite(float(r["from t"]))  # type: ignore[arg-type]
                             else math.inf, r["what"] != "phase"))
    return rows


def phase_names(analysis: Analysis | None, spec: TimeAxisSpec) -> list[str]:
    """The distinct phase names (`style.phase_key`) with a band on the axis, in order."""
    if analysis is None:
        return []
    return list(dict.fromkeys(phase_key(ph.name) for ph in analysis.phases
                              if _span(spec, ph.start, ph.end) is not None))


def phase_legend_traces(names: Sequence[str], style: Style | None = None) -> list[go.Scatter]:
    """One legend entry per distinct phase name (a square in the phase's colour), drawing
    nothing: the legend of phases that every figure with phase bands shows."""
    style = style or style_for(False)
    keys = list(dict.fromkeys(phase_key(n) for n in names))
    return [go.Scatter(x=[None], y=[None], mode="markers", name=k, legendgroup=f"phase:{k}",
                       legendrank=60 + i, hoverinfo="skip",
                       marker={"symbol": "square", "size": style.small * 0.9,
                               "color": rgba(phase_colour(k), 0.6),
                               "line": {"color": phase_colour(k), "width": 1}})
            for i, k in enumerate(keys)]


def _top_y(fig: go.Figure, yaxis: str) -> float | None:
    ax = fig.layout[f"yaxis{yaxis.removeprefix('y')}"]
    if ax.range is None:
        return None
    r0, r1 = (float(v) for v in ax.range)
    top = r1 - 0.06 * (r1 - r0)
    return 10.0 ** top if ax.type == "log" else top


def _hover_traces(fig: go.Figure, analysis: Analysis, axis: tuple[str, str],
                  spec: TimeAxisSpec, style: Style) -> None:
    """Symbols at the top of the first time panel whose hover names every phase (at its
    middle) and marker (at its time), with times and evidence."""
    y = _top_y(fig, axis[1])
    if y is None:
        return
    xs, colours, texts = [], [], []
    for ph in analysis.phases:
        span = _span(spec, ph.start, ph.end)
        if span is None:
            continue
        x0, x1 = span
        xs.append(math.sqrt(x0 * x1) if spec.log and x0 > 0 else (x0 + x1) / 2)
        colours.append(phase_colour(ph.name))
        why = f"<br>{ph.evidence}" if ph.evidence else ""
        texts.append(f"<b>{ph.name}</b> ({ph.source}): t = {fmt_time(float(ph.start))} – "
                     f"{fmt_time(float(ph.end))}{why}")
    mx, mtexts = [], []
    for mk in analysis.markers:
        v = float(spec.show(mk.time))
        if spec.lo <= v <= spec.t1 and math.isfinite(v):
            mx.append(v)
            note = f"<br>{mk.note}" if mk.note else ""
            mtexts.append(f"<b>{mk.name}</b> ({mk.source}): t = {fmt_time(float(mk.time))}"
                          f"{note}")
    common = {"xaxis": axis[0], "yaxis": axis[1], "showlegend": False,
              "hovertemplate": "%{hovertext}<extra></extra>",
              "hoverlabel": {"font": {"size": style.small}}}
    if xs:
        fig.add_trace(go.Scatter(x=xs, y=[y] * len(xs), mode="markers", name="phases",
                                 hovertext=texts, marker={"symbol": "square", "size": 9,
                                                          "color": colours, "opacity": 0.9,
                                                          "line": {"width": 1, "color": INK}},
                                 **common))
    if mx:
        fig.add_trace(go.Scatter(x=mx, y=[y] * len(mx), mode="markers", name="time markers",
                                 hovertext=mtexts, marker={"symbol": "triangle-down",
                                                           "size": 9, "color": MARKER_COLOUR},
                                 **common))


def add_time_annotations(fig: go.Figure, analysis: Analysis | None,
                         axes: Sequence[tuple[str, str]], spec: TimeAxisSpec,
                         style: Style | None = None, plot_px: float | None = None, *,
                         max_lanes: int = MAX_LANES, axis_px: float = AXIS_PX_GUESS) -> int:
    """Draw Analysis.phases (bands) and Analysis.markers (vertical lines) on every time axis,
    at most MAX_LABELS labels in non-overlapping rows above the first (top) axis, a hover
    symbol per phase and marker on that axis (its y range must be set) and the legend of
    phases. Returns the number of label rows (the caller leaves lane_px(style) pixels of top
    margin for each).

    `axes` are (xaxis, yaxis) ids like ("x2", "y2"). Detected phases: solid translucent fill;
    predicted: dashed outline, light fill. Markers: dashed (predicted) or solid (detected).
    The label rows sit a fixed number of pixels above the plot area (`yshift`), whatever
    the figure's height; `plot_px` is accepted for older callers and not needed.
    """
    if analysis is None or not axes:
        return 0
    style = style or style_for(False)
    shapes: list[dict] = []
    for ph in analysis.phases:
        colour = phase_colour(ph.name)
        span = _span(spec, ph.start, ph.end)
        if span is None:
            continue
        x0, x1 = span
        predicted = ph.source == "predicted"
        for xa, ya in axes:
            shapes.append(dict(
                type="rect", xref=xa, yref=f"{ya} domain", x0=x0, x1=x1, y0=0, y1=1,
                layer="below", fillcolor=rgba(colour, 0.06 if predicted else 0.16),
                line={"color": colour, "width": 2 if predicted else 0,
                      "dash": "dash" if predicted else "solid"},
                name=f"phase:{ph.name}:{ph.source}"))
    for mk in analysis.markers:
        v = float(spec.show(mk.time))
        if not (spec.lo <= v <= spec.t1) or not math.isfinite(v):
            continue
        predicted = mk.source == "predicted"
        for xa, ya in axes:
            shapes.append(dict(
                type="line", xref=xa, yref=f"{ya} domain", x0=v, x1=v, y0=0, y1=1,
                line={"color": MARKER_COLOUR, "width": 1.4,
                      "dash": "dash" if predicted else "solid"},
                name=f"marker:{mk.name}:{mk.source}"))
    _append(fig, "shapes", shapes)
    _hover_traces(fig, analysis, axes[0], spec, style)
    for tr in phase_legend_traces(phase_names(analysis, spec), style):
        fig.add_trace(tr)
    labels = time_labels(analysis, spec, style, max_lanes=max_lanes, axis_px=axis_px)
    xa, _ = axes[0]
    _append(fig, "annotations", [dict(  # rows at a pixel distance above the plots
            x=lab.x, xref=xa, y=1.0, yshift=4 + lane_px(style) * lab.lane, yref="paper",
            xanchor=lab.xanchor, yanchor="bottom", showarrow=False, text=lab.text,
            font={"size": style.small * 0.95, "color": INK}, bgcolor=lab.bg,
            bordercolor=lab.border, borderwidth=1, borderpad=1, hovertext=lab.hover,
            name=f"time-label:{lab.name}") for lab in labels])
    return 1 + max(lab.lane for lab in labels) if labels else 0


def detected_main_phases(analysis: Analysis) -> Analysis:
    """Detected alignment, fitting and convergence phases only (for crowded figures)."""
    return Analysis(phases=tuple(p for p in analysis.phases if p.source == "detected"
                                 and p.name in MAIN_PHASES))


def add_phase_bands(fig: go.Figure, analysis: Analysis | None,
                    axes: Sequence[tuple[str, str]], spec: TimeAxisSpec) -> None:
    """Light bands for the detected main phases on every time axis, no labels (each phase
    keeps its colour: alignment, fitting, convergence)."""
    if analysis is None:
        return
    shapes: list[dict] = []
    for ph in detected_main_phases(analysis).phases:
        x0 = float(np.clip(spec.show(ph.start), spec.lo, spec.t1))
        x1 = float(np.clip(spec.show(ph.end), spec.lo, spec.t1))
        if not x1 > x0:
            continue
        colour = phase_colour(ph.name)
        shapes += [dict(type="rect", xref=xa, yref=f"{ya} domain", x0=x0, x1=x1, y0=0,
                        y1=1, layer="below", fillcolor=rgba(colour, 0.14),
                        line={"width": 0}, name=f"phase:{ph.name}") for xa, ya in axes]
    _append(fig, "shapes", shapes)


def event_times(analysis: Analysis | None) -> list[tuple[str, float]]:
    """Detected phase starts (and the alignment end) worth a line on the time panels."""
    if analysis is None:
        return []
    out: list[tuple[str, float]] = []
    for ph in analysis.phases:
        if ph.source != "detected" or ph.name not in EVENT_PHASES:
            continue
        if ph.name == "alignment":
            out.append(("alignment ends", float(ph.end)))
        elif ph.start > 0:
            out.append((ph.name, float(ph.start)))
    return out


def add_event_lines(fig: go.Figure, events: Sequence[tuple[str, float]],
                    axes: Sequence[tuple[str, str]], colour: str, dash: str,
                    label: str) -> None:
    """A thin vertical line per (name, axis value) event on every time axis, below the data;
    shapes are named "event:<label>:<name>"."""
    _append(fig, "shapes", [
        dict(type="line", xref=xa, yref=f"{ya} domain", x0=v, x1=v, y0=0, y1=1,
             layer="below", line={"color": rgba(colour, 0.7), "width": 1.3, "dash": dash},
             name=f"event:{label}:{name}")
        for name, v in events for xa, ya in axes])


__all__ = ["EVENT_PHASES", "LABEL_FIRST", "LANE_PX", "MAIN_PHASES", "MAX_LABELS", "TimeLabel",
           "add_event_lines", "add_phase_bands", "add_time_annotations", "detected_main_phases",
           "event_times", "lane_px", "phase_legend_traces", "phase_names", "phase_table",
           "time_labels"]
