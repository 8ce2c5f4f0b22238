"""Interpreter-bound work taken in turns, in arrival order: the figure builds and analyses of
every session of the server.

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

__all__ = ["TURNS", "Turns", "speculative"]
