"""Where a frame differs from the one measured before it, as boxes on the table, so that only those places are
measured again (see :func:`tableref.pipeline.frame.detect_frame`'s ``previous``).

Frames are compared as small blurred copies in colour (:func:`tableref.pipeline.motion.thumbnail`), in grey and
channel by channel: sensor noise and JPEG artefacts average out, a model moved by a fraction of a millimetre does not.
Each region of changed pixels becomes the box on the table its outline maps to (at table height: a figure's head seen
far from its base only makes the box larger), grown by a margin for what fades out below the threshold (the edge of a
soft shadow).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.table import TableCalibration
from tableref.pipeline.motion import thumbnail
from tableref.settings import PipelineSettings

# Changed pixels this close (a 3x3 neighbourhood of the small copy) belong to one region.
_JOIN_KERNEL = np.ones((3, 3), np.uint8)
# The difference's shift and noise are read from every this many-th pixel of every this many-th row.
_NOISE_STEP = 4
# The share of the sampled pixels taken as unchanged when the noise is read (the rest may be what moved).
_CALM_SHARE = 0.99
# Points taken along each side of a region's box when it is mapped to the table: the lens bends straight sides.
_SIDE_POINTS = 9


@dataclass(frozen=True)
class Box:
    """An axis-aligned box on the table, mm: x from ``x0_mm`` to ``x1_mm``, y from ``y0_mm`` to ``y1_mm``."""

    x0_mm: float
    y0_mm: float
    x1_mm: float
    y1_mm: float

    @property
    def area_mm2(self) -> float:
        return max(0.0, self.x1_mm - self.x0_mm) * max(0.0, self.y1_mm - self.y0_mm)

    def grown(self, margin_mm: float, width_mm: float, depth_mm: float) -> Box:
        """This box grown by ``margin_mm`` on every side, kept on a table of ``width_mm`` x ``depth_mm``."""
        return Box(
            max(0.0, self.x0_mm - margin_mm),
            max(0.0, self.y0_mm - margin_mm),
            min(width_mm, self.x1_mm + margin_mm),
            min(depth_mm, self.y1_mm + margin_mm),
        )

    def window_px(self, px_per_mm: float, size_px: tuple[int, int]) -> tuple[int, int, int, int]:
        """(u0, v0, u1, v1): the pixels of a top-down view at ``px_per_mm`` (``size_px`` (width, height)) that
        this box covers, whole pixels outward."""
        width, height = size_px
        return (
            max(0, math.floor(self.x0_mm * px_per_mm)),
            max(0, math.floor(self.y0_mm * px_per_mm)),
            min(width, math.ceil(self.x1_mm * px_per_mm)),
            min(height, math.ceil(self.y1_mm * px_per_mm)),
        )


def change_view(frame_bgr: NDArray[np.uint8], settings: PipelineSettings) -> NDArray[np.uint8]:
    """(h, w, 3) the small blurred copy, in colour, that frames are compared by: ``change_thumb_px`` wide at most."""
    return thumbnail(frame_bgr, min(settings.change_thumb_px, frame_bgr.shape[1]), colour=True)


def changed_since(view: NDArray[np.uint8], before: NDArray[np.uint8], settings: PipelineSettings) -> NDArray[np.bool_]:
    """(h, w) where the :func:`change_view` ``view`` differs from ``before`` by the ``change_*`` settings (see
    :func:`changed_mask`)."""
    return changed_mask(
        view,
        before,
        settings.change_min_delta,
        settings.change_noise_sigmas,
        settings.change_min_pixels,
        settings.change_colour_min_pixels,
        settings.change_colour_min_delta,
    )


def changed_mask(
    thumb: NDArray[np.uint8],
    before: NDArray[np.uint8],
    min_delta: int,
    noise_sigmas: float,
    min_pixels: int,
    colour_min_pixels: int = 0,
    colour_min_delta: int = 0,
) -> NDArray[np.bool_]:
    """(h, w) True where two small copies of the same size differ: by more than ``noise_sigmas`` times their
    difference's own noise (the RMS of its calmest 99 %), and at least ``min_delta`` grey levels, once the whole
    picture's shift (a light that flickers, a camera's exposure) is taken out; in regions of at least ``min_pixels``
    such pixels (8-connected), grown by a pixel so that the pieces of one change join. Copies in colour ((h, w, 3))
    differ where their grey copies do, and where any of their channels does, by at least ``colour_min_delta`` levels
    too, in a region of at least ``colour_min_pixels`` that the grey did not show: a purple base taken off a dark
    green mat hardly changes the grey, while a JPEG's colours are coarser and noisier than its grey."""
    if thumb.ndim == 3:
        grey = changed_mask(_grey(thumb), _grey(before), min_delta, noise_sigmas, min_pixels)
        delta = max(min_delta, colour_min_delta)
        channels = [changed_mask(thumb[..., c], before[..., c], delta, noise_sigmas, min_pixels) for c in range(3)]
        only = (np.logical_or.reduce(channels) & ~grey).view(np.uint8)
        found = _regions(only)
        if found is None:
            return grey
        stats, labels, (x, y) = found
        big = np.concatenate([[False], stats[:, cv2.CC_STAT_AREA] >= colour_min_pixels])
        grey[y : y + labels.shape[0], x : x + labels.shape[1]] |= big[labels]
        return grey
    diff = np.asarray(cv2.subtract(thumb, before, dtype=cv2.CV_16S), dtype=np.int16)
    # a sparse sample tells the shift and the noise as well as every pixel, at a fraction of the time
    sample = diff[::_NOISE_STEP, ::_NOISE_STEP].astype(np.float64)
    shift = float(np.median(sample))
    off = np.abs(sample - shift)
    # the noise is the spread of the pixels that did not change: the largest differences (what moved) left out.
    # Not a median absolute deviation: on whole grey levels it is 0 or 1, too coarse a step for a threshold
    calm = off[off <= np.quantile(off, _CALM_SHARE)]
    noise = float(np.sqrt(np.mean(calm**2))) if calm.size else 0.0
    threshold = max(float(min_delta), noise_sigmas * noise)
    # whole grey levels: compared with the shifted bounds, no float copy of the picture is needed
    raw = ((diff > shift + threshold) | (diff < shift - threshold)).view(np.uint8)
    found = _regions(raw)
    if found is None:
        return np.zeros(raw.shape, dtype=np.bool_)
    stats, labels, (x, y) = found
    # a lone pixel or two over the threshold is noise; a base moved by a fraction of a millimetre changes an arc
    big = np.concatenate([[False], stats[:, cv2.CC_STAT_AREA] >= min_pixels])
    keep = np.zeros_like(raw)
    keep[y : y + labels.shape[0], x : x + labels.shape[1]] = big.astype(np.uint8)[labels]
    return np.asarray(cv2.dilate(keep, _JOIN_KERNEL), dtype=np.uint8) > 0


