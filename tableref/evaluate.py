"""How well the camera pipeline measures: frames with ground truth in, recall, precision, centre error, base-size
accuracy, time and the honesty of each model's sigma out.

A frame ``NAME.jpg`` (or .png) is scored against ``NAME.truth.json`` beside it (a table state with ``camera``,
``visibility`` and ``render`` sections, as the scene renderer writes them). The camera model comes from
``NAME.camera.json`` when present (unless lens correction is switched off) and the table spec from the truth's
``render.table`` section, else the bundled default.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

import rules
from calibration.camera import CameraModel, camera_from_dict
from calibration.errors import CalibrationError
from calibration.spec import TableSpec, load_table_spec, table_spec_from_dict
from tableref.assign import centres_mm, match_models
from tableref.pipeline.frame import detect_frame, empty_table
from tableref.pipeline.state import DoubtedPlace, doubted_of
from tableref.settings import EvaluateSettings, Settings
from tableref.sources import SourceError, folder_images, read_image

# Visibility bands of the reliability table.
_VISIBILITY_BANDS = ((0.0, 0.6), (0.6, 0.9), (0.9, 1.01))

# The breakdown by look (truths that carry ``render.models[i].look`` and ``render.look``, as the wide-look renderer
# writes them): categories of each model, and of each frame. Rim heights and pixel scales fall into these bands
# (upper bounds; the last band takes the rest).
MODEL_CATEGORIES = ("top", "figure", "contact", "rim height", "base")
FRAME_CATEGORIES = ("mat", "resolution", "px/mm", "light")
_RIM_BANDS = ((3.0, "2-3 mm"), (4.5, "3-4.5 mm"), (math.inf, "4.5-6 mm"))
_SCALE_BANDS = ((1.2, "0.8-1.2"), (1.8, "1.2-1.8"), (math.inf, "1.8-2.5"))
_RESOLUTION_ORDER = ("720p", "1080p", "4k", "12mp")


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
    # Per truth model (T,): counted for recall (visible enough), matched, centre error (NaN unmatched), size
    # right (False unmatched), and its look's category values; and the frame's category values.
    truth_visible: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    truth_matched: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    truth_error_mm: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    truth_size_right: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    model_looks: tuple[Mapping[str, str], ...] = ()
    frame_look: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # places the detector doubted (see vision.doubts); of them, those on a base it missed; bases missed (of those
    # counted for recall) with such a place on them
    doubted: int = 0
    doubted_on_missed: int = 0
    missed_doubted: int = 0

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
    # the truth's table, units and models, read and checked with the file
    state: rules.TableState | None = None

    @property
    def name(self) -> str:
        return self.image.stem


TRUTH_EXPECTED = "a table state JSON object with the frame's camera and render"
# The largest number a truth's look holds (a pixel scale, a rim height): far beyond any frame's.
_LOOK_MOST = 1e6


def _number(value: Any, low: float = -_LOOK_MOST, high: float = _LOOK_MOST) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high


def _check_truth(truth: dict[str, Any], path: Path) -> rules.TableState:
    """The truth's state, once every section that is scored or broken down by is checked: a SourceError naming
    ``path`` and the section, rather than a crash in the middle of the scoring."""
    try:
        state = rules.state_from_dict({k: v for k, v in truth.items() if k in ("table", "units", "models")})
    except rules.StateError as exc:
        raise SourceError(f"{path}: {exc}") from None
    visibility = truth.get("visibility", {})
    if not isinstance(visibility, Mapping) or not all(_number(v, 0.0, 1.0) for v in visibility.values()):
        raise SourceError(f"{path}: 'visibility' must map model ids to fractions from 0 to 1")
    render = truth.get("render", {})
    look = render.get("look", {}) if isinstance(render, Mapping) else None
    if not isinstance(look, Mapping) or not _number(look.get("px_per_mm", 1.0)):
        raise SourceError(f"{path}: 'render' must be an object, its 'look' one with a number px_per_mm")
    models = render.get("models", [])
    if not isinstance(models, list) or not all(_render_model(m) for m in models):
        raise SourceError(
            f"{path}: 'render.models' must be a list of objects, each with a string id and a 'look' object whose "
            "rim_height_mm is a number"
        )
    return state


def _render_model(model: Any) -> bool:
    """Whether ``model`` is one of a render's models as its look is read: its id a string, its look an object with a
    number rim_height_mm (each may be left out)."""
    if not isinstance(model, Mapping):
        return False
    look = model.get("look", {})
    return (
        isinstance(model.get("id", ""), str) and isinstance(look, Mapping) and _number(look.get("rim_height_mm", 1.0))
    )


def _sample(image: Path, truth_path: Path, use_camera: bool, use_empty: bool) -> Sample:
    truth = rules.read_json(truth_path, TRUTH_EXPECTED)
    if not isinstance(truth, dict):
        raise SourceError(f"{truth_path}: expected {TRUTH_EXPECTED}, got a JSON {type(truth).__name__}")
    state = _check_truth(truth, truth_path)
    table = truth.get("render", {}).get("table")
    camera_path = image.with_suffix(".camera.json")
    camera = None
    try:
        spec = table_spec_from_dict(table) if table else load_table_spec()
        if use_camera:
            camera_data = truth.get("camera")
            if camera_path.is_file():
                camera_data = rules.read_json(camera_path, "a camera JSON file")
            camera = camera_from_dict(camera_data) if camera_data else None
    except CalibrationError as exc:
        raise SourceError(f"{truth_path}: {exc}") from None
    empty = image.with_name(f"{image.stem}.empty.jpg")
    return Sample(image, truth, spec, camera, empty if use_empty and empty.is_file() else None, state)


def load_samples(folder: str | Path, use_camera: bool = True, use_empty: bool = True) -> list[Sample]:
    """Every frame of ``folder`` that has a ``.truth.json`` beside it, in name order, with its table seen empty
    (``NAME.empty.jpg`` beside it, where there is one and ``use_empty``). Raises SourceError or StateError."""
    root = Path(folder)
    if not root.is_dir():
        raise SourceError(f"{root}: no such folder; expected a folder of frames with NAME.truth.json beside each")
    images = folder_images(root)
    out = [
        _sample(image, image.with_suffix(".truth.json"), use_camera, use_empty)
        for image in images
        if image.with_suffix(".truth.json").is_file()
    ]
    if not out:
        raise SourceError(f"{root}: no frame with a NAME.truth.json beside it")
    return out


def _band(value: float, bands: tuple[tuple[float, str], ...]) -> str:
    return next(label for top, label in bands if value < top)


def model_look(look: Mapping[str, Any], diameter_mm: float) -> dict[str, str]:
    """A truth model's ``look`` as category values: top, figure, contact, rim height band, base size."""
    out = {k: str(look[k]) for k in ("top", "figure") if k in look}
    if "contact" in look:
        out["contact"] = "touching" if look["contact"] else "apart"
    if "rim_height_mm" in look:
        out["rim height"] = _band(float(look["rim_height_mm"]), _RIM_BANDS)
    out["base"] = f"{diameter_mm:g} mm"
    return out


