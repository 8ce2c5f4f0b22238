"""Compare: two runs side by side on one time grid with one cursor, and a table of what differs.

Thin: presets and the two control panels → two Configs → service (ui.runner) → figure
(viz.compare). The binder (ui.state) keeps the state in the URL: `preset=<name>` and the
display options (`CompareView`), and each side's settings that differ from its preset with the
prefix `a.` or `b.` (`a.model.gamma=0.05`). A link therefore reopens both runs.
"""

from __future__ import annotations

import contextlib
import threading
from functools import lru_cache
from typing import Any, Literal

import pandas as pd
import streamlit as st
from pydantic import Field

from dynamics.annotations import Analysis
from dynamics.config import Config
from dynamics.papers import PAPERS, Comparison
from dynamics.trajectory import Trajectory
from ui import charts, controls, downloads, figures, presenter, runner, state, text
from ui.settings import setting
from ui.view import LABELS, Radius, TimeAxis, View, page_view, view_default
from viz.compare import difference_rows

PA, PB = "cmp.a", "cmp.b"  # widget/session prefixes of the two control panels
PRESET_KEY = "cmp.preset"
FIG_KEY = "compare_figure"
VIEW_KEYS = {"time_axis": "cmp.view.time_axis", "radius": "cmp.view.radius",
             "presenter": "cmp.view.presenter"}
# the paper modules' pairs (registry order), then this page's own
PRESETS: dict[str, Comparison] = {
    **{k: c for paper in PAPERS.values() for k, c in paper.comparisons.items()},
    "rich_lazy": Comparison(
        "Small vs large initialisation (rich vs lazy)",
        "Four points in the plane, square loss, m = 50. From ε = 1e-6 the neurons align to a "
        "few directions long before they grow; from ε = 1 they grow at once, scattered, and "
        "the loss falls immediately.",
        Config.from_dict({"init": {"scale": 1e-6}, "integrator": {"t_end": 100.0}}),
        Config.from_dict({"init": {"scale": 1.0}, "integrator": {"t_end": 100.0}})),
}
DEFAULT_PRESET = "bf_leaky"
PresetName = Literal[tuple(PRESETS)]  # type: ignore[valid-type]


@page_view(globals())
class CompareView(View):
    """What this page shows besides the two runs: the preset pair and the display options."""

    preset: PresetName = Field(DEFAULT_PRESET, alias="preset")  # type: ignore[valid-type]
    radius: Radius = Field(view_default("view.radius"), alias="view.radius")
    time_axis: TimeAxis = Field(view_default("view.time_axis"), alias="view.time_axis")


@lru_cache(maxsize=16)
def preset_configs(name: str) -> tuple[Config, Config]:
    """The two configs of a preset (validated)."""
    p = PRESETS[name]
    return p.a, p.b
# ----------------------------------------------------------------------------- URL ⇄ state
B = state.Binder("cmp", CompareView, {
    "a": state.ConfigSlot("a.", base=lambda v: preset_configs(v.preset)[0]),
    "b": state.ConfigSlot("b.", base=lambda v: preset_configs(v.preset)[1])})


def _apply_preset() -> None:
    """Preset picked: both sides start from its configs (widgets reseeded)."""
    name = st.session_state[PRESET_KEY]
    a, b = preset_configs(name)
    view = B.load().view.model_copy(update={"preset": name})
    B.reset(view, {"a": a, "b": b})
# ----------------------------------------------------------------------------- run B
def _start_in_background(config: Config) -> None:
    """Start run B while the page waits for run A (two cores: both at once). The page's own
    request for B then joins this computation (the service runs one per config)."""
    service = runner.get_service()
    try:
        if service.peek(config) is not None:
            return
    except Exception:  # a damaged cache entry: the page's own request reports it
        return

    def run() -> None:
        with contextlib.suppress(Exception):  # the page's own request reports failures
            service.run(config)

    threading.Thread(target=run, daemon=True, name="eae-compare-b").start()


def _sidebar(bound: Any) -> tuple[str, str, controls.Controls, controls.Controls]:
    """The display options and the two runs' control panels; returns the time axis, the
    radius and the two panels."""
    fresh = bound.fresh
    presenter.switch(VIEW_KEYS["presenter"])
    c1, c2 = st.columns(2)
    with c1:
        time_axis = st.radio("time axis", CompareView.options("time_axis"),
                             key=B.seed(VIEW_KEYS["time_axis"], bound.view.time_axis, fresh),
                             horizontal=True, help=setting("view.time_axis").help)
    with c2:
        radius = st.radio("radius", CompareView.options("radius"),
                          key=B.seed(VIEW_KEYS["radius"], bound.view.radius, fresh),
                          horizontal=True, format_func=LABELS["radius"].get,
                          help=setting("view.radius").help)
    tab_a, tab_b = st.tabs(["Run A", "Run B"])
    with tab_a:
        panel_a = controls.control_panel(PA, bound.configs["a"], fresh=fresh)
    with tab_b:
        panel_b = controls.control_panel(PB, bound.configs["b"], fresh=fresh)
    return time_axis, radius, panel_a, panel_b


def _about(view: CompareView, heading: Any, warnings: list[str],
           panels: tuple[controls.Controls, controls.Controls]) -> None:
    """The title (in `heading`), the comparison in words, the link's dropped values and each
    run's notes."""
    preset = view.preset
    with heading:
        if view.presenter:  # compact header: the figure comes first on a projector
            st.markdown(f"**Compare: {PRESETS[preset].title}**")
        else:
            st.markdown("### Compare two runs")
    with presenter.intro(view.presenter, "About this comparison"):
        st.caption("Two configurations on **one time grid with one cursor**: at each time each "
                   "run shows its last recorded frame. The strip above the time panels names "
                   "each run's phases (hover for times and evidence); the table lists them.")
        st.markdown(f"**{PRESETS[preset].title}.** {PRESETS[preset].note}")
    if warnings:
        st.warning(text.with_list("Some link parameters could not be used and were replaced by "
                                  "the preset's values:", warnings))
    for lab, p in (("A", panels[0]), ("B", panels[1])):
        for note in p.notes:
            st.info(f"**Run {lab}:** {note}")


