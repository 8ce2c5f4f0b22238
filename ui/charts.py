"""One way to draw a figure on a page, with the one Plotly configuration (viz.style).

Every `st.plotly_chart` of the app goes through `chart`, so the toolbar (no logo, no lasso or
box select, no scroll zoom; the camera saves a 2× PNG) is the same everywhere; a page may only
name the PNG file or size it (`viz.style.plotly_config`).
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from viz.style import plotly_config

from .presenter import FIG_KEY_PREFIX, fill_screen


def chart(fig: go.Figure, *, key: str, presenter: bool = False, main: bool = True,
          filename: str | None = None, width: int | None = None,
          height: int | None = None) -> None:
    """Draw `fig` (`filename`, `width`, `height`: the toolbar's PNG). A page's main figure
    (`main`) in presenter mode fills 85 % of the viewport's height (the presenter CSS targets
    its container); a fixed layout height is then dropped on a copy, so cached figures are
    never modified."""
    config = plotly_config(filename, width, height)
    if not main:
        st.plotly_chart(fig, theme=None, config=config, key=key)
        return
    if presenter and fig.layout.height is not None:
        fig = fill_screen(go.Figure(fig))
    with st.container(key=f"{FIG_KEY_PREFIX}{key}"):
        st.plotly_chart(fig, theme=None, config=config, key=key,
                        height="stretch" if presenter else "content")


__all__ = ["chart"]
