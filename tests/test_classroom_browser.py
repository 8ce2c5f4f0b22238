"""The dashboard as a teacher and a student use it, in real Chromium: the lesson keys step
through scenarios and typed numbers are never coerced. (Every page in every mode — console,
figure, presenter fit, claims tables — is one tour: tests/test_tour_browser.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from devtools.browser import PLAYER_JS, wait_for_streamlit_idle


def _url(base: str, path: str, presenter: bool) -> str:
    if not presenter:
        return f"{base}/{path}"
    return f"{base}/{path}{'&' if '?' in path else '?'}view.presenter=true"




def _settle(page: Any) -> None:
    # idle includes every player drawn at the size its frame was given (presenter: the window)
    wait_for_streamlit_idle(page, timeout=300)


def _no_exception(page: Any) -> None:
    exc = page.locator('[data-testid="stException"]')
    assert exc.count() == 0, exc.first.inner_text()


# ----------------------------------------------------------------------------- projector
@pytest.mark.browser
def test_lesson_keys_step_through_scenarios(streamlit_server, context_of):
    """A lesson of one scenario per paper (the first showcase of each, registry order): the
    keys and a clicker's PageUp/PageDown step through it."""
    from ui.lesson import default_lesson

    seen: set[str] = set()
    lesson = [s for s in default_lesson() if not (s.paper in seen or seen.add(s.paper))]
    keys = [s.key for s in lesson]
    page = context_of(1280, 720)
    page.goto(f"{streamlit_server}/?view.presenter=true&view.lesson={','.join(keys)}")
    _settle(page)

    def press(key: str, scenario: str) -> None:
        page.keyboard.press(key)
        # decoded: a preset name may hold URL-escaped characters (centred_d4_lambda4^-6)
        page.wait_for_function(
            "s => new URLSearchParams(location.search).get('view.scenario') === s",
            arg=scenario, timeout=120_000)
        _settle(page)
        _no_exception(page)

    press("ArrowRight", keys[0])
    assert page.get_by_text(f"1 / {len(keys)} · {lesson[0].label}").count() == 1
    press("PageDown", keys[1])  # what a presentation clicker sends
    press("ArrowRight", keys[2])
    press("PageUp", keys[1])
    press("ArrowLeft", keys[0])
    assert page.evaluate(PLAYER_JS, 0) is not None  # the scenario's figure is drawn


# ----------------------------------------------------------------------------- inputs
@pytest.mark.browser
def test_typed_width_is_never_coerced(streamlit_server, page):
    page.goto(f"{streamlit_server}/?model.width=12")
    _settle(page)
    field = page.get_by_role("spinbutton", name="width m")
    for typed, expect in (("1e9", "you typed 1e9"), ("-5", "you typed -5")):
        field.fill(typed)
        field.press("Enter")
        _settle(page)
        _no_exception(page)
        assert page.get_by_text(expect).count() >= 1, typed  # beside the field and above
        assert page.evaluate(PLAYER_JS, 0)["stale"]  # the last good figure, greyed
        assert "model.width=12" in page.url  # the link keeps the last good settings
