"""The Review screen: a stored review's timeline, stepping through states, the map, frames and the game report."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from flask import Flask

import rules
from tableref.config import load_config
from tableref.review import review_states
from tableref.review_store import Resume, ReviewStore
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


@pytest.fixture
def review_db(tmp_path: Path) -> Path:
    roster = rules.TableState(
        TABLE,
        UNITS,
        tuple(
            rules.Model(k, "red" if k.startswith("r") else "blue", x, y, rules.RoundBase(32.0))
            for k, (x, y) in GAME[0].items()
        ),
    )
    seq = [(30 * k, float(k), _state(s)) for k, s in enumerate(GAME)]
    states = review_states(seq, rules.load_profile("skirmish"), load_config().review, roster)
    path = tmp_path / "game.sqlite"
    anchor = np.zeros((4, 4), dtype=np.uint8)
    with ReviewStore(path) as store:
        store.set_meta(source="game.mp4", profile="skirmish")
        for s in states:
            store.add_state(s, Resume(s.frame, s.time_s, anchor), b"\xff\xd8jpeg" + bytes([s.index]) + b"\xff\xd9")
    return path


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


def test_the_map_has_ghosts_and_arrows_with_lengths(review_db: Path) -> None:
    with ReviewStore(review_db, readonly=True) as store:
        states = store.states()
    view = map_view(states[1], states[0])
    assert sorted(a["label"] for a in view["arrows"]) == ['r1 5.0"', 'r2 5.0"']
    assert sorted((g["x"], g["removed"]) for g in view["ghosts"]) == [(300.0, False), (340.0, False)]
    view = map_view(states[2], states[1])
    assert [(g["x"], g["removed"]) for g in view["ghosts"] if g["removed"]] == [(1200.0, True)]


def test_the_game_report_holds_every_state(app: Flask, review_db: Path) -> None:
    app.config[REVIEW_KEY] = str(review_db)
    answer = app.test_client().get("/review/report.html")
    assert answer.status_code == 200 and "attachment" in answer.headers["Content-Disposition"]
    html = answer.get_data(as_text=True)
    assert html.count("data:image/jpeg;base64,") == len(GAME)
    assert "lower bounds" in html and "illegal move" in html


def test_a_missing_frame_is_404(app: Flask, review_db: Path) -> None:
    app.config[REVIEW_KEY] = str(review_db)
    assert app.test_client().get("/review/frame/9.jpg").status_code == 404
