"""One install: the wheel (built here, once) holds the library, the figures, the dashboard and
its files; installed into a scratch virtual environment it answers `eae app`'s health check
from another directory with the dashboard's Streamlit settings, keeps `eae run`, and runs the
example notebook (examples/notebook.ipynb) top to bottom with the installed copy.

The scratch environment gets the project's wheel with `--no-deps`; its dependencies are the
project's `.venv` packages, reached through a path file (`eae-deps.pth`: a plain path entry, so
the checkout's editable install, itself a path file there, is not seen). Every test runs from
a temporary directory, away from the checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tomllib
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from devtools.server import StreamlitServer
from dynamics.same_bits import digests
from tests.test_determinism import run_probe

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dynamics", "viz", "runtime", "ui", "app_pages")
# the dashboard's root files and where the wheel puts them (pyproject.toml, force-include)
DASHBOARD_FILES = {"app.py": "ui/dashboard/app.py", "serve.py": "ui/dashboard/serve.py",
                   "assets/favicon.png": "ui/dashboard/assets/favicon.png",
                   ".streamlit/config.toml": "ui/dashboard/.streamlit/config.toml"}
NOTEBOOK = REPO_ROOT / "examples" / "notebook.ipynb"

pytestmark = pytest.mark.install


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    workdir: Path  # a directory outside the checkout to run from

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def eae(self) -> Path:
        return self.venv / "bin" / "eae"

    def env(self) -> dict[str, str]:
        """The environment of a process of the installed copy: no PYTHONPATH to the checkout,
        the scratch environment first on PATH (a notebook kernel started as `python` is it)."""
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.venv)
        return env

    def run(self, *args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(a) for a in args], cwd=self.workdir, env=self.env(),
                              capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The project's wheel, built from the checkout and installed into a scratch venv."""
    root = tmp_path_factory.mktemp("install")
    dist, venv, workdir = root / "dist", root / "venv", root / "work"
    workdir.mkdir()
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-w", str(dist), str(REPO_ROOT)],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = dist.glob("early_alignment_explorer-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "eae-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
         "--no-deps", "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert pip.returncode == 0, pip.stderr[-3000:]
    return Installed(wheel, venv, workdir)


def _tracked(prefix: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", prefix], cwd=REPO_ROOT, capture_output=True,
                         text=True, check=True).stdout
    return [p for p in out.splitlines() if (REPO_ROOT / p).is_file()]


