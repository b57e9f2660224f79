"""Where a base stands and how big it is, from the pixels around its outline: its appearance modelled and fitted.

Seen from a camera at a finite height, a base is a top disc, pushed away from the nadir by the parallax of its rim
(see :mod:`vision.parallax`), over its footprint; on the side towards the camera its side wall shows between the two.
Around the footprint the mat is darker: the base hides part of the sky from it (a contact shadow, fading over a few
millimetres). Picking one edge per ray confuses these: next to a bright wall the strong wall-to-top edge is taken
for the footprint (the base comes out small and pushed away from the camera); a base about as dark as its contact
shadow has its edge slide out into the shadow (the base comes out large). So the footprint is fitted to the image
with a model of all of it. For a sample point ``p`` near the outline::

    I(p) = mat_s (1 - cover) + wall_s (cover - top) + top_s top + shade_s (1 - cover) shadow

``cover`` = Phi(-d_outline / sigma) (inside the base's outline, the union of footprint and top disc), ``top`` =
Phi(-d_top / sigma) (inside the top disc), ``shadow`` = Phi(-d_footprint / contact_shadow) (the contact shadow
around the footprint; where one main light casts the rims' shadows one way, around the footprint swept that way:
see :func:`cast_shadow_px`), with ``d_*`` signed distances (px) and Phi the normal CDF. The grey levels (mat, wall, top,
shade) are solved linearly for each sector of directions around the base (light and wall change around it); the
footprint centre, its radius, the blur sigma and the rim's height by Levenberg-Marquardt. The top is ``bevel_mm``
smaller in radius than the footprint (0 for straight walls; fitted freely, the bevel trades off against the radius).
Rays that the model does not explain (a figure's cloak or weapon over the rim, a neighbour, a token) are dropped as
the fit goes: those whose RMS residual is more than ``outline_ray_reject`` times the base's median.

The rim's height is fitted as a ratio of the pipeline's assumed one (the parallax's shift ratio): the top disc's
shift, and so the wall's width, scale with it. Bases differ (3-5 mm), and a height held wrong moves the footprint
along the nadir line. But the wall's width, its grey level and the contact shadow trade off against it, and where
wall and top share a colour the shift hardly shows: the height stays within ``outline_height_ratio`` and leans on
the assumed one with a prior of spread ``outline_height_sigma``, weighted in the data's own noise.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields, replace

import numpy as np
from numpy.typing import NDArray

from vision.parallax import RimParallax, ray_stretch
from vision.profile import normal_cdf_from_density
from vision.rim import sample_points
from vision.settings import VisionSettings
from vision.vecmath import hypot

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
WorkArray = NDArray[np.float32]

# The model's elementwise passes over every sample are most of a frame's time: single precision halves the memory they
# stream and doubles the SIMD width. Sample coordinates are kept relative to each base's middle, where single
# precision resolves about 1e-5 px, and the small systems (levels, steps, the misfit) are solved in double.
_WORK = np.float32

# The four grey levels of a sector (mat, wall, top, contact shade).
_LEVELS = 4
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Levenberg-Marquardt damping: start, and its factors after a step that helped or did not. The start is within a
# millimetre or so, where the model is nearly linear: start small.
_LAMBDA_START = 1e-4
_LAMBDA_DOWN = 0.1
_LAMBDA_UP = 10.0
# A base's fit has converged when its step (taken or not: a step that did not help is retried with more damping)
# moves no parameter by more than this (px): a hundredth of a pixel is far below what the fit can tell.
_CONVERGED_PX = 0.01
# Fitted parameters: footprint centre (x, y), radius, blur, and the rim's height over the one assumed (the top
# disc's shift scales with it).
_PARAMS = 5
_RADIUS = 2
_HEIGHT = 4
# A small ridge keeps a sector's levels solvable when one of its terms is absent (no wall on the far side).
_RIDGE = 1e-6
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


class _Samples:
    """The pixels a fit looks at, grouped by sector: each base's rays are taken in turn from the first ray of its
    sector 0 (centred on the direction away from the nadir), so that a sector is ``rays / sectors`` consecutive
    rays and every group operation is a reshape. The points on the rays through the outline, ``x`` and ``y`` (K, N)
    from each base's ``origin`` (K, 2) (the middle sampled round), and their grey levels (K, N), all in single
    precision; points run ray by ray, ``per_ray`` to a ray; ``order`` (K, n) the ray of each place."""

    def __init__(
        self,
        grey: NDArray[np.uint8],
        middle_px: FloatArray,
        radius_px: FloatArray,
        directions: FloatArray,
        px_per_mm: float,
        parallax: RimParallax | None,
        settings: VisionSettings,
    ) -> None:
        k, n = len(radius_px), len(directions)
        sectors = settings.outline_sectors
        inner_mm, outer_mm = settings.outline_window_mm
        offsets = np.arange(-inner_mm * px_per_mm, outer_mm * px_per_mm + 1e-9, settings.outline_step_px)
        away = _away(parallax, middle_px)
        per_sector = n // sectors
        # rays run at equal angles from +x: the ray that starts sector 0 lies half a sector before the away direction
        first = np.round(np.arctan2(away[:, 1], away[:, 0]) / (2 * math.pi) * n - (per_sector - 1) / 2.0)
        self.order = (first.astype(np.intp)[:, None] + np.arange(n)[None, :]) % n
        ray_dir = directions[self.order]
        ray_radius = radius_px[:, None] + ray_stretch(parallax, middle_px, ray_dir)
        m = len(offsets)
        reach = ray_radius[..., None] + offsets[None, None, :]
        local = (reach[..., None] * ray_dir[:, :, None, :]).reshape(k, -1, 2)
        self.origin = np.asarray(middle_px, dtype=np.float64)
        self.x = np.ascontiguousarray(local[..., 0], dtype=_WORK)
        self.y = np.ascontiguousarray(local[..., 1], dtype=_WORK)
        self.grey = sample_points(grey, local + self.origin[:, None, :]).astype(_WORK)
        self.per_ray = m
        self.rays = n
        self.sectors = sectors

    def take(self, rows: NDArray[np.intp]) -> _Samples:
        """The samples of the bases ``rows`` only."""
        part = object.__new__(_Samples)
        part.order, part.origin, part.grey = self.order[rows], self.origin[rows], self.grey[rows]
        part.x, part.y = self.x[rows], self.y[rows]
        part.per_ray, part.rays, part.sectors = self.per_ray, self.rays, self.sectors
        return part

    def by_ray(self, values: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """(K, n) per-ray values in the global ray order taken into this sample's order."""
        return np.take_along_axis(values, self.order, axis=1)


