"""Scrub a control live, in real Chromium: how long the family of runs takes to arrive, and how
many figure updates per second the player draws while its scrub slider is dragged.

    .venv/bin/python -m bench drag                  # the Explorer's default run and each paper
    .venv/bin/python -m bench drag --quick          # the default run only, a shorter drag

Starts one server (`streamlit run serve.py`, loopback, a fresh EAE_CACHE_DIR, prefetch on),
opens the Explorer on the default link and on each paper's presets (the links "Open in
Explorer" makes), and for each: the time from the first figure drawn to the whole family
loaded in the player (ε: the slider's values; a cheap family starts with its figure, a costly
one once the visitor reaches for the slider, which the bench does once the page is idle),
then a drag with the mouse back and forth across the ε and
the γ slider for `--seconds` (a move due every 16 ms as from a hand, each onto the next value
of the slider, back and forth), counting the runs the player swapped in (`swaps`) per second
of drag. A remote-controlled mouse sends a move only once the browser has answered the last
one (about 30 a second on a 2-core host), so each slider is also moved in the page itself, one
value per display frame (`in-page hand`: what the player draws when a hand gives it 60 moves
a second), and the sidebar's ε slider is dragged with the mouse (the player follows it while
it moves). Nothing is asserted: the numbers are printed (and written as JSON with --json).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from devtools.browser import launch_chromium, wait_for_streamlit_idle
from devtools.server import REPO_ROOT, StreamlitServer

from .machine import cpu_model, loadavg_text

CHART_JS = """() => {
  const f = document.querySelector('iframe[title$="eae_player"]');
  try { const p = f && f.contentWindow.EAEPlayer.players[0]; return !!(p && p.run); }
  catch (e) { return false; }
}"""
FAMILY_JS = """() => {
  const f = document.querySelector('iframe[title$="eae_player"]');
  const p = f && f.contentWindow.EAEPlayer && f.contentWindow.EAEPlayer.players[0];
  if (!p || !p.family) return null;
  return {loaded: p.familyRuns.size, n: p.family.values.length, param: p.family.param,
          current: p.family.current, swaps: p.swaps, fast: p.fastSwaps, swapMs: p.swapMs,
          inputs: p.inputs, redraws: p.redraws};
}"""


@dataclass
class DragResult:
    """One case: the family's arrival and the drag rates (None: not measured)."""

    case: str
    url: str
    family_s: float | None  # the chart drawn → every member loaded (ε)
    members: int
    eps_updates_per_s: float | None  # the scrub slider dragged with the (remote) mouse
    gamma_updates_per_s: float | None
    eps_hand_per_s: float | None = None  # moved in the page, one value per display frame
    gamma_hand_per_s: float | None = None
    sidebar_eps_per_s: float | None = None  # the sidebar's ε slider dragged with the mouse


def cases(quick: bool) -> list[tuple[str, str]]:
    """(name, query string) of the default run and of every paper preset's Explorer link."""
    from dynamics.papers import PAPERS
    from ui.lesson import ExplorerView
    from ui.state import explorer_binder

    out = [("default", "")]
    if quick:
        return out
    binder = explorer_binder()
    for key, paper in PAPERS.items():
        for name, cfg in paper.presets(True).items():
            q = binder.query(ExplorerView(), {"run": cfg})
            if any(k in q for k in ("data.X", "data.y")):
                continue  # uploaded arrays stay out of links
            out.append((f"{key}.{name}", "&".join(f"{k}={v}" for k, v in q.items())))
    return out


def _frame(page: Any) -> Any:
    return page.frame_locator('iframe[title$="eae_player"]')


