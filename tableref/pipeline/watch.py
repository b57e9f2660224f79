"""Watching a table: which frames to measure, and measuring one with the calibration kept from before.

The live dashboard and the review of a recording run the same chain. A frame is measured once the table has been
still for ``settle_s`` (:class:`TableWatch`), when it differs from the frame measured last and nothing reaches in
over the table; the calibration kept from an earlier frame is used unless the camera was knocked since
(:func:`settled_calibration`); then the bases are measured (:func:`measure_settled`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

import rules
from calibration.camera import CameraModel
from calibration.settings import CalibrationSettings
from calibration.spec import TableSpec
from calibration.table import TableCalibration, calibrate_table, marker_drift_px
from tableref.pipeline.frame import EmptyTable, FrameAnalysis, detect_frame
from tableref.pipeline.motion import SettleWatch, reaching_in
from tableref.settings import Settings

# What to do with a settled frame (TableWatch.verdict).
SAME = "same"
COVERED = "covered"
MEASURE = "measure"


class TableWatch(SettleWatch):
    """A :class:`~tableref.pipeline.motion.SettleWatch` that also tells whether a settled frame is worth measuring:
    a region changed by more than ``covered_pixel_delta`` levels that touches the frame's border and covers at
    least ``covered_fraction`` of it is something reaching in over the table (an arm), not a table to measure."""

    def __init__(
        self,
        settle_s: float,
        pixel_delta: int,
        fraction: float,
        min_region_px: int,
        covered_pixel_delta: int,
        covered_fraction: float,
    ) -> None:
        super().__init__(settle_s, pixel_delta, fraction, min_region_px)
        self.covered_pixel_delta = covered_pixel_delta
        self.covered_fraction = covered_fraction

    def verdict(self, thumb: NDArray[np.uint8], measured: NDArray[np.uint8] | None, again: bool = False) -> str:
        """What to do with a settled frame's thumbnail: :data:`SAME` when it does not differ from ``measured``, the
        frame measured last (None: nothing measured yet, or another scene), unless asked to measure it ``again``;
        :data:`COVERED` when something reaches in over the table since; else :data:`MEASURE`. It is compared with
        the frame measured last, not with the still spell's first: a hand held still must not become the reference,
        or its leaving would look like something reaching in."""
        if measured is None:
            return MEASURE
        if not again and not self.differs(thumb, measured):
            return SAME
        if reaching_in(thumb, measured, self.covered_pixel_delta, self.covered_fraction):
            return COVERED
        return MEASURE


def settled_calibration(
    frame_bgr: NDArray[np.uint8],
    spec: TableSpec,
    camera: CameraModel | None,
    calibration: TableCalibration | None,
    settings: CalibrationSettings,
) -> tuple[TableCalibration, bool]:
    """The calibration to measure a settled frame with, and whether it is new: ``calibration``, kept from an earlier
    frame, unless there is none or the camera was knocked (its markers are more than ``moved_drift_px`` from where
    it puts them; markers not seen say nothing); then the frame is calibrated on its own markers. Raises the
    calibration's errors."""
    if calibration is not None:
        drift = marker_drift_px(frame_bgr, calibration, settings=settings)
        if drift is None or drift <= settings.moved_drift_px:
            return calibration, False
    return calibrate_table(frame_bgr, spec, camera, settings=settings), True


@dataclass(frozen=True)
class Settled:
    """A settled frame measured, and whether its calibration is new (the camera was knocked, or none was kept)."""

    analysis: FrameAnalysis
    recalibrated: bool


def measure_settled(
    frame_bgr: NDArray[np.uint8],
    spec: TableSpec,
    config: Settings,
    camera: CameraModel | None,
    calibration: TableCalibration | None,
    roster: rules.TableState | None = None,
    previous: FrameAnalysis | None = None,
    keep_overview: bool = False,
    reference: EmptyTable | None = None,
    whole_roster: bool = False,
    snap_to_roster: bool = True,
    looked_for: rules.TableState | None = None,
) -> Settled:
    """Measure a settled frame (:func:`~tableref.pipeline.frame.detect_frame`, whose arguments the others are) with
    the ``calibration`` kept from an earlier frame, or a new one where :func:`settled_calibration` says so. A
    ``previous`` analysis of another calibration is not built on: the frame is measured whole."""
    used, fresh = settled_calibration(frame_bgr, spec, camera, calibration, config.calibration)
    analysis = detect_frame(
        frame_bgr,
        spec,
        config,
        camera,
        used,
        roster,
        previous,
        keep_overview=keep_overview,
        reference=reference,
        whole_roster=whole_roster,
        snap_to_roster=snap_to_roster,
        looked_for=looked_for,
    )
    return Settled(analysis, fresh)
