"""The Explorer page under Streamlit's AppTest: renders, reacts to controls, validates, and
restores its state from URL parameters."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import runtime
from devtools.apptest import player_args, player_spec, players, run_page

PAGE = str(Path(__file__).resolve().parent.parent / "app_pages" / "explorer.py")


def _app(params: dict[str, str] | None = None) -> AppTest:
    return run_page(PAGE, params)


_spec = player_spec


def _key(path: str) -> str:
    return f"eae.{path}"


@pytest.fixture(scope="module")
def default_app() -> AppTest:
    return _app()


def test_renders_default(default_app):
    at = default_app
    spec = _spec(at)
    assert spec["frames"]["n"] == len(spec["frames"]["labels"]) > 10
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


def _stale(at: AppTest) -> bool:
    """The page kept its last good figure, greyed (the player is told it is stale)."""
    got = players(at)
    return bool(got) and all(player_args(p).get("stale") for p in got)


def test_bad_value_shows_error_next_to_control_and_keeps_the_figure():
    at = _app()
    at.number_input(key=_key("model.width")).set_value(10**6).run()
    assert not at.exception
    messages = [e.value for e in at.error]
    assert any("over the limit" in m and "width m" in m for m in messages)  # summary
    beside = [m for m in messages if not m.startswith("These settings")]  # next to the control
    assert any("over the limit" in m and ("1,000,000" in m or "1000000" in m) for m in beside)
    assert not any("model.width" in m or "EAE_" in m for m in messages)  # the page's words
    assert _stale(at)  # the last good figure stays, greyed, under the reason


@pytest.mark.parametrize(("typed", "expect"), [
    (1e9, "width m: at most 5,000 neurons on this server; you typed 1e9"),
    (None, "width m: the field is empty or not a number; type a whole number from 1 to 5,000"),
    (-5, "width m: at least 1 neuron; you typed -5"),
    (12.5, "width m: must be a whole number"),
])
def test_width_is_never_coerced(typed, expect):
    """What the browser sends for "1e9", "abc" (an empty field), "-5", "12.5": a message next
    to the field with the allowed range and what was typed; never a run with another width."""
    at = _app()
    before = _spec(at)["layout"]["title"]["text"]
    at.number_input(key=_key("model.width")).set_value(typed).run()
    assert not at.exception
    beside = [e.value for e in at.error if not e.value.startswith("These settings")]
    assert any(expect in m for m in beside), beside
    assert _stale(at) and _spec(at)["layout"]["title"]["text"] == before
    assert "model.width" not in at.query_params  # the link keeps the last good settings


def test_link_table_entry_out_of_range_is_named_and_the_rest_kept():
    """"1e308" as an angle in a link stays 1e308 (a number cell dropped the "e": 1308) and is
    refused at the link as the table's cell would refuse it, named with its entry (counted
    from 1) and the allowed range; the link's other settings are kept."""
    at = _app({"data.angles_deg": "1e308,100,250,300", "model.width": "6"})
    assert not at.exception and not at.error
    warned = " ".join(w.value for w in at.warning)
    assert "data.angles_deg" in warned
    assert "entry 1, angle (°): at most 360 degrees; the link says 1e308" in warned
    assert "from -360 to 360 degrees" in warned
    assert at.session_state["eae._state"].configs["run"].model.width == 6
    assert "width m = 6" in _spec(at)["layout"]["title"]["text"]


def test_cell_parser_messages():
    from ui.controls import CELL_RULES
    from ui.inputs import parse_cell
    assert parse_cell("1e308", CELL_RULES["angles_deg"], 0)[1] == (
        "row 1, angle (°): at most 360 degrees; you typed 1e308.")
    assert "row 3, angle (°): `abc` is not a number" in parse_cell(
        "abc", CELL_RULES["angles_deg"], 2)[1]
    assert "row 2, radius: the field is empty" in parse_cell(None, CELL_RULES["radii"], 1)[1]
    assert parse_cell(" 45 ", CELL_RULES["angles_deg"], 0) == (45.0, None)


