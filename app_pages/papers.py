"""Papers: a section per paper — its claim in plain words, the knobs that matter (bound to the
URL), its preset run with the right theory overlays, the paper's own page sections (figures as
data, drawn by `viz.paper_figures.render`), and the claims table (measured vs expected,
tolerance, pass/fail), computed through the service, with a CSV download.

Thin: everything shown comes from the paper registry (`dynamics.papers.PAPERS`: titles, text,
knobs, presets, sections, claims) + knobs → Config → service (ui.runner) → figures (viz); no
branch names a paper.
URL (through the binder, ui.state): `paper`, `<paper>.preset`, `<paper>.<knob>`,
`view.presenter`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pandas as pd
import streamlit as st
from pydantic import Field

import runtime
from dynamics.annotations import Analysis
from dynamics.config import Config, ConfigError
from dynamics.papers import PAPERS, Knob, Paper, Section, StudySection
from dynamics.trajectory import Trajectory
from ui import charts, downloads, figures, presenter, runner, share, state, tables, text
from ui.view import FigureView, View, page_view
from viz.paper_figures import render

PREFIX = "pp"
REPORTS = Path(__file__).resolve().parents[1] / "reports"  # `python -m dynamics reproduce`
FIRST = next(iter(PAPERS))
PaperKey = Literal[tuple(PAPERS)]  # type: ignore[valid-type]


@page_view(globals())
class PapersView(View):
    """The paper shown (knobs and preset are free parameters `<paper>.<knob>`)."""

    paper: PaperKey = Field(FIRST, alias="paper")  # type: ignore[valid-type]
B = state.Binder(PREFIX, PapersView, extra=lambda k: k.split(".")[0] in PAPERS)


def _claims_table(df: pd.DataFrame) -> None:
    tables.show_claims(df)  # verdict first, statements wrapped (readable at 1280 px)


def _full_checks(paper: str) -> None:
    """The paper's claims on its own presets (quick versions), through the service."""
    key = f"{PREFIX}.claims.{paper}"
    st.markdown("**Claims on the paper's presets** (quick versions, all runs through the "
                "cached service)")
    if st.button("Check the claims", key=f"{PREFIX}.check.{paper}", icon=":material/checklist:",
                 type="primary" if key not in st.session_state else "secondary",
                 help="Runs every preset of the paper (quick sizes) and checks each claim "
                      "against its run: measured, expected, tolerance, pass or fail."):
        service = runner.get_service()
        runtime.current().pages.leave()  # many runs: the other sessions' pages run meanwhile
        status = st.status("Running the presets…", expanded=False)
        n = {"runs": 0}

        def run(cfg: Config) -> Trajectory:
            n["runs"] += 1
            status.update(label=f"Run {n['runs']}: {cfg.data.kind}, m = {cfg.model.width}, "
                                f"ε = {cfg.init.scale:.2g}…")
            return service.run(cfg)

        try:
            claims = PAPERS[paper].check(quick=True, run=run)
        except Exception as e:  # a failed check is a message, not a stack trace
            status.update(label="The check failed", state="error")
            st.error(f"The claims could not be checked: {type(e).__name__}: {e}")
            return
        status.update(label=f"{n['runs']} runs done", state="complete")
        st.session_state[key] = downloads.claims_table(claims)
    df = st.session_state.get(key)
    if df is None:
        st.caption("Press the button to run them (a few seconds when cached, up to a minute "
                   "the first time).")
        return
    n_pass = int((df["result"] == "pass").sum())
    n_fail = int((df["result"] == "FAIL").sum())
    n_ill = len(df) - n_pass - n_fail
    st.caption(f"{n_pass} pass · {n_fail} fail"
               + (f" · {n_ill} illustration(s), not counted" if n_ill else ""))
    _claims_table(df)
    st.download_button("Claims table (.csv)", data=downloads.claims_csv(df),
                       file_name=f"claims_{paper}.csv", mime="text/csv",
                       key=f"{PREFIX}.csv.{paper}", on_click="ignore", icon=":material/table:",
                       help="The table above as a CSV file (a spreadsheet opens it).")


