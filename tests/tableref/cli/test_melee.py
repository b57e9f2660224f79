"""`tableref melee`: the proposed steps as text and JSON, the proposed state, exit codes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rules
from tableref.cli import main


def _model(model_id: str, unit: str, x_mm: float, y_mm: float) -> dict[str, Any]:
    return {"id": model_id, "unit": unit, "x_mm": x_mm, "y_mm": y_mm, "base": {"diameter_mm": 27}}


# The clones' leader c0 has moved into base contact with the droids' leader d0; c1 and c2 stand 3" back.
STATE = {
    "table": {"width_mm": 1829, "depth_mm": 1219},
    "units": [
        {"id": "clones", "player": "Will", "name": "Clone Troopers", "leader": "c0", "move_in": 6},
        {"id": "droids", "player": "Tony", "name": "Battle Droids", "leader": "d0", "move_in": 6},
    ],
    "models": [
        _model("c0", "clones", 600.0, 523.0),
        _model("c1", "clones", 570.0, 450.0),
        _model("c2", "clones", 630.0, 450.0),
        _model("d0", "droids", 600.0, 550.0),
        _model("d1", "droids", 560.0, 550.0),
        _model("d2", "droids", 640.0, 550.0),
        _model("d3", "droids", 600.0, 600.0),
    ],
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def state_file(tmp_path: Path) -> Path:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(STATE))
    return path


def test_json_steps_in_the_texts_order(state_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "melee", str(state_file), "clones", "--json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert (doc["profile"], doc["unit"], doc["enemy"]) == ("legion", "clones", "droids")
    assert [s["step"] for s in doc["steps"]] == ["others", "others", "opponent_leader", "opponent_others",
                                                 "opponent_others", "opponent_others"]  # fmt: skip
    assert {s["model"] for s in doc["steps"] if s["step"] == "others" and s["touching"]} == {"c1", "c2"}
    assert all(len(s["to_mm"]) == 2 and s["reason"] for s in doc["steps"])


def test_readable_steps_and_the_proposed_state(
    state_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "proposed.json"
    code, out, _ = run(capsys, "melee", str(state_file), "clones", "--out", str(out_file))
    assert code == 0
    assert "Profile: legion" in out
    assert "Melee of Clone Troopers (clones) with Battle Droids (droids)" in out
    assert "1. The other models of Clone Troopers (clones)" in out
    assert "  d0: stays at (600.0, 550.0) mm, in base contact with c0 - already in base contact" in out
    assert f"Proposed state written to {out_file}" in out
    proposed = rules.load_state(out_file)
    found = rules.check(proposed, rules.load_profile("legion"))
    assert [f.kind for f in found] == ["engaged"]
    before = rules.load_state(state_file)
    assert proposed.model("c0") == before.model("c0")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nobody"], "unknown unit 'nobody'; the state's units are clones, droids"),
        (["clones", "--profile", "skirmish"], "profile 'skirmish' has no melee procedure"),
        (["clones", "--profile", "chess"], "unknown profile 'chess'"),
        (["clones", "--out", "/nonexistent-dir/proposed.json"], "no folder /nonexistent-dir to write it into"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    state_file: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run(capsys, "melee", str(state_file), *args)
    assert code == 2 and out == ""
    assert err.startswith("tableref melee: error: ") and message in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [(None, "no such file"), ("{oops", "not valid JSON"), ('{"table": {}}', "missing 'width_mm'")],
)
def test_a_bad_state_file_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, message: str
) -> None:
    path = tmp_path / "state.json"
    if text is not None:
        path.write_text(text)
    code, _, err = run(capsys, "melee", str(path), "clones")
    assert code == 2 and message in err and err.count("\n") == 1
