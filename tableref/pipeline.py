"""The wiring from a camera frame to a table state: calibrate, rectify, find bases, measure them in millimetres.

Each stage keeps to its own units: calibration maps pixels to table millimetres, vision finds circles in a
rectified top-down image, and only here do the two meet to become a :class:`rules.TableState`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import cv2
import numpy as np
from numpy.typing import NDArray

import rules
from calibration.camera import CameraModel
from calibration.spec import TableSpec
from calibration.table import TableCalibration, calibrate_table, rectified_to_table, table_to_rectified
from tableref.assign import centres_mm, gated_assignment, match_models
from tableref.changes import changed_boxes, changed_mask, merged
from tableref.config import Config
from tableref.motion import thumbnail
from tableref.settings import PipelineSettings
from tableref.sources import deblock_blur_px
from vision.detect import detect_bases, fit_known_bases
from vision.detections import BaseDetections
from vision.parallax import RimParallax

MODEL_ID_PREFIX = "m"


@dataclass(frozen=True, eq=False)
class EmptyTable:
    """The table seen empty at set-up (its terrain on it, no models): a frame and that frame's own calibration, so
    the camera may have moved since. What changed from it is a strong cue of a base (see :mod:`vision.reference`)."""

    frame_bgr: NDArray[np.uint8]
    calibration: TableCalibration
    _views: dict[float, NDArray[np.uint8]] = field(default_factory=dict, repr=False)

    def topdown(self, px_per_mm: float) -> NDArray[np.uint8]:
        """The empty table's top-down view at ``px_per_mm`` (made once per scale)."""
        if px_per_mm not in self._views:
            self._views[px_per_mm] = self.calibration.rectify(self.frame_bgr, px_per_mm)
        return self._views[px_per_mm]


def roster_sizes(config: Config, roster: rules.TableState) -> Config:
    """``config`` with the standard base sizes a detection may snap to cut down to the round sizes of ``roster``,
    where it lists every model on the table: a circle of another size is no model of this game (a token, a printed
    ring) or a misread one. Unchanged where the roster has no round base."""
    sizes = sorted({round(m.base.semi_axes_mm[0] * 2, 1) for m in roster.models if isinstance(m.base, rules.RoundBase)})
    if not sizes:
        return config
    return replace(config, vision=replace(config.vision, base_sizes_mm=tuple(sizes)))


def empty_table(
    frame_bgr: NDArray[np.uint8], spec: TableSpec, config: Config, camera: CameraModel | None = None
) -> EmptyTable:
    """The empty table from a frame of it, calibrated on its own markers. Raises the calibration's errors when the
    frame does not show the table's markers."""
    return EmptyTable(frame_bgr, calibrate_table(frame_bgr, spec, camera, settings=config.calibration))


@dataclass(frozen=True)
class FrameAnalysis:
    """One frame measured.

    ``state`` has the models in table millimetres (unit null unless a roster gave them one), with each model's
    ``sigma_mm``; ``detections`` are in the pixels of the top-down view made at ``px_per_mm``;
    ``timings_ms`` gives the time of each step.
    """

    state: rules.TableState
    calibration: TableCalibration
    detections: BaseDetections
    px_per_mm: float
    timings_ms: Mapping[str, float]
    # (N,) the part of each model's sigma that changes from frame to frame (the edge fit), in state order: it
    # averages down over a burst of frames, the rest (calibration, rim height, lens) does not.
    sigma_random_mm: NDArray[np.float64]
    # (h, w) small grey copy of the frame as it was where each place was last measured (:mod:`tableref.changes`):
    # the next frame is compared with it. None: the next frame is measured whole.
    overview: NDArray[np.uint8] | None = None
    # share (0-1) of the top-down view measured in this frame; the rest was kept from the frame before
    remeasured_share: float = 1.0
    # what the roster declared when the bases were measured (None: no roster)
    roster_key: frozenset[tuple[str, object]] | None = None

    def outlines_px(self, vertices: int = 48) -> NDArray[np.float64]:
        """(N, vertices, 2) base outlines of the state's models in real frame pixels, for drawing overlays."""
        n = len(self.state.models)
        if n == 0:
            return np.empty((0, vertices, 2))
        angles = np.linspace(0.0, 2.0 * math.pi, vertices, endpoint=False)
        ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
        centers = np.array([[m.x_mm, m.y_mm] for m in self.state.models])
        radii = np.array([m.base.semi_axes_mm[0] for m in self.state.models])
        points = centers[:, None, :] + radii[:, None, None] * ring[None]
        height = self.rim_height_mm if self.calibration.heights_corrected else 0.0
        frame = self.calibration.table_to_image(points.reshape(-1, 2), height)
        return frame.reshape(n, vertices, 2)

    @property
    def rim_height_mm(self) -> float:
        value = self.state.extras.get("calibration", {}).get("rim_height_mm", 0.0)
        return float(value)


