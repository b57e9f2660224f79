"""The words of a finding in the text and HTML reports."""

from __future__ import annotations

import pytest

import rules
from tableref.report import describe_finding, finding_measure

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
