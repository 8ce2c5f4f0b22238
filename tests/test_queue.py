"""The service's queue and sessions (dynamics/service.py, dynamics/admission.py, the server's
runtime/queue.py) and the run-cost estimate (dynamics/cost.py), on a real Service with real
simulations: a queued request hears its place and expected wait at once and again while it
waits, a session runs one simulation at a time behind the server's queue (not the library's),
ending a session cancels its runs and forgets its uploads' results, heavy configs are never
speculated, and the estimate puts links of huge data above the click threshold."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from dynamics.admission import QUEUED, RunQueue
from dynamics.config import Config
from dynamics.cost import describe_seconds, estimate_seconds
from dynamics.limits import Limits
from dynamics.papers.min import digits_config
from dynamics.service import Service
from dynamics.status import Status
from runtime.queue import FairQueue
from runtime.speculation import Speculator

WAIT = 120.0


def long_run(seed: int = 0) -> Config:
    """Minutes of GD (1e6 steps of n·d·m = 640,000), cancelled by each test (1e5 steps took
    under 10 s on a quiet CI machine: the first run ended before the second was queued)."""
    return Config.from_dict({"data": {"kind": "teacher", "n": 200, "d": 16},
                             "model": {"width": 200}, "seed": seed,
                             "integrator": {"method": "gd", "lr": 0.001, "t_end": 1000.0},
                             "record": {"frames": 20}})


class Caller:
    """`service.run` in a thread, recording its progress messages with their times."""

    def __init__(self, service: Service, config: Config, session: str | None = None):
        self.messages: list[tuple[float, str]] = []
        self.cancel = threading.Event()
        self.result = None
        self.started = time.monotonic()
        self.thread = threading.Thread(target=self._go, args=(service, config, session),
                                       daemon=True)
        self.thread.start()

    def _go(self, service: Service, config: Config, session: str | None) -> None:
        self.result = service.run(config, progress=lambda f, t: self.messages.append(
            (time.monotonic(), t)), cancel=self.cancel, session=session)

    def wait_for(self, pred, timeout: float = WAIT) -> list[str]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            texts = [t for _, t in self.messages]
            if pred(texts):
                return texts
            time.sleep(0.02)
        raise AssertionError(f"condition not met; messages: {self.messages[-5:]}")

    def stop(self) -> None:
        self.cancel.set()
        self.thread.join(WAIT)


def running(t: list[str]) -> bool:
    return any(not m.startswith(QUEUED) and m != "starting" for m in t)


def test_a_queued_request_hears_its_place_and_wait_at_once_and_while_it_waits(
        tmp_path: Path) -> None:
    svc = Service(tmp_path, limits=Limits(max_concurrent=1))
    a = Caller(svc, long_run(1))
    try:
        a.wait_for(running)
        b = Caller(svc, long_run(2))
        try:
            texts = b.wait_for(lambda t: any(m.startswith(QUEUED) for m in t))
            # at once: its place is the first thing a queued visitor hears (sent before the
            # queue's first wait, not on a later report)
            assert next(m for m in texts if m != "starting").startswith(QUEUED), texts
            q = next(m for m in texts if m.startswith(QUEUED))
            assert "1 run ahead" in q and "limit 1 at a time" in q and "expected wait about" in q
            pos = svc.queue_position(long_run(2))
            assert pos is not None and pos[0] == 1 and pos[1] > 0
            # and while it waits: re-sent (every QUEUE_REPORT_S), its place unchanged
            b.wait_for(lambda t: sum(m.startswith(QUEUED) for m in t) >= 3)
            a.stop()  # the slot frees: b starts
            b.wait_for(running)
            assert svc.queue_position(long_run(2)) is None
        finally:
            b.stop()
    finally:
        a.stop()


def test_one_running_simulation_per_session(tmp_path: Path) -> None:
    """The server's queue (`FairQueue`): two slots free, but the second run of session "s1"
    waits for its first; another session's run starts at once."""
    svc = Service(tmp_path, limits=Limits(max_concurrent=2), admission=FairQueue(2))
    a = Caller(svc, long_run(3), session="s1")
    callers = [a]
    try:
        a.wait_for(running)
        b = Caller(svc, long_run(4), session="s1")
        callers.append(b)
        texts = b.wait_for(lambda t: any(m.startswith(QUEUED) for m in t), timeout=10)
        assert any("this page's other run goes first" in m for m in texts), texts
        c = Caller(svc, long_run(5), session="s2")
        callers.append(c)
        c.wait_for(running, timeout=30)
        assert not running([t for _, t in b.messages])
        a.stop()  # s1's first run ends: its second may start
        b.wait_for(running, timeout=30)
    finally:
        for k in callers:
            k.stop()


