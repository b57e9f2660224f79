"""Table calibration: where the table lies in a frame, from the ArUco markers of its spec.

Conventions:

- Frame pixels follow OpenCV: the centre of the top-left pixel is (0, 0). With a camera model, the homography
  works in *undistorted* pixels (where an ideal lens with the same camera matrix would have put the point);
  :meth:`TableCalibration.image_to_table` and :meth:`TableCalibration.table_to_image` take and give real frame
  pixels and do the lens step themselves.
- Without a camera model, the lens distortion is estimated from the markers' corners themselves (focal length,
  k1, k2 with the principal point at the frame's centre) when at least ``lens_estimate_min_markers`` markers are
  used and the estimate fits them better: the bending of a webcam lens, millimetres at the table's edges, drops
  to a few tenths of a millimetre. ``lens_corrected`` stays False (that means a calibrated camera.json).
- Table coordinates are the spec's millimetres (origin at a table corner, x along the width, y along the depth).
- Heights (``height_mm``) are measured from the table surface up, towards the camera: a base rim 4 mm high has
  ``height_mm = 4``. A point above the table appears displaced away from the spot below the camera (parallax);
  correcting it needs the camera's position, known only with a camera model. Without one, asking for a
  non-zero height raises :class:`HeightUnavailableError` (check :attr:`TableCalibration.heights_corrected`).
- Rectified (top-down) images: pixel (u, v) covers the table square [u, u + 1) x [v, v + 1) / px_per_mm, so its
  centre is table ((u + 0.5) / px_per_mm, (v + 0.5) / px_per_mm), and in OpenCV sub-pixel coordinates a table
  point (x, y) lies at (x * px_per_mm - 0.5, y * px_per_mm - 0.5): see :func:`table_to_rectified` and
  :func:`rectified_to_table`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np
from numpy.typing import ArrayLike, NDArray

from calibration.camera import CameraModel, as_points
from calibration.errors import (
    CalibrationError,
    HeightUnavailableError,
    ImageError,
    MarkerSpanError,
    TooFewMarkersError,
)
from calibration.homography import HomographyFit, apply_homography, fit_homography
from calibration.lens import estimate_lens
from calibration.markers import MarkerDetections, detect_markers, dictionaries_in_view, to_gray
from calibration.report import CalibrationReport
from calibration.settings import CalibrationSettings
from calibration.spec import TableSpec

# The mean image scale is averaged over a grid of this many points per side of the table: the scale varies
# smoothly (perspective), so a coarse grid is exact to far below a percent.
SCALE_GRID = 16

# Rectify maps kept per calibration (one per px_per_mm asked for): a 4K pair is ~50 MB, and a pipeline uses one.
MAP_CACHE_SIZE = 2

# Rectify maps are computed exactly every this many rectified pixels and interpolated between: over 8 px the
# mapping's curvature (perspective, lens up to k1 = -0.15) bends it by well under a hundredth of a pixel.
MAP_GRID_PX = 8

# A rectified image larger than this is a mistake (a px_per_mm meant as mm per px), not a request.
MAX_RECTIFIED_PIXELS = 100_000_000


def table_to_rectified(points_mm: ArrayLike, px_per_mm: float) -> NDArray[np.float64]:
    """Table (N, 2) mm -> (N, 2) OpenCV sub-pixel coordinates in a rectified image of ``px_per_mm``."""
    return as_points(points_mm, "points_mm") * px_per_mm - 0.5


def rectified_to_table(points_px: ArrayLike, px_per_mm: float) -> NDArray[np.float64]:
    """(N, 2) OpenCV sub-pixel coordinates in a rectified image of ``px_per_mm`` -> table (N, 2) mm."""
    return (as_points(points_px, "points_px") + 0.5) / px_per_mm


@dataclass(frozen=True, eq=False)
class TableCalibration:
    """Where the table is in frames of ``image_width`` x ``image_height`` pixels from one camera position.

    - ``homography`` (3, 3): undistorted image px -> table mm (real frame px when ``camera`` is None).
    - ``camera``: the lens model the pixels are undistorted with: the given one scaled to this frame size, or
      one estimated from the markers themselves (``lens_estimated``), or None (lens distortion uncorrected).
    - ``markers_used``: spec ids whose corners fit; ``markers_seen``: every id of the spec's dictionary found.
    - ``detections`` and ``inliers`` (N, 4): every marker found, and which of its corners the fit kept.
    - ``reprojection_rms_mm`` / ``reprojection_max_mm``: kept corners mapped to the table vs. the spec.
    - ``px_per_mm``: mean image scale over the table.
    - ``camera_position_mm`` (3,): camera centre (x, y, height above the table), or None without a calibrated
      camera model.
    - ``fit``: the homography fit, for :meth:`mapping_sigma_mm`.
    - ``lens_estimated``: ``camera`` was estimated from this frame's markers, not given.
    """

    spec: TableSpec
    homography: NDArray[np.float64]
    camera: CameraModel | None
    image_width: int
    image_height: int
    markers_used: tuple[int, ...]
    markers_seen: tuple[int, ...]
    detections: MarkerDetections
    inliers: NDArray[np.bool_]
    reprojection_rms_mm: float
    reprojection_max_mm: float
    px_per_mm: float
    camera_position_mm: NDArray[np.float64] | None
    fit: HomographyFit
    lens_estimated: bool
    _maps: dict[float, NDArray[np.float32]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.homography.flags.writeable = False
        self.inliers.flags.writeable = False
        if self.camera_position_mm is not None:
            self.camera_position_mm.flags.writeable = False

    @property
    def lens_corrected(self) -> bool:
        """True when a calibrated camera model (camera.json) corrects lens distortion."""
        return self.camera is not None and not self.lens_estimated

    @property
    def heights_corrected(self) -> bool:
        """True when heights above the table can be corrected for parallax (the camera position is known)."""
        return self.camera_position_mm is not None

    @property
    def image_size(self) -> tuple[int, int]:
        """(width, height) of the frames this calibration is for, in pixels."""
        return (self.image_width, self.image_height)

    @property
    def corners_rejected(self) -> int:
        """Corners of the spec's markers that the fit rejected (moved, occluded or misdetected)."""
        wanted = np.isin(self.detections.ids, self.spec.marker_ids)
        return int(np.sum(~self.inliers[wanted]))

    def image_to_table(self, points_px: ArrayLike, height_mm: ArrayLike = 0.0) -> NDArray[np.float64]:
        """Real frame pixels (N, 2) -> table (N, 2) mm.

        ``height_mm`` (scalar or (N,)) is the height of the seen points above the table: the result is the table
        spot straight below each point. Non-zero heights need a camera model (else HeightUnavailableError).
        """
        pts = as_points(points_px, "points_px")
        undistorted = self.camera.undistort_points(pts) if self.camera is not None else pts
        return self.parallax_corrected(apply_homography(self.homography, undistorted), height_mm)

    def table_to_image(self, points_mm: ArrayLike, height_mm: ArrayLike = 0.0) -> NDArray[np.float64]:
        """Table (N, 2) mm at ``height_mm`` (scalar or (N,)) above the table -> real frame pixels (N, 2),
        lens distortion included."""
        pts = as_points(points_mm, "points_mm")
        ground = self._ground_hit(pts, height_mm)
        undistorted = apply_homography(self.fit.table_to_image, ground)
        return self.camera.distort_points(undistorted) if self.camera is not None else undistorted

    def parallax_corrected(self, points_mm: ArrayLike, height_mm: ArrayLike) -> NDArray[np.float64]:
        """Table-plane positions (N, 2) mm where points at ``height_mm`` (scalar or (N,)) *appear* (their ray meets
        the table, as in a rectified image) -> (N, 2) mm of the table spot straight below them.

        The ray from the camera centre C through the point meets the table at G; the point at height h lies on
        it at C + (G - C) * (C_z - h) / C_z, where C_z is the camera's height above the table.
        """
        pts = as_points(points_mm, "points_mm")
        h = self._heights(height_mm, len(pts))
        if h is None:
            return pts
        assert self.camera_position_mm is not None  # _heights raised otherwise
        c_xy, c_z = self.camera_position_mm[:2], float(self.camera_position_mm[2])
        factor = np.where(h < c_z, (c_z - h) / c_z, np.nan)
        return np.asarray(c_xy + (pts - c_xy) * factor[:, None], dtype=np.float64)

    def _ground_hit(self, points_mm: NDArray[np.float64], height_mm: ArrayLike) -> NDArray[np.float64]:
        """Inverse of :meth:`parallax_corrected`: where the ray through a point at ``height_mm`` meets the table."""
        h = self._heights(height_mm, len(points_mm))
        if h is None:
            return points_mm
        assert self.camera_position_mm is not None
        c_xy, c_z = self.camera_position_mm[:2], float(self.camera_position_mm[2])
        factor = np.where(h < c_z, c_z / np.where(h < c_z, c_z - h, 1.0), np.nan)
        return np.asarray(c_xy + (points_mm - c_xy) * factor[:, None], dtype=np.float64)

    def _heights(self, height_mm: ArrayLike, n: int) -> NDArray[np.float64] | None:
        """Heights broadcast to (n,), or None when all are zero."""
        h = np.broadcast_to(np.asarray(height_mm, dtype=np.float64), (n,))
        if not np.any(h):
            return None
        if not np.all(np.isfinite(h)):
            raise ValueError("height_mm must be finite")
        if self.camera_position_mm is None:
            raise HeightUnavailableError(
                "heights above the table cannot be corrected without a camera model (camera.json); "
                "pass height_mm=0 or calibrate with a camera"
            )
        return np.asarray(h, dtype=np.float64)

    def mapping_sigma_mm(self, points_mm: ArrayLike) -> NDArray[np.float64]:
        """(N,) per-axis 1-sigma uncertainty of the table mapping at table points (N, 2) mm.

        With a calibrated camera: the scatter of the marker corners about the fit, propagated through the fit, so
        it grows away from the markers. Without one, lens distortion left uncorrected (or only estimated) is a
        systematic error that the scatter understates: the corners' rms misfit is added in quadrature as a
        per-axis sigma, since between the markers, where the fit is not pulled towards them, the error is larger
        than at them. With fewer than ``lens_estimate_min_markers`` markers and no camera model this still
        understates the error in the middle of the table (the markers cannot see the lens bend there)."""
        sigma = self.fit.mapping_sigma_mm(as_points(points_mm, "points_mm"))
        if not self.lens_corrected:
            sigma = np.hypot(sigma, self.reprojection_rms_mm)
        return sigma

    def rectified_size(self, px_per_mm: float) -> tuple[int, int]:
        """(width, height) in pixels of the rectified image of the whole table at ``px_per_mm``."""
        if not math.isfinite(px_per_mm) or px_per_mm <= 0:
            raise ValueError(f"px_per_mm must be a positive number, got {px_per_mm!r}")
        width = math.ceil(self.spec.width_mm * px_per_mm)
        height = math.ceil(self.spec.depth_mm * px_per_mm)
        if width * height > MAX_RECTIFIED_PIXELS:
            raise ValueError(
                f"a rectified image at {px_per_mm} px/mm would be {width}x{height} pixels; expected px_per_mm "
                f"of about {self.px_per_mm:.2f} (the frame's own scale) or less"
            )
        return width, height

    def rectify_maps(self, px_per_mm: float) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """``cv2.remap`` maps (H, W) float32 from rectified pixels to real frame pixels (x, then y), cached per
        px_per_mm."""
        both = self._rectify_map(px_per_mm)
        return both[..., 0], both[..., 1]

    def _rectify_map(self, px_per_mm: float) -> NDArray[np.float32]:
        """The rectify map as one (H, W, 2) float32 array of frame (x, y): cv2.remap takes it as it is, no slower
        than two maps (27 against 29 ms at 4K), and splitting it in two would cost 8 ms more."""
        key = float(px_per_mm)
        cached = self._maps.get(key)
        if cached is not None:
            return cached
        width, height = self.rectified_size(key)
        # The mapping (perspective and lens) is smooth: it is computed exactly on a coarse grid of knots every
        # MAP_GRID_PX pixels and interpolated bilinearly between them, a few thousand points instead of millions.
        knots_u = np.arange(0, width + MAP_GRID_PX, MAP_GRID_PX, dtype=np.float64)
        knots_v = np.arange(0, height + MAP_GRID_PX, MAP_GRID_PX, dtype=np.float64)
        uu, vv = np.meshgrid(knots_u, knots_v)
        table = rectified_to_table(np.column_stack([uu.ravel(), vv.ravel()]), key)
        knots = self.table_to_image(table).reshape(len(knots_v), len(knots_u), 2).astype(np.float32)
        # Pixel (u, v) of the map is knot (u, v) / MAP_GRID_PX: an affine warp by that scale gives the same map as
        # cv2.remap over a grid of those coordinates, without making the two full-size grids of them (4K: about
        # 27 ms against 45 ms, the maps equal to the last bit).
        to_knots = np.array([[1.0 / MAP_GRID_PX, 0.0, 0.0], [0.0, 1.0 / MAP_GRID_PX, 0.0]])
        both = np.asarray(
            cv2.warpAffine(
                knots,
                to_knots,
                (width, height),
                flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                borderMode=cv2.BORDER_REPLICATE,
            ),
            dtype=np.float32,
        )
        both.flags.writeable = False
        if len(self._maps) >= MAP_CACHE_SIZE:
            self._maps.pop(next(iter(self._maps)))
        self._maps[key] = both
        return both

    def rectify(
        self, image_bgr: NDArray[np.uint8], px_per_mm: float, window_px: tuple[int, int, int, int] | None = None
    ) -> NDArray[np.uint8]:
        """Top-down view of the table: (H, W[, C]) frame -> (ceil(depth_mm * s), ceil(width_mm * s)[, C]) image
        with s = ``px_per_mm``; lens distortion and perspective removed in one bilinear ``cv2.remap``. Pixel (u, v)
        is centred on table ((u + 0.5) / s, (v + 0.5) / s); outside the frame is black. With ``window_px``
        (u0, v0, u1, v1), only that part of the view is made: (v1 - v0, u1 - u0[, C]), the same pixels as the
        whole view's [v0:v1, u0:u1]."""
        if not isinstance(image_bgr, np.ndarray) or image_bgr.ndim not in (2, 3):
            raise ImageError(f"expected a frame as a numpy array (H, W) or (H, W, C), got {type(image_bgr).__name__}")
        height, width = image_bgr.shape[:2]
        if (width, height) != self.image_size:
            raise ImageError(
                f"the frame is {width}x{height} pixels but this calibration is for "
                f"{self.image_width}x{self.image_height} frames; calibrate on a frame of the same camera and size"
            )
        both = self._rectify_map(px_per_mm)
        if window_px is not None:
            u0, v0, u1, v1 = window_px
            full_h, full_w = both.shape[:2]
            if not (0 <= u0 < u1 <= full_w and 0 <= v0 < v1 <= full_h):
                raise ValueError(
                    f"window {window_px} is not inside the {full_w}x{full_h} rectified view; expected "
                    "0 <= u0 < u1 <= width and 0 <= v0 < v1 <= height"
                )
            both = both[v0:v1, u0:u1]
        out = cv2.remap(image_bgr, both, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        return np.asarray(out, dtype=image_bgr.dtype)

    def report(self) -> CalibrationReport:
        """What this calibration reports of itself: the ``calibration`` section of a table state JSON."""
        notes = []
        if self.lens_estimated:
            notes.append(
                "no camera model: lens distortion estimated from the table's markers; positions may be off by up "
                "to a millimetre or two towards the edges of the frame"
            )
        elif not self.lens_corrected:
            notes.append(
                "lens distortion uncorrected (no camera model): positions may be off by millimetres towards the "
                "edges of the frame"
            )
        if not self.heights_corrected:
            notes.append("heights above the table not corrected for parallax (no camera model)")
        return CalibrationReport(
            markers_used=tuple(self.markers_used),
            markers_seen=tuple(self.markers_seen),
            markers_expected=tuple(self.spec.marker_ids),
            corners_rejected=self.corners_rejected,
            reprojection_error_mm=round(self.reprojection_rms_mm, 4),
            reprojection_error_max_mm=round(self.reprojection_max_mm, 4),
            px_per_mm=round(self.px_per_mm, 4),
            lens_corrected=self.lens_corrected,
            lens_estimated=self.lens_estimated,
            heights_corrected=self.heights_corrected,
            image_size=(self.image_width, self.image_height),
            notes=tuple(notes),
        )


def _ids_text(ids: tuple[int, ...] | list[int]) -> str:
    return ", ".join(str(i) for i in ids) if ids else "none"


def _hull_fraction(spec: TableSpec, ids: tuple[int, ...]) -> float:
    """Area of the convex hull of the markers' centres as a fraction of the table's area."""
    centres = np.array([[spec.marker(i).x_mm, spec.marker(i).y_mm] for i in ids], dtype=np.float32)
    if len(centres) < 3:
        return 0.0
    hull = cv2.convexHull(centres)
    return float(cv2.contourArea(hull)) / (spec.width_mm * spec.depth_mm)


def _mean_scale(table_to_image: NDArray[np.float64], spec: TableSpec) -> float:
    """Mean px per mm over the table: for a homography H, |det dH/dp| = |det H| / w^3 at each point."""
    gx, gy = np.meshgrid(
        (np.arange(SCALE_GRID) + 0.5) / SCALE_GRID * spec.width_mm,
        (np.arange(SCALE_GRID) + 0.5) / SCALE_GRID * spec.depth_mm,
    )
    w = table_to_image[2, 0] * gx + table_to_image[2, 1] * gy + table_to_image[2, 2]
    area_scale = abs(np.linalg.det(table_to_image)) / np.abs(w) ** 3
    return float(np.mean(np.sqrt(area_scale)))


def _camera_position(
    camera: CameraModel, table_mm: NDArray[np.float64], undistorted_px: NDArray[np.float64]
) -> NDArray[np.float64] | None:
    """Camera centre (x, y, height above the table) in mm from the inlier corners, or None if the pose fails."""
    obj = np.column_stack([table_mm, np.zeros(len(table_mm))])
    ok, rvec, tvec = cv2.solvePnP(obj, undistorted_px, camera.camera_matrix, None, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        return None
    rot, _ = cv2.Rodrigues(rvec)
    centre = -rot.T @ np.asarray(tvec, dtype=np.float64).reshape(3)
    # The spec frame (x, y, x cross y) has z pointing into the table, so the camera sits at negative z;
    # the height is the distance from the table plane either way.
    position = np.array([centre[0], centre[1], abs(centre[2])])
    return position if np.all(np.isfinite(position)) and position[2] > 0 else None


@dataclass(frozen=True, eq=False)
class _MarkerFit:
    """One robust fit of the markers' corners: which detections took part, their points, the fit and its misfit."""

    candidates: NDArray[np.int64]
    used: tuple[int, ...]
    table_mm: NDArray[np.float64]
    raw_px: NDArray[np.float64]
    image_px: NDArray[np.float64]
    fit: HomographyFit
    rms_mm: float
    max_mm: float


def _fit_markers(
    detections: MarkerDetections,
    wanted: NDArray[np.int64],
    spec: TableSpec,
    camera: CameraModel | None,
    settings: CalibrationSettings,
    context: str,
) -> _MarkerFit:
    """Robust homography over every corner of the ``wanted`` detections; markers that keep too few corners are
    dropped and the rest refitted. Raises TooFewMarkersError / MarkerSpanError naming the markers."""
    found = tuple(sorted(set(detections.ids[wanted].tolist())))
    candidates = wanted
    while True:
        table_mm = np.concatenate([spec.marker(int(detections.ids[n])).corners_mm() for n in candidates])
        raw_px = detections.corners_px[candidates].reshape(-1, 2)
        image_px = camera.undistort_points(raw_px) if camera is not None else raw_px
        fit = fit_homography(table_mm, image_px, settings.outlier_sigmas, settings.outlier_floor_px)
        if fit is None:
            raise MarkerSpanError(
                f"the corners of markers {_ids_text(found)} do not determine the table plane (too few of them fit "
                f"together); {context}"
            )
        good = fit.inliers.reshape(-1, 4).sum(axis=1) >= settings.min_marker_inlier_corners
        if good.all():
            break
        # A marker that lost most of its corners is not trusted for the rest either: refit without it.
        candidates = candidates[good]
        used = tuple(sorted(set(detections.ids[candidates].tolist())))
        if len(used) < settings.min_markers:
            raise TooFewMarkersError(
                f"only {len(used)} of the table's markers are usable (ids {_ids_text(used)}), at least "
                f"{settings.min_markers} are needed; markers {_ids_text(sorted(set(found) - set(used)))} were "
                f"rejected because their corners do not fit the others (moved, occluded or misprinted?); {context}"
            )
    keep = fit.inliers
    image_to_table = np.asarray(np.linalg.inv(fit.table_to_image), dtype=np.float64)
    errors_mm = np.linalg.norm(apply_homography(image_to_table, image_px[keep]) - table_mm[keep], axis=1)
    return _MarkerFit(
        candidates=candidates,
        used=tuple(sorted(set(detections.ids[candidates].tolist()))),
        table_mm=table_mm,
        raw_px=raw_px,
        image_px=image_px,
        fit=fit,
        rms_mm=float(np.sqrt(np.mean(errors_mm**2))),
        max_mm=float(np.max(errors_mm)),
    )


def _with_estimated_lens(
    result: _MarkerFit,
    detections: MarkerDetections,
    wanted: NDArray[np.int64],
    spec: TableSpec,
    settings: CalibrationSettings,
    context: str,
    size_px: tuple[int, int],
) -> tuple[_MarkerFit, CameraModel | None]:
    """The markers' fit ``result`` made again through a lens estimated from its inliers, and that lens, where it fits
    the markers better; else ``result`` and None. ``wanted``: indices of ``detections`` that are the spec's
    markers; ``size_px``: the frame's (width, height)."""
    # Few markers leave the lens's bending between them unobserved: an estimate would look right at the markers
    # and be wrong elsewhere, so below lens_estimate_min_markers the distortion stays uncorrected, and says so.
    if len(result.used) < settings.lens_estimate_min_markers:
        return result, None
    keep = result.fit.inliers
    lens = estimate_lens(result.table_mm[keep], result.raw_px[keep], size_px)
    if lens is None:
        return result, None
    try:
        trial = _fit_markers(detections, wanted, spec, lens, settings, context)
    except CalibrationError:
        return result, None
    # Kept only when it fits the markers better: an estimate must never make the mapping worse.
    return (trial, lens) if trial.rms_mm < result.rms_mm else (result, None)


def calibrate_table(
    image_bgr: NDArray[np.uint8],
    spec: TableSpec,
    camera: CameraModel | None = None,
    *,
    settings: CalibrationSettings,
) -> TableCalibration:
    """Find the table in a frame from the spec's ArUco markers.

    ``image_bgr`` is a decoded frame (H, W, 3) BGR, (H, W, 4) BGRA or (H, W) grey, uint8. ``camera`` (any frame
    size of the same aspect) corrects lens distortion and makes heights correctable. Raises :class:`ImageError`,
    :class:`TooFewMarkersError` or :class:`MarkerSpanError` (all :class:`CalibrationError`) on bad input.
    """
    gray = to_gray(image_bgr, settings.min_image_side_px)
    height, width = gray.shape
    cam = camera.scaled_to(width, height) if camera is not None else None
    detections = detect_markers(gray, spec.aruco_dictionary(), settings)
    seen = tuple(sorted(set(detections.ids.tolist())))
    wanted = np.flatnonzero(np.isin(detections.ids, spec.marker_ids))
    expected = f"expected ids {_ids_text(spec.marker_ids)} of {spec.dictionary}"
    found = tuple(sorted(set(detections.ids[wanted].tolist())))
    if len(found) < settings.min_markers:
        hint = ""
        if len(detections) == 0:
            others = [d for d in dictionaries_in_view(gray, settings) if d != spec.dictionary]
            if others:
                hint = f"; markers of {', '.join(others)} are in view: does the spec name the right dictionary?"
        raise TooFewMarkersError(
            f"found {len(found)} of the table's markers (ids {_ids_text(found)}), at least {settings.min_markers} "
            f"are needed; seen ids {_ids_text(seen)}, {expected}{hint}"
        )
    context = f"seen ids {_ids_text(seen)}, {expected}"
    result = _fit_markers(detections, wanted, spec, cam, settings, context)
    lens_estimated = False
    if cam is None and settings.estimate_lens:
        result, cam = _with_estimated_lens(result, detections, wanted, spec, settings, context, (width, height))
        lens_estimated = cam is not None
    used = result.used
    span = _hull_fraction(spec, used)
    if span < settings.min_span_fraction:
        raise MarkerSpanError(
            f"the usable markers (ids {_ids_text(used)}) span only {span:.0%} of the table, at least "
            f"{settings.min_span_fraction:.0%} is needed to map all of it (markers along one edge or bunched "
            f"together); {context}"
        )
    fit = result.fit
    table_to_image = fit.table_to_image / fit.table_to_image[2, 2]
    homography = np.linalg.inv(table_to_image)
    homography /= homography[2, 2]
    keep = fit.inliers
    inliers = np.zeros((len(detections), 4), dtype=bool)
    inliers[result.candidates] = keep.reshape(-1, 4)
    # An estimated lens gives a focal length too loose for the camera's height, so heights stay uncorrected.
    position = (
        _camera_position(cam, result.table_mm[keep], result.image_px[keep])
        if cam is not None and not lens_estimated
        else None
    )
    return TableCalibration(
        spec=spec,
        homography=homography,
        camera=cam,
        image_width=width,
        image_height=height,
        markers_used=used,
        markers_seen=seen,
        detections=detections,
        inliers=inliers,
        reprojection_rms_mm=result.rms_mm,
        reprojection_max_mm=result.max_mm,
        px_per_mm=_mean_scale(table_to_image, spec),
        camera_position_mm=position,
        fit=fit,
        lens_estimated=lens_estimated,
    )


def marker_drift_px(
    image_bgr: NDArray[np.uint8], calibration: TableCalibration, *, settings: CalibrationSettings
) -> float | None:
    """How far (px, median over corners) the markers the calibration used lie in ``image_bgr`` from where they lay
    in the calibration's own frame: about the corner noise, a tenth of a pixel, while the camera stays put; more
    once it moved. Compared with where they were found, not with where the fitted mapping puts them, whose own
    residual (half a pixel and more with a lens model a little off) would read as a move in every frame. The median
    ignores a corner a hand or a model touches. None when none of those markers is seen (no evidence either way);
    infinity for a frame of another size (another camera). Raises :class:`ImageError`."""
    gray = to_gray(image_bgr, settings.min_image_side_px)
    if gray.shape != (calibration.image_height, calibration.image_width):
        return math.inf
    detections = detect_markers(gray, calibration.spec.aruco_dictionary(), settings)
    then = calibration.detections
    first = {int(i): k for k, i in reversed(list(enumerate(then.ids)))}
    pairs = [(k, first[int(i)]) for k, i in enumerate(detections.ids) if int(i) in calibration.markers_used]
    if not pairs:
        return None
    now_px = detections.corners_px[[k for k, _ in pairs]].reshape(-1, 2)
    then_px = then.corners_px[[j for _, j in pairs]].reshape(-1, 2)
    return float(np.median(np.linalg.norm(now_px - then_px, axis=1)))
