"""Moving into melee: the placement assistant (rules.place_melee) against the judge (rules.check_moves), its
errors, and the judge's open calls."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

import rules
from rules.melee import CONTACT, MOVE_UNKNOWN, OPPONENT_LEADER, OPPONENT_OTHERS, OTHERS
from tests.rules.conftest import model, moved, state_of

INCH = 25.4
LEGION = rules.load_profile("legion")
PLACEMENT_KINDS = {"overlap", "multi_contact", "off_table", "in_terrain"}
ORDER = {OTHERS: 0, OPPONENT_LEADER: 1, OPPONENT_OTHERS: 2}


def _units(move_in: float | None = 6, abilities: tuple[str, ...] = (), b2s: bool = False) -> list[dict[str, Any]]:
    extra = {} if move_in is None else {"move_in": move_in}
    units = [
        {"id": "clones", "player": "Will", "leader": "c0", "abilities": list(abilities), **extra},
        {"id": "droids", "player": "Tony", "leader": "d0", **extra},
    ]
    return units + ([{"id": "b2s", "player": "Tony", "leader": "b0", **extra}] if b2s else [])


def lines(
    clones: int = 5,
    droids: int = 6,
    gap_y: float = 150.0,
    move_in: float | None = 6,
    abilities: tuple[str, ...] = (),
    droid_base: dict[str, Any] | None = None,
    droid_dx: float = 40.0,
    terrain: list[dict[str, Any]] | None = None,
    b2s: bool = False,
) -> tuple[rules.TableState, rules.TableState]:
    """A line of clones (leader c0 in the middle) ``gap_y`` mm from a line of droids (leader d0 in the middle), and
    the same table with c0 moved straight into base contact with d0; the b2s, Tony's too, stand to the right."""
    base = droid_base or {"diameter_mm": 27.0}
    models = [model(f"c{k}", "clones", 600.0 + 30.0 * _slot(k), 400.0, 27) for k in range(clones)]
    models += [model(f"d{k}", "droids", 600.0 + droid_dx * _slot(k), 400.0 + gap_y, **base) for k in range(droids)]
    if b2s:
        models += [model(f"b{k}", "b2s", 715.0 + 34.0 * k, 360.0 + gap_y, 32) for k in range(2)]
    before = state_of(models, _units(move_in, abilities, b2s), terrain=terrain or [])
    # d0 is the first droid: its half depth along y is where c0 touches it
    half_depth = float(rules.BaseArrays.from_state(before).extent_mm()[clones, 1])
    return before, moved(before, c0=(600.0, 400.0 + gap_y - half_depth - 13.5))


def _slot(k: int) -> int:
    """0, -1, 1, -2, 2, ...: the leader in the middle, the others to either side."""
    return (k + 1) // 2 * (1 if k % 2 == 0 else -1)


WALL = {"id": "wall", "kind": "solid", "polygon": [[540, 520], [560, 520], [560, 700], [540, 700]]}
# Across the lane between the lines: around it is more than 6" for every clone.
ACROSS = {"id": "across", "kind": "solid", "polygon": [[440, 470], [760, 470], [760, 480], [440, 480]]}
SETUPS = {
    "seed lines": lines(),
    "wide melee": lines(clones=9, droids=10, gap_y=110.0),
    "out of reach (Move 2)": lines(gap_y=150.0, move_in=2),
    "Move unknown": lines(move_in=None),
    "oval droids": lines(droids=4, droid_base={"oval": (60.0, 35.0, 0.0)}, droid_dx=64.0),
    "turned oval droids": lines(droids=4, droid_base={"oval": (60.0, 35.0, 90.0)}),
    "solid wall beside": lines(terrain=[WALL]),
    "other enemy unit beside": lines(b2s=True),
    "wall across": lines(terrain=[ACROSS]),
    "flying clones over a wall": lines(abilities=("fly",), terrain=[ACROSS]),
}


def _proposal(name: str) -> tuple[rules.TableState, rules.MeleeProposal]:
    before, leader_in = SETUPS[name]
    return before, rules.place_melee(leader_in, "clones", LEGION)


@pytest.mark.parametrize("name", SETUPS)
def test_the_proposal_passes_the_procedure_check(name: str) -> None:
    before, proposal = _proposal(name)
    verdicts = rules.check_moves(before, proposal.state, LEGION)
    assert {v.unit for v in verdicts} >= {"clones"}
    for v in verdicts:
        assert v.legal, (v.unit, v.problems)
        assert v.findings == (), [f.to_dict() for f in v.findings]


@pytest.mark.parametrize("name", SETUPS)
def test_every_placement_is_legal(name: str) -> None:
    _, proposal = _proposal(name)
    found = rules.check(proposal.state, LEGION)
    assert [f.to_dict() for f in found if f.kind in PLACEMENT_KINDS] == []
    assert [f.to_dict() for f in found if f.kind == "cohesion"] == []


