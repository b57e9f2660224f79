"""Benchmark of measuring only what changed since the frame before (``detect_frame``'s ``previous``).

Frames: seeded renders of a 6' x 4' table (``random_scene``, 40 models asked, clutter "lots") at 4K and 1080p.
For each scene: a first frame, measured whole; another shot of the same table (its own sensor noise); a shot with
one unit moved 80 mm (the first unit, in seeded order, with room to move in one of 12 seeded directions), and one
with a single model moved 2" (chosen the same way); and shots with single models nudged by 0.1, 0.2, 0.3 and 0.5 mm.

Per frame with a unit or a model moved: the share of the view measured again, the time of the whole frame and of
the frame measured in part (calibration reused, runs alternated, median), and against the truth: recall (bases at
least 60 % visible) and median centre error of the moved models and of all, measured whole and in part. Then: how
many pixels the other shot of the same table changed (none should count), and the share of nudges noticed at each
size.

Run by hand:
``.venv/bin/python bench/bench_changes.py [--res 4k 1080p] [--seeds 1000 ...] [--runs 3] [--shots 1] [--nudged 6]``.
The README's counts of shots and nudges: ``--res 4k --seeds 1000 ... 1005 --shots 4`` and ``--res 1080p --seeds 1000
... 1013 --shots 4``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import _root  # noqa: F401  (the repository root on sys.path: synth, tests)
import numpy as np

import rules
from calibration.camera import camera_from_dict
from synth.generate import random_scene, with_models
from synth.render import render
from synth.scene import Scene
from tableref.config import load_config
from tableref.pipeline.changes import change_view, changed_since
from tableref.pipeline.frame import detect_frame
from tableref.pipeline.identity import carry_identities
from tableref.settings import PipelineSettings

HEADER = "| frame | unit | share measured | whole ms | in part ms | moved: whole, in part | all: whole, in part |"
MOVE_MM = 80.0
# One model alone moved 2".
ONE_MOVE_MM = 50.8
NUDGES_MM = (0.1, 0.2, 0.3, 0.5)
NUDGED_MODELS = 6
MIN_VISIBILITY = 0.6
GATE_MM = 8.0
# Moved models keep this far (mm) from the table's edge and this far from every other base.
EDGE_MM = 60.0
CLEARANCE_MM = 2.0


def _clear(scene: Scene, moved: dict[str, tuple[float, float]], m: rules.Model) -> bool:
    """Whether model ``m`` at its new centre stays off the edges and clear of every model not moved."""
    x, y = moved[m.id]
    r = m.base.diameter_mm / 2.0  # type: ignore[union-attr]
    width, depth = scene.table.width_mm, scene.table.depth_mm
    if not (r + EDGE_MM < x < width - r - EDGE_MM and r + EDGE_MM < y < depth - r - EDGE_MM):
        return False
    return all(
        math.hypot(x - o.model.x_mm, y - o.model.y_mm) >= r + o.model.base.diameter_mm / 2.0 + CLEARANCE_MM  # type: ignore[union-attr]
        for o in scene.models
        if o.model.id not in moved
    )


def unit_move(scene: Scene, rng: np.random.Generator) -> dict[str, tuple[float, float]] | None:
    """New centres for every model of one unit moved ``MOVE_MM``, clear of the others and of the edges."""
    units: dict[str, list[rules.Model]] = {}
    for m in scene.models:
        if m.model.unit is not None:
            units.setdefault(m.model.unit, []).append(m.model)
    for unit in rng.permutation(sorted(units)):
        for angle in rng.uniform(0.0, 2.0 * math.pi, 12):
            dx, dy = MOVE_MM * math.cos(angle), MOVE_MM * math.sin(angle)
            moved = {m.id: (m.x_mm + dx, m.y_mm + dy) for m in units[str(unit)]}
            if all(_clear(scene, moved, m) for m in units[str(unit)]):
                return moved
    return None


def model_move(scene: Scene, rng: np.random.Generator) -> dict[str, tuple[float, float]] | None:
    """A new centre for one model moved ``ONE_MOVE_MM``, clear of the others and of the edges."""
    for k in rng.permutation(len(scene.models)):
        m = scene.models[int(k)].model
        for angle in rng.uniform(0.0, 2.0 * math.pi, 12):
            moved = {m.id: (m.x_mm + ONE_MOVE_MM * math.cos(angle), m.y_mm + ONE_MOVE_MM * math.sin(angle))}
            if _clear(scene, moved, m):
                return moved
    return None


def changed_px(shot: np.ndarray, before: np.ndarray, p: PipelineSettings) -> int:
    """How many pixels of the small copy of ``shot`` count as changed since ``before``."""
    return int(changed_since(change_view(np.asarray(shot), p), before, p).sum())


def errors_mm(state: rules.TableState, truth: rules.TableState) -> dict[str, float]:
    carried = carry_identities(state, truth, GATE_MM)
    listed = {m.id: m for m in truth.models}
    return {
        m.id: math.hypot(m.x_mm - listed[m.id].x_mm, m.y_mm - listed[m.id].y_mm)
        for m in carried.models
        if m.id in listed
    }


def summary(errors: dict[str, float], ids: list[str]) -> str:
    found = [errors[i] for i in ids if i in errors]
    median = statistics.median(found) if found else float("nan")
    return f"{len(found)}/{len(ids)} {median:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--res", nargs="+", default=["4k", "1080p"], choices=["4k", "1080p"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1000, 1001, 1002, 1003])
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each way, alternated (default 3)")
    parser.add_argument("--shots", type=int, default=1, help="other shots of each unchanged table (default 1)")
    parser.add_argument(
        "--nudged", type=int, default=NUDGED_MODELS, help=f"models nudged per scene (default {NUDGED_MODELS}; 0: none)"
    )
    args = parser.parse_args()
    config = load_config(None)
    p = config.pipeline
    print(HEADER)
    print("|---|---:|---:|---:|---:|---:|---:|")
    noticed: dict[str, dict[float, list[int]]] = {}
    noise_px: dict[str, list[int]] = {}
    for res in args.res:
        for seed in args.seeds:
            scene = random_scene(seed, res, 40, "lots")
            rng = np.random.default_rng(seed)
            moved = unit_move(scene, rng)
            if moved is None:
                print(f"| {res} {seed} | no room to move a unit | | | | | |")
                continue
            first_image, first_truth = render(scene, seed)
            camera = camera_from_dict(dict(first_truth.camera))
            first = detect_frame(np.asarray(first_image), scene.table, config, camera, keep_overview=True)
            # a unit moved, then (a seed of its own, so that the nudges below stay the same) one model alone
            single = model_move(scene, np.random.default_rng(seed + 1))
            for what, offset in ((moved, 20_000), (single, 30_000)):
                if what is None:
                    continue
                image, truth = render(with_models(scene, what), seed + offset)
                frame = np.asarray(image)
                whole_ms, part_ms = [], []
                for _ in range(args.runs):
                    t = time.perf_counter()
                    whole = detect_frame(frame, scene.table, config, camera, first.calibration)
                    whole_ms.append((time.perf_counter() - t) * 1e3)
                    t = time.perf_counter()
                    part = detect_frame(frame, scene.table, config, camera, first.calibration, previous=first)
                    part_ms.append((time.perf_counter() - t) * 1e3)
                seen = [m.id for m in truth.state.models if truth.visibility.get(m.id, 1.0) >= MIN_VISIBILITY]
                seen_moved = [i for i in seen if i in what]
                ew, ep = errors_mm(whole.state, truth.state), errors_mm(part.state, truth.state)
                print(
                    f"| {res} {seed} | {len(what)} | {part.remeasured_share:.3f} | {statistics.median(whole_ms):.0f} | "
                    f"{statistics.median(part_ms):.0f} | {summary(ew, seen_moved)}, {summary(ep, seen_moved)} | "
                    f"{summary(ew, seen)}, {summary(ep, seen)} |",
                    flush=True,
                )
            # the change detection alone: another shot of the same table, and single models nudged
            before = change_view(np.asarray(first_image), p)

            for k in range(args.shots):
                shot = render(scene, seed + 1 + 100 * k)[0]
                noise_px.setdefault(res, []).append(changed_px(shot, before, p))
            for k in rng.choice(len(scene.models), min(args.nudged, len(scene.models)), replace=False):
                m = scene.models[int(k)].model
                for d in NUDGES_MM:
                    angle = rng.uniform(0.0, 2.0 * math.pi)
                    nudged = with_models(scene, {m.id: (m.x_mm + d * math.cos(angle), m.y_mm + d * math.sin(angle))})
                    noticed.setdefault(res, {}).setdefault(d, []).append(
                        changed_px(render(nudged, seed + 2)[0], before, p) > 0
                    )
    print()
    print("Columns moved/all: bases found of those at least 60 % visible, median centre error (mm).")
    for res, counts in noise_px.items():
        print(f"{res}: pixels counted as changed between two shots of the same table: {counts}")
    for res, by_size in noticed.items():
        shares = ", ".join(f"{d} mm {100.0 * sum(v) / len(v):.0f} % of {len(v)}" for d, v in by_size.items())
        print(f"{res}: nudges noticed: {shares}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
