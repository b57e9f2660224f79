"""Table states the review tests share: a roster of two units, detected states with fresh ids, a line of three
red models and which of their places changed."""

from __future__ import annotations

import numpy as np

import rules
from tableref.config import load_config

INCH = 25.4
SETTINGS = load_config().review
SKIRMISH = rules.load_profile("skirmish")
TABLE = rules.Table(1829.0, 1219.0)
UNITS = (
    rules.Unit("red", player="A", move_in=6),
    rules.Unit("blue", player="B", move_in=6),
)


def roster(models: dict[str, tuple[str, float, float]], size_mm: float = 32.0) -> rules.TableState:
    return rules.TableState(
        TABLE, UNITS, tuple(rules.Model(k, u, x, y, rules.RoundBase(size_mm)) for k, (u, x, y) in models.items())
    )


def detected(
    points: list[tuple[float, float]], sizes: list[float] | None = None, sigma_mm: float = 0.3
) -> rules.TableState:
    """A detected state: fresh ids, no units, in a shuffled order (detection order means nothing)."""
    order = np.random.default_rng(len(points)).permutation(len(points))
    sizes = sizes or [32.0] * len(points)
    models = tuple(
        rules.Model(f"m{n + 1}", None, points[k][0], points[k][1], rules.RoundBase(sizes[k]), sigma_mm)
        for n, k in enumerate(order)
    )
    return rules.TableState(TABLE, (), models)


LINE = {"r1": ("red", 400.0, 400.0), "r2": ("red", 440.0, 400.0), "r3": ("red", 480.0, 400.0)}
STILL = {"r1": 0.0, "r2": 0.0, "r3": 0.0}
R3_CHANGED = {**STILL, "r3": 0.9}
R1_CHANGED = {**STILL, "r1": 0.9}
