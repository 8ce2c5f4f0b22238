"""Overview: what early alignment is (for a student), one small live example, how to read the
main figure, and one click into each paper's scenarios (`Paper.showcases` of the registry).

Thin: a tiny config → service (ui.runner) → figure (viz). State in the URL (through the binder,
ui.state): `view.presenter` (presenter mode).
"""

from __future__ import annotations

import streamlit as st

from dynamics.config import Config
from dynamics.papers import PAPERS
from ui import charts, figures, presenter, runner, state
from ui.view import FigureView, View

PREFIX = "ov"
EXAMPLE = {"data": {"kind": "points", "angles_deg": [20.0, 70.0, 200.0, 250.0],
                    "radii": [1.0, 0.8, 1.0, 0.9], "labels": [1.0, 1.0, -1.0, -1.0]},
           "model": {"width": 24}, "loss": {"kind": "exponential", "reduction": "sum"},
           "init": {"scheme": "balanced", "scale": 1e-6},
           "integrator": {"t_end": 30.0}, "record": {"frames": 80}}
PAPERS_PAGE, PAPERS_KEY = "papers", "pp"  # the Papers page and its binder's key
B = state.Binder(PREFIX, View)


def _about(on: bool) -> None:
    """What early alignment is, in a student's words (collapsed in presenter mode)."""
    about = presenter.intro(on, "What is early alignment?")  # collapsed in presenter mode
    about.markdown(
        "Train a two-layer ReLU network h(x) = Σⱼ aⱼ σ(⟨wⱼ, x⟩) by gradient flow, starting from "
        "**very small weights** (scale ε). Because every weight is tiny, the network's output is "
        "almost zero, so the loss gradient each hidden neuron feels is (to first order) fixed by "
        "the "
        "data and the labels alone. Each neuron's **direction** wⱼ/‖wⱼ‖ therefore moves at an "
        "O(1) speed, while its **norm** grows only at a rate proportional to itself: it stays of "
        "order ε for a time of order log(1/ε).")
    about.markdown(
        "So training splits into two phases. First, **alignment**: the neurons turn, at almost no "
        "change in the loss, toward a few special directions — the *extremal vectors* of "
        "G(w) = Σᵢ bᵢ σ(⟨w, xᵢ⟩) on the sphere (neurons with aⱼ > 0 go to local maxima, "
        "aⱼ < 0 to minima); for two well-separated classes these are the class sums x₊ and x₋ "
        "(Min et al.), for a teacher neuron the vector γ_[n] (Chistikov et al.). Then, "
        "**growth and "
        "fitting**: the aligned neurons grow together, as if the network had only a few neurons, "
        "and the loss falls.")
    about.markdown(
        "This is a *simplicity bias*: the network behaves like a low-rank one. It can help — the "
        "solution found is simple and generalises — or it can trap: Boursier & Flammarion's "
        "three-point example ends on the least-squares line, a spurious stationary point, because "
        "all useful neurons aligned to one direction before they could specialise. Wang & Ma "
        "describe, for two signals and a frozen output layer, a sequence of four such phases.")


def _example(on: bool) -> FigureView:
    """The small live example: its figure and "Open this example in the Explorer"; returns the
    figure's view (the scenarios' buttons open with it)."""
    if not on:  # in presenter mode the figure follows the title
        st.subheader("A small live example")
    config = Config.from_dict(EXAMPLE)
    view = FigureView(presenter=on)
    got = runner.run_and_analyse(config, prefix=PREFIX)
    if got is not None:
        traj, analysis = got
        fig = figures.main(traj, analysis, charts.options_of(view))
        charts.animated(fig, key="overview_figure", presenter=on)
        st.caption("Four points in the plane, 24 neurons, ε = 10⁻⁶, exponential loss. "
                   "Press ▶ Play: "
                   "the dots turn to the rays 'where positive/negative neurons go' while ‖w‖ "
                   "(right, top) stays tiny; "
                   "only then do the norms grow and the loss drop.")
        if st.button("Open this example in the Explorer", key=f"{PREFIX}.open_example",
                     icon=":material/explore:",
                     help="The Explorer with this run's settings, every one of them to "
                          "change."):
            state.open_in_explorer(config, view)
    return view


