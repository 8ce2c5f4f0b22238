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


def cache_key(model: BaseModel) -> str:
    """sha256 of the numerics version and the canonical JSON of `model` (arrays as digests)."""
    d = model.model_dump(mode="json", context={DIGEST: True})
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
