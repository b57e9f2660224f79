"""The looks after the first two (steps 10-13 of :mod:`vision.detect`): the learned verifier's say, the pack's
look beside the bases found, the learned finder's look and sizes, and the bases a roster expects where the finder
sees them."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from vision.circles import centre_distances, pushed_apart, snap_diameters, unexplained
from vision.detections import BaseDetections
from vision.expected import ExpectedBases, at_last_places, expected_look
from vision.finder import FinderMaps, load_finder
from vision.look import View, kept_after, read_beside
from vision.overlaps import resolve_overlaps
from vision.seeds import Seeds
from vision.settings import VisionSettings
from vision.units import plain_groups, top_colours, units_of_new, vote_sizes
from vision.verify import features, load_verifier

FloatArray = NDArray[np.float64]


def finder_pending(bgr: NDArray[np.uint8], scale: float, settings: VisionSettings) -> Future[FinderMaps] | None:
    """The finder's maps of ``bgr`` (H, W, 3) at ``scale`` px/mm, read in a thread of their own (None: no finder)."""
    if settings.finder.seed_probability <= 0:
        return None
    finder = load_finder(settings.finder.file or None)
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(finder.read, bgr, scale)
    finally:
        # the read goes on; the pool takes no more and its thread ends with it
        pool.shutdown(wait=False)


