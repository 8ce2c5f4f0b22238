"""Compact trace arrays: numpy → plotly.js typed-array specs, and back.

A typed-array spec {"dtype", "bdata"[, "shape"]} is base64 of the raw bytes: compact JSON, and
plotly.py passes it through without its (slow) per-array validation. Every figure uses these
for its long arrays; `as_array` decodes them (tests, the PNG export).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence

import numpy as np

_SHORT = {"float32": "f4", "float64": "f8", "uint8": "u1", "int32": "i4", "uint16": "u2"}


def typed(x: np.ndarray | Sequence[float], dtype: str = "float32") -> dict | list:
    """A plotly.js typed-array spec of `x` as `dtype` ([] for an empty array)."""
    with np.errstate(over="ignore", invalid="ignore"):  # diverged runs: ±inf is fine to draw
        v = np.ascontiguousarray(np.asarray(x, dtype=dtype))
    if v.size == 0:
        return []
    spec: dict = {"dtype": _SHORT[dtype], "bdata": base64.b64encode(v.tobytes()).decode("ascii")}
    if v.ndim > 1:
        spec["shape"] = ", ".join(str(k) for k in v.shape)
    return spec


def f32(x: np.ndarray | Sequence[float]) -> dict | list:
    """`typed(x, "float32")`: enough for positions on screen."""
    return typed(x, "float32")


def f64(x: np.ndarray | Sequence[float]) -> dict | list:
    """`typed(x, "float64")`: for values read off on hover over many decades (loss)."""
    return typed(x, "float64")


def as_array(v: object) -> np.ndarray:
    """Decode a trace array of a figure (typed-array spec, list or array) to numpy."""
    if isinstance(v, dict) and "bdata" in v:
        inv = {s: k for k, s in _SHORT.items()}
        arr = np.frombuffer(base64.b64decode(v["bdata"]), dtype=inv[v["dtype"]])
        if "shape" in v:
            arr = arr.reshape([int(k) for k in str(v["shape"]).split(",")])
        return arr
    if v is None:
        return np.zeros(0)
    return np.asarray(v, dtype=float) if not isinstance(v, np.ndarray) else v


__all__ = ["as_array", "f32", "f64", "typed"]
