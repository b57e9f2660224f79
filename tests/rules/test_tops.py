"""Models on top of terrain (``on_terrain``): the state, where they may stand, distances across heights, climbing
up and coming down (seed 002)."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rules
from rules.movement import check_moves
from tests.rules.conftest import model, state_of

INCH = 25.4
SKIRMISH = rules.load_profile("skirmish")
FORTY_K = rules.load_profile("40k")
LEGION = rules.load_profile("legion")


def tower(height_mm: float | None = 120.0, kind: str = "solid", tid: str = "tower") -> dict[str, Any]:
    out: dict[str, Any] = {"id": tid, "kind": kind, "polygon": [[400, 550], [500, 550], [500, 650], [400, 650]]}
    if height_mm is not None:
        out["height_mm"] = height_mm
    return out


def on(m: dict[str, Any], piece: str | None) -> dict[str, Any]:
    return {**m, "on_terrain": piece} if piece else m


RED_BLUE = [{"id": "red", "player": "A", "move_in": 6}, {"id": "blue", "player": "B", "move_in": 6}]


# --- the state ------------------------------------------------------------------------------------------------------


def test_on_terrain_round_trips_through_json() -> None:
    models = [on(model("r1", "red", 450.0, 600.0), "tower"), model("b1", "blue", 300.0, 600.0)]
    state = state_of(models, RED_BLUE, terrain=[tower()], unseen=[on(model("r2", "red", 420.0, 580.0), "tower")])
    data = json.loads(json.dumps(rules.state_to_dict(state)))
    assert data["models"][0]["on_terrain"] == "tower"
    assert "on_terrain" not in data["models"][1]  # on the table: nothing written
    assert data["unseen"][0]["on_terrain"] == "tower"
    again = rules.state_from_dict(data)
    assert again == state
    assert again.model("r1").on_terrain == "tower" and again.model("b1").on_terrain is None


def test_on_terrain_may_name_a_numbered_piece_and_null_means_the_table() -> None:
    piece = {**tower(), "id": 7}
    state = state_of([{**model("r1", "red", 450.0, 600.0), "on_terrain": 7}], RED_BLUE, terrain=[piece])
    assert state.model("r1").on_terrain == "7"
    state = state_of([{**model("r1", "red", 300.0, 600.0), "on_terrain": None}], RED_BLUE, terrain=[piece])
    assert state.model("r1").on_terrain is None


@pytest.mark.parametrize(
    ("piece", "on_terrain", "message"),
    [
        (tower(), "ruin", r"models\[0\] \(id 'r1'\): on_terrain 'ruin' is not defined \(known terrain: tower\)"),
        (tower(kind="dense"), "tower", "is dense terrain; a model stands on top of solid or sealed terrain only"),
        (tower(kind="area"), "tower", "is area terrain"),
        (tower(height_mm=None), "tower", "has no height_mm; a model on top stands at the piece's height"),
    ],
)
def test_on_terrain_names_a_solid_piece_of_known_height(piece: dict[str, Any], on_terrain: str, message: str) -> None:
    with pytest.raises(rules.StateError, match=message):
        state_of([on(model("r1", "red", 450.0, 600.0), on_terrain)], RED_BLUE, terrain=[piece])


# --- where a model on top may stand ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x_mm", "sigma_mm", "expected"),
    [
        (450.0, 0.0, None),  # wholly on the top: not in terrain
        (484.0, 0.0, None),  # its edge on the top's edge: still on it
        (490.0, 0.0, (-6.0, "clear")),  # 6 mm over the east edge
        (485.0, 0.5, (-1.0, "close")),  # 1 mm over, with 2 sigma = 1 mm of doubt
        (483.0, 0.5, (1.0, "close")),  # 1 mm inside, as doubtful
        (530.0, 0.0, (-46.0, "clear")),  # the centre beyond the edge: the far rim 46 mm over
    ],
)
def test_a_model_on_top_must_have_its_base_on_the_top(
    x_mm: float, sigma_mm: float, expected: tuple[float, str] | None
) -> None:
    state = state_of([on(model("r1", "red", x_mm, 600.0, sigma_mm=sigma_mm), "tower")], RED_BLUE, terrain=[tower()])
    findings = rules.check(state, SKIRMISH)
    if expected is None:
        assert findings == []
        return
    (f,) = findings
    assert (f.kind, f.models, f.terrain, f.call) == ("in_terrain", ("r1",), "tower", expected[1])
    assert f.gap_mm == pytest.approx(expected[0], abs=0.02)
    assert f.limit_mm == 0.0


def test_off_top_allowance_is_profile_data(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text('name = "house"\nextends = "skirmish"\n[placement]\noff_top_mm = 8.0\n')
    state = state_of([on(model("r1", "red", 490.0, 600.0), "tower")], RED_BLUE, terrain=[tower()])
    assert rules.check(state, rules.load_profile(path)) == []
    assert [f.kind for f in rules.check(state, SKIRMISH)] == ["in_terrain"]


def test_a_model_on_a_top_is_not_in_a_lower_piece_below_it_but_is_in_a_taller_one() -> None:
    low = {"id": "low", "kind": "solid", "height_mm": 30.0, "polygon": [[440, 560], [470, 560], [470, 640], [440, 640]]}
    high = {**low, "id": "high", "height_mm": 200.0}
    model_on_top = [on(model("r1", "red", 450.0, 600.0), "tower")]
    assert rules.check(state_of(model_on_top, RED_BLUE, terrain=[tower(), low]), SKIRMISH) == []
    (f,) = rules.check(state_of(model_on_top, RED_BLUE, terrain=[tower(), high]), SKIRMISH)
    assert (f.kind, f.terrain) == ("in_terrain", "high")


# --- distances across heights ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("height_mm", "plan_gap_mm", "profile", "engaged"),
    [
        (120.0, 5.0, SKIRMISH, False),  # 120.1 mm apart: a model on a tower is not engaged with one at its foot
        (25.4, 8.0, SKIRMISH, True),  # on a 1" crate: 26.63 mm apart, within 2"
        (25.4, 8.0, FORTY_K, False),  # ... but not within 1", though 8 mm apart in plan
        (25.4, 0.5, LEGION, False),  # touching in plan, an inch apart: no base contact
        (0.0, 0.5, LEGION, True),  # a top at table height: base contact
    ],
)
def test_distances_count_the_difference_in_height(
    height_mm: float, plan_gap_mm: float, profile: rules.RuleProfile, engaged: bool
) -> None:
    # r1 on the top, 16 mm inside its east edge; b1 on the table beyond that edge.
    models = [on(model("r1", "red", 484.0, 600.0), "tower"), model("b1", "blue", 516.0 + plan_gap_mm, 600.0)]
    state = state_of(models, RED_BLUE, terrain=[tower(height_mm)])
    gap, _ = rules.pair_gap(state, "r1", "b1")
    assert gap == pytest.approx(math.hypot(plan_gap_mm, height_mm))
    found = [f for f in rules.check(state, profile) if f.kind == "engaged"]
    assert bool(found) is engaged
    if found:
        assert found[0].gap_mm == pytest.approx(math.hypot(plan_gap_mm, height_mm))


def test_bases_at_different_heights_never_overlap() -> None:
    models = [on(model("r1", "red", 484.0, 600.0), "tower"), model("b1", "blue", 490.0, 600.0)]
    state = state_of(models, RED_BLUE, terrain=[tower(25.4)])
    bases = rules.BaseArrays.from_state(state)
    gap = bases.gaps_mm(np.array([0]), np.array([1]))
    assert gap[0] == pytest.approx(25.4)  # one above the other: the height apart
    assert [f.kind for f in rules.check(state, SKIRMISH)] == ["engaged", "in_terrain"]  # b1 stands in the crate


def test_models_on_the_same_top_measure_as_on_the_table() -> None:
    models = [on(model("r1", "red", 420.0, 600.0), "tower"), on(model("b1", "blue", 460.0, 600.0), "tower")]
    state = state_of(models, RED_BLUE, terrain=[tower()])
    assert rules.pair_gap(state, "r1", "b1")[0] == pytest.approx(8.0)


def test_cohesion_counts_the_height() -> None:
    units = [{"id": "red", "player": "A", "move_in": 6}]
    models = [on(model("r1", "red", 484.0, 600.0), "tower"), model("r2", "red", 530.0, 600.0)]
    (f,) = rules.check(state_of(models, units, terrain=[tower()]), SKIRMISH)
    assert (f.kind, f.models) == ("cohesion", ("r1", "r2"))
    assert f.gap_mm == pytest.approx(math.hypot(14.0, 120.0))


# --- climbing up and coming down ------------------------------------------------------------------------------------


def _move(
    abilities: list[str],
    start: tuple[float, str | None],
    end: tuple[float, str | None],
    pieces: list[dict[str, Any]],
    profile: rules.RuleProfile = SKIRMISH,
) -> rules.UnitMove:
    units = [{"id": "red", "player": "A", "move_in": 6, "abilities": abilities}]
    before = state_of([on(model("r1", "red", start[0], 600.0), start[1])], units, terrain=pieces)
    after = state_of([on(model("r1", "red", end[0], 600.0), end[1])], units, terrain=pieces)
    (verdict,) = check_moves(before, after, profile, actions={"red": "move"})
    return verdict


CLIMB_MM = 3 * INCH  # half of a 6" Move


@pytest.mark.parametrize(
    ("abilities", "start", "end", "height_mm", "path_mm", "problem"),
    [
        (["climb"], (380.0, None), (450.0, "tower"), 120.0, 70.0 + CLIMB_MM, None),
        (["climb"], (380.0, None), (450.0, "tower"), 101.6, 70.0 + CLIMB_MM, None),  # exactly 4" tall
        (["climb"], (380.0, None), (450.0, "tower"), 50.8, 70.0 + CLIMB_MM, 'r1 climbed onto tower, 2.00" tall'),
        ([], (380.0, None), (450.0, "tower"), 120.0, 70.0 + CLIMB_MM, "only a model that may climb"),
        (["fly"], (380.0, None), (450.0, "tower"), 120.0, 70.0 + CLIMB_MM, "a unit with Fly cannot end on top"),
        (["fly", "climb"], (380.0, None), (450.0, "tower"), 120.0, 70.0 + CLIMB_MM, None),
        ([], (450.0, "tower"), (360.0, None), 120.0, 90.0, None),  # coming down: the text prices only the climb
        (["fly"], (450.0, "tower"), (360.0, None), 120.0, 90.0, None),
        ([], (420.0, "tower"), (480.0, "tower"), 120.0, 60.0, None),  # across the top: no climb
        (["climb"], (340.0, None), (450.0, "tower"), 120.0, 110.0 + CLIMB_MM, 'r1 moved up to 7.33"'),
    ],
)
def test_climbing_up_and_coming_down(
    abilities: list[str],
    start: tuple[float, str | None],
    end: tuple[float, str | None],
    height_mm: float,
    path_mm: float,
    problem: str | None,
) -> None:
    verdict = _move(abilities, start, end, [tower(height_mm)])
    assert verdict.models[0].path_mm == pytest.approx(path_mm)
    if problem is None:
        assert verdict.legal, verdict.problems
    else:
        assert not verdict.legal
        assert len(verdict.problems) == 1 and problem in verdict.problems[0], verdict.problems


def test_coming_down_costs_what_the_profile_says(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text('name = "house"\nextends = "skirmish"\n[movement]\nclimb_down_move_fraction = 0.5\n')
    house = rules.load_profile(path)
    down = _move([], (450.0, "tower"), (360.0, None), [tower()], house)
    assert down.models[0].path_mm == pytest.approx(90.0 + CLIMB_MM)
    # from one top to another: down and up again
    other = {**tower(tid="keep"), "polygon": [[520, 550], [620, 550], [620, 650], [520, 650]]}
    across = _move(["climb"], (450.0, "tower"), (570.0, "keep"), [tower(), other], house)
    assert across.models[0].path_mm == pytest.approx(120.0 + 2 * CLIMB_MM)
    assert not across.legal  # 9.7": too long for a move


def test_a_model_that_only_changed_height_moved() -> None:
    # A state may put a model at the same place in plan, first in the tower, then on it: that is a climb.
    verdict = _move(["climb"], (450.0, None), (450.0, "tower"), [tower()])
    assert verdict.models[0].distance_mm == 0.0
    assert verdict.models[0].path_mm == pytest.approx(CLIMB_MM)


def test_a_climb_with_no_move_known_is_not_priced_and_stays_open() -> None:
    units = [{"id": "red", "player": "A", "abilities": ["climb"]}]
    before = state_of([model("r1", "red", 360.0, 600.0)], units, terrain=[tower()])
    after = state_of([on(model("r1", "red", 450.0, 600.0), "tower")], units, terrain=[tower()])
    (verdict,) = check_moves(before, after, SKIRMISH)
    assert verdict.models[0].path_mm == pytest.approx(90.0)
    assert verdict.legal and verdict.call == rules.CLOSE


def test_a_model_on_top_blocks_the_climb_onto_its_top() -> None:
    # Another model stands on the tower right where the straight climb would end its way: the climber goes round.
    units = [{"id": "red", "player": "A", "move_in": 6, "abilities": ["climb"]}, {"id": "blue", "player": "B"}]
    still = on(model("b1", "blue", 420.0, 600.0), "tower")
    before = state_of([model("r1", "red", 360.0, 600.0), still], units, terrain=[tower()])
    after = state_of([on(model("r1", "red", 470.0, 600.0), "tower"), still], units, terrain=[tower()])
    (verdict,) = check_moves(before, after, SKIRMISH)
    assert verdict.models[0].path_mm > 110.0 + CLIMB_MM + 1.0


def test_legion_melee_spots_from_a_top_price_the_way_down() -> None:
    from rules.spots import Layout
    from rules.travel import ModelPaths, model_path_mm

    units = [{"id": "red", "player": "A", "move_in": 6}]
    state = state_of([on(model("r1", "red", 450.0, 600.0), "tower")], units, terrain=[tower()])
    layout = Layout.of(state)
    mover = state.models[0]
    house = dataclasses.replace(SKIRMISH, movement=dataclasses.replace(SKIRMISH.movement, climb_down_move_fraction=0.5))
    paths = ModelPaths(mover, (450.0, 600.0), layout.units["red"], state, layout.bases, house, 1000.0, set())
    for end in [(360.0, 600.0), (450.0, 700.0), (300.0, 300.0)]:
        one = model_path_mm(mover, (450.0, 600.0), end, layout.units["red"], state, layout.bases, house, 1000.0, set())
        assert paths.length_mm(end) == pytest.approx(one)
        assert one == pytest.approx(math.dist((450.0, 600.0), end) + CLIMB_MM)
