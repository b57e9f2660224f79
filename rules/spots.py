"""Free spots for one base: where a model could stand in base contact with an enemy unit, or in cohesion with its
own, without overlapping any base or solid terrain, wholly on the table, and within its reach.

Pure geometry on one table state. The melee procedure (:mod:`rules.melee`) asks it where each model could have
gone, both to judge a move and to propose one, so that what it proposes passes what it judges.

Candidate spots are the places where the base just touches a base of the target: a ring of directions around
each target base, and the pockets where it touches a target base and a neighbour at once (round bases), which are
the tightest places in a crowded melee. The nearest legal candidate whose shortest legal path is within reach is
the spot.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import shapely
from numpy.typing import NDArray

from rules.geometry import BaseArrays, FloatArray, IntArray
from rules.lines import EPS_MM
from rules.profile import RuleProfile
from rules.state import BLOCKING_KINDS, TableState, Unit
from rules.travel import ModelPaths

BoolArray = NDArray[np.bool_]

# 72 directions, 5 degrees apart: between two touching 25 mm bases the free arc of a third is wider than that,
# and the pockets below catch the tightest places exactly.
_RING_ANGLES = 72
_RING_THETA = np.arange(_RING_ANGLES) * (2.0 * np.pi / _RING_ANGLES)
# Bisection steps that put an oval base at a given gap along a ray: 2^-40 of a few centimetres.
_BISECT_STEPS = 40
# At most this many candidates' paths are measured per spot, nearest first: a spot farther down the list is not
# offered, so a search never runs long (a judge then finds no spot, and accuses no one).
_MAX_PATHS = 256
# Rings for a spot in cohesion only: touching the anchor, half way out, and just inside the cohesion range (a
# spot exactly on the line would be legal by a hair).
_COHESION_FRACTIONS = (0.0, 0.5, 0.95)
# Base outlines against terrain, as for the placement check.
_QUAD_SEGS = 32


@dataclass(frozen=True)
class Layout:
    """A table state with the lookups a spot search needs: bases as arrays, model index by id, unit of each model."""

    state: TableState
    bases: BaseArrays
    index: dict[str, int]
    unit_of: tuple[str | None, ...]
    units: dict[str, Unit]

    @staticmethod
    def of(state: TableState) -> Layout:
        return Layout(
            state,
            BaseArrays.from_state(state),
            {m.id: n for n, m in enumerate(state.models)},
            tuple(m.unit for m in state.models),
            {u.id: u for u in state.units},
        )

    def members(self, *unit_ids: str) -> IntArray:
        """Indices of the models of ``unit_ids``, in state order."""
        wanted = set(unit_ids)
        return np.array([n for n, u in enumerate(self.unit_of) if u in wanted], dtype=np.intp)

    def enemies(self, a: str | None, b: str | None) -> bool:
        """Whether units ``a`` and ``b`` belong to different players (both named)."""
        if a is None or b is None or a not in self.units or b not in self.units:
            return False
        pa, pb = self.units[a].player, self.units[b].player
        return pa is not None and pb is not None and pa != pb

    def enemy_units(self, unit_id: str) -> list[str]:
        """The units of other players than ``unit_id``'s, in state order."""
        return [u for u in self.units if self.enemies(unit_id, u)]

    def leader(self, unit_id: str | None) -> int | None:
        """Index of the unit's leader, None when it has none or it is not in the state. A unit of one model that
        names no leader is led by that model: the melee procedure starts from a unit leader, and it has no other."""
        unit = self.units.get(unit_id or "")
        if unit is None:
            return None
        if unit.leader is None:
            sole = self.members(unit.id)
            return int(sole[0]) if len(sole) == 1 else None
        return self.index.get(unit.leader)


