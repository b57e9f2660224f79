"""Lens calibration from photos of a printed ChArUco board (chessboard with ArUco markers in the white squares).

Board coordinates are millimetres from the board's top-left outer corner, x to the right, y down, as printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.camera import CameraModel
from calibration.errors import CalibrationError, LensCalibrationError
from calibration.markers import to_gray
from calibration.settings import CalibrationSettings


def charuco_board(settings: CalibrationSettings) -> cv2.aruco.CharucoBoard:
    """The board of the settings (``board_*``), lengths in mm."""
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, settings.board_dictionary))
    return cv2.aruco.CharucoBoard(
        (settings.board_squares_x, settings.board_squares_y),
        settings.board_square_mm,
        settings.board_marker_mm,
        dictionary,
    )


def board_size_mm(settings: CalibrationSettings) -> tuple[float, float]:
    """(width, height) of the board's squares in mm, without any margin."""
    return (settings.board_squares_x * settings.board_square_mm, settings.board_squares_y * settings.board_square_mm)


def board_image(settings: CalibrationSettings, px_per_mm: float, margin_mm: float = 0.0) -> NDArray[np.uint8]:
    """The board as a grey (H, W) uint8 image at ``px_per_mm`` with a white margin of ``margin_mm`` all round.

    Pixel (u, v) is centred on board ((u + 0.5) / px_per_mm - margin_mm, (v + 0.5) / px_per_mm - margin_mm) mm.
    Square edges fall on pixel edges when ``board_square_mm * px_per_mm`` and ``margin_mm * px_per_mm`` are whole
    numbers.
    """
    width_mm, height_mm = board_size_mm(settings)
    margin_px = round(margin_mm * px_per_mm)
    size = (round(width_mm * px_per_mm) + 2 * margin_px, round(height_mm * px_per_mm) + 2 * margin_px)
    image = charuco_board(settings).generateImage(size, marginSize=margin_px, borderBits=1)
    return np.asarray(image, dtype=np.uint8)


@dataclass(frozen=True)
class ViewInfo:
    """What one photo gave: ``corners_found`` ChArUco corners; ``used`` in the calibration or not (``reason``
    says why not); ``rms_px`` its own reprojection error when used."""

    index: int
    corners_found: int
    used: bool
    rms_px: float | None
    reason: str


class LensCalibration(NamedTuple):
    """Result of :func:`calibrate_camera`: unpacks as ``camera, rms_px, views``."""

    camera: CameraModel
    rms_px: float
    views: tuple[ViewInfo, ...]


def _charuco_points(
    detector: cv2.aruco.CharucoDetector, board: cv2.aruco.CharucoBoard, gray: NDArray[np.uint8]
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.int32]]:
    """Object (N, 3) mm and image (N, 2) px points of the ChArUco corners found, and their ids (N,)."""
    corners, ids, _, _ = detector.detectBoard(gray)
    if ids is None or corners is None or len(ids) == 0:  # OpenCV gives None when nothing is found
        return np.zeros((0, 3), np.float32), np.zeros((0, 2), np.float32), np.zeros(0, np.int32)
    obj, img = board.matchImagePoints(list(corners), ids)
    return (
        np.asarray(obj, dtype=np.float32).reshape(-1, 3),
        np.asarray(img, dtype=np.float32).reshape(-1, 2),
        np.asarray(ids, dtype=np.int32).reshape(-1),
    )


def _same_view(
    ids: NDArray[np.int32],
    img: NDArray[np.float32],
    used_ids: Sequence[NDArray[np.int32]],
    used_img: Sequence[NDArray[np.float32]],
    within_px: float,
) -> int | None:
    """The position among the views used of one that found the same corners within ``within_px`` of these."""
    for n, (other_ids, other_img) in enumerate(zip(used_ids, used_img, strict=True)):
        if np.array_equal(ids, other_ids) and float(np.max(np.abs(img - other_img))) <= within_px:
            return n
    return None


