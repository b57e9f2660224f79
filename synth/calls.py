"""Calls at the line: rendered pairs of enemy models placed at known gaps either side of each line a rule draws,
measured by the pipeline and judged, to count wrong ``clear`` calls and how often the referee says ``close``.

A call is wrong when it is ``clear`` and on the other side of the line from the truth; a ``close`` call is never
wrong, only unhelpful, so the share of ``close`` calls is the price of never being wrong.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

import rules
from calibration.spec import TableSpec, load_table_spec
from synth.generate import (
    RESOLUTIONS,
    RIM_HEIGHTS_MM,
    make_figure,
    plain_scene,
    random_camera,
    random_look,
)
from synth.scene import BASE_COLOURS, Scene, SceneModel

# The lines of the issue's test plan (mm): base contact, 1", 2" and 3"; and the distances placed either side.
LINES_MM: dict[str, float] = {"base contact": 1.0, '1"': 25.4, '2"': 50.8, '3"': 76.2}
OFFSETS_MM: tuple[float, ...] = (0.2, 0.5, 1.0, 2.0)
PAIR_BASES_MM: tuple[float, ...] = (25.0, 28.5, 32.0, 40.0)
# Pairs stand on a grid kept clear of the markers at the table's corners and edge midpoints.
_GRID_INSET_MM = (190.0, 210.0)
_MARKER_CLEARANCE_MM = 150.0


@dataclass(frozen=True)
class LinePair:
    """Two enemy models ``a`` and ``b`` placed ``gap_mm`` apart, edge to edge, to be judged against ``line``."""

    a: str
    b: str
    line: str
    limit_mm: float
    gap_mm: float


@dataclass(frozen=True)
class CallResult:
    """One pair as the referee judged it. ``wrong`` means a ``clear`` call on the wrong side of the line."""

    pair: LinePair
    measured_gap_mm: float
    sigma_mm: float
    call: str
    within: bool

    @property
    def truth_within(self) -> bool:
        return self.pair.gap_mm <= self.pair.limit_mm

    @property
    def wrong(self) -> bool:
        return self.call == rules.CLEAR and self.within != self.truth_within

    @property
    def margin_mm(self) -> float:
        """How far the true gap is from the line."""
        return abs(self.pair.gap_mm - self.pair.limit_mm)


def _grid(table: TableSpec, count: int) -> list[tuple[float, float]]:
    cols = math.ceil(math.sqrt(count * table.width_mm / table.depth_mm))
    rows = math.ceil(count / cols) + 1
    xs = np.linspace(_GRID_INSET_MM[0], table.width_mm - _GRID_INSET_MM[0], cols)
    ys = np.linspace(_GRID_INSET_MM[1], table.depth_mm - _GRID_INSET_MM[1], rows)
    markers = np.array([[m.x_mm, m.y_mm] for m in table.markers])
    spots = [
        (float(x), float(y))
        for y in ys
        for x in xs
        if np.min(np.hypot(markers[:, 0] - x, markers[:, 1] - y)) > _MARKER_CLEARANCE_MM
    ]
    return spots[:count]


def line_pairs_scene(
    seed: int,
    resolution: str,
    lines_mm: dict[str, float] | None = None,
    offsets_mm: Sequence[float] = OFFSETS_MM,
    table: TableSpec | None = None,
) -> tuple[Scene, list[LinePair]]:
    """A table of enemy pairs: for every line and every offset, one pair at ``line - offset`` and one at
    ``line + offset``, each pair turned at random, on bases of several sizes, colours and rim heights, with
    figures. Camera, lens, mat and light as :func:`synth.generate.random_scene` makes them."""
    lines = LINES_MM if lines_mm is None else lines_mm
    rng = np.random.default_rng(seed)
    table = load_table_spec() if table is None else table
    wanted = [(name, limit, sign * off) for name, limit in lines.items() for off in offsets_mm for sign in (-1, 1)]
    spots = _grid(table, len(wanted))
    camera = random_camera(rng, table, RESOLUTIONS[resolution])
    mat, lighting, imaging = random_look(rng, resolution)
    colours = list(BASE_COLOURS)
    units, models, pairs = [], [], []
    for k, ((name, limit, offset), (cx, cy)) in enumerate(zip(wanted, spots, strict=False)):
        d_a, d_b = (float(rng.choice(PAIR_BASES_MM)) for _ in range(2))
        gap = limit + offset
        # Turn the pair at random; the centre line runs through the grid spot.
        angle = rng.uniform(0.0, math.pi)
        span = d_a / 2 + gap + d_b / 2
        ux, uy = math.cos(angle), math.sin(angle)
        a_xy = (cx - ux * span / 2, cy - uy * span / 2)
        b_xy = (cx + ux * span / 2, cy + uy * span / 2)
        pair = LinePair(f"p{k}a", f"p{k}b", name, limit, gap)
        pairs.append(pair)
        for model_id, side, diameter, (x, y) in ((pair.a, "red", d_a, a_xy), (pair.b, "blue", d_b, b_xy)):
            unit_id = f"p{k}{side}"
            units.append(rules.Unit(id=unit_id, player=side))
            colour = colours[int(rng.integers(len(colours)))]
            paint = (tuple(rng.uniform(0.1, 0.9, 3)), tuple(rng.uniform(0.1, 0.9, 3)))
            models.append(
                SceneModel(
                    model=rules.Model(model_id, unit_id, x, y, rules.RoundBase(diameter)),
                    rim_height_mm=float(rng.choice(RIM_HEIGHTS_MM)),
                    rim_colour=colour,
                    top_colour=colour,
                    facing_deg=float(rng.uniform(0.0, 360.0)),
                    figure=make_figure(rng, diameter, paint),
                )
            )
    scene = replace(
        plain_scene(camera, table, models),
        units=tuple(units),
        mat=mat,
        lighting=lighting,
        imaging=imaging,
    )
    return scene, pairs


def judge_pairs(state: rules.TableState, pairs: Sequence[LinePair], close_sigmas: float) -> list[CallResult]:
    """Judge every pair whose two models are in ``state`` (ids carried over from the truth) against its line."""
    present = {m.id for m in state.models}
    out = []
    for pair in pairs:
        if pair.a not in present or pair.b not in present:
            continue
        gap, sigma = rules.pair_gap(state, pair.a, pair.b)
        verdict = rules.judge_line(pair.line, gap, sigma, pair.limit_mm, close_sigmas, state.measured)
        out.append(CallResult(pair, gap, sigma, verdict.call, verdict.within))
    return out
