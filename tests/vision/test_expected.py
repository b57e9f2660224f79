"""The bases a roster expects: which of the finder's peaks stand for the bases found too few times."""

from __future__ import annotations

import numpy as np
import pytest

from vision import ExpectedBases, VisionError
from vision.detections import BaseDetections
from vision.expected import at_last_places, expected_look, missing_counts
from vision.finder import STRIDE, FinderMaps

# a view of 400 x 200 mm at 1 px/mm, the finder's own scale: a peak in cell (row, col) stands at about
# (col * STRIDE + 1.5, row * STRIDE + 1.5) px
H_MM, W_MM = 200, 400


def _maps(peaks: list[tuple[int, int, float, float]]) -> FinderMaps:
    """Maps with a peak per (row, col, probability, diameter mm)."""
    h, w = H_MM // STRIDE, W_MM // STRIDE
    prob = np.zeros((h, w), np.float32)
    log_d = np.zeros((h, w), np.float32)
    for row, col, p, d in peaks:
        prob[row, col] = p
        log_d[row, col] = np.log(d / 32.0)
    return FinderMaps(prob, np.zeros((2, h, w), np.float32), log_d, 1.0)


def _cell_px(row: int, col: int) -> tuple[float, float]:
    return (col + 0.5) * STRIDE - 0.5, (row + 0.5) * STRIDE - 0.5


def _found(centres: list[tuple[float, float]], sizes: list[float]) -> BaseDetections:
    n = len(sizes)
    ones = np.ones(n)
    diameter = np.array(sizes, np.float64)
    return BaseDetections(
        np.array(centres, np.float64).reshape(-1, 2), diameter / 2, diameter, ones * 0.8, ones, ones * 0.2,
        *([ones] * 4),
    )  # fmt: skip


def _expected(rows: list[tuple[float, tuple[float, float], float]]) -> ExpectedBases:
    """One row per (diameter mm, last place px, reach px)."""
    return ExpectedBases(
        np.array([r[0] for r in rows], np.float64),
        np.array([r[1] for r in rows], np.float64).reshape(-1, 2),
        np.array([r[2] for r in rows], np.float64),
    )


A, B, C = (10, 10), (10, 40), (30, 80)  # cells


@pytest.mark.parametrize(
    ("peaks", "found", "expected", "taken"),
    [
        # one 32 mm base of two found: the 32 mm peak within reach stands for it, not the 40 mm one
        ([(*A, 0.8, 32.0), (*B, 0.9, 40.0)], [(300.0, 20.0)], [(32.0, (50.0, 50.0), 100.0)] * 2, [(A, 32.0)]),
        # the finder reads 29 mm: within 15 % of 32
        ([(*A, 0.8, 29.0)], [], [(32.0, (50.0, 50.0), 100.0)], [(A, 32.0)]),
        # beyond the missing model's reach: none
        ([(*C, 0.8, 32.0)], [], [(32.0, (50.0, 50.0), 100.0)], []),
        # reach not known (inf): anywhere
        ([(*C, 0.8, 32.0)], [], [(32.0, (50.0, 50.0), float("inf"))], [(C, 32.0)]),
        # one missing, two peaks: the more probable
        ([(*A, 0.6, 32.0), (*B, 0.7, 32.0)], [], [(32.0, (100.0, 50.0), 200.0)], [(B, 32.0)]),
        # a peak a base found explains is no missing base
        ([(*A, 0.8, 32.0)], [_cell_px(*A)], [(32.0, (50.0, 50.0), 100.0)] * 2, []),
        # nothing missing: nothing taken
        ([(*A, 0.8, 32.0)], [(300.0, 20.0)], [(32.0, (50.0, 50.0), 100.0)], []),
        # under the bar (0.3): none
        ([(*A, 0.2, 32.0)], [], [(32.0, (50.0, 50.0), 100.0)], []),
        # two sizes missing, each peak goes to its own
        (
            [(*A, 0.8, 25.0), (*B, 0.7, 40.0)],
            [],
            [(25.0, (50.0, 50.0), 300.0), (40.0, (50.0, 50.0), 300.0)],
            [(A, 25.0), (B, 40.0)],
        ),
    ],
)
def test_the_finders_peaks_stand_for_the_bases_found_too_few_times_within_their_reach(
    peaks: list[tuple[int, int, float, float]],
    found: list[tuple[float, float]],
    expected: list[tuple[float, tuple[float, float], float]],
    taken: list[tuple[tuple[int, int], float]],
) -> None:
    dets = _found(found, [32.0] * len(found))
    centre_px, size_mm, prob = expected_look(dets, _maps(peaks), _expected(expected), 1.0, 0.3, 0.15, None)
    got = sorted((tuple(np.round(c, 1)), s) for c, s in zip(centre_px, size_mm, strict=True))
    want = sorted((tuple(np.round(_cell_px(*cell), 1)), s) for cell, s in taken)
    assert got == want
    assert np.all(prob >= 0.3)


