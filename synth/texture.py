"""Procedural textures in table millimetres: they stay on the surface they belong to from frame to frame."""

from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from synth.scene import Mat

FloatArray = NDArray[np.float64]

# Texel of the precomputed mat texture: finer than a 4K pixel on a 6'x4' table (~0.56 mm), so the mat never looks
# magnified.
MAT_TEXEL_MM = 0.5

# Patch size of the two-colour mix and the scales of the brightness grain (mm): large wear patches, tufts, fibres.
_PATCH_MM = 140.0
_GRAIN_SCALES_MM = (45.0, 9.0)
_GRAIN_WEIGHTS = (0.45, 0.35, 0.55)  # the two scales above, then texel-level fibre noise
_FIBRE_BLUR_TEXELS = 0.7
# Speckle: bright and dark flecks (grass tips, static grass, sand grains).
_SPECK_BLUR_TEXELS = 0.8
_SPECK_BRIGHT = (0.55, 0.45, -0.1)  # BGR shift of a bright (yellowish) fleck
_SPECK_DARK = (-0.45, -0.45, -0.45)

_HASH_MULT_X = np.uint64(0x9E3779B97F4A7C15)
_HASH_MULT_Y = np.uint64(0xC2B2AE3D27D4EB4F)
_HASH_MIX = np.uint64(0x165667B19E3779F9)


def _lattice(i: NDArray[np.int64], j: NDArray[np.int64], seed: int) -> FloatArray:
    """A pseudo-random value in [-1, 1] per lattice point (an integer hash: the same point, the same value)."""
    with np.errstate(over="ignore"):
        h = i.astype(np.uint64) * _HASH_MULT_X + j.astype(np.uint64) * _HASH_MULT_Y + np.uint64(seed) * _HASH_MIX
        h ^= h >> np.uint64(31)
        h *= _HASH_MULT_X
        h ^= h >> np.uint64(29)
    return (h >> np.uint64(11)).astype(np.float64) / float(1 << 53) * 2.0 - 1.0


def value_noise(x: FloatArray, y: FloatArray, cell_mm: float, seed: int) -> FloatArray:
    """Smooth noise in [-1, 1] with features of about ``cell_mm``, at points (any shape) in mm."""
    fx = np.asarray(x, dtype=np.float64) / cell_mm
    fy = np.asarray(y, dtype=np.float64) / cell_mm
    i = np.floor(fx).astype(np.int64)
    j = np.floor(fy).astype(np.int64)
    ax = fx - i
    ay = fy - j
    ax = ax * ax * (3.0 - 2.0 * ax)
    ay = ay * ay * (3.0 - 2.0 * ay)
    top = _lattice(i, j, seed) * (1 - ax) + _lattice(i + 1, j, seed) * ax
    bottom = _lattice(i, j + 1, seed) * (1 - ax) + _lattice(i + 1, j + 1, seed) * ax
    return top * (1 - ay) + bottom * ay


def _smooth_field(rng: np.random.Generator, shape: tuple[int, int], cell_texels: float) -> NDArray[np.float32]:
    """Zero-mean, unit-sigma noise with features of ``cell_texels``, by upsampling a coarse random grid."""
    gh = max(2, math.ceil(shape[0] / cell_texels) + 2)
    gw = max(2, math.ceil(shape[1] / cell_texels) + 2)
    coarse = rng.standard_normal((gh, gw)).astype(np.float32)
    big = cv2.resize(coarse, (round(gw * cell_texels), round(gh * cell_texels)), interpolation=cv2.INTER_CUBIC)
    field = np.asarray(big[: shape[0], : shape[1]], dtype=np.float32)
    return np.asarray((field - field.mean()) / max(float(field.std()), 1e-6), dtype=np.float32)


@lru_cache(maxsize=2)
def mat_texture(mat: Mat, width_mm: float, depth_mm: float) -> NDArray[np.uint8]:
    """The mat's albedo as a BGR uint8 image, one texel per :data:`MAT_TEXEL_MM`, texel (0, 0) centred on the
    table corner. Cached: frames of one table share it (read only)."""
    rng = np.random.default_rng(mat.seed)
    shape = (math.ceil(depth_mm / MAT_TEXEL_MM) + 2, math.ceil(width_mm / MAT_TEXEL_MM) + 2)
    # A table's texture is millions of texels: computed a colour plane at a time and in place, which gives the same
    # values as whole-array expressions in a fraction of the time (no temporaries of its size).
    mix = _smooth_field(rng, shape, _PATCH_MM / MAT_TEXEL_MM)
    mix *= np.float32(0.35)
    mix += np.float32(0.5)
    np.clip(mix, 0.0, 1.0, out=mix)
    rest = np.float32(1.0) - mix
    planes = []
    for a, b in zip(mat.colour_a, mat.colour_b, strict=True):
        plane = rest * np.float32(a)
        plane += mix * np.float32(b)
        planes.append(plane)
    fibres = rng.standard_normal(shape, dtype=np.float32)
    fibres = np.asarray(cv2.GaussianBlur(fibres, (0, 0), _FIBRE_BLUR_TEXELS), dtype=np.float32)
    fibres /= max(float(fibres.std()), 1e-6)
    grain = _GRAIN_WEIGHTS[-1] * fibres
    for weight, scale in zip(_GRAIN_WEIGHTS[:-1], _GRAIN_SCALES_MM, strict=True):
        grain += weight * _smooth_field(rng, shape, scale / MAT_TEXEL_MM)
    grain *= np.float32(mat.grain / math.sqrt(sum(w * w for w in _GRAIN_WEIGHTS)))
    # Specks: impulses, blurred into dots and scaled back up so that a speck is as strong as a texel.
    share = mat.speckle_per_cm2 * (MAT_TEXEL_MM / 10.0) ** 2 / 2.0
    draw = rng.random(shape, dtype=np.float32)
    gain = 2.0 * math.pi * _SPECK_BLUR_TEXELS**2
    bright = np.clip(cv2.GaussianBlur((draw < share).astype(np.float32), (0, 0), _SPECK_BLUR_TEXELS) * gain, 0, 1)
    dark = np.clip(cv2.GaussianBlur((draw > 1.0 - share).astype(np.float32), (0, 0), _SPECK_BLUR_TEXELS) * gain, 0, 1)
    grain += np.float32(1.0)
    lit, fleck = np.empty_like(grain), np.empty_like(grain)
    for ch, plane in enumerate(planes):
        np.multiply(bright, np.float32(_SPECK_BRIGHT[ch]), out=fleck)
        np.add(grain, fleck, out=lit)
        np.multiply(dark, np.float32(_SPECK_DARK[ch]), out=fleck)
        lit += fleck
        plane *= lit
        plane *= np.float32(255.0)
        plane += np.float32(0.5)
        np.clip(plane, 0, 255, out=plane)
    out: NDArray[np.uint8] = np.asarray(cv2.merge([p.astype(np.uint8) for p in planes]), dtype=np.uint8)
    out.flags.writeable = False
    return out
