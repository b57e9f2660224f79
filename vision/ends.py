"""Round ends: a circle that is the rounded end of a band as wide as itself (a finger, a forearm), not a base.

A fingertip seen from above is a half circle with straight sides running on from it: its edges pass every test of
a base's rim on one side, its skin passes for a base's top, and its knuckle or nail for a figure. What no base
shows is the band: beyond the circle, in one direction, the circle's inside runs on between two straight, parallel
edges about a diameter apart, with something else on both sides. A neighbour in contact runs on too, but its
outline swings out from the point of contact, and a figure leaning out over the mat is no straight band.

Each circle is looked at along ``_DIRECTIONS`` directions. Along each, cross-sections of the band are sampled from
just past the rim to a diameter past the centre; each sample is called inside (nearer the colour of the circle's
inside, next to that direction, than to the colour of either flank) or not. Where the band's edges cross each
section, their width and how far they wobble off one straight line give the measure of a round end.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

# A finger's axis is found to within half a step of this many directions; the edges then slant by under 5 degrees,
# a few hundredths of a radius over the sections' length, well under the wobble allowed.
_DIRECTIONS = 36
# Cross-sections from just past the rim (the wall and contact shadow of a base lie nearer) to a diameter past the
# centre, in radii from the centre: a neighbour in contact is narrowest near the rim, so the first sections tell it.
_SECTIONS_R = np.linspace(1.1, 2.0, 7)
# Each cross-section spans this far to each side of the axis (radii), sampled every _STEP_R: the flanks' colour is
# taken from its outer part (beyond _FLANK_R), wider than any band called a round end.
_HALF_SPAN_R = 1.8
_STEP_R = 0.05
_FLANK_R = 1.55
# The circle's inside next to each direction: radii and angles (degrees either side) of its samples.
_INSIDE_R = (0.5, 0.65, 0.8)
_INSIDE_SPREAD_DEG = 75.0
_INSIDE_ANGLES = 11
# Past each edge of the band, this much (radii) must be of the flanks: the band is not a blotch of the inside's
# colour with a gap. One sample there may be called inside (the shaded side of a forearm next to its shadow).
_CLEAR_R = 0.35
_CLEAR_MAX_INSIDE = 1
# The band's middle, out to this many radii from its axis, is of the inside's colour: its median lies within this share
# of the flanks' distance from the inside.
_CORE_R = 0.5
_CORE_LIKE = 0.35
# The band's mean width, in radii: a snapped circle may be a size off the band it ends (a finger between sizes), and
# a fingertip read together with its shadow is a circle up to twice the finger's width, so a band 0.5 to 1.4 diameters
# wide counts; its widest section no more than 1.7.
_WIDTH_R = (1.0, 2.8)
_MAX_WIDTH_R = 3.4


def _inside(
    pixels: NDArray[np.uint8], center_px: FloatArray, radius_px: FloatArray, theta: NDArray[np.floating]
) -> FloatArray:
    """(N, C) the median colour of ``pixels`` (H, W, C) inside each circle (``center_px`` (N, 2), ``radius_px``
    (N,)) on the side it would run on as a band along direction ``theta`` (N,) (radians)."""
    spread = np.radians(np.linspace(-_INSIDE_SPREAD_DEG, _INSIDE_SPREAD_DEG, _INSIDE_ANGLES))
    rho, phi = np.meshgrid(np.asarray(_INSIDE_R), spread)
    angle = theta[:, None] + phi.reshape(1, -1)
    ring = rho.reshape(1, -1, 1) * np.stack([np.cos(angle), np.sin(angle)], axis=-1)
    return _median(_sample(pixels, center_px[:, None, :] + radius_px[:, None, None] * ring))


def round_ends(
    image: NDArray[np.uint8],
    center_px: FloatArray,
    radius_px: FloatArray,
    max_wobble: float,
    min_contrast: float,
) -> BoolArray:
    """(K,) True where a circle is the round end of a band (see the module's docstring).

    ``image`` (H, W, 3) or (H, W) uint8; ``center_px`` (K, 2) as (x, y); ``radius_px`` (K,). A band counts where
    its inside differs from both flanks by at least ``min_contrast`` (grey levels, or their length over the three
    channels) and the spread of its width over the sections plus the scatter of its middle about a straight line
    is at most ``max_wobble`` radii. ``max_wobble`` 0: no circle is a round end."""
    k = len(radius_px)
    if k == 0 or max_wobble <= 0:
        return np.zeros(k, np.bool_)
    pixels = image if image.ndim == 3 else image[:, :, None]
    theta = np.arange(_DIRECTIONS) * (2 * np.pi / _DIRECTIONS)
    along = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    across = np.stack([-np.sin(theta), np.cos(theta)], axis=1)
    along32, across32 = along.astype(np.float32), across.astype(np.float32)
    steps = round(_HALF_SPAN_R / _STEP_R)
    offsets = np.arange(-steps, steps + 1, dtype=np.float64) * _STEP_R
    mid = len(offsets) // 2

    def sections(rows: NDArray[np.intp], dirs: NDArray[np.intp], at: FloatArray) -> NDArray[np.uint8]:
        """(N, T, len(at), C) samples of the cross-sections of circle ``rows`` along direction ``dirs`` (N,)."""
        t, s = (a.reshape(1, -1, 1).astype(np.float32) for a in np.meshgrid(_SECTIONS_R, at, indexing="ij"))
        scale = radius_px[rows].astype(np.float32)[:, None, None]
        # (N, T * len(at), 2) in float32, the precision cv2.remap takes
        points = (t * along32[dirs][:, None, :] + s * across32[dirs][:, None, :]) * scale
        points += center_px[rows].astype(np.float32)[:, None, :]
        return _sample(pixels, points).reshape(len(rows), len(_SECTIONS_R), len(at), -1)

    # first the band's axis and its flanks only, along every direction: few directions of a base have the inside's
    # colour all along the axis, and only those are sampled across
    every_row, every_dir = (a.ravel() for a in np.meshgrid(np.arange(k), np.arange(_DIRECTIONS), indexing="ij"))
    flank_left, flank_right = offsets[offsets <= -_FLANK_R], offsets[offsets >= _FLANK_R]
    coarse = sections(every_row, every_dir, np.concatenate([flank_left, [0.0], flank_right]))
    n_flank = len(flank_left)
    left = _median(coarse[:, :, :n_flank].reshape(len(every_row), -1, coarse.shape[-1]))
    right = _median(coarse[:, :, n_flank + 1 :].reshape(len(every_row), -1, coarse.shape[-1]))
    inside = _inside(pixels, center_px[every_row], radius_px[every_row], theta[every_dir])  # (K*D, C)
    contrast = np.minimum(np.linalg.norm(inside - left, axis=-1), np.linalg.norm(inside - right, axis=-1))
    axis_like = _like(coarse[:, :, n_flank : n_flank + 1], inside, left, right)[..., 0].all(axis=-1)
    # the cross-sections must lie in the image: beyond it is no colour (cv2.remap gives black), and a dark base near
    # the image's edge would run on into it
    within = _sections_within(
        pixels.shape[:2], center_px[every_row], radius_px[every_row], along[every_dir], across[every_dir]
    )
    # the flanks may differ: a hand casts its shadow on the mat beside it
    pick = np.flatnonzero(axis_like & within & (contrast >= min_contrast))
    if pick.size == 0:
        return np.zeros(k, np.bool_)

    across_band = sections(every_row[pick], every_dir[pick], offsets)
    like = _like(across_band, inside[pick], left[pick], right[pick])
    # the band's middle is of the inside's own colour, not merely nearer to it than to the flanks (a terrain's dark
    # shadow beside a dark base is nearer)
    core = across_band[:, :, np.abs(offsets) <= _CORE_R].reshape(len(pick), -1, across_band.shape[-1])
    core_off = np.linalg.norm(_median(core) - inside[pick], axis=-1)
    edge_right, clear_right = _edge(like[..., mid:])
    edge_left, clear_left = _edge(like[..., mid::-1])
    width, wobble = _width_and_wobble(edge_right, edge_left)
    band = (
        clear_right.all(axis=-1)
        & clear_left.all(axis=-1)
        & (width.mean(axis=-1) > _WIDTH_R[0])
        & (width.mean(axis=-1) < _WIDTH_R[1])
        & (width.max(axis=-1) < _MAX_WIDTH_R)
        & (wobble <= max_wobble)
        & (core_off <= _CORE_LIKE * contrast[pick])
    )
    out = np.zeros(k, np.bool_)
    out[every_row[pick][band]] = True
    return out


def _sections_within(
    shape: tuple[int, ...], center_px: FloatArray, radius_px: FloatArray, along: FloatArray, across: FloatArray
) -> BoolArray:
    """(M,) whether every cross-section of M circles (``center_px`` (M, 2), ``radius_px`` (M,)) along the directions
    ``along`` (M, 2), spanning ``across`` (M, 2), lies in an image of ``shape`` (H, W, ...)."""
    image_h, image_w = shape[:2]
    corner_t, corner_s = np.meshgrid(_SECTIONS_R[[0, -1]], [-_HALF_SPAN_R, _HALF_SPAN_R], indexing="ij")
    corners = corner_t.reshape(1, -1, 1) * along[:, None, :] + corner_s.reshape(1, -1, 1) * across[:, None, :]
    corners = center_px[:, None, :] + radius_px[:, None, None] * corners
    inside = (corners[..., 0] >= 0) & (corners[..., 0] <= image_w - 1)
    inside &= (corners[..., 1] >= 0) & (corners[..., 1] <= image_h - 1)
    return np.asarray(np.all(inside, axis=1), dtype=np.bool_)


def _width_and_wobble(edge_right: NDArray[np.intp], edge_left: NDArray[np.intp]) -> tuple[FloatArray, FloatArray]:
    """From each section's edges (M, T) right and left of the axis (whole steps): the band's width per section (M, T),
    in radii, and its wobble (M,): the spread of the width plus the scatter of its middle about a straight line."""
    width = (edge_right + edge_left) * _STEP_R
    middle = (edge_right - edge_left) * (_STEP_R / 2)
    centred = _SECTIONS_R - _SECTIONS_R.mean()
    slope = (middle * centred).sum(axis=-1) / (centred**2).sum()
    scatter = middle - middle.mean(axis=-1, keepdims=True) - slope[..., None] * centred
    wobble = width.std(axis=-1) + np.sqrt((scatter**2).mean(axis=-1))
    return np.asarray(width, dtype=np.float64), np.asarray(wobble, dtype=np.float64)


def _like(samples: NDArray[np.uint8], inside: FloatArray, left: FloatArray, right: FloatArray) -> BoolArray:
    """(N, ...) whether each of ``samples`` (N, ..., C) is nearer ``inside`` (N, C) than both ``left`` and
    ``right`` (N, C)."""
    extra = (slice(None),) + (None,) * (samples.ndim - 2)
    values = samples.astype(np.float32)

    def distance(ref: FloatArray) -> NDArray[np.float32]:
        # squared: the order is the same, without the roots
        away = values - ref.astype(np.float32)[extra]
        return np.asarray(np.einsum("...c,...c->...", away, away), dtype=np.float32)

    to_inside = distance(inside)
    return np.asarray((to_inside < distance(left)) & (to_inside < distance(right)), dtype=np.bool_)


def _median(samples: NDArray[np.uint8]) -> FloatArray:
    """(N, C) median over the samples of ``samples`` (N, M, C), per channel."""
    # bytes along the last, contiguous axis: the partition moves an eighth of the memory of doubles
    return np.asarray(np.median(np.ascontiguousarray(samples.transpose(0, 2, 1)), axis=-1), dtype=np.float64)


def _sample(pixels: NDArray[np.uint8], points: NDArray[np.floating]) -> NDArray[np.uint8]:
    """Bilinear samples (..., C) of ``pixels`` (H, W, C) at ``points`` (..., 2) as (x, y); zero outside."""
    shape = points.shape[:-1]
    flat = points.reshape(-1, 2).astype(np.float32)
    map_x = np.ascontiguousarray(flat[:, 0].reshape(1, -1))
    map_y = np.ascontiguousarray(flat[:, 1].reshape(1, -1))
    channels = pixels.shape[2]
    # cv2.remap takes fewer than 32767 columns a row: the samples go in rows of this length
    width = 4096
    n = map_x.shape[1]
    rows = -(-n // width)
    pad = rows * width - n
    map_x = np.pad(map_x, ((0, 0), (0, pad))).reshape(rows, width)
    map_y = np.pad(map_y, ((0, 0), (0, pad))).reshape(rows, width)
    out = cv2.remap(pixels, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return np.asarray(out, dtype=np.uint8).reshape(-1, channels)[:n].reshape(*shape, channels)


def _edge(like: BoolArray) -> tuple[NDArray[np.intp], BoolArray]:
    """Along the last axis (outward from the band's axis, in steps): the first step not inside (the length if none),
    and whether the ``_CLEAR_R`` beyond it holds at most ``_CLEAR_MAX_INSIDE`` inside steps."""
    n = like.shape[-1]
    outside = ~like
    first = np.where(outside.any(axis=-1), outside.argmax(axis=-1), n)
    count = np.concatenate([np.zeros((*like.shape[:-1], 1), np.intp), np.cumsum(like, axis=-1)], axis=-1)
    end = np.minimum(first + round(_CLEAR_R / _STEP_R), n)
    inside_beyond = (
        np.take_along_axis(count, end[..., None], axis=-1)[..., 0]
        - np.take_along_axis(count, first[..., None], axis=-1)[..., 0]
    )
    return first, (inside_beyond <= _CLEAR_MAX_INSIDE) & (first < n)
