"""Steps 8 and 9 of :mod:`vision.detect`: bases that stand beside their unit, and sizes by the unit's vote.

Bases beside their unit (:func:`beside_kin`): a reading that fails only one test - the figure's on a clear
disc (disc contrast at least ``verdicts.faint_disc_contrast``), or where figures blur roundness up to
``kin.max_fit_rms_px`` or coverage down to ``kin.min_edge_coverage`` - and passes all the others is kept aside
in both looks, and stands where it overlaps no base and at least ``kin.min_bases`` bases within
``kin.reach_mm`` would be one unit's with it as the size vote links them (below), or readings that stand so.
A reading that lost in step 5 only by overlapping a base by up to ``kin.lost_overlap_mm`` more than allowed
(and not nested in it) is kept aside too: the base it lost to may be read a size too large, so whether it
overlaps is asked of the bases at the sizes their units vote.

Sizes by vote (:func:`vote_sizes`): a unit's models stand on one size, so each base takes the size nearest the
median fitted diameter of the bases of its unit near it: of about its fitted diameter and the colour of its top
(``size_vote_*``); the centre does not move.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.circles import centre_distances, max_overlap_mm, snap_diameters
from vision.detections import BaseDetections
from vision.rim import (
    ray_directions,
)
from vision.settings import VisionSettings

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


# Circles sampled across the ring of a base's top whose colour tells its unit (size_vote.ring): a few, since the
# median over them and the rays is what counts.
_TOP_RING_STEPS = 4


def anchored(
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
    cheap first cut of :func:`beside_kin` (sizes and places still rough here, so the reach is widened by
    ``snap_tolerance_mm``; colours not compared)."""
    rows = np.flatnonzero(kin_only)
    base_c, base_r = center_px[accept & ~kin_only], radius_px[accept & ~kin_only]
    if anchors is not None:
        base_c, base_r = np.concatenate([base_c, anchors.center_px]), np.concatenate([base_r, anchors.radius_px])
    max_mm = max_overlap_mm(px_per_mm, settings)
    reach_mm = settings.kin.reach_mm + settings.snap_tolerance_mm

    def near(c: FloatArray, r: FloatArray) -> BoolArray:
        gap = (centre_distances(center_px[rows], c) - radius_px[rows, None] - r[None, :]) / px_per_mm
        alike = np.abs(2.0 * (radius_px[rows, None] - r[None, :]) / px_per_mm) < settings.size_vote.window_mm
        return np.asarray((gap < reach_mm) & (gap >= -max_mm) & alike, np.bool_)

    among = near(center_px[rows], radius_px[rows])
    found: BoolArray = np.asarray(near(base_c, base_r).any(axis=1), np.bool_) | _in_groups(
        among, settings.kin.group_min
    )
    while True:
        more = ~found & (among & found[None, :]).any(axis=1)
        if not more.any():
            return np.asarray(found, np.bool_)
        found |= more


def _in_groups(linked: BoolArray, min_size: int) -> BoolArray:
    """(M,) which of M items lie in a group of at least ``min_size`` (0: none does) joined by chains of links,
    ``linked`` (M, M) symmetric (the diagonal is not read)."""
    m = len(linked)
    if min_size <= 0 or m < min_size:
        return np.zeros(m, np.bool_)
    label = _group_labels(linked)
    return np.asarray(np.bincount(label, minlength=m)[label] >= min_size, np.bool_)


def _group_labels(linked: BoolArray) -> NDArray[np.intp]:
    """(M,) the group of each of M items joined by chains of links ``linked`` (M, M) symmetric (the diagonal is
    not read): the least index in its group."""
    m = len(linked)
    label = np.arange(m)
    while True:
        # each item takes the least label among its own and its links'
        spread = np.where(linked, label[None, :], m).min(axis=1)
        joined = np.minimum(label, spread)
        if np.array_equal(joined, label):
            return label
        label = joined


