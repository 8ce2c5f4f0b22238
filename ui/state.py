"""The one URL ⇄ state binder every page uses.

A page's state is a typed view (`ui.view.View` subclass) plus named `Config`s (one for the
Explorer, "a"/"b" for Compare…) plus, for pages with their own knobs, a few free parameters.
`Binder` moves it between the URL and the session:

- `load()` reads the URL into that typed state on the page's first run in a session, after
  another page opened it with parameters (`switch_to`, which `forget`s the state) and on the
  browser's back / forward; each bad parameter is dropped with a warning naming it (never an
  exception), and each value a widget would refuse (`ui.settings.check_params`: the same
  ranges and options, the range in the message);
- widgets are seeded from it (`seed`) while it is fresh and then hold it in session state;
- `sync(...)` writes the whole state's parameters into the URL, only non-default values (a
  Config as its differences from the slot's base, a view through `View.to_query`).

Why the URL is not read on the other runs: the query string a run starts with is the one the
browser had when the user moved a widget, and the URL this session wrote in the previous run
may not have reached the browser by then (the server's write can even arrive after the next
run started). Reading that stale string as a new link puts the widgets back to an older value
while the URL bar ends at a newer one. For the same reason `sync` never diffs against it:
it sends the full query string whenever it differs from the last one this session sent or
from the one the run started with, so the last message the browser gets is this run's state.

Widgets are never bound to the URL by Streamlit (`bind="query-params"`): a bound widget makes
every other write of its parameter (`st.query_params[...]`, `st.switch_page(query_params=...)`)
raise, which broke navigation in presenter mode. Everything user-supplied that is shown back
(parameter names and values in warnings) goes through `ui.text`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import urlencode

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

import runtime
from dynamics.config import Config, config_from_query
from dynamics.cost import pre_run_seconds

from .inputs import number_field, plain
from .lesson import ExplorerView, base_config, find_scenario
from .navigation import page as nav_page
from .rules import Rule, shown
from .settings import SETTINGS, check_params, literal_values, read
from .view import VIEW_PREFIX, View

V = TypeVar("V", bound=View)
UPLOAD_PATHS = ("data.X", "data.y")  # uploaded arrays stay out of links (size, privacy)
EXPLORER_PAGE = "explorer"  # a URL path of ui.navigation.PAGES
EXPLORER_KEY = "eae"
URL_SENT_KEY = "_eae.url_sent"  # the last query string this session sent to the browser
COSTLY_S = 0.1  # s of work before a run (`dynamics.cost.pre_run_seconds`) that takes a page
# off the page slots (`Slots.divert`): the data of a large link, its auto-time search


def needs_seed(key: str, fresh: bool) -> bool:
    """Whether a widget's session-state slot is to be (re)set from the page's state: the state
    is `fresh` (just read from a link, or replaced) or the widget has no value yet. The one
    rule every page and panel seeds its widgets by."""
    return fresh or key not in st.session_state


def seed(key: str, value: Any, fresh: bool) -> str:
    """Put `value` in a widget's session-state slot when `needs_seed`; returns `key` (for
    `key=`)."""
    if needs_seed(key, fresh):
        st.session_state[key] = value
    return key


def history_navigation() -> bool:
    """Whether this script run was started by the browser's back / forward buttons (then the
    URL is the browser's own and the page follows it)."""
    try:
        ctx = get_script_run_ctx()
    except Exception:  # no script run (plain Python)
        return False
    return bool(getattr(ctx, "is_history_navigation", False))


def _default_base(_view: View) -> Config:
    return Config()


@dataclass(frozen=True)
class ConfigSlot:
    """A Config kept in the URL under `prefix` (e.g. "a."), as its differences from
    `base(view)`; `paths`, when given, are the only settings a link may set."""

    prefix: str = ""
    base: Callable[[Any], Config] = _default_base
    paths: tuple[str, ...] | None = None


