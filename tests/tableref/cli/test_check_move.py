"""`tableref check-move`: verdicts between two states as text and JSON, exit codes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tableref.cli import main

SCENARIO = Path(__file__).parents[2] / "rules" / "scenarios" / "move_attack_action.json"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    data = json.loads(SCENARIO.read_text())
    out = {}
    for key in ("state", "after", "actions"):
        out[key] = tmp_path / f"{key}.json"
        out[key].write_text(json.dumps(data[key]))
    return out


@pytest.mark.parametrize(
    ("with_actions", "unit", "action", "legal"),
    [
        (True, "leaver", "move", False),  # left engagement after attacking
        (False, "leaver", "move", True),  # nothing declared: a Move that uses the Attack Action
        (True, "sprinter", None, False),
        (False, "sprinter", "advance", True),
        (True, "runner", "advance", True),
    ],
)
def test_json_verdicts(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], with_actions: bool, unit: str, action: Any, legal: bool
) -> None:
    extra = ["--actions", str(files["actions"])] if with_actions else []
    code, out, err = run(capsys, "check-move", str(files["state"]), str(files["after"]), "--json", *extra)
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["profile"] == "skirmish"
    verdict = next(v for v in doc["moves"] if v["unit"] == unit)
    assert (verdict["action"], verdict["legal"]) == (action, legal)


def test_readable_verdicts(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "check-move", str(files["state"]), str(files["after"]), "--actions", str(files["actions"])
    )
    assert code == 0
    assert "Profile: skirmish" in out
    assert "leaver: move (declared) - ILLEGAL" in out
    assert "after the Attack Action was used" in out
    assert 'runner1: 8.00" (203.20 mm) straight' in out


def test_no_unit_moved(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check-move", str(files["state"]), str(files["state"]))
    assert code == 0 and "No unit moved." in out


@pytest.mark.parametrize(
    ("actions", "profile", "message"),
    [
        ('{"leaver": "sprint"}', "skirmish", "unknown action 'sprint'; expected one of move, charge-only"),
        ('{"leaver": {"attack_used": 1}}', "skirmish", "attack_used must be true or false"),
        ("{oops", "skirmish", "not valid JSON"),
        ("null", "skirmish", "expected an object mapping unit ids to actions, got null"),
        ('["leaver"]', "skirmish", "expected an object mapping unit ids to actions, got list"),
        (None, "skirmish", "no such file"),
        ('{"leaver": "move"}', "chess", "unknown profile 'chess'"),
        ('{"leavr": "move"}', "skirmish", "actions for units not in the state: leavr; expected units of the state"),
        ('{"leaver": {"action": "move", "why": 1}}', "skirmish", "unknown keys ['why']"),
        ('["move"]', "skirmish", "expected an object mapping unit ids to actions"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    actions: str | None,
    profile: str,
    message: str,
) -> None:
    path = tmp_path / "bad_actions.json"
    if actions is not None:
        path.write_text(actions)
    args = ["check-move", str(files["state"]), str(files["after"]), "--actions", str(path), "--profile", profile]
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith("tableref check-move: error: ") and message in err
    assert err.count("\n") == 1


def test_a_missing_state_is_exit_2(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check-move", str(files["state"]), str(tmp_path / "nowhere.json"))
    assert code == 2 and "nowhere.json: no such file" in err
