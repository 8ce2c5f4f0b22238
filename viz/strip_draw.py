"""Drawing the phase strip (`viz.phase_strip` plans it): its blocks and their words, the
tabs (on a leader when pushed off their block), the markers' lines through the time panels
and up to their names, each row's name at its left, and the faint tint of the first row's
phases on the time panels. Shapes and annotations in Plotly's vocabulary, pixel-sized
vertically, so the strip keeps its look at any figure height."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .label_layout import text_px
from .phase_strip import (
    MARK_GAP_PX,
    NAME_EM,
    Strip,
    axis_value,
    mix,
    row_hover,
    row_name,
    row_px,
)
from .strip_lanes import text_w
from .style import INK, MARKER_COLOUR, Style
from .time_axes import TimeAxisSpec


def _display(spec: TimeAxisSpec, f: float) -> float:
    """The display time at axis fraction f (a shape's x on the time axis: Plotly places
    shapes on a log axis by their value, not its log)."""
    v = axis_value(spec, f)
    return float(10.0 ** v) if spec.log else float(v)


def strip_items(strip: Strip, spec: TimeAxisSpec, xaxis: str,
                time_axes: Sequence[tuple[str, str]], style: Style, *, base_px: float = 0.0,
                anchor: float = 1.0, name_room_px: tuple[float, float] | None = None
                ) -> tuple[list[dict], list[dict]]:
    """(shapes, annotations) drawing `strip` above the time panels whose x axis is `xaxis`
    (the blocks and tabs), with marker lines on every one of `time_axes`; `base_px`: pixels
    between the panels' top (at paper y = `anchor`) and the strip's first row. With
    `name_room_px` = (the first level's, the others') every row is named at its left
    (`row_name`) in that many pixels (a name wider than that gives way to "theory" or
    "run")."""
    rp = row_px(strip.size)
    shapes: list[dict] = []
    anns: list[dict] = []

    def px(level: float) -> float:
        return base_px + 2 + level * rp

    where = _Where(spec, xaxis, anchor, px, rp)
    _block_items(strip, where, shapes, anns)
    _label_items(strip, where, shapes, anns)
    for mk in strip.marks:
        dash = "dash" if mk.predicted else "solid"
        line = {"color": MARKER_COLOUR, "width": 1.3, "dash": dash}
        for xa, ya in time_axes:
            shapes.append(dict(type="line", xref=xa, yref=f"{ya} domain", x0=mk.x, x1=mk.x,
                               y0=0, y1=1, line=line, layer="above",
                               name=f"marker:{mk.label.name}"))
        shapes.append(dict(type="line", xref=xaxis, yref="paper", ysizemode="pixel",
                           yanchor=anchor, x0=mk.x, x1=mk.x, y0=0,
                           y1=px(mk.label.lane) + rp - 2, line=line, layer="above",
                           name=f"marker-stem:{mk.label.name}"))
    if name_room_px is not None:
        _row_names(strip, where, name_room_px, anns)
    return shapes, anns


@dataclass(frozen=True)
class _Where:
    """Where a strip is drawn: its time axis (`spec`, the panels' x axis `xaxis`), the paper
    y it hangs from (`anchor`), a row level's pixel offset (`px`) and a row's height (`rp`)."""

    spec: TimeAxisSpec
    xaxis: str
    anchor: float
    px: Callable[[float], float]
    rp: float


def _block_items(strip: Strip, w: _Where, shapes: list[dict], anns: list[dict]) -> None:
    """The phase blocks (predicted ones dashed) and their words (slid aside for a marker's
    line: the words apart)."""
    spec, xaxis, anchor, px = w.spec, w.xaxis, w.anchor, w.px
    font = {"size": strip.size, "color": INK}
    for b in strip.blocks:
        y0, y1 = px(b.level), px(b.level + 1) - 2
        shapes.append(dict(
            type="rect", xref=xaxis, yref="paper", ysizemode="pixel", yanchor=anchor,
            x0=b.x0, x1=b.x1, y0=y0, y1=y1, fillcolor=b.fill, layer="above",
            line={"color": b.edge if b.predicted else "#FFFFFF",
                  "width": 1.5 if b.predicted else 1, "dash": "dash" if b.predicted else "solid"},
            name=f"strip:{b.phase.name}:{b.phase.source}"))
        moved = b.text_f is not None  # slid aside for a marker's line: the words apart
        anns.append(dict(
            x=axis_value(spec, (b.f0 + b.f1) / 2), xref=xaxis, y=anchor, yref="paper",
            yshift=(y0 + y1) / 2, yanchor="middle", xanchor="center", showarrow=False,
            text=(b.text if not moved else "") or " ", font=font,
            hovertext="".join(b.hover),
            width=max(6.0, (b.f1 - b.f0) * strip.axis_px - 4,
                      0.0 if moved else text_px(b.text, strip.size)[0] + 4), height=y1 - y0,
            name=f"strip-text:{b.phase.name}"))
        if moved:
            anns.append(dict(
                x=axis_value(spec, float(b.text_f or 0.0)), xref=xaxis, y=anchor,
                yref="paper", yshift=(y0 + y1) / 2, yanchor="middle", xanchor="center",
                showarrow=False, text=b.text, font=font, hovertext="".join(b.hover),
                name=f"strip-words:{b.phase.name}"))


def _label_items(strip: Strip, w: _Where, shapes: list[dict], anns: list[dict]) -> None:
    """The tabs in lanes (a leader from the block along to the tab; a marker's tab beside its
    line)."""
    spec, xaxis, anchor, px, rp = w.spec, w.xaxis, w.anchor, w.px, w.rp
    font = {"size": strip.size, "color": INK}
    for lab in strip.labels:
        if lab.leader is not None and lab.block is not None:  # from the block, along
            xb, edge = (_display(spec, f) for f in lab.leader)
            mid = px(lab.lane) + (rp - 2) / 2
            y0 = px(lab.block.level) if lab.lane < lab.block.level \
                else px(lab.block.level + 1) - 2
            shapes.append(dict(
                type="path", xref=xaxis, yref="paper", ysizemode="pixel", yanchor=anchor,
                path=f"M {xb:.6g} {y0:.2f} L {xb:.6g} {mid:.2f} L {edge:.6g} {mid:.2f}",
                line={"color": lab.border, "width": 1.2}, layer="above",
                name=f"strip-leader:{lab.name}"))
        marker = lab.name.startswith("marker:")
        shift = 0.0 if not marker else (MARK_GAP_PX if lab.xanchor == "left" else -MARK_GAP_PX)
        x, xanchor = lab.f, lab.xanchor
        if lab.block is not None:  # the words are narrower than estimated: keep the tab's
            half = text_w(lab.text, strip.size, strip.axis_px) / 2  # side by its block
            mid = (lab.block.f0 + lab.block.f1) / 2
            if mid > lab.f + half / 2:
                x, xanchor = lab.f + half, "right"
            elif mid < lab.f - half / 2:
                x, xanchor = lab.f - half, "left"
        anns.append(dict(
            x=axis_value(spec, x), xref=xaxis, y=anchor, yref="paper",
            yshift=px(lab.lane) + (rp - 2) / 2, yanchor="middle", xanchor=xanchor,
            xshift=shift, showarrow=False, text=lab.text, font=font, bgcolor=lab.bg,
            bordercolor=lab.border, borderwidth=1, borderpad=1, hovertext=lab.hover,
            name=f"strip-label:{lab.name}"))


def _row_names(strip: Strip, w: _Where, name_room_px: tuple[float, float],
               anns: list[dict]) -> None:
    """Each row's name at its left in the room given (the first level's, the others'); a name
    wider than that gives way to "theory" or "run"."""
    size = strip.size * NAME_EM
    first = min((lv for lv, _o in strip.names), default=0)
    for level, origin in strip.names:
        name = row_name(origin)
        room = name_room_px[0] if level == first else name_room_px[1]
        for cand in (name, "theory" if origin else "run"):
            if text_px(cand, size)[0] <= room:
                name = cand
                break
        anns.append(dict(
            x=w.spec.range[0], xref=w.xaxis, y=w.anchor, yref="paper",
            yshift=w.px(level) + (w.rp - 2) / 2, yanchor="middle", xanchor="right", xshift=-4,
            showarrow=False, text=name, font={"size": size, "color": INK},
            hovertext=row_hover(origin), name=f"strip-row:{level}:{origin or 'run'}"))


def tint_shapes(strip: Strip, time_axes: Sequence[tuple[str, str]]) -> list[dict]:
    """A faint tint of the first row's phases on every time panel (they never overlap)."""
    out = []
    for b in strip.blocks:
        if b.row != 0 or b.predicted:
            continue
        out += [dict(type="rect", xref=xa, yref=f"{ya} domain", x0=b.x0, x1=b.x1, y0=0, y1=1,
                     layer="below", fillcolor=mix(b.edge, 0.07), line={"width": 0},
                     name=f"tint:{b.phase.name}") for xa, ya in time_axes]
    return out


__all__ = ["strip_items", "tint_shapes"]
