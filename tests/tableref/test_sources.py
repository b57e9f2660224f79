"""Sources: a video's frame size checked before its frames are read; a damaged JPEG or AVI is one error, with nothing
of its decoder's own on stderr; how blocky a frame's compression left it, and when its top-down views are smoothed
for it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from tableref.review.recording import Recording
from tableref.sources import Capture, SourceError, blockiness, deblock_blur_px, decode_image


def _textured(seed: int) -> np.ndarray:
    """A 640 x 480 frame of a mottled mat with a few discs (a table seen from above, roughly)."""
    rng = np.random.default_rng(seed)
    mat = cv2.GaussianBlur(rng.normal(110, 25, (480, 640, 3)).astype(np.float32), (0, 0), 3)
    for _ in range(12):
        x, y = (int(v) for v in rng.integers(40, 440, 2))
        cv2.circle(mat, (x + 100, y), int(rng.integers(12, 30)), tuple(float(c) for c in rng.integers(20, 230, 3)), -1)
    return np.clip(mat + rng.normal(0, 2, mat.shape), 0, 255).astype(np.uint8)


def _jpeg(image: np.ndarray, quality: int) -> np.ndarray:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR), dtype=np.uint8)


@pytest.mark.parametrize(
    ("quality", "low", "high"),
    [
        (None, 0.9, 1.1),  # stored without loss: no step at the block edges
        (95, 1.0, 2.0),
        (60, 2.5, 20.0),
        (25, 2.5, 20.0),  # a phone's video
    ],
)
def test_blockiness_shows_a_coarse_compression(quality: int | None, low: float, high: float) -> None:
    frame = _textured(3)
    seen = blockiness(frame if quality is None else _jpeg(frame, quality))
    assert low <= seen <= high


def test_a_grey_frame_and_a_tiny_frame_are_read_too() -> None:
    frame = _jpeg(_textured(4), 25)
    assert blockiness(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)) > 1.5
    assert blockiness(frame[:10, :10]) == 1.0


@pytest.mark.parametrize(
    ("quality", "min_blockiness", "blur_px", "expected"),
    [
        (25, 2.0, 0.6, 0.6),
        (None, 2.0, 0.6, 0.0),  # a sharp frame is left as it is
        (25, 0.0, 0.6, 0.0),  # switched off
        (25, 2.0, 0.0, 0.0),
    ],
)
def test_only_a_blocky_frame_is_smoothed(
    quality: int | None, min_blockiness: float, blur_px: float, expected: float
) -> None:
    frame = _textured(5)
    frame = frame if quality is None else _jpeg(frame, quality)
    assert deblock_blur_px(frame, min_blockiness, blur_px) == expected


def _open_camera_reader(path: Path, max_pixels: int) -> int:
    return len(list(Capture(str(path), live=False, max_pixels=max_pixels).frames()))


def _open_review_reader(path: Path, max_pixels: int) -> int:
    return Recording(path, 1.0, max_pixels=max_pixels).count


@pytest.mark.parametrize("reader", [_open_camera_reader, _open_review_reader])
@pytest.mark.parametrize(("max_pixels", "refused"), [(64 * 48, False), (64 * 48 - 1, True)])
def test_a_video_whose_frames_are_too_large_is_refused_on_opening(
    tmp_path: Path, reader: Callable[[Path, int], int], max_pixels: int, refused: bool
) -> None:
    path = tmp_path / "small.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5, (64, 48))
    for _ in range(3):
        writer.write(np.full((48, 64, 3), 100, np.uint8))
    writer.release()
    if refused:
        with pytest.raises(SourceError, match="frames are 64 x 48 pixels; expected at most 3071 pixels"):
            reader(path, max_pixels)
    else:
        assert reader(path, max_pixels) == 3


def _jpeg_bytes() -> bytes:
    rng = np.random.default_rng(7)
    image = cv2.GaussianBlur(rng.integers(0, 255, (120, 160, 3), dtype=np.uint8), (7, 7), 0)
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return bytes(data.tobytes())


def _scrambled(data: bytes) -> bytes:
    out = bytearray(data)
    rng = np.random.default_rng(11)
    for at in rng.integers(len(out) // 3, len(out) - 16, 60):
        out[at] = int(rng.integers(0, 256))
    return bytes(out)


def _extraneous(data: bytes) -> bytes:
    # bytes between the scan's end and the end-of-image marker: libjpeg warns, the picture is whole
    return data[:-2] + b"\x00\x01\x02" + data[-2:]


@pytest.mark.parametrize(
    ("spoil", "damaged"),
    [
        (lambda d: d, False),
        (_extraneous, False),
        (_scrambled, True),
    ],
)
def test_a_damaged_jpeg_is_a_one_line_error_and_libjpeg_says_nothing(
    spoil: Callable[[bytes], bytes], damaged: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    data = spoil(_jpeg_bytes())
    if damaged:
        with pytest.raises(SourceError, match="the JPEG data is damaged"):
            decode_image(data)
    else:
        assert decode_image(data).shape == (120, 160, 3)
    assert capfd.readouterr().err == ""


def test_what_others_write_to_stderr_while_an_image_decodes_is_passed_on(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    real = cv2.imdecode

    def chatty(buf: np.ndarray, flags: int) -> np.ndarray:
        # another thread's log line, and libjpeg's warning, both written while the decode runs
        os.write(2, b"a log line of another thread\nCorrupt JPEG data: 3 extraneous bytes before marker 0xd9\n")
        return real(buf, flags)

    monkeypatch.setattr(cv2, "imdecode", chatty)
    assert decode_image(_jpeg_bytes()).shape == (120, 160, 3)
    assert capfd.readouterr().err == "a log line of another thread\n"


def _avi(path: Path) -> bytes:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5, (64, 48))
    for _ in range(3):
        writer.write(np.full((48, 64, 3), 100, np.uint8))
    writer.release()
    return path.read_bytes()


@pytest.mark.parametrize(
    "spoil",
    [
        # FFmpeg cannot open these; OpenCV's own AVI reader then tries, and writes what it found to stderr itself
        lambda d: d[:300],
        lambda d: d[:2000],
        lambda d: d[:12] + b"JUNK" + d[16:],
        # the reader quotes the four bytes it found, a line break among them
        lambda d: d[:12] + b"J\nV." + d[16:],
    ],
)
# the dashboard's source, and the review's recording
@pytest.mark.parametrize("opener", [lambda p: Capture(str(p), live=False), lambda p: Recording(p, 1.0)])
def test_a_damaged_avi_is_a_one_line_error_and_its_reader_says_nothing(
    tmp_path: Path, spoil: Callable[[bytes], bytes], opener: Callable[[Path], object], capfd: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "damaged.avi"
    path.write_bytes(spoil(_avi(tmp_path / "good.avi")))
    with pytest.raises(SourceError, match="cannot open the video file; expected a readable video file"):
        opener(path)
    assert capfd.readouterr().err == ""


def test_a_picture_read_as_a_recording_states_no_frame_count(tmp_path: Path) -> None:
    # FFmpeg reads a JPEG named .avi as a recording of one frame whose count it gives as -1
    path = tmp_path / "picture.avi"
    ok, data = cv2.imencode(".jpg", np.full((48, 64, 3), 100, np.uint8))
    assert ok
    path.write_bytes(data.tobytes())
    capture = Capture(str(path), live=False)
    assert len(capture) == 0 and len(list(capture.frames())) == 1
    assert Recording(path, 1.0).count == 0
