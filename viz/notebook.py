"""The Explorer's animated figure in a Jupyter notebook, in one call and offline.

    from viz.notebook import show
    show({"model": {"width": 12}})            # a config (dict, JSON text or Config) …
    show(traj)                                 # … or a Trajectory already simulated

`show` simulates a config (`dynamics.simulate.simulate`; a Trajectory is used as it is),
analyses it (`dynamics.analysis.analyse`: phases, theory, the papers' markers) and draws the
Explorer's main figure (`viz.main_figure`). The result is a `NotebookFigure`: Jupyter shows it
through `_repr_html_` as the standalone page of `viz.export.standalone_html` (plotly.js
embedded, frames, ▶ Play and slider) inside an iframe, so it animates without a network
connection, without plotly's notebook renderers and beside other figures on the same page.
The iframe opens at an estimate of its content's height and then takes the height its page
reports (a message to the notebook's page), so the commentary under the slider is never cut
and no blank is left; its plain-text form (a terminal IPython) is one line.
`.html` is that page (bytes; `.save(path)` writes it) and `.figure` the figure's scene
(`viz.scene.Scene`: the panels, the run's arrays and the frames, which the player composes).

This composes the library and a figure the way a page does; the figure builders themselves
stay pure (they never integrate).
"""

from __future__ import annotations

import html
import json
import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynamics.analysis import analyse
from dynamics.annotations import Analysis
from dynamics.config import Config
from dynamics.simulate import simulate
from dynamics.trajectory import Trajectory

from .export import standalone_html
from .label_layout import text_px
from .main_figure import main_figure
from .options import FigureOptions
from .scene import Scene

IFRAME_MARGIN_PX = 16  # the page's margin under the player inside the iframe
CONTROLS_PX = 44  # the player's ▶ Play, time slider and label
CAPTION_FONT_PX = 15.0  # the commentary's font (viz/player/player.css)
CAPTION_LINE_PX = 21  # one line of commentary
EDIT_BAR_PX = 64  # "move the data": its bar (two lines where the cell is narrow)
NARROW_PX = 640  # the narrowest cell the estimate is made for (a notebook beside a sidebar)
DEFAULT_HEIGHT_PX = 720  # when the figure leaves its height to the container

# Sizes each figure's iframe to the height its page reports (`export.standalone_html`'s
# `report`): the estimate above is only the height it opens with.
_FIT_JS = """<script>(function () {
  var id = %s;
  window.addEventListener("message", function (e) {
    var d = e.data, f = document.getElementById(id);
    if (f && d && d.eaeFrame === id && e.source === f.contentWindow && d.height > 0)
      f.style.height = Math.ceil(d.height) + "px";
  });
})();</script>"""


def controls_px(scene: Scene, width_px: float = NARROW_PX) -> int:
    """Height of what the player shows under the figure in a cell `width_px` wide: ▶ Play and
    the slider, the longest sentence of commentary (wrapped), the data-editing bar when the
    figure offers it, and the page's margin."""
    longest = max((text_px(c, CAPTION_FONT_PX)[0] for c in scene.frames.captions), default=0.0)
    lines = max(1, math.ceil(longest / (width_px - 24)))
    edit = EDIT_BAR_PX if (scene.meta or {}).get("edit") else 0
    return CONTROLS_PX + lines * CAPTION_LINE_PX + edit + IFRAME_MARGIN_PX


@dataclass(frozen=True, repr=False)
class NotebookFigure:
    """A drawn run: the trajectory, its analysis, the figure's scene and its standalone page
    (`frame_id`: the id its iframe has and its page reports its height under)."""

    trajectory: Trajectory
    analysis: Analysis | None
    figure: Scene
    html: bytes
    frame_id: str = ""

    @property
    def height_px(self) -> int:
        """The iframe's height when it opens: the figure's own height and what the player
        shows under it (`controls_px`); the page then reports its exact height."""
        height = self.figure.layout.get("height")
        return int(height or DEFAULT_HEIGHT_PX) + controls_px(self.figure)

    def __repr__(self) -> str:
        """One line (a terminal IPython shows this, not the page)."""
        c = self.trajectory.config
        return (f"<NotebookFigure: width m = {c.model.width}, ε = {c.init.scale:g}, "
                f"{self.figure.frames.n} frames, {self.trajectory.status}; "
                f"{len(self.html) / 1e6:.1f} MB page (.save(path) writes it)>")

    def _repr_html_(self) -> str:
        doc = html.escape(self.html.decode("utf-8"), quote=True)
        fid = html.escape(self.frame_id, quote=True)
        return (f'<iframe id="{fid}" srcdoc="{doc}" title="Early alignment figure" '
                f'style="width: 100%; height: {self.height_px}px; border: none;" '
                'sandbox="allow-scripts"></iframe>' + _FIT_JS % json.dumps(self.frame_id))

    def save(self, path: str | Path) -> Path:
        """Write the standalone page (opens and animates offline in any browser)."""
        out = Path(path)
        out.write_bytes(self.html)
        return out


def _config(run: Config | Mapping[str, Any] | str | None) -> Config:
    if run is None:
        return Config()
    if isinstance(run, Config):
        return run
    if isinstance(run, str):
        return Config.from_json(run)
    return Config.from_dict(dict(run))


def show(run: Trajectory | Config | Mapping[str, Any] | str | None = None, *,
         analysis: bool = True, title: str = "Early alignment", **figure_options: Any
         ) -> NotebookFigure:
    """The Explorer's animated figure of `run`: a `Trajectory`, or a config (a `Config`, a
    dict such as ``{"model": {"width": 12}}``, its JSON text, or None for the defaults) that is
    simulated here. `analysis` False leaves out phases, theory and paper markers;
    `figure_options` are `viz.options.FigureOptions` fields (presenter, radius, time_axis,
    time_scale) or `viz.main_figure.main_figure`'s limits (max_frames, max_curves,
    max_neurons). Invalid configs raise `dynamics.config.ConfigError` naming each field."""
    traj = run if isinstance(run, Trajectory) else simulate(_config(run))
    found = analyse(traj) if analysis else None
    fields = set(FigureOptions.__dataclass_fields__)
    options = FigureOptions(**{k: v for k, v in figure_options.items() if k in fields})
    limits = {k: v for k, v in figure_options.items() if k not in fields}
    fig = main_figure(traj, found, options, **limits)
    fid = f"eae-{uuid.uuid4().hex[:12]}"
    return NotebookFigure(traj, found, fig, standalone_html(fig, title=title, report=fid), fid)


__all__ = ["NotebookFigure", "show"]
