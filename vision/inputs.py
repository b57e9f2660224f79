"""The detector's input checks: the image as 8-bit grey, the pixel scale, the ignore mask."""

from __future__ import annotations

import math

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.errors import ImageError, MaskError, ScaleError
from vision.settings import VisionSettings

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


# Below this radius (px) a rim is too short for rays to say anything sub-pixel about it.
MIN_BASE_RADIUS_PX = 6.0


def grey_image(image: object) -> NDArray[np.uint8]:
    """The image as contiguous 8-bit grey (H, W); raises ImageError when it is no image."""
    if not isinstance(image, np.ndarray):
        raise ImageError(f"expected the top-down image as a numpy array (H, W, 3) uint8, got {type(image).__name__}")
    if image.dtype != np.uint8:
        raise ImageError(f"expected a uint8 image (8-bit BGR), got dtype {image.dtype}")
    if not (image.ndim == 2 or (image.ndim == 3 and image.shape[2] == 3)):
        raise ImageError(f"expected a BGR image of shape (H, W, 3) or a grey one (H, W), got shape {image.shape}")
    if image.shape[0] < 2 or image.shape[1] < 2:
        raise ImageError(f"the image is {image.shape[1]} x {image.shape[0]} px; expected at least 2 x 2")
    if image.ndim == 2:
        return np.ascontiguousarray(image)
    return np.asarray(cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_BGR2GRAY), dtype=np.uint8)


def check_scale(px_per_mm: object, settings: VisionSettings) -> float:
    if isinstance(px_per_mm, bool) or not isinstance(px_per_mm, int | float | np.floating | np.integer):
        raise ScaleError(f"px_per_mm must be a number, got {px_per_mm!r}")
    scale = float(px_per_mm)
    if not math.isfinite(scale) or scale <= 0:
        raise ScaleError(f"px_per_mm must be a positive number, got {px_per_mm!r}")
    smallest = min(settings.base_sizes_mm)
    if smallest / 2 * scale < MIN_BASE_RADIUS_PX:
        need = 2 * MIN_BASE_RADIUS_PX / smallest
        raise ScaleError(
            f"at {scale:g} px/mm a {smallest:g} mm base is {smallest * scale:.1f} px across; "
            f"expected at least {need:.2f} px/mm"
        )
    return scale


def check_mask(mask: object, shape: tuple[int, ...]) -> NDArray[np.uint8] | None:
    if mask is None:
        return None
    if not isinstance(mask, np.ndarray) or mask.dtype not in (np.uint8, np.bool_):
        raise MaskError("expected the ignore mask as a uint8 (or bool) numpy array, nonzero where to ignore")
    if mask.shape != shape[:2]:
        raise MaskError(f"the ignore mask has shape {mask.shape}; expected the image's {shape[:2]}")
    return np.ascontiguousarray(mask.astype(np.uint8))
