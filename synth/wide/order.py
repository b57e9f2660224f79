"""Painter's order: what is drawn first so that nearer things end up on top.

Items are drawn farthest from the camera first (distance to their centre). That is right for small things
side by side, but not next to a box: a base at the foot of a tall block is farther from the camera than the
block's centre, yet stands in front of the wall that faces the camera. So boxes (terrain, dice) are ordered
against their neighbours by their face planes: whatever lies wholly outside a face that the camera sees is in
front of the box; whatever lies wholly outside a face turned away from the camera is behind it."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

# Points this close to a face plane (mm) count as on its outer side: things stand on or touch boxes.
PLANE_TOLERANCE_MM = 0.05


@dataclass
class Item:
    """Something drawn in one go: ``key`` its centre's distance from the camera (mm), ``points`` (N, 3) mm that
    bound it, ``box`` its screen box (x0, y0, x1, y1 px), ``planes`` (F, 4) outward face planes (n, -d: n.p - d
    is positive outside) when it is a convex box, and ``draw`` the call that paints it."""

    key: float
    points: FloatArray
    box: tuple[float, float, float, float]
    draw: Callable[[], None]
    planes: FloatArray | None = None


def box_planes(corners: FloatArray) -> FloatArray:
    """(6, 4) outward planes (nx, ny, nz, -d) of a box from its (8, 3) corners (bottom four, then top four)."""
    faces = ((0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7))
    centre = corners.mean(axis=0)
    out = []
    for f in faces:
        p = corners[list(f)]
        n = np.cross(p[1] - p[0], p[3] - p[0])
        n /= np.linalg.norm(n)
        mid = p.mean(axis=0)
        if n @ (mid - centre) < 0:
            n = -n
        out.append([*n, -float(n @ mid)])
    return np.asarray(out, dtype=np.float64)


def _outside(planes: FloatArray, points: FloatArray) -> NDArray[np.bool_]:
    """(F,) for each plane, whether all the points lie on its outer side."""
    s = points @ planes[:, :3].T + planes[:, 3]
    return np.asarray((s > -PLANE_TOLERANCE_MM).all(axis=0), dtype=bool)


def _relation(box: Item, other: Item, camera: FloatArray) -> int:
    """+1 when ``other`` is in front of ``box`` (draw it later), -1 when behind, 0 when the planes don't say."""
    assert box.planes is not None
    seen = box.planes[:, :3] @ camera + box.planes[:, 3] > 0.0
    out = _outside(box.planes, other.points)
    if (out & seen).any():
        return 1
    if (out & ~seen).any():
        return -1
    return 0


def _overlap(a: Item, b: Item) -> bool:
    return not (a.box[2] < b.box[0] or b.box[2] < a.box[0] or a.box[3] < b.box[1] or b.box[3] < a.box[1])


def painter_order(items: list[Item], camera_mm: FloatArray) -> list[int]:
    """Indices of ``items`` in drawing order: farthest first, boxes ordered against what overlaps them on
    screen by their planes. A cycle (which the planes cannot cause for boxes that do not touch) falls back to
    distance."""
    n = len(items)
    before: list[set[int]] = [set() for _ in range(n)]  # before[j]: items that must be drawn ahead of j
    boxes = [i for i, it in enumerate(items) if it.planes is not None]
    for i in boxes:
        for j in range(n):
            if j == i or not _overlap(items[i], items[j]):
                continue
            if items[j].planes is not None and j < i:
                continue  # each pair of boxes once
            rel = _relation(items[i], items[j], camera_mm)
            if rel == 0 and items[j].planes is not None:
                rel = -_relation(items[j], items[i], camera_mm)
            if rel > 0:
                before[j].add(i)
            elif rel < 0:
                before[i].add(j)
    waiting = [len(b) for b in before]
    followers: list[list[int]] = [[] for _ in range(n)]
    for j, b in enumerate(before):
        for i in b:
            followers[i].append(j)
    ready = [(-items[i].key, i) for i in range(n) if waiting[i] == 0]
    heapq.heapify(ready)
    done = [False] * n
    order: list[int] = []
    while len(order) < n:
        if not ready:
            # A cycle: break it at the farthest item still waiting.
            i = max((k for k in range(n) if not done[k]), key=lambda k: items[k].key)
            waiting[i] = 0
            heapq.heappush(ready, (-items[i].key, i))
        _, i = heapq.heappop(ready)
        if done[i]:
            continue
        done[i] = True
        order.append(i)
        for j in followers[i]:
            waiting[j] -= 1
            if waiting[j] == 0 and not done[j]:
                heapq.heappush(ready, (-items[j].key, j))
    return order
