"""Where a base stands and how big it is, from the pixels around its outline: the appearance model of
:mod:`vision.outline_model` fitted to each base, its footprint centre, radius, blur and rim height by
Levenberg-Marquardt (each sector's grey levels solved linearly at every step), from one or more starts, and the
sigmas its misfit gives.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields, replace

import numpy as np
from numpy.typing import NDArray

from vision.outline_model import (
    HEIGHT,
    PARAMS,
    RADIUS,
    WORK,
    Projector,
    Samples,
    WorkArray,
    away_from_nadir,
    model_terms,
    residuals,
    sum_squares,
)
from vision.parallax import RimParallax
from vision.settings import VisionSettings

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

# Levenberg-Marquardt damping: start, and its factors after a step that helped or did not. The start is within a
# millimetre or so, where the model is nearly linear: start small.
_LAMBDA_START = 1e-4
_LAMBDA_DOWN = 0.1
_LAMBDA_UP = 10.0
# A base's fit has converged when its step (taken or not: a step that did not help is retried with more damping)
# moves no parameter by more than this (px): a hundredth of a pixel is far below what the fit can tell.
_CONVERGED_PX = 0.01
# Blur (px) the fit starts from, and its bounds: beyond them the model is not what is seen.
_SIGMA_START_PX = 0.8
_SIGMA_RANGE_PX = (0.3, 3.0)
# The footprint may move at most this far (mm) from where the edge fit put it: farther is another structure.
_MAX_SHIFT_MM = 3.0
# A sector needs this many usable rays for its levels to mean anything; a fit needs this share of its rays.
_MIN_SECTOR_RAYS = 2
_MIN_RAY_SHARE = 0.4


@dataclass(frozen=True)
class OutlineFit:
    """Fitted footprints: ``center_px`` (K, 2) footprint centre, ``radius_px`` (K,) footprint radius,
    ``sigma_px`` (K,) blur, ``height_ratio`` (K,) the rim's height over the one assumed, ``rms_grey`` (K,) RMS
    residual over the rays kept, ``rays_kept`` (K,) their share, ``misfit_px`` (K,) and ``radius_misfit_px`` (K,)
    how far the centre (per axis) and the radius may be off by what the model does not explain (1-sigma, px; see
    :func:`_misfit_sigma`), ``other_start_px`` (K, 2) where the farthest fit from another start that is about as
    good lies, from this one (0, 0: none), ``near_wall`` (K,) where the wall's grey level lies from the top's (0)
    towards the mat's (1) on the side towards the nadir, where the wall shows, and ``near_contrast`` (K,) the mat's
    level less the top's there (NaN where no sector there kept enough rays; see :func:`_near_wall`), ``ok`` (K,)
    whether the fit is usable."""

    center_px: FloatArray
    radius_px: FloatArray
    sigma_px: FloatArray
    height_ratio: FloatArray
    rms_grey: FloatArray
    rays_kept: FloatArray
    misfit_px: FloatArray
    radius_misfit_px: FloatArray
    other_start_px: FloatArray
    near_wall: FloatArray
    near_contrast: FloatArray
    ok: BoolArray

    @classmethod
    def none(cls, k: int) -> OutlineFit:
        """No fit for ``k`` bases (every ``ok`` False)."""
        z, nan = np.zeros(k), np.full(k, np.nan)
        return cls(np.zeros((k, 2)), z, z, z, z, z, z, z, np.zeros((k, 2)), nan, nan, np.zeros(k, np.bool_))

    def at(self, rows: NDArray[np.intp], part: OutlineFit) -> OutlineFit:
        """These fits with ``part``'s (one per row of ``rows``) in place of theirs at ``rows``."""
        merged = []
        for f in fields(self):
            values = getattr(self, f.name).copy()
            values[rows] = getattr(part, f.name)
            merged.append(values)
        return OutlineFit(*merged)

    def where(self, take: BoolArray, other: OutlineFit) -> OutlineFit:
        """These fits, with ``other``'s for the bases where ``take`` (K,) is true."""
        return OutlineFit(
            *(
                np.where(
                    take.reshape(-1, *[1] * (getattr(self, f.name).ndim - 1)),
                    getattr(other, f.name),
                    getattr(self, f.name),
                )
                for f in fields(self)
            )
        )


