"""Shared pytest fixtures: cache isolation, Streamlit servers, headless Chromium.

Browser tests (mark them ``@pytest.mark.browser``) typically look like::

    @pytest.mark.browser
    def test_something(streamlit_server, page, screenshot_dir):
        page.goto(streamlit_server)
        wait_for_streamlit_idle(page)
        ...
        page.screenshot(path=screenshot_dir / "something.png", full_page=True)

``wait_for_streamlit_idle`` is importable: ``from tests.conftest import wait_for_streamlit_idle``
(or ``from conftest import ...``); it is also provided as the ``streamlit_idle`` fixture.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
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
SERVER_START_TIMEOUT = 60.0


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
def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _streamlit_python() -> str:
    venv_python = REPO_ROOT / ".venv" / "bin" / "python"
    return str(venv_python) if venv_python.exists() else sys.executable


class StreamlitServer:
    """A ``streamlit run`` subprocess bound to 127.0.0.1 on a free port."""

    def __init__(self, script: Path, env: dict[str, str] | None, log_dir: Path) -> None:
        self.script = Path(script)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"streamlit_{self.script.stem}_{self.port}.log"
        full_env = dict(os.environ)
        full_env.setdefault("EAE_CACHE_DIR", str(log_dir / "eae_cache"))
        full_env["PYTHONUNBUFFERED"] = "1"
        if env:
            full_env.update(env)
        cmd = [
            _streamlit_python(),
            "-m",
            "streamlit",
            "run",
            str(self.script),
            "--server.headless",
            "true",
            "--server.port",
            str(self.port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ]
        self._log = open(self.log_path, "wb")  # closed in stop()
        self.proc = subprocess.Popen(
            cmd,
            cwd=REPO_ROOT,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log_tail(self, n_chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n_chars:]
        except OSError:
            return ""

    def wait_healthy(self, timeout: float = SERVER_START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        health = f"{self.url}/_stcore/health"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"streamlit exited with code {self.proc.returncode} before becoming healthy."
                    f"\n--- log ---\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(health, timeout=2) as resp:
                    if resp.status == 200 and resp.read().decode().strip() == "ok":
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.25)
        raise TimeoutError(
            f"streamlit at {self.url} not healthy after {timeout:.0f} s"
            f"\n--- log ---\n{self.log_tail()}"
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()


@pytest.fixture(scope="session")
def start_streamlit(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., str]]:
    """Factory: ``start_streamlit(script_path, env=None) -> base_url``.

    Starts ``streamlit run script_path`` (cwd = repo root, EAE_CACHE_DIR = a temp dir unless
    given in ``env``), waits for ``/_stcore/health`` == "ok" (60 s), and returns the base URL.
    The same (script, env) is started only once per session; all servers stop at session end.
    """
    log_dir = tmp_path_factory.mktemp("streamlit_servers")
    servers: dict[tuple, StreamlitServer] = {}

    def _start(script_path: str | os.PathLike[str] = "app.py", env: dict | None = None) -> str:
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
            server.wait_healthy()
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
    return start_streamlit("app.py")


# --------------------------------------------------------------------------------------
# Browser
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Headless Debian Chromium driven by Playwright (no Playwright browser download)."""
    if not (os.path.isfile(CHROMIUM_PATH) and os.access(CHROMIUM_PATH, os.X_OK)):
        msg = (
            f"Chromium not installed at {CHROMIUM_PATH}; browser tests need Debian's chromium "
            "(scripts/setup.sh installs it as root)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # Plain launch() rather than launch_persistent_context() so each test can get a fresh,
        # isolated context. Playwright rejects an explicit --user-data-dir here; instead it
        # gives Chromium a fresh temporary profile dir of its own and deletes it on close().
        browser = pw.chromium.launch(
            executable_path=CHROMIUM_PATH, headless=True, args=CHROMIUM_ARGS, timeout=60_000
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture()
def page(browser) -> Iterator[object]:
    """A fresh page in a fresh browser context (viewport 1400x900) for each test."""
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    context.set_default_timeout(30_000)
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    """``artifacts/screenshots/`` under the repo root (gitignored)."""
    path = REPO_ROOT / "artifacts" / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


# --------------------------------------------------------------------------------------
# Streamlit idle detection
# --------------------------------------------------------------------------------------
# Observed on streamlit 1.67.0:
#  * ``[data-testid="stApp"]`` carries ``data-test-script-state`` ("initial" before the first
#    run, "running" while the script runs, "notRunning" when done) and
#    ``data-test-connection-state`` ("PINGING_SERVER" ... "CONNECTED").
#  * ``[data-testid="stStatusWidget"]`` (with ``[data-testid="stStatusWidgetRunningIcon"]``,
#    aria-label "Running...") appears only while a run is in progress, after a short delay.
#  * ``[data-testid="stSkeleton"]`` placeholders stand in for lazily loaded elements (e.g. the
#    plotly chart) and for elements of a run that have not arrived yet.
_IDLE_JS = """() => {
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


def wait_for_streamlit_idle(page, timeout: float = 60.0, settle: float = 0.5) -> None:
    """Wait until the Streamlit app has finished running and rendering.

    Idle means: connected, script state "notRunning", no status widget ("Running..."), no
    ``stSkeleton`` placeholders, and every plotly chart has drawn its SVG. The condition must
    hold continuously for ``settle`` seconds, which covers the short gap between a widget
    interaction and the rerun it triggers. ``timeout`` is in seconds.
    """
    deadline = time.monotonic() + timeout
    idle_since: float | None = None
    while True:
        now = time.monotonic()
        if page.evaluate(_IDLE_JS):
            if idle_since is None:
                idle_since = now
            elif now - idle_since >= settle:
                return
        else:
            idle_since = None
        if now > deadline:
            state = page.evaluate(
                """() => {
                  const a = document.querySelector('[data-testid="stApp"]');
                  return {
                    script: a && a.getAttribute('data-test-script-state'),
                    connection: a && a.getAttribute('data-test-connection-state'),
                    statusWidget: !!document.querySelector('[data-testid="stStatusWidget"]'),
                    skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length,
                  };
                }"""
            )
            raise TimeoutError(f"Streamlit app not idle after {timeout:.0f} s: {state}")
        page.wait_for_timeout(100)


@pytest.fixture()
def streamlit_idle() -> Callable[..., None]:
    """The :func:`wait_for_streamlit_idle` helper as a fixture."""
    return wait_for_streamlit_idle


def run_page(path: str | Path, params: dict[str, str] | None = None,
             timeout: float = 120) -> Any:
    """AppTest of one page with URL parameters, run once; fails on any exception element."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(path), default_timeout=timeout)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def plotly_spec(at: Any) -> dict:
    """The Plotly JSON of the page's only chart."""
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    return json.loads(charts[0].proto.spec)
