"""Base detection on a rectified top-down image: the public verb, :func:`detect_bases` (and
:func:`fit_known_bases`, which fits the bases again at the sizes and rim heights a roster declares, or at the sizes
they were read at).

Steps:

1. Seeds: ``cv2.HoughCircles`` once per band of similar sizes, each on a grey copy reduced by a whole factor
   (:mod:`vision.seeds`).
2. Footprint (:func:`find_footprints`): rays from each seed span its band's radius range plus ``seed_search_mm``. A
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

6. Other readings (:func:`other_readings_mm`): a base read by its edges alone may be read wrong by millimetres and
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

8. Bases beside their unit (:func:`beside_kin`): a reading that fails only one test - the figure's on a clear
   disc (disc contrast at least ``faint_disc_contrast``), or where figures blur roundness up to
   ``kin_max_fit_rms_px`` or coverage down to ``kin_min_edge_coverage`` - and passes all the others is kept aside
   in both looks, and stands where it overlaps no base and at least ``kin_min_bases`` bases within
   ``kin_reach_mm`` would be one unit's with it as the size vote links them (below), or readings that stand so.
   A reading that lost in step 5 only by overlapping a base by up to ``kin_lost_overlap_mm`` more than allowed
   (and not nested in it) is kept aside too: the base it lost to may be read a size too large, so whether it
   overlaps is asked of the bases at the sizes their units vote.

9. Sizes by vote (:func:`vote_sizes`): a unit's models stand on one size, so each base takes the size nearest the
   median fitted diameter of the bases of its unit near it: of about its fitted diameter and the colour of its top
   (``size_vote_*``); the centre does not move.

The centre's 1-sigma uncertainty comes from the covariance of the geometric fit (residual variance over the
inlier count, shaped by their angular spread), with rays closer together along the rim than
``edge_correlation_px`` counted as one, plus ``edge_bias_px / px_per_mm`` in quadrature for the pull of nearby
structures that the fit cannot see.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.circles import SAME_BASE_CENTER_FRACTION, centre_distances, firsts_first, snap_diameters
from vision.colour import chroma_contrast
from vision.config import VisionSettings
from vision.cues import (
    RECENTRE_REFINE,
    concentric,
    disc_contrast,
    disc_passes,
    figure_contrast,
    figure_samples,
    figure_spread,
    least_figure,
)
from vision.detections import BaseDetections
from vision.ends import round_ends
from vision.errors import VisionError
from vision.footprints import FIRST_PASS_SLACK_PX, find_footprints, seeds_in_reach, unique_readings
from vision.inputs import check_mask, check_scale, grey_image
from vision.known import fit_at_sizes
from vision.measure import (
    center_sigma,
    outline_sigmas,
    read_by_top,
    rim_model,
    shadow_band,
    shadow_ring_readings,
    wall_misplaced_mm,
    wider_doubt,
)
from vision.other_readings import other_readings_mm, unseen_rim_sigma_mm
from vision.outline import OutlineFit, fit_outlines, middle_of
from vision.overlaps import narrowly_lost, resolve_overlaps
from vision.parallax import RimParallax, ray_stretch
from vision.reference import change_map, changed_share
from vision.refine import MIN_REFINE_HALF_WIDTH_PX, rim_coverage, rim_fit, rim_passes
from vision.rim import (
    ray_directions,
)
from vision.seeds import find_seeds
from vision.squares import square_insides
from vision.units import anchored, final_bases, top_colours
from vision.verify import features, load_verifier

__all__ = ["detect_bases", "fit_known_bases", "snap_diameters"]

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


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
    scale = check_scale(px_per_mm, settings)
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
    grey = grey_image(topdown_bgr)
    scale = check_scale(px_per_mm, settings)
    ignore = check_mask(mask, grey.shape)
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
        return final_bases(found, spare, kin_only, bgr, scale, settings)
    # the colour contrast (OpenCV's loops, without the interpreter lock) is made beside the grey look, which needs it
    # only after its appearance fit
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(chroma_contrast, bgr, ignore, settings.colour_gain, settings.colour_blur_px)
        found, spare, kin_only, blur_px = grey_look(pending)
        colour = pending.result()
    if colour is None:
        return final_bases(found, spare, kin_only, bgr, scale, settings)
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
    keep = resolve_overlaps(both.center_px, both.radius_px, both.diameter_mm, both.score, scale, settings, later)
    found, more = both[keep[~later[keep]]], both[keep[later[keep]]]
    # a second reading of a base the colour look found yields to it; where the two read different things that cannot
    # both stand (the colour look may take a figure lying beside its base for one), the better scored stands
    same = centre_distances(spare.center_px, more.center_px) <= SAME_BASE_CENTER_FRACTION * more.radius_px[None, :]
    rival = BaseDetections.concatenate([more, spare[~np.any(same, axis=1)]])
    rival = rival[resolve_overlaps(rival.center_px, rival.radius_px, rival.diameter_mm, rival.score, scale, settings)]
    return final_bases(found, rival, BaseDetections.concatenate([kin_only, kin_colour]), bgr, scale, settings)


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
    needed beyond the frame's, see :func:`excess_blur_mm`), with a doubt along the nadir line where its wall came out
    where no wall is (:func:`wall_misplaced_mm`). A row fitted at the size it was read at, its rim's height not
    known, is fitted once more at its unit's pooled rim height (``height_pool_min``; :func:`pooled_heights`)."""
    grey = grey_image(topdown_bgr)
    scale = check_scale(px_per_mm, settings)
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
            top_lab = top_colours(topdown_bgr, detections.center_px, detections.radius_px, settings) if pooled else None
            detections = fit_at_sizes(
                grey, scale, part_settings, detections, part, known, heights, declared, parallax, top_lab
            )
    return detections