def fit_outlines(
    grey: NDArray[np.uint8],
    middle_px: FloatArray,
    radius_px: FloatArray,
    inlier: BoolArray,
    directions: FloatArray,
    px_per_mm: float,
    parallax: RimParallax | None,
    settings: VisionSettings,
    *,
    radius_known: bool = False,
    height_ratio: FloatArray | None = None,
    cast_px: FloatArray | None = None,
    first_start_only: BoolArray | None = None,
) -> OutlineFit:
    """Fit the appearance model (module docstring) to each base found by the edge fit: ``middle_px`` (K, 2) its
    outline's centre (the stadium's middle, as :func:`vision.detect.detect_bases` reports it), ``radius_px`` (K,)
    its radius, ``inlier`` (K, n) the rays (``directions`` (n, 2)) whose edges it kept. Returns footprint centres
    (K, 2) and radii (K,) in the same pixels (``grey`` (H, W) uint8, ``px_per_mm`` of it).

    Where the base is known (a roster says what each model stands on), the fit holds what it is told instead of
    fitting it: with ``radius_known`` the footprint radius is ``radius_px``; ``height_ratio`` (K,) is each rim's
    height over the one assumed (``parallax``'s), NaN where it is not known (fitted as usual).

    ``cast_px`` (2,) (from :func:`cast_shadow_px`; None: no cast shadow) sweeps each contact shadow that far, times
    the rim's height ratio, away from the main light.

    The fit starts from each of ``outline.starts`` (the edges' middle moved that many half parallax shifts
    towards the nadir; the starts are fitted side by side and compared in order) and keeps, per base, the first
    usable fit unless a later one's RMS residual is below ``outline.start_margin`` times it: a wall of the top's
    colour over a dark shadow lets the top disc pass for the footprint, a local fit that a start nearer the truth
    escapes; among fits about as good, the first stays (choosing among them by a hair only adds noise). The bases
    where ``first_start_only`` (K,) is true are fitted from the first start only (a caller that spreads each base's
    starts round it already)."""
    k = len(radius_px)
    best = OutlineFit.none(k)
    if parallax is None:
        starts: tuple[float, ...] = (0.0,)
        half, unit = np.zeros(k), np.zeros((k, 2))
    else:
        starts = settings.outline.starts
        half, unit = parallax.half_shift(middle_px)
    heights, held = _held(len(radius_px), radius_known, height_ratio)
    cast = np.zeros(2) if cast_px is None else np.asarray(cast_px, dtype=np.float64).reshape(2)
    inputs = _Inputs(grey, radius_px, inlier, directions, px_per_mm, parallax, settings, heights, held, cast)
    fits = []
    later = np.arange(k) if first_start_only is None else np.flatnonzero(~np.asarray(first_start_only, np.bool_))
    jobs = [(starts[0], np.arange(k))] + [(st, later) for st in starts[1:] if later.size]

    def fit_from(start: float, rows: NDArray[np.intp]) -> OutlineFit:
        shifted = middle_px[rows] - start * half[rows, None] * unit[rows]
        part = _fit_from(shifted, inputs if rows.size == k else inputs.take(rows))
        return part if rows.size == k else OutlineFit.none(k).at(rows, part)

    # the starts are independent fits: run side by side, they share the cores (numpy's array loops release the GIL)
    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        all_fits = list(pool.map(lambda job: fit_from(*job), jobs))
    for fit in all_fits:
        better = fit.rms_grey < settings.outline.start_margin * best.rms_grey
        best = best.where(fit.ok & (~best.ok | better), fit)
        fits.append(fit)
    # the fits about as good as the one kept (within the margin, which could not choose between them)
    other = np.zeros((len(radius_px), 2))
    for fit in fits:
        alike = fit.ok & best.ok & (settings.outline.start_margin * fit.rms_grey <= best.rms_grey)
        offset = fit.center_px - best.center_px
        farther = alike & (np.hypot(*offset.T) > np.hypot(*other.T))
        other = np.where(farther[:, None], offset, other)
    return replace(best, other_start_px=other)


