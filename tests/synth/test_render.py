"""The renderer is exact: what it draws lands where the camera model says, to small fractions of a pixel."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from calibration.spec import TableSpec, load_table_spec
from rules.state import Base, Model, OvalBase, RoundBase, state_from_dict
from synth.camera import Camera
from synth.errors import SceneError
from synth.generate import FLAT_MAT, SHARP, fit_camera, plain_scene, random_scene
from synth.render import SKY_FALLOFF, render, sample_offsets, visibility
from synth.scene import BASE_COLOURS, Scene, SceneModel, TerrainBlock

SPEC = load_table_spec()
ROUND_32 = RoundBase(32.0)
CENTRE = (SPEC.width_mm / 2.0, SPEC.depth_mm / 2.0, 0.0)
# Lenses and poses: straight down and undistorted, tilted with barrel distortion, tilted with pincushion.
VIEWS = {
    "straight": ((914.5, 609.5, 1400.0), (0.0, 0.0, 0.0, 0.0, 0.0)),
    "barrel": ((1150.0, 800.0, 1300.0), (-0.15, 0.01, 0.0005, -0.0004, 0.0)),
    "pincushion": ((700.0, 450.0, 1500.0), (0.1, -0.01, -0.0006, 0.0003, 0.0)),
}
NOISY = dataclasses.replace(SHARP, blur_px=0.7, read_noise=1.5, shot_noise=2.0, jpeg_quality=92)


def _camera(view: str, size: tuple[int, int] = (1920, 1080), spec: TableSpec = SPEC) -> Camera:
    position, dist = VIEWS[view]
    return fit_camera(spec, size, position, CENTRE, dist=dist)


def _aruco_corners(image: np.ndarray, spec: TableSpec) -> dict[int, np.ndarray]:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    params.cornerRefinementWinSize = 5
    params.cornerRefinementMinAccuracy = 0.001
    params.cornerRefinementMaxIterations = 100
    corners, ids, _ = cv2.aruco.ArucoDetector(spec.aruco_dictionary(), params).detectMarkers(image)
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners, strict=True)}


def _spec_corners_px(cam: Camera, spec: TableSpec, marker_id: int) -> np.ndarray:
    corners = spec.marker(marker_id).corners_mm()
    return cam.project(np.c_[corners, np.zeros(4)])


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("imaging", [SHARP, NOISY], ids=["sharp", "noisy"])
def test_aruco_finds_markers_where_projectpoints_puts_them(view: str, imaging: object) -> None:
    cam = _camera(view)
    scene = dataclasses.replace(plain_scene(cam), imaging=imaging)
    image, _ = render(scene, seed=0)
    found = _aruco_corners(image, SPEC)
    assert sorted(found) == sorted(SPEC.marker_ids)
    errors = np.concatenate([np.linalg.norm(found[i] - _spec_corners_px(cam, SPEC, i), axis=1) for i in found])
    # The detector's own sub-pixel refinement is good to a few tenths of a pixel; the drawing is far better
    # (see the edge test below).
    assert errors.mean() < 0.3
    assert errors.max() < 0.6


def _edge_offset_px(grey: np.ndarray, point: np.ndarray, normal: np.ndarray) -> float:
    """Where a dark-to-bright step crosses the line through ``point`` along ``normal`` (px, + along normal): the
    area under the normalised profile, which a symmetric pixel footprint leaves unbiased."""
    offs = np.linspace(-4.0, 4.0, 321)
    q = point[None] + offs[:, None] * normal[None]
    x0 = np.floor(q[:, 0]).astype(int)
    y0 = np.floor(q[:, 1]).astype(int)
    ax, ay = q[:, 0] - x0, q[:, 1] - y0
    vals = (
        grey[y0, x0] * (1 - ax) * (1 - ay)
        + grey[y0, x0 + 1] * ax * (1 - ay)
        + grey[y0 + 1, x0] * (1 - ax) * ay
        + grey[y0 + 1, x0 + 1] * ax * ay
    )
    lo, hi = vals[:40].mean(), vals[-40:].mean()
    cover = (vals - lo) / (hi - lo)
    return float(offs[-1] - np.trapezoid(cover, offs))


@pytest.mark.parametrize("view", list(VIEWS))
def test_marker_outline_is_drawn_exactly(view: str) -> None:
    cam = _camera(view)
    image, _ = render(plain_scene(cam), seed=0)
    grey = image[..., 1].astype(np.float64)
    offsets = []
    for marker in SPEC.markers:
        corners = marker.corners_mm()
        centre = corners.mean(axis=0)
        for k in range(4):
            a, b = corners[k], corners[(k + 1) % 4]
            for s in np.linspace(0.2, 0.8, 13):
                # The true edge point and the edge's local direction, both through the lens.
                p = a + s * (b - a)
                step = (b - a) / np.linalg.norm(b - a) * 0.5
                px = cam.project(np.array([[*p, 0.0], [*(p - step), 0.0], [*(p + step), 0.0], [*centre, 0.0]]))
                along = px[2] - px[1]
                normal = np.array([-along[1], along[0]]) / np.linalg.norm(along)
                if normal @ (px[0] - px[3]) < 0:
                    normal = -normal  # outwards: from the black border to the white paper
                offsets.append(_edge_offset_px(grey, px[0], normal))
    # 4 x 4 samples place an edge that runs along the pixel grid to within half a sampling step (1/32 px); one
    # profile sees only a couple of pixels, so a few hundredths more. The outline as a whole sits on the truth.
    per_edge = np.asarray(offsets).reshape(-1, 13)
    assert abs(per_edge.mean()) < 0.01
    assert np.abs(per_edge.mean(axis=1)).max() < 0.04
    assert np.abs(per_edge).max() < 0.12


def _rim_scene(cam: Camera, seed: int) -> Scene:
    """Bases with bright tops and black walls on a mat as dark as a wall in the flat light: the top rim is the
    only edge."""
    rng = np.random.default_rng(seed)
    spots = [(300, 250), (1500, 300), (900, 600), (400, 1000), (1550, 950), (1200, 700)]
    models = [
        SceneModel(
            Model(
                f"m{i}",
                None,
                x + rng.uniform(-1, 1),
                y + rng.uniform(-1, 1),
                RoundBase(float(rng.choice([25, 32, 60]))),
            ),
            float(rng.uniform(3.0, 5.0)),
            "black",
            "sand",
            0.0,
            None,
        )
        for i, (x, y) in enumerate(spots)
    ]
    wall = tuple(c * (1.0 - SKY_FALLOFF) for c in BASE_COLOURS["black"])
    scene = plain_scene(cam, models=models)
    return dataclasses.replace(scene, mat=dataclasses.replace(FLAT_MAT, colour_a=wall, colour_b=wall, floor=wall))


@pytest.mark.parametrize("view", list(VIEWS))
def test_base_top_rim_lands_on_the_truth(view: str) -> None:
    px_per_mm_rect = 10.0
    cam = _camera(view)
    scene = _rim_scene(cam, seed=3)
    image, truth = render(scene, seed=0)
    grey = image.astype(np.float32).mean(axis=2)
    dark = float(np.median(grey))
    for m in scene.models:
        r = m.model.base.semi_axes_mm[0]
        # Undistort and rectify in one step: sample the image where the plane z = rim height projects.
        xs = np.arange(-r - 4.0, r + 4.0, 1.0 / px_per_mm_rect) + 0.5 / px_per_mm_rect
        gx, gy = np.meshgrid(xs + m.model.x_mm, xs + m.model.y_mm)
        plane = np.stack([gx.ravel(), gy.ravel(), np.full(gx.size, m.rim_height_mm)], axis=-1)
        src = cam.project(plane).reshape(*gx.shape, 2).astype(np.float32)
        rect = cv2.remap(grey, src[..., 0], src[..., 1], cv2.INTER_LINEAR)
        bright = float(np.median(rect[np.hypot(gx - m.model.x_mm, gy - m.model.y_mm) < r - 3.0]))
        cover = np.clip((rect - dark) / (bright - dark), 0.0, 1.0)
        # The simplest circle fit: the centroid of the covered area.
        cx = float((cover * gx).sum() / cover.sum())
        cy = float((cover * gy).sum() / cover.sum())
        error_px = np.hypot(cx - m.model.x_mm, cy - m.model.y_mm) / cam.mm_per_px()
        assert error_px < 0.06, f"{m.model.id}: centre off by {error_px:.3f} px"
        assert truth.state.model(m.model.id).x_mm == m.model.x_mm


def test_same_seed_same_image_and_other_seed_other_noise() -> None:
    scene = random_scene(5, "720p", n_models=12, clutter="some")
    a, truth_a = render(scene, seed=1)
    b, truth_b = render(scene, seed=1)
    c, _ = render(scene, seed=2)
    assert a.shape == (720, 1280, 3) and a.dtype == np.uint8
    assert np.array_equal(a, b)
    assert truth_a.to_dict() == truth_b.to_dict()
    differ = np.abs(a.astype(int) - c.astype(int))
    assert differ.mean() > 0.5
    # Only the noise differs: the two frames agree closely on average.
    assert abs(a.mean() - c.mean()) < 0.5


def _scene_with_one_base(cam: Camera, x: float, y: float, base: Base = ROUND_32, **extra: object) -> Scene:
    model = SceneModel(Model("m1", None, x, y, base), 4.0, "black", "black", 0.0, None)
    return dataclasses.replace(plain_scene(cam, models=[model]), **extra)


@pytest.mark.parametrize("base", [ROUND_32, OvalBase(70.0, 45.0, 30.0)], ids=["round", "oval"])
@pytest.mark.parametrize(("x", "y"), [(914.5, 609.5), (400.0, 300.0), (1500.0, 1000.0)])
def test_free_base_is_fully_visible(x: float, y: float, base: Base) -> None:
    scene = _scene_with_one_base(_camera("barrel"), x, y, base)
    assert visibility(scene) == {"m1": 1.0}


def test_scene_that_is_no_table_state_is_a_scene_error() -> None:
    model = SceneModel(Model("m1", "nobody", 100.0, 100.0, ROUND_32), 4.0, "black", "black", 0.0, None)
    scene = plain_scene(_camera("straight", (640, 360)))
    with pytest.raises(SceneError, match="nobody"):
        dataclasses.replace(scene, models=(model,))


@pytest.mark.parametrize("shift_mm", [-4.0, 0.0, 4.0])
def test_base_half_under_a_walkway_is_half_visible(shift_mm: float) -> None:
    # Camera straight over the base, a walkway slab whose edge crosses it (near) the middle.
    cam = fit_camera(SPEC, (1280, 720), (900.0, 600.0, 1400.0), (900.0, 600.0, 0.0))
    edge_x = 900.0 + shift_mm
    slab = TerrainBlock("walk", edge_x + 100.0, 600.0, 200.0, 150.0, 0.0, 50.0, 60.0, (0.4, 0.4, 0.4))
    scene = _scene_with_one_base(cam, 900.0, 600.0, terrain=(slab,))
    seen = visibility(scene)["m1"]
    # The rim left of the edge line (seen from straight above) is visible: arc share from the geometry.
    expected = 1.0 - np.arccos(shift_mm / 16.0) / np.pi
    assert seen < 0.6
    assert abs(seen - expected) < 0.02


def test_figures_and_hands_hide_rims_and_frame_edges_cut_them() -> None:
    scene = random_scene(7, "720p", n_models=30, clutter="lots")
    seen = visibility(scene)
    assert set(seen) == {m.model.id for m in scene.models}
    assert all(0.0 <= v <= 1.0 for v in seen.values())
    assert min(seen.values()) < 1.0  # weapons and cloaks over rims
    # A base centred on the left frame edge (shift the principal point to put it there) is half seen.
    cam = _camera("straight", (1280, 720))
    centre_u = cam.project(np.array([[100.0, 609.5, 4.0]]))[0, 0]
    on_edge = dataclasses.replace(cam, cx=cam.cx - centre_u)
    assert abs(visibility(_scene_with_one_base(on_edge, 100.0, 609.5))["m1"] - 0.5) < 0.02


def test_truth_is_a_table_state_with_camera_and_visibility() -> None:
    scene = random_scene(9, "720p", n_models=15, clutter="some")
    image, truth = render(scene, seed=4)
    doc = truth.to_dict()
    state = state_from_dict(doc)
    assert [m.id for m in state.models] == [m.model.id for m in scene.models]
    # the truth's round bases say how high their rims stand, as a roster would
    assert all(
        (s.x_mm, s.y_mm, s.base)
        == (m.model.x_mm, m.model.y_mm, dataclasses.replace(m.model.base, height_mm=m.rim_height_mm))
        for s, m in zip(state.models, scene.models, strict=True)
    )
    assert {u.id for u in state.units} == {m.model.unit for m in scene.models}
    assert doc["camera"] == scene.camera.to_json()
    assert (doc["camera"]["image_height"], doc["camera"]["image_width"]) == image.shape[:2]
    assert set(doc["visibility"]) == {m.model.id for m in scene.models}
    assert doc["render"]["seed"] == 4
    assert len(state.terrain) == len(scene.terrain)
    # The projected rim centres in the render section are where the camera puts them.
    for entry, m in zip(doc["render"]["models"], scene.models, strict=True):
        px = scene.camera.project(np.array([[m.model.x_mm, m.model.y_mm, m.rim_height_mm]]))[0]
        assert np.allclose(entry["rim_center_px"], px)


@pytest.mark.parametrize("s", [1, 2, 3, 4])
def test_samples_fill_the_pixel_evenly(s: int) -> None:
    offsets = sample_offsets(s)
    assert offsets.shape == (s * s, 2)
    assert np.abs(offsets).max() < 0.5
    assert np.allclose(offsets.mean(axis=0), 0.0)
    # No two samples share a column or a row.
    assert len(np.unique(offsets[:, 0])) == s * s and len(np.unique(offsets[:, 1])) == s * s
