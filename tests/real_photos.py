"""The real photographs in ``tests/data/real_photos`` (sources and licences in its README.md): loading them, their
table specs and the labelled Go grid, shared by the calibration and the vision tests."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from calibration.spec import TableSpec, load_table_spec
from tableref.sources import read_image

DATA = Path(__file__).parent / "data" / "real_photos"

# gobonline photo -> its recording session (the markers were re-taped between sessions; each has its own spec)
GOBONLINE_SESSIONS = {
    "stones_overhead.jpg": "stones",
    "few_stones_overhead.jpeg": "stones",
    "few_stones_glare.jpg": "stones",
    "laser_empty_board.jpg": "laser",
    "laser_empty_board_2.jpg": "laser",
    "empty_overhead.jpeg": "empty",
    "empty_angled.jpeg": "empty",
}

GRID_LINES = 19


@functools.cache
def photo(name: str) -> NDArray[np.uint8]:
    """A gobonline photo decoded as the CLI decodes it (read-only, cached)."""
    image = read_image(DATA / "gobonline" / name)
    image.flags.writeable = False
    return image


def session_spec_path(name: str) -> Path:
    return DATA / "specs" / f"gobonline_{GOBONLINE_SESSIONS[name]}_session.toml"


def session_spec(name: str) -> TableSpec:
    return load_table_spec(session_spec_path(name))


def session_grid(name: str) -> tuple[NDArray[np.float64], float]:
    """The printed grid of the photo's session as its spec places it: pitch (x, y) mm and the origin (mm, on both
    axes) of crossing (0, 0)."""
    sessions = json.loads((DATA / "labels" / "gobonline_sessions.json").read_text("utf-8"))
    session = sessions[GOBONLINE_SESSIONS[name]]
    return np.asarray(session["pitch_mm"], dtype=np.float64), float(session["origin_mm"])


def labels(name: str) -> dict[str, Any]:
    stem = Path(name).stem
    data: dict[str, Any] = json.loads((DATA / "labels" / f"gobonline_{stem}.json").read_text("utf-8"))
    return data


def _grid_to_px(name: str, index: NDArray[np.float64]) -> NDArray[np.float64]:
    h = np.asarray(labels(name)["grid_index_to_px"], dtype=np.float64)
    p = np.column_stack([index, np.ones(len(index))]) @ h.T
    return np.asarray(p[:, :2] / p[:, 2:], dtype=np.float64)


def grid_crossings(name: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Every crossing of the 19x19 grid: (361, 2) grid index (column, row) and (361, 2) frame pixels."""
    cols, rows = np.meshgrid(np.arange(GRID_LINES), np.arange(GRID_LINES))
    index = np.column_stack([cols.ravel(), rows.ravel()]).astype(np.float64)
    return index, _grid_to_px(name, index)


def stones_px(name: str) -> NDArray[np.float64]:
    """(N, 2) frame pixels of the labelled stones (the grid crossing each stands on)."""
    stones = labels(name)["stones"]
    index = np.array([[s["col"], s["row"]] for s in stones], dtype=np.float64).reshape(-1, 2)
    return _grid_to_px(name, index)
