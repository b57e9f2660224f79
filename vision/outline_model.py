"""The appearance model of a base seen from above (fitted by :mod:`vision.outline`): what grey level each pixel near its
outline should have.

Seen from a camera at a finite height, a base is a top disc, pushed away from the nadir by the parallax of its rim
(see :mod:`vision.parallax`), over its footprint; on the side towards the camera its side wall shows between the two.
Around the footprint the mat is darker: the base hides part of the sky from it (a contact shadow, fading over a few
millimetres). Picking one edge per ray confuses these: next to a bright wall the strong wall-to-top edge is taken
for the footprint (the base comes out small and pushed away from the camera); a base about as dark as its contact
shadow has its edge slide out into the shadow (the base comes out large). So the footprint is fitted to the image
with a model of all of it. For a sample point ``p`` near the outline::

    I(p) = mat_s (1 - cover) + wall_s (cover - top) + top_s top + shade_s (1 - cover) shadow

``cover`` = Phi(-d_outline / sigma) (inside the base's outline, the union of footprint and top disc), ``top`` =
Phi(-d_top / sigma) (inside the top disc), ``shadow`` = Phi(-d_footprint / contact_shadow) (the contact shadow around
the footprint; where one main light casts the rims' shadows one way, around the footprint swept that way: see
:func:`vision.outline.cast_shadow_px`), with ``d_*`` signed distances (px) and Phi the normal CDF. The grey levels (mat,
wall, top, shade) are solved linearly for each sector of directions around the base (light and wall change around it);
the footprint centre, its radius, the blur sigma and the rim's height by Levenberg-Marquardt. The top is
``outline.bevel_mm``
smaller in radius than the footprint (0 for straight walls; fitted freely, the bevel trades off against the radius).
Rays that the model does not explain (a figure's cloak or weapon over the rim, a neighbour, a token) are dropped as the
fit goes: those whose RMS residual is more than ``outline.ray_reject`` times the base's median.

The rim's height is fitted as a ratio of the pipeline's assumed one (the parallax's shift ratio): the top disc's
shift, and so the wall's width, scale with it. Bases differ (3-5 mm), and a height held wrong moves the footprint
along the nadir line. But the wall's width, its grey level and the contact shadow trade off against it, and where
wall and top share a colour the shift hardly shows: the height stays within ``outline.height_ratio`` and leans on
the assumed one with a prior of spread ``outline.height_sigma``, weighted in the data's own noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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
WORK = np.float32

# The four grey levels of a sector (mat, wall, top, contact shade).
LEVELS = 4
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Fitted parameters: footprint centre (x, y), radius, blur, and the rim's height over the one assumed (the top
# disc's shift scales with it).
PARAMS = 5
RADIUS = 2
HEIGHT = 4
# A small ridge keeps a sector's levels solvable when one of its terms is absent (no wall on the far side).
_RIDGE = 1e-6


class Samples:
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
        sectors = settings.outline.sectors
        inner_mm, outer_mm = settings.outline.window_mm
        offsets = np.arange(-inner_mm * px_per_mm, outer_mm * px_per_mm + 1e-9, settings.outline.step_px)
        away = away_from_nadir(parallax, middle_px)
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
        self.x = np.ascontiguousarray(local[..., 0], dtype=WORK)
        self.y = np.ascontiguousarray(local[..., 1], dtype=WORK)
        self.grey = sample_points(grey, local + self.origin[:, None, :]).astype(WORK)
        self.per_ray = m
        self.rays = n
        self.sectors = sectors

    def take(self, rows: NDArray[np.intp]) -> Samples:
        """The samples of the bases ``rows`` only."""
        part = object.__new__(Samples)
        part.order, part.origin, part.grey = self.order[rows], self.origin[rows], self.grey[rows]
        part.x, part.y = self.x[rows], self.y[rows]
        part.per_ray, part.rays, part.sectors = self.per_ray, self.rays, self.sectors
        return part

    def by_ray(self, values: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """(K, n) per-ray values in the global ray order taken into this sample's order."""
        return np.take_along_axis(values, self.order, axis=1)