def frame_look(look: Mapping[str, Any]) -> dict[str, str]:
    """A truth's ``render.look`` as category values: mat, resolution, pixel scale band, light tint."""
    out = {k: str(look[k]) for k in ("mat", "resolution") if k in look}
    if "px_per_mm" in look:
        out["px/mm"] = _band(float(look["px_per_mm"]), _SCALE_BANDS)
    light = look.get("light")
    if isinstance(light, Mapping) and "tint" in light:
        out["light"] = str(light["tint"])
    return out


def _truth_looks(
    truth: Mapping[str, Any], models: Sequence[rules.Model]
) -> tuple[tuple[dict[str, str], ...], dict[str, str]]:
    render = truth.get("render", {})
    frame = frame_look(render.get("look", {}))
    looks = {m.get("id"): m.get("look") for m in render.get("models", []) if isinstance(m, Mapping)}
    per_model = []
    for m in models:
        look = looks.get(m.id)
        per_model.append(model_look(look, 2.0 * m.base.semi_axes_mm[0]) if isinstance(look, Mapping) else {})
    return tuple(per_model), frame


def score_frame(sample: Sample, config: Settings, settings: EvaluateSettings, roster: bool = False) -> FrameScore:
    """Run the pipeline on one frame and match its models to the truth (minimum total distance, gated). With
    ``roster`` the truth serves as the roster too (as ``tableref analyze`` and ``measure`` take one): bases are
    fitted at the sizes and rim heights it declares; where they stand comes from the frame alone."""
    image = read_image(sample.image)
    truth = sample.state or _check_truth(sample.truth, sample.image.with_suffix(".truth.json"))
    # the empty table is captured once at set-up, not per frame: not timed
    reference = (
        None if sample.empty is None else empty_table(read_image(sample.empty), sample.spec, config, sample.camera)
    )
    start = time.perf_counter()
    analysis = detect_frame(
        image,
        sample.spec,
        config,
        sample.camera,
        roster=truth if roster else None,
        reference=reference,
        whole_roster=roster,
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
    matched = np.zeros(len(true_models), dtype=bool)
    matched[cols] = True
    truth_error = np.full(len(true_models), np.nan)
    truth_size = np.zeros(len(true_models), dtype=bool)
    if len(cols):
        truth_error[cols] = np.hypot(diff[:, 0], diff[:, 1])
        truth_size[cols] = size_right
    model_looks, look = _truth_looks(sample.truth, true_models)
    places = doubted_of(analysis.state)
    # (P, T) each place doubted on each truth base; only those the detector missed count
    on = _doubted_on(places, true_models) & ~matched[None, :]
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
        truth_visible=visible,
        truth_matched=matched,
        truth_error_mm=truth_error,
        truth_size_right=truth_size,
        model_looks=model_looks,
        frame_look=MappingProxyType(look),
        doubted=len(places),
        doubted_on_missed=int(on.any(axis=1).sum()),
        missed_doubted=int((on.any(axis=0) & visible).sum()),
    )


