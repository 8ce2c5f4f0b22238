"""User-facing strings shown as text: `ui.text.plain` escapes everything Markdown would read.

CommonMark (and GitHub-flavoured Markdown, which st.table and st.markdown use) shows any
backslash-escaped ASCII punctuation character literally, so the invariant tested is: every
character with a Markdown, HTML or Streamlit-directive meaning comes out behind a backslash,
and removing those backslashes gives the input back.
"""

from __future__ import annotations

import re

import pandas as pd

from ui.tables import claims_view
from ui.text import plain

SPECIAL = set("\\`*_{}[]()#+-.!|>~<$:")


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


def test_plain_escapes_every_markdown_character() -> None:
    for s in ("> 0", "[x](https://evil.example)", "![i](http://127.0.0.1:9/t.png)", "**b**",
              "# h", "- item", "1. item", "a | b", "$x^2$", ":red[x]", "<b>x</b>",
              "x_1 * y_2", "back\\slash", "‖θ‖² ≤ 4 ± 0.3"):
        out = plain(s)
        assert _unescape(out) == s
        i = 0
        while i < len(out):  # every special character is escaped, escapes come in pairs
            if out[i] == "\\":
                assert out[i + 1] in SPECIAL, (s, out)
                i += 2
                continue
            assert out[i] not in SPECIAL, (s, out, i)
            i += 1


def test_claims_table_cells_are_plain_and_verdict_first() -> None:
    df = pd.DataFrame([{"claim": "boursier.ols", "expected": "> 0", "result": "pass",
                        "statement": "fitted values > 0", "measured": 0.63,
                        "justification": "exact", "integrator": "gd η = 2e-3"}])
    view = claims_view(df)
    assert list(view.columns)[:2] == ["result", "claim"]
    assert view.loc[0, "expected"] == "\\> 0"  # a quote block before: "> 0" lost its ">"
    assert "integrator" in view.columns and "justification" in view.columns


def test_claims_html_escapes_every_cell_and_folds_the_justification() -> None:
    from ui.tables import WIDTHS, claims_html

    df = pd.DataFrame([
        {"claim": "min.cones", "statement": "<script>alert(1)</script> a > 0", "result": "pass",
         "measured": "1", "expected": "> 0", "tolerance": "exact",
         "justification": "Theorem 1 <b>", "integrator": "gf", "details": ""},
        {"claim": "x\"y", "statement": "s", "result": "FAIL", "measured": "", "expected": "",
         "tolerance": "", "justification": "", "integrator": "", "details": ""}])
    out = claims_html(df)
    assert "<script>" not in out and "&lt;script&gt;" in out and "Theorem 1 &lt;b&gt;" in out
    assert 'data-claim="min.cones" data-result="pass"' in out
    assert 'data-claim="x&quot;y" data-result="FAIL"' in out  # attributes quoted safely
    assert out.count("<details>") == 1  # the second claim has nothing to fold
    assert "<summary>why this tolerance · integrator</summary>" in out
    assert "min.<wbr>cones" in out  # a claim's name wraps at its dots
    assert sum(WIDTHS.values()) == 100 and max(WIDTHS, key=WIDTHS.__getitem__) == "statement"
    assert 'class="fail"' in out and 'table-layout: fixed' in out
