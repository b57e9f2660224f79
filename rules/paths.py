"""Shortest paths of a point among obstacles, on a visibility graph.

A base of radius r moving among obstacles is a point moving among the obstacles grown by r. The shortest path
between two points around polygons runs straight between polygon corners, so it lies on the visibility graph of
the corners. Grown bases are polygons inscribed in their true outlines, so the path found is never longer than
the true one: a lower bound, which is the side a referee must err on before calling a move too long.

Dense areas (:class:`DensePathsFrom`) are crossed at a price per separate stretch through them. Between two places
where the path changes course it is straight whatever it crosses (inside a dense area a unit of length costs what it
costs outside), so the cheapest path still bends only at corners: of the solid obstacles, and of the dense areas,
which a path avoiding them hugs. The visibility graph then only needs the dense areas' corners as nodes and each leg
priced by the stretches it runs through dense areas. Which model travels how (abilities, heights) is
:mod:`rules.travel`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import shapely
from numpy.typing import NDArray
from shapely.geometry.base import BaseGeometry

BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.intp]

# Obstacles are shrunk by this much before testing whether a straight leg crosses them, so that legs running
# along an obstacle's edge or through its corners count as free. Stretches of a leg inside a dense area shorter
# than this are grazes, not crossings, and two stretches closer than this are one.
_GRAZE_MM = 1e-3


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
    return float(_dijkstra_all(weight, source, target)[target])


def _dijkstra_all(weight: NDArray[np.float64], source: int, target: int | None = None) -> NDArray[np.float64]:
    """Shortest distances (n,) from ``source`` to every node of a dense (n, n) weight matrix (inf: no edge); with
    ``target``, only that node's is sure (the search stops once it is reached)."""
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


# --------------------------------------------------------------------------------------------------------------
# Dense areas crossed at a price


def leg_crossings(
    start_mm: NDArray[np.float64],
    end_mm: NDArray[np.float64],
    dense: BaseGeometry | None,
    dense_core: BaseGeometry | None = None,
) -> tuple[IntArray, BoolArray, BoolArray]:
    """For straight legs from ``start_mm[k]`` to ``end_mm[k]`` ((M, 2) each): how many separate stretches of each
    run inside ``dense`` (a polygon or multipolygon; None: none), whether the first stretch begins at the leg's
    start and whether the last ends at its end. Three (M,) arrays. A leg that only runs along the area's edge (a
    path hugging a wood it goes around) does not pass through it. ``dense_core``, ``dense`` shrunk by
    :data:`_GRAZE_MM`, may be given by a caller that asks many times."""
    m = len(start_mm)
    count = np.zeros(m, dtype=np.intp)
    from_start = np.zeros(m, dtype=bool)
    to_end = np.zeros(m, dtype=bool)
    if m == 0 or dense is None:
        return count, from_start, to_end
    legs = shapely.linestrings(np.stack([start_mm, end_mm], axis=1))
    # Each leg is cut by each separate area it meets, not by their union: far cheaper for many legs.
    areas = shapely.get_parts(dense)
    hit, area = shapely.STRtree(areas).query(legs, predicate="intersects")
    if len(hit) == 0:
        return count, from_start, to_end
    # A leg meets a polygon in lines and points, maybe gathered in a collection: flattened twice, every piece is
    # one line or point.
    parts, first = shapely.get_parts(shapely.intersection(legs[hit], areas[area]), return_index=True)
    parts, second = shapely.get_parts(parts, return_index=True)
    owner = hit[first[second]]
    keep = (shapely.get_type_id(parts) == 1) & (shapely.length(parts) > 0.0)
    parts, owner = parts[keep], owner[keep]
    if len(parts) == 0:
        return count, from_start, to_end
    t0, t1, length = _along(parts, owner, start_mm, end_mm)
    # A stretch runs through the area's inside somewhere, not only along its edge.
    core = shapely.buffer(dense, -_GRAZE_MM) if dense_core is None else dense_core
    inside = shapely.intersects(parts, core)
    order = np.lexsort((t0, owner))
    owner, t0, t1, length, inside = owner[order], t0[order], t1[order], length[order], inside[order]
    # Pieces of one leg that meet (split where the leg touches a corner or runs along an edge) are one stretch.
    new = np.ones(len(owner), dtype=bool)
    new[1:] = (owner[1:] != owner[:-1]) | (t0[1:] - t1[:-1] > _GRAZE_MM)
    group = np.cumsum(new) - 1
    through = np.bincount(group, weights=inside.astype(np.float64)) > 0
    heads = np.flatnonzero(new)
    tails = np.append(heads[1:], len(owner)) - 1
    g_owner, g_t0, g_t1, g_length = owner[heads], t0[heads], t1[tails], length[heads]
    g_owner, g_t0, g_t1, g_length = g_owner[through], g_t0[through], g_t1[through], g_length[through]
    count += np.bincount(g_owner, minlength=m)
    leads = np.ones(len(g_owner), dtype=bool)
    leads[1:] = g_owner[1:] != g_owner[:-1]
    from_start[g_owner[leads]] = g_t0[leads] <= _GRAZE_MM
    last = np.ones(len(g_owner), dtype=bool)
    last[:-1] = g_owner[1:] != g_owner[:-1]
    to_end[g_owner[last]] = g_length[last] - g_t1[last] <= _GRAZE_MM
    return count, from_start, to_end


