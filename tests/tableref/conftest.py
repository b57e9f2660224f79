"""Shared frames for the app-layer tests: rendered once per session (rendering is the slow part)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from calibration.camera import CameraModel, camera_from_dict
from calibration.spec import TableSpec, load_table_spec
from synth.game import GameVideo
from synth.generate import fit_camera, plain_scene
from synth.render import Truth, render
from tableref.config import load_config
from tableref.settings import Settings
from tests.tableref.review_game import make_game

# A 720p camera 1.4 m up, off to one side and tilted, with barrel distortion: parallax and lens both matter.
FRAME_SIZE = (1280, 720)
CAMERA_POSITION_MM = (1050.0, 520.0, 1400.0)
LENS = (-0.08, 0.01, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Rendered:
    image: np.ndarray
    truth: Truth
    spec: TableSpec
    camera: CameraModel


@pytest.fixture(scope="session")
def game(tmp_path_factory: pytest.TempPathFactory) -> GameVideo:
    """The review tests' recorded game (see :mod:`tests.tableref.review_game`)."""
    return make_game(tmp_path_factory.mktemp("game"))


@pytest.fixture(scope="session")
def config() -> Settings:
    return load_config()


@pytest.fixture(scope="session")
def empty_table() -> Rendered:
    spec = load_table_spec()
    cam = fit_camera(spec, FRAME_SIZE, CAMERA_POSITION_MM, (914.5, 609.5, 0.0), dist=LENS)
    image, truth = render(plain_scene(cam, spec), seed=1)
    return Rendered(np.asarray(image), truth, spec, camera_from_dict(dict(truth.camera)))
