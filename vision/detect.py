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
   by colour too, so such a base must show its figure in grey and in colour (``colour.min_figure_contrast``);
   where figures blur (under ``outline.min_px_per_mm``), one that shows clearly in colour
   (``colour.clear_figure_contrast``) needs only ``colour.clear_figure_grey`` in grey. A rim may be as rough as
   ``colour.max_fit_rms_px``, since the colour contrast's edges scatter more than grey levels'. The colour look reads no
   second rings (there they found one base more on 34 rendered 4K frames, and took the inner edge of a printed
   ring and a fingertip for two). Its bases stand where the grey look found none, or take the place of grey-look
   bases they hold, as second readings do (step 5). The grey look's second readings then stand where neither look
   found a base; one that reads a base of the colour look again yields to it, and where the two read different
   things that cannot both stand the better scored stands.
8. Bases beside their unit, kept aside in both looks, stand where their unit's bases are (:mod:`vision.units`).
9. Sizes by the vote of each base's unit (:mod:`vision.units`).
10. The learned verifier (:mod:`vision.verify`) says which of the circles read are bases: it looks at each whole,
    inside, rim and surroundings against the mat around it, and takes over from the hand rules above where those
    were chosen on one renderer's look (``min_figure_contrast`` 0: no figure asked for; ``outline.min_px_per_mm``
    beyond any camera: the appearance fit reads sizes only).
11. A pack's look (:func:`vision.later_looks.pack_look`): in a crowded melee a base's rim shows only in the seams
    between its neighbours' and gathers too few votes for a seed, but a base touching one found must stand beside it.
    Steps 1-6 again in grey, with seeds that need fewer votes (``pack_vote_fraction``), only where such a base would
    stand, beside the bases the verifier took, and where the finder's look (step 12) would not drop what they read;
    what they read is verified too, and stands where it clashes with no base.
12. The finder's look (:func:`vision.later_looks.finder_look`): a small learned net (:mod:`vision.finder`) that sees the
    whole view marks where bases stand. A base found where it sees none is dropped (not where a roster's model of its
    size was last seen); where it sees one that nothing found explains, steps 2-6 read the rim from a seed there, and
    where no rim is read but the net is sure, its own centre and size stand with wider sigmas. Where it sees a base
    less surely but one there would touch several bases found of its size, a base of theirs stands
    (:func:`vision.later_looks.pack_completion`).
13. Where a roster's bases are given, the finder's peaks of a size found too few times, within reach of where the
    missing models were last seen, stand for them (:mod:`vision.expected`).
14. Where the table seen empty is given, a base must have changed since (:mod:`vision.reference`).