def _along(
    parts: NDArray[np.object_], owner: IntArray, start_mm: NDArray[np.float64], end_mm: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Where each piece (a line on leg ``owner``) begins and ends, in millimetres along its leg from the leg's
    start, and the leg's length."""
    direction = end_mm[owner] - start_mm[owner]
    length = np.hypot(direction[:, 0], direction[:, 1])
    unit = direction / length[:, None]
    ta = np.sum((shapely.get_coordinates(shapely.get_point(parts, 0)) - start_mm[owner]) * unit, axis=1)
    tb = np.sum((shapely.get_coordinates(shapely.get_point(parts, -1)) - start_mm[owner]) * unit, axis=1)
    return np.minimum(ta, tb), np.maximum(ta, tb), length


class DensePathsFrom:
    """The cheapest paths from one start to many ends that do not enter the ``solid`` obstacles and pay
    ``price_mm`` beyond their length for each separate stretch inside the ``dense`` areas (areas that touch or
    overlap are one). A stretch begun before the path bends inside a dense area and continued after the bend is one
    stretch, paid once: each node is searched in two states, reached outside a stretch or inside one.

    Solid obstacles holding the start, and every obstacle farther than ``bound_mm`` from it, are left out (a path
    longer than the bound is then a length beyond it too); an end inside a solid obstacle is measured without it.
    """

    def __init__(
        self,
        start_mm: tuple[float, float],
        solid: Sequence[BaseGeometry],
        dense: Sequence[BaseGeometry],
        price_mm: float,
        bound_mm: float,
    ) -> None:
        self.args = (start_mm, solid, dense, price_mm, bound_mm)
        self.start = np.asarray(start_mm, dtype=np.float64)
        self.price_mm = price_mm
        point = shapely.Point(start_mm)
        walls = np.asarray(solid, dtype=object)
        if len(walls):
            walls = walls[(shapely.distance(walls, point) <= bound_mm) & ~shapely.contains(walls, point)]
        self.walls = walls
        areas = np.asarray(dense, dtype=object)
        if len(areas):
            areas = areas[shapely.distance(areas, point) <= bound_mm]
        blocker = shapely.union_all(walls) if len(walls) else None
        self.core = None if blocker is None else shapely.buffer(blocker, -_GRAZE_MM)
        self.dense = shapely.union_all(areas) if len(areas) else None
        self.dense_core = None if self.dense is None else shapely.buffer(self.dense, -_GRAZE_MM)
        for geometry in (self.core, self.dense, self.dense_core):
            if geometry is not None:
                shapely.prepare(geometry)
        corners = [_corners(g) for g in (blocker, self.dense) if g is not None]
        self.nodes = np.concatenate([self.start[None, :], *corners])
        self.dist = _dijkstra_all(self._weights(), 0)

    def _weights(self) -> NDArray[np.float64]:
        """The (2n, 2n) weights of the graph's directed legs: node u reached outside a stretch is state u, reached
        inside one state u + n."""
        nodes = self.nodes
        n = len(nodes)
        weight = np.full((2 * n, 2 * n), np.inf)
        a, b = np.triu_indices(n, k=1)
        if self.core is not None:
            free = ~shapely.intersects(self.core, shapely.linestrings(np.stack([nodes[a], nodes[b]], axis=1)))
            a, b = a[free], b[free]
        count, from_a, to_b = leg_crossings(nodes[a], nodes[b], self.dense, self.dense_core)
        cost = np.hypot(*(nodes[b] - nodes[a]).T) + self.price_mm * count
        # A leg leaving a node inside a stretch continues it when its first stretch begins at that node.
        for u, v, begins, ends in ((a, b, from_a, to_b), (b, a, to_b, from_a)):
            arrive = v + n * ends
            weight[u, arrive] = cost
            weight[u + n, arrive] = cost - self.price_mm * (begins & (count > 0))
        return weight

    def length_mm(self, end_mm: tuple[float, float]) -> float:
        """The cheapest path's cost (length plus the price of its stretches through dense areas) to ``end_mm``."""
        end = shapely.Point(end_mm)
        if len(self.walls) and shapely.contains(self.walls, end).any():
            start_mm, solid, dense, price_mm, bound_mm = self.args
            around = [g for g in solid if not g.contains(end)]
            return DensePathsFrom(start_mm, around, dense, price_mm, bound_mm).length_mm(end_mm)
        n = len(self.nodes)
        ends = np.broadcast_to(np.asarray(end_mm, dtype=np.float64), self.nodes.shape)
        free = np.ones(n, dtype=bool)
        if self.core is not None:
            free = ~shapely.intersects(self.core, shapely.linestrings(np.stack([self.nodes, ends], axis=1)))
        count, begins, _ = leg_crossings(self.nodes[free], ends[free], self.dense, self.dense_core)
        cost = np.hypot(*(ends[free] - self.nodes[free]).T) + self.price_mm * count
        outside = self.dist[:n][free] + cost
        inside = self.dist[n:][free] + cost - self.price_mm * (begins & (count > 0))
        return float(min(np.min(outside, initial=np.inf), np.min(inside, initial=np.inf)))


def dense_path_mm(
    start_mm: tuple[float, float],
    end_mm: tuple[float, float],
    solid: Sequence[BaseGeometry],
    dense: Sequence[BaseGeometry],
    price_mm: float,
    bound_mm: float,
) -> float:
    """The cost of the cheapest path from ``start_mm`` to ``end_mm``, as :class:`DensePathsFrom` finds it; ``inf``
    when no path exists. Solid obstacles holding the start or the end are left out, as :func:`shortest_path_mm`
    does; a path that meets no solid obstacle and no dense area is the straight leg."""
    start, end = shapely.Point(start_mm), shapely.Point(end_mm)
    leg = shapely.LineString([start_mm, end_mm])
    walls = np.asarray(solid, dtype=object)
    areas = np.asarray(dense, dtype=object)
    # Any path touching an obstacle or area O is at least d(start, O) + d(O, end) long.
    if len(walls):
        near = shapely.distance(walls, start) + shapely.distance(walls, end) <= bound_mm
        walls = walls[near & ~shapely.contains(walls, start) & ~shapely.contains(walls, end)]
    if len(areas):
        areas = areas[shapely.distance(areas, start) + shapely.distance(areas, end) <= bound_mm]
    if not shapely.intersects(np.concatenate([walls, areas]), leg).any():
        return float(start.distance(end))
    return DensePathsFrom(start_mm, list(walls), list(areas), price_mm, bound_mm).length_mm(end_mm)
