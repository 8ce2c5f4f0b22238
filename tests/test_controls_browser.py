"""What the controls and the researchers' tables look like in real Chromium: no control label
is cut or wrapped at 1280 px and 1600 px, every control has its help button, a bad link names
its parameter and keeps the rest, and the claims tables fit their container at 1280 px."""

from __future__ import annotations

from typing import Any

import pytest

from devtools.browser import wait_for_streamlit_idle

# every data kind's widgets, and the other branches of the panel (gd step, fixed output,
# typed end time, a long loss name in its select)
PANELS = ["", "?data.kind=clusters", "?data.kind=two_signals", "?data.kind=teacher",
          "?data.kind=three_point", "?data.kind=digits",
          "?loss.kind=exponential&model.train_output=false&init.scheme=fixed_output"
          "&integrator.method=gd&view.t_end_auto=false"]

LABELS_JS = """() => {
  const side = document.querySelector('section[data-testid="stSidebar"]');
  const widgets = [...side.querySelectorAll(
    '[data-testid="stNumberInput"], [data-testid="stSelectbox"], [data-testid="stCheckbox"], '
    + '[data-testid="stRadio"], [data-testid="stSlider"]')].filter(w => w.offsetWidth > 0);
  const out = [];
  for (const w of widgets) {
    const lab = w.querySelector('[data-testid="stWidgetLabel"] p, label p') || w;
    const lh = parseFloat(getComputedStyle(lab).lineHeight) || 20;
    const cut = [lab, ...lab.querySelectorAll('*')].some(
      e => e.clientWidth > 4 && e.scrollWidth > e.clientWidth + 1);
    const inp = w.querySelector('input[role="combobox"], input[type="number"]');
    out.push({text: lab.innerText, cut, lines: lab.getBoundingClientRect().height / lh,
              help: !!w.querySelector('[data-testid="stTooltipIcon"]'),
              value: inp ? inp.value : null,
              valueCut: !!inp && inp.clientWidth > 4 && inp.scrollWidth > inp.clientWidth + 1,
              inputWidth: inp ? inp.clientWidth : null});
  }
  return out;
}"""




def _open_all_expanders(page: Any) -> None:
    for summary in page.locator('section[data-testid="stSidebar"] details > summary').all():
        if summary.evaluate("e => !e.parentElement.open"):
            summary.click()
    wait_for_streamlit_idle(page, timeout=120)


WIDTHS = (1280, 1600)  # every panel is checked at both window widths, on one load


def _resize(page: Any, width: int, height: int = 900) -> None:
    """Gives the window `width` and waits until the page has taken it (the app as wide as the
    window; the sidebar keeps its width, so that is no sign) and the app is idle again."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function(
        """w => window.innerWidth === w && Math.abs(document.querySelector(
             '[data-testid="stApp"]').getBoundingClientRect().width - w) < 1""", arg=width)
    wait_for_streamlit_idle(page, timeout=120)


def _check_labels(page: Any, width: int) -> None:
    got = page.evaluate(LABELS_JS)
    assert len(got) >= 12, (width, len(got))
    cut = [x["text"] for x in got if x["cut"] or x["lines"] > 1.5]
    assert not cut, (width, cut)
    values = [(x["text"], x["value"], x["inputWidth"]) for x in got if x["valueCut"]]
    assert not values, (width, values)  # a field's value or a select's choice shown whole
    no_help = [x["text"] for x in got if not x["help"]]
    assert not no_help, (width, no_help)


@pytest.mark.browser
@pytest.mark.parametrize("query", PANELS)
def test_no_control_label_is_cut_or_wrapped(streamlit_server, context_of, query,
                                            screenshot_dir):
    # one load per panel: checked at the first width, then the window is widened (the same
    # labels, values and widths as a fresh load at that width)
    page = context_of(WIDTHS[0], 900)
    page.goto(f"{streamlit_server}/{query}")
    wait_for_streamlit_idle(page, timeout=240)
    _open_all_expanders(page)
    for width in WIDTHS:
        if width != WIDTHS[0]:
            _resize(page, width)
        _check_labels(page, width)
        if query in ("", PANELS[-1]):
            side = page.locator('section[data-testid="stSidebar"]')
            name = "default" if not query else "gd_fixed_output"
            side.screenshot(path=screenshot_dir / f"controls_{name}_{width}.png")


@pytest.mark.browser
def test_bad_link_names_the_parameter_and_keeps_the_rest(streamlit_server, page):
    page.goto(f"{streamlit_server}/?model.width=30&data.angles_deg=[10,20]&init.scale=1e-300")
    wait_for_streamlit_idle(page, timeout=240)
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="could not be used")
    text = alert.inner_text()
    assert "data.angles_deg" in text and "2 angles, 4 radii and 4 labels" in text
    assert "init.scale" in text and "from 1e-20 to 1" in text
    assert "showing the defaults" not in text
    assert page.get_by_role("spinbutton", name="width m").input_value() == "30"
    assert "model.width=30" in page.url and "init.scale" not in page.url


def _check_claims_table_fits(page: Any) -> int:
    """Asserts every claims table on the page fits its container; returns how many rows."""
    tables = page.locator("table.eae-claims")
    assert tables.count() >= 1
    rows = folded = 0
    for i in range(tables.count()):
        t = tables.nth(i)
        t.scroll_into_view_if_needed()
        fit = t.evaluate("""t => {
          const box = t.getBoundingClientRect();
          const host = t.closest('[data-testid="stVerticalBlock"]').getBoundingClientRect();
          const cells = [...t.querySelectorAll('td, th')];
          const rows = [...t.querySelectorAll('tbody tr:not(.eae-more)')];
          return {right: box.right, hostRight: host.right, width: box.width,
                  hostWidth: host.width,
                  overflow: cells.filter(c => c.scrollWidth > c.clientWidth + 1).length,
                  tallest: Math.max(...rows.map(r => r.getBoundingClientRect().height)),
                  statement: t.querySelector('col:nth-child(3)').getBoundingClientRect().width,
                  rows: rows.length, folded: t.querySelectorAll('details:not([open])').length};
        }""")
        assert fit["right"] <= fit["hostRight"] + 1 and fit["width"] <= fit["hostWidth"] + 1, fit
        assert fit["overflow"] == 0, fit  # no cell cut: every text wraps inside its column
        assert fit["tallest"] <= 240, fit  # folded: a row is as tall as its statement
        assert fit["statement"] >= 0.3 * fit["width"], fit  # the statement is the wide one
        rows += fit["rows"]
        folded += fit["folded"]
    assert folded >= 1  # justifications folded under their claims
    return rows


@pytest.mark.browser
# one paper in the suite (the tour checks the default paper's tables too), Wang & Ma's with
# -m slow (its claims take the longest)
@pytest.mark.parametrize("paper", [pytest.param("wang_ma", marks=pytest.mark.slow), "boursier"])
def test_claims_tables_fit_their_container_at_1280(streamlit_server, context_of, paper,
                                                   screenshot_dir):
    page = context_of(1280, 800)
    page.goto(f"{streamlit_server}/papers?paper={paper}")
    wait_for_streamlit_idle(page, timeout=300)
    page.get_by_role("button", name="Check the claims").click()
    wait_for_streamlit_idle(page, timeout=900)
    assert _check_claims_table_fits(page) >= 2
    details = page.locator("table.eae-claims details").first
    details.locator("summary").click()  # a claim's justification unfolds under it
    assert details.evaluate("e => e.open") and "why this tolerance" in details.inner_text()
    _check_claims_table_fits(page)
    page.screenshot(path=screenshot_dir / f"claims_{paper}_1280.png", full_page=True)
