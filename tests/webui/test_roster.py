"""Rosters: identities carried to new detections, base overrides, suggested units."""

from __future__ import annotations

import math
from typing import Any

import pytest

import rules
from tests.webui.conftest import two_sides
from webui.errors import UploadError
from webui.roster import declared_bases, follow, roster_from_bytes, roster_from_json, suggest_units, units_on_table

GATE_MM = 40.0


def _detected(points: list[tuple[float, float]], diameter: float = 25.0) -> rules.TableState:
    models = tuple(
        rules.Model(f"m{k + 1}", None, x, y, rules.RoundBase(diameter), 0.2) for k, (x, y) in enumerate(points)
    )
    return rules.TableState(rules.Table(1200.0, 800.0), models=models)


def test_follow_carries_ids_and_units_and_moves_the_roster():
    roster = roster_from_json(two_sides())
    seen = _detected([(302.0, 301.0), (333.0, 298.0), (900.0, 505.0), (700.0, 700.0)])
    state, new_roster = follow(roster, seen, GATE_MM)
    by_id = {m.id: m for m in state.models}
    assert by_id["r1"].unit == "r" and by_id["r2"].unit == "r" and by_id["b1"].unit == "b"
    fresh = [m for m in state.models if m.id not in {"r1", "r2", "x1", "b1", "b2"}]
    assert len(fresh) == 1 and fresh[0].unit is None
    # Matched models moved, unseen ones (x1, b2) stay where they were last seen, the new one joins.
    assert new_roster.model("r1").x_mm == 302.0 and new_roster.model("x1").x_mm == 365.0
    assert {m.id for m in new_roster.models} == {"r1", "r2", "x1", "b1", "b2", fresh[0].id}
    # Following the moved roster again keeps every id.
    again, _ = follow(new_roster, _detected([(310.0, 305.0), (340.0, 300.0)]), GATE_MM)
    assert [m.id for m in again.models] == ["r1", "r2"]


@pytest.mark.parametrize(("review", "kept"), [(False, False), (True, True)])
def test_a_unit_that_moved_farther_than_the_gate_keeps_its_ids_within_its_reach(review: bool, kept: bool):
    from tableref.config import load_config

    data = two_sides()
    for u in data["units"]:
        u["move_in"] = 6
    roster = roster_from_json(data)
    # the red squad moved 5" (127 mm): beyond the 40 mm gate, within a 6" Move
    moved = [(300.0 + 127.0, 300.0), (330.0 + 127.0, 300.0), (365.0, 300.0), (900.0, 500.0), (930.0, 500.0)]
    settings = load_config().review if review else None
    state, new_roster = follow(roster, _detected(moved), GATE_MM, rules.load_profile("skirmish"), settings)
    ids = {m.id for m in state.models}
    assert ({"r1", "r2"} <= ids) is kept
    assert ({m.id for m in state.unseen} == {"r1", "r2"}) is not kept
    if kept:
        assert new_roster.model("r1").x_mm == pytest.approx(427.0)


def test_follow_applies_base_overrides():
    data = two_sides()
    data["base_overrides"] = {"r1": {"diameter_mm": 32}, "r2": {"width_mm": 60, "depth_mm": 35, "rotation_deg": 30}}
    state, _ = follow(roster_from_json(data), _detected([(300.0, 300.0), (330.0, 300.0), (365.0, 300.0)]), GATE_MM)
    assert state.model("r1").base == rules.RoundBase(32.0)
    assert state.model("r2").base == rules.OvalBase(60.0, 35.0, 30.0)
    assert state.model("x1").base == rules.RoundBase(25.0)
    # a round size read 7 mm small: the centre as doubtful as the radii's difference; an oval's as measured
    assert [state.model(k).sigma_mm for k in ("r1", "r2", "x1")] == pytest.approx([math.hypot(0.2, 3.5), 0.2, 0.2])


@pytest.mark.parametrize(
    ("overrides", "declared"),
    [
        ({}, None),
        ({"r1": {"diameter_mm": 32, "height_mm": 3.5}}, {"r1": rules.RoundBase(32.0, height_mm=3.5)}),
        (
            {"r2": {"diameter_mm": 27}, "b1": {"width_mm": 60, "depth_mm": 35}},
            {"r2": rules.RoundBase(27.0), "b1": rules.OvalBase(60.0, 35.0)},
        ),
        # an override of a model the roster no longer has declares nothing
        ({"gone": {"diameter_mm": 32}}, None),
    ],
)
def test_declared_bases_are_the_overridden_ones_where_the_roster_last_saw_them(
    overrides: dict[str, Any], declared: dict[str, rules.Base] | None
):
    data = two_sides()
    data["base_overrides"] = overrides
    roster = roster_from_json(data)
    got = declared_bases(roster)
    if declared is None:
        assert got is None
        return
    assert got is not None
    assert {m.id: m.base for m in got.models} == declared
    assert all((m.x_mm, m.y_mm) == (roster.model(m.id).x_mm, roster.model(m.id).y_mm) for m in got.models)


