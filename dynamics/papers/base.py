"""The one interface every paper module fills in: `Paper` and the small records it holds.

A paper module (`dynamics/papers/<key>.py`) defines a module-level ``PAPER = Paper(...)``;
`dynamics.papers` finds it (no list to edit). Everything here is plain data or a pure function
of a Config/Trajectory: no Streamlit, no figures. Pages render `Knob`s, `Showcase`s and
`Comparison`s as widgets; `viz` draws `ReportFigure`s; `dynamics.sweeps` runs `BuiltinSweep`s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import theory
from ..annotations import Direction, Phase, TimeMarker
from ..config import Config
from ..phases import PhaseRules
from ..trajectory import Trajectory
from .claims import Claim

Run = Callable[[Config], Trajectory]
"""How claims get their runs: `simulate` by default, the cached service on the pages."""


def default_run(config: Config) -> Trajectory:
    """`simulate(config)` (imported on first use: the kernels load only when a claim runs)."""
    from ..simulate import simulate

    return simulate(config)


def dataset_view(traj: Trajectory) -> theory.Dataset:
    """The trajectory's data as a `theory.Dataset` (no rebuild: X, y, weights as recorded)."""
    return theory.Dataset(X=traj.X, y=traj.y, sw=traj.sw, classification=traj.classification,
                          directions=dict(traj.directions), meta=dict(traj.meta))


def run_label(config: Config) -> str:
    """How a run was integrated, for `Claim.integrator`: "gf rtol 1e-08" or "gd η = 0.002"."""
    i = config.integrator
    if i.method == "gd":
        return f"gd η = {i.lr:g}"
    return f"gf rtol {i.rtol:g}" + (f", atol {i.atol:g}" if i.atol is not None else "")


def full_w(traj: Trajectory, frame: int) -> np.ndarray:
    """The full W at `frame` (claims need it; the papers' presets record it at every frame)."""
    W = traj.W_at(frame)
    if W is None:
        raise ValueError(f"the full W was not recorded at frame {frame}")
    return W


@dataclass
class Annotations:
    """What a paper adds to `analysis.analyse` for one trajectory (appended in registry order
    after the generic phases, markers and extremal directions)."""

    phases: list[Phase] = field(default_factory=list)
    markers: list[TimeMarker] = field(default_factory=list)
    directions: list[Direction] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Knob:
    """One widget of the paper's page, as data. The page draws a select slider when `options`
    is given, else a number input (int or float as `default` is); the URL key is
    ``<paper>.<key>``. `keep(value)` is True for the widget values meaning "the preset's own
    value" (no update); `convert` maps the widget value to the config value of `field`."""

    key: str
    label: str
    field: str
    default: Any
    options: tuple[Any, ...] | None = None
    min_value: float | None = None
    max_value: float | None = None
    step: float | None = None
    format: str | None = None
    help: str | None = None
    keep: Callable[[Any], bool] | None = None
    convert: Callable[[Any], Any] = float

    def update(self, value: Any) -> dict[str, Any]:
        """The config update for a widget value ({} when it means "keep the preset")."""
        if self.keep is not None and self.keep(value):
            return {}
        return {self.field: self.convert(value)}


@dataclass(frozen=True)
class Showcase:
    """A one-click scenario on the Overview: a preset of the paper, a label and one line."""

    preset: str
    label: str
    line: str


@dataclass(frozen=True)
class Comparison:
    """A pair of runs for the Compare page (key: its URL name)."""

    title: str
    note: str
    a: Config
    b: Config


@dataclass(frozen=True)
class BuiltinSweep:
    """A built-in sweep: a paper's scaling claim as a picture. `build(quick)` gives the sweep
    spec as a dict (`dynamics.sweeps.Sweep.from_dict`). `prefetch_claims`: its points are
    runs the paper's claims read (quick: the fast claims, full: the full ones), so
    ``python -m dynamics reproduce`` runs it on Dask first and the claims find the runs in
    the cache."""

    name: str
    title: str
    paper: str  # who claims it, as shown on the Sweeps page
    claim: str
    build: Callable[[bool], dict[str, Any]]
    prefetch_claims: bool = False


@dataclass(frozen=True)
class ReportFigure:
    """The figure `python -m viz.report_figures` draws for the paper: the run of `config`, its
    loss on the left and `series(trajectory)` (name → values per frame) on the right under
    `panel_title`, with the analysis' markers."""

    config: Config
    panel_title: str
    series: Callable[[Trajectory], dict[str, np.ndarray]]


@dataclass(frozen=True)
class Paper:
    """Everything the library and the pages know about one paper.

    `order` sorts the registry (pages, reports, analysis); `text` is the page's Markdown
    statement of the claim; `note` an extra remark shown under the paper's figure ("" none);
    `artifacts` data files the reproduction writes for the pages (e.g. Chistikov et al.'s
    per-seed Table 1), computed from the same (cached) runs as the claims.
    """

    key: str
    order: int
    title: str
    short: str
    text: str
    presets: Callable[[bool], dict[str, Config]]
    claims: Callable[[bool, Run], list[Claim]]
    claims_for_run: Callable[[Trajectory], list[Claim]]
    annotate: Callable[[Trajectory, PhaseRules, float], Annotations]
    report_figure: Callable[[bool], ReportFigure]
    numbers: Mapping[str, Any]
    knobs: tuple[Knob, ...] = ()
    showcases: tuple[Showcase, ...] = ()
    comparisons: Mapping[str, Comparison] = field(default_factory=dict)
    builtin_sweeps: tuple[BuiltinSweep, ...] = ()
    note: str = ""
    # files `python -m dynamics reproduce` writes beside the report: (fast, run) → name → text
    artifacts: Callable[[bool, Run], dict[str, str]] | None = None

    def check(self, fast: bool = True, run: Run | None = None) -> list[Claim]:
        """Run the paper's presets (through `run`, default `simulate`) and check its claims."""
        return self.claims(fast, run or default_run)

    def knob_updates(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Config updates from the knobs' widget values (keyed by `Knob.key`)."""
        out: dict[str, Any] = {}
        for k in self.knobs:
            if k.key in values:
                out.update(k.update(values[k.key]))
        return out


# ----------------------------------------------------------------------------- shared knobs
EPS_OPTIONS = ("preset", "1e-20", "1e-12", "1e-8", "1e-6", "1e-4", "1e-3", "1e-2", "0.1", "1")


def scale_width_gamma_knobs() -> tuple[Knob, ...]:
    """Init scale ε, width m and leaky slope γ, each able to keep the preset's value (the
    knobs of Min et al.'s and Boursier & Flammarion's sections)."""
    return (
        Knob("eps", "init scale ε (λ)", "init.scale", "preset", options=EPS_OPTIONS,
             help="'preset': the paper's value. Smaller: longer alignment.",
             keep=lambda v: v == "preset"),
        Knob("width", "width m (0: preset)", "model.width", 0, min_value=0, max_value=2000,
             step=10, keep=lambda v: not v, convert=int),
        Knob("gamma", "leaky slope γ (−1: preset)", "model.gamma", -1.0, min_value=-1.0,
             max_value=1.0, step=0.05, format="%g", keep=lambda v: v < 0),
    )
