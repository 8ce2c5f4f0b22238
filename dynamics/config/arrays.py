"""Uploaded data inside a config: read-only float64 NumPy arrays, validated strictly and
encoded exactly.

Three forms, chosen by the serialisation context:
- JSON (default): ``{"dtype": "<f8", "shape": [n, d], "zlib_base64": ...}``, the little-endian
  float64 bytes deflated and base64-encoded (exact, about the size of the uploaded file);
- digest (`DIGEST`, for the cache key): ``{"dtype", "shape", "sha256"}`` of those bytes;
- lists (`LISTS`, URL parameters): nested lists.
On input, nested lists, the JSON form and NumPy arrays (handed over as they are by
`hand_over_arrays`, under the `ARRAYS` validation context) are accepted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import weakref
import zlib
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import numpy as np
from pydantic import PlainSerializer, PlainValidator, SerializationInfo, ValidationInfo
from pydantic_core import PydanticCustomError

from ..limits import get_limits

ARRAYS = "eae_arrays"  # validation context: arrays handed over by `Config.from_dict`
DIGEST = "eae_digest"  # serialisation context: arrays as digests (for the cache key)
LISTS = "eae_lists"  # serialisation context: arrays as nested lists (URL parameters)


class _ArrayMemo:
    """Per-array memo of the sha256 digest and the JSON encoding. Arrays held by configs are
    read-only and never change, so both are computed at most once per array object."""

    def __init__(self) -> None:
        self._items: dict[int, dict[str, Any]] = {}

    def get(self, arr: np.ndarray, what: str, make: Callable[[np.ndarray], Any]) -> Any:
        slot = self._items.get(id(arr))
        if slot is None:
            slot = self._items[id(arr)] = {}
            weakref.finalize(arr, self._items.pop, id(arr), None)
        if what not in slot:
            slot[what] = make(arr)
        return slot[what]


_MEMO = _ArrayMemo()


def _bytes_le(arr: np.ndarray) -> memoryview:
    """The array's values as little-endian float64 bytes (no copy on little-endian hosts;
    flattened first, as a memoryview of an empty table cannot be cast)."""
    return np.ascontiguousarray(arr, dtype="<f8").reshape(-1).data.cast("B")


def array_digest(arr: np.ndarray) -> str:
    """sha256 of shape and little-endian float64 bytes: what the cache key sees of an array."""
    def make(a: np.ndarray) -> str:
        h = hashlib.sha256(f"<f8{tuple(a.shape)}".encode())
        h.update(_bytes_le(a))
        return h.hexdigest()
    return str(_MEMO.get(arr, "digest", make))


def same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes and bits."""
    return a is b or (a.shape == b.shape and array_digest(a) == array_digest(b))


def frozen(rows: Any) -> np.ndarray:
    """A read-only float64 array of `rows`."""
    arr = np.array(rows, dtype=np.float64)
    arr.flags.writeable = False
    return arr


def _encode_array(arr: np.ndarray, info: SerializationInfo) -> Any:
    ctx = info.context or {}
    if ctx.get(LISTS):
        return arr.tolist()
    if ctx.get(DIGEST):
        return {"dtype": "<f8", "shape": list(arr.shape), "sha256": array_digest(arr)}

    def make(a: np.ndarray) -> dict[str, Any]:
        packed = base64.b64encode(zlib.compress(_bytes_le(a), 1)).decode("ascii")
        return {"dtype": "<f8", "shape": list(a.shape), "zlib_base64": packed}
    return dict(_MEMO.get(arr, "json", make))


def _array_error(msg: str) -> PydanticCustomError:
    return PydanticCustomError("array_invalid", msg)


def _immutable(arr: np.ndarray) -> bool:
    """Whether no one can change these values: read-only all the way down to the memory."""
    base: Any = arr
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return False
        if base.base is None:
            return True
        base = base.base
    return isinstance(base, bytes)


