"""The measurements of a base that passed the first tests (step 4 of :mod:`vision.detect`): the rim model, the
appearance fit's use, readings by the top disc or the contact shadow, sizes and sigmas.

The centre's 1-sigma uncertainty comes from the covariance of the geometric fit (residual variance over the
inlier count, shaped by their angular spread), with rays closer together along the rim than
``edge_correlation_px`` counted as one, plus ``edge_bias_px / px_per_mm`` in quadrature for the pull of nearby
structures that the fit cannot see.
"""

from __future__ import annotations

import math
from concurrent.futures import Future
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from vision.candidates import Candidates
from vision.circlefit import CircleFit
from vision.circles import snap_diameters
from vision.cues import disc_contrast, disc_passes
from vision.outline import OutlineFit, fit_outlines
from vision.parallax import RimParallax, middle_of, ray_stretch
from vision.profile import RimModel, fit_rim_profiles
from vision.rim import (
    sample_grey,
)
from vision.settings import VisionSettings

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
    inner_mm, outer_mm = settings.rim.model_mm
    u = np.arange(-inner_mm * px_per_mm, outer_mm * px_per_mm + _PROFILE_STEP_PX / 2, _PROFILE_STEP_PX)
    ray_radius = radius[:, None] + ray_stretch(parallax, center, directions)
    prof = sample_grey(grey, center, ray_radius, u, directions).astype(np.float64)
    rays = inlier.sum(axis=1)
    mean = (prof * inlier[..., None]).sum(axis=1) / np.maximum(rays, 1)[:, None]
    weight = np.repeat((rays > 0)[:, None].astype(np.float64), len(u), axis=1)
    prior = (
        settings.rim.wall_width_mm[0] * px_per_mm,
        settings.rim.wall_width_mm[1] * px_per_mm,
        settings.rim.wall_prior_grey,
    )
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
    dark = unsized & rim.ok & (wall <= np.minimum(mat, top) - settings.colour.shadow_min_darkness)
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
    plain = np.nanmedian(kept, axis=1) <= settings.colour.shadow_max_colour
    take = fits & plain
    return rows[take], inner[take], size[take]


def center_sigma(fit: CircleFit, directions: FloatArray, px_per_mm: float, settings: VisionSettings) -> FloatArray:
    """Isotropic 1-sigma centre uncertainty (K,) in px."""
    with np.errstate(invalid="ignore"):
        var = 0.5 * (fit.center_cov_px2[:, 0, 0] + fit.center_cov_px2[:, 1, 1])
    spacing = 2 * math.pi * np.maximum(fit.radius_px, 1e-9) / len(directions)
    var = var * np.maximum(1.0, settings.circle.edge_correlation_px / spacing)
    bias = settings.circle.edge_bias_px / px_per_mm
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
    diameter = np.hypot(settings.outline.diameter_sigma_mm, 2.0 * scaled * look.radius_misfit_px[ok])
    model = np.hypot(settings.outline.model_sigma_mm, scaled * look.misfit_px[ok])
    model = np.hypot(model, excess_blur_mm(look, px_per_mm, settings, frame_blur_px, counted))
    doubt = settings.outline.other_start_share * look.other_start_px[ok] / px_per_mm
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
    if frame.size < settings.outline.excess_blur_min_bases:
        return np.zeros(blur.size)
    allowed = settings.outline.excess_blur_free * float(np.median(frame))
    excess = np.sqrt(np.maximum(blur**2 - allowed**2, 0.0)) / px_per_mm
    return np.asarray(settings.outline.excess_blur_scale * excess, dtype=np.float64)


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
        is_dark, is_light = (
            contrast >= settings.verdicts.min_disc_contrast,
            contrast <= -settings.verdicts.min_disc_contrast,
        )
        dark, light = (
            is_dark & (place > settings.outline.wall_dark_max),
            is_light & (place < settings.outline.wall_light_min),
        )
        far = (is_dark & (place > settings.outline.wall_dark_far)) | (
            is_light & (place < settings.outline.wall_light_far)
        )
    half_px, unit = parallax.half_shift(middle_px)
    share = np.where(far, settings.outline.wall_far_doubt, settings.outline.wall_misplaced_doubt)
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
        rim.levels[:, 1] <= rim.levels[:, [0, 2]].min(axis=1) - settings.colour.shadow_min_darkness, dtype=np.bool_
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
        or scale >= settings.outline.min_px_per_mm
        or settings.rim.top_read_max_darkness < 0
    ):
        return np.zeros(len(by_edges), np.bool_)
    mat, top = rim.levels[:, 0], rim.levels[:, 2]
    return np.asarray(by_edges & rim.ok & (top >= mat - settings.rim.top_read_max_darkness), dtype=np.bool_)


