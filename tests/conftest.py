"""Shared pytest fixtures: cache isolation, Streamlit servers, headless Chromium.

The harness itself lives in `devtools/` (shared with the benchmarks); this file only wraps it
in fixtures. Browser tests (mark them ``@pytest.mark.browser``) typically look like::

    @pytest.mark.browser
    def test_something(streamlit_server, page, screenshot_dir):
        page.goto(streamlit_server)
        wait_for_streamlit_idle(page)
        ...
        page.screenshot(path=screenshot_dir / "something.png", full_page=True)

``wait_for_streamlit_idle`` is ``from devtools.browser import wait_for_streamlit_idle``; it is
also provided as the ``streamlit_idle`` fixture. AppTest helpers: ``devtools.apptest``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.serverwatch import cpu_s, tree_cpu_s
from devtools.browser import VIEWPORT, chromium_missing, launch_chromium, wait_for_streamlit_idle
from devtools.server import REPO_ROOT, StreamlitServer

# The Explorer's background prefetch (neighbouring settings computed ahead) would compete with
# the next test for the two cores; the tests of prefetch turn it on (monkeypatch.setenv). Set
# before any server starts, so the servers inherit it; EAE_PREFETCH=1 in the caller's
# environment keeps it on everywhere.
os.environ.setdefault("EAE_PREFETCH", "0")


# --------------------------------------------------------------------------------------
# Parallel runs (pytest-xdist, `-n 3 --dist loadfile` in scripts/test.sh)
# --------------------------------------------------------------------------------------
LONG_MARKERS = ("slow", "browser", "server", "install", "heavy")  # what the fast loop leaves out
SERVER_FIXTURES = {"start_streamlit", "streamlit_server"}  # a test using one is `server`
CLUSTER_FIXTURES = {"local_client"}  # a Dask cluster of worker processes: `heavy`


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks every test without a `LONG_MARKERS` marker `fast` (`-m fast`: the loop of a
    minute or two), and puts the files that hold long tests (`LONG_MARKERS`) first:
    `--dist loadfile` gives each file to one worker (a module's fixtures — a Dask cluster, the
    installed wheel — are built once), in this order, so the long files start at once and the
    many short ones fill the workers' ends."""
    long_files = set()
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if SERVER_FIXTURES & fixtures:
            item.add_marker(pytest.mark.server)
        if CLUSTER_FIXTURES & fixtures:
            item.add_marker(pytest.mark.heavy)
        if any(item.get_closest_marker(m) for m in LONG_MARKERS):
            long_files.add(item.path)
        else:
            item.add_marker(pytest.mark.fast)
    items.sort(key=lambda it: it.path not in long_files)  # stable: file order kept within


_TIMELINE = os.environ.get("EAE_TEST_TIMELINE", "")  # a file: one JSON line per test


def _children_cpu() -> float:
    """CPU-s of this process's descendants (Streamlit servers, Chromium, Dask workers,
    subprocesses): `bench.serverwatch.tree_cpu_s` without this process's own time."""
    me = os.getpid()
    return tree_cpu_s(me) - cpu_s(me)  # the children this process reaped stay in


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """With EAE_TEST_TIMELINE=FILE, each test's (worker, id, start, end, CPU-s of the worker
    process) is appended to FILE: where the suite's wall time goes, worker by worker."""
    if not _TIMELINE:
        return (yield)
    t0, c0, k0 = time.time(), time.process_time(), _children_cpu()
    try:
        return (yield)
    finally:
        line = json.dumps({"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                           "test": item.nodeid, "start": t0, "end": time.time(),
                           "cpu": time.process_time() - c0, "children": _children_cpu() - k0})
        with open(_TIMELINE, "a") as f:
            f.write(line + "\n")


def pytest_sessionstart(session: pytest.Session) -> None:
    """With xdist workers, compile (or load) every kernel once in the controller before they
    start, so the workers and the server load them from numba's cache instead of each
    compiling them at the same time (an empty cache under `.ci/run`). Not when scripts/test.sh's
    warm-up has just done so (its record, EAE_COLD_BITS, is written once it has finished)."""
    record = os.environ.get("EAE_COLD_BITS", "")
    if record and os.path.isfile(record) and os.path.getsize(record) > 0:
        return
    if getattr(session.config, "workerinput", None) is None and \
            session.config.getoption("dist", "no") != "no":
        from dynamics.warmup import warm_kernels

        warm_kernels()


# --------------------------------------------------------------------------------------
# Cache isolation
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="session", autouse=True)
def _isolated_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point EAE_CACHE_DIR at a session temp dir so no test writes to the user's cache."""
    cache_dir = tmp_path_factory.mktemp("eae_cache")
    old = os.environ.get("EAE_CACHE_DIR")
    os.environ["EAE_CACHE_DIR"] = str(cache_dir)
    try:
        yield cache_dir
    finally:
        if old is None:
            os.environ.pop("EAE_CACHE_DIR", None)
        else:
            os.environ["EAE_CACHE_DIR"] = old


