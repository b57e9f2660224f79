"""round_ends on drawn top-down images: fingertips and forearms are round ends, bases in every company are not."""

from __future__ import annotations

import math
from collections.abc import Callable

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

import vision.ends
from vision.ends import round_ends

PX_PER_MM = 3.0
RADIUS_MM = 12.5
SIZE_PX = 400
CENTER = (200.0, 200.0)
MAT = (70, 120, 60)
SKIN = (90, 120, 170)
BASE = (40, 40, 45)
RED_BASE = (40, 50, 110)
FIGURE = (200, 200, 210)
WOBBLE = 0.07
CONTRAST = 20.0

Draw = Callable[[NDArray[np.uint8]], None]


def _px(mm: float) -> int:
    return round(mm * PX_PER_MM)


def _point(angle_deg: float, distance_mm: float) -> tuple[int, int]:
    a = math.radians(angle_deg)
    return (round(CENTER[0] + _px(distance_mm) * math.cos(a)), round(CENTER[1] + _px(distance_mm) * math.sin(a)))


def _finger(radius_mm: float, length_mm: float = 70.0, angle_deg: float = 30.0) -> Draw:
    """A capsule (OpenCV draws thick lines with round ends) whose round end is centred on CENTER."""

    def draw(image: NDArray[np.uint8]) -> None:
        end = (round(CENTER[0]), round(CENTER[1]))
        cv2.line(image, end, _point(angle_deg, length_mm), SKIN, 2 * _px(radius_mm), cv2.LINE_AA)

    return draw


def _forearm(image: NDArray[np.uint8]) -> None:
    cv2.line(image, _point(200.0, 80.0), _point(20.0, 80.0), SKIN, 2 * _px(RADIUS_MM), cv2.LINE_AA)


def _base_at(angle_deg: float, distance_mm: float, colour: tuple[int, int, int] = BASE) -> Draw:
    def draw(image: NDArray[np.uint8]) -> None:
        centre = _point(angle_deg, distance_mm)
        cv2.circle(image, centre, _px(RADIUS_MM), colour, -1, cv2.LINE_AA)
        # a figure: a pale blob off the middle
        cv2.circle(image, (centre[0] + _px(3.0), centre[1] - _px(2.0)), _px(5.0), FIGURE, -1, cv2.LINE_AA)

    return draw


def _spear(image: NDArray[np.uint8]) -> None:
    cv2.line(image, _point(0.0, 0.0), _point(-40.0, 45.0), (30, 60, 90), _px(1.5), cv2.LINE_AA)


def _wall(colour: tuple[int, int, int]) -> Draw:
    """A block beside the circle (terrain, or another finger), its near side a fifth of a radius past the rim."""

    def draw(image: NDArray[np.uint8]) -> None:
        x0 = round(CENTER[0] + _px(RADIUS_MM * 1.2))
        cv2.rectangle(image, (x0, 0), (SIZE_PX - 1, SIZE_PX - 1), colour, -1)

    return draw


def _dark_band(image: NDArray[np.uint8]) -> None:
    """A terrain's shadow, a band as wide as the base running away from it: nearer the colour of a dark red base
    than the mat's, but not of it."""
    cv2.rectangle(
        image,
        (round(CENTER[0] - _px(RADIUS_MM)), round(CENTER[1] + _px(RADIUS_MM * 0.9))),
        (round(CENTER[0] + _px(RADIUS_MM)), SIZE_PX - 1),
        (50, 55, 55),
        -1,
    )


def _scene(*parts: Draw, grey: bool = False) -> NDArray[np.uint8]:
    rng = np.random.default_rng(7)
    image = np.empty((SIZE_PX, SIZE_PX, 3), np.uint8)
    image[:] = MAT
    for draw in parts:
        draw(image)
    noisy = image.astype(np.float64) + rng.normal(0.0, 3.0, image.shape)
    out = np.asarray(cv2.GaussianBlur(np.clip(noisy, 0, 255).astype(np.uint8), (0, 0), 1.0), dtype=np.uint8)
    return np.asarray(cv2.cvtColor(out, cv2.COLOR_BGR2GRAY), dtype=np.uint8) if grey else out


