"""Cheap change detection: is the table settled, and is a settled frame different from the one last measured?
(Shared by the live dashboard and the review of recorded games.)

Frames are compared as small blurred copies, so sensor noise and JPEG artefacts do not count as movement but a hand
or a model moved by a few millimetres does. Copies in colour change by the most any of their channels changed: a unit
of dark bases moved on a dark mat changes the grey level little where its figures' colours change much more.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

# A 3x3 blur on the small copy smooths sensor noise without hiding a moved model (a base spans several pixels).
_BLUR_KERNEL = (3, 3)
# Changed pixels this close (a 3x3 neighbourhood of the small copy) belong to one region.
_JOIN_KERNEL = (3, 3)


def thumbnail(image_bgr: NDArray[np.uint8], width_px: int, colour: bool = False) -> NDArray[np.uint8]:
    """(h, width_px) blurred grey copy of a (H, W, 3) BGR (or (H, W) grey) frame, keeping its aspect ratio; with
    ``colour``, (h, width_px, 3) a blurred copy in the frame's own colours."""
    height, width = image_bgr.shape[:2]
    small_h = max(1, round(height * width_px / width))
    # grey before shrinking: one channel to average instead of three, a third of the time on every sampled frame
    source = image_bgr if image_bgr.ndim == 2 or colour else cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    copy = cv2.resize(source, (width_px, small_h), interpolation=cv2.INTER_AREA)
    return np.asarray(cv2.GaussianBlur(copy, _BLUR_KERNEL, 0), dtype=np.uint8)


