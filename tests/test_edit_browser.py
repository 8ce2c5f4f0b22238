"""Move the data in the neuron panel, in real Chromium.

The browser's theory (`viz/player/edit.js`: G's extremal directions, the predicted alignment
end, Boursier–Flammarion's trap) agrees with the library's on random data; and on a real
server a point dragged along an arc takes the theory with it at every step, the run recomputes
after the release, the URL and the sidebar's table say the new data, undo restores the old,
a click adds a point, its menu flips and removes one, and the lesson's move — the three-point
example's middle point out of the middle — turns the trap into an escape."""

from __future__ import annotations

import math
import re
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from devtools.browser import PLAYER_JS, player_frame, wait_for_streamlit_idle
from dynamics import trap
from dynamics.config import Config
from dynamics.data import build_dataset
from dynamics.extremal import _exact_2d
from dynamics.papers import boursier
from dynamics.simulate import simulate
from dynamics.timescales import auto_time
from viz.main_figure import main_figure
from viz.player import HERE

EDIT_JS = """(i) => {
  const f = document.querySelector('iframe[title$="eae_player"]');
  const w = f.contentWindow, p = w.EAEPlayer.players[0], E = p.edit;
  if (!E || !E.data || !E.pxOf(E.data.handles[0])) return null;
  const pr = w.document.querySelector('.eae-plot').getBoundingClientRect();
  const fr = f.getBoundingClientRect();
  const at = (x) => {
    const q = E.pxOf(x);
    return [fr.left + pr.left + q[0], fr.top + pr.top + q[1]];
  };
  return {handle: at(E.data.handles[i]), origin: at([0, 0]), unit: at([E.scale, 0]),
          one: at([1, 0]),
          fields: E.data.fields, painted: E.paintedBody || "", paints: E.paints, runs: E.runs,
          editing: E.editing, key: p.runKey, shownBody: E.shownBody, trap: E.trap,
          extremal: E.extremal || null, n: E.data.handles.length,
          trapText: (w.document.querySelector('.eae-edit-trap') || {}).textContent || ""};
}"""

AT_JS = """(x) => {
  const f = document.querySelector('iframe[title$="eae_player"]');
  const w = f.contentWindow, E = w.EAEPlayer.players[0].edit;
  const pr = w.document.querySelector('.eae-plot').getBoundingClientRect();
  const fr = f.getBoundingClientRect(), q = E.pxOf(x);
  return [fr.left + pr.left + q[0], fr.top + pr.top + q[1]];
}"""  # where input vector x is on the page
# the overlay shows the theory of the data as they are now (painted in an animation frame)
PAINTED = (f"(i) => {{ const s = ({EDIT_JS})(i); "
           "return s.painted === JSON.stringify({fields: s.fields}); }")


def _ed(cfg: Config) -> dict:
    """A figure's edit description (`viz.data_edit`), as the browser gets it."""
    return main_figure(simulate(cfg)).meta["edit"]


@pytest.mark.browser
def test_the_browsers_theory_agrees_with_the_library(page) -> None:
    page.set_content("<html><body></body></html>")
    page.add_script_tag(content=(HERE / "edit.js").read_text())
    rng = np.random.default_rng(31)
    for _ in range(12):  # random 2-D data, labels ±1 and real, ReLU and leaky
        n = int(rng.integers(2, 9))
        X = rng.normal(size=(n, 2))
        b = rng.normal(size=n)
        gamma = float(rng.choice([0.0, 0.1]))
        got = page.evaluate("([X, b, g]) => EAEPlayer.theory2d.extremal2d(X, b, g)",
                            [X.tolist(), b.tolist(), gamma])
        want = _exact_2d(X, b, gamma)
        assert len(got) == len(want), (got, want)
        for g in got:  # each browser point is one of the library's, same kind and value
            match = [e for e in want if e.kind == g["kind"]
                     and np.allclose(e.vector, g["u"], atol=1e-9)]
            assert match and abs(match[0].value - g["value"]) <= 1e-9 * max(1, abs(g["value"]))
    # the predicted alignment end and the trap's verdict, from a figure's description
    # (the last three with the output power and per-layer rates: c·m^(−p) and √(η_w η_a) in
    # the rate, no verdict under rates)
    extra = [{}] * 9 + [{"model.output_power": 0.5}, {"integrator.lr_w": 2.0},
                        {"model.output_power": 1.0, "integrator.lr_a": 0.5}]
    for x, upd in zip([[-0.75, -0.5, 0.125], [-0.75, 0.3, 0.125], [-1.417, 0.114, 0.761],
                       *[sorted(np.round(rng.uniform(-1.5, 1.5, 3), 3).tolist())
                         for _ in range(6)], [-0.75, -0.5, 0.125], [-0.75, -0.5, 0.125],
                       [-1.417, 0.114, 0.761]], extra, strict=True):
        raw = boursier.config("balanced", 0, 600.0, 40).to_dict()
        raw["data"]["x"] = x
        cfg = Config.from_dict(raw).with_updates(upd) if upd else Config.from_dict(raw)
        ed = _ed(cfg)
        js = page.evaluate("""(ed) => {
            const T = EAEPlayer.theory2d, b = T.weights(ed, ed.y, ed.sw);
            const ex = T.extremal2d(ed.X, b, ed.gamma);
            const v = T.trapVerdict(ed, ed.X, ed.y, ed.sw);
            return {align: T.alignEnd(ed, ed.X, ed.y, b, ex), verdict: v.verdict,
                    tCone: v.tCone === Infinity ? "inf" : v.tCone, tAlign: v.tAlign}; }""", ed)
        pred = trap.predict(cfg)
        assert js["align"] == pytest.approx(auto_time(cfg, build_dataset(cfg)).t_align, rel=1e-9)
        assert js["verdict"] == pred.verdict, (x, js, pred)
        if isinstance(js["tCone"], float) and math.isfinite(pred.t_cone):
            assert js["tCone"] == pytest.approx(pred.t_cone, rel=1e-9)


