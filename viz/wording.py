"""Plain words for what the figures draw: phases, time markers, theory directions and legend
entries, each with the paper's own name and symbols kept for the hover.

A phase's plain name is `Phase.plain` when the analysis gives one, else its detector's (the
phases every run is read for: `dynamics.phases.PLAIN`, with the strip's short words here) or
its paper's (`Paper.phase_text`: each paper names its phases in its module); unknown names
are shown as they are. Directions are named by
what they mean for the neurons ("where positive neurons go"), by name first, then by kind.
Pure tables and lookups: nothing here reads a trajectory.
"""

from __future__ import annotations

from dataclasses import dataclass

from dynamics.annotations import Direction, Phase, TimeMarker
from dynamics.papers import PAPERS
from dynamics.phases import PLAIN

from .style import phase_key


@dataclass(frozen=True)
class PhaseWords:
    """`plain`: the strip's text ("neurons turn, norms tiny"); `short`: when that does not
    fit ("neurons turn"); `source`: who names it so (for the hover); `tag`: the paper's own
    short name ("IV"), inside a block too narrow for any words when no tab finds room (the
    page's text defines it)."""

    plain: str
    short: str
    source: str = ""
    tag: str = ""


SHORT: dict[str, str] = {
    "alignment": "neurons turn",
    "fitting": "loss falls",
    "convergence": "fitted",
    "settled": "settled",
    "initial plateau": "loss flat",
    "plateau": "stalls",
    "accuracy plateau": "acc. stuck",
}
"""The strip's short words of the phases every run is read for (their plain words are
`dynamics.phases.PLAIN`, what `Phase.plain` says)."""
PHASE_WORDS: dict[str, PhaseWords] = {
    **{name: PhaseWords(plain, SHORT[name]) for name, plain in PLAIN.items()},
    "saddle escape": PhaseWords("loss starts to fall", "escape"),
}
"""The phases every run is read for (`dynamics.phases`), in plain words."""
PAPER_WORDS: dict[str, PhaseWords] = {
    name: PhaseWords(text.plain, text.short or text.plain, paper.short, text.tag)
    for paper in PAPERS.values() for name, text in paper.phase_text.items()}
"""A paper's own phases, in its words (`Paper.phase_text`), named as by the paper."""

# generic phases that restate what a curve shows: folded into the hover of a drawn phase
# that covers them instead of a strip row of their own
FOLDABLE = ("initial plateau", "plateau", "accuracy plateau")
STORY = ("alignment", "fitting", "convergence", "settled")  # the strip's first row, in order

MARKER_WORDS: dict[str, str] = {
    "saddle escape": "loss starts to fall",
    "plateau escape": "loss leaves a plateau",
    "patterns settle": "patterns settle",
}
"""The markers every run gets (`dynamics.phases`), in plain words; a paper's markers carry
their own (`TimeMarker.plain`)."""


def phase_words(phase: Phase | str) -> PhaseWords:
    """Plain words of a phase: the analysis' own (`phase.plain`), else the table's or its
    paper's (`PAPER_WORDS`), else the name itself."""
    name = phase if isinstance(phase, str) else phase.name
    key = phase_key(name)
    known = PHASE_WORDS.get(key) or PAPER_WORDS.get(key) or next(
        (w for table in (PHASE_WORDS, PAPER_WORDS) for k, w in table.items()
         if k.casefold() == key.casefold()), None)
    own = None if isinstance(phase, str) else getattr(phase, "plain", None)
    if own:
        return PhaseWords(str(own), known.short if known else str(own),
                          known.source if known else "", known.tag if known else "")
    return known or PhaseWords(key, key)


def marker_words(marker: TimeMarker | str) -> str:
    """Plain words of a time marker (its own `plain` if it has one, else the table's, else
    its name)."""
    name = marker if isinstance(marker, str) else marker.name
    if not isinstance(marker, str) and marker.plain:
        return marker.plain
    if name in MARKER_WORDS:
        return MARKER_WORDS[name]
    if name.startswith("last activation change"):
        return "patterns settle"
    return name.removesuffix(" (predicted)")


# ----------------------------------------------------------------------------- directions
# (words, rank): lower rank = the label a group of coinciding directions is named by
DIRECTION_NAMES: dict[str, tuple[str, int]] = {
    "x₊": ("sum of the +1 points", 3),
    "x₋": ("sum of the −1 points", 3),
    "x₊ signal": ("sum of the +1 points", 3),
    "x₋ signal": ("sum of the −1 points", 3),
    "γ_[n]": ("target of positive neurons", 2),
    "v*": ("teacher neuron", 1),
    "OLS direction": ("least-squares fit", 1),
    "μ ∝ p x₊ − x₋": ("label-weighted mean μ", 2),
    "x₋^⊥": ("⊥ to the −1 signal", 2),
}
DIRECTION_KINDS: dict[str, tuple[str, int]] = {
    "extremal_max": ("where positive neurons go", 0),
    "extremal_min": ("where negative neurons go", 0),
    "extremal_saddle": ("unstable direction (saddle)", 1),
    "teacher": ("teacher neuron", 1),
    "target": ("theory's target", 2),
    "signal": ("data signal", 3),
}


def direction_words(d: Direction) -> tuple[str, int]:
    """(words, rank) naming a direction on the neuron panel: by its name when known, else by
    its kind."""
    if d.name in DIRECTION_NAMES:
        return DIRECTION_NAMES[d.name]
    return DIRECTION_KINDS.get(d.kind, (d.name, 4))


# ----------------------------------------------------------------------------- legend
LEGEND_WORDS = {
    "pos": "positive neuron",
    "neg": "negative neuron",
    "data±": "data (colour = label)",
    "data": "data (colour = target y)",
    "cones": "on/off edge",
}
MAX_LEGEND = 7  # entries per figure; the rest are named on hover


__all__ = ["DIRECTION_KINDS", "DIRECTION_NAMES", "FOLDABLE", "LEGEND_WORDS", "MARKER_WORDS",
           "MAX_LEGEND", "PAPER_WORDS", "PHASE_WORDS", "SHORT", "STORY", "PhaseWords",
           "direction_words", "marker_words", "phase_words"]
