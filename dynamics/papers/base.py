"""The one interface every paper module fills in: `Paper` and the small records it holds.

A paper module (`dynamics/papers/<key>.py`) defines a module-level ``PAPER = Paper(...)``;
`dynamics.papers` finds it (no list to edit). A paper owns everything about itself: where it
applies (`applies_to`), its theory and phase rules (called from its `annotate`, which
receives its own `tolerances`), its claims (each gating its theorem's hypotheses), the
quantities its sweeps record (`summaries`), its figures — as data (`dynamics.figure_spec`),
drawn by one renderer in viz — the sections of its page, its presets, experiments and
published numbers. Everything here is plain data or a pure function of a Config/Trajectory:
no Streamlit, no plotting.

Imports go one way: papers use the library below them (config, data, simulate, theory,
phases, readouts, metrics); `analysis`, `sweeps`, `reproduce` and the pages use papers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .. import ladders, metrics, theory
from ..annotations import Analysis, Direction, Phase, PhaseText, TimeMarker
from ..config import Config
from ..figure_spec import Axis, FigureSpec, Line, Panel, Role, Rule
from ..phases import PhaseRules
from ..simulate import simulate
from ..trajectory import Trajectory
from .claims import Claim
from .experiments import Experiment

Run = Callable[[Config], Trajectory]
"""How claims get their runs: `simulate` by default, the cached service on the pages."""

Tolerances = Mapping[str, float]
"""A paper's own thresholds for its overlays (e.g. Boursier & Flammarion's OLS-level
tolerance), by name; `analysis.analyse` passes each paper its own."""


def default_run(config: Config) -> Trajectory:
    """`simulate(config)`: the uncached run."""
    return simulate(config)


def dataset_view(traj: Trajectory) -> theory.Dataset:
    """The trajectory's data as a `theory.Dataset` (no rebuild: X, y, weights as recorded)."""
    return theory.Dataset(X=traj.X, y=traj.y, sw=traj.sw, classification=traj.classification,
                          directions=dict(traj.directions), meta=dict(traj.meta))


def run_label(config: Config) -> str:
    """How a run was integrated, for `Claim.integrator`: "gf rtol 1e-08" or "gd η = 0.002".
    The one spelling: papers never write their own."""
    i = config.integrator
    if i.method == "gd":
        return f"gd η = {i.lr:g}"
    return f"gf rtol {i.rtol:g}" + (f", atol {i.atol:g}" if i.atol is not None else "")


def _flat(config: Config) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def walk(d: Mapping[str, Any], prefix: str) -> None:
        for k, v in d.items():
            if isinstance(v, Mapping):
                walk(v, f"{prefix}{k}.")
            else:
                out[f"{prefix}{k}"] = v
    walk(config.to_dict(), "")
    return out


def run_name(presets: Callable[[bool], Mapping[str, Config]], config: Config) -> str:
    """The name a claim gives the run it got: the preset's name when `config` is one of the
    paper's presets (quick or full form), else the nearest preset and what differs from it
    ("toy_2d, model.gamma = 0.2"), so a claim never calls itself by a preset it did not
    run."""
    best: tuple[int, str, list[str]] | None = None
    flat = _flat(config)
    for quick in (True, False):
        for name, c in presets(quick).items():
            if c == config:
                return name
            ref = _flat(c)
            diff = [k for k in sorted(set(flat) | set(ref)) if flat.get(k) != ref.get(k)]
            if best is None or len(diff) < best[0]:
                best = (len(diff), name, diff)
    if best is None:
        return "custom run"
    _, name, diff = best
    shown = [f"{k} = {_short(flat.get(k))}" for k in diff if not k.startswith("data.")][:3]
    if any(k.startswith("data.") for k in diff):
        shown.insert(0, "other data")
    more = "" if len(diff) <= len(shown) else ", …"
    return f"{name}, " + ", ".join(shown) + more


def _short(v: Any) -> str:
    s = f"{v:g}" if isinstance(v, float) else str(v)
    return s if len(s) <= 24 else s[:21] + "..."


UNDECIDED = ("not established", "not reached within", "not solved within", "stopped at t",
             "would take", "was not recorded")
"""Phrases of the failures that are bounds of a computation, not hypotheses of a theorem:
`gate` says "not decided" for them."""


def gate(claim: Claim, failures: Sequence[str]) -> Claim:
    """A claim outside its theorem's hypotheses becomes an illustration naming the failing
    assumption(s): the measurement is kept, the verdict is None (not counted, never a
    pass). Failures that are a bounded computation stopping (`UNDECIDED`) are said as "not
    decided" instead."""
    if not failures:
        return claim
    bounds = [f for f in failures if any(u in f for u in UNDECIDED)]
    hyp = [f for f in failures if f not in bounds]
    why = "; ".join(([("outside the theorem's hypotheses: " + "; ".join(hyp))] if hyp else [])
                    + ([("not decided: " + "; ".join(bounds))] if bounds else []))
    claim.passed = None
    claim.details = why + (". " + claim.details if claim.details else "")
    return claim


