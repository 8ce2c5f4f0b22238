"""The built-in sweeps, gathered from the paper modules (`Paper.builtin_sweeps`, registry
order): each is a paper's scaling claim as a picture, in a quick and a full size."""

from __future__ import annotations

from ..papers import PAPERS, BuiltinSweep
from .spec import Sweep, SweepError

BUILTINS: dict[str, BuiltinSweep] = {
    b.name: b for paper in PAPERS.values() for b in paper.builtin_sweeps}
"""name → BuiltinSweep (title, who claims it, the claim, how to build it)."""


def builtin_sweep(name: str, quick: bool = True) -> Sweep:
    """A built-in sweep by name ('quick' size for pages and tests, else 'full')."""
    if name not in BUILTINS:
        raise SweepError([("builtin", f"unknown built-in {name!r}; choose from "
                           f"{', '.join(BUILTINS)}")])
    d = BUILTINS[name].build(quick)
    d = {**d, "builtin": name, "name": f"{d['name']} ({'quick' if quick else 'full'})"}
    return Sweep.from_dict(d)
