"""Spec tests of the main figure on real (tiny) simulated trajectories: its scene, read as the
browser composes it (`tests/scenes.py`)."""

from __future__ import annotations

import ast
import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from dynamics.annotations import Analysis, Direction, Phase, TimeMarker
from dynamics.config import Config
from dynamics.papers import ReportFigure
from dynamics.papers.base import loss_and_series
from dynamics.simulate import simulate
from tests.scenes import as_plotly, at, first_trace, index_of
from viz.arrays import as_array
from viz.main_figure import main_figure
from viz.neuron_panel import neuron_subset
from viz.options import FigureOptions
from viz.payload import decode, encode
from viz.report_figures import report_figure
from viz.scene import Scene, neuron_points
from viz.style import PLOTLY_CONFIG, plotly_config
from viz.time_axes import frame_indices


def _cfg(**updates: object) -> Config:
    base: dict = {"model": {"width": 12}, "integrator": {"t_end": 40.0},
                  "record": {"frames": 30, "scalars": 60}}
    for path, value in updates.items():
        sec, key = path.split("__")
        base.setdefault(sec, {})[key] = value
    return Config.from_dict(base)


@pytest.fixture(scope="module")
def traj():
    return simulate(_cfg())


@pytest.fixture(scope="module")
def long_traj():
    return simulate(_cfg(record__frames=260, model__width=6))


def _analysis() -> Analysis:
    return Analysis(
        phases=(Phase("alignment", 0.0, 5.0, "detected", "rule fired"),
                Phase("growth", 5.0, 30.0, "predicted")),
        markers=(TimeMarker("T₁", 3.0, "predicted"), TimeMarker("fit", 1.0, "detected")),
        directions=(Direction("e₁ max", np.array([1.0, 0.0]), "extremal_max"),
                    Direction("diag min", np.array([-1.0, -1.0]), "extremal_min")),
        cone_normals=np.array([[1.0, 0.0]]),
    )


def _opts(**kw: object) -> FigureOptions:
    return FigureOptions(**kw)  # type: ignore[arg-type]


def _trace(fig, name: str):
    if isinstance(fig, Scene):
        fig = as_plotly(fig)
    hits = [t for t in fig.data if t.name == name
            or (isinstance(t.meta, dict) and name in str(t.meta.get("direction")).split(", "))]
    assert hits, f"no trace named {name!r}: {[t.name for t in fig.data]}"
    return hits[0]


def _time_axes(fig) -> list[str]:
    if isinstance(fig, Scene):
        fig = as_plotly(fig)
    return [k for k in fig.layout.to_plotly_json() if k.startswith("xaxis") and k != "xaxis"]


def test_frames_are_arrays_that_move_only_the_moving_traces(traj):
    sc = main_figure(traj)
    fig = as_plotly(sc)
    assert 2 <= sc.frames.n <= 200 and sc.frames.n == traj.n_frames
    i_pos, i_neg = index_of(sc, "positive neuron"), index_of(sc, "negative neuron")
    cursors = [i for i, t in enumerate(fig.data) if t.name == "time cursor"]
    assert len(cursors) == len(_time_axes(fig)) == 3  # norms, loss, accuracy
    # what moves: the neurons (composed from the run's arrays) and the tracked attributes
    neurons = [it for it in sc.items if it["kind"] == "neurons"]
    assert len(neurons) == 1 and neurons[0]["traces"][0]["name"] == "positive neuron"
    tracked = [i for i, it in enumerate(sc.items) if it.get("tracks")]
    moving = {i_pos, i_neg, *(first_trace(sc, i) for i in tracked)}
    assert {i_pos, i_neg, *cursors} <= moving and len(moving) < len(fig.data)
    for it in sc.items:  # every track has a value at every frame
        for track in it.get("tracks", ()):
            n = len(track["texts"]) if "texts" in track else \
                sc.arrays[track["values"]["$a"]].shape[0]
            assert n == sc.frames.n
    # the neurons really move between the first and the last frame
    x0, x1 = at(sc, i_pos, "x", 0), at(sc, i_pos, "x", sc.frames.n - 1)
    assert x0.shape == x1.shape and not np.allclose(x0, x1)
    # frames are labelled by time, in order, each with a sentence of commentary
    assert sc.frames.labels[-1] == f"t = {traj.t[-1]:.3g}"
    assert sc.frames.labels[0] == "t = 0"
    assert len(sc.frames.captions) == sc.frames.n and all(sc.frames.captions)
    assert sc.frames.captions[0].startswith("Start:")


