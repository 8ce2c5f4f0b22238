"""A light load check (the full one is `bench/load.py`): four browser sessions open the
Explorer at once on an operator server (counters shown) — two on the same link, two on different
configurations, none of them computed before in the session — and every one draws its chart
without an exception, while the shared link is computed once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bench.load import measure_sessions, read_counters, session_urls

REPO_ROOT = Path(__file__).resolve().parent.parent
# links no other test opens (seed, width), so each is a new computation on the shared server
SHARED = "seed=7301&model.width=11"


def _counters_when_quiet(browser, base: str, timeout_s: float = 300.0) -> dict[str, float]:
    """The counters once no simulation runs or waits (an earlier test's run may still be
    finishing on the shared server); the last reading after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        counters = read_counters(browser, base)
        idle = counters.get("Running now", 0) == 0 and counters.get("Queued", 0) == 0
        if idle or time.monotonic() > deadline:
            return counters


# slow: a server of its own and four browsers at once (~40 s); in the suite the same sharing
# is checked at the protocol level (tests/test_classroom.py, tests/test_service.py)
@pytest.mark.slow
@pytest.mark.browser
def test_four_sessions_at_once_shared_link_computed_once(start_streamlit, browser) -> None:
    assert (REPO_ROOT / "app_pages" / "explorer.py").exists(), "the Explorer page is missing"
    assert (REPO_ROOT / "app_pages" / "status.py").exists(), "the status page (counters) is missing"
    # its own server: the counters on About & status are the operator's view (EAE_OPERATOR)
    base = start_streamlit("serve.py", env={"EAE_OPERATOR": "1"})

    before = _counters_when_quiet(browser, base)
    assert "Computed" in before, f"no service counters on the status page: {before}"
    urls = session_urls(base, n_sessions=4, n_shared=2, shared_query=SHARED)
    sessions = measure_sessions(browser, urls, timeout_s=300)
    after = read_counters(browser, base)

    for s in sessions:
        where = f"session on {s.url}"
        assert not s.timed_out, f"{where} did not finish: {s}"
        assert s.time_to_chart_s is not None, f"{where} drew no chart"
        assert not s.exceptions, f"{where} shows an exception: {s.exceptions}"
        assert not s.page_errors, f"{where} had page errors: {s.page_errors}"
        assert not s.console_errors, f"{where} logged console errors: {s.console_errors}"

    delta = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    distinct = len({u for u, _ in urls})
    assert distinct == 3
    # the shared link was computed once: one simulation per distinct configuration, and the
    # second shared session joined the run in flight or found it in memory
    assert delta["Computed"] == distinct, delta
    assert delta.get("Joined a run in flight", 0) + delta.get("Memory hits", 0) >= 1, delta
