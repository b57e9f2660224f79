"""Regression guard on realistic rendered frames: perspective, lens distortion, figures over the rims, shadows,
dice, tokens, printed circles, terrain and a hand (see :mod:`synth`), scored end to end.

Each frame is rendered once per test session (seeded, so always the same). The bounds sit a small margin below
what the detector reached when they were set, so that a change which loses bases, lets impostors through, gets
sizes or centres wrong or makes sigma overconfident fails here:

- 1080p, clutter "lots", seed 1006 (edges): recall 98 %, precision 95 %, sizes right 97 %, median centre error
  0.28 mm, every coordinate error within 2 sigma (before seeding by voting and the figure cue: recall 92 %,
  precision 92 %);
- 4K, seed 2002 (the appearance fit from three starts): recall 92 %, precision 100 %, sizes right 91 %, median
  0.23 mm, 94 % within 2 sigma; from one start sizes right 85 %, median 0.22 mm; with the edges alone the same
  frame gives sizes right 74 %, median 0.39 mm, 84 % within 2 sigma.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

import rules
from calibration.camera import CameraModel, camera_from_dict
from calibration.table import calibrate_table
from synth.generate import random_scene
from synth.make_samples import Sample, write_sample
from synth.render import render
from synth.scene import Mat, PrintedCircle, Scene, Token
from tableref.config import load_config
from tableref.evaluate import FrameScore, load_samples, score_frame
from tableref.evaluate import Sample as EvalSample
from tableref.pipeline.frame import detect_frame
from tableref.pipeline.view import rectified_scale
from tableref.settings import Settings
from tableref.sources import read_image
from tests.vision.hand_rules import hand_rule_config

_MODELS = 60
DARK, WHITE = (0.1, 0.1, 0.12), (0.85, 0.85, 0.85)
# resolution, seed: the frames
FRAMES = {"1080p": 1006, "4k": 2002}
# resolution -> lowest recall, precision, sizes right, share within 2 sigma; highest median centre error (mm)
BOUNDS = {
    # the finder's look takes three of this frame's tokens and dice for bases: 60 of 65 right
    "1080p": {"recall": 0.96, "precision": 0.9, "sizes": 0.92, "within_2_sigma": 0.9, "median_mm": 0.33},
    # the edges read the centres at 4K too (the appearance fit reads only sizes): 0.307 mm on this frame; precision
    # 0.952 with the finder's look (1.0 before)
    "4k": {"recall": 0.87, "precision": 0.94, "sizes": 0.87, "within_2_sigma": 0.9, "median_mm": 0.32},
}


@pytest.fixture(scope="session", params=sorted(FRAMES))
def rendered(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, FrameScore]:
    resolution: str = request.param
    seed = FRAMES[resolution]
    out: Path = tmp_path_factory.mktemp(f"rendered_{resolution}")
    scene = lambda: random_scene(seed, resolution, _MODELS, "lots")  # noqa: E731
    write_sample(Sample("frame", "regression frame", scene, seed), out)
    (sample,) = load_samples(out)
    config = load_config()
    return resolution, score_frame(sample, config, config.evaluate)


def _measures(score: FrameScore) -> dict[str, float]:
    return {
        "recall": score.recall,
        "precision": score.precision,
        "sizes": float(score.size_right.mean()),
        "within_2_sigma": float((abs(score.z) <= 2.0).mean()),
        "median_mm": float(np.median(score.error_mm)),
    }


@pytest.mark.parametrize("measure", ["recall", "precision", "sizes", "within_2_sigma"])
def test_rendered_frame_at_least(rendered: tuple[str, FrameScore], measure: str) -> None:
    resolution, score = rendered
    assert score.visible_count >= 20, "the frame holds enough visible bases to judge by"
    value, bound = _measures(score)[measure], BOUNDS[resolution][measure]
    assert value >= bound, f"{resolution}: {measure} {value:.3f} below {bound}"


def test_rendered_frame_centres(rendered: tuple[str, FrameScore]) -> None:
    resolution, score = rendered
    value, bound = _measures(score)["median_mm"], BOUNDS[resolution]["median_mm"]
    assert value <= bound, f"{resolution}: median centre error {value:.3f} mm above {bound}"


def test_a_base_whose_edges_ran_into_its_shadow_is_tested_again_at_its_footprint() -> None:
    # The bundled crowded 4K frame: the 32 mm base u10m7 (fully visible) has edges a round, tight circle, but the
    # band just inside them fails the disc test; at the footprint the appearance fit finds, it passes.
    sample = next(s for s in load_samples(Path(__file__).resolve().parents[2] / "sample_images") if "4k" in s.name)
    config = hand_rule_config()
    analysis = detect_frame(read_image(sample.image), sample.spec, config, sample.camera)
    truth = next(m for m in sample.truth["models"] if m["id"] == "u10m7")
    found = [
        m
        for m in analysis.state.models
        if np.hypot(m.x_mm - truth["x_mm"], m.y_mm - truth["y_mm"]) < 1.0 and m.base.diameter_mm == 32.0
    ]
    assert len(found) == 1


def _bundled(prefix: str) -> EvalSample:
    """The bundled sample whose name starts with ``prefix``."""
    samples = load_samples(Path(__file__).resolve().parents[2] / "sample_images")
    return next(s for s in samples if s.name.startswith(prefix))


# no vision setting changed
_AS_THEY_ARE: Mapping[str, float] = {}


def _vision_changed(changed: Mapping[str, float] = _AS_THEY_ARE) -> Settings:
    """The default settings with the vision settings ``changed``."""
    config = hand_rule_config()
    return replace(config, vision=config.vision.replaced(changed))


@functools.cache
def _as_they_are(prefix: str) -> FrameScore:
    """The bundled sample whose name starts with ``prefix``, scored with the default settings (once: several tests
    compare with it)."""
    config = hand_rule_config()
    return score_frame(_bundled(prefix), config, config.evaluate)


def _with_and_without(prefix: str, changed: Mapping[str, float] = _AS_THEY_ARE) -> tuple[FrameScore, FrameScore]:
    """The bundled sample whose name starts with ``prefix``, scored with the default settings and with the vision
    settings ``changed``."""
    other = _vision_changed(changed)
    return _as_they_are(prefix), score_frame(_bundled(prefix), other, other.evaluate)


def test_the_mats_own_blotches_are_not_bases() -> None:
    # The bundled 1080p frame of a melee on a blotchy sand mat: some blotches pass the disc test and the figure test
    # each, just (disc contrast 10-13, figure spread 6-11 grey levels); not both just. A blotch's inside has the mat's
    # colour, and no figure, so the test of rings with the mat's colour inside ends them too: either rule does.
    # The colour test also ends one false base on this frame that the blotch test lets through.
    with_rules, without = _with_and_without(
        "melee_hand", {"verdicts.faint_disc_contrast": 0.0, "verdicts.ring_inside_max_colour": 0.0}
    )
    assert with_rules.recall == without.recall
    assert with_rules.precision >= without.precision + 0.05
    _, by_colour_alone = _with_and_without("melee_hand", {"verdicts.faint_disc_contrast": 0.0})
    assert by_colour_alone.precision == with_rules.precision
    _, by_blotch_test_alone = _with_and_without("melee_hand", {"verdicts.ring_inside_max_colour": 0.0})
    assert without.precision < by_blotch_test_alone.precision < with_rules.precision


# A detection this near a die's centre (mm) is the die taken for a base: a die is 12-16 mm across, its shadow beside it.
_DIE_REACH_MM = 15.0


def _dice_taken(prefix: str, changed: Mapping[str, float] = _AS_THEY_ARE) -> int:
    """How many detections on the bundled sample whose name starts with ``prefix`` lie on a die, with the vision
    settings ``changed``."""
    sample = _bundled(prefix)
    found = detect_frame(read_image(sample.image), sample.spec, _vision_changed(changed), sample.camera).state.models
    dice = [(d["x_mm"], d["y_mm"]) for d in sample.truth["render"]["dice"]]
    return sum(1 for m in found if any(np.hypot(m.x_mm - x, m.y_mm - y) < _DIE_REACH_MM for x, y in dice))


def test_where_figures_blur_a_die_is_not_a_base() -> None:
    # The bundled 1080p melee: eight dice lie on the table; without the rule three of them (a die's top, its sides and
    # its shadow blur into a base's size) pass for bases, with it two: one a 32 mm circle round a 12 mm die and the mat
    # beside it, which shows no square inside, the other just under the bar (it goes at 0.35).
    assert _dice_taken("melee_hand") == 2
    assert _dice_taken("melee_hand", {"verdicts.die_square_agreement": 0.0}) == 3
    assert _dice_taken("melee_hand", {"verdicts.die_square_agreement": 0.35}) == 1
    with_rule, without = _with_and_without("melee_hand", {"verdicts.die_square_agreement": 0.0})
    assert with_rule.recall == without.recall
    assert with_rule.matched == without.matched


@pytest.mark.parametrize(
    "prefix",
    [
        # a white ring printed on the blotchy sand mat of the melee, 70 mm across
        "melee_hand",
        # a faint ring printed on the brown mat of the skirmish, 27 mm across
        "skirmish",
    ],
)
def test_where_figures_blur_a_printed_ring_with_the_mats_texture_inside_is_not_a_base(prefix: str) -> None:
    with_rule, without = _with_and_without(prefix, {"verdicts.ring_colour_figure_contrast": 0.0})
    assert with_rule.recall == without.recall
    assert with_rule.precision > without.precision


def test_a_printed_ring_with_a_wide_line_is_not_a_base() -> None:
    # The bundled crowded 4K frame: a yellow ring printed on the grey mat, its line wider than a base's wall, its
    # inner edge a 28.5 mm circle with the mat inside and no figure (in grey, and in colour either).
    with_rule, without = _with_and_without(
        "crowded_4k", {"verdicts.ring_min_figure_contrast": 0.0, "verdicts.ring_colour_figure_contrast": 0.0}
    )
    assert with_rule.recall == without.recall
    assert with_rule.precision > without.precision


# A 4K table with 12 bases, printed rings 3 mm wide (65 and 44 mm across, dark and white) and tokens 30 mm across
# with a printed ring (dark with a white ring, white with a dark one), on the light mat of seed 2000 of the eval sets.
_RING_ROWS_MM = ((400.0, 900.0), (700.0, 900.0), (1000.0, 900.0), (1300.0, 900.0))
_PRINTED = tuple(
    PrintedCircle(x, y + dy, radius, 3.0, colour)
    for dy in (0.0, -600.0)
    for (x, y), radius, colour in zip(_RING_ROWS_MM, (32.4, 22.2) * 2, (DARK, WHITE, WHITE, DARK), strict=True)
)
_TOKENS = tuple(
    Token(x, 600.0, 30.0, 2.5, colour, ring)
    for x, (colour, ring) in zip((400.0, 700.0, 1000.0, 1300.0), ((DARK, WHITE), (WHITE, DARK)) * 2, strict=True)
)
# Taken for bases when none of the rules below runs; the rules end these and lose no base (three rings still pass:
# their outer edge, on a mat whose texture spreads by 8-11 grey levels, is not taken for a ring).
_ENDED_MM = {(1300.0, 300.0), (400.0, 900.0), (1000.0, 900.0), (1300.0, 900.0), (1000.0, 600.0), (400.0, 600.0)}
_OFF_CENTRE = {"verdicts.off_centre_figure_contrast": 0.0}


@pytest.fixture(scope="module")
def printed_things() -> tuple[Scene, NDArray[np.uint8], CameraModel]:
    scene = random_scene(2000, "4k", 12, "none")
    mat = Mat((0.36, 0.52, 0.62), (0.3, 0.44, 0.56), 0.084, 3.15, (0.09, 0.1, 0.11), 419468846)
    scene = replace(scene, tokens=_TOKENS, printed=_PRINTED, dice=(), hands=(), mat=mat)
    image, truth = render(scene, 2000)
    return scene, np.asarray(image), camera_from_dict(dict(truth.camera))


@pytest.mark.parametrize(
    ("changed", "taken_mm"),
    [
        ({}, set()),
        # a circle at each edge of a ring's stroke; a token's plain middle inside a circle at its ring's outer edge;
        # a token's ring seen off centre
        ({"verdicts.ring_edge_mm": 0.0, "verdicts.ring_inside_max_colour": 0.0, **_OFF_CENTRE}, _ENDED_MM),
        ({**_OFF_CENTRE}, {(400.0, 600.0)}),
        # the circle round a token's plain middle, which is also the same all the way round from a centre nearby
        ({"verdicts.token_ring_mm": 0.0, **_OFF_CENTRE}, {(400.0, 600.0), (1000.0, 600.0)}),
        ({"verdicts.token_ring_mm": 0.0}, set()),
        # the rings' inner edges have the mat's colour inside, and no figure: that test ends them on its own
        ({"verdicts.ring_edge_mm": 0.0, **_OFF_CENTRE}, {(400.0, 600.0), (1000.0, 600.0)}),
        ({"verdicts.ring_inside_max_colour": 0.0}, set()),
    ],
)
def test_the_other_edge_of_a_printed_ring_and_a_tokens_ring_are_not_bases(
    printed_things: tuple[Scene, NDArray[np.uint8], CameraModel],
    changed: dict[str, float],
    taken_mm: set[tuple[float, float]],
) -> None:
    scene, image, camera = printed_things
    config = hand_rule_config()
    config = replace(config, vision=config.vision.replaced(changed))
    models = detect_frame(image, scene.table, config, camera).state.models
    things = [(p.x_mm, p.y_mm) for p in scene.printed] + [(t.x_mm, t.y_mm) for t in scene.tokens]
    truth = scene.state().models
    assert all(any(np.hypot(m.x_mm - t.x_mm, m.y_mm - t.y_mm) < 2.0 for m in models) for t in truth)
    taken = {xy for xy in things if any(np.hypot(m.x_mm - xy[0], m.y_mm - xy[1]) < 10.0 for m in models)}
    assert taken & _ENDED_MM == taken_mm


# Frame 1004 of the 1080p evaluation set (30 models asked): a hand reaches in over the table, and with the rule
# below switched off a fingertip and the end of the forearm, 58 and 119 mm from the wrist, pass for bases.
_HAND_SEED = 1004
_HAND_MODELS = 30
# A detection this far from every base is none of them; within this distance of the wrist it lies on the hand.
_MATCH_GATE_MM = 8.0
_HAND_REACH_MM = 250.0


def _one_frame(
    tmp_path_factory: pytest.TempPathFactory, name: str, seed: int, resolution: str, models: int
) -> EvalSample:
    """Frame ``seed`` of the evaluation sets at ``resolution`` (``models`` asked, clutter "lots"), rendered into a
    folder of its own."""
    out: Path = tmp_path_factory.mktemp(name)
    scene = lambda: random_scene(seed, resolution, models, "lots")  # noqa: E731
    write_sample(Sample("frame", name, scene, seed), out)
    (sample,) = load_samples(out)
    return sample


@pytest.fixture(scope="module")
def hand_frame(tmp_path_factory: pytest.TempPathFactory) -> EvalSample:
    return _one_frame(tmp_path_factory, "hand_frame", _HAND_SEED, "1080p", _HAND_MODELS)


def _found_and_stray(
    sample: EvalSample, changed: Mapping[str, float] = _AS_THEY_ARE
) -> tuple[list[rules.Model], list[rules.Model]]:
    """The detections in ``sample`` with the vision settings ``changed``, and those of them that lie near no base."""
    found = detect_frame(read_image(sample.image), sample.spec, _vision_changed(changed), sample.camera).state.models
    bases = [(m["x_mm"], m["y_mm"]) for m in sample.truth["models"]]
    stray = [m for m in found if all(np.hypot(m.x_mm - x, m.y_mm - y) > _MATCH_GATE_MM for x, y in bases)]
    return list(found), stray


def _stray_and_on_hand(sample: EvalSample, changed: Mapping[str, float] = _AS_THEY_ARE) -> tuple[int, int]:
    """Detections in ``sample`` with the vision settings ``changed``: how many match a base, how many lie on the
    hand instead."""
    found, stray = _found_and_stray(sample, changed)
    wrists = [h["wrist_mm"][:2] for h in sample.truth["render"]["hands"]]
    on_hand = [m for m in stray if any(np.hypot(m.x_mm - x, m.y_mm - y) < _HAND_REACH_MM for x, y in wrists)]
    return len(found) - len(stray), len(on_hand)


def test_fingertips_and_forearms_are_not_bases(hand_frame: EvalSample) -> None:
    bases, on_hand = _stray_and_on_hand(hand_frame)
    bases_without, on_hand_without = _stray_and_on_hand(hand_frame, {"verdicts.round_end_max_wobble": 0.0})
    assert (on_hand, on_hand_without) == (0, 2)
    assert bases == bases_without


# Frames 1000 (30 models asked), 4003 and 4007 (70 each) of the 1080p evaluation set, and the hand's frame 1004 above:
# bases each found in the right place and lost, without one of the rules below, because their size was read one step
# off, or their rim read rough or was seen over little of its length.
_SIZE_OFF_FRAMES = {1000: 30, 4003: 70, 4007: 70}
# A detection this close to a base, of its size, has found it.
_FOUND_MM = 3.0


@pytest.fixture(scope="module")
def size_off_frames(tmp_path_factory: pytest.TempPathFactory, hand_frame: EvalSample) -> dict[int, EvalSample]:
    out: Path = tmp_path_factory.mktemp("size_off_frames")
    for seed, models in _SIZE_OFF_FRAMES.items():
        scene = lambda seed=seed, models=models: random_scene(seed, "1080p", models, "lots")  # noqa: E731
        write_sample(Sample(f"frame_{seed}", "bases read a size off", scene, seed), out)
    samples = {int(s.name.removeprefix("frame_")): s for s in load_samples(out)}
    return {**samples, _HAND_SEED: hand_frame}


def _found_ids(sample: EvalSample, changed: Mapping[str, float] = _AS_THEY_ARE) -> set[str]:
    """The ids of the bases in ``sample`` found in place and at their size, with the vision settings ``changed``."""
    config = hand_rule_config()
    config = replace(config, vision=config.vision.replaced(changed))
    return _ids_of(sample, detect_frame(read_image(sample.image), sample.spec, config, sample.camera).state.models)


def _ids_of(sample: EvalSample, found: Sequence[rules.Model]) -> set[str]:
    """The ids of the bases in ``sample`` that one of ``found`` has in place and at its size."""
    return {
        t["id"]
        for t in sample.truth["models"]
        if any(
            np.hypot(m.x_mm - t["x_mm"], m.y_mm - t["y_mm"]) < _FOUND_MM
            and m.base.diameter_mm == t["base"]["diameter_mm"]
            for m in found
        )
    }


@pytest.mark.parametrize(
    ("seed", "changed", "lost"),
    [
        # a base read at the next size up overlaps a neighbour in contact by more than overlaps.max_mm
        (1000, {"overlaps.coarse_max_mm": 2.0}, {"u5m4"}),
        # the outermost ring is the contact shadow's outer edge; the base's rim, of the other polarity, lies inside
        (1004, {"rim.inner_ring_fraction": 0.0}, {"u2m8", "u4m6"}),
        # the rim model's blur correction moves the circle off every size; the edges' own circle fits one
        (4007, {"rim.model_fallback_mm": 0.0}, {"u1m1", "u8m4"}),
        # a rim rougher than circle.max_rms_px (1.0 px), or seen over less than min_edge_coverage, beside its unit's
        # bases (kin.min_bases): with the kin bars at the plain ones, the base is lost ...
        (1004, {"kin.max_fit_rms_px": 1.0}, {"u1m7"}),
        (4007, {"kin.max_fit_rms_px": 1.0}, {"u8m3"}),
        # ... and where a unit's base seen over a third of its rim is lost, the vote of its unit of seven is lost
        # with it, and other bases of the unit are read a size off. (That base itself, 27 mm, is read 28.5 mm with
        # every rule too, since its vote takes only bases fitted within size_vote.window_mm of its own fit.)
        (4003, {"kin.min_edge_coverage": 0.45}, {f"u6m{k}" for k in range(2, 8)}),
        (4003, {"kin.min_bases": 0}, {"u6m2", "u6m5", "u6m6"}),
    ],
)
def test_where_figures_blur_bases_read_a_size_off_are_still_found(
    size_off_frames: dict[int, EvalSample], seed: int, changed: dict[str, float], lost: set[str]
) -> None:
    sample = size_off_frames[seed]
    with_rules, without = _found_ids(sample), _found_ids(sample, changed)
    assert with_rules - without == lost
    assert without <= with_rules


# Frame 5008 of the 1080p evaluation set and 4004 of the 4K one (30 models asked each): rings printed 3 mm wide on the
# light blue mat, a white one and a purple one. Beside the stroke the band just outside its inner edge reads lighter
# than the mat inside, so the grey levels do not show the mat there; the colour does.
_RING_FRAMES = {("1080p", 5008): 30, ("4k", 4004): 30}
# A detection this near a printed circle's centre (mm), and near no base, is the circle taken for a base.
_PRINTED_REACH_MM = 10.0


@pytest.fixture(scope="module")
def ring_frames(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], EvalSample]:
    out: Path = tmp_path_factory.mktemp("ring_frames")
    for (resolution, seed), models in _RING_FRAMES.items():
        scene = lambda r=resolution, s=seed, m=models: random_scene(s, r, m, "lots")  # noqa: E731
        write_sample(Sample(f"frame_{resolution}_{seed}", "printed rings", scene, seed), out)
    return {(s.name.split("_")[1], int(s.name.split("_")[2])): s for s in load_samples(out)}


def _printed_taken(sample: EvalSample, changed: Mapping[str, float] = _AS_THEY_ARE) -> set[tuple[int, int]]:
    """The printed circles of ``sample`` (their centres, whole mm) taken for bases with the vision settings
    ``changed``."""
    _found, stray = _found_and_stray(sample, changed)
    return {
        (round(p["x_mm"]), round(p["y_mm"]))
        for p in sample.truth["render"]["printed"]
        if any(np.hypot(m.x_mm - p["x_mm"], m.y_mm - p["y_mm"]) < _PRINTED_REACH_MM for m in stray)
    }


@pytest.mark.parametrize(
    ("frame", "ended"),
    [
        # (at 1080p the inner edge of the other ring, 38 mm across, fits no size either way)
        (("1080p", 5008), {(884, 881)}),
        (("4k", 4004), {(1567, 924), (975, 989), (571, 826)}),
    ],
)
def test_a_ring_with_the_mats_colour_inside_is_not_a_base_whatever_its_grey_level(
    ring_frames: dict[tuple[str, int], EvalSample], frame: tuple[str, int], ended: set[tuple[int, int]]
) -> None:
    sample = ring_frames[frame]
    assert _printed_taken(sample, {"verdicts.ring_inside_max_colour": 0.0}) - _printed_taken(sample) == ended
    assert _found_ids(sample) == _found_ids(sample, {"verdicts.ring_inside_max_colour": 0.0})


# (not frame 4003, whose bases lighter than the mat are few)
@pytest.mark.parametrize("seed", [1000, 4007, _HAND_SEED])
def test_where_figures_blur_a_base_lighter_than_the_mat_is_read_by_its_top(
    size_off_frames: dict[int, EvalSample], seed: int
) -> None:
    # Read as the outline's middle, at half the rim height, such bases come out about half a parallax shift away
    # from the nadir (median centre errors 0.35, 0.98 and 0.73 mm on these frames; 0.18, 0.48 and 0.52 read by the
    # top): their wall is darker than their top, and the rim edge facing the camera is the top's. Read as a stadium,
    # that circle also came out short (sizes right 52, 65 and 73 %; 56, 88 and 78 % read as a circle).
    sample = size_off_frames[seed]
    config = hand_rule_config()
    by_top = score_frame(sample, config, config.evaluate)
    halfway = score_frame(sample, _vision_changed({"rim.top_read_max_darkness": -1.0}), config.evaluate)
    assert by_top.matched == halfway.matched
    assert np.median(by_top.error_mm) < 0.75 * np.median(halfway.error_mm)
    assert by_top.size_right.mean() >= halfway.size_right.mean()


# Frame 4002 of the 4K evaluation set (60 models asked): the appearance fit reads the brown 50 mm base u7m2 53.7 mm
# across, its contact shadow taken in, where its edges read 51.3 mm; no size fits the fit's reading.
_ASTRAY_SEED, _ASTRAY_MODELS = 4002, 60
# Frame 13003 (70 models asked): the fit reads the black-walled 25 mm bases u5m5 and u5m6, sand tops on a sand mat,
# 21.7 and 22.2 mm across, where their edges read 23.7 and 23.8 mm.
_SHORT_SEED, _SHORT_MODELS = 13003, 70


@pytest.fixture(scope="module")
def astray_frame(tmp_path_factory: pytest.TempPathFactory) -> EvalSample:
    return _one_frame(tmp_path_factory, "astray_frame", _ASTRAY_SEED, "4k", _ASTRAY_MODELS)


@pytest.fixture(scope="module")
def short_frame(tmp_path_factory: pytest.TempPathFactory) -> EvalSample:
    return _one_frame(tmp_path_factory, "short_frame", _SHORT_SEED, "4k", _SHORT_MODELS)


@pytest.mark.parametrize(
    ("frame", "off", "gained"),
    [
        # a footprint larger than the edges' circle, fitting no size: a contact shadow taken in
        ("astray_frame", {"rim.model_fallback_mm": 0.0}, {"u7m2"}),
        # a footprint a little inside it
        ("short_frame", {"outline.astray_short_mm": 0.0}, {"u5m5", "u5m6"}),
    ],
)
def test_a_base_the_appearance_fit_reads_astray_is_read_by_its_edges(
    frame: str, off: dict[str, float], gained: set[str], request: pytest.FixtureRequest
) -> None:
    sample: EvalSample = request.getfixturevalue(frame)
    models, stray = _found_and_stray(sample)
    models_without, stray_without = _found_and_stray(sample, off)
    with_rule, without = _ids_of(sample, models), _ids_of(sample, models_without)
    assert with_rule - without == gained
    assert without <= with_rule
    assert len(stray) == len(stray_without)


# Frame 4006 of the 4K evaluation set (60 models asked): 60 bases, rims of 3 to 5 mm (25 of them not 4 mm high).
_HELD_SIZE_SEED, _HELD_SIZE_MODELS = 4006, 60


@pytest.fixture(scope="module")
def held_size_frame(tmp_path_factory: pytest.TempPathFactory) -> EvalSample:
    return _one_frame(tmp_path_factory, "held_size_frame", _HELD_SIZE_SEED, "4k", _HELD_SIZE_MODELS)


@pytest.mark.parametrize(
    ("off", "median_share", "percentile"),
    [
        # with the size held the wall and the contact shadow trade off against the footprint's place alone, no
        # longer against its radius as well
        ({"known.refit_read_sizes": False}, 0.8, 90),
        # one fit tells its rim's height poorly and leans on the one assumed; a unit's bases share it, and the
        # median over the unit, stretched for that lean, places the footprints better (the median 8-10 % nearer,
        # by machine: OpenCV's float paths differ a little between CPUs)
        ({"known.height_pool_min": 0}, 0.95, 95),
    ],
)
def test_bases_fitted_again_at_the_size_read_lie_nearer_where_they_stand(
    held_size_frame: EvalSample, off: dict[str, float], median_share: float, percentile: float
) -> None:
    config = hand_rule_config()
    fitted = score_frame(held_size_frame, config, config.evaluate)
    without = score_frame(held_size_frame, _vision_changed(off), config.evaluate)
    # the same bases are found, at the same sizes
    assert (fitted.matched, fitted.detected) == (without.matched, without.detected)
    assert fitted.size_right.sum() == without.size_right.sum()
    median_fitted, median_without = np.median(fitted.error_mm), np.median(without.error_mm)
    assert median_fitted < median_share * median_without, (median_fitted, median_without)
    assert np.percentile(fitted.error_mm, percentile) < np.percentile(without.error_mm, percentile)
    # the sigmas stay honest: as many errors within 2 sigma
    assert np.mean(np.abs(fitted.z) <= 2.0) >= np.mean(np.abs(without.z) <= 2.0) - 0.02


# Frame 10002 of the 4K evaluation set (60 models asked): sand 40 mm bases on a dark mat, each with a contact shadow
# darker than the mat beside it. Round some of them the outermost ring is the shadow's outer edge (about 45 mm
# across); the rim, of the other polarity, is the best supported ring inside it. Both snap to 40 mm under the first
# search's loose tolerance, and the second reading was taken for the first one again.
_SHADOW_RING_SEED, _SHADOW_RING_MODELS = 10002, 60


@pytest.fixture(scope="module")
def shadow_ring_frame(tmp_path_factory: pytest.TempPathFactory) -> EvalSample:
    return _one_frame(tmp_path_factory, "shadow_ring_frame", _SHADOW_RING_SEED, "4k", _SHADOW_RING_MODELS)


def test_a_rim_inside_a_shadows_ring_is_read_though_both_snap_to_one_size(shadow_ring_frame: EvalSample) -> None:
    found = _found_ids(shadow_ring_frame)
    without_second_readings = _found_ids(shadow_ring_frame, {"rim.second_ring_mm": 0.0})
    assert {"u1m2", "u1m3", "u1m8", "u1m10"} <= found - without_second_readings
    assert without_second_readings <= found


# A 4K frame from a low camera (seed 16111, 45 models asked): the table seen at about 1.11 px/mm, under
# outline.min_px_per_mm, where the bases are read by their edges; the edges read 17 of 44 a size off.
_LOW_CAMERA_SEED, _LOW_CAMERA_MODELS = 16111, 45


@pytest.fixture(scope="module")
def low_camera_frame(tmp_path_factory: pytest.TempPathFactory) -> EvalSample:
    return _one_frame(tmp_path_factory, "low_camera_frame", _LOW_CAMERA_SEED, "4k", _LOW_CAMERA_MODELS)


def test_a_4k_frame_from_a_low_camera_takes_the_sizes_the_appearance_fit_reads(low_camera_frame: EvalSample) -> None:
    config = hand_rule_config()
    sized = score_frame(low_camera_frame, config, config.evaluate)
    edges = score_frame(low_camera_frame, _vision_changed({"outline.size_min_px_per_mm": 1.2}), config.evaluate)
    calibration = calibrate_table(
        read_image(low_camera_frame.image), low_camera_frame.spec, low_camera_frame.camera, settings=config.calibration
    )
    scale = rectified_scale(calibration, config.pipeline)
    assert config.vision.outline.size_min_px_per_mm <= scale < config.vision.outline.min_px_per_mm
    assert sized.size_right.mean() >= 0.95
    assert edges.size_right.mean() <= 0.75
    # the same bases found, no more impostors, and the centres are still the edges'
    assert sized.matched >= edges.matched
    assert sized.detected - sized.matched <= edges.detected - edges.matched
    assert abs(np.median(sized.error_mm) - np.median(edges.error_mm)) < 0.02
