"""Moves between two states: plans of the skirmish rules, paths around models, abilities, melee in Legion."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest

import rules
from rules.movement import check_moves, move_findings
from tests.rules.conftest import duel, model, moved, state_of

INCH = 25.4
SKIRMISH = rules.load_profile("skirmish")
LEGION = rules.load_profile("legion")


@pytest.mark.parametrize(
    ("abilities", "distance_in", "enemy_gap_in", "action", "legal"),
    [
        ([], 5.9, None, "move", True),
        ([], 6.1, None, "advance", True),  # beyond a Move, not ending engaged: an Advance
        ([], 12.1, None, None, False),
        (["charge"], 6.1, 1.5, "charge", True),  # ends 1.5" from an enemy: a Charge of up to 3"
        (["charge"], 9.1, 1.5, "advance+charge", True),
        ([], 6.1, 1.5, None, False),  # no Charge ability, cannot Advance into engagement
        ([], 5.0, 1.5, "move", True),  # a normal move may end within engagement range
    ],
)
def test_skirmish_plans(
    abilities: list[str], distance_in: float, enemy_gap_in: float | None, action: str | None, legal: bool
) -> None:
    end_x = 300.0 + distance_in * INCH
    enemy_x = end_x + 32.0 + enemy_gap_in * INCH if enemy_gap_in is not None else 1700.0
    before = duel(abilities, enemy_x)
    after = moved(before, r1=(end_x, 600.0))
    (verdict,) = check_moves(before, after, SKIRMISH)
    assert (verdict.action, verdict.legal) == (action, legal), verdict.problems
    assert verdict.models[0].distance_mm == pytest.approx(distance_in * INCH)
    assert bool(move_findings([verdict])) is not legal


def _wall() -> list[dict[str, Any]]:
    # Five touching 32 mm bases across the straight line from (300, 600) to (440, 600): y from 520 to 680.
    return [model(f"w{k}", "wall", 370.0, 536.0 + 32.0 * k, 32) for k in range(5)]


@pytest.mark.parametrize(("abilities", "around"), [([], True), (["fly"], False), (["through_models"], False)])
def test_paths_go_around_models_unless_an_ability_lets_them_pass(abilities: list[str], around: bool) -> None:
    before = duel(abilities, extra=_wall())
    after = moved(before, r1=(440.0, 600.0))
    (verdict,) = check_moves(before, after, SKIRMISH)
    m = verdict.models[0]
    assert m.distance_mm == pytest.approx(140.0)
    if around:
        # Around the end base (centre (370, 536), grown to radius 16 + 16 - 1): two tangents and the arc between.
        radius, to_centre = 31.0, math.hypot(70.0, 64.0)
        tangent = math.sqrt(to_centre**2 - radius**2)
        arc = 2 * math.pi - 2 * math.atan2(70.0, 64.0) - 2 * math.acos(radius / to_centre)
        true_mm = 2 * tangent + radius * arc
        assert true_mm - 1.5 < m.path_mm <= true_mm + 1e-6
        assert verdict.action == "advance"
    else:
        assert m.path_mm == pytest.approx(140.0)
        assert verdict.action == "move"


def test_path_is_a_lower_bound_close_to_the_true_detour() -> None:
    # One 40 mm base squarely in the way of a 32 mm base: the true detour hugs a circle of radius 20 + 16 - 1.
    units = [{"id": "red", "player": "A", "move_in": 6}, {"id": "wall", "player": "A", "move_in": 6}]
    before = state_of([model("r1", "red", 300.0, 600.0, 32), model("o1", "wall", 400.0, 600.0, 40)], units)
    after = moved(before, r1=(500.0, 600.0))
    (verdict,) = check_moves(before, after, SKIRMISH)
    radius, half = 35.0, 100.0
    tangent = math.sqrt(half**2 - radius**2)
    # Two tangents from the end points and the arc between the tangent points.
    arc = 2 * radius * (math.pi / 2 - math.acos(radius / half))
    true_detour = 2 * tangent + arc
    assert 200.0 < verdict.models[0].path_mm <= true_detour + 1e-6
    assert verdict.models[0].path_mm > true_detour - 1.0


def test_dense_terrain_costs_an_inch_a_piece_when_moving_through_models() -> None:
    before = duel(["through_models"])
    woods = {"id": "woods", "kind": "dense", "polygon": [[380, 500], [400, 500], [400, 700], [380, 700]]}
    before = state_of(
        [rules.state_to_dict(before)["models"][0], rules.state_to_dict(before)["models"][1]],
        rules.state_to_dict(before)["units"],
        terrain=[woods],
    )
    after = moved(before, r1=(450.0, 600.0))
    (verdict,) = check_moves(before, after, SKIRMISH)
    assert verdict.models[0].path_mm == pytest.approx(150.0 + INCH)


def test_leaving_engagement_and_advancing_both_need_the_attack_action() -> None:
    before = duel([], enemy_x=300.0 + 32.0 + 0.5 * INCH)  # engaged: 0.5" apart
    after = moved(before, r1=(300.0 - 8.0 * INCH, 600.0))  # 8" away: beyond a Move
    (verdict,) = check_moves(before, after, SKIRMISH)
    assert not verdict.legal
    assert any("Attack Action" in p for p in verdict.problems)


@pytest.mark.parametrize(
    ("excess_mm", "sigma_mm", "legal", "call"),
    [
        (-2.0, 0.3, True, rules.CLEAR),
        (0.3, 0.3, True, rules.CLOSE),
        (-0.3, 0.3, True, rules.CLOSE),
        (3.0, 0.3, True, rules.CLEAR),
    ],
)
def test_distance_in_doubt_gets_the_benefit_and_a_close_call(
    excess_mm: float, sigma_mm: float, legal: bool, call: str
) -> None:
    before = duel([], sigma_mm=sigma_mm)
    after = moved(before, r1=(300.0 + 6 * INCH + excess_mm, 600.0))
    (verdict,) = check_moves(before, after, SKIRMISH, actions={"red": "move"} if excess_mm < 1 else None)
    assert verdict.legal is legal
    assert verdict.call == call


def test_declared_action_is_judged_as_declared() -> None:
    before = duel([])
    after = moved(before, r1=(300.0 + 7 * INCH, 600.0))
    (verdict,) = check_moves(before, after, SKIRMISH, actions={"red": "move"})
    assert verdict.declared and verdict.action == "move" and not verdict.legal
    (finding,) = move_findings([verdict])
    assert finding.kind == "illegal_move" and finding.call == rules.CLEAR
    assert finding.limit_mm == pytest.approx(6 * INCH)


def test_climbing_costs_half_a_move() -> None:
    tower = {
        "id": "tower",
        "kind": "solid",
        "height_mm": 120.0,
        "polygon": [[400, 550], [500, 550], [500, 650], [400, 650]],
    }
    units = [{"id": "red", "player": "A", "move_in": 6, "abilities": ["climb"]}]
    before = state_of([model("r1", "red", 300.0, 600.0, 32)], units, terrain=[tower])
    after = moved(before, r1=(450.0, 600.0))
    on_top = dataclasses.replace(after, models=(dataclasses.replace(after.models[0], on_terrain="tower"),))
    (verdict,) = check_moves(before, on_top, SKIRMISH)
    assert verdict.models[0].path_mm == pytest.approx(150.0 + 3 * INCH)
    # A state that does not say the model stands on the tower has it in the tower: no climb, a placement problem.
    (verdict,) = check_moves(before, after, SKIRMISH)
    assert verdict.models[0].path_mm == pytest.approx(150.0)
    assert [f.kind for f in rules.check(after, SKIRMISH)] == ["in_terrain"]
    assert rules.check(on_top, SKIRMISH) == []


def test_models_that_did_not_move_are_not_judged() -> None:
    before = duel([], sigma_mm=0.5)
    after = moved(before, r1=(301.5, 600.0))
    assert check_moves(before, after, SKIRMISH) == []


# --- Legion: moving into melee -----------------------------------------------------------------------------------


def legion_state(leader_contact: bool, straggler: bool) -> tuple[rules.TableState, rules.TableState]:
    units = [
        {"id": "clones", "player": "Will", "leader": "c1"},
        {"id": "droids", "player": "Tony", "leader": "d1"},
    ]
    before_models = [model(f"c{k}", "clones", 300.0 + 28.0 * k, 300.0, 27) for k in range(1, 4)]
    before_models += [model(f"d{k}", "droids", 300.0 + 28.0 * k, 600.0, 27) for k in range(1, 4)]
    before = state_of(before_models, units)
    targets = {f"c{k}": (300.0 + 28.0 * k, 573.0) for k in range(1, 4)}
    if not leader_contact:
        targets["c1"] = (328.0, 540.0)
    if straggler:
        targets["c3"] = (600.0, 400.0)
    return before, moved(before, **targets)


@pytest.mark.parametrize(
    ("leader_contact", "straggler", "problem"),
    [
        (True, False, None),
        (False, False, "leader c1 is not in base contact"),
        (True, True, "c3 neither in base contact"),
    ],
)
def test_moving_into_melee(leader_contact: bool, straggler: bool, problem: str | None) -> None:
    before, after = legion_state(leader_contact, straggler)
    verdicts = {v.unit: v for v in check_moves(before, after, LEGION)}
    verdict = verdicts["clones"]
    assert verdict.action == "melee"
    if problem is None:
        assert verdict.legal, verdict.problems
    else:
        assert not verdict.legal
        assert any(problem in p for p in verdict.problems), verdict.problems


@pytest.mark.parametrize(
    ("move_in", "dx_in", "legal", "call", "note"),
    [
        (6.0, 5.0, True, rules.CLEAR, ""),
        (6.0, 14.0, False, rules.CLEAR, ""),
        # no Move to judge the distance against: legal as far as the rest goes, the distance open
        (None, 5.0, True, rules.CLOSE, "the unit's Move is not known"),
        (None, 14.0, True, rules.CLOSE, "the unit's Move is not known"),
    ],
)
def test_a_move_of_a_unit_whose_move_is_unknown_is_open(
    move_in: float | None, dx_in: float, legal: bool, call: str, note: str
) -> None:
    units = [{"id": "red", "player": "A", **({"move_in": move_in} if move_in else {})}]
    before = rules.state_from_dict(
        {"table": {"width_mm": 1800, "depth_mm": 1200}, "units": units,
         "models": [{"id": "r1", "unit": "red", "x_mm": 300, "y_mm": 300, "base": {"diameter_mm": 32}}]}
    )  # fmt: skip
    after = dataclasses.replace(before, models=(dataclasses.replace(before.models[0], x_mm=300 + dx_in * 25.4),))
    (verdict,) = rules.check_moves(before, after, rules.load_profile("skirmish"))
    assert (verdict.legal, verdict.call) == (legal, call)
    assert verdict.note.startswith(note)


def test_a_model_ringed_in_by_models_has_no_legal_path_and_says_so() -> None:
    # a ring of 32 mm bases, touching, round the place r1 ends: no way in without passing through a model
    ring = [
        model(f"w{k}", "wall", 700.0 + 64.0 * math.cos(k * math.pi / 6), 600.0 + 64.0 * math.sin(k * math.pi / 6), 32)
        for k in range(12)
    ]
    before = duel([], extra=ring)
    after = moved(before, r1=(700.0, 600.0))
    (verdict,) = check_moves(before, after, SKIRMISH)
    (m,) = verdict.models
    assert m.distance_mm == pytest.approx(400.0) and not m.has_path
    assert not verdict.legal
    assert any("could not have got there by any legal path" in p for p in verdict.problems), verdict.problems
    # JSON has no infinity: the verdict's data says "no path" as null, and reads as strict JSON
    data = json.loads(json.dumps(rules.moves_document("skirmish", [verdict]), allow_nan=False))
    assert data["moves"][0]["models"][0]["path_mm"] is None
    assert data["moves"][0]["models"][0]["distance_mm"] == 400.0
