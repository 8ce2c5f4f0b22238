"""First chart of every page, and the quick built-in sweeps (a benchmark,
not a test).

Pages (Explorer ``/``, Overview, Papers — each paper via ``?paper=`` —, Compare, Real data,
and a floor: a page with one small chart and nothing else, `FLOOR_SCRIPT`):
for each page a fresh Streamlit server with an empty cache directory (`EAE_CACHE_DIR`) and
real Chromium (1600×1000); the time from ``goto`` to the page's first Plotly chart drawn with
its data (`FIRST_CHART_JS`: a figure player's run drawn, or a Plotly chart with data):

- cold: the first visit on that fresh server (empty cache: runs computed, figures built);
- warm: then ``--warm`` new browser contexts (new sessions) on the same server, median.

Sweeps: each quick built-in on the Sweeps page (``/sweeps?sweep=NAME``), from the click on
"Run sweep" to the first figure with data (``first``) and to the finished figure (``done``:
the success/cancel message), all on one server (the first includes the Dask cluster start);
and through the library (`dynamics.sweeps.run_sweep` on a fresh LocalCluster, with its start
time). Targets: warm page < 3 s; a quick sweep < 10 s on two cores.

A visitor who has the app open (`time_navigation`, one warm server and one browser context):
from a click on a page's sidebar link to its first new chart, and from a reload of the page
(the browser's cache warm) to its first chart. A new context pays Streamlit's and Plotly's
start in the browser (the floor) on top; a link followed from the app does not.

Run: .venv/bin/python -m bench pages [--only explorer,compare] [--no-sweeps] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # also runnable as a script
    sys.path.insert(0, str(REPO))

from bench.machine import loadavg_text  # noqa: E402 (after the path set-up)

VIEWPORT = {"width": 1600, "height": 1000}
WARM_TARGET_S = 3.0
SWEEP_TARGET_S = 10.0

#: The figure players on the page (iframes titled "...eae_player", ui/player.py) with a drawn run.
_PLAYERS_JS = """Array.from(document.querySelectorAll('iframe[title$="eae_player"]'))
  .map(f => { try { const p = f.contentWindow.EAEPlayer.players[0];
                    return p && p.run && f.offsetHeight > 0 ? p : null; }
              catch (e) { return null; } }).filter(p => p)"""
#: True when the page's first chart is drawn, visible and has data: a figure player's run, or
#: a Plotly chart in the page with a trace with points.
FIRST_CHART_JS = f"""() => {{
  if (({_PLAYERS_JS}).length) return true;
  const gd = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
  if (!gd || !gd.querySelector('.main-svg') || !gd._fullData) return false;
  if (gd.offsetWidth === 0 || gd.offsetHeight === 0) return false;
  return gd._fullData.some(t => (t.x && t.x.length) || (t.y && t.y.length)
                                || (t.z && t.z.length) || (t.r && t.r.length));
}}"""
#: True when the Sweeps page shows the finished sweep's message (success or cancelled).
SWEEP_DONE_JS = """() => !!document.querySelector(
  '[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentWarning"]')
  && !!document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg')"""


@dataclass(frozen=True)
class PageCase:
    """One page to time: a label and its path with query (``/papers?paper=min``)."""

    label: str
    path: str


FLOOR = "floor"  # the label of the one-small-chart page (`FLOOR_SCRIPT`)


def page_cases(papers: Iterable[str]) -> list[PageCase]:
    """The floor, Explorer, Overview, one Papers case per paper key, Compare, Real data."""
    cases = [PageCase(FLOOR, "/"), PageCase("explorer", "/"), PageCase("overview", "/overview")]
    cases += [PageCase(f"papers:{p}", f"/papers?paper={p}") for p in papers]
    cases += [PageCase("compare", "/compare"), PageCase("real_data", "/real_data")]
    return cases