def _decode_array(d: Mapping[str, Any], ndim: int) -> np.ndarray:
    if set(d) != {"dtype", "shape", "zlib_base64"} or d["dtype"] != "<f8":
        raise _array_error('must be a list of numbers, or {"dtype": "<f8", "shape": [...], '
                           '"zlib_base64": "..."} as written by this tool')
    shape = d["shape"]
    if (not isinstance(shape, list) or len(shape) != ndim
            or not all(type(k) is int and k >= 0 for k in shape)):
        raise _array_error(f"shape must be a list of {ndim} whole numbers")
    lim = get_limits()
    size = math.prod(shape)
    if size > max(lim.max_points, 1) * max(lim.max_dim + 1, 1):
        raise _array_error(f"holds {size:,} values, more than the limits allow ("
                           f"{lim.max_points} points × {lim.max_dim} dimensions)")
    out = np.empty(size, dtype="<f8")
    view, pos = out.data.cast("B"), 0
    try:  # inflate in 16 MB pieces straight into `out`: peak memory is the array itself
        z = zlib.decompressobj()
        pending = base64.b64decode(str(d["zlib_base64"]), validate=True)
        while not z.eof:
            piece = z.decompress(pending, 1 << 24)
            pending = z.unconsumed_tail
            if pos + len(piece) > len(view):
                raise _array_error("its encoded values do not match its shape")
            view[pos:pos + len(piece)] = piece
            pos += len(piece)
            if not piece and not pending:
                break
    except (binascii.Error, zlib.error):
        raise _array_error("its encoded values are damaged") from None
    if pos != len(view) or not z.eof:
        raise _array_error("its encoded values do not match its shape")
    out.flags.writeable = False
    return out.reshape(shape)


def _from_lists(value: Any, ndim: int) -> np.ndarray:
    """A strict float array from (nested) lists: numbers only (no strings, no booleans)."""
    rows = list(value) if ndim == 2 else [value]
    if ndim == 2 and not rows:
        return np.zeros((0, 0))
    widths = set()
    for i, row in enumerate(rows):
        if not isinstance(row, list | tuple):
            raise _array_error(f"row {i} must be a list of numbers (got {_short(row)})")
        widths.add(len(row))
        for j, v in enumerate(row):
            if type(v) not in (int, float) and not isinstance(v, np.floating | np.integer):
                where = f"[{i}][{j}]" if ndim == 2 else f"[{j}]"
                raise _array_error(f"entry {where} must be a number (got {_short(v)})")
    if len(widths) > 1:
        raise _array_error(f"rows of X have different lengths: {sorted(widths)[:10]}; give "
                           "every row the same number of columns")
    arr = np.array(rows, dtype=np.float64)
    return arr if ndim == 2 else arr.reshape(-1)


def _short(v: Any) -> str:
    shown = repr(v)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _to_array(ndim: int) -> Callable[[Any, ValidationInfo], np.ndarray]:
    def validate(value: Any, info: ValidationInfo) -> np.ndarray:
        if isinstance(value, dict) and set(value) == {"__array__"}:
            held = (info.context or {}).get(ARRAYS)
            idx = value["__array__"]
            if held is None or type(idx) is not int or not 0 <= idx < len(held):
                raise _array_error("must be a list of numbers")
            value = held[idx]
        if isinstance(value, np.ndarray):
            arr = value
            if arr.dtype.kind not in "iuf":
                raise _array_error(f"must hold numbers, not values of type {arr.dtype}")
        elif isinstance(value, dict):
            arr = _decode_array(value, ndim)
        elif isinstance(value, list | tuple):
            arr = _from_lists(value, ndim)
        else:
            raise _array_error(f"must be a list of numbers (got {_short(value)})")
        if arr.ndim != ndim:
            raise _array_error(f"must be {'a table (rows × columns)' if ndim == 2 else 'a list'}"
                               f" of numbers; got an array of shape {arr.shape}")
        if not (arr.dtype == np.float64 and arr.flags.c_contiguous and _immutable(arr)):
            arr = np.array(arr, dtype=np.float64, order="C")  # our own copy
            arr.flags.writeable = False
        if arr.size:
            bad = ~np.isfinite(arr)
            if bad.any():
                where = tuple(int(i) for i in np.argwhere(bad)[0])
                raise _array_error(f"entry {list(where)} must be a finite number (got "
                                   f"{arr[where]!r}); {int(bad.sum())} entries are NaN or "
                                   "infinite")
        return arr
    return validate


FloatMatrix = Annotated[np.ndarray, PlainValidator(_to_array(2)),
                        PlainSerializer(_encode_array, when_used="json")]
FloatVector = Annotated[np.ndarray, PlainValidator(_to_array(1)),
                        PlainSerializer(_encode_array, when_used="json")]


def hand_over_arrays(d: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[np.ndarray]]:
    """Array data's NumPy arrays are passed to validation as they are (not as JSON lists):
    they are replaced by placeholders ``{"__array__": i}`` in a shallow copy of `d`."""
    data = d.get("data") if isinstance(d, Mapping) else None
    if not isinstance(data, Mapping) or data.get("kind") != "array":
        return d, []
    arrays: list[np.ndarray] = []
    new_data = dict(data)
    for name in ("X", "y"):
        v = new_data.get(name)
        if isinstance(v, np.ndarray):
            new_data[name] = {"__array__": len(arrays)}
            arrays.append(v)
    return ({**d, "data": new_data}, arrays) if arrays else (d, [])
