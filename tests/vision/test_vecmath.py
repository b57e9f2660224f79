"""vecmath: the cheaper elementwise arithmetic agrees with numpy's."""

from __future__ import annotations

import numpy as np
import pytest

from vision.vecmath import hypot


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hypot_agrees_with_numpy(dtype: type) -> None:
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(40, 30)) * 1e3).astype(dtype)
    y = (rng.normal(size=(1, 30)) * 1e3).astype(dtype)
    out = hypot(x, y)
    assert out.dtype == dtype
    assert out.shape == (40, 30)
    np.testing.assert_allclose(out, np.hypot(x, y), rtol=4 * np.finfo(dtype).eps)


def test_hypot_of_zeros_is_zero() -> None:
    assert np.all(hypot(np.zeros(5), np.zeros(5)) == 0.0)
