"""Geometry of the figures' text: phase colours fixed by name, at most three phase
labels, panel labels that do not overlap, a norm axis down to the smallest initial norm,
titles clear of legends, and sweep figures without NaN sizes. Boxes are computed from the
figure specs with the text estimates of `viz.label_layout` / `viz.header`."""

from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.papers import PAPERS
from dynamics.simulate import simulate
from tests.scenes import as_plotly
from viz import sweeps as vs
from viz.compare import column_px, compare_figure
from viz.header import (
    DESIGN_WIDTH_PX,
    PHASES_LEGEND,
    PRESENTER_WIDTH_PX,
    TITLE_PAD_PX,
    legend_names,
    legend_row_px,
    legend_rows,
    pixel_anchored,
    top_legend_width,
)
from viz.label_layout import LINE_EM, Box, text_lines, text_px
from viz.main_figure import main_figure
from viz.options import FigureOptions
from viz.phase_strip import FILL_ALPHA, mix
from viz.phase_table import phase_table
from viz.player import design_height
from viz.style import PHASE_COLOURS, phase_colour

PRESENTER = FigureOptions(presenter=True)


def _main(tr, an, options: FigureOptions | None = None) -> go.Figure:
    return as_plotly(main_figure(tr, an, options))


def _cmp(tr_a, tr_b, an_a, an_b, options: FigureOptions | None = None, **kw) -> go.Figure:
    return as_plotly(compare_figure(tr_a, tr_b, an_a, an_b, options=options, **kw))


def _run(cfg: Config):
    tr = simulate(cfg)
    return tr, analyse(tr)


def _points(**updates) -> Config:
    base = {"model": {"width": 20}, "record": {"frames": 40, "scalars": 80}}
    for k, v in updates.items():
        sec, key = k.split("__")
        base.setdefault(sec, {})[key] = v
    return Config.from_dict(base)


@pytest.fixture(scope="module")
def runs() -> dict:
    boursier = PAPERS["boursier"].presets(True)["three_point_balanced"]
    return {
        "default": _run(Config.from_dict({})),
        "eps1e-6": _run(_points(init__scale=1e-6)),
        "eps1": _run(_points(init__scale=1.0)),
        "boursier": _run(boursier.with_updates({"model.width": 60})),
        "angles": _run(_points(data__kind="points", data__angles_deg=(100.0, 140.0, 300.0, 330.0))),
        "angles2": _run(_points(data__kind="points", data__angles_deg=(40.0, 60.0, 220.0, 250.0))),
        "min_toy": _run(PAPERS["min"].presets(True)["toy_2d"]),
        "wang_ma": _run(PAPERS["wang_ma"].presets(True)["four_phases"].with_updates(
            {"model.width": 40})),
    }


# ----------------------------------------------------------------------------- colours
def test_phase_colour_is_fixed_by_name():
    assert phase_colour("fitting") == PHASE_COLOURS["fitting"]
    assert phase_colour("fitting (predicted)") == phase_colour("Fitting")
    assert phase_colour("alignment ends") == phase_colour("alignment")
    # unknown names: a stable hash, not a list position
    assert phase_colour("my new phase") == phase_colour("my new phase")
    assert phase_colour("Phase I") != phase_colour("Phase II")


def _strip_colours(fig) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for s in fig.layout.shapes:
        if str(s.name).startswith("strip:") and s.fillcolor and "detected" in s.name:
            out.setdefault(s.name.split(":")[1], set()).add(s.fillcolor)
    return out


def test_same_phase_same_colour_in_runs_and_figures(runs):
    tr_a, an_a = runs["eps1e-6"]
    tr_b, an_b = runs["eps1"]
    ca, cb = _strip_colours(_main(tr_a, an_a)), _strip_colours(_main(tr_b, an_b))
    common = set(ca) & set(cb)
    assert "fitting" in common
    cmp = _strip_colours(_cmp(tr_a, tr_b, an_a, an_b))
    for name in common | set(ca) | set(cb) | set(cmp):
        colours = ca.get(name, set()) | cb.get(name, set()) | cmp.get(name, set())
        assert colours == {mix(phase_colour(name), FILL_ALPHA)}, name  # opaque, by name