def test_rejected_upload_keeps_the_last_figure():
    at = _app({"model.width": "6"})
    at.selectbox(key=_key("data.kind")).set_value("array").run()
    assert not at.exception and _spec(at)  # the placeholder, with a note in the main area
    assert any("No file uploaded yet" in i.value for i in at.info)
    at.file_uploader(key=_key("data._file")).upload(
        "bad.csv", b"x1,x2,y\n1,0,1\n0,1,abc\n", "text/csv").run()
    assert not at.exception
    messages = " ".join(e.value for e in at.error)
    assert "uploaded file: this file cannot be used" in messages and "Line 3" in messages
    assert _stale(at)  # not a two-point placeholder drawn as if it were the data
    assert not any("No file uploaded yet" in i.value for i in at.info)


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


def test_t_end_auto_by_default_and_typing_still_works(default_app):
    at = default_app
    box = at.checkbox(key=_key("view.t_end_auto"))
    assert box.value is True  # "auto" is the default choice
    assert not [n for n in at.number_input if n.key == _key("integrator.t_end")]
    note = [c.value for c in at.caption if c.value.startswith("t_end = ")]
    assert note and "(auto: alignment ≈" in note[0] and "fitting ≈" in note[0]
    assert "view.t_end_auto" not in at.query_params and "integrator.t_end" not in at.query_params

    at2 = _app()
    at2.checkbox(key=_key("view.t_end_auto")).uncheck().run()
    assert not at2.exception and not at2.error
    at2.number_input(key=_key("integrator.t_end")).set_value(35.0).run()
    assert not at2.exception and not at2.error
    assert float(at2.query_params["integrator.t_end"]) == 35
    assert at2.query_params["view.t_end_auto"] in ("false", ["false"])
    assert not [c for c in at2.caption if c.value.startswith("t_end = ")]


def test_t_end_auto_follows_epsilon():
    def auto_end(eps: str) -> float:
        at = _app({"init.scale": eps})
        note = next(c.value for c in at.caption if c.value.startswith("t_end = "))
        assert dict(at.query_params).keys() == {"init.scale"}  # the link says "auto"
        t_end = float(note.split()[2])
        labels = _spec(at)["frames"]["labels"]
        assert float(labels[-1].removeprefix("t = ")) == t_end  # the run uses the auto end
        return t_end

    assert auto_end("1e-8") > auto_end("0.01")


def test_link_with_explicit_t_end_keeps_it():
    at = _app({"integrator.t_end": "35"})
    assert at.checkbox(key=_key("view.t_end_auto")).value is False
    assert at.number_input(key=_key("integrator.t_end")).value == 35
    assert not [c for c in at.caption if c.value.startswith("t_end = ")]


def _prefetch_on_and_figures_spied(monkeypatch) -> list[tuple[float, float]]:
    """Speculation on (off elsewhere in the suite, tests/conftest.py), an empty figure store
    (earlier tests share the process-wide one), and the (γ, ε) of every main figure built."""
    from ui import figures

    monkeypatch.setenv("EAE_PREFETCH", "1")
    built: list[tuple[float, float]] = []
    real_figure = figures.main_figure

    def figure_spy(traj, *args, **kw):  # type: ignore[no-untyped-def]
        built.append((traj.config.model.gamma, traj.config.init.scale))
        return real_figure(traj, *args, **kw)

    monkeypatch.setattr(figures, "main_figure", figure_spy)
    figures.store().__init__()
    return built