def test_wheel_holds_the_packages_and_the_dashboard_files(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as z:
        names = set(z.namelist())
        tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
        assert tops == set(PACKAGES)
        for package in PACKAGES:  # every file of the packages: code and static files alike
            missing = [p for p in _tracked(package) if p not in names]
            assert not missing, missing
        assert not [n for n in names if "__pycache__" in n or n.endswith((".nbi", ".nbc"))]
        for src, dst in DASHBOARD_FILES.items():
            assert z.read(dst) == (REPO_ROOT / src).read_bytes(), dst
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = z.read(meta).decode()
        entry = z.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "eae = ui.launcher:main" in entry
    assert "Provides-Extra: app" in metadata
    assert "Requires-Dist: streamlit~=1.67.0; extra == 'app'" in metadata.replace('"', "'")


def test_installed_copy_imports_from_the_scratch_environment(installed: Installed) -> None:
    r = installed.run(installed.python, "-c",
                      "import json, app_pages, dynamics, ui, viz; from ui.server import APP_DIR;"
                      "print(json.dumps([m.__file__ for m in (app_pages, dynamics, ui, viz)]"
                      " + [str(APP_DIR)]))")
    assert r.returncode == 0, r.stderr
    paths = json.loads(r.stdout)
    assert all(p.startswith(str(installed.venv)) for p in paths), paths
    assert paths[-1].endswith("ui/dashboard")


def test_installed_eae_keeps_the_library_commands(installed: Installed) -> None:
    r = installed.run(installed.eae, "--help")
    assert r.returncode == 0, r.stderr
    for command in ("run", "sweep", "reproduce", "eae app"):
        assert command in r.stdout, r.stdout
    out = installed.workdir / "tiny.npz"
    r = installed.run(installed.eae, "run", "--quiet", "--set", "model.width=3", "--set",
                      "integrator.t_end=1", "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)["status"] == "completed" and out.is_file()


def test_installed_copy_loads_the_kernels_the_checkout_compiled(installed: Installed,
                                                                tmp_path: Path) -> None:
    """In a numba cache directory the kernels are keyed by their sources' hash, not their path
    (dynamics/kernels/cache.py): over a cache the checkout filled (scripts/test.sh's, or one
    filled here), the installed copy compiles no kernel and its probe gives the checkout's bits
    (`python -m dynamics.same_bits` of the installed copy)."""
    cache = os.environ.get("NUMBA_CACHE_DIR", "")
    if not cache:
        cache = str(tmp_path / "numba")
        run_probe(Path(cache), tmp_path / "checkout.json")  # the checkout fills it
    record = installed.workdir / "installed.json"
    env = dict(installed.env(), NUMBA_CACHE_DIR=cache)
    r = subprocess.run([str(installed.python), "-m", "dynamics.same_bits", "--write",
                        str(record)], cwd=installed.workdir, env=env,
                       capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(record.read_text())
    assert got["package"].startswith(str(installed.venv)), got["package"]
    assert got["misses"] == 0 and got["hits"] > 0, got
    assert got["digests"] == digests()


def test_installed_eae_app_answers_its_health_check(installed: Installed,
                                                   tmp_path: Path) -> None:
    server = StreamlitServer(installed.venv / "serve.py", {"EAE_CACHE_DIR": str(tmp_path)},
                             tmp_path, command=[str(installed.eae), "app"],
                             cwd=installed.workdir)
    try:
        server.wait_healthy()
        # served through serve.py (the project's routes exist), not plain app.py
        with urllib.request.urlopen(f"{server.url}/api/eae/warmup", timeout=10) as resp:
            assert set(json.loads(resp.read())) >= {"done", "total", "ready"}
    finally:
        server.stop()
    assert "Traceback" not in server.log_tail(), server.log_tail()


def test_installed_app_reads_the_dashboard_settings(installed: Installed) -> None:
    """Streamlit reads the `.streamlit/config.toml` beside the script `streamlit run` serves
    (the script-level file, above the working directory's): the installed serve.py's folder
    has the checkout's settings, so a server started anywhere gets them. Read the way
    `streamlit run` does (it sets `config._main_script_path` before parsing)."""
    probe = ("import json; from streamlit import config; from ui import launcher;"
             "config._main_script_path = launcher.app_command()[4];"
             "config.get_config_options(force_reparse=True);"
             "keys = ('server.enableXsrfProtection', 'server.maxUploadSize', "
             "'client.showErrorDetails', 'server.fileWatcherType', 'theme.primaryColor');"
             "print(json.dumps({k: config.get_option(k) for k in keys}))")
    r = installed.run(installed.python, "-c", probe)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    want = tomllib.loads((REPO_ROOT / ".streamlit" / "config.toml").read_text())
    for key, value in got.items():
        section, name = key.split(".")
        assert value == want[section][name], (key, value)


def test_example_notebook_runs_in_the_installed_copy(installed: Installed) -> None:
    """Every cell of examples/notebook.ipynb in a kernel of the scratch environment; the
    figure comes out as an iframe holding the standalone page, and the notebook imported the
    installed copy."""
    runner = (
        "import sys, nbformat; from nbclient import NotebookClient;"
        "nb = nbformat.read(sys.argv[1], as_version=4);"
        "nb.cells.append(nbformat.v4.new_code_cell("
        "'import dynamics, viz; print(dynamics.__file__, viz.__file__)'));"
        "NotebookClient(nb, timeout=600, kernel_name='python3',"
        " resources={'metadata': {'path': sys.argv[3]}}).execute();"
        "nbformat.write(nb, sys.argv[2])")
    out = installed.workdir / "notebook.out.ipynb"
    r = installed.run(installed.python, "-c", runner, NOTEBOOK, out, installed.workdir,
                      timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    nb = json.loads(out.read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    figures = ["".join(h) for h in html  # the iframe (its id: the page reports its height)
               if "".join(h).startswith("<iframe ") and " srcdoc=" in "".join(h)]
    assert len(figures) == 2, [h[:1][:80] for h in html]
    for fig in figures:
        assert "plotly" in fig and "frames" in fig and "&lt;html" in fig
    printed = "".join("".join(o.get("text", "")) for o in outputs if o["output_type"] == "stream")
    assert "status completed" in printed
    where = printed.strip().splitlines()[-1].split()
    assert len(where) == 2 and all(w.startswith(str(installed.venv)) for w in where), where
    assert (installed.workdir / "early_alignment.html").stat().st_size > 100_000


def test_installed_dashboard_runs_its_pages(installed: Installed) -> None:
    """The installed app.py finds the installed pages (`from app_pages import ...`) and they
    run: the default page (the Explorer, drawing a run) and About & status, under AppTest."""
    probe = (
        "import json; from streamlit.util import calc_hash;"
        "from streamlit.testing.v1 import AppTest; from ui.server import APP_SCRIPT;"
        "at = AppTest.from_file(str(APP_SCRIPT), default_timeout=600); at.run();"
        "explorer = ([e.value for e in at.exception], [m.value for m in at.markdown][:1]);"
        # the status page by its URL path's hash (devtools.apptest.switch_to_page, not installed)
        "assert calc_hash('status') in at._registered_pages; at._page_hash = calc_hash('status');"
        "at.run();"
        "status = ([e.value for e in at.exception], [t.value for t in at.title]);"
        "print(json.dumps([str(APP_SCRIPT), explorer, status]))")
    r = installed.run(installed.python, "-c", probe, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    script, explorer, status = json.loads(r.stdout.strip().splitlines()[-1])
    assert script.startswith(str(installed.venv)) and script.endswith("ui/dashboard/app.py")
    assert explorer == [[], ["### Early alignment explorer"]], explorer
    assert status == [[], ["About & status"]], status
