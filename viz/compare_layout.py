"""Axes of the Compare figure and its narrow layout: the two runs' neuron panels side by side
above the time panels, for a player narrower than NARROW_PX (the width below which the side
by side panels would be smaller than the labels were placed for).

`stacked_layout` re-assigns every axis' domain, the run titles, the phase strips and the
height; the player applies it below NARROW_PX (`AnimatedFigure.narrow`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dynamics.trajectory import Trajectory

from .header import DESIGN_WIDTH_PX
from .label_layout import PANEL_PX, text_px
from .neuron_panel import PANEL_LIMIT
from .phase_strip import Strip
from .scene import Panel, narrowed
from .strip_draw import strip_items
from .style import GRID, INK, Style
from .time_axes import TimeAxisSpec, log_dtick, y_axis_px

COLUMN_WIDTHS = (0.31, 0.31, 0.38)  # neuron panel A, neuron panel B, time panels
H_SPACING = 0.07
MARGIN_L, MARGIN_R = 20, 16
NARROW_MARGIN_L = 70  # stacked: the time panels' tick labels and titles at the left
TIME_TITLES = ("‖w_j‖", "loss", "accuracy")  # norms: max (bold) and median (thin) of each run


def column_px(k: int, width_px: float) -> float:
    """Pixel width of column k (0, 1: the neuron panels; 2: the time panels) of the compare
    figure `width_px` wide."""
    plot = width_px - MARGIN_L - MARGIN_R
    return plot * (1 - 2 * H_SPACING) * COLUMN_WIDTHS[k] / sum(COLUMN_WIDTHS)


# each neuron panel is a square at least this wide: side by side, 241 px in presenter mode at
# a 1280×720 projector (the figure fills the window's height; measured in Chromium)
PANEL_PX_COMPARE = 240.0
# the player's width below which side-by-side panels would be narrower than that (normal
# mode; 1070 px at a 1600 px window beside the sidebar keeps them side by side)
NARROW_PX = math.ceil(PANEL_PX_COMPARE / column_px(0, 1.0 + MARGIN_L + MARGIN_R)
                      + MARGIN_L + MARGIN_R)


def make_room(time_panels: Sequence[Panel], style: Style, width_px: float) -> list[Panel]:
    """The time panels narrowed from the left until the gap beside run B's neuron panel
    holds their y axes' labels and titles (a square panel may fill its column: the titles
    ran over it) in a figure `width_px` wide."""
    plot = width_px - MARGIN_L - MARGIN_R
    short = y_axis_px(style.font) - H_SPACING * plot
    return [narrowed(p, plot, left_px=short) for p in time_panels]


def style_axes(panels: Sequence[Panel], trajs: Sequence[Trajectory], spec: TimeAxisSpec,
               y_ranges: Sequence[tuple[float, float]], n_time: int) -> None:
    """The neuron panels' square axes (panels 0 and 1) and the shared time axes (log or
    linear) of the time panels after them."""
    lim = [-PANEL_LIMIT, PANEL_LIMIT]
    for p, tr in zip(panels[:2], trajs, strict=True):
        xname, yname = tr.plane_names
        p.xaxis.update(range=lim, zeroline=True, zerolinecolor=GRID, showgrid=False, ticks="",
                       showticklabels=False, constrain="domain",
                       title={"text": xname, "standoff": 24})
        p.yaxis.update(range=lim, zeroline=True, zerolinecolor=GRID, showgrid=False, ticks="",
                       showticklabels=False, constrain="domain", scaleanchor=p.x, scaleratio=1,
                       title={"text": yname, "standoff": 2})
    time_panels = panels[2:2 + n_time]
    for k, p in enumerate(time_panels):
        bottom = k == n_time - 1
        p.xaxis.update(type="log" if spec.log else "linear", range=spec.range,
                       showticklabels=bottom, gridcolor=GRID, exponentformat="power",
                       title={"text": spec.title if bottom else None, "standoff": 6})
        if k:
            p.xaxis["matches"] = time_panels[0].x
        if spec.log and spec.range[1] - spec.range[0] <= 8:
            p.xaxis["dtick"] = 1
        lo, hi = y_ranges[k]
        title = {"text": TIME_TITLES[k], "standoff": 4}
        if k < 2:
            p.yaxis.update(type="log", range=[math.log10(lo), math.log10(hi)], gridcolor=GRID,
                           exponentformat="power", dtick=log_dtick(lo, hi), title=title)
        else:
            p.yaxis.update(range=[lo, hi], gridcolor=GRID, tickformat=".0%", dtick=0.5,
                           title=title)


def run_tag(name: str, size: float, room_px: float) -> str:
    """A run's name as its strip rows' tag, or its first letter when the name is wider than
    the gap left of the time panels."""
    return name if text_px(name, size)[0] <= room_px else name[:1]


def strips_items(strips: Sequence[Strip], labels: Sequence[str], spec: TimeAxisSpec,
                 time_axes: Sequence[tuple[str, str]], style: Style, anchor: float
                 ) -> tuple[list[dict], list[dict]]:
    """Both runs' strips above the first time panel (top at paper y = `anchor`), each run's
    rows tagged with its name at their left (in the gap between the columns)."""
    shapes: list[dict] = []
    anns: list[dict] = []
    xa = time_axes[0][0]
    room = H_SPACING * (DESIGN_WIDTH_PX - MARGIN_L - MARGIN_R) - 8  # the gap, px
    for strip, name in zip(strips, labels, strict=True):
        sh, an = strip_items(strip, spec, xa, time_axes, style, anchor=anchor)
        shapes += sh
        anns += an
        rows = sorted({b.row for b in strip.blocks})
        for r in rows[:1]:
            y = next(a["yshift"] for a, b in zip(an, strip.blocks, strict=False)
                     if b.row == r)
            anns.append(dict(x=spec.range[0], xref=xa, y=anchor, yref="paper", yshift=y,
                             yanchor="middle", xanchor="right", xshift=-3, showarrow=False,
                             text=f"<b>{run_tag(name, style.small * 0.9, room)}</b>",
                             font={"size": style.small * 0.9,
                                                          "color": INK},
                             name=f"strip-run:{name}"))
    return shapes, anns


def stacked_layout(layout: dict, strips: Sequence[Strip], labels: Sequence[str],
                   spec: TimeAxisSpec, time_axes: Sequence[tuple[str, str]], style: Style,
                   strip_px: float) -> dict:
    """The layout update stacking the neuron panels (side by side, top) above the time panels
    (full width, stacked, the phase strips between): domains, run titles, strips, height."""
    top, bottom = float(layout["margin"]["t"]), float(layout["margin"]["b"])
    height = round(top + bottom + 2.3 * PANEL_PX + strip_px)
    plot = height - top - bottom
    neuron_h = PANEL_PX / plot  # the panels' row: squares PANEL_PX tall (wider than side by side)
    gap = (style.small * 1.25 * 2 + 22 + strip_px) / plot  # caption, axis title, strips
    t_top = 1.0 - neuron_h - gap
    n = len(time_axes)
    each = t_top / (n + 0.25 * (n - 1))
    upd: dict = {"height": height, "margin": {"l": NARROW_MARGIN_L},
                 "xaxis": {"domain": [0.0, 0.47]}, "xaxis2": {"domain": [0.53, 1.0]},
                 "yaxis": {"domain": [1.0 - neuron_h, 1.0]},
                 "yaxis2": {"domain": [1.0 - neuron_h, 1.0]}}
    for k, (xa, ya) in enumerate(time_axes):
        hi = t_top - k * 1.25 * each
        upd[f"xaxis{xa[1:]}"] = {"domain": [0.0, 1.0]}
        upd[f"yaxis{ya[1:]}"] = {"domain": [max(0.0, hi - each), hi]}
    shapes, anns = strips_items(strips, labels, spec, time_axes, style, t_top)
    titles = [dict(a) for a in layout["annotations"][:2]]
    for a, x in zip(titles, (0.235, 0.765), strict=True):
        a["x"] = x
    upd["shapes"] = shapes
    upd["annotations"] = [*titles, *anns]
    return upd


__all__ = ["COLUMN_WIDTHS", "H_SPACING", "MARGIN_L", "MARGIN_R", "NARROW_PX",
           "PANEL_PX_COMPARE", "column_px", "make_room", "stacked_layout", "strips_items",
           "style_axes"]
