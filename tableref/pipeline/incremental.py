"""Measuring only what changed since the frame before: the windows of the top-down view to measure again, and the
rest kept from that frame (see :func:`tableref.pipeline.frame.detect_frame`'s ``previous``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

import rules
from calibration.table import TableCalibration, table_to_rectified
from tableref.pipeline.changes import changed_boxes, changed_since, merged
from tableref.pipeline.state import known_bases
from tableref.pipeline.view import over_markers, smoothed
from tableref.settings import PipelineSettings, Settings
from vision.circles import in_boxes
from vision.detect import detect_bases_and_doubts, fit_known_bases
from vision.detections import BaseDetections
from vision.doubts import Doubts
from vision.parallax import RimParallax

if TYPE_CHECKING:
    # only for annotations: frame.py measures a frame with the functions of this module
    from tableref.pipeline.frame import EmptyTable, FrameAnalysis


def roster_key(roster: rules.TableState | None) -> frozenset[tuple[str, object]] | None:
    """What a roster declares, by model id: a frame measured in part keeps the rest of the frame before only when
    the bases it was fitted at are still the ones declared."""
    return None if roster is None else frozenset((m.id, m.base) for m in roster.models)


@dataclass(frozen=True)
class _Window:
    """Part of the top-down view measured again: ``box_px`` (u0, v0, u1, v1), its image and its marker mask."""

    box_px: tuple[int, int, int, int]
    topdown: NDArray[np.uint8]
    mask: NDArray[np.uint8]

    @property
    def offset_px(self) -> tuple[float, float]:
        return (float(self.box_px[0]), float(self.box_px[1]))

    def parallax(self, whole: RimParallax | None) -> RimParallax | None:
        if whole is None:
            return None
        return RimParallax(
            (whole.nadir_px[0] - self.offset_px[0], whole.nadir_px[1] - self.offset_px[1]), whole.shift_ratio
        )


def _touches(detections: BaseDetections, boxes_px: NDArray[np.float64]) -> NDArray[np.bool_]:
    """(N,) True where a base's disc reaches into any of the boxes (M, 4) (u0, v0, u1, v1), pixels."""
    if len(detections) == 0 or len(boxes_px) == 0:
        return np.zeros(len(detections), dtype=np.bool_)
    c = detections.center_px[:, None, :]
    nearest_u = np.clip(c[..., 0], boxes_px[None, :, 0], boxes_px[None, :, 2])
    nearest_v = np.clip(c[..., 1], boxes_px[None, :, 1], boxes_px[None, :, 3])
    distance = np.hypot(c[..., 0] - nearest_u, c[..., 1] - nearest_v)
    return np.asarray(np.any(distance <= detections.radius_px[:, None], axis=1))


def _same_base(rows: BaseDetections, others: BaseDetections) -> NDArray[np.bool_]:
    """(len(rows),) True where a base of ``rows`` is one of ``others`` (centres closer than half their radii)."""
    apart = rows.center_px[:, None, :] - others.center_px[None, :, :]
    close = np.hypot(apart[..., 0], apart[..., 1]) < 0.5 * (rows.radius_px[:, None] + others.radius_px[None, :])
    return np.asarray(np.any(close, axis=1))


# the windows to measure again, the changed boxes, the overview to keep and the share of the view measured
ChangedWindows = tuple[list[_Window], NDArray[np.float64], NDArray[np.uint8], float]


def changed_windows(
    frame_bgr: NDArray[np.uint8],
    overview: NDArray[np.uint8],
    previous: FrameAnalysis,
    mask: NDArray[np.uint8],
    max_diameter_mm: float,
    settings: PipelineSettings,
    blur_px: float = 0.0,
) -> ChangedWindows | None:
    """The windows of the top-down view to measure again since ``previous``, the changed boxes (M, 4) in its pixels, the
    overview to keep (the previous one where nothing changed: a slow drift, such as the light changing, adds up until it
    counts) and the share (0-1) of the view the windows cover. None when too much of the table changed to gain from
    windows. The windows' views are smoothed by ``blur_px`` (see :func:`~tableref.pipeline.view.smoothed`)."""
    assert previous.overview is not None
    calibration, px_per_mm = previous.calibration, previous.px_per_mm
    changed = changed_since(overview, previous.overview, settings)
    # a colour copy's channels change together
    where = changed[..., None] if overview.ndim == 3 else changed
    kept_overview = np.where(where, overview, previous.overview).astype(np.uint8)
    boxes = changed_boxes(changed, calibration, settings.change_margin_mm, settings.change_cell_mm)
    spec = calibration.spec
    # a base that reaches into a changed box lies wholly within the largest base's diameter of it
    windows = merged(
        [b.grown(max_diameter_mm + settings.change_margin_mm, spec.width_mm, spec.depth_mm) for b in boxes]
    )
    size_px = calibration.rectified_size(px_per_mm)
    boxes_px = [w.window_px(px_per_mm, size_px) for w in windows]
    share = sum((u1 - u0) * (v1 - v0) for u0, v0, u1, v1 in boxes_px) / (size_px[0] * size_px[1])
    if share > settings.max_changed_share:
        return None
    parts = []
    for box in boxes_px:
        if box[2] > box[0] and box[3] > box[1]:
            topdown = smoothed(calibration.rectify(frame_bgr, px_per_mm, box), blur_px)
            part_mask = over_markers(mask[box[1] : box[3], box[0] : box[2]], topdown, px_per_mm, settings)
            parts.append(_Window(box, topdown, part_mask))
    corners_mm = np.array([[b.x0_mm, b.y0_mm, b.x1_mm, b.y1_mm] for b in boxes], dtype=np.float64).reshape(-1, 2)
    changed_px = table_to_rectified(corners_mm, px_per_mm).reshape(-1, 4)
    return parts, changed_px, kept_overview, share


