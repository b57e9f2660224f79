"""Calls at the line on rendered frames: enemy pairs 0.2, 0.5, 1 and 2 mm either side of base contact and of the
1", 2" and 3" lines, at 1080p and 4K, with and without camera.json. Counts wrong `clear` calls (must be zero) and
the share of `close` calls, overall and for pairs at least 1 mm from their line.

    .venv/bin/python bench/bench_calls.py [--frames 8] [--first 0] [--resolutions 1080p 4k] [--lens both|yes|no]
        [--config F]

Frame k is made from seed 1000 + k. Settings were chosen on the first 48; ``--first 48`` measures frames past them.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace

import _root  # noqa: F401  (the repository root on sys.path: synth, tests)
import numpy as np

import rules
from calibration.camera import camera_from_dict
from synth.calls import CallResult, judge_pairs, line_pairs_scene
from synth.render import render
from tableref.config import load_config
from tableref.pipeline.frame import detect_frame
from tableref.pipeline.identity import carry_identities

MATCH_GATE_MM = 10.0
# The built-in profiles call "close" within 2 combined sigmas.
CLOSE_SIGMAS = 2.0


def _without_heights(state: rules.TableState) -> rules.TableState:
    models = tuple(
        replace(m, base=replace(m.base, height_mm=None)) if isinstance(m.base, rules.RoundBase) else m
        for m in state.models
    )
    return replace(state, models=models)


def run(
    resolution: str, lens: bool, frames: int, config_path: str | None = None, heights: bool = True, first: int = 0
) -> tuple[list[CallResult], int]:
    config = load_config(config_path)
    results: list[CallResult] = []
    placed = 0
    for seed in range(first, first + frames):
        scene, pairs = line_pairs_scene(1000 + seed, resolution)
        image, truth = render(scene, seed)
        camera = camera_from_dict(dict(truth.camera)) if lens else None
        roster = truth.state if heights else _without_heights(truth.state)
        # as `tableref measure` does: the models stand on the roster's bases
        analysis = detect_frame(np.asarray(image), scene.table, config, camera, roster=roster)
        state = carry_identities(analysis.state, roster, MATCH_GATE_MM, take_bases=True)
        judged = judge_pairs(state, pairs, CLOSE_SIGMAS)
        for r in judged:
            if r.wrong:
                print(
                    f"  wrong clear: seed {1000 + seed} {resolution} lens {'yes' if lens else 'no'}, "
                    f"{r.pair.a}-{r.pair.b} at the {r.pair.line} line, gap {r.pair.gap_mm:.2f} mm measured "
                    f"{r.measured_gap_mm:.2f} +- {r.sigma_mm:.2f} mm",
                    file=sys.stderr,
                )
        results += judged
        placed += len(pairs)
    return results, placed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--first", type=int, default=0, help="the first frame (0: seed 1000)")
    parser.add_argument("--resolutions", nargs="+", default=["1080p", "4k"])
    parser.add_argument("--lens", choices=["both", "yes", "no"], default="both", help="with camera.json, without, both")
    parser.add_argument("--config", help="settings TOML overriding tableref/defaults.toml")
    parser.add_argument(
        "--no-heights", action="store_true", help="the roster declares base sizes but not the rims' heights"
    )
    args = parser.parse_args()
    lenses = {"both": (True, False), "yes": (True,), "no": (False,)}[args.lens]
    print(
        f"{'resolution':10} {'lens':5} {'placed':>6} {'judged':>6} {'wrong clear':>11} {'close':>7} "
        f"{'>=1 mm off':>10} {'close, >=1 mm off':>18}  s"
    )
    for resolution in args.resolutions:
        for lens in lenses:
            start = time.perf_counter()
            results, placed = run(
                resolution, lens, args.frames, args.config, heights=not args.no_heights, first=args.first
            )
            far = [r for r in results if r.margin_mm >= 1.0 - 1e-9]
            close = np.mean([r.call == "close" for r in results]) if results else float("nan")
            close_far = np.mean([r.call == "close" for r in far]) if far else float("nan")
            wrong = sum(r.wrong for r in results)
            print(
                f"{resolution:10} {'yes' if lens else 'no':5} {placed:6d} {len(results):6d} {wrong:11d} "
                f"{100 * close:6.1f}% {len(far):10d} {100 * close_far:17.1f}%  {time.perf_counter() - start:.0f}"
            )


if __name__ == "__main__":
    main()