def plain_groups(
    found: BaseDetections, image: NDArray[np.uint8], px_per_mm: float, settings: VisionSettings
) -> BoolArray:
    """(N,) which of the bases ``found`` stand in a group of at least ``kin.group_min`` clear discs (scoring at
    least ``kin.group_min_score``) that would be one unit's as :func:`beside_kin` links them, but within
    ``kin.group_reach_mm`` edge to edge: fitted diameters within ``size_vote.window_mm``, tops' chromaticities (read
    from ``image``, (H, W, 3) BGR or (H, W) grey) within ``size_vote.colour``: their lightness is not compared, as
    the light across a unit's few inches changes it more than the paint does. A lone plain disc may be a token; a
    unit on plain bases stands together, each base like the next."""
    n = len(found)
    if settings.kin.group_min <= 0 or n < settings.kin.group_min:
        return np.zeros(n, np.bool_)
    clear = found.score >= settings.kin.group_min_score
    lab = top_colours(image, found.center_px, found.radius_px, settings)
    linked = _kin_links(found, lab, px_per_mm, settings, settings.kin.group_reach_mm)
    return np.asarray(clear & _in_groups(linked & clear[:, None] & clear[None, :], settings.kin.group_min), np.bool_)


def units_of_new(
    found: BaseDetections, new: BaseDetections, top_lab: FloatArray, px_per_mm: float, settings: VisionSettings
) -> BoolArray:
    """(len(new),) which of the bases ``new`` stand in a group of at least ``kin.group_min`` linked as
    :func:`plain_groups` links them but within ``kin.reach_mm``, among ``found`` and ``new``, with at least two of
    ``new`` in it. ``top_lab`` (len(found) + len(new), 3): the tops' colours of ``found``, then of ``new`` (see
    :func:`top_colours`). A unit that the finder sees and the verifier doubts (black tops on a black mat, clear
    acrylic with no figure) stands together; a lone token beside a unit of its colour does not make one."""
    n, m = len(found), len(new)
    if settings.kin.group_min <= 0 or m < min(2, settings.kin.group_min):
        return np.zeros(m, np.bool_)
    both = BaseDetections.concatenate([found, new])
    label = _group_labels(_kin_links(both, top_lab, px_per_mm, settings, settings.kin.reach_mm))
    total = np.bincount(label, minlength=n + m)
    newer = np.bincount(label[n:], minlength=n + m)
    grouped = (total >= settings.kin.group_min) & (newer >= min(2, settings.kin.group_min))
    return np.asarray(grouped[label[n:]], np.bool_)


def _kin_links(
    bases: BaseDetections, top_lab: FloatArray, px_per_mm: float, settings: VisionSettings, reach_mm: float
) -> BoolArray:
    """(N, N) which pairs of ``bases`` would be one unit's: within ``reach_mm`` edge to edge, fitted diameters
    within ``size_vote.window_mm``, tops' chromaticities (``top_lab`` (N, 3)) within ``size_vote.colour``."""
    fitted_mm = 2.0 * bases.radius_px / px_per_mm
    gap_mm = centre_distances(bases.center_px) / px_per_mm - (bases.diameter_mm[:, None] + bases.diameter_mm) / 2
    linked = (gap_mm < reach_mm) & (np.abs(fitted_mm[:, None] - fitted_mm) < settings.size_vote.window_mm)
    if settings.size_vote.colour > 0:
        chroma = top_lab[:, 1:]
        linked &= np.linalg.norm(chroma[:, None, :] - chroma[None, :, :], axis=2) < settings.size_vote.colour
    return np.asarray(linked, np.bool_)


