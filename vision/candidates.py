"""The candidate table that one look of :mod:`vision.detect` passes from stage to stage: one row per circle that
may be a base, every column a numpy array of K rows. Each stage returns a new table with the columns it fills or
changes; the columns a later stage fills are empty (0 rows) until then."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from vision.circlefit import CircleFit
from vision.detections import BaseDetections

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def _floats() -> FloatArray:
    return np.zeros(0)


def _flags() -> BoolArray:
    return np.zeros(0, np.bool_)


@dataclass(frozen=True)
class Candidates:
    """K candidate circles of one look.

    From the footprints (:mod:`vision.footprints`): ``center_px`` (K, 2), ``radius_px`` (K,), ``polarity`` (K,) of
    the rim edge, ``nominal_mm`` (K,) the size snapped to, ``second`` (K,) a second reading of its seed.
    From the refinement (:mod:`vision.refine`): ``fit``, the last edge fit of every row.
    From the first tests (:mod:`vision.verdicts`): ``coverage``, ``contrast`` and ``fill`` (the disc test),
    ``figure`` (the figure test), ``plain_disc`` (every test passed but the figure's), ``rim_ok`` (the rim and
    figure tests passed), ``accept`` (a base so far), ``kin_only`` (a base only beside its unit's), ``retry`` (the
    disc test again at the appearance fit's footprint) and ``max_rms_px``, the roundness bar of the look.
    From the measurement (:mod:`vision.measure`): ``measured`` (the rows the rim model was fitted for),
    ``rim_levels`` (K, 3), ``rim_width_px`` and ``rim_ok_model`` (the rim model of those rows; NaN and False
    elsewhere), ``edge_center_px`` and ``edge_radius_px`` (the circle the edges read), ``size_mm``,
    ``diameter_sigma_mm``, ``model_sigma_mm``, ``doubt_mm`` (K, 2), ``by_edges`` (placed by the edges, not by the
    appearance fit), ``top_read`` (read by the top disc), ``score`` and ``center_sigma_px``.
    From the other readings (:mod:`vision.other_readings`): ``height_share``."""

    center_px: FloatArray
    radius_px: FloatArray
    polarity: FloatArray
    nominal_mm: FloatArray
    second: BoolArray
    fit: CircleFit | None = None
    coverage: FloatArray = field(default_factory=_floats)
    contrast: FloatArray = field(default_factory=_floats)
    fill: FloatArray = field(default_factory=_floats)
    figure: FloatArray = field(default_factory=_floats)
    plain_disc: BoolArray = field(default_factory=_flags)
    rim_ok: BoolArray = field(default_factory=_flags)
    accept: BoolArray = field(default_factory=_flags)
    kin_only: BoolArray = field(default_factory=_flags)
    retry: BoolArray = field(default_factory=_flags)
    max_rms_px: float = 0.0
    measured: BoolArray = field(default_factory=_flags)
    rim_levels: FloatArray = field(default_factory=_floats)
    rim_width_px: FloatArray = field(default_factory=_floats)
    rim_ok_model: BoolArray = field(default_factory=_flags)
    edge_center_px: FloatArray = field(default_factory=_floats)
    edge_radius_px: FloatArray = field(default_factory=_floats)
    size_mm: FloatArray = field(default_factory=_floats)
    diameter_sigma_mm: FloatArray = field(default_factory=_floats)
    model_sigma_mm: FloatArray = field(default_factory=_floats)
    doubt_mm: FloatArray = field(default_factory=_floats)
    by_edges: BoolArray = field(default_factory=_flags)
    top_read: BoolArray = field(default_factory=_flags)
    score: FloatArray = field(default_factory=_floats)
    center_sigma_px: FloatArray = field(default_factory=_floats)
    height_share: FloatArray = field(default_factory=_floats)

    def __len__(self) -> int:
        return len(self.radius_px)

    @property
    def edge_fit(self) -> CircleFit:
        """The refinement's last fit (the refinement has run)."""
        if self.fit is None:
            raise ValueError("the candidates have not been refined yet")
        return self.fit

    def take(self, rows: NDArray[np.intp]) -> Candidates:
        """The table of ``rows`` (in that order); columns not filled yet stay empty."""
        k = len(self)
        changes: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray) and len(value) == k and (value.size or k == 0):
                changes[f.name] = value[rows]
        if self.fit is not None:
            changes["fit"] = CircleFit(*(getattr(self.fit, f.name)[rows] for f in fields(self.fit)))
        return replace(self, **changes)


def split_detections(found: Candidates) -> tuple[BaseDetections, BaseDetections, BaseDetections]:
    """The readings that stand (``found``, after the overlaps are resolved) as detections: the first readings, the
    second readings and the kin-only readings."""
    detections = BaseDetections(
        center_px=found.center_px,
        radius_px=found.radius_px,
        diameter_mm=found.size_mm,
        score=found.score,
        edge_coverage=found.coverage,
        fit_rms_px=found.edge_fit.rms_px,
        center_sigma_px=found.center_sigma_px,
        diameter_sigma_mm=found.diameter_sigma_mm,
        model_sigma_mm=found.model_sigma_mm,
        rim_height_share=found.height_share,
        model_doubt_mm=found.doubt_mm,
    )
    second, by_kin = found.second, found.kin_only
    return detections[~second & ~by_kin], detections[second], detections[by_kin]
