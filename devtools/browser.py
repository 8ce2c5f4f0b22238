"""Headless Chromium for the dashboard: launch settings and the "Streamlit is idle" rule.

Playwright drives Debian's Chromium (``/usr/bin/chromium``; Playwright's own browser download
is not used). `wait_for_streamlit_idle` is the one definition of "the app has finished its run
and drawn it", shared by browser tests and the load benchmark (which embeds `IDLE_JS`).
"""

from __future__ import annotations

import os
import time
from typing import Any

CHROMIUM_PATH = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1400, "height": 900}


def chromium_missing() -> str | None:
    """None if Chromium is installed at `CHROMIUM_PATH`, else why browser runs cannot start."""
    if os.path.isfile(CHROMIUM_PATH) and os.access(CHROMIUM_PATH, os.X_OK):
        return None
    return (f"Chromium not installed at {CHROMIUM_PATH}; browser tests need Debian's chromium "
            "(scripts/setup.sh installs it as root)")


def launch_chromium(playwright: Any, timeout_ms: float = 60_000) -> Any:
    """A headless Chromium `Browser` from a started ``sync_playwright()`` object.

    Plain ``launch()`` rather than ``launch_persistent_context()`` so that every caller can open
    fresh, isolated contexts; Playwright gives Chromium a temporary profile and deletes it on
    ``close()``.
    """
    return playwright.chromium.launch(executable_path=CHROMIUM_PATH, headless=True,
                                      args=CHROMIUM_ARGS, timeout=timeout_ms)


# Observed on streamlit 1.67.0:
#  * ``[data-testid="stApp"]`` carries ``data-test-script-state`` ("initial" before the first
#    run, "running" while the script runs, "notRunning" when done) and
#    ``data-test-connection-state`` ("PINGING_SERVER" ... "CONNECTED").
#  * ``[data-testid="stStatusWidget"]`` (with ``[data-testid="stStatusWidgetRunningIcon"]``,
#    aria-label "Running...") appears only while a run is in progress, after a short delay.
#  * ``[data-testid="stSkeleton"]`` placeholders stand in for lazily loaded elements (e.g. the
#    plotly chart) and for elements of a run that have not arrived yet.
#: A JavaScript function (no arguments) that is true when the page is idle: connected, script
#: not running, no status widget, no skeletons, every Plotly chart drawn.
IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return false;
  if (app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
  if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    if (!chart.querySelector('.main-svg')) return false;
  }
  return true;
}"""

_STATE_JS = """() => {
  const a = document.querySelector('[data-testid="stApp"]');
  return {
    script: a && a.getAttribute('data-test-script-state'),
    connection: a && a.getAttribute('data-test-connection-state'),
    statusWidget: !!document.querySelector('[data-testid="stStatusWidget"]'),
    skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length,
  };
}"""


def wait_for_streamlit_idle(page: Any, timeout: float = 60.0, settle: float = 0.5) -> None:
    """Wait until the Streamlit app on a Playwright `page` has finished running and rendering.

    Idle is `IDLE_JS`; it must hold continuously for ``settle`` seconds, which covers the short
    gap between a widget interaction and the rerun it triggers. ``timeout`` is in seconds;
    on timeout a `TimeoutError` names the app's script and connection state.
    """
    deadline = time.monotonic() + timeout
    idle_since: float | None = None
    while True:
        now = time.monotonic()
        if page.evaluate(IDLE_JS):
            if idle_since is None:
                idle_since = now
            elif now - idle_since >= settle:
                return
        else:
            idle_since = None
        if now > deadline:
            state = page.evaluate(_STATE_JS)
            raise TimeoutError(f"Streamlit app not idle after {timeout:.0f} s: {state}")
        page.wait_for_timeout(100)
