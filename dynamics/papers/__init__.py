"""One module per paper, behind one interface (`Paper`, in `base.py`); the registry `PAPERS`.

Each ``dynamics/papers/<key>.py`` that defines a module-level ``PAPER`` is found here by
discovery and sorted by `Paper.order`: adding a paper is adding one file (and its test file).
The Papers, Overview, Compare and Sweeps pages, the lessons, `analysis.analyse`, the sweep
built-ins and summaries, and ``python -m dynamics reproduce`` (`dynamics.reproduce`) all
iterate `PAPERS`; no other list of papers exists.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..trajectory import Trajectory
from .base import (
    BuiltinSweep,
    Comparison,
    Knob,
    Paper,
    PaperOverlay,
    Published,
    ReportFigure,
    Run,
    Section,
    Showcase,
    StudySection,
    Summary,
    Tolerances,
    dataset_view,
    default_run,
    gate,
    run_label,
    run_name,
)
from .claims import Claim, claims_json, claims_markdown
from .experiments import Experiment, Times

_HELPERS = {"base", "claims", "experiments", "solvers"}  # modules here that are not papers


def _discover() -> dict[str, Paper]:
    found: list[Paper] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name in _HELPERS:
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        paper = getattr(mod, "PAPER", None)
        if isinstance(paper, Paper):
            found.append(paper)
    found.sort(key=lambda p: (p.order, p.key))
    keys = [p.key for p in found]
    if len(set(keys)) != len(keys):  # pragma: no cover - a packaging mistake
        raise RuntimeError(f"two paper modules share a key: {keys}")
    return {p.key: p for p in found}


PAPERS: dict[str, Paper] = _discover()
"""key → Paper, in display order."""


def get_paper(key: str) -> Paper:
    """The paper by key (ValueError naming the choices for an unknown one)."""
    if key not in PAPERS:
        raise ValueError(f"unknown paper {key!r}; choose from {', '.join(PAPERS)}")
    return PAPERS[key]


def check_claims(paper: str, quick: bool = True, run: Run | None = None) -> list[Claim]:
    """Run a paper's presets (through `run`, default `simulate`) and check its claims."""
    return get_paper(paper).check(quick, run)


def claims_for_run(traj: Trajectory, paper: str) -> list[Claim]:
    """Quick checks of a paper's claims on *this* run (current knobs), from the recorded
    trajectory and the theory's formulas; no extra runs; none when the paper does not apply
    to the run."""
    return get_paper(paper).run_claims(traj)


__all__ = ["PAPERS", "BuiltinSweep", "Claim", "Comparison", "Experiment", "Knob", "Paper",
           "PaperOverlay", "Published", "ReportFigure", "Run", "Section", "Showcase",
           "StudySection", "Summary", "Times", "Tolerances", "check_claims", "claims_for_run",
           "claims_json", "claims_markdown", "dataset_view", "default_run", "gate",
           "get_paper", "run_label", "run_name"]
