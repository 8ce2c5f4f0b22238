"""Load check: many sessions on one Streamlit server at once.

    .venv/bin/python -m bench load --students 30 [--browsers 10]   # the classroom (bench.classroom)
    .venv/bin/python -m bench load --quick                         # a short classroom
    .venv/bin/python -m bench load                      # 10 browsers: 5 on one link, 5 distinct
    .venv/bin/python -m bench load --sessions 30 --shared 30 --json out.json

With `--students` (or `--quick`) this runs the classroom of `bench.classroom`: protocol-level
sessions on one link, opening and then changing a setting, with the server's health, memory
and CPU. Without them, the browser-only check below.

Starts one server (`streamlit run app.py`, loopback only, a fresh EAE_CACHE_DIR), then opens
all sessions in headless Chromium (one browser, one context per session, so each is its own
Streamlit session) within a fraction of a second: `--shared` of them on the same link (the
class on a preset), the others each on a different configuration (`?model.width=..&seed=..`).
For every session it reports the time until a chart is drawn (a Plotly chart in the page or the
figure player's, in its iframe), the time until the app
is idle (run finished and drawn), Streamlit exceptions on the page, console errors and page
errors, and requests to hosts other than the server (listed apart: a hosted app should need
none, and here they cannot resolve); then p50/p95, and the service counters read from the
About & status page of the same server process (`app_pages/status.py` shows `Service.stats()` of
the process-wide service), which say whether the shared link was computed once: `Computed`
must equal the number of distinct configurations, and the other requests for the shared one
appear as joins or memory hits.

The sessions are driven from one thread: every page is navigated (`wait_until="commit"`), then
all are polled in turn, so times have the polling granularity (about 0.1 s × sessions / 10).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from devtools.browser import IDLE_JS, VIEWPORT, launch_chromium

from .app_server import Server, warm_numba_cache

# One poll of a page: chart visible (a Plotly chart in the page, or a figure player's iframe
# that has drawn its figure)? app idle? exceptions shown? (Streamlit 1.67 test ids; the idle
# rule is devtools.browser.IDLE_JS, the one the browser tests wait on.)
_POLL_JS = """() => {
  const vis = (el) => el.getClientRects().length > 0
      && getComputedStyle(el).visibility !== 'hidden';
  const drawn = (f) => {
    const w = f.contentWindow;
    const p = w && w.EAEPlayer && w.EAEPlayer.players[0];
    return !!(p && p.run) && vis(f);
  };
  const chart = Array.from(document.querySelectorAll('.js-plotly-plot')).some(vis)
      || Array.from(document.querySelectorAll('iframe[title$="eae_player"]')).some(drawn);
  const idle = (__IDLE_JS__)();
  const exceptions = Array.from(document.querySelectorAll('[data-testid="stException"]'))
      .map((e) => e.innerText.slice(0, 300));
  return {chart, idle, exceptions};
}""".replace("__IDLE_JS__", IDLE_JS)


@dataclass
class SessionResult:
    """What one browser session saw."""

    url: str
    group: str  # "shared" or "distinct"
    time_to_chart_s: float | None = None  # None: no chart before the timeout
    time_to_idle_s: float | None = None
    exceptions: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)  # requests to hosts other than the server
    page_errors: list[str] = field(default_factory=list)
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return (self.time_to_chart_s is not None and not self.timed_out and not self.exceptions
                and not self.page_errors)


@dataclass
class LoadReport:
    """The sessions, summary statistics and service counters of one load run."""

    sessions: list[SessionResult]
    n_distinct_configs: int
    counters_before: dict[str, float]
    counters_after: dict[str, float]
    wall_s: float
    context: dict[str, float] = field(default_factory=dict)  # load average, server CPU time

    def chart_times(self) -> list[float]:
        return [s.time_to_chart_s for s in self.sessions if s.time_to_chart_s is not None]

    def percentile(self, q: float) -> float | None:
        """Percentile (linear interpolation) of time to chart over sessions that drew one."""
        return _pct(self.chart_times(), q)

    def delta(self, name: str) -> float | None:
        if name not in self.counters_after:
            return None
        return self.counters_after[name] - self.counters_before.get(name, 0)

    @property
    def shared_computed_once(self) -> bool | None:
        """Computations during the load == distinct configurations (None: counters unknown)."""
        c = self.delta("Computed")
        return None if c is None else int(c) == self.n_distinct_configs

    def summary(self) -> dict[str, Any]:
        return {
            "sessions": len(self.sessions),
            "ok": sum(s.ok for s in self.sessions),
            "p50_time_to_chart_s": _round(self.percentile(50)),
            "p95_time_to_chart_s": _round(self.percentile(95)),
            "max_time_to_chart_s": _round(max(self.chart_times(), default=None)),
            "p50_time_to_idle_s": _round(_pct([s.time_to_idle_s for s in self.sessions], 50)),
            "exceptions": sum(len(s.exceptions) for s in self.sessions),
            "console_errors": sum(len(s.console_errors) for s in self.sessions),
            "page_errors": sum(len(s.page_errors) for s in self.sessions),
            "external_requests": sorted({u for s in self.sessions for u in s.external}),
            "distinct_configs": self.n_distinct_configs,
            "computed": self.delta("Computed"),
            "joined": self.delta("Joined a run in flight"),
            "memory_hits": self.delta("Memory hits"),
            "disk_hits": self.delta("Disk hits"),
            "shared_computed_once": self.shared_computed_once,
            "wall_s": _round(self.wall_s),
            **{k: _round(v) for k, v in self.context.items()},
        }

    def to_json(self) -> str:
        return json.dumps({"summary": self.summary(),
                           "sessions": [asdict(s) for s in self.sessions],
                           "counters_before": self.counters_before,
                           "counters_after": self.counters_after}, indent=2)


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def _pct(xs: Iterable[float | None], q: float) -> float | None:
    """Percentile `q` (linear interpolation) of the values that are not None."""
    v = sorted(x for x in xs if x is not None)
    if not v:
        return None
    pos = (len(v) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


# ----------------------------------------------------------------------------- URLs
def session_urls(base_url: str, n_sessions: int, n_shared: int, page: str = "",
                 shared_query: str = "") -> list[tuple[str, str]]:
    """(url, group) per session: `n_shared` on one link, the rest each on its own config.
    `page` "" is the app's default page (the Explorer, served at the root URL)."""
    root = f"{base_url.rstrip('/')}/{page}"
    shared = root + (f"?{shared_query}" if shared_query else "")
    out = [(shared, "shared")] * n_shared
    for i in range(n_sessions - n_shared):
        out.append((f"{root}?model.width={12 + 4 * i}&seed={101 + i}", "distinct"))
    return out