def measure_bases(
    image: NDArray[np.uint8],
    grey: NDArray[np.uint8],
    found: Candidates,
    chroma_pending: Future[NDArray[np.uint8] | None] | None,
    frame_blur_px: FloatArray | None,
    scale: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None,
) -> tuple[Candidates, NDArray[np.uint8] | None, FloatArray]:
    """``found`` measured where accepted or to be tested again: the rim model, the appearance fit in ``grey``
    where it runs, the disc test again at its footprint, the footprint's radius and size (accepted only where one
    fits), its centre and sigmas. Also returns the colour contrast (waited for from ``chroma_pending`` after the
    appearance fit) and the blur (px) of the usable appearance fits of readings that are not kin-only."""
    fit = found.edge_fit
    # the footprint radius, free of the blur-and-wall shift, decides the size
    live = np.flatnonzero(found.accept | found.retry)
    rim = rim_model(
        image, found.center_px[live], found.radius_px[live], fit.inlier[live], scale, directions, settings, parallax
    )
    look, size_look, astray, sizes_only = _appearance(grey, found, live, scale, directions, settings, parallax)
    chroma = None if chroma_pending is None else chroma_pending.result()
    accept, contrast = _disc_again(image, found, live, look, scale, directions, settings, parallax)
    # the circles the edges read, before the fit moves them: where a token's printed ring and its middle lie
    edge_center, edge_radius = found.center_px.copy(), found.radius_px.copy()
    in_grey = image is grey
    radius, top_read, shadow = _footprint_radii(
        found, live, rim, look, size_look, sizes_only, in_grey, scale, directions, settings, parallax
    )
    center = found.center_px.copy()
    diameter_sigma = np.full(len(radius), settings.circle.diameter_sigma_mm)
    model_sigma = np.full(len(radius), settings.circle.model_sigma_mm)
    doubt = np.zeros((len(radius), 2))
    # the frame's blur is told by the fits of the readings that are bases, not by the kin-only ones
    settled_live = ~found.kin_only[live]
    diameter_sigma[live[look.ok]], model_sigma[live[look.ok]], doubt[live[look.ok]] = outline_sigmas(
        look, scale, settings, settings.outline.misfit_scale, frame_blur_px, settled_live
    )
    center[live] = np.where(look.ok[:, None], middle_of(look.center_px, parallax), center[live])
    if parallax is not None and look.ok.any():
        fitted = live[look.ok]
        doubt[fitted] = wider_doubt(doubt[fitted], wall_misplaced_mm(look, center[fitted], scale, parallax, settings))
    final_size, size_ok = _sizes(
        chroma, center, radius, edge_radius, fit, live, rim, look, astray, shadow, scale, directions, settings, parallax
    )
    accept &= size_ok
    by_edges = np.ones(len(radius), np.bool_)
    by_edges[live[look.ok]] = False
    measured = np.zeros(len(radius), np.bool_)
    measured[live] = True
    rim_levels, rim_width, rim_ok = np.full((len(radius), 3), np.nan), np.full(len(radius), np.nan), measured & False
    rim_levels[live], rim_width[live], rim_ok[live] = rim.levels, rim.width_px, rim.ok
    found = replace(
        found,
        center_px=center,
        radius_px=radius,
        contrast=contrast,
        accept=accept,
        measured=measured,
        rim_levels=rim_levels,
        rim_width_px=rim_width,
        rim_ok_model=rim_ok,
        edge_center_px=edge_center,
        edge_radius_px=edge_radius,
        size_mm=final_size,
        diameter_sigma_mm=diameter_sigma,
        model_sigma_mm=model_sigma,
        doubt_mm=doubt,
        by_edges=by_edges,
        top_read=np.isin(np.arange(len(radius)), top_read),
    )
    return found, chroma, look.sigma_px[look.ok & settled_live]


