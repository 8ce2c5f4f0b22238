"""The browser composes the figure, in real Chromium: the neurons and norm curves it draws are
the references of `viz.scene` (what the Python tests check), a played frame updates only the
traces that move, and a scrub swap redraws nothing of Plotly's — the new run is painted over
the lean figure and drawn whole once, when the slider rests.

The pages are the offline export (`viz.export.standalone_html`: the same composer and player
as the dashboard's, no server), with Plotly's drawing calls counted in the page."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from devtools.browser import text_problems
from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.simulate import simulate
from viz.compare import compare_figure
from viz.export import standalone_html
from viz.main_figure import main_figure
from viz.options import FigureOptions
from viz.payload import encode
from viz.scene import Scene, neuron_points, norm_curves

pytestmark = pytest.mark.browser

SMALL = {"model": {"width": 16}, "record": {"frames": 40}, "integrator": {"t_end": 40.0}}

# Plotly's drawing calls, counted (and the traces each animate touched)
COUNT_JS = """() => {
  const calls = window.__calls = {newPlot: 0, react: 0, relayout: 0, restyle: 0, animate: 0,
                                  traces: []};
  for (const name of ["newPlot", "react", "relayout", "restyle", "animate"]) {
    const real = Plotly[name];
    Plotly[name] = function () {
      calls[name] += 1;
      if (name === "animate") calls.traces.push(arguments[1].traces);
      return real.apply(this, arguments);
    };
  }
}"""
# the composed figure on screen: every trace's x, y (arrays) and name
DRAWN_JS = """() => {
  const gd = document.querySelector('.eae-plot');
  return gd.data.map(t => ({name: t.name || '', x: Array.from(t.x || [], v => v === null ?
    null : +v), y: Array.from(t.y || [], v => v === null ? null : +v)}));
}"""


def _open(page: Any, tmp_path: Path, scene: Scene, name: str = "fig") -> None:
    path = tmp_path / f"{name}.html"
    path.write_bytes(standalone_html(scene))
    page.goto(path.as_uri())
    page.wait_for_function("document.body.dataset.ready === 'true'", timeout=60_000)


def _settled(page: Any) -> None:
    page.wait_for_function("EAEPlayer.players[0].settled()", timeout=30_000, polling=50)


@pytest.fixture(scope="module")
def runs() -> list:
    out = []
    for eps in (1e-4, 1e-3, 1e-2):
        tr = simulate(Config.from_dict({**SMALL, "init": {"scale": eps}}))
        out.append((tr, analyse(tr)))
    return out


def _nan(v: list) -> np.ndarray:
    return np.array([np.nan if x is None else x for x in v], dtype=float)


@pytest.mark.parametrize("options", [FigureOptions(), FigureOptions(radius="log")],
                         ids=["normalised", "log"])
def test_the_browser_draws_the_references(context_of, tmp_path, runs, options):
    """Neuron positions and sizes at three frames, and the norm curves, as Chromium composes
    them, equal `neuron_points` and `norm_curves` (to float32)."""
    page = context_of(1400, 900)
    sc = main_figure(*runs[1], options)
    _open(page, tmp_path, sc)
    neurons = next(it for it in sc.items if it["kind"] == "neurons")
    norms = next(it for it in sc.items if it["kind"] == "norms")
    for k in (0, sc.frames.n // 2, sc.frames.n - 1):
        page.evaluate("(k) => EAEPlayer.players[0].draw(k)", k)
        _settled(page)
        drawn = {t["name"]: t for t in page.evaluate(DRAWN_JS)}
        x, y, size, pos = neuron_points(sc, neurons, k)
        for name, mask in (("positive neuron", pos), ("negative neuron", ~pos)):
            np.testing.assert_allclose(drawn[name]["x"], x[mask], atol=2e-6)
            np.testing.assert_allclose(drawn[name]["y"], y[mask], atol=2e-6)
        sizes = page.evaluate("""() => document.querySelector('.eae-plot')._fullData
            .filter(t => t.name === 'positive neuron')[0].marker.size""")
        assert list(np.asarray(sizes, float)) == list(size[pos])
    for (x, y), name in zip(norm_curves(sc, norms), ("‖w_j‖, a_j > 0", "‖w_j‖, a_j < 0"),
                            strict=True):
        got = drawn[name]
        np.testing.assert_allclose(_nan(got["x"]), x.astype(np.float32), rtol=1e-6)
        np.testing.assert_allclose(_nan(got["y"]), y.astype(np.float32), rtol=1e-6)


def test_a_played_frame_updates_only_the_traces_that_move(context_of, tmp_path, runs):
    page = context_of(1400, 900)
    sc = main_figure(*runs[1])
    _open(page, tmp_path, sc)
    page.evaluate(COUNT_JS)
    for k in range(1, 6):
        page.evaluate("(k) => EAEPlayer.players[0].draw(k)", k)
        _settled(page)
    calls = page.evaluate("() => window.__calls")
    assert calls["animate"] == 5 and calls["react"] == calls["newPlot"] == 0
    assert calls["relayout"] == calls["restyle"] == 0  # axes, labels, strip: drawn once
    moving = {i for t in calls["traces"] for i in t}
    names = [t.get("name") for t in sc.traces()]
    assert {names[i] for i in moving} == {"positive neuron", "negative neuron",
                                          "frame caption", "time cursor"}
    assert len(moving) < len(names) / 2


def test_a_scrub_swap_paints_the_run_and_draws_it_whole_once_at_rest(context_of, tmp_path,
                                                                      runs):
    """A family of three runs in the page: swapping back and forth paints each run on the
    canvas layer (its pixels change with the run), Plotly lays out the lean figure once for
    the drag and draws the run whole once when the slider rests; the title of the run on
    screen is the painted run's all along."""
    page = context_of(1400, 900)
    scenes = [main_figure(tr, an) for tr, an in runs]
    _open(page, tmp_path, scenes[1])
    payloads = [base64.b64encode(encode(s)).decode() for s in scenes]
    page.evaluate("""(runs) => {
      const p = EAEPlayer.players[0];
      const decoded = runs.map(b => EAEPlayer.decode(Uint8Array.from(atob(b),
                                                                     c => c.charCodeAt(0)).buffer));
      p.setFamily({param: "init.scale", label: "ε", values: [1e-4, 1e-3, 1e-2],
                   labels: ["0.0001", "0.001", "0.01"], sources: ["a", "b", "c"], current: 1,
                   choices: []}, (src) => Promise.resolve(decoded["abc".indexOf(src)]));
    }""", payloads)
    page.wait_for_function("EAEPlayer.players[0].familyRuns.size === 3", timeout=30_000)
    page.evaluate(COUNT_JS)
    layer = "() => { const c = document.querySelector('.eae-layer'); return c && !c.hidden ? " \
            "c.toDataURL() : null; }"
    # the drag is driven in the page, each member's canvas and title read the moment it is
    # shown: from here, a round trip per step raced the scrub's rest (SETTLE_MS, 180 ms) on a
    # loaded host. A rest the host still forces between two steps is counted (the flag
    # `dragging` falls) and allowed its whole draw and the next step's lean layout
    drive = """async (order) => {
      const p = EAEPlayer.players[0];
      let dragging = p.dragging;
      window.__rests = 0;
      Object.defineProperty(p, "dragging", {configurable: true, get: () => dragging,
        set: (v) => { if (dragging && !v) window.__rests += 1; dragging = v; }});
      const s = document.querySelector('.eae-scrub-input');
      const out = [];
      for (const i of order) {
        s.value = String(i);
        s.dispatchEvent(new Event('input'));
        await new Promise(done => {
          const look = () => {
            if (p.familyShown !== i || p.busy || !p.dragging) return setTimeout(look, 0);
            const c = document.querySelector('.eae-layer');
            out.push({layer: c && !c.hidden ? c.toDataURL() : null, title: p.titleText()});
            done();
          };
          look();
        });
      }
      // the calls so far, in the task that saw the last member dragged (before its rest)
      return {out: out, rests: window.__rests, calls: {...window.__calls}};
    }"""
    got = page.evaluate(drive, [0, 2, 0, 2, 1, 0])
    seen = [g["layer"] for g in got["out"]]
    titles = [g["title"] for g in got["out"]]
    calls = got["calls"]
    assert calls["react"] <= 2 + 2 * got["rests"] and calls["animate"] == 0 \
        and calls["restyle"] == 0, (calls, got["rests"])
    assert all(seen) and seen[0] != seen[1] and seen[0] == seen[2]  # each run painted, again
    assert [("0.0001" in t, "0.01" in t) for t in titles[:2]] == [(True, False), (False, True)]
    _settled(page)  # at rest: the run is drawn whole by Plotly, the canvas put away
    after = page.evaluate("() => window.__calls")
    assert after["react"] == calls["react"] + 1
    assert page.evaluate(layer) is None
    assert "ε = 0.0001" in page.evaluate("() => document.querySelector('.gtitle').textContent")