# ----------------------------------------------------------------------------- measuring
def measure_sessions(browser: Any, urls: list[tuple[str, str]], timeout_s: float = 300.0,
                     settle_s: float = 0.5) -> list[SessionResult]:
    """Open every URL in its own browser context at once; poll all until each has drawn a
    chart and is idle (or `timeout_s`). `browser` is a Playwright sync Browser."""
    contexts, pages, results = [], [], []
    try:
        for url, group in urls:
            ctx = browser.new_context(viewport=VIEWPORT, device_scale_factor=1,
                                      reduced_motion="reduce")
            ctx.set_default_timeout(timeout_s * 1000)
            page = ctx.new_page()
            res = SessionResult(url=url, group=group)
            origin = "/".join(url.split("/", 3)[:3])
            page.on("console", lambda m, r=res, o=origin: _on_console(m, r, o))
            page.on("request", lambda q, r=res, o=origin: r.external.append(q.url[:200])
                    if not q.url.startswith((o, "data:", "blob:")) else None)
            page.on("pageerror", lambda e, r=res: r.page_errors.append(str(e)[:300]))
            contexts.append(ctx)
            pages.append(page)
            results.append(res)
        starts = []
        for page, (url, _) in zip(pages, urls, strict=True):
            starts.append(time.monotonic())
            page.goto(url, wait_until="commit")
        deadline = time.monotonic() + timeout_s
        idle_since: list[float | None] = [None] * len(pages)
        done = [False] * len(pages)
        while not all(done):
            now = time.monotonic()
            for i, page in enumerate(pages):
                if done[i]:
                    continue
                res = results[i]
                try:
                    st = page.evaluate(_POLL_JS)
                except Exception as e:  # navigation in progress: try again next round
                    if now > deadline:
                        res.page_errors.append(f"poll failed: {e}"[:300])
                    continue
                now = time.monotonic()
                if st["chart"] and res.time_to_chart_s is None:
                    res.time_to_chart_s = now - starts[i]
                if st["exceptions"]:
                    res.exceptions = st["exceptions"]
                if st["idle"] and (res.time_to_chart_s is not None or st["exceptions"]):
                    since = idle_since[i]
                    if since is None:
                        idle_since[i] = now
                    elif now - since >= settle_s:
                        res.time_to_idle_s = since - starts[i]
                        done[i] = True
                else:
                    idle_since[i] = None
            if time.monotonic() > deadline:
                for i, d in enumerate(done):
                    if not d:
                        results[i].timed_out = True
                break
            pages[0].wait_for_timeout(100)
    finally:
        for ctx in contexts:
            ctx.close()
    return results


