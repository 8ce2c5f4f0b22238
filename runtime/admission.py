"""Admission: interpreter-bound work taken in turns, in arrival order — the figure builds and
analyses of every session of the server (`Runtime.turns`, a `Turns`) — and the page runs, a few
at a time (`Runtime.pages`, `Slots`; a run with costly work of its own moves to a lane beside
them, `Runtime.costly`, one at a time: `Slots.divert`). The instances are the runtime's
(`runtime.current()`); this module holds only the classes.

A figure build (Plotly objects, ~0.1 s) and an analysis hold the interpreter lock the whole
time, so on a shared server they cannot run side by side anyway. Left to the interpreter, 30
sessions that change a setting together share it round-robin and all finish near the end —
each waits for the whole class's work. Taken one at a time in arrival order, the first ones
finish first and leave, the total work is the same, and the event loop (health checks,
websockets, payload requests) competes with one such thread instead of thirty.

`Turns.turn()` is a context manager; speculative work (the background figures of
`ui.prefetch` and `ui.family`, run inside `Turns.speculative()`) waits behind every visitor's
request already queued. A turn of a thread that already holds one is granted at once.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from dynamics.admission import Fifo


class Turns:
    """A fair lock with two classes of waiters (see the module docstring); `taken` counts the
    turns granted."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: list[tuple[int, int]] = []  # (speculative, ticket): heap order is turn order
        self._tickets = itertools.count()
        self._holder: int | None = None  # the thread whose turn it is
        self._depth = 0
        self._local = threading.local()  # per thread: inside `speculative()`
        self.taken = 0

    @contextmanager
    def speculative(self) -> Iterator[None]:
        """Turns taken by this thread inside the block are speculative (wait behind
        visitors)."""
        before = getattr(self._local, "speculative", False)
        self._local.speculative = True
        try:
            yield
        finally:
            self._local.speculative = before

    @contextmanager
    def turn(self, *, speculative: bool | None = None) -> Iterator[None]:
        """This thread's turn (None: speculative inside `speculative()`)."""
        if speculative is None:
            speculative = bool(getattr(self._local, "speculative", False))
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
    runs of every session (`Runtime.pages`, taken by `app.py` for the whole run).

    Thirty sessions that open a link together run thirty page scripts at once; each holds the
    interpreter lock in short bursts, and the event loop, which answers health checks and
    websockets, waits behind all of them. Admitted one (or a few) at a time, the page runs
    finish in order and the event loop competes with one thread. The waiting is a
    `dynamics.admission.Fifo` (the algorithm of the service's simulation slots too) whose
    holders are threads.

    A run that starts a long wait (a simulation still computing after a moment, a claims
    check) gives its slot up with `leave` and is not admitted again: a slot is never awaited
    by a thread that may hold a lock another holder waits for, so there is no deadlock.
    A run about to do costly work of its own (a link or an upload whose data take a second to
    build, check and search: `divert`) gives its slot up the same way and takes one of a
    second lane instead (`lane`, `Runtime.costly`, one at a time, in arrival order) for the rest of
    its block: a cheap page (About, a cached chart) is admitted at once behind it, and the
    costly runs share the interpreter with the pages and with each other one at a time.
    `slot()` of a thread that holds one (or has left) is granted at once.
    """

    def __init__(self, n: int, lane: Slots | None = None) -> None:
        self.n = n
        self.lane = lane
        self._fifo: Fifo[int] = Fifo(n)  # the holders (threads), admitted in arrival order
        self._lock = threading.Lock()
        self._inside: dict[int, int] = {}  # thread → depth of its `slot()` blocks
        self._diverted: set[int] = set()  # threads moved to `lane` for the rest of their block
        self.diverted = 0

    @property
    def admitted(self) -> int:
        """Places granted so far."""
        return self._fifo.admitted

    def _enter(self) -> bool:
        """Count this thread into a block; True if it must wait for a place (outermost)."""
        me = threading.get_ident()
        with self._lock:
            depth = self._inside.get(me, 0)
            self._inside[me] = depth + 1
        return depth == 0 and self.n > 0

    @contextmanager
    def slot(self) -> Iterator[None]:
        """This thread's slot for the block (waits its turn when all are taken)."""
        me = threading.get_ident()
        if self._enter():
            self._fifo.acquire(me)
        try:
            yield
        finally:
            diverted = False
            with self._lock:
                self._inside[me] -= 1
                if self._inside[me] == 0:
                    del self._inside[me]
                    diverted = me in self._diverted
                    self._diverted.discard(me)
                    self._fifo.release(me)
            if diverted and self.lane is not None:
                self.lane._forget()

    def divert(self) -> bool:
        """Costly work ahead (see the class docstring): give this thread's slot to the next
        waiter and hold one of `lane` for the rest of its `slot()` block, waiting for it in
        arrival order. Call it holding no lock. False (nothing done) outside a block, without
        a lane or a limit, or when already diverted or left."""
        me = threading.get_ident()
        lane = self.lane
        with self._lock:
            if lane is None or self.n <= 0 or me in self._diverted or \
                    not self._fifo.holds(me):
                return False
            self._diverted.add(me)
            self.diverted += 1
            self._fifo.release(me)
        if lane._enter():
            lane._fifo.acquire(me)
        return True

    def leave(self) -> None:
        """Give this thread's slot (and its lane's, when diverted) to the next waiter for the
        rest of its block (before a long wait); a no-op without one."""
        me = threading.get_ident()
        self._fifo.release(me)
        with self._lock:
            diverted = me in self._diverted
        if diverted and self.lane is not None:
            self.lane.leave()

    def _forget(self) -> None:
        """End this thread's hold on the lane (its page run is over)."""
        me = threading.get_ident()
        with self._lock:
            self._inside.pop(me, None)
        self._fifo.release(me)

    def holds(self) -> bool:
        """Whether this thread holds a place now."""
        return self._fifo.holds(threading.get_ident())

    def state(self) -> tuple[int, int]:
        """(holders, waiting) now."""
        running, waiting, _ = self._fifo.counts()
        return running, waiting


__all__ = ["Slots", "Turns"]
