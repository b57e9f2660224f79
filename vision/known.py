"""The fits of :func:`vision.detect.fit_known_bases`: bases fitted again at sizes and rim heights a roster declares,
or at the sizes they were read at.
"""

from __future__ import annotations

from dataclasses import fields, replace
from functools import partial

import numpy as np
from numpy.typing import NDArray

from vision.circles import snap_diameters
from vision.detections import BaseDetections
from vision.measure import outline_sigmas, wall_misplaced_mm, wider_doubt
from vision.outline import OutlineFit, cast_shadow_px, fit_outlines
from vision.parallax import RimParallax, middle_of
from vision.rim import (
    ray_directions,
)
from vision.settings import VisionSettings
from vision.units import pooled_heights

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def _start_ring(steps: tuple[float, ...], directions: int) -> FloatArray:
    """(len(steps) * directions, 2) offsets round a start, in units of the distance to look over."""
    angles = np.linspace(0.0, 2.0 * np.pi, directions, endpoint=False)
    unit = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return np.asarray(np.concatenate([step * unit for step in steps]), dtype=np.float64)


def _fits_at(fit: OutlineFit, rows: NDArray[np.intp]) -> OutlineFit:
    """The fits of ``fit`` at ``rows`` (K,)."""
    return OutlineFit(*(getattr(fit, f.name)[rows] for f in fields(fit)))


def _fit_from_starts(
    grey: NDArray[np.uint8],
    scale: float,
    starts: FloatArray,
    radius_px: FloatArray,
    heights: FloatArray,
    group: NDArray[np.intp],
    cast: FloatArray,
    ringed: BoolArray,
    parallax: RimParallax,
    settings: VisionSettings,
) -> tuple[OutlineFit, FloatArray, NDArray[np.intp]]:
    """The fits at known sizes (``radius_px`` (K,)) and rim height ratios (``heights`` (K,), NaN: fitted) from every
    start (``starts`` (S, 2), ``group`` (S,) their bases, in order; ``ringed`` (S,) see :func:`fit_outlines`'s
    ``first_start_only``; ``cast`` its ``cast_px``), every ray used, and of each base's starts the fit whose residuals
    pull least (the model explains the rim there): every start's fit and pull (S,) (inf: no fit), the start kept
    per base (K,)."""
    directions = ray_directions(settings.rim.rays)
    fitted = fit_outlines(
        grey,
        starts,
        radius_px[group],
        np.ones((group.size, len(directions)), np.bool_),
        directions,
        scale,
        parallax,
        settings,
        radius_known=True,
        height_ratio=heights[group],
        cast_px=cast,
        first_start_only=ringed,
    )
    pull = np.where(fitted.ok, fitted.misfit_px, np.inf)
    order = np.lexsort((pull, group))
    return fitted, pull, order[np.r_[True, group[order][1:] != group[order][:-1]]]


def _start_spread_px(
    middle_px: FloatArray, pull: FloatArray, group: NDArray[np.intp], kept: NDArray[np.intp], margin: float
) -> FloatArray:
    """(G,) for each of G bases fitted from several starts, how far (px) the farthest of its fits that pull at most
    ``margin`` more than its kept one lies from that one. ``middle_px`` (S, 2) and ``pull`` (S,) each start's fit
    (inf: no fit), ``group`` (S,) its base, ``kept`` (G,) the start kept for each base."""
    kept_of = kept[group]
    with np.errstate(invalid="ignore"):
        good = np.isfinite(pull) & (pull <= pull[kept_of] * (1.0 + margin))
    dist = np.where(good, np.hypot(*(middle_px - middle_px[kept_of]).T), 0.0)
    spread = np.zeros(len(kept))
    np.maximum.at(spread, group, dist)
    return spread


