"""The learned finder alone (``vision/finder.py``) on rendered sets with ground truth: recall and precision of its
peaks at several probabilities (and how often the diameter of the peak nearest a base found snaps to its standard
size), before any other stage of the detector has a say.

    .venv/bin/python bench/bench_finder.py SET... [--finder F.onnx] [--reach-mm 4]

Each frame is calibrated and turned to a top-down view at the finder's scale as ``python -m synth.train_finder``
does. A base with at least 60 % of its rim seen is found when a peak lies within ``--reach-mm`` of its centre; a
peak within reach of no base (however little of it is seen) is a false one. Comparing the sets a finder was fitted on
with sets it never saw tells whether it underfits (both alike) or overfits (the fitted ones far better).
"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Sequence

import _root  # noqa: F401  (the repository root on sys.path: synth)
import numpy as np

from synth.train_finder import MIN_VISIBILITY, Frame, views
from tableref.config import load_config
from vision.circles import snap_diameters
from vision.finder import FINDER_PX_PER_MM, load_finder

PROBABILITIES = (0.3, 0.4, 0.5, 0.6, 0.7)


def counts(frames: Sequence[Frame], finder_file: str | None, reach_mm: float) -> dict[float, tuple[int, int, int, int]]:
    """Per probability: (bases found, bases with enough rim seen, false peaks, bases found whose nearest peak's
    diameter snaps to their standard size) over ``frames``."""
    finder = load_finder(finder_file)
    sizes_mm = load_config().vision.base_sizes_mm
    out = dict.fromkeys(PROBABILITIES, (0, 0, 0, 0))
    for frame in frames:
        maps = finder.read(frame["image"], FINDER_PX_PER_MM)
        centre_px = frame["centre_px"].reshape(-1, 2)
        seen = frame["visibility"] >= MIN_VISIBILITY
        reach_px = reach_mm * FINDER_PX_PER_MM
        for p in PROBABILITIES:
            peak_px, peak_mm, _ = maps.peaks(p)
            apart = np.hypot(*(peak_px.reshape(-1, 2)[:, None, :] - centre_px[None, :, :]).transpose(2, 0, 1))
            near = apart <= reach_px
            hit = near.any(axis=0) & seen
            nearest = np.argmin(apart, axis=0)[hit] if len(peak_mm) else np.zeros(0, np.intp)
            read_mm = snap_diameters(peak_mm[nearest], sizes_mm, np.inf)[0]
            found, total, false, sized = out[p]
            out[p] = (
                found + int(hit.sum()),
                total + int(seen.sum()),
                false + int((~near.any(axis=1)).sum()),
                sized + int(np.sum(np.isclose(read_mm, frame["diameter_mm"][hit]))),
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+", help="folders of rendered frames with NAME.truth.json")
    parser.add_argument("--finder", help="the finder's ONNX file (default: the one that ships)")
    parser.add_argument("--reach-mm", type=float, default=4.0)
    args = parser.parse_args()
    with contextlib.redirect_stdout(io.StringIO()):  # views() names every frame it reads
        frames = views(args.sets)
    print(f"{len(frames)} frames; a peak within {args.reach_mm:g} mm of a base finds it")
    print(f"{'probability':>11} {'recall':>8} {'precision':>9} {'bases':>6} {'false':>6} {'sizes right':>11}")
    for p, (found, total, false, sized) in counts(frames, args.finder, args.reach_mm).items():
        recall = 100 * found / total if total else float("nan")
        precision = 100 * found / (found + false) if found + false else float("nan")
        right = 100 * sized / found if found else float("nan")
        print(f"{p:>11.1f} {recall:7.1f}% {precision:8.1f}% {total:6d} {false:6d} {right:10.1f}%")


if __name__ == "__main__":
    main()