def test_next_step_of_gamma_and_eps_is_prefetched_and_notes_are_shown(monkeypatch):
    """After a run the page prefetches γ ± step and ε one slider step either way (the runs the
    page would start, auto t_end applied) and builds the first neighbour's figure: stepping
    γ then neither simulates nor builds a figure for the settings on screen. The analysis'
    notes are shown under the figure, as text."""
    from ui import prefetch, runner

    simulated: list[tuple[float, float]] = []
    built = _prefetch_on_and_figures_spied(monkeypatch)
    at = _app()
    svc = runner.get_service()
    assert runtime.current().speculation.idle(120) and prefetch.warm_idle(120)
    assert (0.05, 0.001) in built  # γ + step, built in the background
    real = svc._simulate

    def spy(config, progress, cancel):  # type: ignore[no-untyped-def]
        simulated.append((config.model.gamma, config.init.scale))
        return real(config, progress, cancel)

    monkeypatch.setattr(svc, "_simulate", spy)
    built.clear()
    at.number_input(key=_key("model.gamma")).set_value(0.05).run()
    assert not at.exception and "leaky ReLU γ = 0.05" in _spec(at)["layout"]["title"]["text"]
    assert runtime.current().speculation.idle(120) and prefetch.warm_idle(120)
    assert (0.05, 0.001) not in simulated  # the run on screen was a cache hit …
    assert (0.05, 0.001) not in built  # … its figure too
    assert (0.1, 0.001) in built  # and the next step up was prepared in turn
    notes = [c.value for c in at.caption if c.value.startswith("Notes on this run")]
    assert notes and "Min et al" in notes[0]


def test_nothing_is_speculated_while_another_session_is_active(monkeypatch):
    """A shared server (another session ran a page in the last `BUSY_WINDOW_S`): the page
    prefetches no neighbour and builds no speculative figure — in a class every visitor's
    guesses cost the others their figures. Once that session has been quiet for the window,
    speculation comes back."""
    from ui import prefetch, runner

    built = _prefetch_on_and_figures_spied(monkeypatch)
    svc = runner.get_service()
    assert runtime.current().speculation.idle(120)
    before = svc.stats()["speculative_computations"]
    prefetch.page_busy("another visitor")
    assert prefetch.shared()
    at = _app()
    assert not at.exception
    assert runtime.current().speculation.idle(120) and prefetch.warm_idle(120)
    assert svc.stats()["speculative_computations"] == before
    assert built == [(0.0, 0.001)]  # the figure on screen only
    monkeypatch.setattr(prefetch, "BUSY_WINDOW_S", 0.0)  # that visitor has gone quiet
    assert not prefetch.shared()


NEW_ROWS = ("model.output_power", "init.imbalance", "init.a_power", "init.w_power",
            "init.mirror", "integrator.lr_w", "integrator.lr_a", "data.formula",
            "data.angle_deg", "data.teacher_width", "data.noise")


def _keys(at: AppTest) -> set[str]:
    kinds = ("number_input", "selectbox", "select_slider", "toggle", "checkbox", "text_input",
             "radio")
    return {str(w.key).removeprefix("eae.") for k in kinds for w in getattr(at, k)}


def test_the_later_papers_rows_show_only_where_they_apply(default_app):
    """No new row for a newcomer's default run; a paper's link shows the rows of its own
    extension, with their help, and no others (Kunin et al.'s (τ, δ) start with per-layer
    rates; Luo et al.'s Gaussian powers on a 1-D formula)."""
    from dynamics.papers import kunin, luo
    from ui.lesson import ExplorerView
    from ui.state import explorer_binder

    assert not _keys(default_app) & set(NEW_ROWS)
    for cfg, want in ((kunin.presets(True)["single_neuron"],
                       {"init.imbalance", "init.mirror", "integrator.lr_w", "integrator.lr_a"}),
                      (luo.presets(True)["condensed"],
                       {"init.a_power", "init.w_power", "init.mirror", "data.formula"})):
        at = _app(explorer_binder().query(ExplorerView(), {"run": cfg}))
        assert not at.error
        assert _keys(at) & set(NEW_ROWS) == want, cfg.init.scheme
        assert at.number_input(key=_key("init.imbalance" if "init.imbalance" in want
                                        else "init.a_power")).help