def test_the_library_queue_has_no_session_rule(tmp_path: Path) -> None:
    """The library's own queue (`RunQueue`, sweeps and the CLI) admits by arrival only: a
    session's second run takes the second slot at once."""
    svc = Service(tmp_path, limits=Limits(max_concurrent=2), admission=RunQueue(2))
    a = Caller(svc, long_run(13), session="s1")
    callers = [a]
    try:
        a.wait_for(running)
        b = Caller(svc, long_run(14), session="s1")
        callers.append(b)
        texts = b.wait_for(running, timeout=30)
        assert not any("other run goes first" in m for m in texts), texts
    finally:
        for k in callers:
            k.stop()


def test_ending_a_session_cancels_its_runs(tmp_path: Path) -> None:
    svc = Service(tmp_path, limits=Limits(max_concurrent=1))
    a = Caller(svc, long_run(6), session="gone")
    b = None
    try:
        a.wait_for(running)
        # b only once a holds the slot: started together, b sometimes took it first, and a
        # then waited for b's whole run (the test failed on a quiet and on a loaded CI run)
        b = Caller(svc, long_run(7), session="gone-too")
        b.wait_for(lambda t: any(m.startswith(QUEUED) for m in t), timeout=60)
        assert svc.end_session("gone") == 1
        assert svc.end_session("gone-too") == 1
        # minutes of GD each (long_run): a caller back within the liveness bound was cancelled
        a.thread.join(120)
        b.thread.join(120)
        assert not a.thread.is_alive() and not b.thread.is_alive()
        assert a.result is not None and a.result.status == Status.CANCELLED
        assert b.result is not None and b.result.status == Status.CANCELLED
        deadline = time.monotonic() + 30
        while svc.stats()["running"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert svc.stats()["running"] == 0  # the simulation stopped, not only its waiters
    finally:
        a.stop()
        if b is not None:
            b.stop()


def test_ending_a_session_forgets_the_results_of_its_uploads(tmp_path: Path) -> None:
    svc = Service(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    upload = Config.from_dict({"data": {"kind": "array", "X": X, "y": np.sign(X[:, 0])},
                               "model": {"width": 8}, "record": {"frames": 8}})
    preset = Config.from_dict({"model": {"width": 8}, "record": {"frames": 8}})
    for cfg in (upload, preset):
        assert svc.run(cfg, session="s").status == "completed"
    svc.run(upload, session="other")  # a second session asked for the same upload
    assert svc.stats()["memory_entries"] == 2
    svc.end_session("s")
    assert svc.stats()["memory_entries"] == 2  # "other" still has it
    svc.end_session("other")
    assert svc.stats()["memory_entries"] == 1  # the preset stays cached
    assert svc.peek(preset) is not None


def test_heavy_configs_are_never_speculated(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EAE_PREFETCH", "1")  # the suite's default is off (tests/conftest.py)
    spec = Speculator(Service(tmp_path, limits=Limits(click_to_run_s=1.0)))
    assert estimate_seconds(long_run(8)) > 1.0
    assert spec.prefetch([long_run(8)]) == 0
    assert spec.prefetch([Config.from_dict({"model": {"width": 9}})]) == 1
    assert spec.idle(WAIT)


@pytest.mark.parametrize("link,over", [
    ({"data": {"kind": "teacher", "n": 20000, "d": 8}}, True),
    ({"data": {"kind": "teacher", "n": 2000, "d": 1024}}, True),
    ({}, False),
])
def test_the_estimate_puts_huge_data_links_over_the_threshold(link: dict, over: bool) -> None:
    """Links of huge data (47 s on open; a run to t = 5·10⁵) are over the default 5 s; the
    Explorer's default and the Real data page's digits run are not."""
    threshold = Limits().click_to_run_s
    assert (estimate_seconds(Config.from_dict(link)) > threshold) is over
    digits = digits_config(quick=False).with_updates({"integrator.t_end": 2.0})
    assert estimate_seconds(digits) < threshold
    assert describe_seconds(40.4) == "about 40 s" and describe_seconds(600) == "about 10 min"
