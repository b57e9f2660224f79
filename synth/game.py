"""Recorded games with ground truth: settled states of a scene, each held for a while, joined by moves with a hand
over the moving models, written as a video file.

Each distinct scene is rendered once (rendering is the slow part); the frames of a hold repeat it with fresh
sensor noise, so that change detection sees a camera's flicker and not a frozen picture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from synth.errors import SceneError
from synth.render import render
from synth.scene import Scene
from synth.sequence import frame_seed, hand_over_moved, move_scenes

# The video codec of the written games: Motion-JPEG in AVI, which the headless OpenCV wheel writes and reads.
FOURCC = "MJPG"
# Grey-level sigma of the per-frame sensor noise added to each repeated frame.
FRAME_NOISE_GREY = 1.5


@dataclass(frozen=True)
class GameVideo:
    """A written game: the path, its frame rate, and for each settled state the frames it is held (first, last)."""

    path: Path
    fps: float
    holds: tuple[tuple[int, int], ...]
    frames: int


def _noisy(image: NDArray[np.uint8], rng: np.random.Generator) -> NDArray[np.uint8]:
    noise = rng.normal(0.0, FRAME_NOISE_GREY, image.shape)
    return np.asarray(np.clip(image + noise, 0, 255), dtype=np.uint8)


def write_game(
    states: Sequence[Scene],
    path: str | Path,
    *,
    fps: float,
    hold_frames: int,
    move_steps: int,
    frames_per_step: int,
    seed: int,
    hand_hold_frames: int = 0,
) -> GameVideo:
    """Write a game: each of ``states`` held for ``hold_frames`` frames, and between two states ``move_steps``
    scenes of the move (models sliding, a hand over them) of ``frames_per_step`` frames each. With
    ``hand_hold_frames``, the hand stays still over the moved models, in their new places, that many frames before
    it leaves (a player who has not let go: still, but not settled)."""
    if not states:
        raise SceneError("a game needs at least one settled state")
    rng = np.random.default_rng(seed)
    path = Path(path)
    size = (states[0].camera.image_width, states[0].camera.image_height)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*FOURCC), fps, size)
    if not writer.isOpened():
        raise SceneError(f"{path}: cannot write a {FOURCC} video")
    holds = []
    frame = 0
    try:
        for i, scene in enumerate(states):
            if i > 0:
                for k, between in enumerate(move_scenes(states[i - 1], scene, move_steps, seed + i)):
                    image = np.asarray(render(between, frame_seed(seed, i, k + 1))[0], dtype=np.uint8)
                    for _ in range(frames_per_step):
                        writer.write(_noisy(image, rng))
                        frame += 1
                if hand_hold_frames:
                    held = hand_over_moved(states[i - 1], scene, seed + i)
                    image = np.asarray(render(held, frame_seed(seed, i, move_steps + 1))[0], dtype=np.uint8)
                    for _ in range(hand_hold_frames):
                        writer.write(_noisy(image, rng))
                        frame += 1
            still = np.asarray(render(scene, frame_seed(seed, i, 0))[0], dtype=np.uint8)
            holds.append((frame, frame + hold_frames - 1))
            for _ in range(hold_frames):
                writer.write(_noisy(still, rng))
                frame += 1
    finally:
        writer.release()
    return GameVideo(path, fps, tuple(holds), frame)