def away_from_nadir(parallax: RimParallax | None, center_px: FloatArray) -> FloatArray:
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
class Terms:
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
        out = np.empty((*self.mat.shape, LEVELS), dtype=WORK)
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
        held = levels.astype(WORK)
        mat_l, wall_l, top_l, shade_l = (held[:, :, i : i + 1] for i in range(LEVELS))
        on_cover = self.pdf_cover.reshape(shape) * (wall_l - mat_l - shade_l * self.shade.reshape(shape))
        on_top = self.pdf_top.reshape(shape) * (top_l - wall_l)
        on_shade = self.pdf_shade.reshape(shape) * (shade_l * self.mat.reshape(shape))
        a, t, f = (v.reshape(k, -1) for v in (on_cover, on_top, on_shade))
        out = np.empty((*self.mat.shape, PARAMS), dtype=WORK)
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


def model_terms(
    params: FloatArray,
    s: Samples,
    top_shift: FloatArray,
    top_scale: float,
    shadow_px: float,
    bevel: float,
    cast_px: FloatArray,
) -> Terms:
    """The model's terms for ``params`` (K, 5) = footprint (cx, cy, radius), blur and the rim's height ratio (the
    top shifted by that times ``top_shift`` (K, 2)), the top being ``bevel`` px smaller than the footprint (before
    its parallax scale)."""
    local = params.copy()
    local[:, :2] -= s.origin
    cx, cy, radius, sigma, height = (local[:, i : i + 1].astype(WORK) for i in range(PARAMS))
    fx, fy = s.x - cx, s.y - cy
    shift = top_shift.astype(WORK)
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
        np.where(foot_outer, WORK(1.0), WORK(top_scale)),
        -a,
        np.where(foot_outer, WORK(0.0), along_shift),
    )
    top_by = (ux_t, uy_t, top_scale, -t, along_shift)
    cdf_a, cdf_t, cdf_f = (normal_cdf_from_density(v, d) for v, d in zip((a, t, f), density, strict=True))
    return Terms(
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


class Projector:
    """Least squares of each sector's levels on the weighted basis (K, N, 4): the normal matrices, inverted once
    for a basis, serve the levels and the projection of the Jacobian's columns."""

    def __init__(self, basis: WorkArray, s: Samples) -> None:
        k = basis.shape[0]
        self.shape = (k, s.sectors, -1)
        self.b = basis.reshape(k, s.sectors, -1, LEVELS)
        self.bt = self.b.swapaxes(-1, -2)
        # a sector whose wall does not show is nearly singular: its inverse is taken in double
        self.inverse = np.linalg.inv((self.bt @ self.b).astype(np.float64) + _RIDGE * np.eye(LEVELS))

    def solve(self, target: WorkArray) -> FloatArray:
        """(K, sectors, 4) the levels that best give ``target`` (K, N)."""
        rhs = (self.bt @ target.reshape(*self.shape, 1)).astype(np.float64)
        return np.asarray((self.inverse @ rhs)[..., 0], dtype=np.float64)

    def fitted(self, levels: FloatArray) -> WorkArray:
        """(K, N) the model's grey levels for ``levels`` (K, sectors, 4)."""
        return np.asarray((self.b @ levels[..., None].astype(WORK)).reshape(levels.shape[0], -1), dtype=WORK)

    def removed_negated(self, values: WorkArray) -> WorkArray:
        """Minus ``values`` (K, N, P) less their least-squares part in the span of each sector's basis."""
        k, _, p = values.shape
        v = values.reshape(k, self.b.shape[1], -1, p)
        coeff = (self.inverse @ (self.bt @ v).astype(np.float64)).astype(WORK)
        # b c - v is exactly -(v - b c): the negation costs no pass of its own
        out = self.b @ coeff
        out -= v
        return np.asarray(out.reshape(k, -1, p), dtype=WORK)


def residuals(
    params: FloatArray,
    s: Samples,
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
    terms = model_terms(params, s, top_shift, top_scale, shadow_px, bevel, cast_px)
    basis = terms.basis(weight)
    target = s.grey * weight
    projector = Projector(basis, s)
    levels = projector.solve(target)
    res = target - projector.fitted(levels)
    if not jacobian:
        return res, None
    # Kaufman's variable projection: each column's part that the sector's levels could absorb is taken out
    return res, projector.removed_negated(terms.jacobian(levels, weight))


def sum_squares(res: WorkArray) -> FloatArray:
    """(K,) each row's sum of squares of ``res`` (K, N), added up in double: near convergence a step changes the
    cost by less than single precision resolves."""
    return np.asarray(np.square(res).sum(axis=1, dtype=np.float64), dtype=np.float64)
