"""The calibration report: how well a frame's table calibration fits, in the numbers a table state's JSON carries.

:meth:`CalibrationReport.to_dict` gives the ``calibration`` section of a table state JSON and
:meth:`CalibrationReport.from_dict` reads one back (from a state file, a review database), so that what is written
and what is read are one shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from calibration.errors import ReportError


@dataclass(frozen=True)
class CalibrationReport:
    """What a calibration reports of itself (see :class:`calibration.TableCalibration`): the numbers are rounded as
    reported, so a report read back from its JSON equals the one written."""

    # spec ids whose corners fit; every id of the spec's dictionary found; the ids the spec lists
    markers_used: tuple[int, ...]
    markers_seen: tuple[int, ...]
    markers_expected: tuple[int, ...]
    corners_rejected: int
    reprojection_error_mm: float
    reprojection_error_max_mm: float
    px_per_mm: float
    lens_corrected: bool
    lens_estimated: bool
    heights_corrected: bool
    # (width, height) of the frames calibrated, in pixels
    image_size: tuple[int, int]
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """The ``calibration`` section of a table state JSON (JSON has lists where the report has tuples)."""
        return {
            "markers_used": list(self.markers_used),
            "markers_seen": list(self.markers_seen),
            "markers_expected": list(self.markers_expected),
            "corners_rejected": self.corners_rejected,
            "reprojection_error_mm": self.reprojection_error_mm,
            "reprojection_error_max_mm": self.reprojection_error_max_mm,
            "px_per_mm": self.px_per_mm,
            "lens_corrected": self.lens_corrected,
            "lens_estimated": self.lens_estimated,
            "heights_corrected": self.heights_corrected,
            "image_size": list(self.image_size),
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CalibrationReport:
        """The report of a ``calibration`` section read back. Raises :class:`ReportError` naming the first key that
        is missing, unknown or of the wrong type."""
        if not isinstance(data, Mapping):
            raise ReportError(f"calibration report: expected an object, got {type(data).__name__}")
        names = [f.name for f in fields(cls)]
        missing = [n for n in names if n not in data]
        if missing:
            raise ReportError(f"calibration report: missing {', '.join(missing)}")
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ReportError(f"calibration report: unknown {', '.join(unknown)}; expected only {', '.join(names)}")
        size = int_list(data, "image_size")
        if len(size) != 2:
            raise ReportError(f"calibration report: image_size must be [width, height], got {data['image_size']!r}")
        return cls(
            markers_used=int_list(data, "markers_used"),
            markers_seen=int_list(data, "markers_seen"),
            markers_expected=int_list(data, "markers_expected"),
            corners_rejected=whole(data, "corners_rejected"),
            reprojection_error_mm=number(data, "reprojection_error_mm"),
            reprojection_error_max_mm=number(data, "reprojection_error_max_mm"),
            px_per_mm=number(data, "px_per_mm"),
            lens_corrected=flag(data, "lens_corrected"),
            lens_estimated=flag(data, "lens_estimated"),
            heights_corrected=flag(data, "heights_corrected"),
            image_size=(size[0], size[1]),
            notes=text_list(data, "notes"),
        )


def _wrong(key: str, expected: str, value: object) -> ReportError:
    return ReportError(f"calibration report: {key} must be {expected}, got {value!r}")


def whole(data: Mapping[str, Any], key: str) -> int:
    """``data[key]`` as an int; a bool is not one (JSON's true is no count)."""
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong(key, "a whole number", value)
    return value


def number(data: Mapping[str, Any], key: str) -> float:
    """``data[key]`` as a float (JSON may write a whole float as an int)."""
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong(key, "a number", value)
    return float(value)


def flag(data: Mapping[str, Any], key: str) -> bool:
    value = data[key]
    if not isinstance(value, bool):
        raise _wrong(key, "true or false", value)
    return value


def int_list(data: Mapping[str, Any], key: str) -> tuple[int, ...]:
    value = data[key]
    if not isinstance(value, list | tuple) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise _wrong(key, "a list of whole numbers", value)
    return tuple(value)


def text_list(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data[key]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise _wrong(key, "a list of texts", value)
    return tuple(value)
