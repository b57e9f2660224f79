"""The judge's measurement against each line of a profile."""

from __future__ import annotations

import pytest

import rules
from tests.rules.conftest import model, state_of

UNITS = [{"id": "red", "player": "A"}, {"id": "blue", "player": "B"}]


@pytest.mark.parametrize(
    ("gap_mm", "sigma_mm", "line", "within", "call"),
    [
        (0.5, 0.0, "base_contact", True, rules.CLEAR),
        (1.2, 0.0, "base_contact", False, rules.CLEAR),
        (1.2, 0.2, "base_contact", False, rules.CLOSE),
        (50.8, 0.0, "engagement", True, rules.CLEAR),
        (50.81, 0.0, "engagement", False, rules.CLEAR),
        (50.0, 0.3, "engagement", True, rules.CLOSE),
        (45.0, 0.3, "cohesion", True, rules.CLEAR),
    ],
)
def test_verdicts(gap_mm: float, sigma_mm: float, line: str, within: bool, call: str) -> None:
    state = state_of(
        [
            model("a", "red", 100.0, 100.0, sigma_mm=sigma_mm),
            model("b", "red" if line == "cohesion" else "blue", 132.0 + gap_mm, 100.0, sigma_mm=sigma_mm),
        ],
        UNITS,
    )
    m = rules.measure(state, "a", "b", rules.load_profile("skirmish"))
    assert m.gap_mm == pytest.approx(gap_mm)
    assert m.sigma_mm == pytest.approx((2 * sigma_mm**2) ** 0.5)
    (verdict,) = [v for v in m.verdicts if v.line == line]
    assert (verdict.within, verdict.call) == (within, call)


@pytest.mark.parametrize(
    ("doubt_a", "doubt_b", "sigma_mm"),
    [
        ((0.0, 0.0), (0.0, 0.0), 0.5),
        ((1.2, 0.0), (0.0, 0.0), 1.3),  # along the line between the centres: all of it counts
        ((0.0, 1.2), (0.0, 1.2), 0.5),  # across it: none of it
        ((-0.6, 0.9), (0.0, 0.0), 0.781),  # the part along the line, 0.6 mm
        ((0.9, 0.0), (-1.2, 0.0), 1.581),  # both ends, whatever the sign
    ],
)
def test_a_doubt_along_a_line_counts_as_far_as_it_runs_along_the_gap(
    doubt_a: tuple[float, float], doubt_b: tuple[float, float], sigma_mm: float
) -> None:
    # b lies along +x from a: a gap measured across a doubt's line is as sure as without it
    a, b = model("a", "red", 100.0, 100.0, sigma_mm=0.3), model("b", "blue", 140.0, 100.0, sigma_mm=0.4)
    state = state_of([{**a, "doubt_mm": list(doubt_a)}, {**b, "doubt_mm": list(doubt_b)}], UNITS)
    assert rules.measure(state, "a", "b", rules.load_profile("skirmish")).sigma_mm == pytest.approx(sigma_mm, abs=1e-3)


@pytest.mark.parametrize(("a", "b", "message"), [("a", "zz", "model 'zz' is not in the state"), ("a", "a", "twice")])
def test_bad_ids(a: str, b: str, message: str) -> None:
    state = state_of([model("a", "red", 100.0, 100.0), model("b", "blue", 200.0, 100.0)], UNITS)
    with pytest.raises(rules.StateError, match=message):
        rules.measure(state, a, b, rules.load_profile("legion"))


@pytest.mark.parametrize(
    ("unit_b", "lines"),
    [
        ("blue", ["engagement", "base_contact"]),  # enemies: no cohesion between them
        ("red", ["base_contact", "cohesion"]),  # one unit: no engagement
        ("green", ["base_contact"]),  # a friendly unit of the same player
        (None, ["engagement", "base_contact", "cohesion"]),  # a model of no unit: every line
    ],
)
def test_lines_that_apply_to_the_pair(unit_b: str | None, lines: list[str]) -> None:
    units = [*UNITS, {"id": "green", "player": "A"}]
    state = state_of([model("a", "red", 100.0, 100.0), model("b", unit_b, 200.0, 100.0)], units)
    assert [v.line for v in rules.measure(state, "a", "b", rules.load_profile("skirmish")).verdicts] == lines


def test_lines_follow_the_profile() -> None:
    state = state_of([model("a", "red", 100.0, 100.0), model("b", "blue", 200.0, 100.0)], UNITS)
    lines = [v.line for v in rules.measure(state, "a", "b", rules.load_profile("killteam")).verdicts]
    assert lines == ["engagement", "base_contact"]
