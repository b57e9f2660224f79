"""Robust circle fits: exact on clean points, unmoved by outliers up to about a third of the rim, honest
covariance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.circlefit import algebraic_fit, fit_circles

CENTER = np.array([250.37, 180.81])
RADIUS = 42.6


def rim_points(
    rng: np.random.Generator, count: int, noise_px: float, arc_deg: float = 360.0, trials: int = 1
) -> np.ndarray:
    """(trials, count, 2) points on the circle over ``arc_deg``, with Gaussian radial noise."""
    angle = np.deg2rad(np.linspace(0, arc_deg, count, endpoint=arc_deg < 360))
    r = RADIUS + rng.normal(0, noise_px, (trials, count))
    return np.stack([CENTER[0] + r * np.cos(angle), CENTER[1] + r * np.sin(angle)], axis=-1)


def test_algebraic_fit_is_exact_on_exact_points() -> None:
    pts = rim_points(np.random.default_rng(0), 40, 0.0)
    center, radius = algebraic_fit(pts, np.ones(pts.shape[:2]), np.array([[240.0, 170.0]]))
    np.testing.assert_allclose(center[0], CENTER, atol=1e-9)
    assert radius[0] == pytest.approx(RADIUS, abs=1e-9)


@pytest.mark.parametrize(
    ("outlier_share", "arc_deg", "noise_px", "tolerance_px"),
    [
        (0.0, 360, 0.05, 0.03),
        (0.2, 360, 0.05, 0.03),  # a weapon and a cloak across the rim
        (0.35, 360, 0.05, 0.05),
        (0.2, 180, 0.05, 0.08),  # half the rim hidden, and a fifth of the rest wrong
        (0.0, 360, 0.3, 0.1),
    ],
)
def test_outliers_do_not_pull_the_centre(
    outlier_share: float, arc_deg: float, noise_px: float, tolerance_px: float
) -> None:
    rng = np.random.default_rng(7)
    pts = rim_points(rng, 96, noise_px, arc_deg)
    count = pts.shape[1]
    # a contiguous run of rays sees something else, all of it outside the rim (a figure over it)
    bad = np.zeros(count, np.bool_)
    start = int(rng.integers(count))
    bad[(start + np.arange(int(outlier_share * count))) % count] = True
    direction = (pts[0] - CENTER) / np.linalg.norm(pts[0] - CENTER, axis=1)[:, None]
    pts[0, bad] += direction[bad] * rng.uniform(2.0, 12.0, bad.sum())[:, None]
    start_center = CENTER + np.array([[1.5, -1.2]])
    fit = fit_circles(pts, np.ones((1, count), np.bool_), start_center, np.array([RADIUS + 1.0]), 8, 3.0)
    assert fit.ok[0]
    assert math.dist(fit.center_px[0], CENTER) < tolerance_px
    assert abs(fit.radius_px[0] - RADIUS) < tolerance_px
    # the outliers are found as such, the rest kept
    assert not fit.inlier[0, bad].any()
    assert fit.inlier[0, ~bad].mean() > 0.95


def test_missing_points_are_ignored_and_too_few_fail() -> None:
    rng = np.random.default_rng(1)
    pts = rim_points(rng, 48, 0.05, trials=2)
    found = np.ones((2, 48), np.bool_)
    found[0, ::2] = False  # half the rays saw nothing: still a circle
    found[1, 4:] = False  # four points: not enough to trust
    pts[0, ~found[0]] = 1e6  # whatever a missing point holds must not matter
    fit = fit_circles(pts, found, np.tile(CENTER, (2, 1)), np.full(2, RADIUS), 8, 3.0)
    assert fit.ok[0] and not fit.ok[1]
    assert math.dist(fit.center_px[0], CENTER) < 0.05


@pytest.mark.parametrize(("arc_deg", "noise_px"), [(360, 0.1), (200, 0.1), (360, 0.4)])
def test_centre_covariance_matches_the_scatter(arc_deg: float, noise_px: float) -> None:
    rng = np.random.default_rng(5)
    trials = 400
    pts = rim_points(rng, 64, noise_px, arc_deg, trials)
    fit = fit_circles(
        pts, np.ones((trials, 64), np.bool_), np.tile(CENTER, (trials, 1)), np.full(trials, RADIUS), 8, 3.0
    )
    err = fit.center_px - CENTER
    predicted = np.sqrt(np.median(fit.center_cov_px2[:, [0, 1], [0, 1]], axis=0))
    observed = err.std(axis=0)
    np.testing.assert_allclose(observed, predicted, rtol=0.2)
