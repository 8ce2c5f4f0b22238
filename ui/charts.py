"""One way to draw a figure on a page, with the one Plotly configuration (viz.style).

Animated figures go through `animated` (the browser player, `ui.player`); static ones through
`chart` (`st.plotly_chart`). Either way the toolbar (no logo, no lasso or box select, no scroll
zoom; the camera saves a 2× PNG) is the same everywhere; a page may only name the PNG file or
size it (`viz.style.plotly_config`).

While a setting is invalid (or an upload rejected) a page keeps its last good figure: `chart`
remembers each main figure per session, and `stale` draws the remembered one greyed out, under
the reason, instead of removing the picture.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from viz.options import FigureOptions
from viz.payload import header_of
from viz.player import design_height, fit_static_height
from viz.style import plotly_config

from . import player
from .figures import Shown
from .presenter import FIG_KEY_PREFIX
from .text import plain

LAST_KEY = "_eae.last_figure."  # session key prefix of the remembered figures
STALE_CSS = """<style>
[class*="st-key-eae-stale-"] [data-testid="stPlotlyChart"] {
  opacity: 0.35; filter: grayscale(1); pointer-events: none;
}
</style>"""


def options_of(view: Any) -> FigureOptions:
    """The `FigureOptions` of a page's view: the options the view has (its presenter flag
    and, where it has them, the figure's axis options), the others at their defaults."""
    return FigureOptions(**{f.name: getattr(view, f.name) for f in fields(FigureOptions)
                            if hasattr(view, f.name)})


def animated(shown: Shown, *, key: str, presenter: bool = False,
             family: dict[str, Any] | None = None, filename: str | None = None,
             stale: bool = False, edit: str | None = None, autoplay: bool = False) -> Any:
    """Draw an animated figure with the browser player (remembered for `stale`); returns the
    player's last event (a scrub or a data edit released) or None. `edit`: the id of the
    data edits the player may post (`ui.edits.offer`); `autoplay`: play it once when drawn
    (`ui.player.show`)."""
    if not stale:
        st.session_state[LAST_KEY + key] = (shown, presenter, filename)
    with st.container(key=f"{FIG_KEY_PREFIX}{key}"):
        event = player.show(shown, key=key, presenter=presenter, stale=stale,
                            family=family, filename=filename, edit=None if stale else edit,
                            autoplay=autoplay and not stale)
    if presenter and not stale and (line := glossary(shown)):  # the figure fills the window:
        st.caption(plain(line))  # its symbols are defined just under it
    return event


def glossary(shown: Shown) -> str:
    """The figure's glossary line (`viz.glossary`, in its layout's meta), or ""."""
    try:
        meta = header_of(shown.payload).get("layout", {}).get("meta")
    except ValueError:
        return ""
    return str(meta.get("glossary") or "") if isinstance(meta, dict) else ""


def chart(fig: go.Figure, *, key: str, presenter: bool = False, main: bool = True,
          filename: str | None = None, width: int | None = None,
          height: int | None = None, remember: bool = True) -> None:
    """Draw `fig` (`filename`, `width`, `height`: the toolbar's PNG). A page's main figure
    (`main`) in presenter mode fits the window (the presenter CSS sizes its container, at
    most the figure's design height); a fixed layout height is then dropped on a copy, so
    cached figures are never modified. A main figure is remembered for `stale`."""
    config = plotly_config(filename, width, height)
    if not main:
        st.plotly_chart(fig, theme=None, config=config, key=key)
        return
    if remember:
        st.session_state[LAST_KEY + key] = (fig, presenter, filename, width, height)
    if presenter and fig.layout.height is not None:
        fig = fit_static_height(fig)
    box = f"{FIG_KEY_PREFIX}{key}"
    if presenter:
        top = design_height(fig)
        if top:  # the container never grows past the height the figure was laid out for
            st.html(f"<style>.st-key-{box} {{ --eae-fig-max: {top}px; }}</style>")
    with st.container(key=box):
        st.plotly_chart(fig, theme=None, config=config, key=key,
                        height="stretch" if presenter else "content")


def has_last(key: str) -> bool:
    """Whether this session has drawn the main figure `key` before."""
    return LAST_KEY + key in st.session_state


def stale(key: str, reason: str | None = None, presenter: bool | None = None) -> bool:
    """Draw the last good figure `key` greyed out (under `reason`, trusted Markdown, shown as
    a warning) while the page's settings cannot be run; `presenter` overrides the mode it was
    drawn in. False if there is none yet."""
    got = st.session_state.get(LAST_KEY + key)
    if reason:
        st.warning(reason + (" The figure below is the last one that could be drawn."
                             if got else ""), icon=":material/history:")
    if got is None:
        return False
    if isinstance(got[0], Shown):
        shown, was, filename = got
        animated(shown, key=key, presenter=was if presenter is None else presenter,
                 filename=filename, stale=True)
        return True
    fig, was, filename, width, height = got
    presenter = was if presenter is None else presenter
    st.html(STALE_CSS)
    with st.container(key=f"eae-stale-{key}"):
        chart(fig, key=key, presenter=presenter, filename=filename, width=width,
              height=height, remember=False)
    return True


__all__ = ["animated", "chart", "glossary", "has_last", "options_of", "stale"]
