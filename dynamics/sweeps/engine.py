"""Running a sweep: on Dask (`run_sweep`) or in this process (`run_sweep_serial`).

`Clusters` owns this process's Dask clients: a `LocalCluster` (worker processes with one
thread each, n_workers = cores, started on first use and reused while the cache directory and
worker count stay the same) and clients of remote schedulers (named by ``scheduler=`` or
``DASK_SCHEDULER_ADDRESS``). `default_clusters()` is the process's shared one (closed at exit);
a caller that wants its own lifecycle makes a `Clusters()` and closes it (or uses ``with``).
`prestart` starts the shared LocalCluster in the background and warms its workers (`warm_up`:
imports and compiled kernels loaded), so a page's first sweep does not wait for either.
Points are submitted seed by seed over the grid (`submission_order`), so the points finished
first cover the whole grid; the table is in grid order whatever the order of completion.

Workers compute through the service layer (`default_service().run`), so points already
computed anywhere come from the shared disk cache: the client's cache directory is handed to
LocalCluster workers, and to any worker that has none. Remote workers need this package
importable (install it or set PYTHONPATH).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import math
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..config import Config
from ..limits import get_settings
from ..status import Status
from .io import SweepResult, make_frame
from .spec import Point, Sweep
from .summaries import compute_point

ENV_SCHEDULER = "DASK_SCHEDULER_ADDRESS"
REPO_ROOT = Path(__file__).resolve().parents[2]

ProgressCallback = Callable[[int, int, dict[str, Any]], None]
log = logging.getLogger(__name__)


def scheduler_address(scheduler: str | None = None) -> str | None:
    """`scheduler`, else env DASK_SCHEDULER_ADDRESS, else None (a LocalCluster)."""
    return scheduler or os.environ.get(ENV_SCHEDULER) or None


def _cache_dir() -> str:
    from ..service import default_cache_dir

    return str(default_cache_dir())


# ============================================================================ clusters
def _dashboard_kwargs() -> dict[str, Any]:
    """The LocalCluster's Dask dashboard (`EAE_DASK_DASHBOARD`): off by default, or on
    127.0.0.1 at a free port ("loopback"); never every interface (the dashboard shows worker
    addresses, memory and tasks to anyone who reaches it). Off, the scheduler still serves
    its small HTTP routes (health, metrics): on a free loopback port too — left to Dask, they
    would try port 8787 and log "Port 8787 is already in use" whenever another cluster (a
    second server, a test) holds it."""
    on = get_settings().dask_dashboard == "loopback"
    return {"dashboard_address": "127.0.0.1:0",
            "scheduler_kwargs": {"dashboard": on, "dashboard_address": "127.0.0.1:0"}}


class Clusters:
    """This process's Dask clients: one LocalCluster and a client per remote scheduler."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local: dict[str, Any] = {}
        self._remote: dict[str, Any] = {}
        self._prestart: threading.Thread | None = None

    def __enter__(self) -> Clusters:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def local(self, n_workers: int | None = None) -> Any:
        """The LocalCluster client (worker processes, one thread each, n = cores), started on
        first use and reused while the cache dir and worker count stay the same."""
        from distributed import Client, LocalCluster

        n = n_workers or os.cpu_count() or 1
        cache_dir = _cache_dir()
        with self._lock:
            cur = self._local.get("client")
            if cur is not None:
                same = self._local["cache_dir"] == cache_dir and (
                    n_workers is None or self._local["n_workers"] == n)
                if same and cur.status == "running":
                    return cur
                self._close_local()
            pp = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                   **_dashboard_kwargs(), silence_logs=logging.ERROR,
                                   env={"EAE_CACHE_DIR": cache_dir, "PYTHONPATH": pp})
            client = Client(cluster, set_as_default=False)
            self._local.update(cluster=cluster, client=client, cache_dir=cache_dir,
                               n_workers=n)
            return client

    def prestart_local(self, n_workers: int | None = None) -> threading.Thread | None:
        """Start the LocalCluster and warm its workers (`warm_up`) in a background thread, so
        that a sweep started later finds them ready (a `local` call meanwhile waits for the
        start). None when it is running already or being started."""
        with self._lock:
            cur = self._local.get("client")
            if (self._prestart is not None and self._prestart.is_alive()) or (
                    cur is not None and cur.status == "running"
                    and self._local["cache_dir"] == _cache_dir()):
                return None

            def start() -> None:
                try:
                    warm_up(self.local(n_workers))
                except Exception as e:  # the sweep that needs it reports the failure
                    cur = self._local.get("client")  # closed meanwhile (e.g. at exit)?
                    closed = cur is None or cur.status != "running"
                    (log.debug if closed else log.warning)("LocalCluster prestart: %s", e)

            self._prestart = threading.Thread(target=start, daemon=True,
                                              name="eae-cluster-prestart")
            self._prestart.start()
            return self._prestart

    def remote(self, address: str, timeout: float = 10.0) -> Any:
        """A client of the cluster at `address` (one per address)."""
        from distributed import Client

        with self._lock:
            cur = self._remote.get(address)
            if cur is not None and cur.status == "running":
                return cur
            client = Client(address, set_as_default=False, timeout=timeout)
            self._remote[address] = client
            return client

    def client(self, scheduler: str | None = None, n_workers: int | None = None) -> Any:
        """The client a sweep uses: remote when an address is named (or in the environment),
        else local."""
        addr = scheduler_address(scheduler)
        return self.remote(addr) if addr else self.local(n_workers)

    def close_remote(self, address: str) -> None:
        """Close the client of the cluster at `address` (the cluster keeps running)."""
        with self._lock:
            c = self._remote.pop(address, None)
        if c is not None:
            with contextlib.suppress(Exception):
                c.close()

    def close(self) -> None:
        """Close the LocalCluster and the remote clients (remote clusters keep running)."""
        with self._lock:
            self._close_local()
            for c in self._remote.values():
                with contextlib.suppress(Exception):
                    c.close()
            self._remote.clear()

    def _close_local(self) -> None:
        client, cluster = self._local.pop("client", None), self._local.pop("cluster", None)
        for obj in (client, cluster):
            if obj is not None:
                with contextlib.suppress(Exception):
                    obj.close()
        self._local.clear()


