"""Places the detector doubts: where the learned finder sees a base that no base found explains.

A base the detector did not accept is not reported as one, but a referee that says nothing about what it may have
missed cannot be trusted with the rest. The finder's peaks of at least ``finder.doubt_probability`` that lie inside
no base found are such places: a base missed, or a print, a token or a figure's part; a person can look again.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from vision.circles import centre_distances, keep_best, unexplained
from vision.detections import BaseDetections
from vision.errors import VisionError
from vision.finder import FinderMaps

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class Doubts:
    """K places that may hold a base the detector did not accept, in the pixels of the view they were read in.

    Arrays (read-only, float64):
        center_px (K, 2): where the finder puts the base's centre (x, y); pixel centres at integer coordinates.
        diameter_mm (K,): the diameter the finder reads there.
        probability (K,): the finder's probability of a base there, most probable first.
    """

    center_px: FloatArray
    diameter_mm: FloatArray
    probability: FloatArray

    def __post_init__(self) -> None:
        center = np.array(self.center_px, dtype=np.float64, copy=True).reshape(-1, 2)
        n = len(center)
        center.flags.writeable = False
        object.__setattr__(self, "center_px", center)
        for name in ("diameter_mm", "probability"):
            arr = np.array(getattr(self, name), dtype=np.float64, copy=True).reshape(-1)
            if arr.shape != (n,):
                raise VisionError(f"Doubts.{name} must have shape ({n},), got {arr.shape}")
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)

    @classmethod
    def empty(cls) -> Doubts:
        """No doubted place."""
        return cls(np.zeros((0, 2)), np.zeros(0), np.zeros(0))

    def __len__(self) -> int:
        return int(self.center_px.shape[0])

    def __getitem__(self, index: NDArray[np.bool_] | NDArray[np.integer[Any]] | slice) -> Doubts:
        return Doubts(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    def translated(self, offset_px: tuple[float, float]) -> Doubts:
        """The same places with every centre moved by ``offset_px`` (dx, dy)."""
        return replace(self, center_px=self.center_px + np.asarray(offset_px, dtype=np.float64))

    @staticmethod
    def concatenate(parts: list[Doubts]) -> Doubts:
        """All places of ``parts``, in order."""
        if not parts:
            return Doubts.empty()
        return Doubts(**{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(Doubts)})


def unexplained_peaks(
    bases: BaseDetections,
    maps: FinderMaps,
    scale: float,
    min_probability: float,
    ignore: NDArray[np.uint8] | None = None,
) -> Doubts:
    """The finder's peaks (see :meth:`FinderMaps.peaks`) of at least ``min_probability`` whose centre lies inside
    no base of ``bases`` (view pixels at ``scale`` px/mm) and not on a nonzero ``ignore`` (H, W) pixel; of peaks
    closer than half the diameter of a more probable one, that one alone (one base read twice).
    ``min_probability`` 0: none."""
    if min_probability <= 0:
        return Doubts.empty()
    center_px, diameter_mm, probability = maps.peaks(min_probability)
    lone = np.flatnonzero(_outside(center_px, bases, ignore))
    # peaks come most probable first: a later one within half a kept one's diameter is the same base read twice
    near = centre_distances(center_px[lone], center_px[lone]) < 0.5 * diameter_mm[lone][None, :] * scale
    index = lone[keep_best(probability[lone], near)]
    return Doubts(center_px[index], diameter_mm[index], probability[index])


def outside_bases(doubts: Doubts, bases: BaseDetections) -> Doubts:
    """The places of ``doubts`` whose centre lies inside no base of ``bases`` (the same view's pixels)."""
    return doubts[_outside(doubts.center_px, bases, None)]


def _outside(center_px: FloatArray, bases: BaseDetections, ignore: NDArray[np.uint8] | None) -> NDArray[np.bool_]:
    """(K,) whether each point (K, 2) lies inside no base of ``bases`` and on no pixel ``ignore`` marks: a point
    as a circle of no size, which a base explains within half the larger radius, so within its own at twice it."""
    return unexplained(center_px, np.zeros(len(center_px)), bases.center_px, 2.0 * bases.radius_px, ignore)
