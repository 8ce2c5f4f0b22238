"""Compare and Real data in a real browser: no exception element, the charts have frames, Play
moves the shared cursor, links reopen the state, uploads report problems. Screenshots go to
artifacts/screenshots/."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from devtools.browser import PLAYER_JS, set_playing, wait_for_streamlit_idle
from dynamics.uploads import example_csv


def _dismiss_page_not_found(page) -> None:
    """A deep link opened first on a fresh server must run the page inside the app's
    navigation, with no "Page not found" dialog (pages live in app_pages/, not pages/)."""
    assert page.get_by_text("Page not found").count() == 0


def _open(page, url: str) -> dict:
    page.goto(url)
    wait_for_streamlit_idle(page, timeout=240)
    _dismiss_page_not_found(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    info = page.evaluate(PLAYER_JS, 0)
    assert info is not None, "no figure player on the page"
    return info


def _play_and_wait(page, min_frame: int) -> None:
    set_playing(page, True)  # clicked until the player says so
    page.wait_for_function(f"() => ({PLAYER_JS})(0).frame > {min_frame}", timeout=60_000)


def _pause(page) -> None:
    set_playing(page, False)


@pytest.mark.browser
def test_compare_page_animates_and_shares(streamlit_server, page, screenshot_dir):
    info = _open(page, f"{streamlit_server}/compare")
    assert info["frames"] > 10 and info["frame"] == 0
    assert "ReLU" in info["panels"][0] and "leaky" in info["panels"][1]
    start = info["cursors"]
    assert len(start) >= 2 and len(set(start)) == 1  # one cursor on every time panel
    page.screenshot(path=screenshot_dir / "compare_default.png", full_page=True)

    _play_and_wait(page, 40)
    _pause(page)
    moved = page.evaluate(PLAYER_JS, 0)
    assert moved["frame"] > 40
    assert len(set(moved["cursors"])) == 1 and moved["cursors"][0] > start[0]
    page.screenshot(path=screenshot_dir / "compare_mid_animation.png", full_page=False)

    link = (f"{streamlit_server}/compare?preset=rich_lazy&b.data.kind=points&b.model.width=7"
            "&b.init.scale=1.0&b.integrator.t_end=100.0&view.time_axis=linear")
    info = _open(page, link)
    assert "ε=1e-06" in info["panels"][0]
    assert "m=7" in info["panels"][1] and re.search(r"ε=1(?![\d.e])", info["panels"][1])
    assert info["xaxis3"] == "linear"
    assert "b.model.width=7" in page.url
    page.screenshot(path=screenshot_dir / "compare_shared_url.png", full_page=True)


@pytest.mark.browser
def test_real_data_page_animates(streamlit_server, page, screenshot_dir):
    info = _open(page, f"{streamlit_server}/real_data")
    assert "digits 0 (+1) vs 1 (−1)" in info["title"]
    assert info["frames"] > 20 and info["frame"] == 0
    page.screenshot(path=screenshot_dir / "real_data_default.png", full_page=True)
    start = info["cursors"][0]
    _play_and_wait(page, 30)
    _pause(page)
    moved = page.evaluate(PLAYER_JS, 0)
    assert moved["cursors"][0] > start and len(set(moved["cursors"])) == 1
    page.screenshot(path=screenshot_dir / "real_data_mid_animation.png", full_page=False)

    info = _open(page, f"{streamlit_server}/real_data?data.classes=3,8&model.width=30")
    assert "digits 3 (+1) vs 8 (−1)" in info["title"] and "m = 30" in info["title"]


@pytest.mark.browser
def test_real_data_upload(streamlit_server, page, screenshot_dir):
    page.goto(f"{streamlit_server}/real_data?source=upload")
    wait_for_streamlit_idle(page, timeout=240)
    _dismiss_page_not_found(page)
    assert page.get_by_text("Upload a CSV or NPZ").count() > 0
    uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    uploader.set_input_files(files=[{"name": "bad.csv", "mimeType": "text/csv",
                                     "buffer": b"x1,x2,y\n1,2,1\n3,oops,-1\n"}])
    wait_for_streamlit_idle(page, timeout=120)
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="cannot be used")
    assert alert.count() == 1, page.content()[:3000]
    assert page.locator('[data-testid="stException"]').count() == 0
    page.screenshot(path=screenshot_dir / "real_data_bad_upload.png", full_page=True)

    uploader.set_input_files(files=[{"name": "example_points.csv", "mimeType": "text/csv",
                                     "buffer": example_csv()}])
    wait_for_streamlit_idle(page, timeout=240)
    try:  # Plotly draws after Streamlit is idle; on a loaded machine that can lag behind
        page.wait_for_function(f"() => {{ const i = ({PLAYER_JS})(0); "
                               "return i && (i.title || '').includes('uploaded data'); }",
                               timeout=60_000, polling=100)
    except PlaywrightTimeout:
        pass  # the assertion below says what is on screen instead
    info = page.evaluate(PLAYER_JS, 0)
    assert info is not None and "uploaded data, n = 6" in info["title"], info
    assert info["frames"] > 5
    assert "source=upload" in page.url
    page.screenshot(path=screenshot_dir / "real_data_upload.png", full_page=True)
