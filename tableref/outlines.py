"""Base outlines as points on the table, for drawing: every base is an ellipse (a round one with equal semi-axes),
turned by its rotation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

import rules


def outline_mm(base: rules.RoundBase | rules.OvalBase, x_mm: float, y_mm: float, vertices: int) -> NDArray[np.float64]:
    """(vertices, 2) points on the outline of a base centred at (x_mm, y_mm)."""
    a, b = base.semi_axes_mm
    t = np.linspace(0.0, 2.0 * np.pi, vertices, endpoint=False)
    rot = np.deg2rad(base.rotation_deg)
    ex, ey = a * np.cos(t), b * np.sin(t)
    x = x_mm + ex * np.cos(rot) - ey * np.sin(rot)
    y = y_mm + ex * np.sin(rot) + ey * np.cos(rot)
    return np.stack([x, y], axis=1)


def outlines_mm(models: Sequence[rules.Model], vertices: int) -> NDArray[np.float64]:
    """(N, vertices, 2) outlines of the bases of ``models``, where each stands."""
    if not models:
        return np.empty((0, vertices, 2))
    return np.stack([outline_mm(m.base, m.x_mm, m.y_mm, vertices) for m in models])
