"""Overview, Explorer and Papers in a real browser (normal and presenter mode), and the
downloaded standalone HTML animating offline from file://. Screenshots: artifacts/screenshots/."""

from __future__ import annotations

import pytest

from devtools.browser import wait_for_streamlit_idle
from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.papers import PAPERS
from dynamics.simulate import simulate
from viz.export import standalone_html
from viz.main_figure import main_figure

CHART_JS = """() => Array.from(
  document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')).map(gd => ({
    steps: gd._fullLayout && gd._fullLayout.sliders && gd._fullLayout.sliders[0]
           ? gd._fullLayout.sliders[0].steps.length : 0,
    height: gd._fullLayout ? gd._fullLayout.height : 0,
  }))"""
SIDEBAR_VISIBLE_JS = """() => {
  const s = document.querySelector('section[data-testid="stSidebar"]');
  if (!s) return false;
  const r = s.getBoundingClientRect();
  return getComputedStyle(s).display !== 'none' && r.width > 0 && r.height > 0;
}"""
PAGES = [("overview", "overview"), ("explorer", ""),
         *((f"papers_{k}", f"papers?paper={k}") for k in PAPERS)]  # every paper


def _open(page, url: str) -> list[dict]:
    page.goto(url)
    wait_for_streamlit_idle(page, timeout=240)
    assert page.locator('[data-testid="stException"]').count() == 0, \
        page.locator('[data-testid="stException"]').first.inner_text()
    assert not page.get_by_text("Page not found").count()
    return page.evaluate(CHART_JS)


@pytest.mark.browser
@pytest.mark.parametrize(("name", "path"), PAGES)
def test_page_opens_with_an_animated_chart(streamlit_server, page, screenshot_dir, name, path):
    charts = _open(page, f"{streamlit_server}/{path}")
    assert charts and charts[0]["steps"] > 10, charts
    assert page.evaluate(SIDEBAR_VISIBLE_JS)
    page.screenshot(path=screenshot_dir / f"page_{name}.png", full_page=True)


@pytest.mark.browser
@pytest.mark.parametrize(("name", "path"), PAGES[:3])
def test_presenter_mode_hides_controls(streamlit_server, page, screenshot_dir, name, path):
    sep = "&" if "?" in path else "?"
    charts = _open(page, f"{streamlit_server}/{path}{sep}view.presenter=true")
    assert charts and charts[0]["steps"] > 10
    assert not page.evaluate(SIDEBAR_VISIBLE_JS), "the sidebar must be hidden"
    assert page.get_by_role("button", name="Exit presenter mode").count() == 1
    # the main figure fills the screen below the compact header, and fits in it
    assert 0.6 * 900 <= charts[0]["height"] <= 900, charts
    page.screenshot(path=screenshot_dir / f"page_{name}_presenter.png", full_page=False)
    page.get_by_role("button", name="Exit presenter mode").click()
    wait_for_streamlit_idle(page, timeout=120)
    assert page.evaluate(SIDEBAR_VISIBLE_JS)
    assert "view.presenter" not in page.url


@pytest.mark.browser
def test_standalone_html_animates_offline(browser, tmp_path, screenshot_dir):
    traj = simulate(Config.from_dict({"model": {"width": 12}, "record": {"frames": 40}}))
    path = tmp_path / "figure.html"
    path.write_bytes(standalone_html(main_figure(traj, analyse(traj))))
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    blocked: list[str] = []

    def route(r):
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    try:
        pg = context.new_page()
        pg.goto(path.as_uri())
        pg.wait_for_function("() => { const gd = document.querySelector('.js-plotly-plot');"
                             " return gd && gd._fullLayout && gd._fullLayout.sliders; }",
                             timeout=30_000)
        steps = pg.evaluate("() => document.querySelector('.js-plotly-plot')"
                            "._fullLayout.sliders[0].steps.length")
        assert steps == 40
        assert pg.evaluate("() => document.querySelector('.js-plotly-plot')"
                           "._fullLayout.sliders[0].active") == 0
        pg.locator(".updatemenu-button").first.click()  # ▶ Play
        pg.wait_for_function("() => document.querySelector('.js-plotly-plot')"
                             "._fullLayout.sliders[0].active > 5", timeout=20_000)
        pg.screenshot(path=screenshot_dir / "standalone_html_offline.png")
        assert not blocked, blocked
    finally:
        context.close()
