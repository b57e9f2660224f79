"""How well the camera pipeline measures: frames with ground truth in, recall, precision, centre error, base-size
accuracy, time and the honesty of each model's sigma out.

A frame ``NAME.jpg`` (or .png) is scored against ``NAME.truth.json`` beside it (a table state with ``camera``,
``visibility`` and ``render`` sections, as the scene renderer writes them). The camera model comes from
``NAME.camera.json`` when present (unless lens correction is switched off) and the table spec from the truth's
``render.table`` section, else the bundled default.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import rules
from calibration.camera import CameraModel, camera_from_dict
from calibration.spec import TableSpec, load_table_spec, table_spec_from_dict
from tableref.assign import centres_mm, match_models
from tableref.config import Config
from tableref.pipeline import detect_frame, empty_table
from tableref.settings import EvaluateSettings
from tableref.sources import IMAGE_SUFFIXES, SourceError, read_image

# Visibility bands of the reliability table.
_VISIBILITY_BANDS = ((0.0, 0.6), (0.6, 0.9), (0.9, 1.01))


@dataclass(frozen=True)
class FrameScore:
    """One frame scored. Arrays are per matched detection: ``error_mm`` (M,) centre error, ``z`` (M, 2) error per
    axis over the detection's sigma, ``visibility`` (M,) of the matched truth model, ``size_right`` (M,)."""

    name: str
    image_size: tuple[int, int]
    lens_corrected: bool
    truth_count: int
    visible_count: int
    detected: int
    matched: int
    matched_visible: int
    error_mm: NDArray[np.float64]
    z: NDArray[np.float64]
    visibility: NDArray[np.float64]
    size_right: NDArray[np.bool_]
    time_ms: float

    @property
    def recall(self) -> float:
        return self.matched_visible / self.visible_count if self.visible_count else math.nan

    @property
    def precision(self) -> float:
        return self.matched / self.detected if self.detected else math.nan

    @property
    def resolution(self) -> str:
        return f"{self.image_size[1]}p"


@dataclass(frozen=True)
class Sample:
    """A frame with its ground truth on disk."""

    image: Path
    truth: dict[str, Any]
    spec: TableSpec
    camera: CameraModel | None
    empty: Path | None = None

    @property
    def name(self) -> str:
        return self.image.stem


def load_samples(folder: str | Path, use_camera: bool = True, use_empty: bool = True) -> list[Sample]:
    """Every frame of ``folder`` that has a ``.truth.json`` beside it, in name order, with its table seen empty
    (``NAME.empty.jpg`` beside it, where there is one and ``use_empty``). Raises SourceError."""
    root = Path(folder)
    if not root.is_dir():
        raise SourceError(f"{root}: no such folder; expected a folder of frames with NAME.truth.json beside each")
    out = []
    for image in sorted(p for p in root.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES):
        truth_path = image.with_suffix(".truth.json")
        if not truth_path.is_file():
            continue
        truth = json.loads(truth_path.read_text("utf-8"))
        table = truth.get("render", {}).get("table")
        spec = table_spec_from_dict(table) if table else load_table_spec()
        camera_path = image.with_suffix(".camera.json")
        camera = None
        if use_camera:
            camera_data = truth.get("camera") if not camera_path.is_file() else json.loads(camera_path.read_text())
            camera = camera_from_dict(camera_data) if camera_data else None
        empty = image.with_name(f"{image.stem}.empty.jpg")
        out.append(Sample(image, truth, spec, camera, empty if use_empty and empty.is_file() else None))
    if not out:
        raise SourceError(f"{root}: no frame with a NAME.truth.json beside it")
    return out


def score_frame(sample: Sample, config: Config, settings: EvaluateSettings, roster: bool = False) -> FrameScore:
    """Run the pipeline on one frame and match its models to the truth (minimum total distance, gated). With
    ``roster`` the truth serves as the roster too (as ``tableref analyze`` and ``measure`` take one): bases are
    fitted at the sizes and rim heights it declares; where they stand comes from the frame alone."""
    image = read_image(sample.image)
    truth = rules.state_from_dict({k: v for k, v in sample.truth.items() if k in ("table", "units", "models")})
    # the empty table is captured once at set-up, not per frame: not timed
    reference = (
        None if sample.empty is None else empty_table(read_image(sample.empty), sample.spec, config, sample.camera)
    )
    start = time.perf_counter()
    analysis = detect_frame(
        image, sample.spec, config, sample.camera, roster=truth if roster else None, reference=reference
    )
    elapsed_ms = (time.perf_counter() - start) * 1e3
    visibility = sample.truth.get("visibility", {})
    det = analysis.state.models
    true_models = truth.models
    vis = np.array([float(visibility.get(m.id, 1.0)) for m in true_models])
    a, b = centres_mm(det), centres_mm(true_models)
    rows, cols = match_models(det, true_models, settings.match_gate_mm)
    diff = a[rows] - b[cols] if len(rows) else np.empty((0, 2))
    # each axis's sigma: the model's own and its doubt along a line, as far as that runs along the axis
    sigma = np.array([np.hypot(det[i].sigma_mm, det[i].doubt_mm) for i in rows]).reshape(-1, 2)
    z = diff / np.maximum(sigma, 1e-9)
    size_right = np.array(
        [det[i].base.semi_axes_mm == true_models[j].base.semi_axes_mm for i, j in zip(rows, cols, strict=True)],
        dtype=bool,
    )
    visible = vis >= settings.min_visibility
    h, w = image.shape[:2]
    return FrameScore(
        name=sample.name,
        image_size=(w, h),
        lens_corrected=sample.camera is not None,
        truth_count=len(true_models),
        visible_count=int(visible.sum()),
        detected=len(det),
        matched=len(rows),
        matched_visible=int(visible[cols].sum()) if len(cols) else 0,
        error_mm=np.hypot(diff[:, 0], diff[:, 1]) if len(rows) else np.empty(0),
        z=z,
        visibility=vis[cols] if len(cols) else np.empty(0),
        size_right=size_right,
        time_ms=elapsed_ms,
    )


