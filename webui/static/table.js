// The table screen: frame with overlays, the top-down map and the findings grouped by unit pair (click a group or
// one of its findings to highlight its models).
"use strict";

(() => {
  const overlay = document.getElementById("overlay");
  const map = document.getElementById("map");
  const legend = document.getElementById("map-legend");
  const list = document.getElementById("findings");
  const count = document.getElementById("findings-count");
  // the highlighted group or finding: its class ("group" or "finding") and its models joined by commas
  let active = null;

  const same = (li) => Boolean(active) && li.classList.contains(active.cls) && li.dataset.models === active.models;

  function highlight() {
    TR.mark(new Set(active ? active.models.split(",") : []), "hl");
    for (const li of list.querySelectorAll(".finding, .group")) li.classList.toggle("active", same(li));
  }

  function render(r) {
    TR.drawOverlay(overlay, r);
    TR.drawMap(map, r, { legend });
    count.textContent = r.findings.length ? `(${TR.findingCounts(r)})` : "(0)";
    TR.renderFindings(list, r, (li) => {
      active = same(li) ? null : { cls: li.classList.contains("group") ? "group" : "finding", models: li.dataset.models };
      highlight();
    });
    if (active && ![...list.querySelectorAll(".finding, .group")].some(same)) active = null;
    highlight();
  }

  TR.bindFrame(document.getElementById("frame"), overlay, document.getElementById("frame-note"));
  TR.onResult(render);
  TR.start();
})();
