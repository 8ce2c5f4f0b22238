"""The cached service layer between pages (or the CLI, or sweeps) and `simulate`.

One `Service` per process (pages hold it in ``st.cache_resource``; `default_service()` is the
process-wide one). A request goes

    config → cache key → in-process LRU (bounded in entries and bytes)
           → persistent disk cache (`dynamics.diskstore`: a directory of trajectory files,
             bounded in bytes, least-recently-used, shared by processes, never unpickled)
           → compute (`simulate`, behind a global limit on simultaneous simulations)

Only final outcomes are cached (`Status.cacheable`: completed, diverged or max_steps); a run
stopped by the deadline or cancelled is returned but not stored, and so is a provisional one
(computed with the kernels uncompiled while the server compiled them, `dynamics.simulate`). A
disk entry that does not parse, or holds another configuration's result, is a miss and is
deleted; such repairs are logged and counted (`cache_health()`, shown on the status page).

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

Queue and sessions
------------------
A request may name its `session` (a page passes its Streamlit session id). A session holds at
most one running simulation: a flight one of whose sessions already runs another waits in the
queue (FIFO among the flights that may start). While a flight waits, its waiters get "queued:
…" progress messages (`QUEUED`) with their place and the expected wait — at once, at every
change of place and at least every `QUEUE_REPORT_S` — the wait computed from the
`dynamics.cost` estimates of the runs ahead and of what remains of the running ones.
`end_session(session)` (the page calls it when the session ends) makes that session's waiters
leave, which cancels the simulations nobody else waits for, and drops from the memory cache
the results of uploaded data that no other session asked for.

Prefetch
--------
`prefetch(configs)` runs speculative requests (e.g. the neighbouring values of the control a
user is moving, the runs of a scrub family) in background workers — as many as the CPUs the
kernels may use (`PREFETCH_WORKERS`), in parallel: the kernels release the interpreter lock —
through `run` (so every limit holds: the slots, the deadline, the caches), while no page's
simulation runs or waits. A new `prefetch` call replaces the owner's pending list (the user
moved on); a request of a page (`run`) for another key, or a `prefetch` call without its key,
cancels the speculative runs in progress, so a speculative run never delays a real one by
more than one progress chunk (a family's run cancelled so is pending again). Each *owner* (a
session's scrub family, the Explorer's neighbouring settings) has its own pending list,
replaced by its next call; owners take turns, so one visitor's family does not starve
another's. A scrub family (an owner named
"family:…") is something a visitor waits for, so it cannot starve behind a class: when its
next run has waited `FAMILY_STARVE_S` while pages kept the server busy, it runs anyway, one
such run at a time, and a page's request does not cancel it (family runs are small: the page
offers no family for a run that took over `ui.family.MAX_MEMBER_S`). At most `PREFETCH_MAX`
configs per call (a `limit` can ask for more) and `PREFETCH_OWNERS` owners are pending; a
config estimated above `click_to_run_s` is never speculated (it waits for a visitor's click).

Failures: numerical trouble never raises (`simulate` returns statuses). Any unexpected
exception in a flight is counted and raised to each of its waiters as `ServiceError`; the
flight is removed from the registry first, so the next request tries again.

Trajectories handed out are shared between callers (memory cache, joined flights): their
arrays are made read-only. Copy an array before changing it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .analysis import analyse
from .annotations import Analysis
from .blas import apply_numpy_blas_threads
from .config import Config
from .cost import describe_seconds, estimate_seconds, remaining_seconds
from .diskstore import DiskStore
from .limits import Limits, get_limits, get_settings
from .simulate import simulate
from .status import Status
from .trajectory import Trajectory

ProgressFn = Callable[[float, str], None]

CANCEL_GRACE_S = 1.0  # how long the last cancelling waiter waits for the partial trajectory
DEADLINE_GRACE_S = 2.0  # a slot lapses this long after its run's deadline
_POLL_S = 0.05  # waiters re-check their cancel event at least this often
PREFETCH_MAX = 8  # pending speculative configs per owner, by default (the first kept)
PREFETCH_OWNERS = 64  # owners with pending speculation (the oldest dropped first)
PREFETCH_WORKERS = max(1, min(4, os.cpu_count() or 1))  # speculative runs at once (idle server)
FAMILY = "family:"  # owners named so are scrub families (`FAMILY_STARVE_S`)
FAMILY_STARVE_S = 2.0  # a family's next run waits at most this long behind pages' runs
QUEUED = "queued"  # progress messages of a flight waiting for a slot start with this
QUEUE_REPORT_S = 1.0  # a queued flight's place and expected wait are re-sent at least this often
_MB = 1_000_000

__all__ = ["Service", "ServiceError", "default_cache_dir", "default_service"]


class ServiceError(RuntimeError):
    """An unexpected failure while producing a trajectory (not a numerical problem)."""


def default_cache_dir() -> Path:
    """The cache_dir setting (EAE_CACHE_DIR), else ~/.cache/early-alignment-explorer."""
    configured = get_settings().cache_dir
    return Path(configured) if configured else Path.home() / ".cache" / "early-alignment-explorer"


def _cacheable(status: str) -> bool:
    try:
        return Status(status).cacheable
    except ValueError:
        return False


def _keeps(traj: Trajectory) -> bool:
    """Whether a result is stored: a final outcome, computed by the compiled kernels (a
    provisional run, computed while they compiled, may differ in the last bits)."""
    return _cacheable(traj.status) and not traj.meta.get("provisional")


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
        self.hard_end: float | None = None  # monotonic time the slot lapses (once running)
        self.overran = False  # its waiters gave up at hard_end
        self.done = False
        self.result: Trajectory | None = None
        self.error: ServiceError | None = None
        self.speculative = False  # started by `prefetch`, not by a page's request
        self.by_session: dict[str, int] = {}  # waiters per session
        self.sessions: frozenset[str] = frozenset()  # its keys (replaced whole, read unlocked)
        self.estimate_s = estimate_seconds(config)  # `dynamics.cost`, for the queue's wait
        self.started: float | None = None  # monotonic time it took a slot


@dataclasses.dataclass
class _Spec:
    """A speculative run a worker took: its key, owner, config, what to call when it is done,
    its cancel event and whether a page's request may cancel it (`protected`: a starved
    family's run may not; a family's run it cancels is `preempted` and pending again)."""

    key: str
    owner: str
    config: Config
    done: Callable[[Trajectory], None] | None
    cancel: threading.Event
    protected: bool
    preempted: bool = False  # cancelled for a page's request: pending again


class _Slots:
    """FIFO counting semaphore for simulations that tells waiting flights their position. A
    slot lapses `hold_s` after it was taken, whether or not its holder has released it."""

    def __init__(self, limit: int):
        self.limit = max(1, limit)
        self.holders: dict[_Flight, float] = {}  # flight -> monotonic time its slot lapses
        self.queue: deque[_Flight] = deque()
        self.cond = threading.Condition()

    @property
    def running(self) -> int:
        """Slots held and not lapsed (call with `cond` held)."""
        now = time.monotonic()
        return sum(1 for end in self.holders.values() if end > now)

    def acquire(self, flight: _Flight, report: Callable[[float, str], None],
                hold_s: float) -> float | None:
        """Wait for a slot; the monotonic time it lapses, or None if the flight was cancelled
        while waiting. Reports the place and expected wait (see the module docstring)."""
        with self.cond:
            self.queue.append(flight)
            shown: tuple[int, bool] | None = None
            last = 0.0
            try:
                while True:
                    if flight.cancel.is_set():
                        return None
                    running = self.running
                    busy = self._busy_sessions()
                    if running < self.limit and self._first_eligible(busy) is flight:
                        self.queue.remove(flight)
                        now = time.monotonic()
                        end = now + hold_s
                        flight.started = now
                        self.holders[flight] = end
                        self.cond.notify_all()
                        return end
                    ahead = running + self.queue.index(flight)
                    own = bool(flight.sessions & busy)
                    now = time.monotonic()
                    if (ahead, own) != shown or now - last >= QUEUE_REPORT_S:
                        shown, last = (ahead, own), now
                        report(0.0, self._message(flight, ahead, running, own))
                    self.cond.wait(_POLL_S)
            finally:
                if flight in self.queue:
                    self.queue.remove(flight)
                    self.cond.notify_all()

    def _busy_sessions(self) -> frozenset[str]:
        """Sessions of the flights holding a slot that has not lapsed (call with `cond`)."""
        now = time.monotonic()
        out: frozenset[str] = frozenset()
        for f, end in self.holders.items():
            if end > now:
                out |= f.sessions
        return out

    def _first_eligible(self, busy: frozenset[str]) -> _Flight | None:
        """The first queued flight none of whose sessions runs another simulation."""
        return next((f for f in self.queue if not (f.sessions & busy)), None)

    def expected_wait(self, flight: _Flight) -> float:
        """Seconds until `flight` gets a slot if every queued run takes its estimate: the slots
        free up as the running runs finish (what remains of each from its estimate and its
        progress so far, `cost.remaining_seconds`), then the queued ones ahead take them in
        order (call with `cond` held)."""
        now = time.monotonic()
        free = [remaining_seconds(f.estimate_s, now - (f.started or now), f.last[0])
                for f, end in self.holders.items() if end > now]
        free += [0.0] * max(0, self.limit - len(free))
        heapq.heapify(free)
        for f in self.queue:
            t = heapq.heappop(free)
            if f is flight:
                return t
            heapq.heappush(free, t + f.estimate_s)
        return 0.0

    def _message(self, flight: _Flight, ahead: int, running: int, own: bool) -> str:
        runs = "run" if ahead == 1 else "runs"
        wait = describe_seconds(self.expected_wait(flight))
        why = "; this page's other run goes first" if own else ""
        return (f"{QUEUED}: {ahead} {runs} ahead ({running} running, limit {self.limit} at a "
                f"time){why}; expected wait {wait}")

    def release(self, flight: _Flight) -> None:
        with self.cond:
            self.holders.pop(flight, None)
            self.cond.notify_all()

    def counts(self) -> tuple[int, int, int]:
        """(running, queued, overrunning: lapsed slots whose simulation has not returned)."""
        with self.cond:
            running = self.running
            return running, len(self.queue), len(self.holders) - running


class Service:
    """Thread-safe cached access to trajectories; see the module docstring."""

    def __init__(self, cache_dir: str | Path | None = None, limits: Limits | None = None):
        self.limits = limits if limits is not None else get_limits()
        apply_numpy_blas_threads()  # concurrent runs: see dynamics/blas.py
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._disk_limit = int(self.limits.disk_cache_mb * _MB)
        # start-up repair: old database moved aside, abandoned partial writes deleted
        self.disk = DiskStore(self.cache_dir, self._disk_limit)
        self._mem_limit_bytes = int(self.limits.memory_cache_mb * _MB)
        self._mem_limit_entries = int(self.limits.memory_cache_entries)
        self._lock = threading.RLock()
        self._mem: OrderedDict[str, tuple[Trajectory, int]] = OrderedDict()
        self._mem_bytes = 0
        self._flights: dict[str, _Flight] = {}
        self._analyses: OrderedDict[str, Analysis] = OrderedDict()  # by `Trajectory.key`
        limit = self.limits.max_concurrent or os.cpu_count() or 1
        self._slots = _Slots(int(limit))
        self._counts: dict[str, int] = dict.fromkeys(
            ("memory_hits", "disk_hits", "misses", "joined", "computations", "cancelled",
             "deadlines", "errors", "prefetched", "prefetch_computations", "sessions_ended"),
            0)
        # prefetch: per owner (a session's family, the neighbouring settings…), the configs
        # waiting in order and what to call with each completed one; owners take turns
        self._pending: OrderedDict[str, deque[Config]] = OrderedDict()
        self._on_done: dict[str, Callable[[Trajectory], None] | None] = {}
        self._waiting_since: dict[str, float] = {}  # owner -> when its next run was due
        self._prefetch_wake = threading.Condition(self._lock)
        self._workers: set[threading.Thread] = set()  # the speculative workers alive
        self._spec: dict[threading.Thread, _Spec] = {}  # the speculative runs in progress
        self._session_leave: dict[str, set[threading.Event]] = {}  # session -> its waiters
        self._upload_sessions: dict[str, set[str]] = {}  # key of an upload's run -> sessions

    # ---------------------------------------------------------------------------- public
    def run(self, config: Config | Mapping[str, Any], progress: ProgressFn | None = None,
            cancel: threading.Event | None = None, session: str | None = None) -> Trajectory:
        """The trajectory for `config`: from memory, disk, a run in flight, or computed.

        `progress(fraction, text)` is called in the caller's thread; `cancel` set by another
        thread makes this call return promptly (see the module docstring). `session`: the
        caller's session, for the one-run-per-session rule and `end_session`. Raises
        `ServiceError` for an unexpected failure, `ConfigError` for an invalid mapping.
        """
        config = self._canonical(config)
        key = result_key(config)
        with self._lock:
            self._note_upload(key, config, session)
            hit = self._memory_hit(key)
            if hit is not None:
                return hit
            speculative = threading.current_thread() in self._spec
            if not speculative:  # a real request goes first; the run is taken up again later
                for spec in self._spec.values():
                    if spec.key != key and not spec.protected:
                        spec.preempted = True
                        spec.cancel.set()
            flight = self._flights.get(key)
            fresh = flight is None
            if flight is None:
                flight = _Flight(key, config, self._lock)
                flight.speculative = speculative
                self._flights[key] = flight
            else:
                self._counts["joined"] += 1
            flight.active += 1
            leave = threading.Event()
            if session is not None:  # before its worker can queue for a slot
                flight.by_session[session] = flight.by_session.get(session, 0) + 1
                flight.sessions = frozenset(flight.by_session)
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
                left = flight.by_session.get(session, 1) - 1
                if left > 0:
                    flight.by_session[session] = left
                else:
                    flight.by_session.pop(session, None)
                flight.sessions = frozenset(flight.by_session)

    def _memory_hit(self, key: str) -> Trajectory | None:
        """The in-memory result for `key`, counted as a hit (call with the lock held)."""
        hit = self._mem_get(key)
        if hit is not None:
            self._counts["memory_hits"] += 1
        return hit

    def peek(self, config: Config | Mapping[str, Any],
             session: str | None = None) -> Trajectory | None:
        """The cached trajectory (memory, else disk) or None; never computes or waits."""
        config = self._canonical(config)
        key = result_key(config)
        with self._lock:
            self._note_upload(key, config, session)
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
        """Theory and phases for a trajectory (`dynamics.analysis.analyse`), memoised per
        trajectory key (`Trajectory.key`: cache key, status, length, provisional)."""
        mkey = traj.key()
        with self._lock:
            got = self._analyses.get(mkey)
            if got is not None:
                self._analyses.move_to_end(mkey)
                return got
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

    def prefetch(self, configs: list[Config | Mapping[str, Any]], *, owner: str = "",
                 on_done: Callable[[Trajectory], None] | None = None,
                 limit: int = PREFETCH_MAX) -> int:
        """Compute `configs` speculatively in the background (see the module docstring). The
        `owner`'s pending list becomes the uncached ones among them (at most `limit`, in
        order); owners (e.g. sessions) take turns. `on_done(traj)` is called in the prefetch
        worker after each completed run of this owner (a run that was already cached is not
        called back: the caller can `peek` it), and analyses it as it sees fit (in its turn);
        without `on_done` the run is analysed here. Returns how many are pending for this
        owner. Never blocks; invalid mappings are skipped. With `EAE_PREFETCH=0`
        (`Settings.prefetch`; the test suite's default) nothing is started."""
        if not get_settings().prefetch:
            return 0
        todo: list[Config] = []
        wanted: set[str] = set()
        for c in configs:
            try:
                cfg = self._canonical(c)
            except Exception:
                continue
            key = result_key(cfg)
            wanted.add(key)
            with self._lock:
                known = key in self._mem or key in self._flights
            heavy = estimate_seconds(cfg) > self.limits.click_to_run_s  # a click's, not ours
            if not known and not heavy and not self._on_disk(key):
                todo.append(cfg)
        with self._lock:
            for spec in self._spec.values():
                if spec.owner == owner and spec.key not in wanted:
                    spec.preempted = False
                    spec.cancel.set()  # speculation for settings left behind
            self._pending.pop(owner, None)
            self._on_done.pop(owner, None)
            self._waiting_since.pop(owner, None)
            if todo:
                self._pending[owner] = deque(todo[:limit])
                self._on_done[owner] = on_done
                self._waiting_since[owner] = time.monotonic()
                while len(self._pending) > PREFETCH_OWNERS:  # the oldest owners give way
                    gone, _ = self._pending.popitem(last=False)
                    self._on_done.pop(gone, None)
                    self._waiting_since.pop(gone, None)
            self._workers = {w for w in self._workers if w.is_alive()}
            want = min(self._spec_workers(), sum(len(q) for q in self._pending.values()))
            while len(self._workers) < want:
                w = threading.Thread(target=self._prefetch_loop, daemon=True,
                                     name=f"eae-prefetch-{len(self._workers)}")
                self._workers.add(w)
                w.start()
            self._prefetch_wake.notify_all()
            return len(self._pending.get(owner, ()))

    def prefetch_idle(self, timeout: float | None = None) -> bool:
        """Wait until no prefetch is pending or running (tests, benchmarks); True if so."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self._pending or self._spec:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._prefetch_wake.wait(_POLL_S if left is None else min(_POLL_S, left))
            return True

    def _next_pending(self, starved: bool = False
                      ) -> tuple[str, Config, Callable[[Trajectory], None] | None] | None:
        """The next speculative config, owners in turn (call with the lock held); `starved`:
        only a scrub family's whose next run has waited FAMILY_STARVE_S."""
        now = time.monotonic()
        for owner in list(self._pending):
            queue = self._pending[owner]
            if not queue:
                del self._pending[owner]
                self._on_done.pop(owner, None)
                self._waiting_since.pop(owner, None)
                continue
            if starved and not (owner.startswith(FAMILY) and now - self._waiting_since.get(
                    owner, now) >= FAMILY_STARVE_S):
                continue
            self._pending.move_to_end(owner)  # the next call serves the next owner
            config = queue.popleft()
            done = self._on_done.get(owner)
            self._waiting_since[owner] = now  # its next run is due from now
            if not queue:
                del self._pending[owner]
                self._on_done.pop(owner, None)
                self._waiting_since.pop(owner, None)
            return owner, config, done
        return None

    def _spec_workers(self) -> int:
        """Speculative runs at once: PREFETCH_WORKERS, at most the simulation slots."""
        return max(1, min(PREFETCH_WORKERS, self._slots.limit))

    def _take_speculative(self) -> _Spec | None:
        """A speculative run this worker may start now (lock held): any owner's while no
        page's simulation runs or waits and fewer than PREFETCH_WORKERS run; else a starved
        scrub family's, when no other protected run is going."""
        busy = any(not f.speculative for f in self._flights.values())
        protected = any(sp.protected for sp in self._spec.values())
        got, guard = None, False
        if not busy and len(self._spec) < self._spec_workers():
            got = self._next_pending()
        elif busy and not protected:
            got, guard = self._next_pending(starved=True), True
        if got is None:
            return None
        owner, config, done = got  # a cached or running key is joined: done is still called
        return _Spec(result_key(config), owner, config, done, threading.Event(), guard)

    def _prefetch_loop(self) -> None:
        """A speculative worker: take pending configs while `_take_speculative` allows; stop
        when nothing is pending."""
        me = threading.current_thread()
        while True:
            with self._lock:
                if not self._pending:
                    self._workers.discard(me)
                    self._prefetch_wake.notify_all()
                    return
                spec = self._take_speculative()
                if spec is None:
                    self._prefetch_wake.wait(_POLL_S)
                    continue
                self._spec[me] = spec
            try:
                traj = self.run(spec.config, cancel=spec.cancel)
                if _keeps(traj):
                    with self._lock:
                        self._counts["prefetched"] += 1
                    if spec.done is not None:  # the caller analyses it, in its own order
                        spec.done(traj)
                    else:
                        self.analyse(traj)
                elif spec.preempted and spec.owner.startswith(FAMILY):
                    self._pend_again(spec)  # a visitor waits for it: taken up again
            except Exception:  # speculative: a failure is the real request's to report
                pass
            finally:
                with self._lock:
                    self._spec.pop(me, None)
                    self._prefetch_wake.notify_all()

    def _pend_again(self, spec: _Spec) -> None:
        """A run a page's request preempted goes back to the front of its owner's list (unless
        the owner has moved on: a newer `prefetch` call replaced its list)."""
        with self._lock:
            if spec.cancel.is_set() and not spec.preempted:
                return
            queue = self._pending.get(spec.owner)
            if queue is None:
                if self._on_done.get(spec.owner, spec.done) is not spec.done:
                    return
                queue = self._pending[spec.owner] = deque()
                self._on_done[spec.owner] = spec.done
                self._waiting_since.setdefault(spec.owner, time.monotonic())
            queue.appendleft(spec.config)
            self._prefetch_wake.notify_all()

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
                    if key in self._flights:
                        continue
                    item = self._mem.pop(key, None)
                    if item is not None:
                        self._mem_bytes -= item[1]
                        ck = item[0].config.cache_key()
                        for mkey in [k for k in self._analyses if k.split(":", 1)[0] == ck]:
                            del self._analyses[mkey]
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
        if flight is None:
            return None
        with self._slots.cond:
            if flight not in self._slots.queue:
                return None
            return (self._slots.running + self._slots.queue.index(flight),
                    self._slots.expected_wait(flight))

    def stats(self) -> dict[str, int | float]:
        """Counters since this Service started, and current sizes.

        memory_hits / disk_hits: requests (run or peek) served from memory / flights served
        from disk; misses: flights that found nothing on disk; joined: requests that waited on
        an identical flight; prefetched: speculative runs completed (`prefetch`);
        computations: simulations started for requests; prefetch_computations: simulations
        started speculatively by `prefetch` (not in computations); cancelled: requests that
        returned a cancelled trajectory; deadlines: runs stopped by the deadline (or whose
        slot lapsed at it); errors: unexpected failures; running / queued: simulations
        holding / waiting for a slot; overrunning: simulations past their lapsed slot, still
        stopping; in_flight: keys being produced; memory_* / disk_*: sizes and bounds (bytes;
        disk_bytes includes partial writes and files set aside).
        """
        running, queued, overrunning = self._slots.counts()
        with self._lock:
            out: dict[str, int | float] = dict(self._counts)
            out.update(memory_entries=len(self._mem), memory_bytes=self._mem_bytes,
                       in_flight=len(self._flights))
        out.update(running=running, queued=queued, overrunning=overrunning,
                   max_concurrent=self._slots.limit,
                   memory_limit_entries=self._mem_limit_entries,
                   memory_limit_bytes=self._mem_limit_bytes,
                   disk_bytes=self.disk_bytes(), disk_entries=self._disk_len(),
                   disk_limit_bytes=self._disk_limit)
        return out

    def disk_bytes(self) -> int:
        """Size of the disk cache: entries, partial writes and files set aside."""
        try:
            return self.disk.volume()
        except OSError:
            return 0

    def cache_health(self) -> dict[str, Any]:
        """What the disk cache repaired since this Service started: ok (nothing), usable,
        removed_unreadable (entries that did not parse), removed_partial (files of killed
        writes), legacy_moved_aside (an old diskcache database), io_errors, and the last few
        problems as sentences (each also logged as a warning)."""
        return self.disk.health()

    def clear_memory(self) -> None:
        """Drop the in-process cache and memoised analyses (the disk cache stays)."""
        with self._lock:
            self._mem.clear()
            self._mem_bytes = 0
            self._analyses.clear()

    # ---------------------------------------------------------------------------- waiting
    @staticmethod
    def _canonical(config: Config | Mapping[str, Any]) -> Config:
        if isinstance(config, Config):
            return config
        return Config.from_dict(config)

    def _wait(self, flight: _Flight, progress: ProgressFn | None,
              cancel: threading.Event | _Either | None) -> Trajectory:
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
                        flight.cond.wait(_POLL_S)
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
                    flight.cond.wait(min(_POLL_S, max(0.0, end - time.monotonic())))
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
                if result is not None and _keeps(result):
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

        hard_end = self._slots.acquire(flight, report,
                                       self.limits.deadline_s + DEADLINE_GRACE_S)
        if hard_end is None:
            return None
        try:
            with self._lock:
                self._counts["prefetch_computations" if flight.speculative
                             else "computations"] += 1
                flight.hard_end = hard_end
            traj = self._simulate(flight.config, report, flight.cancel)
        finally:
            self._slots.release(flight)
        if traj.status == Status.DEADLINE:
            with self._lock:
                if not flight.overran:
                    self._counts["deadlines"] += 1
        if _keeps(traj):
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
        """The stored trajectory, parsed as .npz (allow_pickle=False) + .json; anything else
        (damaged, truncated, planted, another config's result) is deleted and is a miss."""
        got = self.disk.get(key)
        if got is None:
            return None
        blob, ident = got
        try:
            traj = Trajectory.from_bytes(blob)
            if result_key(traj.config) != key:
                raise ValueError("it holds the result of another configuration")
        except Exception as e:
            self.disk.discard(key, ident, f"{type(e).__name__}: {str(e)[:120]}")
            return None
        return traj

    def _disk_put(self, key: str, traj: Trajectory) -> None:
        """Store the trajectory's bytes (a result larger than the bound is not stored) and cull
        least recently used entries to the bound. Disk trouble is never fatal."""
        try:
            self.disk.put(key, traj.to_bytes())
        except Exception as e:  # e.g. a trajectory that cannot be serialised: count, go on
            with self._lock:
                self._counts["errors"] += 1
            self.disk.problem(f"could not store a result ({type(e).__name__}: {e})",
                              count="io_errors")

    def _on_disk(self, key: str) -> bool:
        """Whether the disk cache has a file for `key` (not parsed: a cheap pre-check)."""
        try:
            return self.disk.path_for(key).exists()
        except OSError:
            return False

    def _disk_len(self) -> int:
        try:
            return self.disk.entries()
        except OSError:
            return 0


def _is_set(cancel: threading.Event | _Either | None) -> bool:
    return cancel is not None and cancel.is_set()


class _Either:
    """Set when either event is (a caller's cancel, or its session's end)."""

    def __init__(self, a: threading.Event | None, b: threading.Event):
        self.a, self.b = a, b

    def is_set(self) -> bool:
        return self.b.is_set() or (self.a is not None and self.a.is_set())


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
