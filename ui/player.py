"""The figure player on a page: a Streamlit component (static files in `viz/player/`) that
draws a figure's first frame with Plotly.js and plays its frames in the browser.

`show(shown, key=...)` passes the figure by its key: when the server serves the project's
routes (`Runtime.mounted`, `streamlit run serve.py`) the player fetches the payload from
`/api/eae/fig/<key>` (cached by the browser, shared by every session of the server) and
Plotly.js — the smallest bundle that draws the figure, `viz.plotlyjs` — from
`/api/eae/plotly-<bundle>-<version>.min.js`; otherwise (plain `streamlit run app.py`, AppTest)
the payload travels inline and Plotly.js comes from the bundles' folders, declared as
components of their own. The component's value is the last event the player sent (a
scrub released: {"event": "scrub", "param", "value", "index", "nonce"}) or None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st
import streamlit.components.v1 as components

import runtime
from runtime.store import Shown
from viz import plotlyjs
from viz.player import HERE
from viz.style import plotly_config

_player = components.declare_component("eae_player", path=str(HERE))
_plotly_dirs = {
    "vendor": components.declare_component("eae_plotlyjs_vendor", path=str(plotlyjs.VENDOR)),
    "full": components.declare_component("eae_plotlyjs", path=str(plotlyjs.FULL_JS.parent)),
}


def plotly_src(bundle: str = "full") -> str:
    """Where the player's page loads the Plotly.js `bundle` from (see the module docstring)."""
    if runtime.current().mounted:
        return runtime.plotly_js_url(bundle)
    path = plotlyjs.path_of(bundle)
    folder = _plotly_dirs["full" if path == plotlyjs.FULL_JS else "vendor"]
    return f"../{folder.name}/{path.name}"


def take_event(key: str) -> dict[str, Any] | None:
    """The player's newest event in this session, once: None if there is none or it was
    taken before (events carry a nonce)."""
    ev = st.session_state.get(key)
    if not isinstance(ev, dict) or "nonce" not in ev:
        return None
    seen = f"_eae.player.seen.{key}"
    if st.session_state.get(seen) == ev["nonce"]:
        return None
    st.session_state[seen] = ev["nonce"]
    return ev


def show(shown: Shown, *, key: str, presenter: bool = False, stale: bool = False,
         family: Mapping[str, Any] | None = None, filename: str | None = None,
         edit: str | None = None, autoplay: bool = False) -> Any:
    """Draw `shown` with the player (component key `key`); returns the player's last event
    (a scrub or a data edit released) or None. A `family` (`ui.family.Family.player_arg`)
    adds the scrub slider and `edit` (an id of `ui.edits.offer`) the runs of data moved in
    the panel; both need the server's routes (their runs are fetched by key), so they are
    left out otherwise (the player still lets the data be moved, with the theory only).
    `autoplay`: the player plays the figure once when drawn (not when the browser asks for
    reduced motion)."""
    args: dict[str, Any] = {
        "fig_key": shown.key, "plotly_src": plotly_src(shown.bundle), "presenter": bool(presenter),
        "stale": bool(stale), "config": plotly_config(filename),
        "design_height": shown.design_height, "autoplay": bool(autoplay),
    }
    if runtime.current().mounted:
        args["src"] = f"{runtime.API}/fig/{shown.key}"
        args["family"] = dict(family) if family else None
        args["edit"] = f"{runtime.API}/edit/{edit}" if edit else None
    else:
        args["payload"] = shown.payload
        args["family"] = None
    return _player(**args, key=key, default=None)


def last_event(key: str) -> Any:
    """The player's value (its last event) in this session, or None."""
    return st.session_state.get(key)


__all__ = ["last_event", "plotly_src", "show", "take_event"]
