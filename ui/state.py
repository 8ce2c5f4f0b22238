"""URL ⇄ Config binding and widget keys.

The page's state is one `Config` plus display options (`ViewOptions`). Widgets hold it while a
session lives (keys from `widget_key`); the URL holds it between sessions: the config's fields
that differ from the defaults (`Config.to_query`) and the display options that differ from
theirs (`view.radius=log`). A link therefore reopens the same view. Malformed parameters are
dropped with a warning (`config_from_query`), never an exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from dynamics.config import Config, config_from_query

KEY_PREFIX = "eae"
VIEW_PREFIX = "view."
VIEW_CHOICES: dict[str, tuple[str, ...]] = {
    "radius": ("normalised", "log"),
    "time_axis": ("log", "linear"),
    "time_scale": ("t", "t_over_log_inv_eps"),
}


@dataclass(frozen=True)
class ViewOptions:
    """Display options of the main figure (not part of the run)."""

    radius: str = "normalised"
    time_axis: str = "log"
    time_scale: str = "t"
    presenter: bool = False

    def figure_kwargs(self) -> dict[str, Any]:
        return {"radius": self.radius, "time_axis": self.time_axis,
                "time_scale": self.time_scale, "presenter": self.presenter}


def widget_key(path: str, prefix: str = KEY_PREFIX) -> str:
    """Session-state key of the widget bound to a dotted config path (or `view.*`)."""
    return f"{prefix}.{path}"


def split_query(params: Mapping[str, str | list[str]]) -> tuple[dict[str, str], dict[str, str]]:
    """(config parameters, view parameters without the `view.` prefix)."""
    cfg: dict[str, str] = {}
    view: dict[str, str] = {}
    for k, v in params.items():
        val = v[-1] if isinstance(v, list) and v else v
        if not isinstance(val, str):
            val = str(val)
        if k.startswith(VIEW_PREFIX):
            view[k[len(VIEW_PREFIX):]] = val
        else:
            cfg[k] = val
    return cfg, view


def view_from_query(params: Mapping[str, str]) -> tuple[ViewOptions, list[str]]:
    """Display options from `view.*` parameters; unknown or bad ones are dropped with a
    warning."""
    out: dict[str, Any] = {}
    warnings: list[str] = []
    names = {f.name for f in fields(ViewOptions)}
    for k, v in params.items():
        if k not in names:
            warnings.append(f"ignored view.{k}: not a display option")
        elif k == "presenter":
            if v.lower() in ("true", "1", "false", "0"):
                out[k] = v.lower() in ("true", "1")
            else:
                warnings.append(f"ignored view.presenter={v[:40]!r}: must be true or false")
        elif v in VIEW_CHOICES[k]:
            out[k] = v
        else:
            warnings.append(f"ignored view.{k}={v[:40]!r}: must be one of "
                            f"{', '.join(VIEW_CHOICES[k])}")
    return ViewOptions(**out), warnings


def view_to_query(view: ViewOptions) -> dict[str, str]:
    base = asdict(ViewOptions())
    out = {}
    for k, v in asdict(view).items():
        if v != base[k]:
            out[VIEW_PREFIX + k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
    return out


def state_from_query(params: Mapping[str, str | list[str]]
                     ) -> tuple[Config, ViewOptions, list[str]]:
    """Lenient: the config and view a URL describes, and a warning per dropped parameter."""
    cfg_params, view_params = split_query(params)
    config, warnings = config_from_query(cfg_params)
    view, view_warnings = view_from_query(view_params)
    return config, view, warnings + view_warnings


def state_to_query(config: Config, view: ViewOptions) -> dict[str, str]:
    """The short URL parameters of a view (only what differs from the defaults). Uploaded
    arrays stay out of links (size, privacy): only `data.kind=array` is kept."""
    query = config.to_query()
    if config.data.kind == "array":
        query = {k: v for k, v in query.items() if k not in ("data.X", "data.y")}
    return {**query, **view_to_query(view)}


def load_url_once(prefix: str = KEY_PREFIX) -> tuple[Config, ViewOptions, list[str]]:
    """The state to start from: the URL's on this session's first run (its warnings are kept
    and returned until the state changes), afterwards the last valid state of the session."""
    ss = st.session_state
    k_cfg, k_view, k_warn = f"{prefix}._config", f"{prefix}._view", f"{prefix}._url_warnings"
    if k_cfg not in ss:
        config, view, warnings = state_from_query(st.query_params.to_dict())
        ss[k_cfg], ss[k_view], ss[k_warn] = config, view, warnings
        ss[f"{prefix}._fresh"] = True  # widgets must be (re)seeded from this state
    return ss[k_cfg], ss[k_view], list(ss.get(k_warn, []))


def remember(config: Config, view: ViewOptions, prefix: str = KEY_PREFIX) -> None:
    """Store the last valid state; clear URL warnings once the user has changed something."""
    ss = st.session_state
    if ss.get(f"{prefix}._config") != config or ss.get(f"{prefix}._view") != view:
        ss[f"{prefix}._url_warnings"] = []
    ss[f"{prefix}._config"], ss[f"{prefix}._view"] = config, view


def sync_url(config: Config, view: ViewOptions) -> dict[str, str]:
    """Write the view into the browser's URL (only when it changed); returns the parameters."""
    params = state_to_query(config, view)
    current = {k: v for k, v in st.query_params.to_dict().items()}
    if current != params:
        st.query_params.from_dict(params)
    return params


def share_link(params: Mapping[str, str], page_url: str | None = None) -> str:
    """An absolute link to this page with the parameters (relative if the URL is unknown)."""
    base = page_url
    if base is None:
        try:
            base = st.context.url
        except Exception:  # older Streamlit or no browser context (tests)
            base = None
    base = (base or "").split("?")[0]
    query = urlencode(dict(params), safe=",.[]:")
    return f"{base}?{query}" if query else base


EXPLORER_PAGE = "app_pages/explorer.py"


def forget_url_state(prefix: str = KEY_PREFIX) -> None:
    """Make the next run of a page with this prefix start from its URL again (as on a
    session's first run): used before switching to it with new parameters."""
    for k in ("_config", "_view", "_url_warnings"):
        st.session_state.pop(f"{prefix}.{k}", None)


def open_in_explorer(config: Config, view: ViewOptions | None = None,
                     page: str = EXPLORER_PAGE) -> None:
    """Switch to the Explorer showing `config` (and `view`): its URL carries the preset, and
    the Explorer's session state is reset so that it reads it. Does not return."""
    forget_url_state()
    st.switch_page(page, query_params=state_to_query(config, view or ViewOptions()))


def page_link(page_url_path: str, params: Mapping[str, str]) -> str:
    """A link to another page of the app (by its url_path, e.g. "papers"; "" for the default
    page, the Explorer, which is served at the root) with parameters, absolute when the
    browser's URL is known."""
    try:
        here = st.context.url or ""
    except Exception:
        here = ""
    base = here.split("?")[0].rstrip("/")
    if base:
        base = base.rsplit("/", 1)[0] if base.count("/") > 2 else base
        base = f"{base}/{page_url_path}" if page_url_path else base
    else:
        base = page_url_path
    query = urlencode(dict(params), safe=",.[]:")
    return f"{base}?{query}" if query else base
