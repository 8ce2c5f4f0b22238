"""Presenter mode: for a projector in class. The controls (sidebar, navigation, header) are
hidden, text is larger, and the main figure fills the screen (85 % of the viewport's height).
A small "Exit presenter mode" button stays at the top.

It is one URL flag, `view.presenter=true` (a field of every page's view, `ui.view.View`), so a
teacher projects a link and every laptop that opens it sees the same view. Pages call `toggle`
(or `hidden`) once near the top and draw their main figure with `ui.charts.chart`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go
import streamlit as st

FONT_SCALE = 1.25  # page text ×1.25 (the figure has its own ×1.35 presenter style)
FIGURE_HEIGHT_CSS = "max(85vh, 780px)"  # below ~780 px the figure's annotation lanes collide
FIG_KEY_PREFIX = "eae-fig-"

PRESENTER_CSS = f"""
<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"], [data-testid="stSidebarNav"],
header[data-testid="stHeader"], [data-testid="stToolbar"], [data-testid="stDecoration"] {{
  display: none !important;
}}
html {{ font-size: {16 * FONT_SCALE:.0f}px !important; }}
[data-testid="stMainBlockContainer"], .block-container {{
  max-width: 100% !important; padding: 0.4rem 1.2rem 1rem 1.2rem !important;
}}
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li,
[data-testid="stCaptionContainer"] {{ font-size: {FONT_SCALE:.2f}rem !important; }}
[class*="st-key-{FIG_KEY_PREFIX}"] [data-testid="stPlotlyChart"] {{
  height: {FIGURE_HEIGHT_CSS} !important;
}}
.st-key-presenter-exit {{
  position: fixed !important; top: 0.3rem !important; right: 0.8rem !important;
  left: auto !important; width: auto !important; z-index: 999990 !important;
}}
</style>
"""


def apply_presenter(enabled: bool, *, on_exit: Callable[..., Any] | None = None,
                    args: tuple[Any, ...] = ()) -> bool:
    """Inject the presenter CSS and the exit button when `enabled`; returns `enabled`.
    `on_exit` (called with `args`) must turn the page's presenter state off."""
    if not enabled:
        return False
    st.html(PRESENTER_CSS)
    with st.container(key="presenter-exit"):
        st.button("Exit presenter mode", key="presenter.exit_button", icon=":material/close:",
                  on_click=on_exit, args=args, help="Show the controls again")
    return True


def session_flag_off(key: str) -> None:
    """An `on_exit` for pages whose presenter toggle lives in session state under `key`."""
    st.session_state[key] = False


def fill_screen(fig: go.Figure) -> go.Figure:
    """Let the figure take the height of its container (set by the presenter CSS): layout
    height unset, autosize on. Modifies and returns `fig`."""
    fig.update_layout(height=None, autosize=True)
    return fig


def toggle(key: str, initial: bool, fresh: bool, *,
           label: str = "presenter mode (large text)", help: str | None = None) -> bool:
    """The presenter switch of a page (session key `key`, seeded from the page's view when
    `fresh`), drawn where it is called; applies the mode (see `apply_presenter`) and returns
    it. Its state reaches the URL through the page's binder, never by binding the widget."""
    if fresh or key not in st.session_state:
        st.session_state[key] = initial
    on = bool(st.toggle(label, key=key, help=help))
    apply_presenter(on, on_exit=session_flag_off, args=(key,))
    return on


def hidden(key: str, initial: bool, fresh: bool) -> bool:
    """Presenter mode for a page without a visible switch (it is turned on by a link and off
    by the exit button)."""
    if fresh or key not in st.session_state:
        st.session_state[key] = initial
    on = bool(st.session_state[key])
    apply_presenter(on, on_exit=session_flag_off, args=(key,))
    return on


__all__ = ["PRESENTER_CSS", "apply_presenter", "fill_screen", "hidden", "session_flag_off",
           "toggle"]