def _drag(page: Any, seconds: float) -> float | None:
    """Drag the scrub slider back and forth for `seconds`; swaps per second of drag."""
    slider = _frame(page).locator(".eae-scrub-input")
    if slider.count() == 0 or not slider.is_visible():
        return None
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    before = page.evaluate(FAMILY_JS)
    if box is None or before is None:
        return None
    y = box["y"] + box["height"] / 2
    n = before["n"]
    x0 = box["x"] + 8 + before["current"] / (n - 1) * (box["width"] - 16)
    page.mouse.move(x0, y)
    page.mouse.down()
    t0 = time.perf_counter()
    k = 0
    while time.perf_counter() - t0 < seconds:
        # every move lands on the next value (back and forth across the slider), so each
        # move asks for a new run: the swaps per second are what the player can draw, not
        # how many values a hand happens to cross
        step = k % (2 * (n - 1))
        i = step if step < n else 2 * (n - 1) - step
        page.mouse.move(box["x"] + 8 + i / (n - 1) * (box["width"] - 16), y)
        k += 1
        # a hand moves on a 60 Hz clock, not after the page has answered the last move: the
        # next move is due 16 ms after the last one was due (at once when running behind)
        ahead_ms = (t0 + k * 0.016 - time.perf_counter()) * 1000
        if ahead_ms > 1:
            page.wait_for_timeout(ahead_ms)
    dt = time.perf_counter() - t0
    after = page.evaluate(FAMILY_JS)
    swaps = after["swaps"] - before["swaps"]
    fast = after["fast"] - before["fast"]
    print(f"    {k} moves, {after['inputs'] - before['inputs']} input events, {swaps} swaps "
          f"({fast} painted, {after['redraws'] - before['redraws']} Plotly redraws), "
          f"{(after['swapMs'] - before['swapMs']) / max(fast, 1):.1f} ms per painted swap",
          flush=True)
    page.keyboard.press("Escape")
    # released away from the start: the page takes the value (a rerun); wait for it
    page.mouse.up()
    wait_for_streamlit_idle(page, timeout=300)
    return swaps / dt


HAND_JS = """async (seconds) => {
  const f = document.querySelector('iframe[title$="eae_player"]');
  const w = f.contentWindow, p = w.EAEPlayer.players[0];
  const input = w.document.querySelector('.eae-scrub-input');
  const n = p.family.values.length, s0 = p.swaps;
  let k = 0;
  const t0 = w.performance.now();
  await new Promise((done) => {
    const tick = () => {
      if (w.performance.now() - t0 > seconds * 1000) return done();
      const step = k % (2 * (n - 1)), i = step < n ? step : 2 * (n - 1) - step;
      input.value = String(i);
      input.dispatchEvent(new w.Event('input'));
      k += 1;
      w.requestAnimationFrame(tick);
    };
    w.requestAnimationFrame(tick);
  });
  const dt = (w.performance.now() - t0) / 1000;
  input.dispatchEvent(new w.Event('change'));
  return {moves: k, swaps: p.swaps - s0, seconds: dt};
}"""


def _hand(page: Any, seconds: float) -> float | None:
    """The scrub slider moved in the page itself, one value per display frame (a hand at 60
    Hz, without the round trips of a remote-controlled mouse): swaps per second."""
    if page.evaluate(FAMILY_JS) is None:
        return None
    got = page.evaluate(HAND_JS, seconds)
    print(f"    in-page hand: {got['moves']} moves, {got['swaps']} swaps in "
          f"{got['seconds']:.2f} s", flush=True)
    wait_for_streamlit_idle(page, timeout=300)
    return got["swaps"] / got["seconds"]


