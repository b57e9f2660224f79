"""Step 3 of :mod:`vision.detect`, the edge refinement of each footprint.

Refinement: rays resampled around the nominal radius (``refine_search_mm`` either side); on every ray the
strong edge of the footprint's polarity nearest that radius, located to a fraction of a sample by a parabola
through the gradient peak; then a robust circle fit (:mod:`vision.circlefit`): consensus or algebraic start,
reweighted geometric steps, outliers (weapons, cloaks, a neighbour) dropped. Twice, re-snapping in between.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from vision.candidates import Candidates
from vision.circlefit import CircleFit, fit_circles
from vision.circles import snap_diameters
from vision.parallax import RimParallax, ray_stretch, unstretch
from vision.rim import (
    Peaks,
    find_peaks,
    pick_edges,
    ray_derivative,
    sample_mask,
)
from vision.settings import VisionSettings

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


# The refinement searches at least this far (px) either side of the nominal radius: a gradient peak at the very
# end of a shorter window is no local maximum, and at about 1 px/mm blur moves the peak by most of a pixel.
MIN_REFINE_HALF_WIDTH_PX = 2.5


def rim_fit(
    grey: NDArray[np.uint8],
    ignore: NDArray[np.uint8] | None,
    center: FloatArray,
    radius: FloatArray,
    half_width_px: float,
    polarity: FloatArray | None,
    prefer: str,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None = None,
) -> tuple[CircleFit, Peaks]:
    """Sample rays over ``radius +- half_width_px`` (stretched along each ray by the parallax's stadium), take
    one edge per ray (see :func:`vision.rim.pick_edges`) and fit a circle to them, unstretched. Also returns
    every strong edge of the rays."""
    ray_radius = radius[:, None] + ray_stretch(parallax, center, directions)
    deriv = ray_derivative(
        grey, center, ray_radius, half_width_px, directions, settings.rim.sample_step_px, settings.rim.profile_blur_px
    )
    peaks = find_peaks(
        deriv, polarity, settings.rim.sample_step_px, settings.rim.min_edge_gradient, settings.rim.edge_peak_fraction
    )
    edges = pick_edges(peaks, ray_radius, prefer)
    points = edges.points(center, directions)
    found = edges.found
    if ignore is not None:
        found = found & ~sample_mask(ignore, points)
    points = unstretch(parallax, points, center)
    fit = fit_circles(points, found, center, radius, settings.circle.iterations, settings.circle.outlier_sigmas)
    return fit, peaks


def rim_coverage(fit: CircleFit) -> FloatArray:
    return np.asarray(fit.inlier.mean(axis=1), dtype=np.float64)


def rim_passes(fit: CircleFit, max_rms_px: float, settings: VisionSettings) -> BoolArray:
    """(K,) the rim cues of a base: a fit, enough of the rim seen, round to ``max_rms_px``."""
    return np.asarray(
        fit.ok & (rim_coverage(fit) >= settings.verdicts.min_edge_coverage) & (fit.rms_px <= max_rms_px), dtype=np.bool_
    )


def refine_rims(
    image: NDArray[np.uint8],
    ignore: NDArray[np.uint8] | None,
    found: Candidates,
    scale: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None,
) -> Candidates:
    """``found`` refined around each nominal radius, ``refine_passes`` times, re-snapped after every pass; the last
    pass's fit goes with them."""
    center, radius, nominal = found.center_px, found.radius_px, found.nominal_mm
    sizes = settings.base_sizes_mm
    fit = None
    for _ in range(settings.rim.refine_passes):
        fit, _peaks = rim_fit(
            image,
            ignore,
            center,
            nominal / 2 * scale,
            max(settings.rim.refine_search_mm * scale, MIN_REFINE_HALF_WIDTH_PX),
            found.polarity,
            "nearest",
            directions,
            settings,
            parallax,
        )
        center = np.where(fit.ok[:, None], fit.center_px, center)
        radius = np.where(fit.ok, fit.radius_px, radius)
        nominal = np.where(fit.ok, snap_diameters(2 * radius / scale, sizes, np.inf)[0], nominal)
    return replace(found, center_px=center, radius_px=radius, nominal_mm=nominal, fit=fit)