def rate_failures(config: Config) -> list[str]:
    """Per-layer rates other than 1 ([] = none): every paper's theorem but Kunin et al.'s is
    about the plain gradient flow dθ/dt = −∇L; rates η_w, η_a change the time scale of each
    layer and the conserved quantity (η_w a_j² − η_a ‖w_j‖² instead of a_j² − ‖w_j‖²)."""
    it = config.integrator
    if it.lr_w == 1.0 and it.lr_a == 1.0:
        return []
    return [f"per-layer rates η_w = {it.lr_w:g}, η_a = {it.lr_a:g} (the theorem is for the "
            "plain gradient flow, both rates 1)"]


def unmeasured(name: str, statement: str, failures: Sequence[str], integrator: str = "",
               tolerance: str = "") -> Claim:
    """A claim that cannot even be measured on the run (its data or records do not allow it):
    an illustration naming why (`failures`), never a crash and never a verdict."""
    return gate(Claim(name, statement, "not measured", "—", tolerance or "—", None,
                      integrator=integrator), list(failures) or ["not measurable on this run"])


def w_recorded(traj: Trajectory) -> bool:
    """The full W is stored at every frame (the claims that read neurons need it)."""
    return traj.n_frames > 0 and len(np.unique(np.asarray(traj.W_frames) % traj.n_frames)) \
        == traj.n_frames


def achieved_accuracy(traj: Trajectory) -> tuple[float, str]:
    """The integration's achieved accuracy on this run, for the claims' tolerances: the
    relative drift of a_j² − ‖w_j‖² (`metrics.relative_balance_drift`: conserved by the flow,
    so under gf it is the integration error — at ReLU kinks the kink floor's, not rtol's —
    and under GD the step's departure from the flow), with a floor at gf's rtol (GD: η²).
    Frozen output layers have no such invariant: then rtol (GD: η), said so. Returns
    (ε, how it was obtained) — a claim states it beside its verdict."""
    cfg = traj.config
    it = cfg.integrator
    floor = float(it.rtol) if it.method == "gf" else float(it.lr) ** 2
    fm = traj.frame_metrics
    if cfg.model.train_output and "balance_drift" in fm and "max_norm" in fm \
            and traj.n_frames:
        drift = metrics.relative_balance_drift(fm["balance_drift"], fm["max_norm"], traj.a)
        if np.isfinite(drift):
            eps = max(float(drift), floor)
            return eps, (f"achieved accuracy ε = {eps:.2g} (drift of a_j² − ‖w_j‖², which the "
                         f"flow conserves; {run_label(cfg)})")
    eps = float(it.rtol) if it.method == "gf" else float(it.lr)
    return eps, f"accuracy taken as ε = {eps:.2g} ({run_label(cfg)}; no balance invariant)"


def full_w(traj: Trajectory, frame: int) -> np.ndarray:
    """The full W at `frame` (claims need it; the papers' presets record it at every frame)."""
    W = traj.W_at(frame)
    if W is None:
        raise ValueError(f"the full W was not recorded at frame {frame}")
    return W


# ----------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Published:
    """A number a paper states (or one derived for it): its `value`, where it comes from
    (`source`: "Table 1, Appendix H", "Figure 5", "abstract") and on what basis (`basis`:
    paper, derived — computed here from the paper's setting —, reviews, secondary)."""

    value: Any
    source: str
    basis: Literal["paper", "derived", "reviews", "secondary"] = "paper"


