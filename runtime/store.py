"""The figure store the server's runtime owns (`Runtime.figures`): every animated figure a
page shows, kept as the payload bytes the browser player fetches (`ui.server`'s `fig/<key>`
route), bounded by entries and MB (least recently used out). A key can be announced before it
is built (`expect`, the route then waits for it) and aliased (`alias`: a planned key → the
built one). What goes in, under which key, is `ui.figures`'.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from viz.payload import bundle_of_payload, decode, design_height_of
from viz.player import design_height
from viz.plotlyjs import bundle_for
from viz.scene import Scene

MAX_ENTRIES = 256
MAX_MB = 256.0


@dataclass(frozen=True)
class Shown:
    """A figure ready for the player: its content `key`, the `payload` bytes, the same
    gzip-compressed (`gz`, sent to browsers that accept it) and the height it was laid out
    for. Only bytes are kept (what the store's bound counts is what it holds); `animated()`
    rebuilds the figure from them for a download."""

    key: str
    payload: bytes
    gz: bytes = b""
    design_height: int | None = None
    bundle: str = "full"  # the Plotly.js bundle that draws it (`viz.plotlyjs`)

    @classmethod
    def of(cls, key: str, payload: bytes, scene: Scene | None = None) -> Shown:
        """From the payload (and the scene it encodes, which spares decoding its header)."""
        if scene is not None:
            height, bundle = design_height(scene), bundle_for(scene.trace_types())
        else:
            height, bundle = design_height_of(payload), bundle_of_payload(payload)
        return cls(key, payload, gzip.compress(payload, 6), height, bundle)

    def scene(self) -> Scene:
        """The figure's scene (decoded from the payload: for tests and the notebook)."""
        return decode(self.payload)

    @property
    def nbytes(self) -> int:
        return len(self.payload) + len(self.gz)


class FigureStore:
    """Bounded LRU of `Shown` by key, with waiters for keys announced but not yet built."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_mb: float = MAX_MB) -> None:
        self._lock = threading.Condition()
        self._items: OrderedDict[str, Shown] = OrderedDict()
        self._expected: dict[str, float] = {}  # key -> monotonic deadline
        self._aliases: OrderedDict[str, str] = OrderedDict()  # planned key -> figure key
        self._bytes = 0
        self.max_entries, self.max_bytes = max_entries, int(max_mb * 2**20)
        self.builds = 0

    def _resolve(self, key: str) -> str:
        return self._aliases.get(key, key)

    def get(self, key: str) -> Shown | None:
        with self._lock:
            key = self._resolve(key)
            got = self._items.get(key)
            if got is not None:
                self._items.move_to_end(key)
            return got

    def payload(self, key: str) -> bytes | None:
        got = self.get(key)
        return got.payload if got is not None else None

    def shown(self, key: str, timeout: float = 0.0) -> Shown | None:
        """The stored figure of `key` (or of a planned key aliased to it), waiting up to
        `timeout` s if it was announced (`expect`)."""
        got = self.get(key)
        if got is None and timeout > 0 and self.wait(key, timeout) is not None:
            got = self.get(key)
        return got

    def put(self, shown: Shown) -> Shown:
        with self._lock:
            old = self._items.pop(shown.key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._items[shown.key] = shown
            self._bytes += shown.nbytes
            self._expected.pop(shown.key, None)
            while self._items and (len(self._items) > self.max_entries
                                   or self._bytes > self.max_bytes) and len(self._items) > 1:
                _, gone = self._items.popitem(last=False)
                self._bytes -= gone.nbytes
            self._lock.notify_all()
        return shown

    def alias(self, planned: str, key: str) -> None:
        """Let `planned` (a key given out before the run existed, e.g. a family member's)
        name the figure `key`; waiters on `planned` are woken."""
        with self._lock:
            self._aliases[planned] = key
            self._aliases.move_to_end(planned)
            while len(self._aliases) > 4 * self.max_entries:
                self._aliases.popitem(last=False)
            self._expected.pop(planned, None)
            self._lock.notify_all()

    def expect(self, key: str, within_s: float = 120.0) -> None:
        """Announce that `key` will be built soon (the route then waits for it)."""
        with self._lock:
            self._expected[key] = time.monotonic() + within_s

    def forget_expected(self, key: str) -> None:
        with self._lock:
            self._expected.pop(key, None)
            self._lock.notify_all()

    def wait(self, key: str, timeout: float) -> bytes | None:
        """The payload of `key`, waiting up to `timeout` s if it is announced (else None)."""
        end = time.monotonic() + timeout
        with self._lock:
            while True:
                got = self._items.get(self._resolve(key))
                if got is not None:
                    return got.payload
                deadline = self._expected.get(key)
                now = time.monotonic()
                if deadline is None or now >= min(end, deadline) or key in self._aliases:
                    return None
                self._lock.wait(min(end, deadline) - now)

    def stats(self) -> dict[str, float]:
        with self._lock:
            return {"entries": len(self._items), "mb": self._bytes / 2**20,
                    "builds": self.builds, "expected": len(self._expected),
                    "aliases": len(self._aliases)}


class BuildLocks:
    """One lock per figure key being built, so concurrent callers of a key build it once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def of(self, key: str) -> threading.Lock:
        with self._lock:
            return self._locks.setdefault(key, threading.Lock())

    def done(self, key: str) -> None:
        with self._lock:
            self._locks.pop(key, None)


__all__ = ["MAX_ENTRIES", "MAX_MB", "BuildLocks", "FigureStore", "Shown"]