def _how_to_read() -> None:
    """How to read the main figure, panel by panel."""
    st.subheader("How to read the figure")
    st.markdown(
        "- **Left panel, one marker per neuron.** Its angle is the direction of wⱼ (projected onto "
        "a plane when the data has more than 2 dimensions); its distance from the centre is "
        "‖wⱼ‖ relative to the largest neuron of that frame (or log‖wⱼ‖); bigger markers are "
        "larger norms.\n"
        "- **Colour = sign of the output weight aⱼ:** blue circles aⱼ > 0, vermillion squares "
        "aⱼ < 0. Data points are arrows in the same colours (label +1 blue, −1 vermillion); "
        "regression targets use a light-to-dark scale.\n"
        "- **Rays = directions from theory**, named on the panel's rim: 'where positive neurons "
        "go' (the extremal maxima, green), 'where negative neurons go' (minima, purple dashed), "
        "the data's signals x₊, x₋, a teacher v* … (hover a ray or its name for the symbols). "
        "Thin dotted grey lines are the on/off edges ⟨w, xᵢ⟩ = 0, where a neuron switches a "
        "point on or off.\n"
        "- **Right panels:** every neuron's norm ‖wⱼ‖, the loss and (for classification) the "
        "accuracy over time, on a log time axis; the grey vertical bar is the current frame.\n"
        "- **The strip above them = the phases** detected in this run, in plain words "
        "('neurons turn, norms tiny', 'norms grow, loss falls', …; hover for the paper's name "
        "and the evidence). **Labelled vertical lines = times:** solid — an event detected in "
        "the run; **dashed — a time predicted by theory** (e.g. Min et al.'s bound T).\n"
        "- **Under the slider** a sentence says what is happening at that time and where to "
        "look.")


def _scenarios(view: FigureView) -> None:
    """One box per paper showcase: open it in the Explorer or on its paper's page."""
    st.subheader("Open a scenario")
    SCENARIOS = [(p, sc) for p in PAPERS.values() for sc in p.showcases]  # registry order
    cols = st.columns(3)
    for i, (pp, sc) in enumerate(SCENARIOS):
        paper, name = pp.key, sc.preset
        with cols[i % 3], st.container(border=True):
            st.markdown(f"**{sc.label}**")
            st.caption(sc.line)
            c1, c2 = st.columns(2)
            with c1:
                if st.button("Explorer", key=f"{PREFIX}.open.{paper}.{name}",
                             icon=":material/explore:", help=f"preset {paper} / {name}"):
                    state.open_in_explorer(pp.presets(True)[name], view)
            with c2:
                if st.button("Paper", key=f"{PREFIX}.paper.{paper}.{name}",
                             icon=":material/article:",
                             help=f"{pp.short}'s page: the claim in plain words, this run with "
                                  "its knobs, and the claims checked."):
                    q = {"paper": paper, f"{paper}.preset": name, **view.to_query()}
                    state.switch_to(PAPERS_PAGE, q, PAPERS_KEY)


def page() -> None:
    """The page (st.Page calls it on every run; no page state lives at module level)."""
    bound = B.load()
    on = presenter.mode("view.presenter", bound.view.presenter, bound.fresh)
    presenter.switch("view.presenter")
    params = B.sync(View(presenter=on), {})
    st.title("Early alignment, in one picture")
    _about(on)
    view = _example(on)
    _how_to_read()
    _scenarios(view)
    # drawn only once opened: the code block's highlighter script would otherwise load with the
    # page, competing with the figure's
    share = st.expander("Share this page", expanded=False, key=f"{PREFIX}.share", on_change="rerun")
    if share.open:
        with share:
            st.caption("Copy this link (icon at its right): it opens this page"
                       + (" in presenter mode." if on else "."))
            st.code(state.share_link(params), language=None, wrap_lines=True)


if __name__ == "__main__":  # run as a script (AppTest.from_file, streamlit run)
    page()
