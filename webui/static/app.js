// Shared by every screen: the connection to the server (server-sent events, polling when they fail), the status
// bar, and the drawing of bases and findings over the frame (frame pixels) and on the top-down map (mm).
"use strict";

const TR = (() => {
  const SVG_NS = "http://www.w3.org/2000/svg";
  // The same colours as the judge report (webui/report.py), in the order players appear in the units.
  const PLAYER_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"];
  const NO_PLAYER = "#9e9e9e";
  // A player named after a colour is drawn in it (also in webui/report.py).
  const COLOUR_WORDS = { red: "#d62728", blue: "#1f77b4", green: "#2ca02c", purple: "#9467bd", orange: "#ff7f0e", yellow: "#e6c229", black: "#333333", white: "#f5f5f5" };
  const MM_PER_INCH = 25.4;
  // Grid lines of the map every 6 inches.
  const GRID_MM = 6 * MM_PER_INCH;
  // The map's unit names are at least this tall on screen (px); ids are 0.8 of it.
  const MIN_TEXT_PX = 12;
  // The Review screen shows a recorded game: the live table's hold banner has no place on it.
  const RECORDED = document.body.dataset.screen === "review.page";
  // Event-stream errors in a row before falling back to polling.
  const MAX_STREAM_ERRORS = 3;
  const KIND_TITLES = {
    unseen: "Not seen",
    engaged: "Engaged",
    cohesion: "Out of cohesion",
    overlap: "Overlapping bases",
    multi_contact: "Touching two enemy units",
    off_table: "Off the table",
    in_terrain: "In solid terrain",
    illegal_move: "Illegal move",
  };
  const LINE_TITLES = { engagement: "engagement range", base_contact: "base contact", cohesion: "cohesion range" };

  const listeners = { status: [], result: [] };
  const pollMs = Number(document.querySelector('meta[name="tableref-poll-ms"]').content) || 500;
  let token = readToken();
  let status = null;
  let result = null;

  // Counters a test or a benchmark can read.
  window.tableref = { updates: 0, frames: 0, results: 0, link: "" };

  function readToken() {
    const embedded = document.querySelector('meta[name="tableref-token"]').content;
    if (embedded) return embedded;
    const m = /[#&?]token=([^&]+)/.exec(location.hash + location.search);
    if (m) {
      sessionStorage.setItem("tableref-token", decodeURIComponent(m[1]));
      history.replaceState(null, "", location.pathname);
    }
    return sessionStorage.getItem("tableref-token") || "";
  }

  // ---------------------------------------------------------------------------------------------------------
  // Requests

  async function api(method, path, body, raw) {
    const headers = { "X-Tableref-Token": token };
    let payload;
    if (raw !== undefined) {
      payload = raw;
      headers["Content-Type"] = "application/octet-stream";
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers["Content-Type"] = "application/json";
    }
    const res = await fetch(path, { method, headers, body: payload, cache: "no-store" });
    const type = res.headers.get("Content-Type") || "";
    const data = type.includes("json") ? await res.json() : await res.text();
    if (!res.ok) throw new Error((data && data.error) || `${res.status} ${res.statusText}`);
    return data;
  }

  // ---------------------------------------------------------------------------------------------------------
  // Updates

  function onStatus(fn) { listeners.status.push(fn); if (status) fn(status); }
  function onResult(fn) { listeners.result.push(fn); if (result) fn(result); }

  function handleStatus(st) {
    status = st;
    window.tableref.updates += 1;
    renderStatusBar();
    for (const fn of listeners.status) fn(st);
  }

  function handleResult(r) {
    result = r;
    window.tableref.results += 1;
    renderStatusBar();
    for (const fn of listeners.result) fn(r);
  }

  function setLink(text) {
    window.tableref.link = text;
    document.getElementById("st-link").textContent = text;
  }

  function connect() {
    if (!window.EventSource) { poll(); return; }
    const es = new EventSource("/api/events");
    let errors = 0;
    es.addEventListener("status", (e) => { errors = 0; setLink("live updates"); handleStatus(JSON.parse(e.data)); });
    es.addEventListener("result", (e) => handleResult(JSON.parse(e.data)));
    es.onerror = () => {
      errors += 1;
      setLink("reconnecting…");
      if (es.readyState === EventSource.CLOSED || errors >= MAX_STREAM_ERRORS) { es.close(); poll(); }
    };
  }

  function poll() {
    setLink("polling");
    const tick = async () => {
      try {
        const st = await api("GET", "/api/status");
        handleStatus(st);
        if (st.result_seq && (!result || result.seq !== st.result_seq)) handleResult(await api("GET", "/api/result"));
      } catch (err) {
        setLink("no answer from the server");
      }
      setTimeout(tick, pollMs);
    };
    tick();
  }

  // ---------------------------------------------------------------------------------------------------------
  // Status bar

  function clock(t) { return t ? new Date(t * 1000).toLocaleTimeString() : "–"; }

  function pill(id, text, cls) {
    const e = document.getElementById(id);
    e.textContent = text;
    e.className = "pill " + cls;
  }

  function renderStatusBar() {
    if (!status) return;
    pill("st-camera", `camera: ${status.camera}`, status.camera);
    // whether the live table moves says nothing of the recorded game on screen
    document.getElementById("st-settled").hidden = RECORDED;
    if (status.frozen) pill("st-settled", `frozen at ${clock(status.frozen_at)}`, "frozen");
    else if (status.settled) pill("st-settled", "table settled", "settled");
    else pill("st-settled", "table moving", "moving");
    document.getElementById("st-fps").textContent = `${status.fps.toFixed(1)} fps`;
    document.getElementById("st-update").textContent = `last update ${clock(status.last_update)}`;
    document.getElementById("st-profile").textContent = `profile: ${status.profile}`;
    document.getElementById("st-message").textContent = status.message || "";
    if (result) {
      const c = result.calibration || {};
      const used = (c.markers_used || []).length;
      const expected = (c.markers_expected || []).length;
      let text = expected
        ? `calibration: ${used}/${expected} markers, reprojection ${Number(c.reprojection_error_mm).toFixed(2)} mm`
        : "calibration: none needed (table state)";
      if (c.lens_estimated) text += ", lens estimated";
      else if (expected && !c.lens_corrected) text += ", lens uncorrected";
      // a frame built on the one before: say how much of it was looked at again
      const share = result.remeasured_share;
      if (typeof share === "number" && share < 1) {
        text += `; ${Math.round(share * 100)} % of the table measured again, the rest kept`;
      }
      document.getElementById("st-calibration").textContent = text;
      document.getElementById("st-roster").hidden = !(result.roster_match && result.roster_match.mismatch);
      const doubted = (result.doubted || []).length;
      const pillDoubted = document.getElementById("st-doubted");
      pillDoubted.hidden = doubted === 0;
      pillDoubted.textContent = `${doubted} place${doubted === 1 ? "" : "s"} may hold a base not accepted: look again (dashed ?)`;
    }
    const hold = document.getElementById("hold");
    if (RECORDED) {
      // a recorded game: what the camera does now is not what the screen shows
      hold.hidden = true;
    } else if (status.frozen) {
      hold.hidden = false;
      hold.textContent = `Frozen at ${clock(status.frozen_at)}: measurements hold`;
    } else if (!status.settled && result) {
      hold.hidden = false;
      hold.textContent = `Table moving: showing the last settled result (${clock(result.analyzed_at)})`;
    } else {
      hold.hidden = true;
    }
  }

  // ---------------------------------------------------------------------------------------------------------
  // The frame: a new picture for every new frame, one download at a time.

  function bindFrame(img, overlay, note) {
    let shown = 0;
    let wanted = 0;
    let loading = false;
    const load = () => {
      if (loading || wanted === shown) return;
      loading = true;
      const seq = wanted;
      img.onload = () => { loading = false; shown = seq; window.tableref.frames += 1; load(); };
      img.onerror = () => { loading = false; shown = seq; };
      img.src = `/api/frame.jpg?f=${seq}`;
    };
    const stale = () => {
      if (!status) return;
      const other = !result || (status.frame_scene && result.frame.scene !== status.frame_scene);
      // while the table moves, the marks are those of the last settled state, not of the picture under them
      const moving = Boolean(result) && !other && status.settled === false;
      overlay.classList.toggle("stale", Boolean(result) && (other || moving));
      note.hidden = !(other || moving);
      if (moving) note.textContent = "The table is moving: the marks are those of the last settled state";
      else note.textContent = result ? "A new view: waiting for the table to settle to measure it" : "Waiting for the table to settle…";
    };
    onStatus((st) => {
      if (st.frame_seq) { wanted = st.frame_seq; load(); }
      stale();
    });
    onResult(stale);
  }

  // ---------------------------------------------------------------------------------------------------------
  // Drawing

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVG_NS, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }

  function clear(svg) { while (svg.firstChild) svg.removeChild(svg.firstChild); }

  function models(r) {
    const out = new Map();
    for (const m of r.models) out.set(m.id, m);
    for (const m of r.unseen || []) out.set(m.id, m);
    return out;
  }

  function playerColour(players, player) {
    if (!player) return NO_PLAYER;
    const named = COLOUR_WORDS[player.trim().toLowerCase()];
    return named || PLAYER_COLOURS[players.indexOf(player) % PLAYER_COLOURS.length];
  }

  function colourOf(r) {
    const players = r.players || [];
    const unitColour = new Map();
    for (const u of r.units) unitColour.set(u.id, playerColour(players, u.player));
    return (m) => (m.unit && unitColour.has(m.unit) ? unitColour.get(m.unit) : NO_PLAYER);
  }

  function unitName(r, id) {
    const u = r.units.find((x) => x.id === id);
    return u && u.name ? u.name : id;
  }

  function semiAxes(base) {
    if (base.diameter_mm !== undefined) return [base.diameter_mm / 2, base.diameter_mm / 2, 0];
    return [base.width_mm / 2, base.depth_mm / 2, base.rotation_deg || 0];
  }

  // Marks of the findings, given where each model is and how big it is in the drawing's units. The engagement
  // links are drawn last, over the rings and crosses of a melee, which would hide them. Returns the question marks
  // of the close calls, as labels for drawLabels (placed apart from the ids and names, not over them).
  function drawMarks(g, r, pos, radius, font) {
    const qmarks = [];
    const order = r.findings.map((f, i) => i);
    order.sort((a, b) => (r.findings[a].kind === "engaged") - (r.findings[b].kind === "engaged") || a - b);
    order.forEach((i) => {
      const f = r.findings[i];
      if (f.kind === "unseen") return; // its models are drawn as ghosts
      const call = f.call || "clear";
      const cls = (base) => `${base} ${call}`;
      const mark = (e) => { e.dataset.finding = String(i); return e; };
      const qmark = (x, y) => {
        if (call === "close") qmarks.push({ text: "?", x, y, font: font * 1.3, cls: "qmark" });
      };
      const ms = f.models.filter((id) => pos(id));
      if (f.kind === "engaged" && ms.length === 2) {
        const [a, b] = ms.map(pos);
        mark(el("line", { x1: a[0], y1: a[1], x2: b[0], y2: b[1], class: cls("link") }, g));
        qmark((a[0] + b[0]) / 2, (a[1] + b[1]) / 2 - font * 0.4);
      } else if (f.kind === "overlap" && ms.length === 2) {
        const [a, b] = ms.map(pos);
        const cx = (a[0] + b[0]) / 2;
        const cy = (a[1] + b[1]) / 2;
        const s = Math.min(radius(ms[0]), radius(ms[1])) * 0.6;
        mark(el("path", { d: `M${cx - s} ${cy - s} L${cx + s} ${cy + s} M${cx + s} ${cy - s} L${cx - s} ${cy + s}`, class: cls("cross") }, g));
        qmark(cx, cy - s - font * 0.2);
      } else {
        const kind = f.kind === "cohesion" ? "cohesion" : "placement";
        for (const id of ms) {
          const [x, y] = pos(id);
          const rr = radius(id) * 1.35;
          mark(el("circle", { cx: x, cy: y, r: rr, class: cls(`ring ${kind}`) }, g));
          qmark(x + rr, y - rr);
        }
      }
    });
    return qmarks;
  }

  // Unit names above their units, and (``ids``) each model's id on its base, placed so that none overlaps another
  // (webui/static/labels.js), after the labels ``opts.first`` (a proposal's step numbers, which keep their places
  // first) and before ``opts.last`` (the question marks of close calls, which give way to the names and ids).
  // ``top(m)``: the top point of a model's base; ``bases``: where the bases are.
  function drawLabels(g, r, geometry, opts) {
    const { top, pos, radius, bases, bounds, font } = geometry;
    const best = new Map();
    for (const m of r.models) {
      if (!m.unit) continue;
      const p = top(m);
      if (p && (!best.has(m.unit) || p[1] < best.get(m.unit)[1])) best.set(m.unit, p);
    }
    const items = [...(opts.first || [])];
    for (const [unit, p] of [...best].sort((a, b) => a[1][1] - b[1][1])) {
      items.push({ text: unitName(r, unit), x: p[0], y: p[1], font, cls: "label", above: true, clearOfBases: true });
    }
    if (opts.ids) {
      for (const m of r.models) {
        const p = pos(m.id);
        if (p) items.push({ text: m.id, x: p[0], y: p[1], font: font * 0.8, cls: "mid", near: radius(m.id), own: m.id });
      }
    }
    TRLabels.place(g, [...items, ...(opts.last || [])], { bounds, bases });
  }

  // A title on a base: its id and unit, shown on hover.
  function baseTitle(e, r, m) {
    const t = document.createElementNS(SVG_NS, "title");
    t.textContent = m.unit ? `${m.id} · ${unitName(r, m.unit)}` : `${m.id} · no unit`;
    e.appendChild(t);
  }

  function doubtTitle(e, p) {
    const t = document.createElementNS(SVG_NS, "title");
    t.textContent = `a base may stand here that the detector did not accept (finder ${p.probability.toFixed(2)}, about ${Math.round(p.diameter_mm)} mm): look again`;
    e.appendChild(t);
  }

  // Bases and findings over the frame, in full-frame pixels.
  function drawOverlay(svg, r, opts = {}) {
    const w = r.frame.width_px;
    const h = r.frame.height_px;
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    clear(svg);
    const colour = colourOf(r);
    const byId = models(r);
    const shown = svg.clientWidth > 0 ? svg.clientWidth / w : 0;
    const font = Math.max(12, w / 75, shown ? MIN_TEXT_PX / shown : 0);
    const bases = el("g", {}, svg);
    for (const m of r.models) {
      const points = m.outline_px.map((p) => p.join(",")).join(" ");
      const poly = el("polygon", { points, class: "base", stroke: colour(m) }, bases);
      poly.dataset.model = m.id;
      baseTitle(poly, r, m);
    }
    // Models not seen, where they were last seen: calls about them are open.
    for (const m of r.unseen || []) {
      if (!m.outline_px) continue;
      const points = m.outline_px.map((p) => p.join(",")).join(" ");
      el("polygon", { points, class: "ghost", stroke: colour(m) }, bases).dataset.model = m.id;
    }
    // Places that may hold a base the detector did not accept: for a person to look at again.
    for (const p of r.doubted || []) {
      if (!p.outline_px) continue;
      const points = p.outline_px.map((q) => q.join(",")).join(" ");
      doubtTitle(el("polygon", { points, class: "doubt" }, bases), p);
      const [x, y] = p.center_px;
      el("text", { x, y, "font-size": font, "text-anchor": "middle", "dominant-baseline": "central", class: "doubt-mark" }, bases).textContent = "?";
    }
    const pos = (id) => (byId.has(id) && byId.get(id).center_px ? byId.get(id).center_px : null);
    const radius = (id) => {
      const m = byId.get(id);
      const c = m.center_px;
      return Math.max(...m.outline_px.map((p) => Math.hypot(p[0] - c[0], p[1] - c[1])));
    };
    const qmarks = drawMarks(el("g", {}, svg), r, pos, radius, font);
    const top = (m) => (m.center_px ? [m.center_px[0], m.center_px[1] - radius(m.id)] : null);
    const circles = r.models.filter((m) => m.center_px).map((m) => ({ id: m.id, x: m.center_px[0], y: m.center_px[1], r: radius(m.id) }));
    drawLabels(el("g", { class: "labels" }, svg), r, { top, pos, radius, bases: circles, bounds: [0, 0, w, h], font }, { ...opts, last: qmarks });
    svg.appendChild(el("g", { class: "picks" }));
  }

  // The scale bar in the band under the table: one bar, inches above it and millimetres below.
  function scaleBar(svg, W, D, font) {
    const inches = W >= 60 * MM_PER_INCH ? 24 : W >= 24 * MM_PER_INCH ? 12 : 6;
    const length = inches * MM_PER_INCH;
    // millimetre labels far enough apart not to run into each other
    const mmStep = [50, 100, 200, 500].find((step) => step >= font * 0.8 * 0.62 * 7) || 500;
    const x0 = font;
    const y = D + font * 1.9;
    const g = el("g", { class: "scale-bar" }, svg);
    el("line", { x1: x0, y1: y, x2: x0 + length, y2: y, class: "scale" }, g);
    const text = (x, ty, s) => { el("text", { x, y: ty, "font-size": font * 0.8, "text-anchor": "middle", class: "scale-text" }, g).textContent = s; };
    for (let i = 0; i <= inches; i += 1) {
      const x = x0 + i * MM_PER_INCH;
      const tall = i % 6 === 0;
      el("line", { x1: x, y1: y, x2: x, y2: y - font * (tall ? 0.6 : 0.3), class: "scale" }, g);
      if (tall) text(x, y - font * 0.8, i ? `${i}"` : "0");
    }
    for (let mm = 0; mm <= length; mm += mmStep) {
      const x = x0 + mm;
      el("line", { x1: x, y1: y, x2: x, y2: y + font * 0.45, class: "scale" }, g);
      text(x, y + font * 1.3, mm ? `${mm} mm` : "0");
    }
    text(x0 + length + font * 4, y + font * 0.3, `grid lines every ${Math.round(GRID_MM / MM_PER_INCH)}"`);
  }

  // The map's legend: a base per player's colour, a grey one for models of no unit, a ghost for models not seen.
  function mapLegend(box, r) {
    const players = r.players || [];
    const entry = (cls, stroke, text, key) => {
      const span = document.createElement("span");
      span.dataset.key = key;
      const icon = document.createElementNS(SVG_NS, "svg");
      icon.setAttribute("width", "18");
      icon.setAttribute("height", "18");
      el("circle", { cx: 9, cy: 9, r: 6, class: cls, stroke }, icon);
      span.append(icon, ` ${text}`);
      return span;
    };
    box.replaceChildren(
      ...players.map((p) => entry("swatch-base", playerColour(players, p), p, `player:${p}`)),
      entry("swatch-base", NO_PLAYER, "no unit (grey)", "no-unit"),
      entry("ghost", "#bbb", "not seen (last place)", "unseen"),
      ...((r.doubted || []).length ? [entry("doubt", "#ff8c00", "a base? not accepted: look again", "doubted")] : []),
    );
  }

  // The table from above in millimetres: terrain, bases, the same marks, a 6" grid and a scale bar under it.
  function drawMap(svg, r, opts = {}) {
    const W = r.table.width_mm;
    const D = r.table.depth_mm;
    // text at least MIN_TEXT_PX tall on screen, however small the map is drawn
    const shown = svg.clientWidth > 0 ? svg.clientWidth / W : 0;
    const font = Math.max(Math.max(W, D) / 60, shown ? MIN_TEXT_PX / shown : 0);
    svg.setAttribute("viewBox", `0 0 ${W} ${D + font * 3.6}`);
    clear(svg);
    el("rect", { x: 0, y: 0, width: W, height: D, class: "table-edge" }, svg);
    const grid = el("g", { class: "grid-lines" }, svg);
    for (let x = GRID_MM; x < W; x += GRID_MM) el("line", { x1: x, y1: 0, x2: x, y2: D, class: "grid" }, grid);
    for (let y = GRID_MM; y < D; y += GRID_MM) el("line", { x1: 0, y1: y, x2: W, y2: y, class: "grid" }, grid);
    for (const t of r.terrain || []) {
      el("polygon", { points: t.polygon.map((p) => p.join(",")).join(" "), class: `terrain ${t.kind}` }, svg);
    }
    const colour = colourOf(r);
    const byId = models(r);
    const bases = el("g", {}, svg);
    const drawBase = (m, cls) => {
      const [a, b, rot] = semiAxes(m.base);
      const e = el("ellipse", {
        cx: m.x_mm, cy: m.y_mm, rx: a, ry: b, class: cls, stroke: colour(m),
        transform: rot ? `rotate(${rot} ${m.x_mm} ${m.y_mm})` : "",
      }, bases);
      e.dataset.model = m.id;
      return e;
    };
    for (const m of r.models) baseTitle(drawBase(m, "base"), r, m);
    for (const m of r.unseen || []) drawBase(m, "ghost");
    for (const p of r.doubted || []) {
      doubtTitle(el("circle", { cx: p.x_mm, cy: p.y_mm, r: p.diameter_mm / 2, class: "doubt" }, bases), p);
      el("text", { x: p.x_mm, y: p.y_mm, "font-size": font, "text-anchor": "middle", "dominant-baseline": "central", class: "doubt-mark" }, bases).textContent = "?";
    }
    const pos = (id) => (byId.has(id) ? [byId.get(id).x_mm, byId.get(id).y_mm] : null);
    const radius = (id) => Math.max(...semiAxes(byId.get(id).base).slice(0, 2));
    const qmarks = drawMarks(el("g", {}, svg), r, pos, radius, font);
    const top = (m) => [m.x_mm, m.y_mm - radius(m.id)];
    const circles = r.models.map((m) => ({ id: m.id, x: m.x_mm, y: m.y_mm, r: radius(m.id) }));
    drawLabels(el("g", { class: "labels" }, svg), r, { top, pos, radius, bases: circles, bounds: [0, 0, W, D], font: font * 0.85 }, { ...opts, last: qmarks });
    scaleBar(svg, W, D, font);
    if (opts.legend) mapLegend(opts.legend, r);
    svg.appendChild(el("g", { class: "picks" }));
  }

  // Mark the models ``ids`` (a Set) with class ``cls`` in every drawing.
  function mark(ids, cls = "hl") {
    for (const e of document.querySelectorAll(`[data-model].${cls}`)) e.classList.remove(cls);
    for (const e of document.querySelectorAll("[data-model]")) if (ids.has(e.dataset.model)) e.classList.add(cls);
  }

  // ---------------------------------------------------------------------------------------------------------
  // Text

  function inches(mm) { return (mm / MM_PER_INCH).toFixed(2); }

  function length(mm, sigma) {
    if (sigma) return `${inches(mm)}" ± ${inches(sigma)}" (${mm.toFixed(2)} ± ${sigma.toFixed(2)} mm)`;
    return `${inches(mm)}" (${mm.toFixed(2)} mm)`;
  }

  let started = false;
  function start() {
    if (started) return;
    started = true;
    connect();
  }
  // Screens register their listeners first (their scripts run before this event), then the updates begin.
  document.addEventListener("DOMContentLoaded", start);

  return {
    api, start, onStatus, onResult, bindFrame, drawOverlay, drawMap, mark, el, length, inches,
    colourOf, unitName, semiAxes, LINE_TITLES, KIND_TITLES, PLAYER_COLOURS,
    get status() { return status; },
    get result() { return result; },
  };
})();