def _appearance(
    grey: NDArray[np.uint8],
    found: Candidates,
    live: NDArray[np.intp],
    scale: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None,
) -> tuple[OutlineFit, OutlineFit, BoolArray, bool]:
    """The appearance fits of the ``live`` rows of ``found``: those whose centres and sizes stand (none where the
    fit does not run), those whose sizes stand, which went astray (K_live,), and whether the fit reads sizes only."""
    fit = found.edge_fit
    center, radius = found.center_px, found.radius_px
    sizes = settings.base_sizes_mm
    by_appearance = parallax is not None and scale >= settings.outline.min_px_per_mm
    # the footprint from the whole appearance (wall, top, contact shadow) where the camera's position says where the
    # wall shows; the rim model elsewhere and where that fails
    # a little under outline.min_px_per_mm (a 4K frame from a low camera) the fit still reads the size better than the
    # edges, though not yet the centre
    sizes_only = parallax is not None and settings.outline.size_min_px_per_mm <= scale < settings.outline.min_px_per_mm
    if by_appearance or sizes_only:
        look = fit_outlines(grey, center[live], radius[live], fit.inlier[live], directions, scale, parallax, settings)
    else:
        look = OutlineFit.none(len(live))
    # a fit that took a contact shadow in reads the footprint a size or more too large: where its footprint fits no
    # standard size, is larger than the edges' circle and that circle fits one, the base is read as where the fit
    # fails. So where the fit settled a little inside the edges' circle (a circle inside the footprint); a flat disc,
    # a token or a printed one, has no wall and no shadow of its own, and the fit reads it further inside its edges
    astray = np.zeros(len(live), np.bool_)
    if look.ok.any() and settings.rim.model_fallback_mm > 0:
        _size, look_fits = snap_diameters(2 * look.radius_px / scale, sizes, settings.snap_tolerance_mm)
        _size, edge_fits = snap_diameters(2 * radius[live] / scale, sizes, settings.rim.model_fallback_mm)
        short_mm = 2 * (radius[live] - look.radius_px) / scale
        astray = look.ok & ~look_fits & edge_fits & (short_mm < settings.outline.astray_short_mm)
        look = replace(look, ok=look.ok & ~astray)
    # where the fit reads only sizes, its reading is kept apart and the rest goes on as where no fit runs
    size_look = look
    if sizes_only:
        look = OutlineFit.none(len(live))
    return look, size_look, astray, sizes_only


def _disc_again(
    image: NDArray[np.uint8],
    found: Candidates,
    live: NDArray[np.intp],
    look: OutlineFit,
    scale: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None,
) -> tuple[BoolArray, FloatArray]:
    """``accept`` and ``contrast`` of ``found`` with the rows to test again (``retry``) that pass the disc test at
    the footprint the appearance fit ``look`` (of the ``live`` rows) finds accepted, at that contrast."""
    accept, contrast = found.accept.copy(), found.contrast.copy()
    again = np.flatnonzero(found.retry[live] & look.ok)
    if again.size:
        rows = live[again]
        contrast_again, fill_again = disc_contrast(
            image,
            middle_of(look.center_px[again], parallax),
            look.radius_px[again],
            found.edge_fit.inlier[rows],
            scale,
            directions,
            settings,
            parallax,
        )
        disc = disc_passes(contrast_again, fill_again, settings)
        accept[rows[disc]] = True
        contrast[rows[disc]] = contrast_again[disc]
    return accept, contrast