def verified(
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
    if settings.verifier.min_probability <= 0 or len(found) == 0:
        return found
    likely = _verifier_says(found, bgr, scale, settings) | _finder_trusts(found, maps, settings)
    if groups:
        # a lone plain disc reads like a token to the verifier; a unit of them, side by side and alike, is bases
        likely |= plain_groups(found, bgr, scale, settings)
    return found[likely]


def _finder_trusts(found: BaseDetections, maps: FinderMaps | None, settings: VisionSettings) -> NDArray[np.bool_]:
    """(len(found),) which rows of ``found`` the finder is sure enough of to stand whatever the verifier says:
    ``finder.trust_probability`` or more within ``finder.reach_mm`` of the centre, at a size it was fitted on."""
    if maps is None or settings.finder.trust_probability <= 0 or len(found) == 0:
        return np.zeros(len(found), np.bool_)
    near = maps.probability_near(found.center_px, settings.finder.reach_mm)
    fitted = found.diameter_mm <= settings.finder.max_diameter_mm
    return np.asarray((near >= settings.finder.trust_probability) & fitted, np.bool_)


def _verifier_says(
    found: BaseDetections, bgr: NDArray[np.uint8], scale: float, settings: VisionSettings
) -> NDArray[np.bool_]:
    """(N,) which rows of ``found`` the learned verifier gives at least ``verifier.min_probability``."""
    verifier = load_verifier(settings.verifier.file or None)
    return np.asarray(verifier.probability(features(bgr, found, scale)) >= settings.verifier.min_probability)


def pack_look(
    view: View,
    found: BaseDetections,
    weak_seeds: Seeds,
    blur_px: FloatArray,
    maps: FinderMaps | None = None,
) -> BaseDetections:
    """Step 11: the bases of a pack that the first looks missed, read in grey beside the bases found (``found``) from
    the seeds with fewer votes than the first looks need (``weak_seeds``, at least ``seeds.pack_vote_fraction`` of a
    rim's)
    that lie where a base touching a found one would stand (its centre at least ``pack_min_apart`` of a found base's
    radius from that base's centre, at most the two radii apart), and scoring at least ``pack_min_score``. Returns
    the new readings that clash with none of ``found``. Where the finder's ``maps`` are given, seeds where no base it
    reads could keep its place (:func:`_finder_may_keep`) are not read."""
    scale, settings = view.scale, view.settings
    if len(found) == 0 or len(weak_seeds) == 0:
        return BaseDetections.empty()
    dist = centre_distances(weak_seeds.center_px, found.center_px)
    near = np.any(dist <= found.radius_px[None, :] + weak_seeds.band_px[:, 1:2], axis=1)
    apart = np.all(dist >= settings.seeds.pack_min_apart * found.radius_px[None, :], axis=1)
    chosen = weak_seeds[near & apart]
    if maps is not None and len(chosen):
        chosen = chosen[_finder_may_keep(chosen, maps, scale, settings)]
    if len(chosen) == 0:
        return BaseDetections.empty()
    more = read_beside(view, found, chosen, None, blur_px)
    # a seed on few votes must be borne out by a clear reading: between two bases apart, their rims alone can vote
    # for a circle in the notch, which has no rim of its own
    more = more[more.score >= settings.seeds.pack_min_score]
    if len(more) == 0:
        return more
    _both, kept = kept_after(found, more, scale, settings)
    # a pack's reading stands only beside the bases found, never in the place of one
    return more[np.sort(kept[kept >= len(found)]) - len(found)]


def _finder_may_keep(seeds: Seeds, maps: FinderMaps, scale: float, settings: VisionSettings) -> NDArray[np.bool_]:
    """(len(seeds),) which seeds may yet yield a base the finder's look keeps (see :func:`finder_look`): it drops a base
    of a size it was fitted on where it gives less than ``finder.keep_probability`` within ``finder.reach_mm``, and a
    reading lies at most ``rim.seed_search_mm`` from its seed (the rim search looks no farther), so a seed is worth
    reading where it gives that much within the two reaches, or where the seed's band holds larger bases."""
    if settings.finder.keep_probability <= 0:
        return np.ones(len(seeds), np.bool_)
    reach_mm = settings.finder.reach_mm + settings.rim.seed_search_mm
    near = maps.probability_near(seeds.center_px, reach_mm) >= settings.finder.keep_probability
    larger = seeds.band_px[:, 1] > 0.5 * settings.finder.max_diameter_mm * scale
    return np.asarray(near | larger, np.bool_)


def finder_look(
    view: View,
    colour: NDArray[np.uint8] | None,
    found: BaseDetections,
    maps: FinderMaps,
    blur_px: FloatArray,
    expected: ExpectedBases | None = None,
) -> BaseDetections:
    """Step 12: what the learned finder (:mod:`vision.finder`) sees. A base found (of a size up to
    ``finder.max_diameter_mm``) where the finder gives less than ``finder.keep_probability`` near its centre is dropped,
    unless it stands where a model ``expected`` lists, of its size, was last seen (``expected.keep_mm``);
    where the finder sees a base (``finder.seed_probability``) that none found explains, its rim is read about that
    place (steps 2-6 from a seed there) and the reading stands where it clashes with no base found; where no rim is read
    and the finder is sure (``finder.sure_probability``), its own centre and size stand, and from
    ``finder.unit_probability`` up only as one of a unit (:func:`_finder_units`). Both only where the verifier gives
    them at least ``finder.verifier_probability`` (or they stand as a unit)."""
    bgr, scale, settings, ignore = view.bgr, view.scale, view.settings, view.ignore
    if settings.finder.keep_probability > 0 and len(found):
        near = maps.probability_near(found.center_px, settings.finder.reach_mm)
        # it was fitted on bases of up to finder.max_diameter_mm: of larger ones it says nothing
        unknown = found.diameter_mm > settings.finder.max_diameter_mm
        keep = unknown | (near >= settings.finder.keep_probability)
        if expected is not None:
            # the state before saw a model of its size right there: the finder's doubt is not the last word
            keep |= at_last_places(found, expected, settings.expected.keep_mm * scale, settings.expected.size_share)
        found = found[keep]
    centre_px, diameter_mm, prob = maps.peaks(settings.finder.seed_probability)
    if len(centre_px) == 0:
        return found
    size_mm = snap_diameters(diameter_mm, settings.base_sizes_mm, np.inf)[0]
    radius_px = 0.5 * size_mm * scale
    lone = unexplained(centre_px, radius_px, found.center_px, found.radius_px, ignore)
    if not np.any(lone):
        return found
    r = radius_px[lone]
    margin = settings.finder.band_margin
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
    more = read_beside(view, found, seeds, chroma, blur_px)
    # a reading stands only where the finder saw a base
    reach_px = settings.finder.reach_mm * scale
    if len(more):
        more = more[np.min(centre_distances(more.center_px, centre_px[lone]), axis=1) <= reach_px]
    sure = lone & (prob >= settings.finder.sure_probability)
    # below that bar the finder's own base may yet stand as one of a unit it sees (see _finder_units)
    grouped = lone & ~sure & (prob >= settings.finder.unit_probability) & (settings.finder.unit_probability > 0)
    if len(more):
        unread = ~np.any(centre_distances(centre_px, more.center_px) <= reach_px, axis=1)
        sure, grouped = sure & unread, grouped & unread
    more = BaseDetections.concatenate(
        [
            more,
            _finder_bases(centre_px[sure], size_mm[sure], prob[sure], scale, settings),
            _finder_bases(centre_px[grouped], size_mm[grouped], prob[grouped], scale, settings),
        ]
    )
    unit_only = np.arange(len(more)) >= len(more) - np.count_nonzero(grouped)
    units = _finder_units(found, more, maps, bgr, scale, settings)
    if settings.verifier.min_probability > 0 and len(more):
        # what only the finder sees must not look to the verifier like a printed ring or a token: it is fitted on
        # other looks, and only its own bar is asked for
        bar = settings.replaced({"verifier.min_probability": settings.finder.verifier_probability})
        likely = _verifier_says(more, bgr, scale, bar) | _finder_trusts(more, maps, settings)
        more = more[(likely & ~unit_only) | units]
    else:
        more = more[~unit_only | units]
    both, kept = kept_after(found, more, scale, settings)
    return both[np.sort(kept)]


def _finder_units(
    found: BaseDetections,
    more: BaseDetections,
    maps: FinderMaps,
    bgr: NDArray[np.uint8],
    scale: float,
    settings: VisionSettings,
) -> NDArray[np.bool_]:
    """(len(more),) which of ``more`` the finder sees at ``finder.unit_probability`` or more, standing as a unit
    (:func:`vision.units.units_of_new`) with the bases ``found``."""
    unit = np.zeros(len(more), np.bool_)
    if settings.finder.unit_probability <= 0:
        return unit
    sure = maps.probability_near(more.center_px, settings.finder.reach_mm) >= settings.finder.unit_probability
    if np.count_nonzero(sure) < 2:
        return unit
    both = BaseDetections.concatenate([found, more[sure]])
    lab = top_colours(bgr, both.center_px, both.radius_px, settings)
    unit[sure] = units_of_new(found, more[sure], lab, scale, settings)
    return unit


def finder_sizes(
    found: BaseDetections, maps: FinderMaps, bgr: NDArray[np.uint8], scale: float, settings: VisionSettings
) -> BaseDetections:
    """``found`` with its sizes voted again on readings that blend the finder's diameter near each base with the
    rim's fitted one (``finder.size_weight``): the two err apart (the rim's fit leans with bevels, clear walls and
    flock, the finder's with the look of the whole base), so their mean scatters less than either."""
    weight = settings.finder.size_weight
    if weight <= 0 or len(found) == 0:
        return found
    fitted_mm = 2.0 * found.radius_px / scale
    seen_mm = maps.diameter_near(found.center_px, settings.finder.reach_mm)
    blend = np.isfinite(seen_mm) & (found.diameter_mm <= settings.finder.max_diameter_mm)
    reading_mm = np.where(blend, (1.0 - weight) * fitted_mm + weight * np.nan_to_num(seen_mm), fitted_mm)
    lab = top_colours(bgr, found.center_px, found.radius_px, settings)
    return vote_sizes(found, lab, scale, settings, reading_mm)


def expected_bases(
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
        found, maps, expected, scale, settings.expected.min_probability, settings.expected.size_share, ignore
    )
    if len(size_mm) == 0:
        return found
    both, kept = kept_after(found, _finder_bases(centre_px, size_mm, prob, scale, settings), scale, settings)
    return both[np.sort(kept)]


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
        np.full(n, settings.finder.centre_sigma_mm * scale),
        np.full(n, settings.finder.diameter_sigma_mm),
        np.zeros(n),
        np.ones(n),
    )


