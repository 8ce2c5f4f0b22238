"""Visitors see no server internals and hold no operator controls: the About & status page
shows paths, environment variable names, counters and cache clearing only with EAE_OPERATOR=1;
the sweeps' Dask dashboard is off (or on 127.0.0.1 when asked); a sweep stops when its
session ends."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from bench.serverwatch import cpu_s, process_tree
from devtools.apptest import controls_without_help
from devtools.protocol import ProtocolSession
from devtools.server import REPO_ROOT, StreamlitServer
from dynamics import sweeps as sw

STATUS = str(REPO_ROOT / "app_pages" / "status.py")


def _all_text(at: AppTest) -> str:
    parts = [e.value for e in (*at.markdown, *at.caption, *at.text, *at.warning)]
    parts += [str(df.value.to_dict()) for df in at.dataframe]
    return "\n".join(map(str, parts))


def test_visitors_see_what_the_server_allows_and_nothing_internal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The page printed the cache directory's absolute path, the limits' variables and the
    versions, and any visitor could press "Clear memory cache"."""
    monkeypatch.delenv("EAE_OPERATOR", raising=False)
    at = AppTest.from_file(STATUS, default_timeout=60).run()
    assert not at.exception
    text = _all_text(at)
    assert "hidden neurons m" in text and "5000" in text  # the limits, in words
    # no variable but the setting an operator turns this view on with (the page names it)
    assert set(re.findall(r"EAE_\w+", text)) == {"EAE_OPERATOR"}
    assert "/" not in "".join(c.value for c in at.caption if "cache" in c.value.lower())
    from dynamics.service import default_cache_dir
    assert str(default_cache_dir()) not in text
    assert not at.metric and not at.button  # no counters, no "Clear memory cache"
    assert controls_without_help(at) == []


def test_operators_see_counters_paths_and_the_clear_button(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EAE_OPERATOR", "1")
    at = AppTest.from_file(STATUS, default_timeout=60).run()
    assert not at.exception
    assert {"Computed", "Memory entries"} <= {m.label for m in at.metric}
    assert any(b.label == "Clear memory cache" for b in at.button)
    assert "EAE_MAX_WIDTH" in _all_text(at)


@pytest.mark.heavy
@pytest.mark.parametrize("setting,dashboard", [("", False), ("loopback", True)])
def test_the_dask_dashboard_is_off_or_on_loopback(monkeypatch: pytest.MonkeyPatch,
                                                  setting: str, dashboard: bool) -> None:
    """`dashboard_address=":0"` bound it on every interface, past the server's loopback
    address (/json/identity.json showed the workers' addresses and memory). The scheduler's
    HTTP routes now listen on 127.0.0.1 only, and the dashboard pages exist only when asked."""
    import urllib.error
    import urllib.request

    monkeypatch.setenv("EAE_DASK_DASHBOARD", setting)
    with sw.Clusters() as clusters:
        client = clusters.local(1)
        http = client.cluster.scheduler.http_server
        sockets = list(getattr(http, "_sockets", {}).values())
        assert sockets and all(s.getsockname()[0] == "127.0.0.1" for s in sockets)
        port = sockets[0].getsockname()[1]
        try:
            code = urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=30).status
        except urllib.error.HTTPError as e:
            code = e.code
        assert (code == 200) is dashboard, code


def _children_cpu(pid: int) -> float:
    """CPU seconds of the live descendants of `pid` (Linux /proc)."""
    return sum(cpu_s(p) for p in process_tree(pid) if p != pid)


def _hold_port(port: int) -> socket.socket | None:
    """A socket listening on `port` (all interfaces), or None when something else holds it
    already (then it is taken anyway)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("", port))
        s.listen(1)
        return s
    except OSError:
        s.close()
        return None


@pytest.mark.server
def test_a_sweep_stops_when_its_session_ends(tmp_path: Path) -> None:
    """A 648-point sweep kept both workers at 100 % CPU for 150 s after its tab closed.
    Starting it logged 24 "missing ScriptRunContext!" warnings (each worker process ran the
    dashboard's script again) and "Port 8787 is already in use" (Dask's HTTP routes asked for
    its dashboard's usual port, here held by another cluster): the log stays quiet."""
    held = _hold_port(8787)  # as another server's cluster would
    server = StreamlitServer(REPO_ROOT / "serve.py", {"EAE_CACHE_DIR": str(tmp_path / "c")},
                             tmp_path)
    try:
        server.wait_ready()
        with ProtocolSession(server.url, page="sweeps", query="size=full") as s:
            s.rerun()
            s.click("Run sweep", timeout_s=60)
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and _children_cpu(server.proc.pid) < 5.0:
                time.sleep(0.5)  # the workers are busy with the sweep
            assert _children_cpu(server.proc.pid) >= 5.0
        # the tab is gone: the workers go idle (a point in progress stops at its next chunk)
        deadline = time.monotonic() + 60
        idle = False
        while time.monotonic() < deadline and not idle:
            before = _children_cpu(server.proc.pid)
            time.sleep(3.0)
            idle = _children_cpu(server.proc.pid) - before < 0.3  # of 6 CPU-s available
        assert idle, "the sweep's workers are still busy after its session ended"
        log = server.log_tail(200_000)
        assert "ScriptRunContext" not in log and "already in use" not in log, log[-2000:]
    finally:
        server.stop()
        if held is not None:
            held.close()
