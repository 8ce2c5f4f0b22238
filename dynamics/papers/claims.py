"""A checked statement (`Claim`) and how claims are written: numbers, Markdown, JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


@dataclass
class Claim:
    """One checked statement with a falsifiable verdict.

    `passed` is True/False for a claim (counted), None for an illustration (shown, not
    counted, never called a pass). `tolerance` says how close counts; `justification` why that
    tolerance (statistics, discretisation error, the paper's own rounding); `integrator` which
    run(s) the measurement comes from (e.g. "gf rtol 1e-8", "gd η = 2e-3").
    """

    name: str
    statement: str
    measured: Any
    expected: Any
    tolerance: str
    passed: bool | None
    details: str = ""
    table: list[dict[str, Any]] = field(default_factory=list)  # per-seed / per-run rows
    justification: str = ""
    integrator: str = ""

    @property
    def verdict(self) -> str:
        """"pass", "fail" or "illustration"."""
        return VERDICT[self.passed]

    @property
    def counted(self) -> bool:
        """A claim (pass/fail), not an illustration."""
        return self.passed is not None


VERDICT = {True: "pass", False: "fail", None: "illustration"}
RESULT = {True: "pass", False: "**FAIL**", None: "illustration"}


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


CLAIM_FIELDS = ("name", "statement", "verdict", "measured", "expected", "tolerance",
                "justification", "integrator")
"""What every row of the report carries (`claims_rows`)."""


def _cell(x: Any) -> str:
    """A Markdown table cell: `fmt`, with pipes and newlines escaped."""
    return fmt(x).replace("|", "\\|").replace("\n", " ")


def claims_markdown(paper: str, claims: list[Claim]) -> str:
    """A paper's section of the report: the claims table (verdict, measured, expected,
    tolerance and why, integrator), then each claim's details/rows."""
    n_pass = sum(c.passed is True for c in claims)
    n_fail = sum(c.passed is False for c in claims)
    n_ill = sum(c.passed is None for c in claims)
    lines = [f"## {paper}", "",
             f"{n_pass} pass, {n_fail} fail" + (f", {n_ill} illustration(s), not counted"
                                                 if n_ill else ""), "",
             "| claim | verdict | measured | expected | tolerance | justification | "
             "integrator |", "|---|---|---|---|---|---|---|"]
    for c in claims:
        lines.append(f"| {c.name}: {_cell(c.statement)} | {RESULT[c.passed]} | "
                     f"{_cell(c.measured)} | {_cell(c.expected)} | {_cell(c.tolerance)} | "
                     f"{_cell(c.justification)} | {_cell(c.integrator)} |")
    lines.append("")
    for c in claims:
        if c.details or c.table:
            lines += [f"**{c.name}.** {c.details}", ""]
            if c.table:
                lines += [md_table(c.table), ""]
    return "\n".join(lines)


def claims_rows(claims: dict[str, list[Claim]]) -> list[dict[str, Any]]:
    """One flat row per claim: the paper, `CLAIM_FIELDS` and `counted`."""
    return [{"paper": p, **{k: getattr(c, k) for k in CLAIM_FIELDS}, "counted": c.counted}
            for p, cs in claims.items() for c in cs]


def _plain(o: Any) -> Any:
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    return str(o)


def claims_json(claims: dict[str, list[Claim]]) -> str:
    """{paper: [claim fields + verdict]} as JSON (NumPy values as plain numbers; NaN kept as
    NaN)."""
    return json.dumps({p: [{**asdict(c), "verdict": c.verdict} for c in cs]
                       for p, cs in claims.items()}, indent=1, ensure_ascii=False,
                      default=_plain)