def pack_completion(
    found: BaseDetections,
    maps: FinderMaps,
    scale: float,
    settings: VisionSettings,
    ignore: NDArray[np.uint8] | None,
) -> BaseDetections:
    """Step 12, last: ``found`` and the bases a pack lacks. Where the finder gives at least ``finder.pack_probability``
    at a place no base of ``found`` explains, and a base there would touch (within ``finder.pack_gap_mm`` edge to edge)
    at least ``finder.pack_min_bases`` of them within ``size_vote.window_mm`` of its size, a base of their median size
    stands there: a unit stands together and is based alike, and a base inside a dark pack shows the finder too little
    for its own bar. It is moved out of the bases it overlaps (solid discs cannot), at most ``finder.pack_move_mm``,
    and stands where it then clashes with none (:func:`vision.look.kept_after`); its centre's sigma is the finder's
    and the move's."""
    if settings.finder.pack_probability <= 0 or len(found) < settings.finder.pack_min_bases:
        return found
    centre_px, diameter_mm, prob = maps.peaks(settings.finder.pack_probability)
    lone = unexplained(centre_px, 0.5 * diameter_mm * scale, found.center_px, found.radius_px, ignore)
    if not np.any(lone):
        return found
    centre_px, diameter_mm, prob = centre_px[lone], diameter_mm[lone], prob[lone]
    gap_mm = centre_distances(centre_px, found.center_px) / scale - (diameter_mm[:, None] + found.diameter_mm) / 2
    alike = np.abs(found.diameter_mm[None, :] - diameter_mm[:, None]) < settings.size_vote.window_mm
    touching = (gap_mm < settings.finder.pack_gap_mm) & alike
    packed = np.flatnonzero(touching.sum(axis=1) >= settings.finder.pack_min_bases)
    if packed.size == 0:
        return found
    # the median of an even count of two sizes lies between them: the nearest standard size stands
    median_mm = np.array([np.median(found.diameter_mm[touching[i]]) for i in packed])
    size_mm = snap_diameters(median_mm, settings.base_sizes_mm, np.inf)[0]
    radius_px = 0.5 * size_mm * scale
    moved_px = pushed_apart(centre_px[packed], radius_px, found.center_px, found.radius_px)
    shift_mm = np.hypot(*(moved_px - centre_px[packed]).T) / scale
    near = shift_mm <= settings.finder.pack_move_mm
    more = _finder_bases(moved_px[near], size_mm[near], prob[packed][near], scale, settings)
    more = replace(more, center_sigma_px=np.hypot(more.center_sigma_px, shift_mm[near] * scale))
    # of two peaks that would stand for one base, the more probable (peaks come most probable first)
    more = more[resolve_overlaps(more.center_px, more.radius_px, more.diameter_mm, more.score, scale, settings)]
    both, kept = kept_after(found, more, scale, settings)
    return both[np.sort(kept)]
