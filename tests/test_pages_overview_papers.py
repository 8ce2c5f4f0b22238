"""Overview and Papers under AppTest (through app.py's navigation): they render, their controls
change what they should, the claims tables have pass/fail columns, and bad link values are
messages, not exceptions."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from devtools.apptest import controls_without_help, player_spec, players, switch_to_page
from dynamics.papers import PAPERS, Section, StudySection
from ui.runner import get_service

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def _open(page: str, params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    switch_to_page(at, page)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _claims(at: AppTest, which: int) -> tuple[list[str], list[tuple[str, str]]]:
    """(column headers, [(claim, verdict)]) of the `which`-th claims table on the page
    (`ui.tables.claims_html`: one HTML table per claims table)."""
    tables = [h.proto.body for h in at.get("html") if 'class="eae-claims"' in h.proto.body]
    body = tables[which]
    heads = re.findall(r"<th>(.*?)</th>", body)
    rows = [(html.unescape(c), r) for c, r in
            re.findall(r'<tr data-claim="(.*?)" data-result="(.*?)">', body)]
    return heads, rows


def _titles(at: AppTest) -> list[str]:
    """Titles of every figure on the page: the players' (animated), then the static charts'."""
    out = []
    for i in range(len(players(at))):
        lay = player_spec(at, i)["layout"]
        title = lay.get("title", {}).get("text", "") or \
            lay.get("legend", {}).get("title", {}).get("text", "")
        out.append(title)
    return out + [json.loads(c.proto.spec)["layout"].get("title", {}).get("text", "")
                  for c in at.get("plotly_chart")]


def test_overview_renders_example_and_scenarios():
    at = _open("overview")
    assert not at.error
    assert any("alignment" in m.value for m in at.markdown)
    spec = player_spec(at)
    assert spec["frames"]["n"] == len(spec["frames"]["labels"]) > 10
    assert "width m = 24" in spec["layout"]["title"]["text"]
    labels = [b.label for b in at.button]
    n = sum(len(p.showcases) for p in PAPERS.values())  # every paper's showcases
    assert labels.count("Explorer") == n and labels.count("Paper") == n
    assert not at.toggle(key="view.presenter").value
    assert controls_without_help(at) == []


def test_overview_presenter_flag_from_url():
    at = _open("overview", {"view.presenter": "true"})
    assert at.toggle(key="view.presenter").value
    assert any(b.label == "Exit presenter mode" for b in at.button)
    at.button(key="presenter.exit_button").click().run()
    assert not at.exception
    assert not at.toggle(key="view.presenter").value
    assert "view.presenter" not in at.query_params


@pytest.mark.parametrize("paper", list(PAPERS))
def test_papers_sections_render(paper):
    """Each paper's page: its main figure, its note, then every section whose figure applies
    to the preset run (the registry says which), and the claims table."""
    at = _open("papers", {"paper": paper})
    assert not at.error
    titles = _titles(at)
    p = PAPERS[paper]
    preset = next(iter(p.presets(True).values()))
    assert titles and f"width m = {preset.model.width}" in titles[0]
    traj = get_service().run(preset)  # the page's own run (the process's service cache)
    for sec in p.sections:
        if isinstance(sec, Section) and sec.figure is not None:
            spec = sec.figure(traj, None)
            assert (spec is None) or spec.title in titles, (sec.title, titles)
    if p.note:  # the paper's note is shown under its figure
        assert any(p.note[:40] in i.value for i in at.info)
    heads, rows = _claims(at, 0)  # this run's claims: verdict first
    assert heads[0] == "result" and rows
    assert controls_without_help(at) == []  # the paper's knobs and buttons say what they do
    for col in ("measured", "expected", "tolerance", "result"):
        assert col in heads


def test_papers_knob_changes_the_run():
    at = _open("papers", {"paper": "chistikov"})
    before = _titles(at)[0]
    at.select_slider(key="chistikov.log4_lambda").set_value(-4).run()
    assert not at.exception
    after = _titles(at)[0]
    assert after != before and "0.0039" in after  # λ = 4⁻⁴
    # a link with the knob reopens the same run
    again = _open("papers", {"paper": "chistikov", "chistikov.log4_lambda": "-4"})
    assert _titles(again)[0] == after


def test_papers_presets_by_name_and_knobs_at_the_presets_values():
    """Presets were shown by their ids (`three_point_large_init`) and knobs by sentinels
    ("width m (0: preset)", an ε slider reading "preset"): now each preset has a name and the
    figure it reproduces, every knob shows the preset's own value and follows a new preset,
    and a link carries only what differs from the preset."""
    at = _open("papers", {"paper": "boursier"})
    pick = at.selectbox(key="boursier.preset")
    assert pick.value == "three_point_balanced"
    titles = PAPERS["boursier"].preset_titles
    assert list(pick.options) == [titles[k] for k in PAPERS["boursier"].presets(True)]
    eps, width = at.select_slider(key="boursier.eps"), at.number_input(key="boursier.width")
    assert eps.value == 1e-3 and width.value == 200 and at.number_input(
        key="boursier.gamma").value == 0.0
    shown = [str(w.label) for w in [*at.select_slider, *at.number_input]] + list(eps.options)
    assert not any("preset" in t for t in shown), shown
    assert not [k for k in at.query_params if k.startswith("boursier.") and k != "paper"]
    pick.set_value("three_point_large_init").run()
    assert not at.exception
    assert at.select_slider(key="boursier.eps").value == 1.0  # the new preset's λ = 1
    caption = player_spec(at)["frames"]["captions"][0]
    assert caption.startswith("Start: the neurons are not small"), caption  # not "tiny"
    at.number_input(key="boursier.width").set_value(120).run()
    assert "width m = 120" in _titles(at)[0]
    assert at.query_params["boursier.width"] in ("120", ["120"])
    assert "boursier.eps" not in at.query_params  # the preset's own value: not in the link


@pytest.mark.heavy
def test_papers_claims_table_on_click():
    at = _open("papers", {"paper": "wang_ma"})
    at.button(key="pp.check.wang_ma").click().run()
    assert not at.exception and not at.error
    heads, rows = _claims(at, -1)  # the check's table: the last one on the page
    assert {"claim", "measured", "expected", "tolerance", "result"} <= set(heads)
    assert {r for _c, r in rows} <= {"pass", "FAIL", "illustration"}
    assert any(c.startswith("wang_ma.four_phases[") for c, _r in rows)


def test_papers_chistikov_table1_figure():
    """Table 1 as a distribution (Chistikov et al.'s study section): from the reproduction's
    file in reports/ when there is one, else the quick grid through the service on a click."""
    at = _open("papers", {"paper": "chistikov"})
    i = next(k for k, s in enumerate(PAPERS["chistikov"].sections)
             if isinstance(s, StudySection))
    if not any("Table 1 as a distribution" in t for t in _titles(at)):
        at.button(key=f"pp.study.chistikov.{i}.run").click().run()
        assert not at.exception
    spec = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
            if "Table 1 as a distribution" in json.loads(c.proto.spec)["layout"]["title"]
            .get("text", "")]
    assert spec
    names = {t.get("name") for t in spec[0]["data"]}
    assert "published 5-trial median (Table 1)" in names
    assert any(str(n).startswith("simulated median") for n in names)


def test_papers_bad_link_values_are_messages():
    at = _open("papers", {"paper": "nonsense"})
    assert any("Unknown paper" in w.value for w in at.warning)
    at = _open("papers", {"paper": "wang_ma", "wang_ma.angle": "999"})
    assert any("wang_ma.angle" in w.value for w in at.warning)
    assert _titles(at)


@pytest.mark.parametrize("paper", list(PAPERS))
def test_open_in_explorer_keeps_every_papers_preset(paper):
    """What "Open in Explorer" writes for a paper's preset opens the Explorer on that very run
    (data of any dimension included): no warning, the same width and data in its title."""
    from ui.lesson import ExplorerView
    from ui.state import explorer_binder

    cfg = next(iter(PAPERS[paper].presets(True).values()))
    params = explorer_binder().query(ExplorerView(), {"run": cfg})
    at = AppTest.from_file(APP, default_timeout=300)  # a new session opening the link
    for k, v in params.items():  # (the Explorer is the app's default page)
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error and not [w.value for w in at.warning if "ignored" in w.value]
    titles = _titles(at)
    assert titles and f"width m = {cfg.model.width}" in titles[0], titles
    kept = explorer_binder().parse(dict(at.query_params)).configs["run"]
    assert kept.data == cfg.data