def _runs(cfg_a: Config, cfg_b: Config
          ) -> tuple[Trajectory, Trajectory, Analysis | None, Analysis | None] | None:
    """Both runs (B started in the background while A runs) and their analyses, each run's
    status and any analysis that failed said; None while either cannot be shown."""
    _start_in_background(cfg_b)
    traj_a = runner.run_config(cfg_a, prefix=PA)
    traj_b = runner.run_config(cfg_b, prefix=PB) if traj_a is not None else None
    if traj_a is None or traj_b is None:
        return None
    for lab, tr in (("A", traj_a), ("B", traj_b)):
        runner.show_status(tr, f"Run {lab}: ")
    an_a, prob_a = runner.analyse(traj_a)
    an_b, prob_b = runner.analyse(traj_b)
    for lab, prob in (("A", prob_a), ("B", prob_b)):
        if prob:
            st.warning(f"Phase detection is unavailable for run {lab}: "
                       f"{text.literal(prob)}")
    return traj_a, traj_b, an_a, an_b


def _below(view: CompareView, configs: tuple[Config, Config],
           trajs: tuple[Trajectory, Trajectory], fig: Any, params: dict[str, str]) -> None:
    """Under the figure: "Open run A/B in the Explorer", the share box and the downloads."""
    c1, c2 = st.columns(2)
    for col, lab, cfg in ((c1, "A", configs[0]), (c2, "B", configs[1])):
        with col:
            if st.button(f"Open run {lab} in the Explorer", key=f"cmp.open.{lab}",
                         icon=":material/open_in_new:",
                         help=f"The Explorer with run {lab}'s every setting, to "
                              "change anything else."):
                state.open_in_explorer(cfg, view)
    # drawn only once opened (the code block's script would load with the page)
    share = st.expander("Share this comparison", expanded=False, key="cmp.share",
                        on_change="rerun")
    if share.open:
        with share:
            st.caption("This link reopens both runs and the display options.")
            st.code(state.share_link(params), language=None)
    with st.expander("Downloads", expanded=False):
        st.markdown("**Run A** (and the comparison figure)")
        downloads.download_panel(trajs[0], fig, key="cmp.dl.a")
        st.markdown("**Run B**")
        downloads.download_panel(trajs[1], None, key="cmp.dl.b")


def page() -> None:
    """The page (st.Page calls it on every run; no page state lives at module level)."""
    bound = B.load()
    ss = st.session_state
    on = presenter.mode(VIEW_KEYS["presenter"], bound.view.presenter, bound.fresh)
    heading = st.container()  # the page's title, then the pair (its titles are long: the
    # page's width shows them whole, a sidebar's select cut them short)
    with presenter.intro(on, "Preset pair"):  # presenter mode: under the figure
        B.seed(PRESET_KEY, bound.view.preset, bound.fresh)
        preset = st.selectbox("Preset pair", options=CompareView.options("preset"), key=PRESET_KEY,
                              format_func=lambda k: PRESETS[k].title, on_change=_apply_preset,
                              help="Picks both configurations (the sidebar's Run A and Run B); "
                                   "edit either side there.")
    with st.sidebar:
        time_axis, radius, panel_a, panel_b = _sidebar(bound)
    view = CompareView(preset=preset, radius=radius, time_axis=time_axis,
                       presenter=bool(ss[VIEW_KEYS["presenter"]]))
    _about(view, heading, bound.warnings, (panel_a, panel_b))
    problems = [(lab, p) for lab, p in (("A", panel_a), ("B", panel_b)) if not p.ok]
    for lab, p in problems:
        assert p.error is not None
        st.error(f"**Run {lab}** — " + controls.error_summary(p.error))
    if problems:  # the last good comparison stays, greyed, under the messages
        charts.stale(FIG_KEY, presenter=view.presenter)
        return
    cfg_a, cfg_b = panel_a.config, panel_b.config
    assert cfg_a is not None and cfg_b is not None
    edited = [lab for lab, cfg, ref in (("A", cfg_a, preset_configs(preset)[0]),
                                        ("B", cfg_b, preset_configs(preset)[1])) if cfg != ref]
    if edited:
        st.caption(f"Edited from the preset: run {' and '.join(edited)}.")
    params = B.sync(view, {"a": cfg_a, "b": cfg_b})
    got = _runs(cfg_a, cfg_b)
    if got is None:
        return
    traj_a, traj_b, an_a, an_b = got
    fig = figures.compare(traj_a, traj_b, an_a, an_b, ("A", "B"), charts.options_of(view))
    charts.animated(fig, key=FIG_KEY, presenter=view.presenter,
                    filename="early-alignment-compare")
    st.markdown("#### What differs")
    rows = difference_rows(traj_a, traj_b, an_a, an_b, ("A", "B"))
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"differs": st.column_config.TextColumn("≠", width=40)})
    st.caption("Times are gradient-flow time t (GD: t = k·η). Phases are detected from "
               "the loss and the neuron directions (dynamics.phases); '—' means not "
               "detected in this run. Stable rank ‖W‖²_F/‖W‖²₂; max angle between active "
               "neurons.")
    _below(view, (cfg_a, cfg_b), (traj_a, traj_b), fig, params)


if __name__ == "__main__":  # run as a script (AppTest.from_file, streamlit run)
    page()
