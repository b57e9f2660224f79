"""Measuring only what changed since the frame before: the boxes, and the frames measured in part against whole."""

from __future__ import annotations

import dataclasses
import math
import zlib
from dataclasses import dataclass

import cv2
import numpy as np
import pytest

import rules
from calibration.camera import camera_from_dict
from calibration.spec import TableSpec, load_table_spec
from synth.generate import fit_camera, make_figure, plain_scene, with_models
from synth.render import render
from synth.scene import Scene, SceneModel
from tableref.pipeline.changes import Box, changed_boxes, changed_mask, merged
from tableref.pipeline.frame import FrameAnalysis, detect_frame, fuse_frames
from tableref.pipeline.identity import carry_identities
from tableref.pipeline.motion import thumbnail
from tableref.settings import Settings
from tests.tableref.conftest import CAMERA_POSITION_MM, LENS, Rendered

FRAME_SIZE = (1920, 1080)
# Ground truth: model id -> (x_mm, y_mm, base diameter mm); two of them in base contact.
MODELS = {
    "a1": (400.0, 400.0, 32.0),
    "a2": (432.0, 400.0, 32.0),
    "a3": (480.0, 460.0, 25.0),
    "b1": (1300.0, 800.0, 40.0),
    "b2": (1360.0, 820.0, 40.0),
    "c1": (800.0, 900.0, 28.5),
}


@pytest.mark.parametrize(
    ("box", "margin_mm", "grown"),
    [
        (Box(100, 100, 200, 150), 10, Box(90, 90, 210, 160)),
        (Box(5, 100, 200, 1215), 10, Box(0, 90, 210, 1219)),
        (Box(1820, 0, 1829, 3), 50, Box(1770, 0, 1829, 53)),
    ],
)
def test_a_grown_box_stays_on_the_table(box: Box, margin_mm: float, grown: Box) -> None:
    assert box.grown(margin_mm, 1829.0, 1219.0) == grown


@pytest.mark.parametrize(
    ("boxes", "expected"),
    [
        ([], []),
        ([Box(0, 0, 10, 10), Box(20, 20, 30, 30)], [Box(0, 0, 10, 10), Box(20, 20, 30, 30)]),
        # touching side by side: the union is no larger than the two
        ([Box(0, 0, 10, 10), Box(10, 0, 20, 10)], [Box(0, 0, 20, 10)]),
        # mostly overlapping: joined, whatever the order
        ([Box(0, 0, 10, 10), Box(2, 1, 12, 11)], [Box(0, 0, 12, 11)]),
        ([Box(2, 1, 12, 11), Box(0, 0, 10, 10)], [Box(0, 0, 12, 11)]),
        # a thin box linking two: its union with either covers much that neither does, so all three stay apart
        (
            [Box(0, 0, 10, 10), Box(40, 0, 50, 10), Box(5, 0, 45, 2)],
            [Box(0, 0, 10, 10), Box(5, 0, 45, 2), Box(40, 0, 50, 10)],
        ),
        # corners crossing: the union (100) would cover more than the two (72)
        ([Box(0, 0, 6, 6), Box(4, 4, 10, 10)], [Box(0, 0, 6, 6), Box(4, 4, 10, 10)]),
        # a chain of boxes each overlapping the next by most of its width joins into one
        ([Box(0, 0, 10, 10), Box(2, 0, 12, 10), Box(4, 0, 14, 10)], [Box(0, 0, 14, 10)]),
    ],
)
def test_boxes_join_where_their_union_covers_no_more_than_they_do(boxes: list[Box], expected: list[Box]) -> None:
    assert sorted(merged(boxes), key=lambda b: (b.x0_mm, b.y0_mm)) == expected


def test_a_whole_table_of_changed_cells_joins_into_one_window() -> None:
    # the light changed: 600 cells, each grown far past its neighbours, are one window over the table
    boxes = [Box(x * 60.0, y * 60.0, x * 60.0 + 200.0, y * 60.0 + 200.0) for x in range(30) for y in range(20)]
    assert merged(boxes) == [Box(0.0, 0.0, 1940.0, 1340.0)]
    # a diagonal of the same cells joins only a few at a time: a slanting column is not one box round it all
    diagonal = [Box(k * 60.0, k * 60.0, k * 60.0 + 200.0, k * 60.0 + 200.0) for k in range(30)]
    windows = merged(diagonal)
    assert 5 <= len(windows) < 30
    assert sum(w.area_mm2 for w in windows) < 0.3 * Box(0.0, 0.0, 1940.0, 1940.0).area_mm2