def fit_at_sizes(
    grey: NDArray[np.uint8],
    scale: float,
    settings: VisionSettings,
    detections: BaseDetections,
    rows: NDArray[np.intp],
    known: FloatArray,
    heights: FloatArray,
    declared: BoolArray,
    parallax: RimParallax,
    top_lab: FloatArray | None = None,
) -> BaseDetections:
    """``detections`` with the ``rows`` fitted again at the sizes ``known`` (N,) and, where finite, the rim height
    ratios ``heights`` (N,), the fit starting from ``outline.starts``; ``declared`` (N,): which
    sizes a roster declared (they lose their size doubt). With the tops' colours ``top_lab`` (N, 3), each base is
    then fitted again at its unit's pooled rim height (:func:`pooled_heights`). See :func:`fit_known_bases`."""
    directions = ray_directions(settings.rim.rays)
    radius_px = known[rows] / 2.0 * scale
    read_mm, starts, group, ringed = _starts(detections, rows, known, declared, scale, settings)
    # the edge fit's choice of rays is not carried over: rays the model does not explain (a figure's cloak, a
    # neighbour) go before the first step too
    known_settings = settings.replaced({"outline.reject_at": (0, *settings.outline.reject_at)})
    cast = cast_shadow_px(
        grey,
        detections.center_px[rows],
        radius_px,
        directions,
        scale,
        parallax,
        known_settings,
        radius_known=True,
        height_ratio=heights[rows],
    )
    from_starts = partial(
        _fit_from_starts, grey, scale, starts, radius_px, heights[rows], group, cast, ringed, parallax
    )
    fitted, pull, first = from_starts(known_settings)
    look = _fits_at(fitted, first)
    if not look.ok.any():
        return detections
    if top_lab is not None:
        # a height known stays as it is
        held = np.isfinite(heights[rows])
        look = _fit_at_pooled_heights(
            grey, scale, known_settings, look, radius_px, known[rows], top_lab[rows], held, parallax, cast
        )
    spread_px = _start_spread_px(
        middle_of(fitted.center_px, parallax), pull, group, first, settings.known.misread_margin
    )
    bevel_px = np.zeros((len(rows), 2))
    if settings.known.bevel_check_mm > 0:
        bevelled, _pull, kept = from_starts(
            known_settings.replaced({"outline.bevel_mm": settings.known.bevel_check_mm})
        )
        bevel_px = _apart_where_alike(look, _fits_at(bevelled, kept), settings.known.misread_margin, parallax)
    return _fitted_rows(
        detections,
        rows,
        look,
        radius_px,
        known,
        heights,
        declared,
        read_mm,
        spread_px,
        bevel_px,
        scale,
        parallax,
        settings,
    )


def _apart_where_alike(look: OutlineFit, other: OutlineFit, margin: float, parallax: RimParallax) -> FloatArray:
    """(K, 2) px from each of K fits ``look`` (outline middles) to another reading of the same base ``other``, where
    both fitted and the other's misfit is at most ``margin`` (a share) larger; zeros elsewhere."""
    with np.errstate(invalid="ignore"):
        alike = other.ok & look.ok & (other.misfit_px <= look.misfit_px * (1.0 + margin))
    offset = middle_of(other.center_px, parallax) - middle_of(look.center_px, parallax)
    return np.asarray(np.where(alike[:, None], offset, 0.0), dtype=np.float64)


def _starts(
    detections: BaseDetections,
    rows: NDArray[np.intp],
    known: FloatArray,
    declared: BoolArray,
    scale: float,
    settings: VisionSettings,
) -> tuple[FloatArray, FloatArray, NDArray[np.intp], BoolArray]:
    """Where the fit at the known sizes starts for each of the ``rows``: the sizes read (R,), the starts (S, 2) in
    pixels, the row each start belongs to (S,) as an index into ``rows``, and which starts fit from the first start
    only (S,): where the base was detected, then a ring round it where its size was read wrong."""
    radius_px = known[rows] / 2.0 * scale
    read_mm, _fits = snap_diameters(2.0 * detections.radius_px[rows] / scale, settings.base_sizes_mm, np.inf)
    # a size read wrong was a reading of part of the rim (or of more than the rim): the base lies up to the
    # difference of the radii away, in a direction the reading does not tell, so the fit starts round it too
    offset_px = np.abs(detections.radius_px[rows] - radius_px)
    ring = _start_ring(settings.known.misread_start_steps, settings.known.misread_start_directions)
    misread = read_mm != known[rows]
    # each base's starts in a row: where it was detected, then the ring round it where its size was read wrong
    counts = 1 + misread * len(ring)
    group = np.repeat(np.arange(rows.size), counts)
    starts = detections.center_px[rows][group].copy()
    firsts = np.cumsum(counts) - counts
    # the ring spreads a base's starts round where it was read: those need no further starts along the nadir line. A
    # roster's declared bases keep them (fitted from one start, medians 0.0004-0.002 mm higher on five of seven 4K sets)
    ringed = ~declared[rows][group]
    ringed[firsts] = False
    for k, first_start in zip(np.flatnonzero(misread), firsts[misread], strict=True):
        starts[first_start + 1 : first_start + counts[k]] += offset_px[k] * ring
    return read_mm, starts, group, ringed