@dataclass(frozen=True)
class _Inputs:
    """What every start's fit shares (see :func:`fit_outlines` for each)."""

    grey: NDArray[np.uint8]
    radius_px: FloatArray
    inlier: BoolArray
    directions: FloatArray
    px_per_mm: float
    parallax: RimParallax | None
    settings: VisionSettings
    # (K,) the rims' heights over the one assumed: where the fit starts, and the centre of its prior
    height_ratio: FloatArray
    # (K, 5) the parameters held at their start instead of fitted
    held: BoolArray
    # (2,) where the footprint's cast shadow reaches on the table, from the footprint (px), for a rim of the height
    # assumed: a rim's own height scales it
    cast_px: FloatArray

    def take(self, rows: NDArray[np.intp]) -> _Inputs:
        """The inputs of the bases ``rows`` only."""
        return replace(
            self,
            radius_px=self.radius_px[rows],
            inlier=self.inlier[rows],
            height_ratio=self.height_ratio[rows],
            held=self.held[rows],
        )


def _held(k: int, radius_known: bool, height_ratio: FloatArray | None) -> tuple[FloatArray, BoolArray]:
    """For K bases: the rims' height ratios to start from (K,) (1 where not known), and which parameters (K, 5)
    are held rather than fitted (the radius where known, the height where ``height_ratio`` (K,) is not NaN)."""
    held = np.zeros((k, PARAMS), np.bool_)
    held[:, RADIUS] = radius_known
    heights = np.full(k, np.nan) if height_ratio is None else np.asarray(height_ratio, dtype=np.float64).reshape(k)
    held[:, HEIGHT] = np.isfinite(heights)
    return np.where(held[:, HEIGHT], heights, 1.0), held


def _footing(middle_px: FloatArray, parallax: RimParallax | None) -> tuple[FloatArray, FloatArray, float]:
    """For outline middles (K, 2): the footprint centres (K, 2), the top disc's shift from them (K, 2) and its
    scale."""
    away = away_from_nadir(parallax, middle_px)
    ratio = parallax.shift_ratio if parallax is not None else 0.0
    half = parallax.half_shift(middle_px)[0] if parallax is not None else np.zeros(len(middle_px))
    # The top disc's centre lies the whole shift from the footprint's, the middle half of it; it looks larger by
    # the ratio too (nearer the camera).
    return middle_px - half[:, None] * away, 2.0 * half[:, None] * away, 1.0 + ratio


