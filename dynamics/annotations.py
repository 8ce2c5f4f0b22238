"""What theory and phase detection add to a trajectory, as plain data for the figures.

`Analysis` is produced by `dynamics.analysis.analyse(trajectory)` and drawn by `viz/` without
any further computation: phases as shaded bands (detected: solid; predicted by theory:
dashed), time markers as vertical lines, directions (in input space R^d; the figure projects
them onto the trajectory's plane) as rays, and activation-cone boundaries as the lines
{w : ⟨w, x_i⟩ = 0} given by their normals x_i.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

Source = Literal["detected", "predicted"]


@dataclass(frozen=True)
class Phase:
    """A stretch of training time [start, end] (gradient-flow time units). `name` is the
    paper's own name for it ("alignment", "Phase II"; hovers show it), `plain` what happens
    in it in plain words ("neurons turn, norms tiny"; the labels a student reads); `by` the
    paper whose theory describes it ("Wang & Ma"; `analysis.analyse` sets it for a paper's
    overlay), "" for the phases every run is read for (`dynamics.phases`)."""

    name: str  # e.g. "alignment", "fitting", "plateau", "convergence", "Phase II"
    start: float
    end: float
    source: Source = "detected"
    evidence: str = ""  # one sentence: the rule that fired and its numbers
    plain: str = ""  # "" : the name says it
    by: str = ""  # whose phase: a paper's short name (its theory names it), "" the generic


@dataclass(frozen=True)
class PhaseText:
    """A paper's words for one of its phases (`Paper.phase_text`, by phase name): `plain`, its
    `Phase.plain`; `says`, the commentary's sentence for a frame inside it (`viz.commentary`;
    "": the sentence every phase gets), a `str.format` template of that frame's values —
    {plain}, {big} (largest ‖w_j‖), {grow} (its factor since t = 0), {loss}, {loss0}, {acc}
    (training accuracy, a fraction), {n_active}, {end} (the phase's end) — and of where the
    figure shows them: {directions}, {norms_panel}, {loss_panel}, {accuracy_panel};
    `says_until`: the sentence while the phase ends before the run does ("": `says`);
    `short`: the phase strip's words when `plain` does not fit ("": `plain`); `tag`: the
    paper's own short name ("IV"), inside a block too narrow for any words (the paper's page
    defines it)."""

    plain: str
    says: str = ""
    says_until: str = ""
    short: str = ""
    tag: str = ""


@dataclass(frozen=True)
class TimeMarker:
    """A single time: a predicted bound (dashed) or a detected event (solid). `name` is the
    paper's own (hovers show it), `plain` what it marks in plain words, set by the paper that
    adds it ("theory: alignment time")."""

    name: str
    time: float
    source: Source = "predicted"
    note: str = ""
    plain: str = ""  # "": the words of the markers every run gets (`viz.wording`), or the name


@dataclass(frozen=True)
class Direction:
    """A named direction in input space, drawn as a ray in the neuron panel."""

    name: str
    vector: np.ndarray  # (d,)
    # kind: extremal_max, extremal_min, extremal_saddle, signal, teacher or target
    kind: str
    note: str = ""


@dataclass(frozen=True)
class Analysis:
    """Everything `analysis.analyse` found for one run: the generic phases and markers, each
    applicable paper's overlay (`papers.base.PaperOverlay`) merged in, and the notes, with
    `paper_notes` saying which paper wrote which note ((paper key, note) pairs)."""

    phases: tuple[Phase, ...] = ()
    markers: tuple[TimeMarker, ...] = ()
    directions: tuple[Direction, ...] = ()
    cone_normals: np.ndarray | None = None  # (k, d): boundaries {w: <w, x_i> = 0}
    notes: tuple[str, ...] = field(default_factory=tuple)
    paper_notes: tuple[tuple[str, str], ...] = ()

    def notes_of(self, paper: str) -> tuple[str, ...]:
        """The notes paper `paper` added for this run."""
        return tuple(n for k, n in self.paper_notes if k == paper)
