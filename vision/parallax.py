"""How a base's side wall stretches its outline in a top-down view seen from a camera at a finite height.

A rectified image maps every ray to where it meets the table. A cylinder's footprint therefore appears where it
is, but its top disc (at the rim height) appears pushed away from the nadir (the table point straight below the
camera) by ``shift_ratio`` times its distance from the nadir. The outline of the whole base is the union of
the two discs: a stadium whose two half circles are the top (on the side away from the nadir) and the
footprint (on the side towards it). Moving every outline point half the shift back towards the middle makes it
a circle again, centred halfway between footprint and top: on the base's axis at half the rim height.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from vision.errors import VisionError

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class RimParallax:
    """``nadir_px`` (x, y): the nadir in the top-down image's pixels; ``shift_ratio``: how far the top disc's
    centre appears from the footprint's, per px of distance from the nadir (rim height over the camera's height
    above the rim, dimensionless)."""

    nadir_px: tuple[float, float]
    shift_ratio: float

    def __post_init__(self) -> None:
        if not all(math.isfinite(v) for v in (*self.nadir_px, self.shift_ratio)) or not 0 <= self.shift_ratio < 1:
            raise VisionError(
                f"RimParallax needs a finite nadir and a shift ratio in [0, 1), got {self.nadir_px}, {self.shift_ratio}"
            )

    def half_shift(self, center_px: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Half the top's apparent shift for outlines centred at ``center_px`` (K, 2): length (K,) in px and
        unit direction away from the nadir (K, 2) (zero at the nadir itself)."""
        away = np.asarray(center_px, dtype=np.float64) - np.asarray(self.nadir_px, dtype=np.float64)
        dist = np.hypot(away[:, 0], away[:, 1])
        unit = np.where(dist[:, None] > 0, away / np.maximum(dist, 1e-12)[:, None], 0.0)
        return 0.5 * self.shift_ratio * dist, unit


def ray_stretch(parallax: RimParallax | None, center_px: FloatArray, directions: FloatArray) -> FloatArray:
    """(K, n) how much farther than the circle's radius the stadium outline lies along each ray (px), the rays
    ``directions`` (n, 2) shared or (K, n, 2) per outline; zeros without a parallax."""
    if parallax is None:
        return np.zeros((len(center_px), directions.shape[-2]))
    half, unit = parallax.half_shift(center_px)
    along = unit @ directions.T if directions.ndim == 2 else np.einsum("kj,knj->kn", unit, directions)
    return np.asarray(half[:, None] * np.abs(along), dtype=np.float64)


def unstretch(parallax: RimParallax | None, points_px: FloatArray, center_px: FloatArray) -> FloatArray:
    """Outline points (K, n, 2) of stadiums about ``center_px`` (K, 2) moved half the shift towards the middle,
    so that they lie on a circle (see the module docstring)."""
    if parallax is None:
        return points_px
    half, unit = parallax.half_shift(center_px)
    along = np.einsum("knj,kj->kn", points_px - center_px[:, None, :], unit)
    return np.asarray(points_px - (np.sign(along) * half[:, None])[..., None] * unit[:, None, :], dtype=np.float64)


def middle_of(footprint_px: FloatArray, parallax: RimParallax | None) -> FloatArray:
    """(K, 2) the outline's middle (the pipeline's base position, at half the rim height) of footprints centred at
    ``footprint_px`` (K, 2)."""
    if parallax is None or len(footprint_px) == 0:
        return footprint_px
    half, unit = parallax.half_shift(footprint_px)
    return np.asarray(footprint_px + half[:, None] * unit, dtype=np.float64)
