"""The wall-and-top rim model: it finds the footprint where the gradient peak is pushed outward by blur."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.profile import fit_rim_profiles

STEP_PX = 0.25


def blurred_profile(
    u: np.ndarray, rho: float, width: float, sigma: float, levels: tuple[float, float, float]
) -> np.ndarray:
    """Exact mean profile of a footprint at ``rho``: top, then a wall ``width`` wide, then mat, blurred by a
    Gaussian of ``sigma`` (px)."""
    mat, wall, top = levels
    phi = np.vectorize(lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2))))
    a = phi((rho - u) / sigma)
    b = phi((rho - width - u) / sigma)
    return np.asarray(mat * (1 - a) + wall * (a - b) + top * b)


def gradient_peak(u: np.ndarray, profile: np.ndarray) -> float:
    """Where the outward rise (wall to mat) is steepest: what a plain edge detector reports."""
    g = np.gradient(profile, u)
    i = int(np.argmax(g))
    return float(u[i] + 0.5 * (g[i - 1] - g[i + 1]) / (g[i - 1] - 2 * g[i] + g[i + 1]) * (u[1] - u[0]))


@pytest.mark.parametrize(
    ("px_per_mm", "wall_mm", "sigma_px", "levels", "noise", "tolerance_px"),
    [
        (4.0, 1.5, 1.0, (130.0, 25.0, 200.0), 0.0, 0.01),
        (2.0, 1.5, 1.0, (130.0, 25.0, 200.0), 0.0, 0.02),
        (2.0, 1.8, 1.2, (100.0, 30.0, 240.0), 0.5, 0.05),
        (1.0, 1.6, 0.9, (130.0, 25.0, 200.0), 0.3, 0.1),  # the wall is about the blur: the prior helps
        (2.0, 1.5, 1.0, (130.0, 25.0, 25.0), 0.3, 0.05),  # a black base: one edge, no wall to see
    ],
)
def test_rim_model_recovers_the_footprint(
    px_per_mm: float,
    wall_mm: float,
    sigma_px: float,
    levels: tuple[float, float, float],
    noise: float,
    tolerance_px: float,
) -> None:
    rng = np.random.default_rng(int(px_per_mm * 100 + wall_mm * 10))
    u = np.arange(-3.0 * px_per_mm, 1.5 * px_per_mm + STEP_PX / 2, STEP_PX)
    true_rho = float(rng.uniform(-0.4, 0.4))
    profile = blurred_profile(u, true_rho, wall_mm * px_per_mm, sigma_px, levels)
    profile = profile + rng.normal(0, noise, profile.shape)
    prior = (1.6 * px_per_mm, 0.4 * px_per_mm, 1.0)
    model = fit_rim_profiles(u, profile[None, :], np.ones((1, len(u))), prior, 1.0)
    assert model.ok[0]
    assert model.rho_px[0] == pytest.approx(true_rho, abs=tolerance_px)
    if levels[1] != levels[2]:
        # the plain gradient peak is off by much more where the wall is narrow against the blur
        peak_error = abs(gradient_peak(u, profile) - true_rho)
        assert abs(model.rho_px[0] - true_rho) <= max(peak_error, tolerance_px)


def test_rows_are_fitted_independently() -> None:
    u = np.arange(-6.0, 3.0 + STEP_PX / 2, STEP_PX)
    rhos = [-0.3, 0.0, 0.25]
    profiles = np.stack([blurred_profile(u, r, 3.0, 1.0, (130.0, 25.0, 200.0)) for r in rhos])
    model = fit_rim_profiles(u, profiles, np.ones_like(profiles), (3.2, 0.8, 1.0), 1.0)
    np.testing.assert_allclose(model.rho_px, rhos, atol=0.02)
    assert len(fit_rim_profiles(u, np.zeros((0, len(u))), np.zeros((0, len(u))), (3.2, 0.8, 1.0), 1.0).rho_px) == 0
