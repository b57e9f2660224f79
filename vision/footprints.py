"""Step 2 of :mod:`vision.detect`, from seeds to footprint rings.

Footprint (:func:`find_footprints`): rays from each seed span its band's radius range plus ``seed_search_mm``. A
base shows concentric edges - the footprint against the mat and, inside it, where its bevelled side wall
meets the top - of the same or of opposite polarity. The best supported ring about the rough centre (wide
tolerance) gives a better centre, twice; then the outermost ring enough rays support (beyond chance) is the
footprint. Its diameter snaps, loosely, to the nearest standard size; seeds that found the same base are
merged, the outer circle kept. The outermost ring can be no base's (a figure lying on the mat beside its base,
whose outline rings the base with a neighbour's arc; a printed ring round a base standing in it): where the best
supported ring lies more than ``second_ring_mm`` from it, that ring goes through the steps below as a second
reading, which never displaces a first one. Where figures blur (under ``outline.min_px_per_mm``) the outermost
ring may be a contact shadow's outer edge, a size too large, with the base's own rim inside it: the outermost
ring of the other polarity more than ``second_ring_mm`` inside, with ``inner_ring_fraction`` of the best
ring's support, is a second reading too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from vision.candidates import Candidates
from vision.circlefit import CircleFit, fit_circles
from vision.circles import (
    SAME_BASE_CENTER_FRACTION,
    centre_distances,
    firsts_first,
    keep_best,
    ray_distance_to_circle,
    snap_diameters,
)
from vision.rim import (
    Peaks,
    find_peaks,
    pick_edges,
    ray_derivative,
    ray_directions,
    sample_mask,
    select_peaks,
)
from vision.rings import best_of, outermost_of, ring_support, support_at, take_peaks
from vision.seeds import Seeds
from vision.settings import VisionSettings

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


# In the first search, a polarity's circle is a footprint candidate only with at least this share of the final
# coverage requirement: the search window is wide, so figures and texture claim more rays than later.
_FIRST_PASS_COVERAGE_SHARE = 0.5


# The first footprint radius is measured at the gradient peak, which blur pushes outward by up to about this
# many px when the side wall is narrow: its size is snapped that much more loosely.
FIRST_PASS_SLACK_PX = 1.0


# Each centre-finding round narrows the ring tolerance by this factor (from the seed search slack).
_CENTRE_NARROWING = 3.0


# How far (px) from a ring an edge may lie and still support it, once the centre is good to a few tenths of a pixel.
RING_TOLERANCE_PX = 1.0


@dataclass
class _BandSearch:
    """The footprint search about the seeds of one band (see :func:`find_footprints`): the seeds ``sel`` (S,), the
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
class Footprints:
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


# One band's readings in a centre-finding round: points, found, ray radius, ring radius, polarity, support, has.
_BandRing = tuple[FloatArray, BoolArray, FloatArray, FloatArray, FloatArray, FloatArray, BoolArray]


def _band_searches(
    grey: NDArray[np.uint8],
    seeds: Seeds,
    directions: FloatArray,
    step: float,
    slack: float,
    settings: VisionSettings,
) -> list[_BandSearch]:
    """One footprint search per band of the seeds: the edges of either polarity on rays cast from each seed over its
    band's radius range, ``slack`` px wider, sampled every ``step`` px."""
    searches = []
    for band in np.unique(seeds.band_px, axis=0):
        sel = np.flatnonzero(np.all(seeds.band_px == band, axis=1))
        ray_radius_all = np.full(len(sel), (band[0] + band[1]) / 2)
        half_width = (band[1] - band[0]) / 2 + slack
        deriv = ray_derivative(
            grey, seeds.center_px[sel], ray_radius_all, half_width, directions, step, settings.rim.profile_blur_px
        )
        both_all = [
            find_peaks(
                deriv, np.full(len(sel), sign), step, settings.rim.min_edge_gradient, settings.rim.edge_peak_fraction
            )
            for sign in (1.0, -1.0)
        ]
        window = float(deriv.offset_px[-1] - deriv.offset_px[0])
        searches.append(_BandSearch(sel, ray_radius_all, both_all, window, np.arange(len(sel)), seeds.center_px[sel]))
    return searches


