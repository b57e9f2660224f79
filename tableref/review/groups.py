"""A unit moves as a unit: where each unit of the state before went, read from the shape of its group of models
among the bases of the next state, before any model is paired on its own.

Pure (models in, moves out); :mod:`tableref.review.timeline` pairs each model about where its unit's move takes
it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

import rules
from tableref.settings import ReviewSettings


@dataclass(frozen=True)
class GroupMove:
    """A unit's move as one rigid motion: turned by ``turn_deg`` about ``pivot_mm`` (from the table's x axis towards
    its y axis), then shifted by ``shift_mm``. The default is standing still."""

    shift_mm: tuple[float, float] = (0.0, 0.0)
    turn_deg: float = 0.0
    pivot_mm: tuple[float, float] = (0.0, 0.0)

    def places(self, xy_mm: np.ndarray) -> np.ndarray:
        """(N, 2) where the move takes the places ``xy_mm`` (N, 2)."""
        xy = np.asarray(xy_mm, dtype=np.float64).reshape(-1, 2)
        shift = np.asarray(self.shift_mm, dtype=np.float64)
        if self.turn_deg == 0.0:
            return np.asarray(xy + shift, dtype=np.float64)
        return np.asarray(turned(xy, self.turn_deg, np.asarray(self.pivot_mm)) + shift, dtype=np.float64)

    def place(self, x_mm: float, y_mm: float) -> tuple[float, float]:
        """Where the move takes the place (``x_mm``, ``y_mm``)."""
        if self.turn_deg == 0.0:
            # exactly the shift: a model carried with a unit that did not turn keeps its place in the unit to the bit
            return x_mm + self.shift_mm[0], y_mm + self.shift_mm[1]
        x, y = self.places(np.array([[x_mm, y_mm]]))[0]
        return float(x), float(y)

    def farthest_mm(self, xy_mm: np.ndarray) -> float:
        """The farthest the move takes any of the places ``xy_mm`` (N, 2); 0 for none."""
        xy = np.asarray(xy_mm, dtype=np.float64).reshape(-1, 2)
        return float(np.hypot(*(self.places(xy) - xy).T).max(initial=0.0))


def turned(xy_mm: np.ndarray, turn_deg: float, pivot_mm: np.ndarray) -> np.ndarray:
    """(N, 2) the places ``xy_mm`` (N, 2) turned by ``turn_deg`` about ``pivot_mm`` (2,)."""
    a = math.radians(turn_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return np.asarray((xy_mm - pivot_mm) @ rot.T + pivot_mm, dtype=np.float64)


def places_mm(models: Sequence[rules.Model]) -> np.ndarray:
    return np.array([[m.x_mm, m.y_mm] for m in models], dtype=np.float64).reshape(-1, 2)


def size_mm(m: rules.Model) -> float:
    a, b = m.base.semi_axes_mm
    return 2.0 * max(a, b)


def size_agreement(
    detected: Sequence[rules.Model], known: Sequence[rules.Model], settings: ReviewSettings
) -> tuple[np.ndarray, np.ndarray]:
    """(D, K) each: whether a detection's base is a known model's size (within ``size_tolerance_mm`` and twice their
    size doubts: a size read in doubt may be either of two alike), and whether it is near enough to be that model
    read a size off (within ``size_confusion_mm`` more)."""
    sizes_a = np.array([size_mm(m) for m in detected]).reshape(-1)
    sizes_b = np.array([size_mm(m) for m in known]).reshape(-1)
    doubt_a = np.array([m.base.size_sigma_mm for m in detected]).reshape(-1)
    doubt_b = np.array([m.base.size_sigma_mm for m in known]).reshape(-1)
    slack = settings.size_tolerance_mm + 2.0 * np.hypot(doubt_a[:, None], doubt_b[None, :])
    off = np.abs(sizes_a[:, None] - sizes_b[None, :])
    return off <= slack, off <= slack + settings.size_confusion_mm


def holders(
    detected: Sequence[rules.Model], known: Sequence[rules.Model], stays: Sequence[bool], settings: ReviewSettings
) -> np.ndarray:
    """(D,) per detection, the index of the nearest ``known`` model that ``stays`` where it stood (its picture
    unchanged) within ``still_reach_mm`` of it and of its size, or -1: such a base is that model."""
    held = np.full(len(detected), -1, dtype=np.intp)
    rows = [j for j, s in enumerate(stays) if s]
    if not rows or not detected:
        return held
    a, b = places_mm(detected), places_mm([known[j] for j in rows])
    apart = np.hypot(a[:, None, 0] - b[None, :, 0], a[:, None, 1] - b[None, :, 1])
    close = (apart <= settings.still_reach_mm) & size_agreement(detected, [known[j] for j in rows], settings)[1]
    for d in np.flatnonzero(close.any(axis=1)):
        held[d] = rows[int(np.argmin(np.where(close[d], apart[d], np.inf)))]
    return held


def held_by(held: np.ndarray, known: Sequence[rules.Model]) -> np.ndarray:
    """(D,) per detection, the unit of the ``known`` model that holds it (``held``, from :func:`holders`), or None."""
    return np.array([None if j < 0 else known[j].unit for j in held], dtype=object)


# Of the ways a turned unit lands the most models, at most this many (the closest first) are fitted exactly: they
# bound the work where a large unit lands its models in many ways about as well.
_READ_AT_MOST = 64
# A turn and a displacement (three unknowns) take any two models onto two detections as far apart as they are: only
# a third model landed says the unit is there.
_TURNED_LANDS_AT_LEAST = 3


def group_moves(
    detected: Sequence[rules.Model],
    known: Sequence[rules.Model],
    reach: Sequence[float],
    settings: ReviewSettings,
    held: np.ndarray | None = None,
    unit_reach: Sequence[float] | None = None,
) -> dict[str, GroupMove]:
    """Per unit, the one move that brings the most of its ``known`` models (their last places) onto detections of
    their size within ``group_fit_mm``, each model within its ``reach``; standing still counts as one such move. A
    move is a displacement, or a turn of up to ``group_turn_max_deg`` about the unit's centre with a displacement
    (:func:`turned_readings`), taken where it lands more models, or as many ``group_turn_closer_mm`` a model closer
    (a hexagon of seven turned by a sixth lands all under a displacement too, a few mm off). Units
    are placed best first, each detection taken by one unit only: a unit of models of one size moved a few base
    widths lands a model or two on its own old places, or on a neighbour's, under a wrong displacement, but all of
    them only under the right one. Units no move fits at least two models of are left out (each of their models is
    paired on its own); units that stood still are in, with no move. A detection ``held`` (D,) by a unit (see
    :func:`held_by`) counts for that unit only. With ``unit_reach`` (each model within its unit's reach, whether
    its picture changed or not), a move that lands more models that way, and at least ``group_still_share`` of
    the unit's, is taken instead."""
    a, b = places_mm(detected), places_mm(known)
    if len(a) == 0 or len(b) == 0:
        return {}
    alike = size_agreement(detected, known, settings)[1].T
    offsets = a[None, :, :] - b[:, None, :]  # (known, detected, 2)
    distance = np.hypot(offsets[..., 0], offsets[..., 1])
    allowed = alike.copy()
    if held is not None:
        owner = np.array([m.unit for m in known], dtype=object)
        allowed &= (held[None, :] == None) | (held[None, :] == owner[:, None])  # noqa: E711 (elementwise)
    within = allowed & (distance <= np.asarray(reach, dtype=np.float64)[:, None])
    free = None if unit_reach is None else allowed & (distance <= np.asarray(unit_reach, dtype=np.float64)[:, None])
    by_unit: dict[str, list[int]] = {}
    for j, m in enumerate(known):
        if m.unit is not None:
            by_unit.setdefault(m.unit, []).append(j)
    fits: list[tuple[int, float, str, GroupMove, np.ndarray]] = []
    for unit, rows in by_unit.items():
        members = np.array(rows)
        count, move, near = _unit_landing(b[members], a, offsets[members], within[members], settings)
        # a unit none of whose models stayed still is free already: its fit would be the same
        if free is not None and settings.group_still_share > 0 and not np.array_equal(free[members], within[members]):
            more = _unit_landing(b[members], a, offsets[members], free[members], settings)
            if more[0] > count and more[0] >= settings.group_still_share * len(members):
                count, move, near = more
        fits.append((count, -move.farthest_mm(b[members]), unit, move, near))
    taken = np.zeros(len(a), np.bool_)
    out: dict[str, GroupMove] = {}
    for count, _short, unit, move, near in sorted(fits, key=lambda f: (f[0], f[1]), reverse=True):
        free_near = near & ~taken[None, :]
        if count < 2 or free_near.any(axis=1).sum() < 2:
            continue
        taken |= free_near.any(axis=0)
        out[unit] = move
    return out


