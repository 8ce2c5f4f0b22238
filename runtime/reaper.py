"""The server's memory: the reaper of ended sessions (`Reaper`, the runtime's `Runtime.reaper`)
and glibc's malloc settings.

`Reaper` (started by `ui.hardening` on the server's first request): every `REAP_S` it shuts
down the disconnected sessions whose reconnect time (`server.disconnectedSessionTTL`) has
passed — Streamlit 1.67 drops them from its store without shutting them down, so their
uploaded files stayed in memory for good —, empties their session state (Streamlit's message
loop keeps a reference to the last session it served while idle, state and all), and deletes
uploaded files that belong to no session; then collects garbage and hands freed heap back to
the OS (glibc's malloc_trim). It reads Streamlit internals (the session manager's store and
the uploaded-file manager) and does nothing when they are not where 1.67 keeps them.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import logging
from typing import Any

from streamlit import runtime as st_runtime

REAP_S = 5.0  # how often the reaper looks
log = logging.getLogger("ui.sessions")


def malloc_trim() -> bool:
    """Give freed heap pages back to the OS (glibc); False where there is no such call."""
    try:
        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0))
    except (OSError, AttributeError):
        return False


M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)
MMAP_THRESHOLD = 128 * 1024  # bytes: blocks this large get their own mapping, freed at once


def malloc_tune(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold (False where there is no such call): blocks of at least
    `threshold` bytes (arrays, figure payloads) are mapped on their own and returned to the OS
    when freed. Left alone, glibc raises the threshold after the first large block is freed,
    so large temporary blocks land in its heap pools and their freed space stays in the
    server's RSS until a trim — a 15-minute soak's RSS then follows that kept space (which
    swung between 73 and 171 MB) rather than the memory in use."""
    try:
        return bool(ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, int(threshold)))
    except (OSError, AttributeError):
        return False


class Reaper:
    """See the module docstring. `sweep()` does one round (tests call it); `start()` runs
    rounds every `REAP_S` as a task on the server's event loop (the clean-up itself runs
    there, as Streamlit's own disconnects do; garbage collection in a worker thread)."""

    def __init__(self, every: float = REAP_S):
        self.every = every
        self.task: asyncio.Task[None] | None = None
        self.counts = {"shut_down": 0, "orphan_files": 0, "rounds": 0}

    def start(self) -> None:
        if self.task is not None and not self.task.done():
            return
        try:
            self.task = asyncio.get_running_loop().create_task(self._loop(),
                                                               name="eae-session-reaper")
        except RuntimeError:  # no running loop: nothing to attach to
            self.task = None

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            try:
                if self.sweep():
                    await asyncio.to_thread(_collect)
            except Exception:  # never let the loop die
                log.exception("session reaper round failed")

    def sweep(self) -> int:
        """One round: shut down expired stored sessions, drop orphaned uploads; how many
        sessions and file sets were removed."""
        if not st_runtime.exists():
            return 0
        rt: Any = st_runtime.get_instance()
        mgr = getattr(rt, "_session_mgr", None)
        store = getattr(mgr, "_session_storage", None)
        cache: Any = getattr(store, "_cache", None)
        lock = getattr(mgr, "_storage_lock", None)
        removed = 0
        if mgr is not None and hasattr(cache, "expire") and lock is not None:
            with lock:
                expired = cache.expire()
            for sid, info in expired:
                if not mgr.is_active_session(sid):
                    info.session.shutdown()
                    # Streamlit's flush loop keeps its last session in a loop variable while
                    # idle: empty the dead session's state so that reference holds nothing
                    state = getattr(info.session, "_session_state", None)
                    if state is not None and hasattr(state, "clear"):
                        state.clear()
                    removed += 1
                    self.counts["shut_down"] += 1
        files = getattr(getattr(rt, "uploaded_file_mgr", None), "file_storage", None)
        if mgr is not None and isinstance(files, dict):
            live = {s.session.id for s in mgr.list_active_sessions()}
            if store is not None:
                live |= {s.session.id for s in store.list()}
            for sid in [s for s in list(files) if s not in live]:
                rt.uploaded_file_mgr.remove_session_files(sid)
                removed += 1
                self.counts["orphan_files"] += 1
        self.counts["rounds"] += 1
        if removed:
            log.info("session reaper: %d sessions shut down, %d orphaned upload sets removed "
                     "(so far)", self.counts["shut_down"], self.counts["orphan_files"])
        return removed


def _collect() -> None:
    gc.collect()
    malloc_trim()


__all__ = ["REAP_S", "Reaper", "malloc_trim", "malloc_tune"]