def _band_rings(
    b: _BandSearch,
    seeds: Seeds,
    directions: FloatArray,
    rule: str,
    tolerance: float,
    need: float,
    apart_px: float,
    inner_rings: bool,
    best_radius: FloatArray,
    best_polarity: FloatArray,
    settings: VisionSettings,
) -> tuple[_BandRing, tuple[FloatArray, FloatArray] | None]:
    """One centre-finding round (``rule`` "best" or "outer", ring ``tolerance`` px) of the seeds ``b`` still searches:
    the edges nearest each seed's ring for a circle fit (points, found), the rays' radius, the ring's radius,
    polarity and support and whether there is one; with ``inner_rings`` in the "outer" round, the inner ring of the
    other polarity too. In the "outer" round, a best ring (``best_radius``, ``best_polarity``, changed in place)
    without the support beyond chance the outermost needs is dropped."""
    inner: tuple[FloatArray, FloatArray] | None = None
    ray_center, ray_radius = seeds.center_px[b.sel[b.live]], b.ray_radius[b.live]
    both = [take_peaks(pk, b.live) for pk in b.peaks]
    about = b.c1[b.live]
    rings = [
        ring_support(pk, ray_center, ray_radius, about, directions, tolerance, b.window, rule == "outer") for pk in both
    ]
    if rule == "best":
        ring_r, ring_p = best_of(rings)
        ring_s = np.max([r[0].max(axis=1) for r in rings], axis=0)
    else:
        ring_r, ring_p, ring_s = outermost_of(rings, need, settings.rim.ring_support_fraction)
        # the last round's best ring stays a reading only with the support beyond chance the outermost needs
        # (in texture or noise, edges everywhere give every ring some)
        rows = b.sel[b.live]
        beyond = support_at(rings, best_radius[rows], best_polarity[rows])
        best_radius[rows[~(beyond >= need)]] = np.nan
        if inner_rings:
            inner = outermost_of(rings, need, settings.rim.inner_ring_fraction, ring_r - apart_px, -ring_p)[:2]
    has = np.isfinite(ring_r) & (ring_s >= need)
    # the edge on each ray nearest the ring (rays were cast from the seed, the ring is about c1)
    target = ray_distance_to_circle(ray_center, about, np.where(has, ring_r, ray_radius), directions)
    edges = pick_edges(select_peaks(both[0], both[1], ring_p > 0), ray_radius, "nearest", target)
    points = edges.points(ray_center, directions)
    return (points, edges.found & has[:, None], ray_radius, ring_r, ring_p, ring_s, has), inner


@dataclass
class _Readings:
    """What the rounds of :func:`find_footprints` have read of K seeds so far (each round overwrites its rows); the
    fields as :class:`Footprints`' but the centres, which the band searches keep."""

    radius: FloatArray
    polarity: FloatArray
    support: FloatArray
    best_center: FloatArray
    best_radius: FloatArray
    best_polarity: FloatArray
    inner_radius: FloatArray
    inner_polarity: FloatArray

    @classmethod
    def empty(cls, k: int) -> _Readings:
        nan = np.full(k, np.nan)
        return cls(
            np.zeros(k), np.ones(k), np.zeros(k), np.full((k, 2), np.nan), nan, np.ones(k), nan.copy(), np.ones(k)
        )

    def footprints(self, center: FloatArray) -> Footprints:
        return Footprints(
            center,
            self.radius,
            self.polarity,
            self.support,
            self.best_center,
            self.best_radius,
            self.best_polarity,
            self.inner_radius,
            self.inner_polarity,
        )


