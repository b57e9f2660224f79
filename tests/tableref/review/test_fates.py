"""What becomes of the models a state does not show: unseen at their last places, taken off where their place is
seen empty, back with their ids, never a move across the table."""

from __future__ import annotations

import dataclasses

import pytest

import rules
from tableref.review.timeline import EMPTY_TRACK, identify
from tests.tableref.review.states import (
    LINE,
    R1_CHANGED,
    R3_CHANGED,
    SETTINGS,
    SKIRMISH,
    STILL,
    detected,
    roster,
)


@pytest.mark.parametrize(
    ("points", "sizes", "changed", "removed_ids", "unseen_ids", "added_count", "questions"),
    [
        # r3 not found, its place seen empty: a casualty
        ([(400.0, 400.0), (440.0, 400.0)], None, R3_CHANGED, ["r3"], [], 0, 0),
        # r3 not found where nothing changed: still there, the detector missed it
        ([(400.0, 400.0), (440.0, 400.0)], None, STILL, [], [], 0, 0),
        # r3 not found and the picture not compared: unseen, at its last place, never a casualty
        ([(400.0, 400.0), (440.0, 400.0)], None, None, [], ["r3"], 0, 0),
        # a reinforcement
        ([(400.0, 400.0), (440.0, 400.0), (480.0, 400.0), (1500.0, 200.0)], None, STILL, [], [], 1, 0),
        # a base of r3's size beyond its reach (15" + margin), its place seen empty: a casualty, and a question
        # (r3 moved too far?), not a move
        ([(400.0, 400.0), (440.0, 400.0), (480.0, 400.0 + 430.0)], None, R3_CHANGED, ["r3"], [], 1, 1),
        # ... within its reach, but its unit stood still (a cohesion rule) and the base is farther off than a model
        # strays from its group (group_reach_mm): taken off all the same, and the question
        ([(400.0, 400.0), (440.0, 400.0), (480.0, 400.0 + 300.0)], None, R3_CHANGED, ["r3"], [], 1, 1),
        # ... nearer: unseen, and the question
        ([(400.0, 400.0), (440.0, 400.0), (480.0, 400.0 + 40.0)], None, R3_CHANGED, [], ["r3"], 1, 1),
        # another base size where r3 stood: r3 was taken off, a new model put down
        ([(400.0, 400.0), (440.0, 400.0), (480.0, 400.0)], [32.0, 32.0, 50.0], R3_CHANGED, ["r3"], [], 1, 0),
        # r1 gone from its place, a base of its size far off: a casualty, and a question
        ([(440.0, 400.0), (480.0, 400.0), (1700.0, 1100.0)], None, R1_CHANGED, ["r1"], [], 1, 1),
    ],
)
def test_removed_unseen_and_added_models(
    points: list[tuple[float, float]],
    sizes: list[float] | None,
    changed: dict[str, float] | None,
    removed_ids: list[str],
    unseen_ids: list[str],
    added_count: int,
    questions: int,
) -> None:
    start = roster(LINE)
    *_, track, _ = identify(detected([(x, y) for _, x, y in LINE.values()]), EMPTY_TRACK, 0, SETTINGS, start)
    state, removed, added, after, asked = identify(detected(points, sizes), track, 1, SETTINGS, None, SKIRMISH, changed)
    assert sorted(p.model for p in removed) == removed_ids
    assert sorted(m.id for m in state.unseen) == unseen_ids == sorted(after.gone)
    assert len(added) == added_count and len(asked) == questions
    assert all(q.kind == "question" and "not seen; a new model at" in q.detail for q in asked)
    new_ids = {p.model for p in added}
    assert not new_ids & set(LINE)  # fresh ids never reuse an id of the game
    assert {m.id for m in state.models} == (set(LINE) - set(removed_ids) - set(unseen_ids)) | new_ids
    assert all(m.unit is not None and m.unit not in ("red", "blue") for m in state.models if m.id in new_ids)


@pytest.mark.parametrize(
    ("there", "max_probability", "r3_removed"),
    [
        # the picture shows no base at r3's place: it was taken off
        ({}, 0.4, True),
        # the detector missed r3, but the finder is fairly sure a base stands there: unseen, not a casualty
        ({(480.0, 400.0): 0.6}, 0.4, False),
        ({(480.0, 400.0): 0.39}, 0.4, True),
        # ... sure of a base elsewhere only
        ({(440.0, 400.0): 0.9}, 0.4, True),
        # the finder never asked: its place changed, and that is all a casualty takes
        ({(480.0, 400.0): 1.0}, 1.0, True),
    ],
)
def test_a_model_not_found_is_taken_off_only_where_no_base_is_seen_at_its_place(
    there: dict[tuple[float, float], float], max_probability: float, r3_removed: bool
) -> None:
    settings = dataclasses.replace(SETTINGS, gone_max_probability=max_probability)
    start = roster(LINE)
    *_, track, _ = identify(detected([(x, y) for _, x, y in LINE.values()]), EMPTY_TRACK, 0, SETTINGS, start)
    asked: list[tuple[float, float]] = []

    def base_there(x_mm: float, y_mm: float, diameter_mm: float) -> float:
        asked.append((x_mm, y_mm))
        assert diameter_mm == 32.0
        return there.get((x_mm, y_mm), 0.02)

    found = detected([(400.0, 400.0), (440.0, 400.0)])
    state, removed, *_ = identify(found, track, 1, settings, None, SKIRMISH, R3_CHANGED, base_there)
    assert [p.model for p in removed] == (["r3"] if r3_removed else [])
    assert [m.id for m in state.unseen] == ([] if r3_removed else ["r3"])
    assert asked == ([(480.0, 400.0)] if max_probability < 1 else [])


