"""A unit's bases: the size their unit votes, readings that stand beside their unit's bases, groups of plain discs,
pooled rim heights and tops' colours."""

from __future__ import annotations

import dataclasses
import itertools

import cv2
import numpy as np
import pytest

from tests.vision import vision_scenes as vs
from tests.vision.detect_helpers import DEFAULT_SETTINGS, FIGURE_PAINT, match
from tests.vision.hand_rules import hand_rule_settings
from vision import (
    BaseDetections,
    detect_bases,
)
from vision.overlaps import narrowly_lost
from vision.units import (
    beside_kin,
    final_bases,
    plain_groups,
    pooled_heights,
    top_colours,
    units_of_new,
    vote_sizes,
)


def _row_of_bases(
    fitted_mm: list[float], snapped_mm: list[float], gap_mm: float, doubt_mm: list[float] | None = None
) -> BaseDetections:
    """Bases in a row along x at 1 px/mm, ``gap_mm`` apart edge to edge (at their snapped sizes), each with the
    diameter doubt ``doubt_mm`` (None: a sure fit's, 0.3 mm)."""
    n = len(fitted_mm)
    x = np.cumsum([0.0] + [(a + b) / 2 + gap_mm for a, b in itertools.pairwise(snapped_mm)])
    ones = np.ones(n)
    return BaseDetections(
        np.stack([x + 100.0, np.full(n, 100.0)], axis=1),
        np.asarray(fitted_mm) / 2,
        np.asarray(snapped_mm),
        ones,
        ones,
        ones,
        ones,
        np.full(n, 0.3) if doubt_mm is None else np.asarray(doubt_mm, dtype=np.float64),
        ones,
        ones,
    )


# Tops' colours (CIE Lab, OpenCV's 8-bit scale)
_SAND, _GREEN = (170.0, 130.0, 150.0), (120.0, 100.0, 150.0)


@pytest.mark.parametrize(
    ("fitted_mm", "snapped_mm", "tops", "gap_mm", "changed", "voted_mm"),
    [
        # a unit of 27 mm bases, one read at 28.0 (snapped 28.5): the unit's median fitted diameter is 27.1 mm
        ([27.1, 26.8, 28.0, 27.3, 26.9], [27, 27, 28.5, 27, 27], [_SAND] * 5, 5.0, {}, [27, 27, 27, 27, 27]),
        # the median, not the most snapped size: two of four read 27 mm, but the unit's median is 27.9 mm
        ([27.4, 28.1, 27.7, 28.3], [27, 28.5, 27, 28.5], [_SAND] * 4, 5.0, {}, [28.5, 28.5, 28.5, 28.5]),
        # a 27 mm base whose top differs among 28.5 mm ones is of another unit and keeps its size ...
        (
            [28.4, 28.6, 27.0, 28.5, 28.7],
            [28.5, 28.5, 27, 28.5, 28.5],
            [_SAND, _SAND, _GREEN, _SAND, _SAND],
            5.0,
            {},
            [28.5, 28.5, 27, 28.5, 28.5],
        ),
        # ... but with a top like theirs, or with colours not compared, it votes with them
        ([28.4, 28.6, 27.0, 28.5, 28.7], [28.5, 28.5, 27, 28.5, 28.5], [_SAND] * 5, 5.0, {}, [28.5] * 5),
        (
            [28.4, 28.6, 27.0, 28.5, 28.7],
            [28.5, 28.5, 27, 28.5, 28.5],
            [_SAND, _SAND, _GREEN, _SAND, _SAND],
            5.0,
            {"size_vote.colour": 0.0},
            [28.5] * 5,
        ),
        # the same unit spread more than the reach apart: no neighbours, no vote
        ([27.1, 26.8, 28.0, 27.3, 26.9], [27, 27, 28.5, 27, 27], [_SAND] * 5, 60.0, {}, [27, 27, 28.5, 27, 27]),
        # without the vote (reach 0)
        (
            [27.1, 26.8, 28.0, 27.3, 26.9],
            [27, 27, 28.5, 27, 27],
            [_SAND] * 5,
            5.0,
            {"size_vote.reach_mm": 0.0},
            [27, 27, 28.5, 27, 27],
        ),
        # a unit strung out 30 mm apart: the end base has one neighbour within reach, and reaches a third voter in
        # the second step, not in one
        ([28.0, 27.1, 26.9, 27.2], [28.5, 27, 27, 27], [_SAND] * 4, 30.0, {}, [27, 27, 27, 27]),
        ([28.0, 27.1, 26.9, 27.2], [28.5, 27, 27, 27], [_SAND] * 4, 30.0, {"size_vote.hops": 1}, [28.5, 27, 27, 27]),
        # too few voters
        ([27.1, 28.0], [27, 28.5], [_SAND] * 2, 5.0, {}, [27, 28.5]),
        # a 40 mm base among 25 mm ones is no voter of theirs, nor they of its
        ([25.2, 40.1, 24.9, 25.3], [25, 40, 25, 25], [_SAND] * 4, 5.0, {}, [25, 40, 25, 25]),
    ],
)
def test_a_base_takes_the_size_its_unit_votes_for(
    fitted_mm: list[float],
    snapped_mm: list[float],
    tops: list[tuple[float, float, float]],
    gap_mm: float,
    changed: dict[str, float],
    voted_mm: list[float],
) -> None:
    settings = hand_rule_settings().replaced(changed)
    voted = vote_sizes(_row_of_bases(fitted_mm, snapped_mm, gap_mm), np.array(tops), 1.0, settings)
    np.testing.assert_array_equal(voted.diameter_mm, voted_mm)


