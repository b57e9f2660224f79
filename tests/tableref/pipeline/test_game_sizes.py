"""A game's base sizes (its rule profile's ``[bases] round_mm``): the standard sizes a base may be read as."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import rules
from synth.wide import random_scene
from synth.wide.frame import write_frame
from synth.wide.tables import spec_toml
from tableref.config import load_config
from tableref.evaluate import load_samples, score_frame
from tableref.pipeline.frame import game_sizes


@pytest.mark.parametrize(
    ("profile", "sizes_mm"),
    [
        # a generic skirmish names no sizes: every standard size stays
        ("skirmish", None),
        # 130 and 160 mm lie beyond the largest size the detector reads (100 mm)
        ("40k", (25, 28.5, 32, 40, 50, 60, 80, 90, 100)),
        ("killteam", (25, 28.5, 32, 40, 50, 60)),
        ("legion", (27, 50, 70, 100)),
    ],
)
def test_a_games_profile_cuts_the_sizes_down_to_its_own(profile: str, sizes_mm: tuple[float, ...] | None) -> None:
    config = load_config()
    sized = game_sizes(config, rules.load_profile(profile))
    assert sized.vision.base_sizes_mm == (config.vision.base_sizes_mm if sizes_mm is None else sizes_mm)
    # nothing else changes
    assert dataclasses.replace(sized.vision, base_sizes_mm=config.vision.base_sizes_mm) == config.vision


def test_a_house_profile_may_name_sizes_between_the_standard_ones(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text('name = "house"\n[bases]\nround_mm = [35, 30, 30]\n')
    assert game_sizes(load_config(), rules.load_profile(path)).vision.base_sizes_mm == (30.0, 35.0)


# A 1080p wide-look frame whose unit of flocked 28.5 mm bases the rims and the finder read about 27 mm: among every
# standard size it is put at 27, in a game whose sizes skip 27 at 28.5.
def test_a_unit_read_between_a_games_sizes_takes_the_nearest_of_them(tmp_path: Path) -> None:
    seed, resolution = 30012, "1080p"
    scene = random_scene(seed, resolution)
    (tmp_path / f"table_{scene.table_name}.toml").write_text(spec_toml(scene.table), encoding="utf-8")
    write_frame(scene, seed, tmp_path, f"wide_{resolution}_{seed}")
    (sample,) = load_samples(tmp_path)
    config = load_config()
    game = game_sizes(config, rules.load_profile("40k"))
    every, in_game = (score_frame(sample, c, c.evaluate) for c in (config, game))
    of_game = np.array([m["base"]["diameter_mm"] in game.vision.base_sizes_mm for m in sample.truth["models"]])
    assert of_game.sum() > 20
    for score in (every, in_game):
        # the same bases are found either way
        np.testing.assert_array_equal(score.truth_matched, every.truth_matched)
    found = every.truth_matched & of_game
    assert np.count_nonzero(every.truth_size_right[found]) < np.count_nonzero(found)
    assert np.all(in_game.truth_size_right[found])
