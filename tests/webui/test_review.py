"""The Review screen: a stored review's timeline, stepping through states, the map, frames and the game report."""

from __future__ import annotations

import dataclasses
import html
import re
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flask import Flask

import rules
from tableref.config import load_config
from tableref.review.store import Resume, ReviewStore
from tableref.review.timeline import ReviewedState, review_states
from tests.webui.conftest import AUTH
from webui.blueprints.review import REVIEW_KEY, map_view

INCH = 25.4
UNITS = (rules.Unit("red", player="A", move_in=6), rules.Unit("blue", player="B", move_in=6))
TABLE = rules.Table(1829.0, 1219.0)


def _state(points: dict[str, tuple[float, float]]) -> rules.TableState:
    return rules.TableState(
        TABLE,
        (),
        tuple(rules.Model(f"m{k}", None, x, y, rules.RoundBase(32.0)) for k, (x, y) in enumerate(points.values())),
    )


GAME = [
    {"r1": (300.0, 300.0), "r2": (340.0, 300.0), "b1": (1200.0, 600.0)},
    {"r1": (300.0 + 5 * INCH, 300.0), "r2": (340.0 + 5 * INCH, 300.0), "b1": (1200.0, 600.0)},
    {"r1": (300.0 + 5 * INCH, 300.0), "r2": (340.0 + 5 * INCH, 300.0 + 14 * INCH)},
]


def crowded_game(n: int = 5) -> list[dict[str, tuple[float, float]]]:
    """Two ranks of ``n`` models in base contact, red's and blue's, both moving 3" towards each other: the
    lengths of moves along arrows 33 mm apart cannot all stand half way along them."""
    red = {f"r{k + 1}": (300.0 + 33.0 * k, 300.0) for k in range(n)}
    blue = {f"b{k + 1}": (300.0 + 33.0 * k, 600.0) for k in range(n)}
    moved = {k: (x, y + 3 * INCH) for k, (x, y) in red.items()} | {k: (x, y - 3 * INCH) for k, (x, y) in blue.items()}
    return [red | blue, moved]


def make_review_db(path: Path, game: list[dict[str, tuple[float, float]]] | None = None) -> Path:
    """A stored review of ``game`` (model ids starting with r are red's, the others blue's) at ``path``; by
    default :data:`GAME` (red moves 5", then r2 14": illegal; b1 removed)."""
    game = GAME if game is None else game
    roster = rules.TableState(
        TABLE,
        UNITS,
        tuple(
            rules.Model(k, "red" if k.startswith("r") else "blue", x, y, rules.RoundBase(32.0))
            for k, (x, y) in game[0].items()
        ),
    )
    seq = [(30 * k, float(k), _state(s)) for k, s in enumerate(game)]
    # every place counts as changed: a model not found was taken off
    changed: list[dict[str, float] | None] = [None, *([{}] * (len(game) - 1))]
    states = review_states(seq, rules.load_profile("skirmish"), load_config().review, roster, None, changed)
    anchor = np.zeros((4, 4), dtype=np.uint8)
    with ReviewStore(path) as store:
        store.set_meta(source="game.mp4", profile="skirmish")
        for s in states:
            store.add_state(s, Resume(s.frame, s.time_s, anchor), b"\xff\xd8jpeg" + bytes([s.index]) + b"\xff\xd9")
    return path


@pytest.fixture
def review_db(tmp_path: Path) -> Path:
    return make_review_db(tmp_path / "game.sqlite")


def test_without_a_review_the_screen_says_how_to_open_one(app: Flask) -> None:
    page = app.test_client().get("/review").get_data(as_text=True)
    assert "tableref serve --review" in page


@pytest.mark.parametrize(("state", "moves", "verdict"), [(0, 0, None), (1, 2, "legal"), (2, 1, "ILLEGAL")])
def test_stepping_through_the_timeline(
    app: Flask, review_db: Path, state: int, moves: int, verdict: str | None
) -> None:
    app.config[REVIEW_KEY] = str(review_db)
    client = app.test_client()
    page = client.get(f"/review?state={state}").get_data(as_text=True)
    assert page.count('<a href="/review?state=') == len(GAME)
    assert len(re.findall(r'<line class="arrow"', page)) == moves
    assert (verdict in page) if verdict else "Unit moves" not in page
    assert f'src="/review/frame/{state}.jpg"' in page
    frame = client.get(f"/review/frame/{state}.jpg")
    assert frame.status_code == 200 and frame.data.endswith(bytes([state]) + b"\xff\xd9")
    if state == 2:
        assert "illegal move" in page and "Removed: b1" in page


