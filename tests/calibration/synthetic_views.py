"""Synthetic camera views of a table with its ArUco markers (and of ChArUco boards), with exact ground truth.

The scene is evaluated point by point (no texture resampling): every output pixel is the mean of
``supersample`` x ``supersample`` samples, each traced from the real (distorted) pixel through the lens to the
table plane. Table frame for poses: x, y as in the spec, z = x cross y, which points into the table, so a camera
above the table has a negative z.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.spec import TableSpec

# Grey levels of the synthetic scene.
MAT_LEVEL = 105.0
FLOOR_LEVEL = 45.0
WHITE_LEVEL = 235.0
BLACK_LEVEL = 25.0

# Exact ray tracing on every COARSE-th sub-sample, bilinear in between: the mapping is so smooth that this is off
# by about 0.001 px, and it is 64 times faster.
COARSE = 8
_EXACT = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 1e-13)


@dataclass(frozen=True)
class View:
    """A camera: intrinsics, distortion, pose (table -> camera) and frame size."""

    camera_matrix: NDArray[np.float64]
    dist_coeffs: NDArray[np.float64]
    rvec: NDArray[np.float64]
    tvec: NDArray[np.float64]
    width: int
    height: int

    def project(self, points_xyz: NDArray[np.float64]) -> NDArray[np.float64]:
        """(N, 3) table-frame points (z into the table) -> (N, 2) real frame pixels."""
        pts, _ = cv2.projectPoints(
            np.asarray(points_xyz, dtype=np.float64).reshape(-1, 1, 3),
            self.rvec,
            self.tvec,
            self.camera_matrix,
            self.dist_coeffs,
        )
        return np.asarray(pts, dtype=np.float64).reshape(-1, 2)

    def project_table(self, points_mm: NDArray[np.float64], height_mm: float = 0.0) -> NDArray[np.float64]:
        """(N, 2) table points at ``height_mm`` above the table -> (N, 2) real frame pixels."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        return self.project(np.column_stack([pts, np.full(len(pts), -height_mm)]))

    @property
    def centre_mm(self) -> NDArray[np.float64]:
        """Camera centre in the table frame (z negative: above the table)."""
        rot, _ = cv2.Rodrigues(self.rvec)
        return np.asarray(-rot.T @ self.tvec.reshape(3), dtype=np.float64)

    def pixel_to_table(self, pixels: NDArray[np.float64]) -> NDArray[np.float64]:
        """(N, 2) real pixels -> (N, 2) table-plane points (z = 0) seen there; NaN when the ray misses."""
        norm = cv2.undistortPoints(
            pixels.reshape(-1, 1, 2).astype(np.float64), self.camera_matrix, self.dist_coeffs, criteria=_EXACT
        ).reshape(-1, 2)
        rot, _ = cv2.Rodrigues(self.rvec)
        rays = np.column_stack([norm, np.ones(len(norm))]) @ rot  # camera -> table frame: R^T d, row-wise
        centre = self.centre_mm
        with np.errstate(divide="ignore", invalid="ignore"):
            s = -centre[2] / rays[:, 2]
        s[s <= 0] = np.nan
        return np.asarray(centre[:2] + rays[:, :2] * s[:, None], dtype=np.float64)


def look_at(
    centre_mm: tuple[float, float, float],
    target_mm: tuple[float, float, float],
    camera_matrix: NDArray[np.float64],
    dist_coeffs: NDArray[np.float64],
    width: int,
    height: int,
    roll_deg: float = 0.0,
) -> View:
    """A camera at ``centre_mm`` (table frame, z < 0 above the table) looking at ``target_mm``, image x roughly
    along table +x, then rolled about its axis by ``roll_deg``."""
    c = np.asarray(centre_mm, dtype=np.float64)
    z = np.asarray(target_mm, dtype=np.float64) - c
    z /= np.linalg.norm(z)
    x = np.array([1.0, 0.0, 0.0]) - z[0] * z
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    a = math.radians(roll_deg)
    x, y = math.cos(a) * x + math.sin(a) * y, -math.sin(a) * x + math.cos(a) * y
    rot = np.vstack([x, y, z])
    rvec, _ = cv2.Rodrigues(rot)
    tvec = -rot @ c
    return View(np.asarray(camera_matrix, float), np.asarray(dist_coeffs, float), rvec.reshape(3), tvec, width, height)


