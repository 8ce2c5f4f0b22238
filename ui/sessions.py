"""The Streamlit session a page runs in: its id and hooks that run when it ends.

- `session_id()`: the id of the session running this script (None outside a script run).
- `on_end(name, fn)`: `fn()` runs once when this session ends — its websocket closes, or the
  server shuts it down —, one hook per name per session. Streamlit releases a session-scoped
  `st.cache_resource` at disconnect; its `on_release` runs the hooks (in the server's thread:
  a hook must not use `st.*`). A session that reconnects registers its hooks again.
- The server's clean-up of ended sessions is the runtime's (`runtime.reaper.Reaper`,
  `Runtime.reaper`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

log = logging.getLogger("ui.sessions")


def session_id() -> str | None:
    """The id of the Streamlit session running this script, or None (no script run)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return None if ctx is None else str(ctx.session_id)


class _Hooks:
    """The end-of-session hooks of one session (the session-scoped resource)."""

    def __init__(self, sid: str | None):
        self.sid = sid
        self.fns: dict[str, Callable[[], None]] = {}
        self.lock = threading.Lock()
        self.done = False

    def run(self) -> None:
        with self.lock:
            if self.done:
                return
            self.done = True
            fns = list(self.fns.values())
        for fn in fns:
            try:
                fn()
            except Exception:  # one hook's failure must not stop the others
                log.exception("session end hook failed")


def _release(hooks: _Hooks) -> None:
    hooks.run()


@st.cache_resource(scope="session", on_release=_release, show_spinner=False)
def _hooks() -> _Hooks:
    return _Hooks(session_id())


def on_end(name: str, fn: Callable[[], None]) -> None:
    """Run `fn()` when this session ends (see the module docstring); replaces the hook of the
    same name. Outside a script run (tests calling a page function) it does nothing."""
    if session_id() is None:
        return
    hooks = _hooks()
    with hooks.lock:
        hooks.fns[name] = fn


__all__ = ["on_end", "session_id"]
