"""Step 6 of :mod:`vision.detect`, the other readings a base's edges allow.

Other readings (:func:`other_readings_mm`): a base read by its edges alone may be read wrong by millimetres and
still pass every test - its top read as the footprint, or a circle on part of its rim and part of its figure.
Where the edges allow such another reading, the base's model sigma grows to cover it. Where figures blur, a
base the grey look's edges read whose top is lighter than the mat (or darker by at most
``rim.top_read_max_darkness``) was read by its top disc: its wall, darker than its top, leaves the top's edge as the
rim edge facing the camera. The top is a circle, so its radius gets back the stretch the stadium fit allowed each
ray (before the size is snapped), and its centre goes back half a parallax shift, to where the outline's middle
would stand.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from vision.candidates import Candidates
from vision.circles import centre_distances, ray_distance_to_circle, snap_diameters
from vision.cues import disc_contrast, disc_passes
from vision.footprints import RING_TOLERANCE_PX
from vision.parallax import RimParallax, ray_stretch
from vision.refine import MIN_REFINE_HALF_WIDTH_PX, rim_fit, rim_passes
from vision.rim import (
    find_peaks,
    ray_derivative,
)
from vision.settings import VisionSettings

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def _tangent_starts(
    grey: NDArray[np.uint8],
    center: FloatArray,
    radius: FloatArray,
    polarity: FloatArray,
    size_mm: FloatArray,
    scale: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None,
) -> tuple[NDArray[np.intp], FloatArray, FloatArray]:
    """Larger circles around each reading, touching it on one side: per reading and standard size up to
    ``other_readings.reach_mm`` larger in radius, the best of ``other_readings.shifts`` directions, scored by the share
    of the rays on which the two circles part that have an edge of the reading's polarity near the larger one (none:
    left out). Returns owner (M,), centre (M, 2) and radius (M,) px."""
    none = (np.zeros(0, np.intp), np.zeros((0, 2)), np.zeros(0))
    sizes = np.asarray(settings.base_sizes_mm, dtype=np.float64)
    reach_px = settings.other_readings.reach_mm * scale
    grow = (sizes[None, :] - size_mm[:, None]) / 2 * scale
    owner, which = np.nonzero((grow > 0) & (grow <= reach_px))
    if owner.size == 0 or settings.other_readings.shifts < 1:
        return none
    angle = 2 * math.pi * np.arange(settings.other_readings.shifts) / settings.other_readings.shifts
    unit = np.tile(np.stack([np.cos(angle), np.sin(angle)], axis=1), (len(owner), 1))
    owner = np.repeat(owner, len(angle))
    alt_r = np.repeat(sizes[which] / 2 * scale, len(angle))
    alt_c = center[owner] + (alt_r - radius[owner])[:, None] * unit
    # one wide search per reading, from just inside its rim to the far side of the largest alternative
    half = reach_px + settings.rim.refine_search_mm * scale
    ray_radius = radius[:, None] + half + ray_stretch(parallax, center, directions)
    deriv = ray_derivative(
        grey, center, ray_radius, half, directions, settings.rim.sample_step_px, settings.rim.profile_blur_px
    )
    peaks = find_peaks(
        deriv, polarity, settings.rim.sample_step_px, settings.rim.min_edge_gradient, settings.rim.edge_peak_fraction
    )
    target = ray_distance_to_circle(center[owner], alt_c, alt_r, directions) - radius[owner, None] - half
    tolerance = max(settings.rim.refine_search_mm * scale / 2, RING_TOLERANCE_PX)
    # only the strong edges count: on each ray theirs first (the rest +inf, never near), cut to the most any ray has;
    # each reading's rays are looked at for every size and direction, so this keeps those copies small
    most = int(peaks.good.sum(axis=-1).max(initial=0))
    strong = np.sort(np.where(peaks.good, peaks.offset_px, np.inf), axis=-1)[..., :most]
    on_alt = (np.abs(strong[owner] - target[..., None]) <= tolerance).any(axis=-1)
    # the side the two circles share says nothing: only rays where they part count
    apart = target + half > tolerance
    support = (on_alt & apart).sum(axis=1) / np.maximum(apart.sum(axis=1), 1)
    # the best direction of each (reading, size)
    support = support.reshape(-1, len(angle))
    pick = np.arange(len(support)) * len(angle) + np.argmax(support, axis=1)
    pick = pick[support.max(axis=1) > 0]
    return owner[pick], alt_c[pick], alt_r[pick]


def unseen_rim_sigma_mm(
    radius_mm: FloatArray, coverage: FloatArray, by_edges: BoolArray, settings: VisionSettings
) -> FloatArray:
    """(N,) 1-sigma (mm, per axis) of a base read by its edges that may be a circle on part of its rim and part of
    something else (a figure, a shadow, a patch of mat): the less of the rim was seen, the more room for that,
    which the fit's residuals cannot show since the edges it used do lie on its circle. ``radius_mm`` (N,) the
    fitted radii, ``coverage`` (N,) the share of rays with a rim edge, ``by_edges`` (N,) which bases the edges
    placed (0 for the others: the appearance fit weighs its own readings)."""
    short = np.maximum(0.0, settings.other_readings.unseen_rim_coverage - np.asarray(coverage, dtype=np.float64))
    sigma = settings.other_readings.unseen_rim_sigma_share * np.asarray(radius_mm, dtype=np.float64) * short
    return np.where(np.asarray(by_edges, dtype=np.bool_), sigma, 0.0)


def other_readings_mm(
    grey: NDArray[np.uint8],
    ignore: NDArray[np.uint8] | None,
    center: FloatArray,
    radius: FloatArray,
    polarity: FloatArray,
    size_mm: FloatArray,
    examine: BoolArray,
    scale: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None = None,
) -> FloatArray:
    """How far (mm) each accepted reading (centre (K, 2) and radius (K,) px, snapped size (K,) mm) may be off
    because the edges also allow another base reading there (K,; 0 where they do not, or where ``examine`` (K,)
    is false; those are still neighbours): the centre shift plus the radius change to the farthest such reading,
    which bounds how much any gap to the base would change.

    Two ways a reading goes wrong by millimetres while passing every test:

    - it is the base's top: where the wall facing the camera is dark and the mat beyond it too, the top's edge
      outlines the base all round. The footprint is then towards the nadir, ``other_readings.parallax_starts`` half
      parallax shifts (the bases' rims are not all the height assumed);
    - it runs on part of the rim and part of the figure: a smaller circle inside the footprint, touching it on
      one side (:func:`_tangent_starts`).

    From each such start a circle is fitted to the nearest edges (of the reading's polarity around a smaller
    reading, of either beyond a top); it is another reading when it passes the tests of a base (coverage, a disc,
    a standard size no smaller, no neighbour cut into) with an RMS residual up to ``other_readings.max_rms_px`` (a
    footprint beside a dark wall and its shadow is rough)."""
    other_mm = np.zeros(len(radius))
    look = np.flatnonzero(examine)
    if look.size == 0 or settings.other_readings.reach_mm <= 0:
        return other_mm
    owner, start_c, start_r = _tangent_starts(
        grey, center[look], radius[look], polarity[look], size_mm[look], scale, directions, settings, parallax
    )
    owner = look[owner]
    n_tangent = len(owner)
    if parallax is not None and settings.other_readings.parallax_starts:
        half, unit = parallax.half_shift(center)
        steps = np.asarray(settings.other_readings.parallax_starts, dtype=np.float64)
        rows = np.repeat(look, len(steps))
        moved_c = center[rows] - (np.tile(steps, look.size) * half[rows])[:, None] * unit[rows]
        owner = np.concatenate([owner, rows])
        start_c = np.concatenate([start_c, moved_c])
        start_r = np.concatenate([start_r, radius[rows]])
    if owner.size == 0:
        return other_mm
    # a larger footprint around a reading shows the reading's polarity; the footprint beyond a top may not (a dark
    # wall between a light top and a dark mat)
    either = np.arange(len(owner)) >= n_tangent
    fit_polarity = np.where(either, 0.0, polarity[owner])
    fit, _peaks = rim_fit(
        grey,
        ignore,
        start_c,
        start_r,
        max(settings.rim.refine_search_mm * scale, MIN_REFINE_HALF_WIDTH_PX),
        fit_polarity,
        "nearest",
        directions,
        settings,
        parallax,
    )
    contrast, fill = disc_contrast(
        grey, fit.center_px, fit.radius_px, fit.inlier, scale, directions, settings, parallax
    )
    size, size_ok = snap_diameters(2 * fit.radius_px / scale, settings.base_sizes_mm, settings.snap_tolerance_mm)
    passes = rim_passes(fit, settings.other_readings.max_rms_px, settings) & disc_passes(contrast, fill, settings)
    passes &= size_ok & (size >= size_mm[owner])
    # a base there would cut into a neighbour: no reading
    overlap_mm = (fit.radius_px[:, None] + radius[None, :] - centre_distances(fit.center_px, center)) / scale
    overlap_mm[np.arange(len(owner)), owner] = -np.inf
    passes &= overlap_mm.max(axis=1, initial=-np.inf) <= settings.overlaps.max_mm
    moved_mm = (np.hypot(*(fit.center_px - center[owner]).T) + np.abs(fit.radius_px - radius[owner])) / scale
    np.maximum.at(other_mm, owner[passes], moved_mm[passes])
    return other_mm


def widen_for_other_readings(
    image: NDArray[np.uint8],
    ignore: NDArray[np.uint8] | None,
    found: Candidates,
    scale: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None,
) -> Candidates:
    """``found`` (the readings that stand) with each model sigma grown by another reading the edges allow and by the
    rim they did not see, and the readings of a top disc moved back half a parallax shift (``height_share``)."""
    center, radius, by_edges = found.center_px.copy(), found.radius_px, found.by_edges
    # kin-only readings that will not stand must not pass for the neighbours of the others: looked at apart, last
    settled = ~found.kin_only

    def other_readings(rows: BoolArray, examine: BoolArray) -> FloatArray:
        at = (center[rows], radius[rows], found.polarity[rows], found.size_mm[rows], by_edges[rows] & examine)
        return other_readings_mm(image, ignore, *at, scale, directions, settings, parallax)

    # another reading the edges allow (the appearance fit weighs such readings itself, from its starts): two
    # equally likely readings a distance d apart have a spread of d / 2
    other_mm = np.zeros(len(found))
    other_mm[settled] = other_readings(settled, np.ones(int(settled.sum()), np.bool_))
    if not settled.all():
        other_mm[~settled] = other_readings(np.ones(len(found), np.bool_), ~settled)[~settled]
    unseen_mm = unseen_rim_sigma_mm(radius / scale, found.coverage, by_edges, settings)
    model_sigma = np.sqrt(found.model_sigma_mm**2 + (other_mm / 2) ** 2 + unseen_mm**2)
    # a top disc read: its middle goes back half a parallax shift, to where the outline's middle would stand, and a rim
    # height error shows in full there
    height_share = np.where(by_edges, 1.0, 0.0)
    kept_top = found.top_read
    if kept_top.any() and parallax is not None:
        half, unit = parallax.half_shift(center[kept_top])
        center[kept_top] -= half[:, None] * unit
        height_share[kept_top] = 2.0
    return replace(found, center_px=center, model_sigma_mm=model_sigma, height_share=height_share)
