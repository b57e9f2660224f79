"""Edge-to-edge geometry of round and oval bases, vectorised over many pairs.

Every base is an ellipse (a round base is one with equal semi-axes). The signed gap of two convex shapes A and B
is the largest separation over all directions n::

    gap = max_n [ min_{b in B} n.b - max_{a in A} n.a ] = max_n [ n.(cB - cA) - hA(n) - hB(-n) ]

where h is the support function about the shape's centre. For separated shapes this is the Euclidean distance
between them; for overlapping ones it is minus the penetration depth (the shortest translation that separates
them), which is what "a negative gap is an overlap depth" asks for. An ellipse with semi-axes (a, b) turned by phi
has h(n(theta)) = sqrt(a^2 cos^2(theta - phi) + b^2 sin^2(theta - phi)); a circle has h = r, which reduces the gap
to ``distance - r1 - r2``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely
import shapely.affinity
from numpy.typing import NDArray

from rules.state import TableState

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

# A coarse scan finds the peak of the separation function, golden-section search then pins it down. 360 samples
# keep the scan error of a wrongly chosen neighbouring peak under 0.01 mm for bases up to 170 mm; 48 golden
# steps shrink the bracket by 1e-10, far below float noise in millimetres.
_SCAN_ANGLES = 360
_GOLDEN_STEPS = 48
_REFINED_PEAKS = 3
_INV_PHI = (np.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class BaseArrays:
    """The bases of a state as arrays.

    Attributes:
        center_mm: (N, 2) centres.
        axes_mm: (N, 2) semi-axes (along the base's own x, then y).
        rotation_rad: (N,) turn of each base, counter-clockwise from +x.
        round: (N,) True where both semi-axes are equal.
        sigma_mm: (N,) 1-sigma position uncertainty.
    """

    center_mm: FloatArray
    axes_mm: FloatArray
    rotation_rad: FloatArray
    round: NDArray[np.bool_]
    sigma_mm: FloatArray

    @staticmethod
    def from_state(state: TableState) -> BaseArrays:
        n = len(state.models)
        center = np.empty((n, 2))
        axes = np.empty((n, 2))
        rot = np.empty(n)
        sigma = np.empty(n)
        for i, m in enumerate(state.models):
            center[i] = (m.x_mm, m.y_mm)
            axes[i] = m.base.semi_axes_mm
            rot[i] = np.deg2rad(m.base.rotation_deg)
            sigma[i] = m.sigma_mm
        return BaseArrays(center, axes, rot, axes[:, 0] == axes[:, 1], sigma)

    def __len__(self) -> int:
        return int(self.center_mm.shape[0])

    @property
    def circumradius_mm(self) -> FloatArray:
        """(N,) radius of the smallest centred circle holding each base."""
        return np.asarray(self.axes_mm.max(axis=1), dtype=np.float64)

    def support_mm(self, idx: IntArray, theta_rad: FloatArray) -> FloatArray:
        """Support function of bases ``idx`` about their centres in directions ``theta_rad``.

        ``idx`` has shape (M,) and ``theta_rad`` shape (M,) or (M, K); the result has the shape of ``theta_rad``.
        """
        a = self.axes_mm[idx, 0]
        b = self.axes_mm[idx, 1]
        phi = self.rotation_rad[idx]
        if theta_rad.ndim == 2:
            a, b, phi = a[:, None], b[:, None], phi[:, None]
        c = np.cos(theta_rad - phi)
        s = np.sin(theta_rad - phi)
        return np.asarray(np.sqrt((a * c) ** 2 + (b * s) ** 2), dtype=np.float64)

    def extent_mm(self) -> FloatArray:
        """(N, 2) half-extent of each base along x and along y (half its axis-aligned bounding box)."""
        idx = np.arange(len(self), dtype=np.intp)
        zeros = np.zeros(len(self))
        return np.stack([self.support_mm(idx, zeros), self.support_mm(idx, zeros + np.pi / 2.0)], axis=1)

    def gaps_mm(self, i: IntArray, j: IntArray) -> FloatArray:
        """Signed edge-to-edge gaps of base pairs (i[k], j[k]); shapes (M,) -> (M,). Negative: overlap depth."""
        i = np.asarray(i, dtype=np.intp)
        j = np.asarray(j, dtype=np.intp)
        d = self.center_mm[j] - self.center_mm[i]
        gap: FloatArray = np.hypot(d[:, 0], d[:, 1]) - self.axes_mm[i, 0] - self.axes_mm[j, 0]
        oval = ~(self.round[i] & self.round[j])
        if oval.any():
            gap[oval] = self._support_gaps(i[oval], j[oval], d[oval])
        return gap

    def _separation(self, i: IntArray, j: IntArray, d: FloatArray, theta: FloatArray) -> FloatArray:
        # The support function of a centred ellipse is even, so hB(-n) = hB(n).
        proj = np.cos(theta) * d[:, 0:1] + np.sin(theta) * d[:, 1:2]
        return np.asarray(proj - self.support_mm(i, theta) - self.support_mm(j, theta), dtype=np.float64)

    def _support_gaps(self, i: IntArray, j: IntArray, d: FloatArray) -> FloatArray:
        step = 2.0 * np.pi / _SCAN_ANGLES
        grid = np.arange(_SCAN_ANGLES) * step
        theta = np.broadcast_to(grid, (len(i), _SCAN_ANGLES))
        f = self._separation(i, j, d, theta)
        # The function can have more than one local peak when shapes overlap deeply: refine the best few.
        peaks = np.argsort(-f, axis=1)[:, :_REFINED_PEAKS]
        best = np.full(len(i), -np.inf)
        for p in range(peaks.shape[1]):
            lo = np.asarray(grid[peaks[:, p]] - step, dtype=np.float64)
            hi = np.asarray(grid[peaks[:, p]] + step, dtype=np.float64)
            best = np.maximum(best, self._golden_max(i, j, d, lo, hi))
        return best

    def _golden_max(self, i: IntArray, j: IntArray, d: FloatArray, lo: FloatArray, hi: FloatArray) -> FloatArray:
        x1 = hi - _INV_PHI * (hi - lo)
        x2 = lo + _INV_PHI * (hi - lo)
        f1 = self._separation(i, j, d, x1[:, None])[:, 0]
        f2 = self._separation(i, j, d, x2[:, None])[:, 0]
        for _ in range(_GOLDEN_STEPS):
            left = f1 > f2
            hi = np.where(left, x2, hi)
            lo = np.where(left, lo, x1)
            x2n = np.where(left, x1, lo + _INV_PHI * (hi - lo))
            x1n = np.where(left, hi - _INV_PHI * (hi - lo), x2)
            fnew = self._separation(i, j, d, np.where(left, x1n, x2n)[:, None])[:, 0]
            f1, f2 = np.where(left, fnew, f2), np.where(left, f1, fnew)
            x1, x2 = x1n, x2n
        return np.maximum(f1, f2)

    def polygons(self, idx: IntArray, quad_segs: int = 32) -> NDArray[np.object_]:
        """Shapely polygons of bases ``idx`` ((M,) -> (M,) object array); 4 * quad_segs vertices each."""
        points = shapely.points(self.center_mm[idx])
        circles = shapely.buffer(points, 1.0, quad_segs=quad_segs)
        out = np.empty(len(idx), dtype=object)
        for k, (poly, n) in enumerate(zip(circles, idx, strict=True)):
            a, b = self.axes_mm[n]
            scaled = shapely.affinity.scale(poly, a, b, origin=tuple(self.center_mm[n]))
            out[k] = shapely.affinity.rotate(
                scaled, float(self.rotation_rad[n]), origin=tuple(self.center_mm[n]), use_radians=True
            )
        return out


def candidate_pairs(bases: BaseArrays, reach_mm: float) -> tuple[IntArray, IntArray]:
    """Index pairs (i < j) of bases whose gap may be at most ``reach_mm``, from a spatial index over centres.

    Returns two (M,) arrays. Pairs farther apart than ``reach_mm`` edge to edge are guaranteed absent.
    """
    n = len(bases)
    if n < 2:
        empty = np.empty(0, dtype=np.intp)
        return empty, empty.copy()
    r = bases.circumradius_mm
    points = shapely.points(bases.center_mm)
    tree = shapely.STRtree(points)
    src, dst = tree.query(points, predicate="dwithin", distance=reach_mm + 2.0 * float(r.max()))
    keep = src < dst
    i, j = src[keep].astype(np.intp), dst[keep].astype(np.intp)
    d = bases.center_mm[j] - bases.center_mm[i]
    close = np.hypot(d[:, 0], d[:, 1]) <= reach_mm + r[i] + r[j]
    return i[close], j[close]
