"""Base detection on a rectified top-down image: the public verb, :func:`detect_bases` (and
:func:`fit_known_bases`, which fits the bases again at the sizes and rim heights a roster declares, or at the sizes
they were read at).

Steps, each a stage module that passes the candidate table (:class:`vision.candidates.Candidates`) on:

1. Seeds: ``cv2.HoughCircles`` once per band of similar sizes, each on a grey copy reduced by a whole factor
   (:mod:`vision.seeds`).
2. Footprints: the outermost ring well supported about each seed, and the rings that may be the base's where it is
   not, snapped loosely to a size (:mod:`vision.footprints`).
3. Refinement: the rim's edges around the nominal radius, fitted with a robust circle, twice
   (:mod:`vision.refine`).
4. Is it a base? Cheap cues first (edge coverage, roundness, a disc, a figure; :mod:`vision.verdicts`, measured by
   :mod:`vision.cues`), then the rim model and the appearance fit for what passes them, which give the footprint's
   size, centre and sigmas (:mod:`vision.measure`), then the costlier impostors: printed rings, tokens, fingertips,
   dice, concentric patterns seen off centre (:mod:`vision.verdicts`).
5. Duplicates and impossible pairs (:mod:`vision.overlaps`).
6. Other readings the edges allow, which widen a base's model sigma (:mod:`vision.other_readings`).
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
8. Bases beside their unit, kept aside in both looks, stand where their unit's bases are (:mod:`vision.units`).
9. Sizes by the vote of each base's unit (:mod:`vision.units`).
10. The learned verifier (:mod:`vision.verify`) says which of the circles read are bases: it looks at each whole,
    inside, rim and surroundings against the mat around it, and takes over from the hand rules above where those
    were chosen on one renderer's look (``min_figure_contrast`` 0: no figure asked for; ``outline_min_px_per_mm``
    beyond any camera: the appearance fit reads sizes only).
11. A pack's look (:func:`_pack_look`): in a crowded melee a base's rim shows only in the seams between its
    neighbours' and gathers too few votes for a seed, but a base touching one found must stand beside it. Steps 1-6
    again in grey, with seeds that need fewer votes (``pack_vote_fraction``), only where such a base would stand,
    beside the bases the verifier took; what they read is verified too, and stands where it clashes with no base.
12. The finder's look (:func:`_finder_look`): a small learned net (:mod:`vision.finder`) that sees the whole view
    marks where bases stand. A base found where it sees none is dropped; where it sees one that nothing found
    explains, steps 2-6 read the rim from a seed there, and where no rim is read but the net is sure, its own centre
    and size stand with wider sigmas.
13. Where a roster's bases are given, the finder's peaks of a size found too few times, within reach of where the
    missing models were last seen, stand for them (:mod:`vision.expected`).
14. Where the table seen empty is given, a base must have changed since (:mod:`vision.reference`).

:func:`fit_known_bases` fits the bases again where their sizes are known (:mod:`vision.known`).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.candidates import split_detections
from vision.circles import SAME_BASE_CENTER_FRACTION, centre_distances, snap_diameters, unexplained
from vision.colour import chroma_contrast
from vision.detections import BaseDetections
from vision.errors import VisionError
from vision.expected import ExpectedBases, expected_look
from vision.finder import FinderMaps, load_finder
from vision.footprints import read_footprints, seeds_in_reach
from vision.inputs import check_mask, check_scale, grey_image
from vision.known import fit_at_sizes
from vision.measure import measure_bases, scored
from vision.other_readings import widen_for_other_readings
from vision.overlaps import resolve, resolve_overlaps
from vision.parallax import RimParallax
from vision.reference import changed_share, compare, outline_share
from vision.refine import refine_rims
from vision.rim import ray_directions
from vision.seeds import Seeds, find_seeds
from vision.settings import VisionSettings
from vision.units import final_bases, plain_groups, top_colours, units_of_new, vote_sizes
from vision.verdicts import first_tests, other_impostors, printed_rings
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
    expected: ExpectedBases | None = None,
) -> BaseDetections:
    """Find the round bases in a rectified top-down image of the table (see :func:`_detect_bases`).

    ``expected``, the bases a roster lists (sizes, where last seen, how far each may have gone): where fewer of a
    size are found, the finder's peaks of that size within reach stand for the missing ones (step 13,
    :mod:`vision.expected`; only where the finder looks).

    ``reference_bgr``, the same view of the table empty (its terrain, no models; (H, W, 3) or (H, W) uint8 like
    ``topdown_bgr``), when given: a base must have changed since (``reference_min_changed_share`` of its inside, or
    its outline new: ``reference_outline_share``; see :mod:`vision.reference`), as no printed circle or texture of
    the mat has."""
    found = _detect_bases(topdown_bgr, px_per_mm, settings, mask, parallax, wanted_px, expected)
    scale = check_scale(px_per_mm, settings)
    if reference_bgr is None:
        return found
    seen = compare(
        np.asarray(topdown_bgr),
        np.asarray(reference_bgr),
        scale,
        settings.reference_blur_mm,
        settings.reference_light_cell_mm,
        settings.reference_light_reach_cells,
    )
    share = changed_share(seen.change, found.center_px, found.radius_px, settings.reference_min_change)
    changed = share >= settings.reference_min_changed_share
    # a base whose colours are the mat's changes its inside little, but its outline is new
    outline = outline_share(seen, found.center_px[~changed], found.radius_px[~changed])
    changed[~changed] = outline < settings.reference_outline_share
    return found[changed]


def _detect_bases(
    topdown_bgr: NDArray[np.uint8],
    px_per_mm: float,
    settings: VisionSettings,
    mask: NDArray[np.uint8] | None = None,
    parallax: RimParallax | None = None,
    wanted_px: FloatArray | None = None,
    expected: ExpectedBases | None = None,
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

    # on seeds this weak only the learned verifier tells a base from a circle its neighbours' rims make up
    packs = settings.pack_vote_fraction > 0 and settings.verifier_min_probability > 0
    # the finder's net (OpenCV, without the interpreter lock) reads the view beside the looks, which need its maps
    # only at the end
    pending_maps = _finder_pending(bgr, scale, settings)

    def grey_look(
        chroma_pending: Future[NDArray[np.uint8] | None] | None, seeds: Seeds
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
            seeds=seeds[seeds.vote_share >= settings.vote_fraction],
        )

    def finish(
        found: BaseDetections,
        more: BaseDetections,
        kin_only: BaseDetections,
        blur_px: FloatArray,
        seeds: Seeds,
        colour: NDArray[np.uint8] | None = None,
    ) -> BaseDetections:
        maps = None if pending_maps is None else pending_maps.result()
        bases = _verified(final_bases(found, more, kin_only, bgr, scale, settings), bgr, scale, settings, maps, True)
        # a pack grows only from bases the verifier believes in, and its readings are verified in turn
        weak = seeds[seeds.vote_share < settings.vote_fraction]
        packed = _pack_look(grey, bgr, bases, weak, blur_px, scale, settings, ignore, parallax, wanted_px)
        packed = _verified(packed, bgr, scale, settings, maps, False)
        if len(packed):
            bases = final_bases(bases, packed, BaseDetections.empty(), bgr, scale, settings)
        if maps is None:
            return bases
        bases = _finder_look(grey, bgr, colour, bases, maps, blur_px, scale, settings, ignore, parallax, wanted_px)
        bases = _finder_sizes(bases, maps, bgr, scale, settings)
        if expected is None or settings.expected_min_probability <= 0:
            return bases
        return _expected_bases(bases, maps, expected, scale, settings, ignore)

    def grey_seeds() -> Seeds:
        return find_seeds(grey, scale, settings, ignore, settings.pack_vote_fraction if packs else None)

    if settings.colour_gain <= 0:
        seeds = grey_seeds()
        return finish(*grey_look(None, seeds), seeds)
    # the colour contrast (OpenCV's loops, without the interpreter lock) is made beside the grey look, which needs it
    # only after its appearance fit
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(chroma_contrast, bgr, ignore, settings.colour_gain, settings.colour_blur_px)
        seeds = grey_seeds()
        found, spare, kin_only, blur_px = grey_look(pending, seeds)
        colour = pending.result()
    if colour is None:
        return finish(found, spare, kin_only, blur_px, seeds, colour)
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
    both, keep = _kept_after(found, more, scale, settings)
    n = len(found)
    found, more = both[keep[keep < n]], both[keep[keep >= n]]
    # a second reading of a base the colour look found yields to it; where the two read different things that cannot
    # both stand (the colour look may take a figure lying beside its base for one), the better scored stands
    same = centre_distances(spare.center_px, more.center_px) <= SAME_BASE_CENTER_FRACTION * more.radius_px[None, :]
    rival = BaseDetections.concatenate([more, spare[~np.any(same, axis=1)]])
    rival = rival[resolve_overlaps(rival.center_px, rival.radius_px, rival.diameter_mm, rival.score, scale, settings)]
    return finish(found, rival, BaseDetections.concatenate([kin_only, kin_colour]), blur_px, seeds, colour)


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


def _finder_pending(bgr: NDArray[np.uint8], scale: float, settings: VisionSettings) -> Future[FinderMaps] | None:
    """The finder's maps of ``bgr`` (H, W, 3) at ``scale`` px/mm, read in a thread of their own (None: no finder)."""
    if settings.finder_seed_probability <= 0:
        return None
    finder = load_finder(settings.finder_file or None)
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(finder.read, bgr, scale)
    finally:
        # the read goes on; the pool takes no more and its thread ends with it
        pool.shutdown(wait=False)


