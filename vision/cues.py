"""What the tests of a base (step 4 of :mod:`vision.detect`) measure: how unlike the mat the band inside a rim is
(a disc, not a ring), and how much the inside varies around the centre (a figure).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from vision.circles import centre_distances
from vision.parallax import RimParallax, ray_stretch
from vision.rim import (
    sample_grey,
)
from vision.settings import VisionSettings

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


# The band's strongest difference from the mat, robustly: this percentile of the samples.
_DISC_HIGH_PERCENTILE = 90.0


# Samples per mm across the disc and mat bands of the ring test.
_BAND_SAMPLES_PER_MM = 2.0


# The figure test looks at this many circles inside a rim and takes this percentile of their spreads: a figure
# covers only some of them (a rider's lance near the rim, a trooper's head in the middle).
_FIGURE_CIRCLES = 8


_FIGURE_PERCENTILE = 75.0


# Grid step (px) of the centres the figure test is tried from first, looking for a concentric pattern seen off centre,
# then halved round the best down to the finest step (a token's ring, its edges a blur wide, shows a quarter pixel
# off centre), and how many circles' samples are taken at once.
_RECENTRE_STEP_PX = 1.0


_RECENTRE_FINEST_PX = 0.25


# Only spreads under this many times the bar are looked at again on the finer grids: a token's spread half a step
# from its centre stays under it (a drawn token's, half a millimetre off, 7.7 grey levels), a figure's hardly drops.
RECENTRE_REFINE = 3.0


_RECENTRE_BATCH = 512


def disc_contrast(
    grey: NDArray[np.uint8],
    center: FloatArray,
    radius: FloatArray,
    inlier: BoolArray,
    px_per_mm: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None = None,
) -> tuple[FloatArray, FloatArray]:
    """How unlike the mat the band just inside each rim is: the median of |grey(band) - grey(mat just outside)|
    over the inlier rays of each candidate (K,), and that median over the 90th percentile (K,) - near 1 when
    the band is filled (wall, top), small when a thin line makes the edge."""
    if len(radius) == 0:
        return np.zeros(0), np.zeros(0)

    def band(start_mm: float, end_mm: float) -> FloatArray:
        count = max(2, math.ceil((end_mm - start_mm) * _BAND_SAMPLES_PER_MM) + 1)
        return np.linspace(start_mm, end_mm, count) * px_per_mm

    inner = -band(*settings.verdicts.disc_inner_mm)
    outer = band(*settings.verdicts.disc_outer_mm)
    ray_radius = radius[:, None] + ray_stretch(parallax, center, directions)
    prof = sample_grey(grey, center, ray_radius, np.concatenate([inner, outer]), directions).astype(np.float64)
    mat = np.median(prof[..., len(inner) :], axis=-1, keepdims=True)
    diff = np.abs(prof[..., : len(inner)] - mat)
    # medians and percentiles over the inlier rays' samples: sorted with the rest pushed to the end
    diff = np.where(inlier[..., None], diff, np.inf).reshape(len(radius), -1)
    ordered = np.sort(diff, axis=1)
    count = inlier.sum(axis=1) * diff.shape[1] // max(inlier.shape[1], 1)
    rows = np.arange(len(radius))
    last = np.maximum(count - 1, 0)
    med = ordered[rows, last // 2]
    high = ordered[rows, np.round(last * _DISC_HIGH_PERCENTILE / 100).astype(np.intp)]
    with np.errstate(invalid="ignore", divide="ignore"):
        fill = np.where(high > 0, med / high, 0.0)
    has = count > 0
    return np.where(has, med, 0.0), np.where(has, fill, 0.0)


def disc_passes(contrast: FloatArray, fill: FloatArray, settings: VisionSettings) -> BoolArray:
    """(K,) a filled disc inside the rim, not a printed ring (see :func:`disc_contrast`)."""
    return np.asarray(
        (contrast >= settings.verdicts.min_disc_contrast) & (fill >= settings.verdicts.min_disc_fill), dtype=np.bool_
    )


def figure_contrast(
    grey: NDArray[np.uint8], center: FloatArray, radius: FloatArray, directions: FloatArray, settings: VisionSettings
) -> FloatArray:
    """How much the inside of each circle varies around it (K,): on circles at ``figure_band`` fractions of the
    radius, the spread (standard deviation, grey levels) of the grey level around each circle; the 75th
    percentile of those spreads. A base carries a figure that breaks its symmetry; a token, a printed ring or
    disc is the same all the way round."""
    if len(radius) == 0:
        return np.zeros(0)
    return figure_spread(figure_samples(grey, center, radius, directions, settings))


def figure_spread(samples: FloatArray) -> FloatArray:
    """(K,) the figure contrast of :func:`figure_samples` (K, R, C): the 75th percentile over the C circles of the
    spread around each."""
    return np.asarray(np.percentile(samples.std(axis=1), _FIGURE_PERCENTILE, axis=1), dtype=np.float64)


def least_figure(
    image: NDArray[np.uint8],
    center: FloatArray,
    radius: FloatArray,
    directions: FloatArray,
    settings: VisionSettings,
    reach_px: float,
    refine_below: float = math.inf,
) -> FloatArray:
    """(K,) the least figure contrast (:func:`figure_contrast`) of each circle (``center`` (K, 2), ``radius``
    (K,) px) over the centres within ``reach_px`` of its own: on a grid of ``_RECENTRE_STEP_PX`` steps, then on
    grids of half the step round the best so far, down to ``_RECENTRE_FINEST_PX``, for the circles whose least so far
    lies under ``refine_below`` (the others keep the least of the first grid)."""
    if len(radius) == 0:
        return np.zeros(0)

    def grid(step_px: float, reach: float) -> FloatArray:
        ticks = step_px * np.arange(-math.floor(reach / step_px), math.floor(reach / step_px) + 1)
        dx, dy = (a.ravel() for a in np.meshgrid(ticks, ticks))
        within = np.hypot(dx, dy) <= reach + 1e-9
        return np.stack([dx[within], dy[within]], axis=1)

    def spreads(centres: FloatArray, radii: FloatArray) -> FloatArray:
        # a few circles at a time: each brings (shifts x rays x circles) samples
        out = np.empty(len(radii))
        for start in range(0, len(radii), _RECENTRE_BATCH):
            part = slice(start, start + _RECENTRE_BATCH)
            out[part] = figure_spread(figure_samples(image, centres[part], radii[part], directions, settings))
        return out

    # a concentric pattern's spread grows with the distance from its centre: each grid's best lies beside it, and
    # the next, finer grid goes round that best. Only spreads under ``refine_below`` are refined: a step off its
    # centre does not lift a concentric pattern's spread far, nor does it lower a figure's
    best, least = center.copy(), np.full(len(radius), np.inf)
    step_px, shifts, rows = _RECENTRE_STEP_PX, grid(_RECENTRE_STEP_PX, reach_px), np.arange(len(radius))
    while rows.size:
        tried = best[rows, None, :] + shifts[None]
        values = spreads(tried.reshape(-1, 2), np.repeat(radius[rows], len(shifts))).reshape(len(rows), -1)
        each, pick = np.arange(len(rows)), values.argmin(axis=1)
        lowest = values[each, pick]
        better = lowest < least[rows]
        best[rows[better]] = tried[each, pick][better]
        least[rows] = np.minimum(least[rows], lowest)
        step_px /= 2
        if step_px < _RECENTRE_FINEST_PX:
            break
        rows = rows[least[rows] < refine_below]
        shifts = grid(step_px, step_px * math.sqrt(2))
    return least


def figure_samples(
    image: NDArray[np.uint8], center: FloatArray, radius: FloatArray, directions: FloatArray, settings: VisionSettings
) -> FloatArray:
    """(K, R, C) samples of ``image`` on C circles at the ``figure_band`` fractions of each radius (K,), along
    the R ``directions``."""
    fractions = np.linspace(settings.verdicts.figure_band[0], settings.verdicts.figure_band[1], _FIGURE_CIRCLES)
    return np.stack(
        [sample_grey(image, center, radius * f, np.zeros(1), directions)[..., 0] for f in fractions], axis=-1
    ).astype(np.float64)


def concentric(
    center: FloatArray,
    radius: FloatArray,
    accept: BoolArray,
    others: NDArray[np.intp],
    larger_px: tuple[FloatArray | float, FloatArray | float],
    slack_px: float,
) -> NDArray[np.intp]:
    """Rows of the accepted circles (``center`` (K, 2), ``radius`` (K,) px, ``accept`` (K,)) centred within
    ``slack_px`` of one of the ``others`` (M,) rows, their radius larger than its by ``larger_px`` (low, high;
    each a float or (M,) px) widened by ``slack_px``."""
    rows = np.flatnonzero(accept)
    if rows.size == 0 or others.size == 0:
        return np.zeros(0, np.intp)
    low, high = (np.broadcast_to(np.asarray(v, dtype=np.float64), others.shape) for v in larger_px)
    apart = centre_distances(center[rows], center[others])
    larger = radius[rows, None] - radius[None, others]
    near = (apart <= slack_px) & (larger >= low[None, :] - slack_px) & (larger <= high[None, :] + slack_px)
    return rows[near.any(axis=1)]
