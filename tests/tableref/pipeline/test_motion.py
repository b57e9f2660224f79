"""Cheap change detection: something reaching in over the frame's edge versus models moved on the table."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from tableref.pipeline.motion import SettleWatch, bases_drawn, bases_explain, reaching_in, reaching_region, thumbnail

SIZE = (180, 320)
DELTA = 8
FRACTION = 0.004


def _mat(seed: int) -> NDArray[np.uint8]:
    rng = np.random.default_rng(seed)
    return np.asarray(np.clip(rng.normal(100.0, 2.0, SIZE), 0, 255), dtype=np.uint8)


def _paint(image: NDArray[np.uint8], boxes: list[tuple[int, int, int, int]], grey: int) -> NDArray[np.uint8]:
    out = image.copy()
    for x, y, w, h in boxes:
        out[y : y + h, x : x + w] = grey
    return out


# Boxes (x, y, w, h) in a 320 x 180 thumbnail; 0.4 % of it is 230 px.
ARM = [(150, 0, 14, 60)]  # 840 px from the top edge
ARM_IN_PIECES = [(150, 0, 14, 18), (151, 20, 12, 18), (152, 40, 10, 18)]  # gaps of one pixel
MOVED_BASES = [(60, 60, 8, 8), (200, 120, 8, 8), (240, 40, 12, 12)]
BIG_INSIDE = [(100, 60, 40, 30)]  # 1,200 px, away from every edge
SMALL_AT_EDGE = [(0, 90, 6, 6)]


@pytest.mark.parametrize(
    ("boxes", "expected"),
    [
        (ARM, True),
        (ARM_IN_PIECES, True),
        (ARM + MOVED_BASES, True),
        (MOVED_BASES, False),
        (BIG_INSIDE, False),
        (SMALL_AT_EDGE, False),
        ([], False),
    ],
)
def test_reaching_in(boxes: list[tuple[int, int, int, int]], expected: bool) -> None:
    reference = _mat(1)
    # A fresh frame of the same table: sensor noise differs everywhere.
    frame = _paint(_mat(2), boxes, 140)
    assert reaching_in(frame, reference, DELTA, FRACTION) is expected


def test_thumbnails_of_other_sizes_are_not_compared() -> None:
    assert reaching_in(_paint(_mat(2), ARM, 140)[:, :200], _mat(1), DELTA, FRACTION) is False


def _square(cx: float, cy: float, half: float) -> list[tuple[float, float]]:
    return [(cx - half, cy - half), (cx + half, cy - half), (cx + half, cy + half), (cx - half, cy + half)]


# Bases as outlines in the pixels of a frame four times the thumbnail's size (1280 x 720).
ON_UNIT = [_square(4 * 157, 4 * y, 24.0) for y in (10, 30, 50)]
ELSEWHERE = [_square(900.0, 500.0, 24.0)]


@pytest.mark.parametrize(
    ("outlines", "grow", "explained"),
    [
        (ON_UNIT, 0.5, True),  # the changed region at the edge is where the unit stood and stands
        (ON_UNIT, 0.0, False),  # not grown over what its figures overhang: part of the region lies off them
        (ELSEWHERE, 0.5, False),  # the bases stand elsewhere: an arm
        ([], 0.5, False),
    ],
)
def test_a_region_at_the_edge_is_explained_by_bases_only_where_it_lies_on_them(
    outlines: list[list[tuple[float, float]]], grow: float, explained: bool
) -> None:
    frame = _paint(_mat(2), [(150, 0, 14, 60)], 140)
    region = reaching_region(frame, _mat(1), DELTA, FRACTION)
    assert region is not None and region.shape == SIZE
    polygons = np.array(outlines, dtype=np.float64).reshape(-1, 4, 2)
    assert bases_explain(region, bases_drawn(SIZE, polygons, (720, 1280), grow), 0.8) is explained


# A unit moved on a dark mat (BGR), figures of three colours: blue changes the grey level by a ninth of its change.
DARK_MAT = (20, 18, 22)
FIGURES = [(64, 96, 24, 24), (112, 96, 24, 24), (160, 96, 24, 24)]  # in a 640 x 360 frame: 12 x 12 px of a 320 copy


@pytest.mark.parametrize(
    ("figure_bgr", "colour_moved", "grey_moved"),
    [
        ((80, 20, 10), True, False),  # blue figures: the grey copy changes by 4 levels, the blue channel by 60
        ((20, 18, 22), False, False),  # figures of the mat's own colour change nothing either way
        ((150, 150, 150), True, True),  # light figures change both
    ],
)
def test_copies_in_colour_see_a_unit_moved_that_the_grey_level_hides(
    figure_bgr: tuple[int, int, int], colour_moved: bool, grey_moved: bool
) -> None:
    rng = np.random.default_rng(3)
    before = np.clip(rng.normal(0.0, 2.0, (360, 640, 3)) + DARK_MAT, 0, 255).astype(np.uint8)
    after = before.copy()
    for x, y, w, h in FIGURES:
        after[y : y + h, x : x + w] = figure_bgr
    watch = SettleWatch(0.6, pixel_delta=12, fraction=0.0003, min_region_px=3)
    assert watch.differs(thumbnail(after, 320, colour=True), thumbnail(before, 320, colour=True)) is colour_moved
    assert watch.differs(thumbnail(after, 320), thumbnail(before, 320)) is grey_moved
