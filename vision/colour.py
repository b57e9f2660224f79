"""How far each pixel's colour is from the mat's, whatever its brightness: the image of the second look.

Grey levels weigh green most: a grey base on a mud-and-moss mat, or a green base on it, can be within a few grey
levels of the mat and show only by its wall's shading, while its colour stands out clearly. The chromaticity of a
pixel (each channel over the sum of the three) does not change with shading, so a contact shadow or uneven light on
the mat stays near the mat's chromaticity, and a base of another colour stands out at any brightness.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

# Added to every channel before dividing by their sum: the chromaticity of a black pixel is noise, this keeps it
# finite and pulls it towards grey.
_DARK_OFFSET = 1.0
# The mat's chromaticity is the median of every this many pixels, along both axes: enough to be exact to well under
# a grey level of the result, without sorting millions.
_MAT_SAMPLE_STRIDE = 8
# Rows of the image converted at a time.
_BAND_ROWS = 64


def chroma_contrast(
    bgr: NDArray[np.uint8], ignore: NDArray[np.uint8] | None, gain: float, blur_px: float
) -> NDArray[np.uint8] | None:
    """(H, W) uint8: the distance of each pixel's chromaticity from the mat's, times ``gain`` (grey levels per
    unit of chromaticity distance), smoothed by a Gaussian of ``blur_px``.

    ``bgr`` (H, W, 3) uint8; ``ignore`` (H, W) uint8, nonzero where the mat is not to be sampled (off the table,
    markers). The mat's chromaticity is the median over the rest. None for a grey (H, W) image, which has no
    colour, or when no pixel is left to sample the mat from."""
    if bgr.ndim != 3:
        return None
    sample = bgr[::_MAT_SAMPLE_STRIDE, ::_MAT_SAMPLE_STRIDE].astype(np.float64) + _DARK_OFFSET
    if ignore is not None:
        sample = sample[ignore[::_MAT_SAMPLE_STRIDE, ::_MAT_SAMPLE_STRIDE] == 0]
    sample = sample.reshape(-1, 3)
    if len(sample) == 0:
        return None
    mat = np.median(sample / sample.sum(axis=1, keepdims=True), axis=0)
    # |p / s - mat| = |p - s mat| / s for a pixel p of channel sum s: one linear map, then its length over s
    offset = np.full((3, 1), _DARK_OFFSET)
    away = np.hstack([np.eye(3) - mat[:, None], offset - mat[:, None] * 3 * _DARK_OFFSET])
    total = np.array([[1.0, 1.0, 1.0, 3 * _DARK_OFFSET]])
    square_sum = np.array([[1.0, 1.0, 1.0]])
    image = np.ascontiguousarray(bgr)
    out = np.empty(image.shape[:2], np.uint8)
    # in bands of rows: the float copies stay small enough to be cached and reused rather than paged in afresh
    for top in range(0, image.shape[0], _BAND_ROWS):
        pixels = image[top : top + _BAND_ROWS].astype(np.float32)
        diff = cv2.transform(pixels, away)
        length = cv2.sqrt(cv2.transform(cv2.multiply(diff, diff), square_sum))
        out[top : top + _BAND_ROWS] = cv2.convertScaleAbs(cv2.divide(length, cv2.transform(pixels, total), scale=gain))
    if blur_px > 0:
        return np.asarray(cv2.GaussianBlur(out, (0, 0), blur_px), dtype=np.uint8)
    return out
