"""BaseDetections: shapes, read-only arrays, selection by mask or indices, the empty value."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from vision import BaseDetections, VisionError

# Every field of one value per base (all but the centres and the doubts along a line), as the container declares
# them.
FIELDS = tuple(f.name for f in dataclasses.fields(BaseDetections) if f.name not in ("center_px", "model_doubt_mm"))


def make(n: int, seed: int = 0) -> BaseDetections:
    rng = np.random.default_rng(seed)
    return BaseDetections(
        rng.uniform(0, 100, (n, 2)), *(rng.uniform(0, 1, n) for _ in FIELDS), model_doubt_mm=rng.uniform(-1, 1, (n, 2))
    )


def test_empty_has_every_field_with_zero_rows() -> None:
    dets = BaseDetections.empty()
    assert len(dets) == 0
    assert dets.center_px.shape == (0, 2)
    for name in FIELDS:
        assert getattr(dets, name).shape == (0,)
    assert dets.model_doubt_mm.shape == (0, 2)


@pytest.mark.parametrize("n", [0, 3])
def test_no_doubt_given_is_none_along_any_line(n: int) -> None:
    dets = BaseDetections(np.zeros((n, 2)), *(np.ones(n) for _ in FIELDS))
    np.testing.assert_array_equal(dets.model_doubt_mm, np.zeros((n, 2)))


def test_a_doubt_of_the_wrong_shape_is_a_named_error() -> None:
    with pytest.raises(VisionError, match="model_doubt_mm"):
        BaseDetections(np.zeros((3, 2)), *(np.ones(3) for _ in FIELDS), model_doubt_mm=np.zeros(3))


@pytest.mark.parametrize("n", [1, 5])
def test_arrays_are_read_only_copies(n: int) -> None:
    centers = np.zeros((n, 2))
    dets = BaseDetections(centers, *(np.ones(n) for _ in FIELDS))
    centers[:] = 7.0  # the caller's array changes, the detections do not
    assert np.all(dets.center_px == 0.0)
    for name in ("center_px", *FIELDS):
        with pytest.raises(ValueError):
            getattr(dets, name)[0] = 1.0


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (np.array([True, False, True, False, True]), [0, 2, 4]),
        (np.array([False] * 5), []),
        (np.array([3, 1]), [3, 1]),
        (slice(1, 3), [1, 2]),
    ],
)
def test_selection_keeps_rows_together(index: np.ndarray | slice, expected: list[int]) -> None:
    dets = make(5)
    picked = dets[index]
    assert len(picked) == len(expected)
    np.testing.assert_array_equal(picked.center_px, dets.center_px[expected].reshape(-1, 2))
    for name in (*FIELDS, "model_doubt_mm"):
        np.testing.assert_array_equal(getattr(picked, name), getattr(dets, name)[expected])


@pytest.mark.parametrize(
    ("centers", "radius_len"),
    [
        (np.zeros((3, 3)), 3),  # centres need two columns
        (np.zeros(3), 3),  # and two dimensions
        (np.zeros((3, 2)), 2),  # every per-base array has N entries
    ],
)
def test_wrong_shapes_are_named_errors(centers: np.ndarray, radius_len: int) -> None:
    others = [np.zeros(3) for _ in FIELDS]
    others[0] = np.zeros(radius_len)
    with pytest.raises(VisionError, match="shape"):
        BaseDetections(centers, *others)


def test_boolean_mask_of_wrong_length_is_refused() -> None:
    with pytest.raises(VisionError, match="boolean selection"):
        make(4)[np.array([True, False])]


def test_concatenate_keeps_order() -> None:
    a, b = make(2, seed=1), make(3, seed=2)
    both = BaseDetections.concatenate([a, b])
    assert len(both) == 5
    np.testing.assert_array_equal(both.center_px, np.vstack([a.center_px, b.center_px]))
    assert len(BaseDetections.concatenate([])) == 0


@pytest.mark.parametrize(("n", "offset"), [(0, (3.0, 4.0)), (3, (0.0, 0.0)), (4, (-10.5, 250.25))])
def test_translated_moves_the_centres_only(n: int, offset: tuple[float, float]) -> None:
    dets = make(n, seed=n)
    moved = dets.translated(offset)
    assert np.array_equal(moved.center_px, dets.center_px + np.array(offset))
    for f in dataclasses.fields(BaseDetections):
        if f.name != "center_px":
            assert np.array_equal(getattr(moved, f.name), getattr(dets, f.name)), f.name
    assert not moved.center_px.flags.writeable