def _sample_points(view: View, supersample: int) -> NDArray[np.float64]:
    """Table (x, y) of every sub-sample, shape (H * n, W * n, 2)."""
    n = supersample
    fine_w, fine_h = view.width * n, view.height * n
    cw, ch = fine_w // COARSE + 2, fine_h // COARSE + 2
    gu, gv = np.meshgrid(np.arange(cw) * COARSE, np.arange(ch) * COARSE)
    fine = np.column_stack([gu.ravel(), gv.ravel()]).astype(np.float64)
    pixels = (fine + 0.5) / n - 0.5
    coarse = view.pixel_to_table(pixels).reshape(ch, cw, 2).astype(np.float32)
    fu, fv = np.meshgrid(np.arange(fine_w, dtype=np.float32) / COARSE, np.arange(fine_h, dtype=np.float32) / COARSE)
    dense = cv2.remap(coarse, fu, fv, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(dense, dtype=np.float64)


def _footprint(
    view: View, x_mm: float, y_mm: float, radius_mm: float, n: int, shape: tuple[int, ...]
) -> tuple[slice, slice]:
    """Rows and columns of the sub-sample grid that can see the disc of ``radius_mm`` around (x_mm, y_mm)."""
    a = np.linspace(0.0, 2.0 * math.pi, 32, endpoint=False)
    ring = np.column_stack([x_mm + radius_mm * np.cos(a), y_mm + radius_mm * np.sin(a)])
    fine = (view.project_table(ring) + 0.5) * n - 0.5
    lo = np.floor(fine.min(axis=0)).astype(int) - 2 * n
    hi = np.ceil(fine.max(axis=0)).astype(int) + 2 * n
    return slice(max(lo[1], 0), max(min(hi[1], shape[0]), 0)), slice(max(lo[0], 0), max(min(hi[0], shape[1]), 0))


def _marker_cells(spec: TableSpec, marker_id: int) -> NDArray[np.float64]:
    dictionary = spec.aruco_dictionary()
    cells = int(dictionary.markerSize) + 2
    img = cv2.aruco.generateImageMarker(dictionary, marker_id, cells)
    return np.where(img > 127, WHITE_LEVEL, BLACK_LEVEL)


def render_table(
    spec: TableSpec,
    view: View,
    *,
    supersample: int = 3,
    quiet_zone_fraction: float = 0.15,
    marker_ids: tuple[int, ...] | None = None,
    noise_sigma: float = 1.5,
    blur_sigma_px: float = 0.0,
    seed: int = 0,
) -> NDArray[np.uint8]:
    """A grey frame of the table and its markers seen by ``view``. ``marker_ids`` limits the markers drawn."""
    xy = _sample_points(view, supersample)
    x, y = xy[..., 0], xy[..., 1]
    values = np.full(x.shape, FLOOR_LEVEL)
    on_table = (x >= 0) & (x <= spec.width_mm) & (y >= 0) & (y <= spec.depth_mm)
    values[on_table] = MAT_LEVEL
    n = supersample
    for m in spec.markers:
        if marker_ids is not None and m.id not in marker_ids:
            continue
        h = m.size_mm / 2.0
        outer = h * (1.0 + 2.0 * quiet_zone_fraction)
        rows, cols = _footprint(view, m.x_mm, m.y_mm, outer * math.sqrt(2.0), n, values.shape)
        x, y = xy[rows, cols, 0], xy[rows, cols, 1]
        patch = values[rows, cols]
        cells = _marker_cells(spec, m.id)
        a = math.radians(m.rotation_deg)
        dx, dy = x - m.x_mm, y - m.y_mm
        lx = math.cos(a) * dx + math.sin(a) * dy
        ly = -math.sin(a) * dx + math.cos(a) * dy
        near = (np.abs(lx) <= outer) & (np.abs(ly) <= outer)
        patch[near] = WHITE_LEVEL
        inside = near & (np.abs(lx) < h) & (np.abs(ly) < h)
        n_cells = cells.shape[0]
        ci = np.clip(((lx[inside] + h) / m.size_mm * n_cells).astype(int), 0, n_cells - 1)
        cj = np.clip(((ly[inside] + h) / m.size_mm * n_cells).astype(int), 0, n_cells - 1)
        patch[inside] = cells[cj, ci]
    n = supersample
    frame = values.reshape(view.height, n, view.width, n).mean(axis=(1, 3))
    return finish(frame, noise_sigma, blur_sigma_px, seed)


def finish(frame: NDArray[np.float64], noise_sigma: float, blur_sigma_px: float, seed: int) -> NDArray[np.uint8]:
    """Blur, add seeded Gaussian noise, round to uint8."""
    if blur_sigma_px > 0:
        frame = cv2.GaussianBlur(frame, (0, 0), blur_sigma_px)
    rng = np.random.default_rng(seed)
    frame = frame + rng.normal(0.0, noise_sigma, frame.shape)
    return np.clip(np.rint(frame), 0, 255).astype(np.uint8)


def render_board(
    board_gray: NDArray[np.uint8],
    board_px_per_mm: float,
    view: View,
    *,
    supersample: int = 2,
    noise_sigma: float = 1.5,
    seed: int = 0,
) -> NDArray[np.uint8]:
    """A frame of a flat printed image (``board_gray``, pixel (u, v) centre at ((u + 0.5), (v + 0.5)) /
    ``board_px_per_mm`` mm on the plane z = 0) seen by ``view``; the surroundings are a mid-grey floor."""
    xy = _sample_points(view, supersample)
    mapx = (xy[..., 0] * board_px_per_mm - 0.5).astype(np.float32)
    mapy = (xy[..., 1] * board_px_per_mm - 0.5).astype(np.float32)
    mapx[~np.isfinite(mapx)] = -1e6
    mapy[~np.isfinite(mapy)] = -1e6
    sampled = cv2.remap(
        board_gray, mapx, mapy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(int(MAT_LEVEL),)
    ).astype(np.float64)
    n = supersample
    frame = sampled.reshape(view.height, n, view.width, n).mean(axis=(1, 3))
    return finish(frame, noise_sigma, 0.0, seed)


# A webcam-like lens: strong barrel distortion, principal point a few pixels off centre.
LENS_DIST = np.array([-0.12, 0.06, 0.0005, -0.0003, 0.0])


def camera_matrix(width: int, height: int, focal_px: float) -> NDArray[np.float64]:
    """A (3, 3) camera matrix with the principal point a little off the frame centre, as real lenses have."""
    return np.array([[focal_px, 0.0, (width - 1) / 2 + 3.2], [0.0, focal_px, (height - 1) / 2 - 2.1], [0.0, 0.0, 1.0]])


def framing_view(
    spec: TableSpec,
    camera_matrix: NDArray[np.float64],
    dist_coeffs: NDArray[np.float64],
    width: int,
    height: int,
    tilt: float = 0.35,
    fill: float = 0.92,
) -> View:
    """A camera looking at the table's centre from above and behind (+y, ``tilt`` of the height), as far away as
    needed for the table corners to fill ``fill`` of the frame."""
    target = (spec.width_mm / 2.0, spec.depth_mm / 2.0, 0.0)
    direction = np.array([0.0, tilt, -1.0]) / math.hypot(tilt, 1.0)
    corners = np.array([[0.0, 0.0], [spec.width_mm, 0.0], [spec.width_mm, spec.depth_mm], [0.0, spec.depth_mm]])
    lo, hi = 0.2 * max(spec.width_mm, spec.depth_mm), 10.0 * max(spec.width_mm, spec.depth_mm)
    for _ in range(40):
        distance = (lo + hi) / 2.0
        centre = tuple(np.asarray(target) + distance * direction)
        view = look_at(centre, target, camera_matrix, dist_coeffs, width, height)  # type: ignore[arg-type]
        px = view.project_table(corners)
        spread = max(
            np.abs(px[:, 0] - (width - 1) / 2).max() / width, np.abs(px[:, 1] - (height - 1) / 2).max() / height
        )
        if spread > fill / 2.0:
            lo = distance
        else:
            hi = distance
    return look_at(tuple(np.asarray(target) + hi * direction), target, camera_matrix, dist_coeffs, width, height)  # type: ignore[arg-type]
