"""A small recorded game with ground truth for the review tests: rendered once per session.

Black bases with a figure on each on the plain mat, a camera straight over the table, four settled states: a legal
Move; a casualty removed and an Advance; a unit arriving and a move too long for any plan.
"""

from __future__ import annotations

import dataclasses
import shutil
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import rules
from calibration.spec import load_table_spec
from synth.game import GameVideo, write_game
from synth.generate import fit_camera, make_figure, plain_scene
from synth.scene import Scene, SceneModel

INCH = 25.4
FPS = 10.0
FRAME_SIZE = (1280, 720)
CAMERA_POSITION_MM = (914.5, 609.5, 1400.0)
BASE_MM = 32.0

UNITS = (
    rules.Unit("alpha", player="red", move_in=6),
    rules.Unit("bravo", player="blue", move_in=6),
    rules.Unit("charlie", player="red", move_in=6),
    rules.Unit("delta", player="blue", move_in=6),
)
# Ground truth of every settled state: model id -> (unit, x_mm, y_mm).
START = {
    "a1": ("alpha", 400.0, 400.0),
    "a2": ("alpha", 440.0, 400.0),
    "a3": ("alpha", 480.0, 420.0),
    "b1": ("bravo", 1300.0, 800.0),
    "b2": ("bravo", 1345.0, 800.0),
    "c1": ("charlie", 700.0, 900.0),
}
ALPHA_MOVE_MM = 5.0 * INCH  # a legal Move
ALPHA_ADVANCE_MM = 10.0 * INCH  # beyond a Move: an Advance
CHARLIE_MOVE_MM = 14.0 * INCH  # beyond Move + Advance: illegal
# With a bump, the camera stands elsewhere from this settled state on.
BUMPED_FROM_STATE = 2
ARRIVING = {"d1": ("delta", 1500.0, 300.0), "d2": ("delta", 1545.0, 300.0)}


def _shift(models: dict[str, tuple[str, float, float]], unit: str, dx: float) -> dict[str, tuple[str, float, float]]:
    return {k: (u, x + dx, y) if u == unit else (u, x, y) for k, (u, x, y) in models.items()}


def truth_states() -> list[dict[str, tuple[str, float, float]]]:
    s0 = dict(START)
    s1 = _shift(s0, "alpha", ALPHA_MOVE_MM)
    s2 = _shift({k: v for k, v in s1.items() if k != "b2"}, "alpha", ALPHA_ADVANCE_MM)
    s3 = _shift({**s2, **ARRIVING}, "charlie", CHARLIE_MOVE_MM)
    return [s0, s1, s2, s3]


def roster_state(models: dict[str, tuple[str, float, float]]) -> rules.TableState:
    return rules.TableState(
        rules.Table(1829.0, 1219.0),
        UNITS,
        tuple(rules.Model(k, u, x, y, rules.RoundBase(BASE_MM)) for k, (u, x, y) in models.items()),
    )


def _figure(model_id: str):  # type: ignore[no-untyped-def]
    """The same miniature for a model in every state (seeded by its id)."""
    rng = np.random.default_rng(zlib.crc32(model_id.encode()))
    return make_figure(rng, BASE_MM, ((0.8, 0.75, 0.6), (0.6, 0.2, 0.15)))


def scenes(bump_mm: float = 0.0) -> list[Scene]:
    """The settled states; with ``bump_mm``, the camera is knocked that far sideways (and turned to follow)
    during the second move, and stays there."""
    spec = load_table_spec()
    look_at = (914.5, 609.5, 0.0)
    camera = fit_camera(spec, FRAME_SIZE, CAMERA_POSITION_MM, look_at)
    x, y, z = CAMERA_POSITION_MM
    bumped = fit_camera(spec, FRAME_SIZE, (x + bump_mm, y - bump_mm / 2, z), (look_at[0] + bump_mm / 3, *look_at[1:]))
    out = []
    for k, models in enumerate(truth_states()):
        if bump_mm and k == BUMPED_FROM_STATE:
            camera = bumped
        placed = [
            SceneModel(rules.Model(k, u, x, y, rules.RoundBase(BASE_MM)), 4.0, "black", "black", 0.0, _figure(k))
            for k, (u, x, y) in models.items()
        ]
        out.append(dataclasses.replace(plain_scene(camera, spec, placed), units=UNITS))
    return out


def make_game(folder: Path, hand_hold_frames: int = 0, bump_mm: float = 0.0) -> GameVideo:
    return write_game(
        scenes(bump_mm),
        folder / "game.avi",
        fps=FPS,
        hold_frames=12,
        move_steps=2,
        frames_per_step=3,
        seed=5,
        hand_hold_frames=hand_hold_frames,
    )


def copy_recording(game: GameVideo, folder: Path, names: Sequence[str]) -> list[Path]:
    """The game's recording copied into ``folder`` once per name (``name`` plus the recording's suffix), as if
    several tables had been filmed."""
    paths = [folder / f"{name}{game.path.suffix}" for name in names]
    for path in paths:
        shutil.copy(game.path, path)
    return paths
