"""Formulas of 1-D targets (`FunctionData.formula`): parsed once by `simpleeval` (an AST
evaluator with a whitelist: never Python's `eval`), then evaluated point by point.

The language: numbers, the variable x, the constants pi and e, + − * / ** % and parentheses,
and the functions relu, abs, sign, sin, cos, tan, tanh, sigmoid, exp, log, sqrt, min, max.
Nothing else resolves: a name, an attribute, a string or a call outside the list is an error
naming it. A value that is not a finite real number at some x is an error too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import simpleeval


def _relu(u: float) -> float:
    return u if u > 0.0 else 0.0


def _sign(u: float) -> float:
    return 1.0 if u > 0.0 else (-1.0 if u < 0.0 else 0.0)


def _sigmoid(u: float) -> float:
    if u >= 0.0:
        return 1.0 / (1.0 + math.exp(-u))
    e = math.exp(u)
    return e / (1.0 + e)


FUNCTIONS: dict[str, Callable[..., float]] = {
    "relu": _relu, "abs": abs, "sign": _sign, "sin": math.sin, "cos": math.cos,
    "tan": math.tan, "tanh": math.tanh, "sigmoid": _sigmoid, "exp": math.exp, "log": math.log,
    "sqrt": math.sqrt, "min": min, "max": max,
}
CONSTANTS = {"pi": math.pi, "e": math.e}


class FormulaError(ValueError):
    """A formula that cannot be read or evaluated; the message says why, in plain words."""


@dataclass(frozen=True)
class Formula:
    """A parsed formula f(x)."""

    text: str
    parsed: Any

    def __call__(self, xs: Iterable[float]) -> list[float]:
        """f at each x (floats); FormulaError when a value is not a finite real number."""
        out = []
        ev = simpleeval.SimpleEval(functions=FUNCTIONS)
        for x in xs:
            ev.names = {**CONSTANTS, "x": float(x)}
            try:
                v = ev.eval(self.text, previously_parsed=self.parsed)
            except simpleeval.NameNotDefined as e:
                raise FormulaError(f"has an unknown name {e.name!r}: use x, pi, e") from None
            except simpleeval.FunctionNotDefined as e:
                raise FormulaError(f"has an unknown function {e.func_name!r}: use "
                                   + ", ".join(FUNCTIONS)) from None
            except simpleeval.InvalidExpression as e:
                raise FormulaError(f"uses something a formula may not ({e})") from None
            except (ArithmeticError, ValueError, TypeError) as e:
                raise FormulaError(f"cannot be evaluated at x = {x:g} ({e})") from None
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise FormulaError(f"gives {v!r} at x = {x:g}, not a finite number")
            out.append(float(v))
        return out


def compile_formula(text: str) -> Formula:
    """Parse `text` (FormulaError with a plain message when it is not a formula)."""
    ev = simpleeval.SimpleEval(functions=FUNCTIONS)
    try:
        parsed = ev.parse(text)
    except SyntaxError as e:
        raise FormulaError(f"is not a formula ({e.msg})") from None
    except (ValueError, TypeError, RecursionError, MemoryError) as e:
        raise FormulaError(f"is not a formula ({e})") from None
    return Formula(text, parsed)


def formula_values(text: str, xs: Iterable[float]) -> list[float]:
    """f(x) for each x of a formula's text (FormulaError when it cannot be)."""
    return compile_formula(text)(xs)
