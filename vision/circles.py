"""Small operations on sets of circles that every stage shares: sizes snapped to the standard ones, centre
distances, greedy keeping by rank.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from vision.settings import VisionSettings

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


# Two first-pass circles of the same size closer than this fraction of their radius are one base seen twice.
SAME_BASE_CENTER_FRACTION = 0.3


def snap_diameters(
    diameter_mm: FloatArray, sizes_mm: tuple[float, ...], tolerance_mm: float
) -> tuple[FloatArray, BoolArray]:
    """Nearest standard size (mm) to each fitted diameter (N,), and whether it is within ``tolerance_mm``."""
    sizes = np.asarray(sizes_mm, dtype=np.float64)
    if len(diameter_mm) == 0:
        return np.zeros(0), np.zeros(0, np.bool_)
    diff = np.abs(diameter_mm[:, None] - sizes[None, :])
    best = np.argmin(diff, axis=1)
    nearest = sizes[best]
    return nearest, np.abs(diameter_mm - nearest) <= tolerance_mm


def centre_distances(center: FloatArray, other: FloatArray | None = None) -> FloatArray:
    """(K, M) distances from the centres (K, 2) to ``other`` (M, 2) (to each other when not given: (K, K))."""
    to = center if other is None else other
    return np.asarray(np.hypot(center[:, None, 0] - to[None, :, 0], center[:, None, 1] - to[None, :, 1]), np.float64)


def in_boxes(point_px: FloatArray, boxes_px: FloatArray) -> BoolArray:
    """(K,) whether each point (K, 2) lies in one of the boxes (M, 4) (u0, v0, u1, v1), edges included."""
    boxes = np.asarray(boxes_px, dtype=np.float64).reshape(-1, 4)
    if len(point_px) == 0 or len(boxes) == 0:
        return np.zeros(len(point_px), np.bool_)
    u, v, b = point_px[:, None, 0], point_px[:, None, 1], boxes[None, :, :]
    return np.asarray(np.any((u >= b[..., 0]) & (u <= b[..., 2]) & (v >= b[..., 1]) & (v <= b[..., 3]), axis=1))


def keep_best(rank: FloatArray, clash: BoolArray, absorbs: BoolArray | None = None) -> NDArray[np.intp]:
    """Indices kept by a greedy pass in order of falling ``rank`` (K,): a candidate is kept unless it clashes
    (``clash`` (K, K)) with one kept before it; if ``absorbs[i, j]`` holds for every kept j it clashes with, it
    takes their place instead."""
    kept = np.zeros(len(rank), np.bool_)
    for i in np.argsort(-rank, kind="stable"):
        hit = kept & clash[i]
        if not hit.any():
            kept[i] = True
        elif absorbs is not None and np.all(absorbs[i, hit]):
            kept[hit] = False
            kept[i] = True
    return np.flatnonzero(kept).astype(np.intp)


def firsts_first(rank: FloatArray, second: BoolArray) -> FloatArray:
    """``rank`` (K,) lowered for the rows where ``second`` (K,) holds below every other row, their order kept."""
    if rank.size == 0:
        return rank
    return np.asarray(rank - second * (float(np.ptp(rank)) + 1.0), dtype=np.float64)


def ray_distance_to_circle(
    ray_center: FloatArray, center: FloatArray, radius: FloatArray, directions: FloatArray
) -> FloatArray:
    """Where each ray from ``ray_center`` (K, 2) meets the circle (``center`` (K, 2), ``radius`` (K,)): distance
    along the ray (K, n), for a ray start inside the circle."""
    off = ray_center - center
    b = directions @ off.T  # (n, K): direction . offset
    c = (off * off).sum(axis=1) - radius * radius
    disc = np.maximum(b * b - c[None, :], 0.0)
    return np.asarray((-b + np.sqrt(disc)).T, dtype=np.float64)


def max_overlap_mm(px_per_mm: float, settings: VisionSettings) -> float:
    """How far (mm) two bases may seem to overlap in an image of ``px_per_mm``: where figures blur a size is read one
    step too large now and then, and bases in contact overlap by more."""
    coarse = px_per_mm < settings.outline.min_px_per_mm
    return settings.overlaps.coarse_max_mm if coarse else settings.overlaps.max_mm


def unexplained(
    centre_px: FloatArray,
    radius_px: FloatArray,
    found_centre_px: FloatArray,
    found_radius_px: FloatArray,
    ignore: NDArray[np.uint8] | None,
) -> BoolArray:
    """(K,) which of K circles (``centre_px`` (K, 2), ``radius_px`` (K,)) no circle found (``found_centre_px`` (N, 2),
    ``found_radius_px`` (N,)) explains, its centre within half the larger radius, and whose centre is on no pixel
    ``ignore`` (H, W) uint8 marks (None: none)."""
    near = centre_distances(centre_px, found_centre_px) <= 0.5 * np.maximum(radius_px[:, None], found_radius_px)
    lone = ~np.any(near, axis=1)
    if ignore is not None:
        h, w = ignore.shape
        u = np.clip(np.round(centre_px[:, 0]).astype(np.intp), 0, w - 1)
        v = np.clip(np.round(centre_px[:, 1]).astype(np.intp), 0, h - 1)
        lone &= ignore[v, u] == 0
    return np.asarray(lone, dtype=np.bool_)


def pushed_apart(
    centre_px: FloatArray, radius_px: FloatArray, fixed_px: FloatArray, fixed_radius_px: FloatArray, steps: int = 20
) -> FloatArray:
    """(K, 2) each of K circles (``centre_px`` (K, 2), ``radius_px`` (K,)) moved out of the fixed circles
    (``fixed_px`` (N, 2), ``fixed_radius_px`` (N,)) it overlaps, as solid discs cannot: each step moves it by half its
    overlaps, each along the line from that circle's centre, for ``steps`` steps (the K do not push one another)."""
    moved = np.array(centre_px, dtype=np.float64, copy=True).reshape(-1, 2)
    if len(moved) == 0 or len(fixed_px) == 0:
        return moved
    reach = radius_px[:, None] + fixed_radius_px[None, :]
    for _ in range(steps):
        away = moved[:, None, :] - fixed_px[None, :, :]
        dist = np.maximum(np.hypot(away[..., 0], away[..., 1]), 1e-9)
        overlap = np.maximum(reach - dist, 0.0)
        if not np.any(overlap > 1e-6):
            break
        moved += 0.5 * np.sum(away / dist[..., None] * overlap[..., None], axis=1)
    return moved
