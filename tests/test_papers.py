"""The paper registry: one interface, discovered modules, and everything the pages, the sweeps,
the lessons and the analysis take from it. Every test iterates `PAPERS`: no list of papers
exists outside the registry (a paper's own checks live in tests/test_paper_<key>.py)."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import replace

import numpy as np
import pytest

from dynamics import papers
from dynamics.analysis import analyse
from dynamics.config import Config, from_query
from dynamics.figure_spec import FigureSpec
from dynamics.papers import PAPERS, Paper, Published, Section, StudySection
from dynamics.phases import DEFAULT_RULES
from dynamics.simulate import simulate

PRESETS = [(k, name, quick) for k, p in PAPERS.items() for quick in (True, False)
           for name in p.presets(quick)]


def test_registry_discovers_every_paper_module_in_order():
    """Every module of dynamics/papers that defines PAPER is in the registry (found by
    discovery, no list), sorted by `order`, keys unique."""
    found = set()
    for info in pkgutil.iter_modules(papers.__path__):
        mod = importlib.import_module(f"dynamics.papers.{info.name}")
        if isinstance(getattr(mod, "PAPER", None), Paper):
            found.add(mod.PAPER.key)
    assert found == set(PAPERS) and len(PAPERS) >= 2
    assert all(isinstance(p, Paper) and p.key == k for k, p in PAPERS.items())
    orders = [p.order for p in PAPERS.values()]
    assert orders == sorted(orders)
    with pytest.raises(ValueError, match="choose from " + ", ".join(PAPERS)):
        papers.get_paper("nobody")


@pytest.mark.parametrize("key", list(PAPERS))
def test_every_paper_fills_the_interface(key):
    p = PAPERS[key]
    assert p.title and p.short and p.text and p.numbers
    for name, num in p.numbers.items():  # published numbers are typed, with their source
        assert isinstance(num, Published) and num.source, name
    for quick in (True, False):
        pre = p.presets(quick)
        assert pre and all(isinstance(c, Config) for c in pre.values())
        assert all(p.applies_to(c) for c in pre.values())  # a paper applies to its presets
    for sc in p.showcases:  # the Overview's buttons open existing presets
        assert sc.preset in p.presets(True)
    for name in p.presets(True):  # a name a reader knows, and what it reproduces
        assert len(p.preset_titles[name]) > 20 and "_" not in p.preset_titles[name], name
    for k in p.knobs:  # each knob shows its preset's value (no sentinel), which changes nothing
        for cfg in p.presets(True).values():
            assert p.knob_updates({k.key: k.shown(cfg)}, cfg) == {}
            if k.options is not None:
                assert k.shown(cfg) in k.choices(cfg)
            assert k.help, k.key
    rf = p.report_figure(True)
    assert isinstance(rf.config, Config) and callable(rf.figure)
    for c in p.comparisons.values():
        assert isinstance(c.a, Config) and isinstance(c.b, Config) and c.a != c.b
    for b in p.builtin_sweeps:
        assert b.build(True)["axes"]
    for sec in p.sections:
        assert isinstance(sec, Section | StudySection) and sec.title
    assert all(isinstance(v, float) for v in p.tolerances.values())


@pytest.mark.parametrize("key", list(PAPERS))
def test_every_preset_has_two_or_three_experiments_tied_to_claims(key):
    """'Try this' experiments: 2–3 per preset, each a valid change of its preset, saying in
    words what to look for; the claim it illustrates is one of the paper's claim names."""
    p = PAPERS[key]
    assert set(p.experiments) == set(p.presets(True))
    prefix = f"{key}."
    for name, exps in p.experiments.items():
        assert 2 <= len(exps) <= 3, name
        base = p.presets(True)[name]
        for e in exps:
            changed = e.apply(base)
            assert changed != base, (name, e.key)
            assert len(e.look_for) > 40 and e.label, (name, e.key)
            assert e.claim.startswith(prefix), (name, e.key, e.claim)


def test_summaries_are_owned_once():
    from dynamics import sweeps

    names = [s.name for p in PAPERS.values() for s in p.summaries]
    assert len(names) == len(set(names))
    assert set(names) <= set(sweeps.SUMMARIES)
    owners = [b.name for p in PAPERS.values() for b in p.builtin_sweeps]
    assert list(sweeps.BUILTINS) == owners