@pytest.mark.parametrize(
    ("units_of", "unseen", "looked_for"),
    [
        # a model of no unit (x1) is only what the detector once found: not looked for
        ({}, (), {"r1", "r2", "b1", "b2"}),
        # a unit's model not seen in the last frame is looked for where it was last seen
        ({}, ("b2",), {"r1", "r2", "b1", "b2"}),
        ({"x1": "b"}, (), {"r1", "r2", "x1", "b1", "b2"}),
        # nothing put in a unit: nothing looked for
        ({"r1": None, "r2": None, "b1": None, "b2": None}, (), None),
    ],
)
def test_the_models_of_units_are_looked_for_where_they_were_last_seen(
    units_of: dict[str, str | None], unseen: tuple[str, ...], looked_for: set[str] | None
):
    data = two_sides()
    for m in data["models"]:
        m["unit"] = units_of.get(m["id"], m["unit"])
    data["units"] = [u for u in data["units"] if any(m["unit"] == u["id"] for m in data["models"])]
    data["unseen"] = [m for m in data["models"] if m["id"] in unseen]
    data["models"] = [m for m in data["models"] if m["id"] not in unseen]
    roster = roster_from_json(data)
    got = units_on_table(roster)
    if looked_for is None:
        assert got is None
        return
    assert got is not None
    assert {m.id for m in got.models + got.unseen} == looked_for
    everyone = {m.id: m for m in roster.models + roster.unseen}
    assert all(
        (m.x_mm, m.y_mm, m.base) == (everyone[m.id].x_mm, everyone[m.id].y_mm, everyone[m.id].base)
        for m in got.models + got.unseen
    )


def test_roster_drops_frame_sections():
    data = {**two_sides(), "calibration": {"markers_used": [1]}, "render": {}, "notes": "kept"}
    roster = roster_from_json(data)
    assert dict(roster.extras) == {"notes": "kept"}


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"[1, 2]", "expected a JSON object"),
        (b'{"table": {"width_mm": 10}}', "missing 'depth_mm'"),
        (b"{", "not valid JSON"),
        (b'{"table": {"width_mm": 10, "depth_mm": 10}, "base_overrides": []}', "expected an object"),
        (b'{"table": {"width_mm": 10, "depth_mm": 10}, "base_overrides": {"a": {"width_mm": 3}}}', "diameter_mm"),
        (
            b'{"table": {"width_mm": 10, "depth_mm": 10}, "base_overrides": {"a": {"diameter_mm": 3, "height_mm": 0}}}',
            "height_mm must be a positive number",
        ),
    ],
)
def test_bad_rosters(payload: bytes, message: str):
    with pytest.raises(UploadError, match=message):
        roster_from_bytes(payload)


def _free(points: list[tuple[float, float, float]]) -> rules.TableState:
    models = tuple(rules.Model(f"m{k}", None, x, y, rules.RoundBase(d)) for k, (x, y, d) in enumerate(points))
    return rules.TableState(rules.Table(1829.0, 1219.0), models=models)


@pytest.mark.parametrize(
    ("points", "groups"),
    [
        # A chain of three 32 mm bases 20 mm apart, and a lone 50 mm base nearby: two units.
        ([(100, 100, 32), (152, 100, 32), (204, 100, 32), (260, 100, 50)], [["m0", "m1", "m2"], ["m3"]]),
        # Same size and close, but on opposite halves of the table: two units.
        ([(500, 590, 25), (500, 630, 25)], [["m0"], ["m1"]]),
        # Too far apart (45 mm edge to edge > 40 mm): two units, left first.
        ([(300, 100, 25), (370, 100, 25)], [["m0"], ["m1"]]),
        ([], []),
    ],
)
def test_suggested_units(points: list[tuple[float, float, float]], groups: list[list[str]]):
    suggestions = suggest_units(_free(points), GATE_MM)
    assert [list(s.models) for s in suggestions] == groups


def test_suggestions_skip_assigned_models():
    state = rules.state_from_dict(two_sides())
    assert [s.to_dict() for s in suggest_units(state, GATE_MM)] == [
        {"models": ["x1"], "base": {"diameter_mm": 25.0}, "side": "top"}
    ]


def _sides(data: dict[str, Any]) -> list[str]:
    return [s.side for s in suggest_units(rules.state_from_dict(data), GATE_MM)]


def test_sides_split_the_short_dimension():
    tall = {
        "table": {"width_mm": 600, "depth_mm": 1200},
        "models": [
            {"id": "a", "x_mm": 100, "y_mm": 100, "base": {"diameter_mm": 25}},
            {"id": "b", "x_mm": 500, "y_mm": 100, "base": {"diameter_mm": 25}},
        ],
    }
    assert _sides(tall) == ["left", "right"]
