"""Rough circle candidates: where to look for rims, not where they are.

Two searches, whose candidates are pooled (the refinement merges the ones that found the same base):

- gradient-direction voting at the exact standard radii (:func:`vote_seeds`): every edge pixel votes for the
  points one standard radius away along its gradient, both ways (a base may be lighter or darker than the mat).
  Knowing the radii exactly keeps each base's votes in one sharp peak, also for bases in contact, and a thin
  Canny edge with low thresholds still shows a base of the mat's own colour by its wall and shadow. On rendered
  cluttered 1080p and 4K frames it put a seed near about 95 % of the visible bases, where the circle Hough below
  reached about 82 %;
- ``cv2.HoughCircles`` per band of sizes (:func:`hough_seeds`), which adds a few bases the voting misses.

The search runs once per band of similar base sizes, each on a copy of the image reduced by a whole factor
until the band's bases are about ``seeds.radius_px`` in radius (fast, and seeds only need to land within a couple
of millimetres). One pass per band lets the minimum distance between
centres follow the band's radius, so two bases in contact (centres one diameter apart) both keep their peak, and
keeps the radius range narrow so a figure's outline inside a base does not win the radius vote.

HOUGH_GRADIENT rather than HOUGH_GRADIENT_ALT: on drawn tables made only of touching and 1 mm pairs (textured
mat, figures), searched at about 1 px/mm, GRADIENT put a seed near 318 of 322 bases and ALT near about 270 (its
arc grouping joins the outlines of bases in contact), and ALT took two to three times as long.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.settings import VisionSettings

FloatArray = NDArray[np.float64]

# The gradient Hough accumulator at full seed resolution; a coarser one merges the peaks of touching bases.
_HOUGH_DP = 1.0
# Every this many visible pixels, one is used to find the grey level given to ignored ones.
_MEDIAN_SAMPLE_STEP = 16
# Below this radius (px at seed scale) the accumulator cannot tell a rim from texture.
MIN_SEED_RADIUS_PX = 4
# A Hough seed this share of seed_search_mm from a voted seed of an overlapping radius range finds the same rim:
# the first rim search looks seed_search_mm around each seed.
_SAME_SEED_SHARE = 0.5
# The vote accumulator is smoothed by at least this many cells: its peaks then stay single.
_MIN_VOTE_BLUR_CELLS = 0.5


@dataclass(frozen=True)
class Seeds:
    """Circle candidates in full-image pixels: ``center_px`` (K, 2) as (x, y), ``radius_px`` (K,) as the circle
    search reported it, ``band_px`` (K, 2) the (smallest, largest) radius the search looked for (the reported
    radius is often a tenth off, the band is where the rim must be) and ``reduction`` (K,) the whole
    factor the image was reduced by for that search (seed centres are good to about a reduced pixel).
    ``vote_share`` (K,): a voted seed's votes as a share of its band's smallest rim length (as ``vote_fraction``);
    infinite for the circle Hough's, which pass any bar."""

    center_px: FloatArray
    radius_px: FloatArray
    band_px: FloatArray
    reduction: NDArray[np.intp]
    vote_share: FloatArray

    def __post_init__(self) -> None:
        for arr in (self.center_px, self.radius_px, self.band_px, self.reduction, self.vote_share):
            arr.flags.writeable = False

    def __len__(self) -> int:
        return int(self.radius_px.shape[0])

    def __getitem__(self, index: NDArray[np.bool_] | NDArray[np.intp]) -> Seeds:
        return Seeds(
            self.center_px[index],
            self.radius_px[index],
            self.band_px[index],
            self.reduction[index],
            self.vote_share[index],
        )

    @staticmethod
    def concatenate(parts: Sequence[Seeds]) -> Seeds:
        """The candidates of ``parts``, in order."""
        return Seeds(
            np.concatenate([p.center_px for p in parts]).reshape(-1, 2),
            np.concatenate([p.radius_px for p in parts]),
            np.concatenate([p.band_px for p in parts]).reshape(-1, 2),
            np.concatenate([p.reduction for p in parts]).astype(np.intp),
            np.concatenate([p.vote_share for p in parts]),
        )


