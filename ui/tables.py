"""Tables that must be read whole: the papers' claims (verdict first, statements wrapped).

`st.dataframe` truncates long text in fixed-width cells and puts the columns past the right
edge; a claim's statement and its verdict must be readable at 1280 px, so claims are drawn as
a static table (`st.table`, cells wrap) with the verdict in the first column.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from .text import plain

CLAIM_ORDER = ("result", "claim", "statement", "measured", "expected", "tolerance",
               "justification", "integrator", "details")


def claims_view(df: pd.DataFrame) -> pd.DataFrame:
    """The claims table as shown: the verdict ("result": pass / FAIL / illustration) first, then
    the claim and its full statement, the numbers, why that tolerance, which integrator, the
    details; every cell as plain text (st.table renders Markdown: "> 0" would become a quote)."""
    cols = [c for c in CLAIM_ORDER if c in df.columns]
    out = df[cols].copy()
    for c in cols:
        out[c] = out[c].map(lambda v: "" if v is None or (isinstance(v, float) and v != v)
                            else plain(v))
    return out


def show_claims(df: pd.DataFrame) -> None:
    """Draw a claims table (`ui.downloads.claims_table`) with every statement wrapped."""
    st.table(claims_view(df), hide_index=True, border="horizontal")


__all__ = ["claims_view", "show_claims"]