@functools.cache
def default_clusters() -> Clusters:
    """The process's shared `Clusters` (created on first use, closed at exit)."""
    clusters = Clusters()
    atexit.register(clusters.close)
    return clusters


def get_client(scheduler: str | None = None, n_workers: int | None = None) -> Any:
    """`default_clusters().client(...)`: the client a sweep of this process uses."""
    return default_clusters().client(scheduler, n_workers)


def prestart(n_workers: int | None = None) -> None:
    """Start and warm the shared LocalCluster in the background (`Clusters.prestart_local`),
    unless sweeps go to a remote scheduler (DASK_SCHEDULER_ADDRESS)."""
    if scheduler_address() is None:
        default_clusters().prestart_local(n_workers)


#: two tiny runs (gf and gd, analysed) that load the compiled kernels in a fresh worker
WARM_CONFIGS: tuple[dict[str, Any], ...] = tuple(
    {"model": {"width": 4}, "integrator": {"method": m, "t_end": 2.0, "lr": 0.05},
     "record": {"frames": 4}} for m in ("gf", "gd"))


def _warm_worker() -> float:
    """Import the library and load the compiled kernels in this process (the `WARM_CONFIGS`
    simulated and analysed; nothing cached). Seconds taken."""
    t0 = time.perf_counter()
    from ..analysis import analyse
    from ..simulate import simulate

    for d in WARM_CONFIGS:
        analyse(simulate(Config.from_dict(d)))
    return time.perf_counter() - t0


