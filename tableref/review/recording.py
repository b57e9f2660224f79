"""A recording read for its review: a video file or a folder of photos, its frames sampled, the first still frame
of every spell picked out (:func:`still_frames`), and all of it done in a thread of its own ahead of the measurement
(:func:`read_ahead`): decoding a video and measuring its settled states then share the machine's cores.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from tableref.pipeline.motion import SettleWatch, thumbnail
from tableref.sources import (
    MAX_IMAGE_PIXELS,
    VIDEO_SUFFIXES,
    SourceError,
    check_frame_size,
    folder_images,
    open_video_file,
    read_image,
    video_rate_and_count,
)

# Progress is reported every this many frames: often enough for a smooth bar, rarely enough to cost nothing.
_PROGRESS_EVERY = 30


@dataclass(frozen=True)
class Sample:
    """A frame the scan looked at: ``index`` in the source, ``time_s`` from its start, and the image."""

    index: int
    time_s: float
    image_bgr: NDArray[np.uint8]


class Recording:
    """A video file or a folder of photos, read from a given frame on; only every ``step``-th frame is decoded
    into an image (the others are grabbed, which a video needs to keep its place)."""

    def __init__(self, path: str | Path, photo_period_s: float, max_pixels: int = MAX_IMAGE_PIXELS) -> None:
        self.path = Path(path)
        self.photos: list[Path] = []
        if self.path.is_dir():
            self.photos = folder_images(self.path)
            self.fps = 1.0 / photo_period_s
            self.count = len(self.photos)
            return
        if not self.path.is_file():
            raise SourceError(f"{self.path}: no such video file or folder of photos")
        if self.path.suffix.lower() not in VIDEO_SUFFIXES:
            raise SourceError(f"{self.path}: not a video ({', '.join(VIDEO_SUFFIXES)}) or a folder of photos")
        cap = open_video_file(self.path)
        self.fps, self.count = video_rate_and_count(cap)
        try:
            check_frame_size(cap, f"{self.path}: the video", max_pixels)
        finally:
            cap.release()
        if self.fps <= 0:
            raise SourceError(f"{self.path}: the video states no frame rate; expected a recording with one")

    @property
    def is_photos(self) -> bool:
        return bool(self.photos)

    def samples(self, start: int, step: int, progress: Callable[[int], None]) -> Iterator[Sample]:
        """From frame ``start`` on, every frame whose index is a multiple of ``step`` (so that a resumed scan
        looks at the same frames); ``progress(n)`` counts every frame passed, decoded or not."""
        if self.photos:
            for k in range(start, len(self.photos)):
                progress(1)
                yield Sample(k, k / self.fps, read_image(self.photos[k]))
            return
        cap = open_video_file(self.path)
        try:
            if start:
                cap.set(cv2.CAP_PROP_POS_FRAMES, start)
            k = start
            pending = 0
            while cap.grab():
                pending += 1
                if k % step == 0:
                    ok, image = cap.retrieve()
                    if not ok or image is None:
                        return
                    yield Sample(k, k / self.fps, np.asarray(image, dtype=np.uint8))
                if pending >= _PROGRESS_EVERY:
                    progress(pending)
                    pending = 0
                k += 1
            progress(pending)
        finally:
            cap.release()

    def image(self, index: int) -> NDArray[np.uint8]:
        """One frame by index."""
        if self.photos:
            return read_image(self.photos[index])
        cap = open_video_file(self.path)
        try:
            cap.set(cv2.CAP_PROP_POS_FRAMES, index)
            ok, image = cap.read()
        finally:
            cap.release()
        if not ok or image is None:
            raise SourceError(f"{self.path}: cannot read frame {index}")
        return np.asarray(image, dtype=np.uint8)


@dataclass(frozen=True)
class StillFrame:
    """The first sampled frame of a still spell, the one a review may measure: the ``sample``, its ``thumb``
    (:func:`~tableref.pipeline.motion.thumbnail`), the spell's first thumbnail (``anchor``: a resumed review compares
    new frames with it) and when the spell began (``moved_at_s``)."""

    sample: Sample
    thumb: NDArray[np.uint8]
    anchor: NDArray[np.uint8]
    moved_at_s: float


def still_frames(
    samples: Iterator[Sample], watch: SettleWatch, thumb_px: int, spell_done: bool = False
) -> Iterator[StillFrame]:
    """The first sample of every still spell of ``samples`` (nothing moved in it for ``watch.settle_s``), each
    spell once; ``spell_done``: the spell going on at the first sample was measured already (a resumed review).
    Which frames these are depends on the frames alone, not on what their measurement finds, so they can be
    picked out ahead of it."""
    for sample in samples:
        thumb = thumbnail(sample.image_bgr, thumb_px, colour=True)
        if watch.update(thumb, sample.time_s):
            spell_done = False
        if spell_done or not watch.settled(sample.time_s):
            continue
        spell_done = True
        anchor = watch.anchor if watch.anchor is not None else thumb
        moved_at_s = watch.moved_at if watch.moved_at is not None else sample.time_s
        yield StillFrame(sample, thumb, anchor, moved_at_s)


T = TypeVar("T")


class _Tally:
    """Frames passed, counted by the thread that reads them and reported by the one that owns the progress bar."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    def add(self, count: int) -> None:
        with self._lock:
            self._count += count

    def take(self) -> int:
        with self._lock:
            count, self._count = self._count, 0
        return count


@dataclass(frozen=True)
class _Failed:
    error: BaseException


_DONE = object()
_NOTHING = object()
# How often (s) a consumer waiting for the next item reports the frames passed meanwhile.
_WAIT_S = 0.2


def read_ahead(
    make_items: Callable[[Callable[[int], None]], Iterator[T]], limit: int, progress: Callable[[int], None]
) -> Iterator[T]:
    """Yield the items of ``make_items(count)``, made in a thread of their own at most ``limit`` items ahead of the
    caller; ``count(n)``, called by that thread as frames pass, reaches ``progress`` in the caller's thread. OpenCV
    lets go of Python's lock while it decodes, so a video is decoded on one core while its frames are measured on
    the other. The maker's error is raised where its item would have come; leaving the loop stops the maker."""
    tally = _Tally()
    items: queue.Queue[object] = queue.Queue(maxsize=max(1, limit))
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=_WAIT_S)
                return True
            except queue.Full:
                continue
        return False

    def make() -> None:
        made: Iterator[T] | None = None
        try:
            made = make_items(tally.add)
            for item in made:
                if not put(item):
                    return
        except BaseException as exc:  # handed to the caller, raised there
            put(_Failed(exc))
            return
        finally:
            close = getattr(made, "close", None)
            if close is not None:
                close()
        put(_DONE)

    maker = threading.Thread(target=make, name="read-ahead", daemon=True)
    maker.start()
    try:
        while True:
            try:
                item = items.get(timeout=_WAIT_S)
            except queue.Empty:
                item = _NOTHING
            passed = tally.take()
            if passed:
                progress(passed)
            if item is _NOTHING:
                continue
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield cast(T, item)
    finally:
        stop.set()
        maker.join()
