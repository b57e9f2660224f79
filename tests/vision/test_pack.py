"""The pack's look (``pack_vote_fraction``, step 11 of :mod:`vision.detect`): bases inside a crowded melee, whose rims
show only in the seams between their neighbours', found beside the bases found, and nothing the truth lacks."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np
import pytest

from synth.wide import random_scene
from synth.wide.frame import write_frame
from synth.wide.tables import spec_toml
from tableref.config import load_config
from tableref.evaluate import FrameScore, load_samples, score_frame
from tableref.settings import Settings


def _config(pack_vote_fraction: float) -> Settings:
    # the finder's look (step 12) comes after the pack's and finds most of what it would: off, to see the pack's own
    config = load_config()
    vision = config.vision.replaced({"seeds.pack_vote_fraction": pack_vote_fraction, "finder.seed_probability": 0.0})
    return dataclasses.replace(config, vision=vision)


@functools.cache
def _scores(seed: int, resolution: str, folder: Path) -> tuple[FrameScore, FrameScore]:
    """(without the pack's look, with it) on one wide-look frame."""
    scene = random_scene(seed, resolution)
    (folder / f"table_{scene.table_name}.toml").write_text(spec_toml(scene.table), encoding="utf-8")
    write_frame(scene, seed, folder, f"wide_{resolution}_{seed}")
    (sample,) = load_samples(folder)
    without, with_pack = (_config(f) for f in (0.0, load_config().vision.seeds.pack_vote_fraction))
    return score_frame(sample, without, without.evaluate), score_frame(sample, with_pack, with_pack.evaluate)


# crowded melees of flock and black tops on grass, 1080p and 12 MP (bases of a pack the first looks miss)
@pytest.mark.parametrize(("seed", "resolution"), [(30000, "1080p"), (30023, "12mp")])
def test_a_pack_look_finds_bases_inside_a_melee_and_nothing_else(
    seed: int, resolution: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    without, with_pack = _scores(seed, resolution, tmp_path_factory.mktemp(f"pack{seed}"))
    found_before = without.truth_matched & without.truth_visible
    found_after = with_pack.truth_matched & with_pack.truth_visible
    assert found_after.sum() > found_before.sum()
    # every base found without it is still found: the pack's readings take no base's place
    assert np.all(found_after[found_before])
    # every reading the look added is a base of the truth
    assert with_pack.detected - with_pack.matched <= without.detected - without.matched