def warm_up(client: Any, timeout: float = 120.0) -> dict[str, float]:
    """Run `_warm_worker` once on every worker of `client` (a fresh worker spends about a
    second loading the kernels on its first point); seconds per worker address."""
    workers = list(client.scheduler_info(n_workers=-1)["workers"])
    futs = {w: client.submit(_warm_worker, pure=False, workers=[w], allow_other_workers=False,
                             key=f"eae-warm-{uuid.uuid4().hex[:8]}") for w in workers}
    return {w: float(f.result(timeout=timeout)) for w, f in futs.items()}


def submission_order(points: list[Point], seeds: Sequence[int]) -> list[Point]:
    """`points` (grid order, seeds innermost) reordered seed by seed: the first seed of every
    grid point, then the second, … — so a figure drawn from the points finished so far covers
    the whole grid early. Only the order changes, never a point."""
    rank = {s: i for i, s in enumerate(seeds)}
    return sorted(points, key=lambda p: (rank.get(p.seed, len(rank)), p.index))


def n_workers_of(client: Any) -> int:
    try:
        return len(client.scheduler_info(n_workers=-1)["workers"])
    except Exception:
        return 0


# ============================================================================ one point on a worker
class _RemoteCancel:
    """Event-like view of a distributed.Event, polled at most every `every` seconds."""

    def __init__(self, name: str, every: float = 0.25):
        self.name, self.every = name, every
        self._ev: Any = None
        self._last = -math.inf
        self._set = False

    def is_set(self) -> bool:
        if self._set:
            return True
        now = time.monotonic()
        if now - self._last < self.every:
            return False
        self._last = now
        try:
            if self._ev is None:
                from distributed import Event

                self._ev = Event(self.name)
            self._set = bool(self._ev.is_set())
        except Exception:
            return False
        return self._set


def _run_point(config_json: str, cache_dir: str | None, cancel_name: str | None,
               opts: dict[str, Any]) -> dict[str, Any]:
    """The Dask task: one point on a worker (gets the client's cache dir if it has none)."""
    if cache_dir and not get_settings().cache_dir:
        os.environ["EAE_CACHE_DIR"] = cache_dir  # read by the worker's default_service
    config = Config.from_json(config_json)
    cancel = _RemoteCancel(cancel_name) if cancel_name else None
    return compute_point(config, cancel=cancel, **opts)


# ============================================================================ running
def _point_opts(sweep: Sweep) -> dict[str, Any]:
    return {"record": tuple(sweep.record), "trap_tol": sweep.trap_tol,
            "trap_threshold": sweep.trap_threshold}


def _is_cancelled(cancel: Any) -> bool:
    if cancel is None:
        return False
    if hasattr(cancel, "is_set"):
        return bool(cancel.is_set())
    return bool(cancel())


def _invalid_row(p: Point) -> dict[str, Any]:
    return {"status": Status.INVALID.value, "message": p.error}


GATHER_S = 5.0
"""How long a finished point's row may take to arrive before the sweep looks again: a worker
lost after it finished takes the row with it, Dask recomputes the point, and the wait would
otherwise block the sweep (and its watch of the workers) until then."""


def _collect(f: Any) -> dict[str, Any] | None:
    """A finished future's row, or None when its result was lost on the way (Dask recomputes
    it: wait for it again)."""
    try:
        if f.status == "finished":
            try:
                row = f.result(timeout=GATHER_S)
            except TimeoutError:
                return None
            return dict(row) if isinstance(row, Mapping) else {
                "status": Status.ERROR.value,
                "message": f"unexpected task result {type(row).__name__}"}
        if f.status in ("pending", "lost"):  # its worker went after it finished
            return None
        if f.status == "error":
            exc = f.exception()
            return {"status": Status.ERROR.value, "message": f"{type(exc).__name__}: {exc}"}
        return {"status": Status.CANCELLED.value, "message": f"the task was {f.status}"}
    except Exception as e:
        return {"status": Status.ERROR.value, "message": f"{type(e).__name__}: {e}"}


