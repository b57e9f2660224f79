"""The camera model: pinhole intrinsics and lens distortion in OpenCV's terms, read from and written to camera.json.

camera.json::

    {"image_width": W, "image_height": H,
     "camera_matrix": [[fx, 0, cx], [0, fy, cy], [0, 0, 1]],
     "dist_coeffs": [k1, k2, p1, p2, k3]}

Pixel coordinates follow OpenCV: the centre of the top-left pixel is (0, 0). "Undistorted" pixels are where a
point would appear through an ideal lens with the same camera matrix.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import ArrayLike, NDArray

from calibration.errors import CameraFileError, CameraMismatchError
from calibration.files import read_json

# Two frame sizes have the same aspect when their width and height scale factors agree this closely; anything
# larger is a crop, and which part was cropped cannot be known.
ASPECT_TOLERANCE = 1e-3

# Iterative undistortion: 20 steps to 1e-12 reach machine precision even for strong barrel distortion, where
# OpenCV's default of 5 steps leaves errors of ~1e-4 px.
_UNDISTORT_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 20, 1e-12)

# camera.json stores the classic 5-coefficient model; 4 coefficients (no k3) are accepted and padded with k3 = 0.
N_DIST_COEFFS = 5
# OpenCV's longer lens models: rational (8), with thin prism (12), with a tilted sensor (14).
_LONGER_MODELS = (8, 12, 14)


def _readonly(array: NDArray[np.float64]) -> NDArray[np.float64]:
    array.flags.writeable = False
    return array


def as_points(points: ArrayLike, name: str) -> NDArray[np.float64]:
    """``points`` as a float64 (N, 2) array; a single (2,) point becomes (1, 2). Raises ValueError otherwise."""
    arr = np.asarray(points, dtype=np.float64)
    if arr.ndim == 1 and arr.shape[0] == 2:
        arr = arr.reshape(1, 2)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must have shape (N, 2), got {arr.shape}")
    return arr


@dataclass(frozen=True, eq=False)
class CameraModel:
    """A calibrated camera for frames of ``image_width`` x ``image_height`` pixels.

    ``camera_matrix`` is (3, 3) [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] in pixels; ``dist_coeffs`` is (5,)
    [k1, k2, p1, p2, k3] of OpenCV's radial-tangential model. Both are read-only copies.
    """

    image_width: int
    image_height: int
    camera_matrix: NDArray[np.float64]
    dist_coeffs: NDArray[np.float64]

    def __post_init__(self) -> None:
        k = np.array(self.camera_matrix, dtype=np.float64)
        d = np.array(self.dist_coeffs, dtype=np.float64).reshape(-1)
        _check_camera(self.image_width, self.image_height, k, d, "camera model")
        if d.shape[0] == N_DIST_COEFFS - 1:
            d = np.append(d, 0.0)
        object.__setattr__(self, "camera_matrix", _readonly(k))
        object.__setattr__(self, "dist_coeffs", _readonly(d))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CameraModel):
            return NotImplemented
        return (
            self.image_width == other.image_width
            and self.image_height == other.image_height
            and np.array_equal(self.camera_matrix, other.camera_matrix)
            and np.array_equal(self.dist_coeffs, other.dist_coeffs)
        )

    def __hash__(self) -> int:
        return hash((self.image_width, self.image_height, self.camera_matrix.tobytes(), self.dist_coeffs.tobytes()))

    @property
    def image_size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return (self.image_width, self.image_height)

    def scaled_to(self, width: int, height: int) -> CameraModel:
        """The same camera for frames of ``width`` x ``height`` pixels (a 4K calibration used on 1080p frames).

        Raises :class:`CameraMismatchError` when the aspect differs (a cropped frame cannot be mapped back).
        """
        if (width, height) == self.image_size:
            return self
        sx = width / self.image_width
        sy = height / self.image_height
        if abs(sx - sy) > ASPECT_TOLERANCE * max(sx, sy):
            raise CameraMismatchError(
                f"the camera model is for {self.image_width}x{self.image_height} frames and cannot be scaled to "
                f"{width}x{height} (another aspect ratio); expected a frame of the same aspect, or a camera.json "
                "calibrated at this size"
            )
        k = self.camera_matrix.copy()
        k[0, :] *= sx
        k[1, :] *= sy
        # Pixel centres sit at integer coordinates, so the image edge is at -0.5 and scales about that.
        k[0, 2] = (self.camera_matrix[0, 2] + 0.5) * sx - 0.5
        k[1, 2] = (self.camera_matrix[1, 2] + 0.5) * sy - 0.5
        return CameraModel(width, height, k, self.dist_coeffs.copy())

    def normalize(self, points_px: ArrayLike) -> NDArray[np.float64]:
        """Real (distorted) pixels (N, 2) -> ideal normalised image coordinates (N, 2): x = X/Z, y = Y/Z."""
        pts = as_points(points_px, "points_px")
        if pts.shape[0] == 0:
            return np.zeros((0, 2))
        out = cv2.undistortPoints(
            pts.reshape(-1, 1, 2), self.camera_matrix, self.dist_coeffs, criteria=_UNDISTORT_CRITERIA
        )
        return np.asarray(out, dtype=np.float64).reshape(-1, 2)

    def undistort_points(self, points_px: ArrayLike) -> NDArray[np.float64]:
        """Real (distorted) pixels (N, 2) -> undistorted pixels (N, 2) with the same camera matrix."""
        return self._to_pixels(self.normalize(points_px))

    def distort_normalized(self, points_norm: ArrayLike) -> NDArray[np.float64]:
        """Ideal normalised coordinates (N, 2) -> real (distorted) pixels (N, 2), OpenCV's 5-coefficient model."""
        xy = as_points(points_norm, "points_norm")
        k1, k2, p1, p2, k3 = (float(c) for c in self.dist_coeffs)
        x = xy[:, 0]
        y = xy[:, 1]
        r2 = x * x + y * y
        radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
        xd = x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x)
        yd = y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y
        return self._to_pixels(np.column_stack([xd, yd]))

    def distort_points(self, points_px: ArrayLike) -> NDArray[np.float64]:
        """Undistorted pixels (N, 2) -> real (distorted) pixels (N, 2): the inverse of :meth:`undistort_points`."""
        pts = as_points(points_px, "points_px")
        k = self.camera_matrix
        y = (pts[:, 1] - k[1, 2]) / k[1, 1]
        x = (pts[:, 0] - k[0, 2]) / k[0, 0]
        return self.distort_normalized(np.column_stack([x, y]))

    def _to_pixels(self, xy: NDArray[np.float64]) -> NDArray[np.float64]:
        k = self.camera_matrix
        u = k[0, 0] * xy[:, 0] + k[0, 2]
        v = k[1, 1] * xy[:, 1] + k[1, 2]
        return np.column_stack([u, v])

    def to_dict(self) -> dict[str, Any]:
        """The camera.json document."""
        return {
            "image_width": self.image_width,
            "image_height": self.image_height,
            "camera_matrix": self.camera_matrix.tolist(),
            "dist_coeffs": self.dist_coeffs.tolist(),
        }


