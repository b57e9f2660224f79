"""Other readings of a base's rim (its model sigma widened for them), second readings and overlaps resolved."""

from __future__ import annotations

import numpy as np
import pytest

from tests.vision import vision_scenes as vs
from tests.vision.detect_helpers import DEFAULT_SETTINGS, SETTINGS, layout_scene, match
from vision import (
    detect_bases,
)
from vision.circles import firsts_first
from vision.footprints import unique_readings
from vision.other_readings import other_readings_mm, unseen_rim_sigma_mm
from vision.overlaps import resolve_overlaps
from vision.parallax import RimParallax, middle_of
from vision.rim import ray_directions

# A 1080p frame of a 6' table: 1 px/mm, the camera 1.23 m above a 4 mm rim, the nadir about 0.9 m away.
RAISED = vs.RaisedView(1.0, (120, 120), (-700.0, -600.0), 4.0 / (1230.0 - 4.0), 2.5)
# mat, wall, top grey levels and contact shadow depth
RAISED_LOOKS = {
    "light top, dark wall": (90.0, 40.0, 170.0, 0.3),
    "sand": (60.0, 120.0, 170.0, 0.25),
    "grey": (60.0, 100.0, 105.0, 0.2),
}


@pytest.mark.parametrize("look", sorted(RAISED_LOOKS))
@pytest.mark.parametrize(
    ("reading", "radius_mm", "size_mm"),
    [
        ("the footprint", 16.0, 32.0),
        # the top disc's edge all round, fitted as the footprint: one parallax shift away from the nadir
        ("the top", 15.0, 28.5),
        # part of the rim and part of the figure: a 25 mm circle touching the footprint from inside
        ("a circle inside", 12.5, 25.0),
    ],
)
def test_another_reading_the_edges_allow_is_as_far_as_the_reading_is_off(
    look: str, reading: str, radius_mm: float, size_mm: float
) -> None:
    mat, wall, top, shadow = RAISED_LOOKS[look]
    footprint = (60.3, 61.7)
    grey = vs.draw_raised_base(RAISED, footprint, 16.0, mat, wall, top, shadow, seed=3)
    parallax = RimParallax(RAISED.nadir_px, RAISED.shift_ratio)
    truth = middle_of(np.array([footprint]), parallax)
    half, unit = parallax.half_shift(truth)
    center = {
        "the footprint": truth,
        "the top": truth + half[:, None] * unit,
        "a circle inside": truth + 3.5 * np.array([[0.6, -0.8]]),
    }[reading]
    # how much a gap to the base changes if the reading stands for the true base
    off_mm = float(np.hypot(*(center[0] - truth[0])) + abs(radius_mm - 16.0))
    polarity = np.array([-1.0 if top > mat else 1.0])
    other_mm = other_readings_mm(
        grey,
        None,
        center,
        np.array([radius_mm]),
        polarity,
        np.array([size_mm]),
        np.array([True]),
        RAISED.px_per_mm,
        ray_directions(SETTINGS.rim.rays),
        SETTINGS,
        parallax,
    )
    if off_mm == 0.0:
        assert other_mm[0] < 0.5
    else:
        assert 0.85 * off_mm <= other_mm[0] <= 1.5 * off_mm + 1.0


def test_other_readings_are_looked_for_only_where_asked_and_not_at_all_when_switched_off() -> None:
    mat, wall, top, shadow = RAISED_LOOKS["sand"]
    grey = vs.draw_raised_base(RAISED, (60.3, 61.7), 16.0, mat, wall, top, shadow, seed=4)
    args = (np.array([[62.4, 58.9]]), np.array([12.5]), np.array([-1.0]), np.array([25.0]))
    directions = ray_directions(SETTINGS.rim.rays)
    found = other_readings_mm(grey, None, *args, np.array([True]), 1.0, directions, SETTINGS)
    assert found[0] > 5.0
    assert other_readings_mm(grey, None, *args, np.array([False]), 1.0, directions, SETTINGS)[0] == 0.0
    off = SETTINGS.replaced({"other_readings.reach_mm": 0.0})
    assert other_readings_mm(grey, None, *args, np.array([True]), 1.0, directions, off)[0] == 0.0