def select(cases: Sequence[PageCase], only: str) -> list[PageCase]:
    """The cases whose label (or its part before ':') is in the comma list `only` (all if
    empty); a name that matches nothing raises ValueError."""
    want = {w.strip() for w in only.split(",") if w.strip()}
    if not want:
        return list(cases)
    got = [c for c in cases if c.label in want or c.label.split(":")[0] in want]
    known = {c.label for c in cases} | {c.label.split(":")[0] for c in cases}
    unknown = want - known
    if unknown:
        raise ValueError(f"unknown page(s): {', '.join(sorted(unknown))}; "
                         f"choose from {', '.join(sorted(known))}")
    return got


#: The floor: a page with nothing but one small chart, timed like the app's pages. What a page
#: takes beyond it is its own (runs, figure, spec size); the floor itself is Streamlit's and
#: Plotly's start in the browser, which grows with the machine's load.
FLOOR_SCRIPT = """import numpy as np
import plotly.graph_objects as go
import streamlit as st

x = np.linspace(0.0, 10.0, 200)
st.plotly_chart(go.Figure([go.Scatter(x=x, y=np.sin(x + k)) for k in range(5)]))
"""


@dataclass
class PageTime:
    """Cold and warm seconds to the first chart of one page (None: it never came)."""

    label: str
    cold: float | None
    warm: list[float] = field(default_factory=list)

    @property
    def warm_median(self) -> float | None:
        return statistics.median(self.warm) if self.warm else None


def fmt_s(v: float | None) -> str:
    """Seconds with two decimals, or '—' for a missing time."""
    return "—" if v is None else f"{v:.2f}"


def verdict(v: float | None, target: float) -> str:
    """'ok' under the target, 'OVER' at or above it, 'FAIL' when there is no time."""
    if v is None:
        return "FAIL"
    return "ok" if v < target else "OVER"


def page_table(rows: Sequence[PageTime]) -> str:
    """A Markdown table: page, cold, warm median (all warm), warm beyond the floor's warm
    median (when the floor was timed), against the warm target."""
    floor = next((r.warm_median for r in rows if r.label == FLOOR), None)
    out = [f"| page | cold s | warm s (median) | warm − floor s | warm runs "
           f"| < {WARM_TARGET_S:g} s |", "|---|---:|---:|---:|---|---|"]
    for r in rows:
        extra = (None if floor is None or r.warm_median is None or r.label == FLOOR
                 else r.warm_median - floor)
        out.append(f"| {r.label} | {fmt_s(r.cold)} | {fmt_s(r.warm_median)} | {fmt_s(extra)} | "
                   f"{', '.join(fmt_s(w) for w in r.warm)} | "
                   f"{verdict(r.warm_median, WARM_TARGET_S)} |")
    return "\n".join(out)


# ============================================================================ browser
def _server(cache_dir: Path, script: Path = REPO / "serve.py") -> Any:
    from devtools.server import StreamlitServer

    server = StreamlitServer(script, {"EAE_CACHE_DIR": str(cache_dir / "cache")}, cache_dir)
    server.wait_healthy()
    return server


def _time_to(browser: Any, url: str, js: str, timeout_s: float) -> float | None:
    """Seconds from goto(url) in a new context (a new session) until `js` holds."""
    ctx = browser.new_context(viewport=VIEWPORT, reduced_motion="reduce")
    try:
        page = ctx.new_page()
        t0 = time.perf_counter()
        page.goto(url)
        try:
            page.wait_for_function(js, timeout=timeout_s * 1000, polling=50)
        except Exception:
            return None
        return time.perf_counter() - t0
    finally:
        ctx.close()