TABLE_JS = ("() => Array.from(document.querySelectorAll("
            "'[data-testid=\"stSidebar\"] table.eae-rows td:nth-child(2)'))"
            ".map((e) => e.textContent)")  # the sidebar's listing of the table: its first column


def _table_says(page, first: float) -> None:
    """Wait until the sidebar's listing of the data table reads `first` in its first row
    (the grid itself opens in a popover)."""
    page.wait_for_function(f"() => {{ const c = ({TABLE_JS})(); return c.length > 0 "
                           f"&& Math.abs(parseFloat(c[0]) - {first}) < 1e-3; }}", timeout=30_000)


def _angles(url: str) -> list[float]:
    q = parse_qs(urlparse(url).query)
    return [float(v) for v in q["data.angles_deg"][0].split(",")] if "data.angles_deg" in q \
        else []


@pytest.mark.browser
def test_drag_a_point_along_an_arc_and_the_network_answers(
        start_streamlit, page, tmp_path, screenshot_dir) -> None:
    base = start_streamlit("serve.py", env={"EAE_CACHE_DIR": str(tmp_path / "cache")})
    page.goto(f"{base}/?model.width=12")
    wait_for_streamlit_idle(page, timeout=300)
    page.wait_for_function(f"() => ({EDIT_JS})(0) !== null", timeout=60_000)
    before = page.evaluate(EDIT_JS, 0)
    first_key = before["key"]
    assert before["fields"]["angles_deg"][0] == 15
    page.mouse.move(*before["handle"])
    page.mouse.down()
    # along the unit circle from 15° to 60° in 3° steps: after every step the overlay shows
    # the theory of the data as they are then (painted in the next animation frame)
    for deg in range(18, 61, 3):
        a = math.radians(deg)
        page.mouse.move(*page.evaluate(AT_JS, [math.cos(a), math.sin(a)]))
        page.wait_for_function(f"() => ({PAINTED})(0)", timeout=10_000)
        s = page.evaluate(EDIT_JS, 0)
        assert abs(s["fields"]["angles_deg"][0] - deg) <= 1.0  # the point is under the pointer
        if deg == 39:
            page.screenshot(path=screenshot_dir / "edit_while_dragging.png")
    during = page.evaluate(EDIT_JS, 0)
    # the theory drawn is the library's for those data
    cfg = Config.from_dict({"data": {"kind": "points", **during["fields"]}})
    ds = build_dataset(cfg)
    want = _exact_2d(ds.X, ds.y / len(ds.y), 0.0)
    top = max((e for e in want if e.kind == "max"), key=lambda e: e.value)
    got = max((e for e in during["extremal"] if e["kind"] == "max"), key=lambda e: e["value"])
    assert np.allclose(got["u"], top.vector, atol=1e-6)
    page.mouse.up()
    # the run recomputed: a new figure on screen, the overlay gone, the URL with the new data
    page.wait_for_function(
        f"() => {{ const s = ({EDIT_JS})(0); return s && !s.editing && s.key !== '{first_key}' "
        "&& s.shownBody === JSON.stringify({fields: s.fields}); }", timeout=60_000)
    page.wait_for_url(re.compile(r"data\.angles_deg=60"), timeout=60_000)
    wait_for_streamlit_idle(page, timeout=120)
    after = page.evaluate(EDIT_JS, 0)
    assert after["fields"]["angles_deg"][0] == pytest.approx(60, abs=1.0)
    assert _angles(page.url)[0] == pytest.approx(after["fields"]["angles_deg"][0], abs=1e-9)
    assert after["key"] != first_key and page.evaluate(PLAYER_JS, 0)["key"] == after["key"]
    _table_says(page, after["fields"]["angles_deg"][0])
    # undo: the previous data again, in the figure, the URL and the table
    player_frame(page).locator(".eae-edit-undo").click()
    page.wait_for_url(re.compile(r"^(?!.*data\.angles_deg=6).*$"), timeout=60_000)
    wait_for_streamlit_idle(page, timeout=120)
    undone = page.evaluate(EDIT_JS, 0)
    assert undone["fields"]["angles_deg"][0] == 15 and not _angles(page.url)
    assert undone["key"] == first_key
    _table_says(page, 15)