def rectified_scale(calibration: TableCalibration, settings: PipelineSettings) -> float:
    """px per mm of the top-down view: the frame's own scale, clamped to the settings' range."""
    return float(np.clip(calibration.px_per_mm, settings.min_rectified_px_per_mm, settings.max_rectified_px_per_mm))


def marker_mask(spec: TableSpec, px_per_mm: float, size_px: tuple[int, int], margin_mm: float) -> NDArray[np.uint8]:
    """(H, W) uint8 mask of a top-down view, nonzero over the spec's markers (grown by ``margin_mm``)."""
    width, height = size_px
    mask = np.zeros((height, width), dtype=np.uint8)
    for m in spec.markers:
        grown = type(m)(m.id, m.size_mm + 2.0 * margin_mm, m.x_mm, m.y_mm, m.rotation_deg)
        corners = table_to_rectified(grown.corners_mm(), px_per_mm)
        cv2.fillConvexPoly(mask, np.round(corners).astype(np.int32), 255)
    return mask


def rim_parallax(calibration: TableCalibration, px_per_mm: float, rim_height_mm: float) -> RimParallax | None:
    """How base walls of ``rim_height_mm`` stretch outlines in the top-down view at ``px_per_mm`` (None when the
    camera position is unknown)."""
    if not calibration.heights_corrected or rim_height_mm <= 0:
        return None
    assert calibration.camera_position_mm is not None
    nadir = table_to_rectified(calibration.camera_position_mm[None, :2], px_per_mm)[0]
    height = float(calibration.camera_position_mm[2])
    return RimParallax((float(nadir[0]), float(nadir[1])), rim_height_mm / (height - rim_height_mm))


def seen_height_mm(
    calibration: TableCalibration, rim_height_mm: float | NDArray[np.float64]
) -> float | NDArray[np.float64]:
    """The height whose parallax maps a fitted outline centre to the footprint: the stadium's middle lies
    halfway between footprint and top in the top-down view, which is where a point at height
    H h / (2 H - h) appears (H the camera height). ``rim_height_mm``: a float, or (N,) one per base."""
    if not calibration.heights_corrected:
        return 0.0
    assert calibration.camera_position_mm is not None
    height = float(calibration.camera_position_mm[2])
    return height * rim_height_mm / (2.0 * height - rim_height_mm)


