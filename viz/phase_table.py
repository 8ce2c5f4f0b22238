"""The phases and time markers of an `Analysis` as table rows (a page shows them under the
figure; the figures draw them in the phase strip, `viz.phase_strip`)."""

from __future__ import annotations

import math

from dynamics.annotations import Analysis

from .style import MARKER_COLOUR, phase_colour
from .wording import marker_words, phase_words


def phase_table(analysis: Analysis | None) -> list[dict[str, object]]:
    """One row per phase and time marker of `analysis`, in order of time, for a table under
    the figure: {"what": "phase" | "time marker", "name", "source" ("detected" |
    "predicted"), "in words" (`viz.wording`), "from t", "to t" (None for a marker), "colour"
    ('#RRGGBB', the strip's), "evidence"}. Times in gradient-flow time t."""
    if analysis is None:
        return []
    rows: list[dict[str, object]] = []
    for ph in analysis.phases:
        rows.append({"what": "phase", "name": ph.name, "source": ph.source,
                     "in words": phase_words(ph).plain,
                     "from t": float(ph.start), "to t": float(ph.end),
                     "colour": phase_colour(ph.name), "evidence": ph.evidence})
    for mk in analysis.markers:
        rows.append({"what": "time marker", "name": mk.name, "source": mk.source,
                     "in words": marker_words(mk),
                     "from t": float(mk.time), "to t": None, "colour": MARKER_COLOUR,
                     "evidence": mk.note})
    rows.sort(key=lambda r: (float(r["from t"]) if math.isfinite(float(r["from t"]))  # type: ignore[arg-type]
                             else math.inf, r["what"] != "phase"))
    return rows


__all__ = ["phase_table"]