@pytest.mark.browser
def test_add_flip_and_remove_points(start_streamlit, page, tmp_path) -> None:
    base = start_streamlit("serve.py", env={"EAE_CACHE_DIR": str(tmp_path / "cache")})
    page.goto(f"{base}/?model.width=12")
    wait_for_streamlit_idle(page, timeout=300)
    page.wait_for_function(f"() => ({EDIT_JS})(0) !== null", timeout=60_000)
    frame = player_frame(page)
    # (buttons clicked in place: a scroll would move the panel under the pointer's targets)
    frame.locator(".eae-edit-minus").evaluate("(b) => b.click()")  # the next one is −1
    page.mouse.click(*page.evaluate(AT_JS, [0.7 * math.cos(2.2), 0.7 * math.sin(2.2)]))
    page.wait_for_function(f"() => ({EDIT_JS})(0).n === 5", timeout=10_000)
    page.wait_for_url(re.compile(r"data\.labels=1\.0%2C1\.0%2C-1\.0%2C-1\.0%2C-1\.0"),
                      timeout=60_000)
    wait_for_streamlit_idle(page, timeout=120)
    added = page.evaluate(EDIT_JS, 0)
    assert added["fields"]["angles_deg"][4] == pytest.approx(math.degrees(2.2), abs=1.0)
    # a click on the first point opens its menu: flip its label
    page.mouse.click(*added["handle"])
    frame.locator(".eae-edit-menu button", has_text="Flip").click()
    page.wait_for_function(f"() => ({EDIT_JS})(0).fields.labels[0] === -1", timeout=10_000)
    page.wait_for_url(re.compile(r"data\.labels=-1\.0%2C"), timeout=60_000)
    wait_for_streamlit_idle(page, timeout=120)
    # right-click the added point: remove it
    added = page.evaluate(EDIT_JS, 4)
    page.mouse.click(*added["handle"], button="right")
    frame.locator(".eae-edit-menu button", has_text="Remove").click()
    page.wait_for_function(f"() => ({EDIT_JS})(0).n === 4", timeout=10_000)
    page.wait_for_url(re.compile(r"data\.labels=-1\.0%2C1\.0%2C-1\.0%2C-1\.0(&|$)"),
                      timeout=60_000)


@pytest.mark.browser
def test_the_lesson_drag_the_middle_point_out_of_the_trap(
        start_streamlit, page, tmp_path, screenshot_dir) -> None:
    """Boursier & Flammarion's data: trapped; the middle point (target 0.1) moved right past
    x₃ = 0.125, the prediction says escape the moment it crosses, and the run escapes."""
    base = start_streamlit("serve.py", env={"EAE_CACHE_DIR": str(tmp_path / "cache")})
    page.goto(f"{base}/?view.lesson=boursier.three_point_balanced&view.presenter=true"
              "&view.scenario=boursier.three_point_balanced")
    wait_for_streamlit_idle(page, timeout=300)
    page.wait_for_function(f"() => ({EDIT_JS})(1) !== null", timeout=60_000)
    s = page.evaluate(EDIT_JS, 1)
    assert s["fields"]["x"] == [-0.75, -0.5, 0.125]
    assert "Trap predicted from the data: trapped" in s["trapText"]
    assert "This run: trapped" in s["trapText"]
    px_per_x = s["one"][0] - s["origin"][0]  # the panel's x is the input's x (plane (x, 1))
    x0, y0 = s["handle"]
    page.mouse.move(x0, y0)
    page.mouse.down()
    crossed = None
    for k in range(1, 31):  # x from −0.5 to +0.4
        page.mouse.move(x0 + k * 0.03 * px_per_x, y0)
        page.wait_for_function(f"() => ({PAINTED})(1)", timeout=10_000)
        now = page.evaluate(EDIT_JS, 1)
        if crossed is None and now["trap"]["verdict"] == "escape":
            crossed = now["fields"]["x"][1]
            page.screenshot(path=screenshot_dir / "edit_trap_crossed.png")
    # the verdict turns at x₃ = 0.125, where the middle point stops being the middle one
    assert crossed is not None and 0.125 < crossed <= 0.125 + 0.031, crossed
    page.mouse.up()
    page.wait_for_function(f"() => {{ const s = ({EDIT_JS})(1); "
                           "return !s.editing && s.trapText.includes('This run'); }",
                           timeout=120_000)
    done = page.evaluate(EDIT_JS, 1)
    assert "escapes" in done["trapText"] and "This run: escaped" in done["trapText"], done



