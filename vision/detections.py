"""The one container every vision tool takes and returns: N detected round bases in image pixels."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from vision.errors import VisionError

FloatArray = NDArray[np.float64]

# Every field but center_px and model_doubt_mm is one value per base.
_PER_BASE = (
    "radius_px",
    "diameter_mm",
    "score",
    "edge_coverage",
    "fit_rms_px",
    "center_sigma_px",
    "diameter_sigma_mm",
    "model_sigma_mm",
    "rim_height_share",
)
# Stands for "not given": no base has a doubt along a line.
_NO_DOUBT = np.zeros((0, 2))


def _frozen(value: Any, shape: tuple[int, ...], name: str) -> FloatArray:
    arr = np.array(value, dtype=np.float64, copy=True)
    if arr.size == 0:
        arr = arr.reshape(shape)
    if arr.shape != shape:
        raise VisionError(f"BaseDetections.{name} must have shape {shape}, got {arr.shape}")
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False)
class BaseDetections:
    """Detected round bases, one row per base, in the pixels of the image they were found in.

    Arrays (read-only, float64):
        center_px (N, 2): fitted centre (x, y); pixel centres sit at integer coordinates.
        radius_px (N,): fitted rim radius.
        diameter_mm (N,): the standard base size the fitted diameter snapped to.
        score (N,): in [0, 1], higher is surer; ranks detections, it is not a probability.
        edge_coverage (N,): fraction of the rim (of the rays cast) with a good edge on the fitted circle.
        fit_rms_px (N,): RMS distance of those rim edge points from the fitted circle.
        center_sigma_px (N,): 1-sigma uncertainty of each coordinate of the centre (isotropic), from the fit's
            residuals and the number and angular spread of its rim points.
        diameter_sigma_mm (N,): how far the fitted diameter (2 radius_px in mm, before snapping) may stray from
            the true size, 1-sigma: what the method that fitted it reaches (see the vision settings).
        model_sigma_mm (N,): what the outline model of the method that fitted the base misses (bevels, flock over
            the rim, the wall's shading, contact shadows), 1-sigma per axis in mm: systematic, the same in every
            frame of an unchanged table (unlike center_sigma_px).
        rim_height_share (N,): how much of an error in the rim height assumed moves the centre: 1 where the edges
            read the outline, whose middle stands at about half the rim height; 2 where they read the top disc of a
            base lighter than the mat, at the rim's whole height, its centre moved back half the parallax shift of
            the height assumed (to where the outline's middle would stand); 0 where the appearance fit found the
            footprint with the base's own rim height.
        model_doubt_mm (N, 2): a 1-sigma doubt (mm) along this line only, on top of ``model_sigma_mm``: where
            another reading about as good lies, the centre may be anywhere between; where the fit's wall lies where
            no wall is, along the line from the nadir (0, 0: none; the default).

    ``dets[mask]`` (boolean (N,) or integer indices) selects rows; ``len(dets)`` counts them.
    """

    center_px: FloatArray
    radius_px: FloatArray
    diameter_mm: FloatArray
    score: FloatArray
    edge_coverage: FloatArray
    fit_rms_px: FloatArray
    center_sigma_px: FloatArray
    diameter_sigma_mm: FloatArray
    model_sigma_mm: FloatArray
    rim_height_share: FloatArray
    model_doubt_mm: FloatArray = field(default_factory=lambda: _NO_DOUBT)

    def __post_init__(self) -> None:
        center = np.asarray(self.center_px, dtype=np.float64)
        if center.size == 0:
            center = center.reshape(0, 2)
        if center.ndim != 2 or center.shape[1] != 2:
            raise VisionError(f"BaseDetections.center_px must have shape (N, 2), got {center.shape}")
        n = center.shape[0]
        object.__setattr__(self, "center_px", _frozen(center, (n, 2), "center_px"))
        for name in _PER_BASE:
            object.__setattr__(self, name, _frozen(getattr(self, name), (n,), name))
        doubt = np.zeros((n, 2)) if self.model_doubt_mm is _NO_DOUBT else self.model_doubt_mm
        object.__setattr__(self, "model_doubt_mm", _frozen(doubt, (n, 2), "model_doubt_mm"))

    @classmethod
    def empty(cls) -> BaseDetections:
        """No detections."""
        return cls(np.zeros((0, 2)), *(np.zeros(0) for _ in _PER_BASE))

    def __len__(self) -> int:
        return int(self.center_px.shape[0])

    def __getitem__(self, index: NDArray[np.bool_] | NDArray[np.integer[Any]] | slice) -> BaseDetections:
        if isinstance(index, np.ndarray) and index.dtype == np.bool_ and index.shape != (len(self),):
            raise VisionError(
                f"a boolean selection of {len(self)} detections needs shape ({len(self)},), got {index.shape}"
            )
        return BaseDetections(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    def translated(self, offset_px: tuple[float, float]) -> BaseDetections:
        """The same bases with every centre moved by ``offset_px`` (dx, dy): rows found in a window of a larger
        image, in that image's pixels."""
        return replace(self, center_px=self.center_px + np.asarray(offset_px, dtype=np.float64))

    @staticmethod
    def concatenate(parts: list[BaseDetections]) -> BaseDetections:
        """All rows of ``parts``, in order."""
        if not parts:
            return BaseDetections.empty()
        return BaseDetections(
            **{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(BaseDetections)}
        )

    def __repr__(self) -> str:
        return f"BaseDetections(n={len(self)})"