def _verified(
    found: BaseDetections,
    bgr: NDArray[np.uint8],
    scale: float,
    settings: VisionSettings,
    maps: FinderMaps | None,
    groups: bool,
) -> BaseDetections:
    """The rows of ``found`` the learned verifier takes for bases (all where it is off), or the finder's ``maps``
    (None: no finder) vouches for (:func:`_finder_trusts`); with ``groups``, also those standing in a group of plain
    discs alike (:func:`vision.units.plain_groups`)."""
    if settings.verifier_min_probability <= 0 or len(found) == 0:
        return found
    likely = _verifier_says(found, bgr, scale, settings) | _finder_trusts(found, maps, settings)
    if groups:
        # a lone plain disc reads like a token to the verifier; a unit of them, side by side and alike, is bases
        likely |= plain_groups(found, bgr, scale, settings)
    return found[likely]


def _finder_trusts(found: BaseDetections, maps: FinderMaps | None, settings: VisionSettings) -> NDArray[np.bool_]:
    """(len(found),) which rows of ``found`` the finder is sure enough of to stand whatever the verifier says:
    ``finder_trust_probability`` or more within ``finder_reach_mm`` of the centre, at a size it was fitted on."""
    if maps is None or settings.finder_trust_probability <= 0 or len(found) == 0:
        return np.zeros(len(found), np.bool_)
    near = maps.probability_near(found.center_px, settings.finder_reach_mm)
    fitted = found.diameter_mm <= settings.finder_max_diameter_mm
    return np.asarray((near >= settings.finder_trust_probability) & fitted, np.bool_)


