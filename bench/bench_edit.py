"""Move a data point in the neuron panel, in real Chromium: how often the theory follows the
point while it is dragged, how many full runs arrive meanwhile, and how long after the release
the new animation is drawn.

    .venv/bin/python -m bench edit                  # the default run and the 2-D presets
    .venv/bin/python -m bench edit --quick          # the default run and the three points

Starts one server (`streamlit run serve.py`, loopback, a fresh EAE_CACHE_DIR), opens the
Explorer on each case and, once idle, drags its first movable point in the page itself: a
pointer move every display frame (a hand at 60 Hz: pointerdown on the point, pointermove
events along an arc — along its line for the three points — for `--seconds`, pointerup),
counting the overlay's paints (the theory: extremal directions, edges, predicted alignment
end, trap verdict) and the runs drawn while it moves (the server otherwise idle), then a last
move to a place the drag never reached (a run not computed yet) and the time from its
pointerup to the released data's run on screen (its figure painted; `drawn whole`:
the full figure once it rests). A second, shorter drag with the remote-controlled mouse gives
the screenshot of a drag in progress (`--shots DIR`). Nothing is asserted: the numbers are
printed (and written as JSON with --json), with the CPU they ran on.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from devtools.browser import launch_chromium, wait_for_streamlit_idle
from devtools.server import REPO_ROOT, StreamlitServer

from .machine import cpu_model, loadavg_text

READY_JS = """() => {
  const f = document.querySelector('iframe[title$="eae_player"]');
  try {
    const p = f.contentWindow.EAEPlayer.players[0];
    return !!(p && p.edit && p.edit.ed && p.edit.pxOf(p.edit.data.handles[0]));
  } catch (e) { return false; }
}"""

# a hand in the page: one pointer move per display frame along a path of input vectors
HAND_JS = """async ([i, seconds, kind]) => {
  const f = document.querySelector('iframe[title$="eae_player"]');
  const w = f.contentWindow, p = w.EAEPlayer.players[0], E = p.edit;
  const plot = w.document.querySelector('.eae-plot');
  const h0 = E.data.handles[i].slice(), r0 = Math.hypot(h0[0], h0[1]);
  const a0 = Math.atan2(h0[1], h0[0]);
  const at = (x) => {
    const q = E.pxOf(x), b = plot.getBoundingClientRect();
    return {clientX: b.left + q[0], clientY: b.top + q[1]};
  };
  const path = (s) => {  // back and forth: ±40° of arc, or ±0.6 along the three points' line
    const u = Math.sin(2 * Math.PI * s / 2.0);
    if (kind === 'three_point') return [h0[0] + 0.6 * u, h0[1]];
    const a = a0 + u * 40 * Math.PI / 180;
    return [r0 * Math.cos(a), r0 * Math.sin(a)];
  };
  const ev = (type, x) => plot.dispatchEvent(new w.PointerEvent(type, Object.assign(
    {bubbles: true, cancelable: true, pointerId: 7, button: 0, buttons: 1, isPrimary: true},
    at(x))));
  const p0 = E.paints, r0runs = E.runs, posts0 = E.posts, d0 = p.redraws, f0 = p.fastSwaps;
  ev('pointerdown', h0);
  let moves = 0;
  const t0 = w.performance.now();
  await new Promise((done) => {
    const tick = () => {
      const s = (w.performance.now() - t0) / 1000;
      if (s > seconds) return done();
      ev('pointermove', path(s));
      moves += 1;
      w.requestAnimationFrame(tick);
    };
    w.requestAnimationFrame(tick);
  });
  const dt = (w.performance.now() - t0) / 1000;
  const paints = E.paints - p0, runs = E.runs - r0runs;
  const redraws = p.redraws - d0, painted = p.fastSwaps - f0;
  // the release at a place the drag never reached (its run is new: nothing cached)
  const last = kind === 'three_point' ? [h0[0] + 0.75, h0[1]]
    : [r0 * Math.cos(a0 + 50 * Math.PI / 180), r0 * Math.sin(a0 + 50 * Math.PI / 180)];
  ev('pointermove', last);
  const tUp = w.performance.now();
  ev('pointerup', last);
  const body = () => JSON.stringify({fields: E.data.fields});
  await new Promise((done) => {
    const poll = () => (E.shownBody === body() && !E.editing) ? done() : w.setTimeout(poll, 5);
    poll();
  });
  const drawn = w.performance.now() - tUp;
  await new Promise((done) => {
    const poll = () => (p.settled() ? done() : w.setTimeout(poll, 5));
    poll();
  });
  return {moves, paints, runs, redraws, painted, posts: E.posts - posts0, seconds: dt,
          drawn_ms: drawn,
          whole_ms: w.performance.now() - tUp, timing: E.timing || null};
}"""


@dataclass
class EditResult:
    """One case: updates per second while dragging and the release → new animation times."""

    case: str
    url: str
    moves_per_s: float
    theory_per_s: float  # overlay paints per second of drag
    runs_per_s: float  # runs drawn while the point moved
    release_to_drawn_ms: float  # pointerup → the released data's run on screen (painted)
    release_to_whole_ms: float  # … and drawn whole (axes, labels, strip)
    last_post: dict[str, float] | None  # the last run's post → answer, decode, draw (ms)


def cases(quick: bool) -> list[tuple[str, str, str]]:
    """(name, query string, data kind) of the default run and of every 2-D preset whose data
    the panel edits."""
    from dynamics.papers import PAPERS
    from ui import edits
    from ui.lesson import ExplorerView
    from ui.state import explorer_binder

    binder = explorer_binder()
    out = [("default", "", "points")]
    for key, paper in PAPERS.items():
        for name, cfg in paper.presets(True).items():
            if not edits.editable(cfg) or (quick and key != "boursier"):
                continue
            q = binder.query(ExplorerView(), {"run": cfg})
            out.append((f"{key}.{name}", "&".join(f"{k}={v}" for k, v in q.items()),
                        cfg.data.kind))
            if quick:
                break
    return out


def _shot(page: Any, kind: str, path: Path) -> None:
    """A drag with the mouse, photographed half way (the pointer still down)."""
    state = page.evaluate("""(kind) => {
      const f = document.querySelector('iframe[title$="eae_player"]');
      const w = f.contentWindow, E = w.EAEPlayer.players[0].edit;
      const b = w.document.querySelector('.eae-plot').getBoundingClientRect();
      const fr = f.getBoundingClientRect(), i = kind === 'three_point' ? 1 : 0;
      const h = E.data.handles[i], to = kind === 'three_point' ? [h[0] + 0.6, h[1]]
        : [Math.hypot(h[0], h[1]) * Math.cos(Math.atan2(h[1], h[0]) + 0.6),
           Math.hypot(h[0], h[1]) * Math.sin(Math.atan2(h[1], h[0]) + 0.6)];
      const px = (x) => {
        const q = E.pxOf(x);
        return [fr.left + b.left + q[0], fr.top + b.top + q[1]];
      };
      return {from: px(h), to: px(to)};
    }""", kind)
    (x0, y0), (x1, y1) = state["from"], state["to"]
    page.mouse.move(x0, y0)
    page.mouse.down()
    for k in range(1, 21):
        page.mouse.move(x0 + (x1 - x0) * k / 20, y0 + (y1 - y0) * k / 20)
    page.screenshot(path=str(path))
    page.mouse.up()


def measure(base: str, browser: Any, quick: bool, seconds: float,
            shots: Path | None) -> list[EditResult]:
    out = []
    for name, query, kind in cases(quick):
        ctx = browser.new_context(viewport={"width": 1600, "height": 1000}, reduced_motion="reduce")
        page = ctx.new_page()
        url = f"{base}/?{query}" if query else f"{base}/"
        page.goto(url)
        wait_for_streamlit_idle(page, timeout=600)
        page.wait_for_function(f"() => ({READY_JS})()", timeout=120_000, polling=50)
        handle = 1 if kind == "three_point" else 0
        got = page.evaluate(HAND_JS, [handle, seconds, kind])
        wait_for_streamlit_idle(page, timeout=300)
        if shots is not None:
            shots.mkdir(parents=True, exist_ok=True)
            _shot(page, kind, shots / f"edit-{name}.png")
            wait_for_streamlit_idle(page, timeout=300)
        print(f"    {got['runs']} runs drawn while moving: {got['painted']} painted over the "
              f"lean figure, {got['redraws']} Plotly draws", flush=True)
        res = EditResult(name, url, got["moves"] / got["seconds"], got["paints"] / got["seconds"],
                         got["runs"] / got["seconds"], got["drawn_ms"], got["whole_ms"],
                         got["timing"])
        out.append(res)
        print(f"{name:34} moves {res.moves_per_s:5.1f}/s  theory {res.theory_per_s:5.1f}/s  "
              f"runs {res.runs_per_s:4.1f}/s  release → drawn {res.release_to_drawn_ms:6.0f} ms"
              f" (whole {res.release_to_whole_ms:6.0f} ms)  last post {res.last_post}",
              flush=True)
        ctx.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench edit", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the default run and the three points")
    ap.add_argument("--seconds", type=float, default=4.0, help="length of each drag")
    ap.add_argument("--shots", help="directory for screenshots of a drag in progress")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        server = StreamlitServer(REPO_ROOT / "serve.py", {"EAE_CACHE_DIR": tmp}, Path(tmp))
        try:
            server.wait_healthy()
            server.wait_ready()
            print(f"server {server.url}; CPU {cpu_model()}; load {loadavg_text()}", flush=True)
            t0 = time.perf_counter()
            with sync_playwright() as pw:
                browser = launch_chromium(pw)
                try:
                    results = measure(server.url, browser, args.quick, args.seconds,
                                      Path(args.shots) if args.shots else None)
                finally:
                    browser.close()
        finally:
            server.stop()
    print(f"done in {time.perf_counter() - t0:.0f} s; {loadavg_text()}")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
