"""Dense terrain priced on the path taken (seed 002: "each separate segment of Dense Terrain passed through costs an
additional 1" of movement"): the stretches of a leg, and the cheapest path around walls and through woods."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely

import rules
from rules.movement import check_moves
from rules.paths import DensePathsFrom, dense_path_mm, leg_crossings, shortest_path_mm
from tests.rules.conftest import model, moved, state_of

INCH = 25.4
PRICE = INCH
SKIRMISH = rules.load_profile("skirmish")


def box(x0: float, y0: float, x1: float, y1: float) -> shapely.Polygon:
    return shapely.box(x0, y0, x1, y1)


# A U open to the north: two arms x 100-120 and 180-200, joined by a base y 0-20.
U_SHAPE = shapely.union_all([box(100, 0, 120, 100), box(180, 0, 200, 100), box(100, 0, 200, 20)])


@pytest.mark.parametrize(
    ("start", "end", "count", "from_start", "to_end"),
    [
        ((0, 50), (300, 50), 2, False, False),  # through both arms: two separate stretches
        ((0, 10), (300, 10), 1, False, False),  # along the base: one stretch
        ((110, 50), (300, 50), 2, True, False),  # from inside an arm
        ((0, 50), (190, 50), 2, False, True),  # into the other arm
        ((0, 100), (300, 100), 0, False, False),  # along the arms' ends: a graze, not a crossing
        ((150, 50), (150, 90), 0, False, False),  # inside the U's gap
        ((110, 50), (110, 60), 1, True, True),  # wholly inside
    ],
)
def test_leg_crossings(
    start: tuple[float, float], end: tuple[float, float], count: int, from_start: bool, to_end: bool
) -> None:
    got = leg_crossings(np.array([start], dtype=float), np.array([end], dtype=float), U_SHAPE)
    assert (int(got[0][0]), bool(got[1][0]), bool(got[2][0])) == (count, from_start, to_end)


def test_leg_crossings_of_many_legs_at_once_match_one_by_one() -> None:
    rng = np.random.default_rng(49)
    starts, ends = rng.uniform(-50, 250, (200, 2)), rng.uniform(-50, 250, (200, 2))
    together = leg_crossings(starts, ends, U_SHAPE)
    for k in range(len(starts)):
        alone = leg_crossings(starts[k : k + 1], ends[k : k + 1], U_SHAPE)
        assert tuple(int(a[0]) for a in alone) == tuple(int(a[k]) for a in together)


@pytest.mark.parametrize(
    ("areas", "expected_mm"),
    [
        ([], 300.0),
        ([box(100, -50, 120, 50)], 300.0 + PRICE),
        ([box(100, -50, 120, 50), box(180, -50, 200, 50)], 300.0 + 2 * PRICE),
        ([box(100, -50, 120, 50), box(120, -50, 140, 50)], 300.0 + PRICE),  # two pieces that touch are one
        ([box(-10, -50, 20, 50)], 300.0 + PRICE),  # leaving the wood it starts in
        ([U_SHAPE], 300.0 + 2 * PRICE),  # leaving a wood and entering it again: twice
    ],
)
def test_straight_crossings_cost_a_price_each(areas: list[shapely.Polygon], expected_mm: float) -> None:
    # Woods far taller than the line is long: going round costs more than crossing.
    tall = [shapely.affinity.scale(a, 1.0, 20.0) for a in areas]
    assert dense_path_mm((0.0, 0.0), (300.0, 0.0), [], tall, PRICE, 5000.0) == pytest.approx(expected_mm)


def test_going_round_a_wood_is_taken_when_it_is_cheaper_than_the_price() -> None:
    wood = box(140, -5, 160, 50)  # clips the straight line by 5 mm
    around = shortest_path_mm((0.0, 0.0), (300.0, 0.0), [wood], 5000.0)
    assert 300.0 < around < 300.0 + PRICE
    assert dense_path_mm((0.0, 0.0), (300.0, 0.0), [], [wood], PRICE, 5000.0) == pytest.approx(around)


# A wall from y 20 north to y 1000; its south end stands in a wood (y -40 to 40).
WALL = box(95, 20, 105, 1000)
WOOD = box(60, -40, 140, 40)


@pytest.mark.parametrize(
    ("areas", "stretches"),
    [
        ([WOOD], 1),  # the path bends twice inside the wood: one stretch, paid once
        ([box(60, -40, 99, 40), box(101, -40, 140, 40)], 2),  # two woods split by a gap: each paid
        ([], 0),
    ],
)
def test_a_bent_path_pays_for_the_woods_it_passes(areas: list[shapely.Polygon], stretches: int) -> None:
    start, end = (60.0, 100.0), (140.0, 100.0)
    bent = shortest_path_mm(start, end, [WALL], 5000.0)
    assert bent > 160.0  # round the wall's end, not straight
    assert dense_path_mm(start, end, [WALL], areas, PRICE, 5000.0) == pytest.approx(bent + stretches * PRICE)


def test_paths_from_one_start_match_the_single_path() -> None:
    walls = [WALL, box(300, -200, 320, 200)]
    woods = [WOOD, box(200, -100, 260, 300), U_SHAPE.buffer(0).union(box(400, 400, 500, 450))]
    start = (60.0, 100.0)
    many = DensePathsFrom(start, walls, woods, PRICE, 3000.0)
    rng = np.random.default_rng(7)
    for end in rng.uniform(-200, 600, (40, 2)):
        e = (float(end[0]), float(end[1]))
        one = dense_path_mm(start, e, walls, woods, PRICE, 3000.0)
        assert many.length_mm(e) == pytest.approx(one, abs=1e-6)
        # never below the path that ignores the woods, never above crossing them on that path's legs
        free = shortest_path_mm(start, e, walls, 3000.0)
        assert free - 1e-6 <= one <= free + PRICE * 8


def test_an_end_inside_a_wall_is_measured_without_that_wall() -> None:
    many = DensePathsFrom((60.0, 100.0), [WALL], [WOOD], PRICE, 3000.0)
    assert many.length_mm((100.0, 500.0)) == pytest.approx(math.dist((60.0, 100.0), (100.0, 500.0)))


# --- through a model's move ------------------------------------------------------------------------------------------


def _bent_move(abilities: list[str]) -> rules.UnitMove:
    wall = {
        "id": "wall",
        "kind": "solid",
        "height_mm": 60,
        "polygon": [[395, 520], [405, 520], [405, 1219], [395, 1219]],
    }
    woods = {"id": "woods", "kind": "dense", "polygon": [[370, 460], [430, 460], [430, 515], [370, 515]]}
    units = [{"id": "red", "player": "A", "move_in": 6, "abilities": abilities}]
    before = state_of([model("r1", "red", 340.0, 540.0)], units, terrain=[wall, woods])
    (verdict,) = check_moves(before, moved(before, r1=(460.0, 540.0)), SKIRMISH, actions={"red": "move"})
    return verdict


def test_a_model_moving_through_models_pays_for_a_wood_on_a_bent_path() -> None:
    walker = _bent_move([])  # dense terrain is open ground to a model without the ability
    ghost = _bent_move(["through_models"])
    assert walker.legal and walker.models[0].path_mm < 6 * INCH
    # The wood (grown by the base's radius less the contact tolerance) holds both bends: one stretch.
    assert ghost.models[0].path_mm == pytest.approx(walker.models[0].path_mm + INCH)
    assert not ghost.legal


def test_a_model_moving_through_models_still_passes_through_them() -> None:
    units = [{"id": "red", "player": "A", "move_in": 6, "abilities": ["through_models"]}, {"id": "wall", "player": "A"}]
    models = [model("r1", "red", 300.0, 600.0)] + [model(f"w{k}", "wall", 370.0, 536.0 + 32.0 * k) for k in range(5)]
    before = state_of(models, units)
    (verdict,) = check_moves(before, moved(before, r1=(440.0, 600.0)), SKIRMISH)
    assert verdict.models[0].path_mm == pytest.approx(140.0)
