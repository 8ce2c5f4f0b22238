"""A fresh server in real Chromium: with an empty numba cache the first visitor sees the
start-up message with its expected wait, never a blank page, and then the figure."""

from __future__ import annotations

import pytest

from devtools.browser import PLAYER_JS, wait_for_streamlit_idle


@pytest.mark.slow
@pytest.mark.browser
def test_first_visitor_of_a_cold_server_sees_progress_then_the_figure(
        start_streamlit, page, tmp_path, screenshot_dir):
    base = start_streamlit("serve.py", env={"NUMBA_CACHE_DIR": str(tmp_path / "numba"),
                                            "EAE_CACHE_DIR": str(tmp_path / "cache")},
                           ready=False)
    page.goto(base)
    message = page.get_by_text("compiles the simulation kernels")
    message.wait_for(timeout=60_000)
    assert "s left" in message.inner_text() or "longer than usual" in message.inner_text()
    page.screenshot(path=screenshot_dir / "cold_start_message.png")
    wait_for_streamlit_idle(page, timeout=600)
    info = page.evaluate(PLAYER_JS, 0)
    assert info is not None and info["frames"] > 10 and not info["error"]
    assert page.get_by_text("compiles the simulation kernels").count() == 0
