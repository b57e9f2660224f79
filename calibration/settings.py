"""Tunable settings of the calibration stage. The values live beside them, in ``calibration/defaults.toml``
([calibration])."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import cv2

from calibration.errors import SettingsError


@dataclass(frozen=True)
class CalibrationSettings:
    """Every tunable of table calibration, lens calibration and printing. No defaults here on purpose."""

    # Frames smaller than this on their shorter side are refused: markers would be a few pixels wide.
    min_image_side_px: int
    # Markers are found on a copy scaled down to at most this long side (speed), then refined at full size.
    detect_max_side_px: int
    # Sub-pixel corner refinement at full resolution: the half window is this fraction of one marker cell,
    # capped at corner_window_max_px (a window larger than a cell would see the neighbouring bit's edges).
    corner_window_cell_fraction: float
    corner_window_max_px: int
    corner_refine_iterations: int
    corner_refine_epsilon_px: float
    # A corner is an outlier when its residual exceeds outlier_sigmas robust sigmas of all residuals, and at
    # least outlier_floor_px (sub-pixel noise alone must never reject a corner).
    outlier_sigmas: float
    outlier_floor_px: float
    # A marker is usable when at least this many of its 4 corners are inliers; a calibration needs min_markers.
    min_marker_inlier_corners: int
    min_markers: int
    # The convex hull of the used markers' centres must cover at least this fraction of the table area.
    min_span_fraction: float
    # Without a camera model, estimate the lens distortion from the markers themselves, when at least
    # lens_estimate_min_markers markers are used (fewer leave the bending between them unobserved).
    estimate_lens: bool
    lens_estimate_min_markers: int
    # A fixed camera counts as moved (bumped, its mount knocked) when the markers' corners lie further than this
    # (median, px) from where the calibration puts them.
    moved_drift_px: float
    # The ChArUco board for lens calibration (printed by ``tableref board``).
    board_squares_x: int
    board_squares_y: int
    board_square_mm: float
    board_marker_mm: float
    board_dictionary: str
    # Lens calibration: views with fewer ChArUco corners are skipped; fewer usable views is an error.
    lens_min_corners: int
    lens_min_views: int
    # A photo whose corners all lie within this of another's (px) is the same view again, and is skipped.
    lens_same_view_px: float
    # Fix k3 = 0: a handful of hand-held views constrains k3 poorly, and a free k3 can bend the frame's edges.
    lens_fix_k3: bool
    # Printing: paper size and printer margin, and the white quiet zone around each marker (fraction of its size).
    page_width_mm: float
    page_height_mm: float
    page_margin_mm: float
    marker_quiet_zone_fraction: float

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool | str):
                continue
            if not math.isfinite(value) or value <= 0:
                raise SettingsError(f"[calibration] {f.name} must be a positive number, got {value!r}")
        if self.min_markers < 2:
            raise SettingsError(f"[calibration] min_markers must be at least 2, got {self.min_markers}")
        if not 1 <= self.min_marker_inlier_corners <= 4:
            raise SettingsError(
                f"[calibration] min_marker_inlier_corners must be 1 to 4, got {self.min_marker_inlier_corners}"
            )
        if self.min_span_fraction >= 1:
            raise SettingsError(f"[calibration] min_span_fraction must be below 1, got {self.min_span_fraction}")
        if self.board_marker_mm >= self.board_square_mm:
            raise SettingsError(
                f"[calibration] board_marker_mm ({self.board_marker_mm}) must be smaller than board_square_mm "
                f"({self.board_square_mm})"
            )
        if self.board_squares_x < 3 or self.board_squares_y < 3:
            raise SettingsError(
                f"[calibration] the board needs at least 3 x 3 squares, got "
                f"{self.board_squares_x} x {self.board_squares_y}"
            )
        if not isinstance(getattr(cv2.aruco, self.board_dictionary, None), int):
            raise SettingsError(
                f"[calibration] board_dictionary {self.board_dictionary!r} is not a cv2.aruco predefined dictionary"
            )
        if self.lens_min_corners < 6:
            raise SettingsError(
                f"[calibration] lens_min_corners must be at least 6 (a pose needs them), got {self.lens_min_corners}"
            )
