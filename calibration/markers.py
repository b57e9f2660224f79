"""Finding the table's ArUco markers in a frame, with sub-pixel corners.

Markers are found on a copy of the frame scaled down to at most ``detect_max_side_px`` (the search is the slow
part and needs no fine detail), then each corner is refined on the full-resolution frame with
``cv2.cornerSubPix``. OpenCV's own refinement is skipped on purpose: run on the scaled copy it would throw away
the resolution that the refinement is for.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.errors import ImageError
from calibration.settings import CalibrationSettings

# Dictionaries tried, only when none of the spec's markers was found, to tell the user that the markers in view
# belong to another dictionary. The 1000-id versions contain the smaller ones of the same bit size.
HINT_DICTIONARIES = (
    "DICT_4X4_1000",
    "DICT_5X5_1000",
    "DICT_6X6_1000",
    "DICT_7X7_1000",
    "DICT_ARUCO_ORIGINAL",
    "DICT_APRILTAG_36h11",
)


@dataclass(frozen=True, eq=False)
class MarkerDetections:
    """Markers found in one frame: ``ids`` (N,) and ``corners_px`` (N, 4, 2) in real frame pixels, corners in
    OpenCV's order (top-left, top-right, bottom-right, bottom-left of the printed marker). Read-only arrays."""

    ids: NDArray[np.int64]
    corners_px: NDArray[np.float64]

    def __post_init__(self) -> None:
        ids = np.array(self.ids, dtype=np.int64).reshape(-1)
        corners = np.array(self.corners_px, dtype=np.float64).reshape(-1, 4, 2)
        if corners.shape[0] != ids.shape[0]:
            raise ValueError(f"{ids.shape[0]} ids but {corners.shape[0]} corner sets")
        ids.flags.writeable = False
        corners.flags.writeable = False
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "corners_px", corners)

    def __len__(self) -> int:
        return int(self.ids.shape[0])


def to_gray(image: object, min_side_px: int) -> NDArray[np.uint8]:
    """A usable 8-bit frame (H, W), (H, W, 3) BGR or (H, W, 4) BGRA as a grey (H, W) uint8 image.

    Raises :class:`ImageError` for None, a non-array, an empty or too small frame, or another pixel type.
    """
    if image is None:
        raise ImageError("no image: expected a decoded frame (a numpy array), got None (unreadable file?)")
    if not isinstance(image, np.ndarray):
        raise ImageError(f"expected a decoded frame as a numpy array, got {type(image).__name__}")
    if image.size == 0:
        raise ImageError(f"the image is empty (shape {image.shape}); expected a decoded frame")
    if image.dtype != np.uint8:
        raise ImageError(f"expected an 8-bit image (uint8), got {image.dtype}")
    if image.ndim == 3 and image.shape[2] == 1:
        image = image[:, :, 0]
    if image.ndim == 2:
        gray = image
    elif image.ndim == 3 and image.shape[2] == 3:
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    elif image.ndim == 3 and image.shape[2] == 4:
        gray = cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY)
    else:
        raise ImageError(f"expected a grey, BGR or BGRA image, got shape {image.shape}")
    height, width = gray.shape
    if min(width, height) < min_side_px:
        raise ImageError(
            f"the image is {width}x{height} pixels, too small to calibrate; expected at least {min_side_px} "
            "pixels on the shorter side"
        )
    return np.ascontiguousarray(gray)


def _detector(dictionary: cv2.aruco.Dictionary) -> cv2.aruco.ArucoDetector:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_NONE
    return cv2.aruco.ArucoDetector(dictionary, params)


def _detect_raw(
    gray: NDArray[np.uint8], dictionary: cv2.aruco.Dictionary
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    corners, ids, _ = _detector(dictionary).detectMarkers(gray)
    if ids is None or len(corners) == 0:  # OpenCV gives None, not an empty array, when nothing is found
        return np.zeros(0, dtype=np.int64), np.zeros((0, 4, 2))
    return np.asarray(ids, dtype=np.int64).reshape(-1), np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)


def _scaled(gray: NDArray[np.uint8], max_side_px: int) -> tuple[NDArray[np.uint8], float]:
    scale = min(1.0, max_side_px / max(gray.shape))
    if scale >= 1.0:
        return gray, 1.0
    small = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return np.asarray(small, dtype=np.uint8), scale


def detect_markers(
    gray: NDArray[np.uint8], dictionary: cv2.aruco.Dictionary, settings: CalibrationSettings
) -> MarkerDetections:
    """Every marker of ``dictionary`` in the grey frame ``gray`` (H, W), corners refined to sub-pixel at full
    resolution. Returns empty arrays when nothing is found."""
    small, scale = _scaled(gray, settings.detect_max_side_px)
    ids, corners = _detect_raw(small, dictionary)
    if len(ids) == 0:
        return MarkerDetections(ids, corners)
    # Pixel centres sit at integer coordinates: the scaled copy's pixel i covers full-size [i, i + 1) / scale.
    corners = (corners + 0.5) / scale - 0.5
    cells = int(dictionary.markerSize) + 2
    criteria = (
        cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS,
        settings.corner_refine_iterations,
        settings.corner_refine_epsilon_px,
    )
    refined = np.empty_like(corners)
    for n, quad in enumerate(corners):
        side_px = float(np.mean(np.linalg.norm(quad - np.roll(quad, 1, axis=0), axis=1)))
        half = round(settings.corner_window_cell_fraction * side_px / cells)
        # Below 2 px the window sees too few gradient pixels to pin a corner down.
        half = int(max(2, min(settings.corner_window_max_px, half)))
        pts = quad.astype(np.float32).reshape(-1, 1, 2)
        out = cv2.cornerSubPix(gray, pts, (half, half), (-1, -1), criteria)
        refined[n] = np.asarray(out, dtype=np.float64).reshape(4, 2)
    return MarkerDetections(ids, refined)


def dictionaries_in_view(gray: NDArray[np.uint8], settings: CalibrationSettings) -> tuple[str, ...]:
    """Names of the :data:`HINT_DICTIONARIES` with markers in the frame (slow: only for error messages)."""
    small, _ = _scaled(gray, settings.detect_max_side_px)
    found = []
    for name in HINT_DICTIONARIES:
        ids, _ = _detect_raw(small, cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, name)))
        if len(ids):
            found.append(name)
    return tuple(found)