@dataclass(frozen=True)
class SpotQuery:
    """Where model ``mover`` (an id of ``world``) may go: from ``start_mm``, no farther than ``reach_mm`` along its
    shortest legal path (None: no limit), passing through the models ``passable`` (they moved in an order nobody
    saw). Its own place in ``world`` does not count: it is the one to place."""

    world: Layout
    mover: str
    start_mm: tuple[float, float]
    reach_mm: float | None
    passable: frozenset[str] = frozenset()


def _probes(bases: BaseArrays, mover: int, centres: FloatArray, others: IntArray) -> BaseArrays:
    """Bases ``others`` (P,) at their heights followed by P copies of base ``mover`` at ``centres`` (P, 2) on the
    table (a spot is a place on the table, out of solid terrain), each measured exactly."""
    n = len(centres)
    idx = np.concatenate([others, np.full(n, mover, dtype=np.intp)])
    level = None if bases.level_mm is None else np.concatenate([bases.level_mm[others], np.zeros(n)])
    return BaseArrays(
        np.concatenate([bases.center_mm[others], centres]),
        bases.axes_mm[idx],
        bases.rotation_rad[idx],
        bases.round[idx],
        np.zeros(len(idx)),
        np.zeros((len(idx), 2)),
        level,
    )


def _pair_gaps(bases: BaseArrays, mover: int, centres: FloatArray, others: IntArray) -> FloatArray:
    """Gaps (P,) from base ``mover`` at ``centres[p]`` to base ``others[p]``."""
    n = len(centres)
    probes = _probes(bases, mover, centres, others)
    return probes.gaps_mm(np.arange(n, 2 * n, dtype=np.intp), np.arange(n, dtype=np.intp))


def probe_gaps(bases: BaseArrays, mover: int, centres: FloatArray, others: IntArray, margin_mm: float) -> FloatArray:
    """Gaps (K, M) from base ``mover`` moved to each of ``centres`` (K, 2) to bases ``others`` (M,): exact where
    they may be within ``margin_mm``, and beyond it a lower bound that is beyond it too."""
    d = centres[:, None, :] - bases.center_mm[others][None, :, :]
    circ = bases.circumradius_mm
    out = np.hypot(d[..., 0], d[..., 1]) - circ[mover] - circ[others][None, :]
    rows, cols = np.nonzero(out <= margin_mm)
    if len(rows):
        out[rows, cols] = _pair_gaps(bases, mover, centres[rows], others[cols])
    return np.asarray(out, dtype=np.float64)


def _rings(bases: BaseArrays, mover: int, anchors: IntArray, gap_mm: float) -> FloatArray:
    """Centres (A * R, 2) that put base ``mover`` at ``gap_mm`` from each anchor base, in R directions each."""
    if len(anchors) == 0:
        return np.empty((0, 2))
    # Rings are drawn in plan: a spot's distance to an anchor on a terrain top is judged in 3-D later (_legal).
    bases = replace(bases, level_mm=None)
    anchor = np.repeat(anchors, _RING_ANGLES)
    theta = np.tile(_RING_THETA, len(anchors))
    ray = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    circ = bases.circumradius_mm
    both_round = bases.round[anchor] & bases.round[mover]
    distance = bases.axes_mm[anchor, 0] + bases.axes_mm[mover, 0] + gap_mm
    oval = np.flatnonzero(~both_round)
    if len(oval):
        # Along a ray from the anchor's centre the gap grows with the distance: bisect for the wanted one.
        lo = np.zeros(len(oval))
        hi = circ[anchor[oval]] + circ[mover] + gap_mm + 1.0
        for _ in range(_BISECT_STEPS):
            mid = (lo + hi) / 2.0
            centres = bases.center_mm[anchor[oval]] + mid[:, None] * ray[oval]
            short = _pair_gaps(bases, mover, centres, anchor[oval]) < gap_mm
            lo, hi = np.where(short, mid, lo), np.where(short, hi, mid)
        distance[oval] = hi
    return np.asarray(bases.center_mm[anchor] + distance[:, None] * ray, dtype=np.float64)