def _fit_from(middle_px: FloatArray, inputs: _Inputs) -> OutlineFit:
    """One fit of every base from the outline middles ``middle_px`` (K, 2) (see :func:`fit_outlines`)."""
    grey, radius_px, inlier, directions = inputs.grey, inputs.radius_px, inputs.inlier, inputs.directions
    px_per_mm, parallax, settings = inputs.px_per_mm, inputs.parallax, inputs.settings
    k = len(radius_px)
    if k == 0:
        return OutlineFit.none(0)
    samples = Samples(grey, middle_px, radius_px, directions, px_per_mm, parallax, settings)
    foot, top_shift, top_scale = _footing(middle_px, parallax)
    shadow_px = settings.outline.contact_shadow_mm * px_per_mm
    ray_ok = samples.by_ray(inlier)
    heights = inputs.height_ratio
    params, lower, upper, free = _start_and_bounds(foot, radius_px, heights, inputs.held, px_per_mm, settings)
    extra = (top_shift, top_scale, shadow_px, settings.outline.bevel_mm * px_per_mm, inputs.cast_px)

    def on_rays(ray_ok: BoolArray) -> tuple[WorkArray, WorkArray, WorkArray, FloatArray, FloatArray]:
        """The samples' weights on the rays ``ray_ok``, the residuals, Jacobian and cost there, and the height's
        prior as a residual in the data's own units (its noise over the prior's spread, squared)."""
        weight = np.repeat(ray_ok[..., None], samples.per_ray, axis=-1).reshape(k, -1).astype(WORK)
        res, jac = residuals(params, samples, weight, *extra, jacobian=True)
        assert jac is not None
        if free is not None:
            jac *= free
        cost = sum_squares(res)
        noise2 = cost / np.maximum(weight.sum(axis=1), 1.0)
        return weight, res, jac, cost, np.asarray(noise2 / settings.outline.height_sigma**2, dtype=np.float64)

    weight, res, jac, cost, prior = on_rays(ray_ok)
    lam = np.full(k, _LAMBDA_START)
    reject_at = set(settings.outline.reject_at)
    # bases leave the loop as they converge, and all come back when rays are rejected: most converge in a few
    # steps, a few take all of them
    active = np.ones(k, np.bool_)
    for it in range(settings.outline.iterations):
        if it in reject_at:
            per_ray = np.sqrt((res.reshape(k, samples.rays, -1) ** 2).mean(axis=-1))
            median = _kept_median(per_ray, ray_ok)
            ray_ok &= per_ray <= settings.outline.ray_reject * median[:, None]
            weight, res, jac, cost, prior = on_rays(ray_ok)
            active[:] = True
        rows = np.flatnonzero(active)
        if rows.size == 0:
            break
        # while every base is still fitted (most steps), the arrays themselves rather than copies of all their rows
        every = rows.size == k
        jac_a, res_a = (jac, res) if every else (jac[rows], res[rows])
        off = params[rows, HEIGHT] - heights[rows]
        delta = _damped_step(jac_a, res_a, prior[rows], off, lam[rows])
        trial = np.clip(params[rows] + delta, lower[rows], upper[rows])
        extra_a = (top_shift[rows], top_scale, shadow_px, extra[3], extra[4])
        trial_res, trial_jac = residuals(
            trial, samples if every else samples.take(rows), weight if every else weight[rows], *extra_a, jacobian=True
        )
        assert trial_jac is not None
        if free is not None:
            trial_jac *= free[rows]
        trial_cost = sum_squares(trial_res)
        trial_prior = prior[rows] * (trial[:, HEIGHT] - heights[rows]) ** 2
        better = trial_cost + trial_prior < cost[rows] + prior[rows] * off**2
        moved = np.abs(trial - params[rows]).max(axis=1)
        took = rows[better]
        if took.size == k:
            params, res, jac, cost = trial, trial_res, trial_jac, trial_cost
        else:
            params[took], res[took], jac[took], cost[took] = (
                trial[better],
                trial_res[better],
                trial_jac[better],
                trial_cost[better],
            )
        lam[rows] = np.where(better, lam[rows] * _LAMBDA_DOWN, lam[rows] * _LAMBDA_UP)
        # converged: the step moved nothing by more than _CONVERGED_PX
        if it not in reject_at:
            active[rows[moved < _CONVERGED_PX]] = False
    assert jac is not None
    return _outline_fit(params, res, jac, cost, weight, ray_ok, prior, samples, extra, settings)


