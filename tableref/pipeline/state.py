"""Detections of a top-down view as a table state: where each base stands on the table (under parallax), its size,
and how sure each is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

import rules
from calibration.errors import ReportError
from calibration.report import CalibrationReport, number, whole
from calibration.spec import TableSpec
from calibration.table import TableCalibration, rectified_to_table
from tableref.assign import centres_mm
from tableref.pipeline.identity import MODEL_ID_PREFIX, pairing
from tableref.settings import PipelineSettings
from vision.detections import BaseDetections
from vision.doubts import Doubts

# The key of a table state's extras (and its JSON) that holds the calibration section.
SECTION = "calibration"
# The key of a measured state's extras (and its JSON) that lists the places doubted (see DoubtedPlace).
DOUBTED = "doubted"


@dataclass(frozen=True)
class DeclaredBases:
    """How many bases were fitted again at the base size a roster declares, and how many of those at the rim height
    it declares too."""

    sizes: int
    rim_heights: int

    def to_dict(self) -> dict[str, int]:
        return {"sizes": self.sizes, "rim_heights": self.rim_heights}


@dataclass(frozen=True)
class CalibrationSection:
    """The ``calibration`` section of a measured table state: the calibration's report (its notes with the
    pipeline's, such as a coarse view), the rim height the outlines were placed at (0 where heights are not corrected),
    the bases measured at what a roster declares (None: no roster) and how many frames were fused into the state (None:
    one frame, not fused)."""

    report: CalibrationReport
    rim_height_mm: float
    declared_bases: DeclaredBases | None = None
    frames_fused: int | None = None

    def to_dict(self) -> dict[str, object]:
        """The section as a table state's JSON holds it: the report's keys, then the pipeline's."""
        out = {**self.report.to_dict(), "rim_height_mm": self.rim_height_mm}
        if self.declared_bases is not None:
            out["declared_bases"] = self.declared_bases.to_dict()
        if self.frames_fused is not None:
            out["frames_fused"] = self.frames_fused
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CalibrationSection:
        """The section of a table state read back. Raises :class:`calibration.ReportError` naming what is wrong."""
        if not isinstance(data, Mapping):
            raise ReportError(f"calibration report: expected an object, got {type(data).__name__}")
        if "rim_height_mm" not in data:
            raise ReportError("calibration report: missing rim_height_mm")
        own = ("rim_height_mm", "declared_bases", "frames_fused")
        return cls(
            report=CalibrationReport.from_dict({k: v for k, v in data.items() if k not in own}),
            rim_height_mm=number(data, "rim_height_mm"),
            declared_bases=_declared_bases(data.get("declared_bases")),
            frames_fused=None if data.get("frames_fused") is None else whole(data, "frames_fused"),
        )


def _declared_bases(value: Any) -> DeclaredBases | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) != {"sizes", "rim_heights"}:
        raise ReportError(f"calibration report: declared_bases must be {{sizes, rim_heights}}, got {value!r}")
    return DeclaredBases(whole(value, "sizes"), whole(value, "rim_heights"))


def calibration_section(state: rules.TableState) -> CalibrationSection | None:
    """The calibration section of a measured table state; None for a state that holds none (one drawn, not measured).
    Raises :class:`calibration.ReportError` where the section is not one."""
    data = state.extras.get(SECTION)
    return None if data is None else CalibrationSection.from_dict(data)


def with_calibration_section(state: rules.TableState, section: CalibrationSection) -> rules.TableState:
    """``state`` holding ``section`` as its calibration section (in its extras, as JSON)."""
    return replace(state, extras=MappingProxyType({**state.extras, SECTION: section.to_dict()}))


def seen_height_mm(
    calibration: TableCalibration, rim_height_mm: float | NDArray[np.float64]
) -> float | NDArray[np.float64]:
    """The height whose parallax maps a fitted outline centre to the footprint: the stadium's middle lies
    halfway between footprint and top in the top-down view, which is where a point at height
    H h / (2 H - h) appears (H the camera height). ``rim_height_mm``: a float, or (N,) one per base."""
    if not calibration.heights_corrected:
        return 0.0
    assert calibration.camera_position_mm is not None
    height = float(calibration.camera_position_mm[2])
    return height * rim_height_mm / (2.0 * height - rim_height_mm)


