"""The top-down view a frame is measured in: its scale, the markers masked out of it, how base rims stretch in it,
and the smoothing of a compressed frame."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.spec import TableSpec
from calibration.table import TableCalibration, table_to_rectified
from tableref.settings import PipelineSettings
from vision.parallax import RimParallax


def rectified_scale(calibration: TableCalibration, settings: PipelineSettings) -> float:
    """px per mm of the top-down view: the frame's own scale, clamped to the settings' range."""
    return float(np.clip(calibration.px_per_mm, settings.min_rectified_px_per_mm, settings.max_rectified_px_per_mm))


# What a marker's print shows at each pixel of marker_mask: 0 no marker; the rest are masked. PRINT_OUTER: the
# zone's outer part, paper or the mat beyond it (how wide the paper is, the spec does not say).
PRINT_UNSURE, PRINT_BLACK, PRINT_WHITE, PRINT_OUTER = 1, 2, 3, 4
# Pixels this near (mm) an edge between the print's black and white are either, as blurred and registered.
_PRINT_EDGE_MM = 0.75
# Paper surely lies this far (mm) about the black square: a marker's quiet zone is a cell or more.
_SURE_PAPER_MM = 3.0
# Fewer black or white pixels of a marker's print in view than this: its levels are not read (a window's edge).
_MIN_PRINT_PIXELS = 20


def marker_mask(spec: TableSpec, px_per_mm: float, size_px: tuple[int, int], margin_mm: float) -> NDArray[np.uint8]:
    """(H, W) uint8 mask of a top-down view, nonzero over the spec's markers (grown by ``margin_mm``): what the print
    shows there, ``PRINT_BLACK`` (the marker's black cells, as its dictionary draws them), ``PRINT_WHITE`` (its white
    cells and the paper within ``_SURE_PAPER_MM`` of them), ``PRINT_UNSURE`` (within ``_PRINT_EDGE_MM`` of an edge
    between them) or ``PRINT_OUTER`` (the rest of the zone)."""
    width, height = size_px
    mask = np.zeros((height, width), dtype=np.uint8)
    dictionary = spec.aruco_dictionary()
    cells = int(dictionary.markerSize) + 2
    side = 2 * max(1, round(_PRINT_EDGE_MM * px_per_mm)) + 1
    kernel = np.ones((side, side), np.uint8)
    grid = np.array([[0, 0], [cells, 0], [cells, cells], [0, cells]], np.float32)
    for m in spec.markers:
        grown = dataclasses.replace(m, size_mm=m.size_mm + 2.0 * margin_mm)
        outline = table_to_rectified(grown.corners_mm(), px_per_mm)
        x0, y0 = (max(int(np.floor(v)) - side, 0) for v in outline.min(axis=0))
        x1, y1 = (int(np.ceil(v)) + side + 1 for v in outline.max(axis=0))
        box = mask[y0:y1, x0:x1]
        if box.size == 0:
            continue
        zone = np.zeros(box.shape, np.uint8)
        cv2.fillConvexPoly(zone, np.round(outline - [x0, y0]).astype(np.int32), 255)
        paper = dataclasses.replace(m, size_mm=m.size_mm + 2.0 * min(_SURE_PAPER_MM, margin_mm))
        sure = np.zeros(box.shape, np.uint8)
        cv2.fillConvexPoly(
            sure, np.round(table_to_rectified(paper.corners_mm(), px_per_mm) - [x0, y0]).astype(np.int32), 1
        )
        # the cell grid (0 to cells each way) onto the marker's corners in the box
        square = (table_to_rectified(m.corners_mm(), px_per_mm) - [x0, y0]).astype(np.float32)
        to_box = cv2.getPerspectiveTransform(grid, square)
        ink = np.zeros(box.shape, np.uint8)
        for row, col in zip(*np.nonzero(cv2.aruco.generateImageMarker(dictionary, m.id, cells) < 128), strict=True):
            cell = np.array([[[col, row], [col + 1, row], [col + 1, row + 1], [col, row + 1]]], np.float32)
            cv2.fillConvexPoly(ink, np.round(cv2.perspectiveTransform(cell, to_box)[0]).astype(np.int32), 255)
        codes = np.where(ink > 0, PRINT_BLACK, np.where(sure > 0, PRINT_WHITE, PRINT_OUTER)).astype(np.uint8)
        codes[cv2.dilate(ink, kernel) != cv2.erode(ink, kernel)] = PRINT_UNSURE
        box[zone > 0] = codes[zone > 0]
    return mask


def over_markers(
    mask: NDArray[np.uint8], topdown_bgr: NDArray[np.uint8], px_per_mm: float, settings: PipelineSettings
) -> NDArray[np.uint8]:
    """``mask`` (H, W) uint8 of the markers (:func:`marker_mask`) with what stands over them let through: in each
    marker's zone, pixels unlike the print there (dark where it is white, light where it is black, between its black
    and its white, or coloured unlike its paper and its ink) in patches wider than ``marker_uncover_mm`` (the print's
    own blurred edges are thinner) that reach over the print itself (not the zone's outer part alone). A base set down
    partly over a marker is then seen there, where the rest of the print stays masked. ``topdown_bgr`` (H, W, 3) or
    (H, W) uint8, the view the mask is of."""
    if settings.marker_uncover_mm <= 0 or not np.any(mask):
        return mask
    bgr = np.asarray(topdown_bgr)
    side = max(3, round(settings.marker_uncover_mm * px_per_mm) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side))
    out = mask.copy()
    for x, y, w, h in _zones(mask):
        printed = mask[y : y + h, x : x + w]
        patch = np.ascontiguousarray(bgr[y : y + h, x : x + w])
        if patch.ndim == 2:
            patch = np.asarray(cv2.cvtColor(patch, cv2.COLOR_GRAY2BGR), np.uint8)
        odd = _not_print(np.asarray(cv2.cvtColor(patch, cv2.COLOR_BGR2LAB), np.uint8), printed, settings)
        if odd is None:
            continue
        # the opening keeps only what lies in the zone already (odd does)
        opened = cv2.morphologyEx(odd.astype(np.uint8), cv2.MORPH_OPEN, kernel)
        # a corner or two of the print's cells left after the opening is no base's part; nor is what lies in the zone's
        # outer part alone (the mat beyond a narrow paper, a print on it): only what reaches over the print itself
        count, labels, stats, _centroids = cv2.connectedComponentsWithStats(opened, connectivity=8)
        inner = np.isin(printed, (PRINT_BLACK, PRINT_WHITE, PRINT_UNSURE))
        reaches = np.zeros(count, np.bool_)
        reaches[np.unique(labels[inner & (labels > 0)])] = True
        big = reaches & np.concatenate([[False], stats[1:, cv2.CC_STAT_AREA] >= (3 * side) ** 2])
        out[y : y + h, x : x + w][big[labels]] = 0
    return out


def _zones(mask: NDArray[np.uint8]) -> list[tuple[int, int, int, int]]:
    """The boxes (x, y, w, h) px of the masked zones of ``mask`` (H, W), found on every eighth pixel each way (the
    markers lie far apart, a whole view is large; a sliver of a zone narrower than that at a window's edge stays
    masked)."""
    step = 8
    h, w = mask.shape
    coarse = np.ascontiguousarray(mask[::step, ::step])
    count, _labels, stats, _centroids = cv2.connectedComponentsWithStats((coarse > 0).astype(np.uint8), connectivity=8)
    boxes = []
    for k in range(1, count):
        x, y, bw, bh = (int(v) for v in stats[k, :4])
        x0, y0 = max((x - 1) * step, 0), max((y - 1) * step, 0)
        x1, y1 = min((x + bw + 1) * step, w), min((y + bh + 1) * step, h)
        boxes.append((x0, y0, x1 - x0, y1 - y0))
    return boxes


def _not_print(
    lab: NDArray[np.uint8], printed: NDArray[np.uint8], settings: PipelineSettings
) -> NDArray[np.bool_] | None:
    """(h, w) which pixels of one marker's zone look unlike its print, ``lab`` (h, w, 3) its Lab view (OpenCV's
    8-bit Lab) and ``printed`` (h, w) what the print shows (:func:`marker_mask`'s codes; 0 outside the zone); None
    where too little of its black or its white shows, or they differ by too little, to tell."""
    lightness = lab[..., 0]
    on_black, on_white = printed == PRINT_BLACK, printed == PRINT_WHITE
    # medians (of every other pixel each way): whatever stands over the print covers less than half of its black
    # and of its white
    every = (slice(None, None, 2), slice(None, None, 2))
    black_at, white_at = on_black[every], on_white[every]
    if black_at.sum() < _MIN_PRINT_PIXELS or white_at.sum() < _MIN_PRINT_PIXELS:
        return None
    sample = lab[every]
    black, white = float(np.median(sample[..., 0][black_at])), float(np.median(sample[..., 0][white_at]))
    span = white - black
    if span < settings.marker_min_contrast:
        return None
    share = settings.marker_print_share * span
    middle = 0.5 * (black + white)
    odd = (lightness > black + share) & (lightness < white - share)
    odd |= ((printed == PRINT_WHITE) | (printed == PRINT_OUTER)) & (lightness < middle)
    odd |= on_black & (lightness > middle)
    # coloured unlike the paper and unlike the ink (the two differ in a warm or a cool light)
    ab = lab[..., 1:].astype(np.int32)
    far = np.full(lightness.shape, True)
    for at in (white_at, black_at):
        a0, b0 = (int(np.median(sample[..., c][at])) for c in (1, 2))
        far &= (ab[..., 0] - a0) ** 2 + (ab[..., 1] - b0) ** 2 > settings.marker_print_chroma**2
    return np.asarray((odd | far) & (printed > 0), dtype=np.bool_)


def rim_parallax(calibration: TableCalibration, px_per_mm: float, rim_height_mm: float) -> RimParallax | None:
    """How base walls of ``rim_height_mm`` stretch outlines in the top-down view at ``px_per_mm`` (None when the
    camera position is unknown)."""
    if not calibration.heights_corrected or rim_height_mm <= 0:
        return None
    assert calibration.camera_position_mm is not None
    nadir = table_to_rectified(calibration.camera_position_mm[None, :2], px_per_mm)[0]
    height = float(calibration.camera_position_mm[2])
    return RimParallax((float(nadir[0]), float(nadir[1])), rim_height_mm / (height - rim_height_mm))


def smoothed(view: NDArray[np.uint8], blur_px: float) -> NDArray[np.uint8]:
    """``view`` smoothed by a Gaussian of ``blur_px`` (0: the view itself): a compressed frame's block edges, which
    read as rims, fade under it (:func:`tableref.sources.deblock_blur_px`)."""
    return view if blur_px <= 0 else np.asarray(cv2.GaussianBlur(view, (0, 0), blur_px), dtype=np.uint8)
