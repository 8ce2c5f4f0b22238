"""The one figure cache: every animated figure a page shows, described once per (trajectory,
figure kind, `FigureOptions`) and shared by all sessions, kept as the payload bytes the
browser player fetches (`ui.server`'s `fig/<key>` route) and composes (`viz.scene`).

Keys are content keys: sha256 of the figure kind, `VIZ_VERSION`, the options' key and each
trajectory's key (its config's cache key, status, frame count and last time), so a key names
one picture wherever it is computed. The store is bounded (entries and MB, least recently used
out); a key can be announced before it is built (`expect`) so that the route waits for it
instead of answering 404 (a family of runs computed in the background).
"""

from __future__ import annotations

import gzip
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from dynamics.annotations import Analysis
from dynamics.limits import get_limits
from dynamics.trajectory import Trajectory
from viz.compare import compare_figure
from viz.main_figure import main_figure
from viz.options import FigureOptions
from viz.payload import bundle_of_payload, decode, design_height_of, encode
from viz.player import design_height
from viz.plotlyjs import bundle_for
from viz.real_data import real_data_figure
from viz.scene import Scene

from . import server
from .turns import TURNS

VIZ_VERSION = "4"  # bump when a figure changes for the same trajectory and options
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


def trajectory_key(traj: Trajectory) -> str:
    """What identifies a trajectory's picture: config key, status, frames and last time (and
    "provisional" for a run computed while the kernels compiled)."""
    last = float(traj.t[-1]) if traj.n_frames else 0.0
    mark = ":provisional" if traj.meta.get("provisional") else ""
    return f"{traj.config.cache_key()}:{traj.status}:{traj.n_frames}:{last!r}{mark}"


def figure_key(kind: str, trajs: tuple[Trajectory, ...], options: FigureOptions,
               extra: str = "") -> str:
    h = hashlib.sha256()
    for part in (kind, VIZ_VERSION, options.key, extra, *map(trajectory_key, trajs)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:40]


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


STORE = FigureStore()
server.register_payloads(STORE.shown)
_build_locks: dict[str, threading.Lock] = {}
_locks_lock = threading.Lock()


def _shown(key: str, build: Callable[[], Scene]) -> Shown:
    """The stored figure `key`, else built once (concurrent callers of one key wait)."""
    got = STORE.get(key)
    if got is not None:
        return got
    with _locks_lock:
        lock = _build_locks.setdefault(key, threading.Lock())
    with lock:
        got = STORE.get(key)
        if got is None:
            with TURNS.turn():  # interpreter-bound: sessions take turns (`ui.turns`)
                fig = build()
                payload = encode(fig, {"key": key})
            STORE.builds += 1
            got = STORE.put(Shown.of(key, payload, fig))
    with _locks_lock:
        _build_locks.pop(key, None)
    return got


def main(traj: Trajectory, analysis: Analysis | None, options: FigureOptions) -> Shown:
    """The Explorer's main figure (`viz.main_figure`) for a run."""
    key = figure_key("main", (traj,), options, "a" if analysis is not None else "")
    return _shown(key, lambda: main_figure(traj, analysis, options))


def planned_key(config_json: str, options: FigureOptions, extra: str = "") -> str:
    """A key for the main figure of a run not computed yet (its config's canonical JSON):
    given to the player at once, aliased to the figure's own key once it is built."""
    h = hashlib.sha256()
    for part in ("planned-main", VIZ_VERSION, options.key, extra, config_json):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:40]


def compare(traj_a: Trajectory, traj_b: Trajectory, analysis_a: Analysis | None,
            analysis_b: Analysis | None, labels: tuple[str, str],
            options: FigureOptions) -> Shown:
    """The Compare page's figure of two runs (`viz.compare`)."""
    extra = "|".join([*labels, *("a" if a is not None else "" for a in (analysis_a, analysis_b))])
    key = figure_key("compare", (traj_a, traj_b), options, extra)
    return _shown(key, lambda: compare_figure(traj_a, traj_b, analysis_a, analysis_b, labels,
                                              options))


def real_data(traj: Trajectory, analysis: Analysis | None, options: FigureOptions) -> Shown:
    """The Real data page's figure of a run (`viz.real_data`)."""
    key = figure_key("real_data", (traj,), options, "a" if analysis is not None else "")
    return _shown(key, lambda: real_data_figure(traj, analysis, options))


def build(key: str, make: Callable[[], Scene]) -> Shown:
    """Any other animated figure under a key from `figure_key` (compare, real data…)."""
    return _shown(key, make)


def configure_from_limits() -> None:
    """Bounds from the server's limits (the figure cache is a part of the memory cache)."""
    lim = get_limits()
    STORE.max_bytes = int(min(MAX_MB, lim.memory_cache_mb / 2) * 2**20)


configure_from_limits()

__all__ = ["STORE", "VIZ_VERSION", "FigureStore", "Shown", "build", "compare", "figure_key",
           "main", "planned_key", "real_data", "trajectory_key"]
