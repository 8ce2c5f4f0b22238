"""Smoke tests of the benchmark report (`python -m bench`: bench.measure, bench.render): it runs
on tiny sizes and writes a Markdown report with its tables. No speed is asserted: timings are
for the report only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from bench import peers
from bench.cli import main as cli_main
from bench.problems import gd_problem
from bench.render import render

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_report_writer_runs_on_tiny_sizes(tmp_path: Path, capsys) -> None:
    out = tmp_path / "REPORT.md"
    raw = tmp_path / "raw.json"
    rc = cli_main(["--quick", "--out", str(out), "--peers", "numpy", "--sizes", "3,2,10",
                   "--skip", "kink,memory,threads,startup,precompute", "--json", str(raw)])
    assert rc == 0 and out.exists()
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Core benchmark report")
    for heading in ("## Goals", "## Machine", "## GD step vs peers",
                    "## Gradient flow vs SciPy"):
        assert heading in text
    assert "| (3, 2, 10) |" in text  # the GD table has a row for the requested size
    assert "scipy RK23" in text and "core gf (BS23)" in text
    assert "CPU:" in text and "Versions:" in text
    assert "# Core benchmark report" in capsys.readouterr().out
    assert "`python -m bench --quick" in text  # the command that regenerates it
    # rendering is pure: the saved raw results give the same tables again
    res = json.loads(raw.read_text(encoding="utf-8"))
    res["gd"] = (res["gd"][0], res["gd"][1])
    assert render(res).split("## Goals", 1)[1] == text.split("## Goals", 1)[1]


def test_cli_rejects_unknown_section(capsys) -> None:
    assert cli_main(["--skip", "gd,nonsense"]) == 2
    assert "nonsense" in capsys.readouterr().err


def test_module_entry_point_and_library_boundary() -> None:
    """`python -m bench --help` works, and the library does not know the benchmarks."""
    r = subprocess.run([sys.executable, "-m", "bench", "--help"], cwd=REPO_ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "python -m bench" in r.stdout and "load" in r.stdout
    for path in (REPO_ROOT / "dynamics").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for banned in ("import bench", "from bench", "import tests", "from tests",
                       "import devtools", "from devtools"):
            assert banned not in text, f"{path.relative_to(REPO_ROOT)} has '{banned}'"


def test_numpy_peer_matches_core_step() -> None:
    from dynamics.kernels import GDStepper

    p, W, a = gd_problem(5, 3, 7)
    Wn, an = peers.make_numpy(p.X, p.y, W, a, 0.1, p.c)(4)
    gd = GDStepper(p, W, a, 0.1)
    gd.take_steps(4, np.empty(0))
    np.testing.assert_allclose(Wn, gd.W, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(an, gd.a, rtol=1e-12, atol=1e-15)
    assert peers.available()["numpy"] is None
