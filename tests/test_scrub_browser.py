"""Scrub a control live, in real Chromium: the family of runs along ε arrives in the background
with the figure, dragging the player's scrub slider — or the sidebar's ε slider — swaps runs
with no server round trip, a value not computed yet shows the nearest computed one (marked as
such), the release becomes the page's state and the URL's, and after quick changes the scrub
bar, the sidebar and the figure show one value."""

from __future__ import annotations

import re

import pytest

from devtools.browser import PLAYER_JS, player_frame, player_painted, wait_for_streamlit_idle

FAMILY_JS = """() => {
  const f = document.querySelector('iframe[title$="eae_player"]');
  const p = f && f.contentWindow.EAEPlayer && f.contentWindow.EAEPlayer.players[0];
  if (!p || !p.family) return null;
  return {loaded: p.familyRuns.size, n: p.family.values.length, current: p.family.current,
          shown: p.familyShown, wanted: p.familyWanted, swaps: p.swaps, key: p.runKey,
          note: f.contentDocument.querySelector('.eae-scrub-note').textContent,
          nearest: p.root.dataset.scrubNearest, param: p.family.param,
          value: f.contentDocument.querySelector('.eae-scrub-value').textContent,
          hovered: f.contentDocument.querySelector('.eae-scrub:hover') !== null};
}"""


def _eps(title: str) -> float:
    m = re.search(r"ε = ([0-9.e+-]+)", title)
    assert m, title
    return float(m.group(1))


@pytest.mark.browser
def test_dragging_epsilon_swaps_runs_and_the_release_is_the_state(
        start_streamlit, page, tmp_path, screenshot_dir):
    base = start_streamlit("serve.py", env={"EAE_PREFETCH": "1",
                                            "EAE_CACHE_DIR": str(tmp_path / "cache")})
    page.goto(f"{base}/?model.width=12")
    wait_for_streamlit_idle(page, timeout=300)
    first = page.evaluate(PLAYER_JS, 0)
    assert first is not None, page.inner_text("body")[:2000]
    assert _eps(first["title"]) == 0.001
    player = player_frame(page)
    slider = player.locator(".eae-scrub-input")
    slider.scroll_into_view_if_needed()
    # a cheap family starts with the figure: it arrives while nobody reaches for the slider
    page.wait_for_function(f"() => {{ const f = ({FAMILY_JS})(); return f && f.loaded >= 7; }}",
                           timeout=180_000, polling=200)
    assert not page.evaluate(FAMILY_JS)["hovered"]
    fam = page.evaluate(FAMILY_JS)
    box = slider.bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2

    def x_of(index: int) -> float:  # the thumb's centre for a value index
        frac = index / (fam["n"] - 1)
        return box["x"] + 8 + frac * (box["width"] - 16)

    page.mouse.move(x_of(fam["current"]), y)
    page.mouse.down()
    target = fam["current"] - 2  # two slider steps down: ε = 1e-4
    for k in range(1, 11):  # a drag across the way there
        page.mouse.move(x_of(fam["current"]) + (x_of(target) - x_of(fam["current"])) * k / 10, y)
        player_painted(page, 2)  # the player handled the move and painted after it
    page.wait_for_function(f"() => ({FAMILY_JS})().shown === {target}", timeout=60_000)
    during = page.evaluate(PLAYER_JS, 0)
    # the figure already shows the dragged value, while the page has not been told (no rerun)
    assert _eps(during["title"]) == pytest.approx(1e-4)
    assert during["key"] != first["key"] and page.evaluate(FAMILY_JS)["swaps"] >= 1
    assert "init.scale" not in page.url
    page.screenshot(path=screenshot_dir / "scrub_while_dragging.png")
    page.mouse.up()  # the release: the value becomes the page's state and the URL's
    page.wait_for_url(re.compile(r"init\.scale=0\.0001"), timeout=60_000)
    wait_for_streamlit_idle(page, timeout=120)
    after = page.evaluate(PLAYER_JS, 0)
    assert _eps(after["title"]) == pytest.approx(1e-4) and after["key"] == during["key"]
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    assert "0.0001" in sidebar or "1e-04" in sidebar or "1e-4" in sidebar
    # picking another control in the scrub bar starts that control's family at once (the
    # pointer is already inside the bar: no new pointerenter reaches it)
    player.locator(".eae-scrub-pick").select_option("model.gamma")
    wait_for_streamlit_idle(page, timeout=120)
    page.wait_for_function(f"() => {{ const f = ({FAMILY_JS})(); return f && f.n > 1 && "
                           "f.loaded >= 3; }", timeout=120_000, polling=200)


