"""Robust plane-to-image homography fit with per-point outlier rejection and the fit's own uncertainty.

The model maps table millimetres to (undistorted) image pixels, because the measurement noise is in the image:
a corner is found to a fraction of a pixel, while its table position is known exactly from the spec.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.camera import as_points

# Median of |r| for a 2-D residual r with independent Gaussian axes of unit sigma (the Rayleigh median):
# dividing the median residual length by it estimates the per-axis sigma robustly.
RAYLEIGH_MEDIAN = math.sqrt(2.0 * math.log(2.0))

# A homography has 8 degrees of freedom, each point gives 2 equations: 4 points fit exactly, leaving no residual.
MIN_POINTS = 5


def apply_homography(h: NDArray[np.float64], points: NDArray[np.float64]) -> NDArray[np.float64]:
    """Map (N, 2) points through the (3, 3) homography ``h``."""
    pts = as_points(points, "points")
    w = pts @ h[2, :2] + h[2, 2]
    x = (pts @ h[0, :2] + h[0, 2]) / w
    y = (pts @ h[1, :2] + h[1, 2]) / w
    return np.column_stack([x, y])


def _normaliser(points: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    centre = points.mean(axis=0)
    scale = float(np.sqrt(np.mean(np.sum((points - centre) ** 2, axis=1))))
    return centre, scale if scale > 0 else 1.0


def _similarity(centre: NDArray[np.float64], scale: float) -> NDArray[np.float64]:
    """(3, 3) matrix of p -> (p - centre) / scale."""
    return np.array([[1 / scale, 0, -centre[0] / scale], [0, 1 / scale, -centre[1] / scale], [0, 0, 1]])


def _jacobians(h: NDArray[np.float64], pts: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """For u = H(p) with H[2, 2] = 1: d(u)/d(h11..h32) (N, 2, 8) and d(u)/d(p) (N, 2, 2)."""
    x, y = pts[:, 0], pts[:, 1]
    w = h[2, 0] * x + h[2, 1] * y + 1.0
    u = (h[0, 0] * x + h[0, 1] * y + h[0, 2]) / w
    v = (h[1, 0] * x + h[1, 1] * y + h[1, 2]) / w
    zero, one = np.zeros_like(x), np.ones_like(x)
    du = np.stack([x, y, one, zero, zero, zero, -u * x, -u * y], axis=1) / w[:, None]
    dv = np.stack([zero, zero, zero, x, y, one, -v * x, -v * y], axis=1) / w[:, None]
    jh = np.stack([du, dv], axis=1)
    jp = np.empty((len(x), 2, 2))
    jp[:, 0, 0] = (h[0, 0] - u * h[2, 0]) / w
    jp[:, 0, 1] = (h[0, 1] - u * h[2, 1]) / w
    jp[:, 1, 0] = (h[1, 0] - v * h[2, 0]) / w
    jp[:, 1, 1] = (h[1, 1] - v * h[2, 1]) / w
    return jh, jp


@dataclass(frozen=True, eq=False)
class HomographyFit:
    """A fitted table -> image homography.

    ``table_to_image`` (3, 3) maps table mm to image px; ``inliers`` (M,) marks the points kept, ``residuals_px``
    (M,) is each point's distance from the fit; ``sigma_px`` the per-axis scatter of the inliers. The parameter
    covariance is kept in normalised coordinates (centred, unit rms radius) where it is well conditioned.
    """

    table_to_image: NDArray[np.float64]
    inliers: NDArray[np.bool_]
    residuals_px: NDArray[np.float64]
    sigma_px: float
    _table_norm: NDArray[np.float64]
    _table_scale_mm: float
    _h_norm: NDArray[np.float64]
    _covariance: NDArray[np.float64]

    def __post_init__(self) -> None:
        for name in ("table_to_image", "inliers", "residuals_px", "_table_norm", "_h_norm", "_covariance"):
            getattr(self, name).flags.writeable = False

    def mapping_sigma_mm(self, points_mm: NDArray[np.float64]) -> NDArray[np.float64]:
        """(N,) per-axis 1-sigma error of the image -> table mapping at table points ``points_mm`` (N, 2),
        propagated from the corners' scatter: small inside the markers' hull, growing where it extrapolates."""
        pts = as_points(points_mm, "points_mm")
        if pts.shape[0] == 0:
            return np.zeros(0)
        norm = (pts - self._table_norm) / self._table_scale_mm
        jh, jp = _jacobians(self._h_norm, norm)
        a = np.linalg.solve(jp, jh)  # (N, 2, 8): table shift per parameter change
        cov = a @ self._covariance @ np.transpose(a, (0, 2, 1))
        return np.asarray(np.sqrt(np.trace(cov, axis1=1, axis2=2) / 2.0) * self._table_scale_mm, dtype=np.float64)


def _threshold(residuals: NDArray[np.float64], outlier_sigmas: float, outlier_floor_px: float) -> float:
    sigma = float(np.median(residuals)) / RAYLEIGH_MEDIAN
    return max(outlier_floor_px, outlier_sigmas * sigma)


def _least_squares(table: NDArray[np.float64], image: NDArray[np.float64]) -> NDArray[np.float64] | None:
    h, _ = cv2.findHomography(table, image, 0)
    if h is None or not np.all(np.isfinite(h)) or h[2, 2] == 0:
        return None
    return np.asarray(h / h[2, 2], dtype=np.float64)


def _prune(
    h: NDArray[np.float64],
    table: NDArray[np.float64],
    image: NDArray[np.float64],
    outlier_sigmas: float,
    outlier_floor_px: float,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]] | None:
    """From a starting fit, drop the worst point while it lies beyond the threshold, refitting each time, then
    re-admit every point within the final threshold. One at a time, because a gross outlier inflates its
    neighbours' residuals until it is gone."""
    inliers = np.ones(len(table), dtype=bool)
    fit: NDArray[np.float64] | None = h
    for _ in range(len(table) // 2):
        assert fit is not None
        residuals = np.linalg.norm(apply_homography(fit, table) - image, axis=1)
        limit = _threshold(residuals[inliers], outlier_sigmas, outlier_floor_px)
        worst = int(np.argmax(np.where(inliers, residuals, -1.0)))
        if residuals[worst] <= limit:
            break
        inliers[worst] = False
        fit = _least_squares(table[inliers], image[inliers])
        if fit is None:
            return None
    assert fit is not None
    residuals = np.linalg.norm(apply_homography(fit, table) - image, axis=1)
    keep = residuals <= _threshold(residuals[inliers], outlier_sigmas, outlier_floor_px)
    if keep.sum() < MIN_POINTS:
        return None
    if not np.array_equal(keep, inliers):
        fit = _least_squares(table[keep], image[keep])
        if fit is None:
            return None
    return fit, keep


def fit_homography(
    table_mm: NDArray[np.float64], image_px: NDArray[np.float64], outlier_sigmas: float, outlier_floor_px: float
) -> HomographyFit | None:
    """Robust table (M, 2) mm -> image (M, 2) px homography, or None when the points do not determine one.

    Two starts: a least-squares fit of all points (right when every point is good but the model is not exact,
    such as uncorrected lens distortion, which a median-based start would wrongly read as half the points being
    bad) and a least-median-of-squares fit (right when many points are grossly wrong). From each, points beyond
    ``outlier_sigmas`` robust sigmas (and at least ``outlier_floor_px``) are dropped one by one with a least-squares
    refit. The result keeping more points wins; on a tie, the one with the smaller scatter.
    """
    table = as_points(table_mm, "table_mm")
    image = as_points(image_px, "image_px")
    if table.shape[0] < MIN_POINTS:
        return None
    best: tuple[NDArray[np.float64], NDArray[np.bool_], float] | None = None
    median_start, _ = cv2.findHomography(table, image, cv2.LMEDS)
    for start in (_least_squares(table, image), median_start):
        if start is None or not np.all(np.isfinite(start)):
            continue
        pruned = _prune(np.asarray(start, dtype=np.float64), table, image, outlier_sigmas, outlier_floor_px)
        if pruned is None:
            continue
        h, keep = pruned
        rms = float(np.sqrt(np.mean(np.sum((apply_homography(h, table[keep]) - image[keep]) ** 2, axis=1))))
        if best is None or (keep.sum(), -rms) > (best[1].sum(), -best[2]):
            best = (h, keep, rms)
    if best is None:
        return None
    h, inliers, _ = best
    residuals = np.linalg.norm(apply_homography(h, table) - image, axis=1)
    return _with_covariance(h, table, image, inliers, residuals)


def _with_covariance(
    h: NDArray[np.float64],
    table: NDArray[np.float64],
    image: NDArray[np.float64],
    inliers: NDArray[np.bool_],
    residuals: NDArray[np.float64],
) -> HomographyFit | None:
    t_centre, t_scale = _normaliser(table[inliers])
    i_centre, i_scale = _normaliser(image[inliers])
    h_norm = _similarity(i_centre, i_scale) @ h @ np.linalg.inv(_similarity(t_centre, t_scale))
    h_norm /= h_norm[2, 2]
    n = int(inliers.sum())
    dof = 2 * n - 8
    sigma_px = float(np.sqrt(np.sum(residuals[inliers] ** 2) / dof)) if dof > 0 else math.inf
    jh, _ = _jacobians(h_norm, (table[inliers] - t_centre) / t_scale)
    jtj = np.einsum("nki,nkj->ij", jh, jh)
    try:
        covariance = (sigma_px / i_scale) ** 2 * np.linalg.inv(jtj)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(covariance)):
        covariance = np.full((8, 8), math.inf)
    return HomographyFit(h, inliers, residuals, sigma_px, t_centre, t_scale, h_norm, covariance)