def _on_console(msg: Any, res: SessionResult, origin: str) -> None:
    """Console errors of the app; a failed load of an outside resource (e.g. an icon from a
    font server, unreachable here) is listed under `external` instead."""
    if msg.type != "error":
        return
    where = (msg.location or {}).get("url", "") or ""
    if where and not where.startswith(origin) and msg.text.startswith("Failed to load resource"):
        res.external.append(f"failed: {where[:200]}")
        return
    res.console_errors.append(msg.text[:300])


def read_counters(browser: Any, base_url: str, page: str = "status",
                  timeout_s: float = 120.0) -> dict[str, float]:
    """The service counters shown on the About & status page ({} if there is no such page):
    each `st.metric` label → its leading number ("3 of 4" → 3)."""
    ctx = browser.new_context(viewport=VIEWPORT, reduced_motion="reduce")
    try:
        pg = ctx.new_page()
        pg.goto(f"{base_url.rstrip('/')}/{page}")
        deadline = time.monotonic() + timeout_s
        metrics: list[dict[str, str]] = []
        while time.monotonic() < deadline:
            st = pg.evaluate(_POLL_JS)
            metrics = pg.evaluate("""() => Array.from(
                document.querySelectorAll('[data-testid="stMetric"]')).map((m) => ({
                  label: (m.querySelector('[data-testid="stMetricLabel"]') || m).innerText,
                  value: (m.querySelector('[data-testid="stMetricValue"]') || m).innerText}))""")
            if st["idle"] and metrics:
                break
            pg.wait_for_timeout(200)
        out: dict[str, float] = {}
        for m in metrics:
            match = re.search(r"-?[\d,]*\.?\d+", m["value"])
            if match:
                out[m["label"].strip()] = float(match.group().replace(",", ""))
        return out
    finally:
        ctx.close()