# No camera's picture is wider or taller than this (px).
MAX_IMAGE_SIDE_PX = 100_000
# Whole numbers beyond this lose digits as floats.
_LARGEST_WHOLE = 2**53
# No lens bends so far (a fisheye's k1 is about -0.5, its k3 a few units): coefficients of 1e308 overflow the
# projection of the table's corners.
MAX_DIST_COEFF = 1000.0


def _check_camera(width: Any, height: Any, k: NDArray[np.float64], d: NDArray[np.float64], where: str) -> None:
    for name, value in (("image_width", width), ("image_height", height)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_IMAGE_SIDE_PX:
            shown = f"a number of {len(str(value))} digits" if isinstance(value, int) and value > 10**9 else repr(value)
            raise CameraFileError(
                f"{where}: {name} must be a whole number of pixels from 1 to {MAX_IMAGE_SIDE_PX}, got {shown}"
            )
    if k.shape != (3, 3) or not np.all(np.isfinite(k)):
        raise CameraFileError(f"{where}: camera_matrix must be 3x3 finite numbers, got shape {k.shape}")
    if k[0, 0] <= 0 or k[1, 1] <= 0:
        raise CameraFileError(f"{where}: camera_matrix focal lengths fx, fy must be positive, got {k[0, 0]}, {k[1, 1]}")
    # OpenCV's distortion functions ignore skew, so a skewed matrix would silently be used wrong.
    if k[0, 1] != 0 or k[1, 0] != 0 or k[2, 0] != 0 or k[2, 1] != 0 or k[2, 2] != 1:
        raise CameraFileError(
            f"{where}: camera_matrix must look like [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] (no skew), got {k.tolist()}"
        )
    if d.shape[0] not in (N_DIST_COEFFS - 1, N_DIST_COEFFS) or not np.all(np.abs(d) <= MAX_DIST_COEFF):
        raise CameraFileError(
            f"{where}: dist_coeffs must be 5 finite numbers [k1, k2, p1, p2, k3] (or 4 without k3) of at most "
            f"{MAX_DIST_COEFF:g} in size, got {d.tolist()}"
        )


def _matrix(value: Any, where: str) -> NDArray[np.float64]:
    ok = (
        isinstance(value, list)
        and len(value) == 3
        and all(isinstance(row, list) and len(row) == 3 for row in value)
        and all(_is_number(v) for row in value for v in row)
    )
    if not ok:
        raise CameraFileError(f"{where}: camera_matrix must be 3 rows of 3 numbers, got {value!r}")
    return np.array(value, dtype=np.float64)


def _is_number(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        # a whole number too large for a float is no camera's parameter (and math.isfinite would overflow on it)
        return abs(value) <= _LARGEST_WHOLE
    return isinstance(value, float) and math.isfinite(value)


def _opencv_matrix(value: Any) -> Any:
    """A matrix as OpenCV's FileStorage writes it to JSON ({"type_id": "opencv-matrix", "rows", "cols", "data"}) as
    nested lists; any other value as it is."""
    if not (isinstance(value, dict) and value.get("type_id") == "opencv-matrix"):
        return value
    rows, cols, data = value.get("rows"), value.get("cols"), value.get("data")
    if not (isinstance(rows, int) and isinstance(cols, int) and isinstance(data, list) and len(data) == rows * cols):
        return value
    return [data[r * cols : (r + 1) * cols] for r in range(rows)]


def _classic_coeffs(d: NDArray[np.float64], where: str) -> NDArray[np.float64]:
    """OpenCV's longer lens models (8, 12 or 14 coefficients) as the classic five where their further terms are 0:
    the lens is the same."""
    if d.shape[0] not in _LONGER_MODELS:
        return d
    if np.any(d[N_DIST_COEFFS:] != 0):
        raise CameraFileError(
            f"{where}: dist_coeffs has {d.shape[0]} coefficients and the terms after k3 are not 0 ({d.tolist()}); only "
            "the classic model [k1, k2, p1, p2, k3] is supported: calibrate again without the rational, thin-prism "
            "or tilt terms"
        )
    return d[:N_DIST_COEFFS]


def camera_from_dict(data: Any, where: str = "camera") -> CameraModel:
    """Build a camera from a parsed camera.json document (or from the JSON OpenCV's FileStorage writes, as its
    calibration sample does: ``distortion_coefficients`` for ``dist_coeffs``, matrices as "opencv-matrix" objects).
    Raises :class:`CameraFileError` naming the bad key."""
    if not isinstance(data, dict):
        raise CameraFileError(
            f"{where}: expected a JSON object with image_width, image_height, camera_matrix, dist_coeffs"
        )
    if "dist_coeffs" not in data and "distortion_coefficients" in data:
        data = {**data, "dist_coeffs": data["distortion_coefficients"]}
    missing = [key for key in ("image_width", "image_height", "camera_matrix", "dist_coeffs") if key not in data]
    if missing:
        raise CameraFileError(f"{where}: missing {', '.join(missing)}")
    k = _matrix(_opencv_matrix(data["camera_matrix"]), where)
    coeffs = _opencv_matrix(data["dist_coeffs"])
    if isinstance(coeffs, list) and len(coeffs) == 1 and isinstance(coeffs[0], list):
        coeffs = coeffs[0]  # OpenCV writes a 1x5 matrix; accept it as well as a flat list
    if not isinstance(coeffs, list) or not all(_is_number(c) for c in coeffs):
        raise CameraFileError(f"{where}: dist_coeffs must be a list of numbers [k1, k2, p1, p2, k3], got {coeffs!r}")
    d = _classic_coeffs(np.array(coeffs, dtype=np.float64), where)
    _check_camera(data["image_width"], data["image_height"], k, d, where)
    return CameraModel(data["image_width"], data["image_height"], k, d)


def load_camera(path: str | Path) -> CameraModel:
    """Read camera.json. Raises :class:`CameraFileError` for a missing, unreadable or invalid file."""
    data = read_json(path, "a camera.json from 'tableref calibrate-camera'", CameraFileError)
    return camera_from_dict(data, str(path))


def save_camera(model: CameraModel, path: str | Path) -> None:
    """Write camera.json (see the module docstring for the format). Raises :class:`CameraFileError` if it cannot."""
    data = model.to_dict()
    # One matrix row per line: readable, and still plain JSON.
    rows = ",\n    ".join(json.dumps(row) for row in data["camera_matrix"])
    text = (
        "{\n"
        f'  "image_width": {data["image_width"]},\n'
        f'  "image_height": {data["image_height"]},\n'
        f'  "camera_matrix": [\n    {rows}\n  ],\n'
        f'  "dist_coeffs": {json.dumps(data["dist_coeffs"])}\n'
        "}\n"
    )
    try:
        Path(path).write_text(text, "utf-8")
    except OSError as exc:
        raise CameraFileError(f"{path}: cannot write it ({exc.strerror or exc})") from None
