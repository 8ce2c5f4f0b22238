"""Explorer page latency (a benchmark, not a test).

Measures, for the default config:
- browser time to a visible, animated chart: cold (fresh server, empty cache) and warm
  (reload of the same page on the running server);
- server time of a script run for a cached config (AppTest; the second run of the page: the
  trajectory, its analysis and the figure are all cached);
- the figure build time without the figure cache, and the figure's JSON size in bytes;
- settings changes in the browser: on the Explorer (1600×1000), a sidebar
  control (leaky slope γ, init scale ε, loss) is changed `--changes` times to values never run
  ("new") and as often back to values already run ("cached"); each is timed from the input's
  commit (Enter / the option's click / the slider key) to the moment the chart holds the NEW
  figure (its title, which names γ, ε and the loss, differs from before, it has its frames
  and its SVG is drawn); the page is then left alone for `--pause` seconds (1 s: a person
  looks at the chart; the page prefetches the neighbouring settings meanwhile, which the "new"
  values are never). Medians and min–max, with the load average.

Targets: warm < 1 s; cached < 0.3 s server time; a change < 1 s cached, < 2 s new.
Run: .venv/bin/python -m bench page [--changes N] [--only changes]  (or -m bench.bench_page;
needs Chromium at /usr/bin/chromium)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # also runnable as a script: bench/bench_page.py
    sys.path.insert(0, str(REPO))

from bench.machine import loadavg_text  # noqa: E402 (after the path set-up)

#: The Explorer's figure player (an iframe, ui/player.py) once it has drawn a run with frames.
_PLAYER = """(() => { const f = document.querySelector('iframe[title$="eae_player"]');
  try { const p = f && f.contentWindow.EAEPlayer.players[0];
        return p && p.run && p.run.frames.n > 0 ? p : null; } catch (e) { return null; } })()"""
CHART_READY_JS = f"() => !!{_PLAYER}"


#: The figure's title once it is drawn (else null): the title names γ, ε and the loss, so a
#: change of any of them shows as a new title.
CHART_TITLE_JS = f"""() => {{
  const p = {_PLAYER};
  if (!p) return null;
  const gd = p.root.querySelector('.eae-plot');
  const lay = (gd && gd.layout) || {{}};
  const t = (lay.title && lay.title.text) || (lay.legend && lay.legend.title
            && lay.legend.title.text);
  return t ? String(t) : null;
}}"""
NEW_CHART_JS = "(old) => { const t = (" + CHART_TITLE_JS + ")(); return t !== null && t !== old; }"

EPS_LADDER = (0.001, 0.0001, 0.01)
"""ε values of the sidebar's slider (`ui.controls.EPS_CHOICES`), the default 1e-3 first: each
move is two or more slider steps, so a "new" ε is never one the page prefetched (the
neighbours one step away, `ui.runner.neighbours`)."""
LOSSES = ("square", "logistic", "exponential")


@dataclass(frozen=True)
class Change:
    """One settings change: the control ("gamma", "eps" or "loss"), the value it is set to,
    whether the resulting settings were run before ("cached") or not ("new"), and the settings
    (γ, ε, loss) the page then shows."""

    control: str
    value: float | str
    kind: str
    settings: tuple[float, float, str]


def plan_changes(n: int, start: tuple[float, float, str] = (0.0, 0.001, "square")
                 ) -> list[Change]:
    """n "new" changes, each followed by one back to the settings before it ("cached"), and
    every other time by one more to the new settings again (so later moves start from varied
    places). A new change steps γ up (0.01, 0.02, …; the prefetched neighbours are ±0.05), ε
