"""The sample game: a short rendered recording of one game on the 30 x 22 inch board, with its roster, camera and
ground truth, for the review example and the demo.

Five settled states: the armies deployed; the Clone Troopers Move 4"; the Battle Droids charge into base contact;
a Clone Trooper in contact is taken off as a casualty; the Commandos Advance 8". A hand reaches in over every
move and stays still a moment before it leaves.

    .venv/bin/python -m synth.make_game --out sample_game
    .venv/bin/tableref review sample_game/game.avi --roster sample_game/roster.json \\
        --table sample_game/table.toml --camera sample_game/camera.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import rules
from calibration.spec import TableSpec
from synth.game import GameVideo, write_game
from synth.generate import fit_camera, make_figure, plain_scene
from synth.make_samples import _small_table
from synth.scene import Scene, SceneModel
from synth.wide.tables import spec_toml

INCH = 25.4
FRAME_SIZE = (1280, 720)
CAMERA_POSITION_MM = (381.0, 300.0, 760.0)
FPS = 10.0
# Each settled state is held 3 s: long enough to read the findings when the demo plays the game.
HOLD_FRAMES = 30
SEED = 11

UNITS = (
    rules.Unit("clones", player="red", name="Clone Troopers", leader="c1", move_in=6, abilities=("charge",)),
    rules.Unit("droids", player="blue", name="Battle Droids", leader="d1", move_in=6, abilities=("charge",)),
    rules.Unit("commandos", player="blue", name="Commandos", leader="k1", move_in=6),
)
# (unit, base diameter mm, colours of the figure)
LOOKS = {
    "clones": (32.0, ((0.85, 0.85, 0.82), (0.15, 0.2, 0.7))),
    "droids": (32.0, ((0.45, 0.6, 0.7), (0.3, 0.4, 0.5))),
    "commandos": (40.0, ((0.25, 0.3, 0.2), (0.5, 0.55, 0.45))),
}
CONTACT_GAP_MM = 0.3


def truth_states() -> list[dict[str, tuple[str, float, float]]]:
    """Model id -> (unit, x_mm, y_mm) in every settled state."""
    start = {f"c{k + 1}": ("clones", 220.0 + 40.0 * k, 150.0) for k in range(5)}
    start |= {f"d{k + 1}": ("droids", 270.0 + 40.0 * k, 470.0) for k in range(4)}
    start |= {"k1": ("commandos", 580.0, 120.0), "k2": ("commandos", 630.0, 120.0)}

    def shifted(s: dict[str, tuple[str, float, float]], unit: str, dx: float, dy: float) -> dict:  # type: ignore[type-arg]
        return {k: (u, x + dx, y + dy) if u == unit else (u, x, y) for k, (u, x, y) in s.items()}

    moved = shifted(start, "clones", 0.0, 4.0 * INCH)
    # the droids' leader charges straight on into base contact with the trooper it faces, c2, 10 mm to its side
    _, c2_x, c2_y = moved["c2"]
    contact_y = c2_y + math.sqrt((32.0 + CONTACT_GAP_MM) ** 2 - (start["d1"][1] - c2_x) ** 2)
    charged = shifted(moved, "droids", 0.0, contact_y - start["d1"][2])
    casualty = {k: v for k, v in charged.items() if k != "c3"}
    advanced = shifted(casualty, "commandos", -8.0 * INCH, 0.0)
    return [start, moved, charged, casualty, advanced]


def roster(models: dict[str, tuple[str, float, float]], table: TableSpec) -> rules.TableState:
    return rules.TableState(
        rules.Table(table.width_mm, table.depth_mm),
        UNITS,
        tuple(rules.Model(k, u, x, y, rules.RoundBase(LOOKS[u][0], height_mm=4.0)) for k, (u, x, y) in models.items()),
    )


def scenes(table: TableSpec) -> list[Scene]:
    camera = fit_camera(table, FRAME_SIZE, CAMERA_POSITION_MM, (table.width_mm / 2, table.depth_mm / 2, 0.0))
    out = []
    for models in truth_states():
        placed = []
        for k, (u, x, y) in models.items():
            size, colours = LOOKS[u]
            figure = make_figure(np.random.default_rng(zlib.crc32(k.encode())), size, colours)
            model = rules.Model(k, u, x, y, rules.RoundBase(size))
            placed.append(SceneModel(model, 4.0, "black", "black", 90.0 if u == "droids" else -90.0, figure))
        out.append(dataclasses.replace(plain_scene(camera, table, placed), units=UNITS))
    return out


def make_game(out: Path) -> GameVideo:
    """Write the game into ``out``: game.avi, roster.json, table.toml, camera.json and truth.json."""
    out.mkdir(parents=True, exist_ok=True)
    table = _small_table()
    played = scenes(table)
    game = write_game(
        played,
        out / "game.avi",
        fps=FPS,
        hold_frames=HOLD_FRAMES,
        move_steps=2,
        frames_per_step=3,
        seed=SEED,
        hand_hold_frames=4,
    )
    states = truth_states()
    rules.dump_state(roster(states[0], table), out / "roster.json")
    (out / "table.toml").write_text(spec_toml(table), encoding="utf-8")
    (out / "camera.json").write_text(json.dumps(played[0].camera.to_json(), indent=2) + "\n", encoding="utf-8")
    truth = {
        "holds": [list(h) for h in game.holds],
        "states": [rules.state_to_dict(roster(s, table)) for s in states],
    }
    (out / "truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
    return game


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="sample_game", help="folder to write the game into (default: sample_game)")
    args = parser.parse_args(argv)
    game = make_game(Path(args.out))
    print(f"Wrote {game.path} ({game.frames} frames, {len(game.holds)} settled states) and its roster, camera, truth.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