@pytest.mark.parametrize(("key", "name", "quick"), PRESETS)
def test_every_preset_survives_a_link_a_lesson_and_open_in_explorer(key, name, quick):
    """No preset loses its data (or anything else) in a link: URL query → Config equals the
    preset; through the Explorer's binder (what "Open in Explorer" writes and the Explorer
    reads); and as a lesson scenario (the Explorer's link relative to the scenario)."""
    from ui.lesson import ExplorerView, base_config, scenarios
    from ui.state import explorer_binder

    cfg = PAPERS[key].presets(quick)[name]
    assert from_query(cfg.to_query()) == cfg
    b = explorer_binder()
    assert b.parse(b.query(ExplorerView(), {"run": cfg})).configs["run"] == cfg
    if quick:  # lessons use the quick presets
        sc = scenarios()[f"{key}.{name}"]
        view = ExplorerView(scenario=sc.key)
        assert base_config(view) == cfg
        moved = cfg.with_updates({"seed": cfg.seed + 1})
        got = b.parse(b.query(view, {"run": moved}))
        assert got.configs["run"] == moved and not got.warnings


@pytest.mark.parametrize("key", list(PAPERS))
def test_a_paper_overlays_only_what_applies(key):
    """`applies_to` gates a paper's overlay and run claims: for the first preset, analyse()
    carries exactly that paper's overlay (its notes attributed to it); for a run the paper does
    not apply to, the overlay is empty and there are no run claims."""
    p = PAPERS[key]
    cfg = next(iter(p.presets(True).values()))
    small = cfg.with_updates({"model.width": min(cfg.model.width, 30),
                              "integrator.t_end": min(cfg.integrator.t_end, 30.0),
                              "record.frames": 20, "record.t_first": None})
    tr = simulate(small)
    own = p.overlay(tr, DEFAULT_RULES)
    an = analyse(tr)
    assert an.notes_of(key) == tuple(own.notes)
    for ph in own.phases:  # attributed to the paper (its row of the phase strip)
        assert replace(ph, by=ph.by or p.short) in an.phases
    for m in own.markers:
        assert m in an.markers
    for d in own.directions:
        assert any(x.name == d.name and np.array_equal(x.vector, d.vector)
                   for x in an.directions)
    others = [c for q in PAPERS.values() for c in q.presets(True).values()
              if not p.applies_to(c)]
    if others:
        o = others[0].with_updates({"model.width": 10, "integrator.t_end": 5.0,
                                    "record.frames": 10, "record.t_first": None})
        if o.integrator.method == "gd":
            o = o.with_updates({"integrator.t_end": 200 * o.integrator.lr})
        tro = simulate(o)
        empty = p.overlay(tro, DEFAULT_RULES)
        assert not (empty.phases or empty.markers or empty.directions or empty.notes)
        assert p.run_claims(tro) == [] and key not in {k for k, _ in analyse(tro).paper_notes}


@pytest.mark.parametrize("key", list(PAPERS))
def test_sections_are_figures_as_data(key):
    """A paper's page sections give declarative figures (or None for a run they cannot
    draw); the one renderer draws each."""
    from viz.paper_figures import render

    p = PAPERS[key]
    cfg = next(iter(p.presets(True).values()))
    tr = simulate(cfg.with_updates({"record.frames": 20}))
    for sec in p.sections:
        if isinstance(sec, Section) and sec.figure is not None:
            spec = sec.figure(tr, None)
            if spec is not None:
                assert isinstance(spec, FigureSpec) and spec.panels
                fig = render(spec)
                assert len(fig.data) == sum(1 for s in spec.series()
                                            if type(s).__name__ != "Rule")


def test_run_names_say_which_run_a_claim_got():
    """A claim names the run it got: the preset's name for a preset, else the nearest preset
    and what differs — never another preset's name."""
    for p in PAPERS.values():
        name, cfg = next(iter(p.presets(True).items()))
        assert p.run_name(cfg) == name
        other = cfg.with_updates({"seed": cfg.seed + 7})
        got = p.run_name(other)
        assert got != name and got.startswith(name) and "seed = " in got


@pytest.mark.parametrize("key", list(PAPERS))
def test_the_page_texts_have_no_raw_tex(key):
    """The Papers page showed "Σ_{yᵢ=+1}" and "p·e^{−h(x₊)}" as typed: formulas are plain
    Unicode, or TeX between $…$ that Streamlit's Markdown renders."""
    import re

    p = PAPERS[key]
    texts = [p.text, p.note, *p.preset_titles.values()]
    texts += [t for s in p.sections for t in (s.title, s.text)]
    texts += [t for exps in p.experiments.values() for e in exps for t in (e.label, e.look_for)]
    texts += [t for c in p.comparisons.values() for t in (c.title, c.note)]
    texts += [t for k in p.knobs for t in (k.label, k.help or "")]
    for t in texts:
        bare = re.sub(r"\$[^$]+\$", "", t)  # rendered by st.markdown
        assert not re.search(r"[_^]\{|\\[a-z]|\^[-−\w(]", bare), (key, t)  # no m^−a
        assert bare.count("$") == 0, (key, t)
