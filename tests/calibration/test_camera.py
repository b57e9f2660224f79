"""camera.json: round trip, validation with named errors, scaling to other frame sizes, the lens model."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel, camera_from_dict, load_camera, save_camera
from calibration.errors import CameraFileError, CameraMismatchError

K = [[1400.0, 0.0, 962.7], [0.0, 1402.5, 537.4], [0.0, 0.0, 1.0]]
DIST = [-0.12, 0.06, 0.0005, -0.0003, 0.01]
GOOD: dict[str, Any] = {"image_width": 1920, "image_height": 1080, "camera_matrix": K, "dist_coeffs": DIST}


def model() -> CameraModel:
    return camera_from_dict(GOOD)


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "camera.json"
    save_camera(model(), path)
    assert json.loads(path.read_text()) == GOOD
    loaded = load_camera(path)
    assert loaded == model()
    assert hash(loaded) == hash(model())
    assert not loaded.camera_matrix.flags.writeable and not loaded.dist_coeffs.flags.writeable


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"image_width": None}, "missing image_width"),
        ({"image_width": 0}, "image_width must be a whole number of pixels from 1 to 100000, got 0"),
        ({"image_width": 10**12}, "image_width must be a whole number of pixels from 1 to 100000, got a number of 13"),
        ({"image_height": 1080.5}, "image_height must be a whole number of pixels from 1 to 100000"),
        ({"image_height": True}, "image_height must be a whole number of pixels from 1 to 100000"),
        ({"camera_matrix": [[10**400, 0, 2], [0, 1, 2], [0, 0, 1]]}, "3 rows of 3 numbers"),
        ({"camera_matrix": [[1, 0, 2], [0, 1, 2]]}, "3 rows of 3 numbers"),
        ({"camera_matrix": [[1, 0, 2], [0, 1, 2], [0, 0, "1"]]}, "3 rows of 3 numbers"),
        ({"camera_matrix": [[-1400, 0, 960], [0, 1400, 540], [0, 0, 1]]}, "focal lengths fx, fy must be positive"),
        ({"camera_matrix": [[1400, 3, 960], [0, 1400, 540], [0, 0, 1]]}, "no skew"),
        ({"camera_matrix": [[1400, 0, 960], [0, 1400, 540], [0, 0, 2]]}, "no skew"),
        ({"dist_coeffs": [0.1, 0.2, 0.3]}, "dist_coeffs must be 5 finite numbers"),
        ({"dist_coeffs": [0.1, 0.2, 0.0, 0.0, 0.0, 0.0]}, "dist_coeffs must be 5 finite numbers"),
        ({"dist_coeffs": "none"}, "dist_coeffs must be a list of numbers"),
        # finite, but no lens's: the table's corners overflowed when projected
        (
            {"dist_coeffs": [1e308, 0.0, 0.0, 0.0, 0.0]},
            "dist_coeffs must be 5 finite numbers .* of at most 1000 in size",
        ),
        ({"dist_coeffs": [0.1, 0.0, 0.0, 0.0, -2000]}, "of at most 1000 in size"),
    ],
)
def test_invalid_documents_are_named_errors(change: dict[str, Any], message: str) -> None:
    data = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(CameraFileError, match=message):
        camera_from_dict(data)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "no such file"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ("[" * 200_000 + "]" * 200_000, "JSON nested too deep to read; expected a camera.json"),
        ('{"image_width": ' + "9" * 5000 + "}", "not usable JSON .*; expected a camera.json"),
    ],
)
def test_unreadable_files_are_named_errors(tmp_path: Path, text: str | None, message: str) -> None:
    path = tmp_path / "camera.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(CameraFileError, match=message):
        load_camera(path)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: Path("/dev/zero"), "not a regular file; expected a camera.json"),
        (lambda tmp: tmp, "is a folder; expected a camera.json"),
        (lambda tmp: _fifo(tmp / "camera.json"), "not a regular file; expected a camera.json"),
    ],
    ids=["device", "folder", "fifo"],
)
def test_what_is_no_file_is_refused_unread(tmp_path: Path, make: Callable[[Path], Path], message: str) -> None:
    # a device or a pipe would be read for ever: it is refused before it is opened
    with pytest.raises(CameraFileError, match=message):
        load_camera(make(tmp_path))


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("coeffs", "expected"),
    [([[-0.1, 0.01, 0.0, 0.0, 0.002]], [-0.1, 0.01, 0.0, 0.0, 0.002]), ([-0.1, 0.01, 0.0, 0.0], [-0.1, 0.01, 0, 0, 0])],
    ids=["opencv-1x5-matrix", "four-coefficients"],
)
def test_other_coefficient_layouts_are_accepted(coeffs: list[Any], expected: list[float]) -> None:
    cam = camera_from_dict({**GOOD, "dist_coeffs": coeffs})
    np.testing.assert_array_equal(cam.dist_coeffs, expected)


@pytest.mark.parametrize(
    ("coeffs", "expected"),
    [
        # OpenCV's rational model with its further terms 0 is the classic lens
        ([*DIST, 0.0, 0.0, 0.0], DIST),
        (DIST + [0.0] * 9, DIST),
        ([*DIST, 0.001, 0.0, 0.0], "the terms after k3 are not 0"),
        (DIST + [0.0] * 7 + [0.01, 0.0], "calibrate again without the rational, thin-prism or tilt terms"),
    ],
    ids=["rational-8-zero", "tilted-14-zero", "rational-8-used", "tilted-14-used"],
)
def test_opencvs_longer_lens_models(coeffs: list[float], expected: list[float] | str) -> None:
    if isinstance(expected, str):
        with pytest.raises(CameraFileError, match=expected):
            camera_from_dict({**GOOD, "dist_coeffs": coeffs})
        return
    np.testing.assert_array_equal(camera_from_dict({**GOOD, "dist_coeffs": coeffs}).dist_coeffs, expected)


def test_opencvs_own_calibration_file_is_read(tmp_path: Path) -> None:
    # the keys and matrix objects of OpenCV's calibration sample, written by OpenCV itself
    path = tmp_path / "out_camera_data.json"
    storage = cv2.FileStorage(str(path), cv2.FILE_STORAGE_WRITE)
    storage.write("image_width", 1920)
    storage.write("image_height", 1080)
    storage.write("camera_matrix", np.array(K))
    storage.write("distortion_coefficients", np.array([DIST]))
    storage.write("avg_reprojection_error", 0.31)
    storage.release()
    assert load_camera(path) == model()


def test_unwritable_path_is_a_named_error(tmp_path: Path) -> None:
    with pytest.raises(CameraFileError, match="cannot write"):
        save_camera(model(), tmp_path / "missing" / "camera.json")


@pytest.mark.parametrize(("width", "height"), [(3840, 2160), (1280, 720), (640, 360)])
def test_scaling_keeps_the_same_rays(width: int, height: int) -> None:
    """A point seen at the same place of the picture (same fraction of the frame) has the same ideal ray."""
    cam = model()
    scaled = cam.scaled_to(width, height)
    s = width / cam.image_width
    rng = np.random.default_rng(4)
    pts = rng.uniform([0, 0], [cam.image_width, cam.image_height], (50, 2)) - 0.5
    np.testing.assert_allclose(scaled.normalize((pts + 0.5) * s - 0.5), cam.normalize(pts), atol=1e-9)
    np.testing.assert_allclose(scaled.dist_coeffs, cam.dist_coeffs)
    assert scaled.image_size == (width, height)


@pytest.mark.parametrize(("width", "height"), [(1920, 1088), (1440, 1080), (1080, 1920)])
def test_scaling_to_another_aspect_is_refused(width: int, height: int) -> None:
    with pytest.raises(CameraMismatchError, match="another aspect ratio"):
        model().scaled_to(width, height)


def test_lens_model_matches_opencv_and_inverts() -> None:
    cam = model()
    rng = np.random.default_rng(9)
    norm = rng.uniform(-0.7, 0.7, (500, 2))
    projected, _ = cv2.projectPoints(
        np.column_stack([norm, np.ones(len(norm))]), np.zeros(3), np.zeros(3), cam.camera_matrix, cam.dist_coeffs
    )
    np.testing.assert_allclose(cam.distort_normalized(norm), projected.reshape(-1, 2), atol=1e-9)
    np.testing.assert_allclose(cam.normalize(cam.distort_normalized(norm)), norm, atol=1e-9)
    ideal_px = norm * [cam.camera_matrix[0, 0], cam.camera_matrix[1, 1]] + cam.camera_matrix[:2, 2]
    np.testing.assert_allclose(cam.undistort_points(cam.distort_points(ideal_px)), ideal_px, atol=1e-6)
    assert cam.normalize(np.zeros((0, 2))).shape == (0, 2)
