"""The cached service between pages (or the CLI, or sweeps) and `simulate`: one computation
per result, bounded in time, handed out to every caller that wants it.

A request goes

    config → `result_key` → memory, then disk (`dynamics.cache.ResultCache`)
           → a run in flight for the key, joined → else computed (`simulate`), once a slot of
             the admission is free (`dynamics.admission.RunQueue`, handed in: the server hands
             its session-fair queue, `runtime.queue.FairQueue`)

Only final outcomes are cached (`dynamics.cache.keeps`); a run stopped by the deadline or
cancelled is returned but not stored, and so is a provisional one (computed with the kernels
uncompiled while the server compiled them, `dynamics.simulate`).

Deadline
--------
A simulation holds its slot for at most the deadline plus `DEADLINE_GRACE_S`: then the slot
lapses (the next queued run starts), and its waiters return a trajectory with status
"deadline" holding the initial frame, leaving the flight (so it is cancelled) even if the
kernel has not yet noticed its deadline.

In flight
---------
Concurrent identical requests compute once. The first request for a key registers a *flight*
and starts a worker thread that looks the key up on disk and otherwise queues for a
simulation slot and runs `simulate`; every request for that key (the first one included) is a
*waiter* of the flight. Waiters block in their own thread and receive the flight's progress
there (so a Streamlit callback runs in its script thread), coalesced to the latest message.

Cancellation is reference-counted: a waiter whose `cancel` flag is set leaves the flight; the
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

Sessions and speculation
------------------------
A request may name its `session` (a page passes its Streamlit session id): a flight knows the
sessions waiting for it (`sessions`, which a session-fair admission reads), and
`end_session(session)` makes that session's waiters leave, which cancels the simulations
nobody else waits for, and drops from memory the results of uploaded data that no other
session asked for. A request marked `speculative` (the server's background runs,
`runtime.speculation`) is counted apart, and `pressing()` tells a speculator whether a
request that is not speculative is being produced (so it can step aside).

Failures: numerical trouble never raises (`simulate` returns statuses). Any unexpected
exception in a flight is counted and raised to each of its waiters as `ServiceError`; the
flight is removed from the registry first, so the next request tries again.

Trajectories handed out are shared between callers (memory cache, joined flights): their
arrays are made read-only. Copy an array before changing it.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .admission import POLL_S, Flag, RunQueue, simulation_slots
from .annotations import Analysis
from .blas import apply_numpy_blas_threads
from .cache import ResultCache, default_cache_dir, freeze, keeps, result_key
from .config import Config
from .cost import estimate_seconds
from .limits import Limits, get_limits
from .simulate import simulate
from .status import Status
from .trajectory import Trajectory

ProgressFn = Callable[[float, str], None]

CANCEL_GRACE_S = 1.0  # how long the last cancelling waiter waits for the partial trajectory
DEADLINE_GRACE_S = 2.0  # a slot lapses this long after its run's deadline

__all__ = ["Service", "ServiceError", "default_cache_dir", "default_service", "result_key"]


class ServiceError(RuntimeError):
    """An unexpected failure while producing a trajectory (not a numerical problem)."""


class _Flight:
    """One in-flight production of a key, shared by its waiters. Guarded by the service lock
    (`sessions` is replaced whole and read unlocked by the admission)."""

    def __init__(self, key: str, config: Config, lock: threading.RLock, speculative: bool):
        self.key = key
        self.config = config
        self.cond = threading.Condition(lock)
        self.cancel = threading.Event()  # handed to simulate; set when no waiter is left
        self.active = 0  # waiters that have not left
        self.seq = 0  # bumped on every progress report
        self.last: tuple[float, str] = (0.0, "starting")
        self.hard_end: float | None = None  # monotonic time the slot lapses (once running)
        self.overran = False  # its waiters gave up at hard_end
        self.done = False
        self.result: Trajectory | None = None
        self.error: ServiceError | None = None
        self.speculative = speculative  # started by a background request, not a page's
        self.by_session: dict[str, int] = {}  # waiters per session
        self.sessions: frozenset[str] = frozenset()
        self.estimate_s = estimate_seconds(config)  # `dynamics.cost`, for the queue's wait
        self.started: float | None = None  # monotonic time it took a slot

    def join(self, session: str | None, delta: int) -> None:
        """A waiter of `session` joins (+1) or leaves (-1) (service lock held)."""
        if session is None:
            return
        left = self.by_session.get(session, 0) + delta
        if left > 0:
            self.by_session[session] = left
        else:
            self.by_session.pop(session, None)
        self.sessions = frozenset(self.by_session)


class Service:
    """Thread-safe cached access to trajectories; see the module docstring. `admission`: the
    slots simulations queue for (default: a `RunQueue` of `limits.max_concurrent`, else the
    CPU count)."""

    def __init__(self, cache_dir: str | Path | None = None, limits: Limits | None = None,
                 admission: RunQueue | None = None):
        self.limits = limits if limits is not None else get_limits()
        apply_numpy_blas_threads()  # concurrent runs: see dynamics/blas.py
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache = ResultCache(self.cache_dir, self.limits)
        self.disk = self.cache.disk
        self.admission = admission if admission is not None else \
            RunQueue(simulation_slots(self.limits.max_concurrent))
        self._lock = threading.RLock()
        self._flights: dict[str, _Flight] = {}
        self._counts: dict[str, int] = dict.fromkeys(
            ("misses", "joined", "computations", "cancelled", "deadlines", "errors",
             "speculative_computations", "sessions_ended"), 0)
        self._session_leave: dict[str, set[threading.Event]] = {}  # session -> its waiters
        self._upload_sessions: dict[str, set[str]] = {}  # key of an upload's run -> sessions

    # ---------------------------------------------------------------------------- public
    def run(self, config: Config | Mapping[str, Any], progress: ProgressFn | None = None,
            cancel: Flag | None = None, session: str | None = None, *,
            speculative: bool = False) -> Trajectory:
        """The trajectory for `config`: from memory, disk, a run in flight, or computed.

        `progress(fraction, text)` is called in the caller's thread; `cancel` set by another
        thread makes this call return promptly (see the module docstring). `session`: the
        caller's session (`end_session`, the admission's fairness). `speculative`: a
        background request (counted apart; not `pressing`). Raises `ServiceError` for an
        unexpected failure, `ConfigError` for an invalid mapping.
        """
        config = self._canonical(config)
        key = result_key(config)
        with self._lock:
            self._note_upload(key, config, session)
            hit = self.cache.memory(key)
            if hit is not None:
                return hit
            flight = self._flights.get(key)
            fresh = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight(key, config, self._lock, speculative)
            else:
                self._counts["joined"] += 1
            flight.active += 1
            leave = threading.Event()
            if session is not None:  # before its worker can queue for a slot
                flight.join(session, +1)
                self._session_leave.setdefault(session, set()).add(leave)
            if fresh:
                threading.Thread(target=self._work, args=(flight,), daemon=True,
                                 name=f"eae-flight-{key[:8]}").start()
        if session is None:
            return self._wait(flight, progress, cancel)
        try:
            return self._wait(flight, progress, _Either(cancel, leave))
        finally:
            with self._lock:
                waiting = self._session_leave.get(session)
                if waiting is not None:
                    waiting.discard(leave)
                    if not waiting:
                        del self._session_leave[session]
                flight.join(session, -1)

    def peek(self, config: Config | Mapping[str, Any],
             session: str | None = None) -> Trajectory | None:
        """The cached trajectory (memory, else disk) or None; never computes or waits."""
        config = self._canonical(config)
        key = result_key(config)
        with self._lock:
            self._note_upload(key, config, session)
            hit = self.cache.memory(key)
        if hit is not None:
            return hit
        traj = self.cache.load(key)
        if traj is not None:
            freeze(traj)
            self.cache.remember(key, traj)
        return traj

    def known(self, config: Config) -> bool:
        """Whether `config`'s result is cached (memory, or a file on disk) or being produced:
        nothing to start for it."""
        key = result_key(config)
        with self._lock:
            if key in self._flights:
                return True
        return self.cache.in_memory(key) or self.cache.on_disk(key)

    def analyse(self, traj: Trajectory) -> Analysis:
        """Theory and phases for a trajectory (`dynamics.analysis.analyse`), memoised per
        trajectory key (`Trajectory.key`: cache key, status, length, provisional)."""
        try:
            return self.cache.analysis(traj)
        except Exception as e:
            with self._lock:
                self._counts["errors"] += 1
            raise ServiceError(f"The analysis of this run failed unexpectedly: "
                               f"{type(e).__name__}: {e}") from e

    def pressing(self, other_than: str | None = None) -> bool:
        """Whether a request that is not speculative is being produced (for a key other than
        `other_than`)."""
        with self._lock:
            return any(not f.speculative and k != other_than for k, f in self._flights.items())

    # ---------------------------------------------------------------------------- sessions
    def _note_upload(self, key: str, config: Config, session: str | None) -> None:
        """Remember which sessions asked for the run of an uploaded data set (lock held)."""
        if session is not None and config.data.kind == "array":
            self._upload_sessions.setdefault(key, set()).add(session)

    def end_session(self, session: str) -> int:
        """The session ended: its waiters leave (their simulations stop unless another
        session waits for them), and the memory cache forgets the runs of uploaded data that
        only this session asked for (their data are the session's). How many waiters left."""
        with self._lock:
            leaving = list(self._session_leave.pop(session, ()))
            for key, sessions in list(self._upload_sessions.items()):
                sessions.discard(session)
                if not sessions:
                    del self._upload_sessions[key]
                    if key not in self._flights:
                        self.cache.forget(key)
            self._counts["sessions_ended"] += 1
        for ev in leaving:
            ev.set()
        return len(leaving)

    def in_flight(self, config: Config | Mapping[str, Any]) -> bool:
        """Whether the run for `config` is being produced now (joining it costs nothing)."""
        key = result_key(self._canonical(config))
        with self._lock:
            return key in self._flights

    def queue_position(self, config: Config | Mapping[str, Any]) -> tuple[int, float] | None:
        """(runs ahead, expected wait in s) of the flight for `config` while it is queued,
        else None."""
        key = result_key(self._canonical(config))
        with self._lock:
            flight = self._flights.get(key)
        return None if flight is None else self.admission.position(flight)

    def stats(self) -> dict[str, int | float]:
        """Counters since this Service started, and current sizes.

        memory_hits / disk_hits: requests (run or peek) served from memory / flights and peeks
        served from disk; misses: flights that found nothing on disk; joined: requests that
        waited on an identical flight; computations: simulations started for requests;
        speculative_computations: simulations started for speculative requests (not in
        computations); cancelled: requests that returned a cancelled trajectory; deadlines:
        runs stopped by the deadline (or whose slot lapsed at it); errors: unexpected
        failures; running / queued: simulations holding / waiting for a slot; overrunning:
        simulations past their lapsed slot, still stopping; in_flight: keys being produced;
        memory_* / disk_*: sizes and bounds (bytes; disk_bytes includes partial writes and
        files set aside).
        """
        running, queued, overrunning = self.admission.counts()
        with self._lock:
            out: dict[str, int | float] = dict(self._counts)
            out["in_flight"] = len(self._flights)
        out.update(self.cache.sizes())
        out.update(running=running, queued=queued, overrunning=overrunning,
                   max_concurrent=self.admission.limit)
        return out

    def disk_bytes(self) -> int:
        """Size of the disk cache: entries, partial writes and files set aside."""
        return self.cache.disk_bytes()

    def cache_health(self) -> dict[str, Any]:
        """What the disk cache repaired since this Service started: ok (nothing), usable,
        removed_unreadable (entries that did not parse), removed_partial (files of killed
        writes), legacy_moved_aside (an old diskcache database), io_errors, and the last few
        problems as sentences (each also logged as a warning)."""
        return self.cache.health()

    def clear_memory(self) -> None:
        """Drop the in-process cache and memoised analyses (the disk cache stays)."""
        self.cache.clear_memory()

    # ---------------------------------------------------------------------------- waiting
    @staticmethod
    def _canonical(config: Config | Mapping[str, Any]) -> Config:
        if isinstance(config, Config):
            return config
        return Config.from_dict(config)

    def _wait(self, flight: _Flight, progress: ProgressFn | None,
              cancel: Flag | None) -> Trajectory:
        seen = 0
        left = False
        try:
            while True:
                # read outside the lock: a sweep's cancel flag is a Dask event whose first read
                # needs the worker's event loop, which may itself be waiting for this lock
                # (`stats()` run there by `client.run`): read inside, the two deadlocked
                stop = _is_set(cancel)
                with self._lock:
                    if not flight.done and flight.seq == seen and not stop:
                        flight.cond.wait(POLL_S)
                    done, seq, last = flight.done, flight.seq, flight.last
                    lapsed = (not done and flight.hard_end is not None
                              and time.monotonic() >= flight.hard_end)
                if lapsed:  # the kernel overran its deadline: do not wait for it any longer
                    left = True
                    self._leave(flight)
                    return self._overran(flight)
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
                    flight.cond.wait(min(POLL_S, max(0.0, end - time.monotonic())))
        with self._lock:
            result = flight.result if flight.done else None
        if result is None:
            result = self._minimal_cancelled(flight.config)
        if result.status == "cancelled":
            with self._lock:
                self._counts["cancelled"] += 1
        return result

    def _overran(self, flight: _Flight) -> Trajectory:
        """What a waiter returns when the slot lapsed before the simulation returned: its
        result if it has just finished, else the initial frame with status deadline."""
        with self._lock:
            if flight.done and flight.result is not None:
                return flight.result
            first = not flight.overran
            flight.overran = True
            if first:
                self._counts["deadlines"] += 1
        limit = self.limits.deadline_s
        return self._minimal(flight.config, Status.DEADLINE,
                             f"Stopped by the time limit ({limit:g} s, the server's deadline_s) "
                             f"before the run finished; only the initial state is shown. "
                             f"{Status.DEADLINE.fix}")

    def _minimal_cancelled(self, config: Config) -> Trajectory:
        return self._minimal(config, Status.CANCELLED,
                             "Cancelled before the run finished; only the initial state is "
                             "shown.")

    def _minimal(self, config: Config, status: Status, message: str) -> Trajectory:
        """The initial frame only: built by `simulate` with a set cancel flag, so it has the
        same shape as any other trajectory; no integration step is taken."""
        try:
            traj = simulate(config, cancel=lambda: True)
        except Exception as e:
            with self._lock:
                self._counts["errors"] += 1
            raise ServiceError(f"Could not build the initial state of this run: "
                               f"{type(e).__name__}: {e}") from e
        return dataclasses.replace(traj, status=status, message=message)

    # ---------------------------------------------------------------------------- worker
    def _work(self, flight: _Flight) -> None:
        result: Trajectory | None = None
        error: ServiceError | None = None
        try:
            result = self.cache.load(flight.key)
            if result is None:
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
                freeze(result)
            with self._lock:
                if result is not None and keeps(result):
                    self.cache.remember(flight.key, result)
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

        hard_end = self.admission.take(flight, report,
                                       self.limits.deadline_s + DEADLINE_GRACE_S, flight.cancel)
        if hard_end is None:
            return None
        try:
            with self._lock:
                self._counts["speculative_computations" if flight.speculative
                             else "computations"] += 1
                flight.hard_end = hard_end
            traj = self._simulate(flight.config, report, flight.cancel)
        finally:
            self.admission.release(flight)
        if traj.status == Status.DEADLINE:
            with self._lock:
                if not flight.overran:
                    self._counts["deadlines"] += 1
        if keeps(traj) and not self.cache.store(flight.key, traj):
            with self._lock:
                self._counts["errors"] += 1
        return traj

    def _simulate(self, config: Config, progress: ProgressFn,
                  cancel: threading.Event) -> Trajectory:
        """The computation itself (a seam for tests that need it to fail)."""
        apply_numpy_blas_threads()  # still held (see dynamics/blas.py)
        return simulate(config, progress, deadline=self.limits.deadline_s, cancel=cancel)


def _is_set(cancel: Flag | None) -> bool:
    return cancel is not None and cancel.is_set()


class _Either:
    """Set when either flag is (a caller's cancel, or its session's end)."""

    def __init__(self, a: Flag | None, b: threading.Event):
        self.a, self.b = a, b

    def is_set(self) -> bool:
        return self.b.is_set() or (self.a is not None and self.a.is_set())


@functools.cache
def default_service() -> Service:
    """The process-wide Service of a process without a server runtime (the CLI, reproduce,
    the notebook, Dask workers): cache dir from EAE_CACHE_DIR, limits from the environment.
    A server's runtime builds its own (`runtime.Runtime`, with its session-fair queue)."""
    return Service()
