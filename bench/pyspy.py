"""Where a server process spends its time: py-spy samples it from outside (no change to the
app), and the samples are summed by thread and by function.

`Recorder(pid)` runs ``py-spy record --format raw --threads`` on the process until `stop()`
(SIGINT, which makes py-spy write its file); with ``gil=True`` only the thread holding the
interpreter lock is sampled (``--gil``: the time that serialises every session; numba kernels
release the lock and so drop out). `summarise(path)` reads the collapsed stacks
(``thread (tid): name;outer (file:line);…;inner (file:line) count``) into shares of the
samples: per thread kind, per function inclusive (a sample counts once for every function on
its stack), per innermost function (self time), and per category (`LEAF_CATEGORIES` on the
innermost frame, then the first of `CATEGORIES` whose marker is on the stack, innermost
first). Samples of threads that wait (`WAITING`) are left out, so without ``--gil`` the
shares are of the process's CPU time, approximately. A sampling profile: at 67 Hz, a share of
a few samples is noise.

py-spy is optional (``.venv/bin/pip install py-spy==0.4.3``, pinned in
requirements-bench.txt); it needs ptrace rights on the process (root, or CAP_SYS_PTRACE).
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

#: (category, markers) looked for in the innermost frame only, before `CATEGORIES`: a C call
#: made directly by that Python function (py-spy shows its caller).
LEAF_CATEGORIES: list[tuple[str, tuple[str, ...]]] = [
    ("gc.collect(2) after every script run (Streamlit's runner.postScriptGC)",
     ("ScriptRunner._on_script_finished (streamlit/runtime/scriptrunner/script_runner.py",)),
]
#: (category, markers): a sample is in the first category whose marker occurs in a frame of
#: its stack, looking from the innermost frame out. Markers are substrings of "function
#: (file:line)".
CATEGORIES: list[tuple[str, tuple[str, ...]]] = [
    ("simulate (numba kernels, frame recording)", ("(dynamics/simulate.py", "(dynamics/kernels/")),
    ("gzip of HTTP responses", ("(starlette/middleware/gzip.py", "(gzip.py")),
    ("payload encode (viz.payload)", ("(viz/payload.py",)),
    ("figure build (viz)", ("(viz/",)),
    ("analysis, theory, readouts (dynamics)", ("(dynamics/analysis.py", "(dynamics/theory.py",
                                               "(dynamics/phases.py", "(dynamics/readouts.py",
                                               "(dynamics/timescales.py", "(dynamics/papers/")),
    ("service, disk cache (dynamics)", ("(dynamics/service.py", "(dynamics/cache.py",
                                        "(dynamics/admission.py", "(dynamics/diskstore.py",
                                        "(dynamics/trajectory.py", "(runtime/queue.py",
                                        "(runtime/speculation.py")),
    ("config validation (pydantic, dynamics.config)", ("(dynamics/config/", "(pydantic")),
    ("plotly (validation, to JSON)", ("(plotly/", "(_plotly_utils/")),
    ("downloads (ui.downloads)", ("(ui/downloads.py",)),
    ("page code (ui, app_pages)", ("(ui/", "(app_pages/", "(app.py")),
    ("protobuf / forward messages (streamlit runtime)", ("(streamlit/runtime/",
                                                          "(google/protobuf")),
    ("Streamlit elements", ("(streamlit/elements/", "(streamlit/delta_generator",
                            "(streamlit/commands/")),
    ("websocket / HTTP / event loop", ("(uvicorn/", "(starlette/", "(websockets/",
                                       "(asyncio/", "(streamlit/web/", "(anyio/")),
]

#: Innermost frames of a thread that waits (py-spy's own idle detection misses them in a
#: container: blocked C calls show as their Python caller). Such samples are counted apart.
WAITING = ("threading.py:Condition.wait", "threading.py:Event.wait", "queue.py:Queue.get",
           "selectors.py:EpollSelector.select", "selectors.py:PollSelector.select",
           "concurrent/futures/thread.py:_worker", "multiprocessing/popen_fork.py:Popen.poll",
           "threading.py:Thread._wait_for_tstate_lock", "threading.py:Thread.join",
           "streamlit/watcher/polling_path_watcher.py:PollingPathWatcher._schedule.<locals>.task",
           "multiprocessing/connection.py:_recv", "multiprocessing/connection.py:wait",
           "multiprocessing/queues.py:Queue.get",
           "asyncio/base_events.py:BaseEventLoop.run_forever",
           "socket.py:SocketIO.readinto", "ssl.py:SSLSocket.read")

#: The project's own code (for the "project functions" list).
PROJECT = ("viz/", "ui/", "dynamics/", "app_pages/", "app.py", "serve.py")

_THREAD = re.compile(r"^thread \(\d+\): ?(.*)$")
_LINE = re.compile(r"\s*\(([^()]*?)(?::\d+)?\)\s*$")


def available() -> str | None:
    """The py-spy executable (next to this interpreter, else on PATH), or None."""
    here = Path(sys.executable).with_name("py-spy")
    if here.exists():
        return str(here)
    return shutil.which("py-spy")


class Recorder:
    """py-spy sampling `pid` at `rate` Hz into `out` (raw collapsed stacks) until `stop()`."""

    def __init__(self, pid: int, out: Path, rate: int = 67, subprocesses: bool = False,
                 gil: bool = False) -> None:
        exe = available()
        if exe is None:
            raise RuntimeError("py-spy is not installed (.venv/bin/pip install py-spy)")
        self.out = Path(out)
        cmd = [exe, "record", "--pid", str(pid), "--rate", str(rate), "--format", "raw",
               "--output", str(self.out), "--threads", "--nonblocking"]
        if subprocesses:
            cmd.append("--subprocesses")
        if gil:  # only the thread holding the GIL: what serialises the server's Python
            cmd.append("--gil")
        self.log = self.out.with_suffix(".log")
        self._log = open(self.log, "wb")  # closed in stop()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT)

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self, timeout: float = 60.0) -> Path | None:
        """Stop sampling; the raw file (None if py-spy wrote none: see `log`)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()
        return self.out if self.out.exists() and self.out.stat().st_size else None


