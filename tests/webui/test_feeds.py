"""Feeds: the drawing of a table state, pacing of recorded sources, the bundled sample."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

import rules
from tableref.sources import SourceError
from tests.webui.conftest import two_sides
from webui.feeds import (
    ImageFeed,
    SampleFeed,
    SampleScene,
    Scene,
    StateFeed,
    draw_state,
    load_sample_scenes,
    sample_available,
    source_feed,
)

REPO = Path(__file__).resolve().parents[2]


def test_state_drawing_puts_bases_where_the_state_says():
    state = rules.state_from_dict(two_sides())
    image = draw_state(state, 0.5)
    assert image.shape == (400, 600, 3)
    mat = image[10, 10].astype(int)
    for m in state.models:
        centre = image[round(m.y_mm * 0.5 - 0.5), round(m.x_mm * 0.5 - 0.5)].astype(int)
        assert np.abs(centre - mat).sum() > 60, m.id


def test_state_feed_repeats_one_picture():
    state = rules.state_from_dict(two_sides())
    feed = StateFeed(state, "s.json", 0.5, fps=200.0)
    frames = list(itertools.islice(feed.frames(), 3))
    assert all(f.image_bgr is frames[0].image_bgr for f in frames)
    assert not frames[0].image_bgr.flags.writeable
    assert frames[0].scene.state is state and frames[0].scene.roster is state


def test_folder_images_are_held_for_their_period(tmp_path: Path):
    for k in range(2):
        cv2.imwrite(str(tmp_path / f"{k}.png"), np.full((20, 30, 3), 50 * (k + 1), np.uint8))
    feed = source_feed(str(tmp_path), Scene("s"), fps=50.0, folder_period_s=0.2)
    start = time.monotonic()
    shown = [(round(time.monotonic() - start, 2), int(f.image_bgr[0, 0, 0])) for f in feed.frames()]
    firsts = {v: t for t, v in reversed(shown)}
    assert set(firsts) == {50, 100}
    assert firsts[100] == pytest.approx(0.2, abs=0.06)
    # The last image is held for a period too, then the recording ends.
    assert shown[-1][0] == pytest.approx(0.4, abs=0.08)


@pytest.mark.parametrize(("loop", "games"), [(False, [0, 0]), (True, [0, 0, 1, 1, 2])])
def test_a_looped_recording_plays_again_as_a_new_game(tmp_path: Path, loop: bool, games: list[int]):
    for k in range(2):
        cv2.imwrite(str(tmp_path / f"{k}.png"), np.full((20, 30, 3), 50 * (k + 1), np.uint8))
    feed = source_feed(str(tmp_path), Scene("s"), fps=500.0, folder_period_s=0.01, loop=loop)
    shown = list(itertools.islice(feed.frames(), 400))
    # one frame per image and game (a folder's image is repeated while it is held)
    changes = [f for k, f in enumerate(shown) if k == 0 or f.image_bgr is not shown[k - 1].image_bgr]
    assert [f.scene.game for f in changes][: len(games)] == games
    assert {f.scene.key for f in shown} == {"s"}


def test_a_still_image_becomes_an_image_feed():
    feed = source_feed(str(REPO / "sample_images/small_table_720p.jpg"), Scene("s"), fps=100.0, folder_period_s=1.0)
    assert isinstance(feed, ImageFeed)
    frames = list(itertools.islice(feed.frames(), 2))
    assert frames[0].image_bgr.shape == (720, 1280, 3) and frames[1].image_bgr is frames[0].image_bgr


@pytest.mark.parametrize("spec", ["no/such/file.jpg", "notes.txt"])
def test_bad_sources(tmp_path: Path, spec: str):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(SourceError):
        source_feed(str(tmp_path / spec), Scene("s"), fps=10.0, folder_period_s=1.0)


def test_sample_game_holds_then_moves_to_the_next_frame():
    a = SampleScene(np.zeros((20, 30, 3), np.uint8), Scene("a"))
    b = SampleScene(np.full((20, 30, 3), 200, np.uint8), Scene("b"))
    feed = SampleFeed([a, b], hold_s=0.1, move_s=0.06, fps=200.0)
    frames = list(itertools.islice(feed.frames(), 120))
    keys = [f.scene.key for f in frames]
    levels = [int(f.image_bgr[0, 0, 0]) for f in frames]
    assert keys[0] == "a" and "b" in keys
    # The move blends a quarter, a half and three quarters of the way, then b is shown as it is.
    assert {50, 100, 150} <= set(levels) and 200 in levels
    assert keys[levels.index(50)] == "a" and keys[levels.index(150)] == "b"


@pytest.mark.skipif(not sample_available(), reason="the sample frames are not in this checkout")
def test_bundled_sample_scenes_have_cameras_and_rosters():
    scenes = load_sample_scenes()
    assert len(scenes) == 3
    for s in scenes:
        assert s.image_bgr.shape == (1080, 1920, 3)
        assert s.scene.camera is not None and s.scene.roster is not None and s.scene.roster.units
        assert "visibility" not in s.scene.roster.extras
