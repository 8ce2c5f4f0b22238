/* The Early Alignment Explorer's figure composer: a scene (viz/scene.py, sent as the payload of
 * viz/payload.py) becomes Plotly traces and a layout, and each frame the updates of the few
 * traces that move.
 *
 * The server describes, the browser composes. A scene holds panels (axis names, domains,
 * axis settings), items in drawing order and named typed arrays: a `trace` item is one trace
 * (its long arrays as {"$a": name} references), optionally with tracks (attributes that change
 * per frame); a `neurons` item is the neuron panel's two moving traces, composed per frame from
 * the run's in-plane directions, norms and signs (radius, position and marker size as
 * viz.scene.neuron_points computes them: the reference this is tested against); a `norms`
 * item is the per-neuron norm curves. `EAEPlayer.decode` reads a payload, `EAEPlayer.compose`
 * lays it out, `EAEPlayer.frameUpdate` gives frame k's updates.
 */
(function () {
  "use strict";
  const NP = { f4: Float32Array, f8: Float64Array, u1: Uint8Array, i1: Int8Array,
               i2: Int16Array, u2: Uint16Array, i4: Int32Array, u4: Uint32Array };
  const U_SCALE = 32767;
  const R_MIN = 0.08;
  const EAE = (window.EAEPlayer = window.EAEPlayer || { players: [] });
  // Plotly's "plotly_white" template of the pinned plotly (its layout keys the figures use;
  // tests/test_viz.py checks them against plotly.io.templates["plotly_white"]).
  // BEGIN WHITE
  const WHITE = {"layout": {"autotypenumbers": "strict", "colorway": ["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880", "#FF97FF", "#FECB52"], "font": {"color": "#2a3f5f"}, "hovermode": "closest", "hoverlabel": {"align": "left"}, "paper_bgcolor": "white", "plot_bgcolor": "white", "xaxis": {"gridcolor": "#EBF0F8", "linecolor": "#EBF0F8", "ticks": "", "title": {"standoff": 15}, "zerolinecolor": "#EBF0F8", "automargin": true, "zerolinewidth": 2}, "yaxis": {"gridcolor": "#EBF0F8", "linecolor": "#EBF0F8", "ticks": "", "title": {"standoff": 15}, "zerolinecolor": "#EBF0F8", "automargin": true, "zerolinewidth": 2}, "shapedefaults": {"line": {"color": "#2a3f5f"}}, "annotationdefaults": {"arrowcolor": "#2a3f5f", "arrowhead": 0, "arrowwidth": 1}, "coloraxis": {"colorbar": {"outlinewidth": 0, "ticks": ""}}, "title": {"x": 0.05}}, "data": {"bar": [{"marker": {"line": {"color": "white", "width": 0.5}}, "type": "bar"}], "heatmap": [{"colorbar": {"outlinewidth": 0, "ticks": ""}, "type": "heatmap"}]}};
  // END WHITE

  /* ------------------------------------------------------------------ payload */
  function toArrayBuffer(data) {
    if (data instanceof ArrayBuffer) return data;
    // a view into a larger buffer (Streamlit's bytes args): copy so typed views are aligned
    return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  }

  /** A payload's scene: its header (JSON) and its arrays as typed views on the buffer. */
  function decode(data) {
    const buf = toArrayBuffer(data);
    const u8 = new Uint8Array(buf);
    const magic = String.fromCharCode(u8[0], u8[1], u8[2], u8[3]);
    if (magic !== "EAEP") throw new Error("not a figure payload");
    const dv = new DataView(buf);
    const version = dv.getUint32(4, true);
    if (version !== 3) throw new Error("payload version " + version);
    const n = dv.getUint32(8, true);
    const scene = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 12, n)));
    let start = 12 + n;
    start += (8 - (start % 8)) % 8;
    const arrays = {};
    for (const name of Object.keys(scene.arrays)) {
      const r = scene.arrays[name];
      arrays[name] = { data: new NP[r.dtype](buf, start + r.offset, r.count), shape: r.shape };
    }
    scene.arrays = arrays;
    scene.meta = scene.meta || {};
    scene.narrow = scene.narrow || [];
    return scene;
  }

  /** `v` with every {"$a": name} replaced by the array (rows of subarrays for 2-D ones). */
  function resolve(v, arrays) {
    if (Array.isArray(v)) return v.map((x) => resolve(x, arrays));
    if (v && typeof v === "object") {
      if (v.$a !== undefined && Object.keys(v).length === 1) return rowsOf(arrays[v.$a]);
      const out = {};
      for (const k of Object.keys(v)) out[k] = resolve(v[k], arrays);
      return out;
    }
    return v;
  }

  function rowsOf(a) {
    if (a.shape.length < 2) return a.data;
    const w = a.shape.slice(1).reduce((x, y) => x * y, 1);
    const rows = [];
    for (let i = 0; i < a.data.length; i += w) rows.push(a.data.subarray(i, i + w));
    return rows;
  }

  /** Frame k of an array whose first axis is the frame: a typed array, or rows of one. */
  function frameOf(a, k) {
    const w = a.shape.slice(1).reduce((x, y) => x * y, 1);
    const v = a.data.subarray(k * w, (k + 1) * w);
    if (a.shape.length < 3) return v;
    const inner = a.shape[a.shape.length - 1];
    const rows = [];
    for (let i = 0; i < v.length; i += inner) rows.push(v.subarray(i, i + inner));
    return rows;
  }

  /* ------------------------------------------------------------------ items */
  /** The neurons of a `neurons` item at frame k: {x, y, size, cd (neuron, ‖w‖), pos} per
   * neuron, as viz.scene.neuron_points. */
  function neuronsAt(item, arrays, k) {
    const u = arrays[item.u.$a].data;
    const norms = arrays[item.norms.$a];
    const ncol = norms.shape[1];
    const row = arrays[item.rows.$a].data[k];
    const cols = arrays[item.cols.$a].data;
    const sign = arrays[item.sign.$a];
    const fixed = sign.shape[0] === 1;
    const index = arrays[item.index.$a].data;
    const m = cols.length;
    const n = new Float64Array(m);
    let top = 0;
    for (let j = 0; j < m; j++) {
      const v = norms.data[row * ncol + cols[j]];
      n[j] = isFinite(v) ? v : 0;
      if (n[j] > top) top = n[j];
    }
    const rad = item.radius;
    const span = Math.max(rad.hi - rad.lo, 1e-12);
    const lo = item.size[0], hi = item.size[1];
    const out = { x: new Float32Array(m), y: new Float32Array(m), size: new Uint8Array(m),
                  cd: new Array(m), pos: new Uint8Array(m) };
    for (let j = 0; j < m; j++) {
      const good = isFinite(norms.data[row * ncol + cols[j]]);
      const ux = good ? u[(k * m + j) * 2] / U_SCALE : 0;
      const uy = good ? u[(k * m + j) * 2 + 1] / U_SCALE : 0;
      let r;
      if (rad.mode === "log") {
        r = n[j] > 0 ? R_MIN + (1 - R_MIN) * (Math.log10(n[j]) - rad.lo) / span : NaN;
        r = isNaN(r) ? 0 : Math.min(1, Math.max(0, r));
      } else {
        r = top > 0 ? n[j] / top : 0;
      }
      const rel = top > 0 ? n[j] / top : 0;
      out.x[j] = ux * r;
      out.y[j] = uy * r;
      out.size[j] = Math.round(lo + (hi - lo) * Math.sqrt(rel));
      out.cd[j] = [index[j], n[j]];
      out.pos[j] = (fixed ? sign.data[j] : sign.data[k * m + j]) >= 0 ? 1 : 0;
    }
    return out;
  }

  function neuronsUpdate(item, arrays, k) {
    const at = neuronsAt(item, arrays, k);
    const m = at.x.length;
    const parts = [];
    for (const want of [1, 0]) {
      let c = 0;
      for (let j = 0; j < m; j++) if (at.pos[j] === want) c++;
      const x = new Float32Array(c), y = new Float32Array(c), s = new Uint8Array(c);
      const cd = new Array(c);
      let i = 0;
      for (let j = 0; j < m; j++) {
        if (at.pos[j] !== want) continue;
        x[i] = at.x[j]; y[i] = at.y[j]; s[i] = at.size[j]; cd[i] = at.cd[j];
        i++;
      }
      parts.push({ x: x, y: y, customdata: cd, marker: { size: s } });
    }
    return parts;
  }

  /** The two traces of a `norms` item: one gapped line per neuron, split by final sign. */
  function normsTraces(item, arrays) {
    const t = arrays[item.t.$a].data;
    const rows = arrays[item.rows.$a].data;
    const norms = arrays[item.norms.$a];
    const ncol = norms.shape[1];
    const cols = arrays[item.cols.$a].data;
    const sign = arrays[item.sign.$a].data;
    const out = [];
    for (const want of [true, false]) {
      const js = [];
      for (let i = 0; i < cols.length; i++) if ((sign[i] >= 0) === want) js.push(i);
      const len = js.length * (rows.length + 1);
      const x = new Float32Array(len).fill(NaN), y = new Float32Array(len).fill(NaN);
      let p = 0;
      for (const i of js) {
        for (let r = 0; r < rows.length; r++, p++) {
          const v = norms.data[rows[r] * ncol + cols[i]];
          x[p] = t[r];
          y[p] = v > 0 ? v : NaN;
        }
        p++;  // the gap between two neurons
      }
      out.push({ x: x, y: y });
    }
    return out;
  }

  /* ------------------------------------------------------------------ the figure */
  /** The Plotly traces and layout of a decoded scene, and what moves per frame. */
  function compose(scene) {
    const arrays = scene.arrays;
    const data = [], movers = [], swap = [];
    for (const item of scene.items) {
      const first = data.length;
      if (item.kind === "trace") {
        data.push(resolve(item.trace, arrays));
        if (item.tracks) movers.push({ kind: "tracks", traces: [first], tracks: item.tracks });
      } else if (item.kind === "neurons") {
        for (const t of item.traces) data.push(resolve(t, arrays));
        movers.push({ kind: "neurons", traces: [first, first + 1], item: item });
      } else if (item.kind === "norms") {
        const curves = normsTraces(item, arrays);
        item.traces.forEach((t, i) => data.push(Object.assign(resolve(t, arrays), curves[i])));
      } else {
        throw new Error("unknown scene item " + item.kind);
      }
      if (item.swap) for (let i = first; i < data.length; i++) swap.push(i);
    }
    const layout = resolve(scene.layout, arrays);
    layout.template = WHITE;
    for (const p of scene.panels) {
      layout["xaxis" + p.x.slice(1)] = Object.assign({}, p.xaxis, { domain: p.dx, anchor: p.y });
      layout["yaxis" + p.y.slice(1)] = Object.assign({}, p.yaxis, { domain: p.dy, anchor: p.x });
    }
    // runs whose traces line up one to one (a family along one control) swap fast
    const signature = JSON.stringify(data.map((t) => [t.type || "scatter", t.name || "", t.mode || ""]))
      + "|" + scene.panels.length;
    return { data: data, layout: layout, movers: movers, swap: swap, signature: signature };
  }

  /** Frame k's trace updates: {traces: [index], data: [update]} (only what moves). */
  function frameUpdate(scene, fig, k) {
    const traces = [], upd = [];
    for (const mv of fig.movers) {
      if (mv.kind === "neurons") {
        const parts = neuronsUpdate(mv.item, scene.arrays, k);
        traces.push(mv.traces[0], mv.traces[1]);
        upd.push(parts[0], parts[1]);
        continue;
      }
      const obj = {};
      for (const tr of mv.tracks) {
        const path = tr.attr.split(".");
        let cur = obj;
        for (let i = 0; i < path.length - 1; i++) cur = cur[path[i]] || (cur[path[i]] = {});
        cur[path[path.length - 1]] = tr.texts ? tr.texts[k] : frameOf(scene.arrays[tr.values.$a], k);
      }
      traces.push(mv.traces[0]);
      upd.push(obj);
    }
    return { traces: traces, data: upd };
  }

  /* ------------------------------------------------------------------ the canvas layer */
  /** Pixel mapping of a drawn axis (Plotly's full layout): value → px from the plot's edge. */
  function axisMap(ax, letter) {
    const r0 = ax.range[0], r1 = ax.range[1];
    const log = ax.type === "log";
    const off = ax._offset, len = ax._length;
    const k = len / (r1 - r0);
    if (letter === "x") return (v) => off + ((log ? Math.log10(v) : v) - r0) * k;
    return (v) => off + len - ((log ? Math.log10(v) : v) - r0) * k;
  }

  function dashOf(dash, w) {
    if (dash === "dash") return [3 * w, 3 * w];
    if (dash === "dot") return [w, 2 * w];
    return [];
  }

  function strokeLine(ctx, tr, X, Y) {
    const xs = tr.x, ys = tr.y;
    const line = tr.line || {};
    const w = line.width === undefined ? 2 : line.width;
    if (!xs || !ys || w <= 0) return;
    ctx.save();
    ctx.globalAlpha = tr.opacity === undefined ? 1 : tr.opacity;
    ctx.strokeStyle = line.color || "#444";
    ctx.lineWidth = w;
    ctx.lineJoin = "round";
    ctx.setLineDash(dashOf(line.dash, w));
    const hv = line.shape === "hv";
    ctx.beginPath();
    let open = false, lastY = 0;
    for (let i = 0; i < xs.length; i++) {
      const xv = xs[i], yv = ys[i];
      if (xv === null || yv === null || !isFinite(xv) || !isFinite(yv)) { open = false; continue; }
      const px = X(xv), py = Y(yv);
      if (!isFinite(px) || !isFinite(py)) { open = false; continue; }
      if (!open) { ctx.moveTo(px, py); open = true; }
      else { if (hv) ctx.lineTo(px, lastY); ctx.lineTo(px, py); }
      lastY = py;
    }
    ctx.stroke();
    ctx.restore();
  }

  function fillMarkers(ctx, tr, X, Y) {
    const m = tr.marker || {};
    const xs = tr.x, ys = tr.y, sizes = m.size === undefined ? 6 : m.size;
    ctx.save();
    ctx.globalAlpha = (m.opacity === undefined ? 1 : m.opacity) * (tr.opacity === undefined ? 1 : tr.opacity);
    const rim = (m.line && m.line.width) || 0;
    ctx.strokeStyle = (m.line && m.line.color) || "white";
    ctx.lineWidth = rim;
    const colours = Array.isArray(m.color) || ArrayBuffer.isView(m.color) ? null : m.color;
    ctx.fillStyle = colours || "#444";
    for (let i = 0; i < xs.length; i++) {
      const px = X(xs[i]), py = Y(ys[i]);
      if (!isFinite(px) || !isFinite(py)) continue;
      const r = (typeof sizes === "number" ? sizes : sizes[i]) / 2;
      ctx.beginPath();
      if (m.symbol === "square") ctx.rect(px - r, py - r, 2 * r, 2 * r);
      else if (m.symbol === "diamond") {
        ctx.moveTo(px, py - 1.3 * r); ctx.lineTo(px + 1.3 * r, py);
        ctx.lineTo(px, py + 1.3 * r); ctx.lineTo(px - 1.3 * r, py); ctx.closePath();
      } else if (m.symbol === "arrow") {
        // Plotly's "arrow": a head pointing along `angle` (degrees clockwise from up)
        const a = ((Array.isArray(m.angle) ? m.angle[i] : m.angle) || 0) * Math.PI / 180;
        const pt = (dx, dy) => [px + dx * Math.cos(a) - dy * Math.sin(a), py + dx * Math.sin(a) + dy * Math.cos(a)];
        const tip = pt(0, -r), left = pt(-0.75 * r, 0.9 * r), right = pt(0.75 * r, 0.9 * r);
        ctx.moveTo(tip[0], tip[1]); ctx.lineTo(left[0], left[1]); ctx.lineTo(right[0], right[1]);
        ctx.closePath();
      } else ctx.arc(px, py, r, 0, 2 * Math.PI);
      ctx.fill();
      if (rim > 0) ctx.stroke();
    }
    ctx.restore();
  }

  function fillText(ctx, tr, X, Y, font) {
    const texts = Array.isArray(tr.text) ? tr.text : [tr.text];
    const tf = tr.textfont || {};
    ctx.save();
    ctx.textAlign = "center";
    const below = (tr.textposition || "").startsWith("bottom");
    for (let i = 0; i < texts.length; i++) {
      if (!texts[i]) continue;
      const size = Array.isArray(tf.size) ? tf.size[i] : tf.size || 14;
      ctx.fillStyle = (Array.isArray(tf.color) ? tf.color[i] : tf.color) || "#1A1A1A";
      ctx.font = size + "px " + (font || "sans-serif");
      const lines = String(texts[i]).split(/<br\s*\/?>/i).map((t) => t.replace(/<[^>]+>/g, ""));
      const lh = size * 1.25;
      const px = X(tr.x[i]);
      let py = Y(tr.y[i]) + (below ? 3 + lh / 2 : -lh * (lines.length - 1) / 2);
      ctx.textBaseline = "middle";
      for (const line of lines) {
        ctx.fillText(line, px, py);
        py += lh;
      }
    }
    ctx.restore();
  }

  /** Paint the traces `idx` of a composed figure at frame k (their frame updates applied)
   * on `ctx`, in the axes Plotly has drawn in `gd` (lines, markers and text of scatter
   * traces: the run's data while a control is scrubbed; the rest of the figure is Plotly's).
   * Each trace is clipped to its panel. */
  function paint(ctx, scene, fig, k, idx, gd) {
    const full = gd._fullLayout;
    const upd = frameUpdate(scene, fig, k);
    const font = (full.font && full.font.family) || "sans-serif";
    for (const i of idx) {
      let tr = fig.data[i];
      const j = upd.traces.indexOf(i);
      if (j >= 0) tr = Object.assign({}, tr, upd.data[j],
                                     upd.data[j].marker ? { marker: Object.assign({}, tr.marker, upd.data[j].marker) } : {});
      if (gd.data[i] && gd.data[i].visible === "legendonly") continue;
      const xa = full["xaxis" + (tr.xaxis || "x").slice(1)];
      const ya = full["yaxis" + (tr.yaxis || "y").slice(1)];
      if (!xa || !ya || !xa._length || !ya._length) continue;
      const X = axisMap(xa, "x"), Y = axisMap(ya, "y");
      ctx.save();
      if (tr.cliponaxis !== false) {
        ctx.beginPath();
        ctx.rect(xa._offset, ya._offset, xa._length, ya._length);
        ctx.clip();
      }
      const mode = tr.mode || "lines";
      if (mode.includes("lines")) strokeLine(ctx, tr, X, Y);
      if (mode.includes("markers")) fillMarkers(ctx, tr, X, Y);
      if (mode.includes("text")) fillText(ctx, tr, X, Y, font);
      ctx.restore();
    }
  }

  /* ------------------------------------------------------------------ tick labels that fit */
  const TICK_GAP_EM = { log: 1.6, linear: 1.35 };  // labels' centres this many font sizes apart
  const NICE = [1, 2, 2.5, 5, 10];

  /** 10^e as Plotly's "power" format writes it (1, 10, 10⁻⁴ with a true minus). */
  function powerText(e) {
    if (e === 0) return "1";
    if (e === 1) return "10";
    return "10<sup>" + (e < 0 ? "\u2212" + (-e) : String(e)) + "</sup>";
  }

  function niceStep(raw) {
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const f of NICE) if (f * p >= raw * (1 - 1e-9)) return f * p;
    return 10 * p;
  }

  /** The y axes' tick labels for a layout drawn `height` px tall (the page sizes a presenter
   * figure to the window): on every y axis with a numeric range whose labels the figure does
   * not name itself (no ticktext, not a square panel), labels at least TICK_GAP_EM font sizes
   * apart — whole decades on a log axis, a nice multiple of its step on a linear one — and
   * none sticking out of its panel into the room of the panel next to it (half the gap
   * between them each). Returns the axes' updates, {"yaxis2": {tickmode, tickvals}, ...}. */
  function fitTicks(lay, height, width) {
    const m = lay.margin || {};
    const plotH = (height || lay.height || 450) - (m.t || 0) - (m.b || 0);
    if (!(plotH > 0)) return {};
    const font0 = (lay.font && lay.font.size) || 12;
    const names = Object.keys(lay).filter((k) => /^yaxis\d*$/.test(k) && lay[k] && lay[k].domain);
    const colOf = (ax) => {
      const xa = lay["xaxis" + String(ax.anchor || "x").slice(1)];
      return (xa && xa.domain) || [0, 1];
    };
    const out = {};
    for (const name of names) {
      const ax = lay[name];
      const r = ax.range;
      if (!r || r.length !== 2 || !isFinite(r[0]) || !isFinite(r[1]) || r[1] <= r[0]) continue;
      if (ax.showticklabels === false || ax.scaleanchor || ax.ticktext || ax.visible === false) continue;
      if (ax.type && ax.type !== "log" && ax.type !== "linear" && ax.type !== "-") continue;
      const font = (ax.tickfont && ax.tickfont.size) || font0;
      const len = (ax.domain[1] - ax.domain[0]) * plotH;
      if (!(len > 0)) continue;
      const log = ax.type === "log";
      const half = (log ? 0.68 : 0.55) * font;  // a label's half height (a power's exponent)
      // room beyond each end of the panel: half the gap to a panel above / below in its column
      const col = colOf(ax);
      let above = Infinity, below = Infinity;
      for (const other of names) {
        if (other === name) continue;
        const o = lay[other], oc = colOf(o);
        if (Math.min(col[1], oc[1]) - Math.max(col[0], oc[0]) <= 0) continue;
        if (o.domain[0] >= ax.domain[1] - 1e-9) above = Math.min(above, (o.domain[0] - ax.domain[1]) * plotH / 2);
        else if (o.domain[1] <= ax.domain[0] + 1e-9) below = Math.min(below, (ax.domain[0] - o.domain[1]) * plotH / 2);
      }
      const perUnit = len / (r[1] - r[0]);
      const minStep = TICK_GAP_EM[log ? "log" : "linear"] * font / perUnit;  // axis units
      let step;
      if (log) step = Math.max(typeof ax.dtick === "number" ? ax.dtick : 1, Math.ceil(minStep - 1e-9));
      else {
        const base = typeof ax.dtick === "number" ? ax.dtick : niceStep((r[1] - r[0]) / 6);
        step = base;
        for (const f of [1, 2, 4, 5, 10, 20, 50, 100]) { step = base * f; if (step >= minStep) break; }
      }
      // nothing beyond a panel's end without a panel there (the strip, a panel's title or
      // the x axis' labels take that room), nor into a gap holding the panel's title
      const titled = (lay.annotations || []).some((a) => a.yref === "paper" && a.xref === "paper"
        && Math.abs(a.y - ax.domain[1]) < 1e-6 && a.x >= col[0] - 1e-6 && a.x <= col[1] + 1e-6);
      const fits = (v) => {
        const p = (v - r[0]) * perUnit;  // px from the panel's bottom
        const up = isFinite(above) && !titled ? Math.max(0, above - 1) : 0;
        const down = isFinite(below) ? Math.max(0, below - 1) : half;
        return p + half <= len + up + 1e-6 && p - half >= -down - 1e-6;
      };
      const at = (k0) => {
        const vals = [];
        for (let v = k0; v <= r[1] + 1e-9 * step; v += step) if (fits(v)) vals.push(v);
        return vals;
      };
      let vals = at(Math.ceil(r[0] / step - 1e-9) * step);  // multiples of the step
      if (log) {  // whole decades: the offset that keeps the most labels (round ones on a tie)
        for (let off = 1; off < step; off++) {
          const alt = at(Math.ceil((r[0] - off) / step - 1e-9) * step + off);
          if (alt.length > vals.length) vals = alt;
        }
      }
      if (log) {  // Plotly writes listed values on a log axis as 1×10⁻⁴: powers of ten here
        const k = vals.map((v) => Math.round(v));
        out[name] = { tickmode: "array", tickvals: k.map((e) => Math.pow(10, e)),
                      ticktext: k.map(powerText) };
      } else {
        out[name] = { tickmode: "array",
                      tickvals: vals.map((v) => +(Math.round(v / step) * step).toPrecision(12)) };
      }
    }
    Object.assign(out, fitTimeTicks(lay, width, font0));
    return out;
  }

  /** A log x axis' labels (whole decades, its step) on a figure `width` px wide: none
   * reaching left of its panel where the panel's y axis has labels (the corner they share)
   * or beyond the figure's right edge, and none touching the next. */
  function fitTimeTicks(lay, width, font0) {
    const m = lay.margin || {};
    const plotW = (width || lay.width || 0) - (m.l || 0) - (m.r || 0);
    const out = {};
    if (!(plotW > 0)) return out;
    for (const name of Object.keys(lay).filter((k) => /^xaxis\d*$/.test(k))) {
      const ax = lay[name];
      const r = ax && ax.range;
      if (!ax || !ax.domain || ax.type !== "log" || typeof ax.dtick !== "number") continue;
      if (ax.showticklabels === false || ax.ticktext || ax.visible === false) continue;
      if (!r || r.length !== 2 || !isFinite(r[0]) || !isFinite(r[1]) || r[1] <= r[0]) continue;
      const font = (ax.tickfont && ax.tickfont.size) || font0;
      const len = (ax.domain[1] - ax.domain[0]) * plotW;
      const perUnit = len / (r[1] - r[0]);
      const ya = lay["yaxis" + String(ax.anchor || "y").slice(1)] || {};
      const corner = ya.showticklabels !== false && !ya.scaleanchor;
      const right = (1 - ax.domain[1]) * plotW + (m.r || 0);  // room right of the axis
      const wide = (e) => font * (e === 0 ? 0.7 : e === 1 ? 1.3 : 1.3 + 0.5 * String(e).length);
      let step = Math.max(1, ax.dtick);
      let ks = [];
      for (; step <= Math.max(1, Math.ceil(r[1] - r[0])); step++) {
        ks = [];
        for (let k = Math.ceil(r[0] / step - 1e-9) * step; k <= r[1] + 1e-9; k += step) {
          const p = (k - r[0]) * perUnit, w = wide(k) / 2;
          if (corner && p - w < 0) continue;
          if (p + w > len + right) continue;
          ks.push(k);
        }
        let clear = true;
        for (let i = 1; i < ks.length; i++) {
          if ((ks[i] - ks[i - 1]) * perUnit < wide(ks[i]) / 2 + wide(ks[i - 1]) / 2 + 0.4 * font) clear = false;
        }
        if (clear) break;
      }
      out[name] = { tickmode: "array", tickvals: ks.map((e) => Math.pow(10, e)),
                    ticktext: ks.map(powerText) };
    }
    return out;
  }

  /** The 2D context of canvas `layer` drawn over a figure `w` × `h` CSS px: its backing store
   * sized to the device's pixels (resized only when that changes), scaled so that one unit is
   * one CSS px, and cleared. */
  function canvasFor(layer, w, h) {
    const dpr = window.devicePixelRatio || 1;
    if (layer.width !== Math.round(w * dpr) || layer.height !== Math.round(h * dpr)) {
      layer.width = Math.round(w * dpr);
      layer.height = Math.round(h * dpr);
      layer.style.width = w + "px";
      layer.style.height = h + "px";
    }
    const ctx = layer.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    return ctx;
  }

  EAE.canvasFor = canvasFor;
  EAE.fitTicks = fitTicks;
  EAE.decode = decode;
  EAE.compose = compose;
  EAE.paint = paint;
  EAE.frameUpdate = frameUpdate;
  EAE.neuronsAt = neuronsAt;
})();
