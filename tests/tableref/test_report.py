"""The words of a finding in the text and HTML reports."""

from __future__ import annotations

import pytest

import rules
from tableref.report import describe_finding, finding_measure, finding_title, format_game

STATE = rules.TableState(
    rules.Table(1000.0, 800.0),
    (rules.Unit("u1", name="Rangers"),),
    (rules.Model("r1", "u1", 100.0, 100.0, rules.RoundBase(32.0)),),
)


@pytest.mark.parametrize(
    ("finding", "summary", "measure"),
    [
        (rules.Finding("in_terrain", ("r1",), terrain="ruin"), "r1 in ruin", ""),
        # standing on top of the piece, the base 6.1 mm over the top's edge
        (
            rules.Finding("in_terrain", ("r1",), gap_mm=-6.1, limit_mm=0.0, sigma_mm=0.2, terrain="tower"),
            "r1 on tower, over its edge",
            "over the edge",
        ),
        (rules.Finding("off_table", ("r1",), gap_mm=-3.0, limit_mm=0.0), "r1", "over the edge"),
    ],
)
def test_placement_findings_say_where_the_base_is(finding: rules.Finding, summary: str, measure: str) -> None:
    assert describe_finding(STATE, finding) == summary
    said = finding_measure(finding)
    assert measure in said and "-" not in said


@pytest.mark.parametrize(
    ("finding", "title", "summary", "measure"),
    [
        # 14" on a shortest legal path against the 12" of an Advance
        (
            rules.Finding("illegal_move", ("r1",), unit="u1", gap_mm=355.6, limit_mm=304.8, sigma_mm=0.5),
            "Illegal moves",
            "Rangers (u1) moved r1",
            'moved up to 14.00" ± 0.02" (355.60 ± 0.50 mm), allowed 12.00" (304.80 mm)',
        ),
        # walls all round: no legal path at all
        (
            rules.Finding("illegal_move", ("r1",), unit="u1", gap_mm=float("inf"), limit_mm=152.4),
            "Illegal moves",
            "Rangers (u1) moved r1",
            'moved by no legal path, allowed 6.00" (152.40 mm)',
        ),
        # no Move to judge the length by: an open call, not an illegal move
        (
            rules.Finding("illegal_move", ("r1",), unit="u1", gap_mm=355.6, call=rules.CLOSE),
            "Move not judged",
            "Rangers (u1) moved r1: its Move is not known, the distance was not judged",
            "",
        ),
    ],
)
def test_a_move_is_told_in_words(finding: rules.Finding, title: str, summary: str, measure: str) -> None:
    assert finding_title(finding) == title
    assert describe_finding(STATE, finding) == summary
    assert finding_measure(finding) == measure


def _game(doubted: list[dict[str, float]]) -> dict[str, object]:
    state = {"index": 0, "frame": 0, "time_s": 0.0, "models": [], "units": [], "findings": [], "doubted": doubted}
    return {"states": [state], "moves": [], "unit_moves": [], "removed": [], "added": [], "events": []}


@pytest.mark.parametrize(
    ("doubted", "said"),
    [
        ([], None),
        (
            [{"x_mm": 474.1, "y_mm": 980.3, "diameter_mm": 26.5, "probability": 0.76}],
            "  a base may stand, not accepted, at (474, 980) mm: look again",
        ),
        (
            [
                {"x_mm": 10.0, "y_mm": 20.0, "diameter_mm": 32.0, "probability": 0.7},
                {"x_mm": 817.6, "y_mm": 622.2, "diameter_mm": 58.0, "probability": 0.65},
            ],
            "  a base may stand, not accepted, at (10, 20) mm, (818, 622) mm: look again",
        ),
    ],
)
def test_a_reviewed_state_says_where_a_base_may_stand_unaccepted(
    doubted: list[dict[str, float]], said: str | None
) -> None:
    lines = format_game(_game(doubted)).splitlines()
    told = [x for x in lines if "may stand" in x]
    assert told == ([] if said is None else [said])