def test_payload_round_trip_keeps_the_scene(traj):
    sc = main_figure(traj, _analysis())
    back = decode(encode(sc))
    assert back.layout["meta"]["frames"] == back.frames.n == sc.frames.n
    assert back.frames == sc.frames and back.items == sc.items and back.kind == "main"
    assert [p.x for p in back.panels] == [p.x for p in sc.panels]
    assert set(back.arrays) == set(sc.arrays)
    for name, arr in sc.arrays.items():
        assert back.arrays[name].dtype == arr.dtype
        assert np.array_equal(back.arrays[name], arr, equal_nan=True), name
    for k in (0, sc.frames.n // 2, sc.frames.n - 1):
        item = next(it for it in sc.items if it["kind"] == "neurons")
        for a, b in zip(neuron_points(sc, item, k), neuron_points(back, item, k), strict=True):
            assert np.array_equal(a, b)
    with pytest.raises(ValueError):
        decode(b"not a payload at all")


def test_frames_subsampled_to_at_most_200(long_traj):
    assert long_traj.n_frames > 200
    sc = main_figure(long_traj)
    assert sc.frames.n <= 200
    assert sc.frames.labels[-1] == f"t = {long_traj.t[-1]:.3g}"
    idx = frame_indices(long_traj.n_frames, 200)
    assert idx[0] == 0 and idx[-1] == long_traj.n_frames - 1 and np.all(np.diff(idx) > 0)


def _neuron_radii(sc: Scene, k: int) -> np.ndarray:
    item = next(it for it in sc.items if it["kind"] == "neurons")
    x, y, _size, _pos = neuron_points(sc, item, k)
    return np.hypot(x, y)


def test_normalised_radius_puts_largest_neuron_on_unit_circle(traj):
    sc = main_figure(traj, options=_opts(radius="normalised"))
    for k in (0, sc.frames.n - 1):
        assert _neuron_radii(sc, k).max() == pytest.approx(1.0, abs=1e-4)


def test_phases_in_one_strip_and_markers_on_every_time_axis(traj):
    fig = as_plotly(main_figure(traj, _analysis()))
    axes = _time_axes(fig)
    shapes = fig.layout.shapes
    strip = [s for s in shapes if str(s.name).startswith("strip:")]
    # one opaque block per phase above the time panels (pixel-sized, at any height)
    assert {s.name for s in strip} == {"strip:alignment:detected", "strip:growth:predicted"}
    for s in strip:
        assert s.yref == "paper" and s.ysizemode == "pixel" and s.y0 >= 0
        assert s.fillcolor.startswith("#") and len(s.fillcolor) == 7  # no translucency
    assert next(s for s in strip if "predicted" in s.name).line.dash == "dash"
    # no translucent band on the time panels (a tint only of the first row, which never
    # overlaps itself)
    for s in shapes:
        assert not str(s.fillcolor or "").startswith("rgba"), s.name
    for xa in axes:
        ref = "x" + xa.removeprefix("xaxis")
        names = {s.name for s in shapes if s.xref == ref}
        assert {"marker:marker:T₁", "marker:marker:fit"} <= names, (xa, names)
    assert next(s for s in shapes if s.name == "marker:marker:T₁").line.dash == "dash"
    assert next(s for s in shapes if s.name == "marker:marker:fit").line.dash == "solid"
    # every drawn vertical line is labelled in a lane above the strip, with its hover
    anns = {a.name: a for a in fig.layout.annotations if str(a.name).startswith("strip-")}
    for s in shapes:
        if str(s.name).startswith("marker:"):
            lab = anns[f"strip-label:{s.name.removeprefix('marker:')}"]
            assert lab.hovertext and lab.text
    # the blocks are named in plain words (inside, or on a tab), the paper's name on hover
    text = anns["strip-text:alignment"].text + str(
        getattr(anns.get("strip-label:phase:alignment"), "text", "")) + str(
        getattr(anns.get("strip-words:alignment"), "text", ""))  # slid aside for a line
    assert "neurons turn" in text
    assert "<b>neurons turn, norms tiny</b><br>alignment (detected" in \
        anns["strip-text:alignment"].hovertext


def test_strip_rows_and_lanes_never_overlap(traj):
    from viz.phase_strip import StripLayout, plan_strip
    from viz.style import style_for
    from viz.time_axes import time_axis_spec

    spec = time_axis_spec(traj, "log", "t")
    overlapping = [Phase(f"p{k}", 0.5 * k + 0.1, 0.5 * k + 9.0) for k in range(9)]
    many = Analysis(phases=(*overlapping, Phase("alignment", 0.0, 6.0),
                            Phase("initial plateau", 0.2, 5.0)),
                    markers=tuple(TimeMarker(f"m{k}", 2.0 + 0.3 * k, "detected")
                                  for k in range(12)))
    for presenter in (False, True):
        st = plan_strip(many, spec, style_for(presenter), StripLayout(max_rows=3, max_lanes=2))
        assert st.rows <= 3 and st.lanes <= 2
        for a, b in itertools.combinations(st.blocks, 2):
            if a.row == b.row:
                assert a.f1 <= b.f0 + 1e-9 or b.f1 <= a.f0 + 1e-9, (a.phase, b.phase)
        # the plateau inside alignment is folded into its hover, not drawn
        assert "initial plateau" not in {b.phase.name for b in st.blocks}
        assert any("initial plateau" in "".join(b.hover) for b in st.blocks)
        # labels in a lane do not overlap (estimated widths on the narrowest axis)
        spans = [(lab.lane, *_lane_span(lab, st.axis_px, presenter)) for lab in st.labels]
        for (la, a0, a1), (lb, b0, b1) in itertools.combinations(spans, 2):
            assert la != lb or a1 <= b0 + 1e-9 or b1 <= a0 + 1e-9, (la, a0, a1, b0, b1)
        # words inside a block fit it
        for b in st.blocks:
            if b.text:
                assert _text_frac(b.text, st.axis_px, presenter) <= b.f1 - b.f0 + 1e-9
        # markers without room for a label are not drawn as lines
        assert len(st.marks) < 12 and all(m.label in st.labels for m in st.marks)


def _text_frac(text: str, axis_px: float, presenter: bool) -> float:
    from viz.label_layout import text_px
    from viz.style import style_for

    return (text_px(text, style_for(presenter).small * 0.9)[0] + 8) / axis_px


def _lane_span(lab, axis_px: float, presenter: bool) -> tuple[float, float]:
    w = _text_frac(lab.text, axis_px, presenter)
    if lab.xanchor == "center":
        return lab.f - w / 2, lab.f + w / 2
    return (lab.f, lab.f + w) if lab.xanchor == "left" else (lab.f - w, lab.f)


def test_no_phase_shapes_without_analysis(traj):
    fig = as_plotly(main_figure(traj))
    assert not [s for s in fig.layout.shapes
                if str(s.name).startswith(("strip", "marker", "tint"))]


def test_overlays_are_projected_onto_the_plane(traj):
    fig = main_figure(traj, _analysis())
    ray = _trace(fig, "e₁ max")
    x, y = as_array(ray.x), as_array(ray.y)
    assert x[1] > 1.0 and abs(y[1]) < 1e-9  # plane axis 1 is drawn along x
    diag = _trace(fig, "diag min")
    dx, dy = as_array(diag.x)[1], as_array(diag.y)[1]
    assert dx < 0 and dy < 0 and dx == pytest.approx(dy)
    assert ray.line.dash != diag.line.dash  # max and min styled apart
    # named in words, the symbols in the hover
    assert ray.name == "where positive neurons go" and "e₁ max" in ray.hovertemplate
    assert diag.name == "where negative neurons go"
    cones = _trace(fig, "on/off edge")  # the boundary of x = e₁ is the y axis
    cx = np.array([v for v in cones.x if v is not None], dtype=float)
    assert np.allclose(cx, 0.0, atol=1e-9)


def test_off_plane_direction_is_shortened():
    tr = simulate(Config.from_dict({"data": {"kind": "teacher", "d": 4}, "model": {"width": 6},
                                    "integrator": {"t_end": 5.0},
                                    "record": {"frames": 8, "scalars": 20}}))
    e3 = tr.plane[0] * 0.6 + 0.8 * _orth(tr.plane)
    fig = main_figure(tr, Analysis(directions=(Direction("tilted", e3, "target"),)))
    ray = _trace(fig, "tilted")
    length = math.hypot(as_array(ray.x)[1], as_array(ray.y)[1])
    clear = length / 0.6  # rays end on the labels' ring, just outside the neurons' disc
    assert 1.0 < clear < 1.3
    assert "60% in the plane" in ray.hovertemplate
    assert as_plotly(fig).layout.xaxis.title.text.startswith(tr.plane_names[0])
    # which plane the panel shows is said under the figure (axis titles stay short)
    assert "plane of v* and γ_[n] ⊥ v* (the data have d = 4 dimensions)" in \
        fig.layout["meta"]["glossary"]


def _orth(plane: np.ndarray) -> np.ndarray:
    d = plane.shape[1]
    for i in range(d):
        v = np.eye(d)[i] - plane.T @ (plane @ np.eye(d)[i])
        if np.linalg.norm(v) > 1e-6:
            return v / np.linalg.norm(v)
    raise AssertionError("no orthogonal vector")


def test_time_axis_options_change_axis_types(traj):
    log = as_plotly(main_figure(traj, options=_opts(time_axis="log")))
    lin = as_plotly(main_figure(traj, options=_opts(time_axis="linear")))
    assert log.layout.xaxis2.type == "log" and lin.layout.xaxis2.type == "linear"
    assert log.layout.xaxis4.type == "log"
    eps = traj.config.init.scale
    scaled_sc = main_figure(traj, options=_opts(time_axis="linear",
                                                time_scale="t_over_log_inv_eps"))
    scaled = as_plotly(scaled_sc)
    assert scaled.layout.xaxis2.range[1] == pytest.approx(traj.t[-1] / math.log(1 / eps))
    assert "ln(1/ε)" in scaled.layout.xaxis4.title.text
    assert lin.layout.xaxis2.range[1] == pytest.approx(traj.t[-1])
    # the cursor follows the time unit
    cur = list(scaled.data).index(next(t for t in scaled.data if t.name == "time cursor"))
    last = at(scaled_sc, cur, "x", scaled_sc.frames.n - 1)
    assert last[0] == pytest.approx(traj.t[-1] / math.log(1 / eps), rel=1e-6)


def test_log_radius_is_fixed_scale(traj):
    sc = main_figure(traj, options=_opts(radius="log"))
    r_first, r_last = _neuron_radii(sc, 0), _neuron_radii(sc, sc.frames.n - 1)
    assert r_first.max() < r_last.max() <= 1.0 + 1e-6  # neurons grow outward on a log scale
    # the decade rings are named on the panel's axis (never over the neurons) and on hover
    fig = as_plotly(sc)
    ya = fig.layout.yaxis
    assert ya.showticklabels and ya.ticktext and all("10<sup>" in t for t in ya.ticktext)
    assert np.all(np.diff(ya.tickvals) > 0) and max(ya.tickvals) <= 1.0 + 1e-9
    assert not [t for t in fig.data if t.mode == "text" and "10<sup>" in str(t.text)]


def test_status_message_in_title():
    tr = simulate(Config.from_dict({"init": {"scale": 1.0}, "model": {"width": 4},
                                    "loss": {"kind": "exponential"},
                                    "integrator": {"method": "gd", "lr": 60.0, "t_end": 6000.0},
                                    "record": {"frames": 10, "scalars": 20}}))
    assert tr.status == "diverged"
    fig = as_plotly(main_figure(tr))
    assert tr.message[:30] in fig.layout.title.text
    ok = as_plotly(main_figure(simulate(_cfg(record__frames=5))))
    assert "⚠" not in ok.layout.title.text


def test_regression_data_has_no_accuracy_panel():
    tr = simulate(Config.from_dict({"data": {"kind": "three_point"}, "model": {"width": 8},
                                    "integrator": {"t_end": 10.0},
                                    "record": {"frames": 10, "scalars": 20}}))
    fig = as_plotly(main_figure(tr))
    assert len(_time_axes(fig)) == 2
    assert fig.layout.xaxis.title.text == "x" and fig.layout.yaxis.title.text == "bias"


def test_large_width_limits_curves_and_size():
    tr = simulate(Config.from_dict({"model": {"width": 500}, "integrator": {"t_end": 40.0},
                                    "record": {"frames": 250, "scalars": 100}}))
    sc = main_figure(tr)
    size = len(encode(sc))
    # 200 frames × 500 neurons × (in-plane direction as 2 int16, norm as float32) ≈ 1.6 MB,
    # the norms at every frame once more for the curves, and the layout: under 2.5 MB
    assert size < 2_500_000, size
    assert sc.meta["norm_curves"] <= 150
    assert _trace(sc, "max ‖w_j‖") is not None and _trace(sc, "median ‖w_j‖") is not None
    assert sc.frames.n == 200


def test_neuron_subset_is_deterministic_and_keeps_the_largest():
    rng = np.random.default_rng(1)
    norms = rng.random(1000)
    a, b = neuron_subset(norms, 150), neuron_subset(norms, 150)
    assert np.array_equal(a, b) and a.size <= 150
    assert np.argmax(norms) in a
    assert np.array_equal(neuron_subset(norms[:10], 150), np.arange(10))


def test_presenter_mode_is_larger(traj):
    from viz.player import design_height
    base = main_figure(traj)
    big = main_figure(traj, options=_opts(presenter=True))
    assert big.layout["font"]["size"] > base.layout["font"]["size"] >= 14
    # presenter figures take the window's height, up to the one they were laid out for
    assert "height" not in big.layout and big.layout["autosize"]
    assert (design_height(big) or 0) >= base.layout["height"]


# ----------------------------------------------------------------------------- module layout
VIZ = Path(__file__).resolve().parent.parent / "viz"


def test_figures_use_only_public_names_of_other_viz_modules():
    """One home per name: no viz module imports another one's underscore names, and none
    computes the network's function (that is dynamics.readouts)."""
    for path in sorted(VIZ.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or 0) > 0:
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{path.name} imports private {private} from .{node.module}"
            if isinstance(node, ast.FunctionDef):
                assert node.name != "network_output", f"{path.name} computes h(x)"


def test_viz_modules_stay_small():
    sizes = {p.name: len(p.read_text().splitlines()) for p in VIZ.glob("*.py")}
    assert max(sizes.values()) <= 400, sizes


def test_plotly_config_is_shared_and_copied():
    cfg = plotly_config(filename="early-alignment-digits", width=1400, height=760)
    assert cfg["toImageButtonOptions"]["filename"] == "early-alignment-digits"
    assert PLOTLY_CONFIG["toImageButtonOptions"]["filename"] == "early-alignment"
    assert cfg["displaylogo"] is False and cfg["scrollZoom"] is False


def test_report_figure_draws_loss_series_and_markers(traj):
    an = Analysis(markers=(TimeMarker("T₁", 3.0, "predicted"),
                           TimeMarker("fit", 1.0, "detected")))
    spec = ReportFigure(traj.config, loss_and_series(
        "min", "stable rank",
        lambda tr: {"stable_rank": np.asarray(tr.frame_metrics["stable_rank"])}))
    fig = report_figure("min", traj, an, spec=spec)
    assert [t.name for t in fig.data] == ["loss", "stable_rank"]
    assert fig.layout.annotations[1].text == "stable rank"
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis2.type == "linear"
    dashes = sorted(s.line.dash for s in fig.layout.shapes)
    assert dashes == ["dash", "dash", "solid", "solid"]  # each marker on both panels
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert float(np.min(fig.data[0].x)) > 0  # t = 0 drawn at t₁/2 on the log axis


def test_phase_times_figure_colours_by_phase_and_marks_predictions() -> None:
    """The Wang & Ma phase-time sweep: colour = phase (the app's phase colours), the predicted
    Phase IV dotted with open markers, NaN (phase not reached) left out."""
    import pandas as pd

    from viz.style import phase_colour
    from viz.sweeps import builtin_figure

    rows = []
    for angle in (10.0, 30.0):
        for p in (2.0, 4.0):
            rows.append({"data.angle_deg": angle, "data.p": p, "init.scale": 1e-3, "seed": 0,
                         "status": "completed", "t_phase_III": 300.0 + angle,
                         "t_phase_IV": np.nan if angle == 30.0 else 600.0,
                         "t_phase_IV_pred": np.nan if angle == 30.0 else 610.0})
    fig = builtin_figure("phase_times", pd.DataFrame(rows))
    by_name = {t.name: t for t in fig.data}
    assert by_name["Phase III, p = 2, init 0.001"].line.color == phase_colour("Phase III")
    pred = by_name["Phase IV predicted, p = 4, init 0.001"]
    assert pred.line.color == phase_colour("Phase IV") and pred.line.dash == "dot"
    assert pred.marker.symbol.endswith("-open")
    assert list(by_name["Phase IV, p = 2, init 0.001"].x) == [10.0]  # NaN at 30° dropped


def test_the_player_draws_with_plotly_white_of_the_pinned_plotly():
    """The composer (`viz/player/scene.js`) gives every figure the "plotly_white" template;
    the part it carries is the pinned plotly's own, value for value."""
    import json

    import plotly.io as pio

    js = (VIZ / "player" / "scene.js").read_text()
    start = js.index("// BEGIN WHITE")
    body = js[start:js.index("// END WHITE")]
    white = json.loads(body[body.index("{"):body.rindex("}") + 1])
    want = pio.templates["plotly_white"].to_plotly_json()

    def within(part: object, whole: object, path: str) -> None:
        if isinstance(part, dict):
            assert isinstance(whole, dict), path
            for k, v in part.items():
                assert k in whole, f"{path}.{k} is not in plotly_white"
                within(v, whole[k], f"{path}.{k}")
        elif isinstance(part, list) and part and isinstance(part[0], dict):
            within(part[0], whole[0], f"{path}[0]")  # type: ignore[index]
        else:
            assert part == whole, path

    within(white, want, "template")
    for key in ("font", "paper_bgcolor", "plot_bgcolor", "xaxis", "yaxis", "hoverlabel"):
        assert white["layout"][key] == want["layout"][key], key


def test_no_plotly_figure_is_built_on_the_page_path(traj, monkeypatch):
    """The server describes, the browser composes: describing and encoding every page's
    animated figure builds no Plotly object (no validation on the page path)."""
    import plotly.basedatatypes

    from viz.compare import compare_figure

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("a Plotly object was built on the page path")

    monkeypatch.setattr(plotly.basedatatypes.BaseFigure, "__init__", refuse)
    monkeypatch.setattr(plotly.basedatatypes.BasePlotlyType, "__init__", refuse)
    for opts in (_opts(), _opts(presenter=True, radius="log", time_axis="linear")):
        assert encode(main_figure(traj, _analysis(), opts))[:4] == b"EAEP"
        assert encode(compare_figure(traj, traj, None, _analysis(), options=opts))[:4] == b"EAEP"
