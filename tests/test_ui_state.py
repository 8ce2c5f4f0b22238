"""The URL/state binder (ui.state) and the view models (ui.view): exact round trips through the
URL, bad values dropped with warnings, user strings never rendered as Markdown, and every
navigation button working in presenter mode (the StreamlitAPIException of a URL-bound widget)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from pydantic import Field
from streamlit.testing.v1 import AppTest

from devtools.apptest import players, run_page, switch_to_page
from dynamics.config import Config, LossConfig, RecordConfig
from dynamics.papers import PAPERS
from ui.lesson import ExplorerView, default_lesson, parse_lesson
from ui.state import Binder, ConfigSlot, explorer_binder
from ui.text import literal, with_list
from ui.view import FigureView, View, field_options, literal_options

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


class _PageView(FigureView):
    """A view like a page's: a choice with its own URL key beside the figure options."""

    preset: Literal["one", "two", "three"] = Field("one", alias="preset")
    size: Literal["quick", "full"] = Field("quick", alias="size")


def _views(cls: type[View]) -> hs.SearchStrategy[View]:
    fields = {name: (hs.booleans() if f.annotation is bool
                     else hs.sampled_from(literal_options(f.annotation)))
              for name, f in cls.model_fields.items()}
    return hs.fixed_dictionaries(fields).map(lambda d: cls(**d))


# ----------------------------------------------------------------------------- view models
@settings(max_examples=200, deadline=None, derandomize=True)
@given(_views(_PageView))
def test_view_round_trips_through_the_url(view):
    q = view.to_query()
    back, warnings = _PageView.from_query(q)
    assert back == view and warnings == []
    default = _PageView()
    for key, name in _PageView.url_keys().items():  # only non-default values are written
        assert (key in q) == (getattr(view, name) != getattr(default, name))


@pytest.mark.parametrize(("params", "expect", "warned"), [
    ({}, {}, []),
    ({"view.radius": "log"}, {"radius": "log"}, []),
    ({"view.presenter": "true"}, {"presenter": True}, []),
    ({"view.presenter": "1"}, {"presenter": True}, []),
    ({"view.presenter": "FALSE"}, {}, []),
    ({"view.presenter": "maybe"}, {}, ["view.presenter"]),
    ({"view.radius": "huge", "view.time_axis": "linear"}, {"time_axis": "linear"},
     ["view.radius"]),
    ({"view.nope": "1"}, {}, ["view.nope"]),
    ({"preset": "four", "size": "full"}, {"size": "full"}, ["preset"]),
    ({"model.width": "9"}, {}, []),  # a config key: not the view's business
])
def test_view_from_query_table(params, expect, warned):
    view, warnings = _PageView.from_query(params)
    assert view == _PageView(**expect)
    assert len(warnings) == len(warned)
    for w, key in zip(warnings, warned, strict=True):
        assert key in w


def test_widget_options_come_from_the_config_types():
    assert field_options(LossConfig, "kind") == ("square", "logistic", "exponential")
    assert field_options(RecordConfig, "plane")[0] == "auto"
    assert FigureView.options("time_scale") == ("t", "t_over_log_inv_eps")
    src = (ROOT / "ui" / "controls.py").read_text()
    assert '"exponential"]' not in src and '"sqrt_dm"]' not in src  # no hand-made lists


# ----------------------------------------------------------------------------- binder (pure)
def _compare_like() -> Binder[_PageView]:
    a = Config().with_updates({"model.width": 20, "init.scale": 1e-6})
    b = Config().with_updates({"data.kind": "three_point", "model.gamma": 0.05})
    return Binder("t", _PageView, {"a": ConfigSlot("a.", base=lambda v: a),
                                   "b": ConfigSlot("b.", base=lambda v: b)})


