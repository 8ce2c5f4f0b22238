"""Two replicas on one cache directory behind a real reverse proxy: HAProxy from Debian's
package (`scripts/setup.sh` installs it as root), run with exactly the configuration
docs/hosting.md gives (only its three ports changed). Through the proxy: a visitor's
websocket, upload and figure payload land on one replica; a run computed on one replica is a
disk hit on the other; `kill -9` of the visitor's replica leaves the other serving it (a fresh
session) and the cache valid. HAProxy's health check (HTTP/1.0, no Host) must pass, or every
replica is marked down.

Marked `slow` (two servers and a proxy: out of the README's test command) and `proxy`: run it
beside the suite with ``bash scripts/test.sh -m proxy`` (free ports, its own directories)."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from devtools.protocol import ProtocolSession, RunResult
from devtools.server import REPO_ROOT, StreamlitServer, free_port

pytestmark = [pytest.mark.slow, pytest.mark.proxy, pytest.mark.server]

HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
LINK = "model.width=17&seed=5"  # a run no other test computes
UPLOADER = "CSV or NPZ of points and labels"


def recipe() -> str:
    """The HAProxy configuration of docs/hosting.md (the block after its marker)."""
    text = (REPO_ROOT / "docs" / "hosting.md").read_text()
    after = text.split("<!-- replica-recipe:", 1)[1]
    return re.search(r"```haproxy\n(.*?)```", after, re.S).group(1)  # type: ignore[union-attr]


def _counters(url: str, cookies: dict[str, str] | None = None) -> dict[str, str]:
    with ProtocolSession(url, page="status", cookies=cookies) as s:
        run = s.rerun()
    return {m.label: m.body for m in run.of_type("metric")}


def _num(counters: dict[str, str], label: str) -> int:
    return int(counters[label].split()[0].replace(",", ""))


def _figure_src(run: RunResult) -> str | None:
    for kind, el in run.elements:
        if kind == "component_instance":
            try:
                src = json.loads(el.json_args).get("src")
            except (ValueError, AttributeError):
                continue
            if src:
                return str(src)
    return None


def _get(url: str, cookies: dict[str, str]) -> int:
    req = urllib.request.Request(url, headers={
        "Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            r.read()
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


@pytest.fixture()
def replicas(tmp_path: Path) -> Iterator[dict[str, Any]]:
    if not os.access(HAPROXY, os.X_OK):
        if os.environ.get("CI") == "true":
            pytest.fail("haproxy is missing (scripts/setup.sh installs it as root)")
        pytest.skip("haproxy is not installed (scripts/setup.sh installs it as root)")
    env = {"EAE_CACHE_DIR": str(tmp_path / "cache"), "EAE_OPERATOR": "1",
           "STREAMLIT_SERVER_COOKIE_SECRET": "one secret for every replica",
           "EAE_ALLOWED_HOSTS": "127.0.0.1", "EAE_PREFETCH": "0"}
    servers = {name: StreamlitServer(REPO_ROOT / "serve.py", env, tmp_path / name)
               for name in ("r1", "r2") if (tmp_path / name).mkdir() is None}
    port = free_port()
    cfg = (recipe().replace("127.0.0.1:8080", f"127.0.0.1:{port}")
           .replace("127.0.0.1:8501", f"127.0.0.1:{servers['r1'].port}")
           .replace("127.0.0.1:8502", f"127.0.0.1:{servers['r2'].port}"))
    (tmp_path / "haproxy.cfg").write_text(cfg)
    proxy = None
    try:
        for s in servers.values():
            s.wait_ready()
        log = open(tmp_path / "haproxy.log", "wb")  # the proxy writes to it until it stops
        proxy = subprocess.Popen([HAPROXY, "-db", "-f", str(tmp_path / "haproxy.cfg")],
                                 stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # both replicas up: answers from each in turn
            seen = set()
            for _ in range(4):
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as r:
                        seen |= {c.split(";")[0] for c in r.headers.get_all("Set-Cookie")
                                 or ()}
                except OSError:
                    pass
            if {"SERVERID=r1", "SERVERID=r2"} <= seen:
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"HAProxy never saw both replicas up:\n"
                                 f"{(tmp_path / 'haproxy.log').read_text()[-3000:]}")
        yield {"url": url, "servers": servers, "proxy": proxy, "tmp": tmp_path}
    finally:
        if proxy is not None and proxy.poll() is None:
            proxy.terminate()
            proxy.wait(10)
        for s in servers.values():
            s.stop()


def _csv() -> bytes:
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    buf = io.StringIO()
    buf.write("x1,x2,y\n")
    for (a, b), c in zip(X, y, strict=True):
        buf.write(f"{a:.5f},{b:.5f},{c:g}\n")
    return buf.getvalue().encode()


def test_two_replicas_behind_haproxy(replicas: dict[str, Any]) -> None:
    url, servers = replicas["url"], replicas["servers"]
    # a visitor through the proxy: page, websocket, upload and figure on one replica
    with ProtocolSession(url, query="data.kind=array&model.width=8&record.frames=10") as s:
        mine = s.cookies.get("SERVERID")
        assert mine in ("r1", "r2"), s.cookies
        other = "r2" if mine == "r1" else "r1"
        run = s.rerun()
        assert run.finished and not run.exceptions
        run = s.upload(UPLOADER, "points.csv", _csv())  # PUT through the proxy, then a rerun
        assert run.finished and not run.exceptions, run.exceptions
        assert any("40 points" in t or "40 rows" in t for t in run.texts()), run.texts()[:20]
        src = _figure_src(run)  # the uploaded data's figure
        assert src is not None, [k for k, _ in run.elements]
        assert _get(url + src, s.cookies) == 200  # the payload, from the replica that built it
        assert _get(url + src, {"SERVERID": other}) == 404  # the other one never had it
    with ProtocolSession(url, query=LINK, cookies={"SERVERID": mine}) as s1:
        run = s1.rerun()
        assert run.finished and not run.exceptions and _figure_src(run) is not None
    on_mine = _counters(servers[mine].url)
    assert _num(on_mine, "Computed") >= 2  # the upload's run and the link's, computed there
    # the other replica: the same link is a disk hit, nothing computed
    before = _counters(servers[other].url)
    with ProtocolSession(url, query=LINK, cookies={"SERVERID": other}) as s2:
        assert s2.cookies["SERVERID"] == other
        run = s2.rerun()
        assert run.finished and not run.exceptions and _figure_src(run) is not None
    after = _counters(servers[other].url)
    assert _num(after, "Computed") == _num(before, "Computed")
    assert _num(after, "Disk hits") == _num(before, "Disk hits") + 1
    # kill -9 of the visitor's replica: the proxy sends the next page load to the other one
    os.killpg(servers[mine].proc.pid, signal.SIGKILL)
    servers[mine].proc.wait(30)
    with ProtocolSession(url, query=LINK, cookies={"SERVERID": mine}) as s3:
        run = s3.rerun()
        assert run.finished and not run.exceptions and _figure_src(run) is not None
    final = _counters(servers[other].url)
    assert _num(final, "Computed") == _num(before, "Computed")  # still read from the cache
    cache = replicas["tmp"] / "cache" / "trajectories-v1"
    entries = list(cache.glob("*.eaetraj"))
    assert len(entries) >= 2 and not list(cache.glob(".*.part"))
    health = _counters(servers[other].url)
    assert "removed_unreadable" not in " ".join(health.values())
