"""What a number may be, in a student's words: `Rule` (bounds, whole or not, unit, why the
upper bound, what 0 stands for) checks a value and says what is allowed and what was typed
("width m: at most 5,000 neurons on this server; you typed 1e9"). Pure: the settings table
(`ui.settings`) builds its rows' rules with it, the number fields (`ui.inputs`) check with it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from .text import literal


def shown(v: float) -> str:
    """A number as a person would type it: 50, 0.25, 1e9, -5, 1e308."""
    if not math.isfinite(v):
        return str(v)
    if float(v).is_integer() and abs(v) < 1e7:
        return str(int(v))
    s = f"{v:.6g}"
    return re.sub(r"e([+-])0*(\d)", lambda m: "e" + ("-" if m[1] == "-" else "") + m[2], s)


def _count(v: float) -> str:
    """A bound in a message: thousands separators (5,000), else as typed."""
    if float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return shown(v)


@dataclass(frozen=True)
class Rule:
    """What a number field accepts. `what`: its name in messages (the control's label);
    `lo`/`hi`: bounds (exclusive when `lo_open`/`hi_open`); `unit`: what is counted
    ("neurons"); `hi_why`: why the upper bound ("on this server" for a server limit);
    `zero`: a meaning of 0 outside the bounds ("all images"), if 0 is allowed."""

    what: str
    lo: float | None = None
    hi: float | None = None
    integer: bool = False
    unit: str = ""
    lo_open: bool = False
    hi_open: bool = False
    hi_why: str = ""
    zero: str = ""

    def allowed(self) -> str:
        """The allowed values in words: "a whole number from 1 to 5,000"."""
        kind = "a whole number" if self.integer else "a number"
        u = f" {self.unit}" if self.unit else ""
        if self.lo is not None and self.hi is not None:
            if self.lo_open or self.hi_open:
                out = (f"{kind} {'above' if self.lo_open else 'from'} {_count(self.lo)} and "
                       f"{'below' if self.hi_open else 'up to'} {_count(self.hi)}{u}")
            else:
                out = f"{kind} from {_count(self.lo)} to {_count(self.hi)}{u}"
        elif self.lo is not None:
            out = f"{kind} {'above' if self.lo_open else 'of at least'} {_count(self.lo)}{u}"
        elif self.hi is not None:
            out = f"{kind} {'below' if self.hi_open else 'of at most'} {_count(self.hi)}{u}"
        else:
            out = kind
        return out + (f" (0: {self.zero})" if self.zero else "")

    def _unit(self, n: float) -> str:
        """" neurons", or " neuron" after exactly 1."""
        if not self.unit:
            return ""
        return " " + (self.unit[:-1] if n == 1 and self.unit.endswith("s") else self.unit)

    def check(self, v: Any) -> str | None:
        """None if `v` is allowed, else the message (with what was typed)."""
        w = self.what
        if v is None or (isinstance(v, str) and not v.strip()):
            return f"{w}: the field is empty or not a number; type {self.allowed()}."
        try:
            x = float(v)
        except (TypeError, ValueError):
            return f"{w}: {literal(v, 40)} is not a number; type {self.allowed()}."
        if not math.isfinite(x):
            return f"{w}: must be a finite number ({self.allowed()}); you typed {shown(x)}."
        if self.zero and x == 0:
            return None
        if self.integer and not x.is_integer():
            return f"{w}: must be a whole number ({self.allowed()}); you typed {shown(x)}."
        if self.lo is not None and (x <= self.lo if self.lo_open else x < self.lo):
            bound = "more than" if self.lo_open else "at least"
            return f"{w}: {bound} {_count(self.lo)}{self._unit(self.lo)}; you typed {shown(x)}."
        if self.hi is not None and (x >= self.hi if self.hi_open else x > self.hi):
            bound = "less than" if self.hi_open else "at most"
            u = self._unit(self.hi)
            why = f" {self.hi_why}" if self.hi_why else ""
            over = ", which is over the limit" if self.hi_why else ""
            return f"{w}: {bound} {_count(self.hi)}{u}{why}; you typed {shown(x)}{over}."
        return None

    def value(self, v: Any) -> Any:
        """The checked value in its type (int for whole-number rules)."""
        x = float(v)
        return int(x) if self.integer else x


__all__ = ["Rule", "shown"]