def _is_round_end(image: NDArray[np.uint8], radius_mm: float = RADIUS_MM, wobble: float = WOBBLE) -> bool:
    center = np.array([CENTER])
    return bool(round_ends(image, center, np.array([radius_mm * PX_PER_MM]), wobble, CONTRAST)[0])


@pytest.mark.parametrize(
    ("what", "parts", "expected"),
    [
        ("a fingertip", (_finger(RADIUS_MM),), True),
        ("a fingertip pointing down the image", (_finger(RADIUS_MM, angle_deg=-95.0),), True),
        ("a finger a size wider than the circle (a 25 mm circle on a 28 mm finger)", (_finger(14.0),), True),
        ("a finger a size narrower (a 25 mm circle on a 22 mm finger)", (_finger(11.0),), True),
        ("a finger half as wide as the circle (a fingertip read with its shadow)", (_finger(6.5),), True),
        ("a rod two fifths as wide as the circle", (_finger(5.0),), False),
        ("a forearm running through the circle", (_forearm,), True),
        ("a base alone", (_base_at(0.0, 0.0),), False),
        ("a base with a spear reaching out over the mat", (_base_at(0.0, 0.0), _spear), False),
        (
            "a base in a row of bases in contact",
            (_base_at(0.0, 0.0), _base_at(30.0, 25.0), _base_at(30.0, 50.0)),
            False,
        ),
        ("a base between two in contact", (_base_at(0.0, 0.0), _base_at(30.0, 25.0), _base_at(210.0, 25.0)), False),
        ("a base against terrain of its own colour", (_base_at(0.0, 0.0), _wall(BASE)), False),
        ("a base beside a terrain's shadow as wide as itself", (_dark_band, _base_at(0.0, 0.0, RED_BASE)), False),
        (
            "a fingertip with skin beside it (a finger pressed to it): a flank of its own colour",
            (_finger(RADIUS_MM), _wall(SKIN)),
            False,
        ),
    ],
)
def test_round_ends(what: str, parts: tuple[Draw, ...], expected: bool) -> None:
    assert _is_round_end(_scene(*parts)) is expected, what


@pytest.mark.parametrize("grey", [False, True])
def test_a_fingertip_is_a_round_end_in_grey_too(grey: bool) -> None:
    assert _is_round_end(_scene(_finger(RADIUS_MM), grey=grey))


def test_no_circle_is_a_round_end_when_turned_off() -> None:
    assert not _is_round_end(_scene(_finger(RADIUS_MM)), wobble=0.0)


def test_a_band_that_is_nearer_the_base_but_not_of_its_colour_is_no_finger(monkeypatch: pytest.MonkeyPatch) -> None:
    # the rule that the band's middle is of the inside's own colour is what rejects the shadow above
    image = _scene(_dark_band, _base_at(0.0, 0.0, RED_BASE))
    assert not _is_round_end(image)
    monkeypatch.setattr(vision.ends, "_CORE_LIKE", math.inf)
    assert _is_round_end(image)


def test_each_circle_is_judged_on_its_own() -> None:
    image = _scene(_finger(RADIUS_MM), _base_at(180.0, 60.0))
    centers = np.array([CENTER, _point(180.0, 60.0)], dtype=np.float64)
    radii = np.full(2, RADIUS_MM * PX_PER_MM)
    assert round_ends(image, centers, radii, WOBBLE, CONTRAST).tolist() == [True, False]
    assert round_ends(image, np.zeros((0, 2)), np.zeros(0), WOBBLE, CONTRAST).shape == (0,)


def test_a_base_by_the_images_edge_does_not_run_on_into_it() -> None:
    # beyond the image is black: a base by its edge, lighter mat beyond it on one side and a pale base on the other,
    # would read as a band of the mat between black and the pale base, the mat nearer the base's colour than either
    mat, dark, pale = (145, 104, 122), (119, 78, 93), (215, 184, 187)
    image = np.empty((260, 380, 3), np.uint8)
    image[:] = mat
    for centre, radius_px, colour in (((280, 116), 45, pale), ((331, 61), 25, dark)):
        cv2.circle(image, centre, radius_px, colour, -1, cv2.LINE_AA)
        # the dark line of the wall
        cv2.circle(image, centre, radius_px, (58, 39, 45), 1, cv2.LINE_AA)
    found = round_ends(image, np.array([[331.4, 61.0]]), np.array([25.0]), WOBBLE, CONTRAST)
    assert not found[0]
