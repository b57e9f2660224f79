"""Benchmark of the whole camera pipeline on rendered frames, against the tutorial pipeline of the camera issue.

Frames: seeded renders of a 6' x 4' table (``random_scene`` with its default clutter: hands, terrain, dice,
tokens, printed circles, shadows, several base colours) at 4K and at 1080p, each with its camera.json, rendered
into a temporary folder (or read from folders made by ``python -m synth.make_eval``).

Compared on the same frames in the same run:

- ours: ``detect_frame`` with the lens corrected, timed from the decoded image to the table state with the
  calibration of an earlier frame reused (as the live loop does);
- the tutorial pipeline: ``cv2.HoughCircles`` on the raw grey frame, centres mapped through the homography of the
  four corner markers' centres, no lens correction, no parallax, each radius snapped to the nearest size.

Per resolution: recall (bases at least 60 % visible), precision, centre error median / p95 / max (mm), base size
right, and ms per frame (median and 95th percentile; wall clock: note the machine's load).

Run by hand: ``.venv/bin/python bench/bench_pipeline.py [--count N] [--dir-4k DIR] [--dir-1080p DIR] [--config F]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import _root  # noqa: F401  (the repository root on sys.path: synth, tests)
import cv2
import numpy as np
from numpy.typing import NDArray

import rules
from calibration.markers import detect_markers
from synth import make_eval
from tableref.assign import gated_assignment
from tableref.config import load_config
from tableref.evaluate import Sample, load_samples
from tableref.pipeline.frame import FrameAnalysis, detect_frame
from tableref.pipeline.view import marker_mask
from tableref.settings import Settings
from tableref.sources import read_image
from vision.seeds import find_seeds

# The tutorial's HoughCircles: median blur, Canny high threshold, accumulator votes.
TUTORIAL_BLUR = 5
TUTORIAL_CANNY = 100
TUTORIAL_VOTES = 30
# The four corner markers of the default table (the tutorial uses one homography from four points).
CORNER_IDS = (0, 2, 4, 6)


def tutorial(image: NDArray[np.uint8], sample: Sample, sizes: tuple[float, ...]) -> list[tuple[float, float, float]]:
    """(x_mm, y_mm, size_mm) per circle found by the tutorial pipeline."""
    grey = np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), dtype=np.uint8)
    found = detect_markers(grey, sample.spec.aruco_dictionary(), load_config(None).calibration)
    src, dst = [], []
    for marker_id, corners in zip(found.ids, found.corners_px, strict=True):
        if int(marker_id) in CORNER_IDS:
            src.append(corners.mean(axis=0))
            m = sample.spec.marker(int(marker_id))
            dst.append((m.x_mm, m.y_mm))
    if len(src) < 4:
        return []
    homography, _ = cv2.findHomography(np.array(src), np.array(dst))
    scale = np.linalg.norm(np.array(src[0]) - np.array(src[1])) / np.linalg.norm(np.array(dst[0]) - np.array(dst[1]))
    grey = cv2.medianBlur(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), TUTORIAL_BLUR)
    r_min = int(min(sizes) / 2 * scale * 0.85)
    r_max = int(max(sizes) / 2 * scale * 1.15) + 1
    raw = cv2.HoughCircles(grey, cv2.HOUGH_GRADIENT, 1, r_min, param1=TUTORIAL_CANNY, param2=TUTORIAL_VOTES,
                           minRadius=r_min, maxRadius=r_max)  # fmt: skip
    if raw is None:
        return []
    circles = raw.reshape(-1, 3)
    mm = cv2.perspectiveTransform(circles[None, :, :2].astype(np.float64), homography)[0]
    out = []
    for (x, y), r in zip(mm, circles[:, 2], strict=True):
        size = min(sizes, key=lambda s: abs(s - 2 * r / scale))
        out.append((float(x), float(y), float(size)))
    return out


def score(found: list[tuple[float, float, float]], sample: Sample) -> dict[str, object]:
    truth = rules.state_from_dict({k: v for k, v in sample.truth.items() if k in ("table", "units", "models")})
    vis = np.array([float(sample.truth.get("visibility", {}).get(m.id, 1.0)) for m in truth.models])
    b = np.array([[m.x_mm, m.y_mm] for m in truth.models]).reshape(-1, 2)
    a = np.array([f[:2] for f in found]).reshape(-1, 2)
    if len(a) and len(b):
        cost = np.hypot(a[:, None, 0] - b[None, :, 0], a[:, None, 1] - b[None, :, 1])
        rows, cols = gated_assignment(cost, 8.0)
    else:
        rows = cols = np.empty(0, dtype=np.intp)
    size_right = [found[i][2] == truth.models[j].base.semi_axes_mm[0] * 2 for i, j in zip(rows, cols, strict=True)]
    return {
        "visible": int((vis >= 0.6).sum()),
        "matched_visible": int((vis[cols] >= 0.6).sum()),
        "detected": len(found),
        "matched": len(rows),
        "errors": list(np.hypot(*(a[rows] - b[cols]).T)) if len(rows) else [],
        "size_right": size_right,
    }


def seeds_ms(image: NDArray[np.uint8], sample: Sample, analysis: FrameAnalysis, config: Settings) -> float:
    """Time (ms) of the seed search alone on the frame's top-down view, as the detect step makes it."""
    topdown = analysis.calibration.rectify(image, analysis.px_per_mm)
    size = (topdown.shape[1], topdown.shape[0])
    mask = marker_mask(sample.spec, analysis.px_per_mm, size, config.pipeline.marker_mask_margin_mm)
    grey = np.asarray(cv2.cvtColor(topdown, cv2.COLOR_BGR2GRAY), dtype=np.uint8)
    start = time.perf_counter()
    find_seeds(grey, analysis.px_per_mm, config.vision, mask)
    return (time.perf_counter() - start) * 1e3