@pytest.mark.parametrize(
    ("box", "px_per_mm", "window"),
    [
        (Box(10.2, 20.7, 30.1, 40.0), 2.0, (20, 41, 61, 80)),
        (Box(0, 0, 1829, 1219), 1.0, (0, 0, 1829, 1219)),
        (Box(1800, 1200, 1829, 1219), 1.5, (2700, 1800, 2744, 1829)),
    ],
)
def test_a_box_covers_whole_pixels_of_the_view(box: Box, px_per_mm: float, window: tuple[int, int, int, int]) -> None:
    size = (math.ceil(1829 * px_per_mm), math.ceil(1219 * px_per_mm))
    assert box.window_px(px_per_mm, size) == window


def test_a_changed_region_maps_to_the_table_box_below_it(empty_table: Rendered, config: Settings) -> None:
    from calibration.table import calibrate_table

    cal = calibrate_table(empty_table.image, empty_table.spec, empty_table.camera, settings=config.calibration)
    small = np.zeros((180, 320), dtype=np.bool_)
    assert changed_boxes(small, cal, 10.0) == []
    small[80:90, 150:170] = True
    (box,) = changed_boxes(small, cal, 10.0)
    scale = cal.image_width / 320
    corners = np.array([[150, 80], [170, 80], [150, 90], [170, 90]], dtype=np.float64) * scale - 0.5
    on_table = cal.image_to_table(corners)
    # the box holds the region's corners on the table, grown by the margin and no more
    assert box.x0_mm <= on_table[:, 0].min() - 9.9 and box.x1_mm >= on_table[:, 0].max() + 9.9
    assert box.y0_mm <= on_table[:, 1].min() - 9.9 and box.y1_mm >= on_table[:, 1].max() + 9.9
    assert box.x1_mm - box.x0_mm < np.ptp(on_table[:, 0]) + 22 and box.y1_mm - box.y0_mm < np.ptp(on_table[:, 1]) + 22


@pytest.mark.parametrize(
    ("cell_mm", "at_least", "at_most"),
    [
        (0.0, 1, 1),
        # a slanting stroke over most of the table's width (about 1.2 m, 60 mm cells) is a box per cell it crosses
        (60.0, 20, 80),
    ],
)
def test_a_long_slanting_region_is_cut_into_cells(
    empty_table: Rendered, config: Settings, cell_mm: float, at_least: int, at_most: int
) -> None:
    from calibration.table import calibrate_table

    cal = calibrate_table(empty_table.image, empty_table.spec, empty_table.camera, settings=config.calibration)
    small = np.zeros((180, 320), dtype=np.uint8)
    cv2.line(small, (60, 40), (260, 140), 1, 3)
    whole = changed_boxes(small.astype(bool), cal, 0.0)[0]
    boxes = changed_boxes(small.astype(bool), cal, 0.0, cell_mm)
    assert at_least <= len(boxes) <= at_most
    # each cell lies within the box round the whole stroke, and together they cover much less of the table
    for b in boxes:
        assert whole.x0_mm - 1e-6 <= b.x0_mm <= b.x1_mm <= whole.x1_mm + 1e-6
        assert whole.y0_mm - 1e-6 <= b.y0_mm <= b.y1_mm <= whole.y1_mm + 1e-6
    if cell_mm:
        assert sum(b.area_mm2 for b in boxes) < 0.6 * whole.area_mm2


@dataclass(frozen=True)
class Table:
    scene: Scene
    spec: TableSpec
    first: FrameAnalysis


def moved_scene() -> Scene:
    """The table of :data:`MODELS`, 1080p, seen from a tilted camera through a barrel lens."""
    spec = load_table_spec()
    camera = fit_camera(spec, FRAME_SIZE, CAMERA_POSITION_MM, (914.5, 609.5, 0.0), dist=LENS)
    placed = [
        SceneModel(
            rules.Model(k, None, x, y, rules.RoundBase(d)),
            4.0,
            "black",
            "black",
            0.0,
            make_figure(np.random.default_rng(zlib.crc32(k.encode())), d, ((0.8, 0.75, 0.6), (0.6, 0.2, 0.15))),
        )
        for k, (x, y, d) in MODELS.items()
    ]
    return plain_scene(camera, spec, placed)


@pytest.fixture(scope="module")
def table(config: Settings) -> Table:
    scene = moved_scene()
    image, truth = render(scene, seed=1)
    first = detect_frame(
        np.asarray(image), scene.table, config, camera_from_dict(dict(truth.camera)), keep_overview=True
    )
    assert len(first.state.models) == len(MODELS)
    return Table(scene, scene.table, first)


