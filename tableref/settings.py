"""Settings of the app layer (values in ``tableref/defaults.toml``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PipelineSettings:
    """Settings of the wiring between stages ([pipeline] in defaults.toml)."""

    # The top-down view is made at the frame's own scale, clamped to this range (px per mm): finer adds no
    # detail, coarser loses it.
    min_rectified_px_per_mm: float
    max_rectified_px_per_mm: float
    # Markers are masked out of the top-down view with this margin around their black square (mm).
    marker_mask_margin_mm: float
    # Base rims stand this high above the table (mm), give or take rim_height_sigma_mm (bases are 3-5 mm).
    rim_height_mm: float
    rim_height_sigma_mm: float
    # Without a camera model the lens is uncorrected: this is added (in quadrature) to every position's sigma.
    uncorrected_lens_sigma_mm: float
    # A detection takes the identity of a roster model whose centre is within this distance (mm).
    roster_gate_mm: float


@dataclass(frozen=True)
class EvaluateSettings:
    """Settings of scoring against ground truth ([evaluate] in defaults.toml)."""

    # A detection counts as a truth model when their centres are within this distance (mm); farther is a miss
    # and a false detection.
    match_gate_mm: float
    # Recall is taken over the bases with at least this fraction of their rim visible.
    min_visibility: float
