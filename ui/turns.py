"""Interpreter-bound work taken in turns, in arrival order: the figure builds and analyses of
every session of the server (`TURNS`), and the page runs, a few at a time (`PAGES`).

A figure build (Plotly objects, ~0.1 s) and an analysis hold the interpreter lock the whole
time, so on a shared server they cannot run side by side anyway. Left to the interpreter, 30
sessions that change a setting together share it round-robin and all finish near the end —
each waits for the whole class's work. Taken one at a time in arrival order, the first ones
finish first and leave, the total work is the same, and the event loop (health checks,
websockets, payload requests) competes with one such thread instead of thirty.

`TURNS.turn()` is a context manager; speculative work (the background figures of
`ui.prefetch` and `ui.family`, run inside `speculative()`) waits behind every visitor's request
already queued. A turn of a thread that already holds one is granted at once.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from dynamics.limits import get_settings


class Turns:
    """A fair lock with two classes of waiters (see the module docstring); `taken` counts the
    turns granted."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: list[tuple[int, int]] = []  # (speculative, ticket): heap order is turn order
        self._tickets = itertools.count()
        self._holder: int | None = None  # the thread whose turn it is
        self._depth = 0
        self.taken = 0

    @contextmanager
    def turn(self, *, speculative: bool | None = None) -> Iterator[None]:
        """This thread's turn (None: speculative inside `speculative()`)."""
        if speculative is None:
            speculative = bool(getattr(_local, "speculative", False))
        me = threading.get_ident()
        with self._cond:
            if self._holder == me:  # nested: already this thread's turn
                self._depth += 1
                nested = True
            else:
                nested = False
                entry = (int(speculative), next(self._tickets))
                heapq.heappush(self._queue, entry)
                while self._holder is not None or self._queue[0] != entry:
                    self._cond.wait()
                heapq.heappop(self._queue)
                self._holder, self._depth = me, 1
                self.taken += 1
        try:
            yield
        finally:
            with self._cond:
                self._depth -= 1
                if not nested and self._depth == 0:
                    self._holder = None
                    self._cond.notify_all()

    def waiting(self) -> int:
        """How many turns are queued now."""
        with self._cond:
            return len(self._queue)


class Slots:
    """At most `n` holders at a time, admitted in arrival order (`n` ≤ 0: no limit): the page
    runs of every session (`PAGES`, taken by `app.py` for the whole run).

    Thirty sessions that open a link together run thirty page scripts at once; each holds the
    interpreter lock in short bursts, and the event loop, which answers health checks and
    websockets, waits behind all of them. Admitted one (or a few) at a time, the page runs
    finish in order and the event loop competes with one thread.

    A run that starts a long wait (a simulation still computing after a moment, a claims
    check) gives its slot up with `leave` and is not admitted again: a slot is never awaited
    by a thread that may hold a lock another holder waits for, so there is no deadlock.
    `slot()` of a thread that holds one (or has left) is granted at once.
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self._cond = threading.Condition()
        self._queue: list[int] = []  # tickets waiting, in order
        self._tickets = itertools.count()
        self._holders: set[int] = set()
        self._inside: dict[int, int] = {}  # thread → depth of its `slot()` blocks
        self.admitted = 0

    @contextmanager
    def slot(self) -> Iterator[None]:
        """This thread's slot for the block (waits its turn when all are taken)."""
        me = threading.get_ident()
        with self._cond:
            depth = self._inside.get(me, 0)
            if depth == 0 and self.n > 0:
                ticket = next(self._tickets)
                self._queue.append(ticket)
                try:
                    while len(self._holders) >= self.n or self._queue[0] != ticket:
                        self._cond.wait()
                finally:
                    self._queue.remove(ticket)
                    self._cond.notify_all()
                self._holders.add(me)
                self.admitted += 1
            self._inside[me] = depth + 1
        try:
            yield
        finally:
            with self._cond:
                self._inside[me] -= 1
                if self._inside[me] == 0:
                    del self._inside[me]
                    if me in self._holders:
                        self._holders.discard(me)
                        self._cond.notify_all()

    def leave(self) -> None:
        """Give this thread's slot to the next waiter for the rest of its block (before a
        long wait); a no-op without one."""
        me = threading.get_ident()
        with self._cond:
            if me in self._holders:
                self._holders.discard(me)
                self._cond.notify_all()

    def state(self) -> tuple[int, int]:
        """(holders, waiting) now."""
        with self._cond:
            return len(self._holders), len(self._queue)


_local = threading.local()


@contextmanager
def speculative() -> Iterator[None]:
    """Turns taken by this thread inside the block are speculative (wait behind visitors)."""
    before = getattr(_local, "speculative", False)
    _local.speculative = True
    try:
        yield
    finally:
        _local.speculative = before


TURNS = Turns()
PAGES = Slots(get_settings().page_runs)

__all__ = ["PAGES", "TURNS", "Slots", "Turns", "speculative"]
