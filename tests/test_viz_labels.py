"""Labels that never sit on a neuron or on each other, legends of at most seven entries, one
ray per direction — on the figures the pages show by default (Explorer, Overview, each
paper's first preset, Compare's default pair), in normal and presenter mode.

Geometry from the figure specs: text boxes estimated as in `viz.label_layout`, in data units
of a neuron panel as small as it gets on screen (`PANEL_PX`; on a larger panel every box and
marker shrinks towards its anchor, so what is apart stays apart), neuron markers at every
animation frame as the player composes them (`viz.scene.neuron_points`).
"""

from __future__ import annotations

import ast
import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.papers import PAPERS
from dynamics.simulate import simulate
from dynamics.timescales import with_auto_time
from tests.scenes import as_plotly
from viz.compare import PANEL_PX_COMPARE, compare_figure
from viz.header import MAX_LEGEND, legend_names
from viz.label_layout import PANEL_PX, Box, marker_boxes, panel_text_boxes
from viz.main_figure import main_figure
from viz.neuron_panel import PANEL_LIMIT
from viz.options import FigureOptions
from viz.scene import Scene

ROOT = Path(__file__).resolve().parent.parent
MODES = {"normal": FigureOptions(), "presenter": FigureOptions(presenter=True)}


def _overview_example() -> dict:
    """The Overview page's live example, read from the page's source (no Streamlit run)."""
    tree = ast.parse((ROOT / "app_pages" / "overview.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "EXAMPLE":
            return ast.literal_eval(node.value)
    raise AssertionError("no EXAMPLE in app_pages/overview.py")


def _page_configs() -> dict[str, Config]:
    out = {"explorer": with_auto_time(Config.from_dict({}))[0],
           "overview": Config.from_dict(_overview_example())}
    for key, paper in PAPERS.items():
        presets = paper.presets(True)
        out[key] = presets[next(iter(presets))]
    return out


@pytest.fixture(scope="module")
def page_runs() -> dict:
    out = {}
    for key, cfg in _page_configs().items():
        tr = simulate(cfg)
        out[key] = (tr, analyse(tr))
    pair = PAPERS["boursier"].comparisons["bf_leaky"]  # Compare's default pair
    for side, cfg in (("A", pair.a), ("B", pair.b)):
        tr = simulate(cfg)
        out[f"compare {side}"] = (tr, analyse(tr))
    return out


PAGES = [*_page_configs(), "compare"]


def _figure(page_runs: dict, page: str, mode: str) -> Scene:
    if page == "compare":
        (ta, aa), (tb, ab) = page_runs["compare A"], page_runs["compare B"]
        return compare_figure(ta, tb, aa, ab, ("A", "B"), MODES[mode])
    return main_figure(*page_runs[page], MODES[mode])


def _panels(sc: Scene) -> list[tuple[str, dict, float]]:
    """(x axis, its neurons item, pixels per data unit at its smallest) per neuron panel."""
    items = [it for it in sc.items if it["kind"] == "neurons"]
    unit = (PANEL_PX_COMPARE if len(items) > 1 else PANEL_PX) / (2 * PANEL_LIMIT)
    return [(it["traces"][0]["xaxis"], it, unit) for it in items]


def _static_marker_boxes(sc: Scene, xaxis: str, unit: float) -> list[Box]:
    """Data points' markers (arrow heads, dots) drawn in the panel."""
    out = []
    for t in sc.static_traces():
        meta = t.get("meta") if isinstance(t.get("meta"), dict) else {}
        if t.get("xaxis", "x") != xaxis or not meta.get("data"):
            continue
        h = (float(t["marker"]["size"]) / 2 + 1) / unit
        out += [Box(x - h, x + h, y - h, y + h) for x, y in zip(t["x"], t["y"], strict=True)]
    return out


def _leaders(sc: Scene, xaxis: str) -> list[tuple[tuple, tuple]]:
    for t in sc.static_traces():
        if t.get("xaxis", "x") == xaxis and t.get("name") == "leader lines":
            pts = list(zip(t["x"], t["y"], strict=True))
            return [(pts[i], pts[i + 1]) for i in range(0, len(pts) - 1, 3)]
    return []


def _segment_radius(p: tuple, q: tuple) -> float:
    (px, py), (qx, qy) = p, q
    dx, dy = qx - px, qy - py
    n = dx * dx + dy * dy
    s = 0.0 if n == 0 else max(0.0, min(1.0, -(px * dx + py * dy) / n))
    return math.hypot(px + s * dx, py + s * dy)


def overlaps(sc: Scene) -> dict[str, int]:
    """Counts of label–marker (any frame) and label–label overlaps, labels outside their
    panel, and leader lines crossing the neurons' disc or another label, over every panel."""
    n = {"label-marker": 0, "label-label": 0, "outside": 0, "leaders": 0, "labels": 0}
    for xa, neurons, unit in _panels(sc):
        boxes = panel_text_boxes(sc, xa, unit_px=unit, limit=PANEL_LIMIT)
        caption = [b for t, b in boxes if "max ‖w‖" in t]
        labels = [b for t, b in boxes if "max ‖w‖" not in t]
        n["labels"] += len(labels)
        assert len(caption) == 1 and caption[0].y1 <= -PANEL_LIMIT + 1e-9  # under the panel
        bounds = Box(-PANEL_LIMIT, PANEL_LIMIT, -PANEL_LIMIT, PANEL_LIMIT)
        n["outside"] += sum(not b.inside(bounds, tol=1e-6) for b in labels)
        n["label-label"] += sum(a.overlaps(b) for a, b in itertools.combinations(labels, 2))
        static = _static_marker_boxes(sc, xa, unit)
        for frame in marker_boxes(sc, neurons, unit):
            for m in (*frame, *static):
                n["label-marker"] += sum(m.overlaps(b) for b in labels)
        for p, q in _leaders(sc, xa):
            shrunk = [Box(b.x0 + 1e-6, b.x1 - 1e-6, b.y0 + 1e-6, b.y1 - 1e-6) for b in labels]
            n["leaders"] += _segment_radius(p, q) < 1.0
            n["leaders"] += sum(b.crosses_segment(p, q) for b in shrunk) > 0
    return n


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("page", PAGES)
def test_labels_never_sit_on_neurons_or_each_other(page_runs, page, mode):
    af = _figure(page_runs, page, mode)
    got = overlaps(af)
    assert got["labels"] >= 1, got  # the rays are named on the panel, not only on hover
    assert {k: v for k, v in got.items() if k != "labels"} == {
        "label-marker": 0, "label-label": 0, "outside": 0, "leaders": 0}, got


def test_the_overlap_count_sees_a_label_on_a_neuron(page_runs):
    """The check above can fail: a label moved onto a neuron of the last frame is counted."""
    from viz.scene import neuron_points

    sc = main_figure(*page_runs["explorer"])
    neurons = next(it for it in sc.items if it["kind"] == "neurons")
    x, y, _size, _pos = neuron_points(sc, neurons, sc.frames.n - 1)
    labels = next(it["trace"] for it in sc.items
                  if it["kind"] == "trace" and it["trace"].get("name") == "panel labels")
    labels["x"] = [float(x[0]), *list(labels["x"])[1:]]
    labels["y"] = [float(y[0]), *list(labels["y"])[1:]]
    assert overlaps(sc)["label-marker"] >= 1


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("page", PAGES)
def test_legend_short_and_in_words_and_one_ray_per_direction(page_runs, page, mode):
    sc = _figure(page_runs, page, mode)
    fig = as_plotly(sc)
    names = legend_names(sc)
    assert len(names) <= MAX_LEGEND, names
    assert len(names) == len(set(names)), names  # nothing repeated
    assert not [n for n in names if "_j" in n or n.startswith("a_")], names  # words
    for xa, _neurons, _unit in _panels(sc):
        rays = [t for t in fig.data if (t.xaxis or "x") == xa and isinstance(t.meta, dict)
                and "direction" in t.meta]
        for a, b in itertools.combinations(rays, 2):
            va, vb = np.array([a.x[-1], a.y[-1]]), np.array([b.x[-1], b.y[-1]])
            cos = float(va @ vb) / (np.linalg.norm(va) * np.linalg.norm(vb))
            same_length = abs(np.linalg.norm(va) - np.linalg.norm(vb)) < 1e-6
            assert not (cos > 0.9995 and same_length), (a.meta, b.meta)  # drawn once
        panel_text = [t for t in fig.data if (t.xaxis or "x") == xa and t.name == "panel labels"]
        texts = [s.replace("<br>", " ") for t in panel_text for s in t.text]
        assert len(texts) == len(set(texts)), texts


def test_coinciding_directions_share_one_ray_named_in_words(page_runs):
    """The Explorer's default data: extremal max 1, x₊ and γ_[n] point the same way."""
    fig = as_plotly(main_figure(*page_runs["explorer"]))
    rays = [t for t in fig.data if isinstance(t.meta, dict) and "direction" in t.meta]
    merged = next(t for t in rays if "extremal max 1" in t.meta["direction"])
    assert {"x₊", "γ_[n]"} <= set(merged.meta["direction"].split(", "))
    assert merged.name == "where positive neurons go"
    for sym in ("extremal max 1", "x₊", "γ_[n]"):
        assert sym in merged.hovertemplate
    labels = next(t for t in fig.data if t.name == "panel labels")
    assert "where positive neurons go" in [s.replace("<br>", " ") for s in labels.text]


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("page", ["explorer", "wang_ma", "compare"])
def test_time_panel_titles_fit_their_panels(page_runs, page, mode):
    """A y-axis title (drawn turned along its panel) is no longer than its panel is tall, so
    it never reaches the next panel's title or the strip: in presenter mode on the shortest
    plot area a 1280×720 window leaves (45 % of its height), else at the figure's height."""
    from viz.label_layout import text_px
    from viz.player import design_height

    sc = _figure(page_runs, page, mode)
    fig = as_plotly(sc)
    m = fig.layout.margin
    plot_px = 0.45 * 720 if mode == "presenter" else design_height(sc) - m.t - m.b
    for key in fig.layout:
        ax = fig.layout[key]
        if not key.startswith("yaxis") or not (ax.title and ax.title.text) or ax.scaleanchor:
            continue
        size = (ax.title.font.size if ax.title.font and ax.title.font.size
                else fig.layout.font.size)
        length = text_px(ax.title.text, size)[0]
        assert length <= (ax.domain[1] - ax.domain[0]) * plot_px, (key, ax.title.text)
