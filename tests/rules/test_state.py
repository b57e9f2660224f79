"""Loading, validating and writing table states."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest

import rules

GOOD: dict[str, Any] = {
    "table": {"width_mm": 1829, "depth_mm": 1219},
    "units": [
        {"id": "clones", "player": "Will", "name": "Clone Troopers", "leader": "c1", "move_in": 6, "abilities": ["fly"]}
    ],
    "models": [
        {
            "id": "c1",
            "unit": "clones",
            "x_mm": 400.0,
            "y_mm": 300.0,
            "base": {"diameter_mm": 27},
            "sigma_mm": 0.3,
            "doubt_mm": [0.6, -0.8],
        },
        {
            "id": "c2",
            "unit": "clones",
            "x_mm": 450.0,
            "y_mm": 300.0,
            "base": {"width_mm": 60, "depth_mm": 35, "rotation_deg": 30, "size_sigma_mm": 0.4},
        },
        {"id": "m9", "unit": None, "x_mm": 900.0, "y_mm": 600.0, "base": {"diameter_mm": 32, "height_mm": 3.5}},
    ],
    "terrain": [{"id": "ruin1", "kind": "solid", "height_mm": 120, "polygon": [[0, 0], [100, 0], [100, 80]]}],
    "calibration": {"markers_used": [0, 1, 2], "reprojection_error_mm": 0.2},
}


def _with(path: str, value: Any) -> dict[str, Any]:
    """GOOD with the entry at a dotted path ("models.0.x_mm") set to value (or removed for ...)."""
    data = copy.deepcopy(GOOD)
    keys = path.split(".")
    target: Any = data
    for k in keys[:-1]:
        target = target[int(k)] if isinstance(target, list) else target[k]
    last = keys[-1]
    if value is ...:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return data


def test_good_state_loads_with_every_field() -> None:
    state = rules.state_from_dict(GOOD)
    assert state.table == rules.Table(1829.0, 1219.0)
    assert state.unit("clones").abilities == ("fly",)
    assert state.model("c1").base == rules.RoundBase(27.0)
    assert state.model("c2").base == rules.OvalBase(60.0, 35.0, 30.0, 0.4)
    assert state.model("c2").sigma_mm == 0.0
    assert state.model("c1").doubt_mm == (0.6, -0.8) and state.model("c2").doubt_mm == (0.0, 0.0)
    assert state.model("c1").sigma_most_mm == pytest.approx(math.hypot(0.3, 1.0))
    assert state.model("m9").unit is None
    assert state.model("m9").base == rules.RoundBase(32.0, height_mm=3.5)
    assert state.terrain[0].polygon[2] == (100.0, 80.0)


def test_round_trip_is_lossless(tmp_path: Path) -> None:
    state = rules.state_from_dict(GOOD)
    path = tmp_path / "state.json"
    rules.dump_state(state, path)
    again = rules.load_state(path)
    assert again == state
    assert json.loads(path.read_text())["calibration"] == GOOD["calibration"]
    assert json.loads(path.read_text())["models"][2]["base"] == {"diameter_mm": 32.0, "height_mm": 3.5}
    # a doubt along a line is written only where there is one
    assert [m.get("doubt_mm") for m in json.loads(path.read_text())["models"]] == [[0.6, -0.8], None, None]
    assert rules.state_to_dict(again) == rules.state_to_dict(state)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("models.0.unit", "clone", "unit 'clone' is not defined"),
        ("models.1.id", "c1", "duplicate model id"),
        ("units.0.leader", "m9", "leader 'm9' is not a model of this unit"),
        ("models.0.base", {"diameter_mm": -27}, "base sizes must be numbers from 1 mm"),
        ("models.1.base", {"width_mm": 60, "depth_mm": 0}, "base sizes must be numbers from 1 mm"),
        # an oval of 1e-6 by 1000 mm: its outline's measure divides by nothing
        ("models.1.base", {"width_mm": 1e-6, "depth_mm": 1000}, "base sizes must be numbers from 1 mm"),
        ("models.0.base", {"diameter_mm": 0.5}, "base sizes must be numbers from 1 mm"),
        ("models.0.x_mm", float("nan"), "'x_mm' must be a finite number"),
        # JSON allows whole numbers of any length: one beyond a float's range is named, not an OverflowError
        ("models.0.x_mm", 10**400, "'x_mm' must be a finite number, got a whole number too large"),
        ("models.0.base", {"diameter_mm": 10**400}, "'diameter_mm' must be a finite number"),
        ("models.0.doubt_mm", [0.5, -(10**400)], "doubt_mm must be a finite number"),
        ("terrain.0.polygon", [[0, 0], [10**400, 0], [0, 5]], "polygon[1] must be a finite number"),
        ("models.0.sigma_mm", -0.1, "sigma_mm must be a non-negative"),
        ("models.0.doubt_mm", [0.5], "doubt_mm must be [dx_mm, dy_mm]"),
        ("models.0.doubt_mm", 0.5, "doubt_mm must be [dx_mm, dy_mm]"),
        ("models.0.doubt_mm", [0.5, "1"], "doubt_mm must be [dx_mm, dy_mm]"),
        ("models.0.doubt_mm", [0.5, math.inf], "doubt_mm must be two finite numbers"),
        # finite, but beyond what the geometry can square
        ("models.0.x_mm", 1e300, r"x_mm and y_mm must be finite numbers of at most 1e\+06 in size, got 1e\+300"),
        ("models.0.base", {"diameter_mm": 1e300}, r"base sizes must be numbers from 1 mm, of at most 1e\+06 in size"),
        ("terrain.0.polygon", [[0, 0], [1e300, 0], [0, 5]], r"polygon points must be finite numbers of at most 1e\+06"),
        ("table.width_mm", 1e300, r"width_mm and depth_mm must be at most 100000 mm, got 1e\+300 x"),
        ("models.0.base", {"diameter_mm": 27, "size_sigma_mm": -1}, "size_sigma_mm must be a non-negative"),
        ("models.0.base", {"diameter_mm": 27, "height_mm": 0}, "height_mm must be a positive number"),
        ("models.0.base", {"diameter_mm": 27, "height_mm": "4"}, "'height_mm' must be a number"),
        ("models.0.y_mm", "300", "'y_mm' must be a number"),
        ("models.0.y_mm", ..., "missing 'y_mm'"),
        ("models.0.base", {"radius_mm": 5}, "expected diameter_mm"),
        ("table.width_mm", 0, "must be positive"),
        ("table", ..., "missing 'table'"),
        ("terrain.0.kind", "lava", "kind 'lava' is not one of solid, sealed, dense, area"),
        ("terrain.0.polygon", [[0, 0], [1, 1]], "at least 3 points"),
        ("terrain.0.polygon", [[0, 0], [1, 1], [2]], "polygon[2] must be [x_mm, y_mm]"),
        # a ring with no inside: what stands in it would be a guess
        ("terrain.0.polygon", [[0, 0], [10, 10], [10, 0], [0, 10]], "polygon crosses itself or encloses no area"),
        ("terrain.0.polygon", [[0, 0], [5, 0], [10, 0]], "polygon crosses itself or encloses no area"),
        ("terrain.0.polygon", [[3, 3]] * 4, "polygon crosses itself or encloses no area"),
        ("units.0.move_in", -1, "move_in must be a non-negative"),
        ("units.0.abilities", ["fly", 3], "abilities must be a list of strings"),
        ("models", {"c1": 1}, "'models' must be a list"),
    ],
)
def test_bad_state_names_the_entry(path: str, value: Any, message: str) -> None:
    with pytest.raises(rules.StateError, match=message.replace("[", r"\[").replace("]", r"\]")):
        rules.state_from_dict(_with(path, value))


def test_error_names_model_by_index_and_id() -> None:
    with pytest.raises(rules.StateError) as info:
        rules.state_from_dict(_with("models.1.x_mm", math.inf))
    assert "models[1] (id 'c2')" in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"table": 5}', "table: expected a JSON object"),
        # more digits than Python turns into a whole number: a ValueError of the parser, not a JSONDecodeError
        ('{"table": {"width_mm": ' + "9" * 5000 + "}}", "not usable JSON .*5000 digits"),
    ],
)
def test_bad_file_content(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(rules.StateError, match=message):
        rules.load_state(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(rules.StateError, match="no such file"):
        rules.load_state(tmp_path / "nope.json")


def test_numeric_ids_are_kept_as_strings() -> None:
    data = _with("models.2.id", 7)
    assert rules.state_from_dict(data).models[2].id == "7"
