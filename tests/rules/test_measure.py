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
            model("b", "blue", 132.0 + gap_mm, 100.0, sigma_mm=sigma_mm),
        ],
        UNITS,
    )
    m = rules.measure(state, "a", "b", rules.load_profile("skirmish"))
    assert m.gap_mm == pytest.approx(gap_mm)
    assert m.sigma_mm == pytest.approx((2 * sigma_mm**2) ** 0.5)
    (verdict,) = [v for v in m.verdicts if v.line == line]
    assert (verdict.within, verdict.call) == (within, call)


@pytest.mark.parametrize(("a", "b", "message"), [("a", "zz", "model 'zz' is not in the state"), ("a", "a", "twice")])
def test_bad_ids(a: str, b: str, message: str) -> None:
    state = state_of([model("a", "red", 100.0, 100.0), model("b", "blue", 200.0, 100.0)], UNITS)
    with pytest.raises(rules.StateError, match=message):
        rules.measure(state, a, b, rules.load_profile("legion"))


def test_lines_follow_the_profile() -> None:
    state = state_of([model("a", "red", 100.0, 100.0), model("b", "blue", 200.0, 100.0)], UNITS)
    lines = [v.line for v in rules.measure(state, "a", "b", rules.load_profile("killteam")).verdicts]
    assert lines == ["engagement", "base_contact"]
