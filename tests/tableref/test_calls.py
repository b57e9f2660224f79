"""Calls at the line on a rendered frame: never a confident wrong call."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.camera import camera_from_dict
from tableref.calls import LINES_MM, OFFSETS_MM, judge_pairs, line_pairs_scene
from tableref.config import Config
from tableref.pipeline import carry_identities, detect_frame
from tableref.synth.render import render


def test_scene_places_every_pair_at_its_gap() -> None:
    scene, pairs = line_pairs_scene(7, "720p")
    assert len(pairs) == 2 * len(LINES_MM) * len(OFFSETS_MM)
    state = scene.state()
    for pair in pairs:
        a, b = state.model(pair.a), state.model(pair.b)
        gap = np.hypot(a.x_mm - b.x_mm, a.y_mm - b.y_mm) - a.base.semi_axes_mm[0] - b.base.semi_axes_mm[0]
        assert gap == pytest.approx(pair.gap_mm)
    assert {round(abs(p.gap_mm - p.limit_mm), 6) for p in pairs} == set(OFFSETS_MM)


@pytest.mark.parametrize("lens", [True, False])
def test_no_wrong_clear_call_on_a_rendered_frame(config: Config, lens: bool) -> None:
    scene, pairs = line_pairs_scene(11, "720p")
    image, truth = render(scene, 11)
    camera = camera_from_dict(dict(truth.camera)) if lens else None
    analysis = detect_frame(np.asarray(image), scene.table, config, camera)
    state = carry_identities(analysis.state, truth.state, 10.0, config.pipeline.roster_size_tolerance_mm)
    results = judge_pairs(state, pairs, close_sigmas=2.0)
    assert len(results) >= 4
    assert [r for r in results if r.wrong] == []
