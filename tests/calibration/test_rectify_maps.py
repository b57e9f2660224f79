"""The rectify maps, interpolated from a coarse grid, against the exact mapping point by point."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.settings import CalibrationSettings
from calibration.spec import TableSpec
from calibration.table import calibrate_table, rectified_to_table
from tests.calibration.conftest import camera_of, table_frame


@pytest.mark.parametrize("px_per_mm", [0.7, 1.0, 1.8])
def test_interpolated_maps_match_the_exact_mapping(
    spec: TableSpec, settings: CalibrationSettings, px_per_mm: float
) -> None:
    image, view = table_frame(spec)
    cal = calibrate_table(image, spec, camera_of(view), settings=settings)
    map_x, map_y = cal.rectify_maps(px_per_mm)
    assert map_x.shape == map_y.shape == cal.rectified_size(px_per_mm)[::-1]
    rng = np.random.default_rng(7)
    height, width = map_x.shape
    cols = rng.integers(0, width, 3000)
    rows = rng.integers(0, height, 3000)
    # include the far edges, where the last knots lie beyond the image
    cols[:2], rows[:2] = width - 1, height - 1
    exact = cal.table_to_image(rectified_to_table(np.column_stack([cols, rows]).astype(np.float64), px_per_mm))
    got = np.column_stack([map_x[rows, cols], map_y[rows, cols]])
    assert np.max(np.abs(got - exact)) < 0.01


@pytest.mark.parametrize(
    ("window_px", "ok"),
    [
        ((0, 0, 40, 30), True),
        ((100, 50, 333, 211), True),
        ((0, 0, 0, 10), False),
        ((-1, 0, 10, 10), False),
        ((10, 10, 5, 20), False),
        ((0, 0, 10_000, 10), False),
    ],
)
def test_a_window_of_the_view_is_the_same_pixels_as_the_whole_views(
    spec: TableSpec, settings: CalibrationSettings, window_px: tuple[int, int, int, int], ok: bool
) -> None:
    image, view = table_frame(spec)
    cal = calibrate_table(image, spec, camera_of(view), settings=settings)
    whole = cal.rectify(image, 0.5)
    if not ok:
        with pytest.raises(ValueError, match="not inside"):
            cal.rectify(image, 0.5, window_px)
        return
    u0, v0, u1, v1 = window_px
    part = cal.rectify(image, 0.5, window_px)
    assert part.shape == whole[v0:v1, u0:u1].shape
    assert np.array_equal(part, whole[v0:v1, u0:u1])
