"""Rings about a centre: how many rays' edges support each circle of a grid of radii about it (beyond what chance
gives), and of a base's rings of either polarity the best supported one, the outermost one enough rays support, and
the support at a given radius (see :func:`vision.footprints.find_footprints`)."""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.rim import Peaks
from vision.vecmath import hypot

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


# Grid step (px) of the radii tried about a first centre: the first centre is good to a few tenths of a pixel and so
# are the edges.
_RING_BIN_PX = 0.5


def ring_support(
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


def best_of(rings: list[tuple[FloatArray, FloatArray, FloatArray]]) -> tuple[FloatArray, FloatArray]:
    """Of the rings of both polarities (``rings`` = [positive, negative], each from :func:`ring_support`), the
    best supported: radius (K,) (-inf when no ray has an edge) and polarity (K,)."""
    rows = np.arange(len(rings[0][0]))
    best = [np.argmax(r[0], axis=1) for r in rings]
    top = [r[0][rows, i] for r, i in zip(rings, best, strict=True)]
    take_minus = top[1] > top[0]
    radius = np.where(take_minus, rings[1][1][rows, best[1]], rings[0][1][rows, best[0]])
    radius = np.where(np.maximum(top[0], top[1]) > 0, radius, -np.inf)
    return radius, np.where(take_minus, -1.0, 1.0)


def outermost_of(
    rings: list[tuple[FloatArray, FloatArray, FloatArray]],
    need: float,
    fraction: float,
    below_px: FloatArray | None = None,
    polarity: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Of the rings of both polarities (``rings`` = [positive, negative], each from :func:`ring_support`), the
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


def support_at(
    rings: list[tuple[FloatArray, FloatArray, FloatArray]], radius_px: FloatArray, polarity: FloatArray
) -> FloatArray:
    """Of the rings of both polarities (``rings`` = [positive, negative], each from :func:`ring_support`), the
    support (K,) of the ring nearest ``radius_px`` (K,) of ``polarity`` (K,) (NaN where the radius is)."""
    rows = np.arange(len(radius_px))
    out = np.full(len(radius_px), np.nan)
    for sign, (sup, _mean_px, grid) in zip((1.0, -1.0), rings, strict=True):
        take = (polarity == sign) & np.isfinite(radius_px)
        nearest = np.argmin(np.abs(grid[None, :] - radius_px[take, None]), axis=1)
        out[take] = sup[rows[take], nearest]
    return out


def take_peaks(peaks: Peaks, rows: NDArray[np.intp]) -> Peaks:
    """The peaks of ``rows`` (ascending, no repeats): the arrays themselves when those are all of them."""
    if rows.size == len(peaks.good):
        return peaks
    return Peaks(peaks.good[rows], peaks.offset_px[rows], peaks.strength[rows])