# --------------------------------------------------------------------------------------
# Streamlit servers
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def start_streamlit(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., str]]:
    """Factory: ``start_streamlit(script_path, env=None) -> base_url``.

    Starts ``streamlit run script_path`` (cwd = repo root, EAE_CACHE_DIR = a temp dir unless
    given in ``env``), waits for ``/_stcore/health`` == "ok" (60 s) and, unless ``ready`` is
    False, for the start-up compilation of the kernels (`StreamlitServer.wait_ready`), and
    returns the base URL.
    The same (script, env) is started only once per session; all servers stop at session end.
    """
    log_dir = tmp_path_factory.mktemp("streamlit_servers")
    servers: dict[tuple[str, tuple[tuple[str, str], ...]], StreamlitServer] = {}

    def _start(script_path: str | os.PathLike[str] = "serve.py",
               env: dict[str, str] | None = None, ready: bool = True) -> str:
        script = Path(script_path)
        if not script.is_absolute():
            script = REPO_ROOT / script
        if not script.exists():
            pytest.fail(f"Streamlit script not found: {script}")
        key = (str(script), tuple(sorted((env or {}).items())))
        server = servers.get(key)
        if server is not None and server.proc.poll() is None:
            return server.url
        server = StreamlitServer(script, env, log_dir)
        servers[key] = server
        try:
            server.wait_ready() if ready else server.wait_healthy()
        except (RuntimeError, TimeoutError) as exc:
            server.stop()
            del servers[key]
            pytest.fail(str(exc))
        return server.url

    yield _start
    for server in servers.values():
        server.stop()


@pytest.fixture(scope="session")
def streamlit_server(start_streamlit: Callable[..., str]) -> str:
    """Base URL of a Streamlit server running the real dashboard (``app.py``)."""
    return start_streamlit("serve.py")


# --------------------------------------------------------------------------------------
# Browser
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium driven by Playwright (no Playwright browser download).

    Skips when Chromium is missing, except under ``CI=true``, where it fails.
    """
    missing = chromium_missing()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(missing)
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            yield browser
        finally:
            browser.close()


class _Tab:
    """One browser tab per worker, handed to each browser test in turn.

    A page load in a new tab costs a new renderer process that compiles Streamlit's and
    Plotly's JavaScript again: measured here, an Explorer load took 4.5 s and 6.8 CPU-s in a
    fresh tab (context or not), 2.4 s and 3 CPU-s in a tab that had loaded it before. Between
    tests the tab is reset to what a fresh context gives: its storage and cookies cleared
    (cookies are shared by every server on 127.0.0.1, ports apart), routes removed, at
    about:blank (so the test's Streamlit session ends with the test), and given the viewport
    and default timeout the test asks for. A test that adds event listeners removes them.
    """

    def __init__(self, browser: Any) -> None:
        self.browser, self.context, self.page = browser, None, None

    def take(self, width: int, height: int, timeout_ms: float) -> Any:
        if self.page is None or self.page.is_closed():
            if self.context is not None:
                self.context.close()
            # reduced motion: the Explorer's first figure does not play by itself (tests read
            # its first frame; the autoplay test opens a context of its own)
            self.context = self.browser.new_context(
                viewport={"width": width, "height": height}, device_scale_factor=1,
                reduced_motion="reduce")
            self.page = self.context.new_page()
        self.context.clear_cookies()
        self.page.unroute_all()
        self.context.unroute_all()
        self.page.set_viewport_size({"width": width, "height": height})
        self.page.emulate_media(reduced_motion="reduce")  # (a test may have asked otherwise)
        self.page.set_default_timeout(timeout_ms)
        return self.page

    def give_back(self) -> None:
        """Leave the test's page: its origin's storage cleared, then about:blank (a tab that
        will not do so is closed; the next test gets a new one)."""
        if self.page is None or self.page.is_closed():
            return
        try:
            self.page.evaluate("() => { try { localStorage.clear(); sessionStorage.clear(); }"
                               " catch (e) {} }")
            self.page.goto("about:blank", timeout=30_000)
        except Exception:  # a crashed or hung page: start the next test in a new tab
            self.page.close()
            self.page = None

    def close(self) -> None:
        if self.context is not None:
            self.context.close()


@pytest.fixture(scope="session")
def _tab(browser: Any) -> Iterator[_Tab]:
    tab = _Tab(browser)
    yield tab
    tab.close()


@pytest.fixture()
def page(_tab: _Tab) -> Iterator[Any]:
    """The worker's tab, reset as a fresh context would be (`_Tab`), viewport 1400x900."""
    pg = _tab.take(VIEWPORT["width"], VIEWPORT["height"], 30_000)
    try:
        yield pg
    finally:
        _tab.give_back()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    """``artifacts/screenshots/`` under the repo root (gitignored)."""
    path = REPO_ROOT / "artifacts" / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture()
def streamlit_idle() -> Callable[..., None]:
    """The :func:`devtools.browser.wait_for_streamlit_idle` helper as a fixture."""
    return wait_for_streamlit_idle


@pytest.fixture()
def context_of(_tab: _Tab) -> Iterator[Callable[[int, int], Any]]:
    """Factory: the worker's tab (`_Tab`) at the given viewport (device scale 1, 60 s
    default timeout), given back at the end of the test. One page per test: asking again
    resizes the same tab."""

    def make(width: int, height: int) -> Any:
        return _tab.take(width, height, 60_000)

    yield make
    _tab.give_back()