def difference(a: NDArray[np.uint8], b: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """(h, w) how much each pixel of two copies of the same size differs: in grey levels, or for copies in colour
    ((h, w, 3)) in the channel that differs most."""
    diff = cv2.absdiff(a, b)
    return np.asarray(diff.max(axis=2) if diff.ndim == 3 else diff, dtype=np.uint8)


def changed_fraction(a: NDArray[np.uint8], b: NDArray[np.uint8], pixel_delta: int) -> float:
    """Share (0-1) of pixels that differ by more than ``pixel_delta`` (:func:`difference`); 1 for copies of other
    sizes."""
    if a.shape != b.shape:
        return 1.0
    diff = difference(a, b)
    return float(np.count_nonzero(diff > pixel_delta)) / diff.size


def changed_region(a: NDArray[np.uint8], b: NDArray[np.uint8], pixel_delta: int, min_pixels: int) -> bool:
    """True when some 8-connected region of at least ``min_pixels`` pixels differs by more than ``pixel_delta``
    between two thumbnails of the same size (False for other sizes): one model moved changes a few pixels of a
    small copy, too few for a share of the whole picture, but side by side."""
    if a.shape != b.shape:
        return False
    mask = (difference(a, b) > pixel_delta).astype(np.uint8)
    count, _labels, stats, _centroids = cv2.connectedComponentsWithStats(mask, connectivity=8)
    return bool(count > 1 and stats[1:, cv2.CC_STAT_AREA].max() >= min_pixels)


def reaching_in(thumb: NDArray[np.uint8], reference: NDArray[np.uint8], pixel_delta: int, min_fraction: float) -> bool:
    """True when something reaches into the frame from outside it (:func:`reaching_region` finds a region)."""
    return reaching_region(thumb, reference, pixel_delta, min_fraction) is not None


def reaching_region(
    thumb: NDArray[np.uint8],
    reference: NDArray[np.uint8],
    pixel_delta: int,
    min_fraction: float,
    anywhere: bool = False,
) -> NDArray[np.bool_] | None:
    """(h, w) the regions that changed since ``reference`` (pixels differing by more than ``pixel_delta``,
    8-connected) that touch the frame's border (``anywhere``: or not) and cover at least ``min_fraction`` of the
    frame; None where there is none. A hand, an arm or a tape measure comes in over the edge of the picture; models
    moved on the table change small patches inside it (but see :func:`bases_explain`). Thumbnails of other sizes are
    not compared (None)."""
    if thumb.shape != reference.shape:
        return None
    mask = (difference(thumb, reference) > pixel_delta).astype(np.uint8)
    # An arm about as bright as the mat changes only in pieces (its shaded side, its shadow): close the gaps.
    mask = np.asarray(cv2.dilate(mask, np.ones(_JOIN_KERNEL, np.uint8)), dtype=np.uint8)
    count, labels, stats, _centroids = cv2.connectedComponentsWithStats(mask, connectivity=8)
    if count <= 1:
        return None
    height, width = mask.shape
    x, y, w, h, area = (stats[1:, i] for i in range(5))
    on_border = anywhere | (x == 0) | (y == 0) | (x + w == width) | (y + h == height)
    big = np.flatnonzero(on_border & (area >= min_fraction * mask.size)) + 1
    return np.isin(labels, big) if big.size else None


def bases_drawn(
    shape: tuple[int, int], outlines_px: NDArray[np.float64], frame_shape: tuple[int, int], grow: float
) -> NDArray[np.bool_]:
    """(h, w) where the bases ``outlines_px`` (N, V, 2), in the pixels of a frame of ``frame_shape`` (H, W), lie on
    a thumbnail of that frame of ``shape`` (h, w), each grown about its centre by ``grow`` of its size (a figure
    overhangs its base)."""
    h, w = shape
    scale = np.array([w / frame_shape[1], h / frame_shape[0]])
    centre = outlines_px.mean(axis=1, keepdims=True)
    grown = (centre + (outlines_px - centre) * (1.0 + grow)) * scale
    on = np.zeros((h, w), np.uint8)
    # one polygon a call: filled together, overlapping ones would cancel where they overlap (even-odd)
    for outline in grown:
        cv2.fillPoly(on, [np.round(outline).astype(np.int32)], 1)
    return on > 0


def bases_explain(region: NDArray[np.bool_], on_bases: NDArray[np.bool_], min_share: float) -> bool:
    """Whether a changed ``region`` (h, w) of a thumbnail lies, for at least ``min_share`` of its pixels, on the
    bases ``on_bases`` (h, w) (:func:`bases_drawn`: where models stood and stand). A unit moved at the edge of the
    picture changes a region there as large as an arm's; the arm lies mostly off the bases."""
    if not np.any(region):
        return True
    return bool(np.count_nonzero(region & on_bases) >= min_share * np.count_nonzero(region))


class SettleWatch:
    """Tracks movement between frames: settled once nothing moved for ``settle_s`` seconds."""

    def __init__(self, settle_s: float, pixel_delta: int, fraction: float, min_region_px: int = 0) -> None:
        self.settle_s = settle_s
        self.pixel_delta = pixel_delta
        self.fraction = fraction
        # 0: only the share of changed pixels counts
        self.min_region_px = min_region_px
        self._anchor: NDArray[np.uint8] | None = None
        self._moved_at: float | None = None

    def update(self, thumb: NDArray[np.uint8], now_s: float) -> bool:
        """Take the next frame's thumbnail at time ``now_s`` (s, monotonic); True when it moved.

        Frames are compared with the first frame of the still spell, not the one before: a slow change (a model
        pushed a little each frame) adds up until it counts, while noise does not.
        """
        moved = self._anchor is None or self.differs(thumb, self._anchor)
        if moved:
            self._moved_at = now_s
            self._anchor = thumb
        return moved

    def differs(self, a: NDArray[np.uint8], b: NDArray[np.uint8]) -> bool:
        """True when two thumbnails differ by more than noise: more than ``fraction`` of their pixels by more than
        ``pixel_delta``, or (with ``min_region_px``) a region of that many such pixels side by side."""
        if changed_fraction(a, b, self.pixel_delta) > self.fraction:
            return True
        return self.min_region_px > 0 and changed_region(a, b, self.pixel_delta, self.min_region_px)

    def settled(self, now_s: float) -> bool:
        """True when nothing moved for ``settle_s`` before ``now_s``."""
        return self._moved_at is not None and now_s - self._moved_at >= self.settle_s

    @property
    def anchor(self) -> NDArray[np.uint8] | None:
        """The thumbnail of the first frame of the current still spell (None before any frame)."""
        return self._anchor

    @property
    def moved_at(self) -> float | None:
        """When the current still spell began (s), None before any frame."""
        return self._moved_at

    def reset(self) -> None:
        """Forget the frames seen (a new source): the next frame counts as movement."""
        self._anchor = None
        self._moved_at = None
