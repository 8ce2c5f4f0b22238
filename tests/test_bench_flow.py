"""The end-to-end section of `python -m bench`: `--only`, and its table rendered from
raw results (no timing here; `tests/test_bench.py` runs the quick report, this section
included)."""

from __future__ import annotations

from bench.cli import main as cli_main
from bench.render import flow_lines


def _row(run: str, ok: bool, goal: float | None = 3.0) -> dict[str, object]:
    return {"run": run, "goal": goal, "m": 200, "d": 16, "n": 16, "t_end": 1000.0,
            "frames": 150, "rounds": 5, "load": [1.5, 1.25],
            "bare_s": 0.06, "simulate_s": 0.075, "bare_evals": 6000, "bare_accepted": 1900,
            "bare_rejected": 100, "bare_cpu_s": 0.05, "simulate_cpu_s": 0.07, "loss_end": 1e-7,
            "rk23_s": 2.0, "rk23_evals": 20000, "rk23_note": "" if ok else "stopped at 9",
            "rk23_loss": 1e-7, "diffrax_s": 0.3, "diffrax_cpu_s": 0.28,
            "diffrax_compile_s": 2.5, "diffrax_steps": 2000, "diffrax_accepted": 1500,
            "diffrax_rejected": 500, "diffrax_ok": ok, "diffrax_t": 1000.0 if ok else 3.0,
            "diffrax_max_steps": 200000, "diffrax_loss": 1.5e-7}


def test_flow_table_and_goals() -> None:
    goals: list[tuple[str, str, str]] = []
    big = _row("teacher, m = 1000", True, 1.0) | {
        "simulate_s": 0.4, "rk23_s": float("nan"), "rk23_evals": 0, "rk23_note": "not run"}
    lines = flow_lines({"rows": [_row("teacher", True), _row("Wang & Ma", False, None), big],
                        "diffrax": "0.7.2", "repeats": 5}, goals)
    text = "\n".join(lines)
    assert "## End to end" in text and "diffrax 0.7.2" in text
    assert "| teacher | 200, 16, 16 | 1000, 150 | 0.060 | 0.075 | 1.25× | 0.300 [2.5] | 4.00× |" \
        in text
    # a peer stopped at its cap: the ratio is a lower bound and no final loss is claimed
    assert "used max_steps = 200,000 by t = 3" in text and "≥ 4.00×" in text
    assert "(stopped at 9)" in text
    # a peer not run: no time, ratio or evaluations claimed
    assert "| — (not run) | — | 6,000 / 2,000 / — |" in text
    # the CPU table: load, CPU seconds and their ratio, both solvers' steps, the loss gap
    assert "| teacher | 5 | 1.50 → 1.25 | 0.050 / 0.070 / 0.280 | 4.00× | 1,900 / 100 | " \
        "1,500 / 500 | 5.0e-08 |" in text
    names = [g[0] for g in goals]
    assert names[0] == "simulate() ≤ 1.3× the bare stepper (teacher)"
    assert names[1] == "simulate() ≥ 3× faster than diffrax end to end (teacher)"
    assert "largest dashboard-size run (teacher, m = 1000)" in names[2]
    assert [g[2] for g in goals] == ["**met**", "**met**", "**not met**", "reported"]
    assert goals[1][1] == "4.00× (CPU 4.00×)" and goals[2][1] == "0.75× (CPU 4.00×)"
    assert "Wang & Ma 2.5 s" in goals[3][1]  # compile time apart, every run


def test_goal_not_met_when_simulate_is_slow_or_diffrax_missing() -> None:
    goals: list[tuple[str, str, str]] = []
    slow = _row("three-point", True) | {"simulate_s": 0.2}  # 3.33× bare, 1.5× diffrax
    flow_lines({"rows": [slow], "diffrax": "0.7.2", "repeats": 5}, goals)
    assert [g[2] for g in goals[:2]] == ["**not met**", "**not met**"]
    assert goals[1][1].startswith("1.50×")


def test_flow_section_skipped_when_diffrax_is_missing() -> None:
    row = {k: v for k, v in _row("teacher", True).items() if not k.startswith("diffrax_")}
    goals: list[tuple[str, str, str]] = []
    text = "\n".join(flow_lines({"rows": [row], "diffrax": None, "repeats": 1,
                                 "diffrax_skipped": "not importable"}, goals))
    assert "| skipped | — |" in text and "_diffrax skipped: not importable_" in text
    assert [g[2] for g in goals] == ["**met**", "**not measured**"]  # no diffrax: no claim


def test_only_selects_sections(capsys) -> None:
    assert cli_main(["--only", "flow,nonsense"]) == 2
    assert "nonsense" in capsys.readouterr().err
