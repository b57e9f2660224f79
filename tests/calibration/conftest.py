"""Shared fixtures: the default settings and cached synthetic frames (rendering is the slow part of the tests)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numpy.typing import NDArray

from calibration.camera import CameraModel
from calibration.settings import CalibrationSettings
from calibration.spec import TableSpec, load_table_spec
from tableref.config import load_config
from tests.calibration.synthetic_views import LENS_DIST, View, camera_matrix, framing_view, render_table

HD = (1920, 1080)
HD_FOCAL_PX = 1350.0


@pytest.fixture(scope="session")
def settings() -> CalibrationSettings:
    return load_config().calibration


@pytest.fixture(scope="session")
def spec() -> TableSpec:
    return load_table_spec()


def hd_view(spec: TableSpec, size: tuple[int, int] = HD) -> View:
    width, height = size
    k = camera_matrix(width, height, HD_FOCAL_PX * width / HD[0])
    return framing_view(spec, k, LENS_DIST, width, height)


def camera_of(view: View) -> CameraModel:
    return CameraModel(view.width, view.height, view.camera_matrix, view.dist_coeffs)


@functools.lru_cache(maxsize=32)
def table_frame(
    spec: TableSpec, marker_ids: tuple[int, ...] | None = None, size: tuple[int, int] = HD, seed: int = 0
) -> tuple[NDArray[np.uint8], View]:
    """A rendered frame of ``spec`` (read-only, cached) and the view that made it."""
    view = hd_view(spec, size)
    image = render_table(spec, view, supersample=2, marker_ids=marker_ids, seed=seed)
    image.flags.writeable = False
    return image, view
