// Labels that do not overlap. The browser draws and measures each label; where it goes is the server's to say
// (POST /api/labels: tableref/labels.py, which places the labels of the reports and the Review map too). Each label
// first tries its own place (an id on its base, a unit's name above its top model); the ones that cannot have it go
// to the nearest free place round their anchor, joined to it by a leader line, always inside the drawing. A label
// with no free place at all is left out (its base still says its id on hover).
"use strict";

const TRLabels = (() => {
  const SVG_NS = "http://www.w3.org/2000/svg";
  // Room kept round each label, as a fraction of its font size (the white outline of the text lies there).
  const PAD = 0.18;

  function make(name, attrs, parent) {
    const e = document.createElementNS(SVG_NS, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    parent.appendChild(e);
    return e;
  }

  // The label's size in the drawing's units: measured by the browser where it can, else estimated.
  function size(t, text, font) {
    try {
      const b = t.getBBox();
      if (b.width > 0 && b.height > 0) return { w: b.width, h: b.height, dy: b.y + b.height / 2 };
    } catch (err) {
      // not rendered (a hidden drawing): estimate below
    }
    return { w: text.length * font * 0.75, h: font * 1.2, dy: 0 };
  }

  async function ask(body) {
    const res = await fetch("/api/labels", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), cache: "no-store",
    });
    if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
    return (await res.json()).placed;
  }

  // ``items``: {text, x, y (the anchor), font, cls, above (its own place is above the anchor, else on it), near
  // (where the rings round the anchor start), clearOfBases (its own place must miss the bases too), own (the id
  // of the base it names, which it may cover)}. ``opts``: {bounds: [x0, y0, x1, y1], bases: [{id, x, y, r}]}.
  // Resolves to the labels left out; ``g.dataset.placed`` says it is done ("own": the server did not answer, each
  // label stands in its own place).
  async function place(g, items, opts) {
    const leaders = make("g", { class: "leaders" }, g);
    const texts = make("g", {}, g);
    const drawn = items.map((it) => {
      const t = make("text", { x: 0, y: 0, "font-size": it.font, class: it.cls, "text-anchor": "middle" }, texts);
      t.textContent = it.text;
      const s = size(t, it.text, it.font);
      // its own place until the answer comes (and for good, should none come)
      const own = { cx: it.x, cy: it.above ? it.y - s.h / 2 - it.font * PAD * 1.5 : it.y, leader: null };
      t.setAttribute("x", own.cx.toFixed(2));
      t.setAttribute("y", (own.cy - s.dy).toFixed(2));
      return { it, t, s, own };
    });
    const labels = drawn.map(({ it, s }) => ({
      text: it.text, x: it.x, y: it.y, width: s.w, height: s.h, pad: it.font * PAD, above: Boolean(it.above),
      near: it.near || 0, clear_of_bases: Boolean(it.clearOfBases), own: it.own === undefined ? null : it.own,
    }));
    let placed;
    try {
      placed = await ask({ bounds: opts.bounds, bases: opts.bases || [], labels });
    } catch (err) {
      placed = null;
    }
    const left = [];
    drawn.forEach(({ it, t, s, own }, k) => {
      const p = placed ? placed[k] : own;
      if (!p) {
        t.remove();
        left.push(it.text);
        return;
      }
      t.setAttribute("x", p.cx.toFixed(2));
      t.setAttribute("y", (p.cy - s.dy).toFixed(2));
      if (p.leader) {
        const [x1, y1, x2, y2] = p.leader;
        make("line", { x1, y1, x2, y2, class: "leader" }, leaders);
      }
    });
    g.dataset.left = left.join(",");
    g.dataset.placed = placed ? "yes" : "own";
    return left;
  }

  return { place };
})();
