"""About & status. Every visitor sees what the app is and what this server allows (its limits,
in words). The server's internals — the service's counters, cache sizes and path, the limits'
environment variables, thread settings, library versions and the "Clear memory cache" button —
are shown only when the operator setting is on (`EAE_OPERATOR=1`, `dynamics.limits.Settings`).
Nothing here computes dynamics.

URL (through the binder, ui.state): `view.presenter` (presenter mode: no sidebar, larger
text, the intro collapsed), like every page.
"""

from __future__ import annotations

import platform
from dataclasses import fields
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import pandas as pd
import streamlit as st

from dynamics.blas import thread_settings
from dynamics.limits import LIMIT_HELP, Limits, get_limits, get_settings
from ui import presenter, state
from ui.runner import get_service  # the pages' accessor of the process's service
from ui.view import View

PREFIX = "stat"
VISITOR_LIMITS = ("max_width", "max_points", "max_dim", "max_frames", "max_upload_mb",
                  "deadline_s", "max_sweep_points", "click_to_run_s")  # shown to everyone


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 1e5 else f"{n / 1e3:,.1f} kB"


def _version(pkg: str) -> str:
    try:
        return version(pkg)
    except PackageNotFoundError:
        return "not installed"


def _limits_table(active: Limits) -> pd.DataFrame:
    default = Limits()
    rows = []
    for f in fields(Limits):
        value, base = getattr(active, f.name), getattr(default, f.name)
        rows.append({
            "limit": f.name,
            "environment variable": active.env_name(f.name),
            "value": f"{value:g}" if isinstance(value, float) else str(value),
            "default": f"{base:g}" if isinstance(base, float) else str(base),
            "meaning": LIMIT_HELP.get(f.name, ""),
        })
    return pd.DataFrame(rows)
B = state.Binder(PREFIX, View)


def _visitor_view() -> None:
    """What a visitor sees: the limits this server allows (counters and caches are the
    operator's)."""
    st.subheader("What this server allows")
    st.caption("Settings over these limits are refused with a message saying what to change; "
               "runs estimated to take longer than the last line start only when you press "
               "Run.")
    lim = get_limits()
    st.dataframe(pd.DataFrame([
        {"limit": LIMIT_HELP.get(f.name, f.name),
         "value": f"{getattr(lim, f.name):g}" if isinstance(getattr(lim, f.name), float)
         else str(getattr(lim, f.name))}
        for f in fields(Limits) if f.name in VISITOR_LIMITS]), hide_index=True, width="stretch")
    st.caption("Counters, caches and server settings are shown to the server's operators "
               "only: whoever runs the server turns that view on by starting it with the "
               "environment variable EAE_OPERATOR=1 (the hosting guide lists every "
               "setting).")


def _service(stats: dict[str, Any]) -> None:
    """The service's counters: hits, computations, runs now, errors."""
    st.subheader("Service")
    row = st.columns(4)
    row[0].metric("Memory hits", f"{stats['memory_hits']:,}")
    row[1].metric("Disk hits", f"{stats['disk_hits']:,}")
    row[2].metric("Computed", f"{stats['computations']:,}",
                  help="simulations started for a page's request; "
                       f"{stats['speculative_computations']:,} more were started ahead of time "
                       "(the Explorer's neighbouring settings)")
    row[3].metric("Joined a run in flight", f"{stats['joined']:,}",
                  help="requests that waited for an identical run already computing")
    row = st.columns(4)
    row[0].metric("Running now", f"{stats['running']} of {stats['max_concurrent']}")
    row[1].metric("Queued", f"{stats['queued']}")
    row[2].metric("Cancelled", f"{stats['cancelled']:,}")
    row[3].metric("Errors", f"{stats['errors']:,}")


def _caches(service: Any, stats: dict[str, Any]) -> None:
    """The caches' sizes and health, and the button that clears the memory cache."""
    st.subheader("Caches")
    row = st.columns(3)
    row[0].metric("Memory entries", f"{stats['memory_entries']} of {stats['memory_limit_entries']}")
    row[1].metric("Memory size", _mb(stats["memory_bytes"]),
                  help=f"limit {_mb(stats['memory_limit_bytes'])}")
    row[2].metric("Disk size", _mb(stats["disk_bytes"]),
                  help=f"{stats['disk_entries']} entries; limit {_mb(stats['disk_limit_bytes'])}")
    health = service.cache_health()
    if not health["ok"]:  # the cache repaired itself (also logged): say what happened
        st.warning("The disk cache repaired itself since this server started (nothing to do "
                   "unless this repeats):")
        st.text("\n".join(f"- {p}" for p in health["problems"]))
    st.caption(f"Disk cache: `{service.cache_dir}` (set EAE_CACHE_DIR to move it). Counters count "
               "since this server process started.")
    if st.button("Clear memory cache", help="drop the in-process cache; the disk cache stays"):
        service.clear_memory()
        st.success("Memory cache cleared.")


def _settings() -> None:
    """The limits, the threads' settings and the versions."""
    st.subheader("Limits")
    st.caption("Each limit is read from its environment variable (EAE_ + the name in capitals); "
               "configurations over a limit are refused with a message naming it.")
    st.dataframe(_limits_table(get_limits()), hide_index=True, width="stretch")
    st.subheader("Threads")
    st.caption("How runs use the cores. Results never depend on these settings; see "
               "docs/hosting.md for choosing them on a shared host.")
    st.dataframe(pd.DataFrame(thread_settings()), hide_index=True, width="stretch")
    st.subheader("Versions")
    st.dataframe(pd.DataFrame(
        [{"package": p, "version": _version(p)}
         for p in ("numpy", "numba", "scipy", "streamlit", "plotly", "pydantic")]
        + [{"package": "python", "version": platform.python_version()}]),
        hide_index=True)


def page() -> None:
    """The page (st.Page calls it on every run; no page state lives at module level)."""
    bound = B.load()
    on = presenter.mode("view.presenter", bound.view.presenter, bound.fresh)
    presenter.switch("view.presenter")
    B.sync(View(presenter=on), {})
    st.title("About & status")
    presenter.intro(on, "About this app").caption(
        "Early Alignment Explorer: gradient flow of two-layer (leaky) ReLU networks from "
        "small initialisation. Every run goes through one cached service per server process.")
    if not get_settings().operator:
        _visitor_view()
        st.stop()
    service = get_service()
    stats = service.stats()
    _service(stats)
    _caches(service, stats)
    _settings()


if __name__ == "__main__":  # run as a script (AppTest.from_file, streamlit run)
    page()