@pytest.mark.parametrize("source", ["game.mp4", "/home/judge/games/game.mp4", "C:\\games\\game.mp4"])
def test_the_recording_is_named_by_its_file(app: Flask, review_db: Path, source: str) -> None:
    with ReviewStore(review_db) as store:
        store.set_meta(source=source)
    app.config[REVIEW_KEY] = str(review_db)
    client = app.test_client()
    page = html.unescape(client.get("/review").get_data(as_text=True))
    assert f'<h2 title="{source}">Review of game.mp4</h2>' in page
    report = html.unescape(client.get("/review/report.html").get_data(as_text=True))
    assert "<h1>Game report: game.mp4</h1>" in report and f"Recording: {source}" in report


def test_the_map_has_ghosts_and_arrows_with_lengths(review_db: Path) -> None:
    with ReviewStore(review_db, readonly=True) as store:
        states = store.states()
    view = map_view(states[1], states[0])
    assert len(view["arrows"]) == 2
    assert sorted(label["text"] for label in view["labels"] if label["cls"] == "move-label") == ['r1 5.0"', 'r2 5.0"']
    # every model named on its base
    assert sorted(label["text"] for label in view["labels"] if label["cls"] == "id-label") == ["b1", "r1", "r2"]
    assert sorted((g["x"], g["removed"]) for g in view["ghosts"]) == [(300.0, False), (340.0, False)]
    view = map_view(states[2], states[1])
    assert [(g["x"], g["removed"]) for g in view["ghosts"] if g["removed"]] == [(1200.0, True)]


@pytest.mark.parametrize("count", [0, 1, 2])
def test_the_map_shows_the_places_a_state_doubted(review_db: Path, count: int) -> None:
    with ReviewStore(review_db, readonly=True) as store:
        states = store.states()
    places = [{"x_mm": 700.0, "y_mm": 500.0, "diameter_mm": 32.0, "probability": 0.7}] * count
    doubted = dataclasses.replace(states[1].state, extras={**states[1].state.extras, "doubted": places})
    view = map_view(dataclasses.replace(states[1], state=doubted), states[0])
    assert view["doubted"] == [{"x": 700.0, "y": 500.0, "r": 16.0, "probability": 0.7}] * count


@pytest.mark.parametrize(
    ("move_in", "shown", "not_shown"),
    [
        (6, "red: move legal", "Move unknown"),
        # no Move to measure the 5" against: no verdict is made up, the judge is sent to the Units card
        (None, 'red: Move unknown: <a href="#review-units">set it on Units</a>', "move legal"),
    ],
)
def test_a_unit_whose_move_is_unknown_is_sent_to_units(
    app: Flask, review_db: Path, move_in: float | None, shown: str, not_shown: str
) -> None:
    app.config[REVIEW_KEY] = str(review_db)
    client = app.test_client()
    body = {"units": [{**RED, "move_in": move_in}, BLUE], "membership": {}}
    assert client.post("/review/units", json=body, headers=AUTH).status_code == 200
    page = client.get("/review?state=1").get_data(as_text=True)
    assert shown in page and not_shown not in page
    # nor is it an illegal move among the findings: the move's length was not judged
    findings = html.unescape(page[page.index("<h4>Findings</h4>") :])
    assert ("Move not judged: red moved r1, r2: its Move is not known" in findings) is (move_in is None)
    assert "Illegal moves" not in findings


@pytest.mark.parametrize(
    ("state", "lines"),
    [
        (0, []),
        (
            2,
            [
                "Illegal moves: red moved r2",
                'moved up to 14.00" (355.60 mm), allowed 6.00" (152.40 mm)',
                "Out of cohesion: red: r1, r2",
            ],
        ),
    ],
)
def test_the_findings_are_in_plain_words_grouped_by_unit(
    app: Flask, review_db: Path, state: int, lines: list[str]
) -> None:
    app.config[REVIEW_KEY] = str(review_db)
    page = app.test_client().get(f"/review?state={state}").get_data(as_text=True)
    side = html.unescape(page[page.index("<h4>Findings</h4>") :])
    for line in lines:
        assert line in side
    # no kind of finding written as a name in the code, no bare call word
    assert "illegal_move" not in side and " clear</li>" not in side
    assert ("review-findings" in side) is bool(lines)


def test_the_game_report_holds_every_state(app: Flask, review_db: Path) -> None:
    app.config[REVIEW_KEY] = str(review_db)
    answer = app.test_client().get("/review/report.html")
    assert answer.status_code == 200 and "attachment" in answer.headers["Content-Disposition"]
    html = answer.get_data(as_text=True)
    assert html.count("data:image/jpeg;base64,") == len(GAME)
    assert "lower bounds" in html and "illegal move" in html


