"""The animation player under every animated figure: ▶ Play / ❚❚ Pause buttons and a time
slider (layout keys `updatemenus` and `sliders`), and the frame timing.

One pass of the animation lasts about PLAY_SECONDS whatever the number of frames; frames that
only move scatter traces skip the full redraw (`redraw=False`), heatmaps and bars need it.
"""

from __future__ import annotations

import numpy as np

from .style import INK, Style

PLAY_SECONDS = 9.0  # one pass of the animation, whatever the number of frames


def frame_ms(n_frames: int, min_ms: int = 35) -> int:
    """Milliseconds per frame so that one pass lasts about PLAY_SECONDS (35–250 ms)."""
    return int(np.clip(PLAY_SECONDS * 1000 / max(n_frames, 1), min_ms, 250))


def frame_step(name: str, label: str, redraw: bool = False) -> dict:
    """One slider step that jumps to animation frame `name`."""
    return {"method": "animate", "label": label,
            "args": [[name], {"mode": "immediate", "transition": {"duration": 0},
                              "frame": {"duration": 0, "redraw": redraw}}]}


def player(steps: list[dict], style: Style, below: float, plot_px: float, *,
           redraw: bool = False, slider_x: float = 0.2, min_ms: int = 35) -> dict:
    """Play/Pause buttons and the time slider `below` the plots (paper units; `plot_px` is the
    plot area's height in pixels). Returns layout keys `updatemenus` and `sliders`."""
    play = {"frame": {"duration": frame_ms(len(steps), min_ms), "redraw": redraw},
            "fromcurrent": True, "transition": {"duration": 0}, "mode": "immediate"}
    pause = {"frame": {"duration": 0, "redraw": False}, "mode": "immediate",
             "transition": {"duration": 0}}
    return {
        "updatemenus": [{
            "type": "buttons", "direction": "left", "showactive": False,
            "x": 0.0, "xanchor": "left", "y": below, "yanchor": "top",
            "pad": {"t": 0, "r": 8}, "font": {"size": style.font},
            "buttons": [
                {"label": "▶ Play", "method": "animate", "args": [None, play]},
                {"label": "❚❚ Pause", "method": "animate", "args": [[None], pause]},
            ]}],
        "sliders": [{
            "active": 0, "steps": steps, "x": slider_x, "len": 1.0 - slider_x,
            "xanchor": "left", "y": below + 12.0 / plot_px, "yanchor": "top",
            "pad": {"t": 0, "b": 0},
            "currentvalue": {"prefix": "t = ", "font": {"size": style.font, "color": INK},
                             "xanchor": "right", "offset": 6},
            "font": {"size": 1, "color": "rgba(0,0,0,0)"},  # hide per-step tick labels
            "ticklen": 0, "minorticklen": 0, "tickcolor": "rgba(0,0,0,0)",
            "transition": {"duration": 0}}],
    }


__all__ = ["PLAY_SECONDS", "frame_ms", "frame_step", "player"]
