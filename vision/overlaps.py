"""Step 5 of :mod:`vision.detect`, duplicates and impossible pairs.

Duplicates and impossible pairs: a circle concentric with a larger accepted one is the same base's top and is
dropped; of two circles overlapping by more than ``overlaps.max_mm`` (bases cannot interpenetrate; where figures
blur ``overlaps.coarse_max_mm``, since a size read a step too large overlaps a neighbour in contact) the lower
score is dropped. A larger circle takes the place of smaller ones inside it only where it is their footprint
(fitted at most ``nest_top_mm`` larger in radius) or scores at least ``nest_score_share`` of theirs: a faint
circle round several bases in contact does not. Second readings are resolved after the first ones: they stand
where none of those lies, or take the place of first readings they hold inside them where they may (as above)
and score better (a figure's outline read first, off the middle of a large base, its footprint second).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from vision.candidates import Candidates
from vision.circles import centre_distances, firsts_first, keep_best, max_overlap_mm
from vision.settings import VisionSettings

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def resolve_overlaps(
    center: FloatArray,
    radius: FloatArray,
    nominal_mm: FloatArray,
    score: FloatArray,
    px_per_mm: float,
    settings: VisionSettings,
    later: BoolArray | None = None,
) -> NDArray[np.intp]:
    """Indices kept after dropping nested circles and impossible overlaps, best score first: a circle that
    overlaps kept ones by more than ``overlaps.max_mm`` (``overlaps.coarse_max_mm`` under
    ``outline.min_px_per_mm``) is dropped, unless all of those are smaller circles inside it
    (its top, its figure's outline; two bases cannot nest) that it may take the place of: then it is the footprint
    and replaces them. It may where its fitted radius (``radius`` (K,) px) is at most ``nest_top_mm`` larger (a top
    inside its footprint), or where it scores at least ``nest_score_share`` of theirs: a faint circle round several
    bases in contact takes none of their places. ``later`` (K,): readings that come after all the others whatever
    their score (a second look's, a second ring's), so they stand only where they clash with none of the others or
    take the place of those they hold."""
    if len(radius) == 0:
        return np.zeros(0, np.intp)
    max_mm = max_overlap_mm(px_per_mm, settings)
    nominal_px = nominal_mm / 2 * px_per_mm
    dist = centre_distances(center)
    # inside[i, j]: circle j is smaller than circle i and lies within it (up to the overlap allowed between bases)
    inside = (nominal_px[None, :] < nominal_px[:, None]) & (
        dist + nominal_px[None, :] <= nominal_px[:, None] + max_mm * px_per_mm
    )
    top = radius[:, None] - radius[None, :] <= settings.overlaps.nest_top_mm * px_per_mm
    strong = score[:, None] >= settings.overlaps.nest_score_share * score[None, :]
    overlap_mm = (nominal_px[:, None] + nominal_px[None, :] - dist) / px_per_mm
    np.fill_diagonal(overlap_mm, -np.inf)
    absorbs = inside & (top | strong)
    rank = score
    if later is not None:
        rank = firsts_first(score, later)
        # a later reading about as large as an earlier one is mostly the same rim read again, a little wider: it
        # takes the earlier one's place only where it scores better
        absorbs &= ~(later[:, None] & ~later[None, :]) | (score[:, None] > score[None, :])
    return keep_best(rank, overlap_mm > max_mm, absorbs)


def narrowly_lost(
    center_px: FloatArray,
    size_mm: FloatArray,
    rows: NDArray[np.intp],
    kept: NDArray[np.intp],
    px_per_mm: float,
    settings: VisionSettings,
) -> NDArray[np.intp]:
    """Of the readings ``rows`` (circles ``center_px`` (K, 2) at the sizes ``size_mm`` (K,)), those not among ``kept``
    that overlap a kept one by more than bases may (see :func:`resolve_overlaps`), but each by at most
    ``kin.lost_overlap_mm`` more, and lie inside none of them nor hold one inside."""
    lost = rows[~np.isin(rows, kept)]
    if settings.kin.lost_overlap_mm <= 0 or lost.size == 0 or kept.size == 0:
        return np.zeros(0, np.intp)
    max_mm = max_overlap_mm(px_per_mm, settings)
    dist_mm = centre_distances(center_px[lost], center_px[kept]) / px_per_mm
    radii = size_mm[lost][:, None] / 2, size_mm[kept][None, :] / 2
    overlap_mm = radii[0] + radii[1] - dist_mm
    nested = dist_mm + np.minimum(*radii) <= np.maximum(*radii) + max_mm
    clash = overlap_mm > max_mm
    narrow = clash.any(axis=1) & ~(clash & (nested | (overlap_mm > max_mm + settings.kin.lost_overlap_mm))).any(axis=1)
    return lost[narrow]


def resolve(found: Candidates, scale: float, settings: VisionSettings) -> Candidates:
    """The accepted rows of ``found`` that stand, in order: the first readings best score first, the second readings,
    the kin-only readings (among themselves only; with them the first readings that lost only narrowly)."""
    center, radius, size, score, second = found.center_px, found.radius_px, found.size_mm, found.score, found.second
    kin_only = found.kin_only.copy()
    idx = np.flatnonzero(found.accept)

    # second readings only where no first reading lies, or where they hold the first readings there inside them and
    # may take their place (a figure's outline read first, the footprint second)
    def resolved(rows: NDArray[np.intp]) -> NDArray[np.intp]:
        at = (center[rows], radius[rows], size[rows], score[rows])
        return rows[resolve_overlaps(*at, scale, settings, second[rows])]

    first_rows = idx[~second[idx] & ~kin_only[idx]]
    firsts = resolved(first_rows)
    # a reading that lost only by overlapping a base a little too much may have lost to a neighbour read a size too
    # large: it waits for its unit's vote, as a kin-only reading
    kin_only[narrowly_lost(center, size, first_rows, firsts, scale, settings)] = True
    kept = resolved(np.concatenate([firsts, idx[second[idx]]]))
    firsts, seconds = kept[~second[kept]], kept[second[kept]]
    # kin-only readings among themselves only: whether they stand beside the bases is decided with both looks'
    kin_rows = resolved(idx[kin_only[idx]])
    kept = np.concatenate([firsts[np.argsort(-score[firsts], kind="stable")], seconds, kin_rows])
    return replace(found, kin_only=kin_only).take(kept)
