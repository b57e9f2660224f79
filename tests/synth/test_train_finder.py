"""The maps the finder is taught (no PyTorch needed): where a base's centre, offset and size are taught."""

from __future__ import annotations

import math

import numpy as np
import pytest

from synth.train_finder import targets
from vision.finder import DIAMETER_UNIT_MM, STRIDE

SIZE_PX = 64  # 16 x 16 cells


def _cell_centre_px(ix: int, iy: int) -> tuple[float, float]:
    return ((ix + 0.5) * STRIDE - 0.5, (iy + 0.5) * STRIDE - 0.5)


@pytest.mark.parametrize(
    ("cell", "reg_reach", "want_cells"),
    [
        # the centre's cell alone
        ((5, 7), 0, 1),
        # the 3 x 3 cells about it
        ((5, 7), 1, 9),
        # at the crop's corner, the cells inside it
        ((0, 0), 1, 4),
        ((15, 0), 2, 9),
    ],
)
def test_the_offset_and_size_are_taught_about_the_centre_and_point_at_it(
    cell: tuple[int, int], reg_reach: int, want_cells: int
) -> None:
    u, v = _cell_centre_px(*cell)
    u, v = u + 0.75, v - 1.0  # off the cell's centre by (0.1875, -0.25) cells
    heat, weight, reg, has = targets(np.array([[u, v]]), np.array([28.5]), np.array([1.0]), SIZE_PX, reg_reach)
    assert int(has.sum()) == want_cells
    assert heat[cell[1], cell[0]] == 1.0 and int((heat >= 0.999).sum()) == 1
    assert np.all(weight == 1.0)
    iy, ix = np.nonzero(has)
    # from every taught cell, its offset leads to the same centre, and the size is the base's
    centre_cells = np.stack([ix + reg[0, iy, ix], iy + reg[1, iy, ix]], axis=1)
    assert centre_cells == pytest.approx(np.tile([cell[0] + 0.1875, cell[1] - 0.25], (want_cells, 1)), abs=1e-5)
    assert reg[2, iy, ix] == pytest.approx(math.log(28.5 / DIAMETER_UNIT_MM), abs=1e-6)


def test_a_base_hardly_in_view_is_taught_as_neither_base_nor_mat() -> None:
    u, v = _cell_centre_px(8, 8)
    heat, weight, _reg, has = targets(np.array([[u, v]]), np.array([32.0]), np.array([0.3]), SIZE_PX, 1)
    assert heat.max() == 0.0 and has.sum() == 0.0
    # its footprint is left out of the loss, the mat beyond it is not
    assert weight[8, 8] == 0.0 and weight[0, 0] == 1.0
