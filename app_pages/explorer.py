"""Explorer: every setting of a run in the sidebar, the animated main figure in the page.

Thin: URL → binder (ui.state) → widgets → Config (ui.controls) → service (ui.runner) → figure
(viz). The binder writes the view back into the URL, so a link reopens it; nothing here
computes dynamics.
"""

from __future__ import annotations

import streamlit as st

from ui import charts, controls, downloads, runner, state, text
from ui.presenter import apply_presenter, session_flag_off

B = state.explorer_binder()
bound = B.load()

st.markdown("### Early alignment explorer")
st.caption(
    "What to look for: from a small initialisation the neurons first **turn toward a few "
    "directions while their norms stay tiny** (left panel; the radius is relative to the "
    "largest neuron), and only then **grow and fit** the data (norms and loss on the right). "
    "Press ▶ Play or drag the slider."
)

with st.sidebar:
    panel = controls.control_panel(B.key, bound.configs["run"], fresh=bound.fresh,
                                   view=bound.view)
view = panel.view or bound.view
apply_presenter(view.presenter, on_exit=session_flag_off,
                args=(controls.widget_key("view.presenter", B.key),))

if bound.warnings:
    st.warning(text.with_list("Some link parameters could not be used and were replaced by "
                              "defaults:", bound.warnings))

if not panel.ok:
    assert panel.error is not None
    st.error(controls.error_summary(panel.error))
else:
    config = panel.config
    assert config is not None
    params = B.sync(view, {"run": config})
    got = runner.run_and_analyse(config)
    if got is not None:
        traj, analysis = got
        fig = runner.figure_for(traj, analysis, view)
        charts.chart(fig, key="explorer_main_figure", presenter=view.presenter)
        with st.expander("Download", expanded=False):
            downloads.download_panel(traj, fig, key="explorer")
        with st.expander("Share this view", expanded=view.presenter):
            st.caption("Copy this link (the icon at its right): it reopens exactly these "
                       "settings" + (", in presenter mode." if view.presenter else ". "
                                     "Turn on presenter mode (Display) to share a projector "
                                     "view."))
            st.code(state.share_link(params), language=None, wrap_lines=True)