:func:`fit_known_bases` fits the bases again where their sizes are known (:mod:`vision.known`).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from vision.circles import SAME_BASE_CENTER_FRACTION, centre_distances, in_boxes, snap_diameters
from vision.colour import chroma_contrast
from vision.detections import BaseDetections
from vision.doubts import Doubts, unexplained_peaks
from vision.errors import VisionError
from vision.expected import ExpectedBases
from vision.finder import FinderMaps
from vision.inputs import check_mask, check_scale, grey_image
from vision.known import fit_at_sizes
from vision.later_looks import (
    expected_bases,
    finder_look,
    finder_pending,
    finder_sizes,
    pack_completion,
    pack_look,
    verified,
)
from vision.look import View, covered, kept_after, one_look
from vision.overlaps import resolve_overlaps
from vision.parallax import RimParallax
from vision.reference import Comparison, changed_share, compare, outline_share
from vision.seeds import Seeds, find_seeds
from vision.settings import VisionSettings
from vision.units import final_bases, top_colours

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
    ``topdown_bgr``), when given: a base must have changed since (``reference.min_changed_share`` of its inside, or
    its outline new: ``reference.outline_share``; see :mod:`vision.reference`), as no printed circle or texture of
    the mat has."""
    found, _doubts = detect_bases_and_doubts(
        topdown_bgr, px_per_mm, settings, mask, parallax, wanted_px, reference_bgr, expected
    )
    return found


def detect_bases_and_doubts(
    topdown_bgr: NDArray[np.uint8],
    px_per_mm: float,
    settings: VisionSettings,
    mask: NDArray[np.uint8] | None = None,
    parallax: RimParallax | None = None,
    wanted_px: FloatArray | None = None,
    reference_bgr: NDArray[np.uint8] | None = None,
    expected: ExpectedBases | None = None,
) -> tuple[BaseDetections, Doubts]:
    """:func:`detect_bases`, and the places it doubts: where the finder sees a base at least
    ``finder.doubt_probability`` that no base found explains (see :mod:`vision.doubts`; none where the finder does
    not look). With a ``reference``, a doubted place too must have changed since."""
    found, doubts = _detect_bases(topdown_bgr, px_per_mm, settings, mask, parallax, wanted_px, expected)
    scale = check_scale(px_per_mm, settings)
    if reference_bgr is None:
        return found, doubts
    seen = compare(
        np.asarray(topdown_bgr),
        np.asarray(reference_bgr),
        scale,
        settings.reference.blur_mm,
        settings.reference.light_cell_mm,
        settings.reference.light_reach_cells,
    )
    doubt_radius_px = 0.5 * doubts.diameter_mm * scale
    return found[_changed(seen, found.center_px, found.radius_px, settings)], doubts[
        _changed(seen, doubts.center_px, doubt_radius_px, settings)
    ]


def _changed(seen: Comparison, center_px: FloatArray, radius_px: FloatArray, settings: VisionSettings) -> BoolArray:
    """(N,) whether each circle changed since the empty table (see :func:`detect_bases`)."""
    share = changed_share(seen.change, center_px, radius_px, settings.reference.min_change)
    changed = share >= settings.reference.min_changed_share
    # a base whose colours are the mat's changes its inside little, but its outline is new
    outline = outline_share(seen, center_px[~changed], radius_px[~changed])
    changed[~changed] = outline < settings.reference.outline_share
    return changed


def _detect_bases(
    topdown_bgr: NDArray[np.uint8],
    px_per_mm: float,
    settings: VisionSettings,
    mask: NDArray[np.uint8] | None = None,
    parallax: RimParallax | None = None,
    wanted_px: FloatArray | None = None,
    expected: ExpectedBases | None = None,
) -> tuple[BaseDetections, Doubts]:
    """Find the round bases in a rectified top-down image of the table, and the places doubted (see
    :func:`detect_bases_and_doubts`).

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
    view = View(grey, np.asarray(topdown_bgr), scale, settings, ignore, parallax, wanted_px)
    # the finder's net (OpenCV, without the interpreter lock) reads the view beside the looks, which need its maps
    # only at the end
    pending_maps = finder_pending(view.bgr, scale, settings)
    min_figure = settings.verdicts.min_figure_contrast
    if settings.colour.gain <= 0:
        strong, weak = _grey_seeds(view)
        first = one_look(view, grey, min_figure, None, second_readings=True, seeds=strong)
        return _later_looks(view, *first, weak, None, pending_maps, expected)
    # the colour contrast (OpenCV's loops, without the interpreter lock) is made beside the grey look, which needs it
    # only after its appearance fit
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(chroma_contrast, view.bgr, ignore, settings.colour.gain, settings.colour.blur_px)
        strong, weak = _grey_seeds(view)
        found, spare, kin_only, blur_px = one_look(view, grey, min_figure, pending, second_readings=True, seeds=strong)
        colour = pending.result()
    if colour is None:
        return _later_looks(view, found, spare, kin_only, blur_px, weak, colour, pending_maps, expected)
    found, rival, kin_colour = _colour_look(view, colour, found, spare, blur_px)
    kin_only = BaseDetections.concatenate([kin_only, kin_colour])
    return _later_looks(view, found, rival, kin_only, blur_px, weak, colour, pending_maps, expected)


def _grey_seeds(view: View) -> tuple[Seeds, Seeds]:
    """The seeds in the view's grey image: those with the votes the first looks need, and the weaker ones the pack's
    look may use (none where it is off)."""
    settings = view.settings
    # on seeds this weak only the learned verifier tells a base from a circle its neighbours' rims make up
    packs = settings.seeds.pack_vote_fraction > 0 and settings.verifier.min_probability > 0
    seeds = find_seeds(
        view.grey, view.scale, settings, view.ignore, settings.seeds.pack_vote_fraction if packs else None
    )
    share = seeds.vote_share
    return seeds[share >= settings.seeds.vote_fraction], seeds[share < settings.seeds.vote_fraction]


def _later_looks(
    view: View,
    found: BaseDetections,
    more: BaseDetections,
    kin_only: BaseDetections,
    blur_px: FloatArray,
    weak_seeds: Seeds,
    colour: NDArray[np.uint8] | None,
    pending_maps: Future[FinderMaps] | None,
    expected: ExpectedBases | None,
) -> tuple[BaseDetections, Doubts]:
    """Steps 8-13 after the first looks' bases ``found``, their rival readings ``more`` and kin-only readings
    ``kin_only`` (whose fits blurred by ``blur_px``): the bases that stand, verified; the pack's look from
    ``weak_seeds``; the finder's look (its maps ``pending_maps``; None: no finder) with the colour contrast
    ``colour`` (None: none); the bases ``expected`` where the finder sees them."""
    bgr, scale, settings = view.bgr, view.scale, view.settings
    maps = None if pending_maps is None else pending_maps.result()
    bases = verified(final_bases(found, more, kin_only, bgr, scale, settings), bgr, scale, settings, maps, True)
    # a pack grows only from bases the verifier believes in, and its readings are verified in turn
    packed = verified(pack_look(view, bases, weak_seeds, blur_px, maps), bgr, scale, settings, maps, False)
    if len(packed):
        bases = final_bases(bases, packed, BaseDetections.empty(), bgr, scale, settings)
    if maps is None:
        return bases, Doubts.empty()
    bases = finder_look(view, colour, bases, maps, blur_px, expected)
    bases = pack_completion(bases, maps, scale, settings, view.ignore)
    bases = finder_sizes(bases, maps, bgr, scale, settings)
    if expected is not None and settings.expected.min_probability > 0:
        bases = expected_bases(bases, maps, expected, scale, settings, view.ignore)
    doubts = unexplained_peaks(bases, maps, scale, settings.finder.doubt_probability, view.ignore)
    return bases, _wanted_only(doubts, view.wanted_px)


