"""Where the footprint really is, from a base's mean radial profile.

Seen from above, a base is a top disc ringed by its bevelled side wall, on the mat. Blurred, the wall's two edges
(mat to wall at the footprint, wall to top a wall-width inside) overlap, and the gradient peak of the outer one
moves outward, away from the inner one - by up to a millimetre at 1 px/mm, enough to snap a 25 mm base to 27 mm.
The centre does not move (the shift is the same all round), only the radius.

So the radius is measured again with a model of the whole profile: averaged over the rays that saw the rim, the
luminance across the rim is fitted with

    I(u) = mat + (wall - mat) * Phi((rho - u) / sigma) + (top - wall) * Phi((rho - width - u) / sigma)

(u: distance outward from the edge-fitted radius, Phi the normal CDF), by Levenberg-Marquardt on (rho, width,
sigma) with the three levels solved linearly at every step. ``rho`` is the correction to the radius.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
# single or double precision: the appearance fit works in single (see vision.outline)
_Real = TypeVar("_Real", NDArray[np.float64], NDArray[np.float32])
BoolArray = NDArray[np.bool_]

# Iterations of Levenberg-Marquardt: the start is within a pixel, a few steps settle it.
_ITERATIONS = 8
# Finite-difference step (px) of the numeric Jacobian.
_DELTA_PX = 1e-3
# Bounds of the blur and wall width (px) and of the correction (px): beyond them the model is not what is seen.
_SIGMA_RANGE_PX = (0.25, 4.0)
_WIDTH_MIN_PX = 0.2
_RHO_LIMIT_PX = 2.0
_SQRT2 = math.sqrt(2.0)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_INV_SQRT_2PI = 1.0 / _SQRT_2PI


def normal_cdf(x: FloatArray) -> FloatArray:
    """Standard normal CDF, vectorised (math.erf through numpy's frompyfunc is slow; this is exact enough)."""
    return normal_cdf_from_density(x, np.exp(-0.5 * x * x) * _INV_SQRT_2PI)


def normal_cdf_from_density(x: _Real, density: _Real) -> _Real:
    """Standard normal CDF at ``x`` given the standard normal density there (any shape, in ``x``'s precision): a
    caller that needs both computes the exponential once."""
    # Abramowitz & Stegun 7.1.26 erf approximation, |error| < 1.5e-7; its exp(-z^2) is the density times sqrt(2 pi).
    # Evaluated in place, operation by operation as t * (a1 + t * (a2 + ...)) and 0.5 * poly * density * sqrt(2 pi)
    # would be: the same values, without a temporary per operation.
    t = np.abs(x)
    t /= _SQRT2
    t *= 0.3275911
    t += 1.0
    np.divide(1.0, t, out=t)
    tail = t * 1.061405429
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        tail += coefficient
        tail *= t
    tail *= 0.5
    tail *= density
    tail *= _SQRT_2PI
    # 1 - tail where x >= 0, the tail elsewhere (a masked copy costs about half of np.where)
    out = np.subtract(1.0, tail)
    np.copyto(out, tail, where=x < 0)
    return out


def _levels(
    theta: FloatArray, u: FloatArray, profile: FloatArray, weight: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Best (mat, wall, top) levels (K, 3) for shape parameters ``theta`` (K, 3) = (rho, width, sigma), with the
    weighted basis (K, M, 3) and weighted target (K, M) they were solved from."""
    rho, width, sigma = theta[:, 0:1], theta[:, 1:2], theta[:, 2:3]
    a = normal_cdf((rho - u[None, :]) / sigma)
    b = normal_cdf((rho - width - u[None, :]) / sigma)
    # I = mat * (1 - a) + wall * (a - b) + top * b
    basis = np.stack([1.0 - a, a - b, b], axis=-1) * weight[..., None]
    target = profile * weight
    normal = np.einsum("kmi,kmj->kij", basis, basis) + 1e-9 * np.eye(3)
    rhs = np.einsum("kmi,km->ki", basis, target)
    return np.linalg.solve(normal, rhs[..., None])[..., 0], basis, target


def _residuals(
    theta: FloatArray, u: FloatArray, profile: FloatArray, weight: FloatArray, prior: tuple[float, float, float]
) -> FloatArray:
    """Weighted residuals (K, M + 1) of the best levels for shape parameters ``theta`` (K, 3) = (rho, width,
    sigma); the last column is the wall-width prior ``(mean_px, sd_px, grey_levels)``: a width one sd off the mean
    costs as much as one sample ``grey_levels`` off."""
    levels, basis, target = _levels(theta, u, profile, weight)
    res = target - np.einsum("kmi,ki->km", basis, levels)
    mean_px, sd_px, grey = prior
    penalty = grey * (theta[:, 1:2] - mean_px) / sd_px
    return np.asarray(np.concatenate([res, penalty], axis=1), dtype=np.float64)


@dataclass(frozen=True)
class RimModel:
    """Fitted rim profiles: ``rho_px`` (K,) correction to add to the radius, ``width_px`` (K,) wall width,
    ``sigma_px`` (K,) blur, ``levels`` (K, 3) grey of mat, wall and top, ``ok`` (K,) whether the fit is
    usable."""

    rho_px: FloatArray
    width_px: FloatArray
    sigma_px: FloatArray
    levels: FloatArray
    ok: BoolArray


def fit_rim_profiles(
    u_px: FloatArray,
    profile: FloatArray,
    weight: FloatArray,
    wall_prior: tuple[float, float, float],
    sigma0_px: float,
) -> RimModel:
    """Fit the wall-and-top model to mean radial profiles ``profile`` (K, M) sampled at ``u_px`` (M,) outward
    from each base's edge-fitted radius; ``weight`` (K, M) is 0 where a sample is missing.

    ``wall_prior`` = (mean_px, sd_px, grey_levels) keeps the wall width near what bases have when the profile
    cannot tell (at about 1 px/mm a narrow black wall and a wide grey one blur to the same dip): see
    :func:`_residuals`. Starts from no correction, the prior's width and blur ``sigma0_px``."""
    k = profile.shape[0]
    theta = np.tile(np.array([0.0, wall_prior[0], sigma0_px]), (k, 1))
    if k == 0:
        return RimModel(np.zeros(0), np.zeros(0), np.zeros(0), np.zeros((0, 3)), np.zeros(0, np.bool_))
    lam = np.full(k, 1e-2)
    res = _residuals(theta, u_px, profile, weight, wall_prior)
    cost = (res * res).sum(axis=1)
    lower = np.array([-_RHO_LIMIT_PX, _WIDTH_MIN_PX, _SIGMA_RANGE_PX[0]])
    upper = np.array([_RHO_LIMIT_PX, float(u_px[-1] - u_px[0]), _SIGMA_RANGE_PX[1]])
    for _ in range(_ITERATIONS):
        jac = np.empty((*res.shape, 3))
        for i in range(3):
            step = np.zeros(3)
            step[i] = _DELTA_PX
            jac[..., i] = (_residuals(theta + step, u_px, profile, weight, wall_prior) - res) / _DELTA_PX
        jtj = np.einsum("kmi,kmj->kij", jac, jac)
        jtr = np.einsum("kmi,km->ki", jac, res)
        damped = jtj + lam[:, None, None] * (
            np.eye(3) * np.maximum(np.diagonal(jtj, axis1=1, axis2=2), 1e-9)[:, None, :]
        )
        delta = -np.linalg.solve(damped, jtr[..., None])[..., 0]
        trial = np.clip(theta + delta, lower, upper)
        trial_res = _residuals(trial, u_px, profile, weight, wall_prior)
        trial_cost = (trial_res * trial_res).sum(axis=1)
        better = trial_cost < cost
        theta = np.where(better[:, None], trial, theta)
        res = np.where(better[:, None], trial_res, res)
        cost = np.where(better, trial_cost, cost)
        lam = np.where(better, lam * 0.3, lam * 10.0)
    ok = np.all(np.isfinite(theta), axis=1) & (np.abs(theta[:, 0]) < _RHO_LIMIT_PX)
    levels = _levels(theta, u_px, profile, weight)[0]
    return RimModel(theta[:, 0], theta[:, 1], theta[:, 2], levels, ok)
