"""The synthetic camera: OpenCV's pinhole model with five distortion coefficients, posed over the table.

Frames. Table coordinates are millimetres with the table top at z = 0 and z up, towards the camera; x runs along
the width and y along the depth as in :mod:`calibration.spec`, so a picture taken from above with x to the right
has y pointing down the picture. Seen from above, that frame is left-handed, so OpenCV is handed ``(x, y, -z)``
instead (its "world" frame): right-handed, and a camera looking straight down with image x along table x then has
the identity rotation. ``rvec``/``tvec`` from :meth:`Camera.rvec_tvec` map that OpenCV world frame to the camera.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from synth.errors import SceneError

FloatArray = NDArray[np.float64]

# Newton's method on the distortion polynomial converges quadratically from the distorted point itself: four to six
# steps reach machine precision for every lens in this package's range (|k1| <= 0.3).
NEWTON_STEPS = 8
# Newton stops once no point moves by more than this (normalised units; 1e-13 is ~1e-10 px at fx = 1000).
NEWTON_TOLERANCE = 1e-13

# The distortion polynomial must stay monotonic out to the image corners, or two directions would land on one pixel.
_MONOTONIC_SAMPLES = 256
# ... checked out to this multiple of the image corner radius, so the Newton inverse has room at the corners.
LENS_CHECK_REACH = 1.15


@dataclass(frozen=True)
class Camera:
    """A camera over the table.

    Intrinsics in pixels (``fx, fy, cx, cy``; pixel centres at integer coordinates, as OpenCV counts them), lens
    distortion in OpenCV's order ``k1, k2, p1, p2, k3``, image size in pixels, and the pose: the centre of the lens
    in table millimetres (z up) and the table point it looks at. ``roll_deg`` turns the picture about the optical
    axis; at 0 the image's downward direction follows the table's +y as closely as the view allows.
    """

    image_width: int
    image_height: int
    fx: float
    fy: float
    cx: float
    cy: float
    k1: float
    k2: float
    p1: float
    p2: float
    k3: float
    position_mm: tuple[float, float, float]
    look_at_mm: tuple[float, float, float]
    roll_deg: float = 0.0

    def __post_init__(self) -> None:
        if self.image_width < 16 or self.image_height < 16:
            raise SceneError(f"camera image must be at least 16 x 16 px, got {self.image_width} x {self.image_height}")
        if not (self.fx > 0 and self.fy > 0):
            raise SceneError(f"camera focal lengths must be positive, got fx={self.fx}, fy={self.fy}")
        forward = np.subtract(self.look_at_mm, self.position_mm)
        if np.linalg.norm(forward) < 1.0:
            raise SceneError("camera look_at_mm must differ from position_mm")
        if abs(forward[1]) > 0.999 * np.linalg.norm(forward):
            raise SceneError("camera must not look along the table's y axis (the picture's up direction is undefined)")

    # -- OpenCV terms ------------------------------------------------------------------------------------------------

    def matrix(self) -> FloatArray:
        """(3, 3) camera matrix."""
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def dist_coeffs(self) -> FloatArray:
        """(5,) distortion coefficients ``k1, k2, p1, p2, k3``."""
        return np.array([self.k1, self.k2, self.p1, self.p2, self.k3])

    def rotation(self) -> FloatArray:
        """(3, 3) rotation from the OpenCV world frame ``(x, y, -z)`` to the camera frame (rows: camera x, y, z)."""
        return _look_rotation(self.position_mm, self.look_at_mm, self.roll_deg)

    def rvec_tvec(self) -> tuple[FloatArray, FloatArray]:
        """Rodrigues vector and translation (mm) for ``cv2.projectPoints`` of points in the OpenCV world frame."""
        rot = self.rotation()
        rvec, _ = cv2.Rodrigues(rot)
        tvec = -rot @ to_cv_frame(np.asarray(self.position_mm, dtype=np.float64))
        return np.asarray(rvec, dtype=np.float64).reshape(3), np.asarray(tvec, dtype=np.float64)

    def pose_json(self) -> dict[str, Any]:
        """The truth's ``camera_pose``: where the camera stands and looks, and OpenCV's rvec and tvec for it."""
        rvec, tvec = self.rvec_tvec()
        return {
            "position_mm": list(self.position_mm),
            "look_at_mm": list(self.look_at_mm),
            "roll_deg": self.roll_deg,
            "rvec": rvec.tolist(),
            "tvec": tvec.tolist(),
        }

    def to_json(self) -> dict[str, Any]:
        """The camera.json content: ``image_width``, ``image_height``, ``camera_matrix``, ``dist_coeffs``."""
        return {
            "image_width": self.image_width,
            "image_height": self.image_height,
            "camera_matrix": self.matrix().tolist(),
            "dist_coeffs": self.dist_coeffs().tolist(),
        }

    # -- geometry ---------------------------------------------------------------------------------------------------

    def project(self, points_mm: NDArray[np.floating[Any]]) -> FloatArray:
        """Pixel positions (N, 2) of table points (N, 3) in mm, z up, through the lens (``cv2.projectPoints``)."""
        pts = to_cv_frame(np.asarray(points_mm, dtype=np.float64).reshape(-1, 3))
        rvec, tvec = self.rvec_tvec()
        px, _ = cv2.projectPoints(pts, rvec, tvec, self.matrix(), self.dist_coeffs())
        return px.reshape(-1, 2).astype(np.float64)

    def normalized(self, u_px: FloatArray, v_px: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Ideal (undistorted) normalised image coordinates of pixel positions, by Newton's method on the lens
        polynomial: exact to machine precision, any array shape."""
        xd = (np.asarray(u_px, dtype=np.float64) - self.cx) / self.fx
        yd = (np.asarray(v_px, dtype=np.float64) - self.cy) / self.fy
        return undistort(xd, yd, self.dist_coeffs())

    def directions(self, xn: FloatArray, yn: FloatArray) -> FloatArray:
        """Unit ray directions (..., 3) in table coordinates (z up) for normalised image coordinates."""
        rot = self.rotation()
        # d_world = R^T (xn, yn, 1), then back from the OpenCV world frame to z up.
        d = np.empty((*np.shape(xn), 3))
        for axis, sign in ((0, 1.0), (1, 1.0), (2, -1.0)):
            d[..., axis] = sign * (xn * rot[0, axis] + yn * rot[1, axis] + rot[2, axis])
        d /= np.sqrt(np.einsum("...i,...i->...", d, d))[..., None]
        return d

    def rays(self, u_px: FloatArray, v_px: FloatArray) -> FloatArray:
        """Unit ray directions (..., 3), table frame, through pixel positions (exact inverse of the lens)."""
        return self.directions(*self.normalized(u_px, v_px))

    def mm_per_px(self) -> float:
        """Rough size of a pixel on the table at the image centre, in mm (for anti-aliasing widths and the like)."""
        u = np.array([self.cx, self.cx + 1.0, self.cx])
        v = np.array([self.cy, self.cy, self.cy + 1.0])
        hit = table_hits(np.asarray(self.position_mm, dtype=np.float64), self.rays(u, v))
        du, dv = hit[1, :2] - hit[0, :2], hit[2, :2] - hit[0, :2]
        return float(np.sqrt(abs(du[0] * dv[1] - du[1] * dv[0])))

    def check_lens(self) -> None:
        """Raise :class:`SceneError` when the distortion folds back inside the image (not a usable lens)."""
        corners_x = np.array([-self.cx, self.image_width - 1 - self.cx]) / self.fx
        corners_y = np.array([-self.cy, self.image_height - 1 - self.cy]) / self.fy
        r_max = LENS_CHECK_REACH * math.hypot(np.abs(corners_x).max(), np.abs(corners_y).max())
        r = np.linspace(0.0, r_max, _MONOTONIC_SAMPLES)
        radial = r * (1 + self.k1 * r**2 + self.k2 * r**4 + self.k3 * r**6)
        if np.any(np.diff(radial) <= 0):
            raise SceneError(
                f"lens k1={self.k1}, k2={self.k2}, k3={self.k3} folds back within the image; "
                "expected a distortion that keeps growing with the radius"
            )


