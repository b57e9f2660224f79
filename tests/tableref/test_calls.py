"""Calls at the line on a rendered frame: never a confident wrong call."""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np
import pytest

from calibration.camera import camera_from_dict
from rules import TableState
from synth.calls import LINES_MM, OFFSETS_MM, CallResult, LinePair, judge_pairs, line_pairs_scene
from synth.render import Image, Truth, render
from synth.scene import Scene
from tableref.pipeline.frame import detect_frame
from tableref.pipeline.identity import carry_identities
from tableref.settings import Settings
from tests.vision.hand_rules import hand_rule_config


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
def test_no_wrong_clear_call_on_a_rendered_frame(config: Settings, lens: bool) -> None:
    scene, pairs = line_pairs_scene(11, "720p")
    image, truth = render(scene, 11)
    camera = camera_from_dict(dict(truth.camera)) if lens else None
    analysis = detect_frame(np.asarray(image), scene.table, config, camera)
    state = carry_identities(analysis.state, truth.state, 10.0, take_bases=True)
    results = judge_pairs(state, pairs, close_sigmas=2.0)
    assert len(results) >= 4
    assert [r for r in results if r.wrong] == []


@functools.cache
def _line_pairs_frame(scene_seed: int, resolution: str, render_seed: int) -> tuple[Scene, list[LinePair], Image, Truth]:
    scene, pairs = line_pairs_scene(scene_seed, resolution)
    return (scene, pairs, *render(scene, render_seed))


def _with_vision(config: Settings, name: str, value: float | None) -> Settings:
    """``config`` with one vision setting changed (None: as it is)."""
    return config if value is None else replace(config, vision=config.vision.replaced({name: value}))


def _call_on_pair(
    frame: tuple[Scene, list[LinePair], Image, Truth], config: Settings, lens: bool, a: str, b: str
) -> tuple[CallResult, TableState]:
    """The call on the pair ``a``-``b`` of a rendered frame, measured as `tableref measure` does (the truth as the
    roster), and the state it was made on."""
    scene, pairs, image, truth = frame
    camera = camera_from_dict(dict(truth.camera)) if lens else None
    analysis = detect_frame(np.asarray(image), scene.table, config, camera, roster=truth.state)
    state = carry_identities(analysis.state, truth.state, 10.0, take_bases=True)
    results = [r for r in judge_pairs(state, pairs, close_sigmas=2.0) if {r.pair.a, r.pair.b} == {a, b}]
    assert len(results) == 1
    return results[0], state


# A 4K frame from a low camera (1.18 px/mm) in which a figure lies on the mat beside its 25 mm base ("p0a"): the
# outermost ring round the base's seed is the figure's outline with a neighbour's arc, and read that way alone the
# base was lost and its figure taken for it in colour, 9.6 mm off with a sigma of 0.63 mm: a wrong `clear` call.
@pytest.mark.parametrize(("second_ring_mm", "wrong"), [(None, False), (0.0, True)])
def test_a_base_whose_figure_lies_beside_it_is_read_by_its_own_rim(
    config: Settings, second_ring_mm: float | None, wrong: bool
) -> None:
    frame = _line_pairs_frame(1349, "4k", 349)
    # the finder's look, off here, finds the base again where this rule is off: the rule is what is tested
    config = _with_vision(config, "finder.seed_probability", 0.0)
    result, state = _call_on_pair(frame, _with_vision(config, "rim.second_ring_mm", second_ring_mm), True, "p0a", "p0b")
    assert result.wrong is wrong
    seen, placed = state.model("p0a"), frame[3].state.model("p0a")
    assert (math.hypot(seen.x_mm - placed.x_mm, seen.y_mm - placed.y_mm) < 1.0) is not wrong


# Rendered frames on which the call on a pair was once wrongly `clear`, and the setting whose rule ended it: with the
# rule the call is `close`; with the setting as it was before, `clear` and wrong.
_ONCE_WRONG = [
    # 1080p measured without camera.json: a grey 28.5 mm base on a grey mat ("p4b") shows little but its figure; its
    # edges are read on 56 % of the rays as a circle round the figure and a patch of mat, 8.7 mm off. Its pair is in
    # base contact; with the sigma of a fully seen rim the call was `clear`.
    ((1013, "1080p", 13), False, ("p4a", "p4b"), "other_readings.unseen_rim_sigma_share", 0.0),
    # 4K: a green 25 mm base on a green mat ("p16b") carries a figure whose cloak, of the base's own green, hangs over
    # its rim; the fit at the known size puts the wall where the mat is, far out of place (0.42 of the way from the
    # top's level to the mat's), 1.8 mm off. Its pair lies 0.2 mm inside the 2" line; with the doubt of a wall barely
    # out of place (half the top disc's shift) the call was `clear`.
    ((1331, "4k", 331), True, ("p16a", "p16b"), "outline.wall_far_doubt", 0.5),
]


@pytest.mark.parametrize(("frame", "lens", "pair", "setting", "before"), _ONCE_WRONG)
@pytest.mark.parametrize("ruled", [True, False])
def test_a_call_once_wrongly_clear_is_close(
    config: Settings,
    frame: tuple[int, str, int],
    lens: bool,
    pair: tuple[str, str],
    setting: str,
    before: float,
    ruled: bool,
) -> None:
    # the rule is one of the hand rules' (see tests.vision.hand_rules), tested with them on
    rules_on = _with_vision(hand_rule_config(), setting, None if ruled else before)
    result, _ = _call_on_pair(_line_pairs_frame(*frame), rules_on, lens, *pair)
    assert result.wrong is not ruled
    assert result.call == ("close" if ruled else "clear")
    if ruled:
        # the detector as it stands calls the pair right (asked once a frame)
        assert not _call_on_pair(_line_pairs_frame(*frame), config, lens, *pair)[0].wrong
