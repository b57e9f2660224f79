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

  TR.onResult((r) => {
    TR.drawOverlay(overlay, r, { ids: true });
    TR.drawMap(map, r, { ids: true });
    const known = new Set(r.models.map((m) => m.id));
    picks = picks.filter((id) => known.has(id));
    showPicks();
    // A new result of the same models: the measurement follows it.
    if (picks.length === 2) measure(false);
  });

  TR.bindFrame(document.getElementById("frame"), overlay, document.getElementById("frame-note"));
  updateReport();
  TR.start();
})();
