"""Soak: many protocol-level sessions on one server for a long time — does it hold?

    .venv/bin/python -m bench soak                           # 12 sessions, 15 minutes
    .venv/bin/python -m bench soak --sessions 30 --minutes 60 --json soak.json
    .venv/bin/python -m bench soak --quick                   # 4 sessions, 1 minute (smoke)

Starts one server (`bench.app_server.Server`: `streamlit run serve.py`, loopback, a fresh cache, the
operator view on), then keeps `--sessions` Streamlit sessions busy (devtools.protocol, no
browser): each session does a random mix of page loads (every page, presets and link
variants), settings changes (the Explorer's width, leaky slope and seed), uploads (a small CSV
on the Explorer and on Real data) and page switches, ends after 5–25 actions and is replaced
by a new one. Each action is one the page offers as its last run drew it: a settings change
only where those widgets are shown, an upload only into an uploader shown (else first a page
switch to an upload view). Files left in uploaders the session moved away from stay on the
server until it ends, so a session reaches `EAE_SESSION_UPLOAD_FILES`; an upload past it must
be refused (413) and is counted as "upload refused (session limit)", not as an error.
Every `--sample-s` seconds (30) it samples the server's RSS, open files and threads, and the
actions and errors so far; at the end it reads the service's cache sizes from the About &
status page, waits `--settle-s` after the last session ended and samples again, and counts
errors in the server log.

Reported: the RSS curve as a table, with the memory cache's size at each sample (read from
the About & status page); whether RSS stays within 10 % (max / min) from the first sample at
which the memory cache is full (≥ 90 % of `--memory-cache-mb`, given to the server as
`EAE_MEMORY_CACHE_MB`, 32 MB by default so that it fills within the first minutes: a growing
cache is memory in use, not a leak — an earlier soak drifted +12 % while its cache grew to
61 MB of its 512), or from the end of the first third if it never fills; open files and
threads flat (max − min), the caches within their bounds, no errors (session exceptions,
protocol failures, log tracebacks). Nothing here is asserted; the lead runs the ≥ 30-minute
soak on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from devtools.protocol import ProtocolError, ProtocolSession, RunResult
from dynamics.limits import get_limits

from .app_server import Server
from .machine import loadavg_text

PAGES = [("", ""), ("", "model.width=30&seed=2"), ("", "model.gamma=0.2"),
         ("overview", ""), ("papers", ""), ("papers", "paper=chistikov"), ("compare", ""),
         ("real_data", ""), ("status", ""), ("", "view.presenter=true"),
         ("", "data.kind=teacher&data.n=20000&data.d=8")]  # a heavy link: its gate, no run
SETTINGS: dict[str, list[Any]] = {"width m": [20, 30, 40, 50], "leaky slope γ": [0.0, 0.1, 0.2],
                               "seed": list(range(6))}  # the Explorer's, by label
UPLOAD_PAGES = {"": ("data.kind=array&model.width=8&record.frames=10",
                     "CSV or NPZ of points and labels"),
                "real_data": ("source=upload&model.width=8", "points and labels")}
CSV = ("x1,x2,y\n" + "\n".join(f"{(i % 7) / 7 - 0.5:.3f},{(i % 5) / 5 - 0.4:.3f},"
                               f"{1 if i % 2 else -1}" for i in range(40)) + "\n").encode()


@dataclass
class Sample:
    t_s: float
    rss_mb: float
    open_files: int
    threads: int
    sessions: int
    actions: int
    errors: int
    load1: float
    cache_mb: float | None = None  # the service's memory cache (About & status), MB


@dataclass
class SoakReport:
    sessions: int
    minutes: float
    cache_limit_mb: float = 32.0
    samples: list[Sample] = field(default_factory=list)
    after_end: Sample | None = None
    actions: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    log_errors: list[str] = field(default_factory=list)
    caches: dict[str, str] = field(default_factory=dict)

    def cache_full_at(self) -> float | None:
        """The time of the first sample with the memory cache full (≥ 90 % of its limit)."""
        return next((s.t_s for s in self.samples
                     if s.cache_mb is not None and s.cache_mb >= 0.9 * self.cache_limit_mb),
                    None)

    def summary(self) -> dict[str, Any]:
        full = self.cache_full_at()
        since = full if full is not None else self.minutes * 60 / 3
        warm = [s for s in self.samples if s.t_s >= since] or self.samples
        rss = [s.rss_mb for s in warm]
        fds = [s.open_files for s in warm]
        threads = [s.threads for s in warm]
        return {
            "baseline": (f"memory cache full at t = {full:.0f} s" if full is not None
                         else "the first third (the memory cache never filled)"),
            "rss_after_warmup_max_over_min": round(max(rss) / min(rss), 3) if rss else None,
            "rss_range_mb": (min(rss), max(rss)) if rss else None,
            "rss_flat_within_10pct": bool(rss) and max(rss) <= 1.10 * min(rss),
            "open_files_range": (min(fds), max(fds)) if fds else None,
            "threads_range": (min(threads), max(threads)) if threads else None,
            "actions": sum(self.actions.values()),
            "errors": len(self.errors), "log_errors": len(self.log_errors),
            "rss_after_end_mb": self.after_end.rss_mb if self.after_end else None,
        }


def _proc(pid: int) -> tuple[float, int, int]:
    """(RSS in MB, open files, threads) of a process (Linux /proc)."""
    rss, threads = 0.0, 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024.0
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    return rss, len(list(Path(f"/proc/{pid}/fd").iterdir())), threads


class _Soak:
    def __init__(self, url: str, n: int, until: float, seed: int):
        self.url, self.n, self.until = url, n, until
        self.lock = threading.Lock()
        self.actions: dict[str, int] = {}
        self.errors: list[str] = []
        self.live = 0
        self.rng = random.Random(seed)
        self.upload_files_limit = get_limits().session_upload_files  # the server's env too

    def count(self, what: str) -> None:
        with self.lock:
            self.actions[what] = self.actions.get(what, 0) + 1

    def fail(self, what: str) -> None:
        with self.lock:
            self.errors.append(what[:300])

    def worker(self, k: int) -> None:
        rng = random.Random(self.rng.random() + k)
        while time.monotonic() < self.until:
            page, query = rng.choice(PAGES)
            try:
                with ProtocolSession(self.url, page=page, query=query, timeout_s=300) as s:
                    with self.lock:
                        self.live += 1
                    try:
                        self.session(s, rng)
                    finally:
                        with self.lock:
                            self.live -= 1
            except (ProtocolError, OSError, KeyError) as e:
                self.fail(f"session: {type(e).__name__}: {e}")
            time.sleep(rng.uniform(0.0, 1.0))  # think time between visitors

    def session(self, s: ProtocolSession, rng: random.Random) -> None:
        """5–25 actions, each one the page offers as its last run drew it: a settings change
        where those widgets are shown, an upload into an uploader shown (after a page switch
        to the Explorer's or Real data's upload view when this page shows none), else a page
        switch. Uploads beyond the session's file limit are expected refusals (413)."""
        run = s.rerun()
        self.count("page load")
        self.check(s, run)
        held = 0  # files this session holds on the server (what the 413 limit counts)
        for _ in range(rng.randint(5, 25)):
            if time.monotonic() >= self.until:
                return
            what = rng.random()
            knobs = [k for k in SETTINGS if _shows(run, k)] if s.page == "" else []
            if what < 0.45 and knobs:
                knob = rng.choice(knobs)
                run = s.set_widget(knob, rng.choice(SETTINGS[knob]))
                self.count("settings change")
            elif what < 0.6:
                label = _uploader(s, run)
                if label is None:  # none here: switch to a page whose link shows one
                    page = rng.choice([p for p in UPLOAD_PAGES if p != s.page])
                    run = s.rerun(page=page, query=UPLOAD_PAGES[page][0])
                    self.count("page switch")
                    self.check(s, run)
                    label = _uploader(s, run)
                if label is not None:
                    run, held = self.upload(s, label, held)
            else:
                page, query = rng.choice(PAGES)
                run = s.rerun(page=page, query=query)
                self.count("page switch")
            self.check(s, run)
            time.sleep(rng.uniform(0.2, 2.0))

    def check(self, s: ProtocolSession, run: RunResult) -> None:
        if run.exceptions:
            self.fail(f"{s.page or 'explorer'}?{s.query}: {run.exceptions[0]}")

    def upload(self, s: ProtocolSession, label: str, held: int) -> tuple[RunResult, int]:
        """Upload the CSV through the uploader `label` (shown by the last run); the run after
        it and the files the session holds then. The uploader's previous file is deleted
        first (`ProtocolSession.upload`); files left in uploaders of other pages or data
        kinds stay until the session ends, so a session reaches `EAE_SESSION_UPLOAD_FILES`:
        an upload past it must be refused with 413, and one below it must not."""
        wid = s.widget_id(label)[0]
        state = s.widgets.get(wid)
        replaced = (len(state.file_uploader_state_value.uploaded_file_info)
                    if state is not None and state.HasField("file_uploader_state_value") else 0)
        held -= replaced
        over = held >= self.upload_files_limit
        try:
            run = s.upload(label, "soak.csv", CSV)
        except ProtocolError as e:
            if over and "HTTP 413" in str(e):
                self.count("upload refused (session limit)")
                return s.last or RunResult(), held
            raise
        if over:
            self.fail(f"an upload past the session's limit of {self.upload_files_limit} "
                      "files was accepted")
        self.count("upload")
        return run, held + 1


