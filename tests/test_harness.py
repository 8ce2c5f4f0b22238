"""End-to-end checks of the test harness itself (Streamlit server + headless Chromium)."""

from __future__ import annotations

import os
import re
import struct
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent

TINY_APP = textwrap.dedent(
    """
    import os

    import plotly.graph_objects as go
    import streamlit as st

    st.title("Harness probe")
    n = st.slider("Points", min_value=2, max_value=50, value=10)
    st.plotly_chart(go.Figure(go.Scatter(y=[i * i for i in range(n)], mode="lines+markers")))
    st.caption(f"points={n} cache={os.environ.get('EAE_CACHE_DIR', '')}")
    """
)


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert len(data) > 1000, f"{path} is suspiciously small ({len(data)} bytes)"
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.browser
def test_streamlit_harness_end_to_end(
    tmp_path, start_streamlit, page, streamlit_idle, screenshot_dir, _isolated_cache_dir
):
    script = tmp_path / "tiny_app.py"
    script.write_text(TINY_APP)
    url = start_streamlit(script)
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)

    page.goto(url)
    streamlit_idle(page, timeout=60)

    title = page.get_by_role("heading", name="Harness probe")
    assert title.is_visible()
    assert page.locator('[data-testid="stSlider"]').count() == 1
    assert page.locator('[data-testid="stPlotlyChart"] .main-svg').count() >= 1
    # The server got the session's isolated cache dir, not the user's.
    caption = page.locator('[data-testid="stCaptionContainer"]').inner_text()
    assert f"cache={_isolated_cache_dir}" in caption
    assert "points=10" in caption

    # An interaction triggers a rerun; idle detection must wait for its result.
    thumb = page.get_by_role("slider")
    thumb.focus()
    for _ in range(5):
        thumb.press("ArrowRight")
    streamlit_idle(page, timeout=60)
    assert "points=15" in page.locator('[data-testid="stCaptionContainer"]').inner_text()

    shot = screenshot_dir / "harness_probe.png"
    shot.unlink(missing_ok=True)
    page.screenshot(path=str(shot), full_page=True)
    width, height = _png_size(shot)
    assert width == 1400 and height >= 400


def test_ci_run_invokes_test_script():
    ci_run = REPO_ROOT / ".ci" / "run"
    text = ci_run.read_text()
    assert text.startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in text
    commands = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    assert "bash scripts/test.sh" in commands
    assert os.access(ci_run, os.X_OK), ".ci/run must be executable"
    for script in ("setup.sh", "test.sh", "run.sh"):
        assert os.access(REPO_ROOT / "scripts" / script, os.X_OK), f"scripts/{script} not +x"


def test_cache_dir_is_isolated(_isolated_cache_dir):
    assert os.environ["EAE_CACHE_DIR"] == str(_isolated_cache_dir)
    assert Path(os.environ["EAE_CACHE_DIR"]).is_dir()


# --------------------------------------------------------------------------------------
# Tooling boundary: packaging, type check, who imports the harness
# --------------------------------------------------------------------------------------
def _pyproject() -> dict:
    import tomllib

    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _pins(name: str) -> dict[str, str]:
    """{package: version} of the exact pins in a requirements file (its -r includes left out)."""
    out = {}
    for line in (REPO_ROOT / name).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            pkg, version = line.split("==")
            out[pkg.strip().lower()] = version.strip()
    return out


def _agree(requirements: list[str], pins: dict[str, str], what: str) -> None:
    from packaging.requirements import Requirement

    reqs = [Requirement(r) for r in requirements]
    assert {r.name.lower() for r in reqs} == set(pins), f"pyproject and {what} differ"
    for r in reqs:
        pin = pins[r.name.lower()]
        assert r.specifier.contains(pin), f"{r} excludes the pin {pin}"


def test_pyproject_dependencies_agree_with_requirements_pins():
    project = _pyproject()["project"]
    extras = project["optional-dependencies"]
    runtime = _pins("requirements.txt")
    _agree(project["dependencies"] + extras["app"], runtime, "requirements.txt")
    dev = {k: v for k, v in _pins("requirements-dev.txt").items() if k not in runtime}
    _agree(extras["dev"], dev, "requirements-dev.txt")
    backend = _pyproject()["build-system"]["requires"]
    _agree(backend, {"hatchling": dev["hatchling"]}, "the build backend's pin")


def test_pyproject_installs_the_packages_and_one_console_script():
    data = _pyproject()
    assert data["build-system"]["build-backend"] == "hatchling.build"
    wheel = data["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["dynamics", "viz", "runtime", "ui", "app_pages"]
    assert data["project"]["scripts"] == {"eae": "ui.launcher:main"}
    from ui.launcher import main

    assert callable(main)
    setup = (REPO_ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    assert "--no-build-isolation -e ." in setup


def test_run_script_is_eae_app_with_the_server_flags(capsys):
    from ui.launcher import SERVER_FLAGS, app_command, main
    from ui.server import APP_DIR

    run = (REPO_ROOT / "scripts" / "run.sh").read_text(encoding="utf-8")
    assert 'exec .venv/bin/eae app "$@"' in run
    cmd = app_command(["--server.port", "8600"])
    assert cmd[1:5] == ["-m", "streamlit", "run", str(REPO_ROOT / "serve.py")]
    assert cmd[5:] == [*SERVER_FLAGS, "--server.port", "8600"]  # the user's flags come last
    assert APP_DIR == REPO_ROOT  # in a checkout; tests/test_install.py checks an installed one
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0 and "eae app" in capsys.readouterr().out


def test_test_script_runs_ruff_and_mypy_on_the_library():
    text = (REPO_ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert ".venv/bin/python -m ruff check ." in text
    assert ".venv/bin/python -m mypy dynamics" in text
    assert "mypy" in _pins("requirements-dev.txt")
    assert _pyproject()["tool"]["mypy"]["files"] == ["dynamics"]


def test_benchmarks_use_devtools_not_the_test_suite():
    for path in sorted((REPO_ROOT / "bench").glob("*.py")) + sorted(
            (REPO_ROOT / "devtools").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "from tests" not in text and "import tests" not in text, path.name
    from devtools.browser import CHROMIUM_ARGS, IDLE_JS
    from devtools.server import StreamlitServer

    assert "--headless" in CHROMIUM_ARGS and "notRunning" in IDLE_JS
    assert callable(StreamlitServer.wait_healthy)
