"""Calibration stage: where the table is in a frame (ArUco markers of a table spec), the camera's lens (ChArUco
board photos), and the printouts for both. Knows nothing of bases or rules.

The one verb for frames is :func:`calibrate_table`; its :class:`TableCalibration` maps frame pixels to table
millimetres and back, and rectifies frames to a top-down view.
"""

from calibration.camera import CameraModel, camera_from_dict, load_camera, save_camera
from calibration.errors import (
    CalibrationError,
    CameraFileError,
    CameraMismatchError,
    HeightUnavailableError,
    ImageError,
    LensCalibrationError,
    MarkerSpanError,
    PrintError,
    ReportError,
    SettingsError,
    SpecError,
    TooFewMarkersError,
)
from calibration.lens import LensCalibration, ViewInfo, board_image, calibrate_camera, charuco_board, estimate_lens
from calibration.markers import MarkerDetections, detect_markers
from calibration.printing import board_pdf, markers_pdf
from calibration.report import CalibrationReport
from calibration.settings import CalibrationSettings
from calibration.spec import MarkerSpec, TableSpec, load_table_spec, table_spec_from_dict
from calibration.table import (
    TableCalibration,
    calibrate_table,
    marker_drift_px,
    rectified_to_table,
    table_to_rectified,
)

__all__ = [
    "CalibrationError",
    "CalibrationReport",
    "CalibrationSettings",
    "CameraFileError",
    "CameraMismatchError",
    "CameraModel",
    "HeightUnavailableError",
    "ImageError",
    "LensCalibration",
    "LensCalibrationError",
    "MarkerDetections",
    "MarkerSpanError",
    "MarkerSpec",
    "PrintError",
    "ReportError",
    "SettingsError",
    "SpecError",
    "TableCalibration",
    "TableSpec",
    "TooFewMarkersError",
    "ViewInfo",
    "board_image",
    "board_pdf",
    "calibrate_camera",
    "calibrate_table",
    "camera_from_dict",
    "charuco_board",
    "detect_markers",
    "estimate_lens",
    "load_camera",
    "load_table_spec",
    "marker_drift_px",
    "markers_pdf",
    "rectified_to_table",
    "save_camera",
    "table_spec_from_dict",
    "table_to_rectified",
]