def _grey(image_bgr: NDArray[np.uint8]) -> NDArray[np.uint8]:
    return np.asarray(cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY), dtype=np.uint8)


def _regions(mask: NDArray[np.uint8]) -> tuple[NDArray[np.int32], NDArray[np.int32], tuple[int, int]] | None:
    """The 8-connected regions of a (h, w) mask: their stats (K, 5) (x, y, width, height, area; x and y in the
    mask's pixels), the labels (1..K) of the box round every nonzero pixel and that box's corner (x, y). None for an
    empty mask. Labelled within that box only: a change is a few small patches of a large picture."""
    x, y, w, h = cv2.boundingRect(mask)
    if w == 0 or h == 0:
        return None
    count, labels, stats, _centroids = cv2.connectedComponentsWithStats(mask[y : y + h, x : x + w], connectivity=8)
    if count <= 1:
        return None
    regions = np.asarray(stats[1:], dtype=np.int32).copy()
    regions[:, cv2.CC_STAT_LEFT] += x
    regions[:, cv2.CC_STAT_TOP] += y
    return regions, np.asarray(labels, dtype=np.int32), (x, y)


def _mask_cell_px(mask: NDArray[np.bool_], calibration: TableCalibration, cell_mm: float) -> int:
    """About ``cell_mm`` of the table in pixels of ``mask`` (h, w) at the frame's centre; 0 for no cells."""
    if cell_mm <= 0:
        return 0
    small_w = int(mask.shape[1])
    scale_x = calibration.image_width / small_w
    step_px = 0.1 * small_w
    centre_x, centre_y = 0.5 * calibration.image_width, 0.5 * calibration.image_height
    ends = calibration.image_to_table(np.array([[centre_x, centre_y], [centre_x + step_px * scale_x, centre_y]]))
    mm_per_px = float(np.hypot(*(ends[1] - ends[0]))) / step_px
    if not math.isfinite(mm_per_px) or mm_per_px <= 0:
        return 0
    return max(1, round(cell_mm / mm_per_px))