def cancel_futures(client: Any, futures: list[Any], event_name: str, timeout: float
                   ) -> None:
    """Tell the running simulations of `futures` to stop (the distributed.Event they poll),
    cancel the futures, and wait until the scheduler has none of them processing."""
    from distributed import Event

    if not futures:
        return
    keys = {f.key for f in futures}
    with contextlib.suppress(Exception):
        Event(event_name, client=client).set()
    with contextlib.suppress(Exception):
        client.cancel(futures, force=True)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            busy = {k for ks in client.processing().values() for k in ks}
        except Exception:
            return
        if not (busy & keys):
            return
        time.sleep(0.05)
    log.warning("sweep cancel: tasks still processing after %.0f s", timeout)


NO_WORKERS = "the cluster has no workers"
"""How a sweep says that its cluster lost every worker (`run_sweep`'s `notice`)."""
WORKER_CHECK_S = 1.0  # how often a sweep with points outstanding counts the cluster's workers


def live_workers(client: Any) -> int | None:
    """Workers the scheduler of `client` knows now (one small request), None when the
    scheduler cannot be asked."""
    try:
        return len(client.nthreads())
    except Exception:
        return None


class _WorkerWatch:
    """Counts the workers while points are outstanding (every `WORKER_CHECK_S`) and says when
    there are none — the scheduler only logs "Lost all workers", and the sweep waited in
    silence — and when they are back; `expired` once none came for `timeout` seconds."""

    def __init__(self, client: Any, pending: int, notice: Callable[[str], None] | None,
                 timeout: float | None):
        self.client, self.notice, self.timeout = client, notice, timeout
        self.pending = pending
        self.last = time.monotonic()
        self.since: float | None = None  # when the workers were found gone
        self.notes: list[str] = []

    def _say(self, text: str) -> None:
        self.notes.append(text)
        log.warning("sweep: %s", text)
        if self.notice is not None:
            self.notice(text)

    def check(self) -> None:
        now = time.monotonic()
        if now - self.last < WORKER_CHECK_S:
            return
        self.last = now
        n = live_workers(self.client)
        if n == 0 and self.since is None:
            self.since = now
            wait = (f"; it stops in {self.timeout:.0f} s unless a worker joins"
                    if self.timeout is not None else "; it goes on when a worker joins")
            self._say(f"{NO_WORKERS}: {self.pending} points wait{wait} (finished points are "
                      "kept)")
        elif n is None and self.since is None:
            self.since = now
            self._say("the cluster's scheduler cannot be reached: "
                      f"{self.pending} points wait")
        elif n and self.since is not None:
            self.since = None
            self._say(f"{n} worker{'s' if n != 1 else ''} joined: the sweep goes on")

    @property
    def expired(self) -> bool:
        return (self.since is not None and self.timeout is not None
                and time.monotonic() - self.since > self.timeout)