def _verifier_says(
    found: BaseDetections, bgr: NDArray[np.uint8], scale: float, settings: VisionSettings
) -> NDArray[np.bool_]:
    """(N,) which rows of ``found`` the learned verifier gives at least ``verifier_min_probability``."""
    verifier = load_verifier(settings.verifier_file or None)
    return np.asarray(verifier.probability(features(bgr, found, scale)) >= settings.verifier_min_probability)


def _pack_look(
    grey: NDArray[np.uint8],
    bgr: NDArray[np.uint8],
    found: BaseDetections,
    weak_seeds: Seeds,
    blur_px: FloatArray,
    scale: float,
    settings: VisionSettings,
    ignore: NDArray[np.uint8] | None,
    parallax: RimParallax | None,
    wanted_px: FloatArray | None,
) -> BaseDetections:
    """Step 11: the bases of a pack that the first looks missed, read in grey beside the bases found (``found``) from
    the seeds with fewer votes than the first looks need (``weak_seeds``, at least ``pack_vote_fraction`` of a rim's)
    that lie where a base touching a found one would stand (its centre at least ``pack_min_apart`` of a found base's
    radius from that base's centre, at most the two radii apart), and scoring at least ``pack_min_score``. Returns
    the new readings that clash with none of ``found``."""
    if len(found) == 0 or len(weak_seeds) == 0:
        return BaseDetections.empty()
    dist = centre_distances(weak_seeds.center_px, found.center_px)
    near = np.any(dist <= found.radius_px[None, :] + weak_seeds.band_px[:, 1:2], axis=1)
    apart = np.all(dist >= settings.pack_min_apart * found.radius_px[None, :], axis=1)
    if not np.any(near & apart):
        return BaseDetections.empty()
    more = _read_beside(
        grey, bgr, found, weak_seeds[near & apart], None, blur_px, scale, settings, ignore, parallax, wanted_px
    )
    # a seed on few votes must be borne out by a clear reading: between two bases apart, their rims alone can vote
    # for a circle in the notch, which has no rim of its own
    more = more[more.score >= settings.pack_min_score]
    if len(more) == 0:
        return more
    _both, kept = _kept_after(found, more, scale, settings)
    # a pack's reading stands only beside the bases found, never in the place of one
    return more[np.sort(kept[kept >= len(found)]) - len(found)]


