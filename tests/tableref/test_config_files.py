"""Where the defaults live: each stage that owns its settings keeps their defaults beside them, in one place."""

import dataclasses
import tomllib
from pathlib import Path

import pytest

from calibration.settings import CalibrationSettings
from tableref.config import STAGES_WITH_DEFAULTS, default_settings, load_config
from vision.settings import VisionSettings

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("stage", "settings_class"),
    [
        ("calibration", CalibrationSettings),
        ("vision", VisionSettings),
    ],
)
def test_a_stage_keeps_every_default_of_its_settings_beside_them(stage, settings_class):
    own = tomllib.loads((ROOT / stage / "defaults.toml").read_text("utf-8"))
    assert list(own) == [stage]
    assert set(own[stage]) == {f.name for f in dataclasses.fields(settings_class)}
    assert stage in STAGES_WITH_DEFAULTS


def test_the_app_defaults_hold_no_stage_section_of_its_own_file():
    app = tomllib.loads((ROOT / "tableref" / "defaults.toml").read_text("utf-8"))
    assert not set(app) & set(STAGES_WITH_DEFAULTS)
    assert set(default_settings()) == set(app) | set(STAGES_WITH_DEFAULTS)


def test_a_stage_default_reaches_the_loaded_settings(tmp_path):
    vision = tomllib.loads((ROOT / "vision" / "defaults.toml").read_text("utf-8"))["vision"]
    assert load_config().vision.finder.trust_probability == vision["finder"]["trust_probability"]
    mine = tmp_path / "mine.toml"
    mine.write_text("[vision.finder]\ntrust_probability = 0.5\n")
    assert load_config(mine).vision.finder.trust_probability == 0.5
