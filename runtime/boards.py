"""What the server's speculative and interactive work has in hand, one board per job, owned by
the runtime (`Runtime.families`, `Runtime.prefetch`, `Runtime.edits`): plain state behind a
lock. The work itself is `ui.family`'s, `ui.prefetch`'s and `ui.edits`'; a board holds only
what outlives one call (offers by id, jobs by owner, the worker thread, recent page runs).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any


class FamilyBoard:
    """Scrub families (`ui.family`): the offers by id (each: family, figure on screen,
    trajectory, owner, service; one per session, the oldest forgotten first), the newest
    family to prepare per owner and the background worker preparing them."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.jobs: dict[str, tuple[Any, Any]] = {}  # owner -> (family, service)
        self.offers: OrderedDict[str, tuple[Any, ...]] = OrderedDict()
        self.worker: threading.Thread | None = None


class PrefetchBoard:
    """Neighbours while idle (`ui.prefetch`): the speculative figures to build (`todo`, of
    generation `gen`: a newer list or a page run makes older items stale), their worker, and
    when each session last started a page run (`recent`, monotonic s: is the server
    shared?)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.gen = 0
        self.todo: list[tuple[Any, ...]] = []
        self.thread: threading.Thread | None = None
        self.recent: dict[str, float] = {}


class EditBoard:
    """Data edits (`ui.edits`): the edit base offered per id (one per session, the oldest
    forgotten first) and the cancel event of each session's edit run in progress."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.offers: OrderedDict[str, Any] = OrderedDict()
        self.running: dict[str, threading.Event] = {}  # owner -> cancel event of its run


class UploadLedger:
    """Uploads of each session still being received: (files, bytes) reserved by the check
    that let them through (`ui.hardening`), released when the request ends (by then
    Streamlit holds the file and it counts among the session's holdings). Used only on the
    event loop, so a check and its reservation happen in one step."""

    def __init__(self) -> None:
        self.pending: dict[str, tuple[int, int]] = {}

    def reserved(self, session: str) -> tuple[int, int]:
        return self.pending.get(session, (0, 0))

    def reserve(self, session: str, size: int) -> None:
        files, held = self.pending.get(session, (0, 0))
        self.pending[session] = (files + 1, held + size)

    def release(self, session: str, size: int) -> None:
        files, held = self.pending.get(session, (1, size))
        if files <= 1:
            self.pending.pop(session, None)
        else:
            self.pending[session] = (files - 1, held - size)


class SmallLru:
    """The last `size` values by key, behind a lock (the PNG exports of `ui.downloads`: a
    browser renders each, in Streamlit's download thread, outside any script run)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any) -> Any:
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)


__all__ = ["EditBoard", "FamilyBoard", "PrefetchBoard", "SmallLru", "UploadLedger"]