def _away(parallax: RimParallax | None, center_px: FloatArray) -> FloatArray:
    """(K, 2) unit directions away from the nadir ((1, 0) without a parallax or at the nadir)."""
    if parallax is None:
        return np.tile(np.array([1.0, 0.0]), (len(center_px), 1))
    _half, unit = parallax.half_shift(center_px)
    return np.where(np.hypot(unit[:, 0], unit[:, 1])[:, None] > 0, unit, np.array([1.0, 0.0]))


def _pdf(x: WorkArray) -> WorkArray:
    # in place, in the order of exp(-0.5 * x * x) * _INV_SQRT_2PI: the same values, without temporaries
    out = np.multiply(x, -0.5)
    out *= x
    np.exp(out, out=out)
    out *= _INV_SQRT_2PI
    return out


@dataclass(frozen=True)
class _Terms:
    """The model's terms at every sample (K, N): outside the outline (``mat``), inside the top disc (``top``),
    the contact shadow (``shade``); and what their derivatives by the parameters are made of: each term's
    density (``pdf_*``) times the derivative of its signed distance by each parameter (``*_by``: (x, y, radius,
    blur, height) for the outline and the top, (x, y) for the footprint, whose radius and blur derivatives are 1
    and 0). Kept apart so that the Jacobian is assembled once, with the levels, without (K, N, 5) temporaries."""

    mat: WorkArray
    top: WorkArray
    shade: WorkArray
    pdf_cover: WorkArray
    pdf_top: WorkArray
    pdf_shade: WorkArray
    cover_by: tuple[WorkArray, WorkArray, WorkArray, WorkArray, WorkArray]
    top_by: tuple[WorkArray, WorkArray, float, WorkArray, WorkArray]
    shade_by: tuple[WorkArray, WorkArray]

    def basis(self, weight: WorkArray) -> WorkArray:
        """(K, N, 4) the basis of the levels (mat, wall, top, contact shade), times ``weight`` (K, N)."""
        out = np.empty((*self.mat.shape, _LEVELS), dtype=_WORK)
        cover = 1.0 - self.mat
        cover -= self.top
        for i, term in enumerate((self.mat, cover, self.top)):
            np.multiply(term, weight, out=out[..., i])
        shade = self.mat * self.shade
        np.multiply(shade, weight, out=out[..., 3])
        return out

    def jacobian(self, levels: FloatArray, weight: WorkArray) -> WorkArray:
        """(K, N, 5) derivative of the model by the parameters, each sector's levels (K, sectors, 4) held, times
        ``weight`` (K, N)."""
        k, sectors = levels.shape[:2]
        shape = (k, sectors, -1)
        held = levels.astype(_WORK)
        mat_l, wall_l, top_l, shade_l = (held[:, :, i : i + 1] for i in range(_LEVELS))
        on_cover = self.pdf_cover.reshape(shape) * (wall_l - mat_l - shade_l * self.shade.reshape(shape))
        on_top = self.pdf_top.reshape(shape) * (top_l - wall_l)
        on_shade = self.pdf_shade.reshape(shape) * (shade_l * self.mat.reshape(shape))
        a, t, f = (v.reshape(k, -1) for v in (on_cover, on_top, on_shade))
        out = np.empty((*self.mat.shape, _PARAMS), dtype=_WORK)
        cx, cy, cr, cs, ch = self.cover_by
        tx, ty, tr, ts, th = self.top_by
        fx, fy = self.shade_by
        columns = (
            a * cx + t * tx + f * fx,
            a * cy + t * ty + f * fy,
            a * cr + t * tr + f,
            a * cs + t * ts,
            a * ch + t * th,
        )
        for i, column in enumerate(columns):
            np.multiply(column, weight, out=out[..., i])
        return out


