"""A `streamlit run` subprocess on 127.0.0.1 and a free port, for browser tests and benchmarks."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
#: Seconds a fresh server may take to answer its health check (imports, first compile).
SERVER_START_TIMEOUT = 60.0
KERNELS_READY_TIMEOUT = 300.0  # s: a cold compile of every kernel on a loaded 2-core machine


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def streamlit_python() -> str:
    """The project's `.venv` interpreter if there is one, else the running one."""
    venv_python = REPO_ROOT / ".venv" / "bin" / "python"
    return str(venv_python) if venv_python.exists() else sys.executable


class StreamlitServer:
    """A ``streamlit run`` subprocess bound to 127.0.0.1 on a free port.

    The process runs from the repository root (or `cwd`) with the caller's environment plus
    ``env`` (``EAE_CACHE_DIR`` defaults to ``log_dir/eae_cache``, so it never touches the user's
    cache); its output goes to a log file in ``log_dir``. `command` replaces
    ``python -m streamlit run SCRIPT`` (e.g. an installed ``eae app``); the server flags below
    follow it. Call `wait_healthy` before use and `stop` at the end.
    """

    def __init__(self, script: Path, env: dict[str, str] | None, log_dir: Path, *,
                 command: list[str] | None = None, cwd: Path | None = None) -> None:
        self.script = Path(script)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(log_dir) / f"streamlit_{self.script.stem}_{self.port}.log"
        full_env = dict(os.environ)
        full_env.setdefault("EAE_CACHE_DIR", str(Path(log_dir) / "eae_cache"))
        full_env["PYTHONUNBUFFERED"] = "1"
        if env:
            full_env.update(env)
        cmd = [
            *(command or [streamlit_python(), "-m", "streamlit", "run", str(self.script)]),
            "--server.headless", "true",
            "--server.port", str(self.port),
            "--server.address", "127.0.0.1",
            "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none",
        ]
        self._log = open(self.log_path, "wb")  # closed in stop()
        self.proc = subprocess.Popen(
            cmd,
            cwd=cwd or REPO_ROOT,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log_tail(self, n_chars: int = 4000) -> str:
        """The last `n_chars` characters of the server's log."""
        try:
            return self.log_path.read_text(errors="replace")[-n_chars:]
        except OSError:
            return ""

    def wait_healthy(self, timeout: float = SERVER_START_TIMEOUT) -> None:
        """Block until ``/_stcore/health`` answers "ok"; raise with the log tail otherwise."""
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

    def wait_ready(self, timeout: float = KERNELS_READY_TIMEOUT) -> None:
        """`wait_healthy`, then block until the start-up compilation of the kernels is done
        (`/api/eae/warmup` says ready; a server without that route — plain `streamlit run`, which
        answers an unknown path with its page — is ready when healthy).
        Until then every page shows only the start-up message (`ui.startup`), so tests that
        look for a page's widgets wait here — with an empty numba cache, as in CI."""
        self.wait_healthy()
        deadline = time.monotonic() + timeout
        url = f"{self.url}/api/eae/warmup"
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=5) as resp:
                    body = resp.read()
            except urllib.error.HTTPError as e:
                if e.code == 404:
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            else:
                try:
                    state = json.loads(body)
                except ValueError:  # Streamlit's page for an unknown path: not serve.py
                    return
                if not isinstance(state, dict) or state.get("ready"):
                    return
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {self.proc.returncode}"
                                   f"\n--- log ---\n{self.log_tail()}")
            time.sleep(0.25)
        raise TimeoutError(f"the kernels of {self.url} were not ready after {timeout:.0f} s"
                           f"\n--- log ---\n{self.log_tail()}")

    def stop(self) -> None:
        """Terminate the server (kill after 10 s) and close its log."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()
