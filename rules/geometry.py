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
from numpy.typing import NDArray

from rules.errors import StateError
from rules.state import TableState

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

# A coarse scan finds the peaks of the separation function, Newton steps then pin the best two down. 32 samples
# put every peak within 6 degrees of a sample; Newton converges quadratically from there, so 4 steps leave an
# angle error below 1e-9 rad. Refining the two best samples covers two peaks of nearly equal height (deeply
# overlapping ovals); on 10,000 random oval pairs this agrees with a 256-sample scan to 1e-12 mm.
_SCAN_ANGLES = 32
_SCAN = np.arange(_SCAN_ANGLES) * (2.0 * np.pi / _SCAN_ANGLES)
_SCAN_COS = np.cos(_SCAN)
_SCAN_SIN = np.sin(_SCAN)
_NEWTON_STEPS = 4
_REFINED_PEAKS = 2
# The pair search keeps at most this many pairs of models within reach of each other. A 12' x 6' table packed edge
# to edge with 25 mm bases holds about 7,000 models and 160,000 pairs within 2"; hundreds of thousands more are
# models stacked on one another by the thousand, whose N^2/2 pairs (and findings) would not fit in memory, so such a
# state is refused by name. At the cap, `tableref check` of models all on one spot takes about 350 MB.
MAX_CANDIDATE_PAIRS = 500_000
# Pairs of bases standing on one another (the centres closer than the smaller base's circumradius): a game's table
# has a handful (a model on a ruin's floor above another), while models heaped on one spot by the hundred make every
# pair such an overlap, each a finding to build and report (900 on one spot: 404,550 findings, minutes and more than
# a gigabyte). Such a state is refused by name.
MAX_STACKED_PAIRS = 5_000
# The spatial index is asked about a slice of the boxes at a time: its answer, before any filtering, holds up to
# (boxes asked) x (all boxes) pairs, so a slice has about this many possible pairs at most.
_QUERY_PAIRS = 1_000_000


