"""Square insides: a circle round a die (or another small square block), not a base.

A die seen from above is a square top with its sides and its shadow beside it; at about 1 px/mm the whole blur is
about a base's size, its top passes for a base's, its pips and edges for a figure, and the circle round it passes every
test of a rim. What no base shows is the square: inside the circle the grey level changes along two directions at right
angles, and nowhere else. A figure's edges run every way, and a base's own rim every way round.

So the gradient directions inside the circle are put to two tests, each weighted by the gradient's strength. A
square's edges, in pairs at right angles, all point the same way once each direction is taken four times over (so that
edges 90 degrees apart agree): the share of the gradient that agrees so is high. A single straight edge (terrain
crossing a base, the edge of a building beside it) agrees the same way, but also when each direction is taken twice
over, where a square's pairs at right angles cancel: the share that agrees so must be low.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def _agreement(angle: FloatArray, weight: FloatArray, fold: int) -> float:
    """How far the directions ``angle`` (N,) (radians) agree once each is taken ``fold`` times over, each weighted by
    ``weight`` (N,): 1 when all do, about 0 when they spread evenly."""
    total = float(weight.sum())
    if total <= 0.0:
        return 0.0
    return float(np.abs(np.sum(weight * np.exp(1j * fold * angle))) / total)


def square_insides(
    grey: NDArray[np.uint8],
    center_px: FloatArray,
    radius_px: FloatArray,
    min_square: float,
    max_line: float,
) -> BoolArray:
    """(K,) True where the inside of a circle (``center_px`` (K, 2), ``radius_px`` (K,), in the pixels of ``grey``
    (H, W) uint8) is a square's: its gradient directions agree taken four times over by at least ``min_square`` and
    taken twice over by at most ``max_line`` (see the module's docstring). Circles reaching past the image are not
    judged (False)."""
    k = len(radius_px)
    out = np.zeros(k, np.bool_)
    if k == 0 or min_square <= 0.0:
        return out
    height, width = grey.shape[:2]
    for i in range(k):
        cx, cy = float(center_px[i, 0]), float(center_px[i, 1])
        r = float(radius_px[i])
        # one pixel beyond the circle on each side for the 3 x 3 gradient
        x0, y0 = int(np.floor(cx - r)) - 1, int(np.floor(cy - r)) - 1
        x1, y1 = int(np.ceil(cx + r)) + 2, int(np.ceil(cy + r)) + 2
        if x0 < 0 or y0 < 0 or x1 > width or y1 > height:
            continue
        patch = np.asarray(grey[y0:y1, x0:x1], dtype=np.float32)
        gx = cv2.Sobel(patch, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(patch, cv2.CV_32F, 0, 1, ksize=3)
        yy, xx = np.mgrid[y0:y1, x0:x1]
        inside = np.hypot(xx - cx, yy - cy) <= r
        weight = np.hypot(gx, gy)[inside].astype(np.float64)
        angle = np.arctan2(gy, gx)[inside].astype(np.float64)
        out[i] = _agreement(angle, weight, 4) >= min_square and _agreement(angle, weight, 2) <= max_line
    return out
