"""One camera frame measured: calibrate, rectify, find bases, measure them in millimetres.

Each stage keeps to its own units: calibration maps pixels to table millimetres, vision finds circles in a
rectified top-down view, and only here do the two meet to become a :class:`rules.TableState`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

import rules
from calibration.camera import CameraModel
from calibration.spec import TableSpec
from calibration.table import TableCalibration, calibrate_table, table_to_rectified
from tableref.assign import centres_mm, match_models
from tableref.outlines import outlines_mm
from tableref.pipeline.changes import change_view
from tableref.pipeline.incremental import ChangedWindows, changed_windows, comparable, measure_again, roster_key
from tableref.pipeline.state import (
    DeclaredBases,
    calibration_section,
    doubted_places,
    known_bases,
    state_from_detections,
    with_calibration_section,
    with_doubted,
)
from tableref.pipeline.view import marker_mask, over_markers, rectified_scale, rim_parallax, smoothed
from tableref.report import MM_PER_INCH
from tableref.settings import PipelineSettings, Settings
from tableref.sources import deblock_blur_px
from vision.detect import detect_bases_and_doubts, fit_known_bases
from vision.detections import BaseDetections
from vision.doubts import Doubts, outside_bases
from vision.expected import ExpectedBases
from vision.parallax import RimParallax


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


def roster_sizes(config: Settings, roster: rules.TableState) -> Settings:
    """``config`` with the standard base sizes a detection may snap to cut down to the round sizes of ``roster``,
    where it lists every model on the table: a circle of another size is no model of this game (a token, a printed
    ring) or a misread one. Unchanged where the roster has no round base."""
    sizes = sorted({round(m.base.semi_axes_mm[0] * 2, 1) for m in roster.models if isinstance(m.base, rules.RoundBase)})
    return _with_sizes(config, tuple(sizes))


def game_sizes(config: Settings, profile: rules.RuleProfile) -> Settings:
    """``config`` with the standard base sizes a detection may snap to cut down to the round sizes of ``profile``'s
    game (those up to the largest the detector knows): a base is read as the nearest of its own game's sizes, never
    as another game's between two of them (27 mm between 25 and 28.5). Unchanged where the profile names none."""
    largest_mm = max(config.vision.base_sizes_mm)
    return _with_sizes(config, tuple(sorted({d for d in profile.bases.round_mm if d <= largest_mm})))


def _with_sizes(config: Settings, sizes_mm: tuple[float, ...]) -> Settings:
    """``config`` whose detections snap to ``sizes_mm`` alone; unchanged where it is empty."""
    if not sizes_mm:
        return config
    return replace(config, vision=replace(config.vision, base_sizes_mm=sizes_mm))


def roster_expectation(roster: rules.TableState, px_per_mm: float, settings: PipelineSettings) -> ExpectedBases:
    """The round bases ``roster`` lists (its models and its unseen ones, each where it was last seen), as the detector
    looks for them in a top-down view at ``px_per_mm``: each may stand ``expected_reach_moves`` times its unit's Move
    plus ``expected_reach_margin_mm`` from there (the margin alone where the Move is not known)."""
    moves = {u.id: u.move_in for u in roster.units}
    listed = [m for m in (*roster.models, *roster.unseen) if isinstance(m.base, rules.RoundBase)]
    diameter_mm = np.array([2.0 * m.base.semi_axes_mm[0] for m in listed], dtype=np.float64)
    near_px = table_to_rectified(np.array([[m.x_mm, m.y_mm] for m in listed]).reshape(-1, 2), px_per_mm)
    move_in = np.array([moves.get(m.unit) if m.unit is not None else None for m in listed], dtype=np.float64)
    # a model whose Move is not known is looked for about where it was last seen, as far as the margin goes
    moved_mm = np.nan_to_num(move_in * MM_PER_INCH * settings.expected_reach_moves, nan=0.0)
    reach_mm = moved_mm + settings.expected_reach_margin_mm
    return ExpectedBases(diameter_mm, near_px, reach_mm * px_per_mm)


