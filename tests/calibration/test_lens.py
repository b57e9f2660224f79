"""Lens calibration from synthetic photos of the ChArUco board with a known lens."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numpy.typing import NDArray

from calibration.camera import CameraModel
from calibration.errors import ImageError, LensCalibrationError
from calibration.lens import board_image, board_size_mm, calibrate_camera
from calibration.settings import CalibrationSettings
from tableref.config import load_config
from tests.calibration.synthetic_views import look_at, render_board

SIZE = (1280, 720)
BOARD_PX_PER_MM = 10.0
MARGIN_MM = 15.0

LENSES = {
    "barrel": (1000.0, np.array([-0.25, 0.08, 0.0, 0.0, 0.0])),
    "mild": (1150.0, np.array([-0.05, 0.02, 0.001, -0.0005, 0.0])),
}


@functools.lru_cache(maxsize=4)
def board_photos(lens: str, count: int = 8, seed: int = 7) -> tuple[NDArray[np.uint8], ...]:
    """``count`` photos of the default board from random places within reach, seeded."""
    settings = load_config().calibration
    focal_px, dist = LENSES[lens]
    width, height = SIZE
    k = np.array([[focal_px, 0.0, width / 2 + 3.0], [0.0, focal_px, height / 2 - 2.5], [0.0, 0.0, 1.0]])
    board = board_image(settings, BOARD_PX_PER_MM, MARGIN_MM)
    board_w, board_h = board_size_mm(settings)
    cx, cy = MARGIN_MM + board_w / 2, MARGIN_MM + board_h / 2
    rng = np.random.default_rng(seed)
    photos = []
    for n in range(count):
        centre = (cx + rng.uniform(-120, 120), cy + rng.uniform(-80, 80), -rng.uniform(0.26, 0.38) * focal_px)
        target = (cx + rng.uniform(-40, 40), cy + rng.uniform(-30, 30), 0.0)
        view = look_at(centre, target, k, dist, width, height, roll_deg=rng.uniform(-20, 20))
        photos.append(render_board(board, BOARD_PX_PER_MM, view, supersample=2, seed=seed + n))
    return tuple(photos)


@pytest.fixture(scope="module")
def settings() -> CalibrationSettings:
    return load_config().calibration


@pytest.mark.parametrize("lens", sorted(LENSES))
def test_recovers_known_intrinsics_and_distortion(settings: CalibrationSettings, lens: str) -> None:
    camera, rms_px, views = calibrate_camera(list(board_photos(lens)), settings)
    focal_px, dist = LENSES[lens]
    assert camera.image_size == SIZE
    assert camera.camera_matrix[0, 0] == pytest.approx(focal_px, rel=0.01)
    assert camera.camera_matrix[1, 1] == pytest.approx(focal_px, rel=0.01)
    assert camera.dist_coeffs[0] == pytest.approx(dist[0], abs=0.02)
    assert camera.dist_coeffs[4] == 0.0  # k3 fixed by the settings
    assert rms_px < 0.3
    assert all(v.used and v.rms_px is not None and v.rms_px < 0.3 for v in views)
    # The lens itself: where the model sends rays near the frame's corner, against the true lens.
    truth = CameraModel(SIZE[0], SIZE[1], camera.camera_matrix, dist)
    corner_ray = np.array([[0.55, 0.32]])
    assert np.max(np.abs(camera.distort_normalized(corner_ray) - truth.distort_normalized(corner_ray))) < 2.0


def test_views_without_the_board_are_skipped_and_reported(settings: CalibrationSettings) -> None:
    photos = list(board_photos("barrel"))
    blank = np.full_like(photos[0], 128)
    camera, _, views = calibrate_camera([*photos, blank], settings)
    assert [v.used for v in views] == [True] * len(photos) + [False]
    assert views[-1].corners_found == 0 and "0 corners found" in views[-1].reason
    assert camera.camera_matrix[0, 0] == pytest.approx(LENSES["barrel"][0], rel=0.01)


@pytest.mark.parametrize(
    ("photos", "error", "message"),
    [
        (lambda p: p[:3], LensCalibrationError, r"3 usable views .* at least 5 needed"),
        (lambda p: [], LensCalibrationError, "no photos given"),
        (lambda p: [*p[:5], np.full((480, 640), 128, np.uint8)], LensCalibrationError, "photo 6 is 640x480"),
        (lambda p: [*p[:5], np.zeros((10, 10), np.uint8)], ImageError, "photo 6: .*too small"),
        # one view given eight times is one view, not eight
        (lambda p: [p[0]] * 8, LensCalibrationError, r"1 usable views .*photo 8: the same view as photo 1"),
        (lambda p: [*p[:4], p[2]], LensCalibrationError, r"4 usable views .*photo 5: the same view as photo 3"),
    ],
    ids=["too-few", "none", "mixed-sizes", "tiny-photo", "one-view-repeated", "a-view-twice"],
)
def test_unusable_photo_sets_are_named_errors(
    settings: CalibrationSettings, photos: object, error: type, message: str
) -> None:
    chosen = photos(list(board_photos("barrel")))  # type: ignore[operator]
    with pytest.raises(error, match=message):
        calibrate_camera(chosen, settings)
