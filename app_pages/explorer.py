"""Explorer: every setting of a run in the sidebar, the animated main figure in the page.

Thin: widgets → Config (ui.controls) → service (ui.runner) → figure (viz). The view is bound to
the URL, so a link reopens it; nothing here computes dynamics.
"""

from __future__ import annotations

import streamlit as st

from ui import controls, downloads, presenter, runner, state

PLOTLY_CONFIG = {
    "displaylogo": False,
    "scrollZoom": False,
    "modeBarButtonsToRemove": ["lasso2d", "select2d", "autoScale2d"],
    "toImageButtonOptions": {"format": "png", "filename": "early-alignment", "scale": 2,
                             "width": 1400, "height": 820},
}

st.markdown("### Early alignment explorer")
st.caption(
    "What to look for: from a small initialisation the neurons first **turn toward a few "
    "directions while their norms stay tiny** (left panel; the radius is relative to the "
    "largest neuron), and only then **grow and fit** the data (norms and loss on the right). "
    "Press ▶ Play or drag the slider."
)

with st.sidebar:
    panel = controls.control_panel()
presenter.apply_presenter(panel.view.presenter, on_exit=presenter.session_flag_off,
                          args=(state.widget_key("view.presenter"),))

_, _, url_warnings = state.load_url_once()
if url_warnings:
    st.warning("Some link parameters could not be used and were replaced by defaults:\n\n"
               + "\n".join(f"- {w}" for w in url_warnings))

if not panel.ok:
    assert panel.error is not None
    st.error(controls.error_summary(panel.error))
else:
    config = panel.config
    assert config is not None
    params = state.sync_url(config, panel.view)
    got = runner.run_and_analyse(config)
    if got is not None:
        traj, analysis = got
        fig = runner.figure_for(traj, analysis, panel.view)
        presenter.chart(fig, key="explorer_main_figure", presenter=panel.view.presenter,
                        config=PLOTLY_CONFIG)
        with st.expander("Download", expanded=False):
            downloads.download_panel(traj, fig, key="explorer")
        with st.expander("Share this view", expanded=panel.view.presenter):
            st.caption("Copy this link (the icon at its right): it reopens exactly these "
                       "settings" + (", in presenter mode." if panel.view.presenter else ". "
                                     "Turn on presenter mode (Display) to share a projector "
                                     "view."))
            st.code(state.share_link(params), language=None, wrap_lines=True)
