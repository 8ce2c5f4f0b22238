"""Typed-in numbers without silent coercion, and validation messages a student can read.

A browser number field coerces what it cannot hold: an integer field reads "1e9" as 1, a value
below its minimum is refused without a word, "1e308" in a table's number cell loses its "e".
So the app's number fields are float fields with no bounds in the browser (`number_field`):
whatever is typed reaches the server, which checks it against a `Rule` and says, next to the
control, what is allowed and what was typed ("width m: at most 5,000 neurons on this server;
you typed 1e9"). Table cells are text cells parsed here (`parse_cell`), with one-based row
numbers. `friendly` rewrites the library's validation messages (dotted paths, zero-based
indices, environment-variable names) in the same words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

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


def number_field(label: str, key: str, rule: Rule, *, step: float = 1.0,
                 help: str | None = None, fmt: str = "%g") -> tuple[Any, str | None]:
    """A number field (session key `key`, seeded by the caller) that sends whatever is typed:
    a float field with no browser-side bounds and empty allowed. Returns (value, None) or
    (None, message) when `rule` rejects it; the caller shows the message next to it."""
    raw = st.number_input(label, value=None, key=key, step=float(step), format=fmt,
                          help=help, placeholder=rule.allowed())
    problem = rule.check(raw)
    return (None, problem) if problem else (rule.value(raw), None)


def parse_cell(raw: Any, rule: Rule, row: int) -> tuple[float | None, str | None]:
    """One table cell (text as typed) as a number, or a message naming its one-based `row`."""
    if isinstance(raw, float) and math.isnan(raw):
        raw = None
    problem = rule.check(raw if raw is None or isinstance(raw, str) else str(raw))
    if problem:
        return None, f"row {row + 1}, {problem}"
    return float(str(raw).strip()), None


# ----------------------------------------------------------------------------- messages
_ENV = re.compile(r"\s*\((?:the server's )?[a-z_.]*,?\s*EAE_[A-Z_]+\)")
_GOT = re.compile(r"\s*\(got (.*)\)$")
_INDEX = re.compile(r"^(.*)\[(\d+)\]$")


def plain(msg: str) -> str:
    """A library message with server limits named as such, not by environment variable."""
    return re.sub(r"EAE_[A-Z_]+", "a server limit", _ENV.sub(" on this server", msg))


def friendly(path: str, msg: str, labels: Mapping[str, str]) -> str:
    """A library message about `path` in the words of the page: the control's label (one-based
    row for a table cell), server limits instead of environment variables, dotted paths inside
    the message replaced by labels, "(got x)" as "you typed x"."""
    m = _INDEX.match(path)
    if m and m[1] in labels:
        name = f"row {int(m[2]) + 1}, {labels[m[1]]}"
    else:
        name = labels.get(path) or labels.get(path.rsplit(".", 1)[0]) or "settings"
    text = _ENV.sub(" on this server", msg)
    got = _GOT.search(text)
    if got:
        value = got[1]
        typed = "nothing" if value in ("None", "''") else literal(value, 40)
        text = _GOT.sub("", text) + f"; you typed {typed}"
    for p in sorted(labels, key=len, reverse=True):  # longest first: data.n before data
        text = re.sub(rf"(?<![\w.]){re.escape(p)}(?![\w\[])", labels[p], text)
    text = re.sub(r"EAE_[A-Z_]+", "a server limit", text)
    return f"{name}: {text}"


__all__ = ["Rule", "friendly", "number_field", "parse_cell", "plain", "shown"]
