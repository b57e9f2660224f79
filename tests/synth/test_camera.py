"""The synthetic camera agrees with OpenCV: projection, rays, and the inverse of the lens."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.spec import load_table_spec
from synth.camera import Camera, distort, to_cv_frame, undistort
from synth.errors import SceneError
from synth.generate import fit_camera

LENSES = [
    (0.0, 0.0, 0.0, 0.0, 0.0),
    (-0.15, 0.02, 0.001, -0.001, 0.0),
    (0.1, -0.02, -0.0008, 0.0005, 0.0),
    (-0.05, 0.01, 0.0, 0.0, 0.002),
]


@pytest.mark.parametrize("dist", LENSES)
def test_undistort_inverts_distort(dist: tuple[float, ...]) -> None:
    rng = np.random.default_rng(1)
    xn = rng.uniform(-0.8, 0.8, 2000)
    yn = rng.uniform(-0.5, 0.5, 2000)
    xd, yd = distort(xn, yn, np.asarray(dist))
    back_x, back_y = undistort(xd, yd, np.asarray(dist))
    assert np.abs(back_x - xn).max() < 1e-12
    assert np.abs(back_y - yn).max() < 1e-12


@pytest.mark.parametrize("dist", LENSES)
@pytest.mark.parametrize(
    ("position", "roll"),
    [((914.5, 609.5, 1400.0), 0.0), ((1200.0, 400.0, 1300.0), 3.0), ((600.0, 900.0, 1550.0), -4.0)],
)
def test_rays_land_where_projectpoints_says(dist: tuple[float, ...], position: tuple[float, ...], roll: float) -> None:
    cam = fit_camera(load_table_spec(), (1280, 720), position, (914.5, 609.5, 0.0), dist=dist, roll_deg=roll)
    rng = np.random.default_rng(2)
    u = rng.uniform(0, 1279, 500)
    v = rng.uniform(0, 719, 500)
    rays = cam.rays(u, v)
    origin = np.asarray(cam.position_mm)
    # Walk each ray to a random depth and project the point back: it must land on its own pixel.
    points = origin + rays * rng.uniform(300.0, 1500.0, (500, 1))
    back = cam.project(points)
    assert np.abs(back - np.stack([u, v], axis=-1)).max() < 1e-6
    # And OpenCV, handed only the camera.json and the pose, agrees.
    js = cam.to_json()
    rvec, tvec = cam.rvec_tvec()
    px, _ = cv2.projectPoints(
        to_cv_frame(points), rvec, tvec, np.asarray(js["camera_matrix"]), np.asarray(js["dist_coeffs"])
    )
    assert np.abs(px.reshape(-1, 2) - back).max() < 1e-9


def test_camera_json_format() -> None:
    cam = fit_camera(load_table_spec(), (1920, 1080), (914.5, 609.5, 1400.0), (914.5, 609.5, 0.0))
    js = cam.to_json()
    assert set(js) == {"image_width", "image_height", "camera_matrix", "dist_coeffs"}
    assert (js["image_width"], js["image_height"]) == (1920, 1080)
    assert np.asarray(js["camera_matrix"]).shape == (3, 3)
    assert len(js["dist_coeffs"]) == 5


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
@pytest.mark.parametrize("k1", [-0.15, 0.0, 0.1])
def test_fitted_camera_holds_the_table(size: tuple[int, int], k1: float) -> None:
    spec = load_table_spec()
    cam = fit_camera(spec, size, (1100.0, 500.0, 1300.0), (914.5, 609.5, 0.0), dist=(k1, 0.0, 0.0, 0.0, 0.0))
    corners = np.array([[0, 0, 0], [spec.width_mm, 0, 0], [spec.width_mm, spec.depth_mm, 0], [0, spec.depth_mm, 0]])
    px = cam.project(corners)
    assert (px >= 0).all()
    assert (px[:, 0] <= size[0] - 1).all() and (px[:, 1] <= size[1] - 1).all()
    # Filled: some corner comes within a few percent of the frame edge.
    slack = np.min(np.concatenate([px[:, 0], size[0] - 1 - px[:, 0], px[:, 1], size[1] - 1 - px[:, 1]]))
    assert slack < 0.05 * size[0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fx": 0.0}, "focal"),
        ({"image_width": 8}, "at least 16"),
        ({"look_at_mm": (914.5, 609.5, 1400.0)}, "must differ"),
    ],
)
def test_bad_camera_is_a_scene_error(kwargs: dict[str, object], message: str) -> None:
    base: dict[str, object] = {
        "image_width": 640,
        "image_height": 480,
        "fx": 500.0,
        "fy": 500.0,
        "cx": 320.0,
        "cy": 240.0,
        "k1": 0.0,
        "k2": 0.0,
        "p1": 0.0,
        "p2": 0.0,
        "k3": 0.0,
        "position_mm": (914.5, 609.5, 1400.0),
        "look_at_mm": (914.5, 609.5, 0.0),
    }
    base.update(kwargs)
    with pytest.raises(SceneError, match=message):
        Camera(**base)  # type: ignore[arg-type]


def test_folding_lens_is_refused() -> None:
    cam = Camera(
        1920, 1080, 900.0, 900.0, 960.0, 540.0, -0.6, 0.0, 0.0, 0.0, 0.0, (914.5, 609.5, 1400.0), (914.5, 609.5, 0.0)
    )
    with pytest.raises(SceneError, match="folds back"):
        cam.check_lens()
