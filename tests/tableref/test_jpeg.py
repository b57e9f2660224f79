"""Frames as JPEG: scaled down, never up; a frame that cannot be encoded is a named error."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tableref.errors import JpegError
from tableref.jpeg import encode_jpeg


def test_jpeg_is_scaled_down_not_up() -> None:
    big = encode_jpeg(np.zeros((1080, 1920, 3), np.uint8), 1280, 80)
    small = encode_jpeg(np.zeros((100, 200, 3), np.uint8), 1280, 80)
    assert cv2.imdecode(np.frombuffer(big, np.uint8), cv2.IMREAD_COLOR).shape == (720, 1280, 3)
    assert cv2.imdecode(np.frombuffer(small, np.uint8), cv2.IMREAD_COLOR).shape == (100, 200, 3)


def test_a_frame_that_cannot_be_encoded_is_a_jpeg_error() -> None:
    with pytest.raises(JpegError, match="empty"):
        encode_jpeg(np.zeros((0, 0, 3), np.uint8), 1280, 80)
    with pytest.raises(JpegError, match="OpenCV"):
        encode_jpeg(np.zeros((4, 4, 7), np.uint8), 1280, 80)