@pytest.mark.browser
def test_a_value_not_computed_yet_shows_the_nearest_marked(streamlit_server, page):
    """The player's own rule, on a family whose other members cannot arrive (their figures do
    not exist on the server): dragging far shows the nearest computed run and says so."""
    page.goto(f"{streamlit_server}/?model.width=8")
    wait_for_streamlit_idle(page, timeout=300)
    frame = page.frame_locator('iframe[title$="eae_player"]')
    frame.locator(".eae-player").evaluate("""root => {
      const P = window.EAEPlayer.players[0];
      P.familyRuns = new Map();
      P.setFamily({param: "init.scale", label: "ε", values: [1e-5, 1e-4, 1e-3, 1e-2],
                   labels: ["1e-05", "0.0001", "0.001", "0.01"],
                   sources: ["/api/eae/fig/nope1", "/api/eae/fig/nope2", null,
                             "/api/eae/fig/nope3"], current: 2, choices: []},
                  () => Promise.reject(new Error("not on the server")));
    }""")
    frame.locator(".eae-scrub-input").evaluate(  # dragged to the far end
        "el => { el.value = '0'; el.dispatchEvent(new Event('input', {bubbles: true})); }")
    # the swap is drawn in the next animation frame
    frame.locator(".eae-player").evaluate(
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    got = page.evaluate(FAMILY_JS)
    assert got["wanted"] == 0 and got["shown"] == 2  # the nearest computed: the one on screen
    assert got["nearest"] == "true" and "showing the nearest, 0.001" in got["note"]


def _ladder() -> list[float]:
    from ui.settings import eps_ladder

    return eps_ladder()


def _sidebar_eps(page) -> tuple:
    """The sidebar's ε slider: its range input and the value it shows."""
    from ui.settings import setting

    thumb = page.locator(f'input[type="range"][aria-label="{setting("init.scale").label}"]')
    return thumb, float(thumb.get_attribute("aria-valuetext"))


@pytest.mark.browser
def test_the_sidebar_slider_moves_the_family_and_quick_changes_keep_one_value(
        start_streamlit, page, tmp_path):
    """Dragging the sidebar's ε slider swaps the player's runs before the page hears of it;
    then five quick ε steps from the keyboard (each a rerun, the next sent before the last is
    drawn): the figure, the scrub bar, the sidebar and the link all end on the same ε."""
    base = start_streamlit("serve.py", env={"EAE_PREFETCH": "1",
                                            "EAE_CACHE_DIR": str(tmp_path / "cache")})
    page.goto(f"{base}/?model.width=10")
    wait_for_streamlit_idle(page, timeout=300)
    page.wait_for_function(f"() => {{ const f = ({FAMILY_JS})(); return f && f.loaded >= f.n; }}",
                           timeout=180_000, polling=200)
    thumb, eps0 = _sidebar_eps(page)
    assert eps0 == 0.001
    before = page.evaluate(FAMILY_JS)
    box = page.locator('[data-testid="stSlider"]').filter(has=thumb).first
    box.scroll_into_view_if_needed()
    knob = box.locator('[data-testid="stSliderThumbValue"]').bounding_box()
    track = box.bounding_box()
    assert knob is not None and track is not None
    y, x = knob["y"] + knob["height"] + 12, knob["x"] + knob["width"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    step = track["width"] / (len(_ladder()) - 1)  # one value of the slider, in px
    for k in range(1, 5):  # two values to the left, in small moves
        page.mouse.move(x - k * 0.55 * step, y)
    page.wait_for_function(f"() => ({FAMILY_JS})().swaps > {before['swaps']}", timeout=20_000)
    moving = float(thumb.get_attribute("aria-valuetext"))
    assert moving < eps0
    page.wait_for_function(f"() => {{ const f = ({FAMILY_JS})(); return f.value === "
                           f"'{moving:g}'; }}", timeout=20_000)
    # the figure follows the drag: the swapped run is on screen once its swap is done (the
    # scrub bar's value is written first)
    page.wait_for_function(f"() => {{ const p = ({PLAYER_JS})(0); return p && "
                           f"p.title.includes('ε = {moving:g}'); }}", timeout=20_000)
    during = page.evaluate(PLAYER_JS, 0)
    assert _eps(during["title"]) == pytest.approx(moving)
    page.mouse.up()
    wait_for_streamlit_idle(page, timeout=120)
    # quick changes from the keyboard: each step reruns the page, the next comes at once
    thumb.focus()
    for _ in range(5):
        page.keyboard.press("ArrowLeft")
    wait_for_streamlit_idle(page, timeout=180)
    page.wait_for_function(f"() => {{ const f = ({FAMILY_JS})(); return f && f.wanted === "
                           "f.shown && f.shown === f.current; }", timeout=60_000)
    _thumb, eps = _sidebar_eps(page)
    got = page.evaluate(FAMILY_JS)
    title = page.evaluate(PLAYER_JS, 0)["title"]
    assert eps < moving
    assert _eps(title) == pytest.approx(eps), (title, eps)
    assert float(got["value"]) == pytest.approx(eps), got
    assert got["nearest"] == "false" and got["note"] == ""
    assert re.search(rf"init\.scale={re.escape(f'{eps:g}')}(&|$)", page.url), page.url
