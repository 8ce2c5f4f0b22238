"""Figures as data: what a paper wants drawn, with no plotting library involved.

A `FigureSpec` is a row of `Panel`s; each panel has two `Axis` (linear or log, optional range
and tick labels) and a tuple of series — `Line` (optionally with markers and error bars),
`Points`, `Band` (a filled range between two curves) and `Rule` (a horizontal or vertical
line at a value). Colours are roles ("positive", "negative", "neutral", "theory", "accent",
"ink"), not colours: `viz.paper_figures.render` maps them onto the project's palette. The
library computes every number here (from a Trajectory, a table of runs, a theory); the
renderer only draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

Role = Literal["positive", "negative", "neutral", "theory", "accent", "ink"]
AxisType = Literal["linear", "log"]
Dash = Literal["solid", "dash", "dot", "dashdot"]
Symbol = Literal["circle", "diamond", "square", "x", "triangle-up"]


def _arr(v: Sequence[float] | np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=float)


@dataclass(frozen=True)
class Axis:
    """One axis: its title, linear or log, an optional range (in data units) and optional
    tick positions with their labels."""

    title: str
    type: AxisType = "linear"
    range: tuple[float, float] | None = None
    tickvals: tuple[float, ...] = ()
    ticktext: tuple[str, ...] = ()


@dataclass(frozen=True)
class Line:
    """y against x, drawn as a line (with markers when `markers`); `err_lo`/`err_hi` (same
    length) draw asymmetric error bars below/above y. `group` ties legend entries across
    panels (shown once)."""

    x: np.ndarray
    y: np.ndarray
    name: str
    role: Role = "positive"
    dash: Dash = "solid"
    width: float = 2.0
    opacity: float = 1.0
    markers: bool = False
    err_lo: np.ndarray | None = None
    err_hi: np.ndarray | None = None
    hover: tuple[str, ...] = ()  # one line of text per point ("" none)
    group: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "x", _arr(self.x))
        object.__setattr__(self, "y", _arr(self.y))


@dataclass(frozen=True)
class Points:
    """Markers at (x, y); `hover` one line of text per point."""

    x: np.ndarray
    y: np.ndarray
    name: str
    role: Role = "ink"
    symbol: Symbol = "circle"
    size: float = 9.0
    opacity: float = 1.0
    hover: tuple[str, ...] = ()
    group: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "x", _arr(self.x))
        object.__setattr__(self, "y", _arr(self.y))


@dataclass(frozen=True)
class Band:
    """The region between `lo` and `hi` over x (e.g. a theorem's allowed range)."""

    x: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    name: str
    role: Role = "theory"
    opacity: float = 0.2
    group: str = ""

    def __post_init__(self) -> None:
        for k in ("x", "lo", "hi"):
            object.__setattr__(self, k, _arr(getattr(self, k)))


@dataclass(frozen=True)
class Rule:
    """A horizontal (`axis` "y": y = value) or vertical ("x": x = value) line across the
    panel, named in its hover."""

    value: float
    axis: Literal["x", "y"]
    name: str
    role: Role = "theory"
    dash: Dash = "dash"


Series = Line | Points | Band | Rule


@dataclass(frozen=True)
class Panel:
    """One plot: a title, two axes and the series drawn on them (in order)."""

    title: str
    x: Axis
    y: Axis
    series: tuple[Series, ...] = ()


@dataclass(frozen=True)
class FigureSpec:
    """A figure: panels side by side (sharing the y axis when `shared_y`), a title and a
    caption (one or two sentences for the page, "" none)."""

    title: str
    panels: tuple[Panel, ...]
    caption: str = ""
    shared_y: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    def series(self) -> list[Series]:
        """Every series of every panel, in order (tests and exports read them)."""
        return [s for p in self.panels for s in p.series]


__all__ = ["Axis", "AxisType", "Band", "Dash", "FigureSpec", "Line", "Panel", "Points",
           "Role", "Rule", "Series", "Symbol"]