def _wanted_only(doubts: Doubts, wanted_px: FloatArray | None) -> Doubts:
    """The doubted places inside one of the boxes ``wanted_px`` (M, 4) (u0, v0, u1, v1); all where None."""
    return doubts if wanted_px is None else doubts[in_boxes(doubts.center_px, wanted_px)]


def _colour_look(
    view: View,
    colour: NDArray[np.uint8],
    found: BaseDetections,
    spare: BaseDetections,
    blur_px: FloatArray,
) -> tuple[BaseDetections, BaseDetections, BaseDetections]:
    """Step 7: steps 1-6 again on the colour contrast ``colour`` (H, W) uint8, beside the grey look's bases ``found``
    and second readings ``spare`` (whose fits blurred by ``blur_px``). Returns the grey look's bases that stand, the
    rival readings (the colour look's and the second readings that yield to none of them, overlaps resolved) and the
    colour look's kin-only readings."""
    # the second look, in colour, where the first found nothing: a figure must show in grey as well, since tokens
    # and printed circles stand out far more by colour than by grey level. It reads no second rings (step 7 above)
    scale, settings = view.scale, view.settings
    seen = covered(view.ignore, view.grey.shape, found, settings.colour.mask_margin_mm * scale)
    # the camera blurs the bases of both looks alike: the second one's (often too few to tell) is the first one's
    min_figure = settings.colour.min_figure_contrast
    more, _spare, kin_colour, _blur = one_look(
        replace(view, ignore=seen), colour, min_figure, None, blur_px, anchors=found
    )
    # where the colour look read a base round bases the grey look found (a figure's outline read in grey, say), it may
    # take their place; elsewhere the grey look's bases stand
    both, keep = kept_after(found, more, scale, settings)
    n = len(found)
    found, more = both[keep[keep < n]], both[keep[keep >= n]]
    # a second reading of a base the colour look found yields to it; where the two read different things that cannot
    # both stand (the colour look may take a figure lying beside its base for one), the better scored stands
    same = centre_distances(spare.center_px, more.center_px) <= SAME_BASE_CENTER_FRACTION * more.radius_px[None, :]
    rival = BaseDetections.concatenate([more, spare[~np.any(same, axis=1)]])
    rival = rival[resolve_overlaps(rival.center_px, rival.radius_px, rival.diameter_mm, rival.score, scale, settings)]
    return found, rival, kin_colour


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
    ``known.min_px_per_mm``, which may lie below the free fit's ``outline.min_px_per_mm``: with size and height held
    the wall and the contact shadow no longer trade off against the footprint, so below that only rows whose height
    is known too): elsewhere, and where the fit fails, rows come back unchanged. A row fitted again takes the known
    size (``diameter_sigma_mm`` 0 where a roster declared it) and the fit's centre and model sigma (its misfit times
    ``known.misfit_scale`` where the height was known too, else ``outline.misfit_scale``; and any blur the fit
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
    if settings.known.refit_read_sizes and scale >= settings.outline.min_px_per_mm:
        known = np.where(declared, known, detections.diameter_mm)
    rows = np.flatnonzero(np.isfinite(known) & (known > 0))
    if scale < settings.outline.min_px_per_mm:
        # too coarse for the free fit: only a height held too keeps the wall from trading off against the footprint
        rows = rows[np.isfinite(heights[rows])]
    if parallax is None or scale < settings.known.min_px_per_mm or rows.size == 0:
        return detections
    # declared sizes and sizes read are fitted apart: each has its own starts and its own lean on the rim's height,
    # and only sizes read are then fitted at their unit's pooled height (a roster's declared bases keep their own)
    pool = settings.known.height_pool_min > 0
    parts = (
        (rows[declared[rows]], settings.known.starts, settings.outline.height_sigma, False),
        (rows[~declared[rows]], settings.known.read_starts, settings.known.read_height_sigma, pool),
    )
    for part, steps, height_sigma, pooled in parts:
        if part.size:
            part_settings = settings.replaced({"outline.starts": steps, "outline.height_sigma": height_sigma})
            top_lab = top_colours(topdown_bgr, detections.center_px, detections.radius_px, settings) if pooled else None
            detections = fit_at_sizes(
                grey, scale, part_settings, detections, part, known, heights, declared, parallax, top_lab
            )
    return detections