@pytest.mark.parametrize("updates", [
    {},
    {"model.width": 7},
    {"init.scale": 1e-3},  # back to the global default: must still be written (base differs)
    {"data.kind": "teacher", "data.d": 8},
    {"data.angles_deg": [10.0, 100.0, 250.0], "data.radii": [1.0, 1.0, 1.0],
     "data.labels": [1.0, -1.0, 1.0]},
])
def test_binder_round_trip_with_bases(updates):
    binder = _compare_like()
    start = binder.parse({})
    a = start.configs["a"].with_updates(updates)
    view = _PageView(preset="two", radius="log")
    q = binder.query(view, {"a": a, "b": start.configs["b"]})
    assert not any(k.startswith("b.") for k in q)  # unchanged side: not in the link
    back = binder.parse(q)
    assert back.configs["a"] == a and back.view == view and back.warnings == []
    assert binder.query(back.view, back.configs) == q


def test_binder_drops_bad_parameters_with_warnings():
    got = explorer_binder().parse({"model.width": "lots", "no.such": "1", "view.radius": "huge",
                                   "init.scale": "0.01"})
    assert got.configs["run"].init.scale == 0.01 and got.configs["run"].model.width == 50
    text = " ".join(got.warnings)
    assert "model.width" in text and "no.such" in text and "view.radius" in text
    got = _compare_like().parse({"zzz": "1", "a.model.width": "-1", "preset": "x"})
    text = " ".join(got.warnings)
    assert "zzz" in text and "a.model.width" in text and "preset" in text


def test_uploaded_arrays_stay_out_of_links():
    cfg = Config.from_dict({"data": {"kind": "array", "X": [[1.0, 0.0], [0.0, 1.0]],
                                     "y": [1.0, -1.0]}})
    q = explorer_binder().query(ExplorerView(), {"run": cfg})
    assert q == {"data.kind": "array"}


# ----------------------------------------------------------------------------- user strings
EVIL = {"[Session expired - click here](https://evil.example/login)": "1",
        "![x](http://127.0.0.1:9/t.png)": "1"}


def _outside_code(md: str) -> str:
    """The Markdown with inline code spans removed (what would be interpreted)."""
    return re.sub(r"(`+)(.+?)\1", "", md)


@pytest.mark.parametrize("s", ["plain", "a`b", "``x``", "[a](http://e.x)", "line\nbreak", ""])
def test_literal_is_one_code_span(s):
    md = literal(s)
    assert _outside_code(md) == "" and "\n" not in md
    assert with_list("T:", [s]).startswith("T:\n\n- ")


@pytest.mark.parametrize("page", ["explorer.py", "compare.py", "real_data.py", "papers.py",
                                  "sweeps.py"])
def test_url_parameter_names_are_not_markdown(page):
    at = run_page(ROOT / "app_pages" / page, dict(EVIL), timeout=240)
    bodies = [w.value for w in at.warning]
    assert any("Session expired" in b for b in bodies)  # the user is told, as text
    for elements in (at.warning, at.markdown, at.caption, at.error, at.info):
        for e in elements:
            rendered = _outside_code(e.value)
            assert "evil.example" not in rendered and "127.0.0.1:9" not in rendered, e.value


