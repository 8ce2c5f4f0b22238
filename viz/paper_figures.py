"""The papers' own figures, drawn from data: `render(spec)` turns a declarative
`dynamics.figure_spec.FigureSpec` (panels of lines, points, bands and rules with linear or log
axes) into a go.Figure. Pure: it draws what the spec holds and computes nothing; every paper's
figure (its page sections, its report PNG) goes through it, so a paper never needs a figure
module of its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dynamics.figure_spec import Axis, Band, FigureSpec, Line, Points, Rule, Series

from .header import DESIGN_WIDTH_PX, PRESENTER_WIDTH_PX, legend_rows
from .style import GRID, INK, NEGATIVE, NEUTRAL, OKABE_ITO, POSITIVE, style_for, white_template
from .time_axes import log_dtick, y_axis_px

ROLE_COLOURS = {
    "positive": POSITIVE, "negative": NEGATIVE, "neutral": NEUTRAL,
    "theory": OKABE_ITO["bluish_green"], "accent": OKABE_ITO["orange"], "ink": INK,
}
DASHES = {"solid": "solid", "dash": "dash", "dot": "dot", "dashdot": "dashdot"}


def _axis(ax: Axis, values: Sequence[np.ndarray] = ()) -> dict[str, object]:
    """Plotly's axis for `ax`; a log axis without a range spans the positive `values` of its
    series (padded by 2 % of the decades) with a label every whole number of decades, at most
    MAX_LOG_LABELS (Plotly's own labels 2 and 5 between the decades crowd a wide axis)."""
    out: dict[str, object] = {"title_text": ax.title, "type": ax.type, "gridcolor": GRID,
                              "ticklabelstandoff": 5}  # off the corner the x and y labels share
    if ax.type == "log":
        out["exponentformat"] = "power"  # 10⁻⁹, not the SI letters (1n, 1f)
        if ax.range is None and not ax.tickvals:
            pos = np.concatenate([np.asarray(v, float).ravel() for v in values] or [[]])
            pos = pos[np.isfinite(pos) & (pos > 0)]
            if pos.size:
                lo, hi = math.log10(float(pos.min())), math.log10(float(pos.max()))
                pad = 0.02 * max(hi - lo, 0.5)
                out["range"] = [lo - pad, hi + pad]
                out["dtick"] = log_dtick(10 ** (lo - pad), 10 ** (hi + pad))
    if ax.range is not None:
        lo, hi = ax.range
        out["range"] = [np.log10(lo), np.log10(hi)] if ax.type == "log" else [lo, hi]
        if ax.type == "log" and not ax.tickvals:
            out["dtick"] = log_dtick(lo, hi)
    if ax.tickvals:
        out["tickvals"] = list(ax.tickvals)
        out["ticktext"] = list(ax.ticktext) or None
    return out


def _hover(text: tuple[str, ...], n: int) -> list[str] | None:
    return list(text) if len(text) == n else None


def _trace(s: Series, line_scale: float, marker: float, shown: set[str]) -> go.Scatter | None:
    """One series as a Scatter (None for a Rule: drawn as a shape). A `group` is listed in
    the legend once."""
    if isinstance(s, Rule):
        return None
    colour = ROLE_COLOURS[s.role]
    key = s.group or s.name
    legend = key not in shown
    shown.add(key)
    common = {"name": s.name, "legendgroup": key, "showlegend": legend, "opacity": s.opacity}
    if isinstance(s, Line):
        err = None
        if s.err_lo is not None and s.err_hi is not None:
            err = {"type": "data", "symmetric": False, "array": np.asarray(s.err_hi, float),
                   "arrayminus": np.asarray(s.err_lo, float), "color": colour,
                   "thickness": 2, "width": 6}
        return go.Scatter(x=s.x, y=s.y, mode="lines+markers" if s.markers else "lines",
                          line={"color": colour, "width": s.width * line_scale,
                                "dash": DASHES[s.dash]},
                          marker={"color": colour, "size": marker * 0.6}, error_y=err,
                          text=_hover(s.hover, len(s.x)),
                          hovertemplate="%{x:.4g}, %{y:.4g}<br>%{text}<extra>%{fullData.name}"
                                        "</extra>" if s.hover else
                                        "%{x:.4g}, %{y:.4g}<extra>%{fullData.name}</extra>",
                          **common)
    if isinstance(s, Points):
        return go.Scatter(x=s.x, y=s.y, mode="markers",
                          marker={"color": colour, "size": s.size * marker / 12,
                                  "symbol": s.symbol, "line": {"color": INK, "width": 1}
                                  if s.symbol == "diamond" else None},
                          text=_hover(s.hover, len(s.x)),
                          hovertemplate="%{x:.4g}, %{y:.4g}<br>%{text}<extra>%{fullData.name}"
                                        "</extra>" if s.hover else
                                        "%{x:.4g}, %{y:.4g}<extra>%{fullData.name}</extra>",
                          **common)
    assert isinstance(s, Band)
    xs = np.concatenate([s.x, s.x[::-1]])
    ys = np.concatenate([s.hi, s.lo[::-1]])
    return go.Scatter(x=xs, y=ys, fill="toself", mode="lines", line={"width": 0},
                      fillcolor=colour, hoverinfo="skip", **common)


def render(spec: FigureSpec, *, presenter: bool = False, height: int | None = None
           ) -> go.Figure:
    """The figure a spec describes: its panels side by side, each series in order, rules as
    lines across the panel, one legend below."""
    style = style_for(presenter)
    n = max(len(spec.panels), 1)
    # panels side by side: the gap holds the next panel's y tick labels and title (at the
    # narrowest figure)
    gap = (y_axis_px(style.font) + 16) / (DESIGN_WIDTH_PX - 80)  # (Plotly spaces them more)
    fig = make_subplots(rows=1, cols=n, shared_yaxes=spec.shared_y,
                        horizontal_spacing=0.04 if spec.shared_y else max(0.08, gap),
                        subplot_titles=[p.title for p in spec.panels])
    shown: set[str] = set()
    shapes: list[dict[str, object]] = []
    for col, panel in enumerate(spec.panels, start=1):
        for s in panel.series:
            tr = _trace(s, style.line / 2, style.marker_max, shown)
            if tr is not None:
                fig.add_trace(tr, row=1, col=col)
            elif isinstance(s, Rule):
                ref = "" if col == 1 else str(col)
                colour = ROLE_COLOURS[s.role]
                if s.axis == "x":
                    shapes.append({"type": "line", "xref": f"x{ref}", "yref": f"y{ref} domain",
                                   "x0": s.value, "x1": s.value, "y0": 0, "y1": 1,
                                   "line": {"color": colour, "width": 1,
                                            "dash": DASHES[s.dash]}, "name": s.name})
                else:
                    shapes.append({"type": "line", "xref": f"x{ref} domain", "yref": f"y{ref}",
                                   "x0": 0, "x1": 1, "y0": s.value, "y1": s.value,
                                   "line": {"color": colour, "width": 1,
                                            "dash": DASHES[s.dash]}, "name": s.name})
        xs = [s.x for s in panel.series if not isinstance(s, Rule)]
        ys = [v for p in (spec.panels if spec.shared_y else (panel,)) for s in p.series
              if not isinstance(s, Rule)
              for v in ((s.lo, s.hi) if isinstance(s, Band) else (s.y,))]
        fig.update_xaxes(**_axis(panel.x, xs), row=1, col=col)
        if col == 1 or not spec.shared_y:
            fig.update_yaxes(**_axis(panel.y, ys), row=1, col=col)
        else:
            fig.update_yaxes(type=panel.y.type, gridcolor=GRID, row=1, col=col)
    white_template(fig)
    # the legend at the figure's foot, under the x axes' labels and titles (one below the
    # other, whatever the height): the bottom margin holds both
    names = [str(t.name) for t in fig.data if t.showlegend is not False and t.name]
    rows = legend_rows(names, style.small, PRESENTER_WIDTH_PX if presenter
                       else DESIGN_WIDTH_PX) if names else 0
    axis_px = 2.9 * style.font + 6  # tick labels and the axis title
    legend_px = rows * style.small * 1.45 + 6
    base = height or int(400 * (1.2 if presenter else 1.0))
    fig.update_layout(
        height=round(base + legend_px),
        margin={"l": 64, "r": 16, "t": 72, "b": round(axis_px + legend_px)},
        title={"text": spec.title, "font": {"size": style.title, "color": INK}, "x": 0.01},
        font={"family": style.family, "size": style.font, "color": INK},
        legend={"font": {"size": style.small}, "orientation": "h", "yref": "container",
                "y": 0.0, "yanchor": "bottom", "x": 0.0, "xanchor": "left"},
        shapes=shapes, paper_bgcolor="white", plot_bgcolor="white")
    return fig



__all__ = ["ROLE_COLOURS", "render"]
