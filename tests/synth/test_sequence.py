"""Sequences: settled states and the moves between them, with a hand over the moving models."""

from __future__ import annotations

import numpy as np
import pytest

from synth.generate import random_scene, with_models
from synth.sequence import frame_seed, move_scenes, render_sequence


def test_render_sequence_gives_frames_per_state_with_fresh_noise() -> None:
    a = random_scene(21, "720p", n_models=6, clutter="none")
    b = with_models(a, {a.models[0].model.id: (a.models[0].model.x_mm + 30.0, a.models[0].model.y_mm)})
    frames = list(render_sequence([a, b], frames_per_state=2, seed=5))
    assert len(frames) == 4
    (i0, t0), (i1, t1), (_, t2), _ = frames
    assert t0.state == t1.state != t2.state
    assert not np.array_equal(i0, i1)  # sensor noise differs from frame to frame
    assert t2.state.models[0].x_mm == pytest.approx(a.models[0].model.x_mm + 30.0)
    assert len({frame_seed(5, i, f) for i in range(3) for f in range(3)}) == 9


@pytest.mark.parametrize("steps", [1, 3])
def test_moves_slide_models_under_a_hand(steps: int) -> None:
    before = random_scene(22, "720p", n_models=8, clutter="none")
    mover = before.models[2].model
    after = with_models(before, {mover.id: (mover.x_mm + 80.0, mover.y_mm - 40.0)})
    between = move_scenes(before, after, steps, seed=1)
    assert len(between) == steps
    xs = [next(m.model.x_mm for m in s.models if m.model.id == mover.id) for s in between]
    assert xs == pytest.approx([mover.x_mm + 80.0 * (k + 1) / (steps + 1) for k in range(steps)])
    for scene in between:
        assert len(scene.hands) == 1
        # Only the moving model changes.
        others = [m for m in scene.models if m.model.id != mover.id]
        assert others == [m for m in after.models if m.model.id != mover.id]


def test_no_move_no_hand() -> None:
    scene = random_scene(23, "720p", n_models=5, clutter="none")
    assert all(not s.hands for s in move_scenes(scene, scene, 2, seed=0))
