"""A classroom on one link: `python -m bench load --students 30` (issue 20 item 4).

    .venv/bin/python -m bench load --students 30 [--browsers 10] [--json out.json]
    .venv/bin/python -m bench load --quick            # 6 students, short waits (smoke run)

One server (`streamlit run serve.py` on loopback, a fresh EAE_CACHE_DIR, kernels compiled
into numba's disk cache first, the start-up warm-up waited for), then:

0. a warm-up visit (one session on the Explorer with another seed, so the first visitor's
   imports are not the class's), and the server left to finish its background work;
1. (a) `--students` protocol-level sessions (`devtools.stclient`: the browser's websocket
   protocol, no browser on the server's cores) open the same link at once: time to chart =
   from opening the socket until the player element with a figure key arrived AND its payload
   was fetched (as the player's iframe fetches it). The students watch and change the width:
   none reaches for the scrub slider, so no family is computed or fetched (as in the browser,
   where the player asks for its family only then; scrubbing is `python -m bench drag`'s);
2. `--pause` seconds later, (b) each changes the width (`width m`) to a different value, the
   changes spread evenly over `--window` seconds: time to chart = from the rerun message to the
   new figure's payload fetched (its title is checked to name the new width);
   With `--edits K`, then (c) K of them drag a data point of their figure at once for
   `--edit-seconds` (`drag_one`: the player's posts to the edit route, one in flight each):
   edits answered per student per second and their latency;
3. the health endpoint is polled every 100 ms from its own thread throughout: max and p95
   latency per phase and overall;
4. (d) the server tree's RSS (VmRSS of the server and its children, e.g. Dask workers) at start
   (after the warm-up visit), its peak, and `--rss-wait` seconds after every session closed;
5. (e) server CPU time: per phase (process-tree CPU seconds from /proc, everything: script
   runs, simulate, figures, speculative runs), and per new chart *excluding simulate*: a second
   server on the same cache directory (every run a disk hit; speculative work off,
   EAE_PREFETCH=0), one session changing the width `--cpu-charts` times to widths run in
   (b): the server's CPU seconds from each change until the page is idle;
6. `--browsers N` adds N real Chromium pages (one context each, `devtools.browser`) to both
   phases: time to chart = until the player in the page has drawn the figure; the browser is on
   the same cores as the server, which is why the protocol-level numbers are the goal's.

`--profile` samples the server with py-spy during (a) and (b) (``--gil``: only the thread
holding the interpreter lock is sampled, i.e. the time that serialises every session; numba
kernels release it) and prints where that time went (`bench.pyspy`).

Goals (issue 20): p95 time to chart ≤ 3 s in (a) and (b), health < 250 ms throughout, RSS back
within 10 % of its start `--rss-wait` = 60 s after. Measured on a shared machine, the load
average is printed with every phase; nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import statistics
import tempfile
import threading
import time
import urllib.request
from collections.abc import Awaitable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from devtools.stclient import AsyncSession, Chart, ClientError, Session

from . import pyspy
from .app_server import Server, warm_numba_cache
from .serverwatch import HealthPoller, TreeSampler, pct, tree_cpu_s, tree_rss_mb, wait_quiet

T = TypeVar("T")
WIDTH = "width m"  # the Explorer's width control (label)
DEFAULT_WIDTH = 50  # the width of the Explorer's default link
GOAL_CHART_S = 3.0
GOAL_HEALTH_MS = 250.0
GOAL_RSS_FRACTION = 0.10
WARMUP_QUERY = "seed=987"  # the warm-up visit: the Explorer, another run than the class's


@dataclass(frozen=True)
class Options:
    """One classroom run's settings (see the module docstring and `--help`)."""

    students: int = 30
    browsers: int = 0
    query: str = ""
    page: str = ""
    window_s: float = 5.0
    pause_s: float = 5.0
    rss_wait_s: float = 60.0
    timeout_s: float = 300.0
    cpu_charts: int = 5
    profile: bool = False
    warm: bool = True
    env: tuple[tuple[str, str], ...] = ()
    quick: bool = False
    keep_profile: Path | None = None  # where to copy py-spy's raw samples
    families: int = 0  # students who reach for the scrub slider (their player fetches families)
    edits: int = 0  # students who then drag a data point for `edit_s` seconds (ui.edits)
    edit_s: float = 10.0


QUICK = {"students": 6, "window_s": 2.0, "pause_s": 1.0, "rss_wait_s": 10.0, "cpu_charts": 2}


@dataclass
class Visit:
    """One participant in one phase: time to chart (s; None: none before the timeout), to
    idle, the figure key, whether the figure is the asked one, what went wrong."""

    who: str  # "p3" (protocol session 3) or "b1" (browser page 1)
    phase: str  # "open" or "change"
    chart_s: float | None = None
    idle_s: float | None = None
    key: str | None = None
    width: int | None = None
    right_figure: bool | None = None
    payload_bytes: int = 0
    wire_bytes: int = 0
    error: str | None = None


