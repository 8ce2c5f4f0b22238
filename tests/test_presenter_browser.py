"""The downloaded standalone HTML animating offline from file:// in a real browser, with the
dashboard's player and no network. (The pages themselves: tests/test_tour_browser.py.)"""

from __future__ import annotations

import pytest

from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.simulate import simulate
from viz.export import standalone_html
from viz.main_figure import main_figure


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
