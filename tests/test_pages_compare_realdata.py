"""Compare and Real data pages: the figure builders' numbers (viz.compare, viz.real_data) and
the pages under Streamlit's AppTest (render, presets, controls, bad input, URL restore)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from devtools.apptest import controls_without_help, player_args, player_spec, players, run_page
from dynamics.config import Config
from dynamics.readouts import alignment_curves, class_means, mean_neuron
from dynamics.simulate import simulate
from tests.scenes import as_plotly
from viz.arrays import as_array
from viz.compare import compare_figure, difference_rows
from viz.real_data import real_data_figure
from viz.time_axes import common_grid, frames_on_grid

PAGES = Path(__file__).resolve().parent.parent / "app_pages"
DIGITS = Config.from_dict({
    "data": {"kind": "digits", "classes": [0, 1], "n_per_class": 40},
    "model": {"width": 12}, "loss": {"kind": "exponential", "reduction": "sum"},
    "init": {"scheme": "gaussian", "scale": 1e-6, "normalisation": "none"},
    "integrator": {"method": "gd", "lr": 2e-3, "t_end": 0.6},
    "record": {"frames": 40, "t_first": 2e-3}})


# ----------------------------------------------------------------------------- figure builders
@pytest.fixture(scope="module")
def digits_traj():
    return simulate(DIGITS)


def test_mean_neuron_image_is_mean_of_positive_rows(digits_traj):
    tr = digits_traj
    sc = real_data_figure(tr)
    fidx = sc.meta["frame_indices"]
    assert as_plotly(sc).data  # the scene is valid Plotly
    checked = 0
    for n in (0, len(fidx) // 2, len(fidx) - 1):
        f = fidx[n]
        W, a = tr.W_at(f), tr.a[f]
        assert W is not None
        want = W[a > 0].mean(axis=0)
        np.testing.assert_allclose(mean_neuron(tr, f, +1), want)
        np.testing.assert_allclose(mean_neuron(tr, f, -1), W[a < 0].mean(axis=0))
        img = want.reshape(8, 8)
        shown = np.asarray(sc.track("w̄₊", "z", n), float)  # w̄₊ heatmap of this frame
        np.testing.assert_allclose(shown, img / np.abs(img).max(), atol=1e-4)
        checked += 1
    assert checked == 3
    mp, mm = class_means(tr)
    np.testing.assert_allclose(mp, tr.X[tr.y > 0].mean(axis=0))
    np.testing.assert_allclose(mm, tr.X[tr.y < 0].mean(axis=0))


def test_alignment_band_matches_cosines(digits_traj):
    tr = digits_traj
    xp = tr.X[tr.y > 0].sum(axis=0)
    for sign, name in ((+1, "x₊"), (-1, "x₋")):
        cur = alignment_curves(tr, sign)
        for f in range(tr.n_frames):
            sel = tr.a[f] > 0 if sign > 0 else tr.a[f] < 0
            c = tr.cosines[name][f, sel]
            assert cur.lo[f] == pytest.approx(c.min()) and cur.hi[f] == pytest.approx(c.max())
            assert cur.count[f] == sel.sum()
    f = tr.n_frames - 1
    w = tr.W_at(f)[tr.a[f] > 0].mean(axis=0)
    cur = alignment_curves(tr, +1)
    assert cur.mean_neuron[f] == pytest.approx(w @ xp / np.linalg.norm(w) / np.linalg.norm(xp))
    assert cur.mean_neuron[f] > 0.9  # aligned by the end of the run
    # the band drawn in the figure is these numbers
    fig = as_plotly(real_data_figure(tr))
    hi_tr, lo_tr = fig.data[0], fig.data[1]
    ok = np.isfinite(cur.lo)
    np.testing.assert_allclose(as_array(hi_tr.y), cur.hi[ok], rtol=1e-6)
    np.testing.assert_allclose(as_array(lo_tr.y), cur.lo[ok], rtol=1e-6)


def test_real_data_figure_bars_for_non_image_data():
    cfg = Config.from_dict({"data": {"kind": "array", "X": [[1, 0.2], [0.9, 0.4], [-1, 0.1],
                                                            [-0.8, -0.3]],
                                     "y": [1, 1, -1, -1]},
                            "model": {"width": 6}, "loss": {"kind": "exponential"},
                            "init": {"scale": 1e-4}, "integrator": {"t_end": 20.0},
                            "record": {"frames": 30}})
    sc = real_data_figure(simulate(cfg))
    assert sc.meta["picture"] == "bars" and sc.frames.redraw
    assert sc.frames.n == len(sc.frames.labels) > 5
    assert {t["attr"] for it in sc.items for t in it.get("tracks", ())} >= {"y", "text", "x"}
    bars = as_plotly(sc, sc.frames.n - 1)
    assert [t.type for t in bars.data].count("bar") == 4


def test_common_grid_maps_each_run_to_its_last_frame_before():
    ta = np.array([0.0, 1.0, 2.0, 4.0])
    tb = np.array([0.0, 1.5, 3.0])
    grid = common_grid(ta, tb)
    np.testing.assert_array_equal(grid, [0, 1, 1.5, 2, 3, 4])
    np.testing.assert_array_equal(frames_on_grid(ta, grid), [0, 1, 1, 2, 2, 3])
    np.testing.assert_array_equal(frames_on_grid(tb, grid), [0, 0, 1, 1, 2, 2])  # b ended
    assert common_grid(np.linspace(0, 1, 500), np.linspace(0, 2, 500), 50).size <= 50


def test_compare_figure_frames_move_both_runs():
    a = simulate(Config().with_updates({"model.width": 8, "integrator.t_end": 30.0}))
    b = simulate(Config().with_updates({"model.width": 8, "init.scale": 1.0,
                                        "integrator.t_end": 10.0}))
    sc = compare_figure(a, b, None, None, ("A", "B"))
    grid = common_grid(a.t, b.t, 160)
    n = sc.frames.n
    assert n == grid.size
    last = as_plotly(sc, n - 1)
    captions = [t.text[0] for t in last.data if t.name == "frame caption"]
    assert len(captions) == 2
    assert any(f"t = {a.t[-1]:.3g}" in c for c in captions)
    assert any(f"t = {b.t[-1]:.3g}" in c for c in captions)  # B stays on its last frame
    cursors = [t for t in last.data if t.name == "time cursor"]
    assert cursors and all(float(c.x[0]) == pytest.approx(grid[-1]) for c in cursors)
    first = as_plotly(sc, 0)
    moved = [t.name for t0, t in zip(first.data, last.data, strict=True)
             if t.name in ("positive neuron", "negative neuron")
             and not np.array_equal(np.asarray(t0.x), np.asarray(t.x))]
    assert len(moved) >= 2  # both runs' neurons move
    rows = {r["quantity"]: r for r in difference_rows(a, b, None, None)}
    assert rows["final loss"]["A"] == f"{a.loss[-1]:.4g}"
    assert rows["end time t"]["differs"] == "●"


# ----------------------------------------------------------------------------- AppTest: Compare
def _app(page: str, params: dict[str, str] | None = None) -> AppTest:
    return run_page(PAGES / page, params, timeout=240)


_spec = player_spec


def _panel_titles(spec: dict) -> list[str]:
    return [a["text"] for a in spec["layout"]["annotations"][:2]]


def _q(at: AppTest) -> dict[str, str]:
    return {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}


@pytest.fixture(scope="module")
def compare_app() -> AppTest:
    return _app("compare.py")


def test_compare_renders_default_preset(compare_app):
    at = compare_app
    spec = _spec(at)
    assert spec["frames"]["n"] == len(spec["frames"]["labels"]) > 10
    a, b = _panel_titles(spec)
    assert "ReLU" in a and "leaky γ=0.05" in b
    assert not at.error and not at.warning
    assert _q(at) == {}  # the default view has the shortest link
    assert controls_without_help(at) == []  # help on every control
    df = at.dataframe[0].value
    row = df[df["quantity"] == "plateau escape"].iloc[0]
    assert row["A"] == "—" and 150 < float(row["B"]) < 350  # trapped vs escaping


def test_compare_preset_switch_changes_both_configs_and_figure():
    at = _app("compare.py")
    at.selectbox(key="cmp.preset").set_value("rich_lazy").run()
    assert not at.exception and not at.error
    assert at.select_slider(key="cmp.a.init.scale").value == pytest.approx(1e-6)
    assert at.select_slider(key="cmp.b.init.scale").value == pytest.approx(1.0)
    assert at.selectbox(key="cmp.a.data.kind").value == "points"
    a, b = _panel_titles(_spec(at))
    assert "ε=1e-06" in a and re.search(r"ε=1(?![\d.e])", b)  # ε = 1 exactly
    assert _q(at) == {"preset": "rich_lazy"}


@pytest.mark.parametrize(("kind", "path", "value", "expect"), [
    ("number_input", "b.model.width", 7, "m=7"),
    ("number_input", "a.model.gamma", 0.3, "leaky γ=0.3"),
    ("selectbox", "b.init.scheme", "gaussian", "Gaussian"),
])
def test_compare_controls_change_their_side(kind, path, value, expect):
    at = _app("compare.py", {"preset": "rich_lazy"})
    getattr(at, kind)(key="cmp." + path).set_value(value).run()
    assert not at.exception and not at.error
    a, b = _panel_titles(_spec(at))
    side, other = (a, b) if path.startswith("a.") else (b, a)
    assert expect in side and expect not in other
    assert _q(at)[path] == str(value)
    assert any("Edited from the preset" in c.value for c in at.caption)


def test_compare_display_option():
    at = _app("compare.py", {"preset": "rich_lazy"})
    at.radio(key="cmp.view.time_axis").set_value("linear").run()
    assert _spec(at)["layout"]["xaxis3"]["type"] == "linear"
    assert _q(at)["view.time_axis"] == "linear"


def test_compare_bad_value_shows_message():
    at = _app("compare.py", {"preset": "rich_lazy"})
    at.number_input(key="cmp.b.model.width").set_value(10**6).run()
    assert not at.exception
    msgs = " ".join(e.value for e in at.error)
    assert "Run B" in msgs and "over the limit" in msgs
    assert [player_args(p)["stale"] for p in players(at)] == [True]  # last figure, greyed


def test_compare_url_restores_both_sides():
    at = _app("compare.py", {"preset": "rich_lazy", "a.model.width": "9",
                             "a.init.scale": "0.01", "b.data.kind": "points",
                             "b.model.gamma": "0.1", "b.init.scale": "1.0",
                             "b.integrator.t_end": "100.0", "view.radius": "log"})
    assert not at.warning
    assert at.number_input(key="cmp.a.model.width").value == 9
    assert at.select_slider(key="cmp.a.init.scale").value == pytest.approx(0.01)
    assert at.number_input(key="cmp.b.model.gamma").value == pytest.approx(0.1)
    assert at.radio(key="cmp.view.radius").value == "log"
    a, b = _panel_titles(_spec(at))
    assert "m=9" in a and "ε=0.01" in a and "leaky γ=0.1" in b
    # the page writes back a link that reopens the same state
    q = _q(at)
    again = _app("compare.py", q)
    assert _panel_titles(_spec(again)) == [a, b]


def test_compare_malformed_url_warns():
    at = _app("compare.py", {"preset": "nope", "a.model.width": "lots", "zzz": "1"})
    text = " ".join(w.value for w in at.warning)
    assert "preset" in text and "model.width" in text and "zzz" in text
    assert _spec(at)


# ----------------------------------------------------------------------------- AppTest: Real data
@pytest.fixture(scope="module")
def real_app() -> AppTest:
    return _app("real_data.py")


def test_real_data_renders_default(real_app):
    at = real_app
    spec = _spec(at)
    assert "digits 0 (+1) vs 1 (−1)" in spec["layout"]["title"]["text"]
    assert "m = 50" in spec["layout"]["title"]["text"]
    assert spec["layout"]["meta"]["picture"] == "image"
    assert spec["frames"]["n"] == len(spec["frames"]["labels"]) > 20
    assert not at.error and not at.warning
    assert _q(at) == {}
    assert any("not say whether" in c.value for c in at.caption)  # the loss caveat
    assert controls_without_help(at) == []  # it had help on 2 of its 18 controls


@pytest.mark.parametrize(("kind", "key", "value", "expect", "param"), [
    ("selectbox", "data.classes.1", 7, "digits 0 (+1) vs 7 (−1)", ("data.classes", "0,7")),
    ("number_input", "model.width", 20, "m = 20", ("model.width", "20")),
    ("selectbox", "loss.kind", "logistic", "logistic loss", ("loss.kind", "logistic")),
    ("selectbox", "init.scheme", "balanced", "(balanced)", ("init.scheme", "balanced")),
])
def test_real_data_controls(kind, key, value, expect, param):
    at = _app("real_data.py", {"data.n_per_class": "40", "integrator.t_end": "0.5"})
    getattr(at, kind)(key="rd." + key).set_value(value).run()
    assert not at.exception and not at.error
    assert expect in _spec(at)["layout"]["title"]["text"]
    assert _q(at)[param[0]] == param[1]


def test_real_data_bad_value_shows_message():
    at = _app("real_data.py", {"data.n_per_class": "40", "integrator.t_end": "0.5"})
    at.selectbox(key="rd.data.classes.1").set_value(0).run()
    assert not at.exception
    assert any("two different digit classes" in e.value for e in at.error)
    assert [player_args(p)["stale"] for p in players(at)] == [True]  # last figure, greyed


def test_real_data_url_restores():
    at = _app("real_data.py", {"data.classes": "3,8", "model.width": "30",
                               "data.n_per_class": "40", "integrator.t_end": "0.5",
                               "view.time_axis": "linear"})
    assert not at.warning
    assert at.selectbox(key="rd.data.classes.0").value == 3
    assert at.selectbox(key="rd.data.classes.1").value == 8
    assert at.number_input(key="rd.model.width").value == 30
    spec = _spec(at)
    assert "digits 3 (+1) vs 8 (−1)" in spec["layout"]["title"]["text"]
    assert spec["layout"]["xaxis"]["type"] == "linear"
    bad = _app("real_data.py", {"model.width": "-3", "nope": "1"})
    text = " ".join(w.value for w in bad.warning)
    assert "model.width" in text and "nope" in text


def test_real_data_upload_mode_without_file_explains():
    at = _app("real_data.py")
    at.radio(key="rd.source").set_value("upload").run()
    assert not at.exception
    assert any("Upload a CSV or NPZ" in i.value for i in at.info)
    assert _q(at) == {"source": "upload"}
    assert not players(at)
    assert controls_without_help(at) == []


def test_parse_errors_are_sentences():
    # what the page shows for a bad upload: UploadError's messages (checked with the parser
    # the page calls; AppTest cannot drive st.file_uploader)
    from dynamics.uploads import UploadError, parse_upload

    with pytest.raises(UploadError) as e:
        parse_upload("bad.csv", b"x1,x2,y\n1,2,3\n4,five,1\n", loss="exponential")
    assert e.value.messages and all(isinstance(m, str) for m in e.value.messages)
    buf = io.BytesIO()
    np.savez(buf, X=np.eye(2), y=np.array([1.0, -1.0]))
    assert parse_upload("ok.npz", buf.getvalue(), loss="exponential").X.shape == (2, 2)


def test_every_preset_pair_draws_with_its_init_schemes_named():
    """Every pair the Compare page offers draws (a scheme missing from the run titles' words
    was a KeyError: the papers' exp_margin and tau_delta pairs), each run's title naming its
    initialisation."""
    from app_pages.compare import PRESETS, preset_configs

    words = {"exp_margin": "Exp", "tau_delta": "δ = "}
    for name in PRESETS:
        a, b = preset_configs(name)
        ta, tb = simulate(a), simulate(b)
        scene = compare_figure(ta, tb, labels=("A", "B"))
        titles = " ".join(ann["text"] for ann in scene.layout["annotations"][:2])
        for c in (a, b):
            assert words.get(c.init.scheme, "") in titles, (name, c.init.scheme, titles)
