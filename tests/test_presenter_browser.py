"""Overview, Explorer and Papers in a real browser (normal and presenter mode), and the
downloaded standalone HTML animating offline from file://. Screenshots: artifacts/screenshots/."""

from __future__ import annotations

import pytest

from devtools.browser import PLAYER_JS, wait_for_streamlit_idle
from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.papers import PAPERS
from dynamics.simulate import simulate
from viz.export import standalone_html
from viz.main_figure import main_figure

PLAYERS_JS = f"""() => Array.from(document.querySelectorAll('iframe[title$="eae_player"]'))
  .map((_, i) => ({PLAYER_JS})(i))"""
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
    return page.evaluate(PLAYERS_JS)


@pytest.mark.browser
@pytest.mark.parametrize(("name", "path"), PAGES)
def test_page_opens_with_an_animated_chart(streamlit_server, page, screenshot_dir, name, path):
    charts = _open(page, f"{streamlit_server}/{path}")
    assert charts and charts[0]["frames"] > 10, charts
    assert page.evaluate(SIDEBAR_VISIBLE_JS)
    page.screenshot(path=screenshot_dir / f"page_{name}.png", full_page=True)


@pytest.mark.browser
@pytest.mark.parametrize(("name", "path"), PAGES[:3])
def test_presenter_mode_hides_controls(streamlit_server, page, screenshot_dir, name, path):
    sep = "&" if "?" in path else "?"
    charts = _open(page, f"{streamlit_server}/{path}{sep}view.presenter=true")
    assert charts and charts[0]["frames"] > 10
    assert not page.evaluate(SIDEBAR_VISIBLE_JS), "the sidebar must be hidden"
    assert page.get_by_role("button", name="Exit presenter mode").count() == 1
    # the main figure and its controls fill the screen below the compact header, and fit in it
    c = charts[0]
    assert 0.6 * 900 <= c["frameTop"] + c["frameHeight"] <= 900, charts
    assert c["height"] >= 0.45 * 900, charts
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
        pg.wait_for_function("() => window.EAEPlayer && EAEPlayer.players[0] &&"
                             " EAEPlayer.players[0].run", timeout=30_000)
        state = "() => { const p = EAEPlayer.players[0]; return [p.run.frames.n, p.frame]; }"
        assert pg.evaluate(state) == [40, 0]  # every frame, not playing on open
        pg.locator(".eae-play").click()  # ▶ Play
        pg.wait_for_function("() => EAEPlayer.players[0].frame > 5", timeout=20_000)
        pg.screenshot(path=screenshot_dir / "standalone_html_offline.png")
        assert not blocked, blocked
    finally:
        context.close()