def _terms(
    params: FloatArray,
    s: _Samples,
    top_shift: FloatArray,
    top_scale: float,
    shadow_px: float,
    bevel: float,
    cast_px: FloatArray,
) -> _Terms:
    """The model's terms for ``params`` (K, 5) = footprint (cx, cy, radius), blur and the rim's height ratio (the
    top shifted by that times ``top_shift`` (K, 2)), the top being ``bevel`` px smaller than the footprint (before
    its parallax scale)."""
    local = params.copy()
    local[:, :2] -= s.origin
    cx, cy, radius, sigma, height = (local[:, i : i + 1].astype(_WORK) for i in range(_PARAMS))
    fx, fy = s.x - cx, s.y - cy
    shift = top_shift.astype(_WORK)
    shift_x, shift_y = shift[:, 0:1], shift[:, 1:2]
    top_scale, shadow_px, bevel = float(top_scale), float(shadow_px), float(bevel)
    tx, ty = fx - height * shift_x, fy - height * shift_y
    rho_f = np.maximum(hypot(fx, fy), 1e-9)
    rho_t = np.maximum(hypot(tx, ty), 1e-9)
    d_foot = rho_f - radius
    d_top = rho_t - (radius - bevel) * top_scale
    foot_outer = d_foot <= d_top
    d_out = np.where(foot_outer, d_foot, d_top)
    # -d / w as d / -w: the same values, one pass fewer
    if cast_px[0] or cast_px[1]:
        # the shadow is the footprint swept along the cast, as long as the rim is high: its distance is to the
        # segment of the centre's sweep
        cast_x, cast_y = float(cast_px[0]) * height, float(cast_px[1]) * height
        along = np.clip((fx * cast_x + fy * cast_y) / np.maximum(cast_x**2 + cast_y**2, 1e-12), 0.0, 1.0)
        sx, sy = fx - along * cast_x, fy - along * cast_y
        rho_s = np.maximum(hypot(sx, sy), 1e-9)
        d_shadow, shade_by = rho_s - radius, (sx / rho_s, sy / rho_s)
    else:
        d_shadow, shade_by = d_foot, (fx / rho_f, fy / rho_f)
    a, t, f = d_out / -sigma, d_top / -sigma, d_shadow / -shadow_px
    density = [_pdf(a), _pdf(t), _pdf(f)]
    # d(Phi(-d / w)) = pdf(-d / w) / w * (-d(d)), and d(d)/d(cx) = -x / rho, d(d)/d(radius) = -1 (or -scale)
    # the top circle moves with the height: d(distance)/d(height) = -(t . shift) / rho_t; the outline takes the
    # outer circle's derivatives
    ux_f, uy_f = fx / rho_f, fy / rho_f
    ux_t, uy_t = tx / rho_t, ty / rho_t
    along_shift = ux_t * shift_x + uy_t * shift_y
    cover_by = (
        np.where(foot_outer, ux_f, ux_t),
        np.where(foot_outer, uy_f, uy_t),
        np.where(foot_outer, _WORK(1.0), _WORK(top_scale)),
        -a,
        np.where(foot_outer, _WORK(0.0), along_shift),
    )
    top_by = (ux_t, uy_t, top_scale, -t, along_shift)
    cdf_a, cdf_t, cdf_f = (normal_cdf_from_density(v, d) for v, d in zip((a, t, f), density, strict=True))
    return _Terms(
        1.0 - cdf_a,
        cdf_t,
        cdf_f,
        density[0] / sigma,
        density[1] / sigma,
        density[2] / shadow_px,
        cover_by,
        top_by,
        shade_by,
    )