along `EPS_LADDER` or
    the loss along `LOSSES`, in turn; settings run before are skipped (γ nudged by 0.005), so
    `kind` is right by construction."""
    seen = {start}
    cur = start
    out: list[Change] = []
    for i in range(n):
        g, e, loss = cur
        if i % 3 == 1:
            nxt = (g, EPS_LADDER[(EPS_LADDER.index(e) + 1) % len(EPS_LADDER)], loss)
        elif i % 3 == 2:
            nxt = (g, e, LOSSES[(LOSSES.index(loss) + 1) % len(LOSSES)])
        else:
            nxt = (round(g + 0.01, 4), e, loss)
        while nxt in seen:
            nxt = (round(g + 0.005 * (1 + len(seen)), 4), e, loss)
        out.append(Change(*_single(cur, nxt), "new", nxt))
        out.append(Change(*_single(nxt, cur), "cached", cur))
        seen.add(nxt)
        if i % 2 == 0:
            out.append(Change(*_single(cur, nxt), "cached", nxt))
            cur = nxt
    return out


def _single(old: tuple[float, float, str], new: tuple[float, float, str]
            ) -> tuple[str, float | str]:
    """(control, value) of the one setting that differs between `old` and `new`."""
    diff = [k for k in range(3) if old[k] != new[k]]
    assert len(diff) == 1, (old, new)
    return ("gamma", "eps", "loss")[diff[0]], new[diff[0]]


def summary(times: list[float]) -> str:
    """"median 0.62 s (min–max 0.41–0.93, n = 10)", or "no samples"."""
    if not times:
        return "no samples"
    return (f"median {statistics.median(times):.2f} s (min–max {min(times):.2f}–"
            f"{max(times):.2f}, n = {len(times)})")


def _commit(page, change: Change) -> float:
    """Set the control of `change` in the sidebar; the perf_counter time of the commit."""
    side = page.locator('[data-testid="stSidebar"]')
    if change.control == "gamma":
        box = side.get_by_role("spinbutton", name="leaky slope γ")
        box.fill(f"{change.value:g}")
        t0 = time.perf_counter()
        box.press("Enter")
        return t0
    if change.control == "loss":
        sel = side.locator('[data-testid="stSelectbox"]').filter(has_text="loss").filter(
            has_not_text="reduction").first
        sel.click()
        opt = page.get_by_role("option", name=str(change.value), exact=True)
        opt.wait_for(timeout=10_000)
        t0 = time.perf_counter()
        opt.click()
        return t0
    # ε: one click on the select slider's track at the wanted option (arrow keys commit each
    # step: a move of two steps would be two reruns)
    slider = side.locator('[data-testid="stSlider"]').filter(has_text="init scale").first
    thumb = slider.locator('input[type="range"]').first
    options = _eps_options()
    want = options.index(min(options, key=lambda o: abs(o - float(change.value))))
    track = slider.locator('[role="group"] > div[data-orientation="horizontal"]').first
    box = track.bounding_box()
    assert box is not None, "the ε slider is not visible"
    frac = want / (len(options) - 1)
    t0 = time.perf_counter()
    track.click(position={"x": frac * box["width"], "y": box["height"] / 2})
    if int(float(thumb.evaluate("e => e.value"))) != want:
        raise RuntimeError(f"the ε slider did not move to {change.value}")
    return t0


def _eps_options() -> list[float]:
    from ui.controls import EPS_CHOICES
    return sorted(EPS_CHOICES)


def change_times(url: str, n: int, log: bool = True, pause: float = 1.0
                 ) -> dict[str, list[float]]:
    """Time the changes of `plan_changes(n)` on the Explorer at `url` (a running server);
    seconds per kind ("new", "cached"). After each new chart the page is left alone for
    `pause` seconds (a person looks at the chart before the next change; the page prepares
    the neighbouring settings then)."""
    from playwright.sync_api import sync_playwright

    from devtools.browser import launch_chromium, wait_for_streamlit_idle

    out: dict[str, list[float]] = {"new": [], "cached": []}
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport={"width": 1600, "height": 1000}, reduced_motion="reduce")
        page.goto(url + "/")
        page.wait_for_function(CHART_READY_JS, timeout=300_000, polling=50)
        wait_for_streamlit_idle(page, timeout=120, settle=0.5)
        for ch in plan_changes(n):
            old = page.evaluate(CHART_TITLE_JS)
            t0 = _commit(page, ch)
            try:
                page.wait_for_function(NEW_CHART_JS, arg=old, timeout=120_000, polling="raf")
            except Exception as e:
                raise RuntimeError(f"no new chart after {ch}") from e
            dt = time.perf_counter() - t0
            out[ch.kind].append(dt)
            if log:
                print(f"  {ch.kind:6s} {ch.control:5s} → {ch.value!s:9s} {dt:6.2f} s",
                      flush=True)
            wait_for_streamlit_idle(page, timeout=120, settle=0.3)
            time.sleep(pause)
            got = page.evaluate(CHART_TITLE_JS) or ""
            if not _title_matches(got, ch.settings):
                raise RuntimeError(f"the chart does not show {ch.settings}: {got[:200]}")
        browser.close()
    return out


def _title_matches(title: str, settings: tuple[float, float, str]) -> bool:
    """Whether the main figure's title names these (γ, ε, loss) (viz.main_figure._title)."""
    g, e, loss = settings
    act = "ReLU" if g == 0 else f"leaky ReLU γ = {g:g}"
    return (title.startswith(act + ",") and f"ε = {e:g}" in title
            and f"{loss} loss" in title)