def _shows(run: RunResult, label: str, kind: str | None = None) -> bool:
    """Whether `run` drew a widget labelled `label` (of element type `kind`)."""
    return any(getattr(el, "label", None) == label and getattr(el, "id", "")
               for k, el in run.elements if kind is None or k == kind)


def _uploader(s: ProtocolSession, run: RunResult) -> str | None:
    """The label of the soak's file uploader that `run` (on `s.page`) drew, if any."""
    label = UPLOAD_PAGES.get(s.page, ("", ""))[1]
    return label if label and _shows(run, label, "file_uploader") else None


def _caches(url: str) -> dict[str, str]:
    with ProtocolSession(url, page="status") as s:
        run = s.rerun()
    return {m.label: m.body for m in run.of_type("metric")
            if m.label in ("Memory entries", "Memory size", "Disk size")} | {
        f"{m.label} (limit)": m.help for m in run.of_type("metric")
        if m.label in ("Memory size", "Disk size")}


def _cache_mb(url: str) -> float | None:
    """The service's memory cache size in MB, from the About & status page (None: unread)."""
    try:
        shown = _caches(url).get("Memory size", "")
        value, unit = shown.split()[:2]
        return float(value.replace(",", "")) * {"kB": 1e-3, "MB": 1.0, "GB": 1e3}.get(unit, 1.0)
    except (ProtocolError, OSError, ValueError, KeyError):
        return None


