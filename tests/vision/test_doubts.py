"""Places doubted (vision/doubts.py): the finder's peaks that no base found explains, on maps made by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.detections import BaseDetections
from vision.doubts import Doubts, outside_bases, unexplained_peaks
from vision.errors import VisionError
from vision.finder import DIAMETER_UNIT_MM, FINDER_PX_PER_MM, STRIDE, FinderMaps

# maps read from a view at the finder's own scale: a cell's centre is at (k + 0.5) * STRIDE - 0.5 view pixels
SCALE = FINDER_PX_PER_MM
CELLS = (40, 60)


def _maps(peaks: list[tuple[int, int, float, float]]) -> FinderMaps:
    """Maps with a peak (column, row, probability, diameter mm) each, nothing elsewhere."""
    probability = np.zeros(CELLS, np.float32)
    log_diameter = np.zeros(CELLS, np.float32)
    for col, row, p, diameter_mm in peaks:
        probability[row, col] = p
        log_diameter[row, col] = math.log(diameter_mm / DIAMETER_UNIT_MM)
    return FinderMaps(probability, np.zeros((2, *CELLS), np.float32), log_diameter, SCALE)


def _at(col: int, row: int) -> tuple[float, float]:
    return ((col + 0.5) * STRIDE - 0.5, (row + 0.5) * STRIDE - 0.5)


def _bases(*circles: tuple[float, float, float]) -> BaseDetections:
    """Bases (x px, y px, radius px), the other fields plain."""
    n = len(circles)
    c = np.array([[x, y] for x, y, _ in circles], np.float64).reshape(-1, 2)
    r = np.array([radius for _, _, radius in circles], np.float64)
    ones = np.ones(n)
    return BaseDetections(c, r, 2 * r / SCALE, ones, ones, 0.1 * ones, 0.1 * ones, ones, 0.1 * ones, ones)


# one peak, where it stands against one base of radius 14 px at cell (10, 10)'s centre, and what is doubted
BASE = _bases((*_at(10, 10), 14.0))
CASES = [
    # peak (col, row, p, d mm), bar, doubted places (col, row)
    ("far from every base", (30, 20, 0.7, 28.0), 0.5, [(30, 20)]),
    ("inside the base found", (11, 10, 0.9, 28.0), 0.5, []),
    ("just outside the base", (14, 10, 0.7, 28.0), 0.5, [(14, 10)]),
    ("below the bar", (30, 20, 0.45, 28.0), 0.5, []),
    ("at the bar", (30, 20, 0.5, 28.0), 0.5, [(30, 20)]),
    ("no doubts asked", (30, 20, 0.9, 28.0), 0.0, []),
]


@pytest.mark.parametrize(("peak", "bar", "doubted"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_peak_is_doubted_where_no_base_explains_it(
    peak: tuple[int, int, float, float], bar: float, doubted: list[tuple[int, int]]
) -> None:
    found = unexplained_peaks(BASE, _maps([peak]), SCALE, bar)
    assert found.center_px.tolist() == [list(_at(c, r)) for c, r in doubted]
    if doubted:
        assert found.probability[0] == pytest.approx(peak[2])
        assert found.diameter_mm[0] == pytest.approx(peak[3], rel=1e-5)


def test_peaks_of_one_base_are_one_place_the_most_probable() -> None:
    # two peaks 8 px apart under a 28 mm base (half its diameter: 14 px), a third far away
    maps = _maps([(30, 20, 0.6, 28.0), (32, 20, 0.8, 28.0), (50, 5, 0.55, 25.0)])
    found = unexplained_peaks(BaseDetections.empty(), maps, SCALE, 0.5)
    assert found.center_px.tolist() == [list(_at(32, 20)), list(_at(50, 5))]
    assert found.probability.tolist() == pytest.approx([0.8, 0.55])


def test_a_peak_on_an_ignored_pixel_is_not_doubted() -> None:
    ignore = np.zeros((CELLS[0] * STRIDE, CELLS[1] * STRIDE), np.uint8)
    x, y = _at(30, 20)
    ignore[int(y) - 3 : int(y) + 4, int(x) - 3 : int(x) + 4] = 255
    maps = _maps([(30, 20, 0.9, 28.0), (50, 5, 0.9, 28.0)])
    found = unexplained_peaks(BaseDetections.empty(), maps, SCALE, 0.5, ignore)
    assert found.center_px.tolist() == [list(_at(50, 5))]


def test_places_inside_bases_found_later_are_left_out() -> None:
    doubts = Doubts(np.array([[10.0, 10.0], [100.0, 100.0]]), np.array([28.0, 32.0]), np.array([0.7, 0.6]))
    kept = outside_bases(doubts, _bases((12.0, 10.0, 14.0)))
    assert kept.center_px.tolist() == [[100.0, 100.0]]
    assert len(outside_bases(doubts, BaseDetections.empty())) == 2


def test_doubts_are_one_immutable_value() -> None:
    doubts = Doubts(np.array([[1.0, 2.0]]), np.array([25.0]), np.array([0.6]))
    moved = Doubts.concatenate([doubts, doubts.translated((10.0, -2.0))])
    assert moved.center_px.tolist() == [[1.0, 2.0], [11.0, 0.0]]
    assert len(Doubts.empty()) == 0 and len(Doubts.concatenate([])) == 0
    with pytest.raises(ValueError):
        doubts.center_px[0, 0] = 5.0
    with pytest.raises(VisionError, match="diameter_mm must have shape"):
        Doubts(np.zeros((2, 2)), np.zeros(3), np.zeros(2))