# ----------------------------------------------------------------------------- the strip
def test_every_phase_is_in_the_strip_or_its_hover_and_in_the_table(runs):
    for key in ("default", "boursier", "min_toy"):
        tr, an = runs[key]
        fig = _main(tr, an)
        anns = [a for a in fig.layout.annotations if str(a.name).startswith("strip-")]
        hover = " ".join(str(a.hovertext) for a in anns)
        for ph in an.phases:
            assert f"{ph.name} ({ph.source}" in hover, (key, ph.name)  # its paper's name
        for mk in an.markers:
            assert f"{mk.name} ({mk.source})" in hover, (key, mk.name)
        # the main story is written in plain words on the strip (inside a block or a tab)
        words = " ".join(str(a.text) for a in anns)
        assert "neurons turn" in words, key
        rows = phase_table(an)
        assert len(rows) == len(an.phases) + len(an.markers)
        assert [r["from t"] for r in rows] == sorted(r["from t"] for r in rows)
        assert {"what", "name", "in words", "source", "from t", "to t", "colour",
                "evidence"} <= set(rows[0])


def test_strip_blocks_never_overlap_and_fit_their_words(runs):
    for key in ("default", "boursier", "min_toy", "eps1"):
        for opts in (None, PRESENTER):
            fig = _main(*runs[key], opts)
            blocks = [s for s in fig.layout.shapes if str(s.name).startswith("strip:")]
            for a, b in itertools.combinations(blocks, 2):
                same_row = a.y0 == b.y0
                apart = a.x1 <= b.x0 * (1 + 1e-9) or b.x1 <= a.x0 * (1 + 1e-9)
                assert not same_row or apart, (key, a.name, b.name)


# ----------------------------------------------------------------------------- norm axis
def test_norm_axis_reaches_smallest_initial_norm(runs):
    tr, an = runs["min_toy"]
    assert tr.config.init.scale == 1e-20
    n0 = np.asarray(tr.norms[0], float)
    smallest = float(n0[n0 > 0].min())
    assert smallest < 1e-15
    fig = _main(tr, an)
    assert fig.layout.yaxis2.type == "log"
    assert fig.layout.yaxis2.range[0] <= math.log10(smallest)
    assert fig.layout.yaxis2.range[1] >= math.log10(float(np.nanmax(tr.norms[-1])))


# ----------------------------------------------------------------------------- header
def _header_px(fig, width: float = DESIGN_WIDTH_PX) -> tuple[float, float, float]:
    """(title bottom, legend top, legend bottom) in px from the figure's top. A presenter
    figure carries its title as the legend's own title (hanging from the top edge), and its
    legend wraps to the plot area of a window-wide figure beside the phases' column."""
    lay = fig.layout
    size = lay.legend.font.size
    if lay.legend.title and lay.legend.title.text:
        assert not lay.title.text
        assert lay.legend.yref == "container" and lay.legend.y == 1.0
        lines = text_lines(lay.legend.title.text)
        title_bottom = TITLE_PAD_PX + lay.legend.title.font.size * LINE_EM * len(lines)
        legend_top = title_bottom
        m = lay.margin
        wrap = top_legend_width(max(width, PRESENTER_WIDTH_PX), m.l, m.r,
                                legend_names(fig, PHASES_LEGEND), size)
        rows = legend_rows(legend_names(fig, "legend"), size, wrap - 10)
    else:
        lines = text_lines(lay.title.text)
        title_bottom = TITLE_PAD_PX + lay.title.font.size * LINE_EM * len(lines)
        assert lay.legend.yref == "container" and lay.legend.yanchor == "top"
        legend_top = (1 - lay.legend.y) * lay.height
        rows = legend_rows(legend_names(fig), size, width - 10)
    return title_bottom, legend_top, legend_top + rows * legend_row_px(size)


def _above_plot_px(fig) -> float:
    """How far the annotations above the plot area (label rows, subplot titles) reach up."""
    m = fig.layout.margin
    plot_px = (fig.layout.height or design_height(fig)) - m.t - m.b
    up = 0.0
    for a in fig.layout.annotations:
        if a.yref == "paper" and a.y is not None and a.y >= 1.0:
            size = a.font.size or 14
            up = max(up, (a.y - 1.0) * plot_px + (a.yshift or 0.0)
                     + len(text_lines(a.text)) * size * LINE_EM)
    return up


