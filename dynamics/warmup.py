"""Compile (or load from numba's cache) every kernel a page can call, once per process, before
the first visitor: a server starts this in a thread (`ui.server.lifespan`). With an empty
cache the compiling happens in a subprocess (`_compile_in_a_subprocess`), so that the
server's interpreter lock stays free for its visitors; this process then loads the kernels.
Meanwhile the other threads run the kernels uncompiled (`kernels.cache.call`): a small run is
computed at once, provisionally (`dynamics.simulate`), and a page shows `state()` instead of
waiting for a larger one.

The work is a few tiny simulations that reach each compiled entry point (gf, GD, the recorder;
square, logistic and exponential losses share one compiled signature: the loss is a code).
`state().expected_s` is the wait measured on this kind of machine: about 25 s with an empty
numba cache, about 2 s when it loads.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

COLD_S, WARM_S = 25.0, 2.0  # typical compile / load time of all kernels here (2-core host)
#: Niceness of the compiling subprocess: it is background work, and on a two-core host the
#: first visitors' pages (the server's uncompiled runs, their browsers) would otherwise share
#: a core with it (the first chart of a fresh clone took 5.0–5.7 s after health, 2.3 s of it
#: the uncompiled run).
COMPILE_NICE = 10


@dataclass(frozen=True)
class WarmState:
    """How far the start-up compilation is: `done` of `total` runs, since `started` (epoch s);
    `ready` once all ran (or it failed: `error`, and pages compile on demand as before)."""

    started: float | None
    done: int
    total: int
    ready: bool
    error: str = ""
    expected_s: float = COLD_S

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @property
    def remaining_s(self) -> float:
        """Seconds left (≥ 1 while running): the expected total less the time elapsed, or,
        once a run is done, the pace so far times the runs left (a busy machine is slower)."""
        if self.ready or self.started is None:
            return 0.0
        elapsed = time.time() - self.started
        if self.done:
            return max(1.0, elapsed / self.done * (self.total - self.done))
        return max(1.0, self.expected_s - elapsed)

    @property
    def late(self) -> bool:
        """Running longer than expected (the machine is busy)."""
        return (not self.ready and self.started is not None
                and time.time() - self.started > self.expected_s)


_lock = threading.Lock()


@dataclass
class _Progress:
    started: float | None = None
    done: int = 0
    total: int = 0
    ready: bool = False
    error: str = ""
    expected_s: float = COLD_S
    running: bool = False


_st = _Progress()


def _warm_configs() -> list[dict]:
    small = {"record": {"frames": 4, "scalars": 10}}
    return [
        {**small, "integrator": {"method": "gf", "t_end": 2.0}},
        {**small, "integrator": {"method": "gd", "lr": 0.05, "t_end": 1.0}},
        {**small, "data": {"kind": "teacher", "d": 6}, "model": {"width": 50},
         "integrator": {"method": "gd", "lr": 0.05, "t_end": 0.5}},
    ]


def _cache_is_warm() -> bool:
    """Whether numba's disk cache already holds compiled kernels of this package (index files
    `*.nbi` of gf.py; then start-up only loads them)."""
    root = os.environ.get("NUMBA_CACHE_DIR")
    where = Path(root) if root else Path(__file__).resolve().parent / "kernels" / "__pycache__"
    if root:  # the kernels of these sources sit under their stamp (`kernels.cache`)
        from .kernels.cache import package_stamp

        where = where / f"eae_kernels_{package_stamp()[:16]}"
    try:
        return any(where.rglob("gf.*.nbi"))
    except OSError:
        return False


def begin() -> None:
    """Mark the start-up compilation as under way (pages show its message from now on)."""
    with _lock:
        if _st.started is None:
            _st.started, _st.total = time.time(), len(_warm_configs())
            _st.expected_s = WARM_S if _cache_is_warm() else COLD_S


def warm_kernels(apart: bool = True) -> WarmState:
    """Run the warm-up simulations once in this process (later calls return at once); with a
    cold cache and `apart`, compiled in a subprocess first (`_compile_in_a_subprocess`), else
    here (a process that must compile its own kernels: `dynamics.same_bits`)."""
    begin()
    with _lock:
        if _st.running or _st.ready:
            return _snapshot()
        _st.running = True
        configs = _warm_configs()
    from .kernels import cache

    cache.begin_warming()  # meanwhile other threads run the kernels uncompiled (small runs)
    try:
        from .config import Config
        from .simulate import simulate
        compiled_apart = apart and not _cache_is_warm() and _compile_in_a_subprocess()
        for c in configs:  # (after the subprocess: loaded from numba's cache, ~2 s)
            simulate(Config.from_dict(c))
            if not compiled_apart:
                with _lock:
                    _st.done += 1
    except Exception as e:  # never fatal: pages compile on demand instead
        with _lock:
            _st.error = f"{type(e).__name__}: {e}"
    finally:
        cache.end_warming()
    with _lock:
        _st.ready = True
        return _snapshot()


def _compile_in_a_subprocess() -> bool:
    """Compile the kernels into numba's disk cache in a process of its own (`python -m
    dynamics.warmup`, reporting each run done): the compiler holds its interpreter lock most of
    the time, and in this process that lock serves the visitors' pages meanwhile. True when it
    succeeded (this process then loads what it wrote)."""
    try:  # its stdin stays open while this process lives: at its end the compiler stops too
        proc = subprocess.Popen([sys.executable, "-m", "dynamics.warmup"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
    except OSError:
        return False
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("done"):
            with _lock:
                _st.done += 1
    return proc.wait() == 0 and _cache_is_warm()


def _snapshot() -> WarmState:
    return WarmState(started=_st.started, done=_st.done, total=_st.total,
                     ready=_st.ready or _st.started is None, error=_st.error,
                     expected_s=_st.expected_s)


def state() -> WarmState:
    """The start-up compilation's state now (ready=True when it never started: a process
    that did not ask for a warm-up, e.g. a test or the CLI, compiles on demand)."""
    with _lock:
        return _snapshot()


__all__ = ["WarmState", "begin", "state", "warm_kernels"]


if __name__ == "__main__":  # the compilation apart (`_compile_in_a_subprocess`)
    if hasattr(os, "nice"):
        os.nice(COMPILE_NICE)

    def _orphaned() -> None:
        """The server that started this compile is gone (its end of stdin closed): stop (a
        stopped server left a compiler running for ~30 s of a core)."""
        sys.stdin.read()
        os._exit(1)

    threading.Thread(target=_orphaned, daemon=True).start()
    from .config import Config
    from .simulate import simulate

    for _c in _warm_configs():
        simulate(Config.from_dict(_c))
        print("done", flush=True)