def _errors_mm(state: rules.TableState, truth: dict[str, tuple[float, float, float]]) -> dict[str, float]:
    listed = rules.TableState(
        rules.Table(1829.0, 1219.0),
        models=tuple(rules.Model(k, None, x, y, rules.RoundBase(d)) for k, (x, y, d) in truth.items()),
    )
    carried = carry_identities(state, listed, 8.0)
    return {m.id: math.hypot(m.x_mm - truth[m.id][0], m.y_mm - truth[m.id][1]) for m in carried.models if m.id in truth}


@pytest.mark.parametrize(
    ("moved", "remeasured"),
    [
        ({}, False),
        # the corner model walks 60 mm; the other stays where it was
        ({"b2": (1420.0, 860.0)}, True),
        # a model in base contact leaves its neighbour
        ({"a2": (440.0, 470.0)}, True),
        # a nudge of a millimetre is noticed too
        ({"c1": (801.0, 900.0)}, True),
    ],
)
def test_only_the_places_that_changed_are_measured_again(
    table: Table, config: Settings, moved: dict[str, tuple[float, float]], remeasured: bool
) -> None:
    truth = {k: (*moved.get(k, (x, y)), d) for k, (x, y, d) in MODELS.items()}
    image, frame_truth = render(with_models(table.scene, moved), seed=2)
    camera = camera_from_dict(dict(frame_truth.camera))
    part = detect_frame(np.asarray(image), table.spec, config, camera, table.first.calibration, previous=table.first)
    whole = detect_frame(np.asarray(image), table.spec, config, camera, table.first.calibration)
    assert whole.remeasured_share == 1.0
    if not remeasured:
        # another shot of the same table (its own sensor noise): every measurement is kept
        assert part.remeasured_share == 0.0
        assert np.array_equal(part.detections.center_px, table.first.detections.center_px)
        # each may have moved by a little less than a change that shows: its sigma widens by that, once
        widen_mm = config.pipeline.kept_sigma_px / part.px_per_mm
        sigma_first = np.array([m.sigma_mm for m in table.first.state.models])
        sigma_part = np.array([m.sigma_mm for m in part.state.models])
        assert np.allclose(sigma_part, np.hypot(sigma_first, widen_mm), rtol=1e-9)
        again = detect_frame(np.asarray(image), table.spec, config, camera, table.first.calibration, previous=part)
        assert np.allclose([m.sigma_mm for m in again.state.models], sigma_part, rtol=1e-9)
        return
    assert 0.0 < part.remeasured_share < config.pipeline.max_changed_share
    errors, errors_whole = _errors_mm(part.state, truth), _errors_mm(whole.state, truth)
    assert set(errors) == set(MODELS) and len(part.state.models) == len(MODELS)
    for k in moved:
        assert errors[k] < max(1.5, 2.0 * errors_whole[k]), (k, errors[k], errors_whole[k])
    # the models far from the change keep the measurements of the frame before, to the bit
    far = [
        k
        for k in MODELS
        if all(math.dist(MODELS[k][:2], p) > 200 for p in (*moved.values(), *(MODELS[m][:2] for m in moved)))
    ]
    assert far
    kept = {tuple(c) for c in table.first.detections.center_px.tolist()}
    first_errors = _errors_mm(table.first.state, {k: MODELS[k] for k in far})
    assert all(errors[k] == pytest.approx(first_errors[k], abs=1e-9) for k in far)
    assert len(kept & {tuple(c) for c in part.detections.center_px.tolist()}) >= len(far)


def _after_first(table: Table, config: Settings, scene: Scene, seed: int) -> FrameAnalysis:
    """A shot of ``scene`` measured on the table's first frame (its calibration, only what changed)."""
    image, truth = render(scene, seed=seed)
    camera = camera_from_dict(dict(truth.camera))
    return detect_frame(np.asarray(image), table.spec, config, camera, table.first.calibration, previous=table.first)


@pytest.mark.parametrize("gain", [0.97, 1.04])
def test_a_camera_that_changes_its_exposure_keeps_every_measurement(
    table: Table, config: Settings, gain: float
) -> None:
    # the whole picture a little darker or brighter (a light that flickers, the camera's exposure): nothing moved
    light = table.scene.lighting
    shot = dataclasses.replace(
        table.scene, lighting=dataclasses.replace(light, diffuse=light.diffuse * gain, ambient=light.ambient * gain)
    )
    part = _after_first(table, config, shot, seed=3)
    assert part.remeasured_share == 0.0
    assert np.array_equal(part.detections.center_px, table.first.detections.center_px)


@pytest.mark.parametrize(("max_share", "whole"), [(0.4, False), (0.01, True)])
def test_windows_too_large_to_gain_from_measure_the_whole_frame(
    table: Table, config: Settings, max_share: float, whole: bool
) -> None:
    limited = dataclasses.replace(config, pipeline=dataclasses.replace(config.pipeline, max_changed_share=max_share))
    part = _after_first(table, limited, with_models(table.scene, {"b2": (1420.0, 860.0)}), seed=2)
    assert (part.remeasured_share == 1.0) is whole
    assert len(part.state.models) == len(MODELS)