def run_soak(n_sessions: int, minutes: float, sample_s: float, settle_s: float,
             seed: int = 0, say: Any = print, cache_mb: float = 32.0) -> SoakReport:
    rep = SoakReport(sessions=n_sessions, minutes=minutes, cache_limit_mb=cache_mb)
    server = Server(env={"EAE_MEMORY_CACHE_MB": f"{cache_mb:g}"})
    try:
        server.wait_ready()
        pid = server.proc.pid
        start = time.monotonic()
        soak = _Soak(server.url, n_sessions, start + minutes * 60, seed)
        threads = [threading.Thread(target=soak.worker, args=(k,), daemon=True)
                   for k in range(n_sessions)]
        for th in threads:
            th.start()

        def sample() -> Sample:
            cache = _cache_mb(server.url)
            rss, fds, nth = _proc(pid)
            with soak.lock:
                return Sample(round(time.monotonic() - start, 1), round(rss, 1), fds, nth,
                              soak.live, sum(soak.actions.values()), len(soak.errors),
                              float(loadavg_text().split()[0]), cache)

        while time.monotonic() < soak.until:
            rep.samples.append(sample())
            say(f"t = {rep.samples[-1].t_s:.0f} s: RSS {rep.samples[-1].rss_mb:.0f} MB, "
                f"memory cache {rep.samples[-1].cache_mb} MB, "
                f"{rep.samples[-1].sessions} sessions, {rep.samples[-1].actions} actions")
            time.sleep(min(sample_s, max(0.0, soak.until - time.monotonic())))
        for th in threads:
            th.join(330)
        rep.samples.append(sample())
        rep.caches = _caches(server.url)
        time.sleep(settle_s)  # the sessions' reconnect time and the reaper's round
        rep.after_end = sample()
        rep.actions, rep.errors = dict(soak.actions), list(soak.errors)
        log = server.log(10**8)
        rep.log_errors = [ln for ln in log.splitlines()
                          if re.search(r"Traceback|\bERROR\b|Exception", ln)][:50]
    finally:
        server.stop()
    return rep


