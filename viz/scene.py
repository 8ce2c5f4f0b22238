"""A figure as data for the browser player: panels, items, a layout, named arrays and frames.

The server describes, the browser composes. A `Scene` is what a figure builder returns: the
panels (subplots: axis names, domains and axis settings), the items drawn in them, the layout
around them (title, legend, margins, phase-strip shapes and labels), the run's arrays by name
(float32 where the eye cannot tell; sent once, in binary) and the frames (labels, captions,
speed). The player (`viz/player/scene.js`) turns it into Plotly traces and a layout, and every
frame into the few trace updates that change; `viz.payload` turns it into bytes. No Plotly
object is built or validated in Python: traces are plain dicts in Plotly's vocabulary, and
what is long is an array reference, ``{"$a": name}``.

Items (`Scene.items`, each drawn as a fixed number of traces, in order):

* ``trace`` — one static trace (a dict of Plotly trace properties); with ``tracks``, some of
  its attributes change per frame: ``{"attr": "text", "texts": [...]}`` (one value per
  frame) or ``{"attr": "x", "values": ref}`` whose array's first axis is the frame (frame k is
  ``values[k]``, reshaped to the array's trailing shape: a cursor's two x values, a heatmap's
  z).
* ``neurons`` — two traces (a_j ≥ 0, a_j < 0) of the neuron panel, composed per frame from
  ``u`` (frame × neuron × 2: the in-plane part of w_j/‖w_j‖, int16 = u·32767), ``norms``
  (row × column: ‖w_j‖), ``rows`` (frame → row of ``norms``), ``cols`` (neuron → column),
  ``sign`` (frame × neuron, or one row when no sign changes) and ``index`` (the neurons'
  numbers): radius r(‖w_j‖) by ``radius`` (normalised: ‖w_j‖ / max_k ‖w_k‖; log: R_MIN + (1 −
  R_MIN)(log₁₀‖w_j‖ − lo)/(hi − lo), clipped to [0, 1]), position u·r, marker size
  min + (max − min)·√(‖w_j‖ / max_k ‖w_k‖) rounded, NaN norms drawn at the centre with size
  min (`neuron_points` is the reference the browser is tested against).
* ``norms`` — two static traces (a_j > 0, a_j < 0 at the end) of per-neuron norm curves
  ‖w_j(t)‖ over ``t`` (display times), from the columns ``cols`` of ``norms`` (rows = times),
  one line per neuron with gaps between them; a zero norm is a gap (log axis).

Every item may say ``"swap": true``: the player updates its traces when it swaps one run of a
family for another while a control is dragged; the other traces, the axes, the annotations
and the shapes (the phase strip) are drawn once per run, when the drag rests.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

U_SCALE = 32767  # in-plane unit vectors as int16: u = stored / U_SCALE (3·10⁻⁵: invisible)
R_MIN = 0.08  # log radius: the smallest norm shown sits at this radius
ARRAY = "$a"
NUMPY = {"f4": np.float32, "f8": np.float64, "u1": np.uint8, "i1": np.int8, "i2": np.int16,
         "u2": np.uint16, "i4": np.int32, "u4": np.uint32}
N_TRACES = {"trace": 1, "neurons": 2, "norms": 2}  # traces each item kind is drawn as


def ref(name: str) -> dict[str, str]:
    """A reference to the scene's array `name` (resolved to a typed array by the player)."""
    return {ARRAY: name}


@dataclass(frozen=True)
class Panel:
    """One subplot: its axes' names ("x", "x2", …; "y", "y2", …), domains (fractions of the
    plot area) and Plotly axis properties (range, type, title, ticks…)."""

    x: str
    y: str
    domain_x: tuple[float, float]
    domain_y: tuple[float, float]
    xaxis: dict[str, Any] = field(default_factory=dict)
    yaxis: dict[str, Any] = field(default_factory=dict)

    @property
    def xlayout(self) -> str:
        """The layout key of the x axis ("xaxis", "xaxis2")."""
        return "xaxis" + self.x[1:]

    @property
    def ylayout(self) -> str:
        return "yaxis" + self.y[1:]


def grid(widths: Sequence[float], heights: Sequence[float], cells: Sequence[tuple[int, ...]],
         *, hspace: float, vspace: float) -> list[Panel]:
    """Panels on a grid (as Plotly's `make_subplots` lays them out): columns of relative
    `widths` separated by `hspace`, rows of relative `heights` (top row first) separated by
    `vspace`, both fractions of the plot area; `cells` are (row, col[, rowspan[, colspan]]),
    named "x"/"y", "x2"/"y2", … in their order."""
    ncol, nrow = len(widths), len(heights)
    aw = (1.0 - hspace * (ncol - 1)) / sum(widths)
    ah = (1.0 - vspace * (nrow - 1)) / sum(heights)
    cw = [w * aw for w in widths]
    rh = [h * ah for h in heights]
    out = []
    for i, cell in enumerate(cells):
        row, col = cell[0], cell[1]
        rs = cell[2] if len(cell) > 2 else 1
        cs = cell[3] if len(cell) > 3 else 1
        x0 = sum(cw[:col]) + col * hspace
        x1 = x0 + sum(cw[col:col + cs]) + (cs - 1) * hspace
        y1 = 1.0 - (sum(rh[:row]) + row * vspace)
        y0 = y1 - sum(rh[row:row + rs]) - (rs - 1) * vspace
        n = "" if i == 0 else str(i + 1)
        out.append(Panel(f"x{n}", f"y{n}", _unit(x0, x1), _unit(y0, y1)))
    return out


