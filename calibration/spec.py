"""The table spec: table size and where the ArUco markers lie on it, read from TOML.

Table coordinates are millimetres with the origin at a table corner, x along the width and y along the depth,
seen from above so that a top-down picture of the table with x to the right has y pointing down the picture (as
image rows do). A marker with ``rotation_deg = 0`` has its top edge along +x; positive rotation turns it from +x
towards +y.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.errors import SpecError
from calibration.files import read_text


@dataclass(frozen=True)
class MarkerSpec:
    """One printed marker: ``size_mm`` is the black square's edge (without the white margin)."""

    id: int
    size_mm: float
    x_mm: float
    y_mm: float
    rotation_deg: float = 0.0

    def corners_mm(self) -> NDArray[np.float64]:
        """(4, 2) table coordinates of the corners in OpenCV's order: top-left, top-right, bottom-right,
        bottom-left of the marker as printed."""
        h = self.size_mm / 2.0
        local = np.array([[-h, -h], [h, -h], [h, h], [-h, h]])
        a = math.radians(self.rotation_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        return np.asarray(local @ rot.T + np.array([self.x_mm, self.y_mm]), dtype=np.float64)


@dataclass(frozen=True)
class TableSpec:
    """A table and its markers. ``dictionary`` is a cv2.aruco predefined dictionary name (``DICT_4X4_50``)."""

    width_mm: float
    depth_mm: float
    dictionary: str
    markers: tuple[MarkerSpec, ...]

    def marker(self, marker_id: int) -> MarkerSpec:
        for m in self.markers:
            if m.id == marker_id:
                return m
        raise KeyError(marker_id)

    @property
    def marker_ids(self) -> tuple[int, ...]:
        return tuple(m.id for m in self.markers)

    def aruco_dictionary(self) -> cv2.aruco.Dictionary:
        return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": {"width_mm": self.width_mm, "depth_mm": self.depth_mm},
            "markers": {
                "dictionary": self.dictionary,
                "marker": [
                    {"id": m.id, "size_mm": m.size_mm, "x_mm": m.x_mm, "y_mm": m.y_mm, "rotation_deg": m.rotation_deg}
                    for m in self.markers
                ],
            },
        }


# No table, marker or position is larger than this (mm: 100 m), nor a rotation (degrees).
LARGEST = 100_000.0


def _dictionary_size(name: str) -> int:
    """How many markers the named predefined dictionary holds; raises SpecError for an unknown name."""
    code = getattr(cv2.aruco, name, None) if name.startswith("DICT_") else None
    if not isinstance(code, int):
        known = sorted(n for n in dir(cv2.aruco) if n.startswith("DICT_"))
        raise SpecError(f"[markers] dictionary {name!r} is not a cv2.aruco predefined dictionary (one of {known})")
    dictionary = cv2.aruco.getPredefinedDictionary(code)
    return int(dictionary.bytesList.shape[0])


def _number(obj: dict[str, Any], key: str, where: str, default: float | None = None) -> float:
    if key not in obj:
        if default is not None:
            return default
        raise SpecError(f"{where}: missing {key!r} (a number)")
    value = obj[key]
    # not abs(value) <= LARGEST holds for nan and inf too, and compares a whole number of any size exactly
    if isinstance(value, bool) or not isinstance(value, int | float) or not abs(value) <= LARGEST:
        shown = f"a number of {len(str(value))} digits" if isinstance(value, int) and value > 10**9 else repr(value)
        raise SpecError(f"{where}: {key!r} must be a finite number from {-LARGEST:g} to {LARGEST:g}, got {shown}")
    return float(value)


def table_spec_from_dict(data: Any) -> TableSpec:
    """Build and check a spec from parsed TOML. Raises :class:`SpecError` naming what was wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("table"), dict):
        raise SpecError("missing [table] with width_mm and depth_mm")
    table = data["table"]
    width = _number(table, "width_mm", "[table]")
    depth = _number(table, "depth_mm", "[table]")
    if width <= 0 or depth <= 0:
        raise SpecError(f"[table]: width_mm and depth_mm must be positive, got {width} x {depth}")
    markers_section = data.get("markers")
    if not isinstance(markers_section, dict):
        raise SpecError("missing [markers] with a dictionary and [[markers.marker]] entries")
    dictionary = markers_section.get("dictionary")
    if not isinstance(dictionary, str):
        raise SpecError("[markers]: missing dictionary (a cv2.aruco name such as 'DICT_4X4_50')")
    capacity = _dictionary_size(dictionary)
    entries = markers_section.get("marker", [])
    if not isinstance(entries, list) or not entries:
        raise SpecError("[markers]: no [[markers.marker]] entries; expected at least 3 markers")
    markers = []
    seen: set[int] = set()
    for n, entry in enumerate(entries):
        where = f"[[markers.marker]] #{n + 1}"
        if not isinstance(entry, dict):
            raise SpecError(f"{where}: expected a table")
        marker_id = entry.get("id")
        if isinstance(marker_id, bool) or not isinstance(marker_id, int):
            raise SpecError(f"{where}: id must be a whole number, got {marker_id!r}")
        where = f"{where} (id {marker_id})"
        if not 0 <= marker_id < capacity:
            raise SpecError(f"{where}: id is outside {dictionary}, which holds ids 0 to {capacity - 1}")
        if marker_id in seen:
            raise SpecError(f"{where}: duplicate marker id")
        seen.add(marker_id)
        spec = MarkerSpec(
            id=marker_id,
            size_mm=_number(entry, "size_mm", where),
            x_mm=_number(entry, "x_mm", where),
            y_mm=_number(entry, "y_mm", where),
            rotation_deg=_number(entry, "rotation_deg", where, 0.0),
        )
        if spec.size_mm <= 0:
            raise SpecError(f"{where}: size_mm must be positive, got {spec.size_mm}")
        markers.append(spec)
    if len(markers) < 3:
        raise SpecError(f"[markers]: {len(markers)} markers given; at least 3 are needed to calibrate")
    return TableSpec(width, depth, dictionary, tuple(markers))


def load_table_spec(path: str | Path | None = None) -> TableSpec:
    """Read a table spec TOML file; with no path, the bundled default (6'x4', DICT_4X4_50, 8 markers)."""
    if path is None:
        text = resources.files("calibration").joinpath("default_table.toml").read_text("utf-8")
        where = "default table spec"
    else:
        where = str(path)
        text = read_text(path, "a table spec TOML file", SpecError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{where}: not valid TOML ({exc})") from None
    except RecursionError:
        # the parser recurses once per level: a hostile file nests deeper than Python's stack
        raise SpecError(f"{where}: TOML nested too deep to read; expected a table spec TOML file") from None
    try:
        return table_spec_from_dict(data)
    except SpecError as exc:
        raise SpecError(f"{where}: {exc}") from None