def empty_table(
    frame_bgr: NDArray[np.uint8], spec: TableSpec, config: Settings, camera: CameraModel | None = None
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
    # (h, w, 3) small copy of the frame, in its colours, as it was where each place was last measured
    # (:mod:`tableref.pipeline.changes`): the next frame is compared with it. None: the next frame is measured whole.
    overview: NDArray[np.uint8] | None = None
    # share (0-1) of the top-down view measured in this frame; the rest was kept from the frame before
    remeasured_share: float = 1.0
    # what the roster declared when the bases were measured (None: no roster)
    roster_key: frozenset[tuple[str, object]] | None = None
    # places that may hold a base the detector did not accept, in the top-down view's pixels (the state lists
    # them on the table: pipeline.state.doubted_of)
    doubts: Doubts = field(default_factory=Doubts.empty)

    def outlines_px(self, vertices: int = 48, models: tuple[rules.Model, ...] | None = None) -> NDArray[np.float64]:
        """(N, vertices, 2) base outlines of the state's models (or of ``models``, placed by the same calibration)
        in real frame pixels, for drawing overlays."""
        chosen = self.state.models if models is None else models
        n = len(chosen)
        if n == 0:
            return np.empty((0, vertices, 2))
        points = outlines_mm(chosen, vertices)
        height = self.rim_height_mm if self.calibration.heights_corrected else 0.0
        frame = self.calibration.table_to_image(points.reshape(-1, 2), height)
        return frame.reshape(n, vertices, 2)

    @property
    def rim_height_mm(self) -> float:
        """The rim height the outlines were placed at (0 where heights are not corrected)."""
        section = calibration_section(self.state)
        return 0.0 if section is None else section.rim_height_mm


def _declared(
    roster: rules.TableState | None,
    detections: BaseDetections,
    diameter_mm: NDArray[np.float64],
    height_ratio: NDArray[np.float64],
    rim_height_mm: float,
) -> tuple[NDArray[np.float64] | None, DeclaredBases | None]:
    """Where a ``roster`` declared the bases: the rim height (mm, (N,), NaN where none was declared) each outline
    is placed at, and how many bases were fitted at a declared size and height; (None, None) without a roster.
    ``diameter_mm`` and ``height_ratio`` (N,): what the roster declared for each base (NaN: nothing)."""
    if roster is None:
        return None, None
    # a base fitted at a known size carries no size doubt: that tells the ones fitted again
    held = np.isfinite(diameter_mm) & (detections.diameter_sigma_mm == 0.0)
    # outlines the edges read (where the appearance fit does not run) are placed at the declared height
    return height_ratio * rim_height_mm, DeclaredBases(int(held.sum()), int((held & np.isfinite(height_ratio)).sum()))


def detect_frame(
    frame_bgr: NDArray[np.uint8],
    spec: TableSpec,
    config: Settings,
    camera: CameraModel | None = None,
    calibration: TableCalibration | None = None,
    roster: rules.TableState | None = None,
    previous: FrameAnalysis | None = None,
    keep_overview: bool = False,
    reference: EmptyTable | None = None,
    whole_roster: bool = False,
    snap_to_roster: bool = True,
    looked_for: rules.TableState | None = None,
) -> FrameAnalysis:
    """Measure every base in a frame. ``calibration`` from an earlier frame of the same fixed camera is reused
    (calibrating on an empty table, then keeping it, avoids hands and models touching markers). Each base a
    ``roster`` lists is fitted again at the size (and rim height) it declares
    (:func:`~tableref.pipeline.state.known_bases`; where the appearance fit does not run, about 1 px/mm, the edges'
    outline is placed at the declared rim height); the others at the sizes they were read at
    (``known.refit_read_sizes``). The models are still unassigned
    (:func:`~tableref.pipeline.identity.carry_identities` assigns them).

    ``previous``, an earlier frame's analysis with this very ``calibration`` and the same roster declarations (or
    more: a casualty taken off the roster changes nothing kept): only what changed since is measured again
    (``remeasured_share``; 1 past ``max_changed_share``), the rest kept: do not fuse such frames. ``overview`` is
    kept given a ``previous`` or ``keep_overview``. ``reference``, the table seen empty: a base must have changed
    since. ``whole_roster``: the roster lists every model, so a base is of one of its sizes (:func:`roster_sizes`;
    any standard size with ``snap_to_roster`` False), and sizes found fewer times than listed are looked for
    (:func:`roster_expectation`), as ``looked_for``'s models are where the frame is measured whole (a dashboard's
    roster of units). The state lists the places doubted (:func:`doubted_places`)."""
    if whole_roster and roster is not None:
        looked_for = roster
    if whole_roster and roster is not None and snap_to_roster:
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
    mask = marker_mask(spec, px_per_mm, calibration.rectified_size(px_per_mm), settings.marker_mask_margin_mm)
    parallax = rim_parallax(calibration, px_per_mm, settings.rim_height_mm)
    t = time.perf_counter()
    overview, windows = _changes(
        frame_bgr, config, calibration, px_per_mm, mask, blur_px, roster, previous, keep_overview
    )
    timings["changes"] = (time.perf_counter() - t) * 1e3
    if windows is not None and previous is not None:
        parts, changed_px, overview, remeasured = windows
        t = time.perf_counter()
        detections, diameter, height, kept, doubts = measure_again(
            frame_bgr, previous, parts, changed_px, config, parallax, roster, reference
        )
        timings["detect"] = (time.perf_counter() - t) * 1e3
    else:
        detections, diameter, height, doubts = _measure_whole(
            frame_bgr, calibration, px_per_mm, mask, parallax, config, roster, reference, timings, blur_px, looked_for
        )
        remeasured, kept = 1.0, None
    declared_rims_mm, declared = _declared(roster, detections, diameter, height, settings.rim_height_mm)
    sizes_mm = config.vision.base_sizes_mm
    state, random = state_from_detections(
        spec, calibration, detections, px_per_mm, settings, sizes_mm, declared_rims_mm, kept, declared
    )
    doubts = outside_bases(doubts, detections)
    state = with_doubted(state, doubted_places(calibration, doubts, px_per_mm, settings))
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
        roster_key(roster),
        doubts,
    )


