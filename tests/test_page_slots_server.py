"""No visitor waits on another's input: on a real `streamlit run serve.py` with the shipped
one page slot, a visitor who opens About & status after three heavy links and a large upload
were opened sees it before they are done (it waited for all of them: 63.3 s behind three such
links), and so does one opening the Explorer's default chart; the heavy links still show their
gate and the upload its estimate. Protocol-level sessions (devtools.protocol), no browser;
the order of the finished runs is asserted, never a time."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from devtools.protocol import ProtocolSession, RunResult
from devtools.server import REPO_ROOT, StreamlitServer

pytestmark = pytest.mark.server

# a link to huge teacher data: its data were drawn up to 1,000 times before the gate (seconds)
HEAVY_LINK = "data.kind=teacher&data.n=20000&data.d=8"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    tmp = tmp_path_factory.mktemp("slots")
    s = StreamlitServer(REPO_ROOT / "serve.py", {"EAE_CACHE_DIR": str(tmp / "cache"),
                                                 "EAE_PAGE_RUNS": "1"}, tmp)
    try:
        s.wait_ready()
        yield s
    finally:
        s.stop()


def _zeros_npz() -> bytes:
    """A compressed upload: 160 KB that parse to 164 MB (20,000 × 1,024 zeros, ±1 labels)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, X=np.zeros((20_000, 1_024)),
                        y=np.where(np.arange(20_000) % 2, 1.0, -1.0))
    return buf.getvalue()


def _alerts(run: RunResult) -> list[str]:
    return [a.body for a in run.of_type("alert")]


def test_a_cheap_page_is_not_queued_behind_heavy_links_and_an_upload(
        server: StreamlitServer, tmp_path: Path) -> None:
    for page in ("status", ""):  # each page once, as a class would have
        with ProtocolSession(server.url, page=page) as warm:
            assert warm.rerun().finished
    up = ProtocolSession(server.url, page="real_data", query="source=upload")
    up.rerun()
    heavy = [ProtocolSession(server.url, query=HEAVY_LINK) for _ in range(3)]
    blob = _zeros_npz()
    finished: list[str] = []
    runs: dict[str, RunResult] = {}
    lock = threading.Lock()

    def record(name: str, fn: Callable[[], RunResult]) -> None:
        run = fn()
        with lock:
            finished.append(name)
            runs[name] = run

    def fresh(page: str) -> RunResult:
        with ProtocolSession(server.url, page=page) as v:
            return v.rerun()

    def begun(run: RunResult) -> bool:  # the server started the script run (it is queued)
        return run.messages > 0

    try:
        for h in heavy:  # each heavy link's run started (and queued for a slot) in turn
            h.start_rerun()
            h.collect(until=begun, timeout_s=120)
        up.upload("points and labels", "z.npz", blob, rerun=False)
        up.start_rerun()
        up.collect(until=begun, timeout_s=120)
        threads = [threading.Thread(target=record, args=(f"heavy{i}", h.collect))
                   for i, h in enumerate(heavy)]
        threads.append(threading.Thread(target=record, args=("upload", up.collect)))
        threads += [threading.Thread(target=record, args=("about", lambda: fresh("status"))),
                    threading.Thread(target=record, args=("explorer", lambda: fresh("")))]
        for th in threads:
            th.start()
        for th in threads:
            th.join(600)
    finally:
        for sess in (*heavy, up):
            sess.close()
    assert len(finished) == 6, finished
    for name, run in runs.items():
        assert run.finished and not run.exceptions, (name, run.exceptions)
    last_costly = max(finished.index(n) for n in ("heavy0", "heavy1", "heavy2", "upload"))
    assert finished.index("about") < last_costly, finished
    assert finished.index("explorer") < last_costly, finished
    for i in range(3):  # the heavy links still wait for a click, and say why
        assert any(a.startswith("This link asks for about") for a in _alerts(runs[f"heavy{i}"]))
    assert any(a.startswith("This upload asks for about") for a in _alerts(runs["upload"])), \
        _alerts(runs["upload"])
    assert any(el for k, el in runs["explorer"].elements
               if k in ("plotly_chart", "component_instance"))
