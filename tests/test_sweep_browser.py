"""A sweep run from the Sweeps page in real Chromium, on a real Dask cluster: progress point
by point, then result plots whose text reads clearly."""

from __future__ import annotations

import pytest

from devtools.browser import text_problems, wait_for_streamlit_idle
from tests.test_tour_browser import _no_exception


@pytest.mark.browser
def test_a_sweep_run_in_the_browser_reads_clearly(streamlit_server, context_of, screenshot_dir):
    """The quickest built-in sweep run from the Sweeps page (a real Dask cluster): the page
    says how many points are done while it runs, then draws its result plots, whose text
    neither overlaps nor is clipped or cut short, at 1280×800 and at 1600×1000."""
    page = context_of(1280, 800)
    page.goto(f"{streamlit_server}/sweeps")
    wait_for_streamlit_idle(page, timeout=300)
    page.get_by_role("button", name="Run sweep").click()
    page.get_by_text("points done").first.wait_for(timeout=300_000)  # progress, point by point
    page.locator('[data-testid="stAlertContentSuccess"]').first.wait_for(timeout=600_000)
    wait_for_streamlit_idle(page, timeout=300)
    _no_exception(page)
    charts = page.locator('[data-testid="stPlotlyChart"]')
    assert charts.count() >= 1
    charts.first.scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / "tour_sweep_result_1280x800.png")
    assert text_problems(page) == []
    page.set_viewport_size({"width": 1600, "height": 1000})
    wait_for_streamlit_idle(page, timeout=120)
    charts.first.scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / "tour_sweep_result_1600x1000.png")
    assert text_problems(page) == []