@pytest.mark.parametrize("name", SETUPS)
def test_steps_follow_the_text_and_stay_within_reach(name: str) -> None:
    _, leader_in = SETUPS[name]
    proposal = rules.place_melee(leader_in, "clones", LEGION)
    steps = proposal.steps
    assert [ORDER[s.step] for s in steps] == sorted(ORDER[s.step] for s in steps)
    placed = [s.model for s in steps]
    expected = [m.id for m in leader_in.models if m.unit in ("clones", "droids") and m.id != "c0"]
    assert sorted(placed) == sorted(expected)
    final = {m.id: m for m in proposal.state.models}
    for s in steps:
        unit = leader_in.unit(s.unit)
        assert s.to_mm == (final[s.model].x_mm, final[s.model].y_mm)
        if unit.move_in is not None:
            # the straight distance is a lower bound of the path
            assert s.distance_mm <= unit.move_in * INCH + 1e-6, s
        if s.touching is not None:
            # as the step left the table: a later step may move the model it touched
            done = moved(leader_in, **{t.model: t.to_mm for t in steps if ORDER[t.step] <= ORDER[s.step]})
            gap, _ = rules.pair_gap(done, s.model, s.touching)
            assert -1e-5 <= gap <= LEGION.contact.gap_mm + 1e-5, (s, gap)
    others = {m.id for m in proposal.state.models} - {s.model for s in steps if s.moved}
    assert all(final[m] == leader_in.model(m) for m in others)


@pytest.mark.parametrize(
    ("name", "in_contact"),
    [
        ("seed lines", {"c1", "c2", "c3", "c4"}),
        ("out of reach (Move 2)", set()),  # 150 mm away: the contact line is beyond 2"
        ("wall across", set()),  # around the wall is beyond 6"
        ("flying clones over a wall", {"c1", "c2", "c3", "c4"}),
    ],
)
def test_who_ends_in_base_contact(name: str, in_contact: set[str]) -> None:
    _, proposal = _proposal(name)
    touching = {s.model for s in proposal.steps if s.step == OTHERS and s.touching}
    assert touching == in_contact


def test_the_proposal_is_deterministic_and_immutable() -> None:
    _, leader_in = SETUPS["wide melee"]
    first = rules.place_melee(leader_in, "clones", LEGION)
    assert rules.place_melee(leader_in, "clones", LEGION) == first
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.steps[0].reason = "x"  # type: ignore[misc]
    assert leader_in == SETUPS["wide melee"][1]


def test_a_path_around_terrain_beyond_reach_leaves_the_model_out(tmp_path: Path) -> None:
    # c1 stands behind a wall running past the droids: straight it is 2.8" from a spot, around the wall more than 4"
    wall = {"id": "wall", "kind": "solid", "polygon": [[500, 470], [680, 470], [680, 480], [500, 480]]}
    models = [model("c0", "clones", 600.0, 400.0, 27), model("c1", "clones", 630.0, 450.0, 27)]
    models += [model(f"d{k}", "droids", 600.0 + 30.0 * k, 550.0, 27) for k in range(3)]
    before = state_of(models, _units(move_in=4), terrain=[wall])
    leader_in = moved(before, c0=(600.0, 523.0))
    (c1,) = [s for s in rules.place_melee(leader_in, "clones", LEGION).steps if s.model == "c1"]
    assert c1.touching is None and not c1.moved
    without_wall = dataclasses.replace(leader_in, terrain=())
    (c1,) = [s for s in rules.place_melee(without_wall, "clones", LEGION).steps if s.model == "c1"]
    assert c1.touching is not None


def test_reach_is_the_profiles_share_of_the_move(tmp_path: Path) -> None:
    path = tmp_path / "short.toml"
    path.write_text('name = "short"\nextends = "legion"\n[movement]\nmelee_reach_moves = 0.5\n')
    _, leader_in = SETUPS["seed lines"]
    proposal = rules.place_melee(leader_in, "clones", rules.load_profile(path))
    assert not any(s.touching for s in proposal.steps if s.step == OTHERS)  # 150 mm away, 3" of reach
    assert any(s.touching for s in _proposal("seed lines")[1].steps if s.step == OTHERS)


def _held_back(name: str) -> tuple[rules.TableState, rules.TableState, rules.MeleeStep]:
    """The proposal of setup ``name`` with one clone it placed into base contact held 40 mm short, in cohesion."""
    before, proposal = _proposal(name)
    step = next(s for s in proposal.steps if s.step == OTHERS and s.touching)
    return before, moved(proposal.state, **{step.model: (step.to_mm[0], step.to_mm[1] - 40.0)}), step