def beside_kin(
    found: BaseDetections, plain: BaseDetections, top_lab: FloatArray, px_per_mm: float, settings: VisionSettings
) -> NDArray[np.intp]:
    """Rows of the kin-only readings ``plain`` (see ``kin.min_bases``) that stand as bases: each overlaps none of the
    bases ``found`` (nor a better scored reading kept before it) by more than the overlap allowed (see
    :func:`resolve_overlaps`), and at least ``kin.min_bases`` of ``found``, and of the readings that stand, would be
    one unit's with it as the size vote links bases (see :func:`vote_sizes`) but nearer: within ``kin.reach_mm`` of
    it edge to edge, fitted diameters within ``size_vote.window_mm``, tops' colours within ``size_vote.colour``. The
    readings are taken in turn, best scored first, while one more stands. ``top_lab`` (len(found) + len(plain),
    3): the tops' colours of ``found``, then of ``plain`` (see :func:`top_colours`). A unit's models stand together
    and are based alike; a token or a printed disc seldom wears a unit's colours beside it."""
    n = len(found)
    if settings.kin.min_bases <= 0:
        return np.zeros(0, np.intp)
    max_mm = max_overlap_mm(px_per_mm, settings)
    m = len(plain)
    # the bases, then the readings: each reading's kin among both (a reading that stands is a base of its unit too)
    center_px = np.concatenate([found.center_px, plain.center_px])
    fitted_mm = 2.0 * np.concatenate([found.radius_px, plain.radius_px]) / px_per_mm
    size_mm = np.concatenate([found.diameter_mm, plain.diameter_mm])
    gap_mm = centre_distances(plain.center_px, center_px) / px_per_mm - (plain.diameter_mm[:, None] + size_mm) / 2
    gap_mm[:, n:][np.eye(m, dtype=np.bool_)] = np.inf
    # of its size as the vote has it: fitted diameters within size_vote.window_mm (a size may be read a step off)
    kin = (gap_mm < settings.kin.reach_mm) & (
        np.abs(fitted_mm[n:, None] - fitted_mm[None, :]) < settings.size_vote.window_mm
    )
    if settings.size_vote.colour > 0:
        kin &= np.linalg.norm(top_lab[n:, None, :] - top_lab[None, :, :], axis=2) < settings.size_vote.colour
    clash = gap_mm < -max_mm
    free = ~np.any(clash[:, :n], axis=1)
    # a group of readings alike stands by itself, as a unit on plain bases does: its members first, best scored first
    stands = np.zeros(m, np.bool_)
    # only clear discs, round and of good contrast: a printed grid's cells form groups of faint, rough circles
    clear = plain.score >= settings.kin.group_min_score
    grouped = clear & _in_groups(kin[:, n:] & clear[:, None] & clear[None, :], settings.kin.group_min)
    for i in np.argsort(-plain.score, kind="stable"):
        if grouped[i] and free[i] and not (clash[i, n:] & stands).any():
            stands[i] = True
    # in turn, best scored first, as long as one more stands: a reading stands beside bases and readings that do
    grew = True
    while grew:
        grew = False
        support = kin[:, :n].sum(axis=1) + (kin[:, n:] & stands[None, :]).sum(axis=1)
        for i in np.argsort(-plain.score, kind="stable"):
            if not stands[i] and free[i] and support[i] >= settings.kin.min_bases and not (clash[i, n:] & stands).any():
                stands[i] = grew = True
    return np.flatnonzero(stands).astype(np.intp)


def top_colours(
    image: NDArray[np.uint8], center_px: FloatArray, radius_px: FloatArray, settings: VisionSettings
) -> FloatArray:
    """(N, 3) the CIE Lab colour (OpenCV's 8-bit scale) of each base's top (its channels' medians), over the ring
    between the fractions ``size_vote.ring`` of its radius ``radius_px`` (N,) about ``center_px`` (N, 2): inside the
    rim, round the figure's feet, where the top's paint or flock shows. A grey ``image`` (H, W) gives grey colours."""
    n = len(radius_px)
    if n == 0:
        return np.zeros((0, 3))
    directions = ray_directions(settings.rim.rays)
    inner, outer = settings.size_vote.ring
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