def calibrate_camera(images_bgr: Sequence[NDArray[np.uint8]], settings: CalibrationSettings) -> LensCalibration:
    """Lens intrinsics and distortion from photos of the settings' ChArUco board, all of one frame size.

    Returns the camera model, the overall reprojection rms in px, and one :class:`ViewInfo` per photo. Raises
    :class:`LensCalibrationError` when fewer than ``lens_min_views`` photos show at least ``lens_min_corners``
    non-collinear corners, or when the photos differ in size; :class:`ImageError` for an unusable photo.
    """
    if len(images_bgr) == 0:
        raise LensCalibrationError(f"no photos given; expected at least {settings.lens_min_views} of the board")
    board = charuco_board(settings)
    detector = cv2.aruco.CharucoDetector(board)
    size: tuple[int, int] | None = None
    obj_points: list[NDArray[np.float32]] = []
    img_points: list[NDArray[np.float32]] = []
    views: list[ViewInfo] = []
    used_index: list[int] = []
    used_ids: list[NDArray[np.int32]] = []
    for index, image in enumerate(images_bgr):
        try:
            gray = to_gray(image, settings.min_image_side_px)
        except CalibrationError as exc:
            raise type(exc)(f"photo {index + 1}: {exc}") from None
        this_size = (gray.shape[1], gray.shape[0])
        if size is None:
            size = this_size
        elif this_size != size:
            raise LensCalibrationError(
                f"photo {index + 1} is {this_size[0]}x{this_size[1]} pixels but photo 1 is {size[0]}x{size[1]}; "
                "expected every photo from the same camera at the same size"
            )
        obj, img, ids = _charuco_points(detector, board, gray)
        if len(ids) < settings.lens_min_corners:
            views.append(
                ViewInfo(index, len(ids), False, None, f"{len(ids)} corners found, {settings.lens_min_corners} needed")
            )
            continue
        if board.checkCharucoCornersCollinear(ids):
            views.append(ViewInfo(index, len(ids), False, None, "the corners found lie on one line"))
            continue
        again = _same_view(ids, img, used_ids, img_points, settings.lens_same_view_px)
        if again is not None:
            views.append(ViewInfo(index, len(ids), False, None, f"the same view as photo {used_index[again] + 1}"))
            continue
        used_ids.append(ids)
        obj_points.append(obj)
        img_points.append(img)
        used_index.append(index)
        views.append(ViewInfo(index, len(ids), True, None, ""))
    if len(obj_points) < settings.lens_min_views:
        per_photo = "; ".join(f"photo {v.index + 1}: {v.reason or 'usable'}" for v in views)
        raise LensCalibrationError(
            f"{len(obj_points)} usable views of the ChArUco board ({settings.board_squares_x}x"
            f"{settings.board_squares_y} squares of {settings.board_square_mm} mm, {settings.board_dictionary}), "
            f"at least {settings.lens_min_views} needed ({per_photo}); photograph the whole board from several "
            "angles, filling the frame's corners too"
        )
    assert size is not None
    flags = cv2.CALIB_FIX_K3 if settings.lens_fix_k3 else 0
    rms, k, d, rvecs, tvecs = cv2.calibrateCamera(obj_points, img_points, size, None, None, flags=flags)
    camera = CameraModel(
        size[0], size[1], np.asarray(k, dtype=np.float64), np.asarray(d, dtype=np.float64).reshape(-1)[:5]
    )
    view_rms = {}
    for n, index in enumerate(used_index):
        projected, _ = cv2.projectPoints(obj_points[n], rvecs[n], tvecs[n], k, d)
        err = projected.reshape(-1, 2) - img_points[n]
        view_rms[index] = float(np.sqrt(np.mean(np.sum(err**2, axis=1))))
    views = [ViewInfo(v.index, v.corners_found, v.used, view_rms.get(v.index), v.reason) for v in views]
    return LensCalibration(camera, float(rms), tuple(views))


# The estimate is refused when it stretches the frame's corners radially by more than this fraction: no usable
# lens bends that much, so such a fit has gone astray (folding the picture over), not found a strange lens.
MAX_CORNER_STRETCH = 0.5


def estimate_lens(
    table_mm: NDArray[np.float64], image_px: NDArray[np.float64], image_size: tuple[int, int]
) -> CameraModel | None:
    """A rough lens model from one view of points on a plane: table (M, 2) mm seen at real pixels (M, 2).

    The principal point is taken at the frame's centre, pixels square, no tangential distortion: only the focal
    length, k1 and k2 are fitted with the view's pose, which one plane view can carry. The point is the
    distortion, not the focal length: for a camera looking nearly straight down, focal length and distance trade
    off (the fit may settle on any focal length, with k1 and k2 scaled to match) while the picture's bending is
    still pinned down. Returns None when the fit fails or bends the frame absurdly.
    """
    width, height = image_size
    if len(table_mm) < 9:  # 9 unknowns (f, k1, k2, pose): fewer points cannot constrain them
        return None
    obj = np.column_stack([table_mm, np.zeros(len(table_mm))]).astype(np.float32)
    img = np.asarray(image_px, dtype=np.float32)
    focal = float(max(width, height))
    guess = np.array([[focal, 0.0, (width - 1) / 2.0], [0.0, focal, (height - 1) / 2.0], [0.0, 0.0, 1.0]])
    flags = (
        cv2.CALIB_USE_INTRINSIC_GUESS
        | cv2.CALIB_FIX_PRINCIPAL_POINT
        | cv2.CALIB_FIX_ASPECT_RATIO
        | cv2.CALIB_ZERO_TANGENT_DIST
        | cv2.CALIB_FIX_K3
    )
    try:
        _, k_out, d_out, _, _ = cv2.calibrateCamera([obj], [img], (width, height), guess, np.zeros(5), flags=flags)
    except cv2.error:
        return None
    k = np.asarray(k_out, dtype=np.float64)
    d = np.asarray(d_out, dtype=np.float64).reshape(-1)[:5]
    if not (np.all(np.isfinite(k)) and np.all(np.isfinite(d))) or k[0, 0] <= 0:
        return None
    # Radial scale 1 + k1 r^2 + k2 r^4 from the centre out to the frame's corner (r in normalised units).
    r2 = np.linspace(0.0, (((width - 1) / 2.0) ** 2 + ((height - 1) / 2.0) ** 2) / k[0, 0] ** 2, 64)
    stretch = 1.0 + d[0] * r2 + d[1] * r2 * r2
    if np.any(np.abs(stretch - 1.0) > MAX_CORNER_STRETCH):
        return None
    return CameraModel(width, height, k, d)
