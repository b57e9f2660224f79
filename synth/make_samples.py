"""Regenerate the bundled sample frames: ``python -m synth.make_samples [--out DIR]``.

Writes, per frame, ``NAME.jpg`` (the frame as the camera delivers it), ``NAME.truth.json`` (the exact table state
with ``camera``, ``visibility`` and ``render`` sections beside it) and ``NAME.camera.json``; and the table specs
used (``table.toml``, the bundled default, and ``small_table.toml``). The frames are the same on every run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import cv2

from calibration.spec import TableSpec, table_spec_from_dict
from synth.generate import Clutter, fit_camera, random_scene
from synth.render import EMPTY_SEED_OFFSET, render
from synth.scene import Scene
from synth.wide.tables import spec_toml

DEFAULT_OUT = Path("sample_images")
# A 30" x 22" skirmish board with four markers at its corners, turned every which way: a spec other than the
# bundled one, to show that nothing depends on the default table.
SMALL_TABLE = {
    "table": {"width_mm": 762.0, "depth_mm": 559.0},
    "markers": {
        "dictionary": "DICT_5X5_100",
        "marker": [
            {"id": 10, "size_mm": 70.0, "x_mm": 55.0, "y_mm": 55.0, "rotation_deg": 0.0},
            {"id": 11, "size_mm": 70.0, "x_mm": 707.0, "y_mm": 55.0, "rotation_deg": 90.0},
            {"id": 12, "size_mm": 70.0, "x_mm": 707.0, "y_mm": 504.0, "rotation_deg": 180.0},
            {"id": 13, "size_mm": 70.0, "x_mm": 72.0, "y_mm": 487.0, "rotation_deg": 45.0},
        ],
    },
}


def _small_table() -> TableSpec:
    return table_spec_from_dict(SMALL_TABLE)


def _tilted(scene: Scene) -> Scene:
    """The scene seen from a camera tilted 15 degrees, through a strongly barrel-distorting lens."""
    table = scene.table
    centre = (table.width_mm / 2.0, table.depth_mm / 2.0, 0.0)
    camera = fit_camera(
        table,
        (scene.camera.image_width, scene.camera.image_height),
        (centre[0] - 300.0, centre[1] + 205.0, 1350.0),
        centre,
        dist=(-0.15, 0.01, 0.0004, -0.0006, 0.0),
        principal_px=(scene.camera.cx, scene.camera.cy),
        roll_deg=-2.0,
    )
    return dataclasses.replace(scene, camera=camera)


@dataclass(frozen=True)
class Sample:
    name: str
    description: str
    make: Callable[[], Scene]
    seed: int


SAMPLES = (
    Sample(
        "skirmish_1080p",
        "1080p, 40 models, some clutter (terrain, dice, tokens, printed circles), camera about 1.2-1.6 m up",
        lambda: random_scene(101, "1080p", 40, "some"),
        1,
    ),
    Sample(
        "melee_hand_1080p",
        "1080p, 50 models, lots of clutter and a hand reaching in over the table",
        lambda: random_scene(102, "1080p", 50, "lots"),
        2,
    ),
    Sample(
        "tilted_barrel_1080p",
        "1080p, 45 models, camera tilted 15 degrees with strong barrel distortion (k1 = -0.15)",
        lambda: _tilted(random_scene(103, "1080p", 45, "some")),
        3,
    ),
    Sample(
        "crowded_4k",
        "4K, 70 models, lots of clutter and a hand: the accuracy benchmark's kind of frame",
        lambda: random_scene(104, "4k", 70, "lots"),
        4,
    ),
    Sample(
        "small_table_720p",
        "720p, a 30 x 22 inch board with four DICT_5X5_100 markers at odd rotations (small_table.toml), 16 models",
        lambda: random_scene(105, "720p", 16, Clutter(dice=2, tokens=1, printed=2, terrain=1, hands=0), _small_table()),
        5,
    ),
)


def write_sample(sample: Sample, out: Path, empty: bool = False) -> float:
    """Render one sample into ``out``; returns the render time in seconds. ``empty``: also the same table with its
    terrain and printed mat but without models, tokens, dice or hands (``NAME.empty.jpg``), as a reference captured
    at set-up."""
    scene = sample.make()
    quality = scene.imaging.jpeg_quality
    # The JPEG step is the file itself: render without it, then store at the scene's quality, so the file holds
    # exactly one compression.
    raw = dataclasses.replace(scene, imaging=dataclasses.replace(scene.imaging, jpeg_quality=0))
    start = time.perf_counter()
    image, truth = render(raw, sample.seed)
    seconds = time.perf_counter() - start
    ok = cv2.imwrite(str(out / f"{sample.name}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise OSError(f"could not write {out / sample.name}.jpg")
    doc = truth.to_dict()
    doc["render"]["imaging"]["jpeg_quality"] = quality
    (out / f"{sample.name}.truth.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    (out / f"{sample.name}.camera.json").write_text(json.dumps(dict(truth.camera), indent=2) + "\n", encoding="utf-8")
    if empty:
        bare = dataclasses.replace(raw, units=(), models=(), tokens=(), dice=(), hands=())
        image, _truth = render(bare, sample.seed + EMPTY_SEED_OFFSET)
        if not cv2.imwrite(str(out / f"{sample.name}.empty.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, quality]):
            raise OSError(f"could not write {out / sample.name}.empty.jpg")
    return seconds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m synth.make_samples", description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})")
    parser.add_argument("--only", nargs="*", help="names of the samples to make (default: all)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    default = resources.files("calibration").joinpath("default_table.toml").read_text("utf-8")
    (args.out / "table.toml").write_text(default, encoding="utf-8")
    (args.out / "small_table.toml").write_text(spec_toml(_small_table()), encoding="utf-8")
    known = {s.name for s in SAMPLES}
    unknown = sorted(set(args.only or ()) - known)
    if unknown:
        print(f"make_samples: unknown samples {unknown}; known: {sorted(known)}", file=sys.stderr)
        return 2
    for sample in SAMPLES:
        if args.only and sample.name not in args.only:
            continue
        seconds = write_sample(sample, args.out)
        print(f"{sample.name}: rendered in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