def narrowed(panel: Panel, plot_px: float, *, left_px: float = 0.0,
             right_px: float = 0.0) -> Panel:
    """`panel` with `left_px` and `right_px` taken off the left and right ends of its domain
    (a plot area `plot_px` wide): room for the labels beside it."""
    x0, x1 = panel.domain_x
    return replace(panel, domain_x=_unit(x0 + max(0.0, left_px) / plot_px,
                                         x1 - max(0.0, right_px) / plot_px))


def _unit(lo: float, hi: float) -> tuple[float, float]:
    """A domain inside [0, 1] (sums of fractions round a hair outside)."""
    return min(max(round(lo, 12), 0.0), 1.0), min(max(round(hi, 12), 0.0), 1.0)


def panel_title(panel: Panel, text: str, size: float, colour: str) -> dict[str, Any]:
    """A subplot title: an annotation centred above the panel (as `make_subplots` puts it)."""
    return {"text": text, "x": (panel.domain_x[0] + panel.domain_x[1]) / 2, "xref": "paper",
            "y": panel.domain_y[1], "yref": "paper", "xanchor": "center", "yanchor": "bottom",
            "showarrow": False, "font": {"size": size, "color": colour}}


@dataclass(frozen=True)
class Frames:
    """The animation: `n` frames, `labels[k]` under the slider ("t = 1.2·10⁻³"), `captions[k]`
    the sentence shown under it (or none), `ms` per frame when playing, `start` the frame
    shown first, `redraw` whether a frame needs a full redraw (heatmaps, bars)."""

    n: int
    labels: tuple[str, ...]
    captions: tuple[str, ...] = ()
    ms: int = 75
    start: int = 0
    redraw: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"n": self.n, "labels": list(self.labels), "captions": list(self.captions),
                "ms": self.ms, "start": self.start, "redraw": self.redraw}


@dataclass
class Scene:
    """A figure for the player (see the module docstring). `meta` is plain data about the
    figure (frames, neurons drawn, …) for pages and tests; `narrow` are layouts for narrow
    players: (width_px, {"layout": …, "panels": {axis layout key: domain update}}), the
    player applying the first whose width its own width is below."""

    kind: str
    panels: list[Panel] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    layout: dict[str, Any] = field(default_factory=dict)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    frames: Frames = field(default_factory=lambda: Frames(1, ("",)))
    meta: dict[str, Any] = field(default_factory=dict)
    narrow: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    # -- building
    def array(self, name: str, values: Any, dtype: str = "f4") -> dict[str, str]:
        """Store `values` as the array `name` (cast to `dtype`; ±inf and NaN kept for floats,
        integers clipped to their range) and return its reference."""
        np_dtype = NUMPY[dtype]
        with np.errstate(over="ignore", invalid="ignore"):
            a = np.asarray(values)
            if dtype[0] in "iu" and a.dtype.kind == "f":
                info = np.iinfo(np_dtype)
                a = np.clip(np.nan_to_num(a), info.min, info.max)
            self.arrays[name] = np.ascontiguousarray(a, dtype=np_dtype)
        return ref(name)

    def trace(self, panel: Panel | None, trace: dict[str, Any], *,
              tracks: Sequence[dict[str, Any]] = (), swap: bool = False) -> dict[str, Any]:
        """Add a static trace (Plotly properties) in `panel` (None: axes set in `trace`);
        returns the trace dict (still mutable: legends are capped after)."""
        t = dict(trace)
        if panel is not None:
            t["xaxis"], t["yaxis"] = panel.x, panel.y
        item: dict[str, Any] = {"kind": "trace", "trace": t}
        if tracks:
            item["tracks"] = list(tracks)
        if swap:
            item["swap"] = True
        self.items.append(item)
        return t

    def add(self, kind: str, panel: Panel, traces: Sequence[dict[str, Any]], *,
            swap: bool = False, **params: Any) -> dict[str, Any]:
        """Add a composed item (`neurons`, `norms`) drawn as `traces` (their static Plotly
        properties, in order) from `params` (array references and numbers)."""
        if len(traces) != N_TRACES[kind]:
            raise ValueError(f"a {kind} item is drawn as {N_TRACES[kind]} traces")
        ts = [{**t, "xaxis": panel.x, "yaxis": panel.y} for t in traces]
        item = {"kind": kind, "traces": ts, **params}
        if swap:
            item["swap"] = True
        self.items.append(item)
        return item

    # -- reading
    def traces(self) -> Iterator[dict[str, Any]]:
        """Every trace's static properties, in the order the player draws them."""
        for item in self.items:
            if item["kind"] == "trace":
                yield item["trace"]
            else:
                yield from item["traces"]

    def legend_entries(self) -> list[dict[str, Any]]:
        """The traces shown in the legend (in drawing order)."""
        return [t for t in self.traces() if t.get("showlegend", True) is not False
                and t.get("name") is not None]

    def resolve(self, value: Any) -> Any:
        """`value` with every array reference replaced by its array (tests, checks)."""
        if isinstance(value, Mapping):
            if ARRAY in value and len(value) == 1:
                return self.arrays[value[ARRAY]]
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value

    def static_traces(self) -> list[dict[str, Any]]:
        """The `trace` items' traces with their arrays (not the composed neurons or norms)."""
        return [self.resolve(item["trace"]) for item in self.items if item["kind"] == "trace"]

    def item(self, name: str) -> dict[str, Any]:
        """The first item whose (first) trace is named `name`."""
        for item in self.items:
            first = item["trace"] if item["kind"] == "trace" else item["traces"][0]
            if first.get("name") == name:
                return item
        raise KeyError(name)

    def track(self, trace_name: str, attr: str, k: int) -> Any:
        """Frame k's value of a `trace` item's track (tests)."""
        item = self.item(trace_name)
        for tr in item.get("tracks", ()):
            if tr["attr"] == attr:
                if "texts" in tr:
                    return tr["texts"][k]
                return self.resolve(tr["values"])[k]
        raise KeyError(f"{trace_name}.{attr}")

    def layout_json(self) -> dict[str, Any]:
        """The layout with every panel's axes (domains and anchors): what the player lays out."""
        lay = dict(self.layout)
        for p in self.panels:
            lay[p.xlayout] = {**p.xaxis, "domain": list(p.domain_x), "anchor": p.y}
            lay[p.ylayout] = {**p.yaxis, "domain": list(p.domain_y), "anchor": p.x}
        return lay

    def trace_types(self) -> set[str]:
        return {str(t.get("type") or "scatter") for t in self.traces()}


