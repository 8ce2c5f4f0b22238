"""Admission in arrival order: `Fifo`, at most `limit` holders at a time, the first eligible
waiter admitted next; and `RunQueue`, the `Fifo` of simulations a `Service` takes its slots
from (a hold lapses `hold_s` after it was taken; a waiting run hears its place and expected
wait).

`Fifo` is the one waiting algorithm of the project: the service's simulation slots
(`RunQueue`, and the server's session-fair `runtime.queue.FairQueue`) and the server's page
runs (`runtime.admission.Slots`, whose holders are threads) are all `Fifo`s. A holder is any
hashable entry; `eligible(entry)` (True here) lets a subclass pass over a waiter that may not
start yet — the next eligible one in order goes first.
"""

from __future__ import annotations

import heapq
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar

from .cost import describe_seconds, remaining_seconds

POLL_S = 0.05  # waiters re-check their cancel flag and lapsed holds at least this often
QUEUED = "queued"  # progress messages of a run waiting for a slot start with this
QUEUE_REPORT_S = 1.0  # a waiting run's place and expected wait are re-sent at least this often


def simulation_slots(max_concurrent: int | float | None) -> int:
    """Simulations at once: the `max_concurrent` limit, else (0 or unset) the CPU count."""
    return int(max_concurrent or os.cpu_count() or 1)


class Flag(Protocol):
    """Anything with `is_set()` (a `threading.Event`, a Dask event, a combination)."""

    def is_set(self) -> bool: ...


E = TypeVar("E", bound=Hashable)


class Fifo(Generic[E]):
    """At most `limit` holders (≤ 0: no limit), admitted in arrival order among the eligible
    waiters. A hold lapses `hold_s` after it was taken (a lapsed hold frees its place whether or
    not its holder has released it)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.cond = threading.Condition()
        self.queue: deque[E] = deque()  # waiters, in arrival order
        self.holders: dict[E, float] = {}  # entry -> monotonic time its hold lapses
        self.admitted = 0

    # ---------------------------------------------------------------- call with `cond` held
    def running(self) -> int:
        """Holds taken and not lapsed."""
        now = time.monotonic()
        return sum(1 for end in self.holders.values() if end > now)

    def eligible(self, entry: E) -> bool:
        """Whether a waiter may start now, places permitting (a subclass's rule)."""
        return True

    def _first_eligible(self) -> E | None:
        return next((e for e in self.queue if self.eligible(e)), None)

    def _full(self) -> bool:
        return 0 < self.limit <= self.running()

    # ---------------------------------------------------------------------------- public
    def acquire(self, entry: E, hold_s: float = math.inf, cancel: Flag | None = None,
                waiting: Callable[[int, int], None] | None = None) -> float | None:
        """Wait for a place; the monotonic time the hold lapses, or None if `cancel` was set
        while waiting. `waiting(ahead, running)` is called (with `cond` held) on every check
        while the entry waits: the holders not lapsed plus the waiters before it, and the
        holders."""
        with self.cond:
            self.queue.append(entry)
            try:
                while True:
                    if cancel is not None and cancel.is_set():
                        return None
                    if not self._full() and self._first_eligible() == entry:
                        self.queue.remove(entry)
                        end = time.monotonic() + hold_s
                        self.holders[entry] = end
                        self.admitted += 1
                        self.cond.notify_all()
                        return end
                    running = self.running()
                    if waiting is not None:
                        waiting(running + self.queue.index(entry), running)
                    timed = cancel is not None or any(e < math.inf for e in self.holders.values())
                    self.cond.wait(POLL_S if timed else None)
            finally:
                if entry in self.queue:
                    self.queue.remove(entry)
                    self.cond.notify_all()

    def release(self, entry: E) -> bool:
        """End `entry`'s hold (a no-op without one); True if it held one."""
        with self.cond:
            held = self.holders.pop(entry, None) is not None
            if held:
                self.cond.notify_all()
            return held

    def holds(self, entry: E) -> bool:
        with self.cond:
            return entry in self.holders

    def counts(self) -> tuple[int, int, int]:
        """(running, waiting, overrunning: lapsed holds not yet released)."""
        with self.cond:
            running = self.running()
            return running, len(self.queue), len(self.holders) - running


class Queued(Protocol):
    """What `RunQueue` reads of a run (a service's flight)."""

    estimate_s: float  # `dynamics.cost` estimate of the whole run
    started: float | None  # monotonic time it took a slot
    last: tuple[float, str]  # its last progress (fraction, text)
    sessions: frozenset[str]  # the sessions waiting for it

    def __hash__(self) -> int: ...


class RunQueue(Fifo[Queued]):
    """The simulation slots of a `Service`: at most `limit` runs at once (≥ 1), in arrival
    order; a waiting run hears its place and expected wait at once, at every change and at
    least every `QUEUE_REPORT_S` (messages start with `QUEUED`)."""

    def __init__(self, limit: int):
        super().__init__(max(1, limit))

    def take(self, run: Queued, report: Callable[[float, str], None], hold_s: float,
             cancel: Flag) -> float | None:
        """`acquire` for a run: reports its place while it waits; sets `run.started`."""
        shown: tuple[object, ...] | None = None
        last = 0.0

        def waiting(ahead: int, running: int) -> None:
            nonlocal shown, last
            state = (ahead, *self.why(run))
            now = time.monotonic()
            if state != shown or now - last >= QUEUE_REPORT_S:
                shown, last = state, now
                report(0.0, self.message(run, ahead, running))

        end = self.acquire(run, hold_s, cancel, waiting)
        if end is not None:
            run.started = time.monotonic()
        return end

    def why(self, run: Queued) -> tuple[object, ...]:
        """What, besides its place, decides a waiting run's message (a subclass's reasons)."""
        return ()

    def message(self, run: Queued, ahead: int, running: int) -> str:
        """What a waiting run hears (call with `cond` held)."""
        runs = "run" if ahead == 1 else "runs"
        wait = describe_seconds(self.expected_wait(run))
        return (f"{QUEUED}: {ahead} {runs} ahead ({running} running, limit {self.limit} at a "
                f"time); expected wait {wait}")

    def expected_wait(self, run: Queued) -> float:
        """Seconds until `run` gets a slot if every run takes its estimate: the slots free up
        as the running runs finish (what remains of each from its estimate and its progress,
        `cost.remaining_seconds`), then the waiting ones ahead take them in order (call with
        `cond` held)."""
        now = time.monotonic()
        free = [remaining_seconds(f.estimate_s, now - (f.started or now), f.last[0])
                for f, end in self.holders.items() if end > now]
        free += [0.0] * max(0, self.limit - len(free))
        heapq.heapify(free)
        for f in self.queue:
            t = heapq.heappop(free)
            if f is run:
                return t
            heapq.heappush(free, t + f.estimate_s)
        return 0.0

    def position(self, run: Queued) -> tuple[int, float] | None:
        """(runs ahead, expected wait in s) while `run` waits, else None."""
        with self.cond:
            if run not in self.queue:
                return None
            return self.running() + self.queue.index(run), self.expected_wait(run)


__all__ = ["POLL_S", "QUEUED", "QUEUE_REPORT_S", "Fifo", "Flag", "Queued", "RunQueue",
           "simulation_slots"]
