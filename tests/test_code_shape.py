"""Thin pages, short functions: no function in app_pages/, viz/ or ui/ is longer than
MAX_LINES lines (its `def` line to its last line, nested functions counted inside their
parent too) or takes more than MAX_PARAMS parameters (positional and keyword-only, `self`
and `cls` not counted; what travels together goes in a record). A function that may stay
longer is listed in EXEMPT with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app_pages", "viz", "ui")
MAX_LINES = 80
MAX_PARAMS = 8
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


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Its parameters, positional-only, positional and keyword-only (not *args, **kwargs,
    self or cls)."""
    a = fn.args
    return sum(1 for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)
               if p.arg not in ("self", "cls"))


def many_params(root: Path = ROOT, limit: int = MAX_PARAMS) -> list[str]:
    """`file:function (line): N parameters` of every function taking over `limit`."""
    out = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) \
                        and _params(n) > limit:
                    out.append(f"{rel}:{n.name} (line {n.lineno}): {_params(n)} parameters")
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


def test_no_function_takes_more_than_max_params() -> None:
    assert many_params() == []


def test_the_check_sees_too_many_params(tmp_path: Path) -> None:
    """The check can fail: a method of MAX_PARAMS + 1 parameters besides `self` (keyword-only
    ones counted) in ui/ is reported; a function of MAX_PARAMS is not."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    names = [f"p{i}" for i in range(MAX_PARAMS + 1)]
    (tmp_path / "ui" / "wide.py").write_text(
        f"class A:\n    def m(self, {', '.join(names[:-1])}, *, {names[-1]}):\n"
        "        return 0\n")
    (tmp_path / "viz" / "narrow.py").write_text(
        f"def f({', '.join(names[:-1])}, *args, **kw):\n    return 0\n")
    assert many_params(tmp_path) == [
        f"ui/wide.py:m (line 2): {MAX_PARAMS + 1} parameters"]