@pytest.mark.parametrize(
    ("radius_px", "second", "kept"),
    [
        # two first readings of one size about one centre are one base: the outer (its footprint) stands
        ([34.3, 30.6], [False, False], [0]),
        # a second reading is another ring than the first, though both snap to one size: both go on to the tests
        ([34.3, 30.6], [False, True], [0, 1]),
        # two second readings of one base are one
        ([34.3, 30.6, 30.4], [False, True, True], [0, 1]),
    ],
)
def test_a_second_reading_is_not_taken_for_its_first(
    radius_px: list[float], second: list[bool], kept: list[int]
) -> None:
    n = len(radius_px)
    center = np.full((n, 2), 100.0) + np.arange(n)[:, None] * 0.5
    radius = np.array(radius_px)
    rank = firsts_first(radius, np.array(second))
    keep = unique_readings(center, radius, np.full(n, 40.0), rank, np.array(second))
    assert sorted(keep.tolist()) == kept


# Circles at 1 px/mm as (x, y, fitted radius, standard size, score): which stand after resolve_overlaps.
_TWO_IN_CONTACT = [(100.0, 100.0, 12.6, 25.0, 0.45), (125.5, 100.0, 12.4, 25.0, 0.40)]
_ROUND_BOTH = (112.7, 100.0, 25.3, 50.0)


@pytest.mark.parametrize(
    ("circles", "changed", "kept"),
    [
        # a faint circle round two bases in contact takes neither's place
        ([*_TWO_IN_CONTACT, (*_ROUND_BOTH, 0.05)], {}, [0, 1]),
        # ... unless it scores at least the share of theirs, or the share is 0
        ([*_TWO_IN_CONTACT, (*_ROUND_BOTH, 0.12)], {}, [2]),
        ([*_TWO_IN_CONTACT, (*_ROUND_BOTH, 0.05)], {"overlaps.nest_score_share": 0.0}, [2]),
        # a footprint takes its top's place however faint, its radius 1.9 mm larger (the wall and the parallax)
        ([(100.0, 100.0, 14.2, 28.5, 0.5), (101.5, 100.0, 16.1, 32.0, 0.05)], {}, [1]),
        # ... and a figure's outline's if it scores enough, not if far fainter
        ([(100.0, 100.0, 8.1, 16.0, 0.5), (101.0, 100.0, 20.2, 40.0, 0.3)], {}, [1]),
        ([(100.0, 100.0, 8.1, 16.0, 0.5), (101.0, 100.0, 20.2, 40.0, 0.05)], {}, [0]),
        # bases apart all stand; of two that overlap by more than overlaps.max_mm the better scored stands
        ([(100.0, 100.0, 12.5, 25.0, 0.3), (140.0, 100.0, 12.5, 25.0, 0.2)], {}, [0, 1]),
        ([(100.0, 100.0, 12.5, 25.0, 0.3), (120.0, 100.0, 12.5, 25.0, 0.4)], {}, [1]),
    ],
)
def test_a_larger_circle_takes_the_place_of_those_inside_it_only_as_their_footprint_or_scoring_enough(
    circles: list[tuple[float, float, float, float, float]], changed: dict[str, float], kept: list[int]
) -> None:
    settings = DEFAULT_SETTINGS.replaced(changed)
    c = np.array(circles, dtype=np.float64)
    rows = resolve_overlaps(c[:, :2], c[:, 2], c[:, 3], c[:, 4], 1.0, settings)
    assert sorted(rows.tolist()) == kept


# A figure's outline read first (a 25 mm circle 10 mm off the middle of a 50 mm base) and circles read later.
_OUTLINE_FIRST = (110.0, 100.0, 12.4, 25.0, 0.09)


