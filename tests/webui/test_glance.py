"""A dashboard a judge reads at a glance, through the routes: findings grouped by unit pair, the roster that does not
match the table and its reset, the melee placement assistant, and a markers sheet readable when printed."""

from __future__ import annotations

import dataclasses
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient

import rules
from calibration.pdf import PT_PER_MM, text_width_mm
from calibration.spec import MarkerSpec, TableSpec, load_table_spec
from tableref.labels import text_size
from tests.webui.conftest import AUTH, TOKEN, fast_settings, start_live, two_sides, wait_for
from webui import create_app
from webui.feeds import StateFeed
from webui.groups import group_findings
from webui.live import LiveTable
from webui.roster import roster_match

BASE = {"diameter_mm": 25.0}


def _model(mid: str, unit: str | None, x: float, y: float, base: dict[str, float] | None = None) -> dict[str, Any]:
    return {"id": mid, "unit": unit, "x_mm": x, "y_mm": y, "base": base or BASE}


def melee_state(leader_touching: bool = True) -> dict[str, Any]:
    """Red's clones (leader c0, Move 6") in a line 110 mm from blue's droids (leader d0): c0 stepped forward into
    base contact with d0 (or stopped 20 mm short of it)."""
    base = {"diameter_mm": 27.0}

    def slot(k: int) -> float:
        return 30.0 * ((k + 1) // 2 * (1 if k % 2 == 0 else -1))

    models = [_model(f"c{k}", "clones", 600.0 + slot(k), 400.0, base) for k in range(7)]
    models += [_model(f"d{k}", "droids", 600.0 + slot(k), 510.0, base) for k in range(8)]
    models[0]["y_mm"] = 510.0 - 27.0 - (0.0 if leader_touching else 20.0)
    return {
        "table": {"width_mm": 1200.0, "depth_mm": 800.0},
        "units": [
            {"id": "clones", "player": "red", "name": "Clone Troopers", "leader": "c0", "move_in": 6},
            {"id": "droids", "player": "blue", "name": "Battle Droids", "leader": "d0", "move_in": 6},
        ],
        "models": models,
    }


def served_state(
    state: dict[str, Any],
    profile: str = "skirmish",
    roster: dict[str, Any] | None = None,
    name: str = "test",
    photo: bool = False,
) -> LiveTable:
    """A started live table watching ``state`` under ``profile`` (``roster``: the roster it starts from, else the
    state's own units; ``photo``: as an uploaded photo, which starts afresh where ``roster`` does not match it), once
    its first result is out."""
    settings = fast_settings()
    start = rules.state_from_dict(roster) if roster is not None else None
    feed = StateFeed(rules.state_from_dict(state), name, settings.state_px_per_mm, settings.replay_fps, start)
    feed.scene = dataclasses.replace(feed.scene, fresh_if_other=photo)
    live = start_live(feed, settings, profile)
    wait_for(lambda: live.hub.snapshot().result is not None, what="the first result")
    return live


@pytest.fixture
def melee_live(request: pytest.FixtureRequest) -> Iterator[LiveTable]:
    """``request.param``: (profile, leader in base contact)."""
    profile, touching = getattr(request, "param", ("legion", True))
    lt = served_state(melee_state(touching), profile, name="melee.json")
    yield lt
    lt.stop()


def _client(live: LiveTable) -> FlaskClient:
    return create_app(live, live.settings, token=TOKEN).test_client()


# --------------------------------------------------------------------------------------------------------------
# 1. Findings grouped by unit pair

_GROUP_STATE = rules.state_from_dict(
    {
        "table": {"width_mm": 1200.0, "depth_mm": 800.0},
        "units": [
            {"id": "clones", "player": "red"},
            {"id": "droids", "player": "blue"},
            {"id": "arcs", "player": "red"},
        ],
        "models": [
            _model("c1", "clones", 100.0, 100.0),
            _model("c2", "clones", 200.0, 100.0),
            _model("d1", "droids", 100.0, 130.0),
            _model("a1", "arcs", 500.0, 500.0),
            _model("x1", None, 900.0, 700.0),
        ],
        "unseen": [_model("d4", "droids", 300.0, 300.0)],
    }
)


def _f(kind: str, models: tuple[str, ...], call: str = "clear", **more: Any) -> rules.Finding:
    return rules.Finding(kind=kind, models=models, call=call, **more)


@pytest.mark.parametrize(
    ("findings", "expected"),
    [
        pytest.param(
            [
                _f("cohesion", ("c2",), unit="clones"),
                _f("engaged", ("c1", "d1"), units=("clones", "droids")),
                _f("overlap", ("c1", "d1"), units=("clones", "droids")),
            ],
            [(("clones", "droids"), [2, 1]), (("clones",), [0])],
            id="an overlap and the engagement of one pair fold together, the overlap first",
        ),
        pytest.param(
            [
                _f("unseen", ("d4",), call="close", unit="droids"),
                _f("engaged", ("c1", "d1"), units=("clones", "droids")),
                _f("cohesion", ("a1",), unit="arcs"),
            ],
            [(("clones", "droids"), [1]), (("arcs",), [2]), (("droids",), [0])],
            id="unseen models listed per unit, after what is engaged or out of cohesion",
        ),
        pytest.param(
            [_f("off_table", ("x1",)), _f("in_terrain", ("c2",), terrain="ruin")],
            [((), [0]), (("clones",), [1])],
            id="a finding of no unit groups apart; the unit of a model's finding is its model's",
        ),
        pytest.param(
            [
                _f("engaged", ("c1", "d1"), call="close", units=("clones", "droids")),
                _f("engaged", ("a1", "d1"), units=("arcs", "droids")),
            ],
            [(("droids", "arcs"), [1]), (("clones", "droids"), [0])],
            id="a clear engagement before an open one; units in the state's order",
        ),
    ],
)
def test_findings_are_grouped_by_the_units_they_are_about(
    findings: list[rules.Finding], expected: list[tuple[tuple[str, ...], list[int]]]
):
    groups = group_findings(findings, _GROUP_STATE)
    assert [(g.units, list(g.findings)) for g in groups] == expected
    assert sorted(i for g in groups for i in g.findings) == list(range(len(findings)))


def test_the_result_carries_the_groups_strongest_first(client: FlaskClient):
    doc = client.get("/api/result").get_json()
    groups, findings = doc["groups"], doc["findings"]
    assert sorted(i for g in groups for i in g["findings"]) == list(range(len(findings)))
    assert [g["rank"] for g in groups] == sorted(g["rank"] for g in groups)
    for g in groups:
        for i in g["findings"]:
            f = findings[i]
            assert set(f.get("units", [])) | ({f["unit"]} if "unit" in f else set()) <= set(g["units"])
    engaged = next(g for g in groups if findings[g["findings"][0]]["kind"] == "engaged")
    assert len(engaged["units"]) == 2


# --------------------------------------------------------------------------------------------------------------
# 4. A roster that does not match the table, and its reset


def _placed(*places: tuple[float, float]) -> rules.TableState:
    models = [_model(f"m{k}", None, x, y) for k, (x, y) in enumerate(places)]
    return rules.state_from_dict({"table": {"width_mm": 1200.0, "depth_mm": 800.0}, "models": models})


# two_sides: red's r1 (300, 300), r2 (330, 300), blue's b1 (900, 500), b2 (930, 500); x1 of no unit
_ROSTER_PLACES = [(300.0, 300.0), (330.0, 300.0), (900.0, 500.0), (930.0, 500.0)]
_ELSEWHERE = [(100.0 + 150.0 * k, 700.0) for k in range(6)]


@pytest.mark.parametrize(
    ("detected", "matched", "mismatch"),
    [
        pytest.param(_ROSTER_PLACES, 4, False, id="the same table"),
        pytest.param([(302.0, 297.0)], 1, False, id="the models taken off but one"),
        pytest.param(_ELSEWHERE, 0, True, id="another table"),
        pytest.param([*_ELSEWHERE[:5], (905.0, 505.0)], 1, True, id="another table, one model where one stood"),
        pytest.param([(400.0, 300.0), (430.0, 300.0), *_ROSTER_PLACES[2:]], 2, False, id="one unit moved 4 inches"),
        pytest.param([], 0, False, id="nothing on the table"),
    ],
)
def test_the_roster_matches_the_table_when_half_its_models_stand_where_they_were(
    detected: list[tuple[float, float]], matched: int, mismatch: bool
):
    roster = rules.state_from_dict(two_sides())
    got = roster_match(roster, _placed(*detected), gate_mm=40.0, share=0.5)
    assert (got.roster, got.seen, got.matched, got.mismatch) == (4, len(detected), matched, mismatch)
    assert roster_match(rules.TableState(roster.table), _placed(*detected), 40.0, 0.5).mismatch is False


def _another_table() -> dict[str, Any]:
    models = [_model(f"o{k}", None, x, y) for k, (x, y) in enumerate(_ELSEWHERE)]
    return {"table": {"width_mm": 1200.0, "depth_mm": 800.0}, "models": models}


@pytest.mark.parametrize(
    ("table", "roster", "mismatch"),
    [
        pytest.param(two_sides(), None, False, id="its own roster"),
        pytest.param(_another_table(), two_sides(), True, id="the roster of another table"),
    ],
)
def test_the_result_says_when_the_roster_does_not_match_and_a_reset_forgets_it(
    table: dict[str, Any], roster: dict[str, Any] | None, mismatch: bool
):
    lt = served_state(table, roster=roster)
    try:
        client = _client(lt)
        assert client.get("/api/result").get_json()["roster_match"]["mismatch"] is mismatch
        # the reset is a change: the token is needed
        refused = client.delete("/api/roster")
        assert refused.status_code == 403 and "token" in refused.get_json()["error"]
        assert [u["id"] for u in client.get("/api/roster").get_json()["units"]] == ["r", "b"]
        done = client.delete("/api/roster", headers=AUTH).get_json()
        assert done["ok"] is True and done["units_removed"] == 2
        wait_for(lambda: client.get("/api/result").get_json()["seq"] >= done["result_seq"], what="the re-check")
        after = client.get("/api/result").get_json()
        assert after["units"] == [] and {m.get("unit") for m in after["models"]} == {None}
        assert after["roster_match"] == {"roster": 0, "seen": len(table["models"]), "matched": 0, "mismatch": False}
        assert client.get("/api/roster").get_json()["units"] == []
        # ... and undone: the units come back, and there is nothing more to undo
        assert after["roster_undo"]["units"] == 2
        undone = client.post("/api/roster/undo", headers=AUTH).get_json()
        assert undone["units_restored"] == 2
        wait_for(lambda: client.get("/api/result").get_json()["seq"] >= undone["result_seq"], what="the re-check")
        back = client.get("/api/result").get_json()
        assert [u["id"] for u in back["units"]] == ["r", "b"] and back["roster_undo"] is None
        again = client.post("/api/roster/undo", headers=AUTH)
        assert again.status_code == 409 and "nothing to undo" in again.get_json()["error"]
    finally:
        lt.stop()


@pytest.mark.parametrize(
    ("table", "fresh"),
    [
        pytest.param(_another_table(), True, id="a photo of another table"),
        pytest.param(two_sides(), False, id="a photo of the same table"),
    ],
)
def test_a_photo_of_another_table_starts_a_fresh_roster_with_undo(table: dict[str, Any], fresh: bool):
    lt = served_state(table, roster=two_sides(), photo=True)
    try:
        client = _client(lt)
        first = client.get("/api/result").get_json()
        assert [u["id"] for u in first["units"]] == ([] if fresh else ["r", "b"])
        assert first["roster_match"]["mismatch"] is False
        assert (first["roster_undo"] is not None) is fresh
        if not fresh:
            return
        assert first["roster_undo"] == {"units": 2, "models": 5}
        done = client.post("/api/roster/undo", headers=AUTH).get_json()
        wait_for(lambda: client.get("/api/result").get_json()["seq"] >= done["result_seq"], what="the re-check")
        back = client.get("/api/result").get_json()
        assert [u["id"] for u in back["units"]] == ["r", "b"]
    finally:
        lt.stop()


def test_the_source_a_photo_replaced_comes_back():
    lt = served_state(two_sides(), name="the game")
    try:
        client = _client(lt)
        assert client.get("/api/status").get_json()["back_to"] is None
        photo = cv2.imencode(".jpg", np.full((120, 160, 3), 90, np.uint8))[1].tobytes()
        # two photos in a row: the source to go back to is the game, not the first photo
        for _ in range(2):
            answer = client.post("/api/photo", data=photo, headers=AUTH, content_type="image/jpeg")
            assert answer.status_code == 200
        status = client.get("/api/status").get_json()
        assert (status["source"], status["back_to"]) == ("uploaded photo", "the game")
        refused = client.delete("/api/photo")
        assert refused.status_code == 403
        assert client.delete("/api/photo", headers=AUTH).get_json() == {"ok": True, "source": "the game"}
        status = client.get("/api/status").get_json()
        assert (status["source"], status["back_to"]) == ("the game", None)
        wait_for(lambda: lt.hub.snapshot().status.frame_scene == "state:the game", what="the game's frames")
        again = client.delete("/api/photo", headers=AUTH)
        assert again.status_code == 409 and "no photo is being checked" in again.get_json()["error"]
    finally:
        lt.stop()


# --------------------------------------------------------------------------------------------------------------
# 5. The placement assistant


def test_the_units_whose_leader_is_in_base_contact_are_offered(melee_live: LiveTable):
    doc = _client(melee_live).get("/api/melee/units").get_json()
    assert doc["procedure"] is True and doc["profile"] == "legion"
    assert [(u["id"], u["leader"], u["touching"]) for u in doc["units"]] == [
        ("clones", "c0", ["droids"]),
        ("droids", "d0", ["clones"]),
    ]


def test_the_assistant_proposes_the_rest_of_the_melee_as_the_rules_do(melee_live: LiveTable):
    client = _client(melee_live)
    doc = client.post("/api/melee", json={"unit": "clones"}).get_json()
    res = melee_live.hub.snapshot().result
    assert res is not None
    expected = rules.place_melee(res.state, "clones", res.profile)
    assert (doc["unit"], doc["enemy"], doc["unit_name"], doc["enemy_name"]) == (
        "clones",
        "droids",
        "Clone Troopers",
        "Battle Droids",
    )
    assert [(s["step"], s["model"], s["to_mm"]) for s in doc["steps"]] == [
        (s.step, s.model, [round(c, 3) for c in s.to_mm]) for s in expected.steps
    ]
    assert [s["n"] for s in doc["steps"]] == list(range(1, len(expected.steps) + 1))
    assert any(s["moved"] for s in doc["steps"])
    width, height = res.frame.width_px, res.frame.height_px
    px_per_mm = melee_live.settings.state_px_per_mm
    for s in doc["steps"]:
        # drawn over the frame where the table puts it (a table state is drawn at px_per_mm)
        assert s["to_px"] == pytest.approx([c * px_per_mm - 0.5 for c in s["to_mm"]], abs=0.06)
        assert 0 <= s["to_px"][0] <= width and 0 <= s["to_px"][1] <= height
        assert s["radius_px"] == pytest.approx(13.5 * px_per_mm, abs=0.1)


@pytest.mark.parametrize(
    ("melee_live", "body", "status", "message"),
    [
        (("skirmish", True), {"unit": "clones"}, 400, "no melee procedure"),
        (("legion", True), {"unit": "nobody"}, 400, "unknown unit 'nobody'"),
        (("legion", True), {}, 400, "missing 'unit'"),
        (("legion", True), {"unit": 7}, 400, "missing 'unit'"),
        (("legion", False), {"unit": "clones"}, 400, "not in base contact with an enemy model"),
        (("legion", True), None, 415, "expected a JSON body"),
    ],
    indirect=["melee_live"],
)
def test_a_melee_that_cannot_start_is_a_message(
    melee_live: LiveTable, body: dict[str, Any] | None, status: int, message: str
):
    client = _client(melee_live)
    response = client.post("/api/melee", json=body) if body is not None else client.post("/api/melee", data="x")
    assert response.status_code == status
    assert message in response.get_json()["error"]


# --------------------------------------------------------------------------------------------------------------
# 6. The markers sheet, readable when printed

# Helvetica's capital letters are 0.718 of the font size tall.
CAP_HEIGHT = 0.718
MIN_CAP_MM = 3.0
_TEXT = re.compile(r"BT /F1 ([\d.]+) Tf ([-\d.]+) ([-\d.]+) Td \(((?:[^()\\]|\\.)*)\) Tj ET")
_MARKER = re.compile(r"0\.75 g 0\.3 G [\d.]+ w (.*?) h B")


def _pages(pdf: bytes) -> list[tuple[float, float, str]]:
    boxes = [(float(w), float(h)) for w, h in re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf)]
    streams = [zlib.decompress(m).decode("ascii") for m in re.findall(rb"stream\n(.*?)\nendstream", pdf, re.S)]
    return [(w, h, s) for (w, h), s in zip(boxes, streams, strict=True)]


