"""The server's runtime: one `Runtime` owns the dashboard's live state (`runtime.owner`), built
once per process (`start()` in `serve.py`'s lifespan, else `current()` on first use).

Layering: `app_pages -> ui -> runtime -> viz -> dynamics`; `runtime/` imports no `ui/` or
`app_pages/` (Streamlit only for the reaper's session internals).
"""

from .owner import API, Runtime, current, plotly_js_url, start

__all__ = ["API", "Runtime", "current", "plotly_js_url", "start"]
