"""What a camera's sensor adds to the light it gets, for both renderers: optics blur, noise, 8-bit quantisation."""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray


def develop(
    radiance: NDArray[np.float32], blur_px: float, read_noise: float, shot_noise: float, rng: np.random.Generator
) -> NDArray[np.uint8]:
    """``radiance`` (H, W, 3) float32 (1 is white) as 8-bit pixels: blurred by ``blur_px``, with sensor noise in grey
    levels (``read_noise``, and shot noise that grows with the signal, ``shot_noise`` at white) drawn from ``rng``."""
    signal = np.asarray(radiance * np.float32(255.0), dtype=np.float32)
    if blur_px > 0:
        signal = np.asarray(cv2.GaussianBlur(signal, (0, 0), blur_px), dtype=np.float32)
    if read_noise > 0 or shot_noise > 0:
        # in place: a frame's worth of temporaries costs more than the arithmetic
        spread = np.clip(signal, 0.0, None)
        spread *= np.float32(shot_noise**2)
        spread /= np.float32(255.0)
        spread += np.float32(read_noise**2)
        np.sqrt(spread, out=spread)
        noise = rng.standard_normal(signal.shape, dtype=np.float32)
        noise *= spread
        signal += noise
    np.rint(signal, out=signal)
    np.clip(signal, 0, 255, out=signal)
    return signal.astype(np.uint8)