@pytest.mark.parametrize(("profile", "moved"), [("skirmish", False), ("killteam", True)])
def test_a_model_goes_far_alone_only_where_units_need_not_keep_together(profile: str, moved: bool) -> None:
    # r3's place changed and a base of its size stands 300 mm off, within its reach; r1 and r2 stood still. Under a
    # cohesion rule its unit stood as a whole: r3 was taken off, and the base is asked about. With none, r3 went there
    *_, track, _ = identify(detected([(x, y) for _, x, y in LINE.values()]), EMPTY_TRACK, 0, SETTINGS, roster(LINE))
    points = [(400.0, 400.0), (440.0, 400.0), (480.0, 700.0)]
    state, removed, _, _, asked = identify(
        detected(points), track, 1, SETTINGS, None, rules.load_profile(profile), R3_CHANGED
    )
    assert ([p.model for p in removed], len(asked)) == (([], 0) if moved else (["r3"], 1))
    assert ("r3" in {m.id for m in state.models}) is moved


@pytest.mark.parametrize(
    ("with_roster", "removed_count", "asked"),
    [
        # the roster lists every model: a base it does not list that goes is a question, not a casualty
        (True, 0, ["a base the roster does not list, is gone from (900, 300) mm"]),
        # no roster: every model is the review's own, and one whose place was seen empty is a casualty
        (False, 1, []),
    ],
)
def test_a_base_the_roster_does_not_list_is_no_casualty_when_it_goes(
    with_roster: bool, removed_count: int, asked: list[str]
) -> None:
    start = roster(LINE) if with_roster else None
    points = [(x, y) for _, x, y in LINE.values()]
    first, *_, track, _ = identify(detected([*points, (900.0, 300.0)]), EMPTY_TRACK, 0, SETTINGS, start)
    (extra,) = [m for m in first.models if (m.x_mm, m.y_mm) == (900.0, 300.0)]
    changed = {m.id: (0.9 if m.id == extra.id else 0.0) for m in first.models}
    state, removed, _, after, questions = identify(detected(points), track, 1, SETTINGS, start, SKIRMISH, changed)
    assert [p.model for p in removed] == [extra.id] * removed_count
    assert [q.detail.removeprefix(f"{extra.id}, ").split(":")[0] for q in questions] == asked
    assert all(q.kind == "question" and q.models == (extra.id,) for q in questions)
    # gone either way: neither on the table nor unseen
    assert extra.id not in {m.id for m in state.models} | set(after.gone)


@pytest.mark.parametrize(
    ("r1_to", "removed_ids", "unseen_ids"),
    [
        # r1 seen to move along a line its unit-mates did not take: they are not found, their places changed, and
        # they more likely went with their unit than were taken off: unseen, at their last places
        ((400.0, 480.0), [], ["r2", "r3"]),
        # r1 where it stood: nothing of red was seen to move, and r2 and r3 were taken off
        ((400.0, 400.0), ["r2", "r3"], []),
    ],
)
def test_a_model_not_found_whose_unit_was_seen_to_move_is_unseen_not_removed(
    r1_to: tuple[float, float], removed_ids: list[str], unseen_ids: list[str]
) -> None:
    *_, track, _ = identify(detected([(x, y) for _, x, y in LINE.values()]), EMPTY_TRACK, 0, SETTINGS, roster(LINE))
    changed = {"r1": 0.9, "r2": 0.9, "r3": 0.9}
    state, removed, _, after, _ = identify(detected([r1_to]), track, 1, SETTINGS, None, SKIRMISH, changed)
    assert sorted(p.model for p in removed) == removed_ids
    assert sorted(m.id for m in state.unseen) == unseen_ids == sorted(after.gone)
    assert [(m.id, m.x_mm, m.y_mm) for m in state.models] == [("r1", *r1_to)]


def test_a_model_missed_where_its_unit_moved_is_unseen_not_a_casualty() -> None:
    start = roster(LINE)
    *_, track, _ = identify(detected([(x, y) for _, x, y in LINE.values()]), EMPTY_TRACK, 0, SETTINGS, start)
    # the unit moved 150 mm; r2 was not found where it went, and every place of the unit changed
    moved = detected([(400.0, 550.0), (480.0, 550.0)])
    everywhere = {k: 1.0 for k in LINE}
    state, removed, _, _, asked = identify(moved, track, 1, SETTINGS, None, SKIRMISH, everywhere)
    assert removed == [] and asked == []
    assert [m.id for m in state.unseen] == ["r2"]
    assert {m.id: (m.x_mm, m.y_mm) for m in state.models} == {"r1": (400.0, 550.0), "r3": (480.0, 550.0)}