def circles_from_hough(raw: NDArray[np.floating] | None) -> NDArray[np.float64]:
    """``cv2.HoughCircles`` output as a (K, 3) float array of (x, y, radius).

    OpenCV returns None when it finds nothing, shape (1, K, 3) (or (1, K, 4) with votes) otherwise, and now and
    then a circle of zero or non-finite radius: all of that is fixed here, once."""
    if raw is None:
        return np.zeros((0, 3), dtype=np.float64)
    arr = np.asarray(raw, dtype=np.float64)
    if arr.size == 0:
        return np.zeros((0, 3), dtype=np.float64)
    arr = arr.reshape(-1, arr.shape[-1])[:, :3]
    keep = np.all(np.isfinite(arr), axis=1) & (arr[:, 2] > 0)
    return np.ascontiguousarray(arr[keep])


def size_bands(diameters_mm: tuple[float, ...], max_ratio: float) -> list[tuple[float, float]]:
    """Split the base sizes (mm) into bands (smallest, largest) whose largest/smallest ratio is at most
    ``max_ratio``."""
    sizes = sorted(set(diameters_mm))
    bands: list[tuple[float, float]] = []
    start = prev = sizes[0]
    for d in sizes[1:]:
        if d / start > max_ratio:
            bands.append((start, prev))
            start = d
        prev = d
    bands.append((start, prev))
    return bands


def reduction_factor(px_per_mm: float, target_px_per_mm: float) -> int:
    """Whole factor by which to reduce an image at ``px_per_mm`` to come near ``target_px_per_mm`` (1: not
    reduced; never enlarged). A reduced pixel is taken as ``factor`` pixels wide. Where a side does not divide by the
    factor it is a little wider (the side over its whole reduced pixels), so a seed lands up to ``factor - 1`` pixels
    short at the far end of that side: under one reduced pixel, which is what seeds are good to anyway. (Cropping to
    whole blocks would make it exact and put ``cv2.resize(INTER_AREA)`` on its fast path; on 14 rendered 4K frames it
    took recall from 97.0 to 96.9 % and the p95 centre error from 1.04 to 1.10 mm, so it is left out.)"""
    return max(1, math.floor(px_per_mm / target_px_per_mm + 0.5))


class SeedLevels:
    """Reduced, smoothed grey copies of one image for the seed searches, made once per reduction factor and shared
    by :func:`vote_seeds` and :func:`hough_seeds`: the image is first reduced until the smallest base is about
    ``seeds.radius_px`` in radius (``first``, at ``scale0`` px/mm), then by a further whole factor per band.
    Ignored pixels take the median grey of the rest (so they add no edges of their own beyond the mask's
    outline) and are marked in the level's ``hidden`` mask."""

    def __init__(
        self, grey: NDArray[np.uint8], px_per_mm: float, settings: VisionSettings, ignore: NDArray[np.uint8] | None
    ) -> None:
        self.bands_mm = size_bands(settings.base_sizes_mm, settings.seeds.band_ratio)
        self._seed_radius_px = settings.seeds.radius_px
        self.first = reduction_factor(px_per_mm, settings.seeds.radius_px / (self.bands_mm[0][0] / 2))
        self.scale0 = px_per_mm / self.first
        self._blur_px = settings.seeds.blur_px
        self._grey = _reduced(grey, self.first)
        self._ignore = None if ignore is None else _reduced(ignore, self.first, cv2.INTER_NEAREST)
        self._made: dict[int, tuple[NDArray[np.uint8], NDArray[np.bool_] | None]] = {}
        # one lock per level: searches on threads wait for a level another is making, not for every level
        self._guard = threading.Lock()
        self._locks: dict[int, threading.Lock] = {}

    def level(self, extra: int) -> tuple[NDArray[np.uint8], NDArray[np.bool_] | None]:
        """The smoothed copy reduced by ``extra`` beyond ``first`` (h, w) uint8, and its ignored pixels (h, w)
        bool (None when nothing is ignored). Safe to call from several threads."""
        with self._guard:
            lock = self._locks.setdefault(extra, threading.Lock())
        with lock:
            return self._level(extra)

    def _level(self, extra: int) -> tuple[NDArray[np.uint8], NDArray[np.bool_] | None]:
        if extra not in self._made:
            grey = _reduced(self._grey, extra)
            hidden = None
            if self._ignore is not None:
                # nearest-pixel reduction: far cheaper than averaging, and the mask's margin dwarfs a pixel
                hidden = _reduced(self._ignore, extra, cv2.INTER_NEAREST) > 0
            if hidden is not None and hidden.any() and not hidden.all():
                # a sample of the visible pixels gives their median well enough, at a fraction of the cost
                fill = _median_grey(grey[~hidden][::_MEDIAN_SAMPLE_STEP])
                grey = grey.copy()
                np.copyto(grey, fill, where=hidden)
            if self._blur_px > 0:
                grey = np.asarray(cv2.GaussianBlur(grey, (0, 0), self._blur_px), dtype=np.uint8)
            self._made[extra] = (grey, hidden)
        return self._made[extra]

    def extra(self, small_mm: float) -> int:
        """The further reduction (beyond ``first``) for a band whose smallest base is ``small_mm`` in diameter:
        until that base is about ``seeds.radius_px`` in radius."""
        return reduction_factor(self.scale0, self._seed_radius_px / (small_mm / 2))

    def make_all(self) -> None:
        """Make every band's level now (then the searches only read them, and may run on threads)."""
        for small_mm, _large_mm in self.bands_mm:
            self.level(self.extra(small_mm))