def _cut_regions(mask: NDArray[np.bool_], cell_px: int) -> NDArray[np.int32]:
    """(K, 4) the boxes (x, y, width, height; pixels of ``mask`` (h, w)) of its 8-connected regions, each cut along
    a grid of ``cell_px`` (0: not cut)."""
    found = _regions(mask.astype(np.uint8))
    if found is None:
        return np.zeros((0, 4), dtype=np.int32)
    stats, labels, (x0, y0) = found
    if cell_px <= 0:
        return stats[:, :4]
    v, u = np.nonzero(labels)
    u, v = u + x0, v + y0
    columns = mask.shape[1] // cell_px + 1
    key = (labels[v - y0, u - x0].astype(np.int64) * (mask.shape[0] // cell_px + 1) + v // cell_px) * columns
    key += u // cell_px
    _, piece = np.unique(key, return_inverse=True)
    count = int(piece.max()) + 1
    u0 = np.full(count, np.iinfo(np.int32).max)
    v0 = np.full(count, np.iinfo(np.int32).max)
    u1 = np.full(count, -1)
    v1 = np.full(count, -1)
    np.minimum.at(u0, piece, u)
    np.minimum.at(v0, piece, v)
    np.maximum.at(u1, piece, u)
    np.maximum.at(v1, piece, v)
    return np.column_stack([u0, v0, u1 - u0 + 1, v1 - v0 + 1]).astype(np.int32)


def changed_boxes(
    mask: NDArray[np.bool_],
    calibration: TableCalibration,
    margin_mm: float,
    cell_mm: float = 0.0,
) -> list[Box]:
    """The table boxes (mm) that the regions of ``mask`` (h, w), a small copy of frames of the calibration's size,
    map to, grown by ``margin_mm`` and kept on the table; regions off the table give none. With ``cell_mm`` a region
    is cut along a grid of about that size on the table first: a long or slanting region (a unit moved in a column)
    is several boxes, not one box round all of it."""
    stats = _cut_regions(mask, _mask_cell_px(mask, calibration, cell_mm))
    if len(stats) == 0:
        return []
    small_h, small_w = mask.shape
    scale_x = calibration.image_width / small_w
    scale_y = calibration.image_height / small_h
    t = np.linspace(0.0, 1.0, _SIDE_POINTS)
    width_mm, depth_mm = calibration.spec.width_mm, calibration.spec.depth_mm
    boxes = []
    for x, y, w, h in stats:
        # the region's pixels cover [x, x + w) of the small copy: that much of the frame
        x0, x1 = x * scale_x, (x + w) * scale_x
        y0, y1 = y * scale_y, (y + h) * scale_y
        xs = np.concatenate(
            [x0 + (x1 - x0) * t, np.full(_SIDE_POINTS, x1), x1 - (x1 - x0) * t, np.full(_SIDE_POINTS, x0)]
        )
        ys = np.concatenate(
            [np.full(_SIDE_POINTS, y0), y0 + (y1 - y0) * t, np.full(_SIDE_POINTS, y1), y1 - (y1 - y0) * t]
        )
        # real frame pixel centres sit at integer coordinates: the region's outer edge lies half a pixel before
        on_table = calibration.image_to_table(np.column_stack([xs - 0.5, ys - 0.5]))
        if not np.all(np.isfinite(on_table)):
            continue
        box = Box(
            float(on_table[:, 0].min()),
            float(on_table[:, 1].min()),
            float(on_table[:, 0].max()),
            float(on_table[:, 1].max()),
        ).grown(margin_mm, width_mm, depth_mm)
        if box.area_mm2 > 0:
            boxes.append(box)
    return boxes


def merged(boxes: list[Box]) -> list[Box]:
    """Boxes joined into their union where that covers no more of the table than the two apart, until none is: the
    windows measured again. Boxes that overlap more thinly stay apart (a base in both is measured in each). Each box
    is compared with all the others at once: a table whose light changed is hundreds of boxes."""
    a = np.array([[b.x0_mm, b.y0_mm, b.x1_mm, b.y1_mm] for b in boxes], dtype=np.float64).reshape(-1, 4)
    joined = True
    while joined:
        joined = False
        i = 0
        while i < len(a):
            j = _first_to_join(a, i)
            if j is None:
                i += 1
                continue
            a[i, :2] = np.minimum(a[i, :2], a[j, :2])
            a[i, 2:] = np.maximum(a[i, 2:], a[j, 2:])
            a = np.delete(a, j, axis=0)
            i -= int(j < i)
            joined = True
    return [Box(*(float(v) for v in row)) for row in a]


def _first_to_join(a: NDArray[np.float64], i: int) -> int | None:
    """The first box of ``a`` (N, 4) (x0, y0, x1, y1) other than ``i`` that overlaps box ``i`` and whose union with it
    covers no more than the two apart; None if none does."""
    b = a[i]
    overlap = (b[0] <= a[:, 2]) & (a[:, 0] <= b[2]) & (b[1] <= a[:, 3]) & (a[:, 1] <= b[3])
    area = np.clip(a[:, 2] - a[:, 0], 0.0, None) * np.clip(a[:, 3] - a[:, 1], 0.0, None)
    union = (np.maximum(b[2], a[:, 2]) - np.minimum(b[0], a[:, 0])) * (
        np.maximum(b[3], a[:, 3]) - np.minimum(b[1], a[:, 1])
    )
    ok = overlap & (union <= area[i] + area)
    ok[i] = False
    found = np.flatnonzero(ok)
    return int(found[0]) if found.size else None


# Points sampled over a base's place: its centre and two rings, at 0.4 and 0.8 of its radius (the rim's edge and a
# shadow beside it are left out: a neighbour moving changes those).
_PLACE_RINGS = ((0.4, 6), (0.8, 12))


def changed_share(
    mask: NDArray[np.bool_],
    calibration: TableCalibration,
    centers_mm: NDArray[np.float64],
    radii_mm: NDArray[np.float64],
) -> NDArray[np.float64]:
    """(N,) the share of each base's place, centres ``centers_mm`` (N, 2) and radii ``radii_mm`` (N,) on the table,
    that changed in ``mask`` (h, w), a small copy of frames of the calibration's size; a point outside the frame
    counts as changed (nothing there can be told)."""
    offsets = [np.zeros((1, 2))]
    for share, count in _PLACE_RINGS:
        angles = np.arange(count) * (2.0 * math.pi / count)
        offsets.append(share * np.column_stack([np.cos(angles), np.sin(angles)]))
    unit = np.concatenate(offsets)
    n = len(centers_mm)
    if n == 0:
        return np.empty(0)
    points = centers_mm[:, None, :] + radii_mm[:, None, None] * unit[None]
    px = calibration.table_to_image(points.reshape(-1, 2), 0.0)
    small_h, small_w = mask.shape
    u = np.round((px[:, 0] + 0.5) * small_w / calibration.image_width - 0.5)
    v = np.round((px[:, 1] + 0.5) * small_h / calibration.image_height - 0.5)
    inside = np.isfinite(u) & np.isfinite(v) & (u >= 0) & (u < small_w) & (v >= 0) & (v < small_h)
    hit = np.ones(len(u), dtype=bool)
    hit[inside] = mask[v[inside].astype(np.intp), u[inside].astype(np.intp)]
    return np.asarray(hit.reshape(n, -1).mean(axis=1), dtype=np.float64)
