"""The Explorer page under Streamlit's AppTest: renders, reacts to controls, validates, and
restores its state from URL parameters."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from devtools.apptest import plotly_spec, run_page

PAGE = str(Path(__file__).resolve().parent.parent / "app_pages" / "explorer.py")


def _app(params: dict[str, str] | None = None) -> AppTest:
    return run_page(PAGE, params)


_spec = plotly_spec


def _key(path: str) -> str:
    return f"eae.{path}"


@pytest.fixture(scope="module")
def default_app() -> AppTest:
    return _app()


def test_renders_default(default_app):
    at = default_app
    spec = _spec(at)
    assert len(spec["frames"]) == len(spec["layout"]["sliders"][0]["steps"]) > 10
    assert "width m = 50" in spec["layout"]["title"]["text"]
    assert not at.error and not at.warning
    assert any("turn toward a few" in c.value for c in at.caption)
    assert dict(at.query_params) == {}  # the default view has the shortest link


@pytest.mark.parametrize(("kind", "path", "value", "expect"), [
    ("number_input", "model.width", 7, "width m = 7"),
    ("number_input", "model.gamma", 0.2, "leaky ReLU γ = 0.2"),
    ("selectbox", "loss.kind", "logistic", "logistic loss"),
])
def test_controls_change_the_figure(kind, path, value, expect):
    at = _app()
    before = _spec(at)["layout"]["title"]["text"]
    getattr(at, kind)(key=_key(path)).set_value(value).run()
    assert not at.exception and not at.error
    title = _spec(at)["layout"]["title"]["text"]
    assert expect in title and title != before
    assert at.query_params[path] == [str(value)] or at.query_params[path] == str(value)


def test_view_option_changes_axis_type():
    at = _app()
    assert _spec(at)["layout"]["xaxis2"]["type"] == "log"
    at.radio(key=_key("view.time_axis")).set_value("linear").run()
    assert _spec(at)["layout"]["xaxis2"]["type"] == "linear"
    assert "view.time_axis" in at.query_params


def test_bad_value_shows_error_next_to_control_and_no_chart():
    at = _app()
    at.number_input(key=_key("model.width")).set_value(10**6).run()
    assert not at.exception
    messages = [e.value for e in at.error]
    assert any("over the limit" in m and "model.width" in m for m in messages)  # summary
    beside = [m for m in messages if not m.startswith("These settings")]  # next to the control
    assert any("over the limit" in m and ("1,000,000" in m or "1000000" in m) for m in beside)
    assert not at.get("plotly_chart")


def test_url_params_restore_widgets():
    at = _app({"model.width": "9", "model.gamma": "0.1", "loss.kind": "logistic",
               "init.scale": "0.01", "view.radius": "log"})
    assert at.number_input(key=_key("model.width")).value == 9
    assert at.number_input(key=_key("model.gamma")).value == pytest.approx(0.1)
    assert at.selectbox(key=_key("loss.kind")).value == "logistic"
    assert at.select_slider(key=_key("init.scale")).value == pytest.approx(0.01)
    assert at.radio(key=_key("view.radius")).value == "log"
    assert not at.warning
    title = _spec(at)["layout"]["title"]["text"]
    assert "width m = 9" in title and "ε = 0.01" in title


def test_url_points_table_restores():
    at = _app({"data.angles_deg": "10,100,250", "data.radii": "1,1,1",
               "data.labels": "1,-1,1", "model.width": "6"})
    spec = _spec(at)
    assert not at.warning
    shown = at.session_state["eae._state"].configs["run"].data
    assert shown.angles_deg == (10.0, 100.0, 250.0) and shown.labels == (1.0, -1.0, 1.0)
    assert "width m = 6" in spec["layout"]["title"]["text"]


def test_malformed_params_fall_back_with_warning():
    at = _app({"model.width": "lots", "no.such": "1", "view.radius": "huge",
               "init.scale": "0.01"})
    warnings = " ".join(w.value for w in at.warning)
    assert "model.width" in warnings and "no.such" in warnings and "view.radius" in warnings
    assert at.number_input(key=_key("model.width")).value == 50  # default
    assert at.select_slider(key=_key("init.scale")).value == pytest.approx(0.01)  # kept
    assert at.radio(key=_key("view.radius")).value == "normalised"
    assert _spec(at)  # and the page still draws the figure


def test_data_kind_switch_builds_that_data():
    at = _app({"model.width": "6"})
    at.selectbox(key=_key("data.kind")).set_value("teacher").run()
    assert not at.exception and not at.error
    assert at.query_params["data.kind"] in ("teacher", ["teacher"])
    assert at.number_input(key=_key("data.d")).value == 16
    assert _spec(at)["frames"]
