"""Base detection on a rectified top-down image: the public verb, :func:`detect_bases` (and
:func:`fit_known_bases`, which fits the bases again at the sizes and rim heights a roster declares, or at the sizes
they were read at).

Steps:

1. Seeds: ``cv2.HoughCircles`` once per band of similar sizes, each on a grey copy reduced by a whole factor
   (:mod:`vision.seeds`).
2. Footprint (:func:`_footprints`): rays from each seed span its band's radius range plus ``seed_search_mm``. A
   base shows concentric edges - the footprint against the mat and, inside it, where its bevelled side wall
   meets the top - of the same or of opposite polarity. The best supported ring about the rough centre (wide
   tolerance) gives a better centre, twice; then the outermost ring enough rays support (beyond chance) is the
   footprint. Its diameter snaps, loosely, to the nearest standard size; seeds that found the same base are
   merged, the outer circle kept. The outermost ring can be no base's (a figure lying on the mat beside its base,
   whose outline rings the base with a neighbour's arc; a printed ring round a base standing in it): where the best
   supported ring lies more than ``second_ring_mm`` from it, that ring goes through the steps below as a second
   reading, which never displaces a first one. Where figures blur (under ``outline_min_px_per_mm``) the outermost
   ring may be a contact shadow's outer edge, a size too large, with the base's own rim inside it: the outermost
   ring of the other polarity more than ``second_ring_mm`` inside, with ``inner_ring_fraction`` of the best
   ring's support, is a second reading too.
3. Refinement: rays resampled around the nominal radius (``refine_search_mm`` either side); on every ray the
   strong edge of the footprint's polarity nearest that radius, located to a fraction of a sample by a parabola
   through the gradient peak; then a robust circle fit (:mod:`vision.circlefit`): consensus or algebraic start,
   reweighted geometric steps, outliers (weapons, cloaks, a neighbour) dropped. Twice, re-snapping in between.
4. Is it a base? Cues, each cheap and each aimed at one kind of impostor:

   - edge coverage: at least ``min_edge_coverage`` of the rays found a rim edge on the circle. A square (an
     ArUco marker, a die) meets a circle only near the middle of its sides: well under half of the rays;
   - circularity: inlier RMS residual at most ``max_fit_rms_px``;
   - a disc, not a ring: a base is a raised disc, so the band just inside its rim (the side wall, then the top)
     is mostly not the mat's colour, while a line printed on the mat has mat on both sides of a thin stroke.
     Measured on every inlier ray against the mat just outside (``disc_outer_mm``) over the band
     ``disc_inner_mm`` inside: the median absolute grey difference (``min_disc_contrast``) and its ratio to
     the band's 90th percentile difference (``min_disc_fill``: a line fills only part of the band);
   - size: the footprint radius, measured again, lies within ``snap_tolerance_mm`` of a standard size (tokens,
     dice, pips and most round things are not standard). Measured again how: where the camera's position is
     known and the image resolves the wall and the contact shadow (``outline_min_px_per_mm``), footprint centre
     and radius are fitted to the pixels with a model of the base's whole appearance (:mod:`vision.outline`);
     otherwise the radius is corrected with a model of the mean rim profile (:mod:`vision.profile`; blur pushes
     the gradient peak outward by up to a millimetre at 1 px/mm);
   - a figure: the grey level varies around circles inside the rim (``min_figure_contrast``); a token or a
     printed circle is the same all the way round;
   - not both just: a circle that passes the disc test and the figure test each only just
     (``faint_disc_contrast``, ``faint_figure_contrast``) is the mat's own blotches;
   - a contact shadow: a circle that fits no size, whose rim band is darker than both the mat and the top and has
     the mat's colour (``shadow_min_darkness``, ``shadow_max_colour``), is a base of the mat's own colour read by
     the outer edge of the dark ring around it; it is read again at the band's inner edge, and sized from there;
     where figures blur, a circle that fits no size after the rim model's correction, round no such dark band, keeps
     its edges' own size where that lies within ``rim_model_fallback_mm`` of a standard one; so does one whose
     appearance fit fits no size, larger than the edges' circle or smaller by under ``astray_short_mm``;
   - the mat inside: where the rim model finds a top of the mat's grey level, the line is a printed one (narrower
     than ``min_wall_mm``) or, in images that resolve a figure, there must be a figure that clearly shows
     (``ring_min_figure_contrast``); and, also where figures blur, it must show in colour
     (``ring_colour_figure_contrast``) or be more than faint in grey (``faint_figure_contrast``); the same where the
     inside has the mat's colour, whatever its grey level (``ring_inside_max_colour``);
   - the other edge of a ring: a circle concentric with one taken for a printed ring, its radius within the ring's
     stroke, is the stroke's inner edge (``ring_edge_mm``); a circle around a plain disc (every test passed but
     the figure's) and up to ``token_ring_mm`` larger is a token's printed ring, its figure the ring seen off
     centre;
   - not a concentric pattern seen off centre, where figures resolve (at least ``outline_min_px_per_mm``): a
     circle whose inside, looked at from some centre within ``off_centre_reach_mm`` of its own, is the same all the
     way round (spreads by less than ``off_centre_figure_contrast``) is a token or a printed disc whose rings the
     figure test saw off centre; a figure is off centre from every centre;
   - not a round end: a circle whose inside runs on, in one direction, between two straight parallel edges about a
     diameter apart is a fingertip or a forearm's end (:mod:`vision.ends`, ``round_end_max_wobble``,
     ``round_end_min_contrast``); it is looked for in the frame's own colours;
   - not a die, where figures blur (under ``outline_min_px_per_mm``): a circle whose inside's gradients run along
     two directions at right angles and not along one alone is round a square block (:mod:`vision.squares`,
     ``die_square_agreement``, ``die_line_agreement``).

   Where the appearance fit runs, a candidate that failed only the disc test gets a second one at the footprint
   the fit finds: edges that ran out into a contact shadow put the band partly on the mat.

   Limits, by construction: a filled disc printed on the mat at a standard size passes; a base whose top
   matches the mat and whose visible wall is narrower than about the middle of ``disc_inner_mm`` is taken for
   a printed ring, and so is one without a figure that shows where figures resolve, or whose figure is of one
   colour (an unpainted one) and spreads less than ``faint_figure_contrast`` in grey; at about 1 px/mm a printed
   line whose inside varies in colour blurs into a wall and passes.

5. Duplicates and impossible pairs: a circle concentric with a larger accepted one is the same base's top and is
   dropped; of two circles overlapping by more than ``max_overlap_mm`` (bases cannot interpenetrate; where figures
   blur ``coarse_max_overlap_mm``, since a size read a step too large overlaps a neighbour in contact) the lower
   score is dropped. A larger circle takes the place of smaller ones inside it only where it is their footprint
   (fitted at most ``nest_top_mm`` larger in radius) or scores at least ``nest_score_share`` of theirs: a faint
   circle round several bases in contact does not. Second readings are resolved after the first ones: they stand
   where none of those lies, or take the place of first readings they hold inside them where they may (as above)
   and score better (a figure's outline read first, off the middle of a large base, its footprint second).

6. Other readings (:func:`_other_readings`): a base read by its edges alone may be read wrong by millimetres and
   still pass every test - its top read as the footprint, or a circle on part of its rim and part of its figure.
   Where the edges allow such another reading, the base's model sigma grows to cover it. Where figures blur, a
   base the grey look's edges read whose top is lighter than the mat (or darker by at most
   ``top_read_max_darkness``) was read by its top disc: its wall, darker than its top, leaves the top's edge as the
   rim edge facing the camera. The top is a circle, so its radius gets back the stretch the stadium fit allowed each
   ray (before the size is snapped), and its centre goes back half a parallax shift, to where the outline's middle
   would stand.

7. A second look, in colour: steps 1-6 again on the distance of each pixel's chromaticity from the mat's
   (:mod:`vision.colour`), with the bases found so far masked out; the appearance fit still looks at the grey
   image. A base of the mat's grey level but not its colour shows there. Tokens and printed circles stand out
   by colour too, so such a base must show its figure in grey and in colour (``colour_min_figure_contrast``);
   where figures blur (under ``outline_min_px_per_mm``), one that shows clearly in colour
   (``colour_clear_figure_contrast``) needs only ``colour_clear_figure_grey`` in grey. A rim may be as rough as
   ``colour_max_fit_rms_px``, since the colour contrast's edges scatter more than grey levels'. The colour look reads no
   second rings (there they found one base more on 34 rendered 4K frames, and took the inner edge of a printed
   ring and a fingertip for two). Its bases stand where the grey look found none, or take the place of grey-look
   bases they hold, as second readings do (step 5). The grey look's second readings then stand where neither look
   found a base; one that reads a base of the colour look again yields to it, and where the two read different
   things that cannot both stand the better scored stands.

8. Bases beside their unit (:func:`_beside_kin`): a reading that fails only one test - the figure's on a clear
   disc (disc contrast at least ``faint_disc_contrast``), or where figures blur roundness up to
   ``kin_max_fit_rms_px`` or coverage down to ``kin_min_edge_coverage`` - and passes all the others is kept aside
   in both looks, and stands where it overlaps no base and at least ``kin_min_bases`` bases within
   ``kin_reach_mm`` would be one unit's with it as the size vote links them (below), or readings that stand so.
   A reading that lost in step 5 only by overlapping a base by up to ``kin_lost_overlap_mm`` more than allowed
   (and not nested in it) is kept aside too: the base it lost to may be read a size too large, so whether it
   overlaps is asked of the bases at the sizes their units vote.

9. Sizes by vote (:func:`_vote_sizes`): a unit's models stand on one size, so each base takes the size nearest the
   median fitted diameter of the bases of its unit near it: of about its fitted diameter and the colour of its top
   (``size_vote_*``); the centre does not move.

The centre's 1-sigma uncertainty comes from the covariance of the geometric fit (residual variance over the
inlier count, shaped by their angular spread), with rays closer together along the rim than
``edge_correlation_px`` counted as one, plus ``edge_bias_px / px_per_mm`` in quadrature for the pull of nearby
structures that the fit cannot see.
"""

from __future__ import annotations

import math
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, fields, replace

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.circlefit import CircleFit, fit_circles
from vision.colour import chroma_contrast
from vision.config import VisionSettings
from vision.detections import BaseDetections
from vision.ends import round_ends
from vision.errors import ImageError, MaskError, ScaleError, VisionError
from vision.outline import OutlineFit, cast_shadow_px, fit_outlines, middle_of
from vision.parallax import RimParallax, ray_stretch, unstretch
from vision.profile import RimModel, fit_rim_profiles
from vision.reference import change_map, changed_share
from vision.rim import (
    Peaks,
    find_peaks,
    pick_edges,
    ray_derivative,
    ray_directions,
    sample_grey,
    sample_mask,
    select_peaks,
)
from vision.seeds import Seeds, find_seeds
from vision.squares import square_insides
from vision.vecmath import hypot
from vision.verify import features, load_verifier

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

# Below this radius (px) a rim is too short for rays to say anything sub-pixel about it.
MIN_BASE_RADIUS_PX = 6.0
# In the first search, a polarity's circle is a footprint candidate only with at least this share of the final
# coverage requirement: the search window is wide, so figures and texture claim more rays than later.
_FIRST_PASS_COVERAGE_SHARE = 0.5
# The first footprint radius is measured at the gradient peak, which blur pushes outward by up to about this
# many px when the side wall is narrow: its size is snapped that much more loosely.
_FIRST_PASS_SLACK_PX = 1.0
# The refinement searches at least this far (px) either side of the nominal radius: a gradient peak at the very
# end of a shorter window is no local maximum, and at about 1 px/mm blur moves the peak by most of a pixel.
_MIN_REFINE_HALF_WIDTH_PX = 2.5
# Two first-pass circles of the same size closer than this fraction of their radius are one base seen twice.
_SAME_BASE_CENTER_FRACTION = 0.3
# Each centre-finding round narrows the ring tolerance by this factor (from the seed search slack).
_CENTRE_NARROWING = 3.0
# Grid step (px) of the radii tried about a first centre, and how far (px) from such a circle an edge may lie and
# still support it: the first centre is good to a few tenths of a pixel and so are the edges.
_RING_BIN_PX = 0.5
_RING_TOLERANCE_PX = 1.0
# Sample step (px) of the mean rim profile, and the blur (px) its model fit starts from (typical of a rectified
# image).
_PROFILE_STEP_PX = 0.25
_BLUR_START_PX = 1.0
# Circles sampled across the ring of a base's top whose colour tells its unit (size_vote_ring): a few, since the
# median over them and the rays is what counts.
_TOP_RING_STEPS = 4
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
_RECENTRE_REFINE = 3.0
_RECENTRE_BATCH = 512


def _grey_image(image: object) -> NDArray[np.uint8]:
    """The image as contiguous 8-bit grey (H, W); raises ImageError when it is no image."""
    if not isinstance(image, np.ndarray):
        raise ImageError(f"expected the top-down image as a numpy array (H, W, 3) uint8, got {type(image).__name__}")
    if image.dtype != np.uint8:
        raise ImageError(f"expected a uint8 image (8-bit BGR), got dtype {image.dtype}")
    if not (image.ndim == 2 or (image.ndim == 3 and image.shape[2] == 3)):
        raise ImageError(f"expected a BGR image of shape (H, W, 3) or a grey one (H, W), got shape {image.shape}")
    if image.shape[0] < 2 or image.shape[1] < 2:
        raise ImageError(f"the image is {image.shape[1]} x {image.shape[0]} px; expected at least 2 x 2")
    if image.ndim == 2:
        return np.ascontiguousarray(image)
    return np.asarray(cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_BGR2GRAY), dtype=np.uint8)