@pytest.mark.parametrize("width", [DESIGN_WIDTH_PX, 1280.0])
def test_title_legend_and_labels_do_not_overlap(runs, width):
    (tr_a, an_a), (tr_b, an_b) = runs["eps1e-6"], runs["eps1"]
    figs = [_main(*runs["default"]), _main(*runs["boursier"]),
            _main(*runs["default"], PRESENTER), _main(*runs["boursier"], PRESENTER),
            _cmp(tr_a, tr_b, an_a, an_b), _cmp(tr_a, tr_b, an_a, an_b, PRESENTER)]
    for fig in figs:
        title_bottom, legend_top, legend_bottom = _header_px(fig, width)
        assert title_bottom <= legend_top
        assert legend_bottom <= fig.layout.margin.t - _above_plot_px(fig) + 1e-6


def _fractional(fig) -> list[str]:
    """Positions that Plotly would scale with the figure's height: annotations beyond the plot
    area at a fraction, a legend at a fraction below the top."""
    out = [f"annotation {a.text!r} y={a.y}" for a in fig.layout.annotations
            if a.yref == "paper" and a.y is not None and not 0.0 <= a.y <= 1.0]
    leg = fig.layout.legend
    if leg.yref == "container" and leg.y is not None and leg.y != 1.0:
        out.append(f"legend y={leg.y}")
    return out


def test_presenter_figures_are_laid_out_in_pixels(runs):
    """Presenter figures take the height of the window: nothing may sit at a fraction of the
    height (it would drift into the title or the ticks), and the margins must leave the
    plots most of a 720 px window."""
    (tr_a, an_a), (tr_b, an_b) = runs["eps1e-6"], runs["boursier"]
    wang_ma = _run(PAPERS["wang_ma"].presets(True)["four_phases"].with_updates(
        {"model.width": 40}))
    scenes = {"default": main_figure(*runs["default"], PRESENTER),
              "wang_ma": main_figure(*wang_ma, PRESENTER),
              "compare": compare_figure(tr_a, tr_b, an_a, an_b, options=PRESENTER)}
    assert _fractional(_main(*wang_ma))  # the normal figure: laid out for its own height
    for name, sc in scenes.items():
        fig = as_plotly(sc)
        assert fig.layout.height is None and design_height(fig)
        assert _fractional(fig) == [], name
        again = pixel_anchored(copy.deepcopy(sc), design_height(sc) or 0)
        assert again.layout == sc.layout and list(again.traces()) == list(sc.traces()), name
        assert not fig.layout.updatemenus and not fig.layout.sliders  # the player's, outside
        m = fig.layout.margin
        # a 720 px window less the page header (≤ 100 px; Compare's one-line header ≤ 75 px)
        # keeps ~45 % of its height for the plots (the browser test measures the pages)
        header = 75 if name == "compare" else 100
        assert m.t + m.b <= 720 - header - 12 - 0.43 * 720, (name, m.t, m.b)
        # the phase strip and its (at most two) lanes of words sit at pixel offsets above
        # the plots
        blocks = [sh for sh in fig.layout.shapes if str(sh.name).startswith("strip:")]
        assert blocks and all(sh.ysizemode == "pixel" for sh in blocks), name
        lanes = {a.yshift for a in fig.layout.annotations
                 if str(a.name or "").startswith("strip-label:")}
        assert len(lanes) <= 2, (name, lanes)


def test_compare_subtitles_do_not_collide(runs):
    """The run titles over the neuron panels fit their columns and stay clear of each other
    and of the run tags of the phase strips (at the left of the time panels)."""
    (tr_a, an_a), (tr_b, an_b) = runs["eps1e-6"], runs["boursier"]
    for opts in (None, PRESENTER):
        fig = _cmp(tr_a, tr_b, an_a, an_b, opts, labels=("run A (small ε)", "run B"))
        m = fig.layout.margin
        width = PRESENTER_WIDTH_PX if opts else DESIGN_WIDTH_PX
        plot_w = width - m.l - m.r
        boxes = []
        for a in fig.layout.annotations:
            w, h = text_px(a.text, a.font.size or 14)
            if a.xref == "paper" and a.y is not None and a.y >= 0.999:  # run titles
                cx = m.l + a.x * plot_w
                boxes.append((a.text, Box(cx - w / 2, cx + w / 2, 0, h)))
            elif str(a.name).startswith("strip-run:"):  # right-anchored left of the axis
                x1 = m.l + fig.layout.xaxis3.domain[0] * plot_w + (a.xshift or 0)
                boxes.append((a.text, Box(x1 - w, x1, a.yshift - h / 2, a.yshift + h / 2)))
        assert len(boxes) == 4  # A, B, and the strips' run tags
        for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
            assert not a.overlaps(b), (ta, tb)
        for k in (0, 1):
            assert text_px(boxes[k][0], fig.layout.annotations[k].font.size)[0] <= \
                column_px(k, width)


