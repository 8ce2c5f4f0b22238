"""A fresh server in real Chromium, with an empty numba cache: the first visitor's chart
appears while the kernels are still compiling (computed with the kernels uncompiled, and said
so under it), never a blank page, and is replaced by the exact run once they are compiled."""

from __future__ import annotations

import json
import urllib.request

import pytest

from devtools.browser import PLAYER_JS, wait_for_streamlit_idle


def _warmup(base: str) -> dict:
    with urllib.request.urlopen(f"{base}/api/eae/warmup", timeout=30) as r:
        return dict(json.loads(r.read()))


@pytest.mark.heavy
@pytest.mark.browser
def test_the_first_chart_appears_while_the_kernels_compile(
        start_streamlit, page, tmp_path, screenshot_dir):
    base = start_streamlit("serve.py", env={"NUMBA_CACHE_DIR": str(tmp_path / "numba"),
                                            "EAE_CACHE_DIR": str(tmp_path / "cache")},
                           ready=False)
    page.goto(base)  # the Explorer: the default page
    page.wait_for_function(f"() => ({PLAYER_JS})(0) !== null", timeout=300_000, polling=100)
    state = _warmup(base)
    assert not state["ready"], state  # drawn while the compiler is still at work
    first = page.evaluate(PLAYER_JS, 0)
    assert first["frames"] > 10 and not first["error"] and "ε = 0.001" in first["title"]
    note = page.locator(".st-key-eae-provisional")
    assert note.count() == 1 and "not compiled yet" in note.inner_text()
    page.screenshot(path=screenshot_dir / "cold_start_provisional.png")
    # once the kernels are compiled the page reruns by itself with the exact run
    page.wait_for_function("() => !document.querySelector('.st-key-eae-provisional')",
                           timeout=600_000, polling=500)
    wait_for_streamlit_idle(page, timeout=600)
    assert _warmup(base)["ready"]
    exact = page.evaluate(PLAYER_JS, 0)
    assert exact is not None and exact["key"] != first["key"] and not exact["error"]
    assert exact["frames"] == first["frames"] and exact["title"] == first["title"]
