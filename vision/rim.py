"""Sub-pixel rim edges of many candidate circles at once, from intensity profiles along rays.

For each candidate, ``rays`` rays leave the centre at equal angles; each is sampled (from the grey image, which
is far cheaper to sample than the colour one) across the expected rim,
smoothed along its length and differentiated. The rim on a ray is a peak of that derivative, located to a fraction
of a sample by a parabola through the peak and its two neighbours.

Shapes: K candidates, n rays, M samples per ray.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

# cv2.remap cannot address more than 32767 columns.
_MAX_REMAP_COLS = 32767
# A Gaussian kernel is cut at this many sigmas.
_KERNEL_SIGMAS = 3.0


def ray_directions(rays: int) -> FloatArray:
    """(n, 2) unit vectors (cos, sin) at equal angles, the first along +x."""
    angle = np.arange(rays) * (2 * math.pi / rays)
    return np.stack([np.cos(angle), np.sin(angle)], axis=1)


def derivative_kernel(sigma_samples: float) -> tuple[NDArray[np.float32], int]:
    """Derivative-of-Gaussian kernel along a ray (per sample) and its half-length in samples."""
    if sigma_samples <= 0:
        return np.array([-0.5, 0.0, 0.5], dtype=np.float32), 1
    half = max(1, math.ceil(_KERNEL_SIGMAS * sigma_samples))
    t = np.arange(-half, half + 1, dtype=np.float64)
    g = np.exp(-0.5 * (t / sigma_samples) ** 2)
    g /= g.sum()
    # derivative of the smoothed profile: correlate with -g'(t), normalised so a unit ramp gives 1 per sample
    dg = t * g
    dg /= (t * dg).sum()
    return dg.astype(np.float32), half


def sample_grey(
    grey: NDArray[np.uint8],
    center_px: FloatArray,
    radius_px: FloatArray,
    offsets_px: FloatArray,
    directions: FloatArray,
) -> NDArray[np.float32]:
    """Grey level of ``grey`` (H, W) at ``center + (radius + offset) * direction`` for every candidate (K), ray
    (n) and offset (M): a (K, n, M) float32 array. ``radius_px`` is (K,) or per ray (K, n). Bilinear; points
    outside the image take the nearest edge pixel."""
    k, n, m = len(radius_px), len(directions), len(offsets_px)
    if k == 0:
        return np.zeros((0, n, m), np.float32)
    per_ray = radius_px[:, :, None] if radius_px.ndim == 2 else radius_px[:, None, None]
    rad = per_ray + offsets_px[None, None, :]
    xs = center_px[:, 0, None, None] + rad * directions[None, :, 0, None]
    ys = center_px[:, 1, None, None] + rad * directions[None, :, 1, None]
    return _sample_xy(grey, xs.reshape(k, n * m), ys.reshape(k, n * m)).reshape(k, n, m)


def sample_points(grey: NDArray[np.uint8], points_px: FloatArray) -> NDArray[np.float32]:
    """Grey level of ``grey`` (H, W) at points (K, N, 2) (x, y): a (K, N) float32 array. Bilinear; points outside
    the image take the nearest edge pixel."""
    return _sample_xy(grey, points_px[..., 0], points_px[..., 1])


def _sample_xy(grey: NDArray[np.uint8], xs_px: FloatArray, ys_px: FloatArray) -> NDArray[np.float32]:
    """Grey level of ``grey`` (H, W) at the points (``xs_px``, ``ys_px``), each (K, N): (K, N) float32."""
    k, cols = xs_px.shape
    if k == 0 or cols == 0:
        return np.zeros((k, cols), np.float32)
    # one map row per candidate keeps each remap row spatially coherent; a candidate with more samples than a
    # remap row may hold is spread over several rows, padded at the end
    rows_per = max(1, math.ceil(cols / _MAX_REMAP_COLS))
    width = math.ceil(cols / rows_per)
    pad = rows_per * width - cols
    maps = []
    for coordinate in (xs_px, ys_px):
        single = coordinate.astype(np.float32)
        if pad:
            single = np.pad(single, ((0, 0), (0, pad)), mode="edge")
        maps.append(single.reshape(k * rows_per, width))
    out = cv2.remap(grey, maps[0], maps[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(out, dtype=np.float32).reshape(k, rows_per * width)[:, :cols]


def sample_mask(ignore: NDArray[np.uint8], points_px: FloatArray) -> BoolArray:
    """Whether each point (..., 2) falls on an ignored pixel (nearest pixel; outside the image counts as
    ignored)."""
    h, w = ignore.shape
    col = np.round(points_px[..., 0]).astype(np.int64)
    row = np.round(points_px[..., 1]).astype(np.int64)
    inside = (col >= 0) & (col < w) & (row >= 0) & (row < h)
    hit = np.ones(points_px.shape[:-1], dtype=np.bool_)
    hit[inside] = ignore[row[inside], col[inside]] > 0
    return hit


@dataclass(frozen=True)
class RayDerivative:
    """Smoothed derivative of the luminance along each ray, ``value`` (K, n, L) in grey levels per pixel, at
    ``offset_px`` (L,) from the radius the rays were sampled around."""

    value: NDArray[np.float32]
    offset_px: FloatArray


def ray_derivative(
    grey: NDArray[np.uint8],
    center_px: FloatArray,
    radius_px: FloatArray,
    half_width_px: float,
    directions: FloatArray,
    step_px: float,
    blur_px: float,
) -> RayDerivative:
    """Sample every ray over ``radius +- half_width_px`` and differentiate it along its length."""
    kernel, half = derivative_kernel(blur_px / step_px)
    steps = math.ceil(half_width_px / step_px)
    offsets = np.arange(-steps - half - 1, steps + half + 2, dtype=np.float64) * step_px
    prof = sample_grey(grey, center_px, radius_px, offsets, directions)
    k, n, m = prof.shape
    if k == 0:
        return RayDerivative(np.zeros((0, n, m - 2 * half), np.float32), offsets[half : m - half])
    flat = prof.reshape(k * n, m)
    deriv = cv2.filter2D(flat, cv2.CV_32F, kernel[None, :], anchor=(half, 0), borderType=cv2.BORDER_REPLICATE)
    value = deriv[:, half : m - half].reshape(k, n, m - 2 * half) / np.float32(step_px)
    return RayDerivative(value, offsets[half : m - half])


@dataclass(frozen=True)
class Peaks:
    """Candidate rim edges on every ray: ``good`` (K, n, P) marks the local maxima of the (polarity-signed)
    derivative that are strong enough, ``offset_px`` (K, n, P) their sub-sample position relative to the radius
    the rays were sampled around, ``strength`` (K, n, P) the derivative there (grey levels per px)."""

    good: BoolArray
    offset_px: FloatArray
    strength: FloatArray


def find_peaks(
    deriv: RayDerivative, polarity: FloatArray | None, step_px: float, min_gradient: float, peak_fraction: float
) -> Peaks:
    """Local maxima of ``polarity * derivative`` (of its magnitude where ``polarity`` (K,) is None or 0) that are
    at least ``min_gradient`` and at least ``peak_fraction`` of the ray's strongest one, each placed to a fraction
    of a sample by a parabola through it and its two neighbours."""
    value = deriv.value.astype(np.float64)
    if polarity is None or not polarity.any():
        q = np.abs(value)
    elif np.all(polarity == 1.0):
        # one polarity for all (the footprint search's): times 1 or -1 is the same number or its negation, exactly
        q = value
    elif np.all(polarity == -1.0):
        q = np.negative(value, out=value)
    elif polarity.all():
        q = value * polarity[:, None, None]
    else:
        sign = polarity[:, None, None]
        q = np.where(sign == 0, np.abs(value), value * sign)
    k, n, length = q.shape
    if length < 3:
        empty = np.zeros((k, n, 0))
        return Peaks(np.zeros((k, n, 0), np.bool_), empty, empty)
    left, mid, right = q[..., :-2], q[..., 1:-1], q[..., 2:]
    peak = (mid >= left) & (mid > right)
    strongest = np.where(peak, mid, -np.inf).max(axis=-1, keepdims=True)
    good = peak & (mid >= min_gradient) & (mid >= peak_fraction * strongest)
    # in place, operation by operation as the formulas read: the same values, without a temporary for each
    curvature = left - 2 * mid
    curvature += right
    delta = left - right
    delta *= 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        delta /= curvature
    np.copyto(delta, 0.0, where=~(curvature < 0))
    np.clip(delta, -0.5, 0.5, out=delta)
    delta *= step_px
    delta += deriv.offset_px[None, None, 1:-1]
    return Peaks(good, delta, mid)


def select_peaks(first: Peaks, second: Peaks, use_first: BoolArray) -> Peaks:
    """Per candidate (K,), the peaks of ``first`` where ``use_first`` holds, else those of ``second``."""
    pick = use_first[:, None, None]
    return Peaks(
        np.where(pick, first.good, second.good),
        np.where(pick, first.offset_px, second.offset_px),
        np.where(pick, first.strength, second.strength),
    )


@dataclass(frozen=True)
class RayEdges:
    """One rim edge per ray: ``radius_px`` (K, n) distance from the centre the rays started at, ``strength``
    (K, n) derivative at the edge (grey levels per px, signed by polarity), ``found`` (K, n)."""

    radius_px: FloatArray
    strength: FloatArray
    found: BoolArray

    def points(self, center_px: FloatArray, directions: FloatArray) -> FloatArray:
        """(K, n, 2) edge points in image pixels."""
        return center_px[:, None, :] + self.radius_px[..., None] * directions[None, :, :]


def _per_ray(radius_px: FloatArray) -> FloatArray:
    """Ray start radii as (K, n) or broadcastable (K, 1)."""
    return radius_px if radius_px.ndim == 2 else radius_px[:, None]


def pick_edges(peaks: Peaks, radius_px: FloatArray, prefer: str, target_px: FloatArray | None = None) -> RayEdges:
    """One edge per ray from ``peaks``: ``prefer="nearest"`` takes the one nearest ``target_px`` (K,) or (K, n)
    (distance from the ray start; default: the radius the rays were sampled around, ``radius_px`` (K,)),
    ``"outer"`` the outermost, ``"strongest"`` the strongest."""
    k, n, p = peaks.good.shape
    if p == 0:
        empty = np.zeros((k, n))
        return RayEdges(empty, empty, np.zeros((k, n), np.bool_))
    found = np.asarray(peaks.good.any(axis=-1), dtype=np.bool_)
    if prefer == "nearest":
        if target_px is None:
            shift = np.zeros((k, 1, 1))
        elif target_px.ndim == 1 and radius_px.ndim == 1:
            shift = (target_px - radius_px)[:, None, None]
        else:
            target = target_px if target_px.ndim == 2 else target_px[:, None]
            shift = (target - _per_ray(radius_px))[..., None]
        away = np.abs(peaks.offset_px - shift)
        idx = np.argmin(np.where(peaks.good, away, np.inf), axis=-1)
    elif prefer == "outer":
        idx = (p - 1) - np.argmax(peaks.good[..., ::-1], axis=-1)
    elif prefer == "strongest":
        idx = np.argmax(np.where(peaks.good, peaks.strength, -np.inf), axis=-1)
    else:
        raise ValueError(f"prefer must be 'nearest', 'outer' or 'strongest', got {prefer!r}")
    offset = np.take_along_axis(peaks.offset_px, idx[..., None], axis=-1)[..., 0]
    strength = np.take_along_axis(peaks.strength, idx[..., None], axis=-1)[..., 0]
    return RayEdges(_per_ray(radius_px) + offset, strength, found)