@pytest.mark.parametrize(
    ("later_circle", "kept"),
    [
        # the footprint read later, round the outline and better scored, takes its place
        ((100.0, 100.0, 25.1, 50.0, 0.36), [1]),
        # ... not when it scores worse, however near it comes to the share of nest_score_share
        ((100.0, 100.0, 25.1, 50.0, 0.08), [0]),
        # the same rim read again a little wider (as a top's footprint would be) scores worse: the first stands
        ((110.5, 100.0, 13.9, 28.5, 0.05), [0]),
        # ... and better: it takes the place
        ((110.5, 100.0, 13.9, 28.5, 0.2), [1]),
        # a later circle that overlaps the first without holding it gives way, however well it scores
        ((130.0, 100.0, 12.5, 25.0, 0.9), [0]),
        # one clear of it stands beside it
        ((140.0, 100.0, 12.5, 25.0, 0.01), [0, 1]),
    ],
)
def test_a_later_reading_stands_where_no_first_lies_or_takes_the_place_of_those_it_holds_scoring_better(
    later_circle: tuple[float, float, float, float, float], kept: list[int]
) -> None:
    c = np.array([_OUTLINE_FIRST, later_circle], dtype=np.float64)
    later = np.array([False, True])
    rows = resolve_overlaps(c[:, :2], c[:, 2], c[:, 3], c[:, 4], 1.0, DEFAULT_SETTINGS, later)
    assert sorted(rows.tolist()) == kept


@pytest.mark.parametrize(
    ("radius_mm", "coverage", "by_edges", "sigma_mm"),
    [
        (12.5, 1.0, True, 0.0),  # the whole rim seen
        (12.5, 0.8, True, 0.0),  # enough of it
        (12.5, 0.6, True, 0.5 * 12.5 * 0.2),
        (20.0, 0.5, True, 0.5 * 20.0 * 0.3),  # a larger base has more room to be misread
        (12.5, 0.5, False, 0.0),  # the appearance fit weighs its own readings
    ],
)
def test_a_base_read_on_little_of_its_rim_is_less_sure(
    radius_mm: float, coverage: float, by_edges: bool, sigma_mm: float
) -> None:
    settings = DEFAULT_SETTINGS.replaced(
        {"other_readings.unseen_rim_coverage": 0.8, "other_readings.unseen_rim_sigma_share": 0.5}
    )
    got = unseen_rim_sigma_mm(np.array([radius_mm]), np.array([coverage]), np.array([by_edges]), settings)
    assert got[0] == pytest.approx(sigma_mm)
    off = settings.replaced({"other_readings.unseen_rim_sigma_share": 0.0})
    assert unseen_rim_sigma_mm(np.array([radius_mm]), np.array([coverage]), np.array([by_edges]), off)[0] == 0.0


def test_hiding_part_of_a_rim_widens_that_base_model_sigma_only() -> None:
    px_per_mm = 1.0
    scene = layout_scene(px_per_mm, vs.TEXTURED, 12, count=6)
    target = 0
    cx, cy = scene.centers_px[target]
    r = scene.diameters_mm[target] / 2 * px_per_mm
    # a wedge over 35 % of the rim, as a figure's cloak or a hand would hide it
    yy, xx = np.mgrid[: scene.image_bgr.shape[0], : scene.image_bgr.shape[1]]
    angle = np.mod(np.arctan2(yy - cy, xx - cx), 2 * np.pi)
    near = np.hypot(xx - cx, yy - cy) < r + 4
    mask = np.where(near & (angle < 0.35 * 2 * np.pi), 255, 0).astype(np.uint8)
    off = SETTINGS.replaced({"other_readings.unseen_rim_sigma_share": 0.0})
    hidden, plain = (detect_bases(scene.image_bgr, px_per_mm, s, mask=mask) for s in (SETTINGS, off))
    m_hidden, m_plain = match(scene, hidden), match(scene, plain)
    np.testing.assert_array_equal(m_hidden.truth_index, m_plain.truth_index)
    np.testing.assert_allclose(hidden.center_px, plain.center_px)
    row = int(m_hidden.det_index[list(m_hidden.truth_index).index(target)])
    assert hidden.edge_coverage[row] < SETTINGS.other_readings.unseen_rim_coverage
    expected = unseen_rim_sigma_mm(
        hidden.radius_px / px_per_mm, hidden.edge_coverage, np.ones(len(hidden), bool), SETTINGS
    )
    np.testing.assert_allclose(hidden.model_sigma_mm, np.hypot(plain.model_sigma_mm, expected))
    assert expected[row] > 0.5
    # the bases left whole are (almost) as sure as before
    assert np.all(np.delete(expected, row) < 0.1)
