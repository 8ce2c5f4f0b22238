"""Watching a server process from outside while a load runs: its health endpoint's latency
(polled from a process of its own), and the memory and CPU time of its process tree.

Memory is the sum of VmRSS (``/proc/<pid>/status``) over the server and its live descendants
(e.g. Dask workers): pages shared between them are counted once per process, as `ps` does. CPU
time is user + system seconds (``/proc/<pid>/stat``) of the same processes plus the children
they have already reaped (cutime, cstime). Both are Linux-only, as the benchmarks are.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_TICK = os.sysconf("SC_CLK_TCK")


def pct(xs: Iterable[float | None], q: float) -> float | None:
    """Percentile `q` (0–100, linear interpolation) of the values that are not None."""
    v = sorted(x for x in xs if x is not None)
    if not v:
        return None
    pos = (len(v) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out.setdefault(ppid, []).append(int(d.name))
    return out


def process_tree(pid: int) -> list[int]:
    """`pid` and its live descendants."""
    kids = _children()
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        out.append(p)
        stack.extend(kids.get(p, []))
    return out


def rss_mb(pid: int) -> float:
    """VmRSS of one process in MB (10⁶ bytes); 0 if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / 1e6
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def tree_rss_mb(pid: int) -> float:
    """Summed VmRSS of `pid` and its live descendants, MB."""
    return sum(rss_mb(p) for p in process_tree(pid))


def cpu_s(pid: int, reaped: bool = False) -> float:
    """User + system CPU seconds of a process (all its threads; with `reaped`, plus its
    waited-for children's); 0 if it is gone."""
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(f[11]) + int(f[12]) + ((int(f[13]) + int(f[14])) if reaped else 0)
        return ticks / _TICK
    except (OSError, ValueError, IndexError):
        return 0.0


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of `pid` and of its live descendants, each with the children it has
    reaped (a renderer that Chromium has waited for, a worker its nanny has)."""
    return sum(cpu_s(p, reaped=True) for p in process_tree(pid))


def threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def open_files(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


@dataclass(frozen=True)
class Health:
    """One poll of the health endpoint: when it was sent (monotonic), how long the answer
    took (s) and whether it was "ok"."""

    t: float
    latency_s: float
    ok: bool


def _poll_health(url: str, interval_s: float, timeout_s: float, halt: Any, out: Any) -> None:
    """The poller's process: GET `url` every `interval_s` after the previous answer; each
    poll (sent at, latency, ok) goes to `out` as it is read."""
    while not halt.is_set():
        t0 = time.monotonic()
        ok = False
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as r:
                ok = r.status == 200 and r.read().strip() == b"ok"
        except (urllib.error.URLError, OSError, TimeoutError):
            ok = False
        out.put((t0, time.monotonic() - t0, ok))
        halt.wait(interval_s)


class HealthPoller:
    """GET ``<base>/_stcore/health`` every `interval_s` (the next one `interval_s` after the
    previous answer, so a stalled server shows as one long poll, not a pile-up), from a
    process of its own: polled from a thread of the process that drives the class, the
    latency read included that process's own waits for its interpreter lock while it decoded
    thirty sessions' messages. Times are `time.monotonic()`, one clock for every process."""

    def __init__(self, base_url: str, interval_s: float = 0.1, timeout_s: float = 30.0) -> None:
        self.url = base_url.rstrip("/") + "/_stcore/health"
        self.interval_s, self.timeout_s = interval_s, timeout_s
        self._samples: list[Health] = []
        ctx = multiprocessing.get_context("spawn")  # not fork: the caller runs threads
        self._halt = ctx.Event()
        self._out: Any = ctx.Queue()
        self._proc = ctx.Process(target=_poll_health, name="health-poller", daemon=True,
                                 args=(self.url, interval_s, timeout_s, self._halt, self._out))

    def start(self) -> None:
        self._proc.start()

    @property
    def samples(self) -> list[Health]:
        """The polls answered so far, in order."""
        self._drain()
        return self._samples

    def _drain(self) -> None:
        while True:
            try:
                t, lat, ok = self._out.get_nowait()
            except queue.Empty:
                return
            self._samples.append(Health(t, lat, ok))

    def stop(self) -> None:
        self._halt.set()
        self._proc.join(self.timeout_s + 1)
        self._drain()

    def window(self, t0: float = float("-inf"),
               t1: float = float("inf")) -> dict[str, float | None]:
        """Polls sent in [t0, t1): count, failures, max / p95 / p50 latency (ms)."""
        got = [h for h in self.samples if t0 <= h.t < t1]
        lat = [h.latency_s * 1e3 for h in got]
        return {"polls": len(got), "failed": sum(not h.ok for h in got),
                "max_ms": max(lat, default=None), "p95_ms": pct(lat, 95),
                "p50_ms": pct(lat, 50)}


@dataclass(frozen=True)
class Sample:
    """The server tree at one moment: time (monotonic), RSS (MB), CPU (s), threads and open
    files of the server process itself."""

    t: float
    rss_mb: float
    cpu_s: float
    threads: int
    open_files: int


class TreeSampler(threading.Thread):
    """Samples `pid`'s tree every `interval_s` from its own thread (see `Sample`)."""

    def __init__(self, pid: int, interval_s: float = 0.5) -> None:
        super().__init__(name="tree-sampler", daemon=True)
        self.pid, self.interval_s = pid, interval_s
        self.samples: list[Sample] = []
        self._halt = threading.Event()

    def sample(self) -> Sample:
        s = Sample(time.monotonic(), tree_rss_mb(self.pid), tree_cpu_s(self.pid),
                   threads(self.pid), open_files(self.pid))
        self.samples.append(s)
        return s

    def run(self) -> None:
        while not self._halt.is_set():
            self.sample()
            self._halt.wait(self.interval_s)

    def stop(self) -> None:
        self._halt.set()
        self.join(5)

    def peak_rss(self, t0: float = float("-inf"), t1: float = float("inf")) -> float | None:
        return max((s.rss_mb for s in self.samples if t0 <= s.t < t1), default=None)


def wait_quiet(pid: int, cpu_fraction: float = 0.05, over_s: float = 2.0,
               timeout_s: float = 120.0) -> float:
    """Wait until the server tree used less than `cpu_fraction` of one core over `over_s`
    (its background work is done); the seconds waited (== `timeout_s` if it never was)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        c0 = tree_cpu_s(pid)
        time.sleep(over_s)
        if (tree_cpu_s(pid) - c0) / over_s < cpu_fraction:
            break
    return time.monotonic() - t0


__all__ = ["Health", "HealthPoller", "Sample", "TreeSampler", "cpu_s", "open_files", "pct",
           "process_tree", "rss_mb", "threads", "tree_cpu_s", "tree_rss_mb", "wait_quiet"]
