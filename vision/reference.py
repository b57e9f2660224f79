"""What changed on the table since it was seen empty: the cue a real table gives for free.

A reference is the table with its terrain and no models, captured once at set-up. Printed things on the mat (tyres,
manholes, rings, texture) are in it and did not change; a model put down since did. Both images are top-down views
of the table at one scale (each rectified with its own calibration, so the camera may have moved in between).

The light may differ between the two captures (a lamp switched on, the day outside): its slow change is taken out
per channel before comparing, as a gain read over patches much larger than a base, by the median so that the models
themselves do not set it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.errors import ImageError

FloatArray = NDArray[np.float64]
# The gain is read as a log ratio stored in 8 bits (OpenCV's median filter takes large windows only in 8 bits):
# this many levels per unit of log, around 128.
_LOG_LEVELS = 64.0
# Added to both images before their ratio is taken, so that black pixels give no infinite gain.
_DARK_FLOOR = 8.0
# Radii (as fractions of the base's radius) and angles sampled inside a circle to read how much of it changed: the
# inside only, clear of the rim where a neighbour's shadow or a small misfit changes pixels anyway.
_SHARE_RADII = (0.15, 0.35, 0.55, 0.75)
_SHARE_ANGLES = 24
# A picture is told grey from colour on every this many pixels across and down.
_GREY_STEP_PX = 7
# Where a circle's outline is read (fractions of its radius: a fit a little off still has its edge among them), at
# this many angles; edges weaker than the floor (grey levels per pixel, about the smoothed sensor noise) are no edge.
_OUTLINE_RADII = (0.9, 0.95, 1.0, 1.05, 1.1)
_OUTLINE_ANGLES = 48
_EDGE_FLOOR = 0.5


def _colour(image: NDArray[np.uint8], name: str) -> NDArray[np.float32]:
    arr = np.asarray(image)
    if arr.dtype != np.uint8 or arr.ndim not in (2, 3):
        raise ImageError(f"{name} must be an (H, W) or (H, W, 3) uint8 image, got {arr.dtype} {arr.shape}")
    if arr.ndim == 2:
        arr = np.asarray(cv2.cvtColor(arr, cv2.COLOR_GRAY2BGR), np.uint8)
    return arr.astype(np.float32)


def _is_grey(image: NDArray[np.float32]) -> bool:
    """True for a picture whose three channels are one (a grey file decodes so), read on a sparse grid of its
    pixels: a colour picture differs at nearly every one of them."""
    grid = image[::_GREY_STEP_PX, ::_GREY_STEP_PX]
    return bool(np.array_equal(grid[..., 0], grid[..., 1]) and np.array_equal(grid[..., 1], grid[..., 2]))


def _grey_bgr(image: NDArray[np.float32]) -> NDArray[np.float32]:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return np.asarray(cv2.merge([grey, grey, grey]), np.float32)


@dataclass(frozen=True)
class Comparison:
    """The table now and as seen empty, at one scale and in one light: ``now`` and ``lit`` (H, W, 3) float32, both
    smoothed, the empty table's picture relit to the light of now; ``change`` (H, W) float32, how far each pixel's
    colour moved (grey levels, the largest of the three channels' differences)."""

    now: NDArray[np.float32]
    lit: NDArray[np.float32]
    change: NDArray[np.float32]


def compare(
    topdown_bgr: NDArray[np.uint8],
    reference_bgr: NDArray[np.uint8],
    px_per_mm: float,
    blur_mm: float,
    light_cell_mm: float,
    light_reach_cells: int,
) -> Comparison:
    """The table now against the table empty, after the light's slow change between them was taken out.

    ``topdown_bgr`` and ``reference_bgr`` (H, W, 3) or (H, W) uint8, the table now and empty, at ``px_per_mm``.
    Both are smoothed by ``blur_mm`` (sensor noise, a fraction of a pixel of misregistration); the light's gain is
    read on cells of ``light_cell_mm`` as the median over ``light_reach_cells`` x ``light_reach_cells`` of them (odd,
    at least 3). A grey picture (three equal channels) against a colour one is compared in grey. Raises
    :class:`~vision.errors.ImageError` when the two differ in size."""
    now = _colour(topdown_bgr, "the frame")
    empty = _colour(reference_bgr, "the reference")
    if now.shape != empty.shape:
        raise ImageError(
            f"the reference must be the frame's size in the top-down view, got {empty.shape[:2]} for {now.shape[:2]}"
        )
    if _is_grey(now) != _is_grey(empty):
        # a grey picture against a colour one would differ in colour everywhere, bases or not: both are compared
        # in grey
        now, empty = _grey_bgr(now), _grey_bgr(empty)
    sigma_px = max(blur_mm * px_per_mm, 0.3)
    now = np.asarray(cv2.GaussianBlur(now, (0, 0), sigma_px), np.float32)
    empty = np.asarray(cv2.GaussianBlur(empty, (0, 0), sigma_px), np.float32)
    h, w = now.shape[:2]
    cell_px = max(light_cell_mm * px_per_mm, 1.0)
    small = (max(1, round(w / cell_px)), max(1, round(h / cell_px)))
    log_ratio = np.log((now + _DARK_FLOOR) / (empty + _DARK_FLOOR))
    coarse = cv2.resize(log_ratio, small, interpolation=cv2.INTER_AREA)
    levels = np.clip(np.round(128.0 + _LOG_LEVELS * coarse), 0, 255).astype(np.uint8)
    # an odd window, no larger than the grid of cells
    reach = min(max(3, light_reach_cells | 1), (min(small) - 1) | 1)
    if reach >= 3:
        levels = np.asarray(cv2.medianBlur(levels, reach), np.uint8)
    gain = np.exp((levels.astype(np.float32) - 128.0) / _LOG_LEVELS)
    gain = cv2.resize(gain, (w, h), interpolation=cv2.INTER_LINEAR)
    if gain.ndim == 2:
        gain = gain[..., None]
    lit = np.asarray((empty + _DARK_FLOOR) * gain - _DARK_FLOOR, np.float32)
    return Comparison(now, lit, np.asarray(np.abs(now - lit).max(axis=2), np.float32))


def changed_share(
    change: NDArray[np.float32], center_px: FloatArray, radius_px: FloatArray, min_change: float
) -> FloatArray:
    """(N,) the share of the inside of each circle (``center_px`` (N, 2), ``radius_px`` (N,)) where ``change`` (H, W)
    is at least ``min_change``; points off the image count as unchanged."""
    if len(np.asarray(center_px).reshape(-1, 2)) == 0:
        return np.zeros(0)
    points = _circle_points(center_px, radius_px, _SHARE_RADII, _SHARE_ANGLES)
    col = np.round(points[..., 0]).astype(np.intp)
    row = np.round(points[..., 1]).astype(np.intp)
    h, w = change.shape
    inside = (col >= 0) & (col < w) & (row >= 0) & (row < h)
    values = np.zeros(col.shape, np.float32)
    values[inside] = change[row[inside], col[inside]]
    return np.asarray((values >= min_change).mean(axis=(1, 2)), np.float64)


def outline_share(comparison: Comparison, center_px: FloatArray, radius_px: FloatArray) -> FloatArray:
    """(N,) how much of each circle's outline (``center_px`` (N, 2), ``radius_px`` (N,)) the empty table already
    showed: its edges along the circle (at each angle the strongest within a tenth of the radius either side, the
    median over the angles) as a share of the edges there now. About 1 for a printed ring, a tyre or the mat's own
    blotch, which were there; well under 1 for a base put down since, even one whose colours are the mat's (its wall,
    rim and shadow are new). Points off the image count as no edge."""
    if len(np.asarray(center_px).reshape(-1, 2)) == 0:
        return np.zeros(0)
    points = _circle_points(center_px, radius_px, _OUTLINE_RADII, _OUTLINE_ANGLES)
    strength = [
        np.median(_edges_at(image.mean(axis=2), points).max(axis=1), axis=1)
        for image in (comparison.lit, comparison.now)
    ]
    return np.asarray(strength[0] / np.maximum(strength[1], _EDGE_FLOOR), np.float64)


def _circle_points(center_px: FloatArray, radius_px: FloatArray, radii: tuple[float, ...], angles: int) -> FloatArray:
    """(N, len(radii), angles, 2): points round each circle (``center_px`` (N, 2), ``radius_px`` (N,)) at ``radii``
    (fractions of its radius) and ``angles`` evenly spaced angles."""
    center = np.asarray(center_px, np.float64).reshape(-1, 2)
    radius = np.asarray(radius_px, np.float64).reshape(-1)
    turns = np.linspace(0.0, 2 * np.pi, angles, endpoint=False)
    offsets = np.asarray(radii)[:, None, None] * np.stack([np.cos(turns), np.sin(turns)], axis=1)[None, :, :]
    return np.asarray(center[:, None, None, :] + radius[:, None, None, None] * offsets[None], np.float64)


def _edges_at(grey: NDArray[np.float32], points: FloatArray) -> FloatArray:
    """The grey level's slope (levels per pixel, central differences) at ``points`` (..., 2), 0 off the image."""
    col = np.round(points[..., 0]).astype(np.intp)
    row = np.round(points[..., 1]).astype(np.intp)
    h, w = grey.shape
    inside = (col >= 1) & (col < w - 1) & (row >= 1) & (row < h - 1)
    c, r = col[inside], row[inside]
    out = np.zeros(col.shape, np.float64)
    out[inside] = 0.5 * np.hypot(grey[r, c + 1] - grey[r, c - 1], grey[r + 1, c] - grey[r - 1, c])
    return out
