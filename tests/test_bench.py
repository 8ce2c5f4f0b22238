"""Smoke test of the benchmark report writer (bench/report.py): it runs on tiny sizes and writes
a Markdown report with its tables. No speed is asserted: timings are for the report only."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench import peers
from bench.report import cli_main, gd_problem


def test_report_writer_runs_on_tiny_sizes(tmp_path: Path, capsys) -> None:
    out = tmp_path / "REPORT.md"
    rc = cli_main(["--quick", "--out", str(out), "--peers", "numpy", "--sizes", "3,2,10",
                   "--skip", "kink,memory,threads,startup"])
    assert rc == 0 and out.exists()
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Core benchmark report")
    for heading in ("## Goals (issue 6)", "## Machine", "## GD step vs peers",
                    "## Gradient flow vs SciPy"):
        assert heading in text
    assert "| (3, 2, 10) |" in text  # the GD table has a row for the requested size
    assert "scipy RK23" in text and "core gf (BS23)" in text
    assert "CPU:" in text and "Versions:" in text
    assert "# Core benchmark report" in capsys.readouterr().out


def test_numpy_peer_matches_core_step() -> None:
    from dynamics.core import GDStepper

    p, W, a = gd_problem(5, 3, 7)
    Wn, an = peers.make_numpy(p.X, p.y, W, a, 0.1, p.c)(4)
    gd = GDStepper(p, W, a, 0.1)
    gd.advance(4, np.empty(0))
    np.testing.assert_allclose(Wn, gd.W, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(an, gd.a, rtol=1e-12, atol=1e-15)
    assert peers.available()["numpy"] is None
