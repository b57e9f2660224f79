"""Frames as JPEG bytes: what the dashboard's viewers are sent and what a review keeps of each settled frame."""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from tableref.errors import JpegError


def encode_jpeg(image_bgr: NDArray[np.uint8], max_side_px: int, quality: int) -> bytes:
    """JPEG bytes of a frame scaled down (never up) to at most ``max_side_px`` on its long side, at ``quality``
    (1-100). Raises :class:`JpegError` when it cannot be encoded."""
    height, width = image_bgr.shape[:2]
    if height == 0 or width == 0:
        raise JpegError(f"cannot encode an empty frame ({width} x {height} px) as JPEG")
    scale = min(1.0, max_side_px / max(height, width))
    try:
        if scale < 1.0:
            size = (max(1, round(width * scale)), max(1, round(height * scale)))
            image_bgr = np.asarray(cv2.resize(image_bgr, size, interpolation=cv2.INTER_AREA), dtype=np.uint8)
        ok, data = cv2.imencode(".jpg", image_bgr, [cv2.IMWRITE_JPEG_QUALITY, quality])
    except cv2.error as exc:
        raise JpegError(f"OpenCV could not encode the frame as JPEG ({exc.err})") from None
    if not ok:
        raise JpegError("OpenCV could not encode the frame as JPEG")
    return bytes(data.tobytes())