def time_pages(cases: Sequence[PageCase], warm: int = 3, timeout_s: float = 300.0,
               app: Path = REPO / "serve.py") -> list[PageTime]:
    """Each case on its own fresh server of `app` and empty cache: cold, then `warm` new
    sessions (each a new browser context)."""
    from playwright.sync_api import sync_playwright

    from devtools.browser import launch_chromium

    out = []
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        for case in cases:
            with tempfile.TemporaryDirectory(prefix="eae_bench_pages_") as tmp:
                script = app
                if case.label == FLOOR:
                    script = Path(tmp) / "floor.py"
                    script.write_text(FLOOR_SCRIPT, encoding="utf-8")
                server = _server(Path(tmp), script)
                try:
                    url = server.url + case.path
                    cold = _time_to(browser, url, FIRST_CHART_JS, timeout_s)
                    warms = [t for t in (_time_to(browser, url, FIRST_CHART_JS, timeout_s)
                                         for _ in range(warm)) if t is not None]
                finally:
                    server.stop()
            row = PageTime(case.label, cold, warms)
            print(f"  {case.label:<22} cold {fmt_s(cold):>6} s   warm "
                  f"{fmt_s(row.warm_median):>6} s {[round(w, 2) for w in warms]}  "
                  f"(load {loadavg_text()})", flush=True)
            out.append(row)
        browser.close()
    return out


#: Before a navigation: remember the layouts of the charts on screen, so NEW_CHART_JS only
#: accepts a chart drawn after it (Plotly.react gives a redrawn chart a new layout object).
MARK_OLD_JS = f"""() => {{ window.__eaeOld = [...document.querySelectorAll(
  '[data-testid="stPlotlyChart"] .js-plotly-plot')].map(g => g.layout);
  window.__eaeOldKeys = ({_PLAYERS_JS}).map(p => p.runKey); }}"""
#: FIRST_CHART_JS for a chart that was not on screen when MARK_OLD_JS ran (a player showing
#: another figure, or a redrawn Plotly chart).
NEW_CHART_JS = f"""() => {{
  const keys = window.__eaeOldKeys || [];
  if (({_PLAYERS_JS}).some(p => !keys.includes(p.runKey))) return true;
  const old = window.__eaeOld || [];
  return [...document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')]
    .some(gd => gd.querySelector('.main-svg') && gd._fullData && !old.includes(gd.layout)
      && gd.offsetWidth > 0 && gd.offsetHeight > 0
      && gd._fullData.some(t => (t.x && t.x.length) || (t.y && t.y.length)
                                || (t.z && t.z.length)));
}}"""
#: The pages a user reaches from the sidebar, by the URL path of their link.
NAV_PAGES = (("overview", "overview"), ("papers", "papers"), ("compare", "compare"),
             ("real_data", "real_data"), ("explorer", ""))


def time_navigation(rounds: int = 3, timeout_s: float = 300.0,
                    app: Path = REPO / "serve.py") -> tuple[dict[str, list[float]],
                                                          dict[str, list[float]]]:
    """What a visitor who already has the app open waits for, on one warm server (every page
    visited once first): (in-app navigation: seconds from a click on the page's sidebar link
    to its first new chart; returning visitor: seconds from a reload of the page in the same
    browser context, its files in the browser's cache, to its first chart), `rounds` each."""
    from playwright.sync_api import sync_playwright

    from devtools.browser import launch_chromium

    nav: dict[str, list[float]] = {label: [] for label, _ in NAV_PAGES}
    back: dict[str, list[float]] = {label: [] for label, _ in NAV_PAGES}
    with tempfile.TemporaryDirectory(prefix="eae_bench_nav_") as tmp, \
            sync_playwright() as pw:
        server = _server(Path(tmp), app)
        browser = launch_chromium(pw)
        try:
            ctx = browser.new_context(viewport=VIEWPORT, reduced_motion="reduce")
            page = ctx.new_page()
            for _, path in NAV_PAGES:  # warm the server's caches for every page
                page.goto(f"{server.url}/{path}")
                page.wait_for_function(FIRST_CHART_JS, timeout=timeout_s * 1000, polling=100)
            for _ in range(rounds):
                for label, path in NAV_PAGES:
                    page.evaluate(MARK_OLD_JS)
                    link = page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]')
                    t0 = time.perf_counter()
                    link.first.click()
                    page.wait_for_function(NEW_CHART_JS, timeout=timeout_s * 1000, polling=20)
                    nav[label].append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    page.reload()
                    page.wait_for_function(FIRST_CHART_JS, timeout=timeout_s * 1000,
                                           polling=20)
                    back[label].append(time.perf_counter() - t0)
            print(f"  navigation (load {loadavg_text()}): " + ", ".join(
                f"{k} {statistics.median(v):.2f} s" for k, v in nav.items()), flush=True)
        finally:
            browser.close()
            server.stop()
    return nav, back