def find_seeds(
    grey: NDArray[np.uint8],
    px_per_mm: float,
    settings: VisionSettings,
    ignore: NDArray[np.uint8] | None = None,
    weak_fraction: float | None = None,
) -> Seeds:
    """Circle candidates for every standard base size, in full-image pixels: those of :func:`vote_seeds` and (where
    ``seeds.hough_circles``) of :func:`hough_seeds` together (``grey`` (H, W) uint8, ``ignore`` (H, W) uint8 nonzero
    where nothing is to be found). A Hough candidate within a fraction of ``seed_search_mm`` of a voted one whose
    radius range overlaps its own adds nothing (the rim search about the voted one covers it) and is left out.
    ``weak_fraction`` (below ``vote_fraction``): voted seeds with that share of votes are returned too, at the end,
    for a caller to use where a base is likely (their ``votes`` tell them apart; the others are as without)."""
    strong_bar = settings.seeds.vote_fraction
    weak = weak_fraction is not None and weak_fraction < strong_bar
    if weak_fraction is not None and weak:
        settings = settings.replaced({"seeds.vote_fraction": weak_fraction})
    levels = SeedLevels(grey, px_per_mm, settings, ignore)
    extras = sorted({levels.extra(small_mm) for small_mm, _large_mm in levels.bands_mm})
    # One job per search and level, shared by the cores (OpenCV and numpy's array loops run without the GIL). The
    # costliest first, the voting and the Hough search on the largest level: queued last, that Hough search ran on
    # one core while the other had nothing left to do. Either makes the level and the other waits the few ms it
    # takes. Each search's bands come back in band order, as in one call.
    with ThreadPoolExecutor(max_workers=max(1, min(2 * len(extras), os.cpu_count() or 1))) as pool:
        votes = [pool.submit(vote_seeds, grey, px_per_mm, settings, ignore, levels, extras[:1])]
        # with HoughCircles off its one job searches no band and returns no seed (the results keep one shape)
        hough_extras = extras if settings.seeds.hough_circles else []
        houghs = [pool.submit(hough_seeds, grey, px_per_mm, settings, ignore, levels, hough_extras[:1])]
        votes += [pool.submit(vote_seeds, grey, px_per_mm, settings, ignore, levels, (e,)) for e in extras[1:]]
        houghs += [pool.submit(hough_seeds, grey, px_per_mm, settings, ignore, levels, (e,)) for e in hough_extras[1:]]
        voted = Seeds.concatenate([v.result() for v in votes])
        hough = Seeds.concatenate([h.result() for h in houghs])
    weak_seeds = voted[voted.vote_share < strong_bar] if weak else voted[np.zeros(len(voted), np.bool_)]
    if weak:
        voted = voted[voted.vote_share >= strong_bar]
    if len(voted) and len(hough):
        dist = np.hypot(
            hough.center_px[:, None, 0] - voted.center_px[None, :, 0],
            hough.center_px[:, None, 1] - voted.center_px[None, :, 1],
        )
        overlap = (hough.band_px[:, None, 0] <= voted.band_px[None, :, 1]) & (
            voted.band_px[None, :, 0] <= hough.band_px[:, None, 1]
        )
        near = dist <= _SAME_SEED_SHARE * settings.rim.seed_search_mm * px_per_mm
        new = ~np.any(near & overlap, axis=1)
        hough = hough[new]
    return Seeds.concatenate([voted, hough, weak_seeds])


