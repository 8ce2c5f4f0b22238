"""The persistent result cache: a plain directory of trajectory files, shared by processes.

Layout (``EAE_CACHE_DIR``, default ~/.cache/early-alignment-explorer)::

    trajectories-v1/<key>.eaetraj   one result: `Trajectory.to_bytes()`, a zip holding
                                    trajectory.npz (read with allow_pickle=False) and
                                    trajectory.json; <key> is the 64-hex result key
    trajectories-v1/.<key>.<pid>.<host>.<token>.part
                                    a write in progress (renamed to the entry when complete)
    aside/<time>-<what>/            files moved out of the way (an old diskcache database)

Only bytes this project parses are ever read: nothing is unpickled, so a file planted in the
directory can at worst be a wrong or unreadable entry. An entry that does not parse is a miss
and is deleted (`Service` reports it). Writes go to a ``.part`` file first and are published by
an atomic rename, so a reader never sees half an entry; a write killed midway leaves its
``.part`` file, which is counted in the size bound and deleted once its writer is gone (same
host: the process no longer exists; other hosts: after `STALE_S`), at start-up or whenever the
cache is culled. Least recently used entries (file modification time, refreshed on every read)
are deleted first when the directory exceeds its byte bound; files set aside go before them.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import secrets
import shutil
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("dynamics.service")

SUFFIX = ".eaetraj"
LAYOUT = "trajectories-v1"
STALE_S = 3600.0  # a .part file of another host (or an unknown file) is abandoned after this
_KEY = re.compile(r"[0-9a-f]{64}")
_PART = re.compile(r"\.(?P<key>[0-9a-f]{0,64})\.(?P<pid>\d+)\.(?P<host>[0-9a-f]{8})"
                   r"\.[0-9a-f]+\.part")
_LEGACY = ("cache.db", "cache.db-wal", "cache.db-shm", "cache.db-journal")
_HOST = hashlib.sha256(os.uname().nodename.encode()).hexdigest()[:8]


@dataclass
class _File:
    path: Path
    size: int
    mtime: float
    kind: str  # "entry", "partial" (a live write), "stale" (abandoned), "aside"


class DiskStore:
    """Bytes by key in a directory, bounded in bytes, safe for threads and processes."""

    def __init__(self, cache_dir: Path, limit_bytes: int):
        self.cache_dir = Path(cache_dir)
        self.root = self.cache_dir / LAYOUT
        self.aside = self.cache_dir / "aside"
        self.limit = int(limit_bytes)
        self._lock = threading.Lock()
        self.counts = {"removed_unreadable": 0, "removed_partial": 0, "legacy_moved_aside": 0,
                       "io_errors": 0}
        self.problems: deque[str] = deque(maxlen=5)
        self.usable = True
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            self.usable = False
            self.problem(f"the cache directory {self.root} cannot be created ({e}); running "
                         "without a disk cache", count="io_errors")
            return
        self._move_legacy_aside()
        self.cull(startup=True)

    # ---------------------------------------------------------------------------- entries
    def path_for(self, key: str) -> Path:
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a result key: {key[:80]!r}")
        return self.root / f"{key}{SUFFIX}"

    def get(self, key: str) -> tuple[bytes, os.stat_result] | None:
        """The stored bytes and the file's identity (for `discard`), or None."""
        if not self.usable:
            return None
        path = self.path_for(key)
        try:
            with path.open("rb") as f:
                ident = os.fstat(f.fileno())
                blob = f.read()
        except FileNotFoundError:
            return None
        except OSError as e:
            self.problem(f"could not read {path.name} ({e})", count="io_errors")
            return None
        try:
            os.utime(path)  # least recently used goes first: a read is a use
        except OSError:
            pass
        return blob, ident

    def discard(self, key: str, ident: os.stat_result, why: str) -> None:
        """Delete an unreadable entry (if it is still the file that was read) and report it."""
        path = self.path_for(key)
        try:
            now = path.stat()
            if (now.st_dev, now.st_ino, now.st_size) == (ident.st_dev, ident.st_ino,
                                                          ident.st_size):
                path.unlink()  # (not a good entry another process has put there since)
        except OSError:
            pass
        self.problem(f"removed the unreadable cache entry {path.name} ({why}); it will be "
                     "computed again", count="removed_unreadable")

    def put(self, key: str, blob: bytes) -> bool:
        """Store `blob` atomically, then cull to the bound. False if not stored (too large for
        the bound, or the disk failed: never fatal)."""
        if not self.usable or len(blob) >= self.limit:
            return False
        final = self.path_for(key)
        tmp = self.root / f".{key}.{os.getpid()}.{_HOST}.{secrets.token_hex(4)}.part"
        try:
            with tmp.open("wb") as f:
                f.write(blob)
            os.replace(tmp, final)
        except OSError as e:
            with contextlib.suppress(OSError):
                tmp.unlink()
            self.problem(f"could not write {final.name} ({e})", count="io_errors")
            return False
        self.cull()
        return True

    # ---------------------------------------------------------------------------- size
    def files(self) -> list[_File]:
        """Every file the bound counts: entries, writes in progress or abandoned, set aside."""
        out: list[_File] = []
        now = time.time()
        for base in (self.root, self.aside):
            for dirpath, _dirs, names in os.walk(base):
                for name in names:
                    p = Path(dirpath) / name
                    try:
                        st = p.stat()
                    except OSError:
                        continue
                    if base == self.aside:
                        kind = "aside"
                    elif p.parent == self.root and name.endswith(SUFFIX) and _KEY.fullmatch(
                            name[: -len(SUFFIX)]):
                        kind = "entry"
                    else:
                        kind = "stale" if _abandoned(name, now - st.st_mtime) else "partial"
                    out.append(_File(p, st.st_size, st.st_mtime, kind))
        return out

    def volume(self) -> int:
        return sum(f.size for f in self.files()) if self.usable else 0

    def entries(self) -> int:
        return sum(f.kind == "entry" for f in self.files()) if self.usable else 0

    def cull(self, startup: bool = False) -> None:
        """Delete abandoned partial files, then (over the bound) files set aside and least
        recently used entries until the directory fits."""
        if not self.usable:
            return
        with self._lock:
            files = self.files()
            total = sum(f.size for f in files)
            for f in files:
                if f.kind != "stale":
                    continue
                if _unlink(f.path):
                    total -= f.size
                    self.problem(f"removed {f.size:,} bytes left by an interrupted cache write "
                                 f"({f.path.name})", count="removed_partial")
            order = sorted((f for f in files if f.kind == "aside"), key=lambda f: f.mtime)
            order += sorted((f for f in files if f.kind == "entry"), key=lambda f: f.mtime)
            for f in order:
                if total <= self.limit:
                    break
                if _unlink(f.path):
                    total -= f.size
            if startup or total <= self.limit:
                _prune_empty(self.aside)

    # ---------------------------------------------------------------------------- health
    def problem(self, text: str, count: str) -> None:
        self.counts[count] += 1
        self.problems.append(text)
        log.warning("disk cache %s: %s", self.cache_dir, text)

    def health(self) -> dict[str, object]:
        return {"ok": not self.problems and self.usable, "usable": self.usable,
                **self.counts, "problems": list(self.problems)}

    def _move_legacy_aside(self) -> None:
        """An older version's diskcache database (SQLite with pickled values) is never read:
        it is moved aside, whether intact, garbage or truncated."""
        found = [self.cache_dir / n for n in _LEGACY if (self.cache_dir / n).exists()]
        if not found:
            return
        found += [d for d in self.cache_dir.iterdir()  # its value files: <2 hex>/<2 hex>/*.val
                  if d.is_dir() and re.fullmatch(r"[0-9a-f]{2}", d.name)
                  and any(d.rglob("*.val"))]
        dest = self.aside / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-diskcache"
        try:
            dest.mkdir(parents=True, exist_ok=True)
            for p in found:
                shutil.move(str(p), str(dest / p.name))
        except OSError as e:
            self.problem(f"could not move the old cache.db aside ({e})", count="io_errors")
            return
        self.problem(f"moved the old diskcache database cache.db ({len(found)} files; a format "
                     f"that can hold pickles, never read now) aside to {dest}",
                     count="legacy_moved_aside")


def _abandoned(name: str, age_s: float) -> bool:
    """A .part file whose writer is gone (same host: no such process), or any other stray
    file older than STALE_S."""
    m = _PART.fullmatch(name)
    if m is None or m["host"] != _HOST:
        return age_s > STALE_S
    return not _alive(int(m["pid"]))


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process (or no such pid at all)
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _unlink(p: Path) -> bool:
    try:
        p.unlink()
        return True
    except FileNotFoundError:
        return True  # someone else removed it: the space is free either way
    except OSError:
        return False


def _prune_empty(root: Path) -> None:
    if not root.exists():
        return
    for dirpath, _dirs, _names in sorted(os.walk(root), key=lambda t: -len(t[0])):
        if Path(dirpath) != root:
            with contextlib.suppress(OSError):  # not empty, or another process got there first
                os.rmdir(dirpath)
