"""The one table of settings (ui/settings.py) without a page: every control has a row with help,
the rows' ranges agree with the config and the server's limits, the URL codec round-trips and
refuses what the widgets refuse (saying the range), links keep every valid parameter and name
the bad one, and the "try this" offers and the divergence advice point the right way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dynamics.config import DATA_CLASSES, Config, config_from_query
from dynamics.config.urlvalues import parse_value
from dynamics.papers.experiments import EXPLORER_DEFAULT, Experiment, Times
from dynamics.status import Status, divergence_fix
from ui import settings as S
from ui.lesson import ExplorerView, scenarios
from ui.state import _knob_value, explorer_binder
from ui.try_this import offer

ROOT = Path(__file__).resolve().parent.parent
CONTROLS = (ROOT / "ui" / "controls.py").read_text()
DRAWN = sorted(set(re.findall(r'p\.(?:number|widget)\("([a-z_.0-9]+)"', CONTROLS)))


def test_controls_draw_only_rows_of_the_table_and_spell_no_label():
    assert len(DRAWN) > 30
    assert set(DRAWN) <= set(S.SETTINGS), set(DRAWN) - set(S.SETTINGS)
    # labels, options, steps and help are the table's: no widget call spells one
    assert not re.search(r'p\.(number|widget)\("[^"]+",\s*(st\.|")', CONTROLS)
    assert "Rule(" not in CONTROLS and "PATH_LABELS: dict[str, str] = {" not in CONTROLS


@pytest.mark.parametrize("path", [p for p, s in S.SETTINGS.items() if s.widget != "none"])
def test_every_control_says_what_it_does_in_one_line(path):
    row = S.setting(path)
    words = [(row.label, row.help)] + [(o.get("label", row.label), o.get("help", row.help))
                                       for o in row.by_kind.values()]
    for label, help_ in words:
        assert 20 <= len(help_) <= 170 and "\n" not in help_, (path, help_)
        assert help_.rstrip().endswith("."), help_
        assert len(label) <= 28, label  # fits its column at 1280 px (see the browser test)


def _config_bounds(row: S.Setting) -> tuple[float | None, float | None]:
    lo, _lo_open, hi, _hi_open = S._bounds(row.info())
    return lo, hi


@pytest.mark.parametrize("path", [p for p, s in S.SETTINGS.items() if s.rule() is not None])
def test_ranges_agree_with_the_config_and_hold_the_default(path):
    for row in S.SETTINGS[path].variants():
        rule = row.rule()
        if rule is None:  # (a select for another data kind)
            continue
        assert rule is not None and rule.what == row.label
        lo, hi = _config_bounds(row)
        if lo is not None:
            assert rule.lo is not None and rule.lo >= lo
        if hi is not None:
            assert rule.hi is not None and rule.hi <= hi
        default = row.default
        if row.widget == "none":  # not drawn (messages, links): None stays None
            continue
        if default is None:
            assert rule.zero, path  # None is typed as 0, which the rule allows
        else:
            assert rule.check(default) is None, (path, default, rule.allowed())


def test_server_limits_are_read_when_asked(monkeypatch):
    monkeypatch.setenv("EAE_MAX_WIDTH", "120")
    row = S.setting("model.width")
    assert row.rule().hi == 120 and "from 1 to 120 neurons" in row.rule().allowed()
    value, problem = row.decode("200")
    assert value is None and "on this server" in problem and "the link says 200" in problem
    assert row.decode("120") == (120, "")
    monkeypatch.delenv("EAE_MAX_WIDTH")
    assert row.decode("200") == (200, "")


@pytest.mark.parametrize("path", [p for p, s in S.SETTINGS.items()
                                  if s.widget not in ("none", "file")])
def test_codec_round_trips_the_default_and_every_option(path):
    for row in S.SETTINGS[path].variants():
        if row.widget in ("none", "file"):
            continue
        values = [row.default] + (list(row.choices()) if row.widget != "slider" else [])
        for v in values:
            if v is None:
                continue
            assert row.decode(row.encode(v)) == (v, ""), (path, row.kind, v)


def test_a_link_value_the_widget_refuses_is_refused_with_the_range():
    value, problem = S.setting("init.scale").decode("1e-300")
    assert value is None
    assert "init scale ε" in problem and "from 1e-20 to 1" in problem and "1e-300" in problem
    assert S.setting("init.scale").decode("1e-20") == (1e-20, "")
    _, problem = S.setting("model.gamma").decode("1.5")
    assert "leaky slope γ" in problem and "from 0 to 1" in problem
    _, problem = S.setting("loss.kind").decode("hinge")
    assert "square, logistic, exponential" in problem
    _, problem = S.setting("data.angles_deg").decode("10,2000")
    assert "entry 2" in problem and "-360 to 360" in problem
    assert S.setting("data.n", "teacher").decode("none") == (None, "")


def test_the_one_reader_reads_bools_text_and_choices():
    assert parse_value("x", "yes", bool) is True and parse_value("x", "0", bool) is False
    assert parse_value("x", "12", str) == "12"  # text stays text (a scenario name)
    view, warnings = ExplorerView.from_query({"view.presenter": "on", "view.radius": "log",
                                              "view.time_axis": "sideways"})
    assert view.presenter and view.radius == "log" and view.time_axis == "log"
    assert len(warnings) == 1 and "log, linear" in warnings[0]
    # a Papers knob reads its URL text by the same reader, within its options or range
    assert _knob_value("1e-6", "ε", "preset", ("preset", "1e-6"), {}) == ("1e-6", "")
    assert _knob_value("7", "width m (0: preset)", 0, None, {"max_value": 2000}) == (7, "")
    got, problem = _knob_value("2.5", "width m (0: preset)", 0, None, {"max_value": 2000})
    assert got is None and "whole number" in problem and "width m" in problem


def test_a_bad_link_names_the_bad_parameter_and_keeps_the_valid_ones():
    config, warnings = config_from_query({"model.width": "30", "data.angles_deg": "[10,20]"})
    assert config.model.width == 30 and config.data == DATA_CLASSES["points"]()
    assert len(warnings) == 1 and warnings[0].startswith("ignored data.angles_deg=")
    assert "2 angles, 4 radii and 4 labels" in warnings[0]
    assert "did not fit together" not in " ".join(warnings)
    # the matching lists together are fine
    config, warnings = config_from_query({"data.angles_deg": "10,20", "data.radii": "1,1",
                                          "data.labels": "1,-1"})
    assert config.data.angles_deg == (10.0, 20.0) and warnings == []


def test_the_binder_refuses_out_of_range_values_and_keeps_the_rest():
    bound = explorer_binder().parse({"model.width": "30", "init.scale": "1e-300",
                                     "model.gamma": "0.2"})
    run = bound.configs["run"]
    assert (run.model.width, run.model.gamma, run.init.scale) == (30, 0.2, 1e-3)
    assert len(bound.warnings) == 1 and "init.scale" in bound.warnings[0]
    assert "from 1e-20 to 1" in bound.warnings[0]
    # server limits in words, never an environment variable
    bound = explorer_binder().parse({"data.kind": "teacher", "data.d": "5000"})
    assert bound.warnings and not any("EAE_" in w for w in bound.warnings)


def test_try_this_offers_the_defaults_and_disables_what_leaves_the_range():
    got = offer(Config())
    assert got.source == "" and [i.experiment for i in got.items] == list(EXPLORER_DEFAULT)
    assert all(i.config is not None for i in got.items)
    smaller = next(i for i in got.items if i.experiment.key == "smaller_eps")
    assert smaller.config is not None and smaller.config.init.scale == pytest.approx(1e-5)
    tiny = Config.from_dict({"init": {"scale": 1e-20}})
    item = next(i for i in offer(tiny).items if i.experiment.key == "smaller_eps")
    assert item.config is None and "1e-20" in item.why_not  # ε/100 is below the slider
    leaky = Config.from_dict({"model": {"gamma": 0.3}})
    item = next(i for i in offer(leaky).items if i.experiment.key == "leaky")
    assert item.config is None and "already" in item.why_not


def test_try_this_reads_a_scenarios_experiments_when_its_paper_has_them():
    for key, sc in scenarios().items():
        got = offer(sc.config(), key)
        from dynamics.papers import PAPERS
        own = getattr(PAPERS[sc.paper], "experiments", {}).get(sc.preset, ())
        assert [i.experiment for i in got.items] == list(own or EXPLORER_DEFAULT), key
        assert got.source == (key if own else "")


def test_experiment_apply_is_relative_and_validated():
    exp = Experiment("x", "Ten times wider", {"model.width": Times(10.0)})
    assert exp.apply(Config()).model.width == 500


def test_divergence_advice_points_the_right_way():
    assert "Raise the init scale" in divergence_fix("gf", 1e-300)
    assert "Raise the init scale" in divergence_fix("gd", 1e-200)
    assert divergence_fix("gd", 1e3) == Status.DIVERGED.fix  # gd: the step first
    gf = divergence_fix("gf", 10.0)
    assert "Lower the init scale" in gf and "lr" not in gf and "use gf" not in gf


def test_a_run_from_a_tiny_init_advises_a_larger_one():
    from dynamics.simulate import simulate

    traj = simulate(Config.from_dict({"init": {"scale": 1e-300},
                                      "integrator": {"t_end": 1.0}, "record": {"frames": 4}}))
    assert traj.status == "diverged", traj.message  # gf's error control underflows
    assert "Raise the init scale ε" in traj.message and "Lower" not in traj.message


def test_one_home_per_ladder():
    """Every ladder is declared once (`dynamics.ladders`, the table's steps and ranges) and the
    scrub family, the papers' knobs and the γ buttons read it: γ's family is the field's steps
    over the config's range, the current value added; Wang & Ma's σ knob is the ε ladder's
    whole decades; the knobs' γ step is the table's."""
    from dynamics import ladders
    from dynamics.papers import PAPERS
    from ui import controls, family

    assert ladders.steps(0.0, 1.0, 0.05) == tuple(round(0.05 * k, 2) for k in range(21))
    assert ladders.steps(10.0, 175.0, 10.0)[-1] == 170.0  # never past hi
    assert ladders.decades(1e-5, 1e-2) == (1e-5, 1e-4, 1e-3, 1e-2)
    assert set(ladders.decades(0.0, 1.0)) <= set(ladders.EPS)
    gamma = S.setting("model.gamma")
    assert gamma.step == ladders.GAMMA_STEP and S.span("model.gamma") == (0.0, 1.0)
    assert S.stepped("model.gamma") == ladders.steps(0.0, 1.0, ladders.GAMMA_STEP)
    assert controls.GAMMA_RANGE == S.span("model.gamma")
    for g in (0.0, 0.35, 0.03):
        c = Config.from_dict({"model": {"gamma": g}})
        got = family.CONTROLS["model.gamma"].ladder(c)
        assert got == sorted({*S.stepped("model.gamma"), g}), (g, got)
    with pytest.raises(ValueError):  # an open range has no first step
        S.stepped("data.angle_deg")
    knobs = {(p.key, k.key): k for p in PAPERS.values() for k in p.knobs}
    assert knobs[("wang_ma", "std")].options == ladders.decades(1e-5, 1e-2)
    assert all(k.step == ladders.GAMMA_STEP for (_p, key), k in knobs.items() if key == "gamma")