class _Projector:
    """Least squares of each sector's levels on the weighted basis (K, N, 4): the normal matrices, inverted once
    for a basis, serve the levels and the projection of the Jacobian's columns."""

    def __init__(self, basis: WorkArray, s: _Samples) -> None:
        k = basis.shape[0]
        self.shape = (k, s.sectors, -1)
        self.b = basis.reshape(k, s.sectors, -1, _LEVELS)
        self.bt = self.b.swapaxes(-1, -2)
        # a sector whose wall does not show is nearly singular: its inverse is taken in double
        self.inverse = np.linalg.inv((self.bt @ self.b).astype(np.float64) + _RIDGE * np.eye(_LEVELS))

    def solve(self, target: WorkArray) -> FloatArray:
        """(K, sectors, 4) the levels that best give ``target`` (K, N)."""
        rhs = (self.bt @ target.reshape(*self.shape, 1)).astype(np.float64)
        return np.asarray((self.inverse @ rhs)[..., 0], dtype=np.float64)

    def fitted(self, levels: FloatArray) -> WorkArray:
        """(K, N) the model's grey levels for ``levels`` (K, sectors, 4)."""
        return np.asarray((self.b @ levels[..., None].astype(_WORK)).reshape(levels.shape[0], -1), dtype=_WORK)

    def removed_negated(self, values: WorkArray) -> WorkArray:
        """Minus ``values`` (K, N, P) less their least-squares part in the span of each sector's basis."""
        k, _, p = values.shape
        v = values.reshape(k, self.b.shape[1], -1, p)
        coeff = (self.inverse @ (self.bt @ v).astype(np.float64)).astype(_WORK)
        # b c - v is exactly -(v - b c): the negation costs no pass of its own
        out = self.b @ coeff
        out -= v
        return np.asarray(out.reshape(k, -1, p), dtype=_WORK)


