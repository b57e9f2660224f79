"""Shortest paths of a base among obstacles, on a visibility graph.

A base of radius r moving among obstacles is a point moving among the obstacles grown by r. The shortest path
between two points around polygons runs straight between polygon corners, so it lies on the visibility graph of
the corners. Grown bases are polygons inscribed in their true outlines, so the path found is never longer than
the true one: a lower bound, which is the side a referee must err on before calling a move too long.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import shapely
from numpy.typing import NDArray
from shapely.geometry.base import BaseGeometry

# Obstacles are shrunk by this much before testing whether a straight leg crosses them, so that legs running
# along an obstacle's edge or through its corners count as free.
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
