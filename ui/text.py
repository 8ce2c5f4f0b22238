"""Showing user-supplied strings (URL keys and values, upload file names, preset names) safely.

Streamlit renders alerts, captions and markdown as Markdown: a parameter name such as
`[Session expired](https://evil.example)` would become a link, `![x](http://host/t.png)` an
image the browser fetches. Such strings are shown as inline code (`literal`), inside which
Markdown, HTML, autolinks and Streamlit's directives are not interpreted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_CHARS = 300  # a warning line, not a dump of whatever the link carried


def literal(text: object, limit: int = MAX_CHARS) -> str:
    """Markdown that shows `text` verbatim: an inline code span whose fence is longer than
    any run of backticks inside; whitespace (newlines too) collapsed to single spaces."""
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    if not s:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s[0] == "`" or s[-1] == "`" else ""
    return f"{fence}{pad}{s}{pad}{fence}"


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|>~<$:])")


def plain(text: object) -> str:
    """Markdown that shows `text` as plain prose (wrapping like text, unlike `literal`): every
    character Markdown, HTML or Streamlit's directives give a meaning is backslash-escaped, so
    "> 0" stays "> 0" (not a quote) and "[a](b)" stays text (not a link)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def bullets(items: Iterable[object]) -> str:
    """A Markdown list with every item shown verbatim."""
    return "\n".join(f"- {literal(x)}" for x in items)


def with_list(title: str, items: Iterable[object]) -> str:
    """`title` (trusted Markdown) followed by the items shown verbatim, for st.warning/st.error."""
    return f"{title}\n\n{bullets(items)}"


__all__ = ["bullets", "literal", "plain", "with_list"]
