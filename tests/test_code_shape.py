"""Thin pages, short functions: no function in app_pages/, viz/ or ui/ is longer than
MAX_LINES lines (its `def` line to its last line, nested functions counted inside their
parent too). A function that may stay longer is listed in EXEMPT with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app_pages", "viz", "ui")
MAX_LINES = 80
# "file:function" -> why it may be longer (none today; a pending move names its owner)
EXEMPT: dict[str, str] = {}


def _lengths(tree: ast.AST) -> list[tuple[str, int, int]]:
    """(name, first line, length) of every function in a module, nested ones included."""
    return [(n.name, n.lineno, n.end_lineno - n.lineno + 1) for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.end_lineno]


def long_functions(root: Path = ROOT, limit: int = MAX_LINES) -> list[str]:
    """`file:function (line): N lines` of every function over `limit` lines, not exempt."""
    out = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for name, line, n in _lengths(ast.parse(path.read_text(encoding="utf-8"))):
                if n > limit and f"{rel}:{name}" not in EXEMPT:
                    out.append(f"{rel}:{name} (line {line}): {n} lines")
    return out


def test_no_function_over_the_limit() -> None:
    assert long_functions() == []


def test_exemptions_are_still_needed() -> None:
    """An exemption whose function is gone or short again is dropped from the list."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for name, _line, n in _lengths(ast.parse(path.read_text(encoding="utf-8"))):
                found[f"{rel}:{name}"] = max(n, found.get(f"{rel}:{name}", 0))
    assert [k for k in EXEMPT if found.get(k, 0) <= MAX_LINES] == []


def test_the_check_sees_a_long_function(tmp_path: Path) -> None:
    """The check can fail: a function of MAX_LINES + 1 lines in a page is reported, one of
    MAX_LINES is not."""
    (tmp_path / "app_pages").mkdir()
    for package in PACKAGES[1:]:
        (tmp_path / package).mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES - 1))
    (tmp_path / "app_pages" / "long.py").write_text("def page():\n" + body + "    return x0\n")
    (tmp_path / "viz" / "short.py").write_text("def fig():\n" + body)
    assert long_functions(tmp_path) == [
        f"app_pages/long.py:page (line 1): {MAX_LINES + 1} lines"]