def widths_for(n: int, start: int = 20, avoid: tuple[int, ...] = (DEFAULT_WIDTH,)) -> list[int]:
    """`n` distinct widths from `start` up, none in `avoid` (the link's own width)."""
    out: list[int] = []
    w = start
    while len(out) < n:
        if w not in avoid:
            out.append(w)
        w += 1
    return out


def offsets(n: int, window_s: float) -> list[float]:
    """Start times (s) of `n` changes spread evenly over `window_s`: 0, w/n, 2w/n, …"""
    return [i * window_s / n for i in range(n)]


def phase_stats(visits: list[Visit]) -> dict[str, Any]:
    """n, ok (a right chart), p50 / p95 / max time to chart, p50 time to idle, errors."""
    times = [v.chart_s for v in visits if v.chart_s is not None]
    return {"n": len(visits), "ok": sum(v.chart_s is not None and v.right_figure is not False
                                        and v.error is None for v in visits),
            "p50_s": _r(pct(times, 50)), "p95_s": _r(pct(times, 95)),
            "max_s": _r(max(times, default=None)),
            "p50_idle_s": _r(pct([v.idle_s for v in visits], 50)),
            "wrong_figure": sum(v.right_figure is False for v in visits),
            "errors": sorted({v.error for v in visits if v.error})[:5]}


def _r(x: float | None, nd: int = 2) -> float | None:
    return None if x is None else round(x, nd)


def payload_title(payload: bytes) -> str:
    """The figure title in a player payload's header (`viz.payload`; a presenter figure's
    title is its legend's)."""
    from viz.payload import header_of
    lay = header_of(payload)["layout"]
    title = lay.get("title") or {}
    text = title.get("text", "") if isinstance(title, dict) else title
    if not text:
        text = ((lay.get("legend") or {}).get("title") or {}).get("text", "")
    return str(text)


def names_width(title: str, width: int) -> bool:
    return re.search(rf"width m = {width}\b", title) is not None


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# ----------------------------------------------------------------------------- protocol phases
async def open_one(i: int, base: str, query: str, page: str, timeout: float,
                   **opts: Any) -> tuple[AsyncSession | None, Visit]:
    v = Visit(f"p{i}", "open")
    t0 = time.monotonic()
    s: AsyncSession | None = None
    try:
        s = await AsyncSession.open(base, query, page, timeout=timeout, **opts)
        chart = await s.wait_chart(timeout=timeout)
        v.chart_s = chart.t_ready - t0 if chart.t_ready else None
        _describe(v, chart, None)
        await s.wait_idle(timeout)
        v.idle_s = time.monotonic() - t0
        if s.exceptions:
            v.error = s.exceptions[0][:200]
    except Exception as e:  # a participant's failure is a result, not the benchmark's end
        v.error = f"{type(e).__name__}: {e}"[:200]
    return s, v


async def change_one(i: int, s: AsyncSession | None, width: int, delay: float,
                     timeout: float) -> Visit:
    v = Visit(f"p{i}", "change", width=width)
    if s is None:
        v.error = "no session (its open failed)"
        return v
    await asyncio.sleep(delay)
    try:
        known = set(s.charts)
        t0 = time.monotonic()
        await s.set_widget(WIDTH, width)
        chart = await s.wait_chart(known, timeout)
        v.chart_s = chart.t_ready - t0 if chart.t_ready else None
        _describe(v, chart, width)
        await s.wait_idle(timeout)
        v.idle_s = time.monotonic() - t0
        if s.exceptions:
            v.error = s.exceptions[-1][:200]
    except Exception as e:  # a participant's failure is a result, not the benchmark's end
        v.error = f"{type(e).__name__}: {e}"[:200]
    return v


def _describe(v: Visit, chart: Chart, width: int | None) -> None:
    v.key = chart.key
    v.payload_bytes = len(chart.payload or b"")
    v.wire_bytes = chart.wire_bytes
    if width is not None and chart.payload is not None:
        v.right_figure = names_width(payload_title(chart.payload), width)


