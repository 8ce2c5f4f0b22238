/* Move the data in the neuron panel and watch the network answer (a figure whose scene carries
 * `meta.edit`, viz/data_edit.py: 2-D points, clusters' centres, the three-point example).
 *
 * While a point is dragged the theory the panel draws follows it at display rate, computed
 * here: G(w) = Σ_i b_i σ(⟨w, x_i⟩) with b_i = −R s_i ∂ℓ(0, y_i)/∂ŷ, its extremal directions on
 * the circle (the exact sweep of dynamics/extremal.py, `extremal2d`), the on/off edges
 * ⟨w, x_i⟩ = 0 and the predicted alignment end of dynamics/timescales.py (`alignEnd`), painted
 * on a canvas over the figure. Meanwhile the edit is posted to the server (`edit` route: the
 * run and its figure, which replaces the one on screen: painted at once, drawn whole when it
 * rests), one post at a time, the newest data next; the figure fades while it shows data
 * the point has left. Once the released data's figure is drawn the edit is reported to the
 * page (its state, the sidebar's table, the link). A click on empty space adds a point with the label of the
 * toggle; right-click on a point flips its label or removes it; Shift while dragging snaps the
 * angle to whole degrees; Undo/Redo step through the edits. `EAEPlayer.theory2d` exposes the
 * theory to tests.
 */
