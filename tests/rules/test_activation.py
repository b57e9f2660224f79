"""Activation facts: a melee weapon, the Attack Action, a Charge on its own, declared actions, friends blocking."""

from __future__ import annotations

from typing import Any

import pytest

import rules
from rules.movement import check_moves
from tests.rules.conftest import duel, model, moved, state_of

INCH = 25.4
SKIRMISH = rules.load_profile("skirmish")
LEGION = rules.load_profile("legion")


@pytest.mark.parametrize(
    ("melee", "legal", "problem"),
    [
        (None, True, None),  # not said: the unit has a melee weapon
        (True, True, None),
        (False, False, "without a melee weapon"),
    ],
)
def test_only_a_unit_with_a_melee_weapon_may_move_into_melee(
    melee: bool | None, legal: bool, problem: str | None
) -> None:
    clones: dict[str, Any] = {"id": "clones", "player": "Will", "leader": "c1"}
    if melee is not None:
        clones["melee"] = melee
    units = [clones, {"id": "droids", "player": "Tony", "leader": "d1"}]
    models = [model(f"c{k}", "clones", 300.0 + 28.0 * k, 300.0, 27) for k in range(1, 4)]
    models += [model(f"d{k}", "droids", 300.0 + 28.0 * k, 600.0, 27) for k in range(1, 4)]
    before = state_of(models, units)
    after = moved(before, **{f"c{k}": (300.0 + 28.0 * k, 573.0) for k in range(1, 4)})
    (verdict,) = check_moves(before, after, LEGION)
    assert (verdict.action, verdict.legal) == ("melee", legal), verdict.problems
    assert problem is None or any(problem in p for p in verdict.problems), verdict.problems


@pytest.mark.parametrize("melee", [1, "no", None])
def test_melee_must_be_true_or_false(melee: Any) -> None:
    data = {"table": {"width_mm": 100, "depth_mm": 100}, "units": [{"id": "u", "melee": melee}]}
    if melee is None:
        assert rules.state_from_dict(data).units[0].melee is True
        return
    with pytest.raises(rules.StateError, match="'melee' must be true or false"):
        rules.state_from_dict(data)


def test_a_unit_without_a_melee_weapon_survives_a_round_trip() -> None:
    state = state_of([], [{"id": "u", "melee": False}, {"id": "v"}])
    data = rules.state_to_dict(state)
    assert data["units"][0]["melee"] is False and "melee" not in data["units"][1]
    assert rules.state_from_dict(data) == state


# Starting 0.5" from an enemy: stepping 3" back leaves engagement range; 8" forward in the open is an Advance.
ENGAGED_X = 300.0 + 32.0 + 0.5 * INCH
FAR_X = 1700.0


@pytest.mark.parametrize(
    ("enemy_x", "dx_in", "actions", "action", "legal", "attack", "problem"),
    [
        (ENGAGED_X, -3.0, {"action": "move", "attack_used": True}, "move", False, True, "after the Attack Action"),
        (ENGAGED_X, -3.0, {"attack_used": True}, None, False, True, "after the Attack Action"),
        (ENGAGED_X, -3.0, {"action": "move", "attack_used": False}, "move", True, True, None),
        (ENGAGED_X, -3.0, "move", "move", True, True, None),
        (FAR_X, 8.0, {"attack_used": True}, None, False, False, "as advance: Advanced after the Attack Action"),
        (FAR_X, 8.0, {"action": "advance", "attack_used": True}, "advance", False, True, "an Advance uses"),
        (FAR_X, 8.0, "advance", "advance", True, True, None),
        (FAR_X, 5.0, {"attack_used": True}, "move", True, False, None),  # a Move does not need it
    ],
)
def test_the_attack_action(
    enemy_x: float, dx_in: float, actions: Any, action: str | None, legal: bool, attack: bool, problem: str | None
) -> None:
    before = duel([], enemy_x)
    after = moved(before, r1=(300.0 + dx_in * INCH, 600.0))
    (verdict,) = check_moves(before, after, SKIRMISH, {"red": actions})
    assert (verdict.action, verdict.legal, verdict.attack_action) == (action, legal, attack), verdict.problems
    assert problem is None or any(problem in p for p in verdict.problems), verdict.problems


