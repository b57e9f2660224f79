// The findings panel: counts on top, then the findings grouped by the units they are about (a pair of units engaged
// with each other, a unit out of cohesion, its models not seen, ...), the strongest group first (the server orders
// them: webui/groups.py). Each group says its strongest finding in a line; its findings, model by model, fold
// under it. Adds renderFindings and findingCounts to TR.
"use strict";

(() => {
  const KIND_TITLES = TR.KIND_TITLES;
  const length = TR.length;
  const inches = TR.inches;
  const unitName = TR.unitName;
  // The groups a person opened stay open when the next result comes (keyed by their units).
  const opened = new Set();

  function describe(r, f) {
    const models = f.models.join(", ");
    if (f.kind === "unseen") {
      const n = f.models.length;
      const owner = f.unit ? unitName(r, f.unit) : "no unit";
      return `${n} model${n === 1 ? "" : "s"} of ${owner} not seen: calls about them are open (${models})`;
    }
    if (f.kind === "engaged" && f.units) return `${unitName(r, f.units[0])} engaged with ${unitName(r, f.units[1])} (closest ${models})`;
    if (f.kind === "cohesion") return `${unitName(r, f.unit)}: ${models}`;
    if (f.kind === "multi_contact") return `${models} touches ${f.units.map((u) => unitName(r, u)).join(" and ")}`;
    if (f.kind === "in_terrain") return `${models} in ${f.terrain}`;
    return models;
  }

  function measureText(f) {
    const opened = f.reason === "unseen" && f.kind !== "unseen" ? " · open: a model it depends on is not seen" : "";
    if (f.gap_mm === undefined || f.limit_mm === undefined) return opened.slice(3);
    if (f.kind === "overlap") {
      const allowed = length(-f.limit_mm);
      if (f.gap_mm < 0) return `${length(-f.gap_mm, f.sigma_mm)} deep, allowed ${allowed}`;
      return `measured ${length(f.gap_mm, f.sigma_mm)} apart, may be over ${allowed} deep`;
    }
    if (f.kind === "off_table") return `${length(-f.gap_mm, f.sigma_mm)} over the edge`;
    return `gap ${length(f.gap_mm, f.sigma_mm)}, limit ${length(f.limit_mm)}${opened}`;
  }

  // A finding in a few words, for its group's line: 'engaged 0.30" ± 0.02"'.
  function short(f) {
    const gap = (mm) => (f.sigma_mm ? `${inches(mm)}" ± ${inches(f.sigma_mm)}"` : `${inches(mm)}"`);
    const models = f.models.join(", ");
    const has = f.gap_mm !== undefined;
    switch (f.kind) {
      case "engaged": return has ? `engaged ${gap(f.gap_mm)}` : "engaged";
      case "cohesion": return `out of cohesion${has ? ` ${gap(f.gap_mm)}` : ""} (${models})`;
      case "unseen": return `not seen: ${models}`;
      case "overlap": return has && f.gap_mm < 0 ? `bases overlap ${gap(-f.gap_mm)} deep (${models})` : `bases may overlap (${models})`;
      case "off_table": return `${models} off the table${has ? ` by ${gap(-f.gap_mm)}` : ""}`;
      case "in_terrain": return `${models} in ${f.terrain}`;
      case "multi_contact": return `${models} touches two enemy units`;
      default: return `${(KIND_TITLES[f.kind] || f.kind).toLowerCase()} (${models})`;
    }
  }

  // "2 engaged · 1 out of cohesion · 3 open": what the list holds, in a line.
  function findingCounts(r) {
    const counts = new Map();
    for (const f of r.findings) {
      const name = f.kind === "unseen" ? "not seen" : (KIND_TITLES[f.kind] || f.kind).toLowerCase();
      counts.set(name, (counts.get(name) || 0) + 1);
    }
    const open = r.findings.filter((f) => f.call === "close").length;
    const parts = [...counts].map(([name, n]) => `${n} ${name}`);
    if (open) parts.push(`${open} open`);
    return parts.join(" · ");
  }

  function badge(call) {
    const b = document.createElement("span");
    b.className = `badge ${call}`;
    b.textContent = call === "close" ? "open" : "clear";
    b.title = call === "close" ? "too close to call, or a model it depends on is not seen" : "the measurement decides it";
    return b;
  }

  function span(cls, text) {
    const e = document.createElement("span");
    e.className = cls;
    e.textContent = text;
    return e;
  }

  function findingLine(r, f, i, onPick) {
    const li = document.createElement("li");
    const call = f.call || "clear";
    li.className = `finding kind-${f.kind} call-${call}`;
    li.dataset.index = String(i);
    li.dataset.models = f.models.join(",");
    const what = document.createElement("div");
    what.className = "what";
    what.textContent = describe(r, f);
    const measure = document.createElement("div");
    measure.className = "fmeasure";
    measure.textContent = measureText(f);
    li.append(badge(call), span("kind", KIND_TITLES[f.kind] || f.kind), what, measure);
    li.addEventListener("click", (e) => { e.stopPropagation(); onPick(li); });
    return li;
  }

  // Groups as the server made them; a result without them gets one group per finding, in its order.
  function groupsOf(r) {
    if (r.groups) return r.groups;
    return r.findings.map((f, i) => ({ units: [], findings: [i], models: f.models, call: f.call || "clear" }));
  }

  function groupItem(r, g, onPick) {
    const first = r.findings[g.findings[0]];
    const key = g.units.join(",") || "-";
    const li = document.createElement("li");
    li.className = `group kind-${first.kind} call-${g.call}`;
    li.dataset.units = g.units.join(",");
    li.dataset.models = g.models.join(",");
    const details = document.createElement("details");
    details.open = opened.has(key);
    details.addEventListener("toggle", () => { if (details.open) opened.add(key); else opened.delete(key); });
    const head = document.createElement("summary");
    head.className = "group-head";
    const title = g.units.length ? g.units.map((u) => unitName(r, u)).join(" – ") : "Models of no unit";
    const rest = g.findings.slice(1).map((i) => short(r.findings[i]));
    const more = rest.length > 2 ? ` · ${rest.length - 2} more` : "";
    head.append(badge(g.call), span("gtitle", title), span("gsummary", `: ${short(first)}`));
    if (rest.length) head.append(span("gmore", ` · ${rest.slice(0, 2).join(" · ")}${more}`));
    head.addEventListener("click", () => onPick(li));
    const lines = document.createElement("ul");
    lines.className = "group-lines";
    for (const i of g.findings) lines.appendChild(findingLine(r, r.findings[i], i, onPick));
    details.append(head, lines);
    li.appendChild(details);
    return li;
  }

  // ``onPick(li)``: a group or a finding was clicked (its element: data-models holds its models).
  function renderFindings(ul, r, onPick) {
    ul.replaceChildren();
    if (!r.findings.length) {
      const li = document.createElement("li");
      li.className = "none";
      li.textContent = "No findings: nothing engaged, every unit in cohesion, every base legally placed.";
      ul.appendChild(li);
      return;
    }
    for (const g of groupsOf(r)) ul.appendChild(groupItem(r, g, onPick));
  }

  Object.assign(TR, { renderFindings, findingCounts });
})();
