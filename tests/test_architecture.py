"""The layering rules of docs/ARCHITECTURE.md, read from the code's own imports (ast).

Imports go down: app_pages -> ui -> runtime -> viz -> dynamics; bench and tests sit beside the
app and may use devtools; nothing imports bench or tests; dynamics has no import circle. The
server's live state has one owner (`runtime.Runtime`): no module-level mutable state in ui/ or
dynamics/service.py, and no import hidden inside a function there or in runtime/.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dynamics", "viz", "runtime", "ui", "app_pages", "bench", "devtools")
TOP = {"streamlit", "bench", "tests", "viz", "runtime", "ui", "app_pages", "devtools",
       "dynamics"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute module names imported by a file (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _module_name(path)
    pkg = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            out.add(mod)
            # `from . import x` / `from pkg import sub`: the submodule is imported too
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def _files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _tops(path: Path) -> set[str]:
    return {m.split(".")[0] for m in _imports(path)} & TOP


FORBIDDEN = {
    "dynamics": {"streamlit", "bench", "tests", "viz", "runtime", "ui", "app_pages", "devtools"},
    "viz": {"streamlit", "bench", "tests", "runtime", "ui", "app_pages", "devtools"},
    # the server's runtime: below ui/ (which reaches it through `runtime.current()`), above
    # viz/ and dynamics/; Streamlit only for the reaper's session internals
    "runtime": {"bench", "tests", "ui", "app_pages", "devtools"},
    "ui": {"bench", "tests", "app_pages", "devtools"},
    "app_pages": {"bench", "tests", "devtools"},
    "bench": {"tests"},
    "devtools": {"tests", "bench", "dynamics", "viz", "runtime", "ui", "app_pages"},
}


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_only_go_down(package: str) -> None:
    bad = {f"{p.relative_to(ROOT)} imports {sorted(_tops(p) & FORBIDDEN[package])}"
           for p in _files(package) if _tops(p) & FORBIDDEN[package]}
    assert not bad, "\n".join(sorted(bad))


def test_no_import_circle_in_dynamics() -> None:
    files = {_module_name(p): p for p in _files("dynamics")}
    graph = {m: {i for i in _imports(p) if i in files and i != m} for m, p in files.items()}
    # a package's __init__ re-exporting its submodules is not a circle of code
    for m in graph:
        graph[m] = {i for i in graph[m] if not (i != m and m.startswith(i + ".")
                                                 and files[i].name == "__init__.py")}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(m: str, stack: list[str]) -> bool:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycle.extend([*stack[stack.index(n):], n] if n in stack else [m, n])
                return True
            if n not in state and visit(n, [*stack, n]):
                return True
        state[m] = 2
        return False

    for m in sorted(graph):
        if m not in state and visit(m, [m]):
            break
    assert not cycle, " -> ".join(cycle)


def _unit(module: str) -> str:
    """The unit a module belongs to in the one-way order of dynamics: a subpackage
    (dynamics.papers, dynamics.sweeps, dynamics.config, dynamics.kernels) or a top module."""
    parts = module.split(".")
    return ".".join(parts[:2])


def test_dynamics_units_import_one_way_including_function_level_imports() -> None:
    """No loop between dynamics' units, counting every import — those inside functions too
    (ast.walk sees them): e.g. papers may use simulate and theory, analysis and sweeps may use
    papers, and nothing papers imports may import papers back (no hidden package loop)."""
    files = {_module_name(p): p for p in _files("dynamics")}
    graph: dict[str, set[str]] = {}
    for m, p in files.items():
        u = _unit(m)
        graph.setdefault(u, set()).update(
            _unit(i) for i in _imports(p) if i.startswith("dynamics") and _unit(i) != u
            and _unit(i) in {_unit(x) for x in files})
    state: dict[str, int] = {}
    stack: list[str] = []
    loops: list[str] = []

    def visit(u: str) -> None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                loops.append(" -> ".join([*stack[stack.index(v):], v]))
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u)
    assert not loops, loops
    # the order the docs state: papers sit above simulate and below analysis, sweeps, service
    assert "dynamics.papers" in graph["dynamics.analysis"]
    assert "dynamics.papers" in graph["dynamics.sweeps"]
    assert not graph["dynamics.papers"] & {"dynamics.analysis", "dynamics.sweeps",
                                           "dynamics.service", "dynamics.reproduce"}


def test_no_os_environ_reads_of_eae_variables() -> None:
    """Every EAE_* variable is read in dynamics/limits.py only (writing one for a child process
    is allowed)."""
    offenders = []
    for package in ("dynamics", "viz", "ui", "app_pages"):
        for p in _files(package):
            if p.relative_to(ROOT).as_posix() == "dynamics/limits.py":
                continue
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and node.args:
                    f = ast.unparse(node.func)
                    a0 = node.args[0]
                    if f in ("os.environ.get", "os.getenv", "environ.get") and \
                            isinstance(a0, ast.Constant) and str(a0.value).startswith("EAE_"):
                        offenders.append(f"{p.relative_to(ROOT)}:{node.lineno}")
                if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ" \
                        and isinstance(node.ctx, ast.Load):
                    s = node.slice
                    if isinstance(s, ast.Constant) and str(s.value).startswith("EAE_"):
                        offenders.append(f"{p.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders


def test_pages_define_no_plotly_config_of_their_own() -> None:
    """One Plotly config (viz.style) for every chart; pages do not spell their own."""
    offenders = [str(p.relative_to(ROOT)) for p in _files("app_pages")
                 if "displaylogo" in p.read_text(encoding="utf-8")]
    assert not offenders, offenders


PAGE_FILES = sorted(p for p in (ROOT / "app_pages").glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda p: p.stem)
def test_a_page_is_a_function_with_no_state_at_module_level(path: Path) -> None:
    """Module level holds imports, constants, classes and functions only: no Streamlit call,
    no session state and no widget runs on import; the page is `page()`, run by the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # docstring
        if isinstance(node, ast.If):  # only the script guard: if __name__ == "__main__": page()
            test = ast.unparse(node.test)
            assert test == "__name__ == '__main__'", test
            assert [ast.unparse(s) for s in node.body] == ["page()"]
            continue
        assert isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef,
                                 ast.Assign, ast.AnnAssign)), ast.unparse(node)[:80]
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            attrs = {a.attr for a in ast.walk(node) if isinstance(a, ast.Attribute)}
            assert not names & {"st", "ss"} and "session_state" not in attrs, \
                ast.unparse(node)[:80]
    assert any(isinstance(n, ast.FunctionDef) and n.name == "page" for n in tree.body)