def _pockets(bases: BaseArrays, mover: int, targets: IntArray, skip: int) -> FloatArray:
    """Centres where round base ``mover`` touches a round target base and another round base at once."""
    if not bases.round[mover] or len(targets) == 0:
        return np.empty((0, 2))
    r = bases.axes_mm[:, 0]
    n = len(bases)
    t = np.repeat(targets, n)
    o = np.tile(np.arange(n, dtype=np.intp), len(targets))
    keep = bases.round[t] & bases.round[o] & (t != o) & (o != skip)
    t, o = t[keep], o[keep]
    r1, r2 = r[t] + r[mover], r[o] + r[mover]
    d = bases.center_mm[o] - bases.center_mm[t]
    dist = np.hypot(d[:, 0], d[:, 1])
    meet = (dist > 0) & (dist <= r1 + r2) & (dist >= np.abs(r1 - r2))
    t, r1, r2, d, dist = t[meet], r1[meet], r2[meet], d[meet], dist[meet]
    along = (r1**2 - r2**2 + dist**2) / (2.0 * dist)
    across = np.sqrt(np.maximum(r1**2 - along**2, 0.0))
    unit = d / dist[:, None]
    normal = np.stack([-unit[:, 1], unit[:, 0]], axis=1)
    foot = bases.center_mm[t] + along[:, None] * unit
    return np.asarray(np.concatenate([foot + across[:, None] * normal, foot - across[:, None] * normal]))


def cohesive_at(layout: Layout, mover: int, centres: FloatArray, profile: RuleProfile) -> BoolArray:
    """Whether model ``mover`` would be in cohesion with its unit at each of ``centres`` (K, 2): within range of
    its leader (``leader``), or of as many unit-mates as it needs (``chain``)."""
    coh = profile.cohesion
    ok = np.ones(len(centres), dtype=bool)
    unit = layout.unit_of[mover]
    if coh.mode == "none" or unit is None:
        return ok
    group = layout.members(unit)
    mates = group[group != mover]
    if len(mates) == 0:
        return ok
    if coh.mode == "leader":
        leader = layout.leader(unit)
        if leader is None or leader == mover:
            return ok
        mates = np.array([leader], dtype=np.intp)
    gaps = probe_gaps(layout.bases, mover, centres, mates, coh.range_mm)
    need = 1 if coh.mode == "leader" else min(coh.neighbours_needed(len(group)), len(mates))
    return np.asarray((gaps <= coh.range_mm + EPS_MM).sum(axis=1) >= need)


def _placeable(layout: Layout, mover: int, centres: FloatArray) -> BoolArray:
    """Whether base ``mover`` fits at each of ``centres``: wholly on the table and out of solid terrain."""
    ext = layout.bases.extent_mm()[mover]
    table = layout.state.table
    x, y = centres[:, 0], centres[:, 1]
    ok = (x >= ext[0]) & (x <= table.width_mm - ext[0]) & (y >= ext[1]) & (y <= table.depth_mm - ext[1])
    solid = [shapely.Polygon(t.polygon) for t in layout.state.terrain if t.kind in BLOCKING_KINDS]
    rows = np.flatnonzero(ok)
    if solid and len(rows):
        probes = _probes(layout.bases, mover, centres[rows], np.empty(0, dtype=np.intp))
        outline = probes.polygons(np.arange(len(rows), dtype=np.intp), _QUAD_SEGS)
        for poly in solid:
            inside = shapely.intersects(outline, poly) & ~shapely.touches(outline, poly)
            ok[rows[inside]] = False
    return np.asarray(ok, dtype=bool)