def run_sweep(sweep: Sweep, *, client: Any = None, scheduler: str | None = None,
              n_workers: int | None = None, clusters: Clusters | None = None,
              progress: ProgressCallback | None = None, cancel: Any = None,
              cancel_timeout: float = 15.0, notice: Callable[[str], None] | None = None,
              no_workers_timeout: float | None = None) -> SweepResult:
    """Run every point on Dask and return the table.

    `client`: a distributed.Client to use (else `(clusters or default_clusters()).client(
    scheduler, n_workers)`). `progress(done, total, row)` is called in this thread as points
    finish (invalid points first). `cancel`: an Event-like object (or a callable) polled
    every 50 ms; when set, the outstanding futures are
    cancelled, running simulations are told to stop, and this returns once the scheduler has
    no task of this sweep left processing (at most `cancel_timeout` s); the points that did
    not finish are rows with status "cancelled". If `progress` raises, the outstanding work is
    cancelled the same way and the exception propagates.

    While points are outstanding the cluster's workers are counted every `WORKER_CHECK_S`:
    when there are none, `notice(text)` is called in this thread with a sentence starting
    `NO_WORKERS` (and again when workers are back; the sentences also go to the result's
    `notes` and the log). The sweep waits for a worker to join — no finished point is lost —
    or, after `no_workers_timeout` seconds without one, stops as if cancelled.
    """
    from distributed import as_completed

    start = time.perf_counter()
    points = sweep.points()
    total = len(points)
    rows: dict[int, dict[str, Any]] = {}
    done = 0
    for p in points:
        if p.config is None:
            rows[p.index] = _invalid_row(p)
            done += 1
            if progress is not None:
                progress(done, total, {"index": p.index, **p.values, "seed": p.seed,
                                       **rows[p.index]})
    valid = [p for p in points if p.config is not None]
    cancelled = False
    address = ""
    workers = 0
    notes: list[str] = []
    if valid:
        if client is None:
            client = (clusters or default_clusters()).client(scheduler, n_workers)
        address = str(getattr(client.scheduler, "address", "") or "")
        workers = n_workers_of(client)
        token = uuid.uuid4().hex[:12]
        ev_name = f"eae-sweep-cancel-{token}"
        cache_dir = _cache_dir()
        opts = _point_opts(sweep)
        futs: dict[Any, Point] = {}
        for p in submission_order(valid, sweep.seeds):  # Dask runs them in this order
            assert p.config is not None
            f = client.submit(_run_point, p.config.to_json(), cache_dir,
                              ev_name if cancel is not None else None, opts,
                              key=f"eae-sweep-{token}-{p.index}", pure=False, retries=0)
            futs[f] = p
        pending = set(futs)
        ac = as_completed(list(futs), loop=client.loop)
        watch = _WorkerWatch(client, len(pending), notice, no_workers_timeout)
        ok = False
        try:
            while pending:
                if _is_cancelled(cancel) or watch.expired:
                    cancelled = True
                    break
                if not ac.has_ready():
                    watch.pending = len(pending)
                    watch.check()
                    time.sleep(0.05)
                    continue
                for f in ac.next_batch(block=False):
                    row = _collect(f)
                    if row is None:  # lost with its worker and recomputed: wait again
                        ac.add(f)
                        continue
                    pending.discard(f)
                    p = futs[f]
                    rows[p.index] = row
                    done += 1
                    if progress is not None:
                        progress(done, total, {"index": p.index, **p.values, "seed": p.seed,
                                               **rows[p.index]})
            ok = True
        finally:
            if pending or not ok:
                cancel_futures(client, list(pending), ev_name, cancel_timeout)
                cancelled = True
            with contextlib.suppress(Exception):
                ac.clear()
            del futs, pending  # the event is only ever set on cancel, and stays set
            notes.extend(watch.notes)
            if watch.expired:
                notes.append(f"stopped: {NO_WORKERS} for {no_workers_timeout:g} s")
    return SweepResult(sweep=sweep, frame=make_frame(sweep, rows), cancelled=cancelled,
                       elapsed_s=time.perf_counter() - start, scheduler=address,
                       n_workers=workers, notes=notes)


def run_sweep_serial(sweep: Sweep, *, progress: ProgressCallback | None = None,
                     cancel: Any = None, service: Any = None) -> SweepResult:
    """The same sweep in this process, one point after another (reference and benchmark)."""
    start = time.perf_counter()
    points = sweep.points()
    rows: dict[int, dict[str, Any]] = {}
    cancelled = False
    opts = _point_opts(sweep)
    for done, p in enumerate(points, 1):
        if _is_cancelled(cancel):
            cancelled = True
            break
        rows[p.index] = (_invalid_row(p) if p.config is None
                         else compute_point(p.config, service=service, **opts))
        if progress is not None:
            progress(done, len(points), {"index": p.index, **p.values, "seed": p.seed,
                                         **rows[p.index]})
    return SweepResult(sweep=sweep, frame=make_frame(sweep, rows), cancelled=cancelled,
                       elapsed_s=time.perf_counter() - start, scheduler="in-process",
                       n_workers=1)
