// Labels that do not overlap. Each label first tries its own place (an id on its base, a unit's name above its top
// model); the ones that cannot have it go, in turn, to the nearest place on rings round their anchor where they
// overlap no label already placed (and, if there is such a place, no base), joined to the anchor by a leader line.
// Every place lies inside the drawing, so nothing is cut off at its edges. A label with no free place at all is
// left out (its base still says its id on hover).
"use strict";

const TRLabels = (() => {
  const SVG_NS = "http://www.w3.org/2000/svg";
  // Places tried round an anchor: rings of this many angles, this many rings out.
  const ANGLES = 16;
  const RINGS = 10;
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
    return { w: text.length * font * 0.62, h: font * 1.2, dy: 0 };
  }

  function hits(a, b) {
    return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
  }

  function hitsCircle(box, c) {
    const dx = Math.max(box.x0 - c.x, 0, c.x - box.x1);
    const dy = Math.max(box.y0 - c.y, 0, c.y - box.y1);
    return dx * dx + dy * dy < c.r * c.r;
  }

  // The box of a label centred at (x, y), moved inside the bounds.
  function boxAt(item, x, y, bounds) {
    const hw = item.w / 2 + item.pad;
    const hh = item.h / 2 + item.pad;
    const cx = Math.min(Math.max(x, bounds[0] + hw), bounds[2] - hw);
    const cy = Math.min(Math.max(y, bounds[1] + hh), bounds[3] - hh);
    return { cx, cy, x0: cx - hw, y0: cy - hh, x1: cx + hw, y1: cy + hh };
  }

  // The direction pointing away from the bases crowding round an anchor (straight up when none does): a label
  // pushed out of a crowd goes out of it on the nearest side, and the leader lines fan out without crossing.
  function awayAngle(item, bases) {
    const reach = Math.max(item.near, item.h) * 4;
    let sx = 0;
    let sy = 0;
    for (const c of bases) {
      const d = Math.hypot(item.x - c.x, item.y - c.y);
      if (d > 0 && d < reach) { sx += (item.x - c.x) / d; sy += (item.y - c.y) / d; }
    }
    return Math.hypot(sx, sy) > 1e-6 ? Math.atan2(sy, sx) : -Math.PI / 2;
  }

  function ringPlaces(item, away) {
    const out = [];
    const step = Math.max(item.h, item.font) * 0.75;
    for (let k = 0; k < RINGS; k += 1) {
      const d = item.near + item.h / 2 + step * k;
      // the way out of the crowd first, then either side of it in turn
      for (let a = 0; a < ANGLES; a += 1) {
        const turn = Math.ceil(a / 2) * (a % 2 ? 1 : -1);
        const angle = away + (turn * 2 * Math.PI) / ANGLES;
        out.push([item.x + Math.cos(angle) * (d + item.w / 2), item.y + Math.sin(angle) * d]);
      }
    }
    return out;
  }

  // The point of the box nearest to (x, y): where a leader line ends.
  function nearestOnBox(box, x, y) {
    return [Math.min(Math.max(x, box.x0), box.x1), Math.min(Math.max(y, box.y0), box.y1)];
  }

  // ``items``: {text, x, y (the anchor), font, cls, above (its own place is above the anchor, else on it), near
  // (where the rings round the anchor start), clearOfBases (its own place must miss the bases too), own (the id
  // of the base it names, which it may cover)}.
  // ``opts``: {bounds: [x0, y0, x1, y1], bases: [{id, x, y, r}]}. Returns the labels left out.
  function place(g, items, opts) {
    const leaders = make("g", { class: "leaders" }, g);
    const texts = make("g", {}, g);
    const placed = [];
    const bases = opts.bases || [];
    const prepared = items.map((it) => {
      const t = make("text", { x: 0, y: 0, "font-size": it.font, class: it.cls, "text-anchor": "middle" }, texts);
      t.textContent = it.text;
      const s = size(t, it.text, it.font);
      const pad = it.font * PAD;
      const prefer = it.above ? [0, -(s.h / 2 + pad * 1.5)] : [0, 0];
      return { ...it, t, w: s.w, h: s.h, dy: s.dy, pad, near: it.near || 0, prefer };
    });
    const free = (box, strict, item) => {
      if (placed.some((b) => hits(b, box))) return false;
      return !strict || !bases.some((c) => c.id !== item.own && hitsCircle(box, c));
    };
    const put = (item, box) => {
      placed.push(box);
      item.t.setAttribute("x", box.cx.toFixed(2));
      item.t.setAttribute("y", (box.cy - item.dy).toFixed(2));
      item.box = box;
    };
    // First every label that can have its own place, in order; then the others, each at the nearest free place.
    const waiting = [];
    for (const item of prepared) {
      const box = boxAt(item, item.x + item.prefer[0], item.y + item.prefer[1], opts.bounds);
      if (free(box, item.clearOfBases, item)) put(item, box);
      else waiting.push(item);
    }
    const left = [];
    for (const item of waiting) {
      const boxes = ringPlaces(item, awayAngle(item, bases)).map(([x, y]) => boxAt(item, x, y, opts.bounds));
      const box = boxes.find((b) => free(b, true, item)) || boxes.find((b) => free(b, false, item));
      if (!box) {
        item.t.remove();
        left.push(item.text);
        continue;
      }
      put(item, box);
      const [ex, ey] = nearestOnBox(box, item.x, item.y);
      make("line", { x1: item.x, y1: item.y, x2: ex, y2: ey, class: "leader" }, leaders);
    }
    return left;
  }

  return { place };
})();
