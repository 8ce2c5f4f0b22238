"""The top of a figure: a title, then a horizontal legend hanging from its top, then room for
label rows and subplot titles; sized so that nothing overlaps at DESIGN_WIDTH_PX.

Plotly wraps a long horizontal legend into more rows; anchored at its bottom (as before) the
extra rows grew up into the title. Here the legend hangs from just under the title and the
top margin keeps room for the rows it needs at the narrowest width (`legend_rows`).

Figures of any height (presenter mode: the figure takes the height of its container, which
follows the window). Plotly places legends, buttons, sliders and annotations at fractions of
the figure's or the plot area's height, so a layout made for one height drifts at another:
the legend climbs into the title, the ▶ Play button into the tick labels, label rows onto
the plots. `pixel_anchored` re-expresses every such position as a fixed pixel offset from an
edge (title and legend hang from the top — the title as the legend's own title —, controls
and label rows keep their pixel distance from the plot area), so the margins stay what they
were laid out to be and the plot area takes all the height that is left.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .label_layout import LINE_EM, text_lines, text_px, wrap_to_px
from .scene import Scene

DESIGN_WIDTH_PX = 780.0  # figure width every title and legend must fit (1280 px window)
# presenter mode: no sidebar, the figure spans the window less the page's padding: 1232 px at
# a 1280 px projector (1280 − 2·24), less a little for rounding. Narrower windows may wrap a
# legend into one more row than the margin keeps (it then touches the subplot titles).
PRESENTER_WIDTH_PX = 1220.0
MODEBAR_PX = 200.0  # Plotly's toolbar at a figure's top right (on hover): titles stay clear
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


def toolbar_clear_title(text: str, size: float, presenter: bool) -> tuple[str, float]:
    """`text` wrapped (at " · ") to stay left of Plotly's toolbar (shown at the figure's top
    right on hover) in the narrowest figure, and the height its lines past the first add."""
    lines = wrap_to_px(text, size, (PRESENTER_WIDTH_PX if presenter else DESIGN_WIDTH_PX)
                       - MODEBAR_PX, sep=" · ")
    return "<br>".join(lines), (len(lines) - 1) * size * 1.25


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
    lift_px: float = 0.0  # Plotly centres a title's lines on its anchor: half the extra lines


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
                  legend_top + legend_px + GAP_PX + below_px,
                  (len(lines) - 1) * line_size * LINE_EM / 2)


def header_layout(hd: Header, height: float, legend_size: float) -> dict:
    """Layout keys `title` (position) and `legend` for a `header` in a figure `height` px tall:
    both on the container, left-aligned; the legend hangs from its top."""
    return {
        "title": {"x": 0.005, "xanchor": "left", "xref": "container", "y": 1.0,
                  "yref": "container", "yanchor": "top",
                  "pad": {"t": TITLE_PAD_PX + round(hd.lift_px)}},
        "legend": {"orientation": "h", "traceorder": "normal", "x": 0.005, "xref": "container",
                   "xanchor": "left",
                   "y": 1.0 - hd.legend_top_px / height, "yref": "container",
                   "yanchor": "top", "font": {"size": legend_size}, "itemsizing": "constant",
                   "bgcolor": "rgba(255,255,255,0)", "tracegroupgap": 0},
    }


if TYPE_CHECKING:
    import plotly.graph_objects as go


def _prop(tr: Any, key: str) -> Any:
    """A trace property of a scene's trace (a dict) or of a Plotly trace (None if unset)."""
    return tr.get(key) if isinstance(tr, dict) else tr[key]


def _entries(fig: Scene | go.Figure) -> list[Any]:
    """The traces shown in the legend, in drawing order."""
    if isinstance(fig, Scene):
        return fig.legend_entries()
    return [tr for tr in fig.data if tr.showlegend is not False and tr.name is not None]


def legend_names(fig: Scene | go.Figure, legend: str | None = None) -> list[str]:
    """Names of the traces that appear in the figure's legend (`legend`: only those of that
    legend, e.g. "legend2"; None: all)."""
    return [str(_prop(tr, "name")) for tr in _entries(fig)
            if legend is None or (_prop(tr, "legend") or "legend") == legend]


MAX_LEGEND = 7  # legend entries per figure; the rest are named on hover


def cap_legend(fig: Scene | go.Figure, max_entries: int = MAX_LEGEND,
               rows: tuple[int, float, float] | None = None) -> list[str]:
    """Keep at most `max_entries` entries in the legend — the lowest `legendrank` first, then
    in drawing order — and, with `rows` = (n, font size, width px), no more than fill n rows
    of a horizontal legend that wide; take the others out of it (every trace names itself on
    hover). Returns the names taken out."""
    shown = [(_prop(tr, "legendrank") if _prop(tr, "legendrank") is not None else 1000, i, tr)
             for i, tr in enumerate(_entries(fig))]
    shown.sort(key=lambda it: (it[0], it[1]))
    keep = min(max_entries, len(shown))
    if rows is not None:
        n, size, width = rows
        while keep > 1 and legend_rows([str(_prop(t, "name")) for _r, _i, t in shown[:keep]],
                                       size, width) > n:
            keep -= 1
    out = []
    for _rank, _i, tr in shown[keep:]:
        tr["showlegend"] = False
        out.append(str(_prop(tr, "name")))
    return out


