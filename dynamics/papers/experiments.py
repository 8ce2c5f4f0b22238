""""Try this" experiments: one change of a run, what it shows, and what to look for.

An experiment is data a page turns into a one-click button: it applies `changes` to the
Config on screen (dotted paths as in URLs; a `Times(f)` multiplies the current value) and says
what should happen and which claim it illustrates. Papers list theirs per preset
(`Paper.experiments`); `EXPLORER_DEFAULT` serves the Explorer's default run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config import Config


@dataclass(frozen=True)
class Times:
    """A relative change: the current value times `factor` (e.g. ε / 100 = Times(0.01))."""

    factor: float


@dataclass(frozen=True)
class Experiment:
    """`label` ("Divide ε by 100") applies `changes`; `look_for` says in words what the figure
    should show ("the alignment phase lasts about ln(100)/rate longer"); `claim` names the
    claim it illustrates (a `Claim.key`, or "" for none)."""

    key: str
    label: str
    changes: Mapping[str, Any] = field(default_factory=dict)
    look_for: str = ""
    claim: str = ""

    def apply(self, config: Config) -> Config:
        """The config with the changes (a `Times` scales the current value)."""
        updates: dict[str, Any] = {}
        for path, value in self.changes.items():
            if isinstance(value, Times):
                cur: Any = config.to_dict()
                for part in path.split("."):
                    cur = cur[part]
                value = type(cur)(cur * value.factor)
            updates[path] = value
        return config.with_updates(updates)


EXPLORER_DEFAULT: tuple[Experiment, ...] = (
    Experiment(
        "smaller_eps", "Divide ε by 100", {"init.scale": Times(0.01)},
        "The neurons still turn to the same rays, but the norms stay tiny for longer: the "
        "alignment phase lasts about ln(100)/rate ≈ 4.6/rate longer, then growth looks the same."),
    Experiment(
        "wider", "Ten times more neurons", {"model.width": Times(10.0)},
        "More markers, the same few directions: early alignment does not depend on the width."),
    Experiment(
        "leaky", "Leaky ReLU γ = 0.3", {"model.gamma": 0.3},
        "Neurons with no active point no longer freeze: every neuron feels a gradient, so fewer "
        "stay behind at their start."),
)

__all__ = ["EXPLORER_DEFAULT", "Experiment", "Times"]