def _changes(
    frame_bgr: NDArray[np.uint8],
    config: Settings,
    calibration: TableCalibration,
    px_per_mm: float,
    mask: NDArray[np.uint8],
    blur_px: float,
    roster: rules.TableState | None,
    previous: FrameAnalysis | None,
    keep_overview: bool,
) -> tuple[NDArray[np.uint8] | None, ChangedWindows | None]:
    """The copy the next frame will be compared with (None where no one will be), and the windows that changed
    since ``previous`` (None: the frame is measured whole, as it is where ``previous`` was measured otherwise)."""
    overview = change_view(frame_bgr, config.pipeline) if previous is not None or keep_overview else None
    if previous is None or overview is None or not comparable(previous, calibration, px_per_mm, overview, roster):
        return overview, None
    max_diameter_mm = max(config.vision.base_sizes_mm) + config.vision.snap_tolerance_mm
    return overview, changed_windows(frame_bgr, overview, previous, mask, max_diameter_mm, config.pipeline, blur_px)


def _measure_whole(
    frame_bgr: NDArray[np.uint8],
    calibration: TableCalibration,
    px_per_mm: float,
    mask: NDArray[np.uint8],
    parallax: RimParallax | None,
    config: Settings,
    roster: rules.TableState | None,
    reference: EmptyTable | None,
    timings: dict[str, float],
    blur_px: float = 0.0,
    looked_for: rules.TableState | None = None,
) -> tuple[BaseDetections, NDArray[np.float64], NDArray[np.float64], Doubts]:
    """Every base of the whole frame, fitted again at the roster's sizes and rim heights where it declares them:
    (detections, declared diameter (N,), declared height ratio (N,); NaN where not declared; the places doubted).
    Adds the rectification's and the detection's times (ms) to ``timings``. The view is smoothed by ``blur_px`` (see
    :func:`~tableref.pipeline.view.smoothed`). The bases ``looked_for`` lists that are not found are looked for
    (:func:`roster_expectation`)."""
    t = time.perf_counter()
    topdown = smoothed(calibration.rectify(frame_bgr, px_per_mm), blur_px)
    mask = over_markers(mask, topdown, px_per_mm, config.pipeline)
    timings["rectify"] = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    empty = None if reference is None else reference.topdown(px_per_mm)
    wanted = None if looked_for is None else roster_expectation(looked_for, px_per_mm, config.pipeline)
    detections, doubts = detect_bases_and_doubts(
        topdown, px_per_mm, config.vision, mask, parallax, reference_bgr=empty, expected=wanted
    )
    diameter = height = np.full(len(detections), np.nan)
    if roster is not None:
        diameter, height = known_bases(calibration, detections, px_per_mm, roster, config.pipeline)
    detections = fit_known_bases(topdown, px_per_mm, config.vision, detections, diameter, height, parallax)
    timings["detect"] = (time.perf_counter() - t) * 1e3
    return detections, diameter, height, doubts


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
    fused = replace(first.state, models=models)
    section = calibration_section(fused)
    return fused if section is None else with_calibration_section(fused, replace(section, frames_fused=len(analyses)))