def browser_change_times(cache_dir: str, n: int, pause: float = 1.0
                         ) -> dict[str, list[float]]:
    """`change_times` on a fresh server using `cache_dir` (the default run computed there)."""
    from devtools.server import StreamlitServer

    server = StreamlitServer(REPO / "serve.py", {"EAE_CACHE_DIR": cache_dir}, Path(cache_dir))
    try:
        server.wait_healthy()
        try:
            return change_times(server.url, n, pause=pause)
        except Exception:
            print(server.log_tail(), file=sys.stderr)
            raise
    finally:
        server.stop()


def browser_times(cache_dir: str, reloads: int = 3) -> tuple[float, list[float]]:
    from playwright.sync_api import sync_playwright

    from devtools.browser import VIEWPORT, launch_chromium
    from devtools.server import StreamlitServer

    server = StreamlitServer(REPO / "serve.py", {"EAE_CACHE_DIR": cache_dir}, Path(cache_dir))
    try:
        server.wait_healthy()
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            page = browser.new_page(viewport=VIEWPORT, reduced_motion="reduce")
            t0 = time.perf_counter()
            page.goto(server.url + "/")
            page.wait_for_function(CHART_READY_JS, timeout=300_000, polling=50)
            cold = time.perf_counter() - t0
            warm = []
            for _ in range(reloads):
                t0 = time.perf_counter()
                page.reload()
                page.wait_for_function(CHART_READY_JS, timeout=120_000, polling=50)
                warm.append(time.perf_counter() - t0)
            browser.close()
    finally:
        server.stop()
    return cold, warm


def first_chart_times(tmp: str, fresh_browsers: int = 3) -> dict[str, object]:
    """The first chart of a fresh clone and of fresh browsers: a server with an empty numba
    cache and an empty run cache (what `bash scripts/run.sh` starts on a fresh clone, its
    set-up aside), one browser opening the Explorer at the moment the health check answers:
    seconds from health to a drawn chart, and whether it was drawn while the kernels still
    compiled; then, once the server is warm, `fresh_browsers` new browser contexts (no HTTP
    cache) opening the page: seconds to the chart each."""
    import json
    import urllib.request

    from playwright.sync_api import sync_playwright

    from devtools.browser import VIEWPORT, launch_chromium
    from devtools.server import StreamlitServer

    env = {"EAE_CACHE_DIR": str(Path(tmp) / "cache"), "NUMBA_CACHE_DIR": str(Path(tmp) / "nb")}
    server = StreamlitServer(REPO / "serve.py", env, Path(tmp))

    def warm_ready() -> bool:
        with urllib.request.urlopen(server.url + "/api/eae/warmup", timeout=30) as r:
            return bool(json.loads(r.read())["ready"])

    try:
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            ctx = browser.new_context(viewport=VIEWPORT, reduced_motion="reduce")
            page = ctx.new_page()
            server.wait_healthy()
            t0 = time.perf_counter()
            page.goto(server.url + "/")
            page.wait_for_function(CHART_READY_JS, timeout=600_000, polling=50)
            first = time.perf_counter() - t0
            compiling = not warm_ready()
            ctx.close()
            server.wait_ready()
            fresh = []
            for _ in range(fresh_browsers):
                ctx = browser.new_context(viewport=VIEWPORT, reduced_motion="reduce")
                page = ctx.new_page()
                t0 = time.perf_counter()
                page.goto(server.url + "/")
                page.wait_for_function(CHART_READY_JS, timeout=120_000, polling=50)
                fresh.append(time.perf_counter() - t0)
                ctx.close()
            browser.close()
    finally:
        server.stop()
    return {"health_to_chart_s": first, "while_compiling": compiling, "fresh_browser_s": fresh}