# ----------------------------------------------------------------------------- browsers
class BrowserClass(threading.Thread):
    """`n` Chromium pages (one context each) driven from this thread, phase by phase: the
    main thread sets `go_open`, `go_change`, `go_close`; this thread sets `opened`, `changed`
    when its pages are done (or timed out). Pages are polled in turn (granularity about
    0.05 s × pages)."""

    def __init__(self, base: str, n: int, query: str, page: str, widths: list[int],
                 window_s: float, timeout: float) -> None:
        super().__init__(name="browser-class", daemon=True)
        self.base, self.n, self.query, self.page = base, n, query, page
        self.widths, self.window_s, self.timeout = widths, window_s, timeout
        self.ready, self.go_open, self.opened = threading.Event(), threading.Event(), \
            threading.Event()
        self.go_change, self.changed, self.go_close = threading.Event(), threading.Event(), \
            threading.Event()
        self.visits: list[Visit] = []
        self.error: str | None = None

    def run(self) -> None:
        try:
            self._run()
        except Exception as e:  # reported with the results
            self.error = f"{type(e).__name__}: {e}"[:300]
        finally:
            for ev in (self.ready, self.opened, self.changed):
                ev.set()

    def _run(self) -> None:
        from playwright.sync_api import sync_playwright

        from devtools.browser import PLAYER_JS, VIEWPORT, launch_chromium

        url = f"{self.base}/{self.page}" + (f"?{self.query}" if self.query else "")
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            ctxs = [browser.new_context(viewport=VIEWPORT, reduced_motion="reduce")
                    for _ in range(self.n)]
            pages = [c.new_page() for c in ctxs]
            self.ready.set()
            self.go_open.wait()
            opens = [Visit(f"b{i}", "open") for i in range(self.n)]
            t0 = []
            for pg in pages:
                t0.append(time.monotonic())
                pg.goto(url, wait_until="commit")
            keys: list[str | None] = [None] * self.n
            deadline = time.monotonic() + self.timeout
            while any(k is None for k in keys) and time.monotonic() < deadline:
                for i, pg in enumerate(pages):
                    if keys[i] is None:
                        info = _player_info(pg, PLAYER_JS)
                        if info and info.get("key") and not info.get("stale"):
                            keys[i] = info["key"]
                            opens[i].chart_s, opens[i].key = time.monotonic() - t0[i], keys[i]
                pages[0].wait_for_timeout(50)
            for v in opens:
                v.error = None if v.chart_s is not None else "no chart before the timeout"
            self.visits += opens
            self.opened.set()

            self.go_change.wait()
            start = time.monotonic()
            when = offsets(self.n, self.window_s)
            changes = [Visit(f"b{i}", "change", width=w) for i, w in enumerate(self.widths)]
            sent: list[float | None] = [None] * self.n
            done = [keys[i] is None for i in range(self.n)]
            for i, d in enumerate(done):
                if d:
                    changes[i].error = "no chart to change"
            deadline = start + self.window_s + self.timeout
            while not all(done) and time.monotonic() < deadline:
                for i, pg in enumerate(pages):
                    if done[i]:
                        continue
                    if sent[i] is None:
                        if time.monotonic() - start >= when[i]:
                            box = pg.locator('[data-testid="stSidebar"]').get_by_role(
                                "spinbutton", name=WIDTH)
                            box.fill(str(self.widths[i]))
                            sent[i] = time.monotonic()
                            box.press("Enter")
                        continue
                    info = _player_info(pg, PLAYER_JS)
                    if info and info.get("key") and info["key"] != keys[i] \
                            and not info.get("stale"):
                        changes[i].chart_s = time.monotonic() - (sent[i] or 0.0)
                        changes[i].key = info["key"]
                        changes[i].right_figure = names_width(info.get("title") or "",
                                                              self.widths[i])
                        done[i] = True
                pages[0].wait_for_timeout(50)
            for i, v in enumerate(changes):
                if not done[i] and v.error is None:
                    v.error = "no new chart before the timeout"
            self.visits += changes
            self.changed.set()
            self.go_close.wait()
            for c in ctxs:
                c.close()
            browser.close()


def _player_info(page: Any, js: str) -> dict[str, Any] | None:
    try:
        got = page.evaluate(js, 0)
    except Exception:  # navigating, or the iframe is being replaced
        return None
    return got if isinstance(got, dict) else None


# ----------------------------------------------------------------------------- counters
def read_metrics(base: str, timeout: float = 120.0) -> dict[str, str]:
    """The metrics the About & status page shows (label → text, e.g. "Memory size" →
    "12.3 MB"), read by a protocol-level session; {} if the page shows none."""
    try:
        with Session.open(base, page="status", timeout=timeout, fetch=False) as s:
            s.wait_idle(timeout)
            return {el.metric.label.strip(): el.metric.body
                    for _, _, el in s.inner.elements("metric")}
    except (ClientError, OSError):
        return {}


def counters_of(metrics: dict[str, str]) -> dict[str, float]:
    """Each metric's leading number ("3 of 4" → 3, "1,204" → 1204)."""
    out: dict[str, float] = {}
    for label, body in metrics.items():
        m = re.search(r"-?[\d,]*\.?\d+", body)
        if m:
            out[label] = float(m.group().replace(",", ""))
    return out


def read_counters(base: str, timeout: float = 120.0) -> dict[str, float]:
    """The service counters of the About & status page (`counters_of(read_metrics(…))`)."""
    return counters_of(read_metrics(base, timeout))


