"""Regression guard on a realistic rendered frame: perspective, lens distortion, figures over the rims, shadows,
dice, tokens, printed circles, terrain and a hand (see :mod:`tableref.synth`), scored end to end.

The frame is rendered once per test session (seeded, so always the same). The bounds sit a small margin below
what the detector reached when they were set (1080p, clutter "lots", seed 1006: recall 98 %, precision 95 %,
sizes right 97 %, median centre error 0.28 mm, every coordinate error within 2 sigma; the detector before
seeding by voting and the figure cue reached 92 % recall and 92 % precision), so that a change which loses
bases, lets impostors through or makes sigma overconfident fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tableref.config import load_config
from tableref.evaluate import FrameScore, load_samples, score_frame
from tableref.synth.generate import random_scene
from tableref.synth.make_samples import Sample, write_sample

_SEED = 1006
_MODELS = 60


@pytest.fixture(scope="session")
def rendered_score(tmp_path_factory: pytest.TempPathFactory) -> FrameScore:
    out: Path = tmp_path_factory.mktemp("rendered")
    write_sample(Sample("frame", "regression frame", lambda: random_scene(_SEED, "1080p", _MODELS, "lots"), _SEED), out)
    (sample,) = load_samples(out)
    config = load_config()
    return score_frame(sample, config, config.evaluate)


@pytest.mark.parametrize(
    ("measure", "bound"),
    [
        ("recall", 0.96),
        ("precision", 0.94),
    ],
)
def test_rendered_frame_recall_and_precision(rendered_score: FrameScore, measure: str, bound: float) -> None:
    value = getattr(rendered_score, measure)
    assert value >= bound, f"{measure} {value:.3f} below {bound}"


def test_rendered_frame_sizes_and_centres(rendered_score: FrameScore) -> None:
    assert rendered_score.visible_count >= 20, "the frame holds enough visible bases to judge by"
    assert rendered_score.size_right.mean() >= 0.92
    assert float(sorted(rendered_score.error_mm)[len(rendered_score.error_mm) // 2]) <= 0.33


def test_rendered_frame_sigma_is_not_overconfident(rendered_score: FrameScore) -> None:
    within = float((abs(rendered_score.z) <= 2.0).mean())
    assert within >= 0.9, f"only {within:.1%} of the coordinate errors within 2 sigma"
