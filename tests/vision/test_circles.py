"""Small geometry verbs of vision.circles: solid discs pushed apart."""

from __future__ import annotations

import numpy as np
import pytest

from vision.circles import pushed_apart


@pytest.mark.parametrize(
    ("centre", "fixed", "want"),
    [
        # apart already: unmoved
        ((0.0, 0.0), [(30.0, 0.0)], (0.0, 0.0)),
        # overlapping one by 4: moved 4 straight away from it
        ((0.0, 0.0), [(21.0, 0.0)], (-4.0, 0.0)),
        # between two that squeeze it from either side alike: held in the middle
        ((0.0, 0.0), [(24.0, 0.0), (-24.0, 0.0)], (0.0, 0.0)),
        # in a corner of two: out along the bisector until it touches both, 25 from each
        ((0.0, 0.0), [(20.0, 0.0), (0.0, 20.0)], (-(850**0.5 - 20) / 2, -(850**0.5 - 20) / 2)),
    ],
)
def test_a_disc_is_pushed_out_of_the_fixed_ones_it_overlaps(
    centre: tuple[float, float], fixed: list[tuple[float, float]], want: tuple[float, float]
) -> None:
    moved = pushed_apart(np.array([centre]), np.array([12.5]), np.array(fixed), np.full(len(fixed), 12.5), steps=200)
    assert np.allclose(moved[0], want, atol=0.05)