def measure_again(
    frame_bgr: NDArray[np.uint8],
    previous: FrameAnalysis,
    parts: list[_Window],
    changed_px: NDArray[np.float64],
    config: Settings,
    parallax: RimParallax | None,
    roster: rules.TableState | None,
    reference: EmptyTable | None = None,
) -> tuple[BaseDetections, NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_], Doubts]:
    """The previous frame's detections where nothing changed, and the windows' own where something did (fitted again at
    the roster's sizes, or at the ones read, as :func:`~tableref.pipeline.frame.detect_frame` does); the roster's
    diameters and rim height ratios (N,) for the rows (NaN without a roster); which rows (N,) were kept from the
    previous frame; the places doubted, the previous frame's outside the changed boxes and the windows' inside."""
    px_per_mm = previous.px_per_mm
    kept = previous.detections[~_touches(previous.detections, changed_px)]
    doubts = [previous.doubts[~in_boxes(previous.doubts.center_px, changed_px)]]
    found: list[BaseDetections] = []
    for part in parts:
        u0, v0 = part.offset_px
        # only bases that reach into a changed box are kept: the others the window shows are not looked at
        wanted = changed_px - np.array([u0, v0, u0, v0])
        empty = None
        if reference is not None:
            u0_px, v0_px, u1_px, v1_px = part.box_px
            empty = reference.topdown(px_per_mm)[v0_px:v1_px, u0_px:u1_px]
        rows, doubted = detect_bases_and_doubts(
            part.topdown, px_per_mm, config.vision, part.mask, part.parallax(parallax), wanted, empty
        )
        found.append(rows.translated(part.offset_px))
        doubts.append(doubted.translated(part.offset_px))
    # a window's rows that reach no changed box were measured in the frame before, and are kept from it
    fresh = [rows[_touches(rows, changed_px)] for rows in found]
    for k, rows in enumerate(fresh):
        # windows may overlap: a base found in an earlier one is that one's
        before = BaseDetections.concatenate([kept, *fresh[:k]])
        if len(before) and len(rows):
            fresh[k] = rows[~_same_base(rows, before)]
    n = len(kept) + sum(len(rows) for rows in fresh)
    diameter, height = np.full(n, np.nan), np.full(n, np.nan)
    if roster is not None:
        every = BaseDetections.concatenate([kept, *fresh])
        diameter, height = known_bases(previous.calibration, every, px_per_mm, roster, config.pipeline)
    start = len(kept)
    for k, (part, rows) in enumerate(zip(parts, fresh, strict=True)):
        span = slice(start, start + len(rows))
        start += len(rows)
        if len(rows) == 0:
            continue
        refit = fit_known_bases(
            part.topdown,
            px_per_mm,
            config.vision,
            rows.translated((-part.offset_px[0], -part.offset_px[1])),
            diameter[span],
            height[span],
            part.parallax(parallax),
        )
        fresh[k] = refit.translated(part.offset_px)
    every = BaseDetections.concatenate([kept, *fresh])
    order = np.argsort(-every.score, kind="stable")
    carried = np.arange(len(every)) < len(kept)
    return every[order], diameter[order], height[order], carried[order], Doubts.concatenate(doubts)


def comparable(
    previous: FrameAnalysis,
    calibration: TableCalibration,
    px_per_mm: float,
    overview: NDArray[np.uint8],
    roster: rules.TableState | None,
) -> bool:
    """Whether ``previous`` was measured as this frame is (the same calibration object, scale, overview size and
    roster declarations, or some of them), so that only what changed since need be measured again."""
    return (
        previous.calibration is calibration
        and previous.px_per_mm == px_per_mm
        and previous.overview is not None
        and previous.overview.shape == overview.shape
        and _declares_no_more(roster_key(roster), previous.roster_key)
    )


def _declares_no_more(key: frozenset[tuple[str, object]] | None, before: frozenset[tuple[str, object]] | None) -> bool:
    """Whether a roster's declarations ``key`` (:func:`roster_key`) are among those a frame was measured with
    (``before``): a model taken off (a casualty) changes nothing the bases kept were fitted at."""
    if key is None or before is None:
        return key is before
    return key <= before
