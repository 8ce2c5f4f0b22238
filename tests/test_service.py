"""The cached service: compute-once, bounded caches, restart, cancel ref-counting, deadline,
queueing, failures. A real cache directory on disk, real threads and a real subprocess (the
cache's self-repair and the deadline slot: tests/test_hardening.py)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dynamics.annotations import Analysis
from dynamics.config import Config
from dynamics.limits import Limits
from dynamics.service import Service, ServiceError, default_cache_dir, default_service
from dynamics.simulate import simulate
from dynamics.trajectory import Trajectory

REPO = Path(__file__).resolve().parent.parent
WAIT = 60.0  # generous bound for liveness checks (never a speed assertion)


def tiny(seed: int = 0, width: int = 8, **integrator: Any) -> Config:
    return Config.from_dict({
        "model": {"width": width},
        "record": {"frames": 8, "scalars": 20},
        "integrator": {"t_end": 10.0, **integrator},
        "seed": seed,
    })


def medium(seed: int = 0) -> Config:
    """A few tenths of a second: long enough for threads to pile onto one flight."""
    return Config.from_dict({
        "model": {"width": 20},
        "record": {"frames": 10, "scalars": 20},
        "integrator": {"method": "gd", "lr": 1e-2, "t_end": 1000.0},
        "seed": seed,
    })


def long_run(seed: int = 0) -> Config:
    """About a million GD steps: seconds, so it can be cancelled or queued behind."""
    return Config.from_dict({
        "model": {"width": 20},
        "record": {"frames": 10, "scalars": 20},
        "integrator": {"method": "gd", "lr": 1e-3, "t_end": 1000.0},
        "seed": seed,
    })


def never_ending(seed: int = 0) -> Config:
    """Several million GD steps, for runs that the test cancels long before they end."""
    return Config.from_dict({
        "model": {"width": 20},
        "record": {"frames": 10, "scalars": 20},
        "integrator": {"method": "gd", "lr": 1e-3, "t_end": 8000.0, "max_steps": 8_000_000},
        "seed": seed,
    })


def assert_same(a: Trajectory, b: Trajectory) -> None:
    """Bit-identical arrays and the same header (wall time aside)."""
    xa, xb = a.to_arrays(), b.to_arrays()
    assert xa.keys() == xb.keys()
    for k in xa:
        assert xa[k].dtype == xb[k].dtype, k
        assert np.array_equal(xa[k], xb[k], equal_nan=xa[k].dtype.kind == "f"), k
    ha, hb = a.header(), b.header()
    ha.pop("wall_time")
    hb.pop("wall_time")
    assert ha == hb


def wait_until(cond: Callable[[], bool], what: str) -> None:
    end = time.monotonic() + WAIT
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.01)


class Runner(threading.Thread):
    """svc.run in a thread, recording progress messages and the thread they arrived on."""

    def __init__(self, svc: Service, config: Config, cancel: threading.Event | None = None):
        super().__init__(daemon=True)
        self.svc, self.config, self.cancel = svc, config, cancel
        self.messages: list[tuple[float, str]] = []
        self.progress_threads: set[int] = set()
        self.result: Trajectory | None = None
        self.error: BaseException | None = None
        self.started_progress = threading.Event()

    def progress(self, frac: float, text: str) -> None:
        self.messages.append((frac, text))
        self.progress_threads.add(threading.get_ident())
        if frac > 0:
            self.started_progress.set()

    def run(self) -> None:
        try:
            self.result = self.svc.run(self.config, self.progress, self.cancel)
        except BaseException as e:
            self.error = e

    def finish(self) -> Trajectory:
        self.join(WAIT)
        assert not self.is_alive(), "service call did not return"
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


@pytest.fixture
def svc(tmp_path: Path) -> Service:
    return Service(tmp_path / "cache")


# ------------------------------------------------------------------------------ compute once
def test_thirty_threads_same_config_compute_once(svc: Service) -> None:
    cfg = medium()
    barrier = threading.Barrier(30)
    results: list[Trajectory | None] = [None] * 30

    def ask(i: int) -> None:
        barrier.wait()
        results[i] = svc.run(cfg)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    st = svc.stats()
    assert st["computations"] == 1
    assert st["misses"] == 1
    assert st["joined"] + st["memory_hits"] == 29
    assert st["in_flight"] == 0 and st["running"] == 0
    assert all(r is not None for r in results)
    direct = simulate(cfg)
    for r in results:
        assert r is not None
        assert r.status == "completed"
        assert_same(r, direct)


def test_different_configs_in_parallel_match_direct_simulate(svc: Service) -> None:
    cfgs = [tiny(seed=1), tiny(seed=2, width=12, method="gd", lr=0.05)]
    runners = [Runner(svc, c) for c in cfgs]
    for r in runners:
        r.start()
    got = [r.finish() for r in runners]
    assert svc.stats()["computations"] == 2
    for c, g in zip(cfgs, got, strict=True):
        assert g.config == c
        assert_same(g, simulate(c))


def test_accepts_a_mapping_and_memory_hit_is_the_same_object(svc: Service) -> None:
    cfg = tiny(seed=3)
    a = svc.run(cfg.to_dict())
    b = svc.run(cfg)
    assert a is b
    st = svc.stats()
    assert st["computations"] == 1 and st["memory_hits"] == 1


def test_results_are_read_only(svc: Service) -> None:
    traj = svc.run(tiny(seed=4))
    assert not traj.loss.flags.writeable
    assert not traj.W.flags.writeable
    assert not traj.frame_metrics["stable_rank"].flags.writeable
    with pytest.raises(ValueError):
        traj.loss[0] = 1.0


def test_progress_arrives_in_the_callers_thread(svc: Service) -> None:
    r = Runner(svc, medium(seed=5))
    r.start()
    r.finish()
    assert r.messages, "no progress reported"
    assert r.progress_threads == {r.ident}
    assert r.messages[-1][0] == 1.0


# ------------------------------------------------------------------------------ bounds
def test_memory_cache_stays_within_entries_and_bytes(tmp_path: Path) -> None:
    one = simulate(tiny(seed=100)).nbytes()
    by_entries = Service(tmp_path / "a", Limits(memory_cache_entries=3, memory_cache_mb=100))
    by_bytes = Service(tmp_path / "b", Limits(memory_cache_entries=50,
                                              memory_cache_mb=2.5 * one / 1e6))
    for svc, (n_max, b_max) in ((by_entries, (3, 100e6)), (by_bytes, (50, 2.5 * one))):
        sizes = []
        for seed in range(8):
            sizes.append(svc.run(tiny(seed=100 + seed)).nbytes())
            st = svc.stats()
            assert st["memory_entries"] <= n_max
            assert st["memory_bytes"] <= b_max
        # least recently used go first: what is left is the longest newest run that fits
        kept, total = 0, 0
        for size in reversed(sizes):
            if kept == n_max or total + size > b_max:
                break
            kept, total = kept + 1, total + size
        assert kept >= 2
        assert svc.stats()["memory_entries"] == kept
        assert svc.stats()["memory_bytes"] == total
        assert svc.peek(tiny(seed=107)) is not None
        assert svc.stats()["disk_hits"] == 0  # the newest is still in memory


def test_disk_cache_stays_within_its_byte_bound_and_evicted_entries_recompute(
        tmp_path: Path) -> None:
    blob = len(simulate(tiny(seed=200)).to_bytes())
    limit_mb = (32768 + 4 * blob) / 1e6  # room for four entries and a bit
    svc = Service(tmp_path / "c", Limits(memory_cache_entries=1, memory_cache_mb=100,
                                         disk_cache_mb=limit_mb))
    first = svc.run(tiny(seed=200))
    for seed in range(1, 12):
        svc.run(tiny(seed=200 + seed))
        assert svc.stats()["disk_bytes"] <= limit_mb * 1e6
    st = svc.stats()
    assert 1 <= st["disk_entries"] < 12
    # the last one is kept (least recently used goes first), the first is gone everywhere
    assert svc.peek(tiny(seed=211)) is not None
    assert svc.peek(tiny(seed=200)) is None
    before = svc.stats()["computations"]
    again = svc.run(tiny(seed=200))
    assert svc.stats()["computations"] == before + 1
    assert_same(again, first)


def test_an_oversized_result_is_returned_but_not_cached(tmp_path: Path) -> None:
    svc = Service(tmp_path, Limits(memory_cache_mb=1e-6, disk_cache_mb=1e-3))
    traj = svc.run(tiny(seed=7))
    assert traj.status == "completed"
    st = svc.stats()
    assert st["memory_entries"] == 0 and st["disk_entries"] == 0
    svc.run(tiny(seed=7))
    assert svc.stats()["computations"] == 2


# ------------------------------------------------------------------------------ persistence
def test_restart_serves_from_disk_without_computing(tmp_path: Path) -> None:
    cfg = tiny(seed=8)
    first = Service(tmp_path).run(cfg)
    fresh = Service(tmp_path)
    got = fresh.run(cfg)
    st = fresh.stats()
    assert st["computations"] == 0 and st["disk_hits"] == 1 and st["misses"] == 0
    assert_same(got, first)
    assert fresh.run(cfg) is got  # now from memory
    assert fresh.stats()["memory_hits"] == 1


def test_another_process_shares_the_disk_cache(tmp_path: Path) -> None:
    cfg = tiny(seed=9)
    code = (
        "import sys; from dynamics.config import Config; from dynamics.service import Service;"
        "s = Service(sys.argv[1]); t = s.run(Config.from_json(sys.argv[2]));"
        "print(t.status, s.stats()['computations'])"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path), cfg.to_json()],
                         cwd=REPO, capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.split() == ["completed", "1"]
    svc = Service(tmp_path)
    assert svc.peek(cfg) is not None
    got = svc.run(cfg)
    assert svc.stats()["computations"] == 0 and svc.stats()["disk_hits"] == 1
    assert_same(got, simulate(cfg))


def test_peek_never_computes(svc: Service) -> None:
    cfg = tiny(seed=10)
    assert svc.peek(cfg) is None
    assert svc.stats()["computations"] == 0
    svc.run(cfg)
    svc.clear_memory()
    assert svc.stats()["memory_entries"] == 0
    got = svc.peek(cfg)
    assert got is not None and got.status == "completed"
    assert svc.stats()["disk_hits"] == 1 and svc.stats()["computations"] == 1


# ------------------------------------------------------------------------------ cancel
def test_cancel_returns_cancelled_and_is_not_cached(svc: Service) -> None:
    ev = threading.Event()
    r = Runner(svc, never_ending(seed=11), ev)
    r.start()
    assert r.started_progress.wait(WAIT)
    ev.set()
    traj = r.finish()
    assert traj.status == "cancelled"
    assert 1 <= traj.n_frames < 10
    assert traj.t[-1] < 8000.0
    wait_until(lambda: svc.stats()["running"] == 0, "the simulation to stop")
    st = svc.stats()
    assert st["cancelled"] == 1 and st["in_flight"] == 0 and st["memory_entries"] == 0
    assert svc.peek(never_ending(seed=11)) is None


def test_one_waiter_cancelling_does_not_cancel_the_other(svc: Service) -> None:
    cfg = long_run(seed=12)
    ev = threading.Event()
    a = Runner(svc, cfg, ev)
    a.start()
    assert a.started_progress.wait(WAIT)
    b = Runner(svc, cfg)
    b.start()
    wait_until(lambda: svc.stats()["joined"] == 1, "the second waiter to join")
    ev.set()
    got_a = a.finish()
    assert got_a.status == "cancelled"
    assert got_a.n_frames == 1  # the shared run goes on: a gets the initial state only
    assert b.is_alive()
    got_b = b.finish()
    assert got_b.status == "completed"
    assert got_b.t[-1] == 1000.0 and got_b.n_frames == 10
    assert b.messages and b.messages[-1][0] == 1.0  # the joiner got the shared progress
    st = svc.stats()
    assert st["computations"] == 1 and st["cancelled"] == 1
    assert svc.peek(cfg) is got_b


def test_a_raising_progress_callback_leaves_and_the_run_is_cancelled(svc: Service) -> None:
    class Stop(Exception):
        pass

    def progress(frac: float, text: str) -> None:
        if frac > 0:
            raise Stop

    with pytest.raises(Stop):
        svc.run(never_ending(seed=13), progress)
    wait_until(lambda: svc.stats()["running"] == 0, "the abandoned simulation to stop")
    st = svc.stats()
    assert st["in_flight"] == 0 and st["memory_entries"] == 0
    assert svc.peek(never_ending(seed=13)) is None


# ------------------------------------------------------------------------------ deadline, queue
def test_deadline_gives_status_deadline_and_is_not_cached(tmp_path: Path) -> None:
    svc = Service(tmp_path, Limits(deadline_s=1e-6))
    cfg = medium(seed=14)
    traj = svc.run(cfg)
    assert traj.status == "deadline"
    assert "time limit" in traj.message
    assert svc.peek(cfg) is None
    assert svc.run(cfg).status == "deadline"
    st = svc.stats()
    assert st["computations"] == 2 and st["deadlines"] == 2


def test_second_run_is_queued_behind_the_first(tmp_path: Path) -> None:
    svc = Service(tmp_path, Limits(max_concurrent=1))
    ev_a, ev_b = threading.Event(), threading.Event()
    a = Runner(svc, never_ending(seed=15), ev_a)
    a.start()
    assert a.started_progress.wait(WAIT)
    b = Runner(svc, never_ending(seed=16), ev_b)
    b.start()
    wait_until(lambda: any(m.startswith("queued") for _, m in b.messages), "a queued message")
    st = svc.stats()
    assert st["running"] == 1 and st["queued"] == 1
    frac, text = next(m for m in b.messages if m[1].startswith("queued"))
    assert frac == 0.0 and text.startswith("queued: 1 run ahead")
    ev_b.set()
    assert b.finish().status == "cancelled"
    wait_until(lambda: svc.stats()["queued"] == 0, "the queue to empty")
    ev_a.set()
    assert a.finish().status == "cancelled"
    wait_until(lambda: svc.stats()["running"] == 0, "the run to stop")
    assert svc.stats()["computations"] == 1  # the queued one never started


# ------------------------------------------------------------------------------ failures
class FailingOnce(Service):
    """A service whose first simulation raises an unexpected exception."""

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self.failures = 1

    def _simulate(self, config, progress, cancel):  # type: ignore[no-untyped-def]
        if self.failures:
            self.failures -= 1
            raise RuntimeError("boom")
        return super()._simulate(config, progress, cancel)


def test_an_unexpected_failure_raises_service_error_and_does_not_poison(tmp_path: Path) -> None:
    svc = FailingOnce(tmp_path)
    cfg = tiny(seed=17)
    with pytest.raises(ServiceError, match="RuntimeError: boom"):
        svc.run(cfg)
    st = svc.stats()
    assert st["errors"] == 1 and st["in_flight"] == 0 and st["running"] == 0
    got = svc.run(cfg)
    assert got.status == "completed"
    assert_same(got, simulate(cfg))


# ------------------------------------------------------------------------------ misc
def test_analyse_is_memoised(svc: Service) -> None:
    traj = svc.run(tiny(seed=18))
    first = svc.analyse(traj)
    assert isinstance(first, Analysis)
    assert svc.analyse(traj) is first


def test_default_service_is_one_per_process_in_the_configured_dir() -> None:
    s = default_service()
    assert s is default_service()
    assert s.cache_dir == default_cache_dir()
    assert "eae_cache" in str(s.cache_dir)  # conftest's temp dir, not the user's cache


def test_status_page_shows_counters_limits_and_clears_memory(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EAE_OPERATOR", "1")  # the operator view

    import runtime
    from dynamics.blas import apply_numpy_blas_threads

    svc = runtime.current().service  # the server's (with its fair queue), not the library's
    assert svc is not default_service() and type(svc.admission).__name__ == "FairQueue"
    svc.run(tiny(seed=19))
    assert svc.stats()["memory_entries"] >= 1
    assert apply_numpy_blas_threads() == 1  # what the service does before each computation
    at = AppTest.from_file(str(REPO / "app_pages" / "status.py"), default_timeout=60).run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Computed"].replace(",", "")) >= 1
    assert metrics["Memory entries"].startswith(str(svc.stats()["memory_entries"]))
    limits = at.dataframe[0].value
    assert "EAE_MAX_WIDTH" in set(limits["environment variable"])
    threads = at.dataframe[1].value
    assert list(threads["environment variable"]) == ["EAE_CORE_THREADS", "EAE_CORE_BLAS_THREADS",
                                                     "EAE_NUMPY_BLAS_THREADS"]
    assert threads["value"].iloc[2] == "1"  # the live value, as the service holds it
    versions = dict(zip(at.dataframe[2].value["package"], at.dataframe[2].value["version"],
                        strict=True))
    assert versions["numpy"] == np.__version__
    at.button[0].click().run()
    assert not at.exception
    assert [s.value for s in at.success] == ["Memory cache cleared."]
    assert svc.stats()["memory_entries"] == 0


def test_the_cancel_flag_is_read_outside_the_service_lock(tmp_path: Path) -> None:
    """A sweep's cancel flag is a Dask event whose first read needs the worker's event loop,
    and that loop may be running `stats()` for `client.run`: reading the flag must not hold
    the service's lock (it did, and a sweep test hung until its timeout)."""
    svc = Service(tmp_path)
    reads: list[bool] = []  # True: stats() could not take the lock while the flag was read

    class RemoteFlag:
        def is_set(self) -> bool:
            other = threading.Thread(target=svc.stats, daemon=True)
            other.start()
            other.join(2.0)
            reads.append(other.is_alive())
            return False

    traj = svc.run(long_run(seed=31).with_updates({"integrator.t_end": 100.0}),
                   cancel=RemoteFlag())  # type: ignore[arg-type]
    assert traj.status == "completed"
    assert reads and not any(reads), reads
