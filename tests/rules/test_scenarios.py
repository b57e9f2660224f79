"""Golden scenarios: hand-worked expected findings for each profile (see tests/rules/scenarios/*.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rules

SCENARIOS = Path(__file__).parent / "scenarios"
GAP_TOLERANCE_MM = 1e-3


def _cases() -> list[Any]:
    cases = []
    for path in sorted(SCENARIOS.glob("*.json")):
        data = json.loads(path.read_text())
        for profile, expected in data["expected"].items():
            cases.append(pytest.param(path.stem, profile, expected, id=f"{path.stem}-{profile}"))
    return cases


@pytest.mark.parametrize(("scenario", "profile", "expected"), _cases())
def test_scenario_findings(scenario: str, profile: str, expected: list[dict[str, Any]]) -> None:
    data = json.loads((SCENARIOS / f"{scenario}.json").read_text())
    state = rules.state_from_dict(data["state"])
    got = [f.to_dict() for f in rules.check(state, rules.load_profile(profile))]
    assert len(got) == len(expected), f"{scenario}/{profile}: got {json.dumps(got, indent=1)}"
    for g, e in zip(got, expected, strict=True):
        for key, value in e.items():
            if key.endswith("_mm"):
                assert g[key] == pytest.approx(value, abs=GAP_TOLERANCE_MM), (key, g, e)
            else:
                assert g[key] == value, (key, g, e)
