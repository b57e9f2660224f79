// The units screen: select models on the map (click, shift-click, or drag a box), put them in a unit, set the
// unit's player, leader, move and abilities, override a base size; suggested groupings; roster save and load.
// Every change edits the roster (GET /api/roster), sends it back (PUT /api/roster), and the findings follow.
"use strict";

(() => {
  const map = document.getElementById("umap");
  const message = document.getElementById("units-message");
  const form = document.getElementById("unit-form");
  const unitPick = document.getElementById("unit-pick");
  const f = {
    id: document.getElementById("u-id"),
    name: document.getElementById("u-name"),
    player: document.getElementById("u-player"),
    leader: document.getElementById("u-leader"),
    move: document.getElementById("u-move"),
    abilities: document.getElementById("u-abilities"),
  };
  let selected = new Set();
  let drag = null;

  function say(text, ok) {
    message.textContent = text;
    message.classList.toggle("ok", Boolean(ok));
  }

  // ---------------------------------------------------------------------------------------------------------
  // Selection

  function toMap(e) {
    const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(map.getScreenCTM().inverse());
    return [p.x, p.y];
  }

  function showSelection() {
    TR.mark(selected, "sel");
    document.getElementById("sel-count").textContent = String(selected.size);
    document.getElementById("sel-list").textContent = selected.size ? [...selected].join(", ") : "nothing selected";
    fillLeaders();
  }

  map.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    const start = toMap(e);
    drag = { start, box: null, shift: e.shiftKey, target: e.target.closest("[data-model]") };
    map.setPointerCapture(e.pointerId);
  });

  map.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const [x, y] = toMap(e);
    const [x0, y0] = drag.start;
    if (!drag.box && Math.hypot(x - x0, y - y0) < 10) return;
    if (!drag.box) drag.box = TR.el("rect", { class: "selbox" }, map);
    drag.box.setAttribute("x", Math.min(x, x0));
    drag.box.setAttribute("y", Math.min(y, y0));
    drag.box.setAttribute("width", Math.abs(x - x0));
    drag.box.setAttribute("height", Math.abs(y - y0));
  });

  map.addEventListener("pointerup", (e) => {
    if (!drag) return;
    const d = drag;
    drag = null;
    const r = TR.result;
    if (!r) return;
    if (d.box) {
      const [x, y] = toMap(e);
      const [x0, y0] = d.start;
      const inside = r.models.filter((m) => m.x_mm >= Math.min(x, x0) && m.x_mm <= Math.max(x, x0)
        && m.y_mm >= Math.min(y, y0) && m.y_mm <= Math.max(y, y0)).map((m) => m.id);
      d.box.remove();
      if (!d.shift) selected = new Set();
      for (const id of inside) selected.add(id);
    } else if (d.target) {
      const id = d.target.dataset.model;
      if (d.shift) { if (selected.has(id)) selected.delete(id); else selected.add(id); }
      else selected = new Set([id]);
      const m = r.models.find((x) => x.id === id);
      if (!d.shift && m && m.unit) showUnit(m.unit);
    } else if (!d.shift) {
      selected = new Set();
    }
    showSelection();
  });

  // ---------------------------------------------------------------------------------------------------------
  // The form

  function fillLeaders() {
    const r = TR.result;
    const keep = f.leader.value;
    const ids = new Set(selected);
    if (r && f.id.value) for (const m of r.models) if (m.unit === f.id.value) ids.add(m.id);
    f.leader.replaceChildren(new Option("none", ""));
    for (const id of [...ids].sort()) f.leader.appendChild(new Option(id, id));
    f.leader.value = ids.has(keep) ? keep : "";
  }

  function showUnit(id) {
    const r = TR.result;
    const u = r && r.units.find((x) => x.id === id);
    unitPick.value = u ? u.id : "";
    f.id.value = u ? u.id : "";
    f.name.value = u && u.name ? u.name : "";
    f.player.value = u && u.player ? u.player : "";
    f.move.value = u && u.move_in !== undefined ? u.move_in : "";
    f.abilities.value = u && u.abilities ? u.abilities.join(", ") : "";
    fillLeaders();
    f.leader.value = u && u.leader ? u.leader : "";
  }

  function freeUnitId(roster) {
    const taken = new Set(roster.units.map((u) => u.id));
    let n = 1;
    while (taken.has(`u${n}`)) n += 1;
    return `u${n}`;
  }

  unitPick.addEventListener("change", () => showUnit(unitPick.value));

  // ---------------------------------------------------------------------------------------------------------
  // Roster edits

  async function edit(change, done) {
    try {
      const roster = await TR.api("GET", "/api/roster");
      roster.base_overrides = roster.base_overrides || {};
      change(roster);
      // Units left with nobody in them are dropped; a leader must be one of the unit's models.
      const members = new Map();
      for (const m of roster.models) if (m.unit) members.set(m.unit, (members.get(m.unit) || 0) + 1);
      roster.units = roster.units.filter((u) => members.has(u.id));
      for (const u of roster.units) {
        if (u.leader && !roster.models.some((m) => m.id === u.leader && m.unit === u.id)) delete u.leader;
      }
      await TR.api("PUT", "/api/roster", roster);
      say(done, true);
    } catch (err) {
      say(err.message);
    }
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!selected.size) { say("Select models first."); return; }
    const ids = new Set(selected);
    edit((roster) => {
      const id = f.id.value.trim() || freeUnitId(roster);
      let unit = roster.units.find((u) => u.id === id);
      if (!unit) { unit = { id }; roster.units.push(unit); }
      const name = f.name.value.trim();
      const player = f.player.value.trim();
      if (name) unit.name = name; else delete unit.name;
      if (player) unit.player = player; else delete unit.player;
      if (f.move.value !== "") unit.move_in = Number(f.move.value); else delete unit.move_in;
      unit.abilities = f.abilities.value.split(",").map((s) => s.trim()).filter(Boolean);
      for (const m of roster.models) if (ids.has(m.id)) m.unit = id;
      if (f.leader.value) unit.leader = f.leader.value; else delete unit.leader;
      f.id.value = id;
    }, `${ids.size} model(s) assigned to ${f.id.value.trim() || "a new unit"}.`);
  });

  document.getElementById("unassign").addEventListener("click", () => {
    const ids = new Set(selected);
    edit((roster) => { for (const m of roster.models) if (ids.has(m.id)) m.unit = null; }, `${ids.size} model(s) taken out of their units.`);
  });

  document.getElementById("base-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const mm = Number(document.getElementById("base-mm").value);
    if (!selected.size || !(mm > 0)) { say("Select models and give a base diameter in mm."); return; }
    // a declared rim height lets a 4K camera place the base better (the server says so in the README)
    const heightText = document.getElementById("base-height").value.trim();
    const base = { diameter_mm: mm };
    if (heightText !== "") {
      const height = Number(heightText);
      if (!(height > 0)) { say("A rim height must be a positive number of mm, or left empty."); return; }
      base.height_mm = height;
    }
    const rim = base.height_mm ? ` (rim ${base.height_mm} mm)` : "";
    const ids = new Set(selected);
    edit((roster) => { for (const id of ids) roster.base_overrides[id] = { ...base }; }, `Base of ${ids.size} model(s) set to ${mm} mm${rim}.`);
  });

  document.getElementById("base-clear").addEventListener("click", () => {
    const ids = new Set(selected);
    edit((roster) => { for (const id of ids) delete roster.base_overrides[id]; }, "Detected base sizes restored.");
  });

  // ---------------------------------------------------------------------------------------------------------
  // Suggestions

  const SIDE_PLAYERS = { top: "Player 1", left: "Player 1", bottom: "Player 2", right: "Player 2" };

  document.getElementById("suggest").addEventListener("click", async () => {
    const ol = document.getElementById("suggestions");
    ol.replaceChildren();
    try {
      const doc = await TR.api("GET", "/api/roster/suggestions");
      if (!doc.suggestions.length) { ol.textContent = "Every model is in a unit."; return; }
      for (const s of doc.suggestions) {
        const li = document.createElement("li");
        const size = s.base.diameter_mm !== undefined ? `${s.base.diameter_mm} mm` : `${s.base.width_mm}x${s.base.depth_mm} mm`;
        li.textContent = `${s.models.length} on ${size}, ${s.side} half: ${s.models.join(", ")} `;
        const pickBtn = document.createElement("button");
        pickBtn.type = "button";
        pickBtn.textContent = "Select";
        pickBtn.addEventListener("click", () => { selected = new Set(s.models); showUnit(""); f.player.value = SIDE_PLAYERS[s.side]; showSelection(); });
        li.appendChild(pickBtn);
        ol.appendChild(li);
      }
    } catch (err) {
      say(err.message);
    }
  });

  // ---------------------------------------------------------------------------------------------------------
  // Roster file

  document.getElementById("roster-file").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    e.target.value = "";
    if (!file) return;
    try {
      await TR.api("PUT", "/api/roster", undefined, await file.arrayBuffer());
      say(`Roster ${file.name} loaded.`, true);
    } catch (err) {
      say(err.message);
    }
  });

  // ---------------------------------------------------------------------------------------------------------
  // Drawing

  function render(r) {
    TR.drawMap(map, r, { ids: true, legend: document.getElementById("map-legend") });
    const known = new Set(r.models.map((m) => m.id));
    selected = new Set([...selected].filter((id) => known.has(id)));
    showSelection();
    const keep = unitPick.value;
    unitPick.replaceChildren(new Option("a new unit", ""));
    for (const u of r.units) unitPick.appendChild(new Option(u.name ? `${u.name} (${u.id})` : u.id, u.id));
    unitPick.value = r.units.some((u) => u.id === keep) ? keep : "";
    const players = document.getElementById("players");
    players.replaceChildren(...r.players.map((p) => new Option(p)));
    const list = document.getElementById("unit-list");
    list.replaceChildren();
    const colour = TR.colourOf(r);
    for (const u of r.units) {
      const members = r.models.filter((m) => m.unit === u.id);
      const li = document.createElement("li");
      const sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = members.length ? colour(members[0]) : "#999";
      const text = document.createElement("span");
      text.textContent = `${u.name || u.id} (${u.id}) · ${u.player || "no player"} · ${members.length} on the table` + (u.leader ? ` · leader ${u.leader}` : "");
      const btn = document.createElement("button");
      btn.type = "button";
      btn.textContent = "Select";
      btn.addEventListener("click", () => { selected = new Set(members.map((m) => m.id)); showUnit(u.id); showSelection(); });
      li.append(sw, text, " ", btn);
      list.appendChild(li);
    }
  }

  TR.onResult(render);
  TR.start();
})();
