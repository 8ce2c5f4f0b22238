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


def test_soak_uploads_only_where_shown_and_counts_the_session_limit() -> None:
    """The soak's picker: an uploader counts only when the last run drew it, and its file
    bookkeeping matches the server's per-session limit (a replaced file is deleted first; a
    file left behind counts until the session ends; past the limit a 413 is expected)."""
    from types import SimpleNamespace

    from streamlit.proto.WidgetStates_pb2 import WidgetState

    from bench.soak import UPLOAD_PAGES, _Soak, _uploader
    from devtools.protocol import ProtocolError, RunResult

    label = UPLOAD_PAGES["real_data"][1]
    drawn = RunResult(elements=[("file_uploader", SimpleNamespace(label=label, id="w1"))])
    other = RunResult(elements=[("radio", SimpleNamespace(label="Data", id="w2"))])

    class Fake:  # what _Soak.upload uses of a ProtocolSession; the server's count beside it
        def __init__(self) -> None:
            self.page, self.last = "real_data", drawn
            self.widgets: dict[str, WidgetState] = {}
            self.ids: dict[str, tuple[str, str]] = {}
            self.server_files = 0

        def widget_id(self, lab: str) -> tuple[str, str]:
            return self.ids[lab]

        def upload(self, lab: str, name: str, data: bytes) -> RunResult:
            wid = self.ids[lab][0]
            if wid in self.widgets:
                self.server_files -= 1  # the replaced file is deleted
            if self.server_files >= 2:
                raise ProtocolError("the upload was refused: HTTP 413")
            self.server_files += 1
            ws = WidgetState(id=wid)
            ws.file_uploader_state_value.uploaded_file_info.add(name=name, file_id="f")
            self.widgets[wid] = ws
            return drawn

    s = Fake()
    assert _uploader(s, drawn) == label and _uploader(s, other) is None  # type: ignore[arg-type]
    soak = _Soak("http://127.0.0.1:1", 1, 0.0, 0)
    soak.upload_files_limit = 2
    held = 0
    for wid in ("a", "a", "b", "c"):  # a replaced, b held, c over the limit
        if wid != "a":
            s.widgets.clear()  # a page switch: the frontend forgets; the server keeps
        s.ids[label] = (wid, "file_uploader")
        _, held = soak.upload(s, label, held)  # type: ignore[arg-type]
    assert soak.errors == [] and held == 2 == s.server_files
    assert soak.actions == {"upload": 3, "upload refused (session limit)": 1}
