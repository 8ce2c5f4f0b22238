"""One truth for state, in a real browser: after rapid changes of the Explorer's controls the URL
bar, the widgets, the figure and the Share box say the same settings, and the shared link opens
them again in a new browser context.

The race this guards against: a run starts with the query string the browser had when the
user moved a control, which may not yet hold what the previous run wrote; the binder read that
stale string as a new link and put the widgets back (`ui.state`'s module docstring).
"""

from __future__ import annotations

import random
import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from devtools.browser import PLAYER_JS, wait_for_streamlit_idle

START = "/?model.width={w}&model.gamma=0.1&loss.kind=logistic"  # a link that carries settings
# pauses between changes (ms): 100–700, more often short (a user pressing a key repeatedly)
SPACING_MS = (100, 100, 150, 200, 250, 350, 500, 700)
DEFAULTS = {"model.width": "50", "model.gamma": "0.0", "init.scale": "0.001",
            "loss.kind": "square"}
EPS_SLIDER = '[data-testid="stSlider"]'


def _settings(width: object, gamma: object, eps: object, loss: object) -> dict[str, object]:
    """The four settings the test moves, as comparable values (ε to 3 significant digits: the
    slider and the title show it so)."""
    return {"width": int(float(str(width))), "gamma": round(float(str(gamma)), 6),
            "eps": float(f"{float(str(eps)):.3g}"), "loss": str(loss)}


def _from_query(query: str) -> dict[str, object]:
    q = {**DEFAULTS, **dict(parse_qsl(query))}
    return _settings(q["model.width"], q["model.gamma"], q["init.scale"], q["loss.kind"])


FIGURE_TITLE_JS = f"""() => {{ const p = ({PLAYER_JS})(0); return p ? p.title : null; }}"""


def figure_settings(page) -> dict[str, object]:
    """The settings the figure on screen was drawn for, read from its title ("leaky ReLU
    γ = 0.1, width m = 31 · ε = 0.001 · logistic loss (mean)"). The one place this test reads
    the figure: adapt it here when the figure is drawn differently."""
    title = page.evaluate(FIGURE_TITLE_JS)
    assert title, "no figure title on the page"
    width = re.search(r"width m = (\d+)", title)
    eps = re.search(r"ε = ([0-9.e+-]+)", title)
    loss = re.search(r"(\w+) loss", title)
    gamma = re.search(r"γ = ([0-9.e+-]+)", title)
    assert width and eps and loss, title
    return _settings(width[1], gamma[1] if gamma else 0.0, eps[1], loss[1])


def _eps_input(page):
    return page.locator(EPS_SLIDER).filter(has_text="init scale ε").locator(
        'input[type="range"]')


def _loss_input(page):
    return page.locator('[data-testid="stSelectbox"]').filter(has_text="loss").first.locator(
        "input")


def widget_settings(page) -> dict[str, object]:
    """What the sidebar's widgets show."""
    return _settings(page.get_by_role("spinbutton", name="width m").input_value(),
                     page.get_by_role("spinbutton", name="leaky slope γ").input_value(),
                     _eps_input(page).get_attribute("aria-valuetext"),
                     _loss_input(page).input_value())


def url_settings(page) -> dict[str, object]:
    return _from_query(urlsplit(page.url).query)


def share_settings(page) -> dict[str, object]:
    """The settings of the link in the "Share this view" popover (opened if closed)."""
    code = page.locator('[data-testid="stPopoverBody"] [data-testid="stCode"]')
    if not code.is_visible():
        page.get_by_role("button", name="Share this view").click()
    code.wait_for()
    link = code.inner_text().strip()
    return _from_query(urlsplit(link).query), link


def _change(page, what: str) -> None:
    """One change by keyboard, as a user makes it."""
    if what in ("eps_left", "eps_right"):
        _eps_input(page).focus()
        page.keyboard.press("ArrowLeft" if what == "eps_left" else "ArrowRight")
    elif what in ("gamma_up", "gamma_down"):
        field = page.get_by_role("spinbutton", name="leaky slope γ")
        value = float(field.input_value() or 0)  # stay within [0, 1]: a valid run each time
        up = what == "gamma_up" if 0.0 < value < 1.0 else value <= 0.0
        field.focus()
        page.keyboard.press("ArrowUp" if up else "ArrowDown")
    elif what == "width_typed":
        field = page.get_by_role("spinbutton", name="width m")
        field.fill(str(random.Random(page.url).randint(5, 90)))
        field.press("Enter")
    else:  # the loss: open the list, move one down (or wrap to the top), choose
        box = _loss_input(page)
        box.focus()
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown" if box.input_value() != "exponential" else "Home")
        page.keyboard.press("Enter")


CHANGES = ("eps_left", "eps_right", "gamma_up", "gamma_down", "width_typed", "loss")


def _agree(page) -> dict[str, object]:
    """The four views of the state, asserted equal; returns it."""
    shared, link = share_settings(page)
    seen = {"url bar": url_settings(page), "widgets": widget_settings(page),
            "figure": figure_settings(page), "share box": shared}
    first = seen["url bar"]
    assert all(v == first for v in seen.values()), seen
    return {"settings": first, "link": link}


@pytest.mark.browser
# one sequence in the suite, two more with -m slow (each ~20 s of a real browser)
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow),
                                  pytest.param(2, marks=pytest.mark.slow)])
def test_rapid_changes_leave_url_widgets_figure_and_share_box_agreeing(
        streamlit_server, browser, page, seed, screenshot_dir):
    width = 31 + seed  # a start of its own: its runs are computed, not all cached
    page.goto(f"{streamlit_server}{START.format(w=width)}")
    wait_for_streamlit_idle(page, timeout=240)
    start = _agree(page)["settings"]
    assert start == _settings(width, 0.1, 0.001, "logistic")
    rng = random.Random(seed)
    plan = [rng.choice(CHANGES) for _ in range(10)]
    plan[:3] = ["eps_left", "eps_left", "eps_left"]  # the reported sequence comes first
    for what in plan:
        _change(page, what)
        # the spacing is the test's input (a user's rhythm between key presses), not a wait
        # for the page: some changes land while the last run is still going
        page.wait_for_timeout(rng.choice(SPACING_MS))
    wait_for_streamlit_idle(page, timeout=240, settle=2.0)
    page.screenshot(path=screenshot_dir / f"url_state_after_changes_{seed}.png", full_page=True)
    end = _agree(page)
    assert end["settings"] != start  # the changes reached the page

    # the shared link, opened in a new browser context, restores the same settings
    other = browser.new_context(viewport={"width": 1400, "height": 900}, reduced_motion="reduce")
    try:
        fresh = other.new_page()
        fresh.goto(end["link"])
        wait_for_streamlit_idle(fresh, timeout=240)
        again = _agree(fresh)
        assert again["settings"] == end["settings"]
    finally:
        other.close()


@pytest.mark.browser
def test_back_button_restores_the_previous_settings(streamlit_server, page):
    """The browser's back button is a link from outside: the page follows the URL."""
    page.goto(f"{streamlit_server}{START.format(w=24)}")
    wait_for_streamlit_idle(page, timeout=240)
    before = _agree(page)["settings"]
    _change(page, "eps_left")
    wait_for_streamlit_idle(page, timeout=240)
    moved = _agree(page)["settings"]
    assert moved["eps"] < before["eps"]
    page.go_back()
    page.wait_for_function(
        "() => !new URLSearchParams(location.search).has('init.scale')", timeout=30_000)
    wait_for_streamlit_idle(page, timeout=240, settle=1.0)
    assert _agree(page)["settings"] == before
