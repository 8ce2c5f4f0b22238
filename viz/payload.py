"""A `Scene` as bytes for the browser player, and back (tests, exports).

Layout (little-endian): ``b"EAEP"``, u32 version, u32 n = length of the header, the header
(UTF-8 JSON), zero padding to a multiple of 8, then the arrays, each starting at a multiple
of 8 bytes. The header holds the scene — kind, panels, items (their arrays as references
``{"$a": name}``), layout, frames, meta, narrow layouts — and, per array, where it lies in the
binary part (byte offset, count, dtype, shape). The player reads it with one `DataView` and
typed-array views on the same buffer: no copy, no base64, no parsing of numbers from text.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import numpy as np

from .plotlyjs import bundle_for
from .scene import NUMPY, Frames, Panel, Scene

MAGIC = b"EAEP"
VERSION = 3
_DTYPE = {np.dtype(v).str.lstrip("<|="): k for k, v in NUMPY.items()}


def _pad(n: int) -> int:
    return (-n) % 8


def _clean(obj: Any) -> Any:
    """JSON-safe: numpy scalars as numbers, non-finite floats as null, tuples as lists."""
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if isinstance(obj, float | np.floating):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, np.integer | np.bool_):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return _clean(obj.tolist())
    return obj


def _scalar(obj: Any) -> Any:
    """JSON for the numpy values a header may hold (finite numbers; NaN raises ValueError)."""
    if isinstance(obj, np.integer | np.bool_):
        return obj.item()
    if isinstance(obj, np.floating):
        v = float(obj)
        if not math.isfinite(v):
            raise ValueError("not finite")
        return v
    if isinstance(obj, np.ndarray | tuple):
        return _clean(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON")


def encode(scene: Scene, meta: dict[str, Any] | None = None) -> bytes:
    """The payload of `scene` (see the module docstring); `meta` is added to the header's."""
    blobs: list[bytes] = []
    pos = 0
    arrays: dict[str, dict[str, Any]] = {}
    for name, arr in scene.arrays.items():
        b = arr.tobytes()
        arrays[name] = {"offset": pos, "count": int(arr.size),
                        "dtype": _DTYPE[arr.dtype.str.lstrip("<|=")], "shape": list(arr.shape)}
        blobs.append(b + b"\0" * _pad(len(b)))
        pos += len(b) + _pad(len(b))
    header = {
        "kind": scene.kind,
        "panels": [{"x": p.x, "y": p.y, "dx": list(p.domain_x), "dy": list(p.domain_y),
                    "xaxis": p.xaxis, "yaxis": p.yaxis} for p in scene.panels],
        "items": scene.items,
        "layout": scene.layout,
        "frames": scene.frames.as_json(),
        "meta": {**scene.meta, **(meta or {})},
        "narrow": [{"below_px": int(w), **upd} for w, upd in scene.narrow],
        "bundle": bundle_for(scene.trace_types()),
        "arrays": arrays,
    }
    try:  # most headers are plain JSON already; a NaN or a numpy value takes the slow walk
        text = json.dumps(header, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                          default=_scalar)
    except ValueError:
        text = json.dumps(_clean(header), separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)
    head = text.encode()
    pre = MAGIC + struct.pack("<II", VERSION, len(head)) + head
    return pre + b"\0" * _pad(len(pre)) + b"".join(blobs)


def header_of(data: bytes) -> dict[str, Any]:
    """A payload's header (JSON data); ValueError for anything that is not a payload of this
    version."""
    if len(data) < 12 or data[:4] != MAGIC:
        raise ValueError("not a figure payload")
    version, n = struct.unpack("<II", data[4:12])
    if version != VERSION:
        raise ValueError(f"payload version {version}, expected {VERSION}")
    head = json.loads(data[12:12 + n].decode())
    if not isinstance(head, dict):
        raise ValueError("not a figure payload")
    return head


def decode(data: bytes) -> Scene:
    """The `Scene` a payload holds (its arrays as read-only views on `data`)."""
    head = header_of(data)
    n = struct.unpack("<I", data[8:12])[0]
    start = 12 + n + _pad(12 + n)
    arrays = {name: np.frombuffer(data, dtype=NUMPY[r["dtype"]], count=r["count"],
                                  offset=start + r["offset"]).reshape(r["shape"])
              for name, r in head["arrays"].items()}
    fr = head["frames"]
    frames = Frames(fr["n"], tuple(fr["labels"]), tuple(fr["captions"]), fr["ms"], fr["start"],
                    fr["redraw"])
    panels = [Panel(p["x"], p["y"], tuple(p["dx"]), tuple(p["dy"]), p["xaxis"], p["yaxis"])
              for p in head["panels"]]
    narrow = [(int(v.pop("below_px")), v) for v in head.get("narrow", [])]
    return Scene(head["kind"], panels, head["items"], head["layout"], arrays, frames,
                 head.get("meta", {}), narrow)


def bundle_of_payload(data: bytes) -> str:
    """The Plotly.js bundle that draws a payload ("full" for bytes that are not a payload)."""
    try:
        return str(header_of(data).get("bundle") or "full")
    except ValueError:
        return "full"


def design_height_of(data: bytes) -> int | None:
    """The height a payload's figure was laid out for, read from the header alone."""
    try:
        lay = header_of(data).get("layout", {})
    except ValueError:
        return None
    meta = lay.get("meta") if isinstance(lay.get("meta"), dict) else {}
    h = meta.get("design_height") or lay.get("height")
    return int(h) if h else None


__all__ = ["MAGIC", "VERSION", "bundle_of_payload", "decode", "design_height_of", "encode",
           "header_of"]
