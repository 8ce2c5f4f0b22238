"""The flat text form of settings: dotted paths (`model.width`) and values written as in a URL
or a `--set key=value` option.

A value is read guided by its field's type annotation (`parse_value`, the one reader of URL
text: configs, page views and page knobs all use it): `none`/`null`/empty for an optional
field, a comma list (`20,70,200`) or JSON brackets (`[[1,2],[3,4]]`) for tuples and arrays,
`true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`) for a bool, the text itself for a text
or `Literal` field, whole numbers, floats; text that fits no shape is kept as text so that
validation names the field. Values are written back the same way (`format_value`: floats by
their exact repr).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args, get_origin

import numpy as np
from pydantic import BaseModel

from .arrays import DIGEST, LISTS
from .errors import ConfigError

MAX_NESTING = 8  # brackets deeper than this in a URL or --set value are refused unparsed
URL_ARRAY_VALUES = 10_000  # values of an array written into a link at most (about 200,000 chars)
TRUE, FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts as one dict keyed by dotted paths (an array's digest, `is_digest`, stays one
    value)."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and not is_digest(v):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def set_path(d: dict[str, Any], key: str, value: Any) -> None:
    """Set the dotted path `key` in nested dicts `d`, making the dicts on the way."""
    parts = key.split(".")
    cur = d
    for p in parts[:-1]:
        nxt = cur.get(p)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[p] = nxt
        cur = nxt
    cur[parts[-1]] = value


def url_dict(model: BaseModel, *, arrays: bool = True) -> dict[str, Any]:
    """`model_dump` in JSON mode with arrays as nested lists (what a URL parameter holds), or
    with `arrays=False` as their digests (`is_digest`: shape and sha256, computed once per
    array and without the interpreter lock — an upload of 20,000 × 1,024 values as lists took
    seconds of the lock and 1.5 GB)."""
    return model.model_dump(mode="json", context={LISTS: True} if arrays else {DIGEST: True})


def is_digest(v: Any) -> bool:
    """Whether `v` is an array's digest as `url_dict(arrays=False)` writes it."""
    return isinstance(v, dict) and "sha256" in v and "shape" in v


def format_value(v: Any) -> str:
    """One JSON value as URL text (the inverse of `parse_value`)."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        if any(isinstance(x, list) for x in v):
            return json.dumps(v, separators=(",", ":"))
        return ",".join(format_value(x) for x in v)
    return repr(v) if isinstance(v, float) else str(v)


def parse_value(key: str, raw: str, ann: Any) -> Any:
    """Turn the URL text of field `key` (annotation `ann`, None if unknown) into a JSON value;
    unknown shapes are left as strings so that validation names the field."""
    text = raw.strip()
    s = repr(ann)
    if text.lower() in ("none", "null", "") and type(None) in get_args(ann):
        return None
    if _is(ann, bool):
        low = text.lower()
        return low in TRUE if low in TRUE or low in FALSE else raw
    if _is(ann, str) or _literal_of_text(ann):
        return raw
    if "tuple" in s or ann is np.ndarray:
        if text.startswith("["):
            depth = _nesting(text)
            if depth > MAX_NESTING:
                raise ConfigError([(key, f"is nested {depth} levels deep; give a list of "
                                    "numbers such as 1,2,3 or, for a table, [[1,2],[3,4]]")])
            try:
                return json.loads(text)
            except (ValueError, RecursionError):
                return raw
        if text == "":
            return []
        return [_scalar(x) for x in text.split(",")]
    value = _scalar(text)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63 and _is_int(ann):
        return int(value)  # 1e9 for a whole-number field: let the range check speak
    return value


def _nesting(text: str) -> int:
    """Deepest bracket nesting in `text` (one linear pass, no recursion)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _is(ann: Any, t: type) -> bool:
    """Whether `ann` is the plain type `t` (possibly optional or constrained)."""
    if ann is t:
        return True
    if get_origin(ann) is Annotated:
        return bool(get_args(ann)[0] is t)
    return any(_is(a, t) for a in get_args(ann)) and get_origin(ann) is not tuple


def _literal_of_text(ann: Any) -> bool:
    """Whether `ann` is (or optionally is) a `Literal` of text values."""
    if get_origin(ann) is Literal:
        return all(isinstance(v, str) for v in get_args(ann))
    return get_origin(ann) is not tuple and any(_literal_of_text(a) for a in get_args(ann))


def _is_int(ann: Any) -> bool:
    """Whether a field annotation is a whole number (possibly optional or constrained)."""
    if ann is int:
        return True
    return any(a is int or (get_origin(a) is Annotated and get_args(a)[0] is int)
               for a in get_args(ann))


def _scalar(text: str) -> Any:
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return t
