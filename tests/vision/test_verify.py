"""The learned verifier: what it reads of a circle, its arithmetic, its file, and fitting one."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from synth.train_verifier import fit
from vision import SettingsError
from vision.detections import BaseDetections
from vision.verify import FEATURE_COUNT, RING_FRACTIONS, Verifier, features, load_verifier, polar_samples

MAT_BGR = (70, 110, 80)


def _circles(center_px: list[tuple[float, float]], radius_px: float) -> BaseDetections:
    n = len(center_px)
    ones = np.ones(n)
    return BaseDetections(
        np.asarray(center_px, np.float64), ones * radius_px, ones * 32.0, ones * 0.8, ones, ones * 0.2, *([ones] * 4)
    )


def _table_with_disc(disc_bgr: tuple[int, int, int] | None) -> np.ndarray:
    image = np.zeros((120, 200, 3), np.uint8)
    image[:] = MAT_BGR
    if disc_bgr is not None:
        cv2.circle(image, (100, 60), 24, disc_bgr, -1, lineType=cv2.LINE_AA)
    return image


@pytest.mark.parametrize(
    ("disc_bgr", "inside_lighter", "edge_share"),
    [
        # a sand disc on the green mat: lighter inside, a clear edge all round
        ((120, 160, 190), True, 1.0),
        # a black one: darker inside, the edge as clear
        ((20, 20, 20), False, 1.0),
        # the bare mat: nothing inside, no edge
        (None, None, 0.0),
    ],
)
def test_features_read_the_inside_against_the_mat_and_the_edge_round_the_rim(
    disc_bgr: tuple[int, int, int] | None, inside_lighter: bool | None, edge_share: float
) -> None:
    got = features(_table_with_disc(disc_bgr), _circles([(100.0, 60.0)], 24.0), 1.5)
    assert got.shape == (1, FEATURE_COUNT)
    middle = got[0, 0]  # lightness at the centre, less the mat's
    if inside_lighter is None:
        assert abs(middle) < 1.0
    else:
        assert (middle > 20) == inside_lighter and (middle < -20) == (not inside_lighter)
    # the last nine features: the edge's mean, its clear share, ... (see features)
    assert got[0, FEATURE_COUNT - 8] == pytest.approx(edge_share)


def test_features_of_no_circles_and_of_circles_off_the_image() -> None:
    image = _table_with_disc(None)
    assert features(image, BaseDetections.empty(), 1.5).shape == (0, FEATURE_COUNT)
    off = features(image, _circles([(-50.0, -50.0)], 24.0), 1.5)
    assert np.all(np.isfinite(off))


@pytest.mark.parametrize(
    ("center_px", "radius_px"),
    [
        ([(100.0, 60.0)], 24.0),
        ([(5.0, 3.0), (600.0, 300.0)], 40.0),  # over the image's corner, and beside a tile's edge
        ([(-50.0, -50.0), (700.0, 500.0)], 30.0),  # off the image
        ([(128.0, 128.0), (383.5, 255.5), (200.0, 400.0)], 17.5),
    ],
)
def test_samples_read_the_lab_of_the_whole_image_though_only_patches_about_circles_are_converted(
    center_px: list[tuple[float, float]], radius_px: float
) -> None:
    rng = np.random.default_rng(7)
    image = rng.integers(0, 256, (520, 690, 3), dtype=np.uint8)
    circles = _circles(center_px, radius_px)
    whole = np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2LAB), np.float32)
    want = polar_samples(whole, circles.center_px, circles.radius_px)
    got = features(image, circles, 1.5)
    assert got.shape == (len(center_px), FEATURE_COUNT)
    lightness = want[..., 0]
    mat = np.median(lightness[:, 12:, :].reshape(len(center_px), -1), axis=1)
    # the first features: each ring's mean lightness less the mat's
    np.testing.assert_array_equal(got[:, : len(RING_FRACTIONS)], lightness.mean(axis=2) - mat[:, None])


def test_a_fitted_verifier_tells_the_two_kinds_apart_and_survives_its_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    bases = rng.normal(1.0, 0.5, (200, FEATURE_COUNT)).astype(np.float32)
    others = rng.normal(-1.0, 0.5, (200, FEATURE_COUNT)).astype(np.float32)
    feats = np.concatenate([bases, others])
    labels = np.concatenate([np.ones(200), np.zeros(200)])
    verifier = fit(feats, labels, hidden=4, epochs=300, seed=1)
    p = verifier.probability(feats)
    assert np.mean(p[:200] >= 0.5) > 0.95 and np.mean(p[200:] < 0.5) > 0.95
    path = tmp_path / "verifier.npz"
    verifier.save(path)
    again = load_verifier(path)
    np.testing.assert_allclose(again.probability(feats), p, rtol=1e-5)


def test_a_file_that_is_no_verifier_is_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(SettingsError, match="not a verifier"):
        load_verifier(junk)
    small = Verifier(*(np.zeros(k, np.float32) for k in (3, 3)), np.zeros((3, 2), np.float32), np.zeros(2, np.float32),
                     np.zeros(2, np.float32), 0.0)  # fmt: skip
    other = tmp_path / "other.npz"
    small.save(other)
    with pytest.raises(SettingsError, match="features"):
        load_verifier(other)