def _finder_look(
    grey: NDArray[np.uint8],
    bgr: NDArray[np.uint8],
    colour: NDArray[np.uint8] | None,
    found: BaseDetections,
    maps: FinderMaps,
    blur_px: FloatArray,
    scale: float,
    settings: VisionSettings,
    ignore: NDArray[np.uint8] | None,
    parallax: RimParallax | None,
    wanted_px: FloatArray | None,
) -> BaseDetections:
    """Step 12: what the learned finder (:mod:`vision.finder`) sees. A base found (of a size up to
    ``finder_max_diameter_mm``) where the finder gives less than ``finder_keep_probability`` near its centre is
    dropped; where the finder sees a base (``finder_seed_probability``)
    that none found explains, its rim is read about that place (steps 2-6 from a seed there) and the reading stands
    where it clashes with no base found; where no rim is read and the finder is sure (``finder_sure_probability``),
    its own centre and size stand. Both only where the verifier gives them at least ``finder_verifier_probability``."""
    if settings.finder_keep_probability > 0 and len(found):
        near = maps.probability_near(found.center_px, settings.finder_reach_mm)
        # it was fitted on bases of up to finder_max_diameter_mm: of larger ones it says nothing
        unknown = found.diameter_mm > settings.finder_max_diameter_mm
        found = found[unknown | (near >= settings.finder_keep_probability)]
    centre_px, diameter_mm, prob = maps.peaks(settings.finder_seed_probability)
    if len(centre_px) == 0:
        return found
    size_mm = snap_diameters(diameter_mm, settings.base_sizes_mm, np.inf)[0]
    radius_px = 0.5 * size_mm * scale
    lone = unexplained(centre_px, radius_px, found.center_px, found.radius_px, ignore)
    if not np.any(lone):
        return found
    r = radius_px[lone]
    margin = settings.finder_band_margin
    seeds = Seeds(
        centre_px[lone],
        r,
        np.stack([r * (1 - margin), r * (1 + margin)], axis=1),
        np.ones(len(r), np.intp),
        np.full(len(r), np.inf),
    )
    # the colour contrast tells a printed ring from a base's contact shadow, as in the grey look
    chroma: Future[NDArray[np.uint8] | None] = Future()
    chroma.set_result(colour)
    more = _read_beside(grey, bgr, found, seeds, chroma, blur_px, scale, settings, ignore, parallax, wanted_px)
    # a reading stands only where the finder saw a base
    reach_px = settings.finder_reach_mm * scale
    if len(more):
        more = more[np.min(centre_distances(more.center_px, centre_px[lone]), axis=1) <= reach_px]
    sure = lone.copy()
    sure[lone] = prob[lone] >= settings.finder_sure_probability
    if len(more):
        sure[lone] &= ~np.any(centre_distances(centre_px[lone], more.center_px) <= reach_px, axis=1)
    # what only the finder sees must not look to the verifier like a printed ring or a token: it is fitted on other
    # looks, and only its own bar is asked for
    more = BaseDetections.concatenate(
        [more, _finder_bases(centre_px[sure], size_mm[sure], prob[sure], scale, settings)]
    )
    if settings.verifier_min_probability > 0 and len(more):
        bar = replace(settings, verifier_min_probability=settings.finder_verifier_probability)
        likely = _verifier_says(more, bgr, scale, bar) | _finder_trusts(more, maps, settings)
        more = more[likely | _finder_units(found, more, maps, bgr, scale, settings)]
    both, kept = _kept_after(found, more, scale, settings)
    return both[np.sort(kept)]