@dataclass(frozen=True)
class BaseArrays:
    """The bases of a state as arrays.

    Attributes:
        center_mm: (N, 2) centres.
        axes_mm: (N, 2) semi-axes (along the base's own x, then y).
        rotation_rad: (N,) turn of each base, counter-clockwise from +x.
        round: (N,) True where both semi-axes are equal.
        sigma_mm: (N,) 1-sigma uncertainty of where the base's edge is: its centre's and half its size's.
        doubt_mm: (N, 2) a further 1-sigma uncertainty of the centre along that line only (``Model.doubt_mm``).
        level_mm: (N,) the height each base stands at (0: the table; a terrain piece's height for a model on its
            top), or None: all on the table.
    """

    center_mm: FloatArray
    axes_mm: FloatArray
    rotation_rad: FloatArray
    round: NDArray[np.bool_]
    sigma_mm: FloatArray
    doubt_mm: FloatArray
    level_mm: FloatArray | None = None

    @staticmethod
    def from_state(state: TableState) -> BaseArrays:
        rows = np.array(
            [
                (m.x_mm, m.y_mm, *m.base.semi_axes_mm, m.base.rotation_deg, m.sigma_mm, m.base.size_sigma_mm)
                for m in state.models
            ],
            dtype=np.float64,
        ).reshape(-1, 7)
        axes = rows[:, 2:4]
        # An edge is uncertain by its centre's sigma and by half its size's sigma.
        sigma = np.hypot(rows[:, 5], rows[:, 6] / 2.0)
        doubt = np.array([m.doubt_mm for m in state.models], dtype=np.float64).reshape(-1, 2)
        heights = {t.id: t.height_mm or 0.0 for t in state.terrain}
        level = np.array([heights.get(m.on_terrain or "", 0.0) for m in state.models], dtype=np.float64)
        rotation = np.deg2rad(rows[:, 4])
        return BaseArrays(rows[:, 0:2], axes, rotation, axes[:, 0] == axes[:, 1], sigma, doubt, level)

    @property
    def sigma_most_mm(self) -> FloatArray:
        """(N,) 1-sigma uncertainty of each edge along the line where it is largest."""
        return np.asarray(np.sqrt(self.sigma_mm**2 + np.sum(self.doubt_mm**2, axis=1)), dtype=np.float64)

    def pair_sigma_mm(self, i: IntArray, j: IntArray) -> FloatArray:
        """1-sigma uncertainty (M,) of the gaps of base pairs (i[k], j[k]) (shapes (M,)): both edges' sigmas, and
        each centre's doubt as far as it runs along the line between the centres (all of it where they coincide)."""
        i = np.asarray(i, dtype=np.intp)
        j = np.asarray(j, dtype=np.intp)
        d = self.center_mm[j] - self.center_mm[i]
        length = np.hypot(d[:, 0], d[:, 1])
        along = np.divide(d, length[:, None], out=np.zeros_like(d), where=length[:, None] > 0)
        doubt_i = np.sum(self.doubt_mm[i] * along, axis=1)
        doubt_j = np.sum(self.doubt_mm[j] * along, axis=1)
        same = length == 0
        doubt_i[same] = np.hypot(*self.doubt_mm[i[same]].T)
        doubt_j[same] = np.hypot(*self.doubt_mm[j[same]].T)
        return np.asarray(
            np.sqrt(self.sigma_mm[i] ** 2 + self.sigma_mm[j] ** 2 + doubt_i**2 + doubt_j**2), dtype=np.float64
        )

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
        """Signed edge-to-edge gaps of base pairs (i[k], j[k]); shapes (M,) -> (M,). Negative: overlap depth.

        Bases at different heights (a model on top of terrain and one below) are flat shapes in parallel planes:
        the gap between them is sqrt(plan gap^2 + height difference^2), the plan gap taken as 0 where they overlap
        in plan, so such bases never overlap and touch only at the same height."""
        i = np.asarray(i, dtype=np.intp)
        j = np.asarray(j, dtype=np.intp)
        d = self.center_mm[j] - self.center_mm[i]
        gap: FloatArray = np.hypot(d[:, 0], d[:, 1]) - self.axes_mm[i, 0] - self.axes_mm[j, 0]
        oval = ~(self.round[i] & self.round[j])
        if oval.any():
            gap[oval] = self._support_gaps(i[oval], j[oval], d[oval])
        if self.level_mm is not None:
            rise = np.abs(self.level_mm[j] - self.level_mm[i])
            apart = rise > 0
            gap[apart] = np.hypot(np.maximum(gap[apart], 0.0), rise[apart])
        return gap

    def _ellipse_terms(self, idx: IntArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """Per base (M, 1): mean (a^2 + b^2)/2, half (a^2 - b^2)/2, cos(2 phi), sin(2 phi), with which
        h^2(theta) = mean + half * cos(2 (theta - phi))."""
        a2 = self.axes_mm[idx, 0] ** 2
        b2 = self.axes_mm[idx, 1] ** 2
        phi2 = 2.0 * self.rotation_rad[idx]
        return ((a2 + b2) / 2.0)[:, None], ((a2 - b2) / 2.0)[:, None], np.cos(phi2)[:, None], np.sin(phi2)[:, None]

    def _support_gaps(self, i: IntArray, j: IntArray, d: FloatArray) -> FloatArray:
        ti = self._ellipse_terms(i)
        tj = self._ellipse_terms(j)
        dx, dy = d[:, 0:1], d[:, 1:2]
        scan_c, scan_s = _SCAN_COS[None, :], _SCAN_SIN[None, :]
        scan = _separation(ti, tj, dx, dy, scan_c, scan_s)[0]
        peaks = np.argpartition(-scan, _REFINED_PEAKS - 1, axis=1)[:, :_REFINED_PEAKS]
        theta = np.asarray(_SCAN[peaks], dtype=np.float64)
        step = 2.0 * np.pi / _SCAN_ANGLES
        lo, hi = theta - step, theta + step
        for _ in range(_NEWTON_STEPS):
            _, f1, f2 = _separation(ti, tj, dx, dy, np.cos(theta), np.sin(theta), derivatives=True)
            # Newton towards the peak; where the curvature is not negative, climb the slope by a bounded step.
            newton = np.where(f2 < 0, -f1 / np.where(f2 < 0, f2, -1.0), np.sign(f1) * step / 4)
            theta = np.asarray(np.clip(theta + newton, lo, hi), dtype=np.float64)
        value = _separation(ti, tj, dx, dy, np.cos(theta), np.sin(theta))[0]
        return np.asarray(value.max(axis=1), dtype=np.float64)

    def polygons(self, idx: IntArray, quad_segs: int = 32) -> NDArray[np.object_]:
        """Shapely polygons of bases ``idx`` ((M,) -> (M,) object array), each with 4 * quad_segs vertices on its
        outline (so the polygon lies just inside the true base)."""
        idx = np.asarray(idx, dtype=np.intp)
        t = np.arange(4 * quad_segs) * (np.pi / (2 * quad_segs))
        a, b = self.axes_mm[idx, 0:1], self.axes_mm[idx, 1:2]
        c, s = np.cos(self.rotation_rad[idx])[:, None], np.sin(self.rotation_rad[idx])[:, None]
        x_local, y_local = a * np.cos(t), b * np.sin(t)
        x = self.center_mm[idx, 0:1] + c * x_local - s * y_local
        y = self.center_mm[idx, 1:2] + s * x_local + c * y_local
        return np.asarray(shapely.polygons(np.stack([x, y], axis=2)), dtype=object).reshape(len(idx))


_Terms = tuple[FloatArray, FloatArray, FloatArray, FloatArray]


def _support(terms: _Terms, cos2: FloatArray, sin2: FloatArray, derivatives: bool) -> tuple[FloatArray, ...]:
    """h (and h', h'' with respect to theta) of ellipses with ``terms`` at angles given by cos 2theta, sin 2theta."""
    mean, half, c2phi, s2phi = terms
    cos2u = cos2 * c2phi + sin2 * s2phi
    h = np.sqrt(mean + half * cos2u)
    if not derivatives:
        return (h,)
    sin2u = sin2 * c2phi - cos2 * s2phi
    dh = -half * sin2u / h
    return h, dh, (-2.0 * half * cos2u - dh**2) / h


def _separation(
    ti: _Terms, tj: _Terms, dx: FloatArray, dy: FloatArray, c: FloatArray, s: FloatArray, derivatives: bool = False
) -> tuple[FloatArray, ...]:
    """The separation n(theta).d - hA - hB at angles with cosine ``c`` and sine ``s`` (M, K), and with
    ``derivatives`` its first and second derivatives; only the angles' cosine and sine are needed."""
    cos2, sin2 = c * c - s * s, 2.0 * c * s
    proj = dx * c + dy * s
    if not derivatives:
        return (proj - _support(ti, cos2, sin2, False)[0] - _support(tj, cos2, sin2, False)[0],)
    hi, dhi, ddhi = _support(ti, cos2, sin2, True)
    hj, dhj, ddhj = _support(tj, cos2, sin2, True)
    return proj - hi - hj, dy * c - dx * s - dhi - dhj, -proj - ddhi - ddhj


def _within_reach(
    bases: BaseArrays, reach_mm: float, r: FloatArray, src: IntArray, dst: IntArray
) -> tuple[IntArray, IntArray]:
    """Of the index's answers (src[k], dst[k]), the pairs i < j whose bases may be within ``reach_mm``."""
    keep = src < dst
    i, j = src[keep].astype(np.intp), dst[keep].astype(np.intp)
    d = bases.center_mm[j] - bases.center_mm[i]
    dist = np.hypot(d[:, 0], d[:, 1])
    close = dist <= reach_mm + r[i] + r[j]
    i, j, d, dist = i[close], j[close], d[close], dist[close]
    # The separation along the line of centres never exceeds the gap: when even it is beyond reach, so is the gap.
    oval = ~(bases.round[i] & bases.round[j])
    if oval.any():
        c = (d[oval, 0] / np.maximum(dist[oval], 1e-12))[:, None]
        s = (d[oval, 1] / np.maximum(dist[oval], 1e-12))[:, None]
        ti, tj = bases._ellipse_terms(i[oval]), bases._ellipse_terms(j[oval])
        along = _separation(ti, tj, d[oval, 0:1], d[oval, 1:2], c, s)[0][:, 0]
        keep = np.ones(len(i), dtype=bool)
        keep[np.flatnonzero(oval)[along > reach_mm]] = False
        i, j = i[keep], j[keep]
    return i, j


def _too_many_pairs(bases: BaseArrays, i: IntArray, pairs: str) -> StateError:
    """The error for a state with too many ``pairs`` (the bound and what they are), naming where they crowd (``i``:
    the first model of each such pair found so far)."""
    crowded = int(np.bincount(i).argmax())
    x, y = bases.center_mm[crowded]
    return StateError(
        f"{len(bases)} models with more than {pairs} (models stacked around ({x:.0f}, {y:.0f}) mm); expected a "
        "table of a game, whose bases stand side by side"
    )


def candidate_pairs(bases: BaseArrays, reach_mm: float) -> tuple[IntArray, IntArray]:
    """Index pairs (i < j) of bases whose gap may be at most ``reach_mm``, from a spatial index over centres.

    Returns two (M,) arrays. Pairs farther apart than ``reach_mm`` edge to edge are guaranteed absent. Raises
    :class:`StateError` when there are more than :data:`MAX_CANDIDATE_PAIRS`, or more than :data:`MAX_STACKED_PAIRS`
    of bases on one another: the memory and time it and the checks after it take stay bounded whatever the layout.
    """
    n = len(bases)
    if n < 2:
        empty = np.empty(0, dtype=np.intp)
        return empty, empty.copy()
    r = bases.circumradius_mm
    # Each base's square envelope grown by half the reach: two envelopes overlap whenever the bases may be within
    # reach of each other, and envelope overlaps are what the index answers fastest.
    half = reach_mm / 2.0 + r
    lo, hi = bases.center_mm - half[:, None], bases.center_mm + half[:, None]
    boxes = shapely.box(lo[:, 0], lo[:, 1], hi[:, 0], hi[:, 1])
    tree = shapely.STRtree(boxes)
    # The index's answer for a slice of boxes holds up to (slice) x (all boxes) pairs before they are filtered.
    step = max(1, _QUERY_PAIRS // n)
    found_i: list[IntArray] = []
    found_j: list[IntArray] = []
    total = 0
    for start in range(0, n, step):
        src, dst = tree.query(boxes[start : start + step])
        i, j = _within_reach(bases, reach_mm, r, src + start, dst)
        found_i.append(i)
        found_j.append(j)
        total += len(i)
        if total > MAX_CANDIDATE_PAIRS:
            within = f"{MAX_CANDIDATE_PAIRS:,} pairs within {reach_mm:.0f} mm of each other"
            raise _too_many_pairs(bases, np.concatenate(found_i), within)
    i, j = np.concatenate(found_i), np.concatenate(found_j)
    d = bases.center_mm[j] - bases.center_mm[i]
    stacked = np.hypot(d[:, 0], d[:, 1]) < np.minimum(r[i], r[j])
    if np.count_nonzero(stacked) > MAX_STACKED_PAIRS:
        raise _too_many_pairs(bases, i[stacked], f"{MAX_STACKED_PAIRS:,} pairs standing on one another")
    return i, j
