"""Shortest paths of a base among obstacles, on a visibility graph.

A base of radius r moving among obstacles is a point moving among the obstacles grown by r. The shortest path
between two points around polygons runs straight between polygon corners, so it lies on the visibility graph of
the corners. Grown bases are polygons inscribed in their true outlines, so the path found is never longer than
the true one: a lower bound, which is the side a referee must err on before calling a move too long.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import shapely
from numpy.typing import NDArray
from shapely.geometry.base import BaseGeometry

from rules.geometry import BaseArrays
from rules.profile import RuleProfile
from rules.state import Model, TableState, Unit

MM_PER_INCH = 25.4

# Ability names a unit may list in its "abilities" that change how its models travel.
FLY = "fly"
THROUGH_MODELS = "through_models"
CLIMB = "climb"

# Obstacles are shrunk by this much before testing whether a straight leg crosses them, so that legs running
# along an obstacle's edge or through its corners count as free.
_GRAZE_MM = 1e-3
# Grown obstacles are drawn with 4 * 4 corners: a coarse polygon inside the true outline keeps the graph small
# and the path a lower bound.
_OBSTACLE_QUAD_SEGS = 4


def _corners(geometry: BaseGeometry) -> NDArray[np.float64]:
    """(K, 2) ring vertices of a polygon or multipolygon (exterior and holes, closing points dropped)."""
    rings = []
    for poly in getattr(geometry, "geoms", [geometry]):
        if poly.is_empty:
            continue
        rings.append(np.asarray(poly.exterior.coords)[:-1])
        rings.extend(np.asarray(r.coords)[:-1] for r in poly.interiors)
    return np.concatenate(rings) if rings else np.empty((0, 2))


def shortest_path_mm(
    start_mm: Sequence[float], end_mm: Sequence[float], obstacles: Sequence[BaseGeometry], bound_mm: float
) -> float:
    """Length of the shortest path from ``start_mm`` to ``end_mm`` (each (2,)) that does not enter any obstacle.

    Obstacles holding the start or the end are ignored (a base that ends in contact, or slightly over, is a
    placement matter, not a path matter). Obstacles too far away to touch any path of at most ``bound_mm`` are
    ignored too; returns ``inf`` when no path exists.
    """
    start = shapely.Point(start_mm)
    end = shapely.Point(end_mm)
    straight = float(start.distance(end))
    if not obstacles:
        return straight
    geoms = np.asarray(obstacles, dtype=object)
    # Any path touching obstacle O is at least d(start, O) + d(O, end) long.
    near = (shapely.distance(geoms, start) + shapely.distance(geoms, end)) <= bound_mm
    holds_end = shapely.contains(geoms, start) | shapely.contains(geoms, end)
    relevant = geoms[near & ~holds_end]
    if len(relevant) == 0:
        return straight
    blocker = shapely.union_all(relevant)
    core = shapely.buffer(blocker, -_GRAZE_MM)
    shapely.prepare(core)
    if not shapely.intersects(core, shapely.LineString([start_mm, end_mm])):
        return straight
    nodes = np.concatenate([np.asarray([start_mm, end_mm], dtype=np.float64), _corners(blocker)])
    n = len(nodes)
    a, b = np.triu_indices(n, k=1)
    legs = shapely.linestrings(np.stack([nodes[a], nodes[b]], axis=1))
    free = ~shapely.intersects(core, legs)
    weight = np.full((n, n), np.inf)
    length = np.hypot(*(nodes[b] - nodes[a]).T)
    weight[a[free], b[free]] = length[free]
    weight[b[free], a[free]] = length[free]
    return _dijkstra(weight, 0, 1)


def _dijkstra(weight: NDArray[np.float64], source: int, target: int) -> float:
    """Shortest distance on a dense (n, n) weight matrix (inf: no edge)."""
    n = weight.shape[0]
    dist = np.full(n, np.inf)
    dist[source] = 0.0
    done = np.zeros(n, dtype=bool)
    for _ in range(n):
        open_dist = np.where(done, np.inf, dist)
        k = int(np.argmin(open_dist))
        if not np.isfinite(open_dist[k]) or k == target:
            break
        done[k] = True
        dist = np.minimum(dist, dist[k] + weight[k])
    return float(dist[target])


def segments_crossed(start_mm: Sequence[float], end_mm: Sequence[float], areas: Sequence[BaseGeometry]) -> int:
    """How many separate pieces of ``areas`` the straight leg from start to end passes through."""
    if not areas:
        return 0
    line = shapely.LineString([start_mm, end_mm])
    inside = shapely.intersection(line, shapely.union_all(np.asarray(areas, dtype=object)))
    return sum(1 for g in getattr(inside, "geoms", [inside]) if not g.is_empty and g.length > _GRAZE_MM)


def _inradius_mm(m: Model) -> float:
    return min(m.base.semi_axes_mm)


def _obstacles(
    state: TableState, bases: BaseArrays, exclude: set[str], grow_mm: float, models: bool, kinds: tuple[str, ...]
) -> list[BaseGeometry]:
    out: list[BaseGeometry] = []
    if models:
        idx = np.array([i for i, m in enumerate(state.models) if m.id not in exclude], dtype=np.intp)
        if len(idx):
            out.extend(shapely.buffer(bases.polygons(idx, _OBSTACLE_QUAD_SEGS), grow_mm, quad_segs=_OBSTACLE_QUAD_SEGS))
    for t in state.terrain:
        if t.kind in kinds:
            out.append(shapely.buffer(shapely.Polygon(t.polygon), grow_mm, quad_segs=_OBSTACLE_QUAD_SEGS))
    return out


def _without_terrain(state: TableState, terrain_ids: set[str]) -> TableState:
    if not terrain_ids:
        return state
    return replace(state, terrain=tuple(t for t in state.terrain if t.id not in terrain_ids))


def model_path_mm(
    mover: Model,
    start_mm: tuple[float, float],
    end_mm: tuple[float, float],
    unit: Unit | None,
    world: TableState,
    bases: BaseArrays,
    profile: RuleProfile,
    bound_mm: float,
    passable: set[str],
) -> float:
    """The shortest legal path of model ``mover`` (its base) from ``start_mm`` to ``end_mm`` among the models and
    terrain of ``world`` (``bases``: its bases as arrays), under the abilities of its ``unit``: around every other
    model and solid terrain, except the models in ``passable``; ``inf`` when no path exists."""
    abilities = set(unit.abilities) if unit else set()
    straight = math.hypot(end_mm[0] - start_mm[0], end_mm[1] - start_mm[1])
    if FLY in abilities:
        return straight
    # Grown by the mover's radius less the contact tolerance, so that ending in base contact is never blocked.
    grow = max(_inradius_mm(mover) - profile.contact.gap_mm, 0.0)
    end = shapely.Point(end_mm)
    climb_cost = 0.0
    climbed: set[str] = set()
    if CLIMB in abilities and unit is not None and unit.move_in is not None:
        for t in world.terrain:
            tall = t.height_mm is not None and t.height_mm >= profile.movement.climb_min_height_mm
            if t.kind == "solid" and tall and shapely.Polygon(t.polygon).contains(end):
                climbed.add(t.id)
                climb_cost = profile.movement.climb_move_fraction * unit.move_in * MM_PER_INCH
    terrain = _without_terrain(world, climbed)
    if THROUGH_MODELS in abilities:
        solid = _obstacles(terrain, bases, set(), grow, models=False, kinds=("solid",))
        # Either around dense terrain, or straight through it paying for each separate piece crossed.
        dense_grown = _obstacles(terrain, bases, set(), grow, models=False, kinds=("dense",))
        around = shortest_path_mm(start_mm, end_mm, solid + dense_grown, bound_mm)
        dense = [shapely.Polygon(t.polygon) for t in terrain.terrain if t.kind == "dense"]
        through = shortest_path_mm(start_mm, end_mm, solid, bound_mm)
        if through == straight:
            through += profile.movement.dense_segment_cost_mm * segments_crossed(start_mm, end_mm, dense)
        return min(around, through) + climb_cost
    obstacles = _obstacles(terrain, bases, passable | {mover.id}, grow, models=True, kinds=("solid",))
    return shortest_path_mm(start_mm, end_mm, obstacles, bound_mm) + climb_cost


def _dijkstra_all(weight: NDArray[np.float64], source: int) -> NDArray[np.float64]:
    """Shortest distances (n,) from ``source`` to every node of a dense (n, n) weight matrix (inf: no edge)."""
    n = weight.shape[0]
    dist = np.full(n, np.inf)
    dist[source] = 0.0
    done = np.zeros(n, dtype=bool)
    for _ in range(n):
        open_dist = np.where(done, np.inf, dist)
        k = int(np.argmin(open_dist))
        if not np.isfinite(open_dist[k]):
            break
        done[k] = True
        dist = np.minimum(dist, dist[k] + weight[k])
    return dist


class PathsFrom:
    """Shortest paths from one start to many ends among fixed obstacles, each as :func:`shortest_path_mm` finds it
    whenever it is at most ``bound_mm`` long (beyond that, a length beyond ``bound_mm`` too).

    The visibility graph of the obstacles' corners and the distances from the start to each corner are found once;
    each end then costs one set of legs to the corners. Obstacles farther than ``bound_mm`` from the start cannot
    touch a path within it and are left out; an end inside an obstacle is measured on its own.
    """

    def __init__(self, start_mm: tuple[float, float], obstacles: Sequence[BaseGeometry], bound_mm: float) -> None:
        self.start_mm = start_mm
        self.obstacles = obstacles
        self.bound_mm = bound_mm
        start = shapely.Point(start_mm)
        geoms = np.asarray(obstacles, dtype=object)
        if len(geoms):
            geoms = geoms[(shapely.distance(geoms, start) <= bound_mm) & ~shapely.contains(geoms, start)]
        self.relevant = geoms
        self.core: BaseGeometry | None = None
        if len(geoms) == 0:
            return
        blocker = shapely.union_all(geoms)
        self.core = shapely.buffer(blocker, -_GRAZE_MM)
        shapely.prepare(self.core)
        self.nodes = np.concatenate([np.asarray([start_mm], dtype=np.float64), _corners(blocker)])
        n = len(self.nodes)
        a, b = np.triu_indices(n, k=1)
        free = ~shapely.intersects(self.core, shapely.linestrings(np.stack([self.nodes[a], self.nodes[b]], axis=1)))
        weight = np.full((n, n), np.inf)
        length = np.hypot(*(self.nodes[b] - self.nodes[a]).T)
        weight[a[free], b[free]] = length[free]
        weight[b[free], a[free]] = length[free]
        self.dist = _dijkstra_all(weight, 0)

    def length_mm(self, end_mm: tuple[float, float]) -> tuple[float, bool]:
        """The shortest path's length to ``end_mm``, and whether it is the straight leg."""
        end = shapely.Point(end_mm)
        straight = float(shapely.Point(self.start_mm).distance(end))
        if self.core is None:
            return straight, True
        if shapely.contains(self.relevant, end).any():
            length = shortest_path_mm(self.start_mm, end_mm, self.obstacles, self.bound_mm)
            return length, length <= straight
        if not shapely.intersects(self.core, shapely.LineString([self.start_mm, end_mm])):
            return straight, True
        ends = np.broadcast_to(np.asarray(end_mm, dtype=np.float64), self.nodes.shape)
        free = ~shapely.intersects(self.core, shapely.linestrings(np.stack([ends, self.nodes], axis=1)))
        legs = np.hypot(*(self.nodes - ends).T)
        return float(np.min(self.dist[free] + legs[free], initial=np.inf)), False


