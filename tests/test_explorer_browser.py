"""The Explorer in a real browser: the player draws the figure, plays, pauses and seeks its
frames in the browser, and a shared link reopens the same settings. Screenshots go to
artifacts/screenshots/."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from devtools.browser import (
    PLAYER_JS,
    player_frame,
    player_painted,
    set_playing,
    wait_for_streamlit_idle,
)


def _open(page, url: str) -> dict:
    page.goto(url)
    wait_for_streamlit_idle(page, timeout=180)
    info = page.evaluate(PLAYER_JS, 0)
    assert info is not None, "no figure player on the page"
    assert not info["error"], info["error"]
    return info


@pytest.mark.browser
def test_explorer_animates_and_shares(streamlit_server, page, screenshot_dir):
    # The Explorer is the default page: it lives at the app's root URL.
    info = _open(page, f"{streamlit_server}/")
    assert info["frames"] > 10 and info["frame"] == 0 and not info["playing"]
    assert "width m = 50" in info["title"] and info["label"] == "t = 0"
    assert info["width"] <= 1400 and info["height"] <= 900
    page.screenshot(path=screenshot_dir / "explorer_default.png", full_page=False)

    # Play: frames advance in the browser (no server round trip), Pause stops them. Every
    # click is verified on the player's state and retried if it was lost (a loaded host
    # lost one); on a host slow enough for the animation to reach its end by itself before
    # the pause, it starts again from the first frame
    player = player_frame(page)
    for _ in range(3):
        player.locator(".eae-player").press("Home")
        set_playing(page, True)
        page.wait_for_function(f"() => ({PLAYER_JS})(0).frame > 40", timeout=60_000)
        paused = set_playing(page, False)
        if paused["frame"] < paused["frames"] - 1:
            break
    page.screenshot(path=screenshot_dir / "explorer_mid_animation.png", full_page=False)
    assert not paused["playing"] and 40 < paused["frame"] < paused["frames"] - 1, paused
    player_painted(page, 30)  # the player's timer would have drawn a frame meanwhile
    assert page.evaluate(PLAYER_JS, 0)["frame"] == paused["frame"]  # it stays paused
    # Seek: the keyboard and the time slider move to a frame and its label follows
    player.locator(".eae-player").press("End")
    end = page.evaluate(PLAYER_JS, 0)
    assert end["frame"] == end["frames"] - 1 and end["label"].startswith("t = ")
    player.locator(".eae-player").press("Home")
    assert page.evaluate(PLAYER_JS, 0)["frame"] == 0
    player.locator(".eae-time").fill(str(end["frames"] // 2))
    assert page.evaluate(PLAYER_JS, 0)["frame"] == end["frames"] // 2

    # a shared link reopens the same settings
    link = (f"{streamlit_server}/?model.width=9&loss.kind=logistic"
            "&init.scale=0.01&view.time_axis=linear")
    info = _open(page, link)
    assert "width m = 9" in info["title"] and "logistic loss" in info["title"]
    assert "ε = 0.01" in info["title"]
    assert info["xaxis2"] == "linear"
    assert page.get_by_role("spinbutton", name="width m").input_value() == "9"
    loss_box = page.locator('[data-testid="stSelectbox"]').filter(has_text="loss").first
    shown = loss_box.inner_text() + " ".join(
        loss_box.locator("input").evaluate_all("els => els.map(e => e.value)"))
    assert "logistic" in shown, loss_box.inner_html()[:2000]
    assert "model.width=9" in page.url  # the URL keeps the state
    assert not page.get_by_text("Page not found").count()
    page.screenshot(path=screenshot_dir / "explorer_shared_url.png", full_page=False)


@pytest.mark.browser
def test_the_first_figure_plays_once_by_itself(streamlit_server, context_of, screenshot_dir):
    """The animation did not start by itself: a session's first Explorer figure now plays
    once when drawn (a browser asking for reduced motion is left at its first frame, as every
    other browser test's tab is); the next figure of the session waits for ▶."""
    page = context_of(1600, 1000)
    page.emulate_media(reduced_motion="no-preference")
    page.goto(f"{streamlit_server}/")
    page.wait_for_function(f"() => {{ const i = ({PLAYER_JS})(0); "
                           "return i && (i.playing || i.frame > 0); }", timeout=180_000)
    page.screenshot(path=screenshot_dir / "explorer_autoplay.png", full_page=False)
    first = set_playing(page, False)  # pause it (no click if it already played to its end)
    assert not first["playing"] and first["frame"] > 0, first
    # another figure in the same session: drawn at its first frame, not playing
    page.get_by_role("button", name="Divide ε by 100").click()
    page.wait_for_function(f"() => {{ const i = ({PLAYER_JS})(0); "
                           f"return i && i.key !== {first['key']!r}; }}", timeout=180_000)
    wait_for_streamlit_idle(page, timeout=180)
    second = page.evaluate(PLAYER_JS, 0)
    assert "ε = 1e-05" in second["title"], second["title"]
    assert not second["playing"] and second["frame"] == 0, second


@pytest.mark.browser
def test_explorer_bad_link_warns(streamlit_server, page, screenshot_dir):
    _open(page, f"{streamlit_server}/?model.width=lots&view.radius=huge")
    text = page.locator('[data-testid="stAlert"]').first.inner_text()
    assert "model.width" in text and "view.radius" in text
    assert page.get_by_role("spinbutton", name="width m").input_value() == "50"


@pytest.mark.browser
def test_link_parameter_names_are_shown_as_text(streamlit_server, page):
    """A link whose parameter names are Markdown: the warning shows them as text; no
    link or image is made from them and no request leaves for their hosts."""
    requests: list[str] = []

    def on_request(r: Any) -> None:
        requests.append(r.url)

    page.on("request", on_request)
    try:  # the worker's tab goes on to the next test: the listener goes with this one
        page.goto(f"{streamlit_server}/?[Session expired - click here]"
                  "(https://evil.example/login)=1&![x](http://127.0.0.1:9/t.png)=1")
        wait_for_streamlit_idle(page, timeout=180)
    finally:
        page.remove_listener("request", on_request)
    exc = page.locator('[data-testid="stException"]')
    assert exc.count() == 0, exc.first.inner_text()
    assert page.locator('[data-testid="stAlert"]').filter(has_text="Session expired").count()
    assert page.locator('a[href*="evil.example"]').count() == 0
    assert page.locator('img[src*="127.0.0.1:9"]').count() == 0
    hosts = {urlsplit(u).netloc for u in requests}
    assert "evil.example" not in hosts and "127.0.0.1:9" not in hosts, hosts
