""""Try this" under the Explorer's figure: two or three experiments for the run on screen, each
one click that changes the settings (`dynamics.papers.experiments.Experiment`), then the
sentence saying what to look for, and an undo.

Which experiments: those of the lesson scenario or paper preset on screen (its paper's
`experiments` for that preset, read with `getattr` so a paper without them is fine), else
`EXPLORER_DEFAULT` (they apply to any run). After a click the same list stays while the
settings are the ones the click made. An experiment whose result the widgets would refuse
(`ui.settings.check_params`: e.g. ε below the slider's range) or the config rejects is shown
disabled, with the reason. `offer` is pure; `panel` draws it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from dynamics.config import Config, ConfigError
from dynamics.papers import PAPERS
from dynamics.papers.experiments import EXPLORER_DEFAULT, Experiment

from .lesson import ExplorerView, find_scenario, scenarios
from .settings import check_params, labels
from .text import plain

DONE_KEY = "eae._try_this"  # the last experiment applied: what it changed, from what


@dataclass(frozen=True)
class Item:
    """One experiment offered: the settings it gives (None if it cannot be applied) and why
    not."""

    experiment: Experiment
    config: Config | None
    why_not: str = ""


@dataclass(frozen=True)
class Offer:
    """The experiments for the run on screen: from which scenario (`source`, "" = the
    Explorer's default run) and titled how."""

    source: str
    title: str
    items: tuple[Item, ...]


def experiments_of(source: str) -> tuple[Experiment, ...]:
    """The experiments of scenario `source` (paper.preset), () if it has none."""
    sc = scenarios().get(source)
    if sc is None:
        return ()
    table = getattr(PAPERS[sc.paper], "experiments", {}) or {}
    return tuple(table.get(sc.preset, ()))


def _item(exp: Experiment, config: Config) -> Item:
    try:
        new = exp.apply(config)
    except (ConfigError, ValueError, KeyError, TypeError) as e:
        errors = getattr(e, "errors", None)
        why = "; ".join(m for _p, m in errors) if errors else str(e)
        return Item(exp, None, f"not possible from these settings: {why}")
    if new == config:
        return Item(exp, None, "these settings already are so")
    _, refused = check_params(new.to_query(omit=("data.X", "data.y")), new.data.kind)
    if refused:
        return Item(exp, None, "outside the controls' range: " + "; ".join(
            r.split(": ", 1)[-1] for r in refused))
    return Item(exp, new)


def offer(config: Config, scenario: str = "", remembered: str | None = None) -> Offer:
    """What to offer for `config`: the experiments of `remembered` (the scenario of the last
    click, when `config` is what it made), else of the `scenario` on screen, else of the
    preset `config` is exactly, else the Explorer's defaults."""
    every = scenarios()
    for source in (remembered, scenario, (found.key if (found := find_scenario(config))
                                          else None)):
        if source and experiments_of(source):
            return Offer(source, every[source].label,
                         tuple(_item(e, config) for e in experiments_of(source)))
    return Offer("", "this run", tuple(_item(e, config) for e in EXPLORER_DEFAULT))


def changes_text(exp: Experiment) -> str:
    """What an experiment changes, in the controls' words ("init scale ε × 0.01")."""
    names = labels()
    out = []
    for path, value in exp.changes.items():
        factor = getattr(value, "factor", None)
        out.append(f"{names.get(path, path)} × {factor:g}" if factor is not None
                   else f"{names.get(path, path)} = {value}")
    return ", ".join(out)


def panel(view: ExplorerView, config: Config, reset: Callable[[ExplorerView, Config], None],
          *, key: str = "eae.try") -> None:
    """The "Try this" buttons for `config` (the settings of the link on screen), and after a
    click the sentence of what to look for, with an undo. `reset(view, config)` shows other
    settings (the Explorer's binder reset: widgets reseeded on the next run)."""
    ss = st.session_state
    done: dict[str, Any] | None = ss.get(DONE_KEY)
    applied = done is not None and done["config"] == config
    off = offer(config, view.scenario, done["source"] if applied and done else None)
    with st.container(key="eae-try-this"):
        st.markdown(f"**Try this** · {plain(off.title)}")
        cols = st.columns(len(off.items))
        for col, item in zip(cols, off.items, strict=True):
            exp = item.experiment
            with col:
                st.button(exp.label, key=f"{key}.{exp.key}", disabled=item.config is None,
                          width="stretch", on_click=_apply,
                          args=(view, config, item, off.source, reset),
                          help=(f"Changes {changes_text(exp)}." if item.config is not None
                                else f"Changes {changes_text(exp)}: {item.why_not}."))
        if applied and done is not None:
            c1, c2 = st.columns([6, 1], vertical_alignment="center")
            with c1:
                st.info(f"**{plain(done['label'])}** — look for: {plain(done['look_for'])}",
                        icon=":material/visibility:")
            with c2:
                st.button("Undo", key=f"{key}.undo", icon=":material/undo:", on_click=_undo,
                          args=(view, reset), help="Back to the settings before this "
                                                   "experiment.")


def _apply(view: ExplorerView, before: Config, item: Item, source: str,
           reset: Callable[[ExplorerView, Config], None]) -> None:
    assert item.config is not None
    st.session_state[DONE_KEY] = {
        "config": item.config, "before": before, "source": source,
        "label": item.experiment.label, "look_for": item.experiment.look_for}
    reset(view, item.config)


def _undo(view: ExplorerView, reset: Callable[[ExplorerView, Config], None]) -> None:
    done = st.session_state.pop(DONE_KEY, None)
    if done is not None:
        reset(view, done["before"])


__all__ = ["DONE_KEY", "Item", "Offer", "changes_text", "experiments_of", "offer", "panel"]