def vote_sizes(
    found: BaseDetections,
    top_lab: FloatArray,
    px_per_mm: float,
    settings: VisionSettings,
    reading_mm: FloatArray | None = None,
) -> BaseDetections:
    """``found`` with each base's size put to the vote of its unit: two bases are taken for one unit's where they
    stand within ``size_vote.reach_mm`` edge to edge, their fitted diameters lie within ``size_vote.window_mm`` and
    their tops' colours ``top_lab`` (N, 3) (see :func:`top_colours`) within ``size_vote.colour`` (0: not
    compared). Each base takes the standard size nearest the median fitted diameter of the bases it reaches in
    ``size_vote.hops`` such steps whose fitted diameters lie within ``size_vote.window_mm`` of its own, itself
    included, where there are at least ``size_vote.min_bases`` of them; a base left alone so may take its neighbours'
    size (:func:`_lone_sizes`). A unit's models stand on one size and share rim and paint, so the fit's bias too: its
    scatter, which the median shrinks, decides between neighbouring sizes. The centres do not move. ``reading_mm``
    (N,): each base's diameter as read otherwise, voted on in the place of its fitted one."""
    n = len(found)
    if n == 0 or settings.size_vote.reach_mm <= 0:
        return found
    fitted_mm = 2.0 * found.radius_px / px_per_mm if reading_mm is None else np.asarray(reading_mm, np.float64)
    size_mm = found.diameter_mm
    alike = np.abs(fitted_mm[:, None] - fitted_mm[None, :]) < settings.size_vote.window_mm
    reached = _unit_reach(found.center_px, size_mm, top_lab, alike, px_per_mm, settings)
    voting = reached.sum(axis=1) >= settings.size_vote.min_bases
    if not voting.any():
        return found
    median_mm = np.nanmedian(np.where(reached[voting], fitted_mm[None, :], np.nan), axis=1)
    voted = size_mm.copy()
    voted[voting], _near = snap_diameters(median_mm, settings.base_sizes_mm, np.inf)
    if settings.size_vote.lone_doubt_mm > 0:
        voted = _lone_sizes(found, top_lab, fitted_mm, voted, voting, px_per_mm, settings)
    return replace(found, diameter_mm=voted)


def _lone_sizes(
    found: BaseDetections,
    top_lab: FloatArray,
    fitted_mm: FloatArray,
    voted_mm: FloatArray,
    voting: BoolArray,
    px_per_mm: float,
    settings: VisionSettings,
) -> FloatArray:
    """``voted_mm`` (N,) with each base the vote left alone (not ``voting`` (N,)) and doubtful of its size (diameter
    doubt at least ``size_vote.lone_doubt_mm``) put at the one size all its voting neighbours of its top's colour
    ``top_lab`` (N, 3) voted, where at least ``size_vote.min_bases - 1`` of them stand in direct reach (see
    :func:`_unit_reach`, sizes not compared) and its reading ``fitted_mm`` (N,) lies within the ratio
    ``size_vote.lone_ratio`` of that size, either way."""
    lone = np.flatnonzero(~voting & (found.diameter_sigma_mm >= settings.size_vote.lone_doubt_mm))
    if lone.size == 0:
        return voted_mm
    any_size = np.ones((len(found), len(found)), np.bool_)
    near = _unit_reach(
        found.center_px, voted_mm, top_lab, any_size, px_per_mm, settings.replaced({"size_vote.hops": 1})
    )
    out = voted_mm.copy()
    for i in lone:
        # a lone base is no voter, so not its own kin
        kin = np.flatnonzero(near[i] & voting)
        sizes = np.unique(voted_mm[kin])
        if kin.size < settings.size_vote.min_bases - 1 or sizes.size != 1:
            continue
        # part of a rim, or a rim with its shadow, reads a fraction off; a hero's base among its unit reads twice it
        if max(fitted_mm[i] / sizes[0], sizes[0] / fitted_mm[i]) <= settings.size_vote.lone_ratio:
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
    """(N, N) which bases each base takes for its unit's: linked where they stand within ``size_vote.reach_mm``
    edge to edge (``center_px`` (N, 2), ``diameter_mm`` (N,)), are ``alike`` (N, N) by size and their tops' colours
    ``top_lab`` (N, 3) lie within ``size_vote.colour`` (0: not compared), and reached within ``size_vote.hops`` such
    links (itself included), alike to it too: a base reached through another of a size between two is not taken (it
    would join a unit of 27 mm bases to one of 32 mm beside it)."""
    gap_mm = centre_distances(center_px) / px_per_mm - (diameter_mm[:, None] + diameter_mm[None, :]) / 2
    linked = (gap_mm < settings.size_vote.reach_mm) & alike
    if settings.size_vote.colour > 0:
        colour_gap = np.linalg.norm(top_lab[:, None, :] - top_lab[None, :, :], axis=2)
        linked &= colour_gap < settings.size_vote.colour
    # a step further each hop: a unit's far end goes with its near one, where its own neighbours are few
    reached = linked
    for _hop in range(settings.size_vote.hops - 1):
        reached = (reached.astype(np.intp) @ linked.astype(np.intp)) > 0
    return np.asarray(reached & alike, dtype=np.bool_)


