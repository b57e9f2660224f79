"""The top-down view a frame is measured in: its scale, the markers masked out of it, how base rims stretch in it,
and the smoothing of a compressed frame."""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.spec import TableSpec
from calibration.table import TableCalibration, table_to_rectified
from tableref.settings import PipelineSettings
from vision.parallax import RimParallax


def rectified_scale(calibration: TableCalibration, settings: PipelineSettings) -> float:
    """px per mm of the top-down view: the frame's own scale, clamped to the settings' range."""
    return float(np.clip(calibration.px_per_mm, settings.min_rectified_px_per_mm, settings.max_rectified_px_per_mm))


def marker_mask(spec: TableSpec, px_per_mm: float, size_px: tuple[int, int], margin_mm: float) -> NDArray[np.uint8]:
    """(H, W) uint8 mask of a top-down view, nonzero over the spec's markers (grown by ``margin_mm``)."""
    width, height = size_px
    mask = np.zeros((height, width), dtype=np.uint8)
    for m in spec.markers:
        grown = type(m)(m.id, m.size_mm + 2.0 * margin_mm, m.x_mm, m.y_mm, m.rotation_deg)
        corners = table_to_rectified(grown.corners_mm(), px_per_mm)
        cv2.fillConvexPoly(mask, np.round(corners).astype(np.int32), 255)
    return mask


def rim_parallax(calibration: TableCalibration, px_per_mm: float, rim_height_mm: float) -> RimParallax | None:
    """How base walls of ``rim_height_mm`` stretch outlines in the top-down view at ``px_per_mm`` (None when the
    camera position is unknown)."""
    if not calibration.heights_corrected or rim_height_mm <= 0:
        return None
    assert calibration.camera_position_mm is not None
    nadir = table_to_rectified(calibration.camera_position_mm[None, :2], px_per_mm)[0]
    height = float(calibration.camera_position_mm[2])
    return RimParallax((float(nadir[0]), float(nadir[1])), rim_height_mm / (height - rim_height_mm))


def smoothed(view: NDArray[np.uint8], blur_px: float) -> NDArray[np.uint8]:
    """``view`` smoothed by a Gaussian of ``blur_px`` (0: the view itself): a compressed frame's block edges, which
    read as rims, fade under it (:func:`tableref.sources.deblock_blur_px`)."""
    return view if blur_px <= 0 else np.asarray(cv2.GaussianBlur(view, (0, 0), blur_px), dtype=np.uint8)