class ModelPaths:
    """The shortest legal paths of one model from one start to many ends, under the rules of
    :func:`model_path_mm` (same arguments, less the end): the obstacles and their graph are built once."""

    def __init__(
        self,
        mover: Model,
        start_mm: tuple[float, float],
        unit: Unit | None,
        world: TableState,
        bases: BaseArrays,
        profile: RuleProfile,
        bound_mm: float,
        passable: set[str],
    ) -> None:
        self.args = (mover, start_mm, unit, world, bases, profile, bound_mm, passable)
        abilities = set(unit.abilities) if unit else set()
        self.fly = FLY in abilities
        self.climbs = CLIMB in abilities and unit is not None and unit.move_in is not None
        self.dense_cost_mm = profile.movement.dense_segment_cost_mm
        grow = max(_inradius_mm(mover) - profile.contact.gap_mm, 0.0)
        self.through: PathsFrom | None = None
        self.dense = [shapely.Polygon(t.polygon) for t in world.terrain if t.kind == "dense"]
        if THROUGH_MODELS in abilities:
            solid = _obstacles(world, bases, set(), grow, models=False, kinds=("solid",))
            dense_grown = _obstacles(world, bases, set(), grow, models=False, kinds=("dense",))
            self.around = PathsFrom(start_mm, solid + dense_grown, bound_mm)
            self.through = PathsFrom(start_mm, solid, bound_mm)
        else:
            obstacles = _obstacles(world, bases, passable | {mover.id}, grow, models=True, kinds=("solid",))
            self.around = PathsFrom(start_mm, obstacles, bound_mm)
        height = profile.movement.climb_min_height_mm
        self.tall = [
            shapely.Polygon(t.polygon)
            for t in world.terrain
            if t.kind == "solid" and t.height_mm is not None and t.height_mm >= height
        ]

    def length_mm(self, end_mm: tuple[float, float]) -> float:
        """The shortest legal path's length to ``end_mm``, as :func:`model_path_mm` finds it."""
        mover, start_mm, unit, world, bases, profile, bound_mm, passable = self.args
        if self.fly:
            return math.hypot(end_mm[0] - start_mm[0], end_mm[1] - start_mm[1])
        if self.climbs and any(t.contains(shapely.Point(end_mm)) for t in self.tall):
            return model_path_mm(mover, start_mm, end_mm, unit, world, bases, profile, bound_mm, passable)
        around = self.around.length_mm(end_mm)[0]
        if self.through is None:
            return around
        through, straight = self.through.length_mm(end_mm)
        if straight:
            through += self.dense_cost_mm * segments_crossed(start_mm, end_mm, self.dense)
        return min(around, through)
