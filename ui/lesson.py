"""A lesson: a sequence of the papers' scenarios that a teacher steps through in the Explorer
(presenter mode: ◀ / ▶ buttons, the ← → keys and a clicker's PageUp / PageDown).

A scenario is a paper's preset, written `paper.preset` (`min.toy_2d`). The default lesson is
the Overview's showcases (`dynamics.papers.PAPERS[*].showcases`, registry order); a teacher
sets another in the link: `?view.presenter=true&view.lesson=min.toy_2d,wang_ma.four_phases`.
The scenario on screen is `view.scenario`; the Explorer's settings are kept in the link as
their differences from that scenario's preset, so a link stays short and stable.

`ExplorerView` is the Explorer's typed view (the figure's options plus these two); reading it
from a link drops every unknown scenario with a warning. Pure: no Streamlit here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Self

from pydantic import Field

from dynamics.config import Config
from dynamics.limits import Limits, get_limits
from dynamics.papers import PAPERS

from .settings import SETTINGS
from .view import FigureView

MAX_LESSON = 60  # scenarios in one lesson link


def _q(s: str, n: int = 60) -> str:
    """A user's entry, quoted and cut (warnings are shown verbatim by `ui.text.with_list`)."""
    return repr(s if len(s) <= n else s[: n - 3] + "...")


@dataclass(frozen=True)
class Scenario:
    """One step of a lesson: a preset of a paper, with the words the Overview shows."""

    paper: str
    preset: str
    label: str
    line: str = ""

    @property
    def key(self) -> str:
        return f"{self.paper}.{self.preset}"

    def config(self) -> Config:
        """The preset's configuration (the quick version the pages run)."""
        return _presets(get_limits())[self.paper][self.preset]


@lru_cache(maxsize=4)
def _presets(limits: Limits) -> dict[str, dict[str, Config]]:
    """Every paper's quick presets, validated once per set of limits (the limits the
    validation reads): building them all is ~30 ms of pydantic, and every Explorer run looks
    its settings up among them (`find_scenario`). Configs are frozen: sharing them is safe."""
    return {p.key: p.presets(True) for p in PAPERS.values()}


@lru_cache(maxsize=4)
def _scenario_by_key(limits: Limits) -> dict[str, Scenario]:
    """`Config.cache_key` of each scenario's preset → the scenario, the default lesson's
    first (the first one wins where two presets are the same run)."""
    out: dict[str, Scenario] = {}
    for s in (*default_lesson(), *scenarios().values()):
        out.setdefault(s.config().cache_key(), s)
    return out


@lru_cache(maxsize=1)
def scenarios() -> dict[str, Scenario]:
    """Every preset of every paper by key, labelled as on the Overview when it is a showcase."""
    out: dict[str, Scenario] = {}
    for p in PAPERS.values():
        shows = {s.preset: s for s in p.showcases}
        for name in p.presets(True):
            s = shows.get(name)
            out[f"{p.key}.{name}"] = Scenario(p.key, name, s.label if s else f"{p.short} · "
                                              f"{name}", s.line if s else "")
    return out


def default_lesson() -> tuple[Scenario, ...]:
    """The Overview's showcases, in the registry's order."""
    every = scenarios()
    return tuple(every[f"{p.key}.{s.preset}"] for p in PAPERS.values() for s in p.showcases)


def parse_lesson(text: str) -> tuple[tuple[Scenario, ...], list[str]]:
    """The lesson a link describes (comma-separated `paper.preset`) and one warning per entry
    dropped; empty text, or nothing usable, is the default lesson."""
    if not text.strip():
        return default_lesson(), []
    every = scenarios()
    out: list[Scenario] = []
    warnings: list[str] = []
    for raw in text.split(","):
        entry = raw.strip()
        if not entry:
            continue
        if entry in every and len(out) < MAX_LESSON:
            out.append(every[entry])
        elif entry in every:
            warnings.append(f"lesson: dropped {_q(entry)}, a lesson has at most "
                            f"{MAX_LESSON} scenarios")
        else:
            warnings.append(f"lesson: dropped {_q(entry)}, not a scenario (write "
                            "paper.preset, e.g. min.toy_2d; see the Papers page)")
    if not out:
        warnings.append("lesson: no usable scenario in the link; showing the Overview's "
                        "scenarios")
        return default_lesson(), warnings
    return tuple(out), warnings


def lesson_text(lesson: Sequence[Scenario]) -> str:
    """The URL form of a lesson ("" for the default one)."""
    keys = [s.key for s in lesson]
    return "" if keys == [s.key for s in default_lesson()] else ",".join(keys)


def position(lesson: Sequence[Scenario], key: str) -> int:
    """Zero-based index of scenario `key` in the lesson, or -1."""
    return next((i for i, s in enumerate(lesson) if s.key == key), -1)


def find_scenario(config: Config) -> Scenario | None:
    """The lesson scenario (of the default lesson first, then any preset) whose preset is
    exactly `config`, if any."""
    return _scenario_by_key(get_limits()).get(config.cache_key())


class ExplorerView(FigureView):
    """The Explorer's view: the figure's options, the lesson (`view.lesson`, "" = default)
    and the scenario on screen (`view.scenario`, "" = none: the settings are the defaults')."""

    lesson: str = Field(SETTINGS["view.lesson"].default, alias="view.lesson", max_length=4000)
    scenario: str = Field(SETTINGS["view.scenario"].default, alias="view.scenario",
                          max_length=200)
    t_end_auto: bool = Field(SETTINGS["view.t_end_auto"].default, alias="view.t_end_auto")

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> tuple[Self, list[str]]:
        """As `View.from_query`, and unknown scenarios dropped (each with a warning)."""
        view, warnings = super().from_query(params)
        lesson, dropped = parse_lesson(view.lesson)
        update: dict[str, str] = {}
        if dropped:
            warnings += dropped
            update["lesson"] = lesson_text(lesson)
        if view.scenario and view.scenario not in scenarios():
            warnings.append(f"ignored view.scenario={_q(view.scenario)}: not a "
                            "scenario (write paper.preset, e.g. min.toy_2d)")
            update["scenario"] = ""
        return (view.model_copy(update=update) if update else view), warnings

    def figure_view(self) -> FigureView:
        """The figure's options alone."""
        return FigureView(radius=self.radius, time_axis=self.time_axis,
                          time_scale=self.time_scale, presenter=self.presenter)


def base_config(view: ExplorerView) -> Config:
    """What the Explorer's link is relative to: the scenario's preset, else the defaults."""
    s = scenarios().get(view.scenario)
    return s.config() if s else Config()


__all__ = ["ExplorerView", "Scenario", "base_config", "default_lesson", "find_scenario",
           "lesson_text", "parse_lesson", "position", "scenarios"]
