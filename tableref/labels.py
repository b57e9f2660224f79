"""Labels that do not overlap, for every drawing: the dashboard's frame and maps (their browser measures each label
and asks ``POST /api/labels``), the Review map, the game report and the judge report (their sizes estimated here).

Each label first tries its own place (an id on its base, a unit's name above its top model, a move's length on its
arrow); those that cannot have it go, in turn, to the nearest place on rings round their anchor where they overlap
no label already placed (and, if there is such a place, no base), joined to the anchor by a leader line. Every place
lies inside the drawing, so nothing is cut off at its edges. A label with no free place at all is left out (its base
still names it on hover).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

# Places tried round an anchor: rings of this many angles, this many rings out.
ANGLES = 16
RINGS = 14
# Room kept round each label, as a fraction of its font size (the white outline of the text lies there).
PAD_SHARE = 0.18
# A model's id is written this much smaller than its unit's name.
ID_SHARE = 0.8
# A text line's height, in font sizes.
LINE_HEIGHT = 1.2
# Widths of characters in font sizes, a little over those of a bold sans-serif face (DejaVu Sans Bold, which
# Chromium draws sans-serif with on Debian), so that an estimated label is never narrower than the one drawn.
_NARROW = frozenset(" 'ijlI.,:;/fJ!()-|[]")
_MEDIUM = frozenset('tr"_–')
_WIDE = frozenset("mwMW%")
_WIDTHS = {"narrow": 0.42, "medium": 0.53, "wide": 1.12, "upper": 0.86, "other": 0.73}


def text_size(text: str, font: float) -> tuple[float, float]:
    """(width, height) of ``text`` at ``font`` in the drawing's units: an estimate that errs on the wide side, for
    drawings no browser measures (the server-rendered maps and reports)."""
    width = 0.0
    for c in text:
        if c in _NARROW:
            width += _WIDTHS["narrow"]
        elif c in _MEDIUM:
            width += _WIDTHS["medium"]
        elif c in _WIDE:
            width += _WIDTHS["wide"]
        elif c.isupper():
            width += _WIDTHS["upper"]
        else:
            width += _WIDTHS["other"]
    return width * font, LINE_HEIGHT * font


@dataclass(frozen=True)
class Label:
    """A label of ``width`` x ``height`` anchored at (x, y): its own place is centred on the anchor, or just above
    it (``above``). ``pad``: room kept round it. ``near``: how far from the anchor the rings of other places start
    (a base's radius). ``clear_of_bases``: its own place must miss the bases too. ``own``: the id of the base it
    names, which it may cover."""

    text: str
    x: float
    y: float
    width: float
    height: float
    pad: float = 0.0
    above: bool = False
    near: float = 0.0
    clear_of_bases: bool = False
    own: str | None = None


@dataclass(frozen=True)
class Circle:
    """A base the labels keep clear of, where they can."""

    id: str
    x: float
    y: float
    r: float


@dataclass(frozen=True)
class Placed:
    """Where a label went: its centre, and the leader line from its anchor to the nearest point of its box (None
    when it stands in its own place)."""

    cx: float
    cy: float
    leader: tuple[float, float, float, float] | None

    def to_dict(self) -> dict[str, object]:
        return {"cx": round(self.cx, 2), "cy": round(self.cy, 2), "leader": list(self.leader) if self.leader else None}


Bounds = tuple[float, float, float, float]


def label_for(
    text: str,
    x: float,
    y: float,
    font: float,
    *,
    above: bool = False,
    near: float = 0.0,
    clear_of_bases: bool = False,
    own: str | None = None,
) -> Label:
    """A label of ``text`` at ``font`` with its size estimated (:func:`text_size`) and the usual room round it."""
    width, height = text_size(text, font)
    return Label(text, x, y, width, height, font * PAD_SHARE, above, near, clear_of_bases, own)


def _boxes_at(label: Label, xy: NDArray[np.float64], bounds: Bounds) -> NDArray[np.float64]:
    """(N, 4) boxes x0, y0, x1, y1 of the label centred at each of ``xy`` (N, 2), moved inside ``bounds``."""
    hw = label.width / 2 + label.pad
    hh = label.height / 2 + label.pad
    cx = np.clip(xy[:, 0], bounds[0] + hw, max(bounds[0] + hw, bounds[2] - hw))
    cy = np.clip(xy[:, 1], bounds[1] + hh, max(bounds[1] + hh, bounds[3] - hh))
    return np.stack([cx - hw, cy - hh, cx + hw, cy + hh], axis=1)


def _hit_boxes(boxes: NDArray[np.float64], taken: NDArray[np.float64]) -> NDArray[np.bool_]:
    """For each of ``boxes`` (N, 4): whether it overlaps any of ``taken`` (M, 4)."""
    if not len(taken):
        return np.zeros(len(boxes), dtype=bool)
    a, b = boxes[:, None, :], taken[None, :, :]
    hit = (a[..., 0] < b[..., 2]) & (b[..., 0] < a[..., 2]) & (a[..., 1] < b[..., 3]) & (b[..., 1] < a[..., 3])
    return np.asarray(hit.any(axis=1))


def _hit_circles(boxes: NDArray[np.float64], circles: NDArray[np.float64]) -> NDArray[np.bool_]:
    """For each of ``boxes`` (N, 4): whether it overlaps any of ``circles`` (M, 3: x, y, r)."""
    if not len(circles):
        return np.zeros(len(boxes), dtype=bool)
    x, y, r = circles[None, :, 0], circles[None, :, 1], circles[None, :, 2]
    dx = np.maximum(np.maximum(boxes[:, None, 0] - x, 0.0), x - boxes[:, None, 2])
    dy = np.maximum(np.maximum(boxes[:, None, 1] - y, 0.0), y - boxes[:, None, 3])
    return np.asarray((dx * dx + dy * dy < r * r).any(axis=1))


def _away_angle(label: Label, circles: NDArray[np.float64]) -> float:
    """The direction pointing away from the bases crowding round the anchor (straight up when none does): a label
    pushed out of a crowd goes out of it on the nearest side, and the leader lines fan out without crossing."""
    if not len(circles):
        return -math.pi / 2
    reach = max(label.near, label.height) * 4
    d = np.hypot(label.x - circles[:, 0], label.y - circles[:, 1])
    close = (d > 0) & (d < reach)
    sx = float(np.sum((label.x - circles[close, 0]) / d[close]))
    sy = float(np.sum((label.y - circles[close, 1]) / d[close]))
    return math.atan2(sy, sx) if math.hypot(sx, sy) > 1e-6 else -math.pi / 2


def _ring_places(label: Label, away: float) -> NDArray[np.float64]:
    """(RINGS * ANGLES, 2) places round the anchor, nearest ring first; on each, the way out of the crowd first,
    then either side of it in turn."""
    step = label.height * 0.75
    turns = np.array([math.ceil(a / 2) * (1 if a % 2 else -1) for a in range(ANGLES)], dtype=np.float64)
    angles = away + turns * 2 * math.pi / ANGLES
    out = []
    for k in range(RINGS):
        d = label.near + label.height / 2 + step * k
        out.append(np.stack([label.x + np.cos(angles) * (d + label.width / 2), label.y + np.sin(angles) * d], axis=1))
    return np.concatenate(out)


def place_labels(labels: Sequence[Label], bounds: Bounds, bases: Sequence[Circle] = ()) -> list[Placed | None]:
    """Where each of ``labels`` goes inside ``bounds`` (x0, y0, x1, y1), in order (None: left out, no room)."""
    circles = np.array([(c.x, c.y, c.r) for c in bases], dtype=np.float64).reshape(-1, 3)
    ids = [c.id for c in bases]
    taken: list[NDArray[np.float64]] = []
    out: list[Placed | None] = [None] * len(labels)

    def others(label: Label) -> NDArray[np.float64]:
        return circles if label.own is None else circles[[i != label.own for i in ids]]

    def free(boxes: NDArray[np.float64], strict: bool, label: Label) -> NDArray[np.bool_]:
        ok = ~_hit_boxes(boxes, np.array(taken).reshape(-1, 4))
        return ok & ~_hit_circles(boxes, others(label)) if strict else ok

    # First every label that can have its own place, in order; then the others, each at the nearest free place.
    waiting = []
    for k, label in enumerate(labels):
        dy = -(label.height / 2 + label.pad * 1.5) if label.above else 0.0
        box = _boxes_at(label, np.array([[label.x, label.y + dy]]), bounds)
        if free(box, label.clear_of_bases, label)[0]:
            taken.append(box[0])
            out[k] = Placed(float(box[0, 0] + box[0, 2]) / 2, float(box[0, 1] + box[0, 3]) / 2, None)
        else:
            waiting.append(k)
    for k in waiting:
        label = labels[k]
        boxes = _boxes_at(label, _ring_places(label, _away_angle(label, circles)), bounds)
        strict = np.flatnonzero(free(boxes, True, label))
        loose = strict if len(strict) else np.flatnonzero(free(boxes, False, label))
        if not len(loose):
            continue
        box = boxes[loose[0]]
        taken.append(box)
        ex = min(max(label.x, box[0]), box[2])
        ey = min(max(label.y, box[1]), box[3])
        leader = (round(float(label.x), 2), round(float(label.y), 2), round(float(ex), 2), round(float(ey), 2))
        out[k] = Placed(float(box[0] + box[2]) / 2, float(box[1] + box[3]) / 2, leader)
    return out


def table_labels(
    bases: Sequence[Circle],
    unit_of: Mapping[str, str | None],
    names: Mapping[str, str],
    font: float,
    ids: bool = True,
) -> list[Label]:
    """The labels of a drawing of the table, as every screen draws them: each unit's name above its top model
    (clear of the bases), the topmost unit first, then (``ids``) each model's id on its base at 0.8 of ``font``.
    ``names``: unit names by id (a unit without one is named by its id)."""
    top: dict[str, tuple[float, float]] = {}
    for c in bases:
        unit = unit_of.get(c.id)
        if unit and (unit not in top or c.y - c.r < top[unit][1]):
            top[unit] = (c.x, c.y - c.r)
    ordered = sorted(top.items(), key=lambda kv: kv[1][1])
    out = [label_for(names.get(u) or u, x, y, font, above=True, clear_of_bases=True) for u, (x, y) in ordered]
    if ids:
        out += [label_for(c.id, c.x, c.y, font * ID_SHARE, near=c.r, own=c.id) for c in bases]
    return out
