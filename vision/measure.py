"""The measurements of a base that passed the first tests (step 4 of :mod:`vision.detect`): the rim model, the
appearance fit's use, readings by the top disc or the contact shadow, sizes and sigmas.

The centre's 1-sigma uncertainty comes from the covariance of the geometric fit (residual variance over the
inlier count, shaped by their angular spread), with rays closer together along the rim than
``edge_correlation_px`` counted as one, plus ``edge_bias_px / px_per_mm`` in quadrature for the pull of nearby
structures that the fit cannot see.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from vision.circlefit import CircleFit
from vision.circles import snap_diameters
from vision.config import VisionSettings
from vision.outline import OutlineFit
from vision.parallax import RimParallax, ray_stretch
from vision.profile import RimModel, fit_rim_profiles
from vision.rim import (
    sample_grey,
)

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


# Sample step (px) of the mean rim profile, and the blur (px) its model fit starts from (typical of a rectified
# image).
_PROFILE_STEP_PX = 0.25


_BLUR_START_PX = 1.0


def rim_model(
    grey: NDArray[np.uint8],
    center: FloatArray,
    radius: FloatArray,
    inlier: BoolArray,
    px_per_mm: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None = None,
) -> RimModel:
    """The wall-and-top model of each mean rim profile (see :mod:`vision.profile`): its ``rho_px`` is the
    radius correction (valid where ``ok``)."""
    inner_mm, outer_mm = settings.rim_model_mm
    u = np.arange(-inner_mm * px_per_mm, outer_mm * px_per_mm + _PROFILE_STEP_PX / 2, _PROFILE_STEP_PX)
    ray_radius = radius[:, None] + ray_stretch(parallax, center, directions)
    prof = sample_grey(grey, center, ray_radius, u, directions).astype(np.float64)
    rays = inlier.sum(axis=1)
    mean = (prof * inlier[..., None]).sum(axis=1) / np.maximum(rays, 1)[:, None]
    weight = np.repeat((rays > 0)[:, None].astype(np.float64), len(u), axis=1)
    prior = (settings.wall_width_mm[0] * px_per_mm, settings.wall_width_mm[1] * px_per_mm, settings.wall_prior_grey)
    model = fit_rim_profiles(u, mean, weight, prior, _BLUR_START_PX)
    return RimModel(model.rho_px, model.width_px, model.sigma_px, model.levels, model.ok & (rays > 0))


# Where across the dark band (shares of its width in from its outer edge) its colour is sampled: clear of both of
# its blurred edges.
_SHADOW_BAND_SHARES = (0.25, 0.5, 0.75)


def shadow_ring_readings(
    chroma: NDArray[np.uint8] | None,
    center: FloatArray,
    radius: FloatArray,
    inlier: BoolArray,
    rim: RimModel,
    unsized: BoolArray,
    px_per_mm: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None,
) -> tuple[NDArray[np.intp], FloatArray, FloatArray]:
    """The footprints of bases read by the outer edge of their contact shadow. Of the circles ``unsized`` (K,)
    (read by the edges and the rim model: ``center`` (K, 2), ``radius`` (K,) px at the rim model's outer edge),
    those whose rim model finds a band darker than both the mat and the top by ``shadow_min_darkness`` and of
    the mat's colour (median chroma contrast ``chroma`` (H, W) over the band at most ``shadow_max_colour``: a
    printed ring or a finger's edge has a colour of its own) and whose band's inner edge snaps to a standard
    size. Returns their rows (M,), inner radius (M,) px and size (M,) mm; none without a colour image."""
    none = (np.zeros(0, np.intp), np.zeros(0), np.zeros(0))
    mat, wall, top = rim.levels[:, 0], rim.levels[:, 1], rim.levels[:, 2]
    dark = unsized & rim.ok & (wall <= np.minimum(mat, top) - settings.shadow_min_darkness)
    if chroma is None or not dark.any():
        return none
    rows = np.flatnonzero(dark)
    inner = radius[rows] - rim.width_px[rows]
    size, fits = snap_diameters(2 * inner / px_per_mm, settings.base_sizes_mm, settings.snap_tolerance_mm)
    # across the band, on the rays the edge fit kept
    ray_radius = radius[rows, None] + ray_stretch(parallax, center[rows], directions)
    across = -np.asarray(_SHADOW_BAND_SHARES)[None, :] * rim.width_px[rows, None]
    colour = np.stack(
        [sample_grey(chroma, center[rows], ray_radius + a[:, None], np.zeros(1), directions)[..., 0] for a in across.T],
        axis=-1,
    )
    kept = np.where(inlier[rows, :, None], colour, np.nan).reshape(len(rows), -1)
    # the rim model needs kept rays, so no row is all NaN
    plain = np.nanmedian(kept, axis=1) <= settings.shadow_max_colour
    take = fits & plain
    return rows[take], inner[take], size[take]


def center_sigma(fit: CircleFit, directions: FloatArray, px_per_mm: float, settings: VisionSettings) -> FloatArray:
    """Isotropic 1-sigma centre uncertainty (K,) in px."""
    with np.errstate(invalid="ignore"):
        var = 0.5 * (fit.center_cov_px2[:, 0, 0] + fit.center_cov_px2[:, 1, 1])
    spacing = 2 * math.pi * np.maximum(fit.radius_px, 1e-9) / len(directions)
    var = var * np.maximum(1.0, settings.edge_correlation_px / spacing)
    bias = settings.edge_bias_px / px_per_mm
    return np.asarray(np.sqrt(var + bias**2), dtype=np.float64)


def outline_sigmas(
    look: OutlineFit,
    px_per_mm: float,
    settings: VisionSettings,
    misfit_scale: float | FloatArray,
    frame_blur_px: FloatArray | None = None,
    counted: BoolArray | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The diameter and model sigmas (mm) of the appearance fits ``look`` where they are ok (two (K_ok,)), their misfit
    times ``misfit_scale`` (one for all, or (K_ok,)) and, in the model sigma, any blur beyond the frame's
    (:func:`excess_blur_mm`, with ``frame_blur_px`` and ``counted``); and the doubt (K_ok, 2) mm along the line to
    another start's fit about as good: ``other_start_share`` of their distance d, along that line. Two equally
    likely readings d apart spread by d / 2 about their mean, but the fit reports one of them, so at d / 2 the other
    would stand right on a call's 2-sigma line."""
    ok = look.ok
    scaled = misfit_scale / px_per_mm
    diameter = np.hypot(settings.outline_diameter_sigma_mm, 2.0 * scaled * look.radius_misfit_px[ok])
    model = np.hypot(settings.outline_model_sigma_mm, scaled * look.misfit_px[ok])
    model = np.hypot(model, excess_blur_mm(look, px_per_mm, settings, frame_blur_px, counted))
    doubt = settings.other_start_share * look.other_start_px[ok] / px_per_mm
    return (
        np.asarray(diameter, dtype=np.float64),
        np.asarray(model, dtype=np.float64),
        np.asarray(doubt, dtype=np.float64),
    )


def excess_blur_mm(
    look: OutlineFit,
    px_per_mm: float,
    settings: VisionSettings,
    frame_blur_px: FloatArray | None = None,
    counted: BoolArray | None = None,
) -> FloatArray:
    """(K_ok,) mm: how much more blur each usable fit of ``look`` (bases of one frame) needed than ``excess_blur_free``
    times the frame's own (the median of the fits and of ``frame_blur_px`` (M,), the blur of the frame's other fits,
    px; of the fits, those ``counted`` (K,), None: all), in quadrature, times ``excess_blur_scale``; zeros with too
    few fits to tell the frame's blur. The camera blurs every base of a frame alike: a fit that needed more smeared
    its edge over something the model lacks (a figure's arm over the rim, its shadow beside it), which its residuals
    alone hide."""
    blur = look.sigma_px[look.ok]
    own = blur if counted is None else look.sigma_px[look.ok & counted]
    frame = own if frame_blur_px is None else np.concatenate([own, frame_blur_px])
    if frame.size < settings.excess_blur_min_bases:
        return np.zeros(blur.size)
    allowed = settings.excess_blur_free * float(np.median(frame))
    excess = np.sqrt(np.maximum(blur**2 - allowed**2, 0.0)) / px_per_mm
    return np.asarray(settings.excess_blur_scale * excess, dtype=np.float64)


def wall_misplaced_mm(
    look: OutlineFit, middle_px: FloatArray, px_per_mm: float, parallax: RimParallax, settings: VisionSettings
) -> FloatArray:
    """(K_ok, 2) mm: the doubt, along the line from the nadir, of each usable fit of ``look`` (their outline
    middles ``middle_px`` (K_ok, 2)) whose wall came out where no wall is, on the side towards the nadir: a dark
    base's (its top at least ``min_disc_contrast`` darker than the mat) more than ``wall_dark_max`` of the way from
    the top's level to the mat's (the shaded mat read as the wall: the footprint put where the contact shadow is,
    nearer the nadir than the base stands), a light base's (its top that much lighter) less than ``wall_light_min``
    of it (the top read as the wall: the footprint put away from the nadir, over the shadow). Either misreading is
    off by up to the top disc's parallax shift or more; ``wall_misplaced_doubt`` of that shift is the doubt, zeros
    elsewhere."""
    place, contrast = look.near_wall[look.ok], look.near_contrast[look.ok]
    with np.errstate(invalid="ignore"):
        is_dark, is_light = contrast >= settings.min_disc_contrast, contrast <= -settings.min_disc_contrast
        dark, light = is_dark & (place > settings.wall_dark_max), is_light & (place < settings.wall_light_min)
        far = (is_dark & (place > settings.wall_dark_far)) | (is_light & (place < settings.wall_light_far))
    half_px, unit = parallax.half_shift(middle_px)
    share = np.where(far, settings.wall_far_doubt, settings.wall_misplaced_doubt)
    length_mm = share * 2.0 * half_px / px_per_mm
    return np.asarray(np.where((dark | light)[:, None], length_mm[:, None] * unit, 0.0), dtype=np.float64)


def wider_doubt(doubt_mm: FloatArray, other_mm: FloatArray) -> FloatArray:
    """(K, 2) per row the longer of two doubts (K, 2) mm: both are a second reading's spread along a line, and
    the wider one stands."""
    longer = np.hypot(*other_mm.T) > np.hypot(*doubt_mm.T)
    return np.asarray(np.where(longer[:, None], other_mm, doubt_mm), dtype=np.float64)


def shadow_band(rim: RimModel, settings: VisionSettings) -> BoolArray:
    """(K,) whether each rim's band is darker than both the mat and the top by ``shadow_min_darkness``: a shadow,
    the edges' circle its outer edge, wider than what casts it (a die's shadow reads as a 25 mm circle)."""
    return np.asarray(
        rim.levels[:, 1] <= rim.levels[:, [0, 2]].min(axis=1) - settings.shadow_min_darkness, dtype=np.bool_
    )


def read_by_top(
    rim: RimModel, by_edges: BoolArray, in_grey: bool, scale: float, settings: VisionSettings, with_parallax: bool
) -> BoolArray:
    """(K,) whether each candidate ``rim`` (K rows) was fitted for is read by its top disc: in the grey look
    (``in_grey``), seen from a known camera position (``with_parallax``) where figures blur, read by the edges
    (``by_edges`` (K,)), its top lighter than the mat or darker by at most ``top_read_max_darkness``. The wall of
    such a base faces sideways and is darker than its top, so on the side facing the camera the rim edge of the
    base's polarity is the top's, not the footprint's: the outline is the top disc, a circle a whole parallax shift
    from the footprint. (In the colour look the edges follow chromaticity, which shading does not change.)"""
    if (
        not in_grey
        or not with_parallax
        or scale >= settings.outline_min_px_per_mm
        or settings.top_read_max_darkness < 0
    ):
        return np.zeros(len(by_edges), np.bool_)
    mat, top = rim.levels[:, 0], rim.levels[:, 2]
    return np.asarray(by_edges & rim.ok & (top >= mat - settings.top_read_max_darkness), dtype=np.bool_)