# ----------------------------------------------------------------------------- sweeps
def _walk(obj, path=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            yield from _walk(v, f"{path}[{i}]")
    else:
        yield path, obj


def _sweep_table() -> pd.DataFrame:
    rows = []
    for g in (0.0, 0.05):
        for scheme in ("balanced", "gaussian"):
            for lam in (1e-3, 1e-2, 1.0):
                for seed in range(2):
                    rows.append({"index": len(rows), "model.gamma": g, "init.scheme": scheme,
                                 "init.scale": lam, "seed": seed, "status": "completed",
                                 "trapped": bool(seed), "final_loss": lam / 10,
                                 "data.angle_deg": 30.0 * (1 + g), "t_phase_I": 2.0 + seed,
                                 "t_phase_II": 5.0})
    return pd.DataFrame(rows)


def test_sweep_figures_have_no_nan_sizes():
    df = _sweep_table()
    figs = [vs.trap_figure(df), vs.phase1_figure(df),
            vs.heatmap_figure(df, "init.scale", "init.scheme", "final_loss"),
            vs.heatmap_figure(df, "init.scheme", "model.gamma", "trapped"),
            vs.default_figure(df, ["init.scale", "init.scheme", "model.gamma"], "final_loss"),
            vs.lines_figure(df, "init.scale", "final_loss", color="init.scheme")]
    for fig in figs:
        for path, v in _walk(fig.layout.to_plotly_json()):
            if isinstance(v, float):
                assert math.isfinite(v), path
        assert not fig.layout.images
        for tr in fig.data:
            if tr.type != "heatmap":
                continue
            # text labels need category axes, else plotly.js sizes the <image> as NaN
            for axis in (fig.layout.xaxis, fig.layout.yaxis):
                assert axis.type == "category"
            assert all(isinstance(v, str) for v in list(tr.x) + list(tr.y))


# ----------------------------------------------------------------------------- real data
def test_real_data_titles_caption_and_strip_fit_their_columns():
    """Presenter mode at a 1280 px window and normal mode at a 1600 px one (the player is
    1140 px wide beside the sidebar): every panel title fits its panel's width, each line of
    the frame caption fits its corner, the time axes have tick labels only at the bottom (no
    tick label touches the next row's titles), and the phase strip sits above the first row
    with the row's titles lifted over it."""
    from dynamics.papers.min import digits_config
    from viz.real_data import real_data_figure
    from viz.style import style_for

    cfg = digits_config(True).with_updates({"integrator.t_end": 2.0, "record.frames": 8})
    tr, an = _run(cfg)
    for presenter, width in ((True, PRESENTER_WIDTH_PX), (False, 1140.0)):
        small = style_for(presenter).small
        fig = as_plotly(real_data_figure(tr, an, PRESENTER if presenter else None))
        columns = [fig.layout[k].domain for k in fig.layout if k.startswith("xaxis")]
        plot_w = width - fig.layout.margin.l - fig.layout.margin.r
        for ann in fig.layout.annotations[:10]:  # make_subplots' titles: x at mid-column
            width_px = min(d[1] - d[0] for d in columns if d[0] <= ann.x <= d[1]) * plot_w
            assert text_px(ann.text, small)[0] <= width_px, (presenter, ann.text, width_px)
        cap = next(t for t in fig.data if getattr(t, "xaxis", None) == "x20")
        corner_px = (fig.layout.xaxis20.domain[1] - fig.layout.xaxis20.domain[0]) * plot_w
        assert len(text_lines(cap.text[0])) == 3  # two lines were cut by it at 1280 px
        assert text_px(cap.text[0], style_for(presenter).font)[0] <= corner_px, cap.text[0]
        if not presenter:  # and at the narrowest figure (a 1280 px window beside the sidebar)
            narrow = (DESIGN_WIDTH_PX - fig.layout.margin.l - fig.layout.margin.r) * (
                fig.layout.xaxis20.domain[1] - fig.layout.xaxis20.domain[0])
            assert text_px(cap.text[0], style_for(False).font)[0] <= narrow, cap.text[0]
        time = [k for k in fig.layout if k.startswith("xaxis") and fig.layout[k].type == "log"]
        bottom = [k for k in time if fig.layout[k].title.text]
        assert bottom and all(fig.layout[k].showticklabels is False for k in time
                              if k not in bottom)
        blocks = [sh for sh in fig.layout.shapes if str(sh.name).startswith("strip:")]
        assert blocks and all(sh.ysizemode == "pixel" for sh in blocks)
        lifted = [a for a in fig.layout.annotations[:10] if a.yshift]
        assert len(lifted) == 2  # the two time columns' first titles
        words = " ".join(str(a.text) for a in fig.layout.annotations
                         if str(a.name).startswith("strip-"))
        assert "neurons turn" in words


# ----------------------------------------------------------------------------- sweep curves
def _xy(t) -> tuple[np.ndarray, np.ndarray] | None:
    if t.x is None or t.y is None or (t.showlegend is False and t.fill):
        return None
    x, y = np.asarray(t.x, dtype=object), np.asarray(t.y, dtype=object)
    if x.size == 0 or x.size != y.size or any(v is None for v in y):
        return None
    return x, y.astype(float)


def hidden_pairs(fig) -> list[tuple[str, str]]:
    """Curves drawn exactly over an earlier one (same points, same axes) that hide it: the
    later one is not thinner, its markers are not smaller and not hollow."""
    out = []
    drawn = [(t, _xy(t)) for t in fig.data if t.type == "scatter" and not t.fill]
    for (e, ex), (lt, lx) in itertools.combinations([d for d in drawn if d[1]], 2):
        same_axes = (e.xaxis, e.yaxis) == (lt.xaxis, lt.yaxis)
        if not same_axes or ex[0].shape != lx[0].shape or not (
                np.array_equal(ex[0], lx[0]) and np.allclose(ex[1], lx[1])):
            continue
        thinner = "lines" in (lt.mode or "") and (lt.line.width or 2) < (e.line.width or 2)
        smaller = "markers" in (lt.mode or "") and (lt.marker.size or 6) < (e.marker.size or 6)
        hollow = str(lt.marker.symbol or "").endswith("-open")
        if not (thinner or smaller or hollow):
            out.append((str(e.name), str(lt.name)))
    return out


def _coinciding_table() -> pd.DataFrame:
    """Runs where every scheme, γ and d gives the same numbers: all curves coincide."""
    rows = []
    for g in (0.0, 0.05):
        for scheme in ("balanced", "dominated", "gaussian"):
            for lam in (4.0 ** -5, 4.0 ** -4, 4.0 ** -3, 1.0):
                for dim in (2, 4):
                    for p in (1.0, 2.0):
                        rows.append({"model.gamma": g, "init.scheme": scheme, "seed": 0,
                                     "init.scale": lam, "status": "completed", "data.d": dim,
                                     "trapped": lam < 0.5, "max_angle": 10 * lam,
                                     "data.angle_deg": 30.0, "data.p": p,
                                     "t_phase_III": 5.0, "t_phase_IV": 9.0,
                                     "t_phase_IV_pred": 9.0, "final_loss": 0.1})
    return pd.DataFrame(rows)


def test_no_sweep_curve_hides_exactly_under_another():
    df = _coinciding_table()
    figs = {"trap": vs.trap_figure(df), "max angle": vs.max_angle_figure(df, table={}),
            "phase times": vs.phase_times_figure(df),
            "lines": vs.lines_figure(df, "init.scale", "final_loss", color="init.scheme")}
    for name, fig in figs.items():
        assert hidden_pairs(fig) == [], name
        names = legend_names(fig)
        assert len(names) <= 7 and len(names) == len(set(names)), (name, names)
    # the check sees a curve drawn the same way over an equal one
    bad = go.Figure([go.Scatter(x=[1, 2], y=[0, 1], name="a", line={"width": 2}),
                     go.Scatter(x=[1, 2], y=[0, 1], name="b", line={"width": 2})])
    assert hidden_pairs(bad) == [("a", "b")]


# ----------------------------------------------------------------------------- a strip to read
STRIP_RUNS = ("default", "boursier", "min_toy", "eps1", "wang_ma")


def _strip_boxes(fig, presenter: bool) -> tuple[list, list, list]:
    """From a main figure: its strip's word boxes (name, level, f0, f1) along the axis (axis
    fractions on the narrowest axis, estimated widths), the blocks (name, level, f0, f1) and
    the lines through the strip (marker stems: (f, top level); leaders: (level, f0, f1))."""
    from viz.main_figure import PRESENTER_AXIS_PX
    from viz.phase_strip import AXIS_PX

    axis_px = PRESENTER_AXIS_PX if presenter else AXIS_PX
    xa = fig.layout.xaxis2
    lo, hi = xa.range
    log = xa.type == "log"

    def frac(x: float) -> float:
        return ((math.log10(x) if log else x) - lo) / (hi - lo)

    words, blocks, lines = [], [], []
    for a in fig.layout.annotations:
        name = str(a.name or "")
        if not name.startswith(("strip-text:", "strip-words:", "strip-label:", "strip-row:")):
            continue
        if not str(a.text or "").strip():
            continue
        w = (text_px(a.text, a.font.size)[0] + 4) / axis_px
        f = (a.x - lo) / (hi - lo) + (a.xshift or 0) / axis_px
        if name.startswith("strip-row:"):
            f0, f1 = f - w, f  # right-aligned left of the axis
        else:
            f0 = {"left": f, "right": f - w}.get(a.xanchor, f - w / 2)
            f1 = f0 + w
        words.append((name, round(a.yshift), f0, f1))
    for s in fig.layout.shapes:
        name = str(s.name or "")
        if name.startswith("strip:"):
            blocks.append((name, round((s.y0 + s.y1) / 2), frac(s.x0), frac(s.x1)))
        elif name.startswith("marker-stem:"):
            lines.append(("stem", frac(s.x0), s.y1))
        elif name.startswith("strip-leader:"):
            parts = s.path.split()
            xb, y0, _x, ymid, xe = (float(parts[i]) for i in (1, 2, 4, 5, 7))
            lines.append(("leader", frac(xb), frac(xe), y0, ymid))
    return words, blocks, lines


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
def test_every_phase_block_is_labelled_in_words_and_every_row_named(runs, presenter):
    """An orange block had no words at all (only its hover said "norms grow, loss falls") and
    the rows were not named: now every block carries its words (inside, slid aside for a
    line, or on a tab touching it or joined to it by a leader) and every row its name."""
    for key in STRIP_RUNS:
        tr, an = runs[key]
        fig = _main(tr, an, PRESENTER if presenter else None)
        anns = {str(a.name): a for a in fig.layout.annotations if a.name}
        blocks = [s for s in fig.layout.shapes if str(s.name).startswith("strip:")]
        assert blocks, key
        for s in blocks:
            phase = str(s.name).split(":")[1]
            said = [str(getattr(anns.get(f"{k}:{phase}"), "text", "") or "").strip()
                    for k in ("strip-text", "strip-words", "strip-label:phase")]
            assert any(said), (key, phase)
        levels = {round((s.y0 + s.y1) / 2) for s in blocks}
        named = {round(a.yshift) for n, a in anns.items() if n.startswith("strip-row:")}
        assert levels == named, (key, levels, named)
        rows = {a.text for n, a in anns.items() if n.startswith("strip-row:")}
        by = {ph.by for ph in an.phases if ph.by}
        # presenter mode keeps two levels: one row may be a paper's alone (Wang & Ma's I–IV)
        assert "this run" in rows or (presenter and rows and rows <= by), (key, rows)
        if by and not presenter:  # a paper's own phases: its row carries its name
            assert rows & by, (key, rows, by)


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
def test_strip_words_never_overlap_and_no_line_crosses_them(runs, presenter):
    """Words in the strip (blocks', tabs, markers' names, rows' names) never overlap one
    another, and no marker's line or tab's leader runs through words (a dashed line ran
    through "theory: alignment bound T")."""
    for key in STRIP_RUNS:
        fig = _main(*runs[key], PRESENTER if presenter else None)
        words, _blocks, lines = _strip_boxes(fig, presenter)
        for (na, la, a0, a1), (nb, lb, b0, b1) in itertools.combinations(words, 2):
            assert la != lb or a1 <= b0 + 1e-6 or b1 <= a0 + 1e-6, (key, na, nb)
        for line in lines:
            if line[0] == "stem":
                _k, f, top = line
                hit = [n for n, lv, w0, w1 in words
                       if lv < top and w0 < f < w1 and not n.endswith(f"marker:{n}")]
                hit = [n for n in hit if not n.startswith("strip-label:marker")
                       or lv_of(words, n) < top - 1]
                assert not hit, (key, f, hit)
            else:
                _k, fb, fe, _y0, ymid = line
                lo_, hi_ = min(fb, fe), max(fb, fe)
                hit = [n for n, lv, w0, w1 in words
                       if abs(lv - ymid) < 1 and w0 < hi_ - 1e-3 and w1 > lo_ + 1e-3
                       and not (min(abs(w0 - fe), abs(w1 - fe)) < 1e-2)]
                assert not hit, (key, line, hit)


def lv_of(words: list, name: str) -> float:
    return next(lv for n, lv, _a, _b in words if n == name)


def test_a_marker_line_slides_a_blocks_words_aside():
    """Min et al.'s bound T falls inside the alignment block, under its words: the words move
    aside within the block and the line is drawn, named in a lane above."""
    tr, an = _run(PAPERS["min"].presets(True)["toy_2d_alpha1e-6"])
    fig = _main(tr, an)
    names = {str(s.name) for s in fig.layout.shapes}
    assert "marker-stem:marker:Min et al. T bound" in names
    words, _b, _l = _strip_boxes(fig, False)
    assert any(n.startswith("strip-label:marker:Min et al. T bound") for n, *_r in words)


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
def test_log_axes_carry_at_most_five_labels_and_the_loss_stays_in_its_panel(runs, presenter):
    """Min et al.'s ‖w_j‖ axis had 8 labels from 1 to 10⁻²¹ touching each other, and the
    Explorer's loss curve ran off the bottom of its panel."""
    most = 4 if presenter else 5
    for key in (*STRIP_RUNS, "min_toy"):
        tr, an = runs[key]
        fig = _main(tr, an, PRESENTER if presenter else None)
        for name in ("yaxis2", "yaxis3"):
            ax = fig.layout[name]
            if ax.type != "log":
                continue
            lo, hi = ax.range
            ticks = [k for k in range(math.ceil(lo), math.floor(hi) + 1) if k % ax.dtick == 0]
            assert len(ticks) <= most, (key, name, lo, hi, ax.dtick)
        curve = next(t for t in fig.data if t.name == "loss")
        loss = np.asarray(curve.y, float)
        low = float(np.min(loss[np.isfinite(loss) & (loss > 0)]))
        assert math.log10(low) >= fig.layout.yaxis3.range[0], key  # the curve's lowest point


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
def test_every_symbol_shown_is_defined_in_the_glossary(runs, presenter):
    """The labels used symbols the page never defined (±μ, w*): the strip now speaks in words
    and every symbol left in the figure's visible text is defined, in words and formula, in
    its glossary line (under the figure; under the player in presenter mode)."""
    from viz.glossary import undefined, used

    for key in (*STRIP_RUNS, "min_toy"):
        sc = main_figure(*runs[key], PRESENTER if presenter else None)
        fig = as_plotly(sc)
        line = sc.layout["meta"]["glossary"]
        texts = [fig.layout.title.text or "", fig.layout.legend.title.text or ""]
        texts += [str(a.text or "") for a in fig.layout.annotations if a.name != "glossary"]
        texts += [str(ax.title.text or "") for ax in (fig.layout[k] for k in fig.layout
                                                      if k.startswith(("xaxis", "yaxis")))]
        texts += list(sc.frames.captions) + list(sc.frames.labels)
        for tr_ in fig.data:
            t = tr_.text
            texts += [t] if isinstance(t, str) else [str(x) for x in (t or ())]
        for t in texts:
            assert not undefined(t), (key, t, undefined(t))
        for sym in used(texts):
            assert f"{sym.shown}: {sym.meaning}" in line, (key, sym.shown)
        strip = [str(a.text) for a in fig.layout.annotations
                 if str(a.name or "").startswith(("strip-text", "strip-label:phase"))]
        assert not any(c in "".join(strip) for c in "μ*"), (key, strip)
        in_fig = [a for a in fig.layout.annotations if a.name == "glossary"]
        assert bool(in_fig) is (not presenter), key  # presenter: under the player
