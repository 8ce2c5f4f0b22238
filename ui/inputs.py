"""Typed-in numbers without silent coercion, and validation messages a student can read.

A browser number field coerces what it cannot hold: an integer field reads "1e9" as 1, a value
below its minimum is refused without a word, "1e308" in a table's number cell loses its "e".
So the app's number fields are float fields with no bounds in the browser (`number_field`):
whatever is typed reaches the server, which checks it against a `Rule` (`ui.rules`) and says,
next to the control, what is allowed and what was typed ("width m: at most 5,000 neurons on
this server; you typed 1e9"). Table cells are text cells parsed here (`parse_cell`), with
one-based row numbers. `friendly` rewrites the library's validation messages (dotted paths,
zero-based indices, environment-variable names) in the same words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import streamlit as st

from .rules import Rule, shown
from .text import literal


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