def _covered(
    ignore: NDArray[np.uint8] | None, shape: tuple[int, ...], found: BaseDetections, margin_px: float
) -> NDArray[np.uint8]:
    """(H, W) uint8: ``ignore`` with every found base's disc, grown by ``margin_px``, set."""
    covered = np.zeros(shape[:2], np.uint8) if ignore is None else ignore.copy()
    for (x, y), r in zip(found.center_px, found.radius_px, strict=True):
        cv2.circle(covered, (round(x), round(y)), round(r + margin_px), 255, -1)
    return covered


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
    the blur of the frame's fits in an earlier look (see :func:`excess_blur_mm`). ``second_readings``: also read
    each seed's best supported ring where it lies apart from the outermost (see ``second_ring_mm``). ``bgr`` (H, W,
    3) or (H, W) uint8, the frame as it was taken, tells a fingertip's round end (see :mod:`vision.ends`; None:
    ``grey``). ``wanted_px``: see :func:`detect_bases`. ``anchors``: bases an earlier look found, beside which a
    kin-only reading may stand. Returns the bases, the second readings that passed as bases where none of the first
    readings lies, the kin-only readings (bases only beside their unit's, see ``kin_min_bases``; where none of the
    first readings lies) and the blur (px) of this look's usable appearance fits."""
    seeds = find_seeds(image, scale, settings, ignore)
    if wanted_px is not None:
        seeds = seeds[seeds_in_reach(seeds, wanted_px, settings.snap_tolerance_mm * scale)]
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
    feet = find_footprints(image, ignore, seeds, scale, ray_directions(settings.search_rays), settings, inner_rings)
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
    rough_mm = settings.snap_tolerance_mm + settings.refine_search_mm + 2 * FIRST_PASS_SLACK_PX / scale
    nominal, fits_size = snap_diameters(2 * radius / scale, sizes, rough_mm)
    alive = (support > 0) & fits_size
    center, radius, polarity, nominal = (a[alive] for a in (center, radius, polarity, nominal))
    second = second[alive]
    # of two circles that are one base, the outer is its footprint (the inner one is its top); a second reading is
    # read beside the first ones, never in their place
    keep = unique_readings(center, radius, nominal, firsts_first(radius, second), second)
    center, polarity, nominal, second = center[keep], polarity[keep], nominal[keep], second[keep]
    if len(nominal) == 0:
        return BaseDetections.empty(), BaseDetections.empty(), BaseDetections.empty(), np.zeros(0)

    # 3. refinement around the nominal radius, re-snapped after every pass
    radius = nominal / 2 * scale
    for _ in range(settings.refine_passes):
        fit, _peaks = rim_fit(
            image,
            ignore,
            center,
            nominal / 2 * scale,
            max(settings.refine_search_mm * scale, MIN_REFINE_HALF_WIDTH_PX),
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
    coverage = rim_coverage(fit)
    contrast, fill = disc_contrast(image, center, radius, fit.inlier, scale, directions, settings, parallax)
    rms = fit.rms_px
    # the colour contrast's edges scatter more than grey levels' round a rim (most where figures blur, about 1 px/mm,
    # but at 4K too: a brown top with a light wall, on a mat of about its grey level, reads 1.01-1.21 px in colour)
    max_rms = settings.colour_max_fit_rms_px if image is not grey else settings.max_fit_rms_px
    rim_ok = rim_passes(fit, max_rms, settings)
    rim_ok_alone = rim_ok.copy()
    figure = figure_contrast(image, center, radius, directions, settings)
    clear_in_colour = np.zeros(len(radius), np.bool_)
    if image is not grey:
        grey_figure = figure_contrast(grey, center, radius, directions, settings)
        # where figures blur (about 1 px/mm), one painted in its base's grey level fades in grey but not in colour
        if scale < settings.outline_min_px_per_mm:
            clear_in_colour = (figure >= settings.colour_clear_figure_contrast) & (
                grey_figure >= settings.colour_clear_figure_grey
            )
        figure = np.minimum(figure, grey_figure)
    # a disc that passes every test but the figure's: a token's middle, or a printed disc
    plain_disc = rim_ok & disc_passes(contrast, fill, settings) & (figure < min_figure) & ~clear_in_colour
    rim_ok &= (figure >= min_figure) | clear_in_colour
    # the mat's own blotches can pass the disc and the figure tests each, but only just: not both just
    rim_ok &= (contrast >= settings.faint_disc_contrast) | (figure >= settings.faint_figure_contrast)
    accept = rim_ok & disc_passes(contrast, fill, settings)
    # a base may fail one test and still be a base: a small figure (or one painted like its base) spreads less than
    # the bar on a clear disc; where figures blur, a rim also reads rough or is seen over little of its length (where
    # they resolve, the appearance fit would read such rims astray). Such a reading, up to the kin bars, goes on
    # apart: a base only beside its unit's bases (detect_bases, beside_kin)
    kin_only = np.zeros(len(radius), np.bool_)
    if settings.kin_min_bases > 0:
        kin_only = plain_disc & (contrast >= settings.faint_disc_contrast)
        if scale < settings.outline_min_px_per_mm:
            loose_rim = fit.ok & (coverage >= settings.kin_min_edge_coverage) & (rms <= settings.kin_max_fit_rms_px)
            has_figure = (figure >= min_figure) | clear_in_colour
            not_faint = (contrast >= settings.faint_disc_contrast) | (figure >= settings.faint_figure_contrast)
            kin_only |= loose_rim & ~rim_ok_alone & has_figure & not_faint & disc_passes(contrast, fill, settings)
        kin_only &= ~second & ~accept
        # most such readings stand by no unit and would cost the tests below for nothing: only those with a base of
        # about their size in reach go on (this look's, an earlier look's ``anchors``, or a reading so kept)
        kin_only[kin_only] = anchored(center, radius, accept, kin_only, anchors, scale, settings)
        accept |= kin_only
    by_appearance = parallax is not None and scale >= settings.outline_min_px_per_mm
    # edges that ran out into a contact shadow put the disc's band partly on the mat: where the appearance fit runs,
    # a candidate that failed only the disc test is tested again at the footprint the fit finds
    retry = rim_ok & ~accept if by_appearance else np.zeros(len(radius), np.bool_)
    # the footprint radius, free of the blur-and-wall shift, decides the size
    live = np.flatnonzero(accept | retry)
    rim = rim_model(image, center[live], radius[live], fit.inlier[live], scale, directions, settings, parallax)
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
        contrast_again, fill_again = disc_contrast(
            image,
            middle_of(look.center_px[again], parallax),
            look.radius_px[again],
            fit.inlier[rows],
            scale,
            directions,
            settings,
            parallax,
        )
        disc = disc_passes(contrast_again, fill_again, settings)
        accept[rows[disc]] = True
        contrast[rows[disc]] = contrast_again[disc]
    # the circles the edges read, before the fit moves them: where a token's printed ring and its middle lie
    edge_center, edge_radius = center.copy(), radius.copy()
    radius[live] = np.where(look.ok, look.radius_px, radius[live] + np.where(rim.ok, rim.rho_px, 0.0))
    # a base lighter than the mat, read by the edges where figures blur, is read by its top disc: a circle, which the
    # edge fit took for the stadium of footprint and top and so read short by the stretch it allowed each ray
    by_top = read_by_top(rim, ~look.ok, image is grey, scale, settings, parallax is not None)
    # a band darker than the mat and the top round the rim is a shadow, its outer edge the edges' circle
    shadow = rim.ok & shadow_band(rim, settings)
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
    diameter_sigma[live[look.ok]], model_sigma[live[look.ok]], doubt[live[look.ok]] = outline_sigmas(
        look, scale, settings, settings.outline_misfit_scale, frame_blur_px, settled_live
    )
    center[live] = np.where(look.ok[:, None], middle_of(look.center_px, parallax), center[live])
    if parallax is not None and look.ok.any():
        fitted = live[look.ok]
        doubt[fitted] = wider_doubt(doubt[fitted], wall_misplaced_mm(look, center[fitted], scale, parallax, settings))
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
        samples = figure_samples(chroma, center[inside], radius[inside], directions, settings)
        mat_colour = np.median(samples.reshape(len(inside), -1), axis=1) < settings.ring_inside_max_colour
        plain = (figure_spread(samples) < settings.ring_colour_figure_contrast) & (
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
    accept[concentric(edge_center, edge_radius, accept, live[ringed], (-stroke_px, stroke_px), slack_px)] = False
    # a token with a printed ring: its plain middle fails the figure test, but a circle at the ring's outer edge has
    # the ring in its figure band (off centre) and passes; it goes with the middle
    token_px = (0.0, settings.token_ring_mm * scale)
    plain_rows = np.flatnonzero(plain_disc)
    accept[concentric(edge_center, edge_radius, accept & ~kin_only, plain_rows, token_px, slack_px)] = False
    # ... and so does a kin-only reading at a ring's edge (not the plain disc itself: at least a slack larger)
    outer_px = (2 * slack_px, settings.token_ring_mm * scale)
    accept[concentric(edge_center, edge_radius, accept & kin_only, plain_rows, outer_px, slack_px)] = False
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
            least = least_figure(
                shown, center[figured], radius[figured], directions, settings, reach_px, RECENTRE_REFINE * bar
            )
            figured = figured[least >= bar]
        accept &= np.isin(np.arange(len(accept)), figured)
    score = (
        coverage
        * np.clip(contrast / (2 * settings.min_disc_contrast), 0.0, 1.0)
        * np.clip(1.0 - rms / max_rms, 0.0, 1.0)
    )
    sigma = center_sigma(fit, directions, scale, settings)
    idx = np.flatnonzero(accept)

    # 5. duplicates and impossible pairs; second readings only where no first reading lies, or where they hold the
    # first readings there inside them and may take their place (a figure's outline read first, the footprint second)
    def resolved(rows: NDArray[np.intp]) -> NDArray[np.intp]:
        at = (center[rows], radius[rows], final_size[rows], score[rows])
        return rows[resolve_overlaps(*at, scale, settings, second[rows])]

    first_rows = idx[~second[idx] & ~kin_only[idx]]
    firsts = resolved(first_rows)
    # a reading that lost only by overlapping a base a little too much may have lost to a neighbour read a size too
    # large: it waits for its unit's vote, as a kin-only reading
    kin_only[narrowly_lost(center, final_size, first_rows, firsts, scale, settings)] = True
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
        return other_readings_mm(image, ignore, *at, scale, directions, settings, parallax)

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