def render(rep: SoakReport) -> str:
    s = rep.summary()
    L = [f"## Soak: {rep.sessions} protocol-level sessions, {rep.minutes:g} min "
         f"(load at the end: {loadavg_text()})", "",
         "| t (s) | RSS (MB) | memory cache (MB) | open files | threads | sessions | actions "
         "| errors | load |",
         "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for x in rep.samples + ([rep.after_end] if rep.after_end else []):
        tag = " (after the end)" if x is rep.after_end else ""
        cache = "?" if x.cache_mb is None else f"{x.cache_mb:.1f}"
        L.append(f"| {x.t_s:.0f}{tag} | {x.rss_mb:.0f} | {cache} | {x.open_files} | "
                 f"{x.threads} | {x.sessions} | {x.actions} | {x.errors} | {x.load1:.1f} |")
    L += ["", f"Actions: {rep.actions}. Caches at the end: {rep.caches}.",
          f"RSS from the baseline ({s['baseline']}): {s['rss_range_mb']} MB, max/min = "
          f"{s['rss_after_warmup_max_over_min']} "
          f"({'flat within 10 %' if s['rss_flat_within_10pct'] else 'NOT flat within 10 %'}); "
          f"open files {s['open_files_range']}, threads {s['threads_range']}; "
          f"errors {s['errors']}, server log errors {s['log_errors']}."]
    L += [f"- {e}" for e in (rep.errors + rep.log_errors)[:20]]
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench soak", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=12, help="sessions at once (10–30)")
    ap.add_argument("--minutes", type=float, default=15.0, help="duration")
    ap.add_argument("--sample-s", type=float, default=30.0, help="seconds between samples")
    ap.add_argument("--settle-s", type=float, default=60.0,
                    help="seconds after the last session before the final sample")
    ap.add_argument("--quick", action="store_true", help="4 sessions, 1 minute, 10 s samples")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--memory-cache-mb", type=float, default=32.0,
                    help="the server's EAE_MEMORY_CACHE_MB (small, so the cache fills early)")
    ap.add_argument("--json", help="write the samples and counts here")
    args = ap.parse_args(argv)
    if args.quick:
        args.sessions, args.minutes, args.sample_s, args.settle_s = 4, 1.0, 10.0, 40.0
    rep = run_soak(args.sessions, args.minutes, args.sample_s, args.settle_s, args.seed,
                   say=lambda m: print(m, file=sys.stderr, flush=True),
                   cache_mb=args.memory_cache_mb)
    print(render(rep))
    if args.json:
        Path(args.json).write_text(json.dumps({**asdict(rep), "summary": rep.summary()},
                                              indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
