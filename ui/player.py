"""The figure player on a page: a Streamlit component (static files in `viz/player/`) that
draws a figure's first frame with Plotly.js and plays its frames in the browser.

`show(shown, key=...)` passes the figure by its key: when the server serves the project's
routes (`ui.server.mounted()`, `streamlit run serve.py`) the player fetches the payload from
`/api/eae/fig/<key>` (cached by the browser, shared by every session of the server) and
Plotly.js — the smallest bundle that draws the figure, `viz.plotlyjs` — from
`/api/eae/plotly-<bundle>-<version>.min.js`; otherwise (plain `streamlit run app.py`, AppTest)
the payload travels inline and Plotly.js comes from the bundles' folders, declared as
components of their own. The component's value is the last event the player sent (a
scrub released: {"event": "scrub", "param", "value", "index", "nonce"}) or None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st
import streamlit.components.v1 as components

from viz import plotlyjs
from viz.player import HERE
from viz.style import plotly_config

from . import server
from .figures import Shown

_player = components.declare_component("eae_player", path=str(HERE))
_plotly_dirs = {
    "vendor": components.declare_component("eae_plotlyjs_vendor", path=str(plotlyjs.VENDOR)),
    "full": components.declare_component("eae_plotlyjs", path=str(plotlyjs.FULL_JS.parent)),
}


def plotly_src(bundle: str = "full") -> str:
    """Where the player's page loads the Plotly.js `bundle` from (see the module docstring)."""
    if server.mounted():
        return server.plotly_js_url(bundle)
    path = plotlyjs.path_of(bundle)
    folder = _plotly_dirs["full" if path == plotlyjs.FULL_JS else "vendor"]
    return f"../{folder.name}/{path.name}"


def family_arg(param: str, label: str, values: Sequence[Any], labels: Sequence[str],
               keys: Sequence[str | None], current: int,
               choices: Sequence[tuple[str, str]] = (),
               start: str | None = None, widget: str = "") -> dict[str, Any]:
    """The player's `family`: runs along one control (`param`, its `label`), one payload key
    per value (None: cannot be computed), `current` the value on screen; `choices` are the
    (param, label) of the controls the player offers to scrub instead; `start` the offered
    family's id (`ui.family.offer`), asked for when the visitor reaches for the slider (None:
    already computing); `widget` the label of the page's slider of the same control, which
    moves the family while it is dragged (the page's slider reports only its release)."""
    return {"param": param, "label": label, "values": list(values), "labels": list(labels),
            "sources": [f"{server.API}/fig/{k}" if k else None for k in keys],
            "current": int(current), "choices": [list(c) for c in choices],
            "start": f"{server.API}/family/{start}" if start else None, "widget": widget}


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
    (a scrub or a data edit released) or None. A `family` (`family_arg`) adds the scrub
    slider and `edit` (an id of `ui.edits.offer`) the runs of data moved in the panel; both
    need the server's routes (their runs are fetched by key), so they are left out
    otherwise (the player still lets the data be moved, with the theory only). `autoplay`:
    the player plays the figure once when drawn (not when the browser asks for reduced
    motion)."""
    args: dict[str, Any] = {
        "fig_key": shown.key, "plotly_src": plotly_src(shown.bundle), "presenter": bool(presenter),
        "stale": bool(stale), "config": plotly_config(filename),
        "design_height": shown.design_height, "autoplay": bool(autoplay),
    }
    if server.mounted():
        args["src"] = f"{server.API}/fig/{shown.key}"
        args["family"] = dict(family) if family else None
        args["edit"] = f"{server.API}/edit/{edit}" if edit else None
    else:
        args["payload"] = shown.payload
        args["family"] = None
    return _player(**args, key=key, default=None)


def last_event(key: str) -> Any:
    """The player's value (its last event) in this session, or None."""
    return st.session_state.get(key)


__all__ = ["family_arg", "last_event", "plotly_src", "show", "take_event"]
