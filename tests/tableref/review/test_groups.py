"""The group fit on model lists with a known truth: where each unit went, shifted, turned or both."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import rules
from tableref.config import load_config
from tableref.review.groups import GroupMove, group_moves, held_by, holders, turned
from tableref.settings import ReviewSettings

SETTINGS = load_config().review
NO_TURNS = dataclasses.replace(SETTINGS, group_turn_max_deg=0.0)
REACH_MM = 500.0

# red's shapes: two ranks of four 40 mm apart, a line of five, a loose group of six
BLOCK = [(400.0 + 40.0 * (k % 4), 400.0 + 40.0 * (k // 4)) for k in range(8)]
LINE = [(400.0 + 36.0 * k, 420.0) for k in range(5)]
LOOSE = [(400.0, 400.0), (441.0, 392.0), (430.0, 436.0), (470.0, 425.0), (395.0, 445.0), (462.0, 470.0)]
# blue stands still (its picture unchanged) beside where red started, in red's block's shape
BLUE = [(400.0 + 40.0 * (k % 4), 560.0 + 40.0 * (k // 4)) for k in range(8)]


def _models(places: list[tuple[float, float]], unit: str | None, prefix: str) -> list[rules.Model]:
    return [rules.Model(f"{prefix}{k + 1}", unit, x, y, rules.RoundBase(32.0)) for k, (x, y) in enumerate(places)]


def _moved(shape: list[tuple[float, float]], turn_deg: float, pivot: str, shift_mm: tuple[float, float]) -> np.ndarray:
    """The truth: ``shape`` turned about its centre or its corner of least x and y, then shifted."""
    xy = np.array(shape)
    about = xy.mean(axis=0) if pivot == "centre" else xy.min(axis=0)
    return turned(xy, turn_deg, about) + np.array(shift_mm)


def _fit(
    shape: list[tuple[float, float]],
    after: np.ndarray,
    missing: set[int],
    settings: ReviewSettings,
) -> dict[str, GroupMove]:
    """The group fit of red (``shape`` before) and blue (standing still) on detections of red's models at ``after``
    but ``missing`` and of blue's, each read up to a millimetre off (seeded), in a shuffled order."""
    known = _models(shape, "red", "r") + _models(BLUE, "blue", "b")
    seen = [tuple(p) for k, p in enumerate(after) if k not in missing] + BLUE
    rng = np.random.default_rng(len(seen))
    noisy = np.array(seen) + rng.uniform(-1.0, 1.0, (len(seen), 2))
    order = rng.permutation(len(seen))
    detected = _models([(float(x), float(y)) for x, y in noisy[order]], None, "m")
    held = held_by(holders(detected, known, [m.unit == "blue" for m in known], settings), known)
    return group_moves(detected, known, [REACH_MM] * len(known), settings, held)


TURNED = [
    # (shape, turn, pivot, shift, models not found after the move)
    (BLOCK, 45.0, "corner", (120.0, 40.0), {1, 6}),
    (BLOCK, -30.0, "centre", (0.0, -150.0), set()),
    (BLOCK, 90.0, "corner", (60.0, -100.0), {0}),
    (BLOCK, -75.0, "centre", (250.0, 0.0), {2, 3, 5}),
    (LINE, 60.0, "corner", (80.0, -80.0), {2}),
    (LINE, -15.0, "centre", (170.0, 0.0), set()),
    (LOOSE, 75.0, "centre", (-100.0, -60.0), {4}),
    (LOOSE, -40.0, "corner", (150.0, -90.0), set()),
]


@pytest.mark.parametrize(("shape", "turn_deg", "pivot", "shift_mm", "missing"), TURNED)
def test_a_turned_unit_is_fitted_with_its_turn(
    shape: list[tuple[float, float]],
    turn_deg: float,
    pivot: str,
    shift_mm: tuple[float, float],
    missing: set[int],
) -> None:
    truth = _moved(shape, turn_deg, pivot, shift_mm)
    fits = _fit(shape, truth, missing, SETTINGS)
    # every model, found or not, is placed where it went, within the detections' error
    placed = fits["red"].places(np.array(shape))
    assert np.hypot(*(placed - truth).T).max() < 2.5
    assert fits["red"].turn_deg == pytest.approx(turn_deg, abs=1.5)
    assert fits["blue"].farthest_mm(np.array(BLUE)) < 2.0


@pytest.mark.parametrize(("shape", "turn_deg", "pivot", "shift_mm", "missing"), TURNED)
def test_without_turns_a_turned_unit_is_not_placed(
    shape: list[tuple[float, float]],
    turn_deg: float,
    pivot: str,
    shift_mm: tuple[float, float],
    missing: set[int],
) -> None:
    """The cases above need the turn: a displacement alone lands some models far from where they went."""
    truth = _moved(shape, turn_deg, pivot, shift_mm)
    fits = _fit(shape, truth, missing, NO_TURNS)
    placed = fits["red"].places(np.array(shape)) if "red" in fits else np.array(shape)
    assert np.hypot(*(placed - truth).T).max() > 10.0


@pytest.mark.parametrize(
    ("shape", "shift_mm", "missing"),
    [
        (BLOCK, (175.0, -60.0), {0, 2}),
        (BLOCK, (80.0, 0.0), {3}),
        (LINE, (36.0, 0.0), set()),
        (LOOSE, (0.0, -175.0), {1, 5}),
    ],
)
def test_a_unit_that_only_shifted_is_not_turned(
    shape: list[tuple[float, float]], shift_mm: tuple[float, float], missing: set[int]
) -> None:
    truth = np.array(shape) + np.array(shift_mm)
    fits = _fit(shape, truth, missing, SETTINGS)
    assert fits["red"].turn_deg == 0.0
    assert np.hypot(*(fits["red"].places(np.array(shape)) - truth).T).max() < 2.5


@pytest.mark.parametrize(
    ("move", "point", "expected", "farthest"),
    [
        (GroupMove(), (10.0, 20.0), (10.0, 20.0), 0.0),
        (GroupMove((3.0, -4.0)), (10.0, 20.0), (13.0, 16.0), 5.0),
        (GroupMove((0.0, 0.0), 90.0, (10.0, 10.0)), (20.0, 10.0), (10.0, 20.0), math.hypot(10.0, 10.0)),
        (GroupMove((5.0, 0.0), 180.0, (0.0, 0.0)), (10.0, 0.0), (-5.0, 0.0), 15.0),
        (GroupMove((0.0, 1.0), -90.0, (0.0, 0.0)), (0.0, 10.0), (10.0, 1.0), math.hypot(10.0, 9.0)),
    ],
)
def test_a_group_move_maps_a_place(
    move: GroupMove, point: tuple[float, float], expected: tuple[float, float], farthest: float
) -> None:
    assert move.place(*point) == pytest.approx(expected)
    assert move.places(np.array([point]))[0] == pytest.approx(expected)
    assert move.farthest_mm(np.array([point, (point[0], point[1])])) == pytest.approx(farthest)
