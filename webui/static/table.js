// The table screen: frame with overlays, the top-down map and the findings list (click one to highlight it).
"use strict";

(() => {
  const overlay = document.getElementById("overlay");
  const map = document.getElementById("map");
  const list = document.getElementById("findings");
  const count = document.getElementById("findings-count");
  let active = null; // the highlighted finding, as its models joined by commas

  function highlight() {
    const ids = new Set(active ? active.split(",") : []);
    TR.mark(ids, "hl");
    for (const li of list.querySelectorAll(".finding")) li.classList.toggle("active", li.dataset.models === active);
  }

  function render(r) {
    TR.drawOverlay(overlay, r);
    TR.drawMap(map, r);
    count.textContent = r.findings.length ? `(${TR.findingCounts(r)})` : "(0)";
    TR.renderFindings(list, r, (i, f) => {
      const key = f.models.join(",");
      active = active === key ? null : key;
      highlight();
    });
    if (active && !r.findings.some((f) => f.models.join(",") === active)) active = null;
    highlight();
  }

  TR.bindFrame(document.getElementById("frame"), overlay, document.getElementById("frame-note"));
  TR.onResult(render);
  TR.start();
})();