def _residuals(
    params: FloatArray,
    s: _Samples,
    weight: WorkArray,
    top_shift: FloatArray,
    top_scale: float,
    shadow_px: float,
    bevel: float,
    cast_px: FloatArray,
    jacobian: bool = False,
) -> tuple[WorkArray, WorkArray | None]:
    """(K, N) weighted residuals with each sector's levels solved by least squares, and (when asked) their
    Jacobian (K, N, 4) by the parameters (Kaufman's approximation of variable projection)."""
    terms = _terms(params, s, top_shift, top_scale, shadow_px, bevel, cast_px)
    basis = terms.basis(weight)
    target = s.grey * weight
    projector = _Projector(basis, s)
    levels = projector.solve(target)
    res = target - projector.fitted(levels)
    if not jacobian:
        return res, None
    # Kaufman's variable projection: each column's part that the sector's levels could absorb is taken out
    return res, projector.removed_negated(terms.jacobian(levels, weight))


def _sum_squares(res: WorkArray) -> FloatArray:
    """(K,) each row's sum of squares of ``res`` (K, N), added up in double: near convergence a step changes the
    cost by less than single precision resolves."""
    return np.asarray(np.square(res).sum(axis=1, dtype=np.float64), dtype=np.float64)


def _kept_median(values: FloatArray, kept: BoolArray) -> FloatArray:
    """Median of each row of ``values`` (K, n) over its ``kept`` entries (K,); 0 for a row with none."""
    ordered = np.sort(np.where(kept, values, np.inf), axis=1)
    count = kept.sum(axis=1)
    rows = np.arange(len(values))
    lo = np.maximum((count - 1) // 2, 0)
    hi = np.maximum(count // 2, 0).clip(max=values.shape[1] - 1)
    return np.asarray(np.where(count > 0, 0.5 * (ordered[rows, lo] + ordered[rows, hi]), 0.0), dtype=np.float64)


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

    The fit starts from each of ``outline_starts`` (the edges' middle moved that many half parallax shifts
    towards the nadir; the starts are fitted side by side and compared in order) and keeps, per base, the first
    usable fit unless a later one's RMS residual is below ``outline_start_margin`` times it: a wall of the top's
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
        starts = settings.outline_starts
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
        better = fit.rms_grey < settings.outline_start_margin * best.rms_grey
        best = best.where(fit.ok & (~best.ok | better), fit)
        fits.append(fit)
    # the fits about as good as the one kept (within the margin, which could not choose between them)
    other = np.zeros((len(radius_px), 2))
    for fit in fits:
        alike = fit.ok & best.ok & (settings.outline_start_margin * fit.rms_grey <= best.rms_grey)
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
    held = np.zeros((k, _PARAMS), np.bool_)
    held[:, _RADIUS] = radius_known
    heights = np.full(k, np.nan) if height_ratio is None else np.asarray(height_ratio, dtype=np.float64).reshape(k)
    held[:, _HEIGHT] = np.isfinite(heights)
    return np.where(held[:, _HEIGHT], heights, 1.0), held


def _footing(middle_px: FloatArray, parallax: RimParallax | None) -> tuple[FloatArray, FloatArray, float]:
    """For outline middles (K, 2): the footprint centres (K, 2), the top disc's shift from them (K, 2) and its
    scale."""
    away = _away(parallax, middle_px)
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
    samples = _Samples(grey, middle_px, radius_px, directions, px_per_mm, parallax, settings)
    foot, top_shift, top_scale = _footing(middle_px, parallax)
    shadow_px = settings.contact_shadow_mm * px_per_mm
    ray_ok = samples.by_ray(inlier)
    weight = np.repeat(ray_ok[..., None], samples.per_ray, axis=-1).reshape(k, -1).astype(_WORK)
    heights = inputs.height_ratio
    params, lower, upper, free = _start_and_bounds(foot, radius_px, heights, inputs.held, px_per_mm, settings)
    extra = (top_shift, top_scale, shadow_px, settings.bevel_mm * px_per_mm, inputs.cast_px)
    res, jac = _residuals(params, samples, weight, *extra, jacobian=True)
    assert jac is not None
    if free is not None:
        jac *= free
    cost = _sum_squares(res)
    # the height's prior, as a residual in the data's own units: its noise over the prior's spread, squared
    height_sigma = settings.outline_height_sigma

    def prior_weight(data_cost: FloatArray) -> FloatArray:
        noise2 = data_cost / np.maximum(weight.sum(axis=1), 1.0)
        return np.asarray(noise2 / height_sigma**2, dtype=np.float64)

    prior = prior_weight(cost)
    lam = np.full(k, _LAMBDA_START)
    reject_at = set(settings.outline_reject_at)
    # bases leave the loop as they converge, and all come back when rays are rejected: most converge in a few
    # steps, a few take all of them
    active = np.ones(k, np.bool_)
    for it in range(settings.outline_iterations):
        if it in reject_at:
            per_ray = np.sqrt((res.reshape(k, samples.rays, -1) ** 2).mean(axis=-1))
            median = _kept_median(per_ray, ray_ok)
            ray_ok &= per_ray <= settings.outline_ray_reject * median[:, None]
            weight = np.repeat(ray_ok[..., None], samples.per_ray, axis=-1).reshape(k, -1).astype(_WORK)
            res, jac = _residuals(params, samples, weight, *extra, jacobian=True)
            assert jac is not None
            if free is not None:
                jac *= free
            cost = _sum_squares(res)
            prior = prior_weight(cost)
            active[:] = True
        rows = np.flatnonzero(active)
        if rows.size == 0:
            break
        # while every base is still fitted (most steps), the arrays themselves rather than copies of all their rows
        every = rows.size == k
        jac_a, res_a = (jac, res) if every else (jac[rows], res[rows])
        jac_t = jac_a.transpose(0, 2, 1)
        jtj = (jac_t @ jac_a).astype(np.float64)
        jtr = (jac_t @ res_a[..., None])[..., 0].astype(np.float64)
        off = params[rows, _HEIGHT] - heights[rows]
        jtj[:, _HEIGHT, _HEIGHT] += prior[rows]
        jtr[:, _HEIGHT] += prior[rows] * off
        scale = np.maximum(np.diagonal(jtj, axis1=1, axis2=2), 1e-9)
        damped = jtj + lam[rows, None, None] * (np.eye(_PARAMS) * scale[:, None, :])
        delta = -np.linalg.solve(damped, jtr[..., None])[..., 0]
        trial = np.clip(params[rows] + delta, lower[rows], upper[rows])
        extra_a = (top_shift[rows], top_scale, shadow_px, extra[3], extra[4])
        trial_res, trial_jac = _residuals(
            trial, samples if every else samples.take(rows), weight if every else weight[rows], *extra_a, jacobian=True
        )
        assert trial_jac is not None
        if free is not None:
            trial_jac *= free[rows]
        trial_cost = _sum_squares(trial_res)
        trial_prior = prior[rows] * (trial[:, _HEIGHT] - heights[rows]) ** 2
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
    low_h, high_h = settings.outline_height_ratio
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
    free = (~held).astype(_WORK)[:, None, :] if held.any() else None
    return params, lower, upper, free


def _outline_fit(
    params: FloatArray,
    res: WorkArray,
    jac: WorkArray,
    cost: FloatArray,
    weight: WorkArray,
    ray_ok: BoolArray,
    prior: FloatArray,
    samples: _Samples,
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
    enough = (sectors_seen >= _MIN_SECTOR_RAYS).sum(axis=1) >= settings.outline_sectors // 2
    ok = np.all(np.isfinite(params), axis=1) & (share >= _MIN_RAY_SHARE) & enough
    centre_misfit, radius_misfit = _misfit_sigma(res, jac, samples.rays // settings.outline_misfit_rays, prior)
    ok &= np.isfinite(centre_misfit) & np.isfinite(radius_misfit)
    terms = _terms(params, samples, *extra)
    levels = _Projector(terms.basis(weight), samples).solve(samples.grey * weight)
    near_wall, near_contrast = _near_wall(levels, sectors_seen >= _MIN_SECTOR_RAYS)
    return OutlineFit(
        params[:, :2],
        params[:, 2],
        params[:, 3],
        params[:, _HEIGHT],
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
    # sector 0 is centred on the direction away from the nadir (see _Samples), so sector sectors / 2 on the nadir's
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
    information[:, _HEIGHT, _HEIGHT] += height_prior
    bread = np.linalg.pinv(information)
    pull = (jac * res[..., None]).reshape(k, clusters, -1, _PARAMS).sum(axis=2, dtype=np.float64)
    meat = pull.transpose(0, 2, 1) @ pull
    var = np.maximum(np.diagonal(bread @ meat @ bread, axis1=1, axis2=2), 0.0)
    return np.sqrt(0.5 * (var[:, 0] + var[:, 1])), np.sqrt(var[:, 2])


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
    if settings.cast_shadow_mm <= 0 or k < settings.cast_min_bases:
        return np.zeros(2)
    heights, held = _held(k, radius_known, height_ratio)
    every = np.ones((k, len(directions)), np.bool_)
    inputs = _Inputs(grey, radius_px, every, directions, px_per_mm, parallax, settings, heights, held, np.zeros(2))
    fit = _fit_from(middle_px, inputs)
    if fit.ok.sum() < settings.cast_min_bases:
        return np.zeros(2)
    rows = np.flatnonzero(fit.ok)
    samples = _Samples(grey, middle_px[rows], radius_px[rows], directions, px_per_mm, parallax, settings)
    _foot, top_shift, top_scale = _footing(middle_px[rows], parallax)
    params = np.column_stack([fit.center_px[rows], fit.radius_px[rows], fit.sigma_px[rows], fit.height_ratio[rows]])
    terms = _terms(
        params,
        samples,
        top_shift,
        top_scale,
        settings.contact_shadow_mm * px_per_mm,
        settings.bevel_mm * px_per_mm,
        np.zeros(2),
    )
    # the rays the model does not explain (a figure over the rim, a neighbour) are left out, as the fit does
    every_point = np.ones_like(samples.grey)
    first = _Projector(terms.basis(every_point), samples)
    res = samples.grey - first.fitted(first.solve(samples.grey))
    per_ray = np.sqrt((res.reshape(len(rows), samples.rays, -1) ** 2).mean(axis=-1))
    kept = per_ray <= settings.outline_ray_reject * np.median(per_ray, axis=1, keepdims=True)
    weight = np.repeat(kept[..., None], samples.per_ray, axis=-1).reshape(len(rows), -1).astype(_WORK)
    levels = _Projector(terms.basis(weight), samples).solve(samples.grey * weight)
    per_sector = samples.rays // samples.sectors
    sector_dir = directions[samples.order[:, np.arange(samples.sectors) * per_sector + per_sector // 2]]
    mat, shade = levels[..., 0], levels[..., 3]
    # darker outside the footprint, in the mat or in its shade, relative to the base's own mat
    darker = -(mat + shade) / np.maximum(np.abs(mat).mean(axis=1, keepdims=True), 1.0)
    pull = (darker[..., None] * sector_dir).sum(axis=1)
    # the wall, on the side towards the nadir, darkens its sectors too: each pull is the light's (one for all)
    # plus some along the base's own way from the nadir, and bases all round the nadir tell the two apart
    away = _away(parallax, middle_px[rows])
    design = np.zeros((2 * rows.size, 3))
    design[0::2, 0], design[1::2, 1] = 1.0, 1.0
    design[0::2, 2], design[1::2, 2] = away[:, 0], away[:, 1]
    solution, *_ = np.linalg.lstsq(design, pull.reshape(-1), rcond=None)
    total = solution[:2]
    length = float(np.hypot(*total))
    # pulls of no common direction sum to about their mean length times the square root of their number
    chance = float(np.hypot(*pull.T).mean()) / math.sqrt(rows.size)
    if length <= 0 or length < settings.cast_min_z * chance:
        return np.zeros(2)
    return np.asarray(total / length * settings.cast_shadow_mm * px_per_mm, dtype=np.float64)
