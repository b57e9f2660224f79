"""Robust circle fits of many candidates at once: an algebraic fit, then an iteratively reweighted geometric fit
that lets a weapon, a cloak or a neighbouring base crossing the rim drop out as outliers.

Arrays are batched: ``points_px`` (K, n, 2) holds n rim points of each of K candidates, ``found`` (K, n) says which
of them exist.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from vision.vecmath import hypot

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

# Tukey's biweight constant: 95 % efficiency on Gaussian residuals, zero weight beyond it.
_TUKEY_C = 4.685
# MAD to Gaussian sigma.
_MAD_TO_SIGMA = 1.4826
# Robust residual scale never drops below this: an edge found to 0.05 px on one ray is not evidence that every
# other ray 0.2 px off is an outlier (anti-aliasing and 8-bit rounding alone give a few hundredths of a pixel).
MIN_RESIDUAL_SCALE_PX = 0.08
# Fewer rim points than this cannot pin down a circle against outliers.
MIN_POINTS = 6
# Consensus start: a point within this many px of a three-point circle agrees with it; a three-point circle more
# than this share away from the expected radius is not the rim.
_CONSENSUS_PX = 1.0
_CONSENSUS_RADIUS_SHARE = 0.3
# The consensus start is tried (it costs a circle per ray triple) only where fewer than this share of the points
# agree with the ordinary start.
_CONSENSUS_DOUBT = 0.7


def _triple_spreads(n: int) -> tuple[int, ...]:
    """Ray steps between the three points of a consensus circle: the triples span a sixth and a third of the
    rim, so some fit inside the longest clean arc and some span most of it."""
    return tuple(sorted({max(1, n // 12), max(1, n // 6)}))


# Damping added to the normal equations: keeps a step finite when the rim points span a short arc.
_DAMPING = 1e-9


@dataclass(frozen=True)
class CircleFit:
    """Fitted circles: ``center_px`` (K, 2), ``radius_px`` (K,), ``inlier`` (K, n) rim points kept, ``rms_px``
    (K,) RMS residual of the inliers, ``center_cov_px2`` (K, 2, 2) covariance of the centre, ``ok`` (K,) whether
    enough inliers were left to fit at all."""

    center_px: FloatArray
    radius_px: FloatArray
    inlier: BoolArray
    rms_px: FloatArray
    center_cov_px2: FloatArray
    ok: BoolArray


def _median_abs(res: FloatArray, mask: BoolArray) -> FloatArray:
    """Median of |res| over the masked entries of each row (K,); rows with no entry give +inf."""
    count = mask.sum(axis=1)
    ordered = np.sort(np.where(mask, np.abs(res), np.inf), axis=1)
    rows = np.arange(len(res))
    lo = np.maximum((count - 1) // 2, 0)
    hi = np.maximum(count // 2, 0)
    if ordered.shape[1] == 0:
        return np.full(len(res), np.inf)
    med = 0.5 * (ordered[rows, lo] + ordered[rows, np.minimum(hi, ordered.shape[1] - 1)])
    return np.asarray(np.where(count > 0, med, np.inf), dtype=np.float64)


def algebraic_fit(points_px: FloatArray, weight: FloatArray, origin_px: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Weighted Kasa fit (x^2 + y^2 + D x + E y + F = 0) of each row, computed relative to ``origin_px`` (K, 2)
    for conditioning. Returns centres (K, 2) and radii (K,); rows that cannot be solved give NaN."""
    p = points_px - origin_px[:, None, :]
    x, y = p[..., 0], p[..., 1]
    a = np.stack([x, y, np.ones_like(x)], axis=-1)
    b = -(x * x + y * y)
    wa = a * weight[..., None]
    normal = np.swapaxes(wa, 1, 2) @ a + _DAMPING * np.eye(3)
    rhs = (np.swapaxes(wa, 1, 2) @ b[..., None])[..., 0]
    det = np.linalg.det(normal)
    solvable = np.abs(det) > 1e-12
    sol = np.full((len(points_px), 3), np.nan)
    if solvable.any():
        sol[solvable] = np.linalg.solve(normal[solvable], rhs[solvable][..., None])[..., 0]
    cx, cy = -sol[:, 0] / 2, -sol[:, 1] / 2
    r2 = cx * cx + cy * cy - sol[:, 2]
    with np.errstate(invalid="ignore"):
        radius = np.where(r2 > 0, np.sqrt(np.maximum(r2, 0)), np.nan)
    return np.stack([cx, cy], axis=1) + origin_px, radius


