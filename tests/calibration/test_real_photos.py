"""The table mapping on real photographs (``tests/data/real_photos``, see its README.md), measured by a printed grid.

The gobonline photos show a Go board with four 40 mm ArUco markers taped to the floor at its corners. Each photo is
calibrated with its recording session's spec, as ``tableref detect`` does, and the board's labelled grid crossings
are mapped from frame pixels to table mm. The printed grid is a straight, evenly spaced 19x19 lattice, so the mapped
crossings should be one too: a rectangular lattice (a pitch along each axis, an origin, a rotation) is fitted to
them and what it leaves is the mapping's error between the markers (plus the labels' own 0.5-0.9 px). The board's
top stands above the markers' floor, so the mapped grid is scaled about the camera's foot point by a photo's own
parallax: the fitted lattice absorbs that, the session's fixed grid (its pitch, crossing (0, 0) at (80, 80) mm)
does not. The spec of each session was measured on one of its photos (marked below), which therefore fits its grid
closely by construction.

Bounds are 1.5 times the value measured with OpenCV 5.1 (given in each row's comment; a floor of 0.1 mm where
the measured value is a few hundredths). ``docs/real-photos.md`` lists these numbers.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from calibration import TableCalibration, calibrate_table, load_table_spec
from tableref.config import load_config
from tableref.sources import read_image
from tests.real_photos import DATA, grid_crossings, photo, session_grid, session_spec

MARGIN = 1.5
FLOOR_MM = 0.1


def bound(measured_mm: float) -> float:
    return max(MARGIN * measured_mm, FLOOR_MM)


@dataclass(frozen=True)
class Lattice:
    """A rectangular lattice fitted to points: ``rotation_deg``, ``pitch_mm`` (x, y), and each point's residual."""

    rotation_deg: float
    pitch_mm: tuple[float, float]
    residuals_mm: NDArray[np.float64]


def fit_lattice(index: NDArray[np.float64], points_mm: NDArray[np.float64]) -> Lattice:
    """Least-squares fit of points = R(theta) diag(px, py) index + t to a full grid of indices (whose centred
    columns are orthogonal, which makes theta closed-form: the rotation maximising the explained variance)."""
    u = index - index.mean(axis=0)
    x = points_mm - points_mm.mean(axis=0)
    norms = np.sum(u**2, axis=0)
    assert abs(float(u[:, 0] @ u[:, 1])) < 1e-9 * float(norms.min()), "needs a full grid of indices"
    a, b = (x.T @ u[:, 0]) / np.sqrt(norms[0]), (x.T @ u[:, 1]) / np.sqrt(norms[1])
    q = (a[0] ** 2 + b[1] ** 2 - a[1] ** 2 - b[0] ** 2) / 2.0
    r = a[0] * a[1] - b[0] * b[1]
    theta = 0.5 * np.arctan2(r, q)
    c, s = np.cos(theta), np.sin(theta)
    rot = np.array([[c, -s], [s, c]])
    pitch = np.array([rot[:, 0] @ (x.T @ u[:, 0]) / norms[0], rot[:, 1] @ (x.T @ u[:, 1]) / norms[1]])
    predicted = (u * pitch) @ rot.T
    residuals = np.linalg.norm(predicted - x, axis=1)
    return Lattice(float(np.degrees(theta)), (float(pitch[0]), float(pitch[1])), residuals)


def fit_affine_residuals(index: NDArray[np.float64], points_mm: NDArray[np.float64]) -> NDArray[np.float64]:
    """Residuals of the best affine lattice (shear allowed): points = A index + t."""
    m = np.column_stack([index, np.ones(len(index))])
    coef, *_ = np.linalg.lstsq(m, points_mm, rcond=None)
    return np.asarray(np.linalg.norm(m @ coef - points_mm, axis=1), dtype=np.float64)


@functools.cache
def _calibrated(name: str) -> TableCalibration:
    return calibrate_table(photo(name), session_spec(name), settings=load_config().calibration)


@dataclass(frozen=True)
class GridCase:
    photo: str
    markers: int  # markers found and used
    lattice_median_mm: float  # bounds on the fitted lattice's residuals
    lattice_max_mm: float
    grid_median_mm: float  # bounds on the distance to the session's printed grid
    grid_max_mm: float


def case(photo_name: str, markers: int, lattice: tuple[float, float], grid: tuple[float, float]) -> GridCase:
    """A row of measured values (median, max) in mm, turned into bounds."""
    return GridCase(photo_name, markers, bound(lattice[0]), bound(lattice[1]), bound(grid[0]), bound(grid[1]))


