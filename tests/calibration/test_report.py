"""The calibration report: its JSON is the ``calibration`` section of a table state, and reads back to itself."""

from __future__ import annotations

import json
from typing import Any

import pytest

from calibration.errors import ReportError
from calibration.report import CalibrationReport

REPORT = CalibrationReport(
    markers_used=(0, 1, 2),
    markers_seen=(0, 1, 2, 9),
    markers_expected=(0, 1, 2, 3),
    corners_rejected=1,
    reprojection_error_mm=0.2134,
    reprojection_error_max_mm=0.61,
    px_per_mm=2.5,
    lens_corrected=False,
    lens_estimated=True,
    heights_corrected=False,
    image_size=(1920, 1080),
    notes=("lens estimated",),
)

# the JSON a state file holds for REPORT, key for key in the order written
JSON = (
    '{"markers_used": [0, 1, 2], "markers_seen": [0, 1, 2, 9], "markers_expected": [0, 1, 2, 3], '
    '"corners_rejected": 1, "reprojection_error_mm": 0.2134, "reprojection_error_max_mm": 0.61, "px_per_mm": 2.5, '
    '"lens_corrected": false, "lens_estimated": true, "heights_corrected": false, "image_size": [1920, 1080], '
    '"notes": ["lens estimated"]}'
)


def test_the_json_is_the_state_files_section() -> None:
    assert json.dumps(REPORT.to_dict()) == JSON


def test_a_report_reads_back_to_itself() -> None:
    assert CalibrationReport.from_dict(json.loads(JSON)) == REPORT


def test_a_whole_number_reads_as_a_measure() -> None:
    got = CalibrationReport.from_dict({**REPORT.to_dict(), "px_per_mm": 2})
    assert got.px_per_mm == 2.0 and isinstance(got.px_per_mm, float)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"px_per_mm": None}, "missing px_per_mm"),
        ({"frames": 3}, "unknown frames"),
        ({"markers_used": [0, "1"]}, "markers_used must be a list of whole numbers"),
        ({"markers_seen": [True]}, "markers_seen must be a list of whole numbers"),
        ({"corners_rejected": 1.5}, "corners_rejected must be a whole number"),
        ({"corners_rejected": False}, "corners_rejected must be a whole number"),
        ({"reprojection_error_mm": "0.2"}, "reprojection_error_mm must be a number"),
        ({"lens_corrected": 1}, "lens_corrected must be true or false"),
        ({"image_size": [1920]}, r"image_size must be \[width, height\]"),
        ({"notes": "one note"}, "notes must be a list of texts"),
    ],
)
def test_a_section_that_is_no_report_is_named(change: dict[str, Any], message: str) -> None:
    data = {**REPORT.to_dict(), **change}
    data = {k: v for k, v in data.items() if v is not None}
    with pytest.raises(ReportError, match=message):
        CalibrationReport.from_dict(data)


def test_a_section_that_is_no_object_is_named() -> None:
    with pytest.raises(ReportError, match="expected an object, got list"):
        CalibrationReport.from_dict([])  # type: ignore[arg-type]
