"""Ray sampling and sub-pixel edges: exact on images whose answer is known in closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray

import vision.rim as rim


def test_derivative_kernel_gives_one_on_a_unit_ramp() -> None:
    for sigma in (0.0, 0.5, 1.0, 2.5):
        kernel, half = rim.derivative_kernel(sigma)
        assert len(kernel) == 2 * half + 1
        ramp = np.arange(len(kernel), dtype=np.float64)
        assert float(kernel @ ramp) == pytest.approx(1.0)
        assert float(kernel.sum()) == pytest.approx(0.0, abs=1e-7)


def test_sampling_follows_a_linear_image() -> None:
    # grey = x + y is reproduced by bilinear sampling up to the rounding of 8-bit output
    ys, xs = np.mgrid[0:200, 0:120]
    grey = (xs + ys).astype(np.uint8)
    center = np.array([[60.3, 90.7]])
    offsets = np.linspace(-5, 5, 11)
    dirs = rim.ray_directions(16)
    got = rim.sample_grey(grey, center, np.array([30.0]), offsets, dirs)
    r = 30.0 + offsets
    want = (center[0, 0] + r[None, :] * dirs[:, 0:1]) + (center[0, 1] + r[None, :] * dirs[:, 1:2])
    np.testing.assert_allclose(got[0], want, atol=0.51)


def test_long_rays_are_split_over_remap_rows_without_change(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    grey = rng.integers(0, 256, (300, 300), dtype=np.uint8)
    center = rng.uniform(100, 200, (3, 2))
    args = (grey, center, np.full(3, 40.0), np.linspace(-20, 20, 301), rim.ray_directions(64))
    whole = rim.sample_grey(*args)
    monkeypatch.setattr(rim, "_MAX_REMAP_COLS", 1000)
    np.testing.assert_array_equal(rim.sample_grey(*args), whole)


@pytest.mark.parametrize("edge_px", [30.0, 30.3, 30.5, 30.77])
@pytest.mark.parametrize("polarity", [1.0, -1.0])
def test_edges_are_found_to_a_fraction_of_a_pixel(edge_px: float, polarity: float) -> None:
    # a blurred step disc: dark inside radius edge_px, bright outside (or the reverse)
    size = 101
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float64)
    cx = cy = 50.0
    r = np.hypot(xs - cx, ys - cy)
    step = 0.5 * (1 + np.vectorize(math.erf)((r - edge_px) / (1.2 * math.sqrt(2))))
    image = 60 + 120 * (step if polarity > 0 else 1 - step)
    grey = np.round(image).astype(np.uint8)
    dirs = rim.ray_directions(64)
    center = np.array([[cx, cy]])
    deriv = rim.ray_derivative(grey, center, np.array([30.0]), 4.0, dirs, 0.5, 0.5)
    peaks = rim.find_peaks(deriv, np.array([polarity]), 0.5, 3.0, 0.4)
    edges = rim.pick_edges(peaks, np.array([30.0]), "nearest")
    assert edges.found.all()
    assert np.median(edges.radius_px) == pytest.approx(edge_px, abs=0.05)
    # the wrong polarity finds no edge there
    wrong = rim.pick_edges(rim.find_peaks(deriv, np.array([-polarity]), 0.5, 3.0, 0.4), np.array([30.0]), "nearest")
    assert not wrong.found.any()


@pytest.mark.parametrize(
    "polarity",
    [
        np.ones(4),
        -np.ones(4),
        np.array([1.0, -1.0, 1.0, -1.0]),
        np.array([1.0, 0.0, -1.0, 1.0]),
    ],
    ids=["all light", "all dark", "mixed", "mixed with either"],
)
def test_peaks_of_one_polarity_for_all_are_those_of_each_row_on_its_own(polarity: NDArray[np.float64]) -> None:
    rng = np.random.default_rng(3)
    value = rng.normal(0.0, 20.0, (4, 16, 40)).astype(np.float32)
    deriv = rim.RayDerivative(value.copy(), np.linspace(-10.0, 10.0, 40))
    peaks = rim.find_peaks(deriv, polarity, 0.5, 5.0, 0.3)
    np.testing.assert_array_equal(deriv.value, value)
    for row, sign in enumerate(polarity):
        alone = rim.RayDerivative(value[row : row + 1].copy(), deriv.offset_px)
        one = rim.find_peaks(alone, np.array([sign]), 0.5, 5.0, 0.3)
        np.testing.assert_array_equal(peaks.good[row], one.good[0])
        np.testing.assert_array_equal(peaks.offset_px[row], one.offset_px[0])
        # the strength is the derivative signed by the polarity (its magnitude where either will do)
        want = np.abs(value[row, :, 1:-1]) if sign == 0 else sign * value[row, :, 1:-1].astype(np.float64)
        np.testing.assert_array_equal(peaks.strength[row], want)
