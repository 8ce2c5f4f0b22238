"""The top of a figure: a title, then a horizontal legend hanging from its top, then room for
label rows and subplot titles; sized so that nothing overlaps at DESIGN_WIDTH_PX.

Plotly wraps a long horizontal legend into more rows; anchored at its bottom (as before) the
extra rows grew up into the title. Here the legend hangs from just under the title and the
top margin keeps room for the rows it needs at the narrowest width (`legend_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from .label_layout import LINE_EM, text_lines, text_px

DESIGN_WIDTH_PX = 780.0  # figure width every title and legend must fit (1280 px window)
LEGEND_ITEM_PX = 46.0  # a legend item's symbol and gaps, besides its text
def legend_rows(names: Sequence[str], size: float, width_px: float) -> int:
    """Rows a horizontal legend of `names` needs in `width_px` pixels: one if all fit, else
    plotly lays the items out in a grid of columns as wide as the widest item."""
    widths = [LEGEND_ITEM_PX + text_px(name, size)[0] for name in names]
    if not widths:
        return 0
    if sum(widths) <= width_px:
        return 1
    cols = max(1, int(width_px // max(widths)))
    return math.ceil(len(widths) / cols)


TITLE_PAD_PX = 8.0  # title.pad.t
GAP_PX = 6.0


def legend_row_px(size: float) -> float:
    """Height of one row of a horizontal legend at font size `size`."""
    return size * 1.3 + 6.0


@dataclass(frozen=True)
class Header:
    """Pixels from the figure's top: the title, then the legend (anchored at its top, so extra
    rows grow down into room kept for them, never up into the title), then `below_px`."""

    title_px: float  # bottom of the title
    legend_top_px: float
    legend_rows: int
    legend_px: float  # the legend's height at DESIGN_WIDTH_PX
    top_px: float  # the top margin: header plus `below_px`


def header(title: str, title_size: float, line_size: float, names: Sequence[str],
           legend_size: float, below_px: float, width_px: float = DESIGN_WIDTH_PX) -> Header:
    """Geometry of a figure's top margin: a title (first line at `title_size`, further lines
    at `line_size`), a horizontal legend of `names` wrapped to `width_px`, then `below_px`
    (label rows, subplot titles)."""
    lines = text_lines(title)
    title_px = TITLE_PAD_PX + title_size * LINE_EM + (len(lines) - 1) * line_size * LINE_EM
    legend_top = title_px + GAP_PX
    rows = legend_rows(names, legend_size, width_px - 10.0) if names else 0
    legend_px = rows * legend_row_px(legend_size)
    return Header(title_px, legend_top, rows, legend_px,
                  legend_top + legend_px + GAP_PX + below_px)


def header_layout(hd: Header, height: float, legend_size: float) -> dict:
    """Layout keys `title` (position) and `legend` for a `header` in a figure `height` px tall:
    both on the container, left-aligned; the legend hangs from its top."""
    return {
        "title": {"x": 0.005, "xanchor": "left", "xref": "container", "y": 1.0,
                  "yref": "container", "yanchor": "top", "pad": {"t": TITLE_PAD_PX}},
        "legend": {"orientation": "h", "traceorder": "normal", "x": 0.005, "xref": "container",
                   "xanchor": "left",
                   "y": 1.0 - hd.legend_top_px / height, "yref": "container",
                   "yanchor": "top", "font": {"size": legend_size}, "itemsizing": "constant",
                   "bgcolor": "rgba(255,255,255,0)", "tracegroupgap": 0},
    }


def legend_names(fig: go.Figure) -> list[str]:
    """Names of the traces that appear in the figure's legend."""
    return [str(tr.name) for tr in fig.data
            if tr.showlegend is not False and tr.name is not None]


__all__ = ["DESIGN_WIDTH_PX", "GAP_PX", "LEGEND_ITEM_PX", "TITLE_PAD_PX", "Header", "header",
           "header_layout", "legend_names", "legend_row_px", "legend_rows"]
