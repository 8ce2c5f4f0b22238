"""Headless Chromium for the dashboard: launch settings and the "Streamlit is idle" rule.

Playwright drives Debian's Chromium (``/usr/bin/chromium``; Playwright's own browser download
is not used). `wait_for_streamlit_idle` is the one definition of "the app has finished its run
and drawn it", shared by browser tests and the load benchmark (which embeds `IDLE_JS`).
"""

from __future__ import annotations

import os
import time
from typing import Any

CHROMIUM_PATH = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1400, "height": 900}


def chromium_missing() -> str | None:
    """None if Chromium is installed at `CHROMIUM_PATH`, else why browser runs cannot start."""
    if os.path.isfile(CHROMIUM_PATH) and os.access(CHROMIUM_PATH, os.X_OK):
        return None
    return (f"Chromium not installed at {CHROMIUM_PATH}; browser tests need Debian's chromium "
            "(scripts/setup.sh installs it as root)")


def launch_chromium(playwright: Any, timeout_ms: float = 60_000) -> Any:
    """A headless Chromium `Browser` from a started ``sync_playwright()`` object.

    Plain ``launch()`` rather than ``launch_persistent_context()`` so that every caller can open
    fresh, isolated contexts; Playwright gives Chromium a temporary profile and deletes it on
    ``close()``.
    """
    return playwright.chromium.launch(executable_path=CHROMIUM_PATH, headless=True,
                                      args=CHROMIUM_ARGS, timeout=timeout_ms)