def _damped_step(
    jac: WorkArray, res: WorkArray, prior: FloatArray, height_off: FloatArray, lam: FloatArray
) -> FloatArray:
    """(K, 5) each base's Levenberg-Marquardt step from its Jacobian ``jac`` (K, N, 5) and residuals ``res`` (K, N),
    with the rim height's prior (weight ``prior`` (K,), the height ``height_off`` (K,) from where it leans) and the
    damping ``lam`` (K,) scaled by the normal matrix's diagonal."""
    jac_t = jac.transpose(0, 2, 1)
    jtj = (jac_t @ jac).astype(np.float64)
    jtr = (jac_t @ res[..., None])[..., 0].astype(np.float64)
    jtj[:, HEIGHT, HEIGHT] += prior
    jtr[:, HEIGHT] += prior * height_off
    scale = np.maximum(np.diagonal(jtj, axis1=1, axis2=2), 1e-9)
    damped = jtj + lam[:, None, None] * (np.eye(PARAMS) * scale[:, None, :])
    return np.asarray(-np.linalg.solve(damped, jtr[..., None])[..., 0], dtype=np.float64)


def _start_and_bounds(
    foot: FloatArray,
    radius_px: FloatArray,
    heights: FloatArray,
    held: BoolArray,
    px_per_mm: float,
    settings: VisionSettings,
) -> tuple[FloatArray, FloatArray, FloatArray, WorkArray | None]:
    """The fit's start (K, 4) (foot (x, y), radius, blur, height ratio), its lower and upper bounds, and the mask of
    the free parameters (K, 1, 4) where any is ``held`` (K, 4) (None: all free)."""
    k = len(radius_px)
    low_h, high_h = settings.outline.height_ratio
    params = np.column_stack([foot, radius_px, np.full(k, _SIGMA_START_PX), heights])
    reach = _MAX_SHIFT_MM * px_per_mm
    lower = np.column_stack(
        [foot - reach, radius_px - reach, np.full(k, _SIGMA_RANGE_PX[0]), np.minimum(low_h, heights)]
    )
    upper = np.column_stack(
        [foot + reach, radius_px + reach, np.full(k, _SIGMA_RANGE_PX[1]), np.maximum(high_h, heights)]
    )
    lower, upper = np.where(held, params, lower), np.where(held, params, upper)
    # a held parameter's column is zero: the steps and the misfit then see only the free ones (with none held,
    # multiplying by ones would change nothing)
    free = (~held).astype(WORK)[:, None, :] if held.any() else None
    return params, lower, upper, free


