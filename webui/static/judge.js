// The judge screen: click two bases for their edge-to-edge gap and the verdict at each line of the profile;
// freeze the frame while players argue; download the report of the measurements taken.
"use strict";

(() => {
  const overlay = document.getElementById("overlay");
  const map = document.getElementById("map");
  const out = document.getElementById("measure-result");
  const history = document.getElementById("history");
  const report = document.getElementById("report");
  const freeze = document.getElementById("freeze");
  const freezeState = document.getElementById("freeze-state");
  let picks = [];
  const pairs = [];

  function showPicks() {
    document.getElementById("pick-a").textContent = picks[0] || "–";
    document.getElementById("pick-b").textContent = picks[1] || "–";
    TR.mark(new Set(picks), "pick");
    for (const g of document.querySelectorAll(".picks")) g.replaceChildren();
    const r = TR.result;
    if (picks.length !== 2 || !r) return;
    const [a, b] = picks.map((id) => r.models.find((m) => m.id === id));
    if (!a || !b) return;
    TR.el("line", { x1: a.center_px[0], y1: a.center_px[1], x2: b.center_px[0], y2: b.center_px[1], class: "measure-line" }, overlay.querySelector(".picks"));
    TR.el("line", { x1: a.x_mm, y1: a.y_mm, x2: b.x_mm, y2: b.y_mm, class: "measure-line" }, map.querySelector(".picks"));
  }

  function verdictText(v) {
    const line = TR.LINE_TITLES[v.line] || v.line;
    return `within ${v.limit_in.toFixed(2)}" (${v.limit_mm.toFixed(1)} mm, ${line})? ${v.within ? "yes" : "no"}`;
  }

  function showMeasurement(m) {
    out.replaceChildren();
    const gap = document.createElement("div");
    gap.className = "gap";
    gap.id = "gap";
    gap.dataset.gapMm = String(m.gap_mm);
    gap.dataset.sigmaMm = String(m.sigma_mm);
    gap.textContent = `${m.a} – ${m.b}: ${TR.length(m.gap_mm, m.sigma_mm)}`;
    const note = document.createElement("div");
    note.className = "muted small";
    note.textContent = m.gap_mm < 0 ? "negative: the bases overlap by this much" : "edge to edge, horizontally";
    const ul = document.createElement("ul");
    ul.className = "verdicts";
    for (const v of m.verdicts) {
      const li = document.createElement("li");
      li.className = `call-${v.call}`;
      li.dataset.line = v.line;
      li.textContent = `${verdictText(v)} · ${v.call === "close" ? "too close to call" : "clear"}`;
      ul.appendChild(li);
    }
    out.append(gap, note, ul);
  }

  function updateReport() {
    const q = pairs.map(([a, b]) => `pair=${encodeURIComponent(a)},${encodeURIComponent(b)}`).join("&");
    report.href = "/api/report" + (q ? "?" + q : "");
  }

  async function measure(record) {
    try {
      const m = await TR.api("POST", "/api/measure", { a: picks[0], b: picks[1] });
      showMeasurement(m);
      if (record) {
        pairs.push([m.a, m.b]);
        const li = document.createElement("li");
        li.textContent = `${m.a} – ${m.b}: ${TR.length(m.gap_mm, m.sigma_mm)}`;
        history.appendChild(li);
        updateReport();
      }
    } catch (err) {
      out.textContent = err.message;
    }
  }

  function pick(id) {
    if (picks.length === 2) picks = [];
    if (picks[0] === id) return;
    picks.push(id);
    showPicks();
    if (picks.length === 2) measure(true);
    else out.textContent = "Now click the second base.";
  }

  for (const svg of [overlay, map]) {
    svg.addEventListener("click", (e) => {
      const target = e.target.closest("[data-model]");
      if (target) pick(target.dataset.model);
    });
  }
  document.getElementById("clear-pick").addEventListener("click", () => { picks = []; out.textContent = ""; showPicks(); });

  freeze.addEventListener("click", async () => {
    try {
      await TR.api("POST", "/api/freeze", { frozen: !(TR.status && TR.status.frozen) });
    } catch (err) {
      out.textContent = err.message;
    }
  });

  TR.onStatus((st) => {
    freeze.textContent = st.frozen ? "Unfreeze" : "Freeze frame";
    freeze.classList.toggle("on", st.frozen);
    freezeState.textContent = st.frozen ? "measurements hold on this frame" : "live";
  });

  // ---------------------------------------------------------------------------------------------------------
  // The placement assistant: the rest of a melee as the rules propose it, drawn as numbered places.

  const meleeUnit = document.getElementById("melee-unit");
  const meleeSteps = document.getElementById("melee-steps");
  const meleeMessage = document.getElementById("melee-message");
  let proposal = null;
  const PHASES = {
    others: (p) => `The other models of ${p.unit_name}, into base contact with ${p.enemy_name}`,
    opponent_leader: (p) => `The leader of ${p.enemy_name}, into base contact with ${p.unit_name} unless it already is`,
    opponent_others: (p) => `The other models of ${p.enemy_name}, into base contact with ${p.unit_name}`,
  };

  function sayMelee(text, ok) {
    meleeMessage.textContent = text;
    meleeMessage.classList.toggle("ok", Boolean(ok));
  }

  async function loadMeleeUnits() {
    try {
      const doc = await TR.api("GET", "/api/melee/units");
      const keep = meleeUnit.value;
      meleeUnit.replaceChildren(...doc.units.map((u) => new Option(`${u.name} (leader ${u.leader})`, u.id)));
      if (!doc.units.length) meleeUnit.appendChild(new Option("no unit's leader is in base contact", ""));
      meleeUnit.value = doc.units.some((u) => u.id === keep) ? keep : meleeUnit.options[0].value;
      document.getElementById("melee-propose").disabled = !doc.units.length;
      if (!proposal && doc.units.length && !doc.procedure) {
        sayMelee(`The profile ${doc.profile} has no melee procedure: choose one that has (legion) on the Setup screen.`);
      }
    } catch (err) {
      sayMelee(err.message);
    }
  }

  function stepText(s) {
    const where = `(${s.to_mm[0].toFixed(1)}, ${s.to_mm[1].toFixed(1)}) mm`;
    const touching = s.touching ? `, in base contact with ${s.touching}` : "";
    if (!s.moved) return `${s.model} stays at ${where}${touching}: ${s.reason}`;
    return `${s.model} moves ${TR.length(s.distance_mm)} to ${where}${touching}: ${s.reason}`;
  }

  function listSteps(p) {
    meleeSteps.replaceChildren();
    for (const phase of p.phases) {
      const steps = p.steps.filter((s) => s.step === phase);
      const head = document.createElement("div");
      head.className = "steps-phase";
      head.textContent = PHASES[phase] ? PHASES[phase](p) : phase;
      const ol = document.createElement("ol");
      ol.className = "steps";
      for (const s of steps) {
        const li = document.createElement("li");
        li.value = s.n;
        li.dataset.model = s.model;
        li.className = s.moved ? "moves" : "stays";
        li.textContent = stepText(s);
        ol.appendChild(li);
      }
      if (!steps.length) ol.appendChild(Object.assign(document.createElement("li"), { textContent: "none", className: "stays" }));
      meleeSteps.append(head, ol);
    }
  }

  // Where each proposed place is over the frame (pixels) and on the map (mm): [from, to, radius] of a step.
  const PLACES = [
    [overlay, (s) => s.to_px && [s.from_px, s.to_px, s.radius_px]],
    [map, (s) => [s.from_mm, s.to_mm, s.radius_mm]],
  ];

  // The proposal's step numbers, on their places: labels placed before the ids and names, which go round them.
  function stepNumbers(where) {
    if (!proposal) return [];
    const out = [];
    for (const s of proposal.steps) {
      const at = where(s);
      if (!at || !s.moved) continue;
      const [, to, r] = at;
      out.push({ text: String(s.n), x: to[0], y: to[1], font: r * 1.25, cls: "proposal-n", near: r });
    }
    return out;
  }

  // The frame's and the map's drawings, with the proposal's numbers among their labels.
  function draw(r) {
    TR.drawOverlay(overlay, r, { ids: true, first: stepNumbers(PLACES[0][1]) });
    TR.drawMap(map, r, { ids: true, legend: document.getElementById("map-legend"), first: stepNumbers(PLACES[1][1]) });
    showPicks();
    drawProposal();
  }

  // The proposed places over the frame and on the map: an outlined circle, and the path to it.
  function drawProposal() {
    for (const svg of [overlay, map]) {
      const old = svg.querySelector(".proposal");
      if (old) old.remove();
    }
    if (!proposal) return;
    for (const [svg, where] of PLACES) {
      const g = TR.el("g", { class: "proposal" }, svg);
      for (const s of proposal.steps) {
        const at = where(s);
        if (!at || !s.moved) continue;
        const [from, to, r] = at;
        TR.el("line", { x1: from[0], y1: from[1], x2: to[0], y2: to[1], class: "proposal-path" }, g);
        TR.el("circle", { cx: to[0], cy: to[1], r, class: "proposal-place" }, g).dataset.step = String(s.n);
      }
    }
  }

  document.getElementById("melee-propose").addEventListener("click", async () => {
    const unit = meleeUnit.value;
    try {
      proposal = await TR.api("POST", "/api/melee", { unit });
      const moved = proposal.steps.filter((s) => s.moved).length;
      sayMelee(`Melee of ${proposal.unit_name} with ${proposal.enemy_name}: ${moved} model(s) to place, ${proposal.steps.length - moved} staying.${proposal.note ? ` Note: ${proposal.note}` : ""}`, true);
      listSteps(proposal);
    } catch (err) {
      proposal = null;
      meleeSteps.replaceChildren();
      sayMelee(err.message);
    }
    if (TR.result) draw(TR.result);
  });

  document.getElementById("melee-clear").addEventListener("click", () => {
    proposal = null;
    meleeSteps.replaceChildren();
    sayMelee("");
    if (TR.result) draw(TR.result);
  });

  TR.onResult((r) => {
    const known = new Set(r.models.map((m) => m.id));
    picks = picks.filter((id) => known.has(id));
    // A new result of the same models: the measurement follows it.
    if (picks.length === 2) measure(false);
    // a proposal belongs to the result it was made on
    if (proposal && proposal.result_seq !== r.seq) {
      proposal = null;
      meleeSteps.replaceChildren();
      sayMelee("The table changed: propose the placement again.");
    }
    draw(r);
    loadMeleeUnits();
  });

  TR.bindFrame(document.getElementById("frame"), overlay, document.getElementById("frame-note"));
  updateReport();
  TR.start();
})();