def test_every_page_is_a_function_page_of_the_navigation_table() -> None:
    """app.py registers each app_pages module's `page` as `st.Page(function)` under its row of
    `ui.navigation.PAGES` (its URL path is the module's name), and no page by file."""
    from ui.navigation import PAGES

    assert sorted(p.url_path for p in PAGES) == [p.stem for p in PAGE_FILES]
    assert sum(p.default for p in PAGES) == 1
    app = (ROOT / "app.py").read_text(encoding="utf-8")
    for p in PAGE_FILES:
        assert f'("{p.stem}", {p.stem})' in app, p.stem  # name → module, whose .page runs
    calls = {ast.unparse(n.func) for n in ast.walk(ast.parse(app)) if isinstance(n, ast.Call)}
    assert "st.Page" not in calls and "navigation.build" in calls  # no page beside the table


# ------------------------------------------------------------------ the runtime owns live state
STATE_FILES = [*_files("ui"), *(ROOT / "dynamics" / f"{m}.py"
                                for m in ("service", "cache", "admission"))]
#: none: the library's process-wide `Service` for processes without a server runtime (the CLI,
#: reproduce, Dask workers) is a cached factory (`dynamics.service.default_service`), and a
#: server's runtime builds its own
STATE_ALLOWED: set[tuple[str, str]] = set()
CONTAINERS = {"dict", "list", "set", "OrderedDict", "defaultdict", "deque", "Counter"}
SYNC = {"Lock", "RLock", "Condition", "Event", "Semaphore", "BoundedSemaphore", "local",
        "Thread"}
MUTATORS = {"append", "extend", "insert", "pop", "popitem", "popleft", "appendleft", "clear",
            "update", "setdefault", "add", "discard", "remove", "move_to_end", "__init__"}