def run_load(browser: Any, base_url: str, n_sessions: int = 10, n_shared: int = 5,
             timeout_s: float = 300.0, page: str = "", shared_query: str = "",
             server_pid: int | None = None) -> LoadReport:
    """Counters, then all sessions at once, then counters again. With `server_pid`, the
    server's CPU seconds during the sessions are reported (with the machine's load average:
    on a busy machine the times say as much about the neighbours as about the app)."""
    urls = session_urls(base_url, n_sessions, n_shared, page, shared_query)
    before = read_counters(browser, base_url)
    cpu0 = _cpu_seconds(server_pid)
    skip = {server_pid} if server_pid is not None else set()
    own0 = _descendants_cpu_seconds(os.getpid(), skip)
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    sessions = measure_sessions(browser, urls, timeout_s)
    wall = time.monotonic() - t0
    cpu1 = _cpu_seconds(server_pid)
    own1 = _descendants_cpu_seconds(os.getpid(), skip)
    context = {"loadavg_1m_before": load0, "loadavg_1m_after": os.getloadavg()[0],
               "cores": float(os.cpu_count() or 1),
               # Playwright's driver and the Chromium processes it started (our other children)
               "browser_cpu_s": own1 - own0}
    if cpu0 is not None and cpu1 is not None:
        context["server_cpu_s"] = cpu1 - cpu0
    after = read_counters(browser, base_url)
    n_distinct = len({u for u, _ in urls})
    return LoadReport(sessions, n_distinct, before, after, wall, context)


def _descendants_cpu_seconds(root: int, skip: set[int]) -> float:
    """CPU seconds of the live descendants of `root`, leaving out the subtrees in `skip`."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    total, stack = 0.0, list(children.get(root, []))
    while stack:
        pid = stack.pop()
        if pid in skip:
            continue
        total += _cpu_seconds(pid) or 0.0
        stack.extend(children.get(pid, []))
    return total


def _cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of a process (all its threads), from /proc; None if unknown."""
    if pid is None:
        return None
    try:
        fields_ = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields_[11]) + int(fields_[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _print_report(rep: LoadReport) -> None:
    print(f"{'#':>2} {'group':8} {'chart s':>8} {'idle s':>8} {'exc':>3} {'cons':>4}  url")
    for i, s in enumerate(rep.sessions):
        tc = "-" if s.time_to_chart_s is None else f"{s.time_to_chart_s:.2f}"
        ti = "-" if s.time_to_idle_s is None else f"{s.time_to_idle_s:.2f}"
        print(f"{i:>2} {s.group:8} {tc:>8} {ti:>8} {len(s.exceptions):>3} "
              f"{len(s.console_errors):>4}  {s.url.split('/', 3)[-1]}"
              + ("  TIMEOUT" if s.timed_out else ""))
        for text in s.exceptions + s.page_errors + s.console_errors + s.external[:2]:
            print(f"      ! {text[:160]}")
    print(json.dumps(rep.summary(), indent=2))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--shared", type=int, default=None, help="sessions on the shared link "
                    "(default: half)")
    ap.add_argument("--shared-query", default="", help="query string of the shared link "
                    "(default: none, the Explorer's default view)")
    ap.add_argument("--page", default="", help="URL path of the page (default: the app's "
                    "default page, the Explorer, at the root URL)")
    ap.add_argument("--no-warm", action="store_true", help="skip compiling the numba kernels "
                    "into their disk cache before the load (then the first runs include JIT)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per session")
    ap.add_argument("--json", type=Path, default=None, help="write the full report here")
    from . import classroom
    classroom.add_arguments(ap)
    args = ap.parse_args(argv)
    if args.students is not None or args.quick:
        return classroom.main(args)
    n_shared = args.sessions // 2 if args.shared is None else args.shared

    from playwright.sync_api import sync_playwright

    if not args.no_warm:
        warm_numba_cache()
    server = Server()
    try:
        server.wait_healthy()
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            try:
                rep = run_load(browser, server.url, args.sessions, n_shared, args.timeout,
                               args.page, args.shared_query, server_pid=server.proc.pid)
            finally:
                browser.close()
    finally:
        log = server.log(20_000)
        server.stop()
    _print_report(rep)
    if "Traceback" in log:
        print("--- server log has tracebacks ---\n" + log[-3000:])
    if args.json:
        args.json.write_text(rep.to_json())
    return 0 if all(s.ok for s in rep.sessions) and rep.shared_computed_once else 1


if __name__ == "__main__":
    sys.exit(main())
