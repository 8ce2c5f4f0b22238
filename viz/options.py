"""How a figure is shown, as one value: presenter mode, the radius and time axes, the time
unit. Every figure builder takes a `FigureOptions`; its `key` is part of the figure cache's
key (`ui.figures`), so two sessions with the same run and the same options share one figure.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from .style import Style, style_for

# the display options' values, spelled once (the settings table's view rows read them)
Radius = Literal["normalised", "log"]
TimeAxis = Literal["log", "linear"]
TimeScale = Literal["t", "t_over_log_inv_eps"]


@dataclass(frozen=True)
class FigureOptions:
    """presenter: a projector view (larger type, the figure fills the window's height);
    radius: "normalised" (‖w_j‖ / max_k ‖w_k‖ per frame) or "log" (log‖w_j‖, fixed scale);
    time_axis: "log" or "linear"; time_scale: "t" or "t_over_log_inv_eps" (t / ln(1/ε)).
    The defaults here are every page's defaults (`ui.settings.DISPLAY`)."""

    presenter: bool = False
    radius: Radius = "normalised"
    time_axis: TimeAxis = "log"
    time_scale: TimeScale = "t"

    @property
    def style(self) -> Style:
        return style_for(self.presenter)

    @property
    def key(self) -> str:
        """A short stable text of the options (for cache keys)."""
        return ",".join(f"{k}={v}" for k, v in sorted(asdict(self).items()))


__all__ = ["FigureOptions", "Radius", "TimeAxis", "TimeScale"]
