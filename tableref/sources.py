"""Where frames come from: a camera, a stream, a video file, a still image or a folder of images.

OpenCV reports most failures by returning ``False`` or an empty frame rather than raising; this module turns
them into :class:`SourceError` with a message that says what was tried and what was expected.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import cv2
import numpy as np
from numpy.typing import NDArray

from rules.state import check_regular_file
from tableref.image_header import image_kind, image_size

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")
VIDEO_SUFFIXES = (".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg")
_JPEG_START = b"\xff\xd8"
_JPEG_END = b"\xff\xd9"
_STREAM = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
# Images (and video frames) of more pixels are refused before they are decoded: a 48 MP phone (8000 x 6000) is the
# largest camera a table is filmed with, and each stage's time and memory grow with the picture (a 196 MP frame took a
# minute and more than a gigabyte to measure), so a header claiming more is a mistake or a hostile file.
MAX_IMAGE_PIXELS = 50_000_000
# An image file larger than this is refused unread (a picture of MAX_IMAGE_PIXELS stored without loss is 150 MB).
MAX_FILE_BYTES = 500_000_000


class SourceError(ValueError):
    """A frame source that cannot be opened or read."""


# What libjpeg says of data it could not decode (it fills the rest with grey and carries on): the picture is damaged.
# Other warnings ("extraneous bytes before marker", common from webcams) leave the picture whole.
_DAMAGED_JPEG = re.compile(
    r"Corrupt JPEG data: (premature end of data segment|bad Huffman code)|(Premature end of JPEG file)"
)
# Lines the codecs and containers write to the process's stderr themselves, past OpenCV's logging (which is
# silenced): libjpeg's warnings, and those of OpenCV's own AVI reader (tried on a file FFmpeg cannot open). They would
# come before the program's own one-line message. The AVI reader ends its lines with the four bytes it found where it
# expected a chunk's name, and those bytes may hold a line break, so a line is matched up to its closing ".\n".
_CODEC_LINE = re.compile(
    r"^(Corrupt JPEG data|Premature end of JPEG file|Failed to parse avi|Unexpected end of file)[^\n]*\n?"
    r"|^Unexpected (element|list type)\. Expected: [^\n]*?\. Got: (?s:.{0,4})\.\n?",
    re.MULTILINE,
)
_QUIET_LOCK = threading.Lock()
T = TypeVar("T")


def _quietly(work: Callable[[], T]) -> tuple[T, str]:
    """``work()`` and what was written to the process's stderr meanwhile: the codecs' own lines are kept back, what
    other threads wrote is passed on."""
    with _QUIET_LOCK, tempfile.TemporaryFile() as caught:
        saved = os.dup(2)
        os.dup2(caught.fileno(), 2)
        try:
            result = work()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        caught.seek(0)
        said = caught.read().decode("utf-8", "replace")
    theirs = _CODEC_LINE.sub("", said)
    if theirs:
        os.write(2, theirs.encode("utf-8"))
    return result, said


def _imdecode(data: bytes) -> NDArray[np.uint8] | None:
    try:
        image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    except cv2.error:
        return None
    return None if image is None else np.asarray(image, dtype=np.uint8)


@dataclass(frozen=True)
class Frame:
    """One frame: its position in the source (``index``, ``time_s`` from the start) and the image (H, W, 3)."""

    index: int
    time_s: float
    image_bgr: NDArray[np.uint8]


def decode_image(data: bytes, max_pixels: int = MAX_IMAGE_PIXELS) -> NDArray[np.uint8]:
    """Decode the bytes of an image file to (H, W, 3) BGR, once its header's size is checked: the one place images
    are decoded. Raises SourceError (without a file name) for a kind not read, a picture of more than
    ``max_pixels``, a truncated JPEG or a file that does not decode."""
    if image_kind(data) is None:
        raise SourceError("not an image OpenCV can decode (expected JPEG, PNG, BMP, TIFF or WebP)")
    size = image_size(data)
    if size is None or size[0] <= 0 or size[1] <= 0:
        raise SourceError("the image header gives no picture size; expected a complete JPEG, PNG, BMP, TIFF or WebP")
    if size[0] * size[1] > max_pixels:
        raise SourceError(f"the image header says {size[0]} x {size[1]} pixels; expected at most {max_pixels} pixels")
    # A truncated JPEG may still decode (grey below the cut): a JPEG must end with its end-of-image marker.
    if data.startswith(_JPEG_START) and _JPEG_END not in data[-64:]:
        raise SourceError("the JPEG is truncated (no end-of-image marker); expected a complete file")
    image, said = _quietly(lambda: _imdecode(data))
    damaged = _DAMAGED_JPEG.search(said)
    if damaged:
        what = (damaged.group(1) or damaged.group(2)).lower()
        raise SourceError(f"the JPEG data is damaged ({what}); expected an undamaged file")
    if image is None:
        raise SourceError("the image does not decode; expected a complete JPEG, PNG, BMP, TIFF or WebP file")
    return image


def read_image(path: str | Path, max_pixels: int = MAX_IMAGE_PIXELS) -> NDArray[np.uint8]:
    """Decode an image file to (H, W, 3) BGR (:func:`decode_image`); SourceError naming the file for a missing,
    unreadable, too large or truncated one."""
    p = Path(path)
    if not p.exists():
        raise SourceError(f"{p}: no such image file")
    check_regular_file(p, "an image file", SourceError, MAX_FILE_BYTES)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise SourceError(f"{p}: cannot read it ({exc.strerror or exc}); expected an image file") from None
    try:
        return decode_image(data, max_pixels)
    except SourceError as exc:
        raise SourceError(f"{p}: {exc}") from None


def folder_images(path: Path) -> list[Path]:
    """The images of the folder at ``path``, in name order, known by their ending: the one listing of a folder of
    photos. Each is whatever it turns out to be (its reader refuses a folder or a pipe so named, by name).
    SourceError when the folder holds none."""
    images = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not images:
        raise SourceError(f"{path}: the folder holds no images ({', '.join(IMAGE_SUFFIXES)})")
    return images


class FrameSource:
    """Base of every source. ``live`` sources (cameras, streams) may drop and come back."""

    name: str = ""
    live: bool = False
    fps: float = 0.0

    def frames(self) -> Iterator[Frame]:
        raise NotImplementedError

    def __len__(self) -> int:
        """Frames in the source, 0 when unknown (live)."""
        return 0


class StillImage(FrameSource):
    """One image, given again and again as a frame every ``period_s`` (an unchanging table)."""

    def __init__(self, path: Path, period_s: float = 1.0) -> None:
        self.name = str(path)
        self.image = read_image(path)
        self.period_s = period_s

    def frames(self) -> Iterator[Frame]:
        yield Frame(0, 0.0, self.image)

    def __len__(self) -> int:
        return 1


class ImageFolder(FrameSource):
    """The images of a folder in name order, each a frame ``period_s`` after the one before."""

    def __init__(self, path: Path, period_s: float = 1.0) -> None:
        self.name = str(path)
        self.paths = folder_images(path)
        self.period_s = period_s
        self.fps = 1.0 / period_s

    def frames(self) -> Iterator[Frame]:
        for k, p in enumerate(self.paths):
            yield Frame(k, k * self.period_s, read_image(p))

    def __len__(self) -> int:
        return len(self.paths)


def open_video_file(path: str | Path) -> cv2.VideoCapture:
    """An opened ``cv2.VideoCapture`` of the video file at ``path``: the one place video files are opened. What its
    reader writes to stderr itself (OpenCV's own AVI reader, on a file FFmpeg cannot open) is kept back; SourceError
    when it cannot be opened."""
    target = str(path)
    cap = _quietly(lambda: cv2.VideoCapture(target))[0]
    if not cap.isOpened():
        raise SourceError(f"{path}: cannot open the video file; expected a readable video file")
    return cap


def video_rate_and_count(cap: cv2.VideoCapture) -> tuple[float, int]:
    """The frame rate and the number of frames an opened video's container states, 0 for what it does not state
    (FFmpeg gives -1 frames for a picture read as a recording, and a rate may be missing or not a number)."""
    fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
    count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
    return (fps if math.isfinite(fps) and fps > 0 else 0.0), max(0, count)


def check_frame_size(cap: cv2.VideoCapture, what: str, max_pixels: int = MAX_IMAGE_PIXELS) -> None:
    """Refuse an opened video (``what`` names it) whose frames are larger than ``max_pixels``: the container states
    the picture size before any frame is decoded, so a hostile one is refused before the work."""
    width, height = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH) or 0), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT) or 0)
    if width * height > max_pixels:
        raise SourceError(f"{what} says its frames are {width} x {height} pixels; expected at most {max_pixels} pixels")


class Capture(FrameSource):
    """A video file, a camera index or a stream URL, read with ``cv2.VideoCapture``."""

    def __init__(self, target: str | int, live: bool, max_pixels: int = MAX_IMAGE_PIXELS) -> None:
        self.target = target
        self.name = str(target)
        self.live = live
        cap = self._open()
        self.fps, count = video_rate_and_count(cap)
        self.count = 0 if live else count
        try:
            check_frame_size(cap, f"{self.name}: the {self.kind}", max_pixels)
        finally:
            cap.release()

    @property
    def kind(self) -> str:
        return "camera" if isinstance(self.target, int) else ("stream" if self.live else "video file")

    def _open(self) -> cv2.VideoCapture:
        if not self.live:
            return open_video_file(str(self.target))
        # a camera or a stream may take long to open: it is not held up as a file is (every other thread's decode
        # would wait meanwhile), and says nothing of its own
        cap = cv2.VideoCapture(self.target)
        if not cap.isOpened():
            raise SourceError(f"{self.target}: cannot open the {self.kind}; expected a readable {self.kind}")
        return cap

    def frames(self) -> Iterator[Frame]:
        cap = self._open()
        start = time.monotonic()
        k = 0
        try:
            while True:
                ok, image = cap.read()
                if not ok or image is None:
                    if self.live:
                        raise SourceError(f"{self.name}: the {self.kind} stopped sending frames")
                    return
                t = (time.monotonic() - start) if self.live or self.fps <= 0 else k / self.fps
                yield Frame(k, t, np.asarray(image, dtype=np.uint8))
                k += 1
        finally:
            cap.release()

    def __len__(self) -> int:
        return self.count


def open_source(spec: str, period_s: float = 1.0) -> FrameSource:
    """A source from a command-line word: ``0`` (camera index), ``rtsp://...`` (stream), a video file, an image
    or a folder of images. Raises :class:`SourceError`."""
    if spec.isdigit():
        return Capture(int(spec), live=True)
    if _STREAM.match(spec):
        return Capture(spec, live=True)
    path = Path(spec)
    if path.is_dir():
        return ImageFolder(path, period_s)
    if not path.exists():
        raise SourceError(
            f"{spec}: no such file or folder; expected a camera index, a stream URL, a video, an image or a "
            "folder of images"
        )
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return StillImage(path, period_s)
    if path.suffix.lower() in VIDEO_SUFFIXES:
        check_regular_file(path, "a video file", SourceError, None)
        return Capture(str(path), live=False)
    raise SourceError(
        f"{spec}: unknown kind of file; expected an image ({', '.join(IMAGE_SUFFIXES)}) or a video "
        f"({', '.join(VIDEO_SUFFIXES)})"
    )


# JPEG and the video codecs that build on it code a frame in 8 x 8 blocks
_BLOCK_PX = 8
_BLOCKINESS_SIDE_PX = 1024


def blockiness(frame_bgr: NDArray[np.uint8]) -> float:
    """How blocky a frame's compression left it: the mean grey-level step across the 8 px block boundaries over the
    mean step elsewhere, both ways (about 1 for a frame stored without loss, 1.1-2.4 for rendered frames stored as
    JPEG of quality 60-95, 2-5 for a phone's or webcam's video). ``frame_bgr`` (H, W, 3) or (H, W) uint8."""
    # a middle square of at most _BLOCKINESS_SIDE_PX, on the block grid, tells as well as the whole frame
    h, w = frame_bgr.shape[:2]
    top = (max(0, h - _BLOCKINESS_SIDE_PX) // 2) // _BLOCK_PX * _BLOCK_PX
    left = (max(0, w - _BLOCKINESS_SIDE_PX) // 2) // _BLOCK_PX * _BLOCK_PX
    part = frame_bgr[top : top + _BLOCKINESS_SIDE_PX, left : left + _BLOCKINESS_SIDE_PX]
    grey = (part if part.ndim == 2 else cv2.cvtColor(part, cv2.COLOR_BGR2GRAY)).astype(np.float32)
    ratios = []
    for axis in (1, 0):
        step = np.abs(np.diff(grey, axis=axis))
        if step.shape[axis] < 2 * _BLOCK_PX:
            return 1.0
        edge = np.arange(step.shape[axis]) % _BLOCK_PX == _BLOCK_PX - 1
        at = step[:, edge] if axis == 1 else step[edge]
        inside = step[:, ~edge] if axis == 1 else step[~edge]
        ratios.append(float(at.mean()) / max(float(inside.mean()), 1e-6))
    return float(np.mean(ratios))


def deblock_blur_px(frame_bgr: NDArray[np.uint8], min_blockiness: float, blur_px: float) -> float:
    """``blur_px`` where ``frame_bgr``'s :func:`blockiness` is at least ``min_blockiness`` (0: never), else 0: the
    blocks' steps read as rims and break real ones into pieces, more than a light blur costs a sharp frame."""
    if min_blockiness <= 0 or blur_px <= 0 or blockiness(frame_bgr) < min_blockiness:
        return 0.0
    return blur_px
