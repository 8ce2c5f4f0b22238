"""Uploading points and labels in the Explorer (real Streamlit server, real Chromium): a bad
file is a message, a good one runs, and the link does not carry the uploaded array."""

from __future__ import annotations

import pytest

from devtools.browser import PLAYER_JS, wait_for_streamlit_idle
from dynamics.uploads import example_csv


@pytest.mark.browser
def test_explorer_upload(streamlit_server, page, screenshot_dir):
    page.goto(f"{streamlit_server}/?data.kind=array")
    wait_for_streamlit_idle(page, timeout=240)
    uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    uploader.set_input_files(files=[{"name": "bad.csv", "mimeType": "text/csv",
                                     "buffer": b"x1,x2,y\n1,2,1\n3,oops,-1\n"}])
    # beside the uploader, and above the figure it kept (greyed); waited for, not sampled
    # after the first idle moment: on a loaded machine the upload's rerun can start later
    # than the idle wait's settling time (then it read 0 alerts)
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="cannot be used")
    alert.first.wait_for(state="visible", timeout=120_000)
    wait_for_streamlit_idle(page, timeout=120)
    assert alert.count() >= 1
    assert page.locator('[data-testid="stException"]').count() == 0
    uploader.set_input_files(files=[{"name": "example_points.csv", "mimeType": "text/csv",
                                     "buffer": example_csv()}])
    wait_for_streamlit_idle(page, timeout=240)
    assert page.locator('[data-testid="stException"]').count() == 0
    info = page.evaluate(PLAYER_JS, 0)
    assert info is not None and info["frames"] > 5
    assert "data.kind=array" in page.url and "data.X" not in page.url
    page.screenshot(path=screenshot_dir / "explorer_upload.png", full_page=True)