def _texts(page: tuple[float, float, str]) -> list[tuple[float, tuple[float, float, float, float], str]]:
    """Each text of a page: its size (pt) and the box (mm from the top-left) its letters cover."""
    _, h_pt, content = page
    out = []
    for size, x, y, raw in _TEXT.findall(content):
        text = re.sub(r"\\(.)", r"\1", raw)
        em = float(size) / PT_PER_MM
        x0, base = float(x) / PT_PER_MM, (h_pt - float(y)) / PT_PER_MM
        out.append((float(size), (x0, base - 0.75 * em, x0 + text_width_mm(text, float(size)), base + 0.22 * em), text))
    return out


def _markers_drawn(page: tuple[float, float, str]) -> list[tuple[float, float, float, float]]:
    _, h_pt, content = page
    boxes = []
    for path in _MARKER.findall(content):
        xy = [float(v) for v in re.findall(r"[-\d.]+", path)]
        xs, ys = [v / PT_PER_MM for v in xy[0::2]], [(h_pt - v) / PT_PER_MM for v in xy[1::2]]
        boxes.append((min(xs), min(ys), max(xs), max(ys)))
    return boxes


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


_SMALL_TABLE = TableSpec(
    762.0,
    559.0,
    "DICT_5X5_100",
    (MarkerSpec(10, 70, 55, 55, 0), MarkerSpec(11, 70, 707, 55, 90), MarkerSpec(12, 70, 707, 504, 180)),
)
_SMALL_TABLE = TableSpec(762.0, 559.0, "DICT_5X5_100", (*_SMALL_TABLE.markers, MarkerSpec(13, 70, 72, 487, 45)))
# six markers side by side along the top edge: their labels cannot all stand towards the middle at once
_CROWDED = TableSpec(900.0, 600.0, "DICT_4X4_50", tuple(MarkerSpec(k, 80, 60.0 + 130.0 * k, 60.0) for k in range(6)))
_PORTRAIT = TableSpec(
    600.0,
    1200.0,
    "DICT_4X4_50",
    tuple(MarkerSpec(k, 60, 40.0 + 520 * (k % 2), 40.0 + 370 * (k // 2)) for k in range(6)),
)


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(load_table_spec(), id="the default table"),
        pytest.param(_SMALL_TABLE, id="the sample game's table, a turned marker"),
        pytest.param(_CROWDED, id="markers side by side"),
        pytest.param(_PORTRAIT, id="a table deeper than wide"),
    ],
)
def test_the_markers_sheet_is_readable_and_its_labels_clear_the_markers(live: LiveTable, spec: TableSpec):
    live.set_spec(spec)
    response = _client(live).get("/api/markers.pdf")
    assert response.status_code == 200
    pages = _pages(response.data)
    for w_pt, h_pt, content in pages:
        texts = _texts((w_pt, h_pt, content))
        assert texts, "every page says something"
        # every text at least 3 mm tall (its capitals) when printed at 100 %, and on the paper
        assert min(size for size, _, _ in texts) * CAP_HEIGHT / PT_PER_MM >= MIN_CAP_MM
        for _, box, text in texts:
            assert box[0] >= 0 and box[1] >= 0, text
            assert box[2] <= w_pt / PT_PER_MM and box[3] <= h_pt / PT_PER_MM, text
    placement = pages[-1]
    markers = _markers_drawn(placement)
    assert len(markers) == len(spec.markers)
    texts = _texts(placement)
    for _, box, text in texts:
        hit = [m for m in markers if _overlap(box, m)]
        assert not hit, f"{text!r} lies over a marker"
    assert len([text for _, _, text in texts if re.match(r"\d+: \(", text)]) == len(spec.markers)
    for k, (_, a, text) in enumerate(texts):
        assert not [other for _, b, other in texts[k + 1 :] if _overlap(a, b)], f"{text!r} overlaps another text"


# --------------------------------------------------------------------------------------------------------------
# 2, 3. The review's map: move labels apart, a 6" grid, a scale bar and a legend by player


def test_the_review_map_keeps_move_labels_apart_with_grid_scale_and_legend(tmp_path: Path, app: Flask):
    from tableref.review.store import ReviewStore
    from tests.webui.test_review import make_review_db
    from webui.blueprints.review import REVIEW_KEY, map_view

    db = make_review_db(tmp_path / "game.sqlite")
    with ReviewStore(db, readonly=True) as store:
        states = store.states()
    # r1 and r2 moved 5" one behind the other, 40 mm apart: their labels half way along would overlap
    view = map_view(states[1], states[0])
    boxes = []
    for label in view["labels"]:
        w, h = text_size(label["text"], label["font"])
        boxes.append((label["cx"] - w / 2, label["cy"] - h / 2, label["cx"] + w / 2, label["cy"] + h / 2))
    # the unit names, each move's length and each model's id, none over another, none left out
    assert (
        sorted(label["cls"] for label in view["labels"]) == ["id-label"] * 3 + ["move-label"] * 2 + ["unit-label"] * 2
    )
    assert [(a, b) for k, a in enumerate(boxes) for b in boxes[k + 1 :] if _overlap(a, b)] == []
    for b in boxes:
        assert b[0] >= 0 and b[1] >= 0 and b[2] <= view["width"] and b[3] <= view["depth"]
    # a 1829 x 1219 mm table: lines every 6" short of its edges
    assert view["grid_x"] == pytest.approx([152.4 * k for k in range(1, 13)])
    assert view["grid_y"] == pytest.approx([152.4 * k for k in range(1, 8)])
    assert [entry["name"] for entry in view["legend"]] == ["A", "B"]
    app.config[REVIEW_KEY] = str(db)
    page = app.test_client().get("/review?state=1").get_data(as_text=True)
    assert 'class="scale-bar"' in page and "100 mm" in page and '12"' in page
    assert 'data-key="no-unit"' in page and "no unit (grey)" in page
    assert page.count('class="move-label"') == 2


@pytest.mark.parametrize(("share", "mismatch"), [(0.5, True), (0.3, True), (0.25, False), (0.0, False)])
def test_the_share_that_must_match_is_a_setting(share: float, mismatch: bool):
    # one of the roster's four models stands where it stood, among six models seen: a quarter of the smaller count,
    # which is no mismatch where a quarter is enough
    roster = rules.state_from_dict(two_sides())
    got = roster_match(roster, _placed(*_ELSEWHERE[:5], (905.0, 505.0)), gate_mm=40.0, share=share)
    assert (got.matched, got.mismatch) == (1, mismatch)