# Photos with all four markers in view. Measured (lattice median, max), (session grid median, max), px/mm:
ALL_MARKERS = [
    # 1512x2016 phone, board seen from above at an angle; 1.87 px/mm
    case("stones_overhead.jpg", 4, lattice=(0.28, 1.15), grid=(0.56, 1.28)),
    # 1512x2016 phone, near top-down; the stones session's spec was measured on it; 2.36 px/mm
    case("few_stones_overhead.jpeg", 4, lattice=(0.02, 0.08), grid=(0.04, 0.06)),
    # 1512x2016 phone, oblique, glare on the board; 1.62 px/mm
    case("few_stones_glare.jpg", 4, lattice=(0.32, 1.46), grid=(0.48, 1.51)),
    # 1920x1080 webcam, oblique; 1.18 px/mm
    case("laser_empty_board.jpg", 4, lattice=(0.83, 2.07), grid=(1.32, 3.65)),
    # 1920x1080 webcam; the laser session's spec was measured on it; 1.52 px/mm
    case("laser_empty_board_2.jpg", 4, lattice=(0.04, 0.18), grid=(0.10, 0.22)),
    # 480x640 phone; the empty session's spec was measured on it; 0.66 px/mm
    case("empty_overhead.jpeg", 4, lattice=(0.02, 0.07), grid=(0.03, 0.07)),
]

# The oblique 480x640 photo: marker 25 is not found, the mapping rests on three markers; 0.50 px/mm.
OBLIQUE_THREE_MARKERS = [
    case("empty_angled.jpeg", 3, lattice=(1.45, 7.27), grid=(6.12, 17.08)),
]


def _check_grid(c: GridCase) -> None:
    cal = _calibrated(c.photo)
    assert len(cal.markers_used) == c.markers
    index, px = grid_crossings(c.photo)
    mapped = cal.image_to_table(px)
    lattice = fit_lattice(index, mapped)
    assert np.median(lattice.residuals_mm) <= c.lattice_median_mm
    assert lattice.residuals_mm.max() <= c.lattice_max_mm
    pitch, origin = session_grid(c.photo)
    off_grid = np.linalg.norm(mapped - (origin + index * pitch), axis=1)
    assert np.median(off_grid) <= c.grid_median_mm
    assert off_grid.max() <= c.grid_max_mm


@pytest.mark.parametrize("c", ALL_MARKERS, ids=lambda c: c.photo)
def test_grid_maps_to_a_lattice_with_all_markers(c: GridCase) -> None:
    _check_grid(c)


@pytest.mark.parametrize("c", OBLIQUE_THREE_MARKERS, ids=lambda c: c.photo)
def test_grid_maps_to_a_lattice_on_the_oblique_photo(c: GridCase) -> None:
    _check_grid(c)


def test_lattice_fit_recovers_a_known_lattice() -> None:
    cols, rows = np.meshgrid(np.arange(19), np.arange(19))
    index = np.column_stack([cols.ravel(), rows.ravel()]).astype(np.float64)
    a = np.radians(1.7)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    points = (index * [20.4, 22.8]) @ rot.T + [80.0, 75.0]
    lattice = fit_lattice(index, points)
    assert lattice.rotation_deg == pytest.approx(1.7, abs=1e-9)
    assert lattice.pitch_mm == pytest.approx((20.4, 22.8), abs=1e-9)
    assert lattice.residuals_mm.max() < 1e-9
    assert fit_affine_residuals(index, points).max() < 1e-9


# ChArUco board photo (opencv_doc/choriginal.jpg, 640x480): the 17 markers of the 5x7 board as a table spec.
# Measured: 17 of 17 markers used, 1.27 px/mm; marker corners mapped vs the layout median 0.51, rms 0.60,
# max 1.44 mm (0.72 px rms), on average 0.31 mm inside the marker; the 24 chessboard corners (not used by the
# fit) median 0.21, rms 0.29, max 0.68 mm.
CHARUCO_MARKERS = 17
CHARUCO_CORNER_MEDIAN_MM = bound(0.51)
CHARUCO_CORNER_RMS_MM = bound(0.60)
CHARUCO_CORNER_MAX_MM = bound(1.44)
CHARUCO_CHESS_MEDIAN_MM = bound(0.21)
CHARUCO_CHESS_MAX_MM = bound(0.68)
CHARUCO_PHOTO = DATA / "opencv_doc" / "choriginal.jpg"


@pytest.fixture(scope="module")
def charuco() -> TableCalibration:
    spec = load_table_spec(DATA / "specs" / "choriginal_charuco_5x7.toml")
    return calibrate_table(read_image(CHARUCO_PHOTO), spec, settings=load_config().calibration)


def marker_corner_errors(cal: TableCalibration) -> NDArray[np.float64]:
    """Every corner of the spec's markers found, mapped to the table: its distance (mm) from the layout."""
    det = cal.detections
    keep = np.isin(det.ids, cal.spec.marker_ids)
    mapped = cal.image_to_table(det.corners_px[keep].reshape(-1, 2))
    layout = np.concatenate([cal.spec.marker(int(i)).corners_mm() for i in det.ids[keep]])
    return np.asarray(np.linalg.norm(mapped - layout, axis=1), dtype=np.float64)