def test_a_proposal_undone_is_caught_with_the_spot_it_left() -> None:
    before, undone, step = _held_back("seed lines")
    (clones,) = [v for v in rules.check_moves(before, undone, LEGION) if v.unit == "clones"]
    assert not clones.legal
    (finding,) = clones.findings
    assert (finding.step, finding.models, finding.call) == (CONTACT, (step.model,), rules.CLEAR)
    assert finding.spot_mm is not None and math.dist(finding.spot_mm, step.to_mm) < 1.0


def test_an_unknown_move_leaves_a_spot_open() -> None:
    before, undone, step = _held_back("Move unknown")
    (clones,) = [v for v in rules.check_moves(before, undone, LEGION) if v.unit == "clones"]
    assert clones.legal and clones.call == rules.CLOSE
    assert "is not known" in clones.note
    (finding,) = clones.findings
    assert (finding.models, finding.call, finding.reason) == ((step.model,), rules.CLOSE, MOVE_UNKNOWN)


@pytest.mark.parametrize(
    ("gap_mm", "sigma_mm", "legal", "call"),
    [
        (0.5, 0.0, True, rules.CLEAR),  # in base contact
        (5.0, 0.0, False, rules.CLEAR),  # out, with a free spot in reach
        (1.3, 0.2, True, rules.CLOSE),  # out by 0.3 mm, within the measurement's doubt
        (1.3, 0.0, False, rules.CLEAR),
    ],
)
def test_base_contact_in_doubt_is_an_open_call(gap_mm: float, sigma_mm: float, legal: bool, call: str) -> None:
    models = [model("c0", "clones", 600.0, 400.0, 27, sigma_mm=sigma_mm)]
    models += [model("c1", "clones", 630.0, 400.0, 27, sigma_mm=sigma_mm)]
    models += [model(f"d{k}", "droids", 600.0 + 30.0 * k, 550.0, 27, sigma_mm=sigma_mm) for k in range(2)]
    before = state_of(models, _units())
    after = moved(before, c0=(600.0, 523.0), c1=(630.0, 523.0 - gap_mm))
    (verdict,) = [v for v in rules.check_moves(before, after, LEGION) if v.unit == "clones"]
    assert (verdict.legal, verdict.call) == (legal, call), verdict.problems
    mine = [f.step for f in verdict.findings if f.unit == "clones"]
    assert mine == ([] if gap_mm <= 1.0 else [CONTACT])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"unit": "nobody"}, "unknown unit 'nobody'; the state's units are clones, droids, b2s"),
        ({"profile": "skirmish"}, "profile 'skirmish' has no melee procedure"),
        ({"leader": None}, "unit 'clones' has no leader"),
        ({"melee": False}, "has no weapon of melee range"),
        ({"c0": (600.0, 500.0)}, "its leader 'c0' is not in base contact with an enemy model"),
        ({"c0": (689.5, 524.5)}, "is in base contact with enemy units droids, b2s"),  # touching d4 and b0
    ],
)
def test_a_melee_that_cannot_start_is_a_named_error(change: dict[str, Any], message: str) -> None:
    _, state = SETUPS["other enemy unit beside"]
    unit_id = change.get("unit", "clones")
    profile = rules.load_profile(change.get("profile", "legion"))
    facts = {k: v for k, v in change.items() if k in ("leader", "melee")}
    units = tuple(dataclasses.replace(u, **facts) if u.id == "clones" else u for u in state.units)
    state = dataclasses.replace(state, units=units)
    if "c0" in change:
        state = moved(state, c0=change["c0"])
    with pytest.raises(rules.MeleeError, match=message.replace("(", r"\(")):
        rules.place_melee(state, unit_id, profile)


def test_melee_findings_survive_a_round_trip() -> None:
    finding = rules.Finding(
        kind="melee", models=("c3",), units=("droids",), unit="clones", gap_mm=53.0, limit_mm=1.0, call=rules.CLEAR,
        step=CONTACT, spot_mm=(390.0, 373.25),
    )  # fmt: skip
    assert rules.Finding.from_dict(finding.to_dict()) == finding
    assert finding.to_dict()["spot_mm"] == [390.0, 373.25]


@pytest.mark.parametrize(
    ("leaders", "steps"),
    [
        ((None, None), [(OPPONENT_LEADER, "b1", "a1")]),  # a unit of one model is led by it
        (("a1", "b1"), [(OPPONENT_LEADER, "b1", "a1")]),
    ],
)
def test_a_unit_of_one_model_needs_no_leader_named(leaders: tuple[str | None, str | None], steps: list[Any]) -> None:
    units = [{"id": "a", "player": "Will", "leader": leaders[0]}, {"id": "b", "player": "Tony", "leader": leaders[1]}]
    state = state_of([model("a1", "a", 100.0, 100.0, 27), model("b1", "b", 127.0, 100.0, 27)], units)
    proposal = rules.place_melee(state, "a", LEGION)
    assert [(s.step, s.model, s.touching) for s in proposal.steps] == steps