@dataclass
class PaperOverlay:
    """What one paper adds to a run's analysis (`Paper.annotate`): phases, time markers and
    directions to draw, and notes (appended in registry order after the generic ones; the
    page shows a paper's notes under its figure)."""

    phases: list[Phase] = field(default_factory=list)
    markers: list[TimeMarker] = field(default_factory=list)
    directions: list[Direction] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Knob:
    """One widget of the paper's page, as data, showing the setting `field` of the preset on
    screen: the page draws a select slider when `options` is given (the preset's own value
    added when it is not one of them), else a number input (int or float as the preset's
    value is); `format` writes a value ("%g"). The URL key is ``<paper>.<key>`` and holds a
    value only when it differs from the preset's. `shown(config)` is the widget value of a
    config's setting (`back` maps the config value to it), `update(value)` the config update
    of a widget value (`convert` maps it back)."""

    key: str
    label: str
    field: str
    options: tuple[Any, ...] | None = None
    min_value: float | None = None
    max_value: float | None = None
    step: float | None = None
    format: str | None = None
    help: str | None = None
    convert: Callable[[Any], Any] = float
    back: Callable[[Any], Any] = float

    def shown(self, config: Config) -> Any:
        """The widget value showing `config`'s setting `field`."""
        value: Any = config
        for part in self.field.split("."):
            value = getattr(value, part)
        return self.back(value)

    def choices(self, config: Config) -> list[Any] | None:
        """The select slider's options for a preset `config` (its value among them), or None
        for a number input."""
        if self.options is None:
            return None
        return ladders.with_value(self.options, self.shown(config))

    def update(self, value: Any) -> dict[str, Any]:
        """The config update for a widget value."""
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
    runs the paper's claims read (quick: the quick claims, full: the full ones), so
    ``python -m dynamics reproduce`` runs it on Dask first and the claims find the runs in
    the cache."""

    name: str
    title: str
    paper: str  # who claims it, as shown on the Sweeps page
    claim: str
    build: Callable[[bool], dict[str, Any]]
    prefetch_claims: bool = False


SummaryValue = float | bool | str | None


@dataclass(frozen=True)
class Summary:
    """A per-run quantity a paper's sweeps record (one column of a sweep's table):
    `compute(traj, detected, options)` from the trajectory, the detected phases (generic and
    every applicable paper's; only read when `needs_phases`) and the sweep's options
    (`trap_tol`, `trap_threshold`, …); NaN/None where it does not apply."""

    name: str
    description: str
    compute: Callable[[Trajectory, Sequence[Phase], Mapping[str, Any]], SummaryValue]
    needs_phases: bool = False


@dataclass(frozen=True)
class ReportFigure:
    """The figure `python -m viz.report_figures` draws for the paper: the run of `config`
    and `figure(trajectory, analysis)`, a declarative figure (`loss_and_series` gives the
    common loss-beside-a-quantity form)."""

    config: Config
    figure: Callable[[Trajectory, Analysis | None], FigureSpec]


def _time(traj: Trajectory) -> np.ndarray:
    # t = 0 cannot sit on a log axis: drawn at half the first recorded time
    return np.maximum(np.asarray(traj.t, float), float(traj.t[1]) * 0.5)


def loss_and_series(title: str, panel_title: str,
                    series: Callable[[Trajectory], Mapping[str, np.ndarray]]
                    ) -> Callable[[Trajectory, Analysis | None], FigureSpec]:
    """A report figure builder: the loss (left) and `series(traj)` (right) against t on log
    axes, with the analysis' time markers (dashed: predicted; solid: detected)."""

    def build(traj: Trajectory, analysis: Analysis | None) -> FigureSpec:
        t = _time(traj)
        rules = tuple(Rule(m.time, "x", m.name, "theory" if m.source == "predicted" else "ink",
                           "dash" if m.source == "predicted" else "solid")
                      for m in (analysis.markers if analysis is not None else ()))
        loss = Panel("loss", Axis("t", "log"), Axis("loss", "log"),
                     (Line(t, traj.loss, "loss", "ink"), *rules))
        roles: tuple[Role, ...] = ("positive", "negative", "accent", "neutral")
        lines = tuple(Line(t, v, k, roles[i % 4], "solid" if i < 4 else "dash")
                      for i, (k, v) in enumerate(series(traj).items()))
        right = Panel(panel_title, Axis("t", "log"), Axis(panel_title), (*lines, *rules))
        return FigureSpec(f"{title}: {traj.config.data.kind}", (loss, right))
    return build


@dataclass(frozen=True)
class Section:
    """A block of the paper's page under its main figure: a heading, Markdown text and,
    optionally, a figure built from the run on screen (`figure(traj, analysis)`; None when
    the run is not one it can draw, e.g. other data)."""

    title: str
    text: str = ""
    figure: Callable[[Trajectory, Analysis | None], FigureSpec | None] | None = None


@dataclass(frozen=True)
class StudySection:
    """A figure of many runs on the paper's page (e.g. a published table reproduced per
    seed): `load(directory)` reads it from the files ``python -m dynamics reproduce`` wrote
    (None: none there); otherwise `compute(run)` makes a quick version, behind a button
    labelled `button` (`cost` says what pressing it costs)."""

    title: str
    text: str
    load: Callable[[Path], FigureSpec | None]
    compute: Callable[[Run], FigureSpec]
    button: str
    cost: str = ""


def always(_config: Config) -> bool:
    return True


@dataclass(frozen=True)
class Paper:
    """Everything the library and the pages know about one paper.

    `order` sorts the registry (pages, reports, analysis); `text` is the page's Markdown
    statement of the claim; `note` an extra remark shown under the paper's figure ("" none).
    `applies_to(config)`: whether the paper has anything to add to a run of that config
    (`annotate` and `claims_for_run` are only called then). `annotate(traj, rules,
    tolerances)` receives the paper's own `tolerances` (overridable per call of
    `analysis.analyse`). `numbers`: the published (or derived) numbers the claims compare
    with, each with its source. `experiments`: per preset, the "try this" changes the pages
    offer as buttons. `artifacts`: data files the reproduction writes for the pages,
    computed from the same (cached) runs as the claims.
    """

    key: str
    order: int
    title: str
    short: str
    text: str
    presets: Callable[[bool], dict[str, Config]]
    claims: Callable[[bool, Run], list[Claim]]
    claims_for_run: Callable[[Trajectory], list[Claim]]
    annotate: Callable[[Trajectory, PhaseRules, Tolerances], PaperOverlay]
    report_figure: Callable[[bool], ReportFigure]
    numbers: Mapping[str, Published]
    applies_to: Callable[[Config], bool] = always
    tolerances: Tolerances = field(default_factory=dict)
    # the paper's own phases by name: their plain words and the commentary's sentence
    phase_text: Mapping[str, PhaseText] = field(default_factory=dict)
    summaries: tuple[Summary, ...] = ()
    sections: tuple[Section | StudySection, ...] = ()
    experiments: Mapping[str, tuple[Experiment, ...]] = field(default_factory=dict)
    knobs: tuple[Knob, ...] = ()
    # per preset: a name a reader knows and what it reproduces ("Four points in the plane,
    # ε = 10⁻²⁰ · Appendix A.1, Figure 6")
    preset_titles: Mapping[str, str] = field(default_factory=dict)
    showcases: tuple[Showcase, ...] = ()
    comparisons: Mapping[str, Comparison] = field(default_factory=dict)
    builtin_sweeps: tuple[BuiltinSweep, ...] = ()
    note: str = ""
    # files `python -m dynamics reproduce` writes beside the report: (quick, run) → name → text
    artifacts: Callable[[bool, Run], dict[str, str]] | None = None

    def check(self, quick: bool = True, run: Run | None = None) -> list[Claim]:
        """Run the paper's presets (through `run`, default `simulate`) and check its claims."""
        return self.claims(quick, run or default_run)

    def overlay(self, traj: Trajectory, rules: PhaseRules,
                tolerances: Tolerances | None = None) -> PaperOverlay:
        """`annotate` with the paper's tolerances (updated by `tolerances`); an empty overlay
        when the paper does not apply to the run's config."""
        if not self.applies_to(traj.config):
            return PaperOverlay()
        return self.annotate(traj, rules, {**self.tolerances, **(tolerances or {})})

    def run_claims(self, traj: Trajectory) -> list[Claim]:
        """`claims_for_run` when the paper applies to the run's config, else none."""
        return self.claims_for_run(traj) if self.applies_to(traj.config) else []

    def run_name(self, config: Config) -> str:
        """The name of `config` among this paper's presets (see `run_name`)."""
        return run_name(self.presets, config)

    def knob_updates(self, values: Mapping[str, Any], preset: Config) -> dict[str, Any]:
        """Config updates of `preset` from the knobs' widget values (keyed by `Knob.key`):
        only the values that differ from the preset's own."""
        out: dict[str, Any] = {}
        for k in self.knobs:
            if k.key in values and values[k.key] != k.shown(preset):
                out.update(k.update(values[k.key]))
        return out


# ----------------------------------------------------------------------------- shared knobs
WIDTH_KNOB = Knob("width", "width m (hidden neurons)", "model.width", min_value=1,
                  max_value=2000, step=10, convert=int, back=int,
                  help="Number of hidden neurons.")


def scale_width_gamma_knobs(symbol: str = "ε") -> tuple[Knob, ...]:
    """Init scale (named `symbol`, as the paper does), width m and leaky slope γ, each
    starting at the preset's value (the knobs of Min et al.'s and Boursier & Flammarion's
    sections)."""
    return (
        Knob("eps", f"init scale {symbol}", "init.scale", options=ladders.EPS,
             format="%g", help="Size of the initial weights. Smaller: a longer alignment "
                               "phase, with norms tiny for longer."),
        WIDTH_KNOB,
        Knob("gamma", "leaky slope γ", "model.gamma", min_value=0.0, max_value=1.0,
             step=ladders.GAMMA_STEP, format="%g",
             help="σ(u) = max(u, γu): 0 is ReLU; a leaky slope lets every neuron keep some "
                  "gradient."),
    )
