"""Frame sequences of a game in motion: settled states, and the moves between them with a hand in the frame."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence

import numpy as np

from synth.generate import SKIN_TONES, lift_hand
from synth.render import Image, Truth, render
from synth.scene import Hand, Scene

# The hand of a move hovers with its fingertips this high over the table (just over the figures), the arm rising
# this steeply, the fingers pointing this far down.
MOVE_FINGERTIPS_MM = 45.0
MOVE_ARM_ELEVATION_DEG = 30.0
MOVE_FINGERS_DOWN_DEG = 45.0
# The wrist trails the fingertips by about this much, towards the player.
MOVE_WRIST_BACK_MM = 80.0


def frame_seed(seed: int, state_index: int, frame_index: int) -> int:
    """The render seed of one frame of a sequence: distinct per frame, fixed by the sequence seed."""
    return int(np.random.SeedSequence([seed, state_index, frame_index]).generate_state(1)[0])


def render_sequence(scenes: Sequence[Scene], frames_per_state: int, seed: int) -> Iterator[tuple[Image, Truth]]:
    """``frames_per_state`` frames of each scene in turn, as a camera streaming a game would see them: the
    table is the same, the sensor noise differs from frame to frame. Yields (image, truth) as :func:`render`."""
    for i, scene in enumerate(scenes):
        for f in range(frames_per_state):
            yield render(scene, frame_seed(seed, i, f))


def move_scenes(before: Scene, after: Scene, steps: int, seed: int) -> list[Scene]:
    """``steps`` scenes between two settled states: every model whose centre differs slides in a straight line
    from its place in ``before`` to its place in ``after``, and a hand hovers over the moving models, reaching in
    from the nearest table edge. Models are matched by id; ``after`` decides everything else."""
    rng = np.random.default_rng(seed)
    start = {m.model.id: (m.model.x_mm, m.model.y_mm) for m in before.models}
    moving = [m for m in after.models if m.model.id in start and (m.model.x_mm, m.model.y_mm) != start[m.model.id]]
    skin = SKIN_TONES[int(rng.integers(len(SKIN_TONES)))]
    out = []
    for k in range(1, steps + 1):
        t = k / (steps + 1)
        where = {}
        for m in moving:
            x0, y0 = start[m.model.id]
            where[m.model.id] = (x0 + t * (m.model.x_mm - x0), y0 + t * (m.model.y_mm - y0))
        models = tuple(
            dataclasses.replace(
                m, model=dataclasses.replace(m.model, x_mm=where[m.model.id][0], y_mm=where[m.model.id][1])
            )
            if m.model.id in where
            else m
            for m in after.models
        )
        hands = after.hands
        if where:
            cx = float(np.mean([p[0] for p in where.values()]))
            cy = float(np.mean([p[1] for p in where.values()]))
            hands = (*hands, _hand_over(after, cx, cy, skin))
        out.append(dataclasses.replace(after, models=models, hands=hands))
    return out


def hand_over_moved(before: Scene, after: Scene, seed: int) -> Scene:
    """``after`` with a hand still hovering over the models that moved since ``before`` (a player who has not let
    go yet); ``after`` itself when nothing moved."""
    start = {m.model.id: (m.model.x_mm, m.model.y_mm) for m in before.models}
    moved = [m for m in after.models if m.model.id in start and (m.model.x_mm, m.model.y_mm) != start[m.model.id]]
    if not moved:
        return after
    rng = np.random.default_rng(seed)
    skin = SKIN_TONES[int(rng.integers(len(SKIN_TONES)))]
    cx = float(np.mean([m.model.x_mm for m in moved]))
    cy = float(np.mean([m.model.y_mm for m in moved]))
    return dataclasses.replace(after, hands=(*after.hands, _hand_over(after, cx, cy, skin)))


def _hand_over(scene: Scene, x: float, y: float, skin: tuple[float, float, float]) -> Hand:
    # The arm comes from the nearest table edge.
    w, d = scene.table.width_mm, scene.table.depth_mm
    edges = {0.0: w - x, 180.0: x, 90.0: d - y, -90.0: y}
    azimuth = min(edges, key=lambda a: edges[a])
    a = math.radians(azimuth)
    hand = Hand(
        wrist_mm=(x + MOVE_WRIST_BACK_MM * math.cos(a), y + MOVE_WRIST_BACK_MM * math.sin(a), 0.0),
        azimuth_deg=azimuth,
        elevation_deg=MOVE_ARM_ELEVATION_DEG,
        fingers_down_deg=MOVE_FINGERS_DOWN_DEG,
        skin=skin,
    )
    return lift_hand(hand, MOVE_FINGERTIPS_MM)
