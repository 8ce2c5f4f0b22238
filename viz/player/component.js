/* Streamlit glue of the figure player (ui/player.py declares the component).
 *
 * Protocol (Streamlit's component API v1, by postMessage): announce "componentReady", receive
 * "render" with args {src | payload, fig_key, plotly_src, presenter, config, family, edit,
 * stale, design_height, autoplay}, send "setFrameHeight" and "setComponentValue" (a scrub's
 * release, a data edit). `autoplay`: play the figure once when it is drawn (the page asks on
 * its first figure of a session; never twice in a frame, never when the browser asks for
 * reduced motion).
 * Plotly.js is loaded once per frame from args.plotly_src (the smallest bundle that draws the
 * figure, viz/plotlyjs.py); a figure that needs a bigger bundle loads it and is drawn afresh.
 * Payloads are fetched from the server's figure route (or come inline), decoded once and kept
 * by key.
 */
(function () {
  "use strict";
  const FIG_MIN_PX = 380;   // below this the panels are unreadable: the page scrolls instead
  const MARGIN_PX = 12;     // kept free under the figure in presenter mode
  const runs = new Map();   // key -> Promise(decoded run)
  let player = null;
  let plotlyReady = null;
  let plotlySrc = null;     // the bundle loaded (or loading) in this frame
  const BUNDLES = ["basic", "cartesian", "full"];  // each draws everything the ones before do
  let lastArgs = null;
  let lastHeight = -1;
  let autoplay = null;       // the figure key to play once drawn ("played": done)

  function send(type, data) {
    window.parent.postMessage(Object.assign({ isStreamlitMessage: true, type: type }, data), "*");
  }

  function rank(src) {
    const m = /plotly-(basic|cartesian)[.-]/.exec(src || "");
    return BUNDLES.indexOf(m ? m[1] : "full");
  }

  function loadPlotly(src) {
    if (plotlyReady && rank(src) > rank(plotlySrc)) {  // this figure needs a bigger bundle
      plotlyReady = plotlyReady.then(function () { if (player) player.reset(); });
      plotlyReady = plotlyReady.then(function () { return inject(src); });
      plotlySrc = src;
    }
    if (!plotlyReady) {
      plotlySrc = src;
      plotlyReady = inject(src);
    }
    return plotlyReady;
  }

  function inject(src) {
    return new Promise(function (resolve, reject) {
      const s = document.createElement("script");
      s.src = new URL(src, window.location.href).href;
      s.onload = resolve;
      s.onerror = function () { reject(new Error("Plotly.js did not load from " + src)); };
      document.head.appendChild(s);
    });
  }

  function fetchRun(src) {
    if (!runs.has(src)) {
      const url = new URL(src, window.location.href).href;
      runs.set(src, fetch(url, { credentials: "same-origin" }).then(function (r) {
        if (!r.ok) throw new Error("figure " + r.status);
        return r.arrayBuffer();
      }).then(EAEPlayer.decode).catch(function (e) {
        runs.delete(src);
        throw e;
      }));
    }
    return runs.get(src);
  }

  function parentViewport() {
    try {
      const fe = window.frameElement;
      const top = fe.getBoundingClientRect().top;
      let scroll = 0;
      for (let p = fe.parentElement; p; p = p.parentElement) scroll += p.scrollTop || 0;
      return { top: top + scroll, height: window.parent.innerHeight };
    } catch (e) {
      return null;
    }
  }

  function heightFor() {
    if (!lastArgs || !lastArgs.presenter) return null;
    const vp = parentViewport();
    if (!vp) return null;
    const most = (lastArgs.design_height || 900) + 90;
    return Math.max(FIG_MIN_PX, Math.min(most, vp.height - vp.top - MARGIN_PX));
  }

  function onHeight(h) {
    const want = Math.ceil(h) + 2;
    if (Math.abs(want - lastHeight) > 1) {
      lastHeight = want;
      send("streamlit:setFrameHeight", { height: want });
    }
  }

  /** Whether two renders carry the same arguments (an inline payload by identity). */
  function sameArgs(a, b) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every(function (k) {
      return k === "payload" ? a[k] === b[k] : JSON.stringify(a[k]) === JSON.stringify(b[k]);
    });
  }

  function render(args) {
    // Streamlit renders the frame again after each height it is sent: with the same arguments
    // that is nothing to do (a scrub's run on screen stays; its figure may be taller)
    if (lastArgs && player && sameArgs(args, lastArgs)) return;
    lastArgs = args;
    const root = document.getElementById("root");
    if (!player) {
      player = EAEPlayer.mount(root, {
        presenter: !!args.presenter, config: args.config || {}, heightFor: heightFor,
        onHeight: onHeight,
        onEvent: function (ev) { send("streamlit:setComponentValue", { value: ev, dataType: "json" }); },
      });
      player.fetchRun = fetchRun;  // the runs of data edits come by the figure route too
      // the window's size decides the presenter height and the narrow layouts
      window.addEventListener("resize", function () { player.fitHeight(); });
      try { window.parent.addEventListener("resize", function () { player.fitHeight(); }); } catch (e) { /* cross-origin host */ }
      if (args.presenter) setInterval(function () { player.fitHeight(); }, 400);
    }
    root.classList.toggle("eae-presenter", !!args.presenter);
    player.setStale(!!args.stale);
    player.setEditPost(args.edit || null);
    const key = args.fig_key;
    if (args.autoplay && autoplay === null && !args.stale) autoplay = key;
    // the page's last renders, newest last (tests read what the page asked to be shown)
    player.renders = (player.renders || []).concat([{ key: key, stale: !!args.stale }]).slice(-20);
    const source = args.src ? fetchRun(args.src)
      : Promise.resolve(EAEPlayer.decode(args.payload));
    player.busy = (player.busy || 0) + 1;  // until this render is drawn (tests wait on it)
    const finish = function () { player.busy -= 1; };
    loadPlotly(args.plotly_src).then(function () { return source; }).then(function (run) {
      // a data edit's run on screen stays until the page shows another figure (the page
      // re-renders its previous one meanwhile, and its stale one while it computes)
      const pageMoved = key !== player.pageKey;
      player.pageKey = key;
      const edited = player.edit && player.edit.shownKey && player.edit.shownKey === player.runKey;
      if (edited && (!pageMoved || args.stale)) return player;
      if (player.runKey !== key) return player.show(run, key, false);
      return player;
    }).then(function () {
      const fam = args.family || null;
      const famKey = fam ? JSON.stringify([fam.param, fam.sources]) : "";
      if (famKey !== player.familyKey) {
        player.familyKey = famKey;
        player.familyRuns = new Map();
        player.setFamily(fam, fetchRun);
      } else if (fam) {
        player.syncFamily(fam.current);  // the page moved the control: one value, one state
      }
      watchWidget(fam);
      if (autoplay !== null && autoplay !== "played" && player.runKey === autoplay) {
        autoplay = "played";
        const still = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
        if (!still && !player.playing) player.play();
      }
      onHeight(root.getBoundingClientRect().height);
    }).catch(function (e) {
      player.error = String(e);
      player.setStatus("The figure could not be drawn: " + e.message);
      onHeight(root.getBoundingClientRect().height);
    }).then(finish, finish);
  }

  /* The page's own slider of the family's control (the sidebar's ε) reports its value only
   * when released; while it is dragged its thumb's aria-valuetext changes, which moves the
   * player along the family (same origin: the component's frame may read its page). */
  let watched = null;
  let watcher = null;
  function watchWidget(fam) {
    let input = null;
    try {
      if (fam && fam.widget) {
        const sel = 'input[type="range"][aria-label="' + CSS.escape(fam.widget) + '"]';
        input = window.parent.document.querySelector(sel);
      }
    } catch (e) {
      input = null;  // another origin: the page's slider moves the figure on release only
    }
    if (input === watched) return;
    if (watcher) watcher.disconnect();
    watched = input;
    watcher = null;
    if (!input) return;
    watcher = new MutationObserver(function () {
      const v = parseFloat(input.getAttribute("aria-valuetext"));
      if (isFinite(v)) player.scrubToValue(v);
    });
    watcher.observe(input, { attributes: true, attributeFilter: ["aria-valuetext"] });
  }

  window.addEventListener("message", function (ev) {
    const d = ev.data;
    if (d && d.type === "streamlit:render") render(d.args || {});
  });
  send("streamlit:componentReady", { apiVersion: 1 });
})();
