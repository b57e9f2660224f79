"""The sample game, made by its one command and reviewed by another: every settled state, every true move (start
and end within 4 mm, length within 2 mm), no invented move, the casualty removed."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from synth import make_game
from tableref.cli import main
from tableref.review.store import ReviewStore

START_END_MM = 4.0
LENGTH_MM = 2.0
STILL_MM = 5.0


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    folder = tmp_path_factory.mktemp("sample_game")
    assert make_game.main(["--out", str(folder)]) == 0
    out = folder / "review.sqlite"
    args = ["review", "game.avi", "--roster", "roster.json", "--table", "table.toml", "--camera", "camera.json"]
    code = main([*(str(folder / a) if a.endswith((".avi", ".json", ".toml")) else a for a in args), "--out", str(out)])
    assert code == 0
    with ReviewStore(out, readonly=True) as store:
        reviewed = store.timeline()
    truth = json.loads((folder / "truth.json").read_text("utf-8"))
    return folder, reviewed, truth


def _places(state: dict[str, Any]) -> dict[str, tuple[float, float]]:
    return {m["id"]: (m["x_mm"], m["y_mm"]) for m in state["models"]}


def test_every_settled_state_is_found(game: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    _, reviewed, truth = game
    frames = [s["frame"] for s in reviewed["states"]]
    assert len(frames) == len(truth["holds"])
    # a state shows from the end of the hold before (a model taken off moves no hand) to the end of its own
    after = [-1] + [last for _, last in truth["holds"][:-1]]
    assert all(a < f <= last for f, a, (_, last) in zip(frames, after, truth["holds"], strict=True))


def test_every_true_move_is_found_and_none_invented(game: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    _, reviewed, truth = game
    found = {(m["model"], m["to_state"]): m for m in reviewed["moves"]}
    states = [_places(s) for s in truth["states"]]
    for k in range(1, len(states)):
        for model, end in states[k].items():
            start = states[k - 1][model]
            length = math.dist(start, end)
            got = found.pop((model, k), None)
            if length < STILL_MM:
                assert got is None, (model, k, got)
                continue
            assert got is not None, (model, k)
            assert math.dist(got["from_mm"], start) <= START_END_MM and math.dist(got["to_mm"], end) <= START_END_MM
            assert abs(got["distance_mm"] - length) <= LENGTH_MM
    assert [m for m in found.values() if m["distance_mm"] > STILL_MM] == []


def test_the_casualty_is_removed_and_the_moves_are_judged(game: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    _, reviewed, _ = game
    assert [(p["model"], p["state"]) for p in reviewed["removed"]] == [("c3", 3)]
    verdicts = [(v["unit"], v["to_state"], v["action"], v["legal"]) for v in reviewed["unit_moves"]]
    assert verdicts == [
        ("clones", 1, "move", True),
        ("droids", 2, "charge", True),
        ("commandos", 4, "advance", True),
    ]
    assert [e["kind"] for e in reviewed["events"]] == ["engaged"]