# ----------------------------------------------------------------------------- any height
def titled_legend(legend: dict, title: dict) -> dict:
    """`legend` (a horizontal legend dict) carrying the figure's `title` (text, font) as its
    own title and hanging from the figure's top edge: the title and the legend rows below it
    then keep their pixel positions whatever the figure's height (a legend at a fraction of
    the height would move into a separate title). Clicking the title does nothing."""
    return {**legend, "y": 1.0, "yref": "container", "yanchor": "top",
            "title": {"text": title.get("text") or "", "side": "top",
                      "font": title.get("font") or {}},
            "titleclick": False, "titledoubleclick": False}


PHASES_LEGEND = "legend2"  # presenter mode: the phases' legend, a column right of the plots


def column_legend_px(names: Sequence[str], size: float, title: str = "phases") -> float:
    """Width of a vertical legend of `names` (and its `title`) at font size `size`; 0 if
    empty."""
    if not names:
        return 0.0
    return max(LEGEND_ITEM_PX + max(text_px(n, size)[0] for n in names),
               text_px(title, size)[0]) + 8.0


def phases_legend(size: float) -> dict:
    """Layout of the phases' column legend (`PHASES_LEGEND`): hanging from the top of the
    plot area, right of it (Plotly widens the right margin to fit it)."""
    return {"orientation": "v", "x": 1.01, "xref": "paper", "xanchor": "left", "y": 1.0,
            "yref": "paper", "yanchor": "top", "font": {"size": size},
            "bgcolor": "rgba(255,255,255,0)", "itemsizing": "constant", "tracegroupgap": 0,
            "title": {"text": "phases", "font": {"size": size}}}


def top_legend_width(width_px: float, margin_l: float, margin_r: float,
                     phase_names: Sequence[str], size: float) -> float:
    """Width a horizontal legend may wrap to in a figure `width_px` wide: Plotly wraps it to
    the plot area's width (the figure less its margins and a phases' column legend)."""
    return width_px - margin_l - margin_r - column_legend_px(phase_names, size)


def pixel_anchored(scene: Scene, height: float, width_px: float = PRESENTER_WIDTH_PX
                   ) -> Scene:
    """Make `scene` (laid out for `height` px) correct at any height: (1) annotations above
    (below) the plot area at a fraction beyond it move to its edge with a pixel shift; (2) a
    header made by `header_layout` (title, then a legend at a fraction of the height)
    becomes a titled legend (`titled_legend`) hanging from the top, its rows recounted for a
    figure `width_px` wide — the phases' legend entries moved to a column right of the plots
    — and the top margin shrunk by the rows saved. Positions already in pixels are left
    alone, so applying it twice changes nothing. Modifies and returns `scene`."""
    lay = scene.layout
    m = lay.get("margin", {})
    plot_px = float(height - m.get("t", 100) - m.get("b", 80))
    if plot_px <= 0:
        return scene
    for ann in lay.get("annotations", []):
        y = ann.get("y")
        if ann.get("yref") != "paper" or y is None:
            continue
        if y > 1.0 or y < 0.0:
            edge = 1.0 if y > 1.0 else 0.0
            ann["yshift"] = ann.get("yshift", 0.0) + (y - edge) * plot_px
            ann["y"] = edge
    title = lay.get("title") or {}
    leg = lay.get("legend") or {}
    if (title.get("text") and leg.get("orientation") == "h" and leg.get("yref") == "container"
            and leg.get("yanchor") == "top" and not (leg.get("title") or {}).get("text")):
        size = float((leg.get("font") or {}).get("size") or 14)
        before = legend_rows(legend_names(scene, "legend"), size, DESIGN_WIDTH_PX - 10.0)
        phases = [tr for tr in scene.legend_entries()
                  if str(tr.get("legendgroup") or "").startswith("phase:")
                  and (tr.get("legend") or "legend") == "legend"]
        if phases and PHASES_LEGEND not in lay:  # phases: a column right of the plots
            for tr in phases:
                tr["legend"] = PHASES_LEGEND
            lay[PHASES_LEGEND] = phases_legend(size)
        wrap = top_legend_width(width_px, m.get("l", 80), m.get("r", 80),
                                [str(tr["name"]) for tr in phases], size)
        saved = max(0, before - legend_rows(legend_names(scene, "legend"), size, wrap - 10.0))
        lay["legend"] = titled_legend(leg, title)
        lay["title"] = {"text": ""}
        if saved and "t" in m:
            m["t"] = max(0.0, m["t"] - saved * legend_row_px(size))
    return scene


__all__ = [
    "DESIGN_WIDTH_PX",
    "GAP_PX",
    "LEGEND_ITEM_PX",
    "MAX_LEGEND",
    "MODEBAR_PX",
    "PHASES_LEGEND",
    "PRESENTER_WIDTH_PX",
    "TITLE_PAD_PX",
    "Header",
    "cap_legend",
    "column_legend_px",
    "header",
    "header_layout",
    "legend_names",
    "legend_row_px",
    "legend_rows",
    "phases_legend",
    "pixel_anchored",
    "titled_legend",
    "toolbar_clear_title",
    "top_legend_width",
]
