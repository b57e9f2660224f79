"""Seeds: OpenCV's HoughCircles quirks fixed at the edge, size bands, reduction factors, seeds on drawn bases."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from tests.vision import vision_scenes as vs
from tests.vision.hand_rules import hand_rule_settings
from vision.seeds import (
    SeedLevels,
    Seeds,
    _edge_normals,
    _median_grey,
    cell_index,
    circles_from_hough,
    find_seeds,
    hough_seeds,
    reduction_factor,
    size_bands,
    vote_seeds,
)

SETTINGS = hand_rule_settings()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, np.zeros((0, 3))),
        (np.zeros((1, 0, 3), np.float32), np.zeros((0, 3))),
        (np.array([[[10, 20, 5]]], np.float32), np.array([[10, 20, 5]])),
        # a zero or non-finite radius is no circle
        (np.array([[[10, 20, 0], [30, 40, 6]]], np.float32), np.array([[30, 40, 6]])),
        (np.array([[[np.nan, 20, 5], [30, 40, np.inf]]], np.float32), np.zeros((0, 3))),
        # with the vote count as a fourth column
        (np.array([[[10, 20, 5, 99]]], np.float32), np.array([[10, 20, 5]])),
    ],
)
def test_hough_output_becomes_a_plain_array(raw: np.ndarray | None, expected: np.ndarray) -> None:
    out = circles_from_hough(raw)
    assert out.shape == expected.shape
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, expected)


@pytest.mark.parametrize(
    ("sizes", "ratio", "bands"),
    [
        ((25.0, 27.0, 28.5, 32.0, 40.0, 50.0), 1.3, [(25.0, 32.0), (40.0, 50.0)]),
        ((32.0, 25.0, 25.0), 1.3, [(25.0, 32.0)]),
        ((25.0, 40.0, 100.0), 1.1, [(25.0, 25.0), (40.0, 40.0), (100.0, 100.0)]),
        ((25.0, 100.0), 10.0, [(25.0, 100.0)]),
    ],
)
def test_size_bands(sizes: tuple[float, ...], ratio: float, bands: list[tuple[float, float]]) -> None:
    assert size_bands(sizes, ratio) == bands


@pytest.mark.parametrize(
    ("px_per_mm", "target", "factor"), [(4.0, 1.0, 4), (2.0, 1.28, 2), (0.9, 1.28, 1), (3.0, 1.0, 3), (1.4, 1.0, 1)]
)
def test_reduction_factor_is_whole_and_never_enlarges(px_per_mm: float, target: float, factor: int) -> None:
    assert reduction_factor(px_per_mm, target) == factor


def test_blank_image_gives_no_seeds() -> None:
    # HoughCircles answers None here: that must come out as zero seeds, not an exception
    seeds = find_seeds(np.full((300, 400), 128, np.uint8), 2.0, SETTINGS)
    assert len(seeds) == 0
    assert seeds.center_px.shape == (0, 2)


def textured_scene(px_per_mm: float, count: int, seed: int) -> tuple[NDArray[np.uint8], vs.Scene]:
    """A 250 x 350 mm drawn scene of ``count`` bases on a textured mat: its grey image and the scene."""
    rng = np.random.default_rng(seed)
    shape = (int(250 * px_per_mm), int(350 * px_per_mm))
    scene = vs.draw_scene(shape, px_per_mm, vs.random_layout(rng, shape, px_per_mm, count), rng, vs.TEXTURED)
    return np.asarray(cv2.cvtColor(scene.image_bgr, cv2.COLOR_BGR2GRAY), dtype=np.uint8), scene


def distances(truth_px: NDArray[np.float64], found_px: NDArray[np.float64]) -> NDArray[np.float64]:
    """(T, F) distances from each true centre (T, 2) to each found one (F, 2)."""
    return np.asarray(np.hypot(*(truth_px[:, None, :] - found_px[None, :, :]).transpose(2, 0, 1)))


@pytest.mark.parametrize("px_per_mm", [1.0, 2.0, 4.0])
def test_every_drawn_base_gets_a_seed_near_it(px_per_mm: float) -> None:
    grey, scene = textured_scene(px_per_mm, count=10, seed=11)
    seeds = find_seeds(grey, px_per_mm, SETTINGS)
    dist = distances(scene.centers_px, seeds.center_px)
    radius = scene.diameters_mm / 2 * px_per_mm
    # a seed needs only to land within a few millimetres (or a tenth of a large base's radius)
    assert np.all(dist.min(axis=1) <= np.maximum(3.0 * px_per_mm, 0.1 * radius))
    # the rim lies in the radius range the search around the nearest seed covers
    band = seeds.band_px[dist.argmin(axis=1)]
    slack = SETTINGS.rim.seed_search_mm * px_per_mm
    assert np.all((band[:, 0] - slack <= radius) & (radius <= band[:, 1] + slack))


def test_seeds_in_ignored_pixels_are_dropped() -> None:
    rng = np.random.default_rng(3)
    shape = (300, 400)
    bases = [vs.Placed((100.3, 150.2), 32.0), vs.Placed((300.1, 150.4), 32.0)]
    scene = vs.draw_scene(shape, 2.0, bases, rng)
    grey = cv2.cvtColor(scene.image_bgr, cv2.COLOR_BGR2GRAY)
    ignore = np.zeros(shape, np.uint8)
    ignore[:, 200:] = 255
    seeds = find_seeds(grey, 2.0, SETTINGS, ignore)
    assert len(seeds) > 0
    assert np.all(seeds.center_px[:, 0] < 200)


@pytest.mark.parametrize("px_per_mm", [1.0, 4.0])
def test_searches_split_by_level_give_what_one_call_gives(px_per_mm: float) -> None:
    # find_seeds runs each search once per level, on threads: in band order, the parts are the whole
    grey, _scene = textured_scene(px_per_mm, count=10, seed=5)
    ignore = np.zeros(grey.shape, np.uint8)
    ignore[:40, :60] = 255
    levels = SeedLevels(grey, px_per_mm, SETTINGS, ignore)
    extras = sorted({levels.extra(small) for small, _large in levels.bands_mm})
    assert len(extras) > 1
    for search in (vote_seeds, hough_seeds):
        whole = search(grey, px_per_mm, SETTINGS, ignore, levels)
        parts = Seeds.concatenate([search(grey, px_per_mm, SETTINGS, ignore, levels, (e,)) for e in extras])
        for name in ("center_px", "radius_px", "band_px", "reduction"):
            np.testing.assert_array_equal(getattr(parts, name), getattr(whole, name))


@pytest.mark.parametrize(("hough", "more_than_voted"), [(False, False), (True, True)])
def test_hough_circles_add_seeds_to_the_voted_ones_only_where_asked(hough: bool, more_than_voted: bool) -> None:
    grey, _scene = textured_scene(2.0, count=10, seed=9)
    settings = SETTINGS.replaced({"seeds.hough_circles": hough})
    seeds = find_seeds(grey, 2.0, settings)
    voted = vote_seeds(grey, 2.0, settings)
    np.testing.assert_array_equal(seeds.center_px[: len(voted)], voted.center_px)
    assert (len(seeds) > len(voted)) == more_than_voted


@pytest.mark.parametrize(
    ("px_per_mm", "cell_mm"),
    [(1.0, 0.5), (1.0, 2.0), (2.0, 1.0), (2.0, 2.0), (2.0, 3.0)],
)
def test_vote_seeds_land_within_a_cell(px_per_mm: float, cell_mm: float) -> None:
    settings = SETTINGS.replaced({"seeds.vote_cell_mm": cell_mm})
    grey, scene = textured_scene(px_per_mm, count=8, seed=17)
    seeds = vote_seeds(grey, px_per_mm, settings)
    dist = distances(scene.centers_px, seeds.center_px)
    # the peak is placed within its cell, so a seed lies within about a cell (and the blur) of the centre
    assert np.all(dist.min(axis=1) <= max(cell_mm, 1.5) * px_per_mm)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_edge_normals_match_sobel(seed: int) -> None:
    rng = np.random.default_rng(seed)
    smooth = cv2.GaussianBlur((rng.random((60, 80)) * 255).astype(np.uint8), (0, 0), 2.0)
    edges = np.asarray(cv2.Canny(smooth, 5, 10), np.uint8)
    xs, ys, ux, uy = _edge_normals(smooth, edges)
    assert len(xs) > 0
    col, row = xs.astype(np.intp), ys.astype(np.intp)
    assert np.all((col > 0) & (col < 79) & (row > 0) & (row < 59))
    gx = cv2.Sobel(smooth, cv2.CV_64F, 1, 0, ksize=3)[row, col]
    gy = cv2.Sobel(smooth, cv2.CV_64F, 0, 1, ksize=3)[row, col]
    norm = np.hypot(gx, gy)
    strong = norm > 1.0
    np.testing.assert_allclose(ux[strong], (gx / norm)[strong], atol=1e-5)
    np.testing.assert_allclose(uy[strong], (gy / norm)[strong], atol=1e-5)


def test_edge_normals_of_an_empty_edge_map() -> None:
    out = _edge_normals(np.zeros((10, 10), np.uint8), np.zeros((10, 10), np.uint8))
    assert all(len(a) == 0 for a in out)


@pytest.mark.parametrize(
    ("x_px", "y_px", "cell", "grid", "expected"),
    [
        (0.0, 0.0, 3, (598, 897), 0),
        (4.5, 7.0, 3, (598, 897), 2 * 897 + 1),
        # a grid too large for 32-bit indices
        (4.5, 70000.0, 3, (60000, 60000), 23333 * 60000 + 1),
        # just inside the last row and column: in float32, y / 3 rounds up to 598.0, one row past the grid
        (
            float(np.nextafter(np.float32(2691), np.float32(0))),
            float(np.nextafter(np.float32(1794), np.float32(0))),
            3,
            (598, 897),
            597 * 897 + 896,
        ),
    ],
)
def test_votes_land_in_the_accumulator(
    x_px: float, y_px: float, cell: int, grid: tuple[int, int], expected: int
) -> None:
    index = cell_index(np.array([x_px], np.float32), np.array([y_px], np.float32), cell, grid)
    assert index.tolist() == [expected]


@pytest.mark.parametrize("size", [1, 2, 7, 1000, 1001])
def test_median_grey_is_numpys_median(size: int) -> None:
    rng = np.random.default_rng(size)
    for low, high in ((0, 256), (100, 103), (250, 256)):
        sample = rng.integers(low, high, size).astype(np.uint8)
        assert _median_grey(sample) == np.uint8(np.median(sample))