# Observed on streamlit 1.67.0:
#  * ``[data-testid="stApp"]`` carries ``data-test-script-state`` ("initial" before the first
#    run, "running" while the script runs, "notRunning" when done) and
#    ``data-test-connection-state`` ("PINGING_SERVER" ... "CONNECTED").
#  * ``[data-testid="stStatusWidget"]`` (with ``[data-testid="stStatusWidgetRunningIcon"]``,
#    aria-label "Running...") appears only while a run is in progress, after a short delay.
#  * ``[data-testid="stSkeleton"]`` placeholders stand in for lazily loaded elements (e.g. the
#    plotly chart) and for elements of a run that have not arrived yet.
#  * The figure player (ui/player.py) is an iframe titled "...eae_player" (same origin); its
#    window holds ``EAEPlayer.players``: each has ``run`` (the figure drawn), ``frame``,
#    ``playing``, ``runKey``, ``draws``, ``swaps``.
#: A JavaScript function (no arguments) that is true when the page is idle: connected, script
#: not running, no status widget, no skeletons, every Plotly chart and figure player drawn.
IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return false;
  if (app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
  if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  if (document.querySelector('.st-key-eae-starting')) return false;  // the server's start-up
  for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    if (!chart.querySelector('.main-svg')) return false;
  }
  for (const f of document.querySelectorAll('iframe[title$="eae_player"]')) {
    const w = f.contentWindow;
    const p = w && w.EAEPlayer && w.EAEPlayer.players[0];
    if (!p || (!p.run && !p.error) || p.busy > 0) return false;
    if (p.run && !p.settled()) return false;
    // the frame has the height the player asked for (presenter mode sizes it to the window)
    if (Math.abs(f.getBoundingClientRect().height - p.root.getBoundingClientRect().height) > 4)
      return false;
  }
  return true;
}"""

#: A JavaScript function (argument: the player's index on the page) giving the state of a
#: figure player: {frames, frame, playing, title (of the run on screen), xaxis2, xaxis3, width,
#: height, key, caption, label, draws, swaps, error, panels (the first two annotations),
#: cursors (the time cursors' x), stale, frameTop, frameHeight (the iframe's box in the
#: page)}, or null when there is no such player or it has not drawn yet.
PLAYER_JS = """(i) => {
  const f = document.querySelectorAll('iframe[title$="eae_player"]')[i || 0];
  const w = f && f.contentWindow;
  const p = w && w.EAEPlayer && w.EAEPlayer.players[0];
  if (!p || !p.run) return null;
  const gd = w.document.querySelector('.eae-plot');
  const lay = gd && gd._fullLayout;
  const title = p.titleText ? p.titleText() : ((gd.layout.title && gd.layout.title.text) ||
                (gd.layout.legend && gd.layout.legend.title && gd.layout.legend.title.text) || "");
  const r = f.getBoundingClientRect();
  return {frames: p.run.frames.n, frame: p.frame, playing: p.playing, title: title,
          xaxis2: lay && lay.xaxis2 && lay.xaxis2.type, width: lay && lay.width,
          height: lay && lay.height, key: p.runKey, draws: p.draws, swaps: p.swaps,
          error: p.error, frameTop: r.top, frameHeight: r.height,
          caption: w.document.querySelector('.eae-caption').textContent,
          label: w.document.querySelector('.eae-label').textContent,
          xaxis3: lay && lay.xaxis3 && lay.xaxis3.type,
          panels: (gd.layout.annotations || []).slice(0, 2).map(a => a.text),
          cursors: gd.data.filter(t => t.name === 'time cursor').map(t => t.x[0]),
          stale: w.document.querySelector('.eae-player').classList.contains('eae-stale')};
}"""


def player_frame(page: Any, index: int = 0) -> Any:
    """The Playwright frame of the `index`-th figure player on the page (to click ▶ in it)."""
    return page.frame_locator('iframe[title$="eae_player"]').nth(index)


_PAINTED_JS = """([i, n]) => new Promise(done => {
  const f = document.querySelectorAll('iframe[title$="eae_player"]')[i || 0];
  const w = (f && f.contentWindow) || window;
  let k = 0;
  const tick = () => (++k >= n ? done(k) : w.requestAnimationFrame(tick));
  w.requestAnimationFrame(tick);
})"""


def player_painted(page: Any, frames: int, index: int = 0) -> None:
    """Return once the `index`-th player's window has painted `frames` more animation frames:
    its timers and input handlers ran meanwhile, however loaded the machine (a condition on
    the browser's own progress, not a sleep)."""
    page.evaluate(_PAINTED_JS, [index, frames])


def set_playing(page: Any, playing: bool, index: int = 0, tries: int = 4,
                timeout_ms: float = 15_000) -> dict[str, Any]:
    """Click the `index`-th player's ▶/❚❚ until its state says `playing`, each click verified
    (the player's state changes within `timeout_ms`) before another: a click lost on a loaded
    host is clicked again, one that landed is never repeated. No click when it already is.
    Returns the player's state (`PLAYER_JS`)."""
    want = "true" if playing else "false"
    check = f"() => {{ const s = ({PLAYER_JS})({index}); return !!s && s.playing === {want}; }}"
    button = player_frame(page, index).locator(".eae-play")
    for _ in range(tries):
        if page.evaluate(check):
            break
        button.click()
        try:
            page.wait_for_function(check, timeout=timeout_ms, polling=50)
            break
        except Exception as e:  # Playwright's TimeoutError: the click did not take, again
            if "Timeout" not in type(e).__name__:
                raise
    else:
        raise AssertionError(f"the player is not {'playing' if playing else 'paused'} after "
                             f"{tries} verified clicks: {page.evaluate(PLAYER_JS, index)}")
    return page.evaluate(PLAYER_JS, index)

_STATE_JS = """() => {
  const a = document.querySelector('[data-testid="stApp"]');
  return {
    script: a && a.getAttribute('data-test-script-state'),
    connection: a && a.getAttribute('data-test-connection-state'),
    statusWidget: !!document.querySelector('[data-testid="stStatusWidget"]'),
    skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length,
    starting: !!document.querySelector('.st-key-eae-starting'),
    players: Array.from(document.querySelectorAll('iframe[title$="eae_player"]')).map(f => {
      const w = f.contentWindow;
      const p = w && w.EAEPlayer && w.EAEPlayer.players[0];
      if (!p) return "no player";
      return {run: !!p.run, error: p.error || null, busy: p.busy,
              settled: p.run ? p.settled() : null,
              frame: Math.round(f.getBoundingClientRect().height),
              root: Math.round(p.root.getBoundingClientRect().height)};
    }),
  };
}"""


def wait_for_streamlit_idle(page: Any, timeout: float = 60.0, settle: float = 0.5) -> None:
    """Wait until the Streamlit app on a Playwright `page` has finished running and rendering.

    Idle is `IDLE_JS`; it must hold continuously for ``settle`` seconds, which covers the short
    gap between a widget interaction and the rerun it triggers. ``timeout`` is in seconds;
    on timeout a `TimeoutError` names the app's script and connection state.
    """
    deadline = time.monotonic() + timeout
    idle_since: float | None = None
    while True:
        now = time.monotonic()
        if page.evaluate(IDLE_JS):
            if idle_since is None:
                idle_since = now
            elif now - idle_since >= settle:
                return
        else:
            idle_since = None
        if now > deadline:
            state = page.evaluate(_STATE_JS)
            raise TimeoutError(f"Streamlit app not idle after {timeout:.0f} s: {state}")
        page.wait_for_timeout(100)


#: A JavaScript function (no arguments) listing what a reader would see as clipped or
#: colliding text on the page: in every Plotly figure (the page's charts and the figure
#: players in their iframes) two text boxes that overlap (tick labels, axis titles,
#: annotations, legend entries, titles, point labels), a text box outside its figure or the
#: window, a tick label or axis title inside a plot area (over another panel), the chart
#: toolbar over a title; and on the page a text cut short by its box (an ellipsis, hidden
#: overflow). Returns {figures: [{name, texts}], problems: [sentence]}.
TEXT_BOXES_JS = r"""() => {
  const out = {figures: [], problems: []};
  const SLACK = 1.5;  // px two boxes may share (anti-aliasing, rounding)
  const R = (r, dx, dy) => ({l: r.left + dx, t: r.top + dy, r: r.right + dx, b: r.bottom + dy});
  const meet = (a, b, s) => Math.min(a.r, b.r) - Math.max(a.l, b.l) > s
    && Math.min(a.b, b.b) - Math.max(a.t, b.t) > s;
  const px = (b) => '(' + [b.l, b.t].map(Math.round) + ')–(' + [b.r, b.b].map(Math.round) + ')';
  const hidden = (el, stop) => {
    for (let e = el; e && e !== stop; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.display === 'none' || cs.visibility === 'hidden' || +cs.opacity === 0) return true;
      const op = e.getAttribute && e.getAttribute('opacity');
      if (op !== null && +op === 0) return true;
    }
    return false;
  };
  const kindOf = (t) => {
    const c = t.getAttribute('class') || '';
    if (/(^|\s)[xy]\d*title(\s|$)/.test(c)) return 'axis title';
    if (/(^|\s)gtitle(\s|$)/.test(c)) return 'title';
    if (t.closest('g.annotation')) return 'annotation';
    if (t.closest('g.legend')) return 'legend';
    if (t.closest('g.textpoint')) return 'point label';
    const g = t.parentElement;
    if (g && /(^|\s)[xy]\d*tick(\s|$)/.test(g.getAttribute('class') || '')) return 'tick label';
    return 'text';
  };
  const docs = [[document, 0, 0, null, 'page']];
  for (const f of document.querySelectorAll('iframe')) {
    let d = null;
    try { d = f.contentDocument; } catch (e) { d = null; }
    const r = f.getBoundingClientRect();
    if (!d || r.width === 0 || r.height === 0) continue;
    docs.push([d, r.left, r.top, R(r, 0, 0), 'figure']);
  }
  for (const [doc, dx, dy, clip, where] of docs) {
    for (const gd of doc.querySelectorAll('.js-plotly-plot')) {
      const gr = gd.getBoundingClientRect();
      if (gr.width === 0 || gr.height === 0) continue;
      const paper = R(gr, dx, dy);
      const lim = clip ? {l: Math.max(paper.l, clip.l), t: Math.max(paper.t, clip.t),
                          r: Math.min(paper.r, clip.r), b: Math.min(paper.b, clip.b)} : paper;
      const areas = Array.from(gd.querySelectorAll('.nsewdrag'))
        .map((e) => R(e.getBoundingClientRect(), dx, dy))
        .filter((a) => a.r - a.l > 2 && a.b - a.t > 2);
      const boxes = [];
      for (const t of gd.querySelectorAll('text')) {
        if (t.closest('.hoverlayer') || t.closest('.modebar')) continue;
        const txt = (t.textContent || '').trim();
        if (!txt || hidden(t, gd)) continue;
        const r0 = t.getBoundingClientRect();
        if (r0.width < 0.5 || r0.height < 0.5) continue;
        const box = Object.assign({kind: kindOf(t), text: txt.slice(0, 60)}, R(r0, dx, dy));
        // a point label of a trace clipped to its panel (cliponaxis): that panel's area
        const sub = t.closest('g.subplot');
        const clipped = t.closest('[clip-path]');
        if (box.kind === 'point label' && sub && clipped && sub.contains(clipped)) {
          const cls = Array.from(sub.classList).find((c) => c !== 'subplot');
          const drag = cls && gd.querySelector('.draglayer .' + cls + ' .nsewdrag');
          if (drag) box.clipTo = R(drag.getBoundingClientRect(), dx, dy);
        }
        boxes.push(box);
      }
      const lay = gd.layout || {};
      const title = String((lay.title && lay.title.text) || '').replace(/<[^>]+>/g, '');
      const name = `${where} "${title.slice(0, 40)}"`;
      const say = (b, what) => out.problems.push(`${name}: ${b.kind} "${b.text}" ${what}`);
      for (const b of boxes) {
        if (b.l < lim.l - SLACK || b.r > lim.r + SLACK || b.t < lim.t - SLACK
            || b.b > lim.b + SLACK) say(b, `outside its figure ${px(b)} vs ${px(lim)}`);
        else if (b.l < -SLACK || b.r > innerWidth + SLACK) say(b, 'outside the window');
        if (b.clipTo && (b.l < b.clipTo.l - SLACK || b.r > b.clipTo.r + SLACK
            || b.t < b.clipTo.t - SLACK || b.b > b.clipTo.b + SLACK))
          say(b, `cut by its panel ${px(b)} vs ${px(b.clipTo)}`);
        if (b.kind === 'tick label' || b.kind === 'axis title') {
          const a = areas.find((p) => meet(b, p, 2));
          if (a) say(b, `inside a plot area ${px(a)}`);
        }
      }
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
          if (meet(boxes[i], boxes[j], SLACK))
            say(boxes[i], `overlaps ${boxes[j].kind} "${boxes[j].text}" `
                + `${px(boxes[i])} ${px(boxes[j])}`);
        }
      }
      const bar = gd.querySelector('.modebar');
      if (bar && !hidden(bar, gd)) {
        const m = R(bar.getBoundingClientRect(), dx, dy);
        for (const b of boxes) if (b.kind === 'title' && meet(b, m, 1)) say(b, 'under the toolbar');
      }
      out.figures.push({name: name, texts: boxes.length});
    }
  }
  // words cut short: an element whose text overflows a box that hides it
  for (const [doc, , , , where] of docs) {
    for (const e of doc.querySelectorAll('[data-testid="stSidebar"] *, [data-testid="stMain"] *')) {
      if (!e.childNodes.length || e.children.length || !(e.textContent || '').trim()) continue;
      const cs = getComputedStyle(e);
      if (cs.textOverflow !== 'ellipsis' && cs.overflowX !== 'hidden') continue;
      if (e.scrollWidth > e.clientWidth + 1 && e.getClientRects().length)
        out.problems.push(`${where}: "${e.textContent.trim().slice(0, 60)}" cut short `
                          + `(${e.scrollWidth} px of text in ${e.clientWidth} px)`);
    }
    // a select box shows its choice in an input: cut when wider than the box
    for (const e of doc.querySelectorAll('[data-testid="stSelectbox"] input')) {
      if (e.value && e.scrollWidth > e.clientWidth + 1 && e.getClientRects().length)
        out.problems.push(`${where}: the choice "${e.value.slice(0, 60)}" cut short `
                          + `(${e.scrollWidth} px of text in ${e.clientWidth} px)`);
    }
  }
  return out;
}"""


def text_problems(page: Any) -> list[str]:
    """What `TEXT_BOXES_JS` finds on `page`: overlapping, clipped or cut-short text."""
    return list(page.evaluate(TEXT_BOXES_JS)["problems"])