def _callee(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        f = node.func
        return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return ""


def _stateful_classes() -> set[str]:
    """Project classes whose instances hold changing state: a lock, a mutable container made in
    `__init__`, or an attribute set outside `__init__`."""
    out: set[str] = set()
    for package in ("ui", "runtime", "dynamics", "viz"):
        for p in _files(package):
            for cls in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
                if not isinstance(cls, ast.ClassDef):
                    continue
                for fn in cls.body:
                    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        continue
                    for node in ast.walk(fn):
                        targets = node.targets if isinstance(node, ast.Assign) else \
                            [node.target] if isinstance(node, ast.AnnAssign | ast.AugAssign) \
                            else []
                        selfs = [t for t in targets if isinstance(t, ast.Attribute)
                                 and ast.unparse(t.value) == "self"]
                        if not selfs:
                            continue
                        value = getattr(node, "value", None)
                        if fn.name not in ("__init__", "__post_init__") or \
                                _callee(value) in CONTAINERS | SYNC or \
                                isinstance(value, ast.Dict | ast.List | ast.Set):
                            out.add(cls.name)
    return out


def _module_state(path: Path, stateful: set[str]) -> list[str]:
    """Module-level names of `path` that hold state the process changes: a lock or thread, an
    instance of a stateful project class, a container the module mutates (item set or deleted,
    a mutating method called on it), or a name a function rebinds (`global`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel = path.relative_to(ROOT).as_posix()
    bound: dict[str, ast.AST | None] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    bound[t.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bound[node.target.id] = node.value
    mutated: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            mutated.update(node.names)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del) \
                and isinstance(node.value, ast.Name):
            mutated.add(node.value.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript) \
                and isinstance(node.target.value, ast.Name):
            mutated.add(node.target.value.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in MUTATORS:
            base = node.func.value
            while isinstance(base, ast.Subscript):
                base = base.value
            if isinstance(base, ast.Name):
                mutated.add(base.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name):
            mutated.add(node.value.id)
    found = []
    for name, value in bound.items():
        container = isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp
                               | ast.ListComp | ast.SetComp) or _callee(value) in CONTAINERS
        held = _callee(value) in SYNC or _callee(value) in stateful
        if (held or (name in mutated and (container or value is None or _callee(value)))) \
                and (rel, name) not in STATE_ALLOWED:
            found.append(f"{rel}: {name}")
    return found


def test_no_module_level_mutable_state_outside_the_runtime() -> None:
    """The server's live state (figure store, turns and page slots, families, prefetch, data
    edits, the reaper, whether the routes are mounted) is the runtime's (`runtime.Runtime`,
    reached through `runtime.current()`): ui/ and dynamics/service.py keep none at module
    level, and no callback registry."""
    stateful = _stateful_classes()
    assert {"FigureStore", "Turns", "Slots", "Reaper", "Service", "ResultCache", "Fifo",
            "Speculator"} <= stateful  # the rule bites
    found = [f for p in STATE_FILES for f in _module_state(p, stateful)]
    assert not found, "\n".join(found)
    registry = [p.relative_to(ROOT).as_posix() for p in _files("ui")
                if "def register_" in p.read_text(encoding="utf-8")]
    assert not registry, registry


#: imports inside a function that stay, each with its reason
LATE_IMPORTS_ALLOWED = {
    # `eae app` replaces the process with Streamlit: it does not import the library first
    ("ui/launcher.py", "dynamics.cli"),
}


def test_no_import_hidden_inside_a_function() -> None:
    """ui/, runtime/ and dynamics/service.py state what they depend on at the top: no import
    inside a function (one that hid a circle or a registry), but the listed ones."""
    found = []
    for p in [*STATE_FILES, *_files("runtime")]:
        rel = p.relative_to(ROOT).as_posix()
        for fn in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    mods = [a.name for a in node.names] if isinstance(node, ast.Import) \
                        else [node.module or "."]
                    found += [f"{rel}:{node.lineno} {m}" for m in mods
                              if (rel, m) not in LATE_IMPORTS_ALLOWED]
    assert not found, "\n".join(found)


def _trajectory_keys(path: Path) -> list[str]:
    """Where `path` spells a trajectory's key: a tuple or f-string made of a config's
    `cache_key()`, a `status` and an `n_frames`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.JoinedStr):
            attrs = {a.attr for a in ast.walk(node) if isinstance(a, ast.Attribute)}
            if {"cache_key", "status", "n_frames"} <= attrs:
                out.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}")
    return out


def test_one_trajectory_key() -> None:
    """What a produced trajectory's analysis and figures are keyed by is `Trajectory.key`,
    spelled once (the service's memo of analyses and the figure store's keys use it)."""
    spelled = [k for package in ("dynamics", "viz", "runtime", "ui") for p in _files(package)
               for k in _trajectory_keys(p)]
    assert [k.split(":")[0] for k in spelled] == ["dynamics/trajectory.py"], spelled


def test_the_library_service_is_a_cache_with_admission_handed_in() -> None:
    """`dynamics.service.Service` caches and computes once per key; the server's policies live
    in `runtime/`: the session-fair queue and its words (`runtime.queue`), the speculative runs
    per owner (`runtime.speculation`). Neither is named in the library's service, cache or
    admission, and one waiting algorithm (`dynamics.admission.Fifo`) serves the service's
    slots and the server's page slots."""
    words = ("this page", "family:", "prefetch", "owner", "FAMILY")  # the server's words
    for m in ("service", "cache", "admission"):
        text = (ROOT / "dynamics" / f"{m}.py").read_text(encoding="utf-8")
        assert not [w for w in words if w in text], (m, [w for w in words if w in text])
    from dynamics.admission import Fifo, RunQueue
    from runtime.admission import Slots
    from runtime.queue import FairQueue

    assert issubclass(FairQueue, RunQueue) and issubclass(RunQueue, Fifo)
    assert isinstance(Slots(2)._fifo, Fifo)
    classes = {n.name for p in [*_files("dynamics"), *_files("runtime")]
               for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
               if isinstance(n, ast.ClassDef)}
    assert "_Slots" not in classes


def test_the_server_module_declares_no_component_before_streamlit_runs() -> None:
    """`serve.py` (and so `ui.server`, its routes' modules at the top) is imported before
    Streamlit's runtime exists: a component declared then (`ui.player`) is never served, so the
    player would stay blank. Importing it leaves `ui.player` unimported."""
    import subprocess
    import sys

    code = "import sys, serve; print('ui.player' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "False"

