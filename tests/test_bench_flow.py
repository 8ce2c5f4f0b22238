"""The end-to-end section of `python -m bench` (issue 16): `--only`, and its table rendered from
raw results (no timing here; `tests/test_bench.py` runs the quick report, this section
included)."""

from __future__ import annotations

from bench.cli import main as cli_main
from bench.render import flow_lines


def _row(run: str, ok: bool) -> dict[str, object]:
    return {"run": run, "m": 200, "d": 16, "n": 16, "t_end": 1000.0, "frames": 150,
            "bare_s": 0.06, "simulate_s": 0.075, "bare_evals": 6000, "loss_end": 1e-7,
            "rk23_s": 2.0, "rk23_evals": 20000, "rk23_note": "" if ok else "stopped at 9",
            "rk23_loss": 1e-7, "diffrax_s": 0.3, "diffrax_compile_s": 2.5,
            "diffrax_steps": 2000, "diffrax_ok": ok, "diffrax_t": 1000.0 if ok else 3.0,
            "diffrax_max_steps": 200000, "diffrax_loss": 1e-7}


def test_flow_table_and_goals() -> None:
    goals: list[tuple[str, str, str]] = []
    lines = flow_lines({"rows": [_row("teacher", True), _row("Wang & Ma", False)],
                        "diffrax": "0.7.2", "repeats": 5}, goals)
    text = "\n".join(lines)
    assert "## End to end" in text and "diffrax 0.7.2" in text
    assert "| teacher | 200, 16, 16 | 1000, 150 | 0.060 | 0.075 | 1.25× | 0.300 [2.5] | 4.00× |" \
        in text
    # a peer stopped at its cap: the ratio is a lower bound and no final loss is claimed
    assert "used max_steps = 200,000 by t = 3" in text and "≥ 4.00×" in text
    assert "(stopped at 9)" in text
    assert [g[2] for g in goals] == ["**met**", "**met**"]
    assert goals[1][1] == "4.00×, ≥ 4.00×"


def test_flow_section_skipped_when_diffrax_is_missing() -> None:
    row = {k: v for k, v in _row("teacher", True).items() if not k.startswith("diffrax_")}
    goals: list[tuple[str, str, str]] = []
    text = "\n".join(flow_lines({"rows": [row], "diffrax": None, "repeats": 1,
                                 "diffrax_skipped": "not importable"}, goals))
    assert "| skipped | — |" in text and "_diffrax skipped: not importable_" in text
    assert len(goals) == 1  # no diffrax goal without diffrax


def test_only_selects_sections(capsys) -> None:
    assert cli_main(["--only", "flow,nonsense"]) == 2
    assert "nonsense" in capsys.readouterr().err
