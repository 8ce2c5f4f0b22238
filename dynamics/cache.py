"""Where results are kept: `ResultCache`, an in-process LRU (bounded in entries and bytes) in
front of the persistent disk store (`dynamics.diskstore`: a directory of trajectory files,
bounded in bytes, least-recently-used, shared by processes, never unpickled), and the memoised
analyses. `result_key(config)` names a result.

Only final outcomes computed by the compiled kernels are kept (`keeps`: completed, diverged or
max_steps; not a run stopped by the deadline or cancelled, not a provisional run computed with
the kernels uncompiled). A disk entry that does not parse, or holds another configuration's
result, is a miss and is deleted; such repairs are logged and counted (`health()`).

Trajectories handed out are shared: `freeze` makes their arrays read-only.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from .analysis import analyse
from .annotations import Analysis
from .config import Config
from .diskstore import DiskStore
from .limits import Limits, get_limits, get_settings
from .status import Status
from .trajectory import Trajectory

_MB = 1_000_000


def default_cache_dir() -> Path:
    """The cache_dir setting (EAE_CACHE_DIR), else ~/.cache/early-alignment-explorer."""
    configured = get_settings().cache_dir
    return Path(configured) if configured else Path.home() / ".cache" / "early-alignment-explorer"


def result_key(config: Config) -> str:
    """Cache key of a result: the config's key plus the two limits that change what
    `simulate` records (the step cap and the full-W budget), read as simulate reads them."""
    lim = get_limits()
    extra = f"|max_steps={lim.max_steps}|full_w={lim.full_w_budget_mb!r}"
    return hashlib.sha256((config.cache_key() + extra).encode()).hexdigest()


def keeps(traj: Trajectory) -> bool:
    """Whether a result is stored: a final outcome (`Status.cacheable`), computed by the
    compiled kernels (a provisional run, computed while they compiled, may differ in the last
    bits)."""
    try:
        final = Status(traj.status).cacheable
    except ValueError:
        return False
    return final and not traj.meta.get("provisional")


def freeze(traj: Trajectory) -> Trajectory:
    """Make every array of a shared trajectory read-only (in place) and return it."""
    for v in traj.__dict__.values():
        if isinstance(v, np.ndarray):
            v.flags.writeable = False
        elif isinstance(v, dict):
            for x in v.values():
                if isinstance(x, np.ndarray):
                    x.flags.writeable = False
    return traj


class ResultCache:
    """Memory LRU + disk store of trajectories by `result_key`, and the analyses by
    `Trajectory.key`. Thread-safe; never computes a trajectory (an analysis it memoises)."""

    def __init__(self, cache_dir: Path, limits: Limits):
        self.cache_dir = cache_dir
        self.disk_limit = int(limits.disk_cache_mb * _MB)
        # start-up repair: old database moved aside, abandoned partial writes deleted
        self.disk = DiskStore(cache_dir, self.disk_limit)
        self.memory_limit_bytes = int(limits.memory_cache_mb * _MB)
        self.memory_limit_entries = int(limits.memory_cache_entries)
        self._lock = threading.Lock()
        self._mem: OrderedDict[str, tuple[Trajectory, int]] = OrderedDict()
        self._mem_bytes = 0
        self._analyses: OrderedDict[str, Analysis] = OrderedDict()
        self.counts = {"memory_hits": 0, "disk_hits": 0}

    # ---------------------------------------------------------------------------- memory
    def memory(self, key: str) -> Trajectory | None:
        """The in-memory result for `key` (counted as a hit), else None."""
        with self._lock:
            item = self._mem.get(key)
            if item is None:
                return None
            self._mem.move_to_end(key)
            self.counts["memory_hits"] += 1
            return item[0]

    def in_memory(self, key: str) -> bool:
        with self._lock:
            return key in self._mem

    def remember(self, key: str, traj: Trajectory) -> None:
        """Keep `traj` in memory (a result larger than the byte bound is not kept), evicting
        the least recently used beyond the bounds."""
        size = int(traj.nbytes())
        with self._lock:
            old = self._mem.pop(key, None)
            if old is not None:
                self._mem_bytes -= old[1]
            if size > self.memory_limit_bytes or self.memory_limit_entries < 1:
                return
            self._mem[key] = (traj, size)
            self._mem_bytes += size
            while (len(self._mem) > self.memory_limit_entries
                   or self._mem_bytes > self.memory_limit_bytes):
                _, (_, s) = self._mem.popitem(last=False)
                self._mem_bytes -= s

    def forget(self, key: str) -> None:
        """Drop `key`'s result and its analyses from memory (the disk keeps it)."""
        with self._lock:
            item = self._mem.pop(key, None)
            if item is None:
                return
            self._mem_bytes -= item[1]
            ck = item[0].config.cache_key()
            for mkey in [k for k in self._analyses if k.split(":", 1)[0] == ck]:
                del self._analyses[mkey]

    def clear_memory(self) -> None:
        """Drop the in-process results and memoised analyses (the disk cache stays)."""
        with self._lock:
            self._mem.clear()
            self._mem_bytes = 0
            self._analyses.clear()

    # ---------------------------------------------------------------------------- disk
    def load(self, key: str) -> Trajectory | None:
        """The stored trajectory (counted as a disk hit and kept in memory), parsed as .npz
        (allow_pickle=False) + .json; anything else (damaged, truncated, planted, another
        config's result) is deleted and is a miss."""
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
        with self._lock:
            self.counts["disk_hits"] += 1
        return traj

    def store(self, key: str, traj: Trajectory) -> bool:
        """Write the trajectory's bytes (a result larger than the bound is not stored; least
        recently used entries are culled to the bound). Disk trouble is never fatal: False,
        counted and reported (`health()`)."""
        try:
            self.disk.put(key, traj.to_bytes())
        except Exception as e:  # e.g. a trajectory that cannot be serialised: count, go on
            self.disk.problem(f"could not store a result ({type(e).__name__}: {e})",
                              count="io_errors")
            return False
        return True

    def on_disk(self, key: str) -> bool:
        """Whether the disk has a file for `key` (not parsed: a cheap pre-check)."""
        try:
            return self.disk.path_for(key).exists()
        except OSError:
            return False

    # ---------------------------------------------------------------------------- analyses
    def analysis(self, traj: Trajectory) -> Analysis:
        """Theory and phases of `traj` (`dynamics.analysis.analyse`), memoised by
        `Trajectory.key` (cache key, status, length, provisional); raises what `analyse`
        raises."""
        mkey = traj.key()
        with self._lock:
            got = self._analyses.get(mkey)
            if got is not None:
                self._analyses.move_to_end(mkey)
                return got
        result = analyse(traj)
        with self._lock:
            self._analyses[mkey] = result
            while len(self._analyses) > max(1, self.memory_limit_entries):
                self._analyses.popitem(last=False)
        return result

    # ---------------------------------------------------------------------------- sizes
    def sizes(self) -> dict[str, int | float]:
        """Entries and bytes held, and their bounds (disk_bytes includes partial writes and
        files set aside)."""
        with self._lock:
            out: dict[str, int | float] = dict(self.counts)
            out.update(memory_entries=len(self._mem), memory_bytes=self._mem_bytes)
        out.update(memory_limit_entries=self.memory_limit_entries,
                   memory_limit_bytes=self.memory_limit_bytes,
                   disk_bytes=self.disk_bytes(), disk_entries=self._disk_entries(),
                   disk_limit_bytes=self.disk_limit)
        return out

    def disk_bytes(self) -> int:
        """Size of the disk cache: entries, partial writes and files set aside."""
        try:
            return self.disk.volume()
        except OSError:
            return 0

    def _disk_entries(self) -> int:
        try:
            return self.disk.entries()
        except OSError:
            return 0

    def health(self) -> dict[str, Any]:
        """What the disk store repaired (`DiskStore.health`)."""
        return self.disk.health()


__all__ = ["ResultCache", "default_cache_dir", "freeze", "keeps", "result_key"]
