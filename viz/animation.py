"""An animated figure as data: a small validated Plotly figure (layout + the first frame) and,
beside it, the per-frame values of the traces that move, as arrays.

The browser player (`viz/player/player.js`) draws `figure` once and then, frame by frame,
replaces the moving attributes (`Track`s: neuron positions and sizes, the time cursors, the
frame caption, heatmap pixels…) — Plotly.js animates, Python does not loop over frames in
Plotly objects. `viz.payload` turns an `AnimatedFigure` into compact bytes (float32 where
the eye cannot tell), `viz.export` into an offline HTML page with the same player.

A figure builder fills frames as it always did — one list of trace updates per frame (dicts
such as ``{"x": array, "marker": {"size": array}}``, in the order of `traces`) — and calls
`Animation.from_frames`, which gathers every leaf attribute into one `Track`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .arrays import as_array

NUMERIC = ("f4", "f8", "u1", "i4")


@dataclass(frozen=True)
class Track:
    """One moving attribute of one trace: `trace` (index in the figure's data), `attr` (a
    Plotly attribute path, "x", "marker.size", "z"…) and its value at every frame.

    Numbers: `values` is one flat array of all frames' values, frame k being
    ``values[offsets[k]:offsets[k + 1]]`` (ragged: the number of points may change), reshaped
    to `shape` when given (a heatmap's z; rows of customdata, whose count may change: -1);
    NaN stands for a gap (None in Plotly).
    Text: `texts[k]` is frame k's list of strings (or one string)."""

    trace: int
    attr: str
    dtype: str
    values: np.ndarray | None = None
    offsets: np.ndarray | None = None
    shape: tuple[int, ...] | None = None
    texts: tuple[Any, ...] | None = None

    @property
    def n_frames(self) -> int:
        if self.texts is not None:
            return len(self.texts)
        assert self.offsets is not None
        return int(self.offsets.size - 1)

    def at(self, k: int) -> Any:
        """Frame k's value (an array, or text), as the player applies it."""
        if self.texts is not None:
            return self.texts[k]
        assert self.values is not None and self.offsets is not None
        v = self.values[int(self.offsets[k]):int(self.offsets[k + 1])]
        return v.reshape((-1, *self.shape[1:])) if self.shape is not None else v


@dataclass(frozen=True)
class Animation:
    """The frames of a figure: `labels[k]` names frame k under the slider ("t = 1.2·10⁻³"),
    `captions[k]` is the sentence shown under it (or empty), `frame_ms` the playing speed,
    `redraw` whether a frame needs a full redraw (heatmaps, bars), `start` the frame shown
    first."""

    labels: tuple[str, ...]
    tracks: tuple[Track, ...]
    frame_ms: int = 75
    redraw: bool = False
    captions: tuple[str, ...] = ()
    start: int = 0

    @property
    def n_frames(self) -> int:
        return len(self.labels)

    @classmethod
    def from_frames(cls, frames: Sequence[Sequence[Mapping[str, Any]]], traces: Sequence[int],
                    labels: Sequence[str], *, frame_ms: int = 75, redraw: bool = False,
                    captions: Sequence[str] = (), start: int = 0,
                    dtypes: Mapping[str, str] | None = None) -> Animation:
        """Tracks from per-frame trace updates: ``frames[k][i]`` updates trace ``traces[i]``
        at frame k (the same attributes at every frame). Numbers become float32 unless
        `dtypes` maps an attribute path to another ("f8" for values read on hover over many
        decades, "u1" for marker sizes)."""
        if len(frames) != len(labels):
            raise ValueError(f"{len(frames)} frames but {len(labels)} labels")
        if captions and len(captions) != len(frames):
            raise ValueError(f"{len(frames)} frames but {len(captions)} captions")
        dtypes = dict(dtypes or {})
        per: dict[tuple[int, str], list[Any]] = {}
        for frame in frames:
            if len(frame) != len(traces):
                raise ValueError("every frame must update the same traces")
            for i, update in enumerate(frame):
                for path, value in _leaves(update):
                    per.setdefault((int(traces[i]), path), []).append(value)
        tracks = [_track(trace, path, vals, dtypes.get(path, "f4"))
                  for (trace, path), vals in per.items()]
        for tr in tracks:
            if tr.n_frames != len(frames):
                raise ValueError(f"trace {tr.trace} {tr.attr}: not set at every frame")
        return cls(tuple(labels), tuple(tracks), int(frame_ms), bool(redraw), tuple(captions),
                   int(start))

    def with_captions(self, captions: Sequence[str]) -> Animation:
        """The same frames with one sentence per frame under the slider."""
        if len(captions) != self.n_frames:
            raise ValueError(f"{self.n_frames} frames but {len(captions)} captions")
        return Animation(self.labels, self.tracks, self.frame_ms, self.redraw,
                         tuple(captions), self.start)


@dataclass(frozen=True)
class AnimatedFigure:
    """What an animated figure builder returns: the `figure` (layout and the first frame's
    traces, small and validated) and its `animation`. `meta` is plain data about the figure
    (frames, neurons drawn, …) for pages and tests. `narrow` are layouts for narrow windows:
    (width_px, layout update) pairs, the player applying the first whose width its own width
    is below (e.g. Compare stacks its runs below 1400 px)."""

    figure: go.Figure
    animation: Animation
    meta: Mapping[str, Any] = field(default_factory=dict)
    narrow: tuple[tuple[int, Mapping[str, Any]], ...] = ()

    def frame_figure(self, k: int | None = None) -> go.Figure:
        """A static copy of the figure showing frame k (default: the last), e.g. for a PNG:
        no player controls."""
        k = self.animation.n_frames - 1 if k is None else int(k)
        fig = go.Figure(self.figure)
        for tr in self.animation.tracks:
            value = tr.at(k)
            if isinstance(value, np.ndarray):
                value = np.where(np.isfinite(value), value, None) if value.dtype.kind == "f" \
                    else value
            fig.data[tr.trace].update(_nested(tr.attr, value))
        return fig


def _leaves(update: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in update.items():
        if k == "type":
            continue
        path = f"{prefix}{k}"
        if isinstance(v, Mapping) and "bdata" not in v:
            out += _leaves(v, path + ".")
        else:
            out.append((path, v))
    return out


def _nested(path: str, value: Any) -> dict[str, Any]:
    head, _, rest = path.partition(".")
    return {head: _nested(rest, value) if rest else value}


def _is_text(v: Any) -> bool:
    if isinstance(v, str):
        return True
    if isinstance(v, (list, tuple)) and v and all(isinstance(s, str) for s in v):
        return True
    return False


def _as_numbers(v: Any) -> np.ndarray:
    if isinstance(v, Mapping) and "bdata" in v:
        return as_array(v).astype(float)
    if v is None:
        return np.zeros(0)
    arr = np.asarray(v, dtype=object) if isinstance(v, (list, tuple)) else np.asarray(v)
    if arr.dtype == object:
        arr = np.array([np.nan if x is None else x for x in arr.ravel()],
                       dtype=float).reshape(arr.shape)
    return np.asarray(arr, dtype=float)


def _track(trace: int, path: str, values: list[Any], dtype: str) -> Track:
    if all(_is_text(v) or (isinstance(v, (list, tuple)) and not v) for v in values) \
            and any(_is_text(v) for v in values):
        return Track(trace, path, "str",
                     texts=tuple(list(v) if isinstance(v, (list, tuple)) else v
                                 for v in values))
    arrays = [_as_numbers(v) for v in values]
    shape: tuple[int, ...] | None = None
    if any(a.ndim > 1 for a in arrays):
        inner = {a.shape[1:] for a in arrays if a.size}
        if len(inner) > 1 or any(a.ndim < 2 and a.size for a in arrays):
            raise ValueError(f"trace {trace} {path}: rows of one width at every frame")
        rows = {a.shape[0] for a in arrays}
        shape = ((rows.pop() if len(rows) == 1 else -1), *(inner.pop() if inner else (0,)))
    flat = [a.ravel() for a in arrays]
    offsets = np.zeros(len(flat) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([a.size for a in flat])
    np_dtype = {"f4": np.float32, "f8": np.float64, "u1": np.uint8, "i4": np.int32}[dtype]
    joined = np.concatenate(flat) if flat else np.zeros(0)
    with np.errstate(over="ignore", invalid="ignore"):
        vals = joined.astype(np_dtype) if dtype.startswith("f") else \
            np.clip(np.nan_to_num(joined), np.iinfo(np_dtype).min,
                    np.iinfo(np_dtype).max).astype(np_dtype)
    return Track(trace, path, dtype, values=vals, offsets=offsets, shape=shape)


__all__ = ["AnimatedFigure", "Animation", "Track"]
