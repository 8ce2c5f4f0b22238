"""Docstrings and comments name files that exist: every repository path a docstring or a
comment of the project's code names (`dynamics/phases.py`, `index.html`, `ARCHITECTURE.md`) is
a file or folder of the checkout, found from the root, beside the file that names it, or as
the tail of a tracked path (`papers/wang_ma.py`); a short allow-list keeps the deliberate
non-paths (another project's file, a file the code writes)."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PATH = re.compile(r"(?<![\w/.$*-])((?:\.\./|\./)?(?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*"
                  r"\.(?:py|html|js|css|md|toml|txt|sh|json|ipynb|cfg|ya?ml|npz|csv|parquet))"
                  r"(?![\w/(])")
"""A file path: folders, a name and a known extension, not part of a longer word or a call
(`app.py` yes; `fig.to_html(`, `x.json()` no)."""

ALLOWED = {
    "Plotly.js", "plotly.js", "plotly.py",  # the libraries, by their names
    "pkg/file.py",  # a placeholder in an example of py-spy's frame names
    "runtime/state/query_params.py",  # Streamlit's source file the limits come from
    "rk.py", "integrate/_ivp/rk.py",  # SciPy's Runge–Kutta module, whose names gf.py follows
}
"""Names that are deliberately not this repository's files."""

WRITTEN = re.compile(r"(^|/)(reports|runs|out|results|sweeps?|cache|\.cache)/|"
                     r"\{|<|\*|^[\w-]+\.(npz|csv|parquet|json)$")
"""Paths the code writes or reads at run time (outputs, caches, data files named by pattern):
not checked."""


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [p for p in out.splitlines() if p]


def _texts(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every docstring and comment of a Python or JavaScript file."""
    src = path.read_text(encoding="utf-8")
    out: list[tuple[int, str]] = []
    if not PATH.search(src):  # nothing path-like anywhere in the file
        return out
    if path.suffix == ".py":
        todo: list[ast.AST] = [ast.parse(src)]
        while todo:  # statement lists only: docstrings, and the strings documenting a name
            node = todo.pop()
            for field in ("body", "orelse", "finalbody", "handlers"):
                for stmt in getattr(node, field, None) or ():
                    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                            and isinstance(stmt.value.value, str)):
                        out.append((stmt.lineno, stmt.value.value))
                    elif isinstance(stmt, ast.stmt | ast.excepthandler):
                        todo.append(stmt)
        if any("#" in line and PATH.search(line) for line in src.splitlines()):
            for tok in tokenize.generate_tokens(io.StringIO(src).readline):
                if tok.type == tokenize.COMMENT:
                    out.append((tok.start[0], tok.string))
    else:  # JavaScript: // and /* */ comments
        for m in re.finditer(r"/\*.*?\*/|(?<![:\\\w'\"])//[^\n]*", src, re.S):
            out.append((src.count("\n", 0, m.start()) + 1, m.group()))
    return out


def _exists(name: str, here: Path, tails: set[str]) -> bool:
    clean = name.removeprefix("./")
    if (ROOT / clean).exists() or (here.parent / name).resolve().exists():
        return True
    return clean in tails


def missing_paths(files: list[Path]) -> list[str]:
    """`file:line: name` for every path named in a docstring or comment that is not here."""
    tracked = set(_tracked())
    tails = {"/".join(p.split("/")[i:]) for p in tracked for i in range(p.count("/") + 1)}
    tails |= {"/".join(p.split("/")[i:j]) for p in tracked
              for i in range(p.count("/") + 1) for j in range(i + 1, p.count("/") + 1)}
    bad = []
    for here in files:
        rel = here.relative_to(ROOT).as_posix() if here.is_relative_to(ROOT) else here.name
        for line, text in _texts(here):
            for m in PATH.finditer(text):
                name = m.group(1)
                if name in ALLOWED or WRITTEN.search(name):
                    continue
                if not _exists(name, here, tails):
                    bad.append(f"{rel}:{line}: {name}")
    return bad


def _code_files() -> list[Path]:
    return [ROOT / p for p in _tracked()
            if (p.endswith(".py") or (p.endswith(".js") and "/vendor/" not in p))
            and (ROOT / p).is_file()]


def test_every_file_a_docstring_or_comment_names_exists() -> None:
    bad = missing_paths(_code_files())
    assert not bad, "named in a docstring or comment, not in the repository:\n" + "\n".join(bad)


def test_the_check_finds_a_missing_file(tmp_path: Path) -> None:
    """A docstring naming an absent file, a comment naming one, and a present one."""
    probe = tmp_path / "probe.py"
    probe.write_text('"""See DESIGN.md and dynamics/phases.py."""\n# also viz/nowhere.js\n',
                     encoding="utf-8")
    assert missing_paths([probe]) == ["probe.py:1: DESIGN.md", "probe.py:2: viz/nowhere.js"]
