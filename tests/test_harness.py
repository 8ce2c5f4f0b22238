"""End-to-end checks of the test harness itself (Streamlit server + headless Chromium)."""

from __future__ import annotations

import os
import re
import struct
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent

TINY_APP = textwrap.dedent(
    """
    import os

    import plotly.graph_objects as go
    import streamlit as st

    st.title("Harness probe")
    n = st.slider("Points", min_value=2, max_value=50, value=10)
    st.plotly_chart(go.Figure(go.Scatter(y=[i * i for i in range(n)], mode="lines+markers")))
    st.caption(f"points={n} cache={os.environ.get('EAE_CACHE_DIR', '')}")
    """
)


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert len(data) > 1000, f"{path} is suspiciously small ({len(data)} bytes)"
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.browser
def test_streamlit_harness_end_to_end(
    tmp_path, start_streamlit, page, streamlit_idle, screenshot_dir, _isolated_cache_dir
):
    script = tmp_path / "tiny_app.py"
    script.write_text(TINY_APP)
    url = start_streamlit(script)
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)

    page.goto(url)
    streamlit_idle(page, timeout=60)

    title = page.get_by_role("heading", name="Harness probe")
    assert title.is_visible()
    assert page.locator('[data-testid="stSlider"]').count() == 1
    assert page.locator('[data-testid="stPlotlyChart"] .main-svg').count() >= 1
    # The server got the session's isolated cache dir, not the user's.
    caption = page.locator('[data-testid="stCaptionContainer"]').inner_text()
    assert f"cache={_isolated_cache_dir}" in caption
    assert "points=10" in caption

    # An interaction triggers a rerun; idle detection must wait for its result.
    thumb = page.get_by_role("slider")
    thumb.focus()
    for _ in range(5):
        thumb.press("ArrowRight")
    streamlit_idle(page, timeout=60)
    assert "points=15" in page.locator('[data-testid="stCaptionContainer"]').inner_text()

    shot = screenshot_dir / "harness_probe.png"
    shot.unlink(missing_ok=True)
    page.screenshot(path=str(shot), full_page=True)
    width, height = _png_size(shot)
    assert width == 1400 and height >= 400


def test_ci_run_invokes_test_script():
    ci_run = REPO_ROOT / ".ci" / "run"
    text = ci_run.read_text()
    assert text.startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in text
    commands = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    assert "bash scripts/test.sh" in commands
    assert os.access(ci_run, os.X_OK), ".ci/run must be executable"
    for script in ("setup.sh", "test.sh", "run.sh"):
        assert os.access(REPO_ROOT / "scripts" / script, os.X_OK), f"scripts/{script} not +x"


def test_cache_dir_is_isolated(_isolated_cache_dir):
    assert os.environ["EAE_CACHE_DIR"] == str(_isolated_cache_dir)
    assert Path(os.environ["EAE_CACHE_DIR"]).is_dir()
