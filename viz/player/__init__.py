"""The browser player of every animated figure: its static files (`player.js`, `player.css`,
`component.html` — the Streamlit component's page) and the Python side of what it plays.

The player draws a figure's first frame with Plotly.js, then plays, pauses and seeks its
frames (`viz.animation.Animation`, sent as `viz.payload` bytes): ▶/❚❚, a time slider, the
frame's label and its sentence of commentary, ← → keys. It swaps runs of a family when a
control is scrubbed. The same files run in the dashboard (`ui.player`) and in an exported
HTML page (`viz.export`), which inlines them with Plotly.js for use with no network.

One pass of the animation lasts about PLAY_SECONDS whatever the number of frames.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import plotly.graph_objects as go

from ..header import pixel_anchored

PLAY_SECONDS = 9.0  # one pass of the animation, whatever the number of frames
HERE = Path(__file__).resolve().parent
DESIGN_HEIGHT = "design_height"  # layout.meta key: the height the figure was laid out for


def frame_ms(n_frames: int, min_ms: int = 35) -> int:
    """Milliseconds per frame so that one pass lasts about PLAY_SECONDS (35–250 ms)."""
    return int(np.clip(PLAY_SECONDS * 1000 / max(n_frames, 1), min_ms, 250))


def asset(name: str) -> str:
    """The text of one of the player's static files ("player.js", "player.css", …)."""
    return (HERE / name).read_text(encoding="utf-8")


def fit_any_height(fig: go.Figure) -> go.Figure:
    """Let `fig` take the height of its container (presenter mode: the window's): legend,
    label rows and annotations pinned to pixel offsets (`viz.header.pixel_anchored`), layout
    height unset with autosize on, and the height it was laid out for kept in
    `layout.meta[DESIGN_HEIGHT]` (the player never grows it beyond). Modifies, returns `fig`."""
    h = fig.layout.height
    if h is not None:
        pixel_anchored(fig, float(h))
        meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, dict) else {}
        fig.update_layout(meta={**meta, DESIGN_HEIGHT: int(h)})
    fig.update_layout(height=None, autosize=True)
    return fig


def design_height(fig: go.Figure) -> int | None:
    """The height `fig` was laid out for (before `fit_any_height`), if known."""
    meta = fig.layout.meta
    if isinstance(meta, dict) and meta.get(DESIGN_HEIGHT):
        return int(meta[DESIGN_HEIGHT])
    return None if fig.layout.height is None else int(fig.layout.height)


__all__ = ["DESIGN_HEIGHT", "HERE", "PLAY_SECONDS", "asset", "design_height",
           "fit_any_height", "frame_ms"]
