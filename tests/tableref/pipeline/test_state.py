"""The calibration section of a measured table state: the calibration's report and what the pipeline adds, written
as the state's JSON and read back through one accessor."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rules
from calibration.errors import ReportError
from calibration.report import CalibrationReport
from tableref.pipeline.state import CalibrationSection, DeclaredBases, calibration_section, with_calibration_section

REPORT = CalibrationReport(
    markers_used=(0, 1),
    markers_seen=(0, 1),
    markers_expected=(0, 1, 2),
    corners_rejected=0,
    reprojection_error_mm=0.2,
    reprojection_error_max_mm=0.4,
    px_per_mm=1.5,
    lens_corrected=True,
    lens_estimated=False,
    heights_corrected=True,
    image_size=(640, 480),
    notes=(),
)
TABLE = rules.Table(600.0, 400.0)


@pytest.mark.parametrize(
    ("section", "added"),
    [
        (CalibrationSection(REPORT, 4.0), {"rim_height_mm": 4.0}),
        (
            CalibrationSection(REPORT, 0.0, DeclaredBases(3, 1)),
            {"rim_height_mm": 0.0, "declared_bases": {"sizes": 3, "rim_heights": 1}},
        ),
        (CalibrationSection(REPORT, 4.0, None, 5), {"rim_height_mm": 4.0, "frames_fused": 5}),
    ],
)
def test_the_section_is_the_reports_keys_then_the_pipelines(section: CalibrationSection, added: dict[str, Any]) -> None:
    state = with_calibration_section(rules.TableState(TABLE), section)
    written = json.dumps(rules.state_to_dict(state)["calibration"])
    assert written == json.dumps({**REPORT.to_dict(), **added})
    assert calibration_section(rules.state_from_dict(json.loads(json.dumps(rules.state_to_dict(state))))) == section


def test_a_state_drawn_not_measured_has_no_section() -> None:
    assert calibration_section(rules.TableState(TABLE)) is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rim_height_mm": "4"}, "rim_height_mm must be a number"),
        ({"declared_bases": {"sizes": 1}}, "declared_bases must be"),
        ({"declared_bases": {"sizes": 1, "rim_heights": 0.5}}, "rim_heights must be a whole number"),
        ({"frames_fused": 2.0}, "frames_fused must be a whole number"),
        ({"markers_used": "0, 1"}, "markers_used must be a list"),
    ],
)
def test_a_section_that_is_not_one_is_named(change: dict[str, Any], message: str) -> None:
    data = {**CalibrationSection(REPORT, 4.0).to_dict(), **change}
    state = rules.TableState(TABLE, extras={"calibration": data})
    with pytest.raises(ReportError, match=message):
        calibration_section(state)


def test_a_section_without_its_rim_height_is_named() -> None:
    with pytest.raises(ReportError, match="missing rim_height_mm"):
        CalibrationSection.from_dict(REPORT.to_dict())
