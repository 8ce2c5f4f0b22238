"""The canonical JSON of a configuration and its cache key.

Canonical JSON: sorted keys, no spaces, the shortest exact float repr (Python's `repr`), arrays
in their exact encoded form. The cache key is the sha256 of `NUMERICS_VERSION`, a NUL byte and
that JSON with each array standing as the sha256 of its bytes (so hashing an upload reads it
once and copies nothing). Raise `NUMERICS_VERSION` whenever the same configuration could give
different numbers: every cached result then becomes a miss.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel

from .arrays import DIGEST

NUMERICS_VERSION = "5"  # 3: no fast-math, GD blocks fixed by size; 4: gf chunk-independent;
# 5: teacher data redrawn at most `data.teacher_tries(n, d)` times (fewer for large n·d)


def canonical_json(d: Any) -> str:
    """`d` (JSON-ready) as canonical JSON text."""
    return json.dumps(d, sort_keys=True, separators=(",", ":"))


#: Fields added after NUMERICS_VERSION 5 with defaults that change nothing: left out of the
#: cache key while at those defaults, so every earlier configuration keeps its key (and its
#: cached runs). (section, field, data kind or None, default).
LATER_DEFAULTS: tuple[tuple[str, str, str | None, Any], ...] = (
    ("model", "output_power", None, 0.0),
    ("init", "imbalance", None, 0.0), ("init", "a_power", None, 0.0),
    ("init", "w_power", None, 0.0), ("init", "mirror", None, False),
    ("integrator", "lr_w", None, 1.0), ("integrator", "lr_a", None, 1.0),
    ("data", "angle_deg", "generated", 90.0), ("data", "noise", "generated", 0.0),
    ("data", "teacher_width", "generated", 3),
)


def _without_later_defaults(d: Any) -> Any:
    """A config dict without the LATER_DEFAULTS fields that hold their defaults."""
    if not isinstance(d, dict):
        return d
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in d.items()}
    for section, name, kind, default in LATER_DEFAULTS:
        sec = out.get(section)
        if not isinstance(sec, dict) or (kind is not None and sec.get("kind") != kind):
            continue
        if name in sec and sec[name] == default and type(sec[name]) is type(default):
            del sec[name]
    return out


def cache_key(model: BaseModel) -> str:
    """sha256 of the numerics version and the canonical JSON of `model` (arrays as digests;
    the fields of LATER_DEFAULTS left out while at their defaults)."""
    d = _without_later_defaults(model.model_dump(mode="json", context={DIGEST: True}))
    h = hashlib.sha256()
    h.update(NUMERICS_VERSION.encode())
    h.update(b"\0")
    h.update(canonical_json(d).encode())
    return h.hexdigest()


def json_default(o: Any) -> Any:
    """`json.dumps` fallback for JSON-like input: NumPy values and arrays as lists, tuples as
    lists; anything else is not JSON-like."""
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, tuple):
        return list(o)
    raise TypeError(f"{type(o).__name__} is not serialisable")