def _consensus_circles(
    pts: FloatArray, found: BoolArray, expected_radius: FloatArray
) -> tuple[FloatArray, FloatArray, NDArray[np.intp]]:
    """For each row, of the circles through three rim points (points a fixed spread of rays apart, every other
    start ray, two spreads), the one most points lie within ``_CONSENSUS_PX`` of: centres (K, 2), radii
    (K,), and how many points agree (K,). Circles whose radius is far from ``expected_radius`` do not count."""
    k, n = found.shape
    if n < 6:
        return np.zeros((k, 2)), np.zeros(k), np.zeros(k, np.intp)
    starts = np.arange(0, n, 2)
    triples = np.concatenate(
        [np.stack([starts, (starts + s) % n, (starts + 2 * s) % n], axis=1) for s in _triple_spreads(n)]
    )
    a, b, c = (pts[:, triples[:, j], :] for j in range(3))  # (K, T, 2)
    ok = found[:, triples[:, 0]] & found[:, triples[:, 1]] & found[:, triples[:, 2]]
    # circumcentre of each triple, relative to its first point for conditioning
    bx, by = b[..., 0] - a[..., 0], b[..., 1] - a[..., 1]
    cx, cy = c[..., 0] - a[..., 0], c[..., 1] - a[..., 1]
    det = 2 * (bx * cy - by * cx)
    with np.errstate(divide="ignore", invalid="ignore"):
        ux = (cy * (bx * bx + by * by) - by * (cx * cx + cy * cy)) / det
        uy = (bx * (cx * cx + cy * cy) - cx * (bx * bx + by * by)) / det
    center = np.stack([a[..., 0] + ux, a[..., 1] + uy], axis=-1)
    radius = hypot(ux, uy)
    plausible = np.abs(radius / expected_radius[:, None] - 1.0) <= _CONSENSUS_RADIUS_SHARE
    ok &= np.isfinite(radius) & plausible
    dist = hypot(pts[:, None, :, 0] - center[..., 0:1], pts[:, None, :, 1] - center[..., 1:2])
    agree = (found[:, None, :] & (np.abs(dist - radius[..., None]) <= _CONSENSUS_PX)).sum(axis=2)
    agree = np.where(ok, agree, -1)
    best = np.argmax(agree, axis=1)
    rows = np.arange(k)
    return center[rows, best], radius[rows, best], np.maximum(agree[rows, best], 0)