def _footprint_radii(
    found: Candidates,
    live: NDArray[np.intp],
    rim: RimModel,
    look: OutlineFit,
    size_look: OutlineFit,
    sizes_only: bool,
    in_grey: bool,
    scale: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None,
) -> tuple[FloatArray, NDArray[np.intp], BoolArray]:
    """The footprint radius (K,) px of each row of ``found``: the appearance fit's (``look``, of the ``live`` rows),
    else the edges' corrected by the rim model ``rim``, a top disc's widened back to the footprint's, the size fit's
    (``size_look``) where it reads ``sizes_only``; the rows read by their top disc; and which of the live rows' rims
    are a shadow band (K_live,)."""
    radius = found.radius_px.copy()
    radius[live] = np.where(look.ok, look.radius_px, radius[live] + np.where(rim.ok, rim.rho_px, 0.0))
    # a base lighter than the mat, read by the edges where figures blur, is read by its top disc: a circle, which the
    # edge fit took for the stadium of footprint and top and so read short by the stretch it allowed each ray
    by_top = read_by_top(rim, ~look.ok, in_grey, scale, settings, parallax is not None)
    # a band darker than the mat and the top round the rim is a shadow, its outer edge the edges' circle
    shadow = rim.ok & shadow_band(rim, settings)
    top_read, circle = live[by_top], live[by_top & ~shadow]
    if circle.size and parallax is not None:
        stretch = ray_stretch(parallax, found.center_px[circle], directions)
        seen = found.edge_fit.inlier[circle]
        radius[circle] += (stretch * seen).sum(axis=1) / np.maximum(seen.sum(axis=1), 1)
    if sizes_only:
        # a fit far from the edges' circle read another one (a 60 mm circle round two 25 mm bases)
        near_edges = np.abs(2.0 * (size_look.radius_px - radius[live]) / scale) <= settings.snap_tolerance_mm
        radius[live] = np.where(size_look.ok & near_edges, size_look.radius_px, radius[live])
    return radius, top_read, np.asarray(shadow, np.bool_)


def _sizes(
    chroma: NDArray[np.uint8] | None,
    center: FloatArray,
    radius: FloatArray,
    edge_radius: FloatArray,
    fit: CircleFit,
    live: NDArray[np.intp],
    rim: RimModel,
    look: OutlineFit,
    astray: BoolArray,
    shadow: BoolArray,
    scale: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None,
) -> tuple[FloatArray, BoolArray]:
    """The standard size (K,) mm of each footprint (``radius`` (K,) px, changed in place where a contact shadow's
    or the edges' own circle tells it better) and whether one fits (K,)."""
    sizes = settings.base_sizes_mm
    final_size, size_ok = snap_diameters(2 * radius / scale, sizes, settings.snap_tolerance_mm)
    # a base of the mat's own colour may show only by its contact shadow: the edges and the rim model read the
    # dark ring's outer edge, and no size fits; its inner edge is the footprint
    shadowed, inner_px, inner_size = shadow_ring_readings(
        chroma,
        center[live],
        radius[live],
        fit.inlier[live],
        rim,
        ~look.ok & ~size_ok[live],
        scale,
        directions,
        settings,
        parallax,
    )
    radius[live[shadowed]], final_size[live[shadowed]], size_ok[live[shadowed]] = inner_px, inner_size, True
    # where figures blur, the rim model's blur correction may move a circle off every size its edges' own circle
    # fits: the edges' size stands; so where the appearance fit went astray (above). Not round a dark band: that is a
    # shadow, the edges' circle its outer edge, wider than what casts it (a die's shadow reads as a 25 mm circle)
    if settings.rim.model_fallback_mm > 0:
        blurred = scale < settings.outline.min_px_per_mm
        unsized = live[~look.ok & (blurred | astray) & ~size_ok[live] & ~shadow]
        edge_size, edge_fits = snap_diameters(2 * edge_radius[unsized] / scale, sizes, settings.rim.model_fallback_mm)
        took = unsized[edge_fits]
        radius[took], final_size[took], size_ok[took] = edge_radius[took], edge_size[edge_fits], True
    return final_size, size_ok


def scored(found: Candidates, scale: float, directions: FloatArray, settings: VisionSettings) -> Candidates:
    """``found`` with each row's score (edge coverage, disc contrast and roundness) and centre sigma."""
    fit = found.edge_fit
    score = (
        found.coverage
        * np.clip(found.contrast / (2 * settings.verdicts.min_disc_contrast), 0.0, 1.0)
        * np.clip(1.0 - fit.rms_px / found.max_rms_px, 0.0, 1.0)
    )
    return replace(found, score=score, center_sigma_px=center_sigma(fit, directions, scale, settings))