READOUT_JS = ("() => document.querySelector('iframe[title$=\"eae_player\"]').contentWindow"
              ".document.querySelector('.eae-edit-readout').textContent")


@pytest.mark.browser
def test_every_kind_of_data_can_be_taken_and_moved(streamlit_server, page) -> None:
    """One preset of each kind the panel edits (Wang & Ma's two signals, Lyu's vectors, the
    three points; clusters from a link): a point taken and moved a few steps, the overlay
    painted for the data as they are after each, its readout shown, and no error in the page
    (the readout knew only angles-and-radii points and threw on the others: nothing painted)."""
    from bench.bench_edit import cases

    base = streamlit_server
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    seen: dict[str, str] = {"clusters": "data.kind=clusters&model.width=12"}  # (no preset)
    for _name, query, kind in cases(False):
        if kind not in seen and kind != "points":
            seen[kind] = query
    assert set(seen) == {"clusters", "two_signals", "vectors", "three_point"}, sorted(seen)
    for kind, query in seen.items():
        page.goto(f"{base}/?{query}")
        wait_for_streamlit_idle(page, timeout=300)
        page.wait_for_function(f"() => ({EDIT_JS})(0) !== null", timeout=60_000)
        s = page.evaluate(EDIT_JS, 0)
        page.mouse.move(*s["handle"])
        page.mouse.down()
        h = page.evaluate(f"() => ({EDIT_JS})(0)")["handle"]
        for k in range(1, 5):  # toward the origin's side: a move every kind allows
            page.mouse.move(h[0] - 6 * k, h[1] - 4 * k)
            page.wait_for_function(f"() => ({PAINTED})(0)", timeout=10_000)
        assert page.evaluate(READOUT_JS).strip(), kind
        assert not errors, (kind, errors)
        page.mouse.up()  # (its run is the other tests' subject: not waited for here)


@pytest.mark.browser
def test_the_data_table_opens_in_a_popover_and_its_edit_is_the_state(streamlit_server,
                                                                     page) -> None:
    """The sidebar lists the points read-only and their grid opens in a popover (its scripts
    load only then: a fresh browser's first chart does not wait for them): a cell typed there
    is the new state — the listing, the URL and the figure's data say it, and the popover
    stays open for the next edit."""
    page.goto(f"{streamlit_server}/?model.width=12")
    wait_for_streamlit_idle(page, timeout=300)
    page.wait_for_function(f"() => ({EDIT_JS})(0) !== null", timeout=60_000)
    assert page.locator('[data-testid="stDataFrame"]').count() == 0  # not drawn until opened
    _table_says(page, 15)
    page.get_by_role("button", name="Edit the table").click()
    canvas = page.locator('[data-testid="stPopoverBody"] [data-testid="data-grid-canvas"]')
    canvas.wait_for()
    box = canvas.bounding_box()
    assert box is not None
    # row 1's angle: right of the row markers (~35 px), under the header row (35 px)
    from ui.controls import CELL_WIDTH

    page.mouse.dblclick(box["x"] + 35 + CELL_WIDTH["angles_deg"] / 2, box["y"] + 35 + 17)
    editor = page.locator("textarea.gdg-input")  # the cell's editor, holding its text
    editor.wait_for()
    assert editor.input_value() == "15"
    editor.fill("30")
    editor.press("Enter")
    page.wait_for_url(re.compile(r"data\.angles_deg=30"), timeout=60_000)
    wait_for_streamlit_idle(page, timeout=120)
    _table_says(page, 30)
    page.wait_for_function(f"() => ({EDIT_JS})(0).fields.angles_deg[0] === 30", timeout=60_000)
    assert canvas.is_visible()
