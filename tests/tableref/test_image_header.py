"""Picture sizes read from image headers, before anything is decoded, and the refusal of pictures too large."""

from __future__ import annotations

import struct

import cv2
import numpy as np
import pytest

from tableref.image_header import image_kind, image_size
from tableref.sources import SourceError, decode_image

# An odd size, so that width and height cannot be swapped unnoticed.
WIDTH, HEIGHT = 53, 37


def _encoded(suffix: str, *params: int) -> bytes:
    image = np.random.default_rng(1).integers(0, 255, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    return bytes(cv2.imencode(suffix, image, list(params))[1].tobytes())


def _tiff_be(width: int, height: int) -> bytes:
    """A big-endian TIFF header whose first directory gives the size (LONG width, SHORT height)."""
    entries = struct.pack(">HHII", 256, 4, 1, width) + struct.pack(">HHIHH", 257, 3, 1, height, 0)
    return b"MM\x00*" + struct.pack(">I", 8) + struct.pack(">H", 2) + entries + b"\x00" * 4


def _bigtiff_le(width: int, height: int) -> bytes:
    entries = struct.pack("<HHQQ", 256, 16, 1, width) + struct.pack("<HHQQ", 257, 4, 1, height)
    return b"II+\x00" + struct.pack("<HHQ", 8, 0, 16) + struct.pack("<Q", 2) + entries + b"\x00" * 8


def _webp_vp8x(width: int, height: int) -> bytes:
    canvas = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 30) + b"WEBPVP8X" + struct.pack("<I", 10) + b"\x00" * 4 + canvas


@pytest.mark.parametrize(
    ("data", "kind", "size"),
    [
        (_encoded(".jpg"), "JPEG", (WIDTH, HEIGHT)),
        (_encoded(".jpg", cv2.IMWRITE_JPEG_PROGRESSIVE, 1), "JPEG", (WIDTH, HEIGHT)),
        (_encoded(".png"), "PNG", (WIDTH, HEIGHT)),
        (_encoded(".bmp"), "BMP", (WIDTH, HEIGHT)),
        (_encoded(".tif"), "TIFF", (WIDTH, HEIGHT)),
        (_encoded(".webp", cv2.IMWRITE_WEBP_QUALITY, 80), "WebP", (WIDTH, HEIGHT)),
        (_encoded(".webp", cv2.IMWRITE_WEBP_QUALITY, 101), "WebP", (WIDTH, HEIGHT)),  # lossless
        (_tiff_be(60_000, 40_000), "TIFF", (60_000, 40_000)),
        (_bigtiff_le(70_000, 50_000), "TIFF", (70_000, 50_000)),
        (_webp_vp8x(16_000, 9_000), "WebP", (16_000, 9_000)),
        (_encoded(".png")[:20], "PNG", None),  # the header cut short
        (_tiff_be(60_000, 40_000)[:20], "TIFF", None),
        (b"GIF89a" + b"\x00" * 20, None, None),
    ],
)
def test_header_sizes(data: bytes, kind: str | None, size: tuple[int, int] | None) -> None:
    assert image_kind(data) == kind
    assert image_size(data) == size


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (_tiff_be(60_000, 60_000), "the image header says 60000 x 60000 pixels; expected at most 1000000 pixels"),
        (_webp_vp8x(2_000, 1_000), "the image header says 2000 x 1000 pixels"),
        (_encoded(".png")[:20], "the image header gives no picture size"),
        (b"GIF89a" + b"\x00" * 20, "not an image OpenCV can decode"),
    ],
)
def test_pictures_too_large_or_without_a_size_are_never_decoded(
    monkeypatch: pytest.MonkeyPatch, data: bytes, words: str
) -> None:
    def no_decode(*_: object) -> None:
        raise AssertionError("decoded before the size was checked")

    monkeypatch.setattr("tableref.sources.cv2.imdecode", no_decode)
    with pytest.raises(SourceError, match=words):
        decode_image(data, max_pixels=1_000_000)


def test_a_picture_within_the_limit_decodes() -> None:
    assert decode_image(_encoded(".png"), max_pixels=WIDTH * HEIGHT).shape == (HEIGHT, WIDTH, 3)
