"""The cached service layer between pages (or the CLI, or sweeps) and `simulate`.

One `Service` per process (pages hold it in ``st.cache_resource``; `default_service()` is the
process-wide one). A request goes

    config → cache key → in-process LRU (bounded in entries and bytes)
           → persistent disk cache (diskcache, bounded in bytes, least-recently-used, process-safe)
           → compute (`simulate`, behind a global limit on simultaneous simulations)

Only deterministic outcomes are cached (status completed, diverged or max_steps); a run
stopped by the deadline or cancelled is returned but not stored.

In flight
---------
Concurrent identical requests compute once. The first request for a key registers a *flight*
and starts a worker thread that looks the key up on disk and otherwise queues for a
simulation slot and runs `simulate`; every request for that key (the first one included) is a
*waiter* of the flight. Waiters block in their own thread and receive the flight's progress
there (so a Streamlit callback runs in its script thread), coalesced to the latest message.

Cancellation is reference-counted: a waiter whose `cancel` event is set leaves the flight; the
simulation itself is cancelled only when its last waiter has left (a waiter whose progress
callback raises, e.g. Streamlit's rerun, leaves too). A flight with no waiters is removed from
the registry at once, so a new request for the key starts afresh rather than joining a run
that is stopping. A waiter that cancels returns promptly:

- if the flight has already finished, its result, whatever its status (the work is done, and a
  completed run is cached anyway);
- if it was the last waiter, the partial trajectory the stopped simulation returns (status
  "cancelled", frames up to then), waiting at most `CANCEL_GRACE_S` for it;
- otherwise (others still wait, or the grace ran out) a minimal trajectory with status
  "cancelled" holding only the initial frame (data and initialisation, no integration).

Failures: numerical trouble never raises (`simulate` returns statuses). Any unexpected
exception in a flight is counted and raised to each of its waiters as `ServiceError`; the
flight is removed from the registry first, so the next request tries again.

Trajectories handed out are shared between callers (memory cache, joined flights): their
arrays are made read-only. Copy an array before changing it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import diskcache
import numpy as np

from .annotations import Analysis
from .blas import apply_numpy_blas_threads
from .config import Config
from .limits import Limits, get_limits
from .simulate import simulate
from .trajectory import Trajectory

ProgressFn = Callable[[float, str], None]

CACHEABLE = frozenset({"completed", "diverged", "max_steps"})
CANCEL_GRACE_S = 1.0  # how long the last cancelling waiter waits for the partial trajectory
_POLL_S = 0.05  # waiters re-check their cancel event at least this often
_MB = 1_000_000

__all__ = ["CACHEABLE", "Service", "ServiceError", "default_cache_dir", "default_service"]


class ServiceError(RuntimeError):
    """An unexpected failure while producing a trajectory (not a numerical problem)."""


def default_cache_dir() -> Path:
    """EAE_CACHE_DIR, else ~/.cache/early-alignment-explorer."""
    env = os.environ.get("EAE_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "early-alignment-explorer"


def _freeze(traj: Trajectory) -> Trajectory:
    """Make every array of a shared trajectory read-only (in place) and return it."""
    for v in traj.__dict__.values():
        if isinstance(v, np.ndarray):
            v.flags.writeable = False
        elif isinstance(v, dict):
            for x in v.values():
                if isinstance(x, np.ndarray):
                    x.flags.writeable = False
    return traj


class _Flight:
    """One in-flight production of a key, shared by its waiters. Guarded by the service lock."""

    def __init__(self, key: str, config: Config, lock: threading.RLock):
        self.key = key
        self.config = config
        self.cond = threading.Condition(lock)
        self.cancel = threading.Event()  # handed to simulate; set when no waiter is left
        self.active = 0  # waiters that have not left
        self.seq = 0  # bumped on every progress report
        self.last: tuple[float, str] = (0.0, "starting")
        self.done = False
        self.result: Trajectory | None = None
        self.error: ServiceError | None = None


class _Slots:
    """FIFO counting semaphore for simulations that tells waiting flights their position."""

    def __init__(self, limit: int):
        self.limit = max(1, limit)
        self.running = 0
        self.queue: deque[_Flight] = deque()
        self.cond = threading.Condition()

    def acquire(self, flight: _Flight, report: Callable[[float, str], None]) -> bool:
        """Wait for a slot; False if the flight was cancelled while waiting."""
        with self.cond:
            self.queue.append(flight)
            shown = -1
            try:
                while True:
                    if flight.cancel.is_set():
                        return False
                    if self.running < self.limit and self.queue[0] is flight:
                        self.queue.popleft()
                        self.running += 1
                        self.cond.notify_all()
                        return True
                    ahead = self.running + self.queue.index(flight)
                    if ahead != shown:
                        shown = ahead
                        runs = "run" if ahead == 1 else "runs"
                        report(0.0, f"queued: {ahead} {runs} ahead ({self.running} running, "
                               f"limit {self.limit} at a time)")
                    self.cond.wait(_POLL_S)
            finally:
                if flight in self.queue:
                    self.queue.remove(flight)
                    self.cond.notify_all()

    def release(self) -> None:
        with self.cond:
            self.running -= 1
            self.cond.notify_all()

    def counts(self) -> tuple[int, int]:
        with self.cond:
            return self.running, len(self.queue)


class Service:
    """Thread-safe cached access to trajectories; see the module docstring."""

    def __init__(self, cache_dir: str | Path | None = None, limits: Limits | None = None):
        self.limits = limits if limits is not None else get_limits()
        apply_numpy_blas_threads()  # concurrent runs: see dynamics/blas.py
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._disk_limit = int(self.limits.disk_cache_mb * _MB)
        self._disk = diskcache.Cache(
            str(self.cache_dir), size_limit=self._disk_limit,
            eviction_policy="least-recently-used", cull_limit=0)  # we cull: see _disk_cull
        self._mem_limit_bytes = int(self.limits.memory_cache_mb * _MB)
        self._mem_limit_entries = int(self.limits.memory_cache_entries)
        self._lock = threading.RLock()
        self._mem: OrderedDict[str, tuple[Trajectory, int]] = OrderedDict()
        self._mem_bytes = 0
        self._flights: dict[str, _Flight] = {}
        self._analyses: OrderedDict[tuple[str, str, int, float], Analysis] = OrderedDict()
        limit = self.limits.max_concurrent or os.cpu_count() or 1
        self._slots = _Slots(int(limit))
        self._counts: dict[str, int] = dict.fromkeys(
            ("memory_hits", "disk_hits", "misses", "joined", "computations", "cancelled",
             "deadlines", "errors"), 0)

    # ---------------------------------------------------------------------------- public
    def run(self, config: Config | Mapping[str, Any], progress: ProgressFn | None = None,
            cancel: threading.Event | None = None) -> Trajectory:
        """The trajectory for `config`: from memory, disk, a run in flight, or computed.

        `progress(fraction, text)` is called in the caller's thread; `cancel` set by another
        thread makes this call return promptly (see the module docstring). Raises
        `ServiceError` for an unexpected failure, `ConfigError` for an invalid mapping.
        """
        config = self._canonical(config)
        key = result_key(config)
        with self._lock:
            hit = self._memory_hit(key)
            if hit is not None:
                return hit
            flight = self._flights.get(key)
            if flight is None:
                flight = _Flight(key, config, self._lock)
                self._flights[key] = flight
                threading.Thread(target=self._work, args=(flight,), daemon=True,
                                 name=f"eae-flight-{key[:8]}").start()
            else:
                self._counts["joined"] += 1
            flight.active += 1
        return self._wait(flight, progress, cancel)

    def _memory_hit(self, key: str) -> Trajectory | None:
        """The in-memory result for `key`, counted as a hit (call with the lock held)."""
        hit = self._mem_get(key)
        if hit is not None:
            self._counts["memory_hits"] += 1
        return hit

    def peek(self, config: Config | Mapping[str, Any]) -> Trajectory | None:
        """The cached trajectory (memory, else disk) or None; never computes or waits."""
        config = self._canonical(config)
        key = result_key(config)
        with self._lock:
            hit = self._memory_hit(key)
            if hit is not None:
                return hit
        traj = self._disk_get(key)
        if traj is not None:
            with self._lock:
                self._counts["disk_hits"] += 1
                self._mem_put(key, traj)
        return traj

    def analyse(self, traj: Trajectory) -> Analysis:
        """Theory and phases for a trajectory (`dynamics.analysis.analyse`), memoised per cache
        key, status and length. Empty `Analysis()` while that module does not exist."""
        mkey = (traj.config.cache_key(), traj.status, traj.n_frames,
                float(traj.t[-1]) if traj.n_frames else 0.0)
        with self._lock:
            got = self._analyses.get(mkey)
            if got is not None:
                self._analyses.move_to_end(mkey)
                return got
        try:
            from dynamics.analysis import analyse
        except ModuleNotFoundError as e:
            if e.name not in ("dynamics.analysis", "dynamics"):
                raise ServiceError(f"The analysis module could not be loaded: {e}") from e
            result = Analysis()
        except ImportError as e:
            raise ServiceError(f"The analysis module could not be loaded: {e}") from e
        else:
            try:
                result = analyse(traj)
            except Exception as e:
                with self._lock:
                    self._counts["errors"] += 1
                raise ServiceError(f"The analysis of this run failed unexpectedly: "
                                   f"{type(e).__name__}: {e}") from e
        with self._lock:
            self._analyses[mkey] = result
            while len(self._analyses) > max(1, self._mem_limit_entries):
                self._analyses.popitem(last=False)
        return result

    def stats(self) -> dict[str, int | float]:
        """Counters since this Service started, and current sizes.

        memory_hits / disk_hits: requests (run or peek) served from memory / flights served
        from disk; misses: flights that found nothing on disk; joined: requests that waited on
        an identical flight; computations: simulations started; cancelled: requests that
        returned a cancelled trajectory; deadlines: runs stopped by the deadline; errors:
        unexpected failures; running / queued: simulations holding / waiting for a slot;
        in_flight: keys being produced; memory_* / disk_*: sizes and bounds (bytes).
        """
        running, queued = self._slots.counts()
        with self._lock:
            out: dict[str, int | float] = dict(self._counts)
            out.update(memory_entries=len(self._mem), memory_bytes=self._mem_bytes,
                       in_flight=len(self._flights))
        out.update(running=running, queued=queued, max_concurrent=self._slots.limit,
                   memory_limit_entries=self._mem_limit_entries,
                   memory_limit_bytes=self._mem_limit_bytes,
                   disk_bytes=self.disk_bytes(), disk_entries=self._disk_len(),
                   disk_limit_bytes=self._disk_limit)
        return out

    def disk_bytes(self) -> int:
        """Size of the disk cache (database pages plus value files), as diskcache counts it."""
        try:
            return int(self._disk.volume())
        except Exception:
            return 0

    def clear_memory(self) -> None:
        """Drop the in-process cache and memoised analyses (the disk cache stays)."""
        with self._lock:
            self._mem.clear()
            self._mem_bytes = 0
            self._analyses.clear()

    def close(self) -> None:
        """Close the disk cache's connection in this thread (the service stays usable)."""
        self._disk.close()

    # ---------------------------------------------------------------------------- waiting
    @staticmethod
    def _canonical(config: Config | Mapping[str, Any]) -> Config:
        if isinstance(config, Config):
            return config
        return Config.from_dict(config)

    def _wait(self, flight: _Flight, progress: ProgressFn | None,
              cancel: threading.Event | None) -> Trajectory:
        seen = 0
        left = False
        try:
            while True:
                with self._lock:
                    if not flight.done and flight.seq == seen and not _is_set(cancel):
                        flight.cond.wait(_POLL_S)
                    done, seq, last = flight.done, flight.seq, flight.last
                if seq != seen:
                    seen = seq
                    if progress is not None:
                        progress(*last)
                if done:
                    left = True
                    self._leave(flight)
                    if flight.error is not None:
                        raise flight.error
                    assert flight.result is not None
                    return flight.result
                if _is_set(cancel):
                    left = True
                    was_last = self._leave(flight)
                    return self._cancelled(flight, was_last)
        finally:
            if not left:  # the progress callback raised (e.g. a Streamlit rerun)
                self._leave(flight)

    def _leave(self, flight: _Flight) -> bool:
        """One waiter leaves; the last one out cancels the simulation. True if it was last."""
        with self._lock:
            flight.active -= 1
            if flight.active > 0 or flight.done:
                return False
            flight.cancel.set()
            if self._flights.get(flight.key) is flight:
                del self._flights[flight.key]
            return True

    def _cancelled(self, flight: _Flight, was_last: bool) -> Trajectory:
        if was_last:
            with self._lock:
                end = time.monotonic() + CANCEL_GRACE_S
                while not flight.done and time.monotonic() < end:
                    flight.cond.wait(min(_POLL_S, max(0.0, end - time.monotonic())))
        with self._lock:
            result = flight.result if flight.done else None
        if result is None:
            result = self._minimal_cancelled(flight.config)
        if result.status == "cancelled":
            with self._lock:
                self._counts["cancelled"] += 1
        return result

    def _minimal_cancelled(self, config: Config) -> Trajectory:
        """The initial frame only, status cancelled: built by `simulate` with a set cancel flag,
        so it has the same shape as any other trajectory; no integration step is taken."""
        try:
            traj = simulate(config, cancel=lambda: True)
        except Exception as e:
            with self._lock:
                self._counts["errors"] += 1
            raise ServiceError(f"Could not build the initial state of this run: "
                               f"{type(e).__name__}: {e}") from e
        return dataclasses.replace(
            traj, message="Cancelled before the run finished; only the initial state is shown.")

    # ---------------------------------------------------------------------------- worker
    def _work(self, flight: _Flight) -> None:
        result: Trajectory | None = None
        error: ServiceError | None = None
        try:
            result = self._disk_get(flight.key)
            if result is not None:
                with self._lock:
                    self._counts["disk_hits"] += 1
            else:
                with self._lock:
                    self._counts["misses"] += 1
                result = self._compute(flight)
        except BaseException as e:
            with self._lock:
                self._counts["errors"] += 1
            error = ServiceError(f"The simulation failed unexpectedly: {type(e).__name__}: {e}")
            error.__cause__ = e
        finally:
            if result is not None:
                _freeze(result)
            with self._lock:
                if result is not None and result.status in CACHEABLE:
                    self._mem_put(flight.key, result)
                if self._flights.get(flight.key) is flight:
                    del self._flights[flight.key]
                flight.result, flight.error, flight.done = result, error, True
                flight.cond.notify_all()

    def _compute(self, flight: _Flight) -> Trajectory | None:
        """Queue for a slot, simulate, store a deterministic result on disk. None if every
        waiter left while the flight was queued."""

        def report(frac: float, text: str) -> None:
            with self._lock:
                flight.last = (float(frac), str(text))
                flight.seq += 1
                flight.cond.notify_all()

        if not self._slots.acquire(flight, report):
            return None
        try:
            with self._lock:
                self._counts["computations"] += 1
            traj = self._simulate(flight.config, report, flight.cancel)
        finally:
            self._slots.release()
        if traj.status == "deadline":
            with self._lock:
                self._counts["deadlines"] += 1
        if traj.status in CACHEABLE:
            self._disk_put(flight.key, traj)
        return traj

    def _simulate(self, config: Config, progress: ProgressFn,
                  cancel: threading.Event) -> Trajectory:
        """The computation itself (a seam for tests that need it to fail)."""
        apply_numpy_blas_threads()  # still held (see dynamics/blas.py)
        return simulate(config, progress, deadline=self.limits.deadline_s, cancel=cancel)

    # ---------------------------------------------------------------------------- caches
    def _mem_get(self, key: str) -> Trajectory | None:
        item = self._mem.get(key)
        if item is None:
            return None
        self._mem.move_to_end(key)
        return item[0]

    def _mem_put(self, key: str, traj: Trajectory) -> None:
        size = int(traj.nbytes())
        old = self._mem.pop(key, None)
        if old is not None:
            self._mem_bytes -= old[1]
        if size > self._mem_limit_bytes or self._mem_limit_entries < 1:
            return
        self._mem[key] = (traj, size)
        self._mem_bytes += size
        while (len(self._mem) > self._mem_limit_entries
               or self._mem_bytes > self._mem_limit_bytes):
            _, (_, s) = self._mem.popitem(last=False)
            self._mem_bytes -= s

    def _disk_get(self, key: str) -> Trajectory | None:
        try:
            blob = self._disk.get(key, default=None, retry=True)
        except Exception:
            return None
        if blob is None:
            return None
        try:
            return Trajectory.from_bytes(blob)
        except Exception:  # unreadable (older format, damaged): drop it and recompute
            with contextlib.suppress(Exception):
                self._disk.delete(key, retry=True)
            return None

    def _disk_put(self, key: str, traj: Trajectory) -> None:
        """Store a blob and cull least-recently-used entries until the cache is within its
        byte bound. A blob larger than the bound is not stored. Disk trouble is not fatal."""
        try:
            blob = traj.to_bytes()
            if len(blob) >= self._disk_limit:
                return
            self._disk.set(key, blob, retry=True)
            self._disk_cull()
        except Exception:
            return

    def _disk_cull(self) -> None:
        """Delete least-recently-used entries one at a time until the volume fits the bound.

        diskcache's own culling removes ten entries at a time; with a few large blobs that
        empties the cache, so it is switched off (cull_limit=0) and done here instead. The
        query uses diskcache's access-time index (updated on every get under this policy).
        """
        select = "SELECT key FROM Cache ORDER BY access_time LIMIT 1"
        while self._disk.volume() > self._disk_limit:
            rows = self._disk._sql(select).fetchall()
            if not rows:
                return
            self._disk.delete(rows[0][0], retry=True)

    def _disk_len(self) -> int:
        try:
            return len(self._disk)
        except Exception:
            return 0


def _is_set(cancel: threading.Event | None) -> bool:
    return cancel is not None and cancel.is_set()


_default: Service | None = None
_default_lock = threading.Lock()


def result_key(config: Config) -> str:
    """Cache key of a result: the config's key plus the two limits that change what
    `simulate` records (the step cap and the full-W budget), read as simulate reads them."""
    lim = get_limits()
    extra = f"|max_steps={lim.max_steps}|full_w={lim.full_w_budget_mb!r}"
    return hashlib.sha256((config.cache_key() + extra).encode()).hexdigest()


def default_service() -> Service:
    """The process-wide Service (cache dir from EAE_CACHE_DIR, limits from the environment)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Service()
        return _default