def evaluate(
    samples: Sequence[Sample],
    config: Config,
    settings: EvaluateSettings,
    on_frame: Callable[[FrameScore], None] | None = None,
    roster: bool = False,
) -> list[FrameScore]:
    """Score every sample; ``on_frame`` is told after each (for a progress bar). ``roster``: see
    :func:`score_frame`."""
    scores = []
    for sample in samples:
        score = score_frame(sample, config, settings, roster)
        scores.append(score)
        if on_frame is not None:
            on_frame(score)
    return scores


def _pooled(scores: Sequence[FrameScore]) -> dict[str, Any]:
    errors = np.concatenate([s.error_mm for s in scores]) if scores else np.empty(0)
    sizes = np.concatenate([s.size_right for s in scores]) if scores else np.empty(0, dtype=bool)
    visible = sum(s.visible_count for s in scores)
    detected = sum(s.detected for s in scores)

    def stat(fn: Callable[[NDArray[np.float64]], float]) -> float:
        return float(fn(errors)) if len(errors) else math.nan

    return {
        "frames": len(scores),
        "recall": sum(s.matched_visible for s in scores) / visible if visible else math.nan,
        "precision": sum(s.matched for s in scores) / detected if detected else math.nan,
        "median_mm": stat(np.median),
        "p95_mm": stat(lambda e: np.percentile(e, 95)),
        "max_mm": stat(np.max),
        "size_right": float(np.mean(sizes)) if len(sizes) else math.nan,
        "time_ms": float(np.mean([s.time_ms for s in scores])) if scores else math.nan,
    }


def reliability(scores: Sequence[FrameScore]) -> list[dict[str, Any]]:
    """Share of coordinate errors within 1, 2 and 3 sigma (honest sigmas give about 68, 95 and 99.7 %), overall,
    by resolution and by visibility band."""
    rows = []

    def add(label: str, z: NDArray[np.float64]) -> None:
        flat = np.abs(z).ravel()
        rows.append(
            {
                "group": label,
                "coordinates": int(flat.size),
                "within_1": float(np.mean(flat <= 1)) if flat.size else math.nan,
                "within_2": float(np.mean(flat <= 2)) if flat.size else math.nan,
                "within_3": float(np.mean(flat <= 3)) if flat.size else math.nan,
            }
        )

    all_z = np.concatenate([s.z for s in scores]) if scores else np.empty((0, 2))
    add("all", all_z)
    for res in sorted({s.resolution for s in scores}, key=lambda r: int(r[:-1])):
        add(res, np.concatenate([s.z for s in scores if s.resolution == res]))
    vis = np.concatenate([s.visibility for s in scores]) if scores else np.empty(0)
    for lo, hi in _VISIBILITY_BANDS:
        sel = (vis >= lo) & (vis < hi)
        add(f"visibility {lo:.1f}-{min(hi, 1.0):.1f}", all_z[sel])
    return rows


def report_dict(scores: Sequence[FrameScore]) -> dict[str, Any]:
    """Everything ``tableref evaluate --json`` prints."""
    frames = []
    for s in scores:
        d = _pooled([s])
        d.update({"name": s.name, "image_size": list(s.image_size), "lens_corrected": s.lens_corrected})
        d.update({"truth": s.truth_count, "visible": s.visible_count, "detected": s.detected, "matched": s.matched})
        frames.append(d)
    return {"frames": frames, "overall": _pooled(scores), "reliability": reliability(scores)}


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.1f}%"


def _mm(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.3f}"


def format_report(scores: Sequence[FrameScore]) -> str:
    """The evaluation as text tables: per frame, overall, and the sigma reliability table."""
    doc = report_dict(scores)
    columns = ("size", 9), ("lens", 4), ("recall", 7), ("precis.", 7), ("median", 7), ("p95", 7), ("max", 7)
    head = f"{'frame':24} " + " ".join(f"{c:>{w}}" for c, w in columns) + f" {'size ok':>7} {'ms':>7}"
    lines = [
        "Detection against ground truth (centre errors in mm; recall over bases with >= 60 % of the rim visible)",
        head,
    ]
    for f in [*doc["frames"], {**doc["overall"], "name": "overall", "image_size": None, "lens_corrected": None}]:
        size = "x".join(map(str, f["image_size"])) if f["image_size"] else ""
        lens = "" if f["lens_corrected"] is None else ("yes" if f["lens_corrected"] else "no")
        lines.append(
            f"{f['name']:24} {size:>9} {lens:>4} {_pct(f['recall']):>7} {_pct(f['precision']):>7} "
            f"{_mm(f['median_mm']):>7} {_mm(f['p95_mm']):>7} {_mm(f['max_mm']):>7} {_pct(f['size_right']):>7} "
            f"{f['time_ms']:7.0f}"
        )
    lines += ["", "Sigma reliability (share of x and y errors within k sigma; honest: 68.3 / 95.4 / 99.7 %)"]
    lines.append(f"{'group':24} {'coords':>7} {'1 sigma':>8} {'2 sigma':>8} {'3 sigma':>8}")
    for r in doc["reliability"]:
        lines.append(
            f"{r['group']:24} {r['coordinates']:7d} "
            + " ".join(f"{_pct(r[k]):>8}" for k in ("within_1", "within_2", "within_3"))
        )
    return "\n".join(lines)