def test_compare_and_presenter_figures_compose(context_of, tmp_path, runs):
    """The other scenes the pages show compose without an error and draw every trace."""
    page = context_of(1280, 720)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    (ta, aa), (tb, ab) = runs[0], runs[2]
    for i, sc in enumerate((compare_figure(ta, tb, aa, ab),
                            main_figure(ta, aa, FigureOptions(presenter=True)))):
        _open(page, tmp_path, sc, f"fig{i}")
        drawn = page.evaluate(DRAWN_JS)
        assert len(drawn) == sum(1 for _ in sc.traces())
        assert json.dumps([t["name"] for t in drawn]) == json.dumps(
            [t.get("name", "") or "" for t in sc.traces()])
    assert not errors, errors


def test_tick_labels_fit_the_height_drawn(context_of, tmp_path, runs):
    """In presenter mode the page sizes the figure to the window: at 1280×720 the Explorer's
    ‖w_j‖ and loss axes showed 10⁻² on 10⁻⁴ and 10⁻⁵ on 10⁻¹⁰ (four labels of large text in
    panels 65 px tall), the loss panel's last label on the accuracy panel's first. The player
    picks the labels that fit the height it draws (`EAEPlayer.fitTicks`): at every window
    height no text box of the figure overlaps another or leaves it, and each log axis keeps
    at most 5 labels, at least one."""
    page = context_of(1280, 720)
    (ta, aa), (tb, ab) = runs[0], runs[2]
    for i, sc in enumerate((main_figure(ta, aa, FigureOptions(presenter=True)),
                            compare_figure(ta, tb, aa, ab, options=FigureOptions(presenter=True)))):
        _open(page, tmp_path, sc, f"ticks{i}")
        for height in (720, 560, 1000):
            page.set_viewport_size({"width": 1280, "height": height})
            page.evaluate("() => EAEPlayer.players[0].fitHeight()")
            page.wait_for_function(
                f"() => Math.abs(document.querySelector('.eae-plot')._fullLayout.height - "
                f"({height} - 16 - (EAEPlayer.players[0].root.getBoundingClientRect().height"
                f" - document.querySelector('.eae-plot').getBoundingClientRect().height)))"
                " <= 8", timeout=30_000)
            _settled(page)
            assert text_problems(page) == [], (i, height)
            counts = page.evaluate("""() => {
              const full = document.querySelector('.eae-plot')._fullLayout;
              return Object.keys(full).filter(k => /^yaxis\\d*$/.test(k)
                  && full[k].type === 'log' && full[k].showticklabels)
                .map(k => (full[k]._vals || []).filter(v => v.text).length);
            }""")
            assert counts and all(1 <= n <= 5 for n in counts), (i, height, counts)