def test_a_model_unseen_once_comes_back_with_its_id() -> None:
    *_, track, _ = identify(detected([(x, y) for _, x, y in LINE.values()]), EMPTY_TRACK, 0, SETTINGS, roster(LINE))
    state, removed, _, track, _ = identify(detected([(400.0, 400.0), (440.0, 400.0)]), track, 1, SETTINGS)
    assert removed == [] and [m.id for m in state.unseen] == ["r3"]
    state, removed, added, track, _ = identify(
        detected([(400.0, 400.0), (440.0, 400.0), (481.0, 400.0)]), track, 2, SETTINGS
    )
    assert removed == [] and [(p.model, p.returned) for p in added] == [("r3", True)]
    assert state.model("r3").unit == "red" and not track.gone and state.unseen == ()


def test_a_roster_model_never_seen_is_unseen_and_its_calls_open() -> None:
    start = roster({**LINE, "b1": ("blue", 520.0, 400.0)})
    state, *_ = identify(detected([(x, y) for _, x, y in LINE.values()]), EMPTY_TRACK, 0, SETTINGS, start)
    assert [m.id for m in state.unseen] == ["b1"]
    found = rules.check(state, SKIRMISH)
    assert [(f.kind, f.call) for f in found if f.kind in ("unseen", "engaged")] == [
        ("unseen", "close"),
        ("engaged", "close"),
    ]


B1_NEVER_SEEN = {**LINE, "b1": ("blue", 520.0, 400.0), "b2": ("blue", 600.0, 400.0)}
SEEN_OF_IT = [(400.0, 400.0), (440.0, 400.0), (480.0, 400.0), (600.0, 400.0)]


@pytest.mark.parametrize(
    ("b1_changed", "more", "sizes", "b2_to", "removed_ids", "b1_unseen"),
    [
        # its whole place changed and no base stands there: taken off
        (1.0, [], None, None, ["b1"], False),
        # a part of its place changed (a neighbour's shadow, the light): still unseen where it was
        (0.6, [], None, None, [], True),
        # a base of another size now stands on its place: that base came, b1 was not seen leaving
        (1.0, [(521.0, 400.0)], [32.0] * 4 + [50.0], None, [], True),
        # a base of its size within its reach, its unit standing still: it did not go there alone (a question)
        (1.0, [(520.0, 700.0)], None, None, ["b1"], False),
        # ... beyond its reach: it was taken off all the same (and a question asked)
        (1.0, [(1700.0, 1100.0)], None, None, ["b1"], False),
        # its unit moved: it went with them
        (1.0, [], None, (600.0, 550.0), [], True),
        # the pictures not compared
        (None, [], None, None, [], True),
    ],
)
def test_a_model_never_seen_is_taken_off_only_where_its_whole_place_changed_and_stands_empty(
    b1_changed: float | None,
    more: list[tuple[float, float]],
    sizes: list[float] | None,
    b2_to: tuple[float, float] | None,
    removed_ids: list[str],
    b1_unseen: bool,
) -> None:
    *_, track, _ = identify(detected(SEEN_OF_IT), EMPTY_TRACK, 0, SETTINGS, roster(B1_NEVER_SEEN))
    assert track.state is not None and [m.id for m in track.state.unseen] == ["b1"]
    points = [*SEEN_OF_IT[:3], b2_to or SEEN_OF_IT[3], *more]
    changed = None if b1_changed is None else {**STILL, "b1": b1_changed, "b2": 1.0 if b2_to else 0.0}
    state, removed, *_ = identify(detected(points, sizes), track, 1, SETTINGS, None, SKIRMISH, changed)
    assert [p.model for p in removed] == removed_ids
    assert ("b1" in {m.id for m in state.unseen}) is b1_unseen


@pytest.mark.parametrize(
    ("b1_changed", "off_mm", "b1_returned"),
    [
        # nothing changed at its place: it did not move, and a base 80 mm off is another ...
        (0.0, 80.0, False),
        # ... but one read 25 mm off may be it (a roster's place is trusted to roster_gate_mm, 40 mm)
        (0.0, 25.0, True),
        # its place changed: it may have moved there
        (1.0, 80.0, True),
    ],
)
def test_an_unseen_model_whose_place_did_not_change_is_not_paired_far_off(
    b1_changed: float, off_mm: float, b1_returned: bool
) -> None:
    points = [(x, y) for _, x, y in LINE.values()]
    *_, track, _ = identify(detected(points), EMPTY_TRACK, 0, SETTINGS, roster({**LINE, "b1": ("blue", 520.0, 400.0)}))
    changed = {**STILL, "b1": b1_changed}
    state, _, added, *_ = identify(
        detected([*points, (520.0, 400.0 + off_mm)]), track, 1, SETTINGS, None, SKIRMISH, changed
    )
    assert [(p.model, p.returned) for p in added] == ([("b1", True)] if b1_returned else [(added[0].model, False)])
    assert ("b1" in {m.id for m in state.unseen}) is not b1_returned