def _knob_widget(bound: Any, paper: str, k: Knob, preset: Config) -> Any:
    """One knob as a widget showing the preset's value, kept in the URL under
    `<paper>.<knob>` (by the binder) when it differs from it."""
    key = f"{paper}.{k.key}"
    value = k.shown(preset)
    if k.options is not None:
        fmt = (lambda v: k.format % v) if k.format else str
        return B.widget(st.select_slider, k.label, key=key, value=value, bound=bound,
                        options=k.choices(preset), format_func=fmt, help=k.help,
                        path=k.field)
    return B.widget(st.number_input, k.label, key=key, value=value, bound=bound,
                    min_value=k.min_value, max_value=k.max_value, step=k.step,
                    format=k.format, help=k.help, path=k.field)


def _knobs(bound: Any, paper: Paper, name: str, preset: Config) -> dict[str, Any]:
    """The paper's widgets (bound to the URL), three to a row, each showing the preset's
    value (set again when another preset is chosen); returns the preset's updates."""
    shown = f"{PREFIX}.knobs_of.{paper.key}"  # the preset the knobs show
    if st.session_state.get(shown, name) != name:
        for k in paper.knobs:
            st.session_state[f"{paper.key}.{k.key}"] = k.shown(preset)
            st.session_state.pop(f"{paper.key}.{k.key}._last_good", None)
    st.session_state[shown] = name
    values: dict[str, Any] = {}
    cols = st.columns(3)
    for i, k in enumerate(paper.knobs):
        with cols[i % 3]:
            values[k.key] = _knob_widget(bound, paper.key, k, preset)
    return paper.knob_updates(values, preset)


def _section(paper: Paper, i: int, sec: Section, run: tuple[Trajectory, Analysis | None],
             on: bool) -> None:
    """A section drawn from the run on screen (nothing when it cannot draw this run)."""
    traj, analysis = run
    spec = sec.figure(traj, analysis) if sec.figure is not None else None
    if spec is None and not sec.text:
        return
    st.markdown(f"**{sec.title}**" + (f" — {sec.text}" if sec.text else ""))
    if spec is not None:
        charts.chart(render(spec, presenter=on), key=f"papers_{paper.key}_section_{i}",
                     main=False)
        if spec.caption:
            st.caption(spec.caption)


def _study(paper: Paper, i: int, sec: StudySection, on: bool) -> None:
    """A figure of many runs: the reproduction's file in reports/ when there is one, else a
    quick version through the service behind a button."""
    st.markdown(f"**{sec.title}** — {sec.text}")
    key = f"{PREFIX}.study.{paper.key}.{i}"
    spec = sec.load(REPORTS) or st.session_state.get(key)
    if spec is None:
        st.caption(sec.cost)
        if not st.button(sec.button, key=f"{key}.run", icon=":material/scatter_plot:",
                         help=f"Runs it through the server's cache: {sec.cost}"):
            return
        runtime.current().pages.leave()  # many runs: the other sessions' pages run meanwhile
        with st.spinner("Running through the service…"):
            spec = sec.compute(runner.get_service().run)
        st.session_state[key] = spec
    charts.chart(render(spec, presenter=on), key=f"papers_{paper.key}_study_{i}", main=False)
    if spec.caption:
        st.caption(spec.caption)


def _paper_selector(bound: Any) -> str:
    """The paper (seeded from the binder's view: the link, or the Overview's buttons)."""
    k = B.seed(f"{PREFIX}.paper", bound.view.paper, bound.fresh)
    return st.segmented_control("Paper", options=PapersView.options("paper"),
                                format_func=lambda p: PAPERS[p].short, required=True,
                                key=k, help="Which paper: its claim, its preset runs "
                                            "and its checks.") or FIRST


