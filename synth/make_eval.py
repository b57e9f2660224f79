"""Render an evaluation set: ``python -m synth.make_eval --out DIR --count N --resolution 1080p|4k``.

Writes ``N`` random games (:func:`~synth.random_scene` with the chosen clutter) in the layout of
``sample_images/``: per frame ``NAME.jpg``, ``NAME.truth.json`` and ``NAME.camera.json``, plus ``table.toml``.
``tableref evaluate DIR`` scores the pipeline on them. Frame ``k`` uses render seed ``seed + k``, so the same
arguments give the same frames; rendering takes seconds per frame, so make a set once and reuse it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from synth.generate import CLUTTER, RESOLUTIONS, random_scene
from synth.make_samples import Sample, write_sample
from synth.scene import Scene

# Models per frame: a skirmish to a crowded table (random_scene leaves out models that find no free spot).
_MODELS_PER_FRAME = (30, 45, 60, 70)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m synth.make_eval", description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--count", type=int, default=10, help="number of frames (default: 10)")
    parser.add_argument("--resolution", choices=sorted(RESOLUTIONS), default="1080p")
    parser.add_argument("--clutter", choices=sorted(CLUTTER), default="lots")
    parser.add_argument("--seed", type=int, default=1000, help="seed of the first frame (default: 1000)")
    parser.add_argument(
        "--empty", action="store_true", help="also render each table empty (NAME.empty.jpg), as a reference"
    )
    args = parser.parse_args(argv)
    if args.count < 1:
        print("make_eval: --count must be at least 1", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    default = resources.files("calibration").joinpath("default_table.toml").read_text("utf-8")
    (args.out / "table.toml").write_text(default, encoding="utf-8")
    for k in range(args.count):
        seed = args.seed + k
        models = _MODELS_PER_FRAME[k % len(_MODELS_PER_FRAME)]
        name = f"eval_{args.resolution}_{seed}"

        def make(seed: int = seed, models: int = models) -> Scene:
            return random_scene(seed, args.resolution, models, args.clutter)

        start = time.perf_counter()
        write_sample(Sample(name, "evaluation frame", make, seed), args.out, args.empty)
        print(f"{name}: {models} models asked, rendered in {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
