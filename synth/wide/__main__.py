"""Render a wide-look set: ``python -m synth.wide --out DIR --count N --seed S [--resolution R] [--dark] [--empty]``.

Frame ``k`` is made from seed ``S + k`` (same arguments, same frames), at the resolution asked for, or with
``mixed`` at 1080p, 4K and 12 MP in turn. Per frame ``NAME.jpg``, ``NAME.truth.json`` and ``NAME.camera.json``
(the layout ``tableref evaluate DIR`` reads; with ``--empty`` also ``NAME.empty.jpg``, the table seen empty), and
the spec of every table used, ``table_NAME.toml``, plus ``table.toml`` (the bundled default). One line per frame
is printed. ``--game P``: only the base sizes of the rule profile P's game are drawn.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import rules
from synth.wide.frame import seen_count, write_empty, write_frame
from synth.wide.layout import random_scene
from synth.wide.tables import TABLES, spec_toml
from synth.wide.view import RESOLUTIONS

MIXED = ("1080p", "4k", "12mp")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m synth.wide", description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--count", type=int, default=10, help="number of frames (default: 10)")
    parser.add_argument("--seed", type=int, default=30000, help="seed of the first frame (default: 30000)")
    parser.add_argument("--resolution", choices=[*sorted(RESOLUTIONS), "mixed"], default="4k")
    parser.add_argument(
        "--dark", action="store_true", help="the black space mat and black tops made common (for fitting sets)"
    )
    parser.add_argument(
        "--empty", action="store_true", help="also the table with no models, dice or hands: NAME.empty.jpg"
    )
    parser.add_argument(
        "--game",
        help="a rule profile whose base sizes alone are drawn (those of 25-60 mm; default: every size)",
    )
    args = parser.parse_args(argv)
    if args.count < 1:
        print("wide: --count must be at least 1", file=sys.stderr)
        return 2
    sizes_mm = None if args.game is None else rules.load_profile(args.game).bases.round_mm or None
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.toml").write_text(spec_toml(TABLES["6x4"]), encoding="utf-8")
    total = 0.0
    for k in range(args.count):
        seed = args.seed + k
        resolution = MIXED[k % len(MIXED)] if args.resolution == "mixed" else args.resolution
        scene = random_scene(seed, resolution, dark=args.dark, sizes_mm=sizes_mm)
        (args.out / f"table_{scene.table_name}.toml").write_text(spec_toml(scene.table), encoding="utf-8")
        name = f"wide_{resolution}_{seed}"
        seconds, truth = write_frame(scene, seed, args.out, name)
        if args.empty:
            write_empty(scene, seed, args.out, name)
        total += seconds
        look = truth.params["look"]
        print(
            f"{name}: {scene.table_name} table, {look['px_per_mm']:.2f} px/mm, {look['mat']} mat, "
            f"{len(scene.bases)} models ({seen_count(truth)} with >= 60 % of the rim seen), "
            f"rendered in {seconds:.1f} s",
            flush=True,
        )
    print(f"{args.count} frames in {total:.1f} s ({total / args.count:.1f} s per frame)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
