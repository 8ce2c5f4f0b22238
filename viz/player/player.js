/* The Early Alignment Explorer's figure player.
 *
 * Draws a figure payload (viz/payload.py, composed by scene.js) with Plotly.js and plays its
 * frames: ▶/❚❚, a time slider, the frame's label and a sentence of commentary, ← → Home End
 * and space keys. A frame updates only the traces that move (Plotly.animate without a
 * redraw: the axes, labels and phase strip stay as drawn). With a family (runs of one
 * control's values) a second slider swaps runs while it is dragged, without a server round
 * trip: a swap updates only the traces of the run's data (neurons, curves, cursors, caption)
 * and the axes' ranges; the new run's labels, rays and phase strip are drawn once the slider
 * rests (SETTLE_MS). Its release is reported to the page.
 *
 * One file for two hosts: the dashboard's Streamlit component (index.html: args arrive by
 * postMessage, the payload from the server's /api/eae/fig/<key> route or inline) and an
 * offline HTML export (viz/export.py calls EAEPlayer.mount with the payload inline).
 * `window.EAEPlayer.players` exposes the mounted players' state to tests.
 */
(function () {
  "use strict";
  const EAE = (window.EAEPlayer = window.EAEPlayer || { players: [] });
  const SETTLE_MS = 180;  // a scrub at rest this long: the run's axes, labels and strip drawn

  /** The composed figure of a decoded scene (composed once per run, `scene.js`). */
  function figOf(run) {
    if (!run._fig) {
      run._fig = EAE.compose(run);
      run._panels = panelsOf(run._fig);  // (before Plotly fills the layout in)
    }
    return run._fig;
  }

  /** The panels of a composed figure: its axes with their types and domains. */
  function panelsOf(fig) {
    const out = [];
    for (const key of Object.keys(fig.layout).sort()) {
      const ax = fig.layout[key];
      if (/^[xy]axis\d*$/.test(key) && ax) out.push([key, ax.type || "", ax.domain || null]);
    }
    return JSON.stringify(out);
  }

  /** A copy of `base` with `upd`'s leaves set (nested objects merged, arrays replaced). */
  function merged(base, upd) {
    const out = Object.assign({}, base);
    for (const k of Object.keys(upd)) {
      const v = upd[k];
      const isObj = v && typeof v === "object" && !Array.isArray(v) && !ArrayBuffer.isView(v);
      out[k] = isObj && base[k] && typeof base[k] === "object" ? merged(base[k], v) : v;
    }
    return out;
  }

  /* ------------------------------------------------------------------ the player */
  function el(tag, cls, parent, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function fmt(v) {
    if (typeof v !== "number") return String(v);
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e4)) return v.toExponential(1).replace("e", "e");
    return String(+v.toPrecision(3));
  }

  /** Mount a player in `root`. opts: {config (Plotly config), presenter, onEvent(event),
   * heightFor(player) → px or null (the host sizes the figure), title}. */
  function mount(root, opts) {
    opts = opts || {};
    root.classList.add("eae-player");
    if (opts.presenter) root.classList.add("eae-presenter");
    const plot = el("div", "eae-plot", root);
    const bar = el("div", "eae-controls", root);
    const play = el("button", "eae-play", bar, "▶ Play");
    play.type = "button";
    play.setAttribute("aria-label", "Play");
    const time = el("input", "eae-time", bar);
    time.type = "range";
    time.min = "0";
    time.step = "1";
    time.setAttribute("aria-label", "Time");
    const label = el("span", "eae-label", bar);
    const caption = el("div", "eae-caption", root);
    caption.setAttribute("aria-live", "polite");
    const scrub = el("div", "eae-scrub", root);
    scrub.hidden = true;
    const scrubName = el("span", "eae-scrub-name", scrub);
    const scrubPick = el("select", "eae-scrub-pick", scrub);
    scrubPick.setAttribute("aria-label", "The control to drag");
    const scrubInput = el("input", "eae-scrub-input", scrub);
    scrubInput.type = "range";
    scrubInput.min = "0";
    scrubInput.step = "1";
    const scrubValue = el("span", "eae-scrub-value", scrub);
    const scrubNote = el("span", "eae-scrub-note", scrub);
    const status = el("div", "eae-status", root);

    const P = {
      root: root, run: null, runKey: null, frame: 0, playing: false, draws: 0, swaps: 0,
      fastSwaps: 0, redraws: 0, swapMs: 0, inputs: 0, drawn: null, dragging: false,
      dragRanges: null,
      family: null, familyRuns: new Map(), familyShown: -1, familyWanted: -1, error: null,
    };
    EAE.players.push(P);
    // moving the data in the neuron panel (edit.js; a scene without `meta.edit` hides it)
    const editor = EAE.editor ? EAE.editor(P, plot, root, el, opts.onEvent) : null;
    let timer = null;
    let pending = null; // the frame to draw when the current draw ends
    let drawing = false;

    function setFrameHeight() {
      if (opts.onHeight) opts.onHeight(root.getBoundingClientRect().height);
    }
    if (window.ResizeObserver && opts.onHeight) {
      // the host follows the player's height (controls, status lines appearing); reported on
      // the next frame, so the observer never changes layout inside its own callback
      new ResizeObserver(function () { requestAnimationFrame(setFrameHeight); }).observe(root);
    }

    function plotHeight() {
      const h = opts.heightFor ? opts.heightFor(P) : null;
      if (h == null) return null;
      let other = 6;  // every line under the plot (controls, caption, scrub, the data editor)
      for (const child of root.children) {
        if (child !== plot && !child.hidden && getComputedStyle(child).position !== "absolute") {
          other += child.offsetHeight;
        }
      }
      return Math.max(200, h - other);
    }

    /** The layout for the player's width: the figure's, with the first narrow variant whose
     * width the player is below merged in (nested objects merged). */
    function layoutFor(run) {
      const lay = baseLayout(run);
      const h = plotHeight();
      if (h != null) {
        lay.height = h;
        lay.autosize = true;
      }
      P.tickWidth = root.clientWidth || window.innerWidth;
      const ticks = EAE.fitTicks(lay, lay.height, P.tickWidth);  // the tick labels that fit
      for (const name of Object.keys(ticks)) lay[name] = Object.assign({}, lay[name], ticks[name]);
      return lay;
    }

    /** The figure's layout for the player's width (its narrow variant), before its height. */
    function baseLayout(run) {
      let lay = Object.assign({}, figOf(run).layout);
      const width = root.clientWidth || window.innerWidth;
      const v = (run.narrow || []).slice().sort((a, b) => a.below_px - b.below_px)
        .find((n) => width < n.below_px);
      P.narrow = v ? v.below_px : 0;
      if (v) lay = merged(lay, v.layout);
      return lay;
    }

    function draw(k) {
      if (!P.run) return;
      k = Math.max(0, Math.min(P.run.frames.n - 1, k | 0));
      P.frame = k;
      time.value = String(k);
      label.textContent = P.run.frames.labels[k] || "";
      const cap = (P.run.frames.captions || [])[k] || "";
      caption.textContent = cap;
      caption.hidden = !cap;
      if (P.dragging) {  // a scrub in progress: the canvas layer draws the run
        P.shownFrame = k;
        paintDrag();
        P.draws += 1;
        return;
      }
      if (drawing) {
        pending = k;
        return;
      }
      drawing = true;
      const upd = EAE.frameUpdate(P.run, figOf(P.run), k);
      const done = function () {
        drawing = false;
        P.draws += 1;
        if (pending !== null) {
          const next = pending;
          pending = null;
          if (next !== P.shownFrame) draw(next);
        }
      };
      P.shownFrame = k;
      let r;
      try {
        r = P.run.frames.redraw
          ? Plotly.restyle(plot, restyleArgs(upd), upd.traces)
          : Plotly.animate(plot, upd, { mode: "immediate", transition: { duration: 0 },
                                        frame: { duration: 0, redraw: false } });
      } catch (e) {
        drawing = false;
        throw e;
      }
      if (r && r.then) r.then(done, done);
      else done();
    }

    function restyleArgs(upd) {
      // {attr: [value per trace]} for Plotly.restyle (nested paths flattened to "a.b")
      const out = {};
      upd.data.forEach(function (obj, i) {
        (function walk(o, pre) {
          for (const key of Object.keys(o)) {
            const v = o[key];
            const path = pre ? pre + "." + key : key;
            if (v && typeof v === "object" && !Array.isArray(v) && !ArrayBuffer.isView(v)) walk(v, path);
            else {
              if (!out[path]) out[path] = new Array(upd.data.length).fill(undefined);
              out[path][i] = v;
            }
          }
        })(obj, "");
      });
      return out;
    }

    function stop() {
      P.playing = false;
      if (timer) clearTimeout(timer);
      timer = null;
      play.textContent = "▶ Play";
      play.setAttribute("aria-label", "Play");
      root.dataset.playing = "false";
    }

    function start() {
      if (!P.run) return;
      if (P.frame >= P.run.frames.n - 1) draw(0);
      P.playing = true;
      play.textContent = "❚❚ Pause";
      play.setAttribute("aria-label", "Pause");
      root.dataset.playing = "true";
      const ms = Math.max(16, P.run.frames.ms || 75);
      let t0 = performance.now();
      const f0 = P.frame;
      const tick = function () {
        if (!P.playing) return;
        const k = f0 + Math.floor((performance.now() - t0) / ms) + 1;
        if (k >= P.run.frames.n - 1) {
          draw(P.run.frames.n - 1);
          stop();
          return;
        }
        if (k !== P.frame) draw(k);
        timer = setTimeout(tick, ms / 2);
      };
      timer = setTimeout(tick, ms);
    }

    play.addEventListener("click", function () {
      if (P.playing) stop();
      else start();
    });
    time.addEventListener("input", function () {
      stop();
      draw(+time.value);
    });
    root.tabIndex = 0;
    root.addEventListener("keydown", function (ev) {
      if (!P.run || ev.target === scrubInput) return;
      const n = P.run.frames.n;
      let k = null;
      if (ev.key === "ArrowRight") k = P.frame + 1;
      else if (ev.key === "ArrowLeft") k = P.frame - 1;
      else if (ev.key === "Home") k = 0;
      else if (ev.key === "End") k = n - 1;
      else if (ev.key === " " && ev.target !== play) {
        ev.preventDefault();
        if (P.playing) stop();
        else start();
        return;
      }
      if (k !== null && ev.target !== time) {
        ev.preventDefault();
        stop();
        draw(k);
      }
    });

    /** Show a run (a decoded scene); keep the time position as a fraction when swapping.
     * `frozen` (a scrub swap): keep the margins Plotly computed for the run on screen and
     * turn auto-margins off, so the swap is drawn once — with auto-margins on, every
     * `Plotly.react` draws, finds its margins pushed out, and draws again. */
    function show(run, key, keepTime, frozen) {
      const frac = P.run && keepTime ? P.frame / Math.max(1, P.run.frames.n - 1) : null;
      const first = !P.run;
      const fig = figOf(run);
      P.run = run;
      P.drawn = run;  // the run whose axes, labels and strip are on screen
      P.runKey = (run.meta && run.meta.key) || key;  // the figure's own key, however fetched
      root.dataset.runKey = key || "";
      time.max = String(run.frames.n - 1);
      const lay = layoutFor(run);
      const size = frozen && plot._fullLayout && plot._fullLayout._size;
      if (size) {
        lay.margin = Object.assign({}, lay.margin || {}, { l: size.l, r: size.r, t: size.t,
                                                           b: size.b, autoexpand: false });
      }
      const k = frac === null ? run.frames.start || 0 : Math.round(frac * (run.frames.n - 1));
      const upd = EAE.frameUpdate(run, fig, k);
      const data = fig.data.map(function (tr, i) {
        const j = upd.traces.indexOf(i);
        return j < 0 ? tr : merged(tr, upd.data[j]);
      });
      const config = Object.assign({ responsive: true }, opts.config || {});
      P.shownFrame = k;
      P.frame = k;
      const wasDragging = P.dragging;
      const r = first ? Plotly.newPlot(plot, data, lay, config) : Plotly.react(plot, data, lay, config);
      showFrameText(run, k);
      root.dataset.frames = String(run.frames.n);
      return Promise.resolve(r).then(function () {
        if (wasDragging) leaveDrag();
        else if (!first) P.swaps += 1;
        P.redraws += 1;
        if (editor) editor.attach(run);
        if (!size) setFrameHeight();  // a frozen swap keeps the plot's size: no layout forced
        return P;
      });
    }

    function showFrameText(run, k) {
      time.value = String(k);
      label.textContent = run.frames.labels[k] || "";
      const cap = (run.frames.captions || [])[k] || "";
      caption.textContent = cap;
      caption.hidden = !cap;
    }

    /* -------------------------------------------------------------- scrubbing */
    // While a family's slider moves, Plotly keeps one lean figure — the axes, the legend and
    // the panel titles, at ranges that hold every loaded run — and a canvas over it paints
    // each run's traces (`EAEPlayer.paint`): a swap costs one canvas paint, not a Plotly
    // redraw. Once the slider rests the run is drawn whole by Plotly (`show`).
    const layer = document.createElement("canvas");
    layer.className = "eae-layer";
    const dragTitle = el("div", "eae-drag-title", root);
    dragTitle.hidden = true;

    /** The axes' ranges of a composed figure (layout keys "xaxis2", … → [lo, hi]). */
    function ranges(fig) {
      const out = {};
      for (const key of Object.keys(fig.layout)) {
        const ax = fig.layout[key];
        if (/^[xy]axis\d*$/.test(key) && ax && ax.range) out[key] = ax.range;
      }
      return out;
    }

    /** Ranges that hold every loaded member of the family (and the run on screen). */
    function familyRanges() {
      const out = ranges(figOf(P.run));
      for (const got of P.familyRuns.values()) {
        const r = ranges(figOf(got.run));
        for (const key of Object.keys(out)) {
          if (!r[key]) continue;
          out[key] = [Math.min(out[key][0], r[key][0]), Math.max(out[key][1], r[key][1])];
        }
      }
      return out;
    }

    function plainTitle(lay) {
      const t = (lay.title && lay.title.text) || (lay.legend && lay.legend.title && lay.legend.title.text) || "";
      return String(t).replace(/<br\s*\/?>/gi, " · ").replace(/<[^>]+>/g, "");
    }

    /** Lay out the lean scrub figure (once per drag, and when a new member needs wider
     * ranges). */
    function enterDrag(room) {
      const fig = figOf(P.run);
      const lay = layoutFor(P.run);
      const size = plot._fullLayout && plot._fullLayout._size;
      if (size) {
        lay.margin = Object.assign({}, lay.margin || {}, { l: size.l, r: size.r, t: size.t,
                                                           b: size.b, autoexpand: false });
      }
      lay.shapes = [];
      lay.annotations = (lay.annotations || []).filter((a) => !String(a.name || "").startsWith("strip"));
      // the title (the painted run's, drawn over it) keeps its place: a blank of its height
      const titled = lay.legend && lay.legend.title && lay.legend.title.text;
      if (lay.title && lay.title.text) lay.title = Object.assign({}, lay.title, { text: "\u00a0" });
      if (titled) {
        lay.legend = Object.assign({}, lay.legend, {
          title: Object.assign({}, lay.legend.title, { text: "\u00a0" }) });
      }
      P.dragRanges = familyRanges();
      if (room && P.dragging) {  // a run outgrew the ranges: widen past it, so the next
        for (const key of Object.keys(P.dragRanges)) {  // few do not lay out again
          const have = room[key], r = P.dragRanges[key];
          if (!have) continue;
          const lo = Math.min(r[0], have[0]), hi = Math.max(r[1], have[1]), pad = 0.25 * (hi - lo);
          P.dragRanges[key] = [lo < have[0] ? lo - pad : lo, hi > have[1] ? hi + pad : hi];
        }
      }
      for (const key of Object.keys(P.dragRanges)) {
        lay[key] = Object.assign({}, lay[key] || {}, { range: P.dragRanges[key], autorange: false });
      }
      // the traces keep one blank point, so that the legend keeps their entries
      const data = fig.data.map((tr) => Object.assign({}, tr, { x: [null], y: [null], text: [""],
                                                                customdata: [null], hoverinfo: "skip" }));
      P.dragging = true;
      P.drawn = null;
      root.dataset.dragging = "true";
      return Plotly.react(plot, data, lay, Object.assign({ responsive: true }, opts.config || {}))
        .then(function () {
          P.redraws += 1;
          const tf = (lay.title && lay.title.font) || (lay.legend && lay.legend.font) || {};
          dragTitle.style.fontSize = (tf.size || 18) + "px";
          // where the blank title was laid out (a legend's title sits above its entries)
          const at = plot.querySelector(titled ? ".legendtitletext" : ".gtitle");
          if (at) {
            const r = at.getBoundingClientRect(), base = root.getBoundingClientRect();
            dragTitle.style.top = (r.top - base.top + r.height / 2) + "px";
            dragTitle.style.left = (r.left - base.left) + "px";
            dragTitle.style.transform = "translateY(-50%)";
          }
          dragTitle.hidden = false;
        });
    }

    /** Paint the run on screen at its frame on the canvas layer. */
    function paintDrag() {
      const container = plot.querySelector(".svg-container");
      if (!container || !plot._fullLayout) return;
      if (layer.parentNode !== container) {
        const paper = container.querySelector(".main-svg");
        container.insertBefore(layer, paper ? paper.nextSibling : null);
      }
      const ctx = EAE.canvasFor(layer, plot._fullLayout.width, plot._fullLayout.height);
      const fig = figOf(P.run);
      const all = fig.data.map((_, i) => i).filter((i) => (fig.data[i].type || "scatter") === "scatter");
      EAE.paint(ctx, P.run, fig, P.shownFrame, all, plot);
      layer.hidden = false;
      dragTitle.textContent = plainTitle(fig.layout);
    }

    function leaveDrag() {
      P.dragging = false;
      P.dragRanges = null;
      layer.hidden = true;
      dragTitle.hidden = true;
      root.dataset.dragging = "false";
    }

    /** A scrub swap to `run`: the lean figure (laid out on the first swap of a drag, or again
     * when this run needs wider ranges) and one canvas paint. */
    function swapData(run, key) {
      const frac = P.frame / Math.max(1, P.run.frames.n - 1);
      const k = Math.round(frac * (run.frames.n - 1));
      P.run = run;
      P.runKey = (run.meta && run.meta.key) || key;
      root.dataset.runKey = key || "";
      time.max = String(run.frames.n - 1);
      P.frame = k;
      P.shownFrame = k;
      showFrameText(run, k);
      const want = ranges(figOf(run));
      const wider = !P.dragRanges || Object.keys(want).some(function (key2) {
        const have = P.dragRanges[key2];
        return !have || want[key2][0] < have[0] || want[key2][1] > have[1];
      });
      const t0 = performance.now();
      return Promise.resolve(wider || !P.dragging ? enterDrag(P.dragRanges) : null).then(function () {
        paintDrag();
        P.swaps += 1;
        P.fastSwaps += 1;
        P.swapMs += performance.now() - t0;  // time spent swapping (benchmarks read it)
        return P;
      });
    }

    function fitHeight() {
      if (!P.run) return;
      const width = root.clientWidth || window.innerWidth;
      const v = (P.run.narrow || []).slice().sort((a, b) => a.below_px - b.below_px)
        .find((n) => width < n.below_px);
      if ((v ? v.below_px : 0) !== P.narrow) {  // crossed a width: lay the figure out again
        show(P.run, P.runKey, true);
        return;
      }
      const h = plotHeight();
      const tall = h != null && Math.abs((plot.layout || {}).height - h) > 1;
      if (tall || Math.abs(width - (P.tickWidth || 0)) > 1) {  // the tick labels that fit
        const upd = tall ? { height: h } : {};
        const base = baseLayout(P.run);
        const ticks = EAE.fitTicks(base, tall ? h : (plot.layout || {}).height || base.height, width);
        P.tickWidth = width;
        for (const name of Object.keys(ticks)) {
          for (const key of Object.keys(ticks[name])) upd[name + "." + key] = ticks[name][key];
        }
        if (Object.keys(upd).length && plot._fullLayout) Plotly.relayout(plot, upd);
      }
      setFrameHeight();
    }

    /* -------------------------------------------------------------- a family of runs */
    function setFamily(fam, fetchRun) {
      P.family = fam;
      if (!fam || !fam.values || fam.values.length < 2) {
        scrub.hidden = true;
        return;
      }
      scrub.hidden = false;
      const choices = fam.choices || [];
      scrubPick.hidden = choices.length < 2;
      scrubName.textContent = choices.length < 2 ? "Drag " + (fam.label || "") : "Drag";
      scrubPick.textContent = "";
      for (const c of choices) {
        const o = el("option", null, scrubPick, c[1]);
        o.value = c[0];
        if (c[0] === fam.param) o.selected = true;
      }
      scrubInput.max = String(fam.values.length - 1);
      scrubInput.value = String(fam.current);
      scrubInput.setAttribute("aria-label", "Drag to change " + (fam.label || "the setting"));
      P.familyShown = fam.current;
      P.familyWanted = fam.current;
      if (P.run) P.familyRuns.set(fam.current, { run: P.run, key: P.runKey });
      showScrubValue(fam.current, fam.current);
      // fetch the others nearest first, two at a time — once the visitor reaches for the
      // slider (the server computes the family only then: `fam.start`)
      const order = fam.values.map((_, i) => i).filter((i) => i !== fam.current)
        .sort((a, b) => Math.abs(a - fam.current) - Math.abs(b - fam.current));
      let active = 0;
      const tries = {};
      const gen = (P.familyGen = (P.familyGen || 0) + 1);
      const next = function () {
        if (gen !== P.familyGen) return;
        while (active < 2 && order.length) {
          const i = order.shift();
          if (P.familyRuns.has(i) || !fam.sources[i]) continue;
          active += 1;
          fetchRun(fam.sources[i]).then(function (run) {
            active -= 1;
            if (gen !== P.familyGen) return;
            if (run) P.familyRuns.set(i, { run: run, key: fam.sources[i] });
            updateNote();
            if (run && P.familyWanted !== P.familyShown) swapTo(P.familyWanted);
            next();
          }, function () {
            // not computed within the server's wait (busy): ask again later, a few times
            active -= 1;
            tries[i] = (tries[i] || 0) + 1;
            if (tries[i] < 4) setTimeout(function () { order.push(i); next(); }, 3000 * tries[i]);
            next();
          });
        }
        updateNote();
      };
      // a visitor who was scrubbing and picked another control wants its family now (their
      // pointer is already inside the scrub bar: no new pointerenter comes)
      const wasStarted = P.familyStarted === true;
      P.familyStarted = false;
      const begin = function () {
        if (P.familyStarted || gen !== P.familyGen) return;
        P.familyStarted = true;
        root.dataset.familyStarted = "true";
        const go = fam.start
          ? fetch(new URL(fam.start, window.location.href).href,
                  { method: "POST", credentials: "same-origin" }).catch(function () {})
          : Promise.resolve();
        go.then(next);
      };
      P.startFamily = begin;
      if (!fam.start || wasStarted) begin();
      else for (const ev of ["pointerenter", "pointerdown", "focusin", "touchstart"])
        scrub.addEventListener(ev, begin, { once: true });
      updateNote();
    }

    function nearestLoaded(i) {
      let best = -1;
      for (const j of P.familyRuns.keys()) if (best < 0 || Math.abs(j - i) < Math.abs(best - i)) best = j;
      return best;
    }

    function showScrubValue(wanted, shown) {
      const fam = P.family;
      const lab = fam.labels ? fam.labels[wanted] : fmt(fam.values[wanted]);
      scrubValue.textContent = lab;
      if (shown !== wanted && shown >= 0) {
        const sl = fam.labels ? fam.labels[shown] : fmt(fam.values[shown]);
        scrubNote.textContent = "not computed yet: showing the nearest, " + sl;
        root.dataset.scrubNearest = "true";
      } else {
        scrubNote.textContent = "";
        root.dataset.scrubNearest = "false";
      }
      updateNote();
    }

    function updateNote() {
      const fam = P.family;
      if (!fam) return;
      const n = fam.values.filter((_, i) => fam.sources[i] || i === fam.current).length;
      const have = P.familyRuns.size;
      status.textContent = !P.familyStarted ? ""
        : have < n ? "Drag to explore " + fam.label + ": " + have + " of " + n + " runs computed" : "";
      root.dataset.familyLoaded = String(have);
    }

    let swapping = false;
    let settleTimer = 0;
    /** Show the family member nearest to value index i that is loaded; while a swap is
     * being drawn only the newest wish is kept (intermediate values are skipped). A member
     * whose traces line up with the run drawn swaps its data only (`swapData`); the whole
     * run is drawn once the scrub rests. */
    function swapTo(i) {
      P.familyWanted = i;
      const j = nearestLoaded(i);
      showScrubValue(i, j);
      if (j < 0 || j === P.familyShown || swapping) return;
      P.familyShown = j;
      const got = P.familyRuns.get(j);
      swapping = true;
      const done = function () {
        swapping = false;
        if (P.familyWanted !== P.familyShown) swapTo(P.familyWanted);
        else if (!P.holding) settleSoon();  // (held: settled on release)
      };
      const same = figOf(P.run).signature === figOf(got.run).signature;
      (same ? swapData(got.run, got.key) : show(got.run, got.key, true, true)).then(done, done);
    }

    /** Show `run` quickly (a data edit's): its data swapped in and painted when its traces
     * line up with the figure on screen, else drawn; drawn whole once it rests. */
    P.quickShow = function (run, key) {  // (P.holding: a point is held, settle on release)
      // painted over the lean figure when the panels are the same (its traces are the run's
      // own; only the legend waits for the whole draw)
      if (!P.run || (figOf(P.run), P.run._panels) !== (figOf(run), run._panels)) {
        return show(run, key, true, true);
      }
      return swapData(run, key).then(function () { if (!P.holding) settleSoon(); return P; });
    };

    /** Draw the run on screen whole (its labels, rays, strip) once the scrub has rested. */
    P.settleSoon = settleSoon;
    function settleSoon() {
      if (settleTimer) clearTimeout(settleTimer);
      settleTimer = setTimeout(function () {
        settleTimer = 0;
        if (swapping || !P.run || (P.run === P.drawn && !P.dragging)) return;
        swapping = true;
        const done = function () {
          swapping = false;
          if (P.familyWanted !== P.familyShown) swapTo(P.familyWanted);
        };
        show(P.run, P.runKey, true, true).then(done, done);
      }, SETTLE_MS);
    }

    // a swap is drawn in the next animation frame, with the newest value the slider reached:
    // the input event returns at once, so the pointer's next move is not held up by a draw
    let swapFrame = 0;
    function wish(i) {
      P.familyWanted = i;
      if (swapFrame) return;
      swapFrame = requestAnimationFrame(function () {
        swapFrame = 0;
        swapTo(P.familyWanted);
      });
    }
    scrubInput.addEventListener("input", function () {
      P.inputs += 1;
      wish(+scrubInput.value);
    });

    /** The page's slider of the family's control is at value v (being dragged): show the
     * family member nearest to it, as the scrub slider would. */
    P.scrubToValue = function (v) {
      const fam = P.family;
      if (!fam || !fam.values || fam.values.length < 2) return;
      let best = 0;
      const log = v > 0 && fam.values.every((x) => x > 0);
      const dist = (x) => (log ? Math.abs(Math.log(x / v)) : Math.abs(x - v));
      fam.values.forEach(function (x, i) { if (dist(x) < dist(fam.values[best])) best = i; });
      if (P.startFamily) P.startFamily();
      scrubInput.value = String(best);
      if (best !== P.familyWanted) wish(best);
    };

    /** The page shows the family's member `current` (the control moved on the page): the
     * scrub slider, its value and the member on screen follow it. */
    P.syncFamily = function (current) {
      const fam = P.family;
      if (!fam || fam.current === current) return;
      fam.current = current;
      scrubInput.value = String(current);
      P.familyShown = current;
      P.familyWanted = current;
      if (P.run) P.familyRuns.set(current, { run: P.run, key: P.runKey });
      showScrubValue(current, current);
    };
    scrubPick.addEventListener("change", function () {
      if (opts.onEvent) opts.onEvent({ event: "family", param: scrubPick.value, nonce: Date.now() });
    });
    scrubInput.addEventListener("change", function () {
      const i = +scrubInput.value;
      if (opts.onEvent && P.family) {
        opts.onEvent({ event: "scrub", param: P.family.param, index: i,
                       value: P.family.values[i], nonce: Date.now() });
      }
    });

    /** Whether the figure is drawn at its final size (nothing queued; in a sized host the
     * plot has the height the host asks for). */
    P.settled = function () {
      if (!P.run || drawing || pending !== null || P.busy > 0 || swapFrame || swapping
          || settleTimer || P.run !== P.drawn) return false;
      const h = plotHeight();
      return h == null || Math.abs(((plot._fullLayout || {}).height || 0) - h) <= 1;
    };
    /** The title of the run on screen (while a scrub paints runs over the lean figure, the
     * painted run's: the figure's own title is blank then). */
    P.titleText = function () {
      const lay = P.run ? figOf(P.run).layout : {};
      return (lay.title && lay.title.text) || (lay.legend && lay.legend.title && lay.legend.title.text) || "";
    };
    P.show = show;
    P.draw = draw;
    P.play = start;
    P.pause = stop;
    P.setFamily = setFamily;
    P.fitHeight = fitHeight;
    P.setStatus = function (text) { status.textContent = text || ""; };
    P.setStale = function (on) { root.classList.toggle("eae-stale", !!on); };
    /** Where the data edits are posted (the server's `edit` route; none: theory only). */
    P.setEditPost = function (url) { if (editor) editor.setPost(url); };
    /** Forget the drawn run (a new Plotly.js bundle is about to replace the old one): the
     * next `show` draws afresh. */
    P.reset = function () {
      stop();
      if (window.Plotly && plot._fullLayout) Plotly.purge(plot);
      P.run = null;
      P.drawn = null;
      P.runKey = null;
      leaveDrag();
    };
    return P;
  }

  EAE.mount = mount;
})();
