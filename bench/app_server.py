"""The dashboard's server for a benchmark: `streamlit run serve.py` on 127.0.0.1 with its own
fresh cache directory, and a warm numba cache first (so a benchmark measures serving, not JIT
compilation)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from devtools.server import REPO_ROOT, StreamlitServer, streamlit_python


def warm_numba_cache(timeout_s: float = 600.0) -> None:
    """One short run of each integrator in a subprocess, so the numba kernels are compiled into
    their disk cache (as the Docker image does at build time) and the load measures serving,
    not JIT compilation. Uses the CLI, which does not touch the run cache."""
    exe = streamlit_python()
    with tempfile.TemporaryDirectory(prefix="eae_warm_") as tmp:
        for method in ("gf", "gd"):
            subprocess.run([exe, "-m", "dynamics", "run", "--quiet", "--out",
                            str(Path(tmp) / "warm.npz"), "--set", f"integrator.method={method}",
                            "--set", "integrator.t_end=1"],
                           cwd=REPO_ROOT, check=True, timeout=timeout_s, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Server:
    """`streamlit run serve.py` on 127.0.0.1 with its own fresh cache directory
    (devtools.server.StreamlitServer, plus a private temp dir)."""

    def __init__(self, app: str = "serve.py", env: dict[str, str] | None = None) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="eae_load_")
        self.cache_dir = Path(self._tmp.name) / "cache"
        self._server = StreamlitServer(REPO_ROOT / app,
                                       {"EAE_CACHE_DIR": str(self.cache_dir),
                                        "EAE_OPERATOR": "1",  # counters on About & status
                                        **(env or {})},
                                       Path(self._tmp.name))
        self.url = self._server.url
        self.proc = self._server.proc

    def wait_healthy(self) -> None:
        self._server.wait_healthy()

    def wait_ready(self) -> None:
        """Healthy and its kernels compiled (`StreamlitServer.wait_ready`)."""
        self._server.wait_ready()

    def log(self, n: int = 4000) -> str:
        return self._server.log_tail(n)

    def stop(self) -> None:
        self._server.stop()
        self._tmp.cleanup()



__all__ = ["Server", "warm_numba_cache"]