def _fitted_rows(
    detections: BaseDetections,
    rows: NDArray[np.intp],
    look: OutlineFit,
    radius_px: FloatArray,
    known: FloatArray,
    heights: FloatArray,
    declared: BoolArray,
    read_mm: FloatArray,
    spread_px: FloatArray,
    bevel_px: FloatArray,
    scale: float,
    parallax: RimParallax,
    settings: VisionSettings,
) -> BaseDetections:
    """``detections`` with the ``rows`` the fit ``look`` (one per row) placed at their known sizes: centres, sizes,
    sigmas and doubts (see :func:`fit_at_sizes`); ``bevel_px`` (one per row, (x, y)) from each fit to its bevelled
    reading where that is about as good (:func:`_apart_where_alike`; zeros where none)."""
    center = detections.center_px.copy()
    radius, size = detections.radius_px.copy(), detections.diameter_mm.copy()
    diameter_sigma, model_sigma = detections.diameter_sigma_mm.copy(), detections.model_sigma_mm.copy()
    doubt = detections.model_doubt_mm.copy()
    height_share = detections.rim_height_share.copy()
    fitted_px = middle_of(look.center_px[look.ok], parallax)
    edges_apart_mm = np.hypot(*(fitted_px - detections.center_px[rows[look.ok]]).T) / scale
    # a fit this far from its edges' reading that its model explains poorly has mostly followed a look the model
    # lacks (a bevel, a clear wall, flock over the rim): the edges' reading stands, at the known size, its sigma
    # widened by the disagreement. Where the model explains the pixels well, the fit is the better of the two.
    astray = (edges_apart_mm > settings.known.edge_limit_mm) & (
        look.misfit_px[look.ok] / scale > settings.known.astray_misfit_mm
    )
    if np.any(astray):
        kept = rows[look.ok][astray]
        size[kept], radius[kept] = known[kept], 0.5 * known[kept] * scale
        diameter_sigma[kept[declared[kept]]] = 0.0
        model_sigma[kept] = np.hypot(model_sigma[kept], settings.known.edge_share * edges_apart_mm[astray])
        ok = look.ok.copy()
        ok[np.flatnonzero(look.ok)[astray]] = False
        look, fitted_px, edges_apart_mm = replace(look, ok=ok), fitted_px[~astray], edges_apart_mm[~astray]
    done = rows[look.ok]
    center[done] = fitted_px
    radius[done], size[done] = radius_px[look.ok], known[done]
    # with the rim's height held as well only the centre and the blur were free: a misfit of their own
    misfit_scale = np.where(np.isfinite(heights[done]), settings.known.misfit_scale, settings.outline.misfit_scale)
    _size_sigma, model_sigma[done], doubt[done] = outline_sigmas(look, scale, settings, misfit_scale)
    # a size read wrong leaves a doubt: the fit from round the reading may still have kept a wrong one. Where the
    # fits from its starts that end about as well lie apart, the doubt is as for another start's (other_start_share
    # of the distance); where they agree, misread_share of the radii's difference stays. The size read is the fitted
    # one's: a vote of the neighbours may have put it right without moving the centre
    misread_mm = np.maximum(
        settings.outline.other_start_share * spread_px[look.ok] / scale,
        settings.known.misread_share * np.abs(read_mm[look.ok] - known[done]) / 2.0,
    )
    # the edges' reading disagreeing with this one is the same doubt seen from the other side: the larger counts
    model_sigma[done] = np.hypot(model_sigma[done], np.maximum(misread_mm, settings.known.edge_share * edges_apart_mm))
    doubt[done] = wider_doubt(doubt[done], wall_misplaced_mm(look, center[done], scale, parallax, settings))
    # a bevelled top read about as well puts the footprint elsewhere along that line: a second reading's doubt
    bevel_doubt = settings.outline.other_start_share * bevel_px[look.ok] / scale
    doubt[done] = wider_doubt(doubt[done], bevel_doubt)
    # a size read rather than declared keeps its doubt
    diameter_sigma[done[declared[done]]] = 0.0
    height_share[done] = 0.0
    return replace(
        detections,
        center_px=center,
        radius_px=radius,
        diameter_mm=size,
        diameter_sigma_mm=diameter_sigma,
        model_sigma_mm=model_sigma,
        rim_height_share=height_share,
        model_doubt_mm=doubt,
    )


def _fit_at_pooled_heights(
    grey: NDArray[np.uint8],
    scale: float,
    settings: VisionSettings,
    look: OutlineFit,
    radius_px: FloatArray,
    size_mm: FloatArray,
    top_lab: FloatArray,
    held: BoolArray,
    parallax: RimParallax,
    cast_px: FloatArray,
) -> OutlineFit:
    """``look`` (K fits at the known radii ``radius_px`` (K,), of sizes ``size_mm`` (K,)) with each base whose rim
    height was fitted (not ``held`` (K,)) fitted again, from ``height_pool_starts``, at its unit's pooled rim height
    (see :func:`pooled_heights`; the tops' colours ``top_lab`` (K, 3)) where it has one and that fit succeeds. The
    cast shadow ``cast_px`` (2,) is as for :func:`vision.outline.fit_outlines`."""
    fitted = np.where(look.ok & ~held, look.height_ratio, np.nan)
    pooled = pooled_heights(look.center_px, size_mm, top_lab, fitted, scale, settings)
    again_rows = np.flatnonzero(np.isfinite(pooled) & look.ok & ~held)
    if again_rows.size == 0:
        return look
    every = np.arange(again_rows.size)
    again, _pull, _kept = _fit_from_starts(
        grey,
        scale,
        middle_of(look.center_px[again_rows], parallax),
        radius_px[again_rows],
        pooled[again_rows],
        every,
        cast_px,
        np.zeros(again_rows.size, np.bool_),
        parallax,
        settings.replaced({"outline.starts": settings.known.height_pool_starts}),
    )
    return look.at(again_rows[again.ok], _fits_at(again, np.flatnonzero(again.ok)))
