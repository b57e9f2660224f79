"""Models the state does not show, and bases measured by a camera: open calls, and no overlap of solid bases."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rules
from tests.rules.conftest import model, state_of

ENEMIES = [{"id": "red", "player": "A", "leader": "r1"}, {"id": "blue", "player": "B"}]


def kinds(findings: list[rules.Finding], kind: str) -> list[rules.Finding]:
    return [f for f in findings if f.kind == kind]


def two_units(blue_x_mm: float, hidden: bool, **extra: Any) -> rules.TableState:
    """Red r1, r2 in a row; blue b1 seen far away and b2 at ``blue_x_mm``, unseen when ``hidden``."""
    seen = [model("r1", "red", 300.0, 300.0), model("r2", "red", 340.0, 300.0), model("b1", "blue", 1200.0, 300.0)]
    b2 = model("b2", "blue", blue_x_mm, 300.0)
    if hidden:
        return state_of(seen, ENEMIES, unseen=[b2], **extra)
    return state_of([*seen, b2], ENEMIES, **extra)


def test_state_round_trips_unseen_models_and_the_measured_flag() -> None:
    state = two_units(400.0, hidden=True, measured=True)
    again = rules.state_from_dict(json.loads(json.dumps(rules.state_to_dict(state))))
    assert again == state
    assert [m.id for m in again.unseen] == ["b2"] and again.measured


@pytest.mark.parametrize(
    ("models", "unseen", "units", "message"),
    [
        ([model("a", "red", 1, 1)], [model("a", "red", 5, 5)], ENEMIES, "duplicate model id"),
        ([], [model("a", "green", 5, 5)], ENEMIES, "unit 'green' is not defined"),
        ([], [{"id": "a", "unit": "red", "x_mm": 1}], ENEMIES, "missing 'y_mm'"),
    ],
)
def test_unseen_models_are_validated_like_models(
    models: list[dict[str, Any]], unseen: list[dict[str, Any]], units: list[dict[str, Any]], message: str
) -> None:
    units = [{"id": "red", "player": "A"}, {"id": "blue", "player": "B"}]
    with pytest.raises(rules.StateError, match=message):
        state_of(models, units, unseen=unseen)


def test_a_measured_flag_that_is_not_a_boolean_is_refused() -> None:
    with pytest.raises(rules.StateError, match="'measured' must be true or false"):
        state_of([], ENEMIES, measured="yes")


def test_an_unseen_leader_still_leads_in_the_file() -> None:
    state = state_of([model("r2", "red", 10, 10)], ENEMIES, unseen=[model("r1", "red", 50, 50)])
    assert state.unit("red").leader == "r1"
    assert kinds(rules.check(state, rules.load_profile("legion")), "unseen")[0].models == ("r1",)


@pytest.mark.parametrize(
    ("blue_x_mm", "profile", "engaged", "call", "reason"),
    [
        # b2's last place is within 2" of r2: the engagement is reported, and open because b2 is not seen.
        (380.0, "skirmish", True, rules.CLOSE, "unseen"),
        (380.0, "killteam", True, rules.CLOSE, "unseen"),
        # Last seen far from every red model: no call it could change.
        (900.0, "skirmish", False, None, None),
    ],
)
def test_an_unseen_model_opens_the_engagement_it_could_make(
    blue_x_mm: float, profile: str, engaged: bool, call: str | None, reason: str | None
) -> None:
    findings = rules.check(two_units(blue_x_mm, hidden=True), rules.load_profile(profile))
    unseen = kinds(findings, "unseen")
    assert [(f.unit, f.models, f.call) for f in unseen] == [("blue", ("b2",), rules.CLOSE)]
    assert unseen[0].to_dict()["last_seen_mm"] == {"b2": [blue_x_mm, 300.0]}
    found = kinds(findings, "engaged")
    assert bool(found) is engaged
    if engaged:
        assert (found[0].call, found[0].reason, "b2" in found[0].models) == (call, reason, True)


def test_seen_models_engaged_clearly_stay_clear_beside_an_unseen_mate() -> None:
    seen = [model("r1", "red", 300.0, 300.0), model("b1", "blue", 340.0, 300.0)]
    state = state_of(seen, ENEMIES, unseen=[model("b2", "blue", 360.0, 340.0)])
    engaged = kinds(rules.check(state, rules.load_profile("skirmish")), "engaged")
    assert [(f.models, f.call, f.reason) for f in engaged] == [(("r1", "b1"), rules.CLEAR, None)]


def test_a_cohesion_break_beside_an_unseen_mate_is_open() -> None:
    # r1 and r2 are 200 mm apart: a clear break when r3 is gone, an open one when r3 is only unseen between them.
    seen = [model("r1", "red", 300.0, 300.0), model("r2", "red", 500.0, 300.0)]
    gone = rules.check(state_of(seen, ENEMIES), rules.load_profile("skirmish"))
    hidden = rules.check(
        state_of(seen, ENEMIES, unseen=[model("r3", "red", 400.0, 300.0)]), rules.load_profile("skirmish")
    )
    assert [(f.call, f.reason) for f in kinds(gone, "cohesion")] == [(rules.CLEAR, None)]
    assert [(f.call, f.reason) for f in kinds(hidden, "cohesion")] == [(rules.CLOSE, "unseen")]


@pytest.mark.parametrize(
    ("gap_mm", "sigma_mm", "measured", "overlap"),
    [
        # Bases in contact read 2 mm into each other: a camera's error, not an overlap.
        (-2.0, 0.8, True, False),
        (-2.0, 0.8, False, True),
        # Deeper than the measurement allows: a base placed over another.
        (-12.0, 0.8, True, True),
        (-0.5, 0.0, False, False),
    ],
)
def test_measured_bases_overlap_only_beyond_the_measurement(
    gap_mm: float, sigma_mm: float, measured: bool, overlap: bool
) -> None:
    x = 300.0 + 32.0 + gap_mm
    models = [model("r1", "red", 300.0, 300.0, sigma_mm=sigma_mm), model("r2", "red", x, 300.0, sigma_mm=sigma_mm)]
    found = kinds(rules.check(state_of(models, ENEMIES, measured=measured), rules.load_profile("skirmish")), "overlap")
    assert bool(found) is overlap
    if found:
        assert found[0].call == rules.CLEAR or not measured


def test_measured_contact_is_reported_with_no_negative_gap() -> None:
    models = [
        model("r1", "red", 300.0, 300.0, sigma_mm=0.3),
        model("b1", "blue", 300.0 + 32.0 - 0.4, 300.0, sigma_mm=0.3),
    ]
    for measured, gap in ((True, 0.0), (False, -0.4)):
        engaged = kinds(
            rules.check(state_of(models, ENEMIES, measured=measured), rules.load_profile("legion")), "engaged"
        )
        assert engaged[0].gap_mm == pytest.approx(gap, abs=1e-6)
        assert engaged[0].call == rules.CLEAR


def test_measuring_an_unseen_model_says_it_is_not_seen() -> None:
    with pytest.raises(rules.StateError, match="'b2' is not seen in this state"):
        rules.measure(two_units(400.0, hidden=True), "r1", "b2", rules.load_profile("skirmish"))


def test_cohesion_to_an_unseen_leader_is_judged_at_its_last_place_and_open() -> None:
    seen = [model("r2", "red", 300.0, 300.0), model("r3", "red", 700.0, 300.0)]
    state = state_of(seen, ENEMIES, unseen=[model("r1", "red", 320.0, 340.0)])
    cohesion = kinds(rules.check(state, rules.load_profile("legion")), "cohesion")
    assert [(f.unit, f.models, f.call, f.reason) for f in cohesion] == [("red", ("r3",), rules.CLOSE, "unseen")]
