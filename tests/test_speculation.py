"""The server's speculative runs (runtime/speculation.py) on a real Service with real
simulations: off when the settings say so, a prefetched config is then a cache hit with the
same bits, runs stay within the service's slots, a page's request preempts them and a newer
call replaces the list; a starved scrub family still runs behind a busy server."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_service import WAIT, never_ending, tiny, wait_until

from dynamics.limits import Limits
from dynamics.service import Service
from dynamics.simulate import simulate
from runtime.speculation import Speculator


@pytest.fixture
def svc(tmp_path: Path) -> Service:
    return Service(tmp_path / "cache")


class CountingService(Service):
    """A service that records how many simulations run at once (the most seen)."""

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self.now = 0
        self.most = 0
        self.count_lock = threading.Lock()

    def _simulate(self, config, progress, cancel):  # type: ignore[no-untyped-def]
        with self.count_lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            return super()._simulate(config, progress, cancel)
        finally:
            with self.count_lock:
                self.now -= 1


@pytest.fixture()
def prefetch_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite runs with EAE_PREFETCH=0 (tests/conftest.py); these tests turn it on."""
    monkeypatch.setenv("EAE_PREFETCH", "1")


def test_prefetch_off_starts_nothing(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = Speculator(svc)
    monkeypatch.setenv("EAE_PREFETCH", "0")
    assert spec.prefetch([tiny(seed=39)]) == 0
    assert spec.idle(WAIT)
    assert svc.stats()["speculative_computations"] == 0 and svc.peek(tiny(seed=39)) is None


def test_a_prefetched_config_is_then_a_cache_hit(svc: Service, prefetch_on: None) -> None:
    spec = Speculator(svc)
    cfgs = [tiny(seed=40), tiny(seed=41)]
    assert spec.prefetch(cfgs) == 2
    assert spec.idle(WAIT)
    st = svc.stats()
    # speculative simulations are counted apart from the requests' computations
    assert spec.prefetched == 2 and st["speculative_computations"] == 2
    assert st["computations"] == 0
    for c in cfgs:
        hit = svc.peek(c)
        assert hit is not None and hit.status == "completed"
        assert svc.run(c) is hit  # the same cached object: nothing recomputed
        np.testing.assert_array_equal(hit.loss, simulate(c).loss)  # the same bits
    assert svc.stats()["computations"] == 0 and svc.stats()["speculative_computations"] == 2
    assert spec.prefetch(cfgs) == 0  # cached configs are not prefetched again


def test_prefetch_runs_one_at_a_time_within_the_limits(tmp_path: Path,
                                                        prefetch_on: None) -> None:
    svc = CountingService(tmp_path, Limits(max_concurrent=1))
    spec = Speculator(svc)
    many = [tiny(seed=50 + k) for k in range(12)]
    assert spec.prefetch(many) == 8  # at most PREFETCH_MAX pending, the first ones
    assert spec.idle(WAIT)
    assert svc.most == 1 and spec.prefetched == 8
    assert all(svc.peek(c) is not None for c in many[:8])
    assert all(svc.peek(c) is None for c in many[8:])


def test_prefetch_yields_to_a_real_request_and_never_blocks(tmp_path: Path,
                                                           prefetch_on: None) -> None:
    # click_to_run_s: the never-ending run must be speculated here (heavy ones are not)
    svc = CountingService(tmp_path, Limits(max_concurrent=1, click_to_run_s=1e9))
    spec = Speculator(svc)
    spec.prefetch([never_ending(seed=60), tiny(seed=61)])  # returns: it never waits for a run
    wait_until(lambda: svc.stats()["running"] == 1, "the prefetch to start")
    got = svc.run(tiny(seed=62))  # a real request: the speculative run is cancelled for it
    assert got.status == "completed"
    assert spec.idle(WAIT)
    assert svc.most == 1
    assert svc.peek(never_ending(seed=60)) is None  # cancelled: not cached
    assert svc.peek(tiny(seed=61)) is not None  # the rest of the list still ran
    spec.prefetch([never_ending(seed=63)])
    wait_until(lambda: svc.stats()["running"] == 1, "the prefetch to start")
    spec.prefetch([])  # the user moved on: the speculative run is cancelled
    assert spec.idle(WAIT)
    wait_until(lambda: svc.stats()["running"] == 0, "the cancelled prefetch to stop")
    assert svc.peek(never_ending(seed=63)) is None and svc.most == 1
