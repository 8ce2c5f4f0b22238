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
    """A stretch of training time [start, end] (gradient-flow time units)."""

    name: str  # e.g. "alignment", "fitting", "plateau", "convergence", "Phase II"
    start: float
    end: float
    source: Source = "detected"
    evidence: str = ""  # one sentence: the rule that fired and its numbers


@dataclass(frozen=True)
class TimeMarker:
    """A single time: a predicted bound (dashed) or a detected event (solid)."""

    name: str
    time: float
    source: Source = "predicted"
    note: str = ""


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
    phases: tuple[Phase, ...] = ()
    markers: tuple[TimeMarker, ...] = ()
    directions: tuple[Direction, ...] = ()
    cone_normals: np.ndarray | None = None  # (k, d): boundaries {w: <w, x_i> = 0}
    notes: tuple[str, ...] = field(default_factory=tuple)
