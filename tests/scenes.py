"""Reading a figure's `Scene` in tests as the browser draws it: `as_plotly` gives the Plotly
figure the player composes at one frame (traces in drawing order, arrays resolved, the neurons
and norm curves from the references `viz.scene.neuron_points` and `norm_curves`, which the
browser's composer is tested against in `tests/test_scene_browser.py`), validated by plotly.py
— so every scene is also checked to be valid Plotly."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from viz.scene import N_TRACES, Scene, neuron_points, norm_curves


def _set(trace: dict[str, Any], path: str, value: Any) -> None:
    *head, last = path.split(".")
    for key in head:
        trace = trace.setdefault(key, {})
    trace[last] = value


def traces_at(scene: Scene, k: int | None = None) -> list[dict[str, Any]]:
    """Every trace as a dict at frame k (default: the frame shown first)."""
    k = scene.frames.start if k is None else k
    out: list[dict[str, Any]] = []
    for item in scene.items:
        if item["kind"] == "trace":
            tr = scene.resolve(item["trace"])
            for track in item.get("tracks", ()):
                value = track["texts"][k] if "texts" in track else \
                    scene.resolve(track["values"])[k]
                _set(tr, track["attr"], value)
            out.append(tr)
        elif item["kind"] == "neurons":
            x, y, size, pos = neuron_points(scene, item, k)
            index = scene.arrays[item["index"]["$a"]]
            norms = scene.arrays[item["norms"]["$a"]][int(scene.arrays[item["rows"]["$a"]][k])]
            n = norms[scene.arrays[item["cols"]["$a"]]].astype(float)
            for tr0, mask in zip(item["traces"], (pos, ~pos), strict=True):
                tr = scene.resolve(tr0)
                tr.update(x=x[mask], y=y[mask],
                          customdata=np.stack([index[mask], n[mask]], axis=1))
                _set(tr, "marker.size", size[mask])
                out.append(tr)
        else:  # norms
            for tr0, (x, y) in zip(item["traces"], norm_curves(scene, item), strict=True):
                out.append({**scene.resolve(tr0), "x": x, "y": y})
    return out


def as_plotly(scene: Scene, k: int | None = None) -> go.Figure:
    """The figure the player draws at frame k, as a (validated) Plotly figure."""
    return go.Figure({"data": traces_at(scene, k), "layout": scene.resolve(scene.layout_json())})


def first_trace(scene: Scene, item: int) -> int:
    """The drawing index of item `item`'s first trace."""
    return sum(N_TRACES[it["kind"]] for it in scene.items[:item])


def index_of(scene: Scene, name: str) -> int:
    """The drawing index of the first trace named `name`."""
    return next(i for i, t in enumerate(scene.traces()) if t.get("name") == name)


def at(scene: Scene, trace: int, attr: str, k: int) -> np.ndarray:
    """Frame k's value of one attribute of trace `trace` (x, y, marker.size, text…)."""
    value: Any = traces_at(scene, k)[trace]
    for key in attr.split("."):
        value = value[key]
    return np.asarray(value) if not isinstance(value, str) else value
