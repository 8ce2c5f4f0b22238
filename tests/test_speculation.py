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
from test_service import WAIT, long_run, never_ending, tiny, wait_until

from dynamics.limits import Limits
from dynamics.service import Service
from dynamics.simulate import simulate
from runtime.speculation import FAMILY, Speculator


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


def test_a_family_run_preempted_by_a_page_is_taken_up_again(tmp_path: Path,
                                                           prefetch_on: None) -> None:
    """A scrub family's run steps aside for a page's request and is run again afterwards
    (a visitor waits for it); its figure's callback gets the completed run."""
    svc = CountingService(tmp_path, Limits(max_concurrent=1, click_to_run_s=1e9))
    spec = Speculator(svc)
    done: list[Any] = []
    member = long_run(seed=70)
    assert spec.prefetch([member], owner=f"{FAMILY}s", on_done=done.append) == 1
    wait_until(lambda: svc.stats()["running"] == 1, "the family's run to start")
    assert svc.run(tiny(seed=71)).status == "completed"  # the page's request goes first
    assert svc.stats()["cancelled"] >= 1  # the family's run stepped aside …
    assert spec.idle(WAIT)
    assert [t.config for t in done] == [member] and done[0].status == "completed"  # … and ran
    assert svc.most == 1


def test_a_starved_family_runs_behind_a_busy_server_and_guesses_do_not(
        tmp_path: Path, prefetch_on: None) -> None:
    """While a page's run keeps the server busy, a neighbour's guess waits, but a scrub
    family's next run goes anyway once it has waited FAMILY_STARVE_S (one at a time)."""
    svc = Service(tmp_path, Limits(max_concurrent=2, click_to_run_s=1e9))
    spec = Speculator(svc)
    stop = threading.Event()
    page = threading.Thread(target=svc.run, args=(never_ending(seed=72),),
                            kwargs={"cancel": stop}, daemon=True)
    page.start()
    try:
        wait_until(lambda: svc.stats()["running"] == 1, "the page's run to start")
        spec.prefetch([tiny(seed=73)], owner="neighbours")
        spec.prefetch([tiny(seed=74)], owner=f"{FAMILY}s")
        wait_until(lambda: svc.peek(tiny(seed=74)) is not None, "the starved family's run")
        assert page.is_alive() and svc.pressing()  # the server was busy all along
        assert svc.peek(tiny(seed=73)) is None  # the guess still waits
    finally:
        stop.set()
        page.join(WAIT)
    assert spec.idle(WAIT) and svc.peek(tiny(seed=73)) is not None  # … and runs when idle