def _legal(layout: Layout, mover: int, centres: FloatArray, target: str | None, profile: RuleProfile) -> BoolArray:
    """Whether base ``mover`` may stand at each of ``centres``: overlapping no base, touching a model of unit
    ``target`` and no other enemy unit (when multiple contact is forbidden) or, without a target, touching no enemy,
    in cohesion, on the table and out of solid terrain."""
    if len(centres) == 0:
        return np.zeros(0, dtype=bool)
    others = np.array([n for n in range(len(layout.unit_of)) if n != mover], dtype=np.intp)
    contact = profile.contact.gap_mm + EPS_MM
    ok = np.ones(len(centres), dtype=bool)
    if len(others):
        gaps = probe_gaps(layout.bases, mover, centres, others, contact)
        ok &= (gaps >= -EPS_MM).all(axis=1)
        touch = gaps <= contact
        mine = layout.unit_of[mover]
        unit = [layout.unit_of[n] for n in others]
        enemy = np.array([layout.enemies(mine, u) for u in unit], dtype=bool)
        if target is None:
            ok &= ~touch[:, enemy].any(axis=1)
        else:
            aimed = np.array([u == target for u in unit], dtype=bool)
            ok &= touch[:, aimed].any(axis=1)
            if profile.multi_contact.enabled:
                ok &= ~touch[:, enemy & ~aimed].any(axis=1)
    elif target is not None:
        return np.zeros(len(centres), dtype=bool)
    rows = np.flatnonzero(ok)
    ok[rows] = cohesive_at(layout, mover, centres[rows], profile) & _placeable(layout, mover, centres[rows])
    return ok


def _nearest_reachable(query: SpotQuery, centres: FloatArray, profile: RuleProfile) -> tuple[float, float] | None:
    """The candidate nearest to the start whose shortest legal path is within reach (None: none of the first
    :data:`_MAX_PATHS` of them)."""
    start = np.asarray(query.start_mm, dtype=np.float64)
    straight = np.hypot(*(centres - start).T)
    order = np.argsort(straight, kind="stable")
    if query.reach_mm is None:
        return (float(centres[order[0], 0]), float(centres[order[0], 1])) if len(order) else None
    order = order[straight[order] <= query.reach_mm + EPS_MM][:_MAX_PATHS]
    layout = query.world
    mover = layout.state.models[layout.index[query.mover]]
    unit = layout.units.get(mover.unit or "")
    # Obstacles farther than the reach cannot touch a path within it, so the bound is the reach itself.
    bound = query.reach_mm + 1.0
    paths = ModelPaths(mover, query.start_mm, unit, layout.state, layout.bases, profile, bound, set(query.passable))
    for k in order:
        end = (float(centres[k, 0]), float(centres[k, 1]))
        if paths.length_mm(end) <= query.reach_mm + EPS_MM:
            return end
    return None


def contact_spot(query: SpotQuery, target: str, profile: RuleProfile) -> tuple[float, float] | None:
    """The nearest free spot (x_mm, y_mm) in base contact with unit ``target`` that the mover can reach, in
    cohesion with its unit and touching no other enemy unit; None when there is none."""
    layout = query.world
    mover = layout.index[query.mover]
    targets = layout.members(target)
    centres = np.concatenate([_rings(layout.bases, mover, targets, 0.0), _pockets(layout.bases, mover, targets, mover)])
    legal = _legal(layout, mover, centres, target, profile)
    return _nearest_reachable(query, centres[legal], profile)


def cohesion_spot(query: SpotQuery, profile: RuleProfile) -> tuple[float, float] | None:
    """The nearest free spot (x_mm, y_mm) in cohesion with the mover's unit, touching no enemy, that it can reach;
    None when there is none."""
    layout = query.world
    mover = layout.index[query.mover]
    unit = layout.unit_of[mover]
    group = layout.members(unit) if unit is not None else np.empty(0, dtype=np.intp)
    anchors = group[group != mover]
    leader = layout.leader(unit)
    if profile.cohesion.mode == "leader" and leader is not None and leader != mover:
        anchors = np.array([leader], dtype=np.intp)
    rings = [_rings(layout.bases, mover, anchors, f * profile.cohesion.range_mm) for f in _COHESION_FRACTIONS]
    centres = np.concatenate([np.empty((0, 2)), *rings])
    legal = _legal(layout, mover, centres, None, profile)
    return _nearest_reachable(query, centres[legal], profile)