def _unit_landing(
    places: np.ndarray, seen_mm: np.ndarray, offsets: np.ndarray, allowed: np.ndarray, settings: ReviewSettings
) -> tuple[int, GroupMove, np.ndarray]:
    """The move of a unit whose models stood at ``places`` (M, 2) that lands the most of them within
    ``group_fit_mm`` of a detection ``seen_mm`` (D, 2) they are ``allowed`` (M, D) to be (``offsets`` (M, D, 2)
    from each model to each detection): (how many, the move, which detections each lands on (M, D))."""
    # displacements a millimetre apart fit alike: each tried once
    tried = np.unique(np.round(np.concatenate([np.zeros((1, 2)), offsets[allowed]])), axis=0)
    count, shift, near = best_landing(places, seen_mm, allowed, tried, settings.group_fit_mm)
    move = GroupMove((float(shift[0]), float(shift[1])))
    # a unit turned as well as shifted (a wheel) lands few of its models under any displacement alone; a unit packed
    # round its middle (a ring, a hexagon) turned by a sixth lands all of them under a displacement too, a few mm off
    packed = count >= _TURNED_LANDS_AT_LEAST and move.farthest_mm(places) > settings.still_reach_mm
    if count < len(places) or packed:
        turns = turned_readings(places, seen_mm, allowed, settings)
        if turns and turns[0][0] > count:
            count, _off, move, near = turns[0]
        elif turns and turns[0][0] == count:
            shifted = _shifted_exactly(places, seen_mm, allowed, move, near, settings.group_fit_mm)
            closer = [t for t in turns if t[1] < shifted[1] - settings.group_turn_closer_mm * count]
            if closer:
                count, _off, move, near = closer[0]
    return count, move, near