def _doubted_on(places: Sequence[DoubtedPlace], models: Sequence[rules.Model]) -> NDArray[np.bool_]:
    """(P, M) whether each doubted place lies on each model's base (its centre inside the base)."""
    if not places or not models:
        return np.zeros((len(places), len(models)), dtype=bool)
    at = np.array([[p.x_mm, p.y_mm] for p in places])
    apart = at[:, None, :] - centres_mm(models)[None, :, :]
    radius = np.array([min(m.base.semi_axes_mm) for m in models])
    return np.asarray(np.hypot(apart[..., 0], apart[..., 1]) <= radius[None, :])


def evaluate(
    samples: Sequence[Sample],
    config: Settings,
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
        **_doubts_pooled(scores),
    }


def _doubts_pooled(scores: Sequence[FrameScore]) -> dict[str, float]:
    """The places doubted a frame, the share of them on a base missed, and the share of bases missed (counted for
    recall) with such a place on them."""
    doubted = sum(s.doubted for s in scores)
    missed = sum(s.visible_count - s.matched_visible for s in scores)
    return {
        "doubted_per_frame": doubted / len(scores) if scores else math.nan,
        "doubted_on_missed": sum(s.doubted_on_missed for s in scores) / doubted if doubted else math.nan,
        "missed_doubted": sum(s.missed_doubted for s in scores) / missed if missed else math.nan,
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


def has_looks(scores: Sequence[FrameScore]) -> bool:
    """Whether any frame's truth describes its look (``render.look`` or a model's ``look``)."""
    return any(s.frame_look or any(s.model_looks) for s in scores)


def _value_key(category: str, value: str) -> tuple[float, str]:
    if category == "resolution" and value in _RESOLUTION_ORDER:
        return (float(_RESOLUTION_ORDER.index(value)), value)
    head = value.split("-")[0].split(" ")[0]
    try:
        return (float(head), value)
    except ValueError:
        return (math.inf, value)


def _look_row(
    category: str, value: str, parts: list[tuple[FrameScore, NDArray[np.bool_]]], frame: bool
) -> dict[str, Any]:
    """One row of the breakdown: ``parts`` pairs each frame with the truth models (T,) of this value."""
    visible = sum(int((s.truth_visible & sel).sum()) for s, sel in parts)
    found = sum(int((s.truth_visible & s.truth_matched & sel).sum()) for s, sel in parts)
    errors = np.concatenate([s.truth_error_mm[sel & s.truth_matched] for s, sel in parts]) if parts else np.empty(0)
    sizes = np.concatenate([s.truth_size_right[sel & s.truth_matched] for s, sel in parts]) if parts else np.empty(0)
    detected = sum(s.detected for s, _ in parts)
    return {
        "category": category,
        "value": value,
        "frames": len(parts) if frame else len({s.name for s, sel in parts if sel.any()}),
        "bases": visible,
        "recall": found / visible if visible else math.nan,
        # False detections belong to no truth model: they count against their frame's categories only.
        "precision": sum(s.matched for s, _ in parts) / detected if frame and detected else math.nan,
        "median_mm": float(np.median(errors)) if len(errors) else math.nan,
        "p95_mm": float(np.percentile(errors, 95)) if len(errors) else math.nan,
        "size_right": float(np.mean(sizes)) if len(sizes) else math.nan,
    }


def look_breakdown(scores: Sequence[FrameScore]) -> list[dict[str, Any]]:
    """Recall, precision, median and 95th-percentile centre error and sizes right per value of each look
    category: per model (top, figure, contact, rim height, base), then per frame (mat, resolution, px/mm,
    light). Precision is given for frame categories only; for the others it is NaN."""
    rows = []
    for category in MODEL_CATEGORIES:
        values = {lk[category] for s in scores for lk in s.model_looks if category in lk}
        for value in sorted(values, key=lambda v: _value_key(category, v)):
            parts = [(s, np.array([lk.get(category) == value for lk in s.model_looks], dtype=bool)) for s in scores]
            parts = [(s, sel) for s, sel in parts if len(sel) == len(s.truth_visible) and sel.any()]
            rows.append(_look_row(category, value, parts, frame=False))
    for category in FRAME_CATEGORIES:
        values = {s.frame_look[category] for s in scores if category in s.frame_look}
        for value in sorted(values, key=lambda v: _value_key(category, v)):
            chosen = [s for s in scores if s.frame_look.get(category) == value]
            rows.append(
                _look_row(category, value, [(s, np.ones(len(s.truth_visible), dtype=bool)) for s in chosen], True)
            )
    return rows


def report_dict(scores: Sequence[FrameScore], by_look: bool | None = None) -> dict[str, Any]:
    """Everything ``tableref evaluate --json`` prints. ``by_look`` adds the breakdown by look (None: when the
    truths describe looks)."""
    frames = []
    for s in scores:
        d = _pooled([s])
        d.update({"name": s.name, "image_size": list(s.image_size), "lens_corrected": s.lens_corrected})
        d.update({"truth": s.truth_count, "visible": s.visible_count, "detected": s.detected, "matched": s.matched})
        frames.append(d)
    out = {"frames": frames, "overall": _pooled(scores), "reliability": reliability(scores)}
    if by_look or (by_look is None and has_looks(scores)):
        out["by_look"] = look_breakdown(scores)
    return out


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.1f}%"


