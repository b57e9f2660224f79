"""The bundled sample frames: ground truth that the rules read, cameras that match the frames, and the generator
still making the same frames."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

import rules
from calibration.spec import load_table_spec
from synth.make_samples import SAMPLES, write_sample

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "sample_images"
NAMES = [s.name for s in SAMPLES]


@pytest.mark.parametrize("name", NAMES)
def test_truth_loads_as_a_table_state(name: str) -> None:
    truth = SAMPLE_DIR / f"{name}.truth.json"
    state = rules.load_state(truth)
    doc = json.loads(truth.read_text(encoding="utf-8"))
    assert len(state.models) > 0
    assert set(doc["visibility"]) == {m.id for m in state.models}
    assert all(0.0 <= v <= 1.0 for v in doc["visibility"].values())
    # The rules run on it.
    rules.check(state, rules.load_profile("skirmish"))


@pytest.mark.parametrize("name", NAMES)
def test_frame_and_camera_agree(name: str) -> None:
    image = cv2.imread(str(SAMPLE_DIR / f"{name}.jpg"))
    assert image is not None
    camera = json.loads((SAMPLE_DIR / f"{name}.camera.json").read_text(encoding="utf-8"))
    truth = json.loads((SAMPLE_DIR / f"{name}.truth.json").read_text(encoding="utf-8"))
    assert camera == truth["camera"]
    assert image.shape == (camera["image_height"], camera["image_width"], 3)
    matrix = np.asarray(camera["camera_matrix"])
    assert matrix.shape == (3, 3) and matrix[2, 2] == 1.0
    assert len(camera["dist_coeffs"]) == 5


def test_table_specs_are_readable_and_the_default_is_the_bundled_one() -> None:
    assert load_table_spec(SAMPLE_DIR / "table.toml") == load_table_spec()
    small = load_table_spec(SAMPLE_DIR / "small_table.toml")
    truth = json.loads((SAMPLE_DIR / "small_table_720p.truth.json").read_text(encoding="utf-8"))
    assert small.to_dict() == truth["render"]["table"]


def test_readme_describes_every_frame() -> None:
    text = (SAMPLE_DIR / "README.md").read_text(encoding="utf-8")
    for name in NAMES:
        assert f"{name}.jpg" in text


def test_generator_still_makes_the_bundled_frames(tmp_path: Path) -> None:
    sample = next(s for s in SAMPLES if s.name == "small_table_720p")
    write_sample(sample, tmp_path)
    fresh = json.loads((tmp_path / f"{sample.name}.truth.json").read_text(encoding="utf-8"))
    stored = json.loads((SAMPLE_DIR / f"{sample.name}.truth.json").read_text(encoding="utf-8"))
    fresh_state, stored_state = rules.state_from_dict(fresh), rules.state_from_dict(stored)
    assert (fresh_state.units, fresh_state.models, fresh_state.terrain) == (
        stored_state.units,
        stored_state.models,
        stored_state.terrain,
    )
    assert fresh["visibility"] == pytest.approx(stored["visibility"], abs=1e-9)
    a = cv2.imread(str(tmp_path / f"{sample.name}.jpg")).astype(np.float64)
    b = cv2.imread(str(SAMPLE_DIR / f"{sample.name}.jpg")).astype(np.float64)
    assert np.abs(a - b).mean() < 0.5