def _residuals(pts: FloatArray, center: FloatArray, radius: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """For rim points ``pts`` (K, n, 2) and circles ``center`` (K, 2), ``radius`` (K,): each point's offset from its
    circle's centre (dx, dy; (K, n) each) and its distance from the circle (K, n)."""
    dx = pts[..., 0] - center[:, 0:1]
    dy = pts[..., 1] - center[:, 1:2]
    d = np.maximum(hypot(dx, dy), 1e-9)
    return dx, dy, d - radius[:, None]


def _robust_scale(res: FloatArray, mask: BoolArray) -> FloatArray:
    """(K,) each row's residual scale from the median absolute residual of ``res`` (K, n) over ``mask`` (K, n)."""
    return np.asarray(np.maximum(_MAD_TO_SIGMA * _median_abs(res, mask), MIN_RESIDUAL_SCALE_PX), dtype=np.float64)


def _final_fit(
    pts: FloatArray, found: BoolArray, center: FloatArray, radius: FloatArray, outlier_sigmas: float
) -> CircleFit:
    """The fit of :func:`fit_circles` at the circles ``center`` (K, 2), ``radius`` (K,) it converged to: the points
    within ``outlier_sigmas`` robust sigmas are the inliers, and the centre's covariance is that of the inliers'
    geometric least squares."""
    k = len(radius)
    dx, dy, res = _residuals(pts, center, radius)
    scale = _robust_scale(res, found)
    inlier = found & (np.abs(res) <= outlier_sigmas * scale[:, None])
    count = inlier.sum(axis=1)
    ok = (count >= MIN_POINTS) & np.isfinite(radius) & (radius > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rms = np.sqrt(np.where(inlier, res * res, 0.0).sum(axis=1) / np.maximum(count, 1))
        d = res + radius[:, None]
        jac = np.stack([-dx / d, -dy / d, -np.ones_like(dx)], axis=-1) * inlier[..., None]
        normal = np.swapaxes(jac, 1, 2) @ jac + _DAMPING * np.eye(3)
        dof = np.maximum(count - 3, 1)
        var = np.where(inlier, res * res, 0.0).sum(axis=1) / dof
    cov = np.full((k, 2, 2), np.inf)
    if ok.any():
        inv = np.linalg.inv(normal[ok])
        cov[ok] = inv[:, :2, :2] * var[ok, None, None]
    return CircleFit(center, radius, inlier, rms, cov, ok)


def fit_circles(
    points_px: FloatArray,
    found: BoolArray,
    init_center_px: FloatArray,
    init_radius_px: FloatArray,
    iterations: int,
    outlier_sigmas: float,
    consensus: bool = True,
) -> CircleFit:
    """Fit a circle to each row of rim points, robust to up to about half of them being outliers.

    First every found point is weighted by how well it agrees with the initial circle (Tukey weights with a
    scale from the median absolute residual), and an algebraic fit gives a start that no single outlier can
    drag; then ``iterations`` Gauss-Newton steps on the geometric distances, each reweighting the points with
    Tukey's biweight on the current robust scale. Points within ``outlier_sigmas`` robust sigmas of the final
    circle are the inliers."""
    k = found.shape[0]
    pts = np.where(found[..., None], points_px, 0.0)
    center = init_center_px.astype(np.float64).copy()
    radius = init_radius_px.astype(np.float64).copy()

    def residuals(c: FloatArray, r: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        return _residuals(pts, c, r)

    def tukey(res: FloatArray, scale: FloatArray) -> FloatArray:
        u = res / (_TUKEY_C * scale[:, None])
        return np.where(found & (np.abs(u) < 1), (1 - u * u) ** 2, 0.0)

    # algebraic start, with the points weighted by their agreement with the initial circle
    _, _, res = residuals(center, radius)
    weight = tukey(res, _robust_scale(res, found))
    alg_center, alg_radius = algebraic_fit(pts, weight, center)
    usable = np.isfinite(alg_radius) & (weight.sum(axis=1) >= MIN_POINTS)
    center[usable] = alg_center[usable]
    radius[usable] = alg_radius[usable]

    # a long run of outliers (a cloak over a third of the rim) can hold that start between the two arcs; the
    # circle through three rim points that most points agree with cannot be held there
    _, _, res = residuals(center, radius)
    votes = (found & (np.abs(res) <= _CONSENSUS_PX)).sum(axis=1)
    doubtful = np.flatnonzero(votes < _CONSENSUS_DOUBT * found.sum(axis=1)) if consensus else np.zeros(0, np.intp)
    if doubtful.size:
        tri_center, tri_radius, tri_votes = _consensus_circles(pts[doubtful], found[doubtful], init_radius_px[doubtful])
        better = tri_votes > votes[doubtful]
        center[doubtful[better]] = tri_center[better]
        radius[doubtful[better]] = tri_radius[better]

    eye = np.eye(3)
    for _ in range(iterations):
        dx, dy, res = residuals(center, radius)
        weight = tukey(res, _robust_scale(res, found))
        jac = np.stack([-dx / (res + radius[:, None]), -dy / (res + radius[:, None]), -np.ones_like(dx)], axis=-1)
        wj = jac * weight[..., None]
        normal = np.swapaxes(wj, 1, 2) @ jac + _DAMPING * eye
        grad = (np.swapaxes(wj, 1, 2) @ res[..., None])[..., 0]
        solvable = (weight > 0).sum(axis=1) >= MIN_POINTS
        if not solvable.any():
            break
        step = np.zeros((k, 3))
        step[solvable] = -np.linalg.solve(normal[solvable], grad[solvable][..., None])[..., 0]
        center += step[:, :2]
        radius += step[:, 2]

    return _final_fit(pts, found, center, radius, outlier_sigmas)
