"""A checked statement (`Claim`) and how claims are written: numbers, Markdown, JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


@dataclass
class Claim:
    """One checked statement. passed is None for "shown only" (no pass/fail)."""

    name: str
    statement: str
    measured: Any
    expected: Any
    tolerance: str
    passed: bool | None
    details: str = ""
    table: list[dict[str, Any]] = field(default_factory=list)  # per-seed / per-run rows


RESULT = {True: "pass", False: "**FAIL**", None: "shown"}


def fmt(x: Any) -> str:
    """Floats with 4 significant digits, everything else as str."""
    if isinstance(x, float | np.floating):
        return f"{x:.4g}"
    return str(x)


def md_table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of dict rows (columns: every key, in first-seen order)."""
    if not rows:
        return ""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r.get(k, "")) for k in keys) + " |")
    return "\n".join(lines)


def claims_markdown(paper: str, claims: list[Claim]) -> str:
    """A paper's section of the report: the claims table, then each claim's details/rows."""
    lines = [f"## {paper}", "", "| claim | measured | expected | tolerance | result |",
             "|---|---|---|---|---|"]
    for c in claims:
        lines.append(f"| {c.name}: {c.statement} | {fmt(c.measured)} | {fmt(c.expected)} | "
                     f"{c.tolerance} | {RESULT[c.passed]} |")
    lines.append("")
    for c in claims:
        if c.details or c.table:
            lines += [f"**{c.name}.** {c.details}", ""]
            if c.table:
                lines += [md_table(c.table), ""]
    return "\n".join(lines)


def _plain(o: Any) -> Any:
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    return str(o)


def claims_json(claims: dict[str, list[Claim]]) -> str:
    """{paper: [claim fields]} as JSON (NumPy values as plain numbers; NaN kept as NaN)."""
    return json.dumps({p: [asdict(c) for c in cs] for p, cs in claims.items()}, indent=1,
                      ensure_ascii=False, default=_plain)