def _mm(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.3f}"


def format_report(scores: Sequence[FrameScore], by_look: bool | None = None) -> str:
    """The evaluation as text tables: per frame, overall, the sigma reliability table, and the breakdown by look
    when ``by_look`` (None: when the truths describe looks)."""
    doc = report_dict(scores, by_look)
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
    o = doc["overall"]
    lines.append(
        f"Places doubted (a base may stand there that was not accepted): {o['doubted_per_frame']:.2f} a frame; "
        f"{_pct(o['doubted_on_missed'])} of them on a base missed; {_pct(o['missed_doubted'])} of the bases missed "
        "have one"
    )
    lines += ["", "Sigma reliability (share of x and y errors within k sigma; honest: 68.3 / 95.4 / 99.7 %)"]
    lines.append(f"{'group':24} {'coords':>7} {'1 sigma':>8} {'2 sigma':>8} {'3 sigma':>8}")
    for r in doc["reliability"]:
        lines.append(
            f"{r['group']:24} {r['coordinates']:7d} "
            + " ".join(f"{_pct(r[k]):>8}" for k in ("within_1", "within_2", "within_3"))
        )
    if "by_look" in doc:
        lines += ["", *format_looks(doc["by_look"])]
    return "\n".join(lines)


def format_looks(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The breakdown by look as text lines."""
    lines = [
        "By look (recall over bases with >= 60 % of the rim visible; centre errors in mm over matched bases; "
        "precision per frame category only: false detections count against their frame's mat, resolution, "
        "px/mm and light)"
    ]
    if not rows:
        return [*lines, "no frame's truth describes its look"]
    lines.append(
        f"{'category':11} {'value':10} {'frames':>6} {'bases':>6} {'recall':>7} {'precis.':>7} {'median':>7} "
        f"{'p95':>7} {'size ok':>7}"
    )
    for r in rows:
        lines.append(
            f"{r['category']:11} {r['value']:10} {r['frames']:6d} {r['bases']:6d} {_pct(r['recall']):>7} "
            f"{_pct(r['precision']):>7} {_mm(r['median_mm']):>7} {_mm(r['p95_mm']):>7} {_pct(r['size_right']):>7}"
        )
    return lines