def wait_warm(base: str, timeout: float = 600.0) -> float:
    """Wait for the server's start-up compilation (`/api/eae/warmup` ready); seconds."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            with urllib.request.urlopen(f"{base}/api/eae/warmup", timeout=10) as r:
                if json.loads(r.read()).get("ready"):
                    break
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    return time.monotonic() - t0


# ----------------------------------------------------------------------------- CPU per chart
def cpu_per_chart(cache_dir: Path, widths: list[int], env: dict[str, str],
                  timeout: float) -> dict[str, Any]:
    """Server CPU seconds per new chart, simulate excluded: a fresh server on `cache_dir`
    (every width of `widths` already on disk), speculative work off; one session opens the
    first width (imports, discarded), then changes to each of the others. CPU of the server
    tree from the change to idle (and 0.3 s more for the last messages)."""
    server = Server(env={**env, "EAE_CACHE_DIR": str(cache_dir), "EAE_PREFETCH": "0"})
    try:
        server.wait_healthy()
        wait_warm(server.url)
        pid = server.proc.pid
        per, wall, nbytes = [], [], []
        with Session.open(server.url, query=f"model.width={widths[0]}", timeout=timeout,
                          family=False) as s:
            s.wait_idle(timeout)
            wait_quiet(pid, timeout_s=30)
            for w in widths[1:]:
                known = {c.key for c in s.figures()}
                c0, t0 = tree_cpu_s(pid), time.monotonic()
                s.set_widget(WIDTH, w)
                chart = s.wait_chart(known, timeout)
                s.wait_idle(timeout)
                wall.append(time.monotonic() - t0)
                time.sleep(0.3)
                per.append(tree_cpu_s(pid) - c0)
                nbytes.append(chart.wire_bytes)
        counters = read_counters(server.url)
        return {"charts": len(per), "cpu_s": [round(x, 3) for x in per],
                "median_cpu_s": _r(statistics.median(per), 3) if per else None,
                "median_wall_s": _r(statistics.median(wall), 3) if wall else None,
                "payload_wire_bytes": int(statistics.median(nbytes)) if nbytes else None,
                "computed": counters.get("Computed")}
    finally:
        server.stop()


# ----------------------------------------------------------------------------- the class
def run(opts: Options, log: Any = print) -> dict[str, Any]:
    """The whole classroom (see the module docstring); the report as a dict."""
    if opts.warm:
        warm_numba_cache()
    tmp = tempfile.TemporaryDirectory(prefix="eae_class_")
    cache = Path(tmp.name) / "cache"
    env = dict(opts.env)
    server = Server(env={**env, "EAE_CACHE_DIR": str(cache)})
    report: dict[str, Any] = {"options": asdict(opts), "cores": os.cpu_count()}
    browsers: BrowserClass | None = None
    profile: pyspy.Recorder | None = None
    try:
        server.wait_healthy()
        report["warmup_wait_s"] = _r(wait_warm(server.url))
        pid = server.proc.pid
        sampler = TreeSampler(pid)
        sampler.start()
        health = HealthPoller(server.url)
        health.start()
        rss_fresh = tree_rss_mb(pid)
        with Session.open(server.url, query=WARMUP_QUERY, page=opts.page,
                          timeout=opts.timeout_s) as s:
            s.wait_idle()
        report["quiet_wait_s"] = _r(wait_quiet(pid, timeout_s=180))
        counters0 = read_counters(server.url)
        rss_start = tree_rss_mb(pid)
        log(f"server up (pid {pid}); RSS fresh {rss_fresh:.0f} MB, after the warm-up visit "
            f"{rss_start:.0f} MB; load average {loadavg()}")

        n = opts.students
        widths = widths_for(n + opts.browsers)
        if opts.browsers:
            browsers = BrowserClass(server.url, opts.browsers, opts.query, opts.page,
                                    widths[n:], opts.window_s, opts.timeout_s)
            browsers.start()
            browsers.ready.wait(120)
        if opts.profile:
            profile = pyspy.Recorder(pid, Path(tmp.name) / "pyspy.txt", gil=True)

        loop = _Loop()  # runs all along: sessions answer the server's pings between phases
        phases: dict[str, Any] = {}

        # (a) everyone opens the same link at once
        load0, cpu0, ta = loadavg(), tree_cpu_s(pid), time.monotonic()
        if browsers:
            browsers.go_open.set()
        got = loop.run(_all(
            open_one(i, server.url, opts.query, opts.page, opts.timeout_s,
                     family=i < opts.families)
            for i in range(n)))
        if browsers:
            browsers.opened.wait(opts.timeout_s + 60)
        sessions = [s for s, _ in got]
        opens = [v for _, v in got] + [v for v in (browsers.visits if browsers else [])
                                       if v.phase == "open"]
        ta1 = time.monotonic()
        phases["open"] = {**phase_stats(opens), "by_kind": _by_kind(opens),
                          "wall_s": _r(ta1 - ta),
                          "server_cpu_s": _r(tree_cpu_s(pid) - cpu0),
                          "health": _health(health.window(ta, ta1)),
                          "loadavg_before": load0, "loadavg_after": loadavg()}
        log(f"(a) open: {_line(phases['open'])}")

        time.sleep(opts.pause_s)

        # (b) each changes the width to its own value within the window
        load0, cpu0, tb = loadavg(), tree_cpu_s(pid), time.monotonic()
        if browsers:
            browsers.go_change.set()
        when = offsets(n, opts.window_s)
        changes = loop.run(_all(
            change_one(i, sessions[i], widths[i], when[i], opts.timeout_s) for i in range(n)))
        if browsers:
            browsers.changed.wait(opts.timeout_s + opts.window_s + 60)
            changes += [v for v in browsers.visits if v.phase == "change"]
        tb1 = time.monotonic()
        phases["change"] = {**phase_stats(changes), "by_kind": _by_kind(changes),
                            "wall_s": _r(tb1 - tb),
                            "server_cpu_s": _r(tree_cpu_s(pid) - cpu0),
                            "health": _health(health.window(tb, tb1)),
                            "loadavg_before": load0, "loadavg_after": loadavg()}
        log(f"(b) change: {_line(phases['change'])}")
        if profile is not None:
            raw = profile.stop()
            report["profile"] = pyspy.summarise(raw) if raw else {"error": profile.log_text()}
            if raw and opts.keep_profile:
                opts.keep_profile.write_bytes(raw.read_bytes())
            profile = None

        if opts.families:  # the families of the changed figures, under the class's load
            report["families"] = family_waits(
                [s for s in sessions[:opts.families] if s is not None], tb, opts.timeout_s)
            log(f"    families: {report['families']}")

        if opts.edits:  # (c) students drag a data point of their figure at once
            load0, cpu0, te = loadavg(), tree_cpu_s(pid), time.monotonic()
            drags = loop.run(_all(drag_one(i, sessions[i], opts.edit_s)
                                  for i in range(min(opts.edits, n))))
            te1 = time.monotonic()
            phases["edits"] = {**edit_stats(drags), "wall_s": _r(te1 - te),
                               "server_cpu_s": _r(tree_cpu_s(pid) - cpu0),
                               "health": _health(health.window(te, te1)),
                               "loadavg_before": load0, "loadavg_after": loadavg()}
            log(f"(c) edits: {phases['edits']}")

        # every session closes; memory 60 s later
        stats = [s.stats for s in sessions if s is not None]
        loop.run(_all(s.close() for s in sessions if s is not None))
        if browsers:
            browsers.go_close.set()
            browsers.join(60)
        loop.close()
        tc, cpu_close = time.monotonic(), tree_cpu_s(pid)
        while time.monotonic() - tc < opts.rss_wait_s:
            time.sleep(0.5)
        rss_after, cpu_after_close = tree_rss_mb(pid), tree_cpu_s(pid) - cpu_close
        metrics1 = read_metrics(server.url)
        counters1 = counters_of(metrics1)
        health.stop()
        sampler.stop()

        report.update(
            phases=phases,
            visits=[asdict(v) for v in opens + changes],
            health={"overall": _health(health.window(ta)),
                    "after_close": _health(health.window(tc))},
            rss_mb={"fresh": _r(rss_fresh, 0), "start": _r(rss_start, 0),
                    "peak": _r(sampler.peak_rss(ta), 0), "after_close": _r(rss_after, 0),
                    "after_close_vs_start": _r(rss_after / rss_start - 1, 3)
                    if rss_start else None,
                    "wait_s": opts.rss_wait_s,
                    "curve": [(_r(sm.t - ta, 1), _r(sm.rss_mb, 0)) for sm in
                              sampler.samples[::4] if sm.t >= ta]},
            threads_open_files={"start": _tf(sampler, ta),
                                "end": _tf(sampler, sampler.samples[-1].t)},
            counters={k: counters1.get(k, 0) - counters0.get(k, 0) for k in counters1},
            metrics_after=metrics1,
            server_cpu_after_close_s=_r(cpu_after_close),
            traffic={"ws_bytes_per_session": _r(statistics.mean(
                         s.message_bytes for s in stats), 0) if stats else None,
                     "http_bytes_per_session": _r(statistics.mean(
                         s.fetch_bytes for s in stats), 0) if stats else None,
                     "family_fetched_per_session": _r(statistics.mean(
                         s.family_fetched for s in stats), 1) if stats else None,
                     "fetch_errors": sum(len(s.fetch_errors) for s in stats)},
            browser_error=browsers.error if browsers else None,
            log_tracebacks="Traceback" in server.log(200_000),
        )
    finally:
        if profile is not None:
            profile.stop()
        server.stop()
    if opts.cpu_charts > 0:
        used = widths[:max(2, opts.cpu_charts + 1)]
        report["cpu_per_chart"] = cpu_per_chart(cache, used, env, opts.timeout_s)
    tmp.cleanup()
    report["loadavg_end"] = loadavg()
    return report


async def drag_one(i: int, s: AsyncSession | None, seconds: float) -> dict[str, Any]:
    """Student i drags the first data point of the figure on screen for `seconds` as the
    player does: one edit in flight at a time, the next posted when the last answered, the
    angle moving 3° per edit (its own path, so no two students share a run)."""
    out: dict[str, Any] = {"who": f"p{i}", "answered": 0, "errors": [], "latency_s": []}
    if s is None or s.edit_url is None:
        out["errors"].append("no session or no editable figure")
        return out
    t0, k = time.monotonic(), 0
    while time.monotonic() - t0 < seconds:
        k += 1
        angle = round(15.0 + 0.37 * i + 3.0 * k, 4)
        fields = {"angles_deg": [angle, 75.0, 195.0, 255.0], "radii": [1.0, 1.0, 1.0, 1.0],
                  "labels": [1.0, 1.0, -1.0, -1.0]}
        try:
            got = await s.post_edit(fields)
        except Exception as e:  # a participant's failure is a result
            out["errors"].append(f"{type(e).__name__}: {e}"[:200])
            continue
        if got.status == 200 and got.body.startswith(b"EAEP"):
            out["answered"] += 1
            out["latency_s"].append(got.seconds)
        else:
            out["errors"].append(f"{got.status}: {got.body[:120]!r}")
    out["seconds"] = time.monotonic() - t0
    return out


def edit_stats(drags: list[dict[str, Any]]) -> dict[str, Any]:
    """Edits answered per student per second, latency p50/p95/max, errors."""
    lat = [x for d in drags for x in d["latency_s"]]
    rates = [d["answered"] / d["seconds"] for d in drags if d.get("seconds")]
    return {"students": len(drags), "answered": sum(d["answered"] for d in drags),
            "per_student_per_s": {"min": _r(min(rates, default=0.0)),
                                  "median": _r(statistics.median(rates)) if rates else None},
            "latency_s": {"p50": _r(pct(lat, 50)), "p95": _r(pct(lat, 95)),
                          "max": _r(max(lat, default=0.0))},
            "errors": sum(len(d["errors"]) for d in drags),
            "first_errors": [e for d in drags for e in d["errors"]][:3]}


def family_waits(sessions: list[AsyncSession], since: float, timeout: float
                 ) -> dict[str, Any]:
    """The scrub families fetched since `since` (the changed figures'), once every member came
    or `timeout` passed: time from a family's start to its last member, and the longest a
    family waited for its next member (the starvation a class inflicts on it)."""
    end = time.monotonic() + timeout

    def fams() -> list[dict[str, Any]]:
        return [f for s in sessions for f in s.stats.families if f["start"] >= since]

    while time.monotonic() < end and any(len(f["arrivals"]) < f["n"] for f in fams()):
        time.sleep(0.2)  # the sessions fetch on their own loop meanwhile
    done, gaps = [], []
    for f in fams():
        times = [f["start"], *sorted(f["arrivals"])]
        gaps.append(max((b - a for a, b in itertools.pairwise(times)), default=0.0))
        if len(f["arrivals"]) >= f["n"]:
            done.append(times[-1] - f["start"])
    return {"families": len(fams()), "complete": len(done),
            "p50_complete_s": _r(pct(done, 50)), "max_complete_s": _r(max(done, default=None)),
            "max_gap_s": _r(max(gaps, default=None)), "p95_gap_s": _r(pct(gaps, 95))}


def _by_kind(visits: list[Visit]) -> dict[str, dict[str, Any]]:
    """`phase_stats` of the protocol sessions and of the browsers apart (when both ran)."""
    kinds = {"protocol": [v for v in visits if v.who.startswith("p")],
             "browser": [v for v in visits if v.who.startswith("b")]}
    if not kinds["browser"] or not kinds["protocol"]:
        return {}
    return {k: phase_stats(v) for k, v in kinds.items()}


def _tf(sampler: TreeSampler, t: float) -> tuple[int, int] | None:
    """(threads, open files) of the server at the first sample from `t` on."""
    got = next((sm for sm in sampler.samples if sm.t >= t), None)
    return None if got is None else (got.threads, got.open_files)


class _Loop:
    """An event loop running in a thread of its own for the whole class (the protocol
    sessions keep reading their sockets while the main thread waits for browsers or sleeps)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="class-loop",
                                       daemon=True)
        self.thread.start()

    def run(self, coro: Awaitable[T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()  # type: ignore[arg-type]

    def close(self) -> None:
        """Cancel what is left (a failed session's fetches), stop and close the loop."""
        async def cancel_rest() -> None:
            rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in rest:
                t.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        self.run(cancel_rest())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


async def _all(coros: Iterable[Awaitable[T]]) -> list[T]:
    return list(await asyncio.gather(*coros))


def _health(w: dict[str, float | None]) -> dict[str, float | None]:
    return {k: (_r(v, 1) if isinstance(v, float) else v) for k, v in w.items()}


def _line(p: dict[str, Any]) -> str:
    h = p["health"]
    return (f"{p['ok']}/{p['n']} ok, chart p50 {p['p50_s']} s, p95 {p['p95_s']} s, max "
            f"{p['max_s']} s; health max {h['max_ms']} ms; server CPU {p['server_cpu_s']} s; "
            f"load {p['loadavg_after']}")


def _mark(ok: bool | None) -> str:
    return "?" if ok is None else ("yes" if ok else "NO")


def render(rep: dict[str, Any]) -> str:
    """The report as a table (the goals of issue 20 item 4 beside each figure)."""
    o = rep["options"]
    ph = rep["phases"]
    lines = [f"classroom: {o['students']} protocol-level sessions + {o['browsers']} browser "
             f"pages on one link (page {o['page'] or 'Explorer'!r}, query "
             f"{o['query'] or 'default'!r}); "
             f"{rep['cores']} cores; load average at the end {rep['loadavg_end']}",
             "",
             f"{'':28} {'n':>3} {'ok':>3} {'p50 s':>7} {'p95 s':>7} {'max s':>7} "
             f"{'idle p50':>8} {'health max/p95 ms':>18} {'CPU s':>6}  goal p95 ≤ 3 s"]
    for name, label in (("open", "(a) open the same link"),
                        ("change", f"(b) change width in {o['window_s']:g} s")):
        p = ph[name]
        h = p["health"]
        ok = None if p["p95_s"] is None else p["p95_s"] <= GOAL_CHART_S
        lines.append(f"{label:28} {p['n']:>3} {p['ok']:>3} {_f(p['p50_s']):>7} "
                     f"{_f(p['p95_s']):>7} {_f(p['max_s']):>7} {_f(p['p50_idle_s']):>8} "
                     f"{_f(h['max_ms'], 0) + ' / ' + _f(h['p95_ms'], 0):>18} "
                     f"{_f(p['server_cpu_s'], 1):>6}  {_mark(ok)}  (load {p['loadavg_after']})")
        for kind, q in p.get("by_kind", {}).items():
            lines.append(f"{'   ' + kind + 's':28} {q['n']:>3} {q['ok']:>3} {_f(q['p50_s']):>7} "
                         f"{_f(q['p95_s']):>7} {_f(q['max_s']):>7}")
        if p["wrong_figure"] or p["errors"]:
            lines.append(f"{'':28} wrong figure: {p['wrong_figure']}; errors: {p['errors']}")
    h = rep["health"]["overall"]
    ok = None if h["max_ms"] is None else h["max_ms"] < GOAL_HEALTH_MS
    lines += ["", f"(c) health, every 100 ms, throughout: {h['polls']} polls, {h['failed']} "
              f"failed, max {_f(h['max_ms'], 0)} ms, p95 {_f(h['p95_ms'], 0)} ms  "
              f"goal < {GOAL_HEALTH_MS:g} ms: {_mark(ok)}"]
    r = rep["rss_mb"]
    back = r["after_close_vs_start"]
    ok = None if back is None else back <= GOAL_RSS_FRACTION
    lines.append(f"(d) server RSS: fresh {r['fresh']} MB, start {r['start']} MB, peak "
                 f"{r['peak']} MB, {r['wait_s']:g} s after close {r['after_close']} MB "
                 f"({_f(100 * back if back is not None else None, 1)} % vs start)  goal ≤ "
                 f"{100 * GOAL_RSS_FRACTION:g} %: {_mark(ok)}")
    mem = rep.get("metrics_after") or {}
    lines.append(f"    then: the service's memory cache {mem.get('Memory entries', '?')} entries, "
                 f"{mem.get('Memory size', '?')}; server CPU in those {r['wait_s']:g} s "
                 f"(work left running by the closed sessions): "
                 f"{_f(rep.get('server_cpu_after_close_s'), 1)} s")
    n_a, n_b = ph["open"]["n"], ph["change"]["n"]
    lines.append(f"(e) server CPU (process tree, all work): open "
                 f"{_f(ph['open']['server_cpu_s'], 1)} s for {n_a} charts of one figure; change "
                 f"{_f(ph['change']['server_cpu_s'], 1)} s for {n_b} new figures "
                 f"({_f(_div(ph['change']['server_cpu_s'], n_b), 2)} s each, with their runs "
                 "and the speculative work they start)")
    c = rep.get("cpu_per_chart")
    if c:
        lines.append(f"    per new chart, simulate excluded (quiet server, runs from disk, "
                     f"no speculation): median {_f(c['median_cpu_s'], 3)} s CPU "
                     f"({c['charts']} charts: {c['cpu_s']}), median time to idle "
                     f"{_f(c['median_wall_s'], 2)} s, payload {c['payload_wire_bytes']} B on "
                     f"the wire, computed {c['computed']}")
    t = rep["traffic"]
    lines.append(f"traffic per session: websocket {t['ws_bytes_per_session']} B, HTTP "
                 f"{t['http_bytes_per_session']} B ({t['family_fetched_per_session']} scrub "
                 f"family payloads), fetch errors {t['fetch_errors']}")
    if rep.get("counters"):
        keep = ("Computed", "Joined a run in flight", "Memory hits", "Disk hits", "Cancelled",
                "Errors")
        lines.append("service counters during the class: " + ", ".join(
            f"{k} {rep['counters'][k]:g}" for k in keep if k in rep["counters"]))
    tf = rep["threads_open_files"]
    lines.append(f"server threads / open files: start {tf['start']}, end {tf['end']}; "
                 f"tracebacks in the server log: {rep['log_tracebacks']}")
    if rep.get("browser_error"):
        lines.append(f"browsers failed: {rep['browser_error']}")
    if rep.get("profile"):
        prof = rep["profile"]
        lines += ["", pyspy.render(prof, "py-spy --gil during (a) and (b)")
                  if "samples" in prof else f"py-spy: {prof.get('error')}"]
    return "\n".join(lines)


def _f(x: float | None, nd: int = 2) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def _div(a: float | None, b: int) -> float | None:
    return None if a is None or not b else a / b


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The classroom's options (on `python -m bench load`)."""
    ap.add_argument("--students", type=int, default=None,
                    help="protocol-level sessions in the classroom, e.g. 30 (--quick: 6); "
                         "without --students or --quick the browser-only check runs")
    ap.add_argument("--browsers", type=int, default=0,
                    help="real Chromium pages on top of the students (default 0)")
    ap.add_argument("--quick", action="store_true",
                    help=f"a short classroom: {QUICK['students']} students, short waits")
    ap.add_argument("--query", default="", help="query string of the class's link "
                    "(default: none, the Explorer's default view)")
    ap.add_argument("--window", type=float, default=None, help="seconds over which the "
                    "width changes are spread (5)")
    ap.add_argument("--pause", type=float, default=None, help="seconds between the opens "
                    "and the changes (5)")
    ap.add_argument("--rss-wait", type=float, default=None,
                    help="seconds after the sessions close before RSS is read (60)")
    ap.add_argument("--cpu-charts", type=int, default=None,
                    help="charts of the simulate-free CPU measurement (5; 0 = skip)")
    ap.add_argument("--profile", action="store_true",
                    help="sample the server with py-spy during (a) and (b) (with --json, the "
                         "raw samples are kept beside it, .pyspy.txt)")
    ap.add_argument("--families", type=int, default=0,
                    help="students who reach for the scrub slider: their player fetches the "
                         "scrub family of each figure (default 0: the class only watches)")
    ap.add_argument("--edits", type=int, default=0,
                    help="students who then drag a data point for --edit-seconds, all at once "
                         "(the edit route, one edit in flight each; default 0)")
    ap.add_argument("--edit-seconds", type=float, default=10.0,
                    help="length of each student's drag with --edits (10)")
    ap.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE",
                    help="an environment variable for the server (repeatable), e.g. "
                         "EAE_PREFETCH=0 or STREAMLIT_RUNNER_POST_SCRIPT_GC=false")


def options_from(args: argparse.Namespace) -> Options:
    q = QUICK if args.quick else {}
    env = []
    for item in args.server_env:
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise SystemExit(f"--server-env wants NAME=VALUE, got {item!r}")
        env.append((name, value))

    def pick(value: Any, key: str) -> Any:
        return value if value is not None else q.get(key, getattr(Options, key))

    return Options(students=pick(args.students, "students"), browsers=args.browsers,
                   query=args.query.lstrip("?"), page=args.page.strip("/"),
                   window_s=pick(args.window, "window_s"), pause_s=pick(args.pause, "pause_s"),
                   rss_wait_s=pick(args.rss_wait, "rss_wait_s"),
                   timeout_s=args.timeout, cpu_charts=pick(args.cpu_charts, "cpu_charts"),
                   profile=args.profile, warm=not args.no_warm, env=tuple(env),
                   quick=args.quick, families=args.families, edits=args.edits,
                   edit_s=args.edit_seconds,
                   keep_profile=args.json.with_suffix(".pyspy.txt")
                   if args.profile and args.json else None)


def main(args: argparse.Namespace) -> int:
    """Run the classroom from parsed `python -m bench load` arguments; 0 if every participant
    got its right chart (speed is reported, not judged)."""
    opts = options_from(args)
    rep = run(opts, log=lambda m: print(m, flush=True))
    print()
    print(render(rep))
    if args.json:
        args.json.write_text(json.dumps(rep, indent=1, default=str))
    ok = all(rep["phases"][k]["ok"] == rep["phases"][k]["n"] for k in ("open", "change"))
    return 0 if ok else 1


__all__ = ["BrowserClass", "Options", "Visit", "add_arguments", "counters_of", "cpu_per_chart",
           "main", "names_width", "offsets", "options_from", "payload_title", "phase_stats",
           "read_counters", "read_metrics", "render", "run", "wait_warm", "widths_for"]
