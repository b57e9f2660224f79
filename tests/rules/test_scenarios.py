"""Golden scenarios: hand-worked expected findings for each profile (see tests/rules/scenarios/*.json).

A scenario with an ``after`` state (and maybe ``actions``) is a move: ``state`` is the table before it and the
expected entries are the unit verdicts of ``rules.check_moves``, matched by unit id. Each expected
problem is a part of the problem found at its place, and an expected note a part of the note, so that a golden file
need not repeat every measured digit; expected findings (the melee procedure's) are matched key by key.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import rules

SCENARIOS = Path(__file__).parent / "scenarios"
GAP_TOLERANCE_MM = 1e-3


def _cases(moves: bool = False) -> list[Any]:
    cases = []
    for path in sorted(SCENARIOS.glob("*.json")):
        data = json.loads(path.read_text())
        if ("after" in data) is not moves:
            continue
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


@pytest.mark.parametrize(("scenario", "profile", "expected"), _cases(moves=True))
def test_scenario_moves(scenario: str, profile: str, expected: list[dict[str, Any]]) -> None:
    data = json.loads((SCENARIOS / f"{scenario}.json").read_text())
    before = rules.state_from_dict(data["state"])
    after = rules.state_from_dict(data["after"])
    verdicts = rules.check_moves(before, after, rules.load_profile(profile), data.get("actions"))
    got = sorted((v.to_dict() for v in verdicts), key=lambda v: str(v["unit"]))
    expected = sorted(expected, key=lambda v: str(v["unit"]))
    assert len(got) == len(expected), f"{scenario}/{profile}: got {json.dumps(got, indent=1)}"
    for g, e in zip(got, expected, strict=True):
        for key, value in e.items():
            if key == "problems":
                assert len(g[key]) == len(value), (g, e)
                assert all(part in found for part, found in zip(value, g[key], strict=True)), (g[key], value)
            elif key == "note":
                assert value in g[key], (g[key], value)
            elif key == "findings":
                assert len(g[key]) == len(value), (g[key], value)
                for found, wanted in zip(g[key], value, strict=True):
                    _assert_matches(found, wanted)
            elif key.endswith("_mm"):
                assert g[key] == pytest.approx(value, abs=GAP_TOLERANCE_MM), (key, g, e)
            else:
                assert g[key] == value, (key, g, e)


def _assert_matches(got: dict[str, Any], expected: dict[str, Any]) -> None:
    """Every key of ``expected`` is in ``got`` with its value; millimetres (numbers or [x_mm, y_mm]) to a
    micrometre."""
    for key, value in expected.items():
        assert key in got, (key, got, expected)
        if key.endswith("_mm"):
            assert got[key] == pytest.approx(value, abs=GAP_TOLERANCE_MM), (key, got, expected)
        else:
            assert got[key] == value, (key, got, expected)


def _clause_rows() -> list[Any]:
    """The clause tables of docs/rules.md: (clause, [(scenario file, [case, ...]), ...]) per row."""
    docs = Path(__file__).parents[2] / "docs" / "rules.md"
    rows = []
    for line in docs.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not re.fullmatch(r"00[02]\.R?\d+", cells[0]):
            continue
        refs = [(m.group(1), [c.strip() for c in (m.group(2) or "").split(",") if c.strip()])
                for m in re.finditer(r"(\w+)(?: \(([^)]*)\))?", cells[3])]  # fmt: skip
        rows.append(pytest.param(cells[0], refs, id=cells[0]))
    return rows


@pytest.mark.parametrize(("clause", "refs"), _clause_rows())
def test_every_clause_names_golden_scenarios_that_exist(clause: str, refs: list[tuple[str, list[str]]]) -> None:
    assert refs, clause
    for name, cases in refs:
        path = SCENARIOS / f"{name}.json"
        assert path.is_file(), (clause, name)
        data = json.loads(path.read_text())
        states = [data["state"], data.get("after", data["state"])]
        ids = {x["id"] for s in states for x in s["units"] + s["models"]}
        assert set(cases) <= ids, (clause, name, sorted(set(cases) - ids))


def test_both_seeds_have_their_clause_tables() -> None:
    clauses = [p.values[0] for p in _clause_rows()]
    assert sum(c.startswith("000.") for c in clauses) >= 13 and sum(c.startswith("002.") for c in clauses) >= 28
