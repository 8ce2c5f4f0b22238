"""The dashboard as a teacher, a student and a researcher use it, in real Chromium: presenter
mode fits a projector (figure, ▶ Play and slider inside 1280×720 and 1920×1080), the lesson
keys step through scenarios, typed numbers are never coerced, claims tables are readable at
1280 px, and no page logs a console error (normal and presenter mode)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from devtools.browser import wait_for_streamlit_idle

PAGES = ["", "overview", "papers", "compare", "real_data", "sweeps", "status"]
# every page with a main (animated) figure; Sweeps draws only non-animated result plots
FIGURE_PAGES = ["", "overview", "papers?paper=min", "papers?paper=chistikov",
                "papers?paper=boursier", "papers?paper=wang_ma", "compare", "real_data"]
# 1280×720 is the tight case and covers every page; at 1920×1080 the pages most at risk:
# the lesson bar (Explorer), the tallest legend (Wang & Ma) and the narrow columns (Compare)
FIT_CASES = ([(p, 1280, 720) for p in FIGURE_PAGES]
             + [(p, 1920, 1080) for p in ("", "papers?paper=wang_ma", "compare")])
# The plots' floor in presenter mode: the drawing area (top of the highest subplot to the
# bottom of the lowest, from Plotly's drag rectangles) at least 45 % of the window's height.
# At 1280×720 that is 324 px: the neuron panel (a square as tall as the plot area on the
# Explorer, Overview and Papers) stays above the 300 px its labels are placed for
# (viz.label_layout.PANEL_PX), and the time panels keep ≥ 100 px each.
PLOT_FLOOR = 0.45
BOX_JS = """() => {
  const gd = document.querySelector('[class*="st-key-eae-fig-"] .js-plotly-plot');
  if (!gd) return null;
  const box = e => { if (!e) return null; const r = e.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, height: r.height}; };
  const drags = Array.from(gd.querySelectorAll('.nsewdrag')).map(box);
  return {figure: box(gd), play: box(gd.querySelector('.updatemenu-button')),
          slider: box(gd.querySelector('.slider-container')),
          legend: box(gd.querySelector('.legend')),
          plots: drags.length ? {top: Math.min(...drags.map(d => d.top)),
                                 bottom: Math.max(...drags.map(d => d.bottom))} : null,
          largest: Math.max(0, ...drags.map(d => d.height)),
          width: innerWidth, height: innerHeight};
}"""


def _url(base: str, path: str, presenter: bool) -> str:
    if not presenter:
        return f"{base}/{path}"
    return f"{base}/{path}{'&' if '?' in path else '?'}view.presenter=true"


@pytest.fixture()
def context_of(browser: Any) -> Iterator[Any]:
    """Factory: a page in a fresh context with the given viewport (closed at the end)."""
    contexts: list[Any] = []

    def make(width: int, height: int) -> Any:
        ctx = browser.new_context(viewport={"width": width, "height": height},
                                  device_scale_factor=1)
        ctx.set_default_timeout(60_000)
        contexts.append(ctx)
        return ctx.new_page()

    yield make
    for ctx in contexts:
        ctx.close()


# True once the presenter script (ui.presenter.FIT_JS, every 0.3 s) has placed the figure:
# its --eae-fig-top is the figure's top and Plotly has drawn at the container's size. Without
# that script (normal mode) or a figure there is nothing to wait for.
FITTED_JS = """() => {
  const el = document.querySelector('[class*="st-key-eae-fig-"]');
  const want = document.documentElement.style.getPropertyValue('--eae-fig-top');
  if (!el || !want) return true;
  let top = el.getBoundingClientRect().top;
  for (let p = el.parentElement; p; p = p.parentElement) top += p.scrollTop || 0;
  if (Math.max(0, Math.round(top)) + 'px' !== want) return false;
  const gd = el.querySelector('.js-plotly-plot');
  if (!gd || !gd._fullLayout) return false;
  const box = gd.getBoundingClientRect();
  return Math.abs(gd._fullLayout.height - box.height) <= 1
      && Math.abs(gd._fullLayout.width - box.width) <= 1;
}"""


def _settle(page: Any) -> None:
    wait_for_streamlit_idle(page, timeout=300)
    page.wait_for_function(FITTED_JS, timeout=30_000, polling=100)
    wait_for_streamlit_idle(page, timeout=120)


def _no_exception(page: Any) -> None:
    exc = page.locator('[data-testid="stException"]')
    assert exc.count() == 0, exc.first.inner_text()


# ----------------------------------------------------------------------------- projector
@pytest.mark.browser
@pytest.mark.parametrize(("path", "width", "height"), FIT_CASES)
def test_presenter_figure_play_and_slider_fit_the_viewport(streamlit_server, context_of,
                                                           screenshot_dir, path, width,
                                                           height):
    page = context_of(width, height)
    page.goto(_url(streamlit_server, path, True))
    _settle(page)
    _no_exception(page)
    got = page.evaluate(BOX_JS)
    assert got is not None, "no main figure"
    for name in ("figure", "play", "slider"):
        box = got[name]
        assert box is not None and box["height"] > 0, (name, got)
        assert box["left"] >= 0 and box["top"] >= 0, (name, got)
        assert box["right"] <= width + 0.5 and box["bottom"] <= height + 0.5, (name, got)
    assert got["figure"]["height"] >= 380, got  # still a figure, not a strip
    plots = got["plots"]
    assert plots is not None, got
    # the plots get their share of the window, under the legend and above ▶ Play
    assert plots["bottom"] - plots["top"] >= PLOT_FLOOR * height, (path, plots, got)
    if got["legend"] is not None:
        assert got["legend"]["bottom"] <= plots["top"], got
    assert plots["bottom"] < got["play"]["top"], got
    if path.startswith("papers") or path in ("", "overview"):  # the neuron panel's square
        assert got["largest"] >= 300, got
    stem = path.replace("?paper=", "_") or "explorer"
    page.screenshot(path=screenshot_dir / f"presenter_fit_{stem}_{width}x{height}.png")


@pytest.mark.browser
def test_lesson_keys_step_through_scenarios(streamlit_server, context_of):
    page = context_of(1280, 720)
    page.goto(f"{streamlit_server}/?view.presenter=true&view.lesson=min.toy_2d,"
              "wang_ma.four_phases,boursier.three_point_leaky")
    _settle(page)

    def press(key: str, scenario: str) -> None:
        page.keyboard.press(key)
        page.wait_for_url(f"**view.scenario={scenario}**", timeout=120_000)
        _settle(page)
        _no_exception(page)

    press("ArrowRight", "min.toy_2d")
    assert page.get_by_text("1 / 3 · Min et al. · 2-D toy").count() == 1
    press("PageDown", "wang_ma.four_phases")  # what a presentation clicker sends
    press("ArrowRight", "boursier.three_point_leaky")
    press("PageUp", "wang_ma.four_phases")
    press("ArrowLeft", "min.toy_2d")
    assert page.evaluate(BOX_JS) is not None


# ----------------------------------------------------------------------------- inputs
@pytest.mark.browser
def test_typed_width_is_never_coerced(streamlit_server, page):
    page.goto(f"{streamlit_server}/?model.width=12")
    _settle(page)
    field = page.get_by_role("spinbutton", name="width m")
    for typed, expect in (("1e9", "you typed 1e9"), ("-5", "you typed -5")):
        field.fill(typed)
        field.press("Enter")
        _settle(page)
        _no_exception(page)
        assert page.get_by_text(expect).count() >= 1, typed  # beside the field and above
        assert page.locator('[class*="st-key-eae-stale-"] .js-plotly-plot').count() == 1
        assert "model.width=12" in page.url  # the link keeps the last good settings


@pytest.mark.browser
def test_claims_table_is_readable_at_1280(streamlit_server, context_of, screenshot_dir):
    page = context_of(1280, 800)
    page.goto(f"{streamlit_server}/papers?paper=boursier")
    _settle(page)
    table = page.locator('[data-testid="stTable"]').first  # this run's claims
    table.scroll_into_view_if_needed()
    assert table.locator("th").first.inner_text().strip() == "result"
    box = table.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1280
    cells = table.locator("td")
    assert cells.count() > 0
    for i in range(cells.count()):  # wrapped, never cut: each cell shows all its text
        assert cells.nth(i).evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    page.screenshot(path=screenshot_dir / "claims_table_1280.png", full_page=True)


# ----------------------------------------------------------------------------- console
def _base_path_probe(url: str, base: str, path: str) -> bool:
    """Streamlit's frontend, opened on a deep link `/<page>`, first looks for its server
    under that path (`/<page>/_stcore/health`, `/<page>/_stcore/host-config`: 404, logged by
    the browser as failed resources) and then finds it at the root. That probe is Streamlit's
    own and happens before any of the app runs; everything else must be clean."""
    page = path.split("?")[0]
    return bool(page) and url in (f"{base}/{page}/_stcore/health",
                                  f"{base}/{page}/_stcore/host-config")


@pytest.mark.browser
@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("path", PAGES)
def test_no_console_errors(streamlit_server, page, path, presenter):
    errors: list[str] = []

    def on_console(m: Any) -> None:
        if m.type == "error" and not _base_path_probe(m.location.get("url", ""),
                                                      streamlit_server, path):
            errors.append(f"console: {m.text} ({m.location.get('url')})")

    page.on("console", on_console)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.goto(_url(streamlit_server, path, presenter))
    _settle(page)
    _no_exception(page)
    if path == "papers":  # the claims check draws more tables and a status box
        page.get_by_role("button", name="Check the claims").click()
        wait_for_streamlit_idle(page, timeout=900)
        _no_exception(page)
    assert errors == []