def _finder_units(
    found: BaseDetections,
    more: BaseDetections,
    maps: FinderMaps,
    bgr: NDArray[np.uint8],
    scale: float,
    settings: VisionSettings,
) -> NDArray[np.bool_]:
    """(len(more),) which of ``more`` the finder sees at ``finder_unit_probability`` or more, standing as a unit
    (:func:`vision.units.units_of_new`) with the bases ``found``."""
    unit = np.zeros(len(more), np.bool_)
    if settings.finder_unit_probability <= 0:
        return unit
    sure = maps.probability_near(more.center_px, settings.finder_reach_mm) >= settings.finder_unit_probability
    if np.count_nonzero(sure) < 2:
        return unit
    both = BaseDetections.concatenate([found, more[sure]])
    lab = top_colours(bgr, both.center_px, both.radius_px, settings)
    unit[sure] = units_of_new(found, more[sure], lab, scale, settings)
    return unit


def _finder_sizes(
    found: BaseDetections, maps: FinderMaps, bgr: NDArray[np.uint8], scale: float, settings: VisionSettings
) -> BaseDetections:
    """``found`` with its sizes voted again on readings that blend the finder's diameter near each base with the
    rim's fitted one (``finder_size_weight``): the two err apart (the rim's fit leans with bevels, clear walls and
    flock, the finder's with the look of the whole base), so their mean scatters less than either."""
    weight = settings.finder_size_weight
    if weight <= 0 or len(found) == 0:
        return found
    fitted_mm = 2.0 * found.radius_px / scale
    seen_mm = maps.diameter_near(found.center_px, settings.finder_reach_mm)
    blend = np.isfinite(seen_mm) & (found.diameter_mm <= settings.finder_max_diameter_mm)
    reading_mm = np.where(blend, (1.0 - weight) * fitted_mm + weight * np.nan_to_num(seen_mm), fitted_mm)
    lab = top_colours(bgr, found.center_px, found.radius_px, settings)
    return vote_sizes(found, lab, scale, settings, reading_mm)


def _expected_bases(
    found: BaseDetections,
    maps: FinderMaps,
    expected: ExpectedBases,
    scale: float,
    settings: VisionSettings,
    ignore: NDArray[np.uint8] | None,
) -> BaseDetections:
    """Step 13: ``found`` and, where it lacks bases ``expected`` lists, the finder's own bases that stand for them
    (:func:`vision.expected.expected_look`), each where it clashes with no base found."""
    centre_px, size_mm, prob = expected_look(
        found, maps, expected, scale, settings.expected_min_probability, settings.expected_size_share, ignore
    )
    if len(size_mm) == 0:
        return found
    both, kept = _kept_after(found, _finder_bases(centre_px, size_mm, prob, scale, settings), scale, settings)
    return both[np.sort(kept)]