def coarse_note(px_per_mm: float, coarse_px_per_mm: float) -> str:
    """The note of a frame that sees the table at ``px_per_mm``, coarser than ``coarse_px_per_mm``."""
    return (
        f"the camera sees the table at {px_per_mm:.2f} px/mm: under {coarse_px_per_mm:g} px/mm bases are missed, and "
        "other round things taken for bases, far more often; a camera nearer the table or of more pixels helps"
    )


def _position_sigma_mm(
    calibration: TableCalibration,
    detections: BaseDetections,
    centers_mm: NDArray[np.float64],
    px_per_mm: float,
    settings: PipelineSettings,
    height_share: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(N,) 1-sigma position uncertainty per axis, split into the part that varies from frame to frame (the
    edge fit) and the part that does not (table mapping, rim height, uncorrected lens). ``height_share`` (N,):
    how much of a rim height error moves each centre (see :class:`vision.BaseDetections`)."""
    fit = np.asarray(detections.center_sigma_px / px_per_mm, dtype=np.float64)
    mapping = calibration.mapping_sigma_mm(centers_mm) if len(centers_mm) else np.empty(0)
    terms = [mapping, np.asarray(detections.model_sigma_mm, dtype=np.float64)]
    if calibration.heights_corrected:
        # A rim height error dh moves the corrected centre by dh * (distance from the nadir) / camera height.
        assert calibration.camera_position_mm is not None
        nadir = calibration.camera_position_mm[:2]
        lever = np.hypot(*(centers_mm - nadir).T) / float(calibration.camera_position_mm[2])
        # a centre the edges read sits at about half the rim height, so half of a rim height error shows; the
        # appearance fit finds each base's own height
        terms.append(0.5 * settings.rim_height_sigma_mm * lever * height_share)
    if not calibration.lens_corrected:
        terms.append(np.full(len(centers_mm), settings.uncorrected_lens_sigma_mm))
    return fit, np.asarray(np.sqrt(np.sum(np.square(terms), axis=0)), dtype=np.float64)


def size_sigma_mm(
    fitted_mm: NDArray[np.float64],
    snapped_mm: NDArray[np.float64],
    sizes_mm: Sequence[float],
    fit_sigma_mm: float | NDArray[np.float64],
) -> NDArray[np.float64]:
    """(N,) 1-sigma uncertainty of each snapped base size: the spread of the standard sizes weighted by how well
    each explains the fitted diameter (N,), a fit being good to ``fit_sigma_mm`` (one for all, or (N,)). Near zero
    for a size far from its neighbours (50 against 40 and 60), about half a step between close ones (25, 27,
    28.5)."""
    if len(fitted_mm) == 0:
        return np.empty(0)
    sizes = np.asarray(sizes_mm, dtype=np.float64)[None, :]
    # a size known (sigma 0) is the snapped one: the nearest standard size takes all the weight
    scale = np.maximum(np.broadcast_to(np.asarray(fit_sigma_mm, dtype=np.float64), fitted_mm.shape), 1e-6)[:, None]
    log_p = -0.5 * ((fitted_mm[:, None] - sizes) / scale) ** 2
    p = np.exp(log_p - log_p.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return np.asarray(np.sqrt(np.sum(p * (sizes - snapped_mm[:, None]) ** 2, axis=1)), dtype=np.float64)


@dataclass(frozen=True)
class DoubtedPlace:
    """A table place that may hold a base the detector did not accept (see :mod:`vision.doubts`): where the finder
    puts its centre (mm), the diameter it reads there (mm) and its probability of a base there."""

    x_mm: float
    y_mm: float
    diameter_mm: float
    probability: float

    def to_dict(self) -> dict[str, float]:
        return {"x_mm": self.x_mm, "y_mm": self.y_mm, "diameter_mm": self.diameter_mm, "probability": self.probability}


def with_doubted(state: rules.TableState, places: Sequence[DoubtedPlace]) -> rules.TableState:
    """``state`` listing ``places`` as the places its measurement doubts (in its extras, as JSON)."""
    return replace(state, extras=MappingProxyType({**state.extras, DOUBTED: [p.to_dict() for p in places]}))


def doubted_of(state: rules.TableState) -> tuple[DoubtedPlace, ...]:
    """The places a measured state lists as doubted (none for a state that lists none)."""
    listed = state.extras.get(DOUBTED) or []
    return tuple(
        DoubtedPlace(float(p["x_mm"]), float(p["y_mm"]), float(p["diameter_mm"]), float(p["probability"]))
        for p in listed
    )


def doubted_places(
    calibration: TableCalibration,
    doubts: Doubts,
    px_per_mm: float,
    settings: PipelineSettings,
) -> tuple[DoubtedPlace, ...]:
    """The places ``doubts`` (a top-down view's pixels at ``px_per_mm``) on the table, as a base of the rim height
    assumed would stand there."""
    if len(doubts) == 0:
        return ()
    seen_mm = rectified_to_table(doubts.center_px, px_per_mm)
    height = np.asarray(seen_height_mm(calibration, np.full(len(seen_mm), settings.rim_height_mm)), dtype=np.float64)
    table_mm = calibration.parallax_corrected(seen_mm, height)
    return tuple(
        DoubtedPlace(round(float(x), 1), round(float(y), 1), round(float(d), 1), round(float(p), 2))
        for (x, y), d, p in zip(table_mm, doubts.diameter_mm, doubts.probability, strict=True)
    )


def _footprints_mm(
    calibration: TableCalibration,
    detections: BaseDetections,
    px_per_mm: float,
    settings: PipelineSettings,
    rim_heights_mm: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """(N, 2) table mm where each detected base stands; ``rim_heights_mm`` (N,) each outline's rim height (None:
    the one assumed)."""
    seen_mm = rectified_to_table(detections.center_px, px_per_mm) if len(detections) else np.empty((0, 2))
    rims_mm = np.broadcast_to(
        np.asarray(settings.rim_height_mm if rim_heights_mm is None else rim_heights_mm, dtype=np.float64),
        (len(seen_mm),),
    )
    height = np.asarray(seen_height_mm(calibration, rims_mm), dtype=np.float64)
    # An outline read by its top disc (rim_height_share 2) was moved back half the parallax shift of the rim height
    # assumed, to where the outline's middle would stand: it goes back onto the top, which stands at the rim's whole
    # height.
    top = np.asarray(detections.rim_height_share, dtype=np.float64) >= 2.0
    if calibration.heights_corrected and top.any():
        assert calibration.camera_position_mm is not None
        nadir = calibration.camera_position_mm[:2]
        camera_mm = float(calibration.camera_position_mm[2])
        half_ratio = 0.5 * settings.rim_height_mm / (camera_mm - settings.rim_height_mm)
        seen_mm = seen_mm.copy()
        seen_mm[top] = nadir + (seen_mm[top] - nadir) / (1.0 - half_ratio)
        height = np.where(top, rims_mm, height)
    # The outline's fitted centre is where the base's axis at about half the rim height (or at the top) meets the
    # table along its ray; the model stands below it.
    return calibration.parallax_corrected(seen_mm, height) if len(seen_mm) else seen_mm


def known_bases(
    calibration: TableCalibration,
    detections: BaseDetections,
    px_per_mm: float,
    roster: rules.TableState,
    settings: PipelineSettings,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """What the roster says each detection stands on: (N,) diameters (mm) and (N,) rim heights over the one assumed
    (``rim_height_mm``), NaN where it says nothing. A detection takes them from the roster model it matches (as
    :func:`~tableref.pipeline.identity.carry_identities` matches them) when both bases are round and the size measured
    is within ``roster_size_tolerance_mm`` of the roster's: farther, the match itself is in doubt."""
    n = len(detections)
    diameter, height = np.full(n, np.nan), np.full(n, np.nan)
    if n == 0 or not roster.models:
        return diameter, height
    seen = _footprints_mm(calibration, detections, px_per_mm, settings)
    listed = centres_mm(roster.models)
    cost = np.hypot(seen[:, None, 0] - listed[None, :, 0], seen[:, None, 1] - listed[None, :, 1])
    for i, j in pairing(cost, settings.roster_gate_mm).items():
        base = roster.models[j].base
        if not isinstance(base, rules.RoundBase):
            continue
        if abs(base.diameter_mm - float(detections.diameter_mm[i])) > settings.roster_size_tolerance_mm:
            continue
        diameter[i] = base.diameter_mm
        if base.height_mm is not None:
            height[i] = base.height_mm / settings.rim_height_mm
    return diameter, height


def state_from_detections(
    spec: TableSpec,
    calibration: TableCalibration,
    detections: BaseDetections,
    px_per_mm: float,
    settings: PipelineSettings,
    sizes_mm: Sequence[float],
    declared_rims_mm: NDArray[np.float64] | None = None,
    kept: NDArray[np.bool_] | None = None,
    declared_bases: DeclaredBases | None = None,
) -> tuple[rules.TableState, NDArray[np.float64]]:
    """Detections of a top-down view -> a table state of unassigned models, ids ``m1, m2, ...`` along the table
    rows (by y, then x) so that ids do not depend on detection order, and the frame-to-frame part of each
    model's sigma (N,) in state order. ``declared_rims_mm`` (N,): the rim height a roster declares for each
    outline the edges read (NaN: the one assumed), which places it and leaves no doubt about that height.
    ``kept`` (N,): the rows kept from an earlier frame where nothing changed that could be seen: each may have moved
    by a little less than a change that shows, so its sigma widens by ``kept_sigma_px``. ``declared_bases``: how many
    bases were fitted again at what a roster declares (None: no roster), for the calibration section."""
    share = np.asarray(detections.rim_height_share, dtype=np.float64)
    rims = np.full(len(detections), settings.rim_height_mm)
    if declared_rims_mm is not None:
        declared = np.isfinite(declared_rims_mm) & (share > 0)
        rims = np.where(declared, declared_rims_mm, rims)
        share = np.where(declared, 0.0, share)
    centers_mm = _footprints_mm(calibration, detections, px_per_mm, settings, rims)
    random, systematic = _position_sigma_mm(calibration, detections, centers_mm, px_per_mm, settings, share)
    if kept is not None:
        systematic = np.hypot(systematic, np.where(kept, settings.kept_sigma_px / px_per_mm, 0.0))
    sigma = np.hypot(random, systematic)
    size_sigma = size_sigma_mm(
        2.0 * detections.radius_px / px_per_mm, detections.diameter_mm, sizes_mm, detections.diameter_sigma_mm
    )
    order = np.lexsort((centers_mm[:, 0], centers_mm[:, 1])) if len(centers_mm) else np.empty(0, dtype=np.intp)
    models = tuple(
        rules.Model(
            id=f"{MODEL_ID_PREFIX}{k + 1}",
            unit=None,
            x_mm=float(centers_mm[i, 0]),
            y_mm=float(centers_mm[i, 1]),
            base=rules.RoundBase(float(detections.diameter_mm[i]), round(float(size_sigma[i]), 3)),
            sigma_mm=float(sigma[i]),
            # the top-down view's axes are the table's, at px_per_mm: a doubt in mm there is one on the table
            doubt_mm=(float(detections.model_doubt_mm[i, 0]), float(detections.model_doubt_mm[i, 1])),
        )
        for k, i in enumerate(order)
    )
    report = calibration.report()
    if calibration.px_per_mm < settings.coarse_px_per_mm:
        report = replace(report, notes=(*report.notes, coarse_note(calibration.px_per_mm, settings.coarse_px_per_mm)))
    rim_height_mm = settings.rim_height_mm if calibration.heights_corrected else 0.0
    state = rules.TableState(table=rules.Table(spec.width_mm, spec.depth_mm), models=models, measured=True)
    state = with_calibration_section(state, CalibrationSection(report, rim_height_mm, declared_bases))
    return state, random[order]