def _frame_name(frame: str) -> str:
    """"fn (pkg/file.py:123)" → "pkg/file.py:fn" (the line dropped, so calls add up)."""
    m = _LINE.search(frame)
    if not m:
        return frame.strip()
    return f"{m.group(1)}:{frame[:m.start()].strip()}"


def _thread_kind(name: str) -> str:
    """A thread's name without its numbers and keys ("eae-flight-3f2a…" → "eae-flight")."""
    name = re.sub(r"\s*\(0x[0-9a-f]+\)", "", name).strip()
    name = re.sub(r"[-_ ]?[0-9a-f]{6,}$", "", name)
    name = re.sub(r"[-_]?\d+(_\d+)?$", "", name)
    return name or "?"


def summarise(path: Path, top: int = 15) -> dict[str, Any]:
    """Shares of the samples in a raw py-spy file (see the module docstring)."""
    total = waiting = 0
    by_thread: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    leaf: Counter[str] = Counter()
    cats: Counter[str] = Counter()
    for line in Path(path).read_text(errors="replace").splitlines():
        stack, _, count_s = line.rpartition(" ")
        if not stack or not count_s.isdigit():
            continue
        n = int(count_s)
        parts = stack.split(";")
        m = _THREAD.match(parts[0])
        thread = _thread_kind(m.group(1)) if m else "?"
        frames = parts[1:] if m else parts
        inner = _frame_name(frames[-1]) if frames else "?"
        if inner in WAITING:
            waiting += n
            continue
        total += n
        by_thread[thread] += n
        leaf[inner] += n
        for name in {_frame_name(f) for f in frames}:
            inclusive[name] += n
        cat = "other (imports, idle loops, …)"
        leaf_cat = next((c for c, marks in LEAF_CATEGORIES
                         if frames and any(mk in frames[-1] for mk in marks)), None)
        for f in reversed(frames if leaf_cat is None else []):
            hit = next((c for c, marks in CATEGORIES if any(mk in f for mk in marks)), None)
            if hit is not None:
                cat = hit
                break
        cats[leaf_cat or cat] += n

    def share(c: Counter[str], k: int | None = top) -> list[tuple[str, float]]:
        return [(name, n / total) for name, n in c.most_common(k)] if total else []

    ours = Counter({k: v for k, v in inclusive.items() if k.startswith(PROJECT)})
    return {"samples": total, "waiting": waiting, "threads": share(by_thread, 12),
            "categories": share(cats, None), "inclusive": share(inclusive),
            "project": share(ours, 25), "self": share(leaf)}


def render(summary: dict[str, Any], title: str = "py-spy") -> str:
    """The summary as text: categories, threads, top functions inclusive and self."""
    out = [f"{title}: {summary['samples']} samples of running threads (and "
           f"{summary['waiting']} of threads waiting, left out)"]
    for head, key in (("by category (innermost marker on the stack)", "categories"),
                      ("by thread", "threads"), ("functions, inclusive", "inclusive"),
                      ("the project's functions, inclusive", "project"),
                      ("functions, self (innermost frame)", "self")):
        out.append(f"  {head}:")
        out += [f"    {100 * s:5.1f} %  {name}" for name, s in summary.get(key, [])]
    return "\n".join(out)


__all__ = ["CATEGORIES", "LEAF_CATEGORIES", "Recorder", "available", "render", "summarise"]
