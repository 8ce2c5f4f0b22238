"""The browser player of every animated figure: its static files (`scene.js` composes a
`viz.scene.Scene` into Plotly traces and a layout, `player.js` plays it, `component.js` and
`index.html` are the Streamlit component's page, `player.css`) and the Python side of what it
plays.

The player composes a figure from its scene (sent as `viz.payload` bytes), draws it with
Plotly.js, then plays, pauses and seeks its frames, updating only the traces that move: ▶/❚❚,
a time slider, the frame's label and its sentence of commentary, ← → keys. It swaps runs of a
family when a control is scrubbed. The same files run in the dashboard (`ui.player`) and in
an exported HTML page (`viz.export`), which inlines them with Plotly.js for use with no
network.

One pass of the animation lasts about PLAY_SECONDS whatever the number of frames.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import plotly.graph_objects as go

from ..header import pixel_anchored
from ..scene import Scene

PLAY_SECONDS = 9.0  # one pass of the animation, whatever the number of frames
HERE = Path(__file__).resolve().parent
DESIGN_HEIGHT = "design_height"  # layout.meta key: the height the figure was laid out for


def frame_ms(n_frames: int, min_ms: int = 35) -> int:
    """Milliseconds per frame so that one pass lasts about PLAY_SECONDS (35–250 ms)."""
    return int(np.clip(PLAY_SECONDS * 1000 / max(n_frames, 1), min_ms, 250))


def asset(name: str) -> str:
    """The text of one of the player's static files ("player.js", "player.css", …)."""
    return (HERE / name).read_text(encoding="utf-8")


def fit_any_height(scene: Scene) -> Scene:
    """Let `scene` take the height of its container (presenter mode: the window's): legend,
    label rows and annotations pinned to pixel offsets (`viz.header.pixel_anchored`), layout
    height unset with autosize on, and the height it was laid out for kept in
    `layout.meta[DESIGN_HEIGHT]` (the player never grows it beyond). Modifies, returns it."""
    lay = scene.layout
    h = lay.get("height")
    if h is not None:
        pixel_anchored(scene, float(h))
        meta = dict(lay["meta"]) if isinstance(lay.get("meta"), dict) else {}
        lay["meta"] = {**meta, DESIGN_HEIGHT: int(h)}
    lay.pop("height", None)
    lay["autosize"] = True
    return scene


def fit_static_height(fig: go.Figure) -> go.Figure:
    """`fit_any_height` for a static Plotly figure (a page's chart without frames): a new
    figure, `fig` unchanged."""
    d = fig.to_plotly_json()
    scene = Scene("static", items=[{"kind": "trace", "trace": t} for t in d.get("data", [])],
                  layout=d.get("layout", {}))
    fit_any_height(scene)
    return go.Figure({"data": [it["trace"] for it in scene.items], "layout": scene.layout})


def design_height(fig: Scene | go.Figure) -> int | None:
    """The height a scene or a static figure was laid out for (before `fit_any_height`)."""
    lay = fig.layout if isinstance(fig, Scene) else fig.layout.to_plotly_json()
    meta = lay.get("meta")
    if isinstance(meta, dict) and meta.get(DESIGN_HEIGHT):
        return int(meta[DESIGN_HEIGHT])
    h = lay.get("height")
    return None if h is None else int(h)


__all__ = ["DESIGN_HEIGHT", "HERE", "PLAY_SECONDS", "asset", "design_height",
           "fit_any_height", "fit_static_height", "frame_ms"]