@pytest.mark.parametrize("what", ["calibration", "roster", "overview"])
def test_a_frame_before_of_another_calibration_or_roster_is_not_built_on(
    table: Table, config: Settings, what: str
) -> None:
    image, truth = render(table.scene, seed=4)
    camera = camera_from_dict(dict(truth.camera))
    calibration = table.first.calibration
    roster = None
    previous = table.first
    if what == "overview":
        # a frame measured without keeping its copy (as the command line does) leaves nothing to compare with
        previous = detect_frame(np.asarray(image), table.spec, config, camera, calibration)
        assert previous.overview is None
    elif what == "calibration":
        from calibration.table import calibrate_table

        calibration = calibrate_table(np.asarray(image), table.spec, camera, settings=config.calibration)
    else:
        roster = rules.TableState(
            rules.Table(1829.0, 1219.0), models=(rules.Model("a1", None, 400.0, 400.0, rules.RoundBase(32.0)),)
        )
    part = detect_frame(np.asarray(image), table.spec, config, camera, calibration, roster, previous=previous)
    assert part.remeasured_share == 1.0
    assert part.overview is not None


def test_frames_measured_in_part_are_not_fused(table: Table, config: Settings) -> None:
    part = _after_first(table, config, table.scene, seed=5)
    with pytest.raises(ValueError, match="measured in part"):
        fuse_frames([table.first, part], config.pipeline.roster_gate_mm)


# A disc taken off a mat of about its grey level: a purple base on a dark green mat, both grey level 61.
PURPLE_BGR = (110, 32, 100)
DARK_GREEN_BGR = (40, 72, 46)


@pytest.mark.parametrize(
    ("colour", "radius_px", "colour_min_pixels", "changed_inside"),
    [
        (False, 30, 0, False),
        (True, 30, 0, True),
        (True, 30, 60, True),
        # a speck that only a colour channel shows counts only in a region of colour_min_pixels
        (True, 2, 0, True),
        (True, 2, 60, False),
    ],
)
def test_a_disc_of_the_mats_grey_taken_off_changes_the_colour_copy(
    colour: bool, radius_px: int, colour_min_pixels: int, changed_inside: bool
) -> None:
    rng = np.random.default_rng(7)
    before = np.clip(np.full((240, 320, 3), DARK_GREEN_BGR, np.float64) + rng.normal(0, 2, (240, 320, 3)), 0, 255)
    after = np.clip(np.full((240, 320, 3), DARK_GREEN_BGR, np.float64) + rng.normal(0, 2, (240, 320, 3)), 0, 255)
    before = before.astype(np.uint8)
    cv2.circle(before, (160, 120), radius_px, PURPLE_BGR, -1)
    assert abs(int(cv2.cvtColor(before, cv2.COLOR_BGR2GRAY)[120, 160]) - 61) <= 2
    views = [thumbnail(im, 320, colour=colour) for im in (before, after.astype(np.uint8))]
    mask = changed_mask(views[1], views[0], 8, 4.0, 4, colour_min_pixels)
    assert bool(mask[119:122, 159:162].all()) is changed_inside
    assert not mask[:40, :40].any()


def test_a_change_of_colour_alone_is_measured_again(table: Table, config: Settings) -> None:
    # the first frame again, with a patch of mat beside c1 shifted in hue at its grey level, as a purple base taken
    # off a dark green mat leaves it: the grey copies hardly differ, the colour ones do
    image, truth = render(table.scene, seed=1)
    shot = np.asarray(image).astype(np.int16)
    ((u, v),) = table.first.calibration.table_to_image(np.array([[MODELS["c1"][0] + 60.0, MODELS["c1"][1]]]))
    patch = np.zeros(shot.shape[:2], np.uint8)
    cv2.circle(patch, (round(u), round(v)), 18, 255, -1)
    # B and R up, G down, in the weights of the grey level (0.114, 0.587, 0.299): the grey stays
    shot[patch > 0] += np.array([40, -28, 40], np.int16)
    shot = np.clip(shot, 0, 255).astype(np.uint8)
    grey_before, grey_after = (cv2.cvtColor(im, cv2.COLOR_BGR2GRAY) for im in (np.asarray(image), shot))
    assert np.abs(grey_after.astype(int) - grey_before)[patch > 0].mean() < 2
    part = detect_frame(
        shot, table.spec, config, camera_from_dict(dict(truth.camera)), table.first.calibration, previous=table.first
    )
    assert 0.0 < part.remeasured_share < 0.5
    assert part.overview is not None and part.overview.ndim == 3