@pytest.mark.parametrize(
    ("abilities", "distance_in", "declared", "action", "legal", "allowance_in"),
    [
        (["charge"], 2.9, "charge-only", "charge-only", True, 3.0),  # half of a 6" Move
        (["charge"], 3.2, "charge-only", "charge-only", False, 3.0),
        (["charge"], 3.2, "charge", "charge", True, 9.0),  # the Charge beside a Move
        ([], 2.9, "charge-only", "charge-only", False, 3.0),  # no rule gives it Charge
        (["charge"], 2.9, None, "move", True, 6.0),  # undeclared: a Move does it, cheapest
    ],
)
def test_a_charge_on_its_own(
    abilities: list[str], distance_in: float, declared: str | None, action: str, legal: bool, allowance_in: float
) -> None:
    end_x = 300.0 + distance_in * INCH
    before = duel(abilities, end_x + 32.0 + 1.0 * INCH)  # ends 1" from the enemy
    after = moved(before, r1=(end_x, 600.0))
    (verdict,) = check_moves(before, after, SKIRMISH, {"red": declared} if declared else None)
    assert (verdict.action, verdict.legal) == (action, legal), verdict.problems
    assert verdict.allowance_mm == pytest.approx(allowance_in * INCH)


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ({"red": "sprint"}, "actions['red']: unknown action 'sprint'; expected one of move, charge-only, charge"),
        ({"red": {"action": "fly"}}, "unknown action 'fly'"),
        ({"red": {"attack_used": "yes"}}, "attack_used must be true or false"),
        ({"red": {"act": "move"}}, "unknown keys ['act']; expected action, attack_used"),
        ({"red": 3}, "expected an action name"),
        (["red"], "expected an object mapping unit ids to actions"),
    ],
)
@pytest.mark.parametrize("profile", [SKIRMISH, LEGION, rules.load_profile("40k")])
def test_bad_actions_are_a_named_error(actions: Any, message: str, profile: rules.RuleProfile) -> None:
    before = duel([], FAR_X)
    after = moved(before, r1=(400.0, 600.0))
    with pytest.raises(rules.ActionError) as caught:
        check_moves(before, after, profile, actions)
    assert message in str(caught.value)
    assert isinstance(caught.value, rules.RulesError)


def _wall_state(abilities: list[str], wall_unit: str) -> rules.TableState:
    units = [
        {"id": "red", "player": "A", "move_in": 6, "abilities": abilities},
        {"id": "pals", "player": "A", "move_in": 6},
        {"id": "blue", "player": "B", "move_in": 6},
    ]
    # Five touching bases across the line from (300, 600) to (440, 600): around them is over 6".
    wall = [model(f"w{k}", wall_unit, 370.0, 536.0 + 32.0 * k, 32) for k in range(5)]
    return state_of([model("r1", "red", 300.0, 600.0, 32), *wall], units)


@pytest.mark.parametrize(
    ("abilities", "wall_unit", "wall_moves", "blocked"),
    [
        ([], "red", False, True),  # the mover's own unit-mates block
        ([], "pals", False, True),  # so do friendly models of another unit
        ([], "blue", False, True),
        ([], "red", True, False),  # unit-mates that moved too may have stepped aside first
        (["through_models"], "red", False, False),
        (["fly"], "red", False, False),
    ],
)
def test_friendly_models_block_unless_an_ability_lets_them_pass(
    abilities: list[str], wall_unit: str, wall_moves: bool, blocked: bool
) -> None:
    before = _wall_state(abilities, wall_unit)
    positions = {"r1": (440.0, 600.0)}
    if wall_moves:
        # 4.5" on: past where r1 ends, which it may not end overlapping
        positions.update({f"w{k}": (370.0 + 4.5 * INCH, 536.0 + 32.0 * k) for k in range(5)})
    after = moved(before, **positions)
    (verdict,) = [v for v in check_moves(before, after, SKIRMISH, {"red": "move"}) if v.unit == "red"]
    path = next(m.path_mm for m in verdict.models if m.model == "r1")
    assert (path > 6 * INCH) is blocked, path
    assert verdict.legal is not blocked, verdict.problems