def neuron_points(scene: Scene, item: Mapping[str, Any], k: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Frame k of a ``neurons`` item as the player composes it: (x, y, marker size, sign ≥ 0)
    of every neuron, in the item's neuron order (the reference `viz/player/scene.js` is
    tested against)."""
    u = scene.arrays[item["u"][ARRAY]][k].astype(float) / U_SCALE
    norms_all = scene.arrays[item["norms"][ARRAY]]
    rows = scene.arrays[item["rows"][ARRAY]]
    cols = scene.arrays[item["cols"][ARRAY]]
    n = norms_all[int(rows[k])][cols].astype(float)
    good = np.isfinite(n)
    n = np.where(good, n, 0.0)
    u = np.where(good[:, None], u, 0.0)
    top = float(n.max()) if n.size else 0.0
    rad = item["radius"]
    if rad["mode"] == "log":
        with np.errstate(divide="ignore", invalid="ignore"):
            ln = np.log10(np.where(n > 0, n, np.nan))
        span = max(rad["hi"] - rad["lo"], 1e-12)
        r = np.nan_to_num(np.clip(R_MIN + (1 - R_MIN) * (ln - rad["lo"]) / span, 0, 1))
    else:
        r = n / top if top > 0 else np.zeros_like(n)
    rel = n / top if top > 0 else np.zeros_like(n)
    lo, hi = item["size"]
    size = np.round(lo + (hi - lo) * np.sqrt(rel))
    sign = scene.arrays[item["sign"][ARRAY]]
    s = sign[k] if sign.shape[0] > 1 else sign[0]
    return u[:, 0] * r, u[:, 1] * r, size, s >= 0


def norm_curves(scene: Scene, item: Mapping[str, Any]
                ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """A ``norms`` item's two traces as the player composes them: ((x, y) of a_j > 0, (x, y)
    of a_j < 0 at the end), one line per neuron in the item's order, a NaN between two
    neurons and where ‖w_j‖ ≤ 0 (the reference `viz/player/scene.js` is tested against)."""
    t = scene.arrays[item["t"][ARRAY]].astype(float)
    rows = scene.arrays[item["rows"][ARRAY]]
    norms = scene.arrays[item["norms"][ARRAY]]
    cols = scene.arrays[item["cols"][ARRAY]]
    sign = scene.arrays[item["sign"][ARRAY]]
    out = []
    for want in (True, False):
        js = [i for i in range(cols.size) if (sign[i] >= 0) == want]
        xs, ys = [], []
        for i in js:
            v = norms[rows, cols[i]].astype(float)
            xs += [t, [np.nan]]
            ys += [np.where(v > 0, v, np.nan), [np.nan]]
        out.append((np.concatenate(xs) if xs else np.zeros(0),
                    np.concatenate(ys) if ys else np.zeros(0)))
    return out[0], out[1]


__all__ = ["ARRAY", "N_TRACES", "R_MIN", "U_SCALE", "Frames", "Panel", "Scene", "grid",
           "narrowed", "neuron_points", "norm_curves", "panel_title", "ref"]