def nav_table(nav: dict[str, list[float]], back: dict[str, list[float]]) -> str:
    """A Markdown table: page, median seconds by sidebar click and by reload (all runs)."""
    out = [f"| page | sidebar click s (median) | reload s (median) | < {WARM_TARGET_S:g} s |",
           "|---|---:|---:|---|"]
    for label in nav:
        a = statistics.median(nav[label]) if nav[label] else None
        b = statistics.median(back[label]) if back[label] else None
        worst = None if a is None or b is None else max(a, b)
        out.append(f"| {label} | {fmt_s(a)} | {fmt_s(b)} | {verdict(worst, WARM_TARGET_S)} |")
    return "\n".join(out)


@dataclass
class SweepTime:
    """Seconds from the click to the first figure and to the finished sweep."""

    name: str
    points: int
    first: float | None
    done: float | None


def time_sweeps_page(names: Sequence[str], timeout_s: float = 300.0,
                     app: Path = REPO / "serve.py") -> list[SweepTime]:
    """Each quick built-in on the Sweeps page of one fresh server of `app` (empty cache), in
    order; the page is left open 5 s before the click (a user reading it)."""
    from playwright.sync_api import sync_playwright

    from devtools.browser import launch_chromium, wait_for_streamlit_idle
    from dynamics.sweeps import builtin_sweep

    out = []
    with tempfile.TemporaryDirectory(prefix="eae_bench_sweeps_") as tmp, \
            sync_playwright() as pw:
        server = _server(Path(tmp), app)
        browser = launch_chromium(pw)
        try:
            for name in names:
                ctx = browser.new_context(viewport=VIEWPORT, reduced_motion="reduce")
                page = ctx.new_page()
                page.goto(f"{server.url}/sweeps?sweep={name}")
                wait_for_streamlit_idle(page, timeout=120)
                page.wait_for_timeout(5000)
                button = page.get_by_role("button", name="Run sweep")
                t0 = time.perf_counter()
                button.click()
                first = done = None
                try:
                    page.wait_for_function(FIRST_CHART_JS, timeout=timeout_s * 1000,
                                           polling=50)
                    first = time.perf_counter() - t0
                    page.wait_for_function(SWEEP_DONE_JS, timeout=timeout_s * 1000,
                                           polling=50)
                    done = time.perf_counter() - t0
                except Exception:
                    pass
                ctx.close()
                n = builtin_sweep(name, quick=True).n_points()
                print(f"  sweep page {name:<22} {n:3d} points: first figure {fmt_s(first)} s,"
                      f" done {fmt_s(done)} s  (load {loadavg_text()})", flush=True)
                out.append(SweepTime(name, n, first, done))
        finally:
            browser.close()
            server.stop()
    return out


def time_sweeps_library(names: Sequence[str], workers: int = 2) -> tuple[float, list[SweepTime]]:
    """Cluster start (a fresh LocalCluster) and each quick built-in through `run_sweep`, in
    order, on an empty cache directory. The 'first' time is the first finished point."""
    from dynamics.sweeps import Clusters, builtin_sweep, run_sweep

    with tempfile.TemporaryDirectory(prefix="eae_bench_sweeplib_") as tmp:
        os.environ["EAE_CACHE_DIR"] = tmp
        out = []
        with Clusters() as clusters:
            t0 = time.perf_counter()
            client = clusters.local(workers)
            start = time.perf_counter() - t0
            print(f"  LocalCluster start ({workers} workers): {start:.2f} s", flush=True)
            for name in names:
                spec = builtin_sweep(name, quick=True)
                first: list[float] = []
                t0 = time.perf_counter()

                def progress(done: int, total: int, row: dict[str, Any],
                             first: list[float] = first, t0: float = t0) -> None:
                    if not first:
                        first.append(time.perf_counter() - t0)

                run_sweep(spec, client=client, progress=progress)
                done = time.perf_counter() - t0
                print(f"  library {name:<22} {spec.n_points():3d} points: first point "
                      f"{fmt_s(first[0] if first else None)} s, done {done:.2f} s "
                      f"(load {loadavg_text()})", flush=True)
                out.append(SweepTime(name, spec.n_points(), first[0] if first else None, done))
    return start, out


