"""The die test (:mod:`vision.squares`) on drawn patches at about 1 px/mm: a die's square inside, a base's round one
with a figure, and a base that a straight edge (terrain) crosses."""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from tests.vision.hand_rules import hand_rule_settings
from vision.squares import square_insides

SIZE_PX = 80
CENTRE = (40.0, 40.0)
# a 25 mm circle round a 16 mm die, at 1 px/mm
RADIUS_PX = 12.5
MAT, TOP, DARK = 110, 200, 40
DEFAULT_SETTINGS = hand_rule_settings()


def _patch(seed: int) -> NDArray[np.uint8]:
    rng = np.random.default_rng(seed)
    noise = rng.normal(0.0, 2.0, (SIZE_PX, SIZE_PX))
    return np.clip(MAT + noise, 0, 255).astype(np.uint8)


def _blurred(image: NDArray[np.uint8]) -> NDArray[np.uint8]:
    return np.asarray(cv2.GaussianBlur(image, (0, 0), 0.7), dtype=np.uint8)


def _die(turn_deg: float, seed: int) -> NDArray[np.uint8]:
    image = _patch(seed)
    box = cv2.boxPoints((CENTRE, (16.0, 16.0), turn_deg)).astype(np.int32)
    cv2.fillPoly(image, [box], TOP)
    # two pips on its top
    for dx, dy in ((-4, -4), (4, 4)):
        cv2.circle(image, (int(CENTRE[0]) + dx, int(CENTRE[1]) + dy), 1, DARK, -1)
    return _blurred(image)


def _base_with_figure(seed: int) -> NDArray[np.uint8]:
    image = _patch(seed)
    cv2.circle(image, (40, 40), 12, TOP, -1)
    # a figure: a body, an arm and a spear, every which way
    cv2.ellipse(image, (41, 39), (5, 3), 30, 0, 360, DARK, -1)
    cv2.line(image, (38, 42), (32, 47), 150, 2)
    cv2.line(image, (44, 35), (52, 27), 60, 1)
    return _blurred(image)


def _base_under_an_edge(seed: int) -> NDArray[np.uint8]:
    image = _base_with_figure(seed)
    # terrain over most of the base: one straight edge across it, below its middle
    image[:46, :] = DARK
    return _blurred(image)


LINE = DEFAULT_SETTINGS.verdicts.die_line_agreement


@pytest.mark.parametrize(
    ("make", "max_line", "square"),
    [
        (lambda seed: _die(0.0, seed), LINE, True),
        (lambda seed: _die(30.0, seed), LINE, True),
        (lambda seed: _die(45.0, seed), LINE, True),
        (_base_with_figure, LINE, False),
        # a straight edge's gradients agree taken four times over as a square's do: taken twice over, they tell
        (_base_under_an_edge, LINE, False),
        (_base_under_an_edge, 1.0, True),
    ],
)
@pytest.mark.parametrize("seed", [1, 2])
def test_a_die_has_a_square_inside_and_a_base_does_not(
    make: Callable[[int], NDArray[np.uint8]], max_line: float, square: bool, seed: int
) -> None:
    image = make(seed)
    found = square_insides(
        image, np.array([CENTRE]), np.array([RADIUS_PX]), DEFAULT_SETTINGS.verdicts.die_square_agreement, max_line
    )
    assert found.tolist() == [square]


@pytest.mark.parametrize(
    ("center", "min_square", "square"),
    [
        (CENTRE, 0.0, False),
        # a circle reaching past the image is not judged
        ((5.0, 40.0), DEFAULT_SETTINGS.verdicts.die_square_agreement, False),
    ],
)
def test_no_die_is_called_when_turned_off_or_past_the_image(
    center: tuple[float, float], min_square: float, square: bool
) -> None:
    found = square_insides(
        _die(0.0, 1),
        np.array([center]),
        np.array([RADIUS_PX]),
        min_square,
        DEFAULT_SETTINGS.verdicts.die_line_agreement,
    )
    assert found.tolist() == [square]


def test_no_circles_no_calls() -> None:
    found = square_insides(_die(0.0, 1), np.zeros((0, 2)), np.zeros(0), 0.35, 0.25)
    assert found.shape == (0,)