def find_footprints(
    grey: NDArray[np.uint8],
    ignore: NDArray[np.uint8] | None,
    seeds: Seeds,
    px_per_mm: float,
    directions: FloatArray,
    settings: VisionSettings,
    inner_rings: bool = False,
) -> Footprints:
    """The footprint circle near each seed, and the best supported ring about it (see :class:`Footprints`);
    with ``inner_rings``, also the outermost ring of the other polarity more than ``second_ring_mm`` inside the
    outermost with ``inner_ring_fraction`` of the best ring's support.

    The rays span the radius range the seed was searched over. A base shows concentric edges (footprint, side
    wall, top). About a rough centre every ring is smeared by the centre's error: the best supported ring
    (footprint or wall, they share the centre), with a tolerance as wide as that error, gives a better centre
    by a circle fit to the edges nearest it; that is done twice, the tolerance narrowing. Then the footprint is
    the outermost ring that enough rays support with a tight tolerance, and its fit gives the final centre.
    Seeds with no such ring are dropped as soon as that shows."""
    read = _Readings.empty(len(seeds))
    apart_px = settings.rim.second_ring_mm * px_per_mm
    slack = settings.rim.seed_search_mm * px_per_mm
    step = max(settings.rim.sample_step_px, settings.rim.search_step_mm * px_per_mm)
    need = _FIRST_PASS_COVERAGE_SHARE * settings.verdicts.min_edge_coverage
    stages = [
        ("best", slack),
        ("best", max(slack / _CENTRE_NARROWING, RING_TOLERANCE_PX)),
        ("outer", RING_TOLERANCE_PX),
    ]
    searches = _band_searches(grey, seeds, directions, step, slack, settings)
    for rule, tolerance in stages:
        pending = [b for b in searches if b.live.size]
        if not pending:
            break
        rings_of = []
        inner_of = []
        for b in pending:
            ring, inner = _band_rings(
                b,
                seeds,
                directions,
                rule,
                tolerance,
                need,
                apart_px,
                inner_rings,
                read.best_radius,
                read.best_polarity,
                settings,
            )
            rings_of.append(ring)
            if inner is not None:
                inner_of.append(inner)
        _keep_round(pending, rings_of, inner_of, _fit_round(pending, rings_of, ignore, settings), rule, read)
    center = seeds.center_px.copy()
    for b in searches:
        center[b.sel] = b.c1
    return read.footprints(center)


def _fit_round(
    pending: list[_BandSearch], rings_of: list[_BandRing], ignore: NDArray[np.uint8] | None, settings: VisionSettings
) -> CircleFit:
    """Every band's circles of one round in one fit: the fits are row by row, and one call costs far less than one
    per band."""
    points = np.concatenate([r[0] for r in rings_of])
    found = np.concatenate([r[1] for r in rings_of])
    if ignore is not None:
        found = found & ~sample_mask(ignore, points)
    start = np.concatenate([np.where(r[6], r[3], r[2]) for r in rings_of])
    first = np.concatenate([b.c1[b.live] for b in pending])
    return fit_circles(points, found, first, start, settings.circle.iterations, settings.circle.outlier_sigmas)


def _keep_round(
    pending: list[_BandSearch],
    rings_of: list[_BandRing],
    inner_of: list[tuple[FloatArray, FloatArray]],
    fit: CircleFit,
    rule: str,
    read: _Readings,
) -> None:
    """Each band's seeds whose ring was fitted in a round of ``rule`` ("best" or "outer") move to the fit's centre
    and keep its readings in ``read``; the rest are dropped from the search."""
    offset = 0
    for i, (b, (_points, _found, _ray_radius, ring_r, ring_p, ring_s, has)) in enumerate(
        zip(pending, rings_of, strict=True)
    ):
        part = slice(offset, offset + len(has))
        offset += len(has)
        keep = fit.ok[part] & has
        b.c1[b.live[keep]] = fit.center_px[part][keep]
        rows = b.sel[b.live[keep]]
        if rule == "best":
            # the last centre-finding round's ring (each round's overwrites the one before): another reading
            # where the outermost ring is not the base's
            read.best_center[rows] = fit.center_px[part][keep]
            read.best_radius[rows] = fit.radius_px[part][keep]
            read.best_polarity[rows] = ring_p[keep]
        if rule == "outer":
            read.radius[rows] = ring_r[keep]
            read.polarity[rows] = ring_p[keep]
            read.support[rows] = ring_s[keep]
            if inner_of:
                inner_r, inner_p = inner_of[i]
                read.inner_radius[rows] = np.where(np.isfinite(inner_r[keep]), inner_r[keep], np.nan)
                read.inner_polarity[rows] = inner_p[keep]
        b.live = b.live[keep]