def test_a_peak_on_pixels_to_ignore_stands_for_nothing() -> None:
    ignore = np.zeros((H_MM, W_MM), np.uint8)
    ignore[30:50, 30:50] = 1  # over cell A's centre (41.5, 41.5)
    centre_px, _, _ = expected_look(
        _found([], []), _maps([(*A, 0.8, 32.0)]), _expected([(32.0, (50.0, 50.0), 100.0)]), 1.0, 0.3, 0.15, ignore
    )
    assert len(centre_px) == 0


@pytest.mark.parametrize(
    ("listed", "found", "want"),
    [
        ([32.0, 32.0, 25.0], [32.0], {32.0: 1, 25.0: 1}),
        ([32.0, 32.0], [32.0, 32.0, 32.0], {}),
        # a roster's 28.5 and the standard 28.5 a base snapped to are one size
        ([28.5, 28.5], [28.499999], {28.5: 1}),
    ],
)
def test_the_sizes_lacking_are_counted_per_size(
    listed: list[float], found: list[float], want: dict[float, int]
) -> None:
    rows = [(d, (0.0, 0.0), 10.0) for d in listed]
    assert missing_counts(_found([(0.0, 0.0)] * len(found), found), _expected(rows)) == want


def test_expected_bases_of_mismatched_shapes_are_refused() -> None:
    with pytest.raises(VisionError, match="expected bases"):
        ExpectedBases(np.array([32.0, 25.0]), np.zeros((1, 2)), np.ones(2))
    with pytest.raises(VisionError, match="positive"):
        ExpectedBases(np.array([0.0]), np.zeros((1, 2)), np.ones(1))
    with pytest.raises(VisionError, match="finite places"):
        ExpectedBases(np.array([32.0]), np.full((1, 2), np.nan), np.ones(1))


@pytest.mark.parametrize(
    ("found", "listed", "within_px", "at_place"),
    [
        # a 32 mm base 3 px from where a listed 32 mm model was last seen; one of 29 mm (within 15 %) too
        ([((103.0, 50.0), 32.0)], [(32.0, (100.0, 50.0), 100.0)], 4.0, [True]),
        ([((103.0, 50.0), 28.5)], [(32.0, (100.0, 50.0), 100.0)], 4.0, [True]),
        # farther off, of another size, or nothing listed near it
        ([((105.0, 50.0), 32.0)], [(32.0, (100.0, 50.0), 100.0)], 4.0, [False]),
        ([((100.0, 50.0), 40.0)], [(32.0, (100.0, 50.0), 100.0)], 4.0, [False]),
        ([((100.0, 50.0), 32.0), ((300.0, 50.0), 32.0)], [(32.0, (300.0, 52.0), 0.0)], 4.0, [False, True]),
        # the rule off
        ([((100.0, 50.0), 32.0)], [(32.0, (100.0, 50.0), 100.0)], 0.0, [False]),
    ],
)
def test_a_base_found_where_a_listed_model_of_its_size_was_last_seen(
    found: list[tuple[tuple[float, float], float]],
    listed: list[tuple[float, tuple[float, float], float]],
    within_px: float,
    at_place: list[bool],
) -> None:
    bases = _found([c for c, _ in found], [d for _, d in found])
    np.testing.assert_array_equal(at_last_places(bases, _expected(listed), within_px, 0.15), at_place)
