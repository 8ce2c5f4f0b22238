"""Tables that must be read whole: the papers' claims, fitting their container at 1280 px.

`st.table` and `st.dataframe` size columns by their content: a long statement pushed the claims
table past its container (918 px in 820) with "details" cut mid-word and rows up to 744 px
tall. Here a claims table is one HTML table of fixed layout and full width: the verdict first,
the claim, its statement (the widest column), the numbers; each claim's justification, the
integrator and the details folded under it (one `<details>` per claim, closed by default), so a
row is as tall as its statement. Every cell is escaped text and may break anywhere
(`overflow-wrap: anywhere`): nothing is wider than its column.
"""

from __future__ import annotations

import html
import re

import pandas as pd
import streamlit as st

from .text import plain

CLAIM_ORDER = ("result", "claim", "statement", "measured", "expected", "tolerance",
               "justification", "integrator", "details")
SHOWN = ("result", "claim", "statement", "measured", "expected", "tolerance")
FOLDED = (("justification", "why this tolerance"), ("integrator", "integrator"),
          ("details", "details"))
WIDTHS = {"result": 8, "claim": 15, "statement": 35, "measured": 11, "expected": 11,
          "tolerance": 20}  # % of the container: the statement the widest
VERDICT_CLASS = {"pass": "pass", "FAIL": "fail", "illustration": "ill"}

CLAIMS_CSS = """<style>
table.eae-claims { width: 100%; max-width: 100%; table-layout: fixed; border-collapse: collapse;
  font-size: 0.85rem; line-height: 1.35; }
table.eae-claims th, table.eae-claims td { text-align: left; vertical-align: top;
  padding: 0.3rem 0.4rem; overflow-wrap: anywhere; word-break: normal; }
table.eae-claims thead th { border-bottom: 2px solid rgba(49, 51, 63, 0.25); font-weight: 600; }
table.eae-claims tr.eae-more td { border-bottom: 1px solid rgba(49, 51, 63, 0.15);
  padding-top: 0; color: rgba(49, 51, 63, 0.75); }
table.eae-claims details summary { cursor: pointer; font-size: 0.8rem; }
table.eae-claims details dl { margin: 0.2rem 0 0.2rem 0.8rem; }
table.eae-claims details dt { font-weight: 600; }
table.eae-claims details dd { margin: 0 0 0.2rem 0; }
table.eae-claims .pass { color: #1a7f37; font-weight: 600; }
table.eae-claims .fail { color: #c62828; font-weight: 700; }
table.eae-claims .ill { color: rgba(49, 51, 63, 0.7); }
</style>"""


def _text(v: object) -> str:
    return "" if v is None or (isinstance(v, float) and v != v) else str(v)


def claims_view(df: pd.DataFrame) -> pd.DataFrame:
    """The claims table's columns in the order shown (the verdict "result": pass / FAIL /
    illustration first, then the claim, its statement, the numbers, why that tolerance, which
    integrator, the details), every cell as Markdown-safe plain text (`ui.text.plain`)."""
    cols = [c for c in CLAIM_ORDER if c in df.columns]
    out = df[cols].copy()
    for c in cols:
        out[c] = out[c].map(lambda v: plain(_text(v)))
    return out


def claims_html(df: pd.DataFrame) -> str:
    """The claims table as one HTML table (see the module docstring); text escaped. A row per
    claim (`data-claim`, `data-result` carry its name and verdict), then a full-width row
    with its folded justification, integrator and details (when it has any)."""
    shown = [c for c in SHOWN if c in df.columns]
    folded = [(c, name) for c, name in FOLDED if c in df.columns]
    cols = "".join(f'<col style="width:{WIDTHS[c]}%">' for c in shown)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in shown)
    rows: list[str] = []
    for rec in df.to_dict("records"):
        verdict = _text(rec.get("result"))
        cells = []
        for c in shown:
            text = html.escape(_text(rec.get(c)))
            if c == "claim":  # "wang_ma.four_phases" wraps at its dots and underscores
                text = re.sub(r"([._])", "\\1<wbr>", text)
            if c == "result":
                text = f'<span class="{VERDICT_CLASS.get(verdict, "ill")}">{text}</span>'
            cells.append(f"<td>{text}</td>")
        rows.append(f'<tr data-claim="{html.escape(_text(rec.get("claim")), quote=True)}" '
                    f'data-result="{html.escape(verdict, quote=True)}">{"".join(cells)}</tr>')
        more = [(name, _text(rec.get(c))) for c, name in folded if _text(rec.get(c)).strip()]
        if more:
            label = " · ".join(name for name, _v in more)
            items = "".join(f"<dt>{html.escape(name)}</dt><dd>{html.escape(v)}</dd>"
                            for name, v in more)
            rows.append(f'<tr class="eae-more"><td colspan="{len(shown)}"><details>'
                        f"<summary>{html.escape(label)}</summary><dl>{items}</dl></details>"
                        "</td></tr>")
    return (f'{CLAIMS_CSS}<table class="eae-claims"><colgroup>{cols}</colgroup>'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def show_claims(df: pd.DataFrame) -> None:
    """Draw a claims table (`ui.downloads.claims_table`) that fits its container."""
    st.html(claims_html(df))


__all__ = ["claims_html", "claims_view", "show_claims"]