def unique_readings(
    center: FloatArray, radius: FloatArray, size_mm: FloatArray, rank: FloatArray, second: BoolArray
) -> NDArray[np.intp]:
    """Indices of candidates to keep when several describe the same base (same size, nearby centres), best
    ``rank`` first. A second reading (``second`` (K,)) is another ring than the first readings about it, even
    where both snap to one size (rings 2-5 mm apart in diameter do, under the first search's loose tolerance), so
    it is one base with second readings only."""
    dist = centre_distances(center)
    same = (size_mm[:, None] == size_mm[None, :]) & (dist <= SAME_BASE_CENTER_FRACTION * radius[None, :])
    same &= second[:, None] == second[None, :]
    return keep_best(rank, same)


def seeds_in_reach(seeds: Seeds, boxes_px: FloatArray, slack_px: float) -> BoolArray:
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


def read_footprints(
    image: NDArray[np.uint8],
    ignore: NDArray[np.uint8] | None,
    seeds: Seeds,
    scale: float,
    settings: VisionSettings,
    second_readings: bool,
) -> Candidates:
    """The candidates of ``seeds``: each seed's footprint snapped to a size and, with ``second_readings``, the
    rings that may be the base's where the outermost is not (see the module's description); seeds that found the
    same base are merged. Their radius is the nominal size's."""
    # where figures blur, the outermost ring may be a contact shadow's outer edge, the base's rim inside it
    inner_rings = (
        second_readings
        and settings.rim.second_ring_mm > 0
        and settings.rim.inner_ring_fraction > 0
        and scale < settings.outline.min_px_per_mm
    )
    feet = find_footprints(image, ignore, seeds, scale, ray_directions(settings.rim.search_rays), settings, inner_rings)
    center, radius, polarity, support = feet.center_px, feet.radius_px, feet.polarity, feet.support
    # the outermost ring can be no base's: a figure's outline, or a neighbour's, round a base inside it. Where the
    # best supported ring lies apart from it, that ring is a second reading of the seed
    if second_readings and settings.rim.second_ring_mm > 0:
        apart = (
            (support > 0)
            & np.isfinite(feet.best_radius_px)
            & (np.abs(feet.best_radius_px - radius) > settings.rim.second_ring_mm * scale)
        )
        # an inner ring that is the best ring again is read once
        inner = (
            (support > 0)
            & np.isfinite(feet.inner_radius_px)
            & ~(apart & (np.abs(feet.inner_radius_px - feet.best_radius_px) <= settings.rim.second_ring_mm * scale))
        )
        center = np.concatenate([center, feet.best_center_px[apart], feet.center_px[inner]])
        radius = np.concatenate([radius, feet.best_radius_px[apart], feet.inner_radius_px[inner]])
        polarity = np.concatenate([polarity, feet.best_polarity[apart], feet.inner_polarity[inner]])
        support = np.concatenate([support, support[apart], support[inner]])
    second = np.arange(len(support)) >= len(seeds)
    rough_mm = settings.snap_tolerance_mm + settings.rim.refine_search_mm + 2 * FIRST_PASS_SLACK_PX / scale
    nominal, fits_size = snap_diameters(2 * radius / scale, settings.base_sizes_mm, rough_mm)
    alive = (support > 0) & fits_size
    center, radius, polarity, nominal = (a[alive] for a in (center, radius, polarity, nominal))
    second = second[alive]
    # of two circles that are one base, the outer is its footprint (the inner one is its top); a second reading is
    # read beside the first ones, never in their place
    keep = unique_readings(center, radius, nominal, firsts_first(radius, second), second)
    nominal = nominal[keep]
    return Candidates(center[keep], nominal / 2 * scale, polarity[keep], nominal, second[keep])