def _this_run(paper: Paper, config: Config, on: bool, figure_box: Any) -> None:
    """The run of the preset and knobs: its figure (in `figure_box`), the paper's notes, its
    sections, the claims it checks, "Open in Explorer" and its downloads."""
    view = FigureView(presenter=on)
    got = runner.run_and_analyse(config, prefix=PREFIX)
    if got is None:
        return
    traj, analysis = got
    fig = figures.main(traj, analysis, charts.options_of(view))
    with figure_box:
        charts.animated(fig, key=f"papers_figure_{paper.key}", presenter=on)
    if paper.note:
        st.info(paper.note)
    for note in analysis.notes_of(paper.key) if analysis is not None else ():
        st.caption(text.literal(note))  # e.g. which theorem assumption this run breaks
    for i, sec in enumerate(paper.sections):
        if isinstance(sec, Section):
            _section(paper, i, sec, (traj, analysis), on)
    checks = paper.run_claims(traj)
    if checks:
        st.markdown("**This run** (current knobs)")
        _claims_table(downloads.claims_table(checks))
    c1, c2 = st.columns([1, 3])
    with c1:
        if st.button("Open in Explorer", key=f"{PREFIX}.open.{paper.key}",
                     icon=":material/explore:",
                     help="The Explorer with this run's every setting, to change "
                          "anything else."):
            state.open_in_explorer(config, view)
    with c2:
        st.caption("The Explorer opens with this run's full settings in its URL, to change "
                   "anything else.")
    with st.expander("Download this run", expanded=False):
        downloads.download_panel(traj, fig, checks or None, key=f"{PREFIX}.{paper.key}")


def page() -> None:
    """The page (st.Page calls it on every run; no page state lives at module level)."""
    bound = B.load()
    on = presenter.mode("view.presenter", bound.view.presenter, bound.fresh)
    presenter.switch("view.presenter")
    for w in [w for w in bound.warnings if w.startswith("ignored paper=")]:
        bound.warnings.remove(w)
        st.warning(f"Unknown paper in the link: showing {PAPERS[FIRST].short}. "
                   f"{text.literal(w)}")
    if not on:  # compact header in presenter mode
        st.title("The papers")
    # presenter mode: the paper's title, then its figure; the selector and the collapsed text and
    # knobs follow the figure (they run first, but are drawn in a box under it)
    head, figure_box = st.container(), st.container()
    chrome = st.container() if on else head
    with chrome:
        paper = _paper_selector(bound)
    PAPER = PAPERS[paper]
    with head:
        st.subheader(PAPER.title)
    with chrome:
        presenter.intro(on, "The claim in plain words").markdown(PAPER.text)
    P = PAPER.presets(True)
    names = list(P)
    with chrome, presenter.intro(on, "Preset and knobs"):  # collapsed in presenter mode
        preset = B.widget(st.selectbox, "Preset", key=f"{paper}.preset", value=names[0],
                          bound=bound, options=names,
                          format_func=lambda n: PAPER.preset_titles.get(n, n),
                          help="A run of the paper's own setting (which figure or section "
                               "it reproduces after the ·); the knobs below start at its "
                               "values.")
        updates = _knobs(bound, PAPER, preset or names[0], P[preset or names[0]])
    if bound.warnings:
        chrome.warning(text.with_list("Some link parameters could not be used and were reset:",
                                  bound.warnings))
    params = B.sync(PapersView(paper=paper, presenter=on), {},
                    extra={k: v for k, v in bound.extra.items() if k.startswith(f"{paper}.")})
    try:
        config = P[preset or names[0]].with_updates(updates) if updates else P[preset or names[0]]
    except (ConfigError, ValueError) as e:
        st.error(f"These knobs give an invalid run: {e}")
        st.stop()
    _this_run(PAPER, config, on, figure_box)
    for i, sec in enumerate(PAPER.sections):
        if isinstance(sec, StudySection):
            _study(PAPER, i, sec, on)
    _full_checks(paper)
    share.share_box(f"{PREFIX}.share", "Copy this link (icon at its right): it reopens this "
                    "paper with these knobs" + (", in presenter mode." if on else "."),
                    state.share_link(params))


if __name__ == "__main__":  # run as a script (AppTest.from_file, streamlit run)
    page()
