"""Random scenes look like a game: units in loose groups, touching and 1 mm gaps, a plausible camera."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calibration.spec import load_table_spec
from synth.errors import SceneError
from synth.generate import (
    CAMERA_HEIGHT_MM,
    CAMERA_TILT_DEG,
    K1_RANGE,
    MARKER_CLEARANCE_MM,
    RESOLUTIONS,
    UNIT_BASES_MM,
    UNIT_SIZES,
    random_scene,
)
from synth.prints import MARKER_MARGIN_MM
from synth.render import hand_shapes
from synth.scene import Scene

SEEDS = [0, 1, 2, 3, 4, 5]


def _gaps(scene: Scene) -> np.ndarray:
    xy = np.array([(m.model.x_mm, m.model.y_mm) for m in scene.models])
    r = np.array([m.model.base.semi_axes_mm[0] for m in scene.models])
    gaps = np.hypot(*(xy[:, None] - xy[None]).transpose(2, 0, 1)) - r[:, None] - r[None]
    return gaps[np.triu_indices(len(r), 1)]


@pytest.mark.parametrize("seed", SEEDS)
def test_bases_never_overlap_and_stay_on_the_table_off_the_markers(seed: int) -> None:
    scene = random_scene(seed, "1080p", n_models=50, clutter="lots")
    assert 40 <= len(scene.models) <= 50
    assert _gaps(scene).min() >= -1e-6
    table = scene.table
    for m in scene.models:
        r = m.model.base.semi_axes_mm[0]
        assert m.model.base.diameter_mm in UNIT_BASES_MM  # type: ignore[union-attr]
        assert r <= m.model.x_mm <= table.width_mm - r and r <= m.model.y_mm <= table.depth_mm - r
        assert 3.0 <= m.rim_height_mm <= 5.0
        for marker in table.markers:
            reach = marker.size_mm / 2.0 + MARKER_MARGIN_MM + MARKER_CLEARANCE_MM
            dx = max(abs(m.model.x_mm - marker.x_mm) - reach, 0.0)
            dy = max(abs(m.model.y_mm - marker.y_mm) - reach, 0.0)
            assert math.hypot(dx, dy) >= r - 1e-6


def test_games_have_touching_and_one_mm_pairs_within_and_across_units() -> None:
    touching = near = enemy_close = 0
    for seed in SEEDS:
        scene = random_scene(seed, "1080p", n_models=50, clutter="some")
        models = scene.models
        player = {u.id: u.player for u in scene.units}
        gaps = _gaps(scene)
        touching += int((gaps < 1e-6).sum())
        near += int(((gaps > 0.3 - 1e-9) & (gaps < 1.6)).sum())
        iu = np.triu_indices(len(models), 1)
        for k, (i, j) in enumerate(zip(*iu, strict=True)):
            a, b = models[i].model.unit, models[j].model.unit
            if gaps[k] < 1.6 and player[a] != player[b]:  # type: ignore[index]
                enemy_close += 1
    assert touching >= 20
    assert near >= 15
    assert enemy_close >= 3


@pytest.mark.parametrize("seed", SEEDS)
def test_units_are_groups_of_five_to_ten_with_a_leader(seed: int) -> None:
    scene = random_scene(seed, "1080p", n_models=60, clutter="none")
    sizes = {}
    for u in scene.units:
        members = [m for m in scene.models if m.model.unit == u.id]
        assert u.leader in {m.model.id for m in members}
        assert u.player in ("red", "blue")
        sizes[u.id] = (
            len(members),
            members[0].model.base.semi_axes_mm[0] * 2.0,
            len({m.rim_height_mm for m in members}),
        )
    small = [n for n, d, _ in sizes.values() if d < 50.0]
    # Every unit but the last (cut to the model count) or one that ran out of room has 5-10 models.
    assert sum(UNIT_SIZES[0] <= n <= UNIT_SIZES[1] for n in small) >= len(small) - 2
    assert all(heights == 1 for _, _, heights in sizes.values())


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("resolution", ["4k", "1080p"])
def test_camera_is_high_tilted_a_little_with_a_real_lens(seed: int, resolution: str) -> None:
    scene = random_scene(seed, resolution, n_models=0, clutter="none")
    cam = scene.camera
    assert (cam.image_width, cam.image_height) == RESOLUTIONS[resolution]
    assert CAMERA_HEIGHT_MM[0] <= cam.position_mm[2] <= CAMERA_HEIGHT_MM[1]
    axis = np.subtract(cam.look_at_mm, cam.position_mm)
    tilt = math.degrees(math.acos(-axis[2] / np.linalg.norm(axis)))
    assert CAMERA_TILT_DEG[0] <= tilt <= CAMERA_TILT_DEG[1] + 0.01
    assert K1_RANGE[0] <= cam.k1 <= K1_RANGE[1]
    spec = load_table_spec()
    corners = np.array([[0, 0, 0], [spec.width_mm, 0, 0], [spec.width_mm, spec.depth_mm, 0], [0, spec.depth_mm, 0]])
    px = cam.project(corners)
    assert (px >= 0).all() and (px[:, 0] < cam.image_width).all() and (px[:, 1] < cam.image_height).all()


def test_same_seed_same_scene() -> None:
    assert random_scene(11, "1080p", 30, "lots") == random_scene(11, "1080p", 30, "lots")
    assert random_scene(11, "1080p", 30, "lots") != random_scene(12, "1080p", 30, "lots")


@pytest.mark.parametrize("seed", SEEDS)
def test_hands_reach_in_above_the_table(seed: int) -> None:
    scene = random_scene(seed, "1080p", n_models=20, clutter="lots")
    assert len(scene.hands) == 1
    lowest = min(float(s.hull()[:, 2].min()) for s in hand_shapes(scene.hands[0]))
    assert lowest >= 25.0 - 1e-6


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"resolution": "8k"}, "resolution"), ({"clutter": "tons"}, "clutter"), ({"n_models": -1}, "n_models")],
)
def test_bad_arguments_are_scene_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SceneError, match=message):
        random_scene(0, **kwargs)  # type: ignore[arg-type]
