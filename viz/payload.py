"""An `AnimatedFigure` as bytes for the browser player, and back (tests, exports).

Layout (little-endian): ``b"EAEP"``, u32 version, u32 n = length of the header, the header
(UTF-8 JSON), zero padding to a multiple of 8, then the arrays, each starting at a multiple
of 8 bytes. The header holds the Plotly figure — its long arrays (Plotly typed-array specs)
moved to the binary part and replaced by ``{"$array": {"offset", "count", "dtype"[, "shape"]}}``
— and, per `Track`, where its values and frame offsets lie in the binary part (byte offset,
count, dtype) or its texts. The player reads it with one `DataView` and typed-array views on
the same buffer: no copy, no base64, no parsing of numbers from text.
"""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import numpy as np
from plotly.utils import PlotlyJSONEncoder

from .animation import AnimatedFigure, Animation, Track
from .plotlyjs import bundle_of_figure

MAGIC = b"EAEP"
VERSION = 2
ARRAY = "$array"
_NP = {"f4": np.float32, "f8": np.float64, "u1": np.uint8, "i4": np.int32,
       "u2": np.uint16, "i2": np.int16, "i1": np.int8, "u4": np.uint32}


def _pad(n: int) -> int:
    return (-n) % 8


def encode(fig: AnimatedFigure, meta: dict[str, Any] | None = None) -> bytes:
    """The payload of `fig` (see the module docstring); `meta` is added to the header."""
    blobs: list[bytes] = []
    pos = 0

    def put(arr: np.ndarray) -> dict[str, int]:
        nonlocal pos
        b = np.ascontiguousarray(arr).tobytes()
        ref = {"offset": pos, "count": int(arr.size)}
        blobs.append(b + b"\0" * _pad(len(b)))
        pos += len(b) + _pad(len(b))
        return ref

    def lift(obj: Any) -> Any:
        """The figure's typed arrays into the binary part (base64 → raw bytes)."""
        if isinstance(obj, dict):
            if "bdata" in obj and "dtype" in obj:
                arr = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=obj["dtype"])
                ref: dict[str, Any] = {**put(arr), "dtype": obj["dtype"]}
                if "shape" in obj:
                    ref["shape"] = [int(k) for k in str(obj["shape"]).split(",")]
                return {ARRAY: ref}
            return {k: lift(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [lift(v) for v in obj]
        return obj

    anim = fig.animation
    tracks: list[dict[str, Any]] = []
    for tr in anim.tracks:
        entry: dict[str, Any] = {"trace": tr.trace, "attr": tr.attr, "dtype": tr.dtype}
        if tr.texts is not None:
            entry["texts"] = list(tr.texts)
        else:
            assert tr.values is not None and tr.offsets is not None
            entry["values"] = put(tr.values)
            entry["offsets"] = put(tr.offsets.astype(np.int32))
            if tr.shape is not None:
                entry["shape"] = list(tr.shape)
        tracks.append(entry)
    figure = fig.figure.to_plotly_json()
    figure["data"] = lift(figure.get("data", []))
    header = {
        "figure": figure,
        "frames": {"n": anim.n_frames, "labels": list(anim.labels),
                   "captions": list(anim.captions), "ms": anim.frame_ms,
                   "redraw": anim.redraw, "start": anim.start, "tracks": tracks},
        "meta": {**dict(fig.meta), **(meta or {})},
        "narrow": [{"below_px": int(w), "layout": dict(lay)} for w, lay in fig.narrow],
    }
    head = json.dumps(header, cls=PlotlyJSONEncoder, separators=(",", ":"),
                      ensure_ascii=False).encode()
    pre = MAGIC + struct.pack("<II", VERSION, len(head)) + head
    return pre + b"\0" * _pad(len(pre)) + b"".join(blobs)


def decode(data: bytes) -> tuple[dict[str, Any], Animation]:
    """(header, animation) of a payload: the header's figure (its arrays as Plotly typed-array
    specs again) and meta as JSON data, the tracks as arrays again. Raises ValueError for
    anything that is not a payload of this version."""
    if len(data) < 12 or data[:4] != MAGIC:
        raise ValueError("not a figure payload")
    version, n = struct.unpack("<II", data[4:12])
    if version != VERSION:
        raise ValueError(f"payload version {version}, expected {VERSION}")
    header = json.loads(data[12:12 + n].decode())
    start = 12 + n + _pad(12 + n)

    def restore(obj: Any) -> Any:
        if isinstance(obj, dict):
            if ARRAY in obj:
                ref = obj[ARRAY]
                arr = np.frombuffer(data, dtype=_NP[ref["dtype"]], count=ref["count"],
                                    offset=start + ref["offset"])
                spec: dict[str, Any] = {"dtype": ref["dtype"],
                                        "bdata": base64.b64encode(arr.tobytes()).decode()}
                if "shape" in ref:
                    spec["shape"] = ", ".join(str(k) for k in ref["shape"])
                return spec
            return {k: restore(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [restore(v) for v in obj]
        return obj

    header["figure"]["data"] = restore(header["figure"].get("data", []))
    fr = header["frames"]
    tracks = []
    for e in fr["tracks"]:
        if "texts" in e:
            tracks.append(Track(e["trace"], e["attr"], "str", texts=tuple(e["texts"])))
            continue
        dt = _NP[e["dtype"]]

        def view(ref: dict[str, int], dt: Any = dt) -> np.ndarray:
            return np.frombuffer(data, dtype=dt, count=ref["count"],
                                 offset=start + ref["offset"])

        tracks.append(Track(e["trace"], e["attr"], e["dtype"], values=view(e["values"]),
                            offsets=view(e["offsets"], np.int32).astype(np.int64),
                            shape=tuple(e["shape"]) if "shape" in e else None))
    anim = Animation(tuple(fr["labels"]), tuple(tracks), fr["ms"], fr["redraw"],
                     tuple(fr["captions"]), fr["start"])
    return header, anim


def to_animated(data: bytes) -> AnimatedFigure:
    """The `AnimatedFigure` a payload holds (for exports: HTML, PNG of a frame)."""
    import plotly.graph_objects as go

    header, anim = decode(data)
    narrow = tuple((int(n["below_px"]), n["layout"]) for n in header.get("narrow", []))
    return AnimatedFigure(go.Figure(header["figure"]), anim, dict(header.get("meta", {})),
                          narrow)


def _figure_of(data: bytes) -> dict[str, Any] | None:
    """A payload's figure JSON from its header alone (its arrays still references)."""
    if len(data) < 12 or data[:4] != MAGIC:
        return None
    _version, n = struct.unpack("<II", data[4:12])
    fig = json.loads(data[12:12 + n].decode())["figure"]
    return fig if isinstance(fig, dict) else None


def bundle_of_payload(data: bytes) -> str:
    """The Plotly.js bundle that draws a payload's figure (`viz.plotlyjs.bundle_of_figure`;
    "full" for bytes that are not a payload)."""
    fig = _figure_of(data)
    return "full" if fig is None else bundle_of_figure(fig)


def design_height_of(data: bytes) -> int | None:
    """The height a payload's figure was laid out for (its layout's meta, or its height),
    read from the header alone."""
    fig = _figure_of(data)
    if fig is None:
        return None
    lay = fig.get("layout", {})
    meta = lay.get("meta") if isinstance(lay.get("meta"), dict) else {}
    h = meta.get("design_height") or lay.get("height")
    return int(h) if h else None


__all__ = ["MAGIC", "VERSION", "bundle_of_payload", "decode", "design_height_of", "encode",
           "to_animated"]
