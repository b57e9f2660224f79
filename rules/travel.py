"""How one model travels between two places: around what, through what, up and down what, and at what price.

The seed "Movement & Engagement" (002), as it bears on a path:

- Models "cannot move through or end their movement overlapping another model, whether friendly or enemy, unless a
  rule explicitly allows it": a path goes around every other model's base.
- ``through_models``: the model "may move through friendly and enemy models. It may move through Dense Terrain;
  each separate segment of Dense Terrain passed through costs an additional 1" of movement". Its path ignores
  models and pays for each separate stretch through dense terrain on whatever path it takes
  (:class:`rules.paths.DensePathsFrom`). Other models cross dense terrain as open ground.
- ``fly``: it "may move over models and terrain features while moving": a straight line. It "cannot end ... on top
  of terrain unless a rule explicitly allows it"; the climb is the one rule of the seed that does.
- ``climb``: it "may spend half of its Move to climb directly to the top of any terrain feature that is 4" or
  taller, provided it can end that climb in a legal position".

Heights: a model stands on the table or on top of a solid piece (``Model.on_terrain``). A path leaves out the pieces
it starts or ends on top of (it walks off or onto them). Going up onto a top costs ``[movement] climb_move_fraction``
of the Move and coming down ``climb_down_move_fraction`` (nothing by default: the seed prices only the climb up).
Whether the model could go up at all is :func:`level_problems`'; whether its base fits on the top is the placement
check's (:func:`rules.check`), as for any place a move ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from rules.geometry import BaseArrays
from rules.lines import EPS_MM
from rules.paths import DensePathsFrom, PathsFrom, dense_path_mm, shortest_path_mm
from rules.profile import RuleProfile
from rules.state import BLOCKING_KINDS, Model, TableState, Unit

MM_PER_INCH = 25.4

# Ability names a unit may list in its "abilities" that change how its models travel.
FLY = "fly"
THROUGH_MODELS = "through_models"
CLIMB = "climb"

# Grown obstacles are drawn with 4 * 4 corners: a coarse polygon inside the true outline keeps the graph small
# and the path a lower bound.
_OBSTACLE_QUAD_SEGS = 4


def _inradius_mm(m: Model) -> float:
    return min(m.base.semi_axes_mm)


def _grown_terrain(world: TableState, kinds: tuple[str, ...], grow_mm: float, skip: set[str]) -> list[BaseGeometry]:
    return [
        shapely.buffer(shapely.Polygon(t.polygon), grow_mm, quad_segs=_OBSTACLE_QUAD_SEGS)
        for t in world.terrain
        if t.kind in kinds and t.id not in skip
    ]


def _model_obstacles(world: TableState, bases: BaseArrays, exclude: set[str], grow_mm: float) -> list[BaseGeometry]:
    """The grown bases of the models not in ``exclude``, at whatever height they stand: a model on the table and
    one on a top meet a path only where it changes height (a base on a top lies wholly on it, a base on the table
    wholly off it), and there a model in the way of the climb is in the way."""
    idx = np.array([k for k, m in enumerate(world.models) if m.id not in exclude], dtype=np.intp)
    if len(idx) == 0:
        return []
    outlines = bases.polygons(idx, _OBSTACLE_QUAD_SEGS)
    return list(shapely.buffer(outlines, grow_mm, quad_segs=_OBSTACLE_QUAD_SEGS))


def climb_cost_mm(unit: Unit | None, start_on: str | None, end_on: str | None, profile: RuleProfile) -> float:
    """The movement a change of height costs beyond the path: ``climb_move_fraction`` of the Move to go up onto a
    top the model did not start on, ``climb_down_move_fraction`` to come down from one (not for Fly, which moves
    over terrain). 0 when the Move is not known: the path stays a lower bound."""
    if start_on == end_on or unit is None or unit.move_in is None:
        return 0.0
    move_mm = unit.move_in * MM_PER_INCH
    cost = profile.movement.climb_move_fraction * move_mm if end_on is not None else 0.0
    if start_on is not None and FLY not in unit.abilities:
        cost += profile.movement.climb_down_move_fraction * move_mm
    return cost


def level_problems(
    model_id: str, unit: Unit | None, start_on: str | None, end_on: str | None, world: TableState, profile: RuleProfile
) -> list[str]:
    """Why model ``model_id`` of ``unit``, which started on top of ``start_on`` (None: on the table), could not
    have ended on top of ``end_on`` (a piece of ``world``): empty when it went onto no new top, or could."""
    if end_on is None or end_on == start_on:
        return []
    abilities = set(unit.abilities) if unit else set()
    if CLIMB not in abilities:
        if FLY in abilities:
            return [
                f"{model_id} ended on top of {end_on}: a unit with Fly cannot end on top of terrain unless a rule "
                "explicitly allows it (it has no climb)"
            ]
        return [f"{model_id} ended on top of {end_on}: only a model that may climb gets on top of terrain"]
    height = next(t.height_mm for t in world.terrain if t.id == end_on) or 0.0
    least = profile.movement.climb_min_height_mm
    if height < least - EPS_MM:
        return [
            f'{model_id} climbed onto {end_on}, {height / MM_PER_INCH:.2f}" tall: a climb reaches the top of '
            f'terrain {least / MM_PER_INCH:.2f}" or taller only'
        ]
    return []


@dataclass(frozen=True)
class _Way:
    """What a model's path meets: ``walls`` it goes around, ``dense`` areas it crosses at ``price_mm`` a stretch
    (None: dense terrain is open ground to it), ``extra_mm`` the change of height, and whether it flies."""

    fly: bool
    walls: list[BaseGeometry]
    dense: list[BaseGeometry] | None
    price_mm: float
    extra_mm: float


def _way(
    mover: Model,
    unit: Unit | None,
    world: TableState,
    bases: BaseArrays,
    profile: RuleProfile,
    passable: set[str],
    end_on: str | None,
) -> _Way:
    """What the path of ``mover`` meets from its top (``mover.on_terrain``) to ``end_on``: the arguments of
    :func:`model_path_mm`, less the ends."""
    abilities = set(unit.abilities) if unit else set()
    extra = climb_cost_mm(unit, mover.on_terrain, end_on, profile)
    price = profile.movement.dense_segment_cost_mm
    if FLY in abilities:
        return _Way(True, [], None, price, extra)
    # Grown by the mover's radius less the contact tolerance, so that ending in base contact is never blocked.
    grow = max(_inradius_mm(mover) - profile.contact.gap_mm, 0.0)
    tops = {t for t in (mover.on_terrain, end_on) if t is not None}
    solid = _grown_terrain(world, BLOCKING_KINDS, grow, tops)
    if THROUGH_MODELS in abilities:
        return _Way(False, solid, _grown_terrain(world, ("dense",), grow, set()), price, extra)
    models = _model_obstacles(world, bases, passable | {mover.id}, grow)
    return _Way(False, models + solid, None, price, extra)


def model_path_mm(
    mover: Model,
    start_mm: tuple[float, float],
    end_mm: tuple[float, float],
    unit: Unit | None,
    world: TableState,
    bases: BaseArrays,
    profile: RuleProfile,
    bound_mm: float,
    passable: set[str],
    end_on: str | None = None,
) -> float:
    """The shortest legal path of model ``mover`` (its base) from ``start_mm`` (on top of ``mover.on_terrain``)
    to ``end_mm`` (on top of ``end_on``; None: on the table) among the models and terrain of ``world`` (``bases``:
    its bases as arrays), under the abilities of its ``unit``: around every other model and solid terrain, except
    the models in ``passable``, plus what dense terrain and the change of height cost; ``inf`` when no path
    exists."""
    way = _way(mover, unit, world, bases, profile, passable, end_on)
    if way.fly:
        return math.hypot(end_mm[0] - start_mm[0], end_mm[1] - start_mm[1]) + way.extra_mm
    if way.dense is None:
        return shortest_path_mm(start_mm, end_mm, way.walls, bound_mm) + way.extra_mm
    return dense_path_mm(start_mm, end_mm, way.walls, way.dense, way.price_mm, bound_mm) + way.extra_mm


class ModelPaths:
    """The shortest legal paths of one model from one start to many ends on the table, under the rules of
    :func:`model_path_mm` (same arguments, less the end): the obstacles and their graph are built once."""

    def __init__(
        self,
        mover: Model,
        start_mm: tuple[float, float],
        unit: Unit | None,
        world: TableState,
        bases: BaseArrays,
        profile: RuleProfile,
        bound_mm: float,
        passable: set[str],
    ) -> None:
        self.start_mm = start_mm
        self.way = _way(mover, unit, world, bases, profile, passable, None)
        self.paths: PathsFrom | DensePathsFrom | None = None
        if self.way.fly:
            return
        if self.way.dense is None:
            self.paths = PathsFrom(start_mm, self.way.walls, bound_mm)
        else:
            self.paths = DensePathsFrom(start_mm, self.way.walls, self.way.dense, self.way.price_mm, bound_mm)

    def length_mm(self, end_mm: tuple[float, float]) -> float:
        """The shortest legal path's length to ``end_mm``, as :func:`model_path_mm` finds it."""
        if self.paths is None:
            return math.hypot(end_mm[0] - self.start_mm[0], end_mm[1] - self.start_mm[1]) + self.way.extra_mm
        if isinstance(self.paths, PathsFrom):
            return self.paths.length_mm(end_mm)[0] + self.way.extra_mm
        return self.paths.length_mm(end_mm) + self.way.extra_mm