def _check_scale(px_per_mm: object, settings: VisionSettings) -> float:
    if isinstance(px_per_mm, bool) or not isinstance(px_per_mm, int | float | np.floating | np.integer):
        raise ScaleError(f"px_per_mm must be a number, got {px_per_mm!r}")
    scale = float(px_per_mm)
    if not math.isfinite(scale) or scale <= 0:
        raise ScaleError(f"px_per_mm must be a positive number, got {px_per_mm!r}")
    smallest = min(settings.base_sizes_mm)
    if smallest / 2 * scale < MIN_BASE_RADIUS_PX:
        need = 2 * MIN_BASE_RADIUS_PX / smallest
        raise ScaleError(
            f"at {scale:g} px/mm a {smallest:g} mm base is {smallest * scale:.1f} px across; "
            f"expected at least {need:.2f} px/mm"
        )
    return scale


def _check_mask(mask: object, shape: tuple[int, ...]) -> NDArray[np.uint8] | None:
    if mask is None:
        return None
    if not isinstance(mask, np.ndarray) or mask.dtype not in (np.uint8, np.bool_):
        raise MaskError("expected the ignore mask as a uint8 (or bool) numpy array, nonzero where to ignore")
    if mask.shape != shape[:2]:
        raise MaskError(f"the ignore mask has shape {mask.shape}; expected the image's {shape[:2]}")
    return np.ascontiguousarray(mask.astype(np.uint8))


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


def _rim_fit(
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
        grey, center, ray_radius, half_width_px, directions, settings.sample_step_px, settings.profile_blur_px
    )
    peaks = find_peaks(
        deriv, polarity, settings.sample_step_px, settings.min_edge_gradient, settings.edge_peak_fraction
    )
    edges = pick_edges(peaks, ray_radius, prefer)
    points = edges.points(center, directions)
    found = edges.found
    if ignore is not None:
        found = found & ~sample_mask(ignore, points)
    points = unstretch(parallax, points, center)
    fit = fit_circles(points, found, center, radius, settings.fit_iterations, settings.outlier_sigmas)
    return fit, peaks


def _coverage(fit: CircleFit) -> FloatArray:
    return np.asarray(fit.inlier.mean(axis=1), dtype=np.float64)


def _rim_pass(fit: CircleFit, max_rms_px: float, settings: VisionSettings) -> BoolArray:
    """(K,) the rim cues of a base: a fit, enough of the rim seen, round to ``max_rms_px``."""
    return np.asarray(
        fit.ok & (_coverage(fit) >= settings.min_edge_coverage) & (fit.rms_px <= max_rms_px), dtype=np.bool_
    )


def _disc_pass(contrast: FloatArray, fill: FloatArray, settings: VisionSettings) -> BoolArray:
    """(K,) a filled disc inside the rim, not a printed ring (see :func:`_disc_contrast`)."""
    return np.asarray((contrast >= settings.min_disc_contrast) & (fill >= settings.min_disc_fill), dtype=np.bool_)