(function () {
  "use strict";
  const EAE = (window.EAEPlayer = window.EAEPlayer || { players: [] });
  const HIT_PX = 14;
  const STALE_MS = 400;  // no run of the moved data for this long: the figure fades
  const POS = "#0072B2", NEG = "#D55E00", MAXC = "#009E73", MINC = "#CC79A7", INK = "#1A1A1A";
  const TAU = 2 * Math.PI;

  /* ------------------------------------------------------------------ theory (2-D) */
  /** b_i = −R s_i ∂ℓ(0, y_i)/∂ŷ: square −(0 − y) = y, logistic y/2, exponential y. */
  function weights(ed, y, sw) {
    const R = ed.reduction === "mean" ? 1 / Math.max(1, y.length) : 1;
    const k = ed.loss === "logistic" ? 0.5 : 1;
    return y.map((v, i) => R * (sw[i] === undefined ? 1 : sw[i]) * k * v);
  }

  function gValue(u, X, b, gamma) {
    let g = 0;
    for (let i = 0; i < X.length; i++) {
      const z = u[0] * X[i][0] + u[1] * X[i][1];
      g += b[i] * (z > 0 ? z : gamma * z);
    }
    return g;
  }

  /** Critical points of G on the unit circle, exactly (dynamics.extremal._exact_2d): between
   * kinks G(θ) = ‖v‖cos(θ − θ_v), v the arc's Σ b_i σ'(⟨u, x_i⟩) x_i; interior maxima θ_v
   * and minima θ_v + π inside their arcs, and kinks where the one-sided slopes change sign.
   * [{u, kind ("max" | "min"), value}], largest |G| first. */
  function extremal2d(X, b, gamma) {
    const idx = [];
    for (let i = 0; i < X.length; i++) if (Math.hypot(X[i][0], X[i][1]) > 0) idx.push(i);
    if (!idx.length) return [];
    const ev = [];  // [angle, sign, point]
    for (const i of idx) {
      const phi = Math.atan2(X[i][1], X[i][0]);
      ev.push([mod(phi - Math.PI / 2), 1, i], [mod(phi + Math.PI / 2), -1, i]);
    }
    ev.sort((p, q) => p[0] - q[0]);
    let gi = 0, gap = -1;
    for (let k = 0; k < ev.length; k++) {
      const next = k + 1 < ev.length ? ev[k + 1][0] : ev[0][0] + TAU;
      if (next - ev[k][0] > gap) { gap = next - ev[k][0]; gi = k; }
    }
    const origin = ev[gi][0] + gap / 2;
    for (const e of ev) e[0] = mod(e[0] - origin) + origin;
    ev.sort((p, q) => p[0] - q[0]);
    const K = [];
    for (let k = 0; k < ev.length; k++) if (k === 0 || ev[k][0] - ev[k - 1][0] > 1e-12) K.push(ev[k][0]);
    const nk = K.length;
    let scale = 0;
    for (const i of idx) scale += Math.abs(b[i]) * Math.hypot(X[i][0], X[i][1]);
    const ftol = 1e-12 * Math.max(scale, 1e-300);
    const V = [];  // arc vectors, exact at each arc's middle (no cumulative sums: n is small)
    for (let k = 0; k < nk; k++) {
      const end = k + 1 < nk ? K[k + 1] : K[0] + TAU;
      const mid = 0.5 * (K[k] + end);
      const u = [Math.cos(mid), Math.sin(mid)];
      let vx = 0, vy = 0;
      for (const i of idx) {
        const s = (u[0] * X[i][0] + u[1] * X[i][1] > 0 ? 1 : gamma) * b[i];
        vx += s * X[i][0];
        vy += s * X[i][1];
      }
      V.push([vx, vy, end - K[k]]);
    }
    const out = [];
    for (let k = 0; k < nk; k++) {
      const [vx, vy, len] = V[k];
      const vn = Math.hypot(vx, vy);
      if (!(vn > ftol)) continue;
      const thv = Math.atan2(vy, vx);
      for (const [shift, kind, sign] of [[0, "max", 1], [Math.PI, "min", -1]]) {
        const rel = mod(thv + shift - K[k]);
        if (rel > 1e-9 && rel < len - 1e-9) {
          const th = thv + shift;
          out.push({ u: [Math.cos(th), Math.sin(th)], kind: kind, value: sign * vn });
        }
      }
    }
    for (let k = 0; k < nk; k++) {
      const left = (k + nk - 1) % nk;
      const [lx, ly] = V[left], [rx, ry] = V[k];
      if (!(Math.hypot(lx, ly) > ftol && Math.hypot(rx, ry) > ftol)) continue;
      const du = [-Math.sin(K[k]), Math.cos(K[k])];
      let dl = du[0] * lx + du[1] * ly, dr = du[0] * rx + du[1] * ry;
      if (Math.abs(dl) <= ftol) dl = 0;
      if (Math.abs(dr) <= ftol) dr = 0;
      if (dl === 0 && dr === 0) continue;
      const u = [Math.cos(K[k]), Math.sin(K[k])];
      const value = u[0] * rx + u[1] * ry;
      if (dl >= 0 && dr <= 0) out.push({ u: u, kind: "max", value: value });
      else if (dl <= 0 && dr >= 0) out.push({ u: u, kind: "min", value: value });
    }
    out.sort((p, q) => Math.abs(q.value) - Math.abs(p.value));
    return out;
  }

  function mod(a) { return ((a % TAU) + TAU) % TAU; }

  /** The predicted end of the alignment phase (dynamics.timescales): t = max(ln(w⋆ / ‖w(0)‖),
   * 1)/r, r = c·max(G_max, −G_min, max_i |G(±x_i/‖x_i‖)|)·√(η_w η_a) (`ed.rate`), w⋆ = √(ȳ/(c·m̄));
   * NaN when nothing grows. */
  function alignEnd(ed, X, y, b, ex) {
    let g = 0;
    for (const e of ex) g = Math.max(g, e.kind === "max" ? e.value : -e.value);
    for (const x of X) {
      const n = Math.hypot(x[0], x[1]);
      if (n > 0) g = Math.max(g, Math.abs(gValue([x[0] / n, x[1] / n], X, b, ed.gamma)),
                              Math.abs(gValue([-x[0] / n, -x[1] / n], X, b, ed.gamma)));
    }
    const r = ed.c * g * (ed.rate || 1);
    if (!(r > 0) || !isFinite(r)) return NaN;
    let ybar = 0;
    for (const v of y) ybar += Math.abs(v);
    ybar = ybar / Math.max(1, y.length) || 1;
    const wstar = Math.sqrt(ybar / (ed.c * ed.m_bar));
    return Math.max(Math.log(Math.max(wstar / Math.max(ed.w0, 1e-300), 1)), 1) / r;
  }

  /* The Boursier–Flammarion trap predicted from the data (dynamics/trap.py, ported). */
  function dist(a, b) { return Math.abs(mod(a - b + Math.PI) - Math.PI); }

  /** The circle cut at the kinks φ_i ± π/2: [{start, end, v, all}] (ReLU arc vectors). */
  function arcs(X, b) {
    const K0 = [];
    for (const x of X) {
      const phi = Math.atan2(x[1], x[0]);
      K0.push(+mod(phi - Math.PI / 2).toFixed(12), +mod(phi + Math.PI / 2).toFixed(12));
    }
    const K = Array.from(new Set(K0)).sort((p, q) => p - q);
    return K.map(function (a, k) {
      const e = k + 1 < K.length ? K[k + 1] : K[0] + TAU;
      const mid = 0.5 * (a + e), u = [Math.cos(mid), Math.sin(mid)];
      let vx = 0, vy = 0, all = true;
      X.forEach(function (x, i) {
        if (u[0] * x[0] + u[1] * x[1] > 0) { vx += b[i] * x[0]; vy += b[i] * x[1]; } else all = false;
      });
      return { start: a, end: e, v: [vx, vy], all: all };
    });
  }

  function journey(A, k, theta, c) {
    const n = A.length;
    let t = 0, direction = 0;
    for (let it = 0; it <= n; it++) {
      const arc = A[k];
      if (arc.all) return t;
      const vn = Math.hypot(arc.v[0], arc.v[1]);
      if (vn === 0) return Infinity;
      const thv = Math.atan2(arc.v[1], arc.v[0]);
      const rel = mod(thv - arc.start);
      if (rel > 0 && rel < arc.end - arc.start) return Infinity;
      const step = Math.sin(theta - thv) < 0 ? 1 : -1;
      if (direction && step !== direction) return Infinity;
      direction = step;
      const exit = step > 0 ? arc.end : arc.start;
      const da = dist(theta, thv), db = dist(exit, thv);
      if (da >= Math.PI - 1e-12 || db <= 1e-12) return Infinity;
      t += Math.log(Math.tan(da / 2) / Math.tan(db / 2)) / (c * vn);
      theta = exit;
      k = ((k + step) % n + n) % n;
    }
    return Infinity;
  }

  /** t_cone: the longest journey of a positive neuron into the all-active cone. */
  function coneTime(X, b, c) {
    const A = arcs(X, b), n = A.length, NEAR = 1e-2;
    if (!A.some((a) => a.all)) return Infinity;
    const norm = (a) => Math.hypot(a.v[0], a.v[1]);
    const starts = [];
    A.forEach(function (arc, k) {
      if (!(norm(arc) > 0) || arc.all) return;
      if (norm(A[(k - 1 + n) % n]) === 0) starts.push([k, arc.start]);
      if (norm(A[(k + 1) % n]) === 0) starts.push([k, arc.end]);
      const thv = Math.atan2(arc.v[1], arc.v[0]) + Math.PI;
      const rel = mod(thv - arc.start);
      if (rel > 0 && rel < arc.end - arc.start) {
        for (const s of [-NEAR, NEAR]) {
          const th = arc.start + rel + s;
          if (th > arc.start && th < arc.end) starts.push([k, th]);
        }
      }
    });
    A.forEach(function (arc, k) {
      const left = A[(k - 1 + n) % n];
      if (arc.all || left.all) return;
      const du = [-Math.sin(arc.start), Math.cos(arc.start)];
      if (du[0] * left.v[0] + du[1] * left.v[1] < 0 && 0 < du[0] * arc.v[0] + du[1] * arc.v[1]) {
        starts.push([k, arc.start + Math.min(NEAR, 0.5 * (arc.end - arc.start))],
                    [(k - 1 + n) % n, arc.start - Math.min(NEAR, 0.5 * (left.end - left.start))]);
      }
    });
    if (!starts.length) return 0;
    let worst = 0;
    for (const [k, th] of starts) worst = Math.max(worst, journey(A, k, th, c));
    return worst;
  }

  /** Weighted least squares of y on the 2-D inputs: {fitted, loss} (½ square, reduction R). */
  function ols(X, y, sw, R) {
    let a = 0, bb = 0, d = 0, p = 0, q = 0;
    X.forEach(function (x, i) {
      const s = sw[i] === undefined ? 1 : sw[i];
      a += s * x[0] * x[0]; bb += s * x[0] * x[1]; d += s * x[1] * x[1];
      p += s * x[0] * y[i]; q += s * x[1] * y[i];
    });
    const det = a * d - bb * bb;
    let beta;
    if (Math.abs(det) > 1e-14 * Math.max(a * d, 1e-300)) beta = [(d * p - bb * q) / det, (a * q - bb * p) / det];
    else {  // rank one (all points on one line through 0): the minimum-norm fit
      const tr = a + d;
      const dir = a >= d ? [a, bb] : [bb, d];
      const nn = Math.hypot(dir[0], dir[1]) || 1;
      const u = [dir[0] / nn, dir[1] / nn];
      const k = tr > 0 ? (u[0] * p + u[1] * q) / tr : 0;
      beta = [k * u[0], k * u[1]];
    }
    const fitted = X.map((x) => beta[0] * x[0] + beta[1] * x[1]);
    let loss = 0;
    fitted.forEach(function (f, i) { loss += (sw[i] === undefined ? 1 : sw[i]) * 0.5 * (f - y[i]) * (f - y[i]); });
    return { fitted: fitted, loss: R * loss };
  }

  /** The trap's verdict for data (X, y, sw) under the run's settings `ed` (`ed.trap`):
   * {verdict: "trap" | "escape" | "unsure" | null, why, tCone, tAlign}. */
  function trapVerdict(ed, X, y, sw) {
    const tp = ed.trap;
    const none = (why) => ({ verdict: null, why: why, tCone: NaN, tAlign: NaN });
    const esc = (why) => ({ verdict: "escape", why: why, tCone: NaN, tAlign: NaN });
    if (!tp || ed.loss !== "square") return none("the trap is a square-loss effect of inputs in the plane");
    if (tp.blocked) return none(tp.blocked);
    if (ed.gamma !== 0) return esc(`leaky ReLU (γ = ${ed.gamma}): every neuron keeps a slope on every point, so none is frozen out of the fit`);
    if (!tp.start_ok) return esc(`a ${tp.scheme} start: neurons with |a_j| < ‖w_j‖ keep a norm that can grow at the least-squares line`);
    const R = ed.reduction === "mean" ? 1 / Math.max(1, y.length) : 1;
    const b = y.map((v, i) => R * (sw[i] === undefined ? 1 : sw[i]) * v);
    const ex = extremal2d(X, b, 0);
    const maxima = ex.filter((e) => e.kind === "max" && e.value > 0);
    if (ex.some((e) => e.kind === "min" && e.value < 0)) return esc("G has a negative minimum: negative neurons grow too, so the network is not one unit on a line");
    if (maxima.length !== 1) return esc(`G has ${maxima.length} maxima: the positive neurons split into bundles, not one unit`);
    const u = maxima[0].u;
    if (!X.every((x) => u[0] * x[0] + u[1] * x[1] > 0)) return esc("the direction the neurons take leaves a point inactive: the bundle is not the least-squares line");
    const fit = ols(X, y, sw, R);
    if (!fit.fitted.every((f) => f > 0)) return esc("the least-squares line is below zero at a point: one ReLU unit cannot sit on it");
    if (!(fit.loss > tp.tol)) return esc(`the least-squares line fits (loss ${fit.loss.toPrecision(2)} ≤ ${tp.tol}): no level to be trapped at`);
    const r = y.map((v, i) => R * (sw[i] === undefined ? 1 : sw[i]) * (v - fit.fitted[i]));
    let scale = 0;
    X.forEach(function (x, i) { scale += Math.abs(r[i]) * Math.hypot(x[0], x[1]); });
    let low = 0;
    for (const e of extremal2d(X, r, 0)) if (e.kind === "min") low = Math.min(low, e.value);
    if (low < -1e-9 * Math.max(scale, 1e-300)) return esc("at the least-squares line a negative neuron active on part of the data can grow: it leaves the line");
    const tCone = coneTime(X, b, ed.c);
    const tAlign = alignEnd(ed, X, y, weights(ed, y, sw), extremal2d(X, weights(ed, y, sw), ed.gamma));
    const g3 = (v) => String(+v.toPrecision(3));
    const timing = `neurons reach the all-active cone by t ≈ ${g3(tCone)}, norms grow by t ≈ ${g3(tAlign)}`;
    const out = (verdict, why) => ({ verdict: verdict, why: why, tCone: tCone, tAlign: tAlign });
    if (!isFinite(tCone) || tCone >= tp.margin * tAlign) {
      return out("escape", `alignment loses the race: ${isFinite(tCone) ? timing : "some positive neurons never reach the all-active cone"}; those left outside grow at the line`);
    }
    if (tCone <= tAlign / tp.margin) return out("trap", `one unit on the least-squares line (loss ${g3(fit.loss)}) and nothing can grow there: ${timing}`);
    return out("unsure", `a close race: ${timing}; the run decides`);
  }

  EAE.theory2d = { weights: weights, extremal2d: extremal2d, alignEnd: alignEnd, gValue: gValue,
                   coneTime: coneTime, ols: ols, trapVerdict: trapVerdict };

  /* ------------------------------------------------------------------ the editor */
  /** An editor for player P: `attach(run)` after a run is shown, `setPost(url)` for the
   * server's edit route (none: the theory only, offline). */
  EAE.editor = function (P, plot, root, el, onEvent) {
    const bar = el("div", "eae-edit", root);
    bar.hidden = true;
    const hint = el("span", "eae-edit-hint", bar, "");
    const toggle = el("span", "eae-edit-label", bar);
    el("span", "eae-edit-addtext", toggle, " · a click adds a point labelled ");
    const plus = el("button", "eae-edit-plus eae-on", toggle, "+1");
    const minus = el("button", "eae-edit-minus", toggle, "−1");
    const undoB = el("button", "eae-edit-undo", bar, "↶ Undo");
    const redoB = el("button", "eae-edit-redo", bar, "↷ Redo");
    const readout = el("span", "eae-edit-readout", bar);
    const note = el("span", "eae-edit-note", bar);
    // Boursier–Flammarion's trap for these data (three-point data): predicted, and the run's
    const trapBox = el("div", "eae-edit-trap", root);
    trapBox.hidden = true;
    const trapPred = el("span", "eae-trap-pred", trapBox);
    const trapRun = el("span", "eae-trap-run", trapBox);
    trapBox.setAttribute("aria-live", "polite");
    const stRef = root.querySelector(".eae-status");
    if (stRef) { root.insertBefore(bar, stRef); root.insertBefore(trapBox, stRef); }
    /** Presenter mode (a projector, 720 px high): the bar's buttons join the ▶ Play row and
     * its sentence becomes their tooltip, so the plots keep their height. */
    function place() {
      const row = root.querySelector(".eae-controls");
      const inRow = root.classList.contains("eae-presenter") && row;
      if (inRow && bar.parentNode !== row) row.appendChild(bar);
      if (!inRow && bar.parentNode !== root) root.insertBefore(bar, trapBox);
      bar.classList.toggle("eae-edit-inline", !!inRow);
    }
    for (const b of [plus, minus, undoB, redoB]) b.type = "button";
    const menu = el("div", "eae-edit-menu", root);
    menu.hidden = true;
    const flipB = el("button", null, menu, "Flip its label");
    const removeB = el("button", null, menu, "Remove it");
    flipB.type = removeB.type = "button";
    const layer = document.createElement("canvas");
    layer.className = "eae-edit-layer";

    const E = { run: null, ed: null, post: null, data: null, drag: -1, moved: false,
                scale: 1, history: [], future: [], label: 1, posted: "", seq: 0,
                paints: 0, posts: 0, runs: 0, menuAt: -1, inFlight: false, editing: false,
                shownKey: null, shownBody: "", tell: null, lastRunAt: 0, zone: null, trap: null, crossings: 0 };
    P.edit = E;

    function clone(d) { return JSON.parse(JSON.stringify(d)); }

    /** The run's data as the editor holds it: handles, rows, labels, groups. */
    function fromRun(ed) {
      return { handles: clone(ed.handles), X: clone(ed.X), y: clone(ed.y), sw: clone(ed.sw),
               groups: clone(ed.groups), labels: clone(ed.labels), fields: clone(ed.fields) };
    }

    function attach(run) {
      const ed = run.meta && run.meta.edit;
      E.run = run;
      E.ed = ed || null;
      bar.hidden = !ed;
      if (!ed) { stopEditing(); return; }
      toggle.hidden = !ed.can.add;  // (three points' targets y cannot be invented)
      hint.textContent = ed.kind === "three_point"
        ? "Move the data: drag a point along its line (Shift: steps of 0.05)"
        : "Move the data: drag a point (Shift: whole degrees)"
          + (ed.can.flip || ed.can.remove ? " · click one to flip or remove it" : "");
      bar.title = hint.textContent + (ed.can.add ? "; a click elsewhere adds a point" : "");
      place();
      trapBox.hidden = !ed.trap;
      if (E.drag < 0 && !E.editing) {  // (while an edit is under way its data rule)
        // data the editor did not make (the page's own change): its history no longer applies
        if (E.data && JSON.stringify(E.data.fields) !== JSON.stringify(ed.fields)) {
          E.history = [];
          E.future = [];
        }
        E.data = fromRun(ed);
        E.shownBody = JSON.stringify({ fields: E.data.fields });
        showTrap(ed.trap ? { verdict: ed.trap.verdict, why: ed.trap.why } : null,
                 ed.trap ? ed.trap.run : null);
      }
      if (!E.editing) E.scale = maxNorm(E.data.X);
      updateButtons();
    }

    const VERDICT = { trap: "trapped", escape: "escapes", unsure: "too close to call" };
    /** The trap line: the prediction for the data as they are and, for the run on screen,
     * what it did (none while the data differ from the run's). */
    function showTrap(pred, ran) {
      if (!E.ed || !E.ed.trap || !pred) { trapBox.hidden = true; return; }
      trapBox.hidden = false;
      const before = trapBox.dataset.verdict;
      trapBox.dataset.verdict = pred.verdict || "";
      // (presenter mode shows the verdicts only: the reason is the box's tooltip there)
      trapPred.textContent = `Trap predicted from the data: ${VERDICT[pred.verdict] || "does not apply"}`;
      el("span", "eae-trap-why", trapPred, ` — ${pred.why}.`);
      trapBox.title = `${trapPred.textContent}`;
      trapRun.textContent = ran ? ` This run: ${ran.text}.` : "";
      if (before && before !== trapBox.dataset.verdict) {  // the move crossed the boundary
        trapBox.classList.remove("eae-trap-flip");
        void trapBox.offsetWidth;
        trapBox.classList.add("eae-trap-flip");
        E.crossings += 1;
      }
    }

    /** Where the trap holds as point i moves along its line (three-point data): verdicts
     * on a grid of x, computed once when it is taken. */
    function zoneFor(i) {
      const d = E.data, ed = E.ed;
      if (!ed.trap || ed.kind !== "three_point") return null;
      const lo = -4 * E.scale, hi = 4 * E.scale, N = 400;
      const out = [];
      for (let k = 0; k <= N; k++) {
        const x = lo + (hi - lo) * k / N;
        const X = d.X.map((row, r) => (d.groups[r] === i ? [x, row[1]] : row));
        out.push([x, trapVerdict(ed, X, d.y, d.sw).verdict]);
      }
      return { i: i, cells: out, y: d.handles[i][1] };
    }

    function setPost(url) { E.post = url || null; }

    function maxNorm(X) {
      let s = 0;
      for (const x of X) s = Math.max(s, Math.hypot(x[0], x[1]));
      return s || 1;
    }

    /** Panel coordinates of an input vector (the plane, scaled as the figure's data). */
    function toPanel(x) {
      const P2 = E.ed.plane;
      return [(P2[0][0] * x[0] + P2[0][1] * x[1]) / E.scale,
              (P2[1][0] * x[0] + P2[1][1] * x[1]) / E.scale];
    }

    function fromPanel(p) {
      const P2 = E.ed.plane;
      return [(P2[0][0] * p[0] + P2[1][0] * p[1]) * E.scale,
              (P2[0][1] * p[0] + P2[1][1] * p[1]) * E.scale];
    }

    /** The neuron panel's axes; while a point is held, as they were when it was taken (a
     * run drawn meanwhile rebuilds the layout, and the point must stay under the pointer). */
    function axes() {
      if (E.drag >= 0 && E.geom) return E.geom;
      const full = plot._fullLayout;
      return full && full.xaxis && full.yaxis && full.xaxis._length ? [full.xaxis, full.yaxis] : null;
    }

    function snapshotAxes() {
      const a = axes();
      return a ? a.map((ax) => ({ _offset: ax._offset, _length: ax._length, range: ax.range.slice() }))
        : null;
    }

    function toPx(p) {
      const [xa, ya] = axes();
      return [xa._offset + (p[0] - xa.range[0]) / (xa.range[1] - xa.range[0]) * xa._length,
              ya._offset + ya._length - (p[1] - ya.range[0]) / (ya.range[1] - ya.range[0]) * ya._length];
    }

    function fromPx(px, py) {
      const [xa, ya] = axes();
      return [xa.range[0] + (px - xa._offset) / xa._length * (xa.range[1] - xa.range[0]),
              ya.range[0] + (ya._offset + ya._length - py) / ya._length * (ya.range[1] - ya.range[0])];
    }

    function local(ev) {
      const r = plot.getBoundingClientRect();
      return [ev.clientX - r.left, ev.clientY - r.top];
    }

    function inPanel(px, py) {
      const a = axes();
      return a && px >= a[0]._offset && px <= a[0]._offset + a[0]._length
        && py >= a[1]._offset && py <= a[1]._offset + a[1]._length;
    }

    function hit(px, py) {
      if (!E.data || !axes()) return -1;
      let best = -1, bd = HIT_PX;
      E.data.handles.forEach(function (h, i) {
        const q = toPx(toPanel(h));
        const dd = Math.hypot(q[0] - px, q[1] - py);
        if (dd < bd) { bd = dd; best = i; }
      });
      return best;
    }

    /* -------------------------------------------------------------- edits of the data */
    /** Move handle i to input vector x (its kind's constraints), its rows with it. */
    /** Move handle i toward input vector x within its kind's constraints (snap: whole
     * degrees, or x to 0.05 on the three points' line), its rows with it. */
    function moveTo(i, x, snap) {
      const d = E.data, f = d.fields, kind = E.ed.kind;
      const tiny = 1e-3 * E.scale;
      const p6 = (v) => +(+v).toPrecision(6);
      const polar = function (lo, hi, fixedR) {  // an angle in [lo, hi] degrees and a radius
        let ang = Math.atan2(x[1], x[0]) * 180 / Math.PI;
        if (snap) ang = Math.round(ang);
        ang = +Math.min(hi, Math.max(lo, ang)).toFixed(4);
        const r = fixedR !== undefined ? fixedR : p6(Math.max(Math.hypot(x[0], x[1]), tiny));
        const a = ang * Math.PI / 180;
        return [ang, r, [r * Math.cos(a), r * Math.sin(a)]];
      };
      let nx;
      if (kind === "three_point") {  // on the line bias = 1
        const v = snap ? Math.round(x[0] * 20) / 20 : x[0];
        f.x[i] = p6(v);
        nx = [f.x[i], d.handles[i][1]];
      } else if (kind === "two_signals" && i === 0) {  // x₊ stays on its axis
        f.norm_plus = p6(Math.max(x[0], tiny));
        nx = [f.norm_plus, 0];
      } else if (kind === "two_signals") {  // x₋ at 0° < δ < 180° from it
        const [ang, r, q] = polar(0.1, 179.9);
        f.angle_deg = ang;
        f.norm_minus = r;
        nx = q;
      } else if (kind === "vectors") {
        const [, , q] = polar(-180, 180);
        nx = snap ? q : [p6(x[0]), p6(x[1])];
        f.points[i] = [p6(nx[0]), p6(nx[1])];
        nx = f.points[i].slice();
      } else if (kind === "clusters") {
        const [ang, , q] = polar(-180, 180, f.radius);
        f.angles_deg[i] = ang;
        nx = q;
      } else {
        const [ang, r, q] = polar(-180, 180);
        f.angles_deg[i] = ang;
        f.radii[i] = r;
        nx = q;
      }
      const dx = nx[0] - d.handles[i][0], dy = nx[1] - d.handles[i][1];
      d.handles[i] = nx;
      d.groups.forEach(function (g, row) {
        if (g === i) d.X[row] = [d.X[row][0] + dx, d.X[row][1] + dy];
      });
    }

    function flip(i) {
      const d = E.data;
      d.labels[i] = -d.labels[i];
      d.fields.labels[i] = d.labels[i];
      d.groups.forEach(function (g, row) { if (g === i) d.y[row] = d.labels[i]; });
    }

    function remove(i) {
      const d = E.data;
      if (d.handles.length <= E.ed.limits.min_points) return false;
      d.handles.splice(i, 1);
      d.labels.splice(i, 1);
      for (const key of Object.keys(d.fields)) if (Array.isArray(d.fields[key])) d.fields[key].splice(i, 1);
      const keep = [];
      d.groups.forEach(function (g, row) { if (g !== i) keep.push(row); });
      d.X = keep.map((r) => d.X[r]);
      d.y = keep.map((r) => d.y[r]);
      d.sw = keep.map((r) => d.sw[r]);
      d.groups = keep.map((r) => (d.groups[r] > i ? d.groups[r] - 1 : d.groups[r]));
      return true;
    }

    function add(x) {
      const d = E.data, kind = E.ed.kind;
      if (!E.ed.can.add || d.handles.length >= E.ed.limits.max_points) return false;
      const ang = +(Math.atan2(x[1], x[0]) * 180 / Math.PI).toFixed(4);
      const lab = E.label;
      if (kind !== "vectors") d.fields.angles_deg.push(ang);
      d.fields.labels.push(lab);
      d.labels.push(lab);
      const i = d.handles.length;
      if (kind === "vectors") {
        const p = [+x[0].toPrecision(6), +x[1].toPrecision(6)];
        d.fields.points.push(p);
        d.handles.push(p.slice());
        d.X.push(p.slice());
        d.y.push(lab);
        d.sw.push(1);
        d.groups.push(i);
      } else if (kind === "clusters") {  // a new cluster: its samples as a copy of the first's noise
        const R = d.fields.radius, a = ang * Math.PI / 180;
        const c = [R * Math.cos(a), R * Math.sin(a)];
        const first = d.handles[0];
        d.groups.forEach(function (g, row) {
          if (g === 0) {
            d.X.push([d.X[row][0] - first[0] + c[0], d.X[row][1] - first[1] + c[1]]);
            d.y.push(lab);
            d.sw.push(1);
          }
        });
        const n0 = d.groups.filter((g) => g === 0).length;
        for (let k = 0; k < n0; k++) d.groups.push(i);
        d.handles.push(c);
      } else {
        const r = +Math.max(Math.hypot(x[0], x[1]), 1e-3 * E.scale).toPrecision(6);
        d.fields.radii.push(r);
        const a = ang * Math.PI / 180;
        const p = [r * Math.cos(a), r * Math.sin(a)];
        d.handles.push(p);
        d.X.push(p);
        d.y.push(lab);
        d.sw.push(1);
        d.groups.push(i);
      }
      return true;
    }

    function remember() {
      E.history.push(clone(E.data));
      if (E.history.length > 100) E.history.shift();
      E.future = [];
      updateButtons();
    }

    function updateButtons() {
      undoB.disabled = !E.history.length;
      redoB.disabled = !E.future.length;
    }

    /** The edit is done: the server runs it, and the page hears of it. */
    function commit() {
      E.tell = clone(E.data.fields);
      if (!E.post) { tellPage(); return; }
      post();
      if (E.shownBody === JSON.stringify({ fields: E.data.fields })) tellPage();
    }

    /** The page hears of the edit (its state, table and link) once the edit's figure is
     * drawn: its rerun would otherwise share the server with the run the visitor waits for. */
    function tellPage() {
      const fields = E.tell;
      E.tell = null;
      if (fields && onEvent) onEvent({ event: "data", fields: fields, nonce: Date.now() });
    }

    /** Ask the server for the run of the data as they are (the newest edit wins). */
    function post() {
      if (!E.post || !E.data) return;
      const body = JSON.stringify({ fields: E.data.fields });
      if (body === E.posted) return;
      E.inFlight = true;
      E.posted = body;
      const seq = ++E.seq;
      E.posts += 1;
      const t0 = performance.now();
      note.textContent = "computing…";
      fetch(new URL(E.post, window.location.href).href, {
        method: "POST", credentials: "same-origin", body: body,
        headers: { "Content-Type": "application/json" } })
        .then(function (r) {
          const key = r.headers.get("X-EAE-Key");
          if (key) return r.arrayBuffer().then((buf) => ({ key: key, run: EAE.decode(buf) }));
          return r.json();
        })
        .then(function (got) {
          if (seq !== E.seq) return;
          if (got.error) {
            note.textContent = got.cancelled ? "" : got.error;
            if (!got.cancelled && E.drag < 0) tellPage();  // the page runs it, or says why not
            return;
          }
          note.textContent = "";
          const t1 = performance.now();
          const src = E.post.replace(/\/edit\/[^/]*$/, "/fig/" + got.key);
          return Promise.resolve(got.run || P.fetchRun(src)).then(function (run) {
            if (seq !== E.seq) return;
            const t2 = performance.now();
            return P.quickShow(run, got.key).then(function () {
              attach(run);  // its description (the trap's verdict of this run); data kept
              // where the time from a post to its figure went (benchmarks read it), ms
              E.timing = { run: t1 - t0, fetch: t2 - t1, draw: performance.now() - t2 };
              E.shownBody = body;
              E.shownKey = P.runKey;
              E.runs += 1;
              E.lastRunAt = performance.now();
              if (body !== JSON.stringify({ fields: E.data.fields })) { post(); return; }  // moved on
              root.classList.remove("eae-edit-old");  // the figure shows these data now
              if (E.drag < 0) {
                stopEditing();
                tellPage();
                if (E.ed && E.ed.trap) showTrap(E.ed.trap, E.ed.trap.run);  // this run's
              } else paint();
            });
          });
        })
        .catch(function (e) {
          if (seq !== E.seq) return;
          note.textContent = "could not run it here: " + e.message;
          if (E.drag < 0) tellPage();
        })
        .then(function () { if (seq === E.seq) E.inFlight = false; });
    }

    /* -------------------------------------------------------------- painting */
    /** The overlay on, over a faded figure (it shows the data before the edit). */
    function startEditing() {
      E.editing = true;
      root.classList.add("eae-editing");
      const container = plot.querySelector(".svg-container");
      if (container && layer.parentNode !== container) container.appendChild(layer);
      layer.hidden = false;
    }

    function stopEditing() {
      E.editing = false;
      root.classList.remove("eae-editing", "eae-edit-old");
      layer.hidden = true;
      readout.textContent = "";
    }

    function paint() {
      if (!E.editing || !axes()) return;
      const full = plot._fullLayout;
      const w = full.width, h = full.height;
      const ctx = EAE.canvasFor(layer, w, h);
      const d = E.data, ed = E.ed;
      const b = weights(ed, d.y, d.sw);
      const ex = extremal2d(d.X, b, ed.gamma);
      const [xa, ya] = axes();
      ctx.save();
      ctx.beginPath();
      ctx.rect(xa._offset, ya._offset, xa._length, ya._length);
      ctx.clip();
      const O = toPx([0, 0]);
      // the on/off edges ⟨w, x_i⟩ = 0
      ctx.strokeStyle = "#8A8A8A";
      ctx.setLineDash([2, 3]);
      ctx.lineWidth = 1.3;
      for (const x of d.X.length > 40 ? [] : d.X) {
        const n = Math.hypot(x[0], x[1]);
        if (!(n > 0)) continue;
        const p = toPanel([-x[1] / n * E.scale * 3, x[0] / n * E.scale * 3]);
        const A = toPx(p), B = toPx([-p[0], -p[1]]);
        ctx.beginPath(); ctx.moveTo(A[0], A[1]); ctx.lineTo(B[0], B[1]); ctx.stroke();
      }
      ctx.setLineDash([]);
      // the data (arrows; dots beyond 40 points)
      const arrows = d.X.length <= 40;
      d.X.forEach(function (x, row) {
        const yv = d.y[row];
        ctx.strokeStyle = ctx.fillStyle = yv > 0 ? POS : yv < 0 ? NEG : INK;
        const q = toPx(toPanel(x));
        if (arrows) {
          ctx.lineWidth = 2.2;
          ctx.beginPath(); ctx.moveTo(O[0], O[1]); ctx.lineTo(q[0], q[1]); ctx.stroke();
          const a = Math.atan2(q[1] - O[1], q[0] - O[0]);
          ctx.beginPath();
          ctx.moveTo(q[0] + 8 * Math.cos(a), q[1] + 8 * Math.sin(a));
          ctx.lineTo(q[0] + 8 * Math.cos(a + 2.5), q[1] + 8 * Math.sin(a + 2.5));
          ctx.lineTo(q[0] + 8 * Math.cos(a - 2.5), q[1] + 8 * Math.sin(a - 2.5));
          ctx.fill();
        } else {
          ctx.beginPath(); ctx.arc(q[0], q[1], 2.5, 0, TAU); ctx.fill();
        }
      });
      // the extremal directions: where the neurons go
      const best = { max: ex.find((e) => e.kind === "max"), min: ex.find((e) => e.kind === "min") };
      ctx.font = "13px " + ((full.font && full.font.family) || "sans-serif");
      for (const kind of ["max", "min"]) {
        const e = best[kind];
        if (!e) continue;
        const dir = toPanel([e.u[0] * E.scale, e.u[1] * E.scale]);
        const n = Math.hypot(dir[0], dir[1]) || 1;
        const tip = toPx([1.1 * dir[0] / n, 1.1 * dir[1] / n]);
        ctx.strokeStyle = ctx.fillStyle = kind === "max" ? MAXC : MINC;
        ctx.lineWidth = 4;
        ctx.setLineDash(kind === "max" ? [] : [10, 6]);
        ctx.beginPath(); ctx.moveTo(O[0], O[1]); ctx.lineTo(tip[0], tip[1]); ctx.stroke();
        ctx.setLineDash([]);
        const text = kind === "max" ? "where positive neurons go" : "where negative neurons go";
        const wText = ctx.measureText(text).width;
        let tx = tip[0] >= O[0] ? tip[0] + 6 : tip[0] - 6 - wText;
        tx = Math.max(xa._offset + 2, Math.min(tx, xa._offset + xa._length - wText - 2));  // inside
        const ty = Math.max(ya._offset + 12, Math.min(tip[1] + (tip[1] < O[1] ? -6 : 14),
                                                      ya._offset + ya._length - 4));
        ctx.textAlign = "left";
        ctx.fillText(text, tx, ty);
      }
      // where the trap holds along the moved point's line (three-point data)
      if (E.zone && E.drag === E.zone.i) {
        const ZC = { trap: "rgba(213,94,0,0.55)", escape: "rgba(0,158,115,0.55)", unsure: "rgba(120,120,120,0.45)" };
        ctx.lineWidth = 9;
        ctx.lineCap = "butt";
        const cells = E.zone.cells;
        for (let k = 0; k + 1 < cells.length; k++) {
          const v = cells[k][1];
          if (!ZC[v]) continue;
          const A = toPx(toPanel([cells[k][0], E.zone.y])), B = toPx(toPanel([cells[k + 1][0], E.zone.y]));
          ctx.strokeStyle = ZC[v];
          ctx.beginPath(); ctx.moveTo(A[0], A[1]); ctx.lineTo(B[0], B[1]); ctx.stroke();
        }
        ctx.font = "12px " + ((full.font && full.font.family) || "sans-serif");
        ctx.textAlign = "left";
        let k0 = -1;
        for (let k = 0; k < cells.length; k++) {
          const inTrap = cells[k][1] === "trap";
          if (inTrap && k0 < 0) k0 = k;
          if ((!inTrap || k === cells.length - 1) && k0 >= 0) {
            const A = toPx(toPanel([cells[k0][0], E.zone.y]));
            ctx.fillStyle = "#8a3b00";
            ctx.fillText("trap zone", A[0] + 2, A[1] - 9);
            k0 = -1;
          }
        }
      }
      // the point being moved
      if (E.drag >= 0) {
        const q = toPx(toPanel(d.handles[E.drag]));
        ctx.strokeStyle = INK;
        ctx.lineWidth = 1.5;
        ctx.beginPath(); ctx.arc(q[0], q[1], 11, 0, TAU); ctx.stroke();
      }
      ctx.restore();
      // the predicted end of the alignment phase, on the time panels
      const t = alignEnd(ed, d.X, d.y, b, ex);
      E.alignEnd = t;
      E.extremal = ex;
      if (isFinite(t)) {
        const v = t / ed.time.div;
        ctx.strokeStyle = INK;
        ctx.fillStyle = INK;
        ctx.setLineDash([5, 4]);
        ctx.lineWidth = 1.5;
        let labelled = false;
        for (const key of Object.keys(full)) {
          const ax = full[key];
          if (!/^xaxis\d+$/.test(key) || !ax || !ax._length || ax.type !== (ed.time.log ? "log" : "linear")) continue;
          const yax = full["yaxis" + key.slice(5)];
          if (!yax) continue;
          const pos = ed.time.log ? Math.log10(v) : v;
          if (!(pos >= ax.range[0] && pos <= ax.range[1])) continue;
          const px = ax._offset + (pos - ax.range[0]) / (ax.range[1] - ax.range[0]) * ax._length;
          ctx.beginPath(); ctx.moveTo(px, yax._offset); ctx.lineTo(px, yax._offset + yax._length); ctx.stroke();
          if (!labelled) {
            const text = `predicted: alignment ends, t ≈ ${fmt(t)}`;
            const wText = ctx.measureText(text).width;
            const room = ax._offset + ax._length - px - 4;
            ctx.textAlign = "left";
            ctx.fillText(text, room >= wText ? px + 4 : px - 4 - wText, yax._offset + 14);
            labelled = true;
          }
        }
        ctx.setLineDash([]);
      }
      // the figure fades while a point is held (its runs come a little behind the pointer:
      // the overlay is the theory of the data now) and while it shows data the point has
      // left (no run for a while)
      const behind = JSON.stringify({ fields: d.fields }) !== E.shownBody;
      root.classList.toggle("eae-edit-old", (E.drag >= 0 && E.moved)
                            || (behind && performance.now() - E.lastRunAt > STALE_MS));
      if (ed.trap) {
        const pred = trapVerdict(ed, d.X, d.y, d.sw);
        E.trap = pred;
        // the verdict on the panel itself (the line under the figure says why)
        const word = { trap: "trapped", escape: "escapes", unsure: "too close to call" }[pred.verdict];
        if (word) {
          const text = "Trap predicted: " + word;
          ctx.font = "bold 14px " + ((full.font && full.font.family) || "sans-serif");
          const tw = ctx.measureText(text).width;
          const bx = xa._offset + 6, by = ya._offset + 6;
          ctx.fillStyle = pred.verdict === "trap" ? "#D55E00" : pred.verdict === "escape" ? "#007A5A" : "#666";
          ctx.fillRect(bx, by, tw + 14, 24);
          ctx.fillStyle = "#fff";
          ctx.textAlign = "left";
          ctx.fillText(text, bx + 7, by + 17);
        }
        // what the run did, once the figure shows these data (E.ed: the shown run's)
        showTrap(pred, JSON.stringify({ fields: d.fields }) === E.shownBody ? ed.trap.run : null);
      }
      E.paints += 1;
      E.paintedBody = JSON.stringify({ fields: d.fields });  // what the overlay shows (tests)
    }

    function fmt(v) { return Math.abs(v) >= 1e4 || Math.abs(v) < 1e-2 ? v.toExponential(1) : String(+v.toPrecision(3)); }

    function describe(i) {
      const d = E.data;
      if (i < 0) return "";
      const lab = d.labels[i];
      const labText = E.ed.kind === "three_point" ? `y = ${fmt(lab)}` : `label ${lab > 0 ? "+1" : "−1"}`;
      if (E.ed.kind === "three_point") return `point ${i + 1} · x = ${fmt(d.fields.x[i])} · ${labText}`;
      // every other kind: the handle's angle and radius in input space
      const h = d.handles[i];
      const a = Math.atan2(h[1], h[0]) * 180 / Math.PI, r = Math.hypot(h[0], h[1]);
      const name = { clusters: "cluster", two_signals: i === 0 ? "x₊" : "x₋" }[E.ed.kind];
      return `${name || "point " + (i + 1)} · ${a.toFixed(1)}° · r = ${fmt(r)} · ${labText}`;
    }

    let frame = 0;
    function paintSoon() {
      if (frame) return;
      frame = requestAnimationFrame(function () { frame = 0; paint(); });
    }

    /* -------------------------------------------------------------- pointer */
    let downAt = null;
    plot.addEventListener("pointerdown", function (ev) {
      if (!E.ed || ev.button !== 0 || !axes()) return;
      menu.hidden = true;
      const [px, py] = local(ev);
      if (!inPanel(px, py)) return;
      const i = hit(px, py);
      downAt = [px, py, i];
      if (i < 0) return;  // empty space: a click adds a point (on pointerup)
      ev.stopPropagation();
      ev.preventDefault();
      remember();
      E.geom = snapshotAxes();
      E.drag = i;
      P.holding = true;
      E.moved = false;
      E.scale = maxNorm(E.data.X);
      startEditing();
      E.zone = zoneFor(i);
      readout.textContent = describe(i);
      paintSoon();
      try { plot.setPointerCapture(ev.pointerId); } catch (e) { /* a synthetic pointer */ }
    }, true);
    // Plotly starts its zoom box on mousedown: not when a point is being taken
    plot.addEventListener("mousedown", function (ev) {
      if (E.drag >= 0) { ev.stopPropagation(); ev.preventDefault(); }
    }, true);
    plot.addEventListener("pointermove", function (ev) {
      if (!E.ed || !axes()) return;
      const [px, py] = local(ev);
      if (E.drag < 0) {
        root.classList.toggle("eae-grab", inPanel(px, py) && hit(px, py) >= 0);
        return;
      }
      ev.stopPropagation();
      E.moved = true;
      moveTo(E.drag, fromPanel(fromPx(px, py)), ev.shiftKey);
      readout.textContent = describe(E.drag);
      paintSoon();
      if (!E.inFlight) post();  // runs follow the point, one at a time (the newest data next)
    }, true);
    function release(ev) {
      if (E.drag < 0) {
        if (downAt && downAt[2] < 0 && ev && ev.type === "pointerup") {
          const [px, py] = local(ev);
          if (Math.hypot(px - downAt[0], py - downAt[1]) < 4 && inPanel(px, py) && !ev.altKey) {
            remember();
            if (add(fromPanel(fromPx(px, py)))) { startEditing(); paint(); commit(); }
            else E.history.pop();
          }
        }
        downAt = null;
        return;
      }
      const i = E.drag;
      E.drag = -1;
      P.holding = false;
      // runs were painted while it was held: the released data's run is drawn whole when it
      // comes (`post`), or now if it is the one on screen
      if (P.dragging && E.shownBody === JSON.stringify({ fields: E.data.fields })) P.settleSoon();
      downAt = null;
      if (!E.moved) {  // a click on a point: its menu (flip, remove), as a right-click gives
        E.history.pop();
        updateButtons();
        readout.textContent = describe(i);
        stopEditing();
        if (ev) openMenu(i, ev);
        return;
      }
      paint();
      commit();
      if (E.shownBody === JSON.stringify({ fields: E.data.fields })) {  // its run is on screen
        stopEditing();
        if (E.ed && E.ed.trap) showTrap(E.ed.trap, E.ed.trap.run);
      }
    }
    // on the window: Plotly covers the page while its zoom box is drawn (a click on empty
    // space starts one), and the release lands on that cover
    window.addEventListener("pointerup", release, true);
    window.addEventListener("pointercancel", release, true);
    plot.addEventListener("contextmenu", function (ev) {
      if (!E.ed || !axes()) return;
      const [px, py] = local(ev);
      const i = inPanel(px, py) ? hit(px, py) : -1;
      if (i < 0) return;
      ev.preventDefault();
      openMenu(i, ev);
    });
    function openMenu(i, ev) {
      if (!E.ed.can.flip && !E.ed.can.remove) return;  // (x₊ and x₋ only move)
      E.menuAt = i;
      const r = root.getBoundingClientRect();
      menu.style.left = `${ev.clientX - r.left + 6}px`;
      menu.style.top = `${ev.clientY - r.top + 6}px`;
      flipB.hidden = !E.ed.can.flip;
      removeB.hidden = !E.ed.can.remove;
      removeB.disabled = E.data.handles.length <= E.ed.limits.min_points;
      menu.hidden = false;
    }
    flipB.addEventListener("click", function () {
      menu.hidden = true;
      remember();
      flip(E.menuAt);
      startEditing(); paint(); commit();
    });
    removeB.addEventListener("click", function () {
      menu.hidden = true;
      remember();
      if (remove(E.menuAt)) { startEditing(); paint(); commit(); } else E.history.pop();
    });
    plus.addEventListener("click", function () { E.label = 1; plus.classList.add("eae-on"); minus.classList.remove("eae-on"); });
    minus.addEventListener("click", function () { E.label = -1; minus.classList.add("eae-on"); plus.classList.remove("eae-on"); });
    function step(from, to) {
      if (!from.length) return;
      to.push(clone(E.data));
      E.data = from.pop();
      updateButtons();
      startEditing(); paint(); commit();
    }
    undoB.addEventListener("click", function () { step(E.history, E.future); });
    redoB.addEventListener("click", function () { step(E.future, E.history); });

    /** Where input vector x is drawn, in pixels of the plot (tests and benchmarks). */
    E.pxOf = function (x) { return axes() ? toPx(toPanel(x)) : null; };
    E.paintNow = function () { paint(); };  // (benchmarks time one paint)
    return { attach: attach, setPost: setPost, paint: paint };
  };
})();