def _position_sigma_mm(
    calibration: TableCalibration,
    detections: BaseDetections,
    centers_mm: NDArray[np.float64],
    px_per_mm: float,
    settings: PipelineSettings,
    height_share: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(N,) 1-sigma position uncertainty per axis, split into the part that varies from frame to frame (the
    edge fit) and the part that does not (table mapping, rim height, uncorrected lens). ``height_share`` (N,):
    how much of a rim height error moves each centre (see :class:`vision.BaseDetections`)."""
    fit = np.asarray(detections.center_sigma_px / px_per_mm, dtype=np.float64)
    mapping = calibration.mapping_sigma_mm(centers_mm) if len(centers_mm) else np.empty(0)
    terms = [mapping, np.asarray(detections.model_sigma_mm, dtype=np.float64)]
    if calibration.heights_corrected:
        # A rim height error dh moves the corrected centre by dh * (distance from the nadir) / camera height.
        assert calibration.camera_position_mm is not None
        nadir = calibration.camera_position_mm[:2]
        lever = np.hypot(*(centers_mm - nadir).T) / float(calibration.camera_position_mm[2])
        # a centre the edges read sits at about half the rim height, so half of a rim height error shows; the
        # appearance fit finds each base's own height
        terms.append(0.5 * settings.rim_height_sigma_mm * lever * height_share)
    if not calibration.lens_corrected:
        terms.append(np.full(len(centers_mm), settings.uncorrected_lens_sigma_mm))
    return fit, np.asarray(np.sqrt(np.sum(np.square(terms), axis=0)), dtype=np.float64)


def size_sigma_mm(
    fitted_mm: NDArray[np.float64],
    snapped_mm: NDArray[np.float64],
    sizes_mm: Sequence[float],
    fit_sigma_mm: float | NDArray[np.float64],
) -> NDArray[np.float64]:
    """(N,) 1-sigma uncertainty of each snapped base size: the spread of the standard sizes weighted by how well
    each explains the fitted diameter (N,), a fit being good to ``fit_sigma_mm`` (one for all, or (N,)). Near zero
    for a size far from its neighbours (50 against 40 and 60), about half a step between close ones (25, 27,
    28.5)."""
    if len(fitted_mm) == 0:
        return np.empty(0)
    sizes = np.asarray(sizes_mm, dtype=np.float64)[None, :]
    # a size known (sigma 0) is the snapped one: the nearest standard size takes all the weight
    scale = np.maximum(np.broadcast_to(np.asarray(fit_sigma_mm, dtype=np.float64), fitted_mm.shape), 1e-6)[:, None]
    log_p = -0.5 * ((fitted_mm[:, None] - sizes) / scale) ** 2
    p = np.exp(log_p - log_p.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return np.asarray(np.sqrt(np.sum(p * (sizes - snapped_mm[:, None]) ** 2, axis=1)), dtype=np.float64)


def _footprints_mm(
    calibration: TableCalibration,
    detections: BaseDetections,
    px_per_mm: float,
    settings: PipelineSettings,
    rim_heights_mm: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """(N, 2) table mm where each detected base stands; ``rim_heights_mm`` (N,) each outline's rim height (None:
    the one assumed)."""
    seen_mm = rectified_to_table(detections.center_px, px_per_mm) if len(detections) else np.empty((0, 2))
    rims_mm = np.broadcast_to(
        np.asarray(settings.rim_height_mm if rim_heights_mm is None else rim_heights_mm, dtype=np.float64),
        (len(seen_mm),),
    )
    height = np.asarray(seen_height_mm(calibration, rims_mm), dtype=np.float64)
    # An outline read by its top disc (rim_height_share 2) was moved back half the parallax shift of the rim height
    # assumed, to where the outline's middle would stand: it goes back onto the top, which stands at the rim's whole
    # height.
    top = np.asarray(detections.rim_height_share, dtype=np.float64) >= 2.0
    if calibration.heights_corrected and top.any():
        assert calibration.camera_position_mm is not None
        nadir = calibration.camera_position_mm[:2]
        camera_mm = float(calibration.camera_position_mm[2])
        half_ratio = 0.5 * settings.rim_height_mm / (camera_mm - settings.rim_height_mm)
        seen_mm = seen_mm.copy()
        seen_mm[top] = nadir + (seen_mm[top] - nadir) / (1.0 - half_ratio)
        height = np.where(top, rims_mm, height)
    # The outline's fitted centre is where the base's axis at about half the rim height (or at the top) meets the
    # table along its ray; the model stands below it.
    return calibration.parallax_corrected(seen_mm, height) if len(seen_mm) else seen_mm


def standing_on(
    table: rules.Table, models: Sequence[rules.Model], bases: Mapping[str, rules.RoundBase | rules.OvalBase]
) -> rules.TableState | None:
    """``models`` (where they were last seen) standing on the ``bases`` declared for them (by model id), as the
    ``roster`` of :func:`detect_frame`; models with no declared base are left out. None when none is left. Only
    where they stand and what they stand on matter there: no units (a unit's leader may not be among them)."""
    listed = tuple(replace(m, unit=None, base=bases[m.id]) for m in models if m.id in bases)
    return rules.TableState(table, models=listed) if listed else None


def known_bases(
    calibration: TableCalibration,
    detections: BaseDetections,
    px_per_mm: float,
    roster: rules.TableState,
    settings: PipelineSettings,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """What the roster says each detection stands on: (N,) diameters (mm) and (N,) rim heights over the one
    assumed (``rim_height_mm``), NaN where it says nothing. A detection takes them from the roster model it
    matches (as :func:`carry_identities` matches them) when both bases are round and the size measured is within
    ``roster_size_tolerance_mm`` of the roster's: farther, the match itself is in doubt."""
    n = len(detections)
    diameter, height = np.full(n, np.nan), np.full(n, np.nan)
    if n == 0 or not roster.models:
        return diameter, height
    seen = _footprints_mm(calibration, detections, px_per_mm, settings)
    listed = centres_mm(roster.models)
    cost = np.hypot(seen[:, None, 0] - listed[None, :, 0], seen[:, None, 1] - listed[None, :, 1])
    rows, cols = gated_assignment(cost, settings.roster_gate_mm)
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        base = roster.models[j].base
        if not isinstance(base, rules.RoundBase):
            continue
        if abs(base.diameter_mm - float(detections.diameter_mm[i])) > settings.roster_size_tolerance_mm:
            continue
        diameter[i] = base.diameter_mm
        if base.height_mm is not None:
            height[i] = base.height_mm / settings.rim_height_mm
    return diameter, height


def state_from_detections(
    spec: TableSpec,
    calibration: TableCalibration,
    detections: BaseDetections,
    px_per_mm: float,
    settings: PipelineSettings,
    sizes_mm: Sequence[float],
    declared_rims_mm: NDArray[np.float64] | None = None,
    kept: NDArray[np.bool_] | None = None,
) -> tuple[rules.TableState, NDArray[np.float64]]:
    """Detections of a top-down view -> a table state of unassigned models, ids ``m1, m2, ...`` along the table
    rows (by y, then x) so that ids do not depend on detection order, and the frame-to-frame part of each
    model's sigma (N,) in state order. ``declared_rims_mm`` (N,): the rim height a roster declares for each
    outline the edges read (NaN: the one assumed), which places it and leaves no doubt about that height.
    ``kept`` (N,): the rows kept from an earlier frame where nothing changed that could be seen: each may have moved
    by a little less than a change that shows, so its sigma widens by ``kept_sigma_px``."""
    share = np.asarray(detections.rim_height_share, dtype=np.float64)
    rims = np.full(len(detections), settings.rim_height_mm)
    if declared_rims_mm is not None:
        declared = np.isfinite(declared_rims_mm) & (share > 0)
        rims = np.where(declared, declared_rims_mm, rims)
        share = np.where(declared, 0.0, share)
    centers_mm = _footprints_mm(calibration, detections, px_per_mm, settings, rims)
    random, systematic = _position_sigma_mm(calibration, detections, centers_mm, px_per_mm, settings, share)
    if kept is not None:
        systematic = np.hypot(systematic, np.where(kept, settings.kept_sigma_px / px_per_mm, 0.0))
    sigma = np.hypot(random, systematic)
    size_sigma = size_sigma_mm(
        2.0 * detections.radius_px / px_per_mm, detections.diameter_mm, sizes_mm, detections.diameter_sigma_mm
    )
    order = np.lexsort((centers_mm[:, 0], centers_mm[:, 1])) if len(centers_mm) else np.empty(0, dtype=np.intp)
    models = tuple(
        rules.Model(
            id=f"{MODEL_ID_PREFIX}{k + 1}",
            unit=None,
            x_mm=float(centers_mm[i, 0]),
            y_mm=float(centers_mm[i, 1]),
            base=rules.RoundBase(float(detections.diameter_mm[i]), round(float(size_sigma[i]), 3)),
            sigma_mm=float(sigma[i]),
            # the top-down view's axes are the table's, at px_per_mm: a doubt in mm there is one on the table
            doubt_mm=(float(detections.model_doubt_mm[i, 0]), float(detections.model_doubt_mm[i, 1])),
        )
        for k, i in enumerate(order)
    )
    report = dict(calibration.report())
    report["rim_height_mm"] = settings.rim_height_mm if calibration.heights_corrected else 0.0
    state = rules.TableState(
        table=rules.Table(spec.width_mm, spec.depth_mm),
        models=models,
        extras=MappingProxyType({"calibration": report}),
        measured=True,
    )
    return state, random[order]


def _roster_key(roster: rules.TableState | None) -> frozenset[tuple[str, object]] | None:
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


def _changed_windows(
    frame_bgr: NDArray[np.uint8],
    overview: NDArray[np.uint8],
    previous: FrameAnalysis,
    mask: NDArray[np.uint8],
    max_diameter_mm: float,
    settings: PipelineSettings,
    blur_px: float = 0.0,
) -> tuple[list[_Window], NDArray[np.float64], NDArray[np.uint8], float] | None:
    """The windows of the top-down view to measure again since ``previous``, the changed boxes (M, 4) in its
    pixels, the overview to keep (the previous one where nothing changed: a slow drift, such as the light
    changing, adds up until it counts) and the share (0-1) of the view the windows cover. None when too much of the
    table changed to gain from windows. The windows' views are smoothed by ``blur_px`` (see :func:`_smoothed`)."""
    assert previous.overview is not None
    calibration, px_per_mm = previous.calibration, previous.px_per_mm
    changed = changed_mask(
        overview, previous.overview, settings.change_min_delta, settings.change_noise_sigmas, settings.change_min_pixels
    )
    kept_overview = np.where(changed, overview, previous.overview).astype(np.uint8)
    boxes = changed_boxes(changed, calibration, settings.change_margin_mm)
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
    parts = [
        _Window(
            box,
            _smoothed(calibration.rectify(frame_bgr, px_per_mm, box), blur_px),
            mask[box[1] : box[3], box[0] : box[2]],
        )
        for box in boxes_px
        if box[2] > box[0] and box[3] > box[1]
    ]
    corners_mm = np.array([[b.x0_mm, b.y0_mm, b.x1_mm, b.y1_mm] for b in boxes], dtype=np.float64).reshape(-1, 2)
    changed_px = table_to_rectified(corners_mm, px_per_mm).reshape(-1, 4)
    return parts, changed_px, kept_overview, share


def _measure_again(
    frame_bgr: NDArray[np.uint8],
    previous: FrameAnalysis,
    parts: list[_Window],
    changed_px: NDArray[np.float64],
    config: Config,
    parallax: RimParallax | None,
    roster: rules.TableState | None,
    reference: EmptyTable | None = None,
) -> tuple[BaseDetections, NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """The previous frame's detections where nothing changed, and the windows' own where something did (fitted
    again at the roster's sizes, or at the ones read, as :func:`detect_frame` does); the roster's diameters and rim
    height ratios (N,) for the rows (NaN without a roster); which rows (N,) were kept from the previous frame."""
    px_per_mm = previous.px_per_mm
    kept = previous.detections[~_touches(previous.detections, changed_px)]
    found: list[BaseDetections] = []
    for part in parts:
        u0, v0 = part.offset_px
        # only bases that reach into a changed box are kept: the others the window shows are not looked at
        wanted = changed_px - np.array([u0, v0, u0, v0])
        empty = None
        if reference is not None:
            u0_px, v0_px, u1_px, v1_px = part.box_px
            empty = reference.topdown(px_per_mm)[v0_px:v1_px, u0_px:u1_px]
        rows = detect_bases(part.topdown, px_per_mm, config.vision, part.mask, part.parallax(parallax), wanted, empty)
        found.append(rows.translated(part.offset_px))
    # a window's rows that reach no changed box were measured in the frame before, and are kept from it
    fresh = [rows[_touches(rows, changed_px)] for rows in found]
    for k, rows in enumerate(fresh):
        if len(kept) and len(rows):
            apart = rows.center_px[:, None, :] - kept.center_px[None, :, :]
            same = np.hypot(apart[..., 0], apart[..., 1]) < 0.5 * (rows.radius_px[:, None] + kept.radius_px[None, :])
            fresh[k] = rows[~np.any(same, axis=1)]
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
    return every[order], diameter[order], height[order], carried[order]


def detect_frame(
    frame_bgr: NDArray[np.uint8],
    spec: TableSpec,
    config: Config,
    camera: CameraModel | None = None,
    calibration: TableCalibration | None = None,
    roster: rules.TableState | None = None,
    previous: FrameAnalysis | None = None,
    keep_overview: bool = False,
    reference: EmptyTable | None = None,
    whole_roster: bool = False,
) -> FrameAnalysis:
    """Measure every base in a frame. ``calibration`` from an earlier frame of the same fixed camera is reused
    (calibrating on an empty table, then keeping it, avoids hands and models touching markers). With a
    ``roster`` (the table state the models are carried over from), each base it lists is fitted again at the size
    it declares, and at the rim height it declares where it does (see :func:`known_bases`; the calibration report's
    ``declared_bases`` counts them); where the appearance fit does not run (about 1 px/mm), an outline the edges
    read is placed at the declared rim height. Where the appearance fit runs, the bases no roster declares are fitted
    again at the sizes they were read at (``refit_read_sizes``). The models are still unassigned
    (:func:`carry_identities` assigns them).

    ``previous``, the analysis of an earlier frame of the same camera position (made with this ``calibration``, the
    same object, and the same roster declarations), lets only the places that changed since be measured again: a
    base that reaches into no changed place keeps its measurement from that frame (``remeasured_share`` says how
    much of the view was measured; 1 when the whole frame was, as it is when the windows to measure would cover
    more than ``max_changed_share`` of it). Such frames are not independent measurements: do not fuse them. The
    analysis keeps what its next frame is compared with (``overview``) when given a ``previous`` or asked to
    (``keep_overview``: the first frame of a watch). ``reference``, the table seen empty: a base must have changed
    since (see :func:`vision.detect_bases`). ``whole_roster``: the roster lists every model on the table, so a base
    is of one of its sizes (see :func:`roster_sizes`)."""
    if whole_roster and roster is not None:
        config = roster_sizes(config, roster)
    settings: PipelineSettings = config.pipeline
    timings: dict[str, float] = {}
    start = time.perf_counter()
    if calibration is None:
        calibration = calibrate_table(frame_bgr, spec, camera, settings=config.calibration)
    timings["calibrate"] = (time.perf_counter() - start) * 1e3
    # a compressed frame's top-down views are smoothed before the bases are looked for in them
    blur_px = deblock_blur_px(frame_bgr, settings.deblock_min_blockiness, settings.deblock_blur_px)
    px_per_mm = rectified_scale(calibration, settings)
    size_px = calibration.rectified_size(px_per_mm)
    mask = marker_mask(spec, px_per_mm, size_px, settings.marker_mask_margin_mm)
    parallax = rim_parallax(calibration, px_per_mm, settings.rim_height_mm)
    t = time.perf_counter()
    overview = None
    if previous is not None or keep_overview:
        overview = thumbnail(frame_bgr, min(settings.change_thumb_px, calibration.image_width))
    windows = None
    if (
        previous is not None
        and overview is not None
        and _comparable(previous, calibration, px_per_mm, overview, roster)
    ):
        max_diameter_mm = max(config.vision.base_sizes_mm) + config.vision.snap_tolerance_mm
        windows = _changed_windows(frame_bgr, overview, previous, mask, max_diameter_mm, settings, blur_px)
    timings["changes"] = (time.perf_counter() - t) * 1e3
    declared: dict[str, int] | None = None
    declared_rims_mm = None
    if windows is not None:
        assert previous is not None
        parts, changed_px, overview, remeasured = windows
        t = time.perf_counter()
        detections, diameter, height, kept = _measure_again(
            frame_bgr, previous, parts, changed_px, config, parallax, roster, reference
        )
        timings["detect"] = (time.perf_counter() - t) * 1e3
    else:
        detections, diameter, height = _measure_whole(
            frame_bgr, calibration, px_per_mm, mask, parallax, config, roster, reference, timings, blur_px
        )
        remeasured = 1.0
        kept = None
    if roster is not None:
        # outlines the edges read (where the appearance fit does not run) are placed at the declared height
        declared_rims_mm = height * settings.rim_height_mm
        # a base fitted at a known size carries no size doubt: that tells the ones fitted again
        held = np.isfinite(diameter) & (detections.diameter_sigma_mm == 0.0)
        declared = {"sizes": int(held.sum()), "rim_heights": int((held & np.isfinite(height)).sum())}
    state, random = state_from_detections(
        spec, calibration, detections, px_per_mm, settings, config.vision.base_sizes_mm, declared_rims_mm, kept
    )
    if declared is not None:
        report = {**state.extras["calibration"], "declared_bases": declared}
        state = replace(state, extras=MappingProxyType({**state.extras, "calibration": report}))
    timings["total"] = (time.perf_counter() - start) * 1e3
    return FrameAnalysis(
        state,
        calibration,
        detections,
        px_per_mm,
        MappingProxyType(timings),
        random,
        overview,
        remeasured,
        _roster_key(roster),
    )


def _comparable(
    previous: FrameAnalysis,
    calibration: TableCalibration,
    px_per_mm: float,
    overview: NDArray[np.uint8],
    roster: rules.TableState | None,
) -> bool:
    """Whether ``previous`` was measured as this frame is (the same calibration object, scale, overview size and
    roster declarations), so that only what changed since need be measured again."""
    return (
        previous.calibration is calibration
        and previous.px_per_mm == px_per_mm
        and previous.overview is not None
        and previous.overview.shape == overview.shape
        and previous.roster_key == _roster_key(roster)
    )


def _smoothed(view: NDArray[np.uint8], blur_px: float) -> NDArray[np.uint8]:
    """``view`` smoothed by a Gaussian of ``blur_px`` (0: the view itself): a compressed frame's block edges, which
    read as rims, fade under it (:func:`tableref.sources.deblock_blur_px`)."""
    return view if blur_px <= 0 else np.asarray(cv2.GaussianBlur(view, (0, 0), blur_px), dtype=np.uint8)


def _measure_whole(
    frame_bgr: NDArray[np.uint8],
    calibration: TableCalibration,
    px_per_mm: float,
    mask: NDArray[np.uint8],
    parallax: RimParallax | None,
    config: Config,
    roster: rules.TableState | None,
    reference: EmptyTable | None,
    timings: dict[str, float],
    blur_px: float = 0.0,
) -> tuple[BaseDetections, NDArray[np.float64], NDArray[np.float64]]:
    """Every base of the whole frame, fitted again at the roster's sizes and rim heights where it declares them:
    (detections, declared diameter (N,), declared height ratio (N,); NaN where not declared). Adds the rectification's
    and the detection's times (ms) to ``timings``. The view is smoothed by ``blur_px`` (see :func:`_smoothed`)."""
    t = time.perf_counter()
    topdown = _smoothed(calibration.rectify(frame_bgr, px_per_mm), blur_px)
    timings["rectify"] = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    empty = None if reference is None else reference.topdown(px_per_mm)
    detections = detect_bases(topdown, px_per_mm, config.vision, mask, parallax, reference_bgr=empty)
    diameter = height = np.full(len(detections), np.nan)
    if roster is not None:
        diameter, height = known_bases(calibration, detections, px_per_mm, roster, config.pipeline)
    detections = fit_known_bases(topdown, px_per_mm, config.vision, detections, diameter, height, parallax)
    timings["detect"] = (time.perf_counter() - t) * 1e3
    return detections, diameter, height


def fuse_frames(analyses: list[FrameAnalysis], gate_mm: float) -> rules.TableState:
    """One state from a burst of frames of an unchanged table: each model of the first frame averaged with the
    detections matched to it in the others. The frame-to-frame part of its sigma shrinks with the square root of
    the frames it was seen in; the rest (calibration, rim height, lens, and a doubt along a line) does not average
    away."""
    if not analyses:
        raise ValueError("fuse_frames needs at least one frame")
    if any(a.remeasured_share < 1.0 for a in analyses):
        # a base kept from the frame before is that frame's measurement again, not another one to average
        raise ValueError(
            "fuse_frames needs frames measured whole, got frames measured in part (detect_frame's previous)"
        )
    first = analyses[0]
    total = np.array([m.sigma_mm for m in first.state.models])
    systematic2 = np.maximum(total**2 - first.sigma_random_mm**2, 0.0)
    sums = centres_mm(first.state.models)
    random2 = first.sigma_random_mm**2
    seen = np.ones(len(sums))
    for other in analyses[1:]:
        rows, cols = match_models(first.state.models, other.state.models, gate_mm)
        sums[rows] += centres_mm(other.state.models)[cols]
        random2[rows] += other.sigma_random_mm[cols] ** 2
        seen[rows] += 1
    mean = sums / seen[:, None]
    # The mean of n fits with variances v_k has variance sum(v_k) / n^2.
    sigma = np.sqrt(systematic2 + random2 / seen**2)
    models = tuple(
        replace(m, x_mm=float(mean[k, 0]), y_mm=float(mean[k, 1]), sigma_mm=float(sigma[k]))
        for k, m in enumerate(first.state.models)
    )
    extras = dict(first.state.extras)
    extras["calibration"] = {**extras.get("calibration", {}), "frames_fused": len(analyses)}
    return replace(first.state, models=models, extras=MappingProxyType(extras))


def standing_on_declared(model: rules.Model, base: rules.RoundBase | rules.OvalBase) -> rules.Model:
    """``model`` standing on ``base``, declared for it (by a roster, or by a user where the camera read another size).
    Where both bases are round, a size read wrong by d mm (in diameter) widens the model's sigma by d / 2, in
    quadrature: the camera read part of the base (a circle inside its footprint, touching it on one side) or more
    than it (a circle about it and its shadow, or its figure), so the centre is off by about the radii's difference
    either way, and the measured size is not the base's."""
    if isinstance(model.base, rules.RoundBase) and isinstance(base, rules.RoundBase):
        misread_mm = abs(model.base.semi_axes_mm[0] - base.semi_axes_mm[0])
        return replace(model, base=base, sigma_mm=float(np.hypot(model.sigma_mm, misread_mm)))
    return replace(model, base=base)


def carry_identities(
    detected: rules.TableState, roster: rules.TableState, gate_mm: float, take_bases: bool = False
) -> rules.TableState:
    """Give each detected model the id and unit of the roster model it matches (minimum total distance, no match farther
    than ``gate_mm``). Unmatched detections keep fresh ids that clash with no roster id; roster models matched by
    no detection are ``unseen``, at the roster's place for them; the
    roster's units, terrain and table come along. With ``take_bases``, a matched model also stands on the roster
    model's base when both are round: the roster says what each model stands on, the camera only measures it. A
    size read wrong by d mm (in diameter) widens the model's sigma by d / 2, in quadrature."""
    det = detected.models
    ros = roster.models + roster.unseen
    rows, cols = match_models(det, ros, gate_mm)
    matched = dict(zip(rows.tolist(), cols.tolist(), strict=True))
    taken = {m.id for m in ros}
    fresh = (f"{MODEL_ID_PREFIX}{k}" for k in range(1, 10 * (len(det) + len(ros)) + 2))
    models = []
    for i, m in enumerate(det):
        if i in matched:
            r = ros[matched[i]]
            carried = replace(m, id=r.id, unit=r.unit)
            # whatever the size measured: kept as measured, a base read 8-11.5 mm too small left both the centre's
            # doubt and the size's in its gaps, and three calls at 1080p were wrongly clear. The camera measures
            # round bases only, and an oval's turn is not known
            if take_bases and isinstance(m.base, rules.RoundBase) and isinstance(r.base, rules.RoundBase):
                carried = standing_on_declared(carried, r.base)
            models.append(carried)
        else:
            new_id = next(x for x in fresh if x not in taken)
            taken.add(new_id)
            models.append(rules.Model(new_id, None, m.x_mm, m.y_mm, m.base, m.sigma_mm, m.doubt_mm))
    present = {m.id for m in models}
    unseen = tuple(r for r in ros if r.id not in present)
    known = present | {m.id for m in unseen}
    # A leader the roster names but does not place leads no one here.
    units = tuple(u if u.leader is None or u.leader in known else replace(u, leader=None) for u in roster.units)
    return rules.TableState(
        detected.table, units, tuple(models), roster.terrain, detected.extras, unseen, detected.measured
    )