def pooled_heights(
    center_px: FloatArray,
    diameter_mm: FloatArray,
    top_lab: FloatArray,
    height_ratio: FloatArray,
    px_per_mm: float,
    settings: VisionSettings,
) -> FloatArray:
    """(N,) each base's rim height ratio pooled over its unit (:func:`_unit_reach`, bases of one size
    ``diameter_mm`` (N,) only): 1 plus ``height_pool_gain`` times the median's departure from 1 of the fitted ratios
    ``height_ratio`` (N,) (NaN: no fit) of the bases it reaches, within ``outline.height_ratio``; NaN where fewer than
    ``height_pool_min`` of them fitted. A unit's bases share their rims' height, which one fit tells poorly and
    leans on 1 (the one assumed)."""
    n = len(diameter_mm)
    if n == 0 or settings.known.height_pool_min <= 0 or settings.size_vote.reach_mm <= 0:
        return np.full(n, np.nan)
    alike = diameter_mm[:, None] == diameter_mm[None, :]
    fitted = np.isfinite(height_ratio)
    pooled_from = _unit_reach(center_px, diameter_mm, top_lab, alike, px_per_mm, settings) & fitted[None, :]
    enough = pooled_from.sum(axis=1) >= settings.known.height_pool_min
    pooled = np.full(n, np.nan)
    if enough.any():
        median = np.nanmedian(np.where(pooled_from[enough], height_ratio[None, :], np.nan), axis=1)
        low, high = settings.outline.height_ratio
        pooled[enough] = np.clip(1.0 + settings.known.height_pool_gain * (median - 1.0), low, high)
    return pooled


def final_bases(
    found: BaseDetections,
    more: BaseDetections,
    kin_only: BaseDetections,
    image: NDArray[np.uint8],
    px_per_mm: float,
    settings: VisionSettings,
) -> BaseDetections:
    """``found`` and ``more`` (bases where none of ``found`` lies) together, with those of the kin-only readings
    ``kin_only`` that stand beside their unit's bases (:func:`beside_kin`), best score first, sizes put to the vote
    (their tops' colours read from ``image``, (H, W, 3) BGR or (H, W) grey)."""
    both = BaseDetections.concatenate([found, more])
    lab: FloatArray | None = None
    if len(kin_only):
        n = len(both)
        lab = top_colours(image, np.concatenate([both.center_px, kin_only.center_px]),
                           np.concatenate([both.radius_px, kin_only.radius_px]), settings)  # fmt: skip
        # the bases at the sizes their units vote: one read a size too large must not keep its neighbour out
        voted = vote_sizes(both, lab[:n], px_per_mm, settings)
        stands = beside_kin(voted, kin_only, lab, px_per_mm, settings)
        both = BaseDetections.concatenate([both, kin_only[stands]])
        lab = np.concatenate([lab[:n], lab[n:][stands]])
    order = np.argsort(-both.score, kind="stable")
    both = both[order]
    if len(both) == 0 or settings.size_vote.reach_mm <= 0:
        return both
    # each top's colour is its own circle's: those already read are not read again
    lab = top_colours(image, both.center_px, both.radius_px, settings) if lab is None else lab[order]
    return vote_sizes(both, lab, px_per_mm, settings)
