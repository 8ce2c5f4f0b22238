"""A sweep whose Dask cluster loses every worker says so, and then resumes when a worker joins
(no finished point lost) or stops cleanly after its timeout. Real processes: a scheduler (a
LocalCluster without workers) and `dask worker` subprocesses, killed with SIGKILL as a
crashed host would be. Killing every worker froze a sweep at 81/648 for 60 s with no message
(only the scheduler logged "Lost all workers")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from dynamics.sweeps import Sweep, run_sweep
from dynamics.sweeps.engine import NO_WORKERS, _collect

pytestmark = pytest.mark.heavy

SPEC = {"base": {"data": {"kind": "teacher", "d": 8, "n": 400}, "model": {"width": 50},
                 "integrator": {"t_end": 50}},
        "axes": [{"field": "init.scale", "log": [1e-4, 1e-2, 12]}], "seeds": 2}


@pytest.fixture()
def scheduler() -> Iterator[Any]:
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=0, processes=True, dashboard_address=None)
    client = Client(cluster, set_as_default=False)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def _worker(client: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker",
                             client.scheduler.address, "--nthreads", "1", "--no-nanny",
                             "--no-dashboard"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ})


def _until(pred: Any, timeout: float = 120.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


class _Run:
    """A sweep in a thread, its progress, and what it said."""

    def __init__(self, client: Any, **kw: Any) -> None:
        self.done = 0
        self.notes: list[str] = []
        self.result: Any = None
        self.thread = threading.Thread(target=self._run, args=(client, kw), daemon=True)
        self.thread.start()

    def _run(self, client: Any, kw: dict[str, Any]) -> None:
        self.result = run_sweep(Sweep.from_dict(SPEC), client=client, progress=self._progress,
                                notice=self.notes.append, **kw)

    def _progress(self, done: int, total: int, row: dict[str, Any]) -> None:
        self.done = done


@pytest.mark.slow  # all 24 points on one worker; the timeout and lost-row tests stay in the suite
def test_a_sweep_says_its_cluster_has_no_workers_then_resumes(scheduler: Any) -> None:
    w = _worker(scheduler)
    w2 = None
    try:
        scheduler.wait_for_workers(1, timeout=120)
        run = _Run(scheduler)
        assert _until(lambda: run.done >= 2), "no point finished"
        os.kill(w.pid, signal.SIGKILL)
        w.wait(30)
        assert _until(lambda: any(n.startswith(NO_WORKERS) for n in run.notes)), run.notes
        said = next(n for n in run.notes if n.startswith(NO_WORKERS))
        assert "points wait" in said and "goes on when a worker joins" in said
        kept = run.done
        assert run.thread.is_alive()  # waiting, not failed
        w2 = _worker(scheduler)
        run.thread.join(600)
        assert not run.thread.is_alive()
        res = run.result
        assert res is not None and not res.cancelled
        assert res.status_counts() == {"completed": 24}, res.status_counts()
        assert run.done == 24 >= kept  # no finished point was lost
        assert any("joined: the sweep goes on" in n for n in run.notes), run.notes
        assert any(n.startswith(NO_WORKERS) for n in res.notes)
    finally:
        for p in (w, w2):
            if p is not None and p.poll() is None:
                p.kill()


def test_a_sweep_without_workers_stops_cleanly_after_its_timeout(scheduler: Any) -> None:
    w = _worker(scheduler)
    try:
        scheduler.wait_for_workers(1, timeout=120)
        run = _Run(scheduler, no_workers_timeout=3.0)
        assert _until(lambda: run.done >= 1), "no point finished"
        os.kill(w.pid, signal.SIGKILL)
        w.wait(30)
        run.thread.join(300)
        res = run.result
        assert res is not None and res.cancelled
        counts = res.status_counts()
        assert counts.get("completed", 0) >= 1 and counts.get("cancelled", 0) >= 1, counts
        assert sum(counts.values()) == 24
        assert any("stops in 3 s unless a worker joins" in n for n in run.notes), run.notes
        assert any(n.startswith(f"stopped: {NO_WORKERS}") for n in res.notes), res.notes
    finally:
        if w.poll() is None:
            w.kill()


def test_a_row_lost_with_its_worker_is_waited_for_again(scheduler: Any) -> None:
    """A point finished, then its worker died before the row was gathered: the sweep must not
    block on the row (it hung there, its watch of the workers silent, in a loaded suite) but
    wait for Dask's recomputation of it."""
    w = _worker(scheduler)
    w2 = None
    try:
        scheduler.wait_for_workers(1, timeout=120)
        f = scheduler.submit(dict, value=49, pure=False)  # (a builtin: the worker has it)
        assert _until(lambda: f.status == "finished"), f.status
        os.kill(w.pid, signal.SIGKILL)
        w.wait(30)
        assert _until(lambda: len(scheduler.nthreads()) == 0)
        assert _collect(f) is None  # not a row, not a hang
        w2 = _worker(scheduler)
        assert f.result(timeout=120) == {"value": 49}  # recomputed on the new worker
        assert _collect(f) == {"value": 49}
    finally:
        for p in (w, w2):
            if p is not None and p.poll() is None:
                p.kill()