def to_cv_frame(points: FloatArray) -> FloatArray:
    """Table points (..., 3), z up, in OpenCV's world frame (z down). The map is its own inverse."""
    out = np.array(points, dtype=np.float64, copy=True)
    out[..., 2] = -out[..., 2]
    return out


def _look_rotation(position: tuple[float, ...], target: tuple[float, ...], roll_deg: float) -> FloatArray:
    pos = to_cv_frame(np.asarray(position, dtype=np.float64))
    tgt = to_cv_frame(np.asarray(target, dtype=np.float64))
    forward = (tgt - pos) / np.linalg.norm(tgt - pos)
    down_hint = np.array([0.0, 1.0, 0.0])
    down = down_hint - (down_hint @ forward) * forward
    down /= np.linalg.norm(down)
    right = np.cross(down, forward)
    a = math.radians(roll_deg)
    right, down = math.cos(a) * right + math.sin(a) * down, -math.sin(a) * right + math.cos(a) * down
    return np.stack([right, down, forward])


def distort(xn: FloatArray, yn: FloatArray, dist: FloatArray) -> tuple[FloatArray, FloatArray]:
    """OpenCV's lens model: ideal normalised coordinates to distorted normalised coordinates."""
    k1, k2, p1, p2, k3 = (float(c) for c in dist)
    r2 = xn * xn + yn * yn
    radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
    xd = xn * radial + 2.0 * p1 * xn * yn + p2 * (r2 + 2.0 * xn * xn)
    yd = yn * radial + p1 * (r2 + 2.0 * yn * yn) + 2.0 * p2 * xn * yn
    return xd, yd


def undistort(xd: FloatArray, yd: FloatArray, dist: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Inverse of :func:`distort` by Newton's method (exact to machine precision for a monotonic lens)."""
    k1, k2, p1, p2, k3 = (float(c) for c in dist)
    x = np.array(xd, dtype=np.float64, copy=True)
    y = np.array(yd, dtype=np.float64, copy=True)
    for _ in range(NEWTON_STEPS):
        r2 = x * x + y * y
        radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
        d_radial = k1 + r2 * (2.0 * k2 + 3.0 * k3 * r2)
        ex = x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x) - xd
        ey = y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y - yd
        jxx = radial + 2.0 * x * x * d_radial + 2.0 * p1 * y + 6.0 * p2 * x
        jxy = 2.0 * x * y * d_radial + 2.0 * p1 * x + 2.0 * p2 * y
        jyy = radial + 2.0 * y * y * d_radial + 6.0 * p1 * y + 2.0 * p2 * x
        det = jxx * jyy - jxy * jxy
        step_x = (jyy * ex - jxy * ey) / det
        step_y = (jxx * ey - jxy * ex) / det
        x -= step_x
        y -= step_y
        if x.size == 0 or max(float(np.abs(step_x).max()), float(np.abs(step_y).max())) < NEWTON_TOLERANCE:
            break
    return x, y


def table_hits(origin: FloatArray, directions: FloatArray) -> FloatArray:
    """Points (..., 3) where rays from ``origin`` meet the table plane z = 0 (rays must point down)."""
    t = -origin[2] / directions[..., 2]
    return np.asarray(origin + t[..., None] * directions, dtype=np.float64)