def _kept_after(
    found: BaseDetections, more: BaseDetections, scale: float, settings: VisionSettings
) -> tuple[BaseDetections, NDArray[np.intp]]:
    """``found`` and ``more`` as one table, and the rows of it that stand, best first (:func:`resolve_overlaps`), where
    ``more``'s readings come after all of ``found``'s: they stand only where they clash with none of those, or take
    the place of those they hold."""
    both = BaseDetections.concatenate([found, more])
    later = np.arange(len(both)) >= len(found)
    return both, resolve_overlaps(both.center_px, both.radius_px, both.diameter_mm, both.score, scale, settings, later)


def _finder_bases(
    centre_px: FloatArray, size_mm: FloatArray, probability: FloatArray, scale: float, settings: VisionSettings
) -> BaseDetections:
    """Bases where only the finder sees them: its centre (K, 2) in px and standard size (K,) in mm, its centre's
    typical error as their sigma, and a score below any reading's."""
    n = len(size_mm)
    return BaseDetections(
        centre_px,
        0.5 * size_mm * scale,
        size_mm,
        0.1 * probability,
        np.zeros(n),
        np.zeros(n),
        np.full(n, settings.finder_centre_sigma_mm * scale),
        np.full(n, settings.finder_diameter_sigma_mm),
        np.zeros(n),
        np.ones(n),
    )


def _read_beside(
    grey: NDArray[np.uint8],
    bgr: NDArray[np.uint8],
    found: BaseDetections,
    seeds: Seeds,
    chroma: Future[NDArray[np.uint8] | None] | None,
    blur_px: FloatArray,
    scale: float,
    settings: VisionSettings,
    ignore: NDArray[np.uint8] | None,
    parallax: RimParallax | None,
    wanted_px: FloatArray | None,
) -> BaseDetections:
    """Steps 2-6 in grey from ``seeds`` found by a later look, beside the bases ``found`` (see :func:`_detect_in`):
    the bases read."""
    more, _spare, _kin, _blur = _detect_in(
        grey,
        grey,
        settings.min_figure_contrast,
        scale,
        settings,
        ignore,
        parallax,
        chroma,
        blur_px,
        bgr=bgr,
        wanted_px=wanted_px,
        anchors=found,
        seeds=seeds,
    )
    return more


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
    seeds: Seeds | None = None,
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
    kin-only reading may stand. ``seeds``: the seeds, searched for already (None: searched for in ``image``).
    Returns the bases, the second readings that passed as bases where none of the first readings lies, the kin-only
    readings (bases only beside their unit's, see ``kin_min_bases``; where none of the first readings lies) and the
    blur (px) of this look's usable appearance fits."""
    seeds = find_seeds(image, scale, settings, ignore) if seeds is None else seeds
    if wanted_px is not None:
        seeds = seeds[seeds_in_reach(seeds, wanted_px, settings.snap_tolerance_mm * scale)]
    nothing = BaseDetections.empty(), BaseDetections.empty(), BaseDetections.empty(), np.zeros(0)
    if len(seeds) == 0:
        return nothing
    found = read_footprints(image, ignore, seeds, scale, settings, second_readings)
    if len(found) == 0:
        return nothing
    directions = ray_directions(settings.rays)
    found = refine_rims(image, ignore, found, scale, directions, settings, parallax)
    # the costliest tests (the rim model, the appearance fit) only for what passes the cheap ones
    found = first_tests(image, grey, found, min_figure, anchors, scale, directions, settings, parallax)
    found, chroma, blur_px = measure_bases(
        image, grey, found, chroma_pending, frame_blur_px, scale, directions, settings, parallax
    )
    found = printed_rings(found, chroma, scale, directions, settings)
    found = other_impostors(image, grey, bgr, found, min_figure, scale, directions, settings)
    found = scored(found, scale, directions, settings)
    found = resolve(found, scale, settings)
    found = widen_for_other_readings(image, ignore, found, scale, directions, settings, parallax)
    return (*split_detections(found), blur_px)
