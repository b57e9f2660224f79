"""chroma_contrast: how far each pixel's colour is from the mat's, whatever the light."""

from __future__ import annotations

import numpy as np
import pytest

from vision.colour import chroma_contrast

MAT = (60.0, 120.0, 150.0)  # BGR, a mud-and-moss mat
GAIN = 400.0


def chroma(bgr: tuple[float, float, float]) -> np.ndarray:
    c = np.asarray(bgr) + 1.0
    return c / c.sum()


def patch_image(patch_bgr: tuple[float, float, float], rng: np.random.Generator) -> np.ndarray:
    """(120, 160, 3) uint8: the mat with a 40 x 40 px patch in the middle, noise of 1 grey level."""
    img = np.empty((120, 160, 3), np.float64)
    img[:] = MAT
    img[40:80, 60:100] = patch_bgr
    img += rng.normal(0, 1.0, img.shape)
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        # a grey base of the mat's grey level: far in colour
        ("grey", GAIN * float(np.linalg.norm(chroma((122.0, 122.0, 122.0)) - chroma(MAT)))),
        # the mat in a shadow, or in brighter light: the same colour
        ("shadow", 0.0),
        ("lit", 0.0),
    ],
)
def test_a_patch_stands_out_by_its_colour_alone(patch: str, expected: float) -> None:
    colours = {"grey": (122.0, 122.0, 122.0), "shadow": tuple(0.6 * c for c in MAT), "lit": tuple(1.4 * c for c in MAT)}
    image = patch_image(colours[patch], np.random.default_rng(3))
    out = chroma_contrast(image, None, GAIN, 0.0)
    assert out is not None
    assert out.shape == image.shape[:2]
    assert out.dtype == np.uint8
    # within 4 levels: the offset that keeps black finite pulls a dark pixel slightly towards grey
    assert np.median(out[50:70, 70:90]) == pytest.approx(expected, abs=4.0)
    assert np.median(out[:30, :50]) <= 2


def test_the_mat_is_sampled_only_where_not_ignored() -> None:
    # most of the image is a marker-like grey block: ignored, it must not be taken for the mat
    image = patch_image((122.0, 122.0, 122.0), np.random.default_rng(4))
    image[:, :100] = 122
    ignore = np.zeros(image.shape[:2], np.uint8)
    ignore[:, :100] = 255
    out = chroma_contrast(image, ignore, GAIN, 0.0)
    assert out is not None
    assert np.median(out[:, 120:]) <= 2
    assert np.median(out[:, :100]) > 50


@pytest.mark.parametrize("case", ["grey image", "all ignored"])
def test_no_colour_contrast_without_colour_or_mat(case: str) -> None:
    image = patch_image((122.0, 122.0, 122.0), np.random.default_rng(5))
    if case == "grey image":
        assert chroma_contrast(image[..., 1].copy(), None, GAIN, 0.7) is None
    else:
        assert chroma_contrast(image, np.full(image.shape[:2], 255, np.uint8), GAIN, 0.7) is None
