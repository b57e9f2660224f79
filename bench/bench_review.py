"""Benchmark of ``tableref review``: how many times faster than real time a recorded game is reviewed.

A game is rendered at each resolution (a plain table seen from 1.4 m straight up, miniatures on black bases in
units of a few, four units a row, by default a dozen in four units; several settled states joined by moves, a unit
out and back by turns, with a hand over the moving models), each distinct frame once,
and written as a 30 fps MPEG-4 video (``mp4v``, as a phone or a webcam recorder would give) whose settled
states are held ``--hold-s`` seconds; the frames of a hold differ by sensor noise. The video is then reviewed
with the default settings, as ``tableref review VIDEO`` would (without the progress bar), and the wall time is
compared with the video's length. Decoding alone is timed on the same file for reference.

It prints the bases found against the true count in every settled state: a fast review that finds no bases
measures decoding, not a review.

Run by hand: ``.venv/bin/python bench/bench_review.py [--resolutions 1080p,4k] [--hold-s 8] [--states 4] [--units 4]
[--per-unit 3]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import tempfile
import time
from pathlib import Path

import _root  # noqa: F401  (the repository root on sys.path: synth, tests)
import cv2
import numpy as np

import rules
from calibration.spec import load_table_spec
from synth.generate import RESOLUTIONS, fit_camera, make_figure, plain_scene
from synth.render import render
from synth.scene import SceneModel
from synth.sequence import frame_seed, move_scenes
from tableref.config import load_config
from tableref.review.recording import Recording
from tableref.review.run import Reviewer
from tableref.review.store import ReviewStore

FPS = 30.0
FOURCC = "mp4v"
MOVE_STEPS = 3
MOVE_STEP_S = 0.5
NOISE_GREY = 1.5
INCH = 25.4


def game_scenes(resolution: str, states: int, seed: int, units_count: int = 4, per_unit: int = 3) -> list:  # type: ignore[type-arg]
    rng = np.random.default_rng(seed)
    spec = load_table_spec()
    camera = fit_camera(spec, RESOLUTIONS[resolution], (914.5, 609.5, 1400.0), (914.5, 609.5, 0.0))
    units = [rules.Unit(f"u{k}", player="AB"[k % 2], move_in=6) for k in range(units_count)]
    places = {}
    for k, u in enumerate(units):
        # four units a row, rows 300 mm apart: a unit moved 2-5.5" (and back by its next move) stays clear of the next
        x0, y0 = 350.0 + 350.0 * (k % 4), 150.0 + 200.0 * (k % 2) + 300.0 * (k // 4)
        for j in range(per_unit):
            places[f"{u.id}m{j}"] = (u.id, x0 + 40.0 * (j % 7), y0 + 40.0 * (j // 7))
    # the same miniature on each base in every state
    figures = {k: make_figure(rng, 32.0, ((0.8, 0.75, 0.6), (0.6, 0.2, 0.15))) for k in places}
    out = []
    away: set[str] = set()
    for s in range(states):
        if s:
            mover = units[int(rng.integers(len(units)))].id
            dy = float(rng.uniform(2.0, 5.5)) * INCH
            # out and back: a unit never strays more than one move from its place
            sign = -1.0 if mover in away else 1.0
            away ^= {mover}
            places = {k: (u, x, y + sign * dy) if u == mover else (u, x, y) for k, (u, x, y) in places.items()}
        models = [
            SceneModel(rules.Model(k, u, x, y, rules.RoundBase(32.0)), 4.0, "black", "black", 0.0, figures[k])
            for k, (u, x, y) in places.items()
        ]
        out.append(dataclasses.replace(plain_scene(camera, spec, models), units=tuple(units)))
    return out


def write_video(path: Path, scenes: list, hold_s: float, seed: int) -> int:  # type: ignore[type-arg]
    rng = np.random.default_rng(seed)
    cam = scenes[0].camera
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*FOURCC), FPS, (cam.image_width, cam.image_height))
    frames = 0

    def put(image: np.ndarray, count: int) -> None:
        nonlocal frames
        for _ in range(count):
            noisy = np.clip(image + rng.normal(0.0, NOISE_GREY, image.shape), 0, 255).astype(np.uint8)
            writer.write(noisy)
            frames += 1

    for i, scene in enumerate(scenes):
        if i:
            for k, between in enumerate(move_scenes(scenes[i - 1], scene, MOVE_STEPS, seed + i)):
                put(np.asarray(render(between, frame_seed(seed, i, k + 1))[0]), round(MOVE_STEP_S * FPS))
        put(np.asarray(render(scene, frame_seed(seed, i, 0))[0]), round(hold_s * FPS))
    writer.release()
    return frames


def decode_s(path: Path) -> float:
    cap = cv2.VideoCapture(str(path))
    start = time.perf_counter()
    while cap.grab():
        pass
    cap.release()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resolutions", default="1080p,4k")
    parser.add_argument("--hold-s", type=float, default=8.0)
    parser.add_argument("--states", type=int, default=4)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--units", type=int, default=4, help="units on the table (four a row, at most 12)")
    parser.add_argument("--per-unit", type=int, default=3, help="models in each unit (seven a line, at most 14)")
    args = parser.parse_args()
    if not (1 <= args.units <= 12 and 1 <= args.per_unit <= 14):
        parser.error(f"expected 1-12 units of 1-14 models, got {args.units} of {args.per_unit}")
    config = load_config()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(
        "| video | length | frames | states found | bases found / true, per state | review time | x real time "
        "| decode only (grab) |"
    )
    print("|---|---:|---:|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for resolution in args.resolutions.split(","):
            scenes = game_scenes(resolution, args.states, args.seed, args.units, args.per_unit)
            video = Path(tmp) / f"game_{resolution}.mp4"
            frames = write_video(video, scenes, args.hold_s, args.seed)
            length_s = frames / FPS
            grab = decode_s(video)
            out = Path(tmp) / f"game_{resolution}.sqlite"
            start = time.perf_counter()
            with ReviewStore(out) as store:
                reviewer = Reviewer(
                    Recording(video, config.review.photo_period_s),
                    store,
                    load_table_spec(),
                    config,
                    rules.load_profile("skirmish"),
                )
                found = reviewer.run()
                seen = [len(st.state.models) for st in store.states()]
            took = time.perf_counter() - start
            bases = ", ".join(f"{n}/{len(sc.models)}" for n, sc in zip(seen, scenes, strict=False))
            print(
                f"| {resolution} {FPS:.0f} fps {FOURCC} | {length_s:.1f} s | {frames} | {found} of {len(scenes)} "
                f"| {bases} | "
                f"{took:.1f} s | {length_s / took:.1f} | {grab:.1f} s ({length_s / grab:.1f}x) |",
                flush=True,
            )


if __name__ == "__main__":
    main()