def chessboard_corner_errors(cal: TableCalibration) -> NDArray[np.float64]:
    """The board's chessboard corners (found by OpenCV's ChArUco detector), mapped to the table: distance (mm)
    from the layout."""
    board = cv2.aruco.CharucoBoard((5, 7), 40.0, 20.0, cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_6X6_250))
    gray = cv2.cvtColor(read_image(CHARUCO_PHOTO), cv2.COLOR_BGR2GRAY)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(gray)
    if ids is None:
        return np.empty(0)
    layout = np.asarray(board.getChessboardCorners(), dtype=np.float64)[ids.ravel(), :2]
    mapped = cal.image_to_table(corners.reshape(-1, 2))
    return np.asarray(np.linalg.norm(mapped - layout, axis=1), dtype=np.float64)


def test_charuco_marker_corners_map_onto_the_layout(charuco: TableCalibration) -> None:
    assert len(charuco.markers_used) == CHARUCO_MARKERS
    errors = marker_corner_errors(charuco)
    assert len(errors) == 4 * CHARUCO_MARKERS
    assert np.median(errors) <= CHARUCO_CORNER_MEDIAN_MM
    assert np.sqrt(np.mean(errors**2)) <= CHARUCO_CORNER_RMS_MM
    assert errors.max() <= CHARUCO_CORNER_MAX_MM


def test_charuco_chessboard_corners_map_onto_the_layout(charuco: TableCalibration) -> None:
    """The board's chessboard corners, which the table fit does not use, as an independent ruler."""
    errors = chessboard_corner_errors(charuco)
    assert len(errors) == 24
    assert np.median(errors) <= CHARUCO_CHESS_MEDIAN_MM
    assert errors.max() <= CHARUCO_CHESS_MAX_MM


def main() -> None:
    """Print the measured values the bounds above come from: ``python -m tests.calibration.test_real_photos``."""
    for c in ALL_MARKERS + OBLIQUE_THREE_MARKERS:
        cal = _calibrated(c.photo)
        index, px = grid_crossings(c.photo)
        mapped = cal.image_to_table(px)
        lattice = fit_lattice(index, mapped)
        affine = fit_affine_residuals(index, mapped)
        pitch, origin = session_grid(c.photo)
        off_grid = np.linalg.norm(mapped - (origin + index * pitch), axis=1)
        print(
            f"{c.photo}: {cal.image_width}x{cal.image_height}, markers {list(cal.markers_used)}, "
            f"{cal.px_per_mm:.2f} px/mm, marker corners rms {cal.reprojection_rms_mm:.2f} mm; lattice median "
            f"{np.median(lattice.residuals_mm):.2f} max {lattice.residuals_mm.max():.2f} mm, pitch "
            f"{lattice.pitch_mm[0]:.2f} x {lattice.pitch_mm[1]:.2f} mm, rotation {lattice.rotation_deg:.2f} deg; "
            f"affine median {np.median(affine):.2f} max {affine.max():.2f} mm; session grid median "
            f"{np.median(off_grid):.2f} max {off_grid.max():.2f} mm"
        )
    spec = load_table_spec(DATA / "specs" / "choriginal_charuco_5x7.toml")
    cal = calibrate_table(read_image(CHARUCO_PHOTO), spec, settings=load_config().calibration)
    corners = marker_corner_errors(cal)
    chess = chessboard_corner_errors(cal)
    det = cal.detections
    ids = det.ids[np.isin(det.ids, spec.marker_ids)]
    found_px = det.corners_px[np.isin(det.ids, spec.marker_ids)].reshape(-1, 2)
    layout = np.concatenate([spec.marker(int(i)).corners_mm() for i in ids])
    centres = np.repeat([[spec.marker(int(i)).x_mm, spec.marker(int(i)).y_mm] for i in ids], 4, axis=0)
    outward = np.linalg.norm(cal.image_to_table(found_px) - centres, axis=1) - np.linalg.norm(layout - centres, axis=1)
    off_px = np.linalg.norm(cal.table_to_image(layout) - found_px, axis=1)
    print(
        f"{CHARUCO_PHOTO.name}: {cal.image_width}x{cal.image_height}, {len(cal.markers_used)} of "
        f"{len(spec.markers)} markers, {cal.px_per_mm:.2f} px/mm; marker corners median {np.median(corners):.2f} "
        f"rms {np.sqrt(np.mean(corners**2)):.2f} max {corners.max():.2f} mm "
        f"({np.sqrt(np.mean(off_px**2)):.2f} px rms), on average {-outward.mean():.2f} mm "
        f"inside the marker; {len(chess)} chessboard corners median {np.median(chess):.2f} rms "
        f"{np.sqrt(np.mean(chess**2)):.2f} max {chess.max():.2f} mm"
    )


if __name__ == "__main__":
    main()
