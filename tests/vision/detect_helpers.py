"""Helpers of the detection tests: the settings they run with, and detections matched with a drawn scene's truth."""

from __future__ import annotations

import dataclasses

import numpy as np

from tests.vision import vision_scenes as vs
from tests.vision.hand_rules import hand_rule_settings
from vision import (
    BaseDetections,
)

# The drawn scenes' figures are random blobs whose colour may match the base's top, and the clean look has none:
# the figure cues (a figure on every base, and on every base whose top has the mat's grey level, in grey or, where
# figures blur, in colour) are switched off here and tested on their own below and on rendered frames
# (test_rendered.py).
SETTINGS = hand_rule_settings().replaced(
    {
        "verdicts.min_figure_contrast": 0.0,
        "verdicts.ring_min_figure_contrast": 0.0,
        "verdicts.ring_colour_figure_contrast": 0.0,
    }
)
DEFAULT_SETTINGS = hand_rule_settings()
LOOKS = {"clean": vs.CLEAN, "textured": vs.TEXTURED, "rough": vs.ROUGH}


@dataclasses.dataclass
class Match:
    """Detections matched one to one with the truth (nearest first, within a quarter of the base radius)."""

    truth_index: np.ndarray
    det_index: np.ndarray
    error_px: np.ndarray  # (M, 2) detected - true centre
    extra: int  # detections matching no base

    @property
    def distance_px(self) -> np.ndarray:
        return np.hypot(self.error_px[:, 0], self.error_px[:, 1])


def match(scene: vs.Scene, dets: BaseDetections) -> Match:
    truth = scene.centers_px
    radius = scene.diameters_mm / 2 * scene.px_per_mm
    pairs: list[tuple[int, int]] = []
    if len(dets) and len(truth):
        dist = np.hypot(truth[:, None, 0] - dets.center_px[None, :, 0], truth[:, None, 1] - dets.center_px[None, :, 1])
        used_t: set[int] = set()
        used_d: set[int] = set()
        for flat in np.argsort(dist, axis=None):
            t, d = (int(i) for i in np.unravel_index(flat, dist.shape))
            if dist[t, d] > 0.25 * radius[t]:
                break
            if t not in used_t and d not in used_d:
                used_t.add(t)
                used_d.add(d)
                pairs.append((t, d))
    ti = np.array([p[0] for p in pairs], dtype=np.intp)
    di = np.array([p[1] for p in pairs], dtype=np.intp)
    err = dets.center_px[di] - truth[ti] if len(pairs) else np.zeros((0, 2))
    return Match(ti, di, err, len(dets) - len(pairs))


def layout_scene(px_per_mm: float, look: vs.Look, seed: int, count: int = 10) -> vs.Scene:
    """Random bases plus one touching pair and one pair 1 mm apart."""
    rng = np.random.default_rng(seed)
    shape = (int(260 * px_per_mm), int(380 * px_per_mm))
    pairs = vs.touching_pair((90 * px_per_mm, 215 * px_per_mm), px_per_mm, 25.0, 32.0, 0.0, 0.3)
    pairs += vs.touching_pair((270 * px_per_mm, 215 * px_per_mm), px_per_mm, 28.5, 27.0, 1.0, -0.4)
    bases = vs.random_layout(rng, shape, px_per_mm, count, placed=pairs)
    return vs.draw_scene(shape, px_per_mm, bases, rng, look)


# Figures painted dark red (on bases and tokens of the mat's grey level).
FIGURE_PAINT = (30.0, 30.0, 140.0)