# ----------------------------------------------------------------------------- navigation
def _open(page: str, params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    switch_to_page(at, page)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _in_presenter_mode(at: AppTest) -> bool:
    return any(b.label == "Exit presenter mode" for b in at.button)


# every navigation button of the Overview: the example, then each showcase's two buttons
OVERVIEW_BUTTONS = ["ov.open_example"] + [
    f"ov.{kind}.{p.key}.{sc.preset}" for p in PAPERS.values() for sc in p.showcases
    for kind in ("open", "paper")]


@pytest.mark.parametrize("button", OVERVIEW_BUTTONS)
def test_overview_buttons_work_in_presenter_mode(button):
    at = _open("overview", {"view.presenter": "true"})
    assert _in_presenter_mode(at)
    keys = {b.key for b in at.button}
    assert set(OVERVIEW_BUTTONS) <= keys, keys
    at.button(key=button).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert _in_presenter_mode(at)  # the mode follows the teacher to the next page
    assert at.query_params.get("view.presenter") in ("true", ["true"])
    if ".paper." in button:
        paper, preset = button.split(".")[2:4]
        assert at.session_state["pp.paper"] == paper  # (in the URL unless the default)
        assert at.selectbox(key=f"{paper}.preset").value == preset
    else:
        assert players(at) and not at.warning
        if button != "ov.open_example":  # a showcase opens as that step of the lesson
            scenario = ".".join(button.split(".")[2:])
            assert at.query_params.get("view.scenario") in (scenario, [scenario])
            assert any(b.key == "lesson.next" for b in at.button)


@pytest.mark.parametrize("paper", list(PAPERS))
def test_papers_open_in_explorer_works_in_presenter_mode(paper):
    at = _open("papers", {"paper": paper, "view.presenter": "true"})
    assert _in_presenter_mode(at)
    preset = at.session_state[f"{paper}.preset"]
    at.button(key=f"pp.open.{paper}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert _in_presenter_mode(at)
    shown = at.session_state["eae._state"].configs["run"]
    assert shown == PAPERS[paper].presets(True)[preset]
    assert players(at)


# ----------------------------------------------------------------------------- lessons
def test_default_lesson_is_the_overview_showcases():
    keys = [s.key for s in default_lesson()]
    assert keys == [f"{p.key}.{sc.preset}" for p in PAPERS.values() for sc in p.showcases]
    assert parse_lesson("") == (default_lesson(), [])


def test_lesson_link_drops_bad_entries_with_a_message():
    view, warnings = ExplorerView.from_query(
        {"view.lesson": "min.toy_2d, nope.x,[evil](http://e.x),wang_ma.four_phases",
         "view.scenario": "zzz"})
    assert view.lesson == "min.toy_2d,wang_ma.four_phases" and view.scenario == ""
    assert len(warnings) == 3 and "nope.x" in warnings[0] and "zzz" in warnings[2]
    assert ExplorerView.from_query(view.to_query()) == (view, [])
    only_bad, warnings = parse_lesson("x,y")
    assert only_bad == default_lesson() and "no usable scenario" in warnings[-1]


def test_lesson_steps_in_presenter_mode():
    q = {"view.presenter": "true",
         "view.lesson": "wang_ma.four_phases,bad.one,boursier.three_point_leaky"}
    at = run_page(ROOT / "app_pages" / "explorer.py", q, timeout=300)
    text = " ".join(w.value for w in at.warning)
    assert "bad.one" in text  # shown, as text
    assert _outside_code(text).count("bad.one") == 0
    assert at.button(key="lesson.prev").disabled  # nothing shown yet: Next starts
    at.button(key="lesson.next").click().run()
    assert at.query_params.get("view.scenario") in ("wang_ma.four_phases",
                                                    ["wang_ma.four_phases"])
    assert at.session_state["eae._state"].configs["run"] == \
        PAPERS["wang_ma"].presets(True)["four_phases"]
    assert any("1 / 2 · Wang & Ma" in m.value for m in at.markdown)
    at.button(key="lesson.next_page").click().run()  # PageDown's twin
    assert not at.exception
    assert at.query_params.get("view.scenario") in ("boursier.three_point_leaky",
                                                    ["boursier.three_point_leaky"])
    assert at.button(key="lesson.next").disabled
    at.button(key="lesson.prev").click().run()
    assert at.query_params.get("view.scenario") in ("wang_ma.four_phases",
                                                    ["wang_ma.four_phases"])
    assert players(at) and not at.exception
    # the link written back reopens the same step (settings relative to its preset)
    again = run_page(ROOT / "app_pages" / "explorer.py",
                     {k: (v[-1] if isinstance(v, list) else v)
                      for k, v in at.query_params.items()}, timeout=300)
    assert again.session_state["eae._state"].configs["run"] == \
        PAPERS["wang_ma"].presets(True)["four_phases"]
    assert not again.warning


def test_sweeps_link_reopens_the_builtin():
    q = {"size": "full", "sweep": "alignment_vs_scale"}
    at = run_page(ROOT / "app_pages" / "sweeps.py", q)
    assert at.selectbox(key="sweeps.builtin").value == "alignment_vs_scale"
    assert at.radio(key="sweeps.size").value == "full"
    assert {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()} == q