def _shifted_exactly(
    places: np.ndarray, seen_mm: np.ndarray, allowed: np.ndarray, tried: GroupMove, near: np.ndarray, fit_mm: float
) -> tuple[int, float, GroupMove, np.ndarray]:
    """The displacement that brings the models at ``places`` (M, 2) closest (least squares) onto the detections
    ``seen_mm`` (D, 2) they land ``near`` (M, D) under the displacement ``tried``: (how many it lands, how far off in
    all, the move, which detections each lands on), as :func:`turned_readings` gives its turns (the displacements
    tried are whole millimetres)."""
    onto = _onto(tried.places(places), seen_mm, near)
    rows = np.flatnonzero(onto >= 0)
    shift = (seen_mm[onto[rows]] - places[rows]).mean(axis=0)
    move = GroupMove((float(shift[0]), float(shift[1])))
    count, off, landed = _landing(move.places(places), seen_mm, allowed, fit_mm)
    return count, off, move, landed


def turned_readings(
    places: np.ndarray, seen_mm: np.ndarray, allowed: np.ndarray, settings: ReviewSettings
) -> list[tuple[int, float, GroupMove, np.ndarray]]:
    """The turn (about the centre of the models at ``places`` (M, 2), not 0, at most ``group_turn_max_deg`` either
    way) and displacement that land the most of them within ``group_fit_mm`` of a detection ``seen_mm`` (D, 2) they
    are ``allowed`` (M, D) to be: each way of landing the most of them as (how many, how far off in all, the move,
    which detections each lands on (M, D)), the closest first; none where no turn is tried (no turn allowed, or the
    models too close together for a turn to move any of them off its fit) or none lands three: a turn and a
    displacement take any two models onto any two detections as far apart.

    Turns are tried a step apart, each with the displacements that take one turned model onto a detection; each way
    of landing the most models (which model on which detection) is then fitted exactly (:func:`_fitted`), and the
    closest landing of those wins, the least move of as close ones: a block missing a few models lands as many of
    them one place along its ranks, a few mm off only where the turn's step falls."""
    fit = settings.group_fit_mm
    centre = places.mean(axis=0)
    radius = float(np.hypot(*(places - centre).T).max())
    pairs = np.argwhere(allowed)
    if settings.group_turn_max_deg <= 0.0 or radius <= fit / 2.0 or not pairs.size:
        return []
    # a step moves the farthest model half the fit: the nearest turn tried lands it within a quarter of the fit
    step_deg = math.degrees(fit / (2.0 * radius))
    count_each = int(settings.group_turn_max_deg // step_deg)
    angles = step_deg * np.concatenate([np.arange(1, count_each + 1), -np.arange(1, count_each + 1)])
    shapes = np.stack([turned(places, float(t), centre) for t in angles])  # (A, M, 2)
    tried_each = [np.unique(np.round(seen_mm[pairs[:, 1]] - shape[pairs[:, 0]]), axis=0) for shape in shapes]
    tried = np.concatenate(tried_each)
    which = np.repeat(np.arange(len(angles)), [len(t) for t in tried_each])
    counts, offs = _landings(shapes, seen_mm, allowed, tried, fit, which)
    most = int(counts.max())
    if most < _TURNED_LANDS_AT_LEAST:
        return []
    readings: dict[tuple[int, ...], tuple[int, float, GroupMove, np.ndarray]] = {}
    for k in np.flatnonzero(counts == most)[np.argsort(offs[counts == most], kind="stable")][:_READ_AT_MOST]:
        move = GroupMove(
            (float(tried[k][0]), float(tried[k][1])), float(angles[which[k]]), (float(centre[0]), float(centre[1]))
        )
        landed = move.places(places)
        count, off, near = _landing(landed, seen_mm, allowed, fit)
        onto = _onto(landed, seen_mm, near)
        if tuple(onto) in readings:
            continue
        fitted = _fitted(places, seen_mm, near, onto, centre)
        again = _landing(fitted.places(places), seen_mm, allowed, fit)
        if again[0] >= count:
            move, (count, off, near) = fitted, again
        # the least move only where the landings are equally close (models placed exactly)
        moved = math.sqrt(float(np.mean(np.square(move.places(places) - places))))
        readings[tuple(onto)] = (count, off + 1e-6 * moved, move, near)
    ranked = sorted(readings.values(), key=lambda r: (-r[0], r[1]))
    return [(count, off, move, near) for count, off, move, near in ranked]


def _onto(landed_mm: np.ndarray, seen_mm: np.ndarray, near: np.ndarray) -> np.ndarray:
    """(M,) the nearest detection of ``seen_mm`` (D, 2) each model at ``landed_mm`` (M, 2) lands ``near`` (M, D);
    -1 where none."""
    apart = np.hypot(*(landed_mm[:, None, :] - seen_mm[None, :, :]).transpose(2, 0, 1))
    return np.where(near.any(axis=1), np.argmin(np.where(near, apart, np.inf), axis=1), -1)


def _fitted(
    places: np.ndarray, seen_mm: np.ndarray, near: np.ndarray, onto: np.ndarray, centre: np.ndarray
) -> GroupMove:
    """The turn about ``centre`` and displacement that bring the models at ``places`` (M, 2) closest (least squares)
    onto the detections of ``seen_mm`` (D, 2) they are paired ``onto`` (M,; -1: none; at least two paired)."""
    rows = np.flatnonzero(onto >= 0)
    p, q = places[rows] - centre, seen_mm[onto[rows]]
    pc, qc = p - p.mean(axis=0), q - q.mean(axis=0)
    turn = math.atan2(float(np.sum(pc[:, 0] * qc[:, 1] - pc[:, 1] * qc[:, 0])), float(np.sum(pc * qc)))
    rot = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
    shift = q.mean(axis=0) - (rot @ p.mean(axis=0) + centre)
    return GroupMove((float(shift[0]), float(shift[1])), math.degrees(turn), (float(centre[0]), float(centre[1])))


def _landings(
    shapes: np.ndarray, seen_mm: np.ndarray, allowed: np.ndarray, tried_mm: np.ndarray, fit_mm: float, which: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(T,) each: how many of the models at ``shapes[which]`` (S, M, 2) displaced by ``tried_mm`` (T, 2) land within
    ``fit_mm`` of a detection ``seen_mm`` (D, 2) they are ``allowed`` (M, D) to be, and how far off (mm, summed
    over the models: the nearest such detection, ``fit_mm`` for a model landed on none). Worked in slices of
    displacements, so that memory stays bounded however many models and detections there are."""
    # a detection no model may land on changes neither count: only the others are worked through
    cols = allowed.any(axis=0)
    seen_mm, allowed = seen_mm[cols], allowed[:, cols]
    m, d = shapes.shape[1], len(seen_mm)
    if d == 0:
        return np.zeros(len(tried_mm), np.intp), np.full(len(tried_mm), fit_mm * m)
    step = max(1, 2_000_000 // max(1, m * d))
    counts, offs = [], []
    for start in range(0, len(tried_mm), step):
        part, of = tried_mm[start : start + step], which[start : start + step]
        landed = shapes[of][:, :, None, :] + part[:, None, None, :] - seen_mm[None, None, :, :]
        apart = np.hypot(landed[..., 0], landed[..., 1])
        near = (apart <= fit_mm) & allowed[None, :, :]
        counts.append(near.any(axis=2).sum(axis=1))
        offs.append(np.where(near, apart, fit_mm).min(axis=2).sum(axis=1))
    return np.concatenate(counts), np.concatenate(offs)


def _landing(
    landed_mm: np.ndarray, seen_mm: np.ndarray, allowed: np.ndarray, fit_mm: float
) -> tuple[int, float, np.ndarray]:
    """How many of the models at ``landed_mm`` (M, 2) land (as :func:`_landings`), how far off, and which detections
    each lands on (M, D)."""
    apart = np.hypot(*(landed_mm[:, None, :] - seen_mm[None, :, :]).transpose(2, 0, 1))
    near = (apart <= fit_mm) & allowed
    return int(near.any(axis=1).sum()), float(np.where(near, apart, fit_mm).min(axis=1).sum()), near


def best_landing(
    places_mm: np.ndarray, seen_mm: np.ndarray, allowed: np.ndarray, tried_mm: np.ndarray, fit_mm: float
) -> tuple[int, np.ndarray, np.ndarray]:
    """Of the displacements ``tried_mm`` (T, 2), the one that lands the most of the models at ``places_mm`` (M, 2)
    within ``fit_mm`` of a detection ``seen_mm`` (D, 2) they are ``allowed`` (M, D) to be, the closest landing of
    those: (how many, the displacement (2,), which detections each lands on (M, D))."""
    counts, offs = _landings(places_mm[None], seen_mm, allowed, tried_mm, fit_mm, np.zeros(len(tried_mm), np.intp))
    # more models landed first; of as many, the closer landing: three bases of a unit packed in a triangle land on a
    # shape alike under a shorter wrong displacement too, but a few mm off
    rank = counts - (offs + 1e-6 * np.hypot(tried_mm[:, 0], tried_mm[:, 1])) / (fit_mm * (len(places_mm) + 1))
    k = int(np.argmax(rank))
    return int(counts[k]), tried_mm[k], _landing(places_mm + tried_mm[k], seen_mm, allowed, fit_mm)[2]