def _ring_support(
    peaks: Peaks,
    ray_center: FloatArray,
    ray_radius: FloatArray,
    center: FloatArray,
    directions: FloatArray,
    tolerance_px: float,
    window_px: float,
    beyond_chance: bool = True,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """For circles about ``center`` (K, 2) of every radius on a grid: the share of rays with a strong edge
    within ``tolerance_px`` of that circle beyond what chance gives, support (K, B); the mean distance of those
    edges from the centre, mean_px (K, B); the grid radii (B,) in px. The grid reaches past the edges found so
    that every ring's support rises and falls within it.

    Chance: with d strong edges per px of ray (texture, noise; ``window_px`` is the length searched), a band of
    width w catches one on a share 1 - exp(-d w) of the rays whatever the circle; support counts only the
    rays above that share, rescaled to [0, 1] (unless ``beyond_chance`` is false)."""
    k, n, _ = peaks.good.shape
    spread = max(1, round(tolerance_px / _RING_BIN_PX))
    # rings are looked for where the rays looked: edges farther from the centre than that (a centre that
    # wandered off) would only stretch the grid
    reach_lo = float(np.min(ray_radius + peaks.offset_px.min(initial=0.0)))
    reach_hi = float(np.max(ray_radius + peaks.offset_px.max(initial=0.0)))
    kk, rr, pp = np.nonzero(peaks.good)
    reach = ray_radius[kk] + peaks.offset_px[kk, rr, pp]
    d = hypot(
        ray_center[kk, 0] + reach * directions[rr, 0] - center[kk, 0],
        ray_center[kk, 1] + reach * directions[rr, 1] - center[kk, 1],
    )
    usable = (d >= reach_lo) & (d <= reach_hi)
    if not usable.any():
        return np.zeros((k, 1)), np.zeros((k, 1)), np.zeros(1)
    kk, rr, d = kk[usable], rr[usable], d[usable]
    lowest = np.floor(reach_lo / _RING_BIN_PX) - spread - 2
    highest = np.ceil(reach_hi / _RING_BIN_PX) + spread + 2
    bins = int(highest - lowest) + 1
    index = np.round(d / _RING_BIN_PX - lowest).astype(np.intp)
    # every edge covers the bins within the tolerance: a ray is near a bin when one of its edges' bins lies that
    # close, a dilation of the edges' bins along the bins (on bytes: far cheaper than running sums of counts)
    hit = np.zeros((k * n, bins), np.uint8)
    hit[kk * n + rr, index] = 1
    near = cv2.dilate(hit, np.ones((1, 2 * spread + 1), np.uint8)).reshape(k, n, bins)
    # running sums over all rays give the count and mean distance of the supporting edges: +1 where an edge's cover
    # starts, -1 after it ends
    width = bins + 1
    starts = kk * width + index - spread
    ends = kk * width + index + spread + 1
    count = np.bincount(starts, minlength=k * width) - np.bincount(ends, minlength=k * width)
    total = np.bincount(starts, weights=d, minlength=k * width) - np.bincount(ends, weights=d, minlength=k * width)
    near_count = np.cumsum(count.reshape(k, width)[:, :bins], axis=-1)
    near_total = np.cumsum(total.reshape(k, width)[:, :bins], axis=-1)
    # the share of rays near each bin (a count over n: the mean of the booleans, bit for bit)
    raw = near.sum(axis=1) / n
    if not beyond_chance:
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_px = np.where(near_count > 0, near_total / near_count, 0.0)
        return raw, mean_px, (np.arange(bins) + lowest) * _RING_BIN_PX
    density = peaks.good.sum(axis=(1, 2)) / (n * max(window_px, 1e-9))
    chance = 1.0 - np.exp(-density * (2 * spread + 1) * _RING_BIN_PX)
    support = np.clip((raw - chance[:, None]) / np.maximum(1.0 - chance[:, None], 1e-9), 0.0, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_px = np.where(near_count > 0, near_total / near_count, 0.0)
    return support, mean_px, (np.arange(bins) + lowest) * _RING_BIN_PX


def _outermost_ring(
    support: FloatArray, need: FloatArray, allowed: BoolArray | None = None
) -> tuple[NDArray[np.intp], BoolArray]:
    """Index of the outermost local maximum of each row of ``support`` (K, B) that reaches ``need`` (K,), of those
    ``allowed`` (K, B) (None: all), and whether there is one."""
    s = np.pad(support, ((0, 0), (1, 1)))
    peak = (s[:, 1:-1] >= s[:, :-2]) & (s[:, 1:-1] > s[:, 2:]) & (support >= need[:, None])
    if allowed is not None:
        peak &= allowed
    found = np.asarray(peak.any(axis=1), dtype=np.bool_)
    idx = np.asarray((support.shape[1] - 1) - np.argmax(peak[:, ::-1], axis=1), dtype=np.intp)
    return idx, found


def _ray_distance_to_circle(
    ray_center: FloatArray, center: FloatArray, radius: FloatArray, directions: FloatArray
) -> FloatArray:
    """Where each ray from ``ray_center`` (K, 2) meets the circle (``center`` (K, 2), ``radius`` (K,)): distance
    along the ray (K, n), for a ray start inside the circle."""
    off = ray_center - center
    b = directions @ off.T  # (n, K): direction . offset
    c = (off * off).sum(axis=1) - radius * radius
    disc = np.maximum(b * b - c[None, :], 0.0)
    return np.asarray((-b + np.sqrt(disc)).T, dtype=np.float64)


def _best_of(rings: list[tuple[FloatArray, FloatArray, FloatArray]]) -> tuple[FloatArray, FloatArray]:
    """Of the rings of both polarities (``rings`` = [positive, negative], each from :func:`_ring_support`), the
    best supported: radius (K,) (-inf when no ray has an edge) and polarity (K,)."""
    rows = np.arange(len(rings[0][0]))
    best = [np.argmax(r[0], axis=1) for r in rings]
    top = [r[0][rows, i] for r, i in zip(rings, best, strict=True)]
    take_minus = top[1] > top[0]
    radius = np.where(take_minus, rings[1][1][rows, best[1]], rings[0][1][rows, best[0]])
    radius = np.where(np.maximum(top[0], top[1]) > 0, radius, -np.inf)
    return radius, np.where(take_minus, -1.0, 1.0)


def _outermost_of(
    rings: list[tuple[FloatArray, FloatArray, FloatArray]],
    need: float,
    fraction: float,
    below_px: FloatArray | None = None,
    polarity: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Of the rings of both polarities (``rings`` = [positive, negative], each from :func:`_ring_support`), the
    outermost supported by ``need`` of the rays and ``fraction`` of the best ring's support: radius (K,) (-inf
    when none), polarity (K,), support (K,). ``below_px`` (K,), ``polarity`` (K,): only rings of that polarity
    with a radius under that."""
    top = np.max([r[0].max(axis=1) for r in rings], axis=0)
    threshold = np.maximum(need, fraction * top)
    rows = np.arange(len(top))
    best_r = np.full(len(top), -np.inf)
    best_s = np.zeros(len(top))
    best_p = np.ones(len(top))
    for sign, (sup, mean_px, _grid) in zip((1.0, -1.0), rings, strict=True):
        allowed = None
        if below_px is not None:
            allowed = mean_px < below_px[:, None]
            if polarity is not None:
                allowed &= (polarity == sign)[:, None]
        idx, has = _outermost_ring(sup, threshold, allowed)
        ring_r = mean_px[rows, idx]
        better = has & (ring_r > best_r)
        best_r = np.where(better, ring_r, best_r)
        best_s = np.where(better, sup[rows, idx], best_s)
        best_p = np.where(better, sign, best_p)
    return best_r, best_p, best_s


def _support_at(
    rings: list[tuple[FloatArray, FloatArray, FloatArray]], radius_px: FloatArray, polarity: FloatArray
) -> FloatArray:
    """Of the rings of both polarities (``rings`` = [positive, negative], each from :func:`_ring_support`), the
    support (K,) of the ring nearest ``radius_px`` (K,) of ``polarity`` (K,) (NaN where the radius is)."""
    rows = np.arange(len(radius_px))
    out = np.full(len(radius_px), np.nan)
    for sign, (sup, _mean_px, grid) in zip((1.0, -1.0), rings, strict=True):
        take = (polarity == sign) & np.isfinite(radius_px)
        nearest = np.argmin(np.abs(grid[None, :] - radius_px[take, None]), axis=1)
        out[take] = sup[rows[take], nearest]
    return out


def _take(peaks: Peaks, rows: NDArray[np.intp]) -> Peaks:
    """The peaks of ``rows`` (ascending, no repeats): the arrays themselves when those are all of them."""
    if rows.size == len(peaks.good):
        return peaks
    return Peaks(peaks.good[rows], peaks.offset_px[rows], peaks.strength[rows])


@dataclass
class _BandSearch:
    """The footprint search about the seeds of one band (see :func:`_footprints`): the seeds ``sel`` (S,), the
    radius their rays were cast about (S,), the edges on those rays of either polarity, the length of ray searched
    (px), the seeds still searched (indices into ``sel``) and the centres found so far (S, 2)."""

    sel: NDArray[np.intp]
    ray_radius: FloatArray
    peaks: list[Peaks]
    window: float
    live: NDArray[np.intp]
    c1: FloatArray

    def __post_init__(self) -> None:
        self.c1 = self.c1.copy()


@dataclass(frozen=True)
class _Footprints:
    """The footprint search's readings of K seeds: the outermost supported ring, ``center_px`` (K, 2),
    ``radius_px`` (K,), ``polarity`` (K,) and ``support`` (K,) (share of rays on it beyond chance; 0 when there is
    none), and the best supported ring of the last centre-finding round, ``best_center_px`` (K, 2),
    ``best_radius_px`` (K,) (NaN where there is none, or where it lacks the support beyond chance that the outermost
    needs) and ``best_polarity`` (K,), and the outermost ring of the other polarity well inside the outermost,
    ``inner_radius_px`` (K,) about ``center_px`` (NaN where there is none or it was not looked for) and
    ``inner_polarity`` (K,)."""

    center_px: FloatArray
    radius_px: FloatArray
    polarity: FloatArray
    support: FloatArray
    best_center_px: FloatArray
    best_radius_px: FloatArray
    best_polarity: FloatArray
    inner_radius_px: FloatArray
    inner_polarity: FloatArray


def _footprints(
    grey: NDArray[np.uint8],
    ignore: NDArray[np.uint8] | None,
    seeds: Seeds,
    px_per_mm: float,
    directions: FloatArray,
    settings: VisionSettings,
    inner_rings: bool = False,
) -> _Footprints:
    """The footprint circle near each seed, and the best supported ring about it (see :class:`_Footprints`);
    with ``inner_rings``, also the outermost ring of the other polarity more than ``second_ring_mm`` inside the
    outermost with ``inner_ring_fraction`` of the best ring's support.

    The rays span the radius range the seed was searched over. A base shows concentric edges (footprint, side
    wall, top). About a rough centre every ring is smeared by the centre's error: the best supported ring
    (footprint or wall, they share the centre), with a tolerance as wide as that error, gives a better centre
    by a circle fit to the edges nearest it; that is done twice, the tolerance narrowing. Then the footprint is
    the outermost ring that enough rays support with a tight tolerance, and its fit gives the final centre.
    Seeds with no such ring are dropped as soon as that shows."""
    k = len(seeds)
    center = seeds.center_px.copy()
    radius = np.zeros(k)
    polarity = np.ones(k)
    support = np.zeros(k)
    best_center = np.full((k, 2), np.nan)
    best_radius = np.full(k, np.nan)
    best_polarity = np.ones(k)
    inner_radius = np.full(k, np.nan)
    inner_polarity = np.ones(k)
    apart_px = settings.second_ring_mm * px_per_mm
    slack = settings.seed_search_mm * px_per_mm
    step = max(settings.sample_step_px, settings.search_step_mm * px_per_mm)
    need = _FIRST_PASS_COVERAGE_SHARE * settings.min_edge_coverage
    stages = [
        ("best", slack),
        ("best", max(slack / _CENTRE_NARROWING, _RING_TOLERANCE_PX)),
        ("outer", _RING_TOLERANCE_PX),
    ]
    searches = []
    for band in np.unique(seeds.band_px, axis=0):
        sel = np.flatnonzero(np.all(seeds.band_px == band, axis=1))
        ray_radius_all = np.full(len(sel), (band[0] + band[1]) / 2)
        half_width = (band[1] - band[0]) / 2 + slack
        deriv = ray_derivative(
            grey, seeds.center_px[sel], ray_radius_all, half_width, directions, step, settings.profile_blur_px
        )
        both_all = [
            find_peaks(deriv, np.full(len(sel), sign), step, settings.min_edge_gradient, settings.edge_peak_fraction)
            for sign in (1.0, -1.0)
        ]
        window = float(deriv.offset_px[-1] - deriv.offset_px[0])
        searches.append(_BandSearch(sel, ray_radius_all, both_all, window, np.arange(len(sel)), seeds.center_px[sel]))
    for rule, tolerance in stages:
        pending = [b for b in searches if b.live.size]
        if not pending:
            break
        rings_of = []
        inner_of = []
        for b in pending:
            ray_center, ray_radius = seeds.center_px[b.sel[b.live]], b.ray_radius[b.live]
            both = [_take(pk, b.live) for pk in b.peaks]
            about = b.c1[b.live]
            rings = [
                _ring_support(pk, ray_center, ray_radius, about, directions, tolerance, b.window, rule == "outer")
                for pk in both
            ]
            if rule == "best":
                ring_r, ring_p = _best_of(rings)
                ring_s = np.max([r[0].max(axis=1) for r in rings], axis=0)
            else:
                ring_r, ring_p, ring_s = _outermost_of(rings, need, settings.ring_support_fraction)
                # the last round's best ring stays a reading only with the support beyond chance the outermost needs
                # (in texture or noise, edges everywhere give every ring some)
                rows = b.sel[b.live]
                beyond = _support_at(rings, best_radius[rows], best_polarity[rows])
                best_radius[rows[~(beyond >= need)]] = np.nan
                if inner_rings:
                    inner_of.append(
                        _outermost_of(rings, need, settings.inner_ring_fraction, ring_r - apart_px, -ring_p)[:2]
                    )
            has = np.isfinite(ring_r) & (ring_s >= need)
            # the edge on each ray nearest the ring (rays were cast from the seed, the ring is about c1)
            target = _ray_distance_to_circle(ray_center, about, np.where(has, ring_r, ray_radius), directions)
            edges = pick_edges(select_peaks(both[0], both[1], ring_p > 0), ray_radius, "nearest", target)
            points = edges.points(ray_center, directions)
            rings_of.append((points, edges.found & has[:, None], ray_radius, ring_r, ring_p, ring_s, has))
        # every band's circles in one fit: the fits are row by row, and one call costs far less than one per band
        points = np.concatenate([r[0] for r in rings_of])
        found = np.concatenate([r[1] for r in rings_of])
        if ignore is not None:
            found = found & ~sample_mask(ignore, points)
        start = np.concatenate([np.where(r[6], r[3], r[2]) for r in rings_of])
        first = np.concatenate([b.c1[b.live] for b in pending])
        fit = fit_circles(points, found, first, start, settings.fit_iterations, settings.outlier_sigmas)
        offset = 0
        for i, (b, (_points, _found, _ray_radius, ring_r, ring_p, ring_s, has)) in enumerate(
            zip(pending, rings_of, strict=True)
        ):
            part = slice(offset, offset + len(has))
            offset += len(has)
            keep = fit.ok[part] & has
            b.c1[b.live[keep]] = fit.center_px[part][keep]
            if rule == "best":
                # the last centre-finding round's ring (each round's overwrites the one before): another reading
                # where the outermost ring is not the base's
                rows = b.sel[b.live[keep]]
                best_center[rows] = fit.center_px[part][keep]
                best_radius[rows] = fit.radius_px[part][keep]
                best_polarity[rows] = ring_p[keep]
            if rule == "outer":
                rows = b.sel[b.live[keep]]
                radius[rows] = ring_r[keep]
                polarity[rows] = ring_p[keep]
                support[rows] = ring_s[keep]
                if inner_of:
                    inner_r, inner_p = inner_of[i]
                    inner_radius[rows] = np.where(np.isfinite(inner_r[keep]), inner_r[keep], np.nan)
                    inner_polarity[rows] = inner_p[keep]
            b.live = b.live[keep]
    for b in searches:
        center[b.sel] = b.c1
    return _Footprints(
        center, radius, polarity, support, best_center, best_radius, best_polarity, inner_radius, inner_polarity
    )


def _centre_distances(center: FloatArray, other: FloatArray | None = None) -> FloatArray:
    """(K, M) distances from the centres (K, 2) to ``other`` (M, 2) (to each other when not given: (K, K))."""
    to = center if other is None else other
    return np.asarray(np.hypot(center[:, None, 0] - to[None, :, 0], center[:, None, 1] - to[None, :, 1]), np.float64)


def _keep_best(rank: FloatArray, clash: BoolArray, absorbs: BoolArray | None = None) -> NDArray[np.intp]:
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


def _firsts_first(rank: FloatArray, second: BoolArray) -> FloatArray:
    """``rank`` (K,) lowered for the rows where ``second`` (K,) holds below every other row, their order kept."""
    if rank.size == 0:
        return rank
    return np.asarray(rank - second * (float(np.ptp(rank)) + 1.0), dtype=np.float64)


def _unique(
    center: FloatArray, radius: FloatArray, size_mm: FloatArray, rank: FloatArray, second: BoolArray
) -> NDArray[np.intp]:
    """Indices of candidates to keep when several describe the same base (same size, nearby centres), best
    ``rank`` first. A second reading (``second`` (K,)) is another ring than the first readings about it, even
    where both snap to one size (rings 2-5 mm apart in diameter do, under the first search's loose tolerance), so
    it is one base with second readings only."""
    dist = _centre_distances(center)
    same = (size_mm[:, None] == size_mm[None, :]) & (dist <= _SAME_BASE_CENTER_FRACTION * radius[None, :])
    same &= second[:, None] == second[None, :]
    return _keep_best(rank, same)


def _disc_contrast(
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

    inner = -band(*settings.disc_inner_mm)
    outer = band(*settings.disc_outer_mm)
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


def _figure_contrast(
    grey: NDArray[np.uint8], center: FloatArray, radius: FloatArray, directions: FloatArray, settings: VisionSettings
) -> FloatArray:
    """How much the inside of each circle varies around it (K,): on circles at ``figure_band`` fractions of the
    radius, the spread (standard deviation, grey levels) of the grey level around each circle; the 75th
    percentile of those spreads. A base carries a figure that breaks its symmetry; a token, a printed ring or
    disc is the same all the way round."""
    if len(radius) == 0:
        return np.zeros(0)
    return _spread(_figure_samples(grey, center, radius, directions, settings))


def _spread(samples: FloatArray) -> FloatArray:
    """(K,) the figure contrast of :func:`_figure_samples` (K, R, C): the 75th percentile over the C circles of the
    spread around each."""
    return np.asarray(np.percentile(samples.std(axis=1), _FIGURE_PERCENTILE, axis=1), dtype=np.float64)


def _least_figure(
    image: NDArray[np.uint8],
    center: FloatArray,
    radius: FloatArray,
    directions: FloatArray,
    settings: VisionSettings,
    reach_px: float,
    refine_below: float = math.inf,
) -> FloatArray:
    """(K,) the least figure contrast (:func:`_figure_contrast`) of each circle (``center`` (K, 2), ``radius``
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
            out[part] = _spread(_figure_samples(image, centres[part], radii[part], directions, settings))
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


def _figure_samples(
    image: NDArray[np.uint8], center: FloatArray, radius: FloatArray, directions: FloatArray, settings: VisionSettings
) -> FloatArray:
    """(K, R, C) samples of ``image`` on C circles at the ``figure_band`` fractions of each radius (K,), along
    the R ``directions``."""
    fractions = np.linspace(settings.figure_band[0], settings.figure_band[1], _FIGURE_CIRCLES)
    return np.stack(
        [sample_grey(image, center, radius * f, np.zeros(1), directions)[..., 0] for f in fractions], axis=-1
    ).astype(np.float64)


def _concentric(
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
    apart = _centre_distances(center[rows], center[others])
    larger = radius[rows, None] - radius[None, others]
    near = (apart <= slack_px) & (larger >= low[None, :] - slack_px) & (larger <= high[None, :] + slack_px)
    return rows[near.any(axis=1)]


def _rim_model(
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


def _shadow_ring_readings(
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


def _center_sigma(fit: CircleFit, directions: FloatArray, px_per_mm: float, settings: VisionSettings) -> FloatArray:
    """Isotropic 1-sigma centre uncertainty (K,) in px."""
    with np.errstate(invalid="ignore"):
        var = 0.5 * (fit.center_cov_px2[:, 0, 0] + fit.center_cov_px2[:, 1, 1])
    spacing = 2 * math.pi * np.maximum(fit.radius_px, 1e-9) / len(directions)
    var = var * np.maximum(1.0, settings.edge_correlation_px / spacing)
    bias = settings.edge_bias_px / px_per_mm
    return np.asarray(np.sqrt(var + bias**2), dtype=np.float64)


def _max_overlap_mm(px_per_mm: float, settings: VisionSettings) -> float:
    """How far (mm) two bases may seem to overlap in an image of ``px_per_mm``: where figures blur a size is read one
    step too large now and then, and bases in contact overlap by more."""
    coarse = px_per_mm < settings.outline_min_px_per_mm
    return settings.coarse_max_overlap_mm if coarse else settings.max_overlap_mm


def _resolve_overlaps(
    center: FloatArray,
    radius: FloatArray,
    nominal_mm: FloatArray,
    score: FloatArray,
    px_per_mm: float,
    settings: VisionSettings,
    later: BoolArray | None = None,
) -> NDArray[np.intp]:
    """Indices kept after dropping nested circles and impossible overlaps, best score first: a circle that
    overlaps kept ones by more than ``max_overlap_mm`` (``coarse_max_overlap_mm`` under
    ``outline_min_px_per_mm``) is dropped, unless all of those are smaller circles inside it
    (its top, its figure's outline; two bases cannot nest) that it may take the place of: then it is the footprint
    and replaces them. It may where its fitted radius (``radius`` (K,) px) is at most ``nest_top_mm`` larger (a top
    inside its footprint), or where it scores at least ``nest_score_share`` of theirs: a faint circle round several
    bases in contact takes none of their places. ``later`` (K,): readings that come after all the others whatever
    their score (a second look's, a second ring's), so they stand only where they clash with none of the others or
    take the place of those they hold."""
    if len(radius) == 0:
        return np.zeros(0, np.intp)
    max_mm = _max_overlap_mm(px_per_mm, settings)
    nominal_px = nominal_mm / 2 * px_per_mm
    dist = _centre_distances(center)
    # inside[i, j]: circle j is smaller than circle i and lies within it (up to the overlap allowed between bases)
    inside = (nominal_px[None, :] < nominal_px[:, None]) & (
        dist + nominal_px[None, :] <= nominal_px[:, None] + max_mm * px_per_mm
    )
    top = radius[:, None] - radius[None, :] <= settings.nest_top_mm * px_per_mm
    strong = score[:, None] >= settings.nest_score_share * score[None, :]
    overlap_mm = (nominal_px[:, None] + nominal_px[None, :] - dist) / px_per_mm
    np.fill_diagonal(overlap_mm, -np.inf)
    absorbs = inside & (top | strong)
    rank = score
    if later is not None:
        rank = _firsts_first(score, later)
        # a later reading about as large as an earlier one is mostly the same rim read again, a little wider: it
        # takes the earlier one's place only where it scores better
        absorbs &= ~(later[:, None] & ~later[None, :]) | (score[:, None] > score[None, :])
    return _keep_best(rank, overlap_mm > max_mm, absorbs)


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
    ``ambiguity_reach_mm`` larger in radius, the best of ``ambiguity_shifts`` directions, scored by the share of
    the rays on which the two circles part that have an edge of the reading's polarity near the larger one (none:
    left out). Returns owner (M,), centre (M, 2) and radius (M,) px."""
    none = (np.zeros(0, np.intp), np.zeros((0, 2)), np.zeros(0))
    sizes = np.asarray(settings.base_sizes_mm, dtype=np.float64)
    reach_px = settings.ambiguity_reach_mm * scale
    grow = (sizes[None, :] - size_mm[:, None]) / 2 * scale
    owner, which = np.nonzero((grow > 0) & (grow <= reach_px))
    if owner.size == 0 or settings.ambiguity_shifts < 1:
        return none
    angle = 2 * math.pi * np.arange(settings.ambiguity_shifts) / settings.ambiguity_shifts
    unit = np.tile(np.stack([np.cos(angle), np.sin(angle)], axis=1), (len(owner), 1))
    owner = np.repeat(owner, len(angle))
    alt_r = np.repeat(sizes[which] / 2 * scale, len(angle))
    alt_c = center[owner] + (alt_r - radius[owner])[:, None] * unit
    # one wide search per reading, from just inside its rim to the far side of the largest alternative
    half = reach_px + settings.refine_search_mm * scale
    ray_radius = radius[:, None] + half + ray_stretch(parallax, center, directions)
    deriv = ray_derivative(
        grey, center, ray_radius, half, directions, settings.sample_step_px, settings.profile_blur_px
    )
    peaks = find_peaks(
        deriv, polarity, settings.sample_step_px, settings.min_edge_gradient, settings.edge_peak_fraction
    )
    target = _ray_distance_to_circle(center[owner], alt_c, alt_r, directions) - radius[owner, None] - half
    tolerance = max(settings.refine_search_mm * scale / 2, _RING_TOLERANCE_PX)
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
    short = np.maximum(0.0, settings.unseen_rim_coverage - np.asarray(coverage, dtype=np.float64))
    sigma = settings.unseen_rim_sigma_share * np.asarray(radius_mm, dtype=np.float64) * short
    return np.where(np.asarray(by_edges, dtype=np.bool_), sigma, 0.0)


def _other_readings(
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
      outlines the base all round. The footprint is then towards the nadir, ``ambiguity_parallax_starts`` half
      parallax shifts (the bases' rims are not all the height assumed);
    - it runs on part of the rim and part of the figure: a smaller circle inside the footprint, touching it on
      one side (:func:`_tangent_starts`).

    From each such start a circle is fitted to the nearest edges (of the reading's polarity around a smaller
    reading, of either beyond a top); it is another reading when it passes the tests of a base (coverage, a disc,
    a standard size no smaller, no neighbour cut into) with an RMS residual up to ``ambiguity_max_rms_px`` (a
    footprint beside a dark wall and its shadow is rough)."""
    other_mm = np.zeros(len(radius))
    look = np.flatnonzero(examine)
    if look.size == 0 or settings.ambiguity_reach_mm <= 0:
        return other_mm
    owner, start_c, start_r = _tangent_starts(
        grey, center[look], radius[look], polarity[look], size_mm[look], scale, directions, settings, parallax
    )
    owner = look[owner]
    n_tangent = len(owner)
    if parallax is not None and settings.ambiguity_parallax_starts:
        half, unit = parallax.half_shift(center)
        steps = np.asarray(settings.ambiguity_parallax_starts, dtype=np.float64)
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
    fit, _peaks = _rim_fit(
        grey,
        ignore,
        start_c,
        start_r,
        max(settings.refine_search_mm * scale, _MIN_REFINE_HALF_WIDTH_PX),
        fit_polarity,
        "nearest",
        directions,
        settings,
        parallax,
    )
    contrast, fill = _disc_contrast(
        grey, fit.center_px, fit.radius_px, fit.inlier, scale, directions, settings, parallax
    )
    size, size_ok = snap_diameters(2 * fit.radius_px / scale, settings.base_sizes_mm, settings.snap_tolerance_mm)
    passes = _rim_pass(fit, settings.ambiguity_max_rms_px, settings) & _disc_pass(contrast, fill, settings)
    passes &= size_ok & (size >= size_mm[owner])
    # a base there would cut into a neighbour: no reading
    overlap_mm = (fit.radius_px[:, None] + radius[None, :] - _centre_distances(fit.center_px, center)) / scale
    overlap_mm[np.arange(len(owner)), owner] = -np.inf
    passes &= overlap_mm.max(axis=1, initial=-np.inf) <= settings.max_overlap_mm
    moved_mm = (np.hypot(*(fit.center_px - center[owner]).T) + np.abs(fit.radius_px - radius[owner])) / scale
    np.maximum.at(other_mm, owner[passes], moved_mm[passes])
    return other_mm


def detect_bases(
    topdown_bgr: NDArray[np.uint8],
    px_per_mm: float,
    settings: VisionSettings,
    mask: NDArray[np.uint8] | None = None,
    parallax: RimParallax | None = None,
    wanted_px: FloatArray | None = None,
    reference_bgr: NDArray[np.uint8] | None = None,
) -> BaseDetections:
    """Find the round bases in a rectified top-down image of the table (see :func:`_detect_bases`).

    ``reference_bgr``, the same view of the table empty (its terrain, no models; (H, W, 3) or (H, W) uint8 like
    ``topdown_bgr``), when given: a base must have changed since (``reference_min_changed_share`` of its inside, see
    :mod:`vision.reference`), as no printed circle or texture of the mat has."""
    found = _detect_bases(topdown_bgr, px_per_mm, settings, mask, parallax, wanted_px)
    scale = _check_scale(px_per_mm, settings)
    if settings.verifier_min_probability > 0 and len(found):
        verifier = load_verifier(settings.verifier_file or None)
        likely = verifier.probability(features(np.asarray(topdown_bgr), found, scale))
        found = found[likely >= settings.verifier_min_probability]
    if reference_bgr is None:
        return found
    change = change_map(
        np.asarray(topdown_bgr),
        np.asarray(reference_bgr),
        scale,
        settings.reference_blur_mm,
        settings.reference_light_cell_mm,
        settings.reference_light_reach_cells,
    )
    share = changed_share(change, found.center_px, found.radius_px, settings.reference_min_change)
    return found[share >= settings.reference_min_changed_share]


def _detect_bases(
    topdown_bgr: NDArray[np.uint8],
    px_per_mm: float,
    settings: VisionSettings,
    mask: NDArray[np.uint8] | None = None,
    parallax: RimParallax | None = None,
    wanted_px: FloatArray | None = None,
) -> BaseDetections:
    """Find the round bases in a rectified top-down image of the table.

    ``topdown_bgr`` (H, W, 3) uint8 (or (H, W) grey), an image in which table millimetres map to pixels at
    ``px_per_mm`` in both directions; ``mask`` (H, W) uint8, nonzero on pixels to ignore (off the table, markers).
    ``parallax``, when given, says how the side walls stretch the outlines (see :mod:`vision.parallax`): each
    outline is then fitted as that stadium and its centre is the base's axis at half the rim height.
    ``wanted_px`` (M, 4) boxes (u0, v0, u1, v1) in pixels: only bases that may reach into one of them are looked for
    (the circles the seed search finds elsewhere go no further; a caller that keeps only the bases reaching into
    the boxes saves their cost). None: everywhere.
    A colour image is looked at twice: in grey, then in colour where no base was found (step 7 above).
    Returns one row per base, best score first, centres and radii in this image's pixels (pixel centres at
    integer coordinates). Raises :class:`~vision.errors.ImageError`, :class:`~vision.errors.ScaleError` or
    :class:`~vision.errors.MaskError` on unusable input."""
    grey = _grey_image(topdown_bgr)
    scale = _check_scale(px_per_mm, settings)
    ignore = _check_mask(mask, grey.shape)
    bgr = np.asarray(topdown_bgr)

    def grey_look(
        chroma_pending: Future[NDArray[np.uint8] | None] | None,
    ) -> tuple[BaseDetections, BaseDetections, BaseDetections, FloatArray]:
        return _detect_in(
            grey,
            grey,
            settings.min_figure_contrast,
            scale,
            settings,
            ignore,
            parallax,
            chroma_pending,
            second_readings=True,
            bgr=bgr,
            wanted_px=wanted_px,
        )

    if settings.colour_gain <= 0:
        found, spare, kin_only, _blur = grey_look(None)
        return _by_score(found, spare, kin_only, bgr, scale, settings)
    # the colour contrast (OpenCV's loops, without the interpreter lock) is made beside the grey look, which needs it
    # only after its appearance fit
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(chroma_contrast, bgr, ignore, settings.colour_gain, settings.colour_blur_px)
        found, spare, kin_only, blur_px = grey_look(pending)
        colour = pending.result()
    if colour is None:
        return _by_score(found, spare, kin_only, bgr, scale, settings)
    # the second look, in colour, where the first found nothing: a figure must show in grey as well, since tokens
    # and printed circles stand out far more by colour than by grey level. It reads no second rings (step 7 above)
    seen = _covered(ignore, grey.shape, found, settings.colour_mask_margin_mm * scale)
    # the camera blurs the bases of both looks alike: the second one's (often too few to tell) is the first one's
    more, _spare, kin_colour, _blur = _detect_in(
        colour,
        grey,
        settings.colour_min_figure_contrast,
        scale,
        settings,
        seen,
        parallax,
        None,
        blur_px,
        bgr=bgr,
        wanted_px=wanted_px,
        anchors=found,
    )
    # where the colour look read a base round bases the grey look found (a figure's outline read in grey, say), it may
    # take their place; elsewhere the grey look's bases stand
    both = BaseDetections.concatenate([found, more])
    later = np.arange(len(both)) >= len(found)
    keep = _resolve_overlaps(both.center_px, both.radius_px, both.diameter_mm, both.score, scale, settings, later)
    found, more = both[keep[~later[keep]]], both[keep[later[keep]]]
    # a second reading of a base the colour look found yields to it; where the two read different things that cannot
    # both stand (the colour look may take a figure lying beside its base for one), the better scored stands
    same = _centre_distances(spare.center_px, more.center_px) <= _SAME_BASE_CENTER_FRACTION * more.radius_px[None, :]
    rival = BaseDetections.concatenate([more, spare[~np.any(same, axis=1)]])
    rival = rival[_resolve_overlaps(rival.center_px, rival.radius_px, rival.diameter_mm, rival.score, scale, settings)]
    return _by_score(found, rival, BaseDetections.concatenate([kin_only, kin_colour]), bgr, scale, settings)


def _by_score(
    found: BaseDetections,
    more: BaseDetections,
    kin_only: BaseDetections,
    image: NDArray[np.uint8],
    px_per_mm: float,
    settings: VisionSettings,
) -> BaseDetections:
    """``found`` and ``more`` (bases where none of ``found`` lies) together, with those of the kin-only readings
    ``kin_only`` that stand beside their unit's bases (:func:`_beside_kin`), best score first, sizes put to the vote
    (their tops' colours read from ``image``, (H, W, 3) BGR or (H, W) grey)."""
    both = BaseDetections.concatenate([found, more])
    lab: FloatArray | None = None
    if len(kin_only):
        n = len(both)
        lab = _top_colours(image, np.concatenate([both.center_px, kin_only.center_px]),
                           np.concatenate([both.radius_px, kin_only.radius_px]), settings)  # fmt: skip
        # the bases at the sizes their units vote: one read a size too large must not keep its neighbour out
        voted = _vote_sizes(both, lab[:n], px_per_mm, settings)
        stands = _beside_kin(voted, kin_only, lab, px_per_mm, settings)
        both = BaseDetections.concatenate([both, kin_only[stands]])
        lab = np.concatenate([lab[:n], lab[n:][stands]])
    order = np.argsort(-both.score, kind="stable")
    both = both[order]
    if len(both) == 0 or settings.size_vote_reach_mm <= 0:
        return both
    # each top's colour is its own circle's: those already read are not read again
    lab = _top_colours(image, both.center_px, both.radius_px, settings) if lab is None else lab[order]
    return _vote_sizes(both, lab, px_per_mm, settings)


def _anchored(
    center_px: FloatArray,
    radius_px: FloatArray,
    accept: BoolArray,
    kin_only: BoolArray,
    anchors: BaseDetections | None,
    px_per_mm: float,
    settings: VisionSettings,
) -> BoolArray:
    """(K_kin,) which of the kin-only readings (rows of ``kin_only`` (K,) among the circles ``center_px`` (K, 2),
    ``radius_px`` (K,)) have a base of about their size within reach: an accepted circle (``accept`` (K,), not
    kin-only), one of ``anchors`` or, in turn, a reading so found, not overlapping it by more than bases may. A
    cheap first cut of :func:`_beside_kin` (sizes and places still rough here, so the reach is widened by
    ``snap_tolerance_mm``; colours not compared)."""
    rows = np.flatnonzero(kin_only)
    base_c, base_r = center_px[accept & ~kin_only], radius_px[accept & ~kin_only]
    if anchors is not None:
        base_c, base_r = np.concatenate([base_c, anchors.center_px]), np.concatenate([base_r, anchors.radius_px])
    max_mm = _max_overlap_mm(px_per_mm, settings)
    reach_mm = settings.kin_reach_mm + settings.snap_tolerance_mm

    def near(c: FloatArray, r: FloatArray) -> BoolArray:
        gap = (_centre_distances(center_px[rows], c) - radius_px[rows, None] - r[None, :]) / px_per_mm
        alike = np.abs(2.0 * (radius_px[rows, None] - r[None, :]) / px_per_mm) < settings.size_vote_window_mm
        return np.asarray((gap < reach_mm) & (gap >= -max_mm) & alike, np.bool_)

    among = near(center_px[rows], radius_px[rows])
    found: BoolArray = np.asarray(near(base_c, base_r).any(axis=1), np.bool_) | _in_groups(
        among, settings.kin_group_min
    )
    while True:
        more = ~found & (among & found[None, :]).any(axis=1)
        if not more.any():
            return np.asarray(found, np.bool_)
        found |= more


def _narrowly_lost(
    center_px: FloatArray,
    size_mm: FloatArray,
    rows: NDArray[np.intp],
    kept: NDArray[np.intp],
    px_per_mm: float,
    settings: VisionSettings,
) -> NDArray[np.intp]:
    """Of the readings ``rows`` (circles ``center_px`` (K, 2) at the sizes ``size_mm`` (K,)), those not among ``kept``
    that overlap a kept one by more than bases may (see :func:`_resolve_overlaps`), but each by at most
    ``kin_lost_overlap_mm`` more, and lie inside none of them nor hold one inside."""
    lost = rows[~np.isin(rows, kept)]
    if settings.kin_lost_overlap_mm <= 0 or lost.size == 0 or kept.size == 0:
        return np.zeros(0, np.intp)
    max_mm = _max_overlap_mm(px_per_mm, settings)
    dist_mm = _centre_distances(center_px[lost], center_px[kept]) / px_per_mm
    radii = size_mm[lost][:, None] / 2, size_mm[kept][None, :] / 2
    overlap_mm = radii[0] + radii[1] - dist_mm
    nested = dist_mm + np.minimum(*radii) <= np.maximum(*radii) + max_mm
    clash = overlap_mm > max_mm
    narrow = clash.any(axis=1) & ~(clash & (nested | (overlap_mm > max_mm + settings.kin_lost_overlap_mm))).any(axis=1)
    return lost[narrow]


def _in_groups(linked: BoolArray, min_size: int) -> BoolArray:
    """(M,) which of M items lie in a group of at least ``min_size`` (0: none does) joined by chains of links,
    ``linked`` (M, M) symmetric (the diagonal is not read)."""
    m = len(linked)
    if min_size <= 0 or m < min_size:
        return np.zeros(m, np.bool_)
    label = np.arange(m)
    while True:
        # each item takes the least label among its own and its links'
        spread = np.where(linked, label[None, :], m).min(axis=1)
        joined = np.minimum(label, spread)
        if np.array_equal(joined, label):
            break
        label = joined
    return np.asarray(np.bincount(label, minlength=m)[label] >= min_size, np.bool_)


def _beside_kin(
    found: BaseDetections, plain: BaseDetections, top_lab: FloatArray, px_per_mm: float, settings: VisionSettings
) -> NDArray[np.intp]:
    """Rows of the kin-only readings ``plain`` (see ``kin_min_bases``) that stand as bases: each overlaps none of the
    bases ``found`` (nor a better scored reading kept before it) by more than the overlap allowed (see
    :func:`_resolve_overlaps`), and at least ``kin_min_bases`` of ``found``, and of the readings that stand, would be
    one unit's with it as the size vote links bases (see :func:`_vote_sizes`) but nearer: within ``kin_reach_mm`` of
    it edge to edge, fitted diameters within ``size_vote_window_mm``, tops' colours within ``size_vote_colour``. The
    readings are taken in turn, best scored first, while one more stands. ``top_lab`` (len(found) + len(plain),
    3): the tops' colours of ``found``, then of ``plain`` (see :func:`_top_colours`). A unit's models stand together
    and are based alike; a token or a printed disc seldom wears a unit's colours beside it."""
    n = len(found)
    if settings.kin_min_bases <= 0:
        return np.zeros(0, np.intp)
    max_mm = _max_overlap_mm(px_per_mm, settings)
    m = len(plain)
    # the bases, then the readings: each reading's kin among both (a reading that stands is a base of its unit too)
    center_px = np.concatenate([found.center_px, plain.center_px])
    fitted_mm = 2.0 * np.concatenate([found.radius_px, plain.radius_px]) / px_per_mm
    size_mm = np.concatenate([found.diameter_mm, plain.diameter_mm])
    gap_mm = _centre_distances(plain.center_px, center_px) / px_per_mm - (plain.diameter_mm[:, None] + size_mm) / 2
    gap_mm[:, n:][np.eye(m, dtype=np.bool_)] = np.inf
    # of its size as the vote has it: fitted diameters within size_vote_window_mm (a size may be read a step off)
    kin = (gap_mm < settings.kin_reach_mm) & (
        np.abs(fitted_mm[n:, None] - fitted_mm[None, :]) < settings.size_vote_window_mm
    )
    if settings.size_vote_colour > 0:
        kin &= np.linalg.norm(top_lab[n:, None, :] - top_lab[None, :, :], axis=2) < settings.size_vote_colour
    clash = gap_mm < -max_mm
    free = ~np.any(clash[:, :n], axis=1)
    # a group of readings alike stands by itself, as a unit on plain bases does: its members first, best scored first
    stands = np.zeros(m, np.bool_)
    # only clear discs, round and of good contrast: a printed grid's cells form groups of faint, rough circles
    clear = plain.score >= settings.kin_group_min_score
    grouped = clear & _in_groups(kin[:, n:] & clear[:, None] & clear[None, :], settings.kin_group_min)
    for i in np.argsort(-plain.score, kind="stable"):
        if grouped[i] and free[i] and not (clash[i, n:] & stands).any():
            stands[i] = True
    # in turn, best scored first, as long as one more stands: a reading stands beside bases and readings that do
    grew = True
    while grew:
        grew = False
        support = kin[:, :n].sum(axis=1) + (kin[:, n:] & stands[None, :]).sum(axis=1)
        for i in np.argsort(-plain.score, kind="stable"):
            if not stands[i] and free[i] and support[i] >= settings.kin_min_bases and not (clash[i, n:] & stands).any():
                stands[i] = grew = True
    return np.flatnonzero(stands).astype(np.intp)


def _top_colours(
    image: NDArray[np.uint8], center_px: FloatArray, radius_px: FloatArray, settings: VisionSettings
) -> FloatArray:
    """(N, 3) the CIE Lab colour (OpenCV's 8-bit scale) of each base's top (its channels' medians), over the ring
    between the fractions ``size_vote_ring`` of its radius ``radius_px`` (N,) about ``center_px`` (N, 2): inside the
    rim, round the figure's feet, where the top's paint or flock shows. A grey ``image`` (H, W) gives grey colours."""
    n = len(radius_px)
    if n == 0:
        return np.zeros((0, 3))
    directions = ray_directions(settings.rays)
    inner, outer = settings.size_vote_ring
    fractions = np.linspace(inner, outer, _TOP_RING_STEPS)
    reach = radius_px[:, None, None] * fractions[None, None, :]
    points = center_px[:, None, None, :] + reach[..., None] * directions[None, :, None, :]
    h, w = image.shape[:2]
    u = np.clip(np.rint(points[..., 0]).astype(np.intp), 0, w - 1)
    v = np.clip(np.rint(points[..., 1]).astype(np.intp), 0, h - 1)
    samples = image[v, u].reshape(n, -1, *image.shape[2:])
    # each channel's median, then its colour: converting every sample would cost several ms a frame
    median = np.median(samples, axis=1)
    bgr = np.repeat(median[:, None], 3, axis=1) if image.ndim == 2 else median
    swatches = np.clip(np.rint(bgr), 0, 255).astype(np.uint8).reshape(1, n, 3)
    return np.asarray(cv2.cvtColor(swatches, cv2.COLOR_BGR2LAB).reshape(n, 3), dtype=np.float64)


def _vote_sizes(
    found: BaseDetections, top_lab: FloatArray, px_per_mm: float, settings: VisionSettings
) -> BaseDetections:
    """``found`` with each base's size put to the vote of its unit: two bases are taken for one unit's where they
    stand within ``size_vote_reach_mm`` edge to edge, their fitted diameters lie within ``size_vote_window_mm`` and
    their tops' colours ``top_lab`` (N, 3) (see :func:`_top_colours`) within ``size_vote_colour`` (0: not
    compared). Each base takes the standard size nearest the median fitted diameter of the bases it reaches in
    ``size_vote_hops`` such steps whose fitted diameters lie within ``size_vote_window_mm`` of its own, itself
    included, where there are at least ``size_vote_min`` of them; a base left alone so may take its neighbours' size
    (:func:`_lone_sizes`). A unit's models stand on one size and share rim and paint, so the fit's bias too: its
    scatter, which the median shrinks, decides between neighbouring sizes. The centres do not move."""
    n = len(found)
    if n == 0 or settings.size_vote_reach_mm <= 0:
        return found
    fitted_mm = 2.0 * found.radius_px / px_per_mm
    size_mm = found.diameter_mm
    alike = np.abs(fitted_mm[:, None] - fitted_mm[None, :]) < settings.size_vote_window_mm
    reached = _unit_reach(found.center_px, size_mm, top_lab, alike, px_per_mm, settings)
    voting = reached.sum(axis=1) >= settings.size_vote_min
    if not voting.any():
        return found
    median_mm = np.nanmedian(np.where(reached[voting], fitted_mm[None, :], np.nan), axis=1)
    voted = size_mm.copy()
    voted[voting], _near = snap_diameters(median_mm, settings.base_sizes_mm, np.inf)
    if settings.size_vote_lone_doubt_mm > 0:
        voted = _lone_sizes(found, top_lab, voted, voting, px_per_mm, settings)
    return replace(found, diameter_mm=voted)


def _lone_sizes(
    found: BaseDetections,
    top_lab: FloatArray,
    voted_mm: FloatArray,
    voting: BoolArray,
    px_per_mm: float,
    settings: VisionSettings,
) -> FloatArray:
    """``voted_mm`` (N,) with each base the vote left alone (not ``voting`` (N,)) and doubtful of its size (diameter
    doubt at least ``size_vote_lone_doubt_mm``) put at the one size all its voting neighbours of its top's colour
    ``top_lab`` (N, 3) voted, where at least ``size_vote_min - 1`` of them stand in direct reach (see
    :func:`_unit_reach`, sizes not compared)."""
    lone = np.flatnonzero(~voting & (found.diameter_sigma_mm >= settings.size_vote_lone_doubt_mm))
    if lone.size == 0:
        return voted_mm
    any_size = np.ones((len(found), len(found)), np.bool_)
    near = _unit_reach(found.center_px, voted_mm, top_lab, any_size, px_per_mm, replace(settings, size_vote_hops=1))
    out = voted_mm.copy()
    for i in lone:
        # a lone base is no voter, so not its own kin
        kin = np.flatnonzero(near[i] & voting)
        sizes = np.unique(voted_mm[kin])
        if kin.size >= settings.size_vote_min - 1 and sizes.size == 1:
            out[i] = sizes[0]
    return out


def _unit_reach(
    center_px: FloatArray,
    diameter_mm: FloatArray,
    top_lab: FloatArray,
    alike: BoolArray,
    px_per_mm: float,
    settings: VisionSettings,
) -> BoolArray:
    """(N, N) which bases each base takes for its unit's: linked where they stand within ``size_vote_reach_mm``
    edge to edge (``center_px`` (N, 2), ``diameter_mm`` (N,)), are ``alike`` (N, N) by size and their tops' colours
    ``top_lab`` (N, 3) lie within ``size_vote_colour`` (0: not compared), and reached within ``size_vote_hops`` such
    links (itself included), alike to it too: a base reached through another of a size between two is not taken (it
    would join a unit of 27 mm bases to one of 32 mm beside it)."""
    gap_mm = _centre_distances(center_px) / px_per_mm - (diameter_mm[:, None] + diameter_mm[None, :]) / 2
    linked = (gap_mm < settings.size_vote_reach_mm) & alike
    if settings.size_vote_colour > 0:
        colour_gap = np.linalg.norm(top_lab[:, None, :] - top_lab[None, :, :], axis=2)
        linked &= colour_gap < settings.size_vote_colour
    # a step further each hop: a unit's far end goes with its near one, where its own neighbours are few
    reached = linked
    for _hop in range(settings.size_vote_hops - 1):
        reached = (reached.astype(np.intp) @ linked.astype(np.intp)) > 0
    return np.asarray(reached & alike, dtype=np.bool_)


def _pooled_heights(
    center_px: FloatArray,
    diameter_mm: FloatArray,
    top_lab: FloatArray,
    height_ratio: FloatArray,
    px_per_mm: float,
    settings: VisionSettings,
) -> FloatArray:
    """(N,) each base's rim height ratio pooled over its unit (:func:`_unit_reach`, bases of one size
    ``diameter_mm`` (N,) only): 1 plus ``height_pool_gain`` times the median's departure from 1 of the fitted ratios
    ``height_ratio`` (N,) (NaN: no fit) of the bases it reaches, within ``outline_height_ratio``; NaN where fewer than
    ``height_pool_min`` of them fitted. A unit's bases share their rims' height, which one fit tells poorly and
    leans on 1 (the one assumed)."""
    n = len(diameter_mm)
    if n == 0 or settings.height_pool_min <= 0 or settings.size_vote_reach_mm <= 0:
        return np.full(n, np.nan)
    alike = diameter_mm[:, None] == diameter_mm[None, :]
    fitted = np.isfinite(height_ratio)
    pooled_from = _unit_reach(center_px, diameter_mm, top_lab, alike, px_per_mm, settings) & fitted[None, :]
    enough = pooled_from.sum(axis=1) >= settings.height_pool_min
    pooled = np.full(n, np.nan)
    if enough.any():
        median = np.nanmedian(np.where(pooled_from[enough], height_ratio[None, :], np.nan), axis=1)
        low, high = settings.outline_height_ratio
        pooled[enough] = np.clip(1.0 + settings.height_pool_gain * (median - 1.0), low, high)
    return pooled


def _outline_sigmas(
    look: OutlineFit,
    px_per_mm: float,
    settings: VisionSettings,
    misfit_scale: float | FloatArray,
    frame_blur_px: FloatArray | None = None,
    counted: BoolArray | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The diameter and model sigmas (mm) of the appearance fits ``look`` where they are ok (two (K_ok,)), their misfit
    times ``misfit_scale`` (one for all, or (K_ok,)) and, in the model sigma, any blur beyond the frame's
    (:func:`_excess_blur_mm`, with ``frame_blur_px`` and ``counted``); and the doubt (K_ok, 2) mm along the line to
    another start's fit about as good: ``other_start_share`` of their distance d, along that line. Two equally
    likely readings d apart spread by d / 2 about their mean, but the fit reports one of them, so at d / 2 the other
    would stand right on a call's 2-sigma line."""
    ok = look.ok
    scaled = misfit_scale / px_per_mm
    diameter = np.hypot(settings.outline_diameter_sigma_mm, 2.0 * scaled * look.radius_misfit_px[ok])
    model = np.hypot(settings.outline_model_sigma_mm, scaled * look.misfit_px[ok])
    model = np.hypot(model, _excess_blur_mm(look, px_per_mm, settings, frame_blur_px, counted))
    doubt = settings.other_start_share * look.other_start_px[ok] / px_per_mm
    return (
        np.asarray(diameter, dtype=np.float64),
        np.asarray(model, dtype=np.float64),
        np.asarray(doubt, dtype=np.float64),
    )


def _excess_blur_mm(
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


def _wall_misplaced_mm(
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


def _wider(doubt_mm: FloatArray, other_mm: FloatArray) -> FloatArray:
    """(K, 2) per row the longer of two doubts (K, 2) mm: both are a second reading's spread along a line, and
    the wider one stands."""
    longer = np.hypot(*other_mm.T) > np.hypot(*doubt_mm.T)
    return np.asarray(np.where(longer[:, None], other_mm, doubt_mm), dtype=np.float64)


def _start_ring(steps: tuple[float, ...], directions: int) -> FloatArray:
    """(len(steps) * directions, 2) offsets round a start, in units of the distance to look over."""
    angles = np.linspace(0.0, 2.0 * np.pi, directions, endpoint=False)
    unit = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return np.asarray(np.concatenate([step * unit for step in steps]), dtype=np.float64)


def _fits_at(fit: OutlineFit, rows: NDArray[np.intp]) -> OutlineFit:
    """The fits of ``fit`` at ``rows`` (K,)."""
    return OutlineFit(*(getattr(fit, f.name)[rows] for f in fields(fit)))


def _start_spread_px(
    middle_px: FloatArray, pull: FloatArray, group: NDArray[np.intp], kept: NDArray[np.intp], margin: float
) -> FloatArray:
    """(G,) for each of G bases fitted from several starts, how far (px) the farthest of its fits that pull at most
    ``margin`` more than its kept one lies from that one. ``middle_px`` (S, 2) and ``pull`` (S,) each start's fit
    (inf: no fit), ``group`` (S,) its base, ``kept`` (G,) the start kept for each base."""
    kept_of = kept[group]
    with np.errstate(invalid="ignore"):
        good = np.isfinite(pull) & (pull <= pull[kept_of] * (1.0 + margin))
    dist = np.where(good, np.hypot(*(middle_px - middle_px[kept_of]).T), 0.0)
    spread = np.zeros(len(kept))
    np.maximum.at(spread, group, dist)
    return spread


def fit_known_bases(
    topdown_bgr: NDArray[np.uint8],
    px_per_mm: float,
    settings: VisionSettings,
    detections: BaseDetections,
    diameter_mm: FloatArray,
    height_ratio: FloatArray | None = None,
    parallax: RimParallax | None = None,
) -> BaseDetections:
    """``detections`` (N rows, from :func:`detect_bases` on the same image) fitted again where each base's size is
    known: a roster says what each model stands on, and a fit that need not find the size finds the centre better
    (even at the size the detection read, which it snapped to).

    ``diameter_mm`` (N,) each base's known size (NaN: not known; with ``refit_read_sizes`` the row is fitted again at
    the size it was read at, its size doubt kept, where the free appearance fit runs, else it is kept as it is);
    ``height_ratio`` (N,) its rim's height over the one ``parallax`` assumes (NaN or None: not known, fitted as in
    :func:`detect_bases`).
    The appearance fit does this, so only where it can (``parallax`` given, ``px_per_mm`` at least
    ``known_min_px_per_mm``, which may lie below the free fit's ``outline_min_px_per_mm``: with size and height held
    the wall and the contact shadow no longer trade off against the footprint, so below that only rows whose height
    is known too): elsewhere, and where the fit fails, rows come back unchanged. A row fitted again takes the known
    size (``diameter_sigma_mm`` 0 where a roster declared it) and the fit's centre and model sigma (its misfit times
    ``known_misfit_scale`` where the height was known too, else ``outline_misfit_scale``; and any blur the fit
    needed beyond the frame's, see :func:`_excess_blur_mm`), with a doubt along the nadir line where its wall came out
    where no wall is (:func:`_wall_misplaced_mm`). A row fitted at the size it was read at, its rim's height not
    known, is fitted once more at its unit's pooled rim height (``height_pool_min``; :func:`_pooled_heights`)."""
    grey = _grey_image(topdown_bgr)
    scale = _check_scale(px_per_mm, settings)
    n = len(detections)
    known = np.asarray(diameter_mm, dtype=np.float64)
    heights = np.full(n, np.nan) if height_ratio is None else np.asarray(height_ratio, dtype=np.float64)
    if known.shape != (n,) or heights.shape != (n,):
        raise VisionError(
            f"fit_known_bases needs one size and one height ratio per detection ({n},), got {known.shape} and "
            f"{heights.shape}"
        )
    declared = np.isfinite(known) & (known > 0)
    if settings.refit_read_sizes and scale >= settings.outline_min_px_per_mm:
        known = np.where(declared, known, detections.diameter_mm)
    rows = np.flatnonzero(np.isfinite(known) & (known > 0))
    if scale < settings.outline_min_px_per_mm:
        # too coarse for the free fit: only a height held too keeps the wall from trading off against the footprint
        rows = rows[np.isfinite(heights[rows])]
    if parallax is None or scale < settings.known_min_px_per_mm or rows.size == 0:
        return detections
    # declared sizes and sizes read are fitted apart: each has its own starts and its own lean on the rim's height,
    # and only sizes read are then fitted at their unit's pooled height (a roster's declared bases keep their own)
    pool = settings.height_pool_min > 0
    parts = (
        (rows[declared[rows]], settings.known_starts, settings.outline_height_sigma, False),
        (rows[~declared[rows]], settings.read_starts, settings.read_height_sigma, pool),
    )
    for part, steps, height_sigma, pooled in parts:
        if part.size:
            part_settings = replace(settings, outline_starts=steps, outline_height_sigma=height_sigma)
            top_lab = (
                _top_colours(topdown_bgr, detections.center_px, detections.radius_px, settings) if pooled else None
            )
            detections = _fit_at_sizes(
                grey, scale, part_settings, detections, part, known, heights, declared, parallax, top_lab
            )
    return detections


def _fit_at_sizes(
    grey: NDArray[np.uint8],
    scale: float,
    settings: VisionSettings,
    detections: BaseDetections,
    rows: NDArray[np.intp],
    known: FloatArray,
    heights: FloatArray,
    declared: BoolArray,
    parallax: RimParallax,
    top_lab: FloatArray | None = None,
) -> BaseDetections:
    """``detections`` with the ``rows`` fitted again at the sizes ``known`` (N,) and, where finite, the rim height
    ratios ``heights`` (N,), the fit starting from ``outline_starts``; ``declared`` (N,): which
    sizes a roster declared (they lose their size doubt). With the tops' colours ``top_lab`` (N, 3), each base is
    then fitted again at its unit's pooled rim height (:func:`_pooled_heights`). See :func:`fit_known_bases`."""
    directions = ray_directions(settings.rays)
    radius_px = known[rows] / 2.0 * scale
    read_mm, _fits = snap_diameters(2.0 * detections.radius_px[rows] / scale, settings.base_sizes_mm, np.inf)
    # a size read wrong was a reading of part of the rim (or of more than the rim): the base lies up to the
    # difference of the radii away, in a direction the reading does not tell, so the fit starts round it too
    offset_px = np.abs(detections.radius_px[rows] - radius_px)
    ring = _start_ring(settings.misread_start_steps, settings.misread_start_directions)
    misread = read_mm != known[rows]
    # each base's starts in a row: where it was detected, then the ring round it where its size was read wrong
    counts = 1 + misread * len(ring)
    group = np.repeat(np.arange(rows.size), counts)
    starts = detections.center_px[rows][group].copy()
    firsts = np.cumsum(counts) - counts
    # the ring spreads a base's starts round where it was read: those need no further starts along the nadir line. A
    # roster's declared bases keep them (fitted from one start, medians 0.0004-0.002 mm higher on five of seven 4K sets)
    ringed = ~declared[rows][group]
    ringed[firsts] = False
    for k, first_start in zip(np.flatnonzero(misread), firsts[misread], strict=True):
        starts[first_start + 1 : first_start + counts[k]] += offset_px[k] * ring
    every_ray = np.ones((group.size, len(directions)), np.bool_)
    # the edge fit's choice of rays is not carried over: rays the model does not explain (a figure's cloak, a
    # neighbour) go before the first step too
    known_settings = replace(settings, outline_reject_at=(0, *settings.outline_reject_at))
    cast = cast_shadow_px(
        grey,
        detections.center_px[rows],
        radius_px,
        directions,
        scale,
        parallax,
        known_settings,
        radius_known=True,
        height_ratio=heights[rows],
    )
    fitted = fit_outlines(
        grey,
        starts,
        radius_px[group],
        every_ray,
        directions,
        scale,
        parallax,
        known_settings,
        radius_known=True,
        height_ratio=heights[rows][group],
        cast_px=cast,
        first_start_only=ringed,
    )
    # of a base's starts, the fit whose residuals pull least (the model explains the rim there) is kept
    pull = np.where(fitted.ok, fitted.misfit_px, np.inf)
    order = np.lexsort((pull, group))
    first = order[np.r_[True, group[order][1:] != group[order][:-1]]]
    look = _fits_at(fitted, first)
    if not look.ok.any():
        return detections
    if top_lab is not None:
        # a height known stays as it is
        held = np.isfinite(heights[rows])
        look = _fit_at_pooled_heights(
            grey, scale, known_settings, look, radius_px, known[rows], top_lab[rows], held, parallax, cast
        )
    spread_px = _start_spread_px(middle_of(fitted.center_px, parallax), pull, group, first, settings.misread_margin)
    done = rows[look.ok]
    center = detections.center_px.copy()
    radius, size = detections.radius_px.copy(), detections.diameter_mm.copy()
    diameter_sigma, model_sigma = detections.diameter_sigma_mm.copy(), detections.model_sigma_mm.copy()
    doubt = detections.model_doubt_mm.copy()
    height_share = detections.rim_height_share.copy()
    center[done] = middle_of(look.center_px[look.ok], parallax)
    radius[done], size[done] = radius_px[look.ok], known[done]
    # with the rim's height held as well only the centre and the blur were free: a misfit of their own
    misfit_scale = np.where(np.isfinite(heights[done]), settings.known_misfit_scale, settings.outline_misfit_scale)
    _size_sigma, model_sigma[done], doubt[done] = _outline_sigmas(look, scale, settings, misfit_scale)
    # a size read wrong leaves a doubt: the fit from round the reading may still have kept a wrong one. Where the
    # fits from its starts that end about as well lie apart, the doubt is as for another start's (other_start_share
    # of the distance); where they agree, misread_share of the radii's difference stays. The size read is the fitted
    # one's: a vote of the neighbours may have put it right without moving the centre
    misread_mm = np.maximum(
        settings.other_start_share * spread_px[look.ok] / scale,
        settings.misread_share * np.abs(read_mm[look.ok] - known[done]) / 2.0,
    )
    model_sigma[done] = np.hypot(model_sigma[done], misread_mm)
    doubt[done] = _wider(doubt[done], _wall_misplaced_mm(look, center[done], scale, parallax, settings))
    # a size read rather than declared keeps its doubt
    diameter_sigma[done[declared[done]]] = 0.0
    height_share[done] = 0.0
    return replace(
        detections,
        center_px=center,
        radius_px=radius,
        diameter_mm=size,
        diameter_sigma_mm=diameter_sigma,
        model_sigma_mm=model_sigma,
        rim_height_share=height_share,
        model_doubt_mm=doubt,
    )


def _fit_at_pooled_heights(
    grey: NDArray[np.uint8],
    scale: float,
    settings: VisionSettings,
    look: OutlineFit,
    radius_px: FloatArray,
    size_mm: FloatArray,
    top_lab: FloatArray,
    held: BoolArray,
    parallax: RimParallax,
    cast_px: FloatArray,
) -> OutlineFit:
    """``look`` (K fits at the known radii ``radius_px`` (K,), of sizes ``size_mm`` (K,)) with each base whose rim
    height was fitted (not ``held`` (K,)) fitted again, from ``height_pool_starts``, at its unit's pooled rim height
    (see :func:`_pooled_heights`; the tops' colours ``top_lab`` (K, 3)) where it has one and that fit succeeds. The
    cast shadow ``cast_px`` (2,) is as for :func:`vision.outline.fit_outlines`."""
    fitted = np.where(look.ok & ~held, look.height_ratio, np.nan)
    pooled = _pooled_heights(look.center_px, size_mm, top_lab, fitted, scale, settings)
    again_rows = np.flatnonzero(np.isfinite(pooled) & look.ok & ~held)
    if again_rows.size == 0:
        return look
    directions = ray_directions(settings.rays)
    again = fit_outlines(
        grey,
        middle_of(look.center_px[again_rows], parallax),
        radius_px[again_rows],
        np.ones((again_rows.size, len(directions)), np.bool_),
        directions,
        scale,
        parallax,
        replace(settings, outline_starts=settings.height_pool_starts),
        radius_known=True,
        height_ratio=pooled[again_rows],
        cast_px=cast_px,
    )
    return look.at(again_rows[again.ok], _fits_at(again, np.flatnonzero(again.ok)))


def _covered(
    ignore: NDArray[np.uint8] | None, shape: tuple[int, ...], found: BaseDetections, margin_px: float
) -> NDArray[np.uint8]:
    """(H, W) uint8: ``ignore`` with every found base's disc, grown by ``margin_px``, set."""
    covered = np.zeros(shape[:2], np.uint8) if ignore is None else ignore.copy()
    for (x, y), r in zip(found.center_px, found.radius_px, strict=True):
        cv2.circle(covered, (round(x), round(y)), round(r + margin_px), 255, -1)
    return covered


def _may_reach(seeds: Seeds, boxes_px: FloatArray, slack_px: float) -> BoolArray:
    """(K,) True for the seeds whose largest circle (their band's outer radius, plus ``slack_px`` and a reduced
    pixel for where the centre may lie) reaches into any of the boxes (M, 4) (u0, v0, u1, v1)."""
    boxes = np.asarray(boxes_px, dtype=np.float64).reshape(-1, 4)
    if len(seeds) == 0 or len(boxes) == 0:
        return np.zeros(len(seeds), np.bool_)
    c = seeds.center_px[:, None, :]
    du = np.maximum(np.maximum(boxes[None, :, 0] - c[..., 0], c[..., 0] - boxes[None, :, 2]), 0.0)
    dv = np.maximum(np.maximum(boxes[None, :, 1] - c[..., 1], c[..., 1] - boxes[None, :, 3]), 0.0)
    reach = seeds.band_px[:, 1] + slack_px + seeds.reduction
    return np.asarray(np.any(np.hypot(du, dv) <= reach[:, None], axis=1))


def _shadow_band(rim: RimModel, settings: VisionSettings) -> BoolArray:
    """(K,) whether each rim's band is darker than both the mat and the top by ``shadow_min_darkness``: a shadow,
    the edges' circle its outer edge, wider than what casts it (a die's shadow reads as a 25 mm circle)."""
    return np.asarray(
        rim.levels[:, 1] <= rim.levels[:, [0, 2]].min(axis=1) - settings.shadow_min_darkness, dtype=np.bool_
    )


def _read_by_top(
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


def _detect_in(
    image: NDArray[np.uint8],
    grey: NDArray[np.uint8],
    min_figure: float,
    scale: float,
    settings: VisionSettings,
    ignore: NDArray[np.uint8] | None,
    parallax: RimParallax | None,
    chroma_pending: Future[NDArray[np.uint8] | None] | None,
    frame_blur_px: FloatArray | None = None,
    second_readings: bool = False,
    bgr: NDArray[np.uint8] | None = None,
    wanted_px: FloatArray | None = None,
    anchors: BaseDetections | None = None,
) -> tuple[BaseDetections, BaseDetections, BaseDetections, FloatArray]:
    """Steps 1-6: seeds, edges, rings and the disc test in ``image`` (H, W) uint8, the grey image or the colour contrast
    of the second look; the appearance fit in ``grey`` (H, W) uint8, which shows the wall's shading and the contact
    shadow it models. A base's figure must vary by ``min_figure`` in both. ``chroma_pending`` gives (when done) the
    colour contrast (H, W) uint8, which tells a contact shadow from a coloured ring where ``image`` is grey (None,
    or a result of None: no such reading); it is waited for only after the appearance fit. ``frame_blur_px`` (M,):
    the blur of the frame's fits in an earlier look (see :func:`_excess_blur_mm`). ``second_readings``: also read
    each seed's best supported ring where it lies apart from the outermost (see ``second_ring_mm``). ``bgr`` (H, W,
    3) or (H, W) uint8, the frame as it was taken, tells a fingertip's round end (see :mod:`vision.ends`; None:
    ``grey``). ``wanted_px``: see :func:`detect_bases`. ``anchors``: bases an earlier look found, beside which a
    kin-only reading may stand. Returns the bases, the second readings that passed as bases where none of the first
    readings lies, the kin-only readings (bases only beside their unit's, see ``kin_min_bases``; where none of the
    first readings lies) and the blur (px) of this look's usable appearance fits."""
    seeds = find_seeds(image, scale, settings, ignore)
    if wanted_px is not None:
        seeds = seeds[_may_reach(seeds, wanted_px, settings.snap_tolerance_mm * scale)]
    if len(seeds) == 0:
        return BaseDetections.empty(), BaseDetections.empty(), BaseDetections.empty(), np.zeros(0)
    directions = ray_directions(settings.rays)
    sizes = settings.base_sizes_mm

    # 2. footprint from the seeds, snapped to a size
    # where figures blur, the outermost ring may be a contact shadow's outer edge, the base's rim inside it
    inner_rings = (
        second_readings
        and settings.second_ring_mm > 0
        and settings.inner_ring_fraction > 0
        and scale < settings.outline_min_px_per_mm
    )
    feet = _footprints(image, ignore, seeds, scale, ray_directions(settings.search_rays), settings, inner_rings)
    center, radius, polarity, support = feet.center_px, feet.radius_px, feet.polarity, feet.support
    # the outermost ring can be no base's: a figure's outline, or a neighbour's, round a base inside it. Where the
    # best supported ring lies apart from it, that ring is a second reading of the seed
    if second_readings and settings.second_ring_mm > 0:
        apart = (
            (support > 0)
            & np.isfinite(feet.best_radius_px)
            & (np.abs(feet.best_radius_px - radius) > settings.second_ring_mm * scale)
        )
        # an inner ring that is the best ring again is read once
        inner = (
            (support > 0)
            & np.isfinite(feet.inner_radius_px)
            & ~(apart & (np.abs(feet.inner_radius_px - feet.best_radius_px) <= settings.second_ring_mm * scale))
        )
        center = np.concatenate([center, feet.best_center_px[apart], feet.center_px[inner]])
        radius = np.concatenate([radius, feet.best_radius_px[apart], feet.inner_radius_px[inner]])
        polarity = np.concatenate([polarity, feet.best_polarity[apart], feet.inner_polarity[inner]])
        support = np.concatenate([support, support[apart], support[inner]])
    second = np.arange(len(support)) >= len(seeds)
    rough_mm = settings.snap_tolerance_mm + settings.refine_search_mm + 2 * _FIRST_PASS_SLACK_PX / scale
    nominal, fits_size = snap_diameters(2 * radius / scale, sizes, rough_mm)
    alive = (support > 0) & fits_size
    center, radius, polarity, nominal = (a[alive] for a in (center, radius, polarity, nominal))
    second = second[alive]
    # of two circles that are one base, the outer is its footprint (the inner one is its top); a second reading is
    # read beside the first ones, never in their place
    keep = _unique(center, radius, nominal, _firsts_first(radius, second), second)
    center, polarity, nominal, second = center[keep], polarity[keep], nominal[keep], second[keep]
    if len(nominal) == 0:
        return BaseDetections.empty(), BaseDetections.empty(), BaseDetections.empty(), np.zeros(0)

    # 3. refinement around the nominal radius, re-snapped after every pass
    radius = nominal / 2 * scale
    for _ in range(settings.refine_passes):
        fit, _peaks = _rim_fit(
            image,
            ignore,
            center,
            nominal / 2 * scale,
            max(settings.refine_search_mm * scale, _MIN_REFINE_HALF_WIDTH_PX),
            polarity,
            "nearest",
            directions,
            settings,
            parallax,
        )
        center = np.where(fit.ok[:, None], fit.center_px, center)
        radius = np.where(fit.ok, fit.radius_px, radius)
        nominal = np.where(fit.ok, snap_diameters(2 * radius / scale, sizes, np.inf)[0], nominal)

    # 4. is it a base? Shape and contrast first; the rim model (the costliest cue) only for what passes them
    coverage = _coverage(fit)
    contrast, fill = _disc_contrast(image, center, radius, fit.inlier, scale, directions, settings, parallax)
    rms = fit.rms_px
    # the colour contrast's edges scatter more than grey levels' round a rim (most where figures blur, about 1 px/mm,
    # but at 4K too: a brown top with a light wall, on a mat of about its grey level, reads 1.01-1.21 px in colour)
    max_rms = settings.colour_max_fit_rms_px if image is not grey else settings.max_fit_rms_px
    rim_ok = _rim_pass(fit, max_rms, settings)
    rim_ok_alone = rim_ok.copy()
    figure = _figure_contrast(image, center, radius, directions, settings)
    clear_in_colour = np.zeros(len(radius), np.bool_)
    if image is not grey:
        grey_figure = _figure_contrast(grey, center, radius, directions, settings)
        # where figures blur (about 1 px/mm), one painted in its base's grey level fades in grey but not in colour
        if scale < settings.outline_min_px_per_mm:
            clear_in_colour = (figure >= settings.colour_clear_figure_contrast) & (
                grey_figure >= settings.colour_clear_figure_grey
            )
        figure = np.minimum(figure, grey_figure)
    # a disc that passes every test but the figure's: a token's middle, or a printed disc
    plain_disc = rim_ok & _disc_pass(contrast, fill, settings) & (figure < min_figure) & ~clear_in_colour
    rim_ok &= (figure >= min_figure) | clear_in_colour
    # the mat's own blotches can pass the disc and the figure tests each, but only just: not both just
    rim_ok &= (contrast >= settings.faint_disc_contrast) | (figure >= settings.faint_figure_contrast)
    accept = rim_ok & _disc_pass(contrast, fill, settings)
    # a base may fail one test and still be a base: a small figure (or one painted like its base) spreads less than
    # the bar on a clear disc; where figures blur, a rim also reads rough or is seen over little of its length (where
    # they resolve, the appearance fit would read such rims astray). Such a reading, up to the kin bars, goes on
    # apart: a base only beside its unit's bases (detect_bases, _beside_kin)
    kin_only = np.zeros(len(radius), np.bool_)
    if settings.kin_min_bases > 0:
        kin_only = plain_disc & (contrast >= settings.faint_disc_contrast)
        if scale < settings.outline_min_px_per_mm:
            loose_rim = fit.ok & (coverage >= settings.kin_min_edge_coverage) & (rms <= settings.kin_max_fit_rms_px)
            has_figure = (figure >= min_figure) | clear_in_colour
            not_faint = (contrast >= settings.faint_disc_contrast) | (figure >= settings.faint_figure_contrast)
            kin_only |= loose_rim & ~rim_ok_alone & has_figure & not_faint & _disc_pass(contrast, fill, settings)
        kin_only &= ~second & ~accept
        # most such readings stand by no unit and would cost the tests below for nothing: only those with a base of
        # about their size in reach go on (this look's, an earlier look's ``anchors``, or a reading so kept)
        kin_only[kin_only] = _anchored(center, radius, accept, kin_only, anchors, scale, settings)
        accept |= kin_only
    by_appearance = parallax is not None and scale >= settings.outline_min_px_per_mm
    # edges that ran out into a contact shadow put the disc's band partly on the mat: where the appearance fit runs,
    # a candidate that failed only the disc test is tested again at the footprint the fit finds
    retry = rim_ok & ~accept if by_appearance else np.zeros(len(radius), np.bool_)
    # the footprint radius, free of the blur-and-wall shift, decides the size
    live = np.flatnonzero(accept | retry)
    rim = _rim_model(image, center[live], radius[live], fit.inlier[live], scale, directions, settings, parallax)
    # the footprint from the whole appearance (wall, top, contact shadow) where the camera's position says where the
    # wall shows; the rim model elsewhere and where that fails
    # a little under outline_min_px_per_mm (a 4K frame from a low camera) the fit still reads the size better than the
    # edges, though not yet the centre
    sizes_only = parallax is not None and settings.outline_size_min_px_per_mm <= scale < settings.outline_min_px_per_mm
    if by_appearance or sizes_only:
        look = fit_outlines(grey, center[live], radius[live], fit.inlier[live], directions, scale, parallax, settings)
    else:
        look = OutlineFit.none(len(live))
    chroma = None if chroma_pending is None else chroma_pending.result()
    # a fit that took a contact shadow in reads the footprint a size or more too large: where its footprint fits no
    # standard size, is larger than the edges' circle and that circle fits one, the base is read as where the fit
    # fails. So where the fit settled a little inside the edges' circle (a circle inside the footprint); a flat disc,
    # a token or a printed one, has no wall and no shadow of its own, and the fit reads it further inside its edges
    astray = np.zeros(len(live), np.bool_)
    if look.ok.any() and settings.rim_model_fallback_mm > 0:
        _size, look_fits = snap_diameters(2 * look.radius_px / scale, sizes, settings.snap_tolerance_mm)
        _size, edge_fits = snap_diameters(2 * radius[live] / scale, sizes, settings.rim_model_fallback_mm)
        short_mm = 2 * (radius[live] - look.radius_px) / scale
        astray = look.ok & ~look_fits & edge_fits & (short_mm < settings.astray_short_mm)
        look = replace(look, ok=look.ok & ~astray)
    # where the fit reads only sizes, its reading is kept apart and the rest goes on as where no fit runs
    size_look = look
    if sizes_only:
        look = OutlineFit.none(len(live))
    again = np.flatnonzero(retry[live] & look.ok)
    if again.size:
        rows = live[again]
        contrast_again, fill_again = _disc_contrast(
            image,
            middle_of(look.center_px[again], parallax),
            look.radius_px[again],
            fit.inlier[rows],
            scale,
            directions,
            settings,
            parallax,
        )
        disc = _disc_pass(contrast_again, fill_again, settings)
        accept[rows[disc]] = True
        contrast[rows[disc]] = contrast_again[disc]
    # the circles the edges read, before the fit moves them: where a token's printed ring and its middle lie
    edge_center, edge_radius = center.copy(), radius.copy()
    radius[live] = np.where(look.ok, look.radius_px, radius[live] + np.where(rim.ok, rim.rho_px, 0.0))
    # a base lighter than the mat, read by the edges where figures blur, is read by its top disc: a circle, which the
    # edge fit took for the stadium of footprint and top and so read short by the stretch it allowed each ray
    by_top = _read_by_top(rim, ~look.ok, image is grey, scale, settings, parallax is not None)
    # a band darker than the mat and the top round the rim is a shadow, its outer edge the edges' circle
    shadow = rim.ok & _shadow_band(rim, settings)
    top_read, circle = live[by_top], live[by_top & ~shadow]
    if circle.size and parallax is not None:
        stretch = ray_stretch(parallax, center[circle], directions)
        seen = fit.inlier[circle]
        radius[circle] += (stretch * seen).sum(axis=1) / np.maximum(seen.sum(axis=1), 1)
    if sizes_only:
        # a fit far from the edges' circle read another one (a 60 mm circle round two 25 mm bases)
        near_edges = np.abs(2.0 * (size_look.radius_px - radius[live]) / scale) <= settings.snap_tolerance_mm
        radius[live] = np.where(size_look.ok & near_edges, size_look.radius_px, radius[live])
    diameter_sigma = np.full(len(radius), settings.edge_diameter_sigma_mm)
    model_sigma = np.full(len(radius), settings.edge_model_sigma_mm)
    doubt = np.zeros((len(radius), 2))
    # the frame's blur is told by the fits of the readings that are bases, not by the kin-only ones
    settled_live = ~kin_only[live]
    diameter_sigma[live[look.ok]], model_sigma[live[look.ok]], doubt[live[look.ok]] = _outline_sigmas(
        look, scale, settings, settings.outline_misfit_scale, frame_blur_px, settled_live
    )
    center[live] = np.where(look.ok[:, None], middle_of(look.center_px, parallax), center[live])
    if parallax is not None and look.ok.any():
        fitted = live[look.ok]
        doubt[fitted] = _wider(doubt[fitted], _wall_misplaced_mm(look, center[fitted], scale, parallax, settings))
    final_size, size_ok = snap_diameters(2 * radius / scale, sizes, settings.snap_tolerance_mm)
    # a base of the mat's own colour may show only by its contact shadow: the edges and the rim model read the
    # dark ring's outer edge, and no size fits; its inner edge is the footprint
    shadowed, inner_px, inner_size = _shadow_ring_readings(
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
    if settings.rim_model_fallback_mm > 0:
        blurred = scale < settings.outline_min_px_per_mm
        unsized = live[~look.ok & (blurred | astray) & ~size_ok[live] & ~shadow]
        edge_size, edge_fits = snap_diameters(2 * edge_radius[unsized] / scale, sizes, settings.rim_model_fallback_mm)
        took = unsized[edge_fits]
        radius[took], final_size[took], size_ok[took] = edge_radius[took], edge_size[edge_fits], True
    accept &= size_ok
    # a printed ring: a thin stroke with the mat's colour inside it too (the model sees through the blur)
    mat, top = rim.levels[:, 0], rim.levels[:, 2]
    like_mat = rim.ok & (np.abs(top - mat) < settings.min_disc_contrast)
    line = like_mat & (rim.width_px < settings.min_wall_mm * scale)
    # ... or a wider one: then only a figure tells a base whose top is of the mat's colour (where the image resolves
    # a figure: at about 1 px/mm figures blur to spreads under the bar)
    ring = like_mat & (figure[live] < settings.ring_min_figure_contrast) & (scale >= settings.outline_min_px_per_mm)
    # ... and a printed ring's inside is the mat's own texture, faint in grey and in colour, where a figure on a base
    # shows in one of them, also where figures blur. The inside's colour tells it too: next to a bright or dark
    # stroke the mat just outside the rim reads brighter or darker than the mat inside
    judged = np.flatnonzero(accept[live])
    if chroma is not None and judged.size:
        inside = live[judged]
        samples = _figure_samples(chroma, center[inside], radius[inside], directions, settings)
        mat_colour = np.median(samples.reshape(len(inside), -1), axis=1) < settings.ring_inside_max_colour
        plain = (_spread(samples) < settings.ring_colour_figure_contrast) & (
            figure[inside] < settings.faint_figure_contrast
        )
        ring[judged[(like_mat[judged] | mat_colour) & plain]] = True
    printed = line | ring
    accept[live[printed]] = False
    # a printed ring shows a circle at each edge of its stroke: the inner one has the mat inside and the stroke
    # outside, and passes for a disc; it goes with the ring (one a kin-only reading took for a ring ends none: a
    # base's top read as such a reading would end the base)
    ringed = printed & ~kin_only[live]
    stroke_px = rim.width_px[ringed]
    slack_px = settings.ring_edge_mm * scale
    accept[_concentric(edge_center, edge_radius, accept, live[ringed], (-stroke_px, stroke_px), slack_px)] = False
    # a token with a printed ring: its plain middle fails the figure test, but a circle at the ring's outer edge has
    # the ring in its figure band (off centre) and passes; it goes with the middle
    token_px = (0.0, settings.token_ring_mm * scale)
    plain_rows = np.flatnonzero(plain_disc)
    accept[_concentric(edge_center, edge_radius, accept & ~kin_only, plain_rows, token_px, slack_px)] = False
    # ... and so does a kin-only reading at a ring's edge (not the plain disc itself: at least a slack larger)
    outer_px = (2 * slack_px, settings.token_ring_mm * scale)
    accept[_concentric(edge_center, edge_radius, accept & kin_only, plain_rows, outer_px, slack_px)] = False
    # a fingertip, or a forearm's end: the round end of a band of its own colour
    ends = np.flatnonzero(accept)
    accept[
        ends[
            round_ends(
                grey if bgr is None else bgr,
                center[ends],
                radius[ends],
                settings.round_end_max_wobble,
                settings.round_end_min_contrast,
            )
        ]
    ] = False
    # a die: the inside of a square block, where it blurs into a base's size (where figures resolve, so does a die's
    # outline, and the test would only cost bases)
    blocks = np.flatnonzero(accept) if scale < settings.outline_min_px_per_mm else np.zeros(0, np.intp)
    accept[
        blocks[
            square_insides(
                grey, center[blocks], radius[blocks], settings.die_square_agreement, settings.die_line_agreement
            )
        ]
    ] = False
    # a token's printed rings (or a printed disc's) seen off centre cross the figure's circles on one side and pass
    # for a figure: from the right centre nearby its inside is the same all the way round, where a figure stays
    # off centre from every centre (a refinement of the figure test: none where that test is off, nor where figures
    # blur, at about 1 px/mm, and a faint one's spread drops as low from a centre nearby)
    resolved_figures = scale >= settings.outline_min_px_per_mm
    if settings.off_centre_figure_contrast > 0 and min_figure > 0 and resolved_figures:
        figured = np.flatnonzero(accept)
        reach_px = settings.off_centre_reach_mm * scale
        bar = settings.off_centre_figure_contrast
        # in both looks' images, as the figure test (a circle the first ends needs no second)
        for shown in (image,) if image is grey else (image, grey):
            least = _least_figure(
                shown, center[figured], radius[figured], directions, settings, reach_px, _RECENTRE_REFINE * bar
            )
            figured = figured[least >= bar]
        accept &= np.isin(np.arange(len(accept)), figured)
    score = (
        coverage
        * np.clip(contrast / (2 * settings.min_disc_contrast), 0.0, 1.0)
        * np.clip(1.0 - rms / max_rms, 0.0, 1.0)
    )
    sigma = _center_sigma(fit, directions, scale, settings)
    idx = np.flatnonzero(accept)

    # 5. duplicates and impossible pairs; second readings only where no first reading lies, or where they hold the
    # first readings there inside them and may take their place (a figure's outline read first, the footprint second)
    def resolved(rows: NDArray[np.intp]) -> NDArray[np.intp]:
        at = (center[rows], radius[rows], final_size[rows], score[rows])
        return rows[_resolve_overlaps(*at, scale, settings, second[rows])]

    first_rows = idx[~second[idx] & ~kin_only[idx]]
    firsts = resolved(first_rows)
    # a reading that lost only by overlapping a base a little too much may have lost to a neighbour read a size too
    # large: it waits for its unit's vote, as a kin-only reading
    kin_only[_narrowly_lost(center, final_size, first_rows, firsts, scale, settings)] = True
    kept = resolved(np.concatenate([firsts, idx[second[idx]]]))
    firsts, seconds = kept[~second[kept]], kept[second[kept]]
    # kin-only readings among themselves only: whether they stand beside the bases is decided with both looks'
    kin_rows = resolved(idx[kin_only[idx]])
    kept = np.concatenate([firsts[np.argsort(-score[firsts], kind="stable")], seconds, kin_rows])
    # another reading the edges allow (the appearance fit weighs such readings itself, from its starts): two
    # equally likely readings a distance d apart have a spread of d / 2
    by_edges = np.ones(len(radius), np.bool_)
    by_edges[live[look.ok]] = False
    # kin-only readings that will not stand must not pass for the neighbours of the others: looked at apart, last
    settled = ~kin_only[kept]

    def other_readings(rows: NDArray[np.intp], examine: BoolArray) -> FloatArray:
        at = (center[rows], radius[rows], polarity[rows], final_size[rows], by_edges[rows] & examine)
        return _other_readings(image, ignore, *at, scale, directions, settings, parallax)

    other_mm = np.zeros(len(kept))
    other_mm[settled] = other_readings(kept[settled], np.ones(int(settled.sum()), np.bool_))
    if not settled.all():
        other_mm[~settled] = other_readings(kept, ~settled)[~settled]
    unseen_mm = unseen_rim_sigma_mm(radius[kept] / scale, coverage[kept], by_edges[kept], settings)
    model_sigma[kept] = np.sqrt(model_sigma[kept] ** 2 + (other_mm / 2) ** 2 + unseen_mm**2)
    # a top disc read: its middle goes back half a parallax shift, to where the outline's middle would stand, and a rim
    # height error shows in full there
    height_share = np.where(by_edges[kept], 1.0, 0.0)
    kept_top = np.isin(kept, top_read)
    if kept_top.any() and parallax is not None:
        half, unit = parallax.half_shift(center[kept[kept_top]])
        center[kept[kept_top]] -= half[:, None] * unit
        height_share[kept_top] = 2.0
    found = BaseDetections(
        center_px=center[kept],
        radius_px=radius[kept],
        diameter_mm=final_size[kept],
        score=score[kept],
        edge_coverage=coverage[kept],
        fit_rms_px=rms[kept],
        center_sigma_px=sigma[kept],
        diameter_sigma_mm=diameter_sigma[kept],
        model_sigma_mm=model_sigma[kept],
        rim_height_share=height_share,
        model_doubt_mm=doubt[kept],
    )
    by_kin = kin_only[kept]
    return found[~second[kept] & ~by_kin], found[second[kept]], found[by_kin], look.sigma_px[look.ok & settled_live]