def _median_grey(sample: NDArray[np.uint8]) -> np.uint8:
    """The median of a non-empty sample (N,) of grey levels, as ``np.uint8(np.median(sample))`` gives it (the mean of
    the two middle levels, rounded down), from the levels' histogram: far cheaper than sorting for a large sample."""
    below = np.cumsum(np.bincount(sample, minlength=256))
    n = sample.size
    # the k-th smallest level (from 0) is the first whose running count exceeds k
    low = int(np.searchsorted(below, (n - 1) // 2, side="right"))
    high = int(np.searchsorted(below, n // 2, side="right"))
    return np.uint8((low + high) // 2)


def _reduced(image: NDArray[np.uint8], factor: int, interpolation: int = cv2.INTER_AREA) -> NDArray[np.uint8]:
    if factor <= 1:
        return image
    size = (image.shape[1] // factor, image.shape[0] // factor)
    return np.asarray(cv2.resize(image, size, interpolation=interpolation), dtype=np.uint8)


def _edge_normals(smooth: NDArray[np.uint8], edges: NDArray[np.uint8]) -> tuple[NDArray[np.float32], ...]:
    """Edge pixels of ``edges`` (H, W) and the unit gradient of ``smooth`` (H, W) there: (x, y, ux, uy), each
    (N,) float32. The gradient is the 3 x 3 Sobel sum at those pixels only (far fewer than the image's)."""
    w = smooth.shape[1]
    # the image's border pixels have no 3 x 3 neighbourhood; cv2.findNonZero is several times faster than
    # np.nonzero and returns None when there is nothing
    inner = np.zeros_like(edges)
    inner[1:-1, 1:-1] = edges[1:-1, 1:-1]
    found = cv2.findNonZero(inner)
    if found is None:
        empty = np.zeros(0, np.float32)
        return empty, empty, empty, empty
    pts = np.asarray(found, dtype=np.int32).reshape(-1, 2)
    at = pts[:, 1].astype(np.intp) * w + pts[:, 0]
    flat = smooth.reshape(-1)

    def v(dy: int, dx: int) -> NDArray[np.float32]:
        return np.asarray(flat[at + (dy * w + dx)], dtype=np.float32)

    corner = v(1, 1) - v(-1, -1)
    anti = v(-1, 1) - v(1, -1)
    gx = corner + anti + 2 * (v(0, 1) - v(0, -1))
    gy = corner - anti + 2 * (v(1, 0) - v(-1, 0))
    norm = np.maximum(np.hypot(gx, gy), np.float32(1e-6))
    return pts[:, 0].astype(np.float32), pts[:, 1].astype(np.float32), gx / norm, gy / norm


def _subcell(acc: NDArray[np.float32], iy: NDArray[np.intp], ix: NDArray[np.intp], dy: int, dx: int) -> FloatArray:
    """Offset (cells, within +-0.5) of the vertex of the parabola through ``acc`` at each peak (iy, ix) and its
    two neighbours along (dy, dx); zero at the border."""
    h, w = acc.shape
    inner = (iy - dy >= 0) & (iy + dy < h) & (ix - dx >= 0) & (ix + dx < w)
    lo = np.where(inner, acc[np.clip(iy - dy, 0, h - 1), np.clip(ix - dx, 0, w - 1)], 0.0).astype(np.float64)
    hi = np.where(inner, acc[np.clip(iy + dy, 0, h - 1), np.clip(ix + dx, 0, w - 1)], 0.0).astype(np.float64)
    mid = acc[iy, ix].astype(np.float64)
    curvature = lo - 2 * mid + hi
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = np.where(inner & (curvature < 0), 0.5 * (lo - hi) / curvature, 0.0)
    return np.asarray(np.clip(delta, -0.5, 0.5), dtype=np.float64)


def cell_index(
    x_px: NDArray[np.float32] | NDArray[np.float64],
    y_px: NDArray[np.float32] | NDArray[np.float64],
    cell: int,
    grid: tuple[int, int],
) -> NDArray[np.signedinteger]:
    """Flat index (N,) into a ``grid`` (rows, columns) of square cells ``cell`` px wide of the points (N,) at
    ``x_px``, ``y_px`` (inside the image the grid covers); int32 where the grid allows it, else intp."""
    rows, cols = grid
    inv = np.float32(1.0 / cell)
    # 32-bit integers move half the memory of 64-bit ones, and np.bincount takes either
    kind = np.dtype(np.int32) if rows * cols <= np.iinfo(np.int32).max else np.dtype(np.intp)
    row: NDArray[np.signedinteger] = (y_px * inv).astype(kind)
    col: NDArray[np.signedinteger] = (x_px * inv).astype(kind)
    # in float32 a point just inside the last cell can round up to the next: clip to the grid
    np.minimum(row, rows - 1, out=row)
    np.minimum(col, cols - 1, out=col)
    row *= cols
    row += col
    return row


def vote_seeds(
    grey: NDArray[np.uint8],
    px_per_mm: float,
    settings: VisionSettings,
    ignore: NDArray[np.uint8] | None = None,
    levels: SeedLevels | None = None,
    extras: Collection[int] | None = None,
) -> Seeds:
    """Circle candidates by gradient-direction voting at the standard radii, in full-image pixels.

    Per band of sizes (see :func:`size_bands`), on a copy reduced as for :func:`hough_seeds`: Canny edges
    (``vote_canny_low``, ``vote_canny_high``) of the smoothed copy, each voting at the points one standard
    radius of the band away along its gradient, both ways, into one accumulator per band, whose cells are about
    ``vote_cell_mm`` wide (bands reduced alike share their edges). The accumulator is smoothed by
    ``vote_blur_px`` (a stadium's two half outlines vote for centres a few px apart under parallax) and its
    local maxima (over a square of about half the smallest radius: bases in contact have centres one diameter
    apart) with at least ``vote_fraction`` of the smallest rim's length in votes are the candidates, each
    placed within its cell by a parabola through its neighbours. ``radius_px`` is the band's middle radius,
    ``band_px`` its range with ``seeds.radius_margin``. ``extras``: only the bands searched at these further
    reductions (see :meth:`SeedLevels.extra`; None: every band), in band order."""
    levels = SeedLevels(grey, px_per_mm, settings, ignore) if levels is None else levels
    first, scale0 = levels.first, levels.scale0
    centers, radii, bands, factors = [np.zeros((0, 2))], [np.zeros(0)], [np.zeros((0, 2))], [np.zeros(0, np.intp)]
    shares = [np.zeros(0)]
    # bands reduced by the same factor share their edges (at about 1 px/mm the two smallest bands do)
    edges_at: dict[int, tuple[tuple[int, ...], tuple[NDArray[np.float32], ...]]] = {}
    for small_mm, large_mm in levels.bands_mm:
        extra = levels.extra(small_mm)
        if extras is not None and extra not in extras:
            continue
        scale = scale0 / extra
        if extra not in edges_at:
            smooth, hidden = levels.level(extra)
            edges = np.asarray(
                cv2.Canny(smooth, settings.seeds.vote_canny_low, settings.seeds.vote_canny_high, L2gradient=True),
                np.uint8,
            )
            if hidden is not None:
                edges[hidden] = 0
            edges_at[extra] = (smooth.shape, _edge_normals(smooth, edges))
        (h, w), (xs, ys, ux, uy) = edges_at[extra]
        # votes land in cells of about vote_cell_mm: seeds need only land within a couple of millimetres, and
        # the accumulator's cost (counting, smoothing, peak search) falls with the square of the cell
        cell = max(1, round(settings.seeds.vote_cell_mm * scale))
        wc = -(-w // cell)
        sizes = sorted({d for d in settings.base_sizes_mm if small_mm <= d <= large_mm})
        blur = max(settings.seeds.vote_blur_px / cell, _MIN_VOTE_BLUR_CELLS)
        acc = _accumulator((xs, ys, ux, uy), (h, w), [d / 2 * scale for d in sizes], cell, blur)
        r_min = small_mm / 2 * scale
        k = 2 * max(1, round(0.5 * r_min / cell)) + 1
        # a square neighbourhood (separable, so fast): touching bases have centres a diameter apart, farther than
        # its corners reach
        peak_max = cv2.dilate(acc, np.ones((k, k), np.uint8))
        need = settings.seeds.vote_fraction * 2 * math.pi * r_min
        # the vote threshold leaves few cells: the local maximum test only on those
        above = np.flatnonzero(acc >= need)
        above = above[acc.reshape(-1)[above] >= peak_max.reshape(-1)[above]]
        iy, ix = np.divmod(above, wc)
        # the peak to a fraction of a cell (a parabola through it and its neighbours), in the reduced copy's px
        px = (ix + _subcell(acc, iy, ix, 0, 1) + 0.5) * cell - 0.5
        py = (iy + _subcell(acc, iy, ix, 1, 0) + 0.5) * cell - 0.5
        factor = first * extra
        centers.append(np.stack([(px + 0.5) * factor - 0.5, (py + 0.5) * factor - 0.5], axis=1).astype(np.float64))
        radii.append(np.full(len(px), (small_mm + large_mm) / 4 * px_per_mm))
        lo = max(MIN_SEED_RADIUS_PX, small_mm / 2 * scale * (1 - settings.seeds.radius_margin)) * factor
        hi = large_mm / 2 * scale * (1 + settings.seeds.radius_margin) * factor
        bands.append(np.tile(np.array([math.floor(lo), math.ceil(hi)], dtype=np.float64), (len(px), 1)))
        factors.append(np.full(len(px), factor, dtype=np.intp))
        shares.append(acc.reshape(-1)[above].astype(np.float64) / (2 * math.pi * r_min))
    return Seeds(
        np.ascontiguousarray(np.concatenate(centers).reshape(-1, 2)),
        np.concatenate(radii),
        np.ascontiguousarray(np.concatenate(bands).reshape(-1, 2)),
        np.concatenate(factors),
        np.concatenate(shares),
    )


def _accumulator(
    normals: tuple[NDArray[np.float32], ...], shape: tuple[int, int], radii_px: list[float], cell: int, blur: float
) -> NDArray[np.float32]:
    """(ceil(H / cell), ceil(W / cell)) float32 votes for centres: each edge point (``normals``: x, y and the unit
    gradient's x and y, (E,) each, in an image of ``shape`` (H, W)) votes at each of ``radii_px`` along its gradient,
    both ways, into cells of ``cell`` px; each radius's votes smoothed by a Gaussian of ``blur`` cells apart, and the
    largest kept, in votes."""
    (h, w), (xs, ys, ux, uy) = shape, normals
    hc, wc = -(-h // cell), -(-w // cell)
    # both ways along the gradient: a base may be lighter or darker than the mat
    x2, y2 = np.concatenate([xs, xs]) + np.float32(0.5), np.concatenate([ys, ys]) + np.float32(0.5)
    ux2, uy2 = np.concatenate([ux, -ux]), np.concatenate([uy, -uy])
    acc = np.zeros((hc, wc), np.float32)
    for radius in radii_px:
        r = np.float32(radius)
        cx = x2 + r * ux2
        cy = y2 + r * uy2
        inside = (cx >= 0) & (cx < w) & (cy >= 0) & (cy < h)
        index = cell_index(cx[inside], cy[inside], cell, (hc, wc))
        votes = np.bincount(index, minlength=hc * wc).astype(np.float32).reshape(hc, wc)
        # each radius on its own (summing them would add the texture's votes once per size); the Gaussian's sum is
        # kept so that the threshold stays in votes
        np.maximum(acc, cv2.GaussianBlur(votes, (0, 0), blur), out=acc)
    acc *= np.float32(2 * math.pi * blur * blur)
    return acc


def hough_seeds(
    grey: NDArray[np.uint8],
    px_per_mm: float,
    settings: VisionSettings,
    ignore: NDArray[np.uint8] | None = None,
    levels: SeedLevels | None = None,
    extras: Collection[int] | None = None,
) -> Seeds:
    """Circle candidates from ``cv2.HoughCircles`` for every standard base size, in full-image pixels.

    ``grey`` (H, W) uint8; ``px_per_mm`` its scale; ``ignore`` (H, W) uint8, nonzero where nothing is to
    be found. Each size band is searched on a copy reduced (by a whole factor) until the band's smallest base
    is about ``seeds.radius_px`` in radius: large bases need no fine pixels to be found, and the search costs
    about the square of the scale. Candidates whose centre is ignored are dropped. Duplicates across bands are
    kept: the refinement merges them. ``extras``: only the bands searched at these further reductions (see
    :meth:`SeedLevels.extra`; None: every band), in band order."""
    levels = SeedLevels(grey, px_per_mm, settings, ignore) if levels is None else levels
    first, scale0 = levels.first, levels.scale0
    found = [np.zeros((0, 3))]
    bands = [np.zeros((0, 2))]
    factors = [np.zeros(0, np.intp)]
    for small_mm, large_mm in levels.bands_mm:
        extra = levels.extra(small_mm)
        if extras is not None and extra not in extras:
            continue
        level = levels.level(extra)[0]
        scale = scale0 / extra
        r_min = max(MIN_SEED_RADIUS_PX, math.floor(small_mm / 2 * scale * (1 - settings.seeds.radius_margin)))
        r_max = max(r_min + 1, math.ceil(large_mm / 2 * scale * (1 + settings.seeds.radius_margin)))
        votes = max(1.0, settings.seeds.hough_vote_fraction * 2 * math.pi * r_min)
        raw = cv2.HoughCircles(
            level,
            cv2.HOUGH_GRADIENT,
            _HOUGH_DP,
            # two distinct bases have centres at least r1 + r2 apart; r_min leaves room for touching pairs
            minDist=max(2.0, float(r_min)),
            param1=settings.seeds.canny_high,
            param2=votes,
            minRadius=r_min,
            maxRadius=r_max,
        )
        circles = circles_from_hough(None if raw is None else np.asarray(raw, dtype=np.float64))
        factor = first * extra
        # back to full-image pixels: a reduced pixel k covers full pixels k*f .. k*f + f - 1
        circles[:, :2] = (circles[:, :2] + 0.5) * factor - 0.5
        circles[:, 2] *= factor
        found.append(circles)
        band = (r_min * factor, r_max * factor)
        bands.append(np.tile(np.array(band, dtype=np.float64), (len(circles), 1)))
        factors.append(np.full(len(circles), factor, dtype=np.intp))
    circles = np.concatenate(found)
    center, radius = circles[:, :2], circles[:, 2]
    band_px = np.concatenate(bands)
    reduction = np.concatenate(factors)
    if ignore is not None and len(radius):
        col = np.clip(np.round(center[:, 0]).astype(np.intp), 0, ignore.shape[1] - 1)
        row = np.clip(np.round(center[:, 1]).astype(np.intp), 0, ignore.shape[0] - 1)
        keep = ignore[row, col] == 0
        center, radius, band_px, reduction = center[keep], radius[keep], band_px[keep], reduction[keep]
    return Seeds(
        np.ascontiguousarray(center),
        np.ascontiguousarray(radius),
        np.ascontiguousarray(band_px),
        np.ascontiguousarray(reduction),
        np.full(len(radius), np.inf),
    )