def run(folder: Path, config: Settings) -> None:
    samples = load_samples(folder)
    sizes = config.vision.base_sizes_mm
    totals: dict[str, dict[str, list[object]]] = {"ours": {}, "tutorial": {}}
    steps: dict[str, list[float]] = {}
    for sample in samples:
        image = read_image(sample.image)
        first = detect_frame(image, sample.spec, config, sample.camera)
        start = time.perf_counter()
        again = detect_frame(image, sample.spec, config, sample.camera, calibration=first.calibration)
        ours_ms = (time.perf_counter() - start) * 1e3
        ours = [(m.x_mm, m.y_mm, m.base.semi_axes_mm[0] * 2) for m in again.state.models]
        for step, ms in again.timings_ms.items():
            steps.setdefault(step, []).append(ms)
        steps.setdefault("seeds", []).append(seeds_ms(image, sample, again, config))
        start = time.perf_counter()
        tut = tutorial(image, sample, sizes)
        tut_ms = (time.perf_counter() - start) * 1e3
        for name, found, ms in (("ours", ours, ours_ms), ("tutorial", tut, tut_ms)):
            s = score(found, sample)
            for key, value in (*s.items(), ("ms", ms)):
                totals[name].setdefault(key, []).append(value)
    label = f"{samples[0].truth['camera']['image_height']}p" if samples else folder.name
    for name, t in totals.items():
        errors = np.concatenate([np.asarray(e, dtype=np.float64) for e in t["errors"]])
        sizes_right = np.concatenate([np.asarray(s, dtype=bool) for s in t["size_right"]])
        recall = sum(t["matched_visible"]) / max(sum(t["visible"]), 1)  # type: ignore[arg-type]
        precision = sum(t["matched"]) / max(sum(t["detected"]), 1)  # type: ignore[arg-type]
        med, p95, top = np.percentile(errors, [50, 95, 100]) if len(errors) else (np.nan,) * 3
        print(
            f"{label:>6} {name:<9} {len(samples):>3} {100 * recall:7.1f}% {100 * precision:7.1f}% "
            f"{med:7.3f} {p95:7.3f} {top:7.3f} {100 * np.mean(sizes_right) if len(sizes_right) else 0:7.1f}% "
            f"{np.median(np.asarray(t['ms'], dtype=np.float64)):9.0f} {np.percentile(np.asarray(t['ms']), 95):6.0f}"
        )
    where = ", ".join(f"{step} {np.median(ms):.0f}" for step, ms in steps.items() if step != "calibrate")
    print(f"{label:>6} ours, median ms per step with the calibration reused: {where} (seeds: part of detect)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=3, help="frames rendered per resolution (default 3)")
    parser.add_argument("--seed", type=int, default=5000)
    parser.add_argument("--dir-4k", type=Path, help="a make_eval folder of 4K frames (else rendered)")
    parser.add_argument("--dir-1080p", type=Path, help="a make_eval folder of 1080p frames (else rendered)")
    parser.add_argument("--config", help="settings TOML overriding tableref/defaults.toml (ours)")
    args = parser.parse_args()
    config = load_config(args.config)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print("   res pipeline  frames  recall precis.  median     p95     max size ok  ms median    p95")
    with tempfile.TemporaryDirectory() as tmp:
        for resolution, given in (("4k", args.dir_4k), ("1080p", args.dir_1080p)):
            folder = given
            if folder is None:
                folder = Path(tmp) / resolution
                argv = ["--out", str(folder), "--count", str(args.count), "--resolution", resolution]
                make_eval.main([*argv, "--seed", str(args.seed)])
            run(folder, config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