@dataclass
class Bound(Generic[V]):
    """A page's typed state: the view, its configs, its free parameters, the URL's warnings,
    and whether widgets must be (re)seeded from it."""

    view: V
    configs: dict[str, Config]
    extra: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    fresh: bool = False


def _prefixed(warning: str, tag: str, prefix: str) -> str:
    """A config warning ("ignored 'model.width'=…") as the page's URL key says it."""
    quoted = "ignored '"
    if warning.startswith(quoted) and prefix:
        return f"{tag}{quoted}{prefix}{warning[len(quoted):]}"
    if warning.startswith("ignored ") and prefix:
        return f"{tag}ignored {prefix}{warning[len('ignored '):]}"
    return tag + warning


def flat_params(params: Mapping[str, Any]) -> dict[str, str]:
    """One string per key (the last of a repeated parameter)."""
    out: dict[str, str] = {}
    for k, v in params.items():
        if isinstance(v, list):
            v = v[-1] if v else ""
        out[str(k)] = str(v)
    return out


class Binder(Generic[V]):
    """URL ⇄ typed state of one page (see the module docstring). `key` prefixes its session
    keys; `extra(key)` says which other URL keys the page reads itself (its knobs)."""

    def __init__(self, key: str, view: type[V], configs: Mapping[str, ConfigSlot] | None = None,
                 extra: Callable[[str], bool] | None = None):
        self.key = key
        self.view_cls = view
        self.slots = dict(configs or {})
        self.extra = extra or (lambda _k: False)

    # -- pure: parameters ⇄ state ----------------------------------------------------------
    def parse(self, params: Mapping[str, Any]) -> Bound[V]:
        """The state the URL parameters describe; never raises."""
        flat = flat_params(params)
        view, warnings = self.view_cls.from_query(flat)
        used = set(self.view_cls.url_keys())
        configs: dict[str, Config] = {}
        for name, slot in self.slots.items():
            sub = {k[len(slot.prefix):]: v for k, v in flat.items()
                   if k.startswith(slot.prefix) and k not in used and not self.extra(k)
                   and not k.startswith(VIEW_PREFIX)}
            if slot.paths is not None:
                for k in [k for k in sub if k not in slot.paths]:
                    if slot.prefix:  # unprefixed strays are reported once, below
                        warnings.append(f"ignored {slot.prefix}{k}: not a setting of this page")
                    del sub[k]
            used |= {slot.prefix + k for k in sub}
            base = slot.base(view)
            kind = sub.get("data.kind", base.data.kind)
            sub, refused = check_params(sub, kind)  # the widgets' ranges and options
            cfg, w = config_from_query(sub, base)
            w = [plain(x) for x in w]  # server limits named as such, not by variable
            configs[name] = cfg
            tag = f"{name.upper()}: " if slot.prefix else ""
            warnings += [_prefixed(x, tag, slot.prefix) for x in refused + w]
        extra = {k: v for k, v in flat.items() if k not in used and self.extra(k)}
        # keys under a slot's prefix or view.* were judged above; the rest is not for this page
        judged = (VIEW_PREFIX, *(s.prefix for s in self.slots.values() if s.prefix))
        for k in flat:
            if k not in used and k not in extra and not k.startswith(judged):
                warnings.append(f"ignored {k[:40]}: not a setting of this page")
        return Bound(view, configs, extra, warnings, fresh=True)

    def query(self, view: V, configs: Mapping[str, Config],
              extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The short URL parameters of a state: only what differs from the defaults."""
        out = dict(view.to_query())
        for name, slot in self.slots.items():
            cfg = configs.get(name)
            if cfg is None:
                continue
            q = cfg.to_query(slot.base(view), omit=UPLOAD_PATHS)  # uploads: digests only
            for k, v in q.items():
                if k in UPLOAD_PATHS or (slot.paths is not None and k not in slot.paths):
                    continue
                out[slot.prefix + k] = v
        out.update(extra or {})
        return dict(sorted(out.items()))

    # -- the session --------------------------------------------------------------------------
    def _k(self, name: str) -> str:
        return f"{self.key}._{name}"

    def load(self) -> Bound[V]:
        """The state to start this run from: the URL's on the page's first run in this session
        (or after `forget`), and on back / forward when the URL differs from what this page
        last wrote; else the session's (fresh=False). Any other run's query string may be a
        stale echo of this session's own writes (see the module docstring), so it is not
        read. A state whose data take a while to build before any run (`COSTLY_S`) moves this
        page run off the page slots (`runtime.admission.Slots.divert`)."""
        ss = st.session_state
        url = flat_params(st.query_params.to_dict())
        stored: Bound[V] | None = ss.get(self._k("state"))
        if stored is None or (history_navigation() and url != ss.get(self._k("synced"))):
            stored = self.parse(url)
            ss[self._k("state")] = stored
            ss[self._k("synced")] = url
        bound = Bound(stored.view, dict(stored.configs), dict(stored.extra),
                      list(stored.warnings), stored.fresh)
        stored.fresh = False
        if any(pre_run_seconds(c) > COSTLY_S for c in bound.configs.values()):
            runtime.current().pages.divert()  # data take a while: other visitors' pages go on
        return bound

    def reset(self, view: V | None = None, configs: Mapping[str, Config] | None = None,
              extra: Mapping[str, str] | None = None) -> None:
        """Replace the stored state (e.g. a preset was picked) and reseed the widgets on the
        next run; the URL's warnings are cleared."""
        ss = st.session_state
        old: Bound[V] | None = ss.get(self._k("state"))
        base = old or self.parse({})
        ss[self._k("state")] = Bound(view or base.view, dict(configs or base.configs),
                                     dict(extra if extra is not None else base.extra), [],
                                     fresh=True)

    def forget(self) -> None:
        """Make the next run start from the URL again (as on a session's first run)."""
        for name in ("state", "synced"):
            st.session_state.pop(self._k(name), None)

    def seed(self, widget_key: str, value: Any, fresh: bool) -> str:
        """`seed` (the module function): the widget's slot set from the page's state."""
        return seed(widget_key, value, fresh)

    def sync(self, view: V, configs: Mapping[str, Config],
             extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """Store the state and write its parameters into the URL (the whole query string, in
        one message, unless the browser has it and nothing else was sent since). Returns the
        parameters."""
        ss = st.session_state
        old: Bound[V] | None = ss.get(self._k("state"))
        all_configs = {**(old.configs if old else {}), **configs}
        ex = dict(extra if extra is not None else (old.extra if old else {}))
        warnings = list(old.warnings) if old else []
        if old is not None and (old.view != view or old.configs != all_configs
                                or old.extra != ex):
            warnings = []  # the user changed something: the link's warnings are history
        ss[self._k("state")] = Bound(view, all_configs, ex, warnings, fresh=False)
        params = self.query(view, all_configs, ex)
        current = flat_params(st.query_params.to_dict())
        if params != current or params != ss.get(URL_SENT_KEY):
            st.query_params.from_dict(params)
            ss[URL_SENT_KEY] = dict(params)
        ss[self._k("synced")] = params
        return params

    def widget(self, make: Callable[..., Any], label: str, *, key: str, value: Any,
               bound: Bound[V], options: Any = None, path: str | None = None,
               **kw: Any) -> Any:
        """A page knob kept in the URL under its widget key (`value` is its default): seeded
        from the link when fresh (read by the settings table's one reader and checked against
        its options or range; a bad value is dropped with a warning in `bound.warnings`),
        drawn, and recorded in `bound.extra` when not the default. `path`: the setting it
        changes, whose help (`ui.settings`) it shows when it has none of its own."""
        if kw.get("help") is None and path in SETTINGS:
            kw["help"] = SETTINGS[path].help
        raw = bound.extra.pop(key, None)
        if needs_seed(key, bound.fresh):
            seeded = value
            if raw is not None:
                got, problem = _knob_value(raw, label, value, options, kw)
                if problem:
                    msg = f"ignored {key}={raw[:40]!r}: {problem}"
                    bound.warnings.append(msg)
                    stored: Bound[V] | None = st.session_state.get(self._k("state"))
                    if stored is not None:  # shown until the user changes something
                        stored.warnings.append(msg)
                else:
                    seeded = got
            st.session_state[key] = seeded
        if options is not None:
            kw["options"] = options
        if make is st.number_input:
            out = _number_knob(label, key, value, kw)
        else:
            out = make(label, key=key, **kw)
        if out != value:
            bound.extra[key] = str(out)
        return out


def _number_knob(label: str, key: str, default: Any, kw: dict[str, Any]) -> Any:
    """A page knob's number field that takes what is typed (`ui.inputs.number_field`: no
    browser-side bounds, which refuse or coerce silently). A rejected value is said under the
    field, with the value used meanwhile (the last good one)."""
    integer = isinstance(default, int) and not isinstance(default, bool)
    rule = Rule(label.split(" (")[0], kw.get("min_value"), kw.get("max_value"),
                integer=integer)
    last_key = f"{key}._last_good"
    value, problem = number_field(label, key, rule, step=kw.get("step") or 1.0,
                                  help=kw.get("help"), fmt=kw.get("format") or "%g")
    if problem:
        kept = st.session_state.get(last_key, default)
        st.error(f"{problem} Still showing {shown(float(kept))} meanwhile.")
        return kept
    st.session_state[last_key] = value
    return value


def _knob_value(raw: str, label: str, default: Any, options: Any, kw: Mapping[str, Any]
                ) -> tuple[Any, str]:
    """A knob's URL text as the type of its default, within its options or range (the
    settings table's one reader, `ui.settings.read`)."""
    if options is not None:
        return read(raw, type(default), options=options)
    if isinstance(default, bool) or not isinstance(default, int | float):
        return read(raw, type(default), options=literal_values(type(default)))
    integer = isinstance(default, int)
    rule = Rule(label.split(" (")[0], kw.get("min_value"), kw.get("max_value"),
                integer=integer)
    return read(raw, int if integer else float, rule=rule)


def switch_to(url_path: str, params: Mapping[str, str], binder_key: str) -> None:
    """Open the page at `url_path` (`ui.navigation.PAGES`) with URL parameters; its binder
    (session key `binder_key`) starts from them. Does not return."""
    for name in ("state", "synced"):
        st.session_state.pop(f"{binder_key}._{name}", None)
    st.switch_page(nav_page(url_path), query_params=dict(params))


def explorer_binder() -> Binder[ExplorerView]:
    """The Explorer's binder: one Config (unprefixed, kept as its differences from the lesson
    scenario on screen, if any: `ui.lesson.base_config`) and the Explorer's view."""
    return Binder(EXPLORER_KEY, ExplorerView, {"run": ConfigSlot(base=base_config)})


def open_in_explorer(config: Config, view: View | None = None) -> None:
    """Switch to the Explorer showing `config` (presenter mode kept from `view`). In presenter
    mode a paper's preset opens as that lesson scenario, so ◀ / ▶ continue from it. Does not
    return."""
    presenter = bool(view and view.presenter)
    found = find_scenario(config) if presenter else None
    ev = ExplorerView(presenter=presenter, scenario=found.key if found else "")
    switch_to(EXPLORER_PAGE, explorer_binder().query(ev, {"run": config}), EXPLORER_KEY)


def share_link(params: Mapping[str, str], page_url: str | None = None) -> str:
    """An absolute link to this page with the parameters (relative if the URL is unknown)."""
    base = page_url
    if base is None:
        try:
            base = st.context.url
        except Exception:  # no browser context (AppTest)
            base = None
    base = (base or "").split("?")[0]
    query = urlencode(dict(params), safe=",.[]:")
    return f"{base}?{query}" if query else base


__all__ = ["EXPLORER_PAGE", "Binder", "Bound", "ConfigSlot", "explorer_binder", "flat_params",
           "open_in_explorer", "share_link", "switch_to"]