def test_a_base_votes_only_with_bases_fitted_about_its_own_size_even_those_reached_through_another() -> None:
    # a unit of three 27 mm bases (one read at 29.4 mm) beside a unit of four 32 mm bases of the same top, in two rows
    # 34 mm apart: the 29.4 mm reading lies within the window of both units' fits, and two steps reach from two of
    # the 27 mm bases through it to three 32 mm ones, whose fits would pull those two bases' median to 29.4 mm
    fitted_mm = np.array([26.6, 26.9, 27.1, 29.4, 32.0, 32.1, 31.9, 32.2])
    snapped_mm = np.array([27.0, 27.0, 27.0, 28.5, 32.0, 32.0, 32.0, 32.0])
    center = np.array([[100.0 + 34.0 * (k % 4), 100.0 + 34.0 * (k // 4)] for k in range(8)])
    ones = np.ones(8)
    found = BaseDetections(center, fitted_mm / 2, snapped_mm, *([ones] * 4), ones * 0.3, ones, ones)
    settings = hand_rule_settings()
    voted = vote_sizes(found, np.array([_SAND] * 8), 1.0, settings)
    np.testing.assert_array_equal(voted.diameter_mm, [27, 27, 27, 32, 32, 32, 32, 32])


def test_a_vote_on_other_readings_takes_them_in_the_place_of_the_fitted_diameters() -> None:
    # four bases of a unit fitted at 29.5 mm (28.5 mm), read at 31 mm otherwise (32 mm): the vote takes what it is given
    fitted_mm = np.full(4, 29.5)
    center = np.array([[100.0 + 34.0 * k, 100.0] for k in range(4)])
    ones = np.ones(4)
    found = BaseDetections(center, fitted_mm / 2, np.full(4, 28.5), *([ones] * 4), ones * 0.3, ones, ones)
    tops = np.array([_SAND] * 4)
    settings = hand_rule_settings()
    np.testing.assert_array_equal(vote_sizes(found, tops, 1.0, settings).diameter_mm, [28.5] * 4)
    np.testing.assert_array_equal(vote_sizes(found, tops, 1.0, settings, np.full(4, 31.0)).diameter_mm, [32.0] * 4)


@pytest.mark.parametrize(
    ("fitted_mm", "snapped_mm", "doubt_mm", "tops", "changed", "voted_mm"),
    [
        # a reading of part of a 40 mm rim among its unit: alone by its size, doubtful of it, it takes theirs
        ([40.2, 39.8, 31.9, 40.1], [40, 40, 32, 40], [0.3, 0.3, 2.2, 0.3], [_SAND] * 4, {}, [40, 40, 40, 40]),
        # a hero on a larger base, fitted sure of its size, keeps it
        ([32.1, 32.3, 59.9, 31.8], [32, 32, 60, 32], [0.3, 0.3, 0.25, 0.3], [_SAND] * 4, {}, [32, 32, 60, 32]),
        # ... and one doubtful but read too far from its unit's size (size_vote.lone_ratio) for a part of a rim
        ([25.1, 25.0, 24.9, 60.2], [25, 25, 25, 60], [0.3, 0.3, 0.3, 1.6], [_SAND] * 4, {}, [25, 25, 25, 60]),
        (
            [25.1, 25.0, 24.9, 60.2],
            [25, 25, 25, 60],
            [0.3, 0.3, 0.3, 1.6],
            [_SAND] * 4,
            {"size_vote.lone_ratio": 2.5},
            [25] * 4,
        ),
        # as does one of another top's colour, or one where the rule is off
        (
            [40.2, 39.8, 31.9, 40.1],
            [40, 40, 32, 40],
            [0.3, 0.3, 2.2, 0.3],
            [_SAND, _SAND, _GREEN, _SAND],
            {},
            [40, 40, 32, 40],
        ),
        (
            [40.2, 39.8, 31.9, 40.1],
            [40, 40, 32, 40],
            [0.3, 0.3, 2.2, 0.3],
            [_SAND] * 4,
            {"size_vote.lone_doubt_mm": 0.0},
            [40, 40, 32, 40],
        ),
        # its neighbours must agree: between a unit of 25 mm bases and one of 40 mm ones it keeps its size ...
        (
            [25.1, 25.0, 24.9, 32.0, 40.3, 40.1, 39.9],
            [25, 25, 25, 32, 40, 40, 40],
            [0.3, 0.3, 0.3, 1.5, 0.3, 0.3, 0.3],
            [_SAND] * 7,
            {},
            [25, 25, 25, 32, 40, 40, 40],
        ),
        # ... and take its size by a vote: two bases are none (size_vote.min_bases 3), three are
        ([40.2, 31.9, 40.1], [40, 32, 40], [0.3, 2.2, 0.3], [_SAND] * 3, {}, [40, 32, 40]),
        ([40.2, 31.9, 40.1], [40, 32, 40], [0.3, 2.2, 0.3], [_SAND] * 3, {"size_vote.min_bases": 2}, [40, 40, 40]),
    ],
)
def test_a_lone_doubtful_base_takes_the_size_its_neighbours_all_voted(
    fitted_mm: list[float],
    snapped_mm: list[float],
    doubt_mm: list[float],
    tops: list[tuple[float, float, float]],
    changed: dict[str, float],
    voted_mm: list[float],
) -> None:
    settings = hand_rule_settings().replaced(changed)
    voted = vote_sizes(_row_of_bases(fitted_mm, snapped_mm, 5.0, doubt_mm), np.array(tops), 1.0, settings)
    np.testing.assert_array_equal(voted.diameter_mm, voted_mm)


def _bases_at(x_mm: list[float], fitted_mm: list[float], snapped_mm: list[float], score: float = 1.0) -> BaseDetections:
    """Bases along the line y = 100 at 1 px/mm, centred at ``x_mm``."""
    n = len(x_mm)
    ones = np.ones(n)
    center = np.stack([np.asarray(x_mm, dtype=np.float64), np.full(n, 100.0)], axis=1)
    return BaseDetections(center, np.asarray(fitted_mm) / 2, np.asarray(snapped_mm), ones * score, *([ones] * 6))


# Three 27 mm sand bases in a row in contact (x 100, 127, 154 mm); a kin-only reading (one that failed one test of a
# base: the figure's, roundness or coverage) put beside them. Gaps edge to edge from the last base.
_UNIT = _bases_at([100.0, 127.0, 154.0], [27.1, 26.9, 27.2], [27.0, 27.0, 27.0])


@pytest.mark.parametrize(
    ("plain_x_mm", "fitted_mm", "tops", "changed", "kept"),
    [
        # in contact with its unit's last base, and 20 mm from it edge to edge: within kin.reach_mm (25 mm)
        ([181.0], [27.0], [_SAND], {}, [0]),
        ([201.0], [27.0], [_SAND], {}, [0]),
        # beyond the reach (30 mm: within the vote's 2", a token put down beside a unit), another size (fitted 4 mm
        # larger: outside size_vote.window_mm), another top
        ([211.0], [27.0], [_SAND], {}, []),
        ([183.0], [31.0], [_SAND], {}, []),
        ([181.0], [27.0], [_GREEN], {}, []),
        # colours not compared: the green one stands too
        ([181.0], [27.0], [_GREEN], {"size_vote.colour": 0.0}, [0]),
        # the rule off, or asking for two bases of the unit within reach: one is (the next lies 27 mm away) ...
        ([181.0], [27.0], [_SAND], {"kin.min_bases": 0}, []),
        ([181.0], [27.0], [_SAND], {"kin.min_bases": 2}, []),
        # ... two are within 30 mm
        ([181.0], [27.0], [_SAND], {"kin.min_bases": 2, "kin.reach_mm": 30.0}, [0]),
        # overlapping its unit's last base by 4 mm, more than bases in contact may (overlaps.coarse_max_mm, 3 mm)
        ([177.0], [27.0], [_SAND], {}, []),
        # a reading beyond the reach of the bases stands beside one that stands beside them (27 mm from the last base)
        ([181.0, 208.0], [27.0, 27.0], [_SAND, _SAND], {}, [0, 1]),
        ([208.0], [27.0], [_SAND], {}, []),
        # two readings 10 mm apart, one disc read twice: the better scored (the first) stands
        ([181.0, 191.0], [27.0, 27.0], [_SAND, _SAND], {}, [0]),
    ],
)
def test_a_reading_that_fails_one_test_stands_beside_its_units_bases(
    plain_x_mm: list[float],
    fitted_mm: list[float],
    tops: list[tuple[float, float, float]],
    changed: dict[str, float],
    kept: list[int],
) -> None:
    settings = hand_rule_settings().replaced(changed)
    plain = _bases_at(plain_x_mm, fitted_mm, [27.0] * len(plain_x_mm))
    plain = dataclasses.replace(plain, score=np.linspace(1.0, 0.5, len(plain_x_mm)))
    lab = np.array([_SAND] * len(_UNIT) + tops)
    np.testing.assert_array_equal(beside_kin(_UNIT, plain, lab, 1.0, settings), kept)


@pytest.mark.parametrize(
    ("plain_x_mm", "fitted_mm", "tops", "changed", "kept"),
    [
        # three plain bases of one unit, 5 mm apart and far from any base: a group of kin.group_min (3) stands
        ([400.0, 432.0, 464.0], [27.0] * 3, [_SAND] * 3, {}, [0, 1, 2]),
        # a chain: the first and the last are 59 mm apart, each within reach of the middle one
        ([400.0, 432.0, 464.0], [27.0] * 3, [_SAND] * 3, {"kin.group_min": 4}, []),
        ([400.0, 432.0, 464.0], [27.0] * 3, [_SAND] * 3, {"kin.group_min": 0}, []),
        # two are no group; nor three of which one is out of reach (40 mm edge to edge) ...
        ([400.0, 432.0], [27.0] * 2, [_SAND] * 2, {}, []),
        ([400.0, 432.0, 499.0], [27.0] * 3, [_SAND] * 3, {}, []),
        # ... or of another size, or another top
        ([400.0, 432.0, 466.0], [27.0, 27.0, 31.0], [_SAND] * 3, {}, []),
        ([400.0, 432.0, 464.0], [27.0] * 3, [_SAND, _SAND, _GREEN], {}, []),
        # a fourth reading of the same disc (10 mm off the first) is no member beside it: the better scored stands
        ([400.0, 432.0, 464.0, 410.0], [27.0] * 4, [_SAND] * 4, {}, [0, 1, 2]),
    ],
)
def test_a_group_of_plain_readings_stands_as_a_unit(
    plain_x_mm: list[float],
    fitted_mm: list[float],
    tops: list[tuple[float, float, float]],
    changed: dict[str, float],
    kept: list[int],
) -> None:
    settings = hand_rule_settings().replaced(changed)
    plain = _bases_at(plain_x_mm, fitted_mm, [27.0] * len(plain_x_mm))
    plain = dataclasses.replace(plain, score=np.linspace(1.0, 0.5, len(plain_x_mm)))
    lab = np.array([_SAND] * len(_UNIT) + tops)
    np.testing.assert_array_equal(beside_kin(_UNIT, plain, lab, 1.0, settings), kept)


@pytest.mark.parametrize(
    ("gap_mm", "changed", "grouped"),
    [
        # three plain 27 mm discs of one top in a row, this far apart edge to edge: a unit in contact ...
        (0.0, {}, True),
        # ... or spread to a 2" cohesion (kin.group_reach_mm) stands as a group
        (45.0, {}, True),
        # farther apart than any cohesion keeps a unit, or with the reach narrowed, they are three lone discs
        (60.0, {}, False),
        (45.0, {"kin.group_reach_mm": 25.0}, False),
    ],
)
def test_a_unit_of_plain_discs_stands_together_within_its_cohesion(
    gap_mm: float, changed: dict[str, float], grouped: bool
) -> None:
    x_mm = [100.0 + k * (27.0 + gap_mm) for k in range(3)]
    found = _bases_at(x_mm, [27.0] * 3, [27.0] * 3)
    image = np.zeros((200, int(x_mm[-1]) + 50, 3), np.uint8)
    image[:] = (120, 160, 190)
    settings = hand_rule_settings().replaced(changed)
    np.testing.assert_array_equal(plain_groups(found, image, 1.0, settings), [grouped] * 3)


@pytest.mark.parametrize(
    ("px_per_mm", "lost_x_mm", "lost_mm", "changed", "narrow"),
    [
        # a 27 mm reading (row 1) beside a kept 27 mm one (x 100 mm) overlapping it by 1 mm more than the 2 mm bases may
        # (where figures resolve, 1.5 px/mm), and by 1.5 mm more than the 3 mm where they blur (1 px/mm) ...
        (1.5, 124.0, 27.0, {}, [1]),
        (1.0, 122.5, 27.0, {}, [1]),
        # ... or 2 mm more (kin.lost_overlap_mm, the edge of it)
        (1.5, 123.0, 27.0, {}, [1]),
        # not by 3 mm more, nor with the rule off
        (1.5, 122.0, 27.0, {}, []),
        (1.5, 124.0, 27.0, {"kin.lost_overlap_mm": 0.0}, []),
        # not clashing at all: lost for some other reason, not this one
        (1.5, 126.0, 27.0, {}, []),
        # inside the kept one (its top, its figure) or holding it inside: not a neighbour
        (1.5, 101.0, 25.0, {}, []),
        (1.5, 112.0, 60.0, {}, []),
    ],
)
def test_a_reading_lost_by_a_little_overlap_waits_for_its_units_vote(
    px_per_mm: float, lost_x_mm: float, lost_mm: float, changed: dict[str, float], narrow: list[int]
) -> None:
    settings = hand_rule_settings().replaced(changed)
    center_px = np.array([[100.0, 100.0], [lost_x_mm, 100.0]]) * px_per_mm
    size_mm = np.array([27.0, lost_mm])
    rows, kept = np.array([0, 1]), np.array([0])
    np.testing.assert_array_equal(narrowly_lost(center_px, size_mm, rows, kept, px_per_mm, settings), narrow)


@pytest.mark.parametrize(
    ("lost_x_mm", "changed", "found"),
    [
        # four 32 mm bases in contact, the last read 40 mm across (fitted 32.6): a reading of 32 mm in contact with it
        # overlaps it by 4 mm at 40 mm, more than bases may (3 mm at 1 px/mm), and none at the 32 mm its unit votes
        (228.0, {}, 6),
        # without the vote it stays out; 4 mm into the base, it overlaps that by more than bases may either way
        (228.0, {"size_vote.reach_mm": 0.0}, 5),
        (224.0, {}, 5),
    ],
)
def test_a_reading_stands_beside_a_base_read_a_size_too_large(
    lost_x_mm: float, changed: dict[str, float], found: int
) -> None:
    settings = hand_rule_settings().replaced(changed)
    unit = _bases_at([100.0, 132.0, 164.0, 196.0], [32.1, 31.8, 32.2, 32.6], [32.0, 32.0, 32.0, 40.0])
    # a base of the unit's far off, and a reading beside the one read too large
    other = _bases_at([300.0], [32.0], [32.0])
    lost = _bases_at([lost_x_mm], [32.0], [32.0], score=0.5)
    image = np.full((200, 400, 3), 150, np.uint8)
    dets = final_bases(unit, other, lost, image, 1.0, settings)
    assert len(dets) == found
    if found == 6:
        assert np.any(np.isclose(dets.center_px[:, 0], lost_x_mm)), "the reading stands where it was read"
        np.testing.assert_array_equal(np.sort(dets.diameter_mm), [32.0] * 6)


@pytest.mark.parametrize(
    ("px_per_mm", "token_x_mm", "token_mm", "changed", "found"),
    [
        # a disc of the unit's colour and size in contact with it, its figure too faint to show, is taken for one of
        # its bases, where figures blur (1 px/mm) and where they resolve (1.3, 2 px/mm) ...
        (1.0, 129.0, 32.0, {}, 4),
        (1.3, 129.0, 32.0, {}, 4),
        (2.0, 129.0, 32.0, {}, 4),
        # ... not with the rule off, nor 97 mm away, nor at another size
        (1.0, 129.0, 32.0, {"kin.min_bases": 0}, 3),
        (1.3, 129.0, 32.0, {"kin.min_bases": 0}, 3),
        (1.0, 225.0, 32.0, {}, 3),
        (2.0, 225.0, 32.0, {}, 3),
        (1.0, 125.5, 25.0, {}, 3),
    ],
)
def test_a_disc_without_a_figure_is_a_base_beside_its_unit(
    px_per_mm: float, token_x_mm: float, token_mm: float, changed: dict[str, float], found: int
) -> None:
    rng = np.random.default_rng(23)
    shape = (int(100 * px_per_mm), int(260 * px_per_mm))
    unit = [vs.Placed(((30 + 33 * i) * px_per_mm, 50 * px_per_mm), 32.0) for i in range(3)]
    token = ((token_x_mm * px_per_mm, 50 * px_per_mm), token_mm)
    light_grey, mud = (150.0, 150.0, 150.0), (60.0, 120.0, 150.0)
    scene = vs.draw_colour_scene(shape, px_per_mm, unit, rng, mud, light_grey, FIGURE_PAINT, [token])
    dets = detect_bases(scene.image_bgr, px_per_mm, DEFAULT_SETTINGS.replaced(changed))
    assert len(dets) == found
    m = match(scene, dets)
    assert len(m.truth_index) == len(unit), "the unit's own bases found either way"
    if found > len(unit):
        extra = np.setdiff1d(np.arange(len(dets)), m.det_index)
        np.testing.assert_allclose(dets.center_px[extra[0]], token[0], atol=0.5 * px_per_mm)
        assert dets.diameter_mm[extra[0]] == token_mm


_NAN = float("nan")


@pytest.mark.parametrize(
    ("heights", "sizes_mm", "tops", "changed", "pooled"),
    [
        # a unit of four: the median 0.9, stretched by the gain (1.8) for the fit's lean on 1
        ([0.9, 0.85, 0.95, 0.9], [27] * 4, [_SAND] * 4, {}, [0.82] * 4),
        ([0.9, 0.85, 0.95, 0.9], [27] * 4, [_SAND] * 4, {"known.height_pool_gain": 1.0}, [0.9] * 4),
        # held within outline.height_ratio
        ([1.2, 1.25, 1.2], [27] * 3, [_SAND] * 3, {}, [1.25] * 3),
        # a base with no fit of its own takes its unit's, and does not count towards it
        ([1.1, _NAN, 1.1, 1.05], [27] * 4, [_SAND] * 4, {}, [1.18] * 4),
        # too few fitted (two of three), or pooling off
        ([1.1, _NAN, 1.1], [27] * 3, [_SAND] * 3, {}, [_NAN] * 3),
        ([0.9, 0.85, 0.95, 0.9], [27] * 4, [_SAND] * 4, {"known.height_pool_min": 0}, [_NAN] * 4),
        # another size or another top is another unit: the last base alone, the first three together
        ([0.9, 0.9, 0.9, 1.2], [27, 27, 27, 28.5], [_SAND] * 4, {}, [0.82, 0.82, 0.82, _NAN]),
        ([0.9, 0.9, 0.9, 1.2], [27] * 4, [_SAND, _SAND, _SAND, _GREEN], {}, [0.82, 0.82, 0.82, _NAN]),
    ],
)
def test_a_units_rims_share_their_pooled_height(
    heights: list[float],
    sizes_mm: list[float],
    tops: list[tuple[float, float, float]],
    changed: dict[str, float],
    pooled: list[float],
) -> None:
    settings = hand_rule_settings().replaced(changed)
    bases = _row_of_bases(sizes_mm, sizes_mm, 5.0)
    got = pooled_heights(bases.center_px, bases.diameter_mm, np.array(tops), np.array(heights), 1.0, settings)
    np.testing.assert_allclose(got, pooled, atol=1e-9)


@pytest.mark.parametrize(
    ("top_bgr", "figure_bgr", "mat_bgr", "grey"),
    [
        ((60, 140, 200), (30, 30, 200), (90, 110, 80), False),
        ((40, 120, 40), (200, 200, 200), (40, 120, 40), False),
        ((200, 200, 200), (20, 20, 20), (90, 90, 90), True),
    ],
)
def test_a_tops_colour_is_read_round_the_figure_inside_the_rim(
    top_bgr: tuple[int, int, int], figure_bgr: tuple[int, int, int], mat_bgr: tuple[int, int, int], grey: bool
) -> None:
    # a 30 mm base at 2 px/mm: its top painted, a figure over its middle (half the radius) and over a sixth of the
    # ring, on a mat of another colour (or the same)
    image = np.full((160, 160, 3), mat_bgr, np.uint8)
    cv2.circle(image, (80, 80), 30, top_bgr, -1)
    cv2.circle(image, (80, 80), 15, figure_bgr, -1)
    cv2.ellipse(image, (80, 80), (30, 30), 0, 0, 60, figure_bgr, -1)
    if grey:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    settings = hand_rule_settings()
    lab = top_colours(image, np.array([[80.0, 80.0]]), np.array([30.0]), settings)
    swatch = np.full((1, 1, 3), top_bgr, np.uint8)
    if grey:
        swatch = cv2.cvtColor(cv2.cvtColor(swatch, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    expected = cv2.cvtColor(swatch, cv2.COLOR_BGR2LAB)[0, 0].astype(float)
    assert lab.shape == (1, 3)
    np.testing.assert_allclose(lab[0], expected, atol=1.0)


@pytest.mark.parametrize(("scores", "kept"), [([0.9, 0.8, 0.6], [0, 1, 2]), ([0.9, 0.8, 0.1], []), ([0.1] * 3, [])])
def test_only_clear_discs_make_a_group(scores: list[float], kept: list[int]) -> None:
    # a printed grid's cells are circles alike side by side too, but faint and rough: they score low
    plain = dataclasses.replace(_bases_at([400.0, 432.0, 464.0], [27.0] * 3, [27.0] * 3), score=np.array(scores))
    lab = np.array([_SAND] * (len(_UNIT) + 3))
    np.testing.assert_array_equal(beside_kin(_UNIT, plain, lab, 1.0, DEFAULT_SETTINGS), kept)


@pytest.mark.parametrize(
    ("new_x_mm", "fitted_mm", "tops", "changed", "stands"),
    [
        # three new bases in a row, nothing found beside them: a unit the verifier doubted
        ([300.0, 327.0, 354.0], [27.0] * 3, [_SAND] * 3, {}, [True] * 3),
        # two new bases beside the unit found (the first in contact with its last base): a unit of five
        ([181.0, 208.0], [27.0] * 2, [_SAND] * 2, {}, [True] * 2),
        # one new disc beside the unit found: a token of its colour put down beside it is not a unit's base
        ([181.0], [27.0], [_SAND], {}, [False]),
        # two apart, each alone: 40 mm edge to edge is beyond kin.reach_mm
        ([300.0, 367.0], [27.0] * 2, [_SAND] * 2, {}, [False] * 2),
        # another size or another top breaks the chain: two alike are too few
        ([300.0, 327.0, 356.0], [27.0, 27.0, 32.0], [_SAND] * 3, {}, [False] * 3),
        ([300.0, 327.0, 354.0], [27.0] * 3, [_SAND, _SAND, _GREEN], {}, [False] * 3),
        # the rule off
        ([300.0, 327.0, 354.0], [27.0] * 3, [_SAND] * 3, {"kin.group_min": 0}, [False] * 3),
    ],
)
def test_new_bases_stand_as_a_unit_of_at_least_two_of_them(
    new_x_mm: list[float],
    fitted_mm: list[float],
    tops: list[tuple[float, float, float]],
    changed: dict[str, float],
    stands: list[bool],
) -> None:
    new = _bases_at(new_x_mm, fitted_mm, fitted_mm, score=0.05)
    lab = np.array([_SAND] * len(_UNIT) + tops)
    settings = DEFAULT_SETTINGS.replaced(changed)
    assert units_of_new(_UNIT, new, lab, 1.0, settings).tolist() == stands
