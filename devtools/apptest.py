"""Run one dashboard page headlessly with Streamlit's AppTest and read its chart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def run_page(path: str | Path, params: dict[str, str] | None = None,
             timeout: float = 120) -> Any:
    """AppTest of the page at `path` with URL parameters `params`, run once.

    Fails (AssertionError listing the messages) when the page shows any exception element.
    """
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(path), default_timeout=timeout)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def switch_to_page(at: Any, url_path: str) -> Any:
    """Point an AppTest of `app.py`, run once, at the navigation's page at `url_path`; the next
    `at.run()` runs it.

    The pages are functions (`st.Page(function)`), which `AppTest.switch_page` cannot find (it
    matches file pages only); a run of the app registers each page with its URL path and the
    hash of that path (what a browser's request for it carries), the page a run takes.
    """
    from streamlit.util import calc_hash

    page_hash = calc_hash(url_path)  # st.Page's own: the hash of its URL path
    if page_hash not in at._registered_pages:
        known = sorted(str(i.get("page_name")) for i in at._registered_pages.values())
        raise ValueError(f"no page at {url_path!r} (the app registers {known}); run the app "
                         "once before switching")
    at._page_hash = page_hash
    return at


def plotly_spec(at: Any) -> dict[str, Any]:
    """The Plotly JSON of the page's only chart (AssertionError if there is not exactly one)."""
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    spec: dict[str, Any] = json.loads(charts[0].proto.spec)
    return spec


PLAYER = "eae_player"  # the figure player component (ui/player.py)


def players(at: Any) -> list[Any]:
    """The page's figure-player elements (custom components named ...eae_player)."""
    return [e for e in at.get("component_instance")
            if str(e.proto.component_name).endswith(PLAYER)]


def player_args(el: Any) -> dict[str, Any]:
    """A player element's JSON arguments (stale, presenter, family, …)."""
    out: dict[str, Any] = json.loads(el.proto.json_args or "{}")
    return out


def player_spec(at: Any, index: int | None = None) -> dict[str, Any]:
    """The figure a player draws, read from its inline payload's scene (AppTest has no figure
    route): {"data": every trace's static properties in drawing order, "layout": the layout
    with the panels' axes, "frames": {"n", "labels", "captions", …}, "meta", "items"} (long
    arrays appear as {"$a": name} references into the binary part). With `index` None the
    page must have exactly one player (AssertionError otherwise)."""
    import struct

    found = players(at)
    if index is None:
        assert len(found) == 1, f"{len(found)} players on the page"
        index = 0
    el = found[index]
    blob = next(s.bytes for s in el.proto.special_args if s.key == "payload")
    assert blob[:4] == b"EAEP", "not a figure payload"
    _version, n = struct.unpack("<II", blob[4:12])
    header = json.loads(blob[12:12 + n].decode())
    data: list[dict[str, Any]] = []
    for item in header["items"]:
        data += [item["trace"]] if item["kind"] == "trace" else item["traces"]
    layout = dict(header["layout"])
    for p in header["panels"]:
        layout["xaxis" + p["x"][1:]] = {**p["xaxis"], "domain": p["dx"], "anchor": p["y"]}
        layout["yaxis" + p["y"][1:]] = {**p["yaxis"], "domain": p["dy"], "anchor": p["x"]}
    return {"data": data, "layout": layout, "frames": header["frames"],
            "meta": header.get("meta", {}), "items": header["items"]}


def figure_spec(at: Any) -> dict[str, Any]:
    """The page's one figure: the player's (animated) or else the only Plotly chart's."""
    return player_spec(at) if players(at) else plotly_spec(at)


#: The element types a visitor operates (their protos carry a `help` text).
CONTROL_TYPES = frozenset({
    "button", "download_button", "selectbox", "multiselect", "radio", "checkbox", "toggle",
    "slider", "select_slider", "number_input", "text_input", "text_area", "file_uploader",
    "button_group", "date_input", "time_input", "color_picker", "chat_input"})


def controls_without_help(at: Any) -> list[str]:
    """The controls on an AppTest's page that have no help text (each as "type 'label'")."""
    out: list[str] = []

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        kind = getattr(node, "type", "")
        if kind in CONTROL_TYPES and proto is not None and not getattr(proto, "help", "x"):
            out.append(f"{kind} {getattr(proto, 'label', '')!r}")
        kids = getattr(node, "children", None)
        for child in (kids.values() if isinstance(kids, dict) else kids or []):
            walk(child)

    walk(at._tree)
    return out
