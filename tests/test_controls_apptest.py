"""The Explorer's controls under AppTest: every widget, for every data kind and integrator, says
what it does (help from the settings table); "try this" applies an experiment in one click,
says what to look for and undoes it; presenter mode and seeding are handled one way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from devtools.apptest import player_spec, run_page
from dynamics.config import DATA_KINDS
from dynamics.papers.experiments import EXPLORER_DEFAULT
from ui.settings import SETTINGS

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "app_pages" / "explorer.py"
WIDGETS = ("number_input", "selectbox", "checkbox", "radio", "select_slider", "toggle")


def _sidebar_widgets(at):
    for kind in WIDGETS:
        yield from getattr(at.sidebar, kind)


@pytest.mark.parametrize("params", [{"data.kind": k} for k in DATA_KINDS] + [
    {"integrator.method": "gd", "view.t_end_auto": "false", "init.scheme": "fixed_output"}])
def test_every_sidebar_control_has_help(params):
    at = run_page(PAGE, params, timeout=300)
    seen = list(_sidebar_widgets(at))
    assert len(seen) >= 12
    helps = {w.label: w.help for w in seen}
    missing = [label for label, h in helps.items() if not h]
    assert not missing, missing
    # the help is the settings table's (one truth), not text written beside the widget
    table = {v.help for s in SETTINGS.values() for v in (s, *s.variants())}
    assert {h for h in helps.values()} <= table, set(helps.values()) - table


def test_try_this_applies_says_what_to_look_for_and_undoes():
    at = run_page(PAGE, {"model.width": "20"}, timeout=300)
    buttons = {b.key: b for b in at.button if b.key and b.key.startswith("eae.try.")}
    assert [k.split(".")[-1] for k in buttons] == [e.key for e in EXPLORER_DEFAULT]
    assert not any("look for" in i.value for i in at.info)
    before = player_spec(at)["layout"]["title"]["text"]
    at.button(key="eae.try.smaller_eps").click().run()
    assert not at.exception
    assert at.query_params["init.scale"] in ("1e-05", ["1e-05"])
    assert at.query_params["model.width"] in ("20", ["20"])  # the rest stays
    looks = [i.value for i in at.info if "look for" in i.value]
    assert len(looks) == 1 and "Divide ε by 100" in looks[0]
    title = player_spec(at)["layout"]["title"]["text"]
    assert "ε = 1e-05" in title and title != before
    assert at.select_slider(key="eae.init.scale").value == pytest.approx(1e-5)  # widgets too
    at.button(key="eae.try.undo").click().run()
    assert "init.scale" not in at.query_params
    assert player_spec(at)["layout"]["title"]["text"] == before
    assert not any("look for" in i.value for i in at.info)


def test_presenter_mode_and_seeding_are_one_way_each():
    pages = "\n".join(p.read_text() for p in (ROOT / "app_pages").glob("*.py"))
    assert "presenter.toggle(" not in pages and "presenter.hidden(" not in pages
    assert not re.search(r'st\.toggle\("presenter', pages)
    assert pages.count("presenter.mode(") == 7  # every page, the same call
    ui = "\n".join(p.read_text() for p in (ROOT / "ui").glob("*.py"))
    assert len(re.findall(r"fresh or \w+ not in", ui + pages)) == 1  # state.needs_seed