def _sidebar(page: Any, seconds: float) -> float | None:
    """Drag the sidebar's ε slider back and forth (the page learns its value on release only;
    the player follows it meanwhile): swaps per second of drag."""
    from ui.settings import setting

    thumb = page.locator(f'input[type="range"][aria-label="{setting("init.scale").label}"]')
    before = page.evaluate(FAMILY_JS)
    if thumb.count() == 0 or before is None or before["param"] != "init.scale":
        return None
    track = page.locator('[data-testid="stSlider"]').filter(has=thumb).first
    track.scroll_into_view_if_needed()
    box = track.bounding_box()
    knob = page.locator('[data-testid="stSliderThumbValue"]').first.bounding_box()
    if box is None or knob is None:
        return None
    y = knob["y"] + knob["height"] + 12  # the thumb, under its value
    x = knob["x"] + knob["width"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    t0 = time.perf_counter()
    k = 0
    while time.perf_counter() - t0 < seconds:
        x_k = x - (k % 12 if (k // 12) % 2 == 0 else 12 - k % 12) * 0.04 * box["width"] / 2
        page.mouse.move(x_k, y)
        k += 1
    dt = time.perf_counter() - t0
    swaps = page.evaluate(FAMILY_JS)["swaps"] - before["swaps"]
    page.mouse.move(x, y)
    page.mouse.up()
    wait_for_streamlit_idle(page, timeout=300)
    return swaps / dt


def _wait_family(page: Any, timeout_s: float, t0: float) -> tuple[float | None, int]:
    """Reach for the scrub slider (a costly family is computed from then on; a cheap one
    started with the figure) and wait: seconds from `t0` (the chart drawn) to every member
    loaded (polled every 50 ms), and the number of members."""
    slider = _frame(page).locator(".eae-scrub-input")
    if slider.count() == 0 or not slider.is_visible():
        return None, 0  # no family for this run (too heavy to scrub, or none offered)
    slider.scroll_into_view_if_needed()
    slider.hover()
    got = None
    while time.perf_counter() - t0 < timeout_s:
        try:
            got = page.evaluate(FAMILY_JS)
        except Exception:  # the frame is being replaced by a rerun
            got = None
        if got is not None and got["loaded"] >= got["n"]:
            return time.perf_counter() - t0, got["n"]
        page.wait_for_timeout(50)
    return None, (got or {}).get("loaded", 0)


def _pick(page: Any, param: str) -> bool:
    pick = _frame(page).locator(".eae-scrub-pick")
    if pick.count() == 0 or param not in pick.evaluate("s => Array.from(s.options, o => o.value)"):
        return False
    pick.select_option(param)
    wait_for_streamlit_idle(page, timeout=300)
    slider = _frame(page).locator(".eae-scrub-input")
    if slider.count() == 0 or not slider.is_visible():
        return False  # the run on screen now is too heavy to scrub: no family offered
    slider.hover()
    try:
        page.wait_for_function(f"() => {{ const f = ({FAMILY_JS})(); return f && f.param === "
                               f"'{param}' && f.loaded >= f.n; }}", timeout=300_000,
                               polling=200)
    except Exception:  # Playwright's TimeoutError: not every member came
        return False
    return True


def measure(base: str, browser: Any, quick: bool, seconds: float) -> list[DragResult]:
    out = []
    for name, query in cases(quick):
        ctx = browser.new_context(viewport={"width": 1600, "height": 1000}, reduced_motion="reduce")
        page = ctx.new_page()
        url = f"{base}/?{query}" if query else f"{base}/"
        page.goto(url)
        page.wait_for_function(f"() => ({CHART_JS})()", timeout=600_000, polling=20)
        t_chart = time.perf_counter()
        wait_for_streamlit_idle(page, timeout=600)
        fam_s, members = _wait_family(page, 600, t_chart)
        eps = _drag(page, seconds) if fam_s is not None else None
        eps_hand = _hand(page, seconds) if fam_s is not None else None
        side = _sidebar(page, seconds) if fam_s is not None else None
        picked = _pick(page, "model.gamma")
        gamma = _drag(page, seconds) if picked else None
        gamma_hand = _hand(page, seconds) if picked else None
        out.append(DragResult(name, url, fam_s, members, eps, gamma, eps_hand, gamma_hand, side))
        r = lambda v: v if v is None else round(v, 1)  # noqa: E731
        print(f"{name:34} family {r(fam_s)} s ({members} runs)  ε {r(eps)}/s (hand "
              f"{r(eps_hand)}/s, sidebar {r(side)}/s)  γ {r(gamma)}/s (hand {r(gamma_hand)}/s)",
              flush=True)
        ctx.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench drag", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the default run only, 1 s drags")
    ap.add_argument("--seconds", type=float, default=3.0, help="length of each drag")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    seconds = 1.0 if args.quick else args.seconds
    with tempfile.TemporaryDirectory() as tmp:
        server = StreamlitServer(REPO_ROOT / "serve.py", {"EAE_CACHE_DIR": tmp,
                                                          "EAE_PREFETCH": "1"}, Path(tmp))
        try:
            server.wait_healthy()
            print(f"server {server.url}; CPU {cpu_model()}; load {loadavg_text()}", flush=True)
            with sync_playwright() as pw:
                browser = launch_chromium(pw)
                try:
                    results = measure(server.url, browser, args.quick, seconds)
                finally:
                    browser.close()
        finally:
            server.stop()
    print(f"done; {loadavg_text()}")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
