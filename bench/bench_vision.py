"""Benchmark of base detection on rectified top-down views of a whole table, against the tutorial baseline.

The scenes: a 1829 x 1219 mm (6' x 4') table drawn top-down at the pixel scale a rectified 4K frame gives
(2.0 px/mm, about 0.5 mm/px) and a rectified 1080p frame (0.9 px/mm, about 1.1 mm/px): a textured mat, 50-100
bases of the standard sizes with figures on them (weapons and cloaks over the rim) and soft shadows, a third of
them in touching or 1 mm pairs, blur and noise, plus dice, printed rings, tokens and the 8 ArUco markers of the
default table spec (their squares masked, as the calibration stage masks them). The drawing code is the vision
tests' (``tests/vision/vision_scenes.py``).

Compared on the same images in the same run:

- ``detect_bases`` with the default settings and the marker mask;
- the tutorial baseline: ``cv2.HoughCircles`` alone on the grey image (median blur 5, HOUGH_GRADIENT, dp 1,
  Canny 100, accumulator 30, minDist the smallest base radius, radii over all standard sizes), its circles taken
  as they are: no refinement, no snapping, no rejection.

Reported per scale: recall, recall of the bases in contact with another (gap <= 1.5 mm) and precision (a
detection matches a base whose centre is within a quarter of the base's radius, one to one), centre error of the
matched bases (median, 95th percentile, max; px and mm), base size right (ours: the snapped size is the true
one; baseline: within 0.75 mm, half the closest gap between standard sizes), the share of per-axis centre
errors within 1 and 2 reported sigmas (ours only), and the time per frame (median over ``--runs`` timed runs
after one warm-up; wall clock, so run it on a quiet machine).

Run by hand: ``.venv/bin/python bench/bench_vision.py [--seed N] [--runs N] [--bases N] [--scales 2.0,0.9]``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass

import _root  # noqa: F401  (the repository root on sys.path: synth, tests)
import cv2
import numpy as np
from numpy.typing import NDArray

import tests.vision.vision_scenes as vs
from tableref.config import load_config
from vision import BaseDetections, detect_bases

FloatArray = NDArray[np.float64]

TABLE_WIDTH_MM = 1829.0
TABLE_DEPTH_MM = 1219.0
# Infantry-heavy, as tables are; every standard size appears.
SIZE_SHARES = {25.0: 0.22, 27.0: 0.12, 28.5: 0.12, 32.0: 0.2, 40.0: 0.1, 50.0: 0.08, 60.0: 0.05, 70.0: 0.03,
               80.0: 0.03, 90.0: 0.03, 100.0: 0.02}  # fmt: skip
# The default table spec's markers: 100 mm squares 65 mm in from the edges, corners and edge midpoints.
MARKERS_MM = [(65, 65), (914.5, 65), (1764, 65), (1764, 609.5), (1764, 1154), (914.5, 1154), (65, 1154), (65, 609.5)]
MARKER_SIZE_MM = 100.0
# A detection is the base whose centre is within this fraction of the base's radius.
MATCH_FRACTION = 0.25
# Bases this close to another count as "in contact" for the contact recall.
CONTACT_GAP_MM = 1.5
# Baseline size "right": within half the closest gap between two standard sizes (27 and 28.5 mm).
BASELINE_SIZE_TOLERANCE_MM = 0.75


def _pick_size(rng: np.random.Generator) -> float:
    sizes = np.array(list(SIZE_SHARES))
    shares = np.array(list(SIZE_SHARES.values()))
    return float(rng.choice(sizes, p=shares / shares.sum()))


def make_scene(px_per_mm: float, bases: int, rng: np.random.Generator) -> vs.Scene:
    """A whole table at ``px_per_mm`` with about ``bases`` bases, a third of them in touching or 1 mm pairs."""
    shape = (round(TABLE_DEPTH_MM * px_per_mm), round(TABLE_WIDTH_MM * px_per_mm))
    markers = [((x * px_per_mm, y * px_per_mm), MARKER_SIZE_MM) for x, y in MARKERS_MM]
    keep_out = [(c, MARKER_SIZE_MM * 0.75 * px_per_mm) for c, _ in markers]
    placed: list[vs.Placed] = []
    for n in range(bases // 6):
        d1, d2 = _pick_size(rng), _pick_size(rng)
        gap = 0.0 if n % 2 == 0 else 1.0
        for _ in range(200):
            centre = (float(rng.uniform(0.1, 0.9) * shape[1]), float(rng.uniform(0.1, 0.9) * shape[0]))
            pair = vs.touching_pair(centre, px_per_mm, d1, d2, gap, float(rng.uniform(0, math.pi)))
            if all(_clear(p, q, px_per_mm) for p in pair for q in placed) and all(
                math.dist(p.center_px, k[0]) > k[1] + p.diameter_mm * px_per_mm for p in pair for k in keep_out
            ):
                placed += pair
                break
    distractors = vs.Distractors(markers=markers)
    layout = vs.random_layout(rng, shape, px_per_mm, bases - len(placed), keep_out=keep_out, placed=placed)
    free = [(b.center_px, b.diameter_mm / 2 * px_per_mm) for b in layout] + keep_out
    extras = vs.random_layout(rng, shape, px_per_mm, 14, sizes_mm=(20.0,), keep_out=free, min_gap_mm=10.0)
    for n, e in enumerate(extras):
        if n < 6:
            distractors.dice.append((e.center_px, float(rng.choice([12.0, 16.0, 20.0]))))
        elif n < 10:
            distractors.printed_rings.append((e.center_px, float(rng.choice([25.0, 32.0, 40.0, 50.0]))))
        else:
            distractors.tokens.append((e.center_px, float(rng.choice([15.0, 20.0]))))
    return vs.draw_scene(shape, px_per_mm, layout, rng, vs.TEXTURED, distractors)


def _clear(a: vs.Placed, b: vs.Placed, px_per_mm: float) -> bool:
    return math.dist(a.center_px, b.center_px) >= (a.diameter_mm + b.diameter_mm) / 2 * px_per_mm + 3 * px_per_mm


def tutorial_baseline(image_bgr: NDArray[np.uint8], px_per_mm: float, sizes_mm: tuple[float, ...]) -> FloatArray:
    """(N, 3) circles (x, y, radius px) from HoughCircles alone, as a tutorial does it."""
    grey = cv2.medianBlur(cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY), 5)
    r_min = math.floor(min(sizes_mm) / 2 * px_per_mm)
    r_max = math.ceil(max(sizes_mm) / 2 * px_per_mm)
    raw = cv2.HoughCircles(
        grey, cv2.HOUGH_GRADIENT, 1, minDist=r_min, param1=100, param2=30, minRadius=r_min, maxRadius=r_max
    )
    return np.zeros((0, 3)) if raw is None else np.asarray(raw, dtype=np.float64).reshape(-1, 3)


@dataclass
class Tally:
    truths: int = 0
    found: int = 0
    contact_truths: int = 0
    contact_found: int = 0
    reported: int = 0
    size_right: int = 0
    errors_px: list[float] | None = None
    z: list[float] | None = None
    times_ms: list[float] | None = None

    def __post_init__(self) -> None:
        self.errors_px, self.z, self.times_ms = [], [], []


def match(truth_px: FloatArray, radius_px: FloatArray, found_px: FloatArray) -> list[tuple[int, int]]:
    """Greedy one-to-one matching of truth centres (T, 2) to found centres (F, 2), nearest first."""
    if len(truth_px) == 0 or len(found_px) == 0:
        return []
    dist = np.hypot(truth_px[:, None, 0] - found_px[None, :, 0], truth_px[:, None, 1] - found_px[None, :, 1])
    pairs = []
    used_t: set[int] = set()
    used_f: set[int] = set()
    for flat in np.argsort(dist, axis=None):
        t, f = np.unravel_index(flat, dist.shape)
        if dist[t, f] > MATCH_FRACTION * radius_px[t]:
            break
        if t not in used_t and f not in used_f:
            used_t.add(int(t))
            used_f.add(int(f))
            pairs.append((int(t), int(f)))
    return pairs


def score(
    tally: Tally,
    scene: vs.Scene,
    centers: FloatArray,
    diameters_mm: FloatArray,
    sigma_px: FloatArray | None,
    exact_size: bool,
) -> None:
    truth = scene.centers_px
    radius = scene.diameters_mm / 2 * scene.px_per_mm
    pairs = match(truth, radius, centers)
    tally.truths += len(truth)
    tally.reported += len(centers)
    tally.found += len(pairs)
    # bases in contact or within a millimetre and a half of another: the cases the rules turn on
    gap_mm = (np.hypot(truth[:, None, 0] - truth[None, :, 0], truth[:, None, 1] - truth[None, :, 1]) - radius[:, None]
              - radius[None, :]) / scene.px_per_mm  # fmt: skip
    np.fill_diagonal(gap_mm, np.inf)
    contact = gap_mm.min(axis=1) <= CONTACT_GAP_MM
    tally.contact_truths += int(contact.sum())
    tally.contact_found += sum(int(contact[t]) for t, _ in pairs)
    assert tally.errors_px is not None and tally.z is not None
    for t, f in pairs:
        err = centers[f] - truth[t]
        tally.errors_px.append(float(np.hypot(*err)))
        if exact_size:
            tally.size_right += int(diameters_mm[f] == scene.diameters_mm[t])
        else:
            tally.size_right += int(abs(diameters_mm[f] - scene.diameters_mm[t]) <= BASELINE_SIZE_TOLERANCE_MM)
        if sigma_px is not None:
            tally.z += list(np.abs(err) / sigma_px[f])


def report(name: str, tally: Tally, px_per_mm: float) -> str:
    assert tally.errors_px is not None and tally.z is not None and tally.times_ms is not None
    err = np.array(tally.errors_px) if tally.errors_px else np.array([np.nan])
    recall = tally.found / max(tally.truths, 1)
    contact = tally.contact_found / max(tally.contact_truths, 1)
    precision = tally.found / max(tally.reported, 1)
    sizes = tally.size_right / max(tally.found, 1)
    z = np.array(tally.z)
    within = f"{np.mean(z <= 1):6.1%} {np.mean(z <= 2):6.1%}" if len(z) else f"{'-':>6} {'-':>6}"
    px = f"{np.median(err):6.3f} {np.percentile(err, 95):6.3f} {err.max():6.3f}"
    mm = err / px_per_mm
    in_mm = f"{np.median(mm):6.3f} {np.percentile(mm, 95):6.3f} {mm.max():6.3f}"
    return (
        f"| {name:9s} | {recall:7.2%} | {contact:7.2%} | {precision:7.2%} | {px:27s} | {in_mm:20s} | {sizes:7.2%} "
        f"| {within} | {statistics.median(tally.times_ms):8.1f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per frame")
    parser.add_argument("--frames", type=int, default=2, help="frames per scale")
    parser.add_argument("--bases", type=int, default=80, help="bases per frame")
    parser.add_argument("--scales", default="2.0,0.9", help="px/mm of the rectified views")
    args = parser.parse_args()
    settings = load_config().vision
    print(f"# bench_vision: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads, numpy {np.__version__}")  # fmt: skip
    print(f"# seed {args.seed}, {args.frames} frames per scale, {args.bases} bases per frame, {args.runs} timed runs\n")
    rng = np.random.default_rng(args.seed)
    header = (
        "| method    | recall  | contact | precis. | centre err px (med p95 max) | mm (med p95 max)     | size ok | "
        "<=1sd  <=2sd | ms/frame |"
    )
    for px_per_mm in (float(s) for s in args.scales.split(",")):
        ours, base = Tally(), Tally()
        for _ in range(args.frames):
            scene = make_scene(px_per_mm, args.bases, rng)
            h, w = scene.image_bgr.shape[:2]
            dets = BaseDetections.empty()
            for run in range(args.runs + 1):
                t0 = time.perf_counter()
                dets = detect_bases(scene.image_bgr, px_per_mm, settings, mask=scene.marker_mask)
                if run:
                    assert ours.times_ms is not None
                    ours.times_ms.append((time.perf_counter() - t0) * 1000)
            score(ours, scene, dets.center_px, dets.diameter_mm, dets.center_sigma_px, exact_size=True)
            circles = np.zeros((0, 3))
            for run in range(args.runs + 1):
                t0 = time.perf_counter()
                circles = tutorial_baseline(scene.image_bgr, px_per_mm, settings.base_sizes_mm)
                if run:
                    assert base.times_ms is not None
                    base.times_ms.append((time.perf_counter() - t0) * 1000)
            score(base, scene, circles[:, :2], 2 * circles[:, 2] / px_per_mm, None, exact_size=False)
        print(f"## {px_per_mm:g} px/mm ({1 / px_per_mm:.2f} mm/px), {w} x {h} px, {ours.truths} bases\n")
        print(header)
        print("|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|")
        print(report("ours", ours, px_per_mm))
        print(report("tutorial", base, px_per_mm))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