def sweep_table(rows: Sequence[SweepTime], what: str) -> str:
    """A Markdown table of sweep times against the 10 s target."""
    out = [f"| {what} | points | first s | done s | < {SWEEP_TARGET_S:g} s |",
           "|---|---:|---:|---:|---|"]
    for r in rows:
        out.append(f"| {r.name} | {r.points} | {fmt_s(r.first)} | {fmt_s(r.done)} | "
                   f"{verdict(r.done, SWEEP_TARGET_S)} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Time the pages and the quick sweeps; print Markdown tables (and write JSON)."""
    ap = argparse.ArgumentParser(prog="python -m bench pages",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma list of pages (floor, explorer, overview,"
                    " papers or papers:KEY, compare, real_data)")
    ap.add_argument("--warm", type=int, default=3, help="warm visits per page (median)")
    ap.add_argument("--no-pages", action="store_true", help="skip the pages")
    ap.add_argument("--no-nav", action="store_true",
                    help="skip the in-app navigation / reload timings")
    ap.add_argument("--no-sweeps", action="store_true", help="skip the sweeps")
    ap.add_argument("--sweeps", default="", help="comma list of built-ins (default: all)")
    ap.add_argument("--no-library", action="store_true", help="skip the library sweeps")
    ap.add_argument("--json", default=None, help="also write the raw numbers here")
    ap.add_argument("--app", default=str(REPO / "serve.py"),
                    help="the app script to serve (e.g. another checkout's app.py)")
    args = ap.parse_args(argv)
    app = Path(args.app).resolve()

    from devtools.browser import chromium_missing
    from dynamics.papers import PAPERS
    from dynamics.sweeps import BUILTINS

    if (why := chromium_missing()) is not None:
        print(why, file=sys.stderr)
        return 2
    try:
        cases = select(page_cases(PAPERS), args.only)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    names = [n.strip() for n in args.sweeps.split(",") if n.strip()] or list(BUILTINS)
    res: dict[str, Any] = {"load_before": loadavg_text()}
    print(f"load average before: {res['load_before']}; {os.cpu_count()} cores", flush=True)
    text = []
    if not args.no_pages:
        pages = time_pages(cases, warm=args.warm, app=app)
        res["pages"] = [asdict(p) for p in pages]
        text += ["## First chart per page", page_table(pages)]
    if not args.no_nav:
        nav, back = time_navigation(rounds=args.warm, app=app)
        res["navigation"] = {"sidebar_click": nav, "reload": back}
        text += ["## A visitor with the app open: sidebar click / reload (warm server, "
                 "browser cache warm)", nav_table(nav, back)]
    if not args.no_sweeps:
        page_rows = time_sweeps_page(names, app=app)
        res["sweeps_page"] = [asdict(r) for r in page_rows]
        text += ["## Quick built-in sweeps on the Sweeps page (one server, in order; the "
                 "first includes the cluster start)", sweep_table(page_rows, "sweep (page)")]
        if not args.no_library:
            start, lib_rows = time_sweeps_library(names)
            res["cluster_start"] = start
            res["sweeps_library"] = [asdict(r) for r in lib_rows]
            text += [f"## Quick built-in sweeps through the library (LocalCluster start "
                     f"{start:.2f} s, not included)", sweep_table(lib_rows, "sweep (library)")]
    res["load_after"] = loadavg_text()
    text.append(f"Load average before {res['load_before']}, after {res['load_after']}.")
    print("\n\n".join(text))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