def server_times(runs: int = 5) -> list[float]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app_pages" / "explorer.py"), default_timeout=300)
    at.run()  # computes (or loads) the trajectory and builds the figure
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        at.run()
        out.append(time.perf_counter() - t0)
        assert not at.exception
    return out


def figure_numbers() -> tuple[float, int]:
    from dynamics.config import Config
    from dynamics.service import default_service
    from viz.main_figure import main_figure
    from viz.payload import encode

    service = default_service()
    traj = service.run(Config())
    analysis = service.analyse(traj)
    main_figure(traj, analysis)  # warm imports
    t0 = time.perf_counter()
    payload = encode(main_figure(traj, analysis))
    build = time.perf_counter() - t0
    return build, len(payload)


def main(argv: list[str] | None = None) -> None:
    """Print the browser, server and figure numbers of the Explorer's default config."""
    ap = argparse.ArgumentParser(prog="python -m bench page",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--changes", type=int, default=10,
                    help="settings changes of each kind (new, cached) in the browser (10)")
    ap.add_argument("--pause", type=float, default=1.0,
                    help="seconds the page is left alone after each new chart (1.0)")
    ap.add_argument("--only", choices=("all", "changes", "reload", "first"), default="all",
                    help="changes: only the settings changes; reload: only the first chart, "
                    "reloads, server script and figure numbers; first: the first chart of a "
                    "fresh clone (empty numba cache) and of fresh browsers on a warm server")
    args = ap.parse_args(argv)
    from bench.machine import cpu_model

    print(f"CPU {cpu_model()}; load average before: {loadavg_text()}", flush=True)
    if args.only == "first":
        with tempfile.TemporaryDirectory(prefix="eae_bench_") as tmp:
            got = first_chart_times(tmp)
        print(f"fresh clone (empty numba cache): health → first chart "
              f"{got['health_to_chart_s']:.2f} s, drawn while the kernels compiled: "
              f"{got['while_compiling']}  target ≤ 5 s")
        print(f"fresh browser on the warm server: "
              f"{[round(x, 2) for x in got['fresh_browser_s']]} s  target ≤ 3 s")  # type: ignore[union-attr]
        return
    with tempfile.TemporaryDirectory(prefix="eae_bench_") as cache_dir:
        os.environ["EAE_CACHE_DIR"] = cache_dir
        if args.only in ("all", "changes"):
            ch = browser_change_times(cache_dir, max(1, args.changes), args.pause)
            print(f"settings change → new chart (1600×1000, {args.pause:g} s between changes), "
                  f"load average now {loadavg_text()}:")
            print(f"  cached run: {summary(ch['cached'])}  target < 1 s")
            print(f"  new run:    {summary(ch['new'])}  target < 2 s")
        if args.only == "changes":
            return
        cold, warm = browser_times(cache_dir)
        server = server_times()
        build, size = figure_numbers()
    print(f"browser, cold (fresh server, empty cache): {cold:6.2f} s")
    print(f"browser, warm reload (median of {len(warm)}): {statistics.median(warm):6.2f} s "
          f"{[round(w, 2) for w in warm]}  target < 1 s")
    print(f"server script run, cached config (median of {len(server)}): "
          f"{statistics.median(server):6.3f} s {[round(s, 3) for s in server]}  target < 0.3 s")
    print(f"figure build without the figure cache: {build:6.3f} s")
    print(f"figure JSON size (default config): {size:,} bytes")


if __name__ == "__main__":
    main()