def _outline_fit(
    params: FloatArray,
    res: WorkArray,
    jac: WorkArray,
    cost: FloatArray,
    weight: WorkArray,
    ray_ok: BoolArray,
    prior: FloatArray,
    samples: Samples,
    extra: tuple[FloatArray, float, float, float, FloatArray],
    settings: VisionSettings,
) -> OutlineFit:
    """The converged fit's result: misfit, rays and sectors used, the wall's levels beside the nadir, and whether it
    is usable."""
    k = len(params)
    used = weight.sum(axis=1)
    rms = np.sqrt(cost / np.maximum(used, 1.0))
    share = ray_ok.sum(axis=1) / max(samples.rays, 1)
    sectors_seen = ray_ok.reshape(k, samples.sectors, -1).sum(axis=2)
    enough = (sectors_seen >= _MIN_SECTOR_RAYS).sum(axis=1) >= settings.outline.sectors // 2
    ok = np.all(np.isfinite(params), axis=1) & (share >= _MIN_RAY_SHARE) & enough
    centre_misfit, radius_misfit = _misfit_sigma(res, jac, samples.rays // settings.outline.misfit_rays, prior)
    ok &= np.isfinite(centre_misfit) & np.isfinite(radius_misfit)
    terms = model_terms(params, samples, *extra)
    levels = Projector(terms.basis(weight), samples).solve(samples.grey * weight)
    near_wall, near_contrast = _near_wall(levels, sectors_seen >= _MIN_SECTOR_RAYS)
    return OutlineFit(
        params[:, :2],
        params[:, 2],
        params[:, 3],
        params[:, HEIGHT],
        rms,
        share,
        centre_misfit,
        radius_misfit,
        np.zeros((k, 2)),
        near_wall,
        near_contrast,
        ok,
    )


def _near_wall(levels: FloatArray, seen: BoolArray) -> tuple[FloatArray, FloatArray]:
    """On the side towards the nadir, where the wall shows widest (the sectors within 60 degrees of that direction
    that kept enough rays): where the wall's level lies from the top's (0) to the mat's (1), and the mat's level less
    the top's (grey levels), the medians over those sectors; from each sector's fitted levels (K, sectors, 4) and
    whether it kept enough rays (K, sectors). Both (K,), NaN where none did. The wall faces sideways and is shaded: a
    light base's wall lies well towards the mat's level or past it, a dark base's stays near its top's. A dark base's
    wall lit towards the mat is the shaded mat read as the wall, a light base's as bright as its top is the top."""
    sectors = levels.shape[1]
    # sector 0 is centred on the direction away from the nadir (see Samples), so sector sectors / 2 on the nadir's
    toward = np.abs(np.arange(sectors) - sectors / 2.0) <= sectors / 6.0
    mat, wall, top = (levels[:, toward, i] for i in range(3))
    use = seen[:, toward]
    contrast = mat - top
    # where top and mat are alike the place means nothing (the doubt skips such bases): dividing by one keeps it finite
    place = _kept_median((wall - top) / np.where(np.abs(contrast) >= 1.0, contrast, 1.0), use)
    none = ~use.any(axis=1)
    return (
        np.asarray(np.where(none, np.nan, place), dtype=np.float64),
        np.asarray(np.where(none, np.nan, _kept_median(contrast, use)), dtype=np.float64),
    )


def _misfit_sigma(
    res: WorkArray, jac: WorkArray, clusters: int, height_prior: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """1-sigma of the fitted centre (K,) (per axis) and radius (K,) from the residuals' own scatter (K, N), with
    the Jacobian (K, N, 4): the cluster-robust ("sandwich") covariance, clusters of consecutive rays. Where the
    model does not explain a stretch of the outline (a cloak over the rim, a shading the model lacks), that
    stretch's residuals pull together and these grow; a fit whose residuals are only noise keeps them small."""
    k = res.shape[0]
    information = (jac.transpose(0, 2, 1) @ jac).astype(np.float64)
    information[:, HEIGHT, HEIGHT] += height_prior
    bread = np.linalg.pinv(information)
    pull = (jac * res[..., None]).reshape(k, clusters, -1, PARAMS).sum(axis=2, dtype=np.float64)
    meat = pull.transpose(0, 2, 1) @ pull
    var = np.maximum(np.diagonal(bread @ meat @ bread, axis1=1, axis2=2), 0.0)
    return np.sqrt(0.5 * (var[:, 0] + var[:, 1])), np.sqrt(var[:, 2])


def _kept_median(values: FloatArray, kept: BoolArray) -> FloatArray:
    """Median of each row of ``values`` (K, n) over its ``kept`` entries (K,); 0 for a row with none."""
    ordered = np.sort(np.where(kept, values, np.inf), axis=1)
    count = kept.sum(axis=1)
    rows = np.arange(len(values))
    lo = np.maximum((count - 1) // 2, 0)
    hi = np.maximum(count // 2, 0).clip(max=values.shape[1] - 1)
    return np.asarray(np.where(count > 0, 0.5 * (ordered[rows, lo] + ordered[rows, hi]), 0.0), dtype=np.float64)


def cast_shadow_px(
    grey: NDArray[np.uint8],
    middle_px: FloatArray,
    radius_px: FloatArray,
    directions: FloatArray,
    px_per_mm: float,
    parallax: RimParallax | None,
    settings: VisionSettings,
    *,
    radius_known: bool = False,
    height_ratio: FloatArray | None = None,
) -> FloatArray:
    """(2,) px: how far, and which way, the bases' rims cast their shadows on the table: ``cast_shadow_mm`` away
    from the main light, or (0, 0) where the frame shows no one direction. One light throws every shadow the same
    way; the model's contact shadow is a ring, and a shadow longer on one side pulls the footprint that way.

    The bases (``middle_px`` (K, 2), ``radius_px`` (K,), as :func:`fit_outlines` takes them) are fitted once
    without it, from their middles; around each, the sectors where the mat and its shade come out darker point to
    the shadow; the wall, on each base's side towards the nadir, darkens its own way, told apart by a least-squares
    fit over the bases. That direction is taken if it stands out: at least ``cast_min_z`` times what pulls of no
    common direction would sum to, over at least ``cast_min_bases`` bases fitted."""
    k = len(radius_px)
    if settings.outline.cast_shadow_mm <= 0 or k < settings.outline.cast_min_bases:
        return np.zeros(2)
    heights, held = _held(k, radius_known, height_ratio)
    every = np.ones((k, len(directions)), np.bool_)
    inputs = _Inputs(grey, radius_px, every, directions, px_per_mm, parallax, settings, heights, held, np.zeros(2))
    fit = _fit_from(middle_px, inputs)
    if fit.ok.sum() < settings.outline.cast_min_bases:
        return np.zeros(2)
    rows = np.flatnonzero(fit.ok)
    samples = Samples(grey, middle_px[rows], radius_px[rows], directions, px_per_mm, parallax, settings)
    _foot, top_shift, top_scale = _footing(middle_px[rows], parallax)
    params = np.column_stack([fit.center_px[rows], fit.radius_px[rows], fit.sigma_px[rows], fit.height_ratio[rows]])
    terms = model_terms(
        params,
        samples,
        top_shift,
        top_scale,
        settings.outline.contact_shadow_mm * px_per_mm,
        settings.outline.bevel_mm * px_per_mm,
        np.zeros(2),
    )
    # the rays the model does not explain (a figure over the rim, a neighbour) are left out, as the fit does
    every_point = np.ones_like(samples.grey)
    first = Projector(terms.basis(every_point), samples)
    res = samples.grey - first.fitted(first.solve(samples.grey))
    per_ray = np.sqrt((res.reshape(len(rows), samples.rays, -1) ** 2).mean(axis=-1))
    kept = per_ray <= settings.outline.ray_reject * np.median(per_ray, axis=1, keepdims=True)
    weight = np.repeat(kept[..., None], samples.per_ray, axis=-1).reshape(len(rows), -1).astype(WORK)
    levels = Projector(terms.basis(weight), samples).solve(samples.grey * weight)
    per_sector = samples.rays // samples.sectors
    sector_dir = directions[samples.order[:, np.arange(samples.sectors) * per_sector + per_sector // 2]]
    mat, shade = levels[..., 0], levels[..., 3]
    # darker outside the footprint, in the mat or in its shade, relative to the base's own mat
    darker = -(mat + shade) / np.maximum(np.abs(mat).mean(axis=1, keepdims=True), 1.0)
    pull = (darker[..., None] * sector_dir).sum(axis=1)
    # the wall, on the side towards the nadir, darkens its sectors too: each pull is the light's (one for all)
    # plus some along the base's own way from the nadir, and bases all round the nadir tell the two apart
    away = away_from_nadir(parallax, middle_px[rows])
    design = np.zeros((2 * rows.size, 3))
    design[0::2, 0], design[1::2, 1] = 1.0, 1.0
    design[0::2, 2], design[1::2, 2] = away[:, 0], away[:, 1]
    solution, *_ = np.linalg.lstsq(design, pull.reshape(-1), rcond=None)
    total = solution[:2]
    length = float(np.hypot(*total))
    # pulls of no common direction sum to about their mean length times the square root of their number
    chance = float(np.hypot(*pull.T).mean()) / math.sqrt(rows.size)
    if length <= 0 or length < settings.outline.cast_min_z * chance:
        return np.zeros(2)
    return np.asarray(total / length * settings.outline.cast_shadow_mm * px_per_mm, dtype=np.float64)