# 10^23 is beyond SQLite's 64-bit integers: no state has it, and asking must not overflow
@pytest.mark.parametrize("index", ["9", "99999999999999999999999"])
def test_a_missing_frame_is_404(app: Flask, review_db: Path, index: str) -> None:
    app.config[REVIEW_KEY] = str(review_db)
    answer = app.test_client().get(f"/review/frame/{index}.jpg")
    assert answer.status_code == 404 and answer.get_json()["error"] == f"no stored frame for settled state {index}"


def _damage_frame(path: Path, index: int) -> None:
    """Change stored bytes of the frame of state ``index`` in the file itself, as a damaged disk would."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    data = bytearray(path.read_bytes())
    at = data.find(b"\xff\xd8jpeg" + bytes([index]))
    assert at > 0
    data[at + 2 : at + 6] = b"JPEG"
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("url", ["/review/frame/1.jpg", "/review/report.html"])
def test_a_damaged_frame_is_a_json_error_naming_it(
    app: Flask, review_db: Path, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    _damage_frame(review_db, 1)
    app.config[REVIEW_KEY] = str(review_db)
    client = app.test_client()
    assert client.get("/review/frame/0.jpg").status_code == 200
    answer = client.get(url)
    assert answer.status_code == 500
    doc = answer.get_json()
    assert "the frame of settled state 1 does not match its checksum" in doc["error"]
    assert "Traceback" not in caplog.text


RED, BLUE = ({"id": "red", "player": "A", "move_in": 6}, {"id": "blue", "player": "B", "move_in": 6})


def _illegal(timeline_states: list[ReviewedState]) -> list[tuple[int, tuple[str, ...]]]:
    return [(s.index, e.units) for s in timeline_states for e in s.events if e.kind == "illegal_move"]


@pytest.mark.parametrize(
    ("body", "illegal", "unit_of_r2"),
    [
        # as reviewed: red's second move (14") is too long for any plan
        ({"units": [RED, BLUE], "membership": {}}, [(2, ("red",))], "red"),
        # a faster red unit: the same move is a legal Move
        ({"units": [{**RED, "move_in": 20}, BLUE], "membership": {}}, [], "red"),
        # r2 was blue's all along: blue made both moves, and the long one is blue's
        ({"units": [RED, BLUE], "membership": {"r2": "blue"}}, [(2, ("blue",))], "blue"),
        # a new, slow unit for r2: its 5" is an Advance, its 14" too long for any plan
        (
            {"units": [RED, BLUE, {"id": "scouts", "move_in": 4}], "membership": {"r2": "scouts"}},
            [(2, ("scouts",))],
            "scouts",
        ),
    ],
)
def test_fixing_the_units_judges_the_game_again(
    app: Flask, review_db: Path, body: dict[str, Any], illegal: list[tuple[int, tuple[str, ...]]], unit_of_r2: str
) -> None:
    app.config[REVIEW_KEY] = str(review_db)
    answer = app.test_client().post("/review/units", json=body, headers=AUTH)
    assert answer.status_code == 200, answer.get_json()
    with ReviewStore(review_db, readonly=True) as store:
        states = store.states()
    assert _illegal(states) == illegal
    assert all(m.unit == unit_of_r2 for s in states for m in s.state.models if m.id == "r2")
    # identities and positions stay
    assert [[(m.id, m.x_mm, m.y_mm) for m in s.state.models] for s in states] == [
        sorted((k, x, y) for k, (x, y) in g.items()) for g in GAME
    ]
    page = app.test_client().get("/review?state=1").get_data(as_text=True)
    assert f'data-model="r2" value="{unit_of_r2}"' in page


@pytest.mark.parametrize(
    ("body", "headers", "status", "message"),
    [
        ({"units": [RED, BLUE], "membership": {"r2": "green"}}, AUTH, 400, "green"),
        ({"units": [RED, BLUE], "membership": {"x9": "red"}}, AUTH, 400, "x9"),
        ({"units": "red", "membership": {}}, AUTH, 400, "units"),
        ({"units": [RED], "membership": {}}, AUTH, 400, "blue"),
        ({"units": [RED, BLUE], "membership": {}}, {}, 403, "token"),
    ],
)
def test_bad_unit_fixes_are_refused_and_change_nothing(
    app: Flask, review_db: Path, body: dict[str, Any], headers: dict[str, str], status: int, message: str
) -> None:
    app.config[REVIEW_KEY] = str(review_db)
    with ReviewStore(review_db, readonly=True) as store:
        before = store.timeline()
    answer = app.test_client().post("/review/units", json=body, headers=headers)
    assert answer.status_code == status and message in answer.get_json()["error"]
    with ReviewStore(review_db, readonly=True) as store:
        assert store.timeline() == before
