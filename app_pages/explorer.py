"""Explorer: every setting of a run in the sidebar, the animated main figure in the page.

Thin: URL → binder (ui.state) → widgets → Config (ui.controls) → service (ui.runner) → figure
(viz). The binder writes the view back into the URL, so a link reopens it; nothing here
computes dynamics. In presenter mode a lesson bar steps through the papers' scenarios
(ui.lesson: `view.lesson`, `view.scenario`). While a setting is invalid the last good figure
stays, greyed, under the reason.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import streamlit as st

from dynamics.config import Config
from dynamics.trajectory import Trajectory
from ui import (
    charts,
    controls,
    downloads,
    edits,
    family,
    figures,
    lesson,
    player,
    prefetch,
    presenter,
    runner,
    share,
    state,
    text,
    try_this,
)
from ui.lesson import ExplorerView
from viz.options import FigureOptions

FIG_KEY = "explorer_main_figure"
LAST_RUN_KEY = "_eae.explorer.last_link_config"  # the settings of the last figure (prefetch)
SCRUB_KEY = "_eae.explorer.scrub"  # the control the player's scrub slider moves
PLAYED_KEY = "_eae.explorer.played"  # the key of the session's first figure (it plays)
B = state.explorer_binder()


def _show(v: ExplorerView, config: Config) -> None:
    """A "try this" click: show `config` (the widgets are reseeded)."""
    B.reset(v, {"run": config})


def _take_event() -> None:
    """The player's last event: a scrub control picked (the family to offer), data moved in
    the panel or a scrub released (either becomes the page's state)."""
    event = player.take_event(FIG_KEY)  # the player's scrub slider released, or another control
    if event is not None and event.get("event") == "family":
        st.session_state[SCRUB_KEY] = str(event.get("param", family.DEFAULT))
    elif event is not None and event.get("event") == "data":  # data moved in the panel
        shown_cfg = st.session_state.get(LAST_RUN_KEY)
        if shown_cfg is not None and isinstance(event.get("fields"), dict):
            try:
                B.reset(B.load().view, {"run": edits.edited(shown_cfg, event["fields"])})
            except Exception as e:  # a value the settings refuse: say so, keep the state
                st.warning(f"That data could not be used: {text.literal(e)}")
    elif event is not None and event.get("event") == "scrub":
        shown_cfg = st.session_state.get(LAST_RUN_KEY)
        ctl = family.CONTROLS.get(str(event.get("param")))
        if shown_cfg is not None and ctl is not None:  # the released value becomes the state
            try:
                B.reset(B.load().view, {"run": ctl.put(shown_cfg, float(event["value"]))})
            except Exception as e:  # a value the settings refuse: say so, keep the state
                st.warning(f"That value could not be used: {text.literal(e)}")


def _go(scenarios: Sequence[lesson.Scenario], i: int) -> None:
    """Lesson step: show scenario i (its preset; the widgets are reseeded)."""
    sc = scenarios[i]
    current: ExplorerView = B.load().view
    B.reset(current.model_copy(update={"scenario": sc.key, "presenter": True}),
            {"run": sc.config()})


def _header(view: ExplorerView, panel: controls.Controls, scenarios: Sequence[lesson.Scenario],
            warnings: list[str]) -> None:
    """The lesson bar (presenter mode) or the title, how to read the figure, the link's
    dropped values and the panel's notes."""
    if view.presenter:
        at = lesson.position(scenarios, view.scenario)
        edited = at >= 0 and panel.ok and panel.link_config != scenarios[at].config()
        presenter.lesson_bar([(s.label, s.line) for s in scenarios], at,
                             functools.partial(_go, scenarios), edited=edited)
    else:
        st.markdown("### Early alignment explorer")
    with presenter.intro(view.presenter, "How to read it"):
        st.caption(
            "**How to read it:** left, one marker per neuron — its angle is the neuron's "
            "direction, its distance from the centre its size (blue: output weight aⱼ > 0, "
            "vermillion: aⱼ < 0); right, every neuron's size ‖wⱼ‖, the loss and the accuracy "
            "over time; the strip above them names the phases in words, a row per source "
            "(hover a block for the rule that found it); solid lines are events of this run, "
            "dashed ones times a theory predicts; symbols are defined under the figure. "
            "**What to look for:** from a small start the neurons first **turn toward a few "
            "directions while their norms stay tiny**, and only then **grow and fit** the "
            "data. It plays once by itself; ▶ Play or the slider replay it.")
    if warnings:
        st.warning(text.with_list("Some link parameters could not be used (the others were "
                                  "kept):", warnings))
    for note in panel.notes:
        st.info(note)


def _figure(view: ExplorerView, options: FigureOptions, panel: controls.Controls,
            link_config: Config) -> tuple[Trajectory, figures.Shown] | None:
    """Run the panel's config and draw its figure with the player (its scrub family and data
    edits offered); then "try this", the notes and the neighbours' prefetch. Returns the run
    and its figure (None while it cannot be shown)."""
    assert panel.config is not None
    got = runner.run_and_analyse(panel.config)
    if got is None:
        return None
    traj, analysis = got
    fig = figures.main(traj, analysis, options)
    fam = family.plan(link_config, st.session_state.get(SCRUB_KEY, family.DEFAULT),
                      auto=bool(panel.t_end_auto), options=options)
    fid, started = (family.offer(fam, fig, traj, family.session_owner(),
                                 runner.get_service())
                    if fam is not None and prefetch.enabled() else (None, False))
    scrub = (fam.player_arg(family.choices(link_config), None if started else fid)
             if fam and fid else None)
    eid = (edits.offer(link_config, options, bool(panel.t_end_auto),
                       family.session_owner(), runner.get_service())
           if traj.status == "completed" else None)
    # the session's first figure plays by itself, once (the player plays it once per
    # frame; not when the browser asks for reduced motion). The argument stays the same
    # while that figure is shown: a changed argument re-renders the player, which would
    # put back the page's run in the middle of a scrub.
    first = st.session_state.setdefault(PLAYED_KEY, fig.key) == fig.key
    charts.animated(fig, key=FIG_KEY, presenter=view.presenter, family=scrub, edit=eid,
                    autoplay=first)
    try_this.panel(view, link_config, _show)
    if not view.presenter:  # (a projector view keeps the figure alone)
        runner.show_notes(analysis)
    if traj.status == "completed":  # the next step of γ or ε: computed in the background
        moved, sign = controls.moved_control(st.session_state.get(LAST_RUN_KEY),
                                             link_config)
        st.session_state[LAST_RUN_KEY] = link_config
        prefetch.prefetch(controls.neighbours(link_config, auto=bool(panel.t_end_auto),
                                              moved=moved, direction=sign), options)
    return traj, fig


def page() -> None:
    """The page (st.Page calls it on every run; no page state lives at module level)."""
    _take_event()
    bound = B.load()
    scenarios, _ = lesson.parse_lesson(bound.view.lesson)  # (the link was checked by load)
    presenter.mode(controls.widget_key("view.presenter", B.key), bound.view.presenter, bound.fresh)
    with st.sidebar:
        panel = controls.control_panel(B.key, bound.configs["run"], fresh=bound.fresh,
                                       view=bound.view.figure_view(),
                                       t_end_auto=bound.view.t_end_auto)
    shown = panel.view or bound.view.figure_view()
    view = bound.view.model_copy(update={**shown.model_dump(),
                                         "t_end_auto": bool(panel.t_end_auto)})
    _header(view, panel, scenarios, bound.warnings)
    if not panel.ok:
        assert panel.error is not None
        st.error(controls.error_summary(panel.error))
        charts.stale(FIG_KEY, presenter=view.presenter)
        return
    link_config = panel.link_config  # t_end "auto" stays auto in the link (view.t_end_auto)
    assert link_config is not None
    params = B.sync(view, {"run": link_config})
    got = _figure(view, charts.options_of(shown), panel, link_config)
    if got is None:
        return
    traj, fig = got
    with st.expander("Download", expanded=False):
        downloads.download_panel(traj, fig, key="explorer")
    share.share_box(
        f"{FIG_KEY}.share",
        "Copy this link (the icon at its right): it reopens exactly these settings"
        + (", in presenter mode." if view.presenter else ". Turn on presenter mode "
           "(Display) to share a projector view."),
        state.share_link(params),
        note=("A lesson is a list of scenarios (paper.preset) in the link, e.g. "
              "`view.lesson=min.toy_2d,wang_ma.four_phases`; ← → or PageUp / "
              "PageDown step through it.") if view.presenter else None)


if __name__ == "__main__":  # run as a script (AppTest.from_file, streamlit run)
    page()
