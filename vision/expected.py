"""The bases a roster expects: where the detector found fewer bases of a size than the roster lists, the finder's
peaks of that size nearest to where those models may stand now are taken, up to the number missing.

A roster says how many bases of each size stand on the table and where each was last seen; a model moves at most
so far in a turn. A base that the rim readings and the verifier both doubt (a flocked top in glare, a black base on
a black mat) but that the finder sees, of the right size and within a missing model's reach, is that model far more
often than it is a token or a printed ring: those would have to be of the missing size, inside the reach, and the
finder's choice over every other candidate. The count bounds the harm: never more bases than the roster lists.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from vision.circles import centre_distances, unexplained
from vision.detections import BaseDetections
from vision.errors import VisionError
from vision.finder import FinderMaps

FloatArray = NDArray[np.float64]

# Sizes closer than this (mm) are one: a roster's sizes and the standard ones they snap to are given to 0.1 mm.
_SAME_SIZE_MM = 0.05


@dataclass(frozen=True, eq=False)
class ExpectedBases:
    """Bases a roster lists, in the pixels of the view they are looked for in: ``diameter_mm`` (M,), each model's
    base; ``near_px`` (M, 2), where it was last seen; ``reach_px`` (M,), how far from there it may stand now (inf:
    anywhere)."""

    diameter_mm: FloatArray
    near_px: FloatArray
    reach_px: FloatArray

    def __post_init__(self) -> None:
        m = len(self.diameter_mm)
        if self.near_px.shape != (m, 2) or self.reach_px.shape != (m,):
            raise VisionError(
                f"expected bases need (M,) diameters, (M, 2) places and (M,) reaches; got {self.diameter_mm.shape}, "
                f"{self.near_px.shape} and {self.reach_px.shape}"
            )
        if np.any(~np.isfinite(self.diameter_mm)) or np.any(self.diameter_mm <= 0):
            raise VisionError("expected bases need positive diameters (mm)")
        if np.any(~np.isfinite(self.near_px)):
            raise VisionError("expected bases need finite places (px) where they were last seen")


def missing_counts(found: BaseDetections, expected: ExpectedBases) -> dict[float, int]:
    """Size (mm) -> how many more bases of that size the roster lists than were found (only sizes that lack some)."""
    out = {}
    for size in np.unique(expected.diameter_mm):
        listed = int(np.sum(np.abs(expected.diameter_mm - size) < _SAME_SIZE_MM))
        lacking = listed - int(np.sum(np.abs(found.diameter_mm - size) < _SAME_SIZE_MM))
        if lacking > 0:
            out[float(size)] = lacking
    return out


def at_last_places(
    found: BaseDetections, expected: ExpectedBases, within_px: float, size_share: float
) -> NDArray[np.bool_]:
    """(len(found),) which bases of ``found`` stand within ``within_px`` of where a model ``expected`` lists, of
    their size (within ``size_share`` of it), was last seen: a reading there is corroborated by the state before."""
    if len(found) == 0 or len(expected.diameter_mm) == 0 or within_px <= 0:
        return np.zeros(len(found), np.bool_)
    near = centre_distances(found.center_px, expected.near_px) <= within_px
    alike = np.abs(found.diameter_mm[:, None] - expected.diameter_mm[None, :]) <= size_share * expected.diameter_mm
    return np.asarray(np.any(near & alike, axis=1), np.bool_)


def expected_look(
    found: BaseDetections,
    maps: FinderMaps,
    expected: ExpectedBases,
    scale: float,
    min_probability: float,
    size_share: float,
    ignore: NDArray[np.uint8] | None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The finder's peaks (probability at least ``min_probability``) that no base of ``found`` explains, taken for
    the bases ``expected`` lists and ``found`` lacks: for each size lacking (:func:`missing_counts`), the most
    probable peaks whose diameter is within ``size_share`` of it and that lie within the reach of a model of that
    size, as many as are lacking. ``ignore`` (H, W) uint8: pixels no base stands on. Returns their centres (K, 2) px,
    the sizes (K,) mm they stand for and the finder's probabilities (K,)."""
    empty = (np.empty((0, 2)), np.empty(0), np.empty(0))
    lacking = missing_counts(found, expected)
    if not lacking:
        return empty
    centre_px, diameter_mm, prob = maps.peaks(min_probability)
    if len(centre_px) == 0:
        return empty
    free = unexplained(centre_px, 0.5 * diameter_mm * scale, found.center_px, found.radius_px, ignore)
    taken_centres, taken_sizes, taken_prob = [], [], []
    # the sizes most lacking first: a peak between two sizes goes where more are missing
    for size in sorted(lacking, key=lambda s: -lacking[s]):
        models = np.abs(expected.diameter_mm - size) < _SAME_SIZE_MM
        near, reach = expected.near_px[models], expected.reach_px[models]
        within = np.any(centre_distances(centre_px, near) <= reach[None, :], axis=1)
        fits = free & within & (np.abs(diameter_mm - size) <= size_share * size)
        # peaks come most probable first
        for k in np.flatnonzero(fits)[: lacking[size]]:
            free[k] = False
            taken_centres.append(centre_px[k])
            taken_sizes.append(size)
            taken_prob.append(prob[k])
    if not taken_sizes:
        return empty
    return np.array(taken_centres), np.array(taken_sizes), np.array(taken_prob)
