"""Every endpoint through Flask's test client, good requests and bad ones, on a table state of known findings."""

from __future__ import annotations

import io
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient

import rules
from tableref.labels import Circle, Label, place_labels
from tests.webui.conftest import AUTH, TOKEN, fast_settings, sample_state_dict, state_live, two_sides, wait_for
from webui import create_app
from webui.feeds import Feed
from webui.live import LiveTable

REPO = Path(__file__).resolve().parents[2]


def _error(response: Any, status: int) -> str:
    assert response.status_code == status, response.get_data(as_text=True)
    doc = response.get_json()
    assert set(doc) == {"error", "status"} and doc["status"] == status
    # Answers name what was wrong, never how the server failed inside.
    assert "Traceback" not in doc["error"] and 'File "' not in doc["error"]
    return str(doc["error"])


# --------------------------------------------------------------------------------------------------------------
# Screens


@pytest.mark.parametrize(
    ("path", "title", "script"),
    [
        ("/", "Table", "table.js"),
        ("/units", "Units", "units.js"),
        ("/judge", "Judge", "judge.js"),
        ("/setup", "Setup", "setup.js"),
        ("/review", "Review", None),
    ],
)
def test_screens_render_with_navigation_and_token(client: FlaskClient, path: str, title: str, script: str | None):
    response = client.get(path)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert f"<title>tableref · {title}</title>" in html
    assert all(f">{name}</a>" in html for name in ("Table", "Units", "Judge", "Setup", "Review"))
    assert f'content="{TOKEN}"' in html
    if script:
        assert f"/static/{script}" in html
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]


def test_pages_leave_the_token_out_when_serving_other_machines(live: LiveTable):
    app = create_app(live, live.settings, token=TOKEN, embed_token=False, local_only=False)
    html = app.test_client().get("/").get_data(as_text=True)
    assert TOKEN not in html


@pytest.mark.parametrize("path", ["/static/app.js", "/static/app.css", "/static/judge.js", "/static/units.js"])
def test_static_files_are_served(client: FlaskClient, path: str):
    assert client.get(path).status_code == 200


# --------------------------------------------------------------------------------------------------------------
# Reads


def test_status_says_what_the_loop_is_doing(client: FlaskClient):
    st = client.get("/api/status").get_json()
    assert st["camera"] == "live" and st["source_kind"] == "table state"
    assert st["result_seq"] >= 1 and st["frame_seq"] >= 1 and st["frozen"] is False
    assert st["profile"] == "skirmish" and st["frame_size"] == [1280, 853]


def test_state_is_the_rules_format_with_calibration_and_status(client: FlaskClient, live: LiveTable):
    doc = client.get("/api/state").get_json()
    state = rules.state_from_dict(doc)
    expected = rules.state_from_dict(json.loads((REPO / "tableref/data/sample_state.json").read_text()))
    assert sorted((m.id, m.unit, m.x_mm, m.y_mm) for m in state.models) == sorted(
        (m.id, m.unit, m.x_mm, m.y_mm) for m in expected.models
    )
    assert doc["status"]["settled"] is True and doc["status"]["result_seq"] >= 1
    assert "markers_used" in doc["calibration"]


def test_findings_match_the_rules_check(client: FlaskClient):
    doc = client.get("/api/findings").get_json()
    state = rules.state_from_dict(client.get("/api/state").get_json())
    expected = rules.findings_document("skirmish", rules.check(state, rules.load_profile("skirmish")))
    assert doc["profile"] == "skirmish"
    assert doc["findings"] == expected["findings"]
    assert {f["kind"] for f in doc["findings"]} >= {"engaged", "cohesion", "overlap", "off_table", "in_terrain"}


def test_result_carries_outlines_in_frame_pixels(client: FlaskClient, live: LiveTable):
    doc = client.get("/api/result").get_json()
    px_per_mm = live.settings.state_px_per_mm
    for m in doc["models"]:
        cx, cy = m["center_px"]
        assert cx == pytest.approx(m["x_mm"] * px_per_mm - 0.5, abs=0.06)
        assert cy == pytest.approx(m["y_mm"] * px_per_mm - 0.5, abs=0.06)
        radius = np.hypot(*(np.array(m["outline_px"]) - [cx, cy]).T)
        base = m["base"]
        axes = [base["diameter_mm"]] * 2 if "diameter_mm" in base else [base["width_mm"], base["depth_mm"]]
        assert radius.min() == pytest.approx(min(axes) / 2 * px_per_mm, abs=0.1)
        assert radius.max() == pytest.approx(max(axes) / 2 * px_per_mm, abs=0.1)
    assert doc["frame"]["width_px"] == 1280 and doc["profile"]["limits_mm"]["engagement"] == pytest.approx(50.8)
    # a table state is taken whole, never built on a frame before
    assert doc["remeasured_share"] == 1.0


def test_frame_is_a_jpeg(client: FlaskClient):
    response = client.get("/api/frame.jpg")
    assert response.status_code == 200 and response.mimetype == "image/jpeg"
    image = cv2.imdecode(np.frombuffer(response.data, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == (853, 1280, 3)
    assert response.headers["Cache-Control"] == "no-store"


def test_events_stream_the_result_then_status(client: FlaskClient):
    response = client.get("/api/events", buffered=False)
    assert response.mimetype == "text/event-stream"
    chunks = response.response
    text = ""
    for chunk in chunks:
        text += chunk.decode() if isinstance(chunk, bytes) else chunk
        if text.count("event: status") >= 2:
            break
    response.close()
    events = [block for block in text.split("\n\n") if block.startswith("event:")]
    assert events[0].startswith("event: result")
    result = json.loads(events[0].split("data: ", 1)[1])
    assert result["seq"] >= 1 and result["findings"]
    status = json.loads(events[1].split("data: ", 1)[1])
    assert status["result_seq"] == result["seq"]


def test_too_many_viewers_get_503(live: LiveTable):
    app = create_app(live, fast_settings(max_viewers=1), token=TOKEN)
    client = app.test_client()
    first = client.get("/api/events", buffered=False)
    next(iter(first.response))
    assert "poll /api/status" in _error(client.get("/api/events"), 503)
    first.close()


def _stream(client: FlaskClient, address: str) -> Any:
    response = client.get("/api/events", buffered=False, environ_base={"REMOTE_ADDR": address})
    assert response.status_code == 200
    next(iter(response.response))
    return response


def _refused(client: FlaskClient, address: str, status: int) -> str:
    # unbuffered: a stream given instead of the refusal never ends, and the test must fail, not wait
    response = client.get("/api/events", buffered=False, environ_base={"REMOTE_ADDR": address})
    refused = response.status_code
    if refused != status:
        response.close()
    assert refused == status
    return _error(response, status)


def test_one_client_cannot_take_every_event_stream(live: LiveTable):
    app = create_app(live, fast_settings(max_viewers=4, max_viewers_per_client=2), token=TOKEN)
    client = app.test_client()
    greedy = [_stream(client, "10.0.0.9") for _ in range(2)]
    assert "this client has 2 live event streams open" in _refused(client, "10.0.0.9", 429)
    # the other slots are still there for everyone else
    others = [_stream(client, f"10.0.0.{k}") for k in (1, 2)]
    assert "too many live viewers" in _refused(client, "10.0.0.3", 503)
    # a closed stream gives its slot back, even one closed before it sent anything
    greedy[0].close()
    unstarted = client.get("/api/events", buffered=False, environ_base={"REMOTE_ADDR": "10.0.0.9"})
    assert unstarted.status_code == 200
    unstarted.close()
    for response in [greedy[1], *others]:
        response.close()
    assert app.extensions["tableref"].viewers.open_streams() == 0


# --------------------------------------------------------------------------------------------------------------
# Measuring


def test_measure_gives_gap_sigma_and_verdicts(client: FlaskClient):
    state = rules.state_from_dict(client.get("/api/state").get_json())
    ids = [m.id for m in state.models]
    a, b = ids[0], ids[1]
    doc = client.post("/api/measure", json={"a": a, "b": b}).get_json()
    expected = rules.measure(state, a, b, rules.load_profile("skirmish"))
    assert doc["gap_mm"] == pytest.approx(expected.gap_mm, abs=1e-3)
    assert doc["gap_in"] == pytest.approx(expected.gap_mm / 25.4, abs=1e-3)
    assert doc["sigma_mm"] == 0.0
    assert [v["line"] for v in doc["verdicts"]] == [v.line for v in expected.verdicts]
    assert [v["within"] for v in doc["verdicts"]] == [v.within for v in expected.verdicts]
    assert all(v["call"] == "clear" for v in doc["verdicts"])


@pytest.mark.parametrize(
    ("kwargs", "status", "message"),
    [
        ({"data": '{"a": "a1", "b": "a2"}'}, 415, "Content-Type: application/json"),
        ({"data": "{nope", "content_type": "application/json"}, 400, "not valid JSON"),
        ({"json": ["a1", "a2"]}, 400, "expected a JSON object"),
        ({"json": {"b": "a2"}}, 400, "missing 'a'"),
        ({"json": {"a": "a1", "b": True}}, 400, "missing 'b'"),
        ({"json": {"a": "a1", "b": "zz"}}, 400, "'zz' is not in the state"),
        ({"json": {"a": "a1", "b": "a1"}}, 400, "two different models"),
    ],
)
def test_measure_refuses_bad_requests(client: FlaskClient, kwargs: dict[str, Any], status: int, message: str):
    assert message in _error(client.post("/api/measure", **kwargs), status)


def test_measure_is_open_and_changes_nothing(client: FlaskClient, live: LiveTable):
    # like the other reads it needs no token: it measures the result on screen and keeps nothing
    before = client.get("/api/status").get_json()["result_seq"]
    answer = client.post("/api/measure", json={"a": "a1", "b": "a2"})
    assert answer.status_code == 200 and answer.get_json()["result_seq"] == before
    assert live.hub.live_result_seq() == before and client.get("/api/status").get_json()["result_seq"] == before


def _labels_body(n: int) -> dict[str, Any]:
    """n labels 40 wide side by side 20 apart, on bases 10 across: the first keeps its place."""
    return {
        "bounds": [0, 0, 400, 300],
        "bases": [{"id": f"m{k}", "x": 100 + 20 * k, "y": 150, "r": 5} for k in range(n)],
        "labels": [
            {"text": f"m{k}", "x": 100 + 20 * k, "y": 150, "width": 40, "height": 12, "pad": 2, "own": f"m{k}"}
            for k in range(n)
        ],
    }


def test_labels_are_placed_apart_with_no_token(client: FlaskClient):
    body = _labels_body(3)
    placed = client.post("/api/labels", json=body).get_json()["placed"]
    assert placed == [
        p.to_dict() if p else None
        for p in place_labels(
            [Label(x["text"], x["x"], x["y"], x["width"], x["height"], x["pad"], own=x["own"]) for x in body["labels"]],
            (0, 0, 400, 300),
            [Circle(c["id"], c["x"], c["y"], c["r"]) for c in body["bases"]],
        )
    ]
    assert placed[0] == {"cx": 100.0, "cy": 150.0, "leader": None}
    assert all(p["leader"] is not None for p in placed[1:])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda b: b.pop("bounds"), "'bounds': expected [x0, y0, x1, y1]"),
        (lambda b: b["labels"][0].update(x="left"), "labels[0].x: expected a finite number"),
        (lambda b: b["labels"][1].update(width=-1), "labels[1]: width, height, pad and near must not be negative"),
        (lambda b: b["bases"][0].update(r=float("nan")), "bases[0].r: expected a finite number"),
        (lambda b: b.update(labels="m1"), "'labels': expected a list of objects"),
        (lambda b: b.update(labels=b["labels"] * 1000), "at most 500 are placed in one request"),
    ],
)
def test_bad_label_requests_are_refused(client: FlaskClient, change: Any, message: str):
    body = _labels_body(3)
    change(body)
    assert message in _error(client.post("/api/labels", data=json.dumps(body), content_type="application/json"), 400)


def test_measure_follows_the_sigma_of_the_models():
    data = two_sides()
    # r1 and r2 are 5 mm apart at the edges; with 2 mm sigmas the 1 mm base contact line is too close to call.
    for m in data["models"]:
        m["sigma_mm"] = 2.0
    live = state_live(data)
    try:
        client = create_app(live, live.settings, token=TOKEN).test_client()
        doc = client.post("/api/measure", json={"a": "r1", "b": "r2"}).get_json()
    finally:
        live.stop()
    assert doc["gap_mm"] == pytest.approx(5.0) and doc["sigma_mm"] == pytest.approx(np.hypot(2.0, 2.0), abs=1e-3)
    calls = {v["line"]: (v["within"], v["call"]) for v in doc["verdicts"]}
    # two models of one unit: no engagement line between them
    assert calls == {"base_contact": (False, "close"), "cohesion": (True, "clear")}


# --------------------------------------------------------------------------------------------------------------
# The roster


@pytest.fixture
def sides() -> Any:
    lt = state_live(two_sides())
    yield lt
    lt.stop()


@pytest.fixture
def sides_client(sides: LiveTable) -> FlaskClient:
    return create_app(sides, sides.settings, token=TOKEN).test_client()


def test_assigning_a_unit_changes_the_findings(sides_client: FlaskClient):
    assert sides_client.get("/api/findings").get_json()["findings"] == []
    roster = sides_client.get("/api/roster").get_json()
    for m in roster["models"]:
        if m["id"] == "x1":
            m["unit"] = "b"
    answer = sides_client.put("/api/roster", json=roster, headers=AUTH)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    doc = sides_client.get("/api/findings").get_json()
    assert doc["result_seq"] == answer.get_json()["result_seq"]
    kinds = {(f["kind"], tuple(f["models"])) for f in doc["findings"]}
    assert ("engaged", ("r2", "x1")) in kinds
    assert any(k == "cohesion" for k, _ in kinds)


def test_roster_upload_as_a_file(sides_client: FlaskClient):
    roster = sides_client.get("/api/roster").get_json()
    roster["units"][0]["name"] = "Renamed"
    payload = io.BytesIO(json.dumps(roster).encode())
    answer = sides_client.put(
        "/api/roster", data={"file": (payload, "roster.json")}, headers=AUTH, content_type="multipart/form-data"
    )
    assert answer.status_code == 200
    assert sides_client.get("/api/roster").get_json()["units"][0]["name"] == "Renamed"


def test_roster_download_is_an_attachment(sides_client: FlaskClient):
    response = sides_client.get("/api/roster?download=1")
    assert "attachment" in response.headers["Content-Disposition"]
    assert {m["id"] for m in response.get_json()["models"]} == {"r1", "r2", "x1", "b1", "b2"}


def test_base_override_changes_the_measurement(sides_client: FlaskClient):
    before = sides_client.post("/api/measure", json={"a": "r1", "b": "r2"}).get_json()["gap_mm"]
    roster = sides_client.get("/api/roster").get_json()
    roster["base_overrides"] = {"r2": {"diameter_mm": 32}}
    assert sides_client.put("/api/roster", json=roster, headers=AUTH).status_code == 200
    after = sides_client.post("/api/measure", json={"a": "r1", "b": "r2"}).get_json()["gap_mm"]
    assert after == pytest.approx(before - 3.5)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r["models"][0].update(unit="nobody"), "unit 'nobody' is not defined"),
        (lambda r: r["units"][0].update(leader="b1"), "is not a model of this unit"),
        (lambda r: r.update(base_overrides={"r1": {"diameter_mm": -3}}), "base sizes must be numbers from 1 mm"),
        (lambda r: r.update(base_overrides={"r1": "big"}), "expected a base object"),
        (lambda r: r.pop("table"), "missing 'table'"),
    ],
)
def test_bad_rosters_are_refused(sides_client: FlaskClient, change: Any, message: str):
    roster = sides_client.get("/api/roster").get_json()
    change(roster)
    assert message in _error(sides_client.put("/api/roster", json=roster, headers=AUTH), 400)


@pytest.mark.parametrize(
    ("body", "message"),
    [(b"{not json", "not valid JSON"), (b"\xff\xfe\x00", "not UTF-8"), (b"", "the upload is empty")],
)
def test_bad_roster_files_are_refused(sides_client: FlaskClient, body: bytes, message: str):
    response = sides_client.put("/api/roster", data=body, headers=AUTH, content_type="application/octet-stream")
    assert message in _error(response, 400)


def test_suggestions_group_free_models(sides_client: FlaskClient):
    doc = sides_client.get("/api/roster/suggestions").get_json()
    assert doc["suggestions"] == [{"models": ["x1"], "base": {"diameter_mm": 25.0}, "side": "top"}]


# --------------------------------------------------------------------------------------------------------------
# Changes need the token


CHANGES = [
    ("put", "/api/roster", {"json": {}}),
    ("put", "/api/profile", {"json": {"profile": "legion"}}),
    ("post", "/api/freeze", {"json": {"frozen": True}}),
    ("put", "/api/spec", {"data": b"x"}),
    ("post", "/api/calibrate", {}),
    ("post", "/api/empty", {}),
    ("delete", "/api/empty", {}),
    ("post", "/api/photo", {"data": b"x"}),
    ("delete", "/api/photo", {}),
    ("delete", "/api/roster", {}),
    ("post", "/api/roster/undo", {}),
]


@pytest.mark.parametrize(("method", "path", "kwargs"), CHANGES)
@pytest.mark.parametrize("headers", [{}, {"X-Tableref-Token": "wrong"}])
def test_changes_without_the_token_are_forbidden(
    client: FlaskClient, method: str, path: str, kwargs: dict[str, Any], headers: dict[str, str]
):
    response = getattr(client, method)(path, headers=headers, **kwargs)
    assert "needs the token" in _error(response, 403)


# --------------------------------------------------------------------------------------------------------------
# Freeze, profile, spec, calibration, photo


def test_freeze_holds_the_result_while_the_table_changes(sides_client: FlaskClient, sides: LiveTable):
    frozen = sides_client.post("/api/freeze", json={"frozen": True}, headers=AUTH).get_json()
    assert frozen["frozen"] is True and frozen["frozen_at"] > 0
    roster = sides_client.get("/api/roster").get_json()
    for m in roster["models"]:
        if m["id"] == "x1":
            m["unit"] = "b"
    live_seq = sides_client.put("/api/roster", json=roster, headers=AUTH).get_json()
    assert live_seq["frozen"] is True
    # Screens keep the frozen result; the live one moved on.
    assert sides_client.get("/api/findings").get_json()["findings"] == []
    assert sides.hub.live_result_seq() > frozen["result_seq"]
    thawed = sides_client.post("/api/freeze", json={"frozen": False}, headers=AUTH).get_json()
    assert thawed["frozen"] is False
    assert sides_client.get("/api/findings").get_json()["findings"]


@pytest.mark.parametrize("body", [{}, {"frozen": "yes"}, {"frozen": 1}])
def test_freeze_needs_a_boolean(client: FlaskClient, body: dict[str, Any]):
    assert "frozen" in _error(client.post("/api/freeze", json=body, headers=AUTH), 400)


def test_profile_can_be_read_and_changed(client: FlaskClient):
    doc = client.get("/api/profile").get_json()
    assert doc["profile"] == "skirmish" and set(doc["available"]) >= {"skirmish", "legion", "40k", "killteam"}
    answer = client.put("/api/profile", json={"profile": "legion"}, headers=AUTH).get_json()
    assert answer["profile"] == "legion" and answer["limits_mm"]["cohesion"] == pytest.approx(76.2)
    findings = client.get("/api/findings").get_json()
    assert findings["profile"] == "legion"
    assert any(f["kind"] == "multi_contact" for f in findings["findings"])


def test_a_games_profile_reads_its_own_base_sizes(client: FlaskClient, live: LiveTable):
    every = live.config.vision.base_sizes_mm
    assert 27 in every and 28.5 in every
    client.put("/api/profile", json={"profile": "legion"}, headers=AUTH)
    assert live.config.vision.base_sizes_mm == (27, 50, 70, 100)
    assert client.get("/api/profile").get_json()["base_sizes_mm"] == [27, 50, 70, 100]
    client.put("/api/profile", json={"profile": "skirmish"}, headers=AUTH)
    assert live.config.vision.base_sizes_mm == every


@pytest.mark.parametrize("name", ["chess", "../../etc/passwd", "/etc/hostname", 3, None])
def test_profile_names_never_reach_the_file_system(client: FlaskClient, name: Any):
    assert "expected one of" in _error(client.put("/api/profile", json={"profile": name}, headers=AUTH), 400)


_SMALL_TABLE = (REPO / "sample_images/small_table.toml").read_bytes()


def test_spec_upload_replaces_the_table_spec(client: FlaskClient):
    assert len(client.get("/api/spec").get_json()["markers"]["marker"]) == 8
    text = (REPO / "sample_images/small_table.toml").read_bytes()
    answer = client.put("/api/spec", data=text, headers=AUTH, content_type="application/toml")
    assert answer.status_code == 200
    assert client.get("/api/spec").get_json()["table"]["width_mm"] == 762.0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"[table\nwidth_mm = ", "not valid TOML"),
        (b"[table]\nwidth_mm = 100\ndepth_mm = 100\n", "not a table spec"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8"),
        (b"", "the upload is empty"),
        # finite, but no table: 1e300 mm would ask the picture of the table for more pixels than exist
        (_SMALL_TABLE.replace(b"width_mm = 762.0", b"width_mm = 1e300"), "'width_mm' must be a finite number from"),
        (_SMALL_TABLE.replace(b"size_mm = ", b"size_mm = 1e300 #", 1), "'size_mm' must be a finite number from"),
    ],
)
def test_bad_specs_are_refused(client: FlaskClient, body: bytes, message: str):
    response = client.put("/api/spec", data=body, headers=AUTH, content_type="application/octet-stream")
    assert message in _error(response, 400)


def test_uploads_are_size_limited(live: LiveTable):
    app = create_app(live, fast_settings(max_upload_bytes=1000), token=TOKEN)
    response = app.test_client().put("/api/spec", data=b"#" * 5000, headers=AUTH, content_type="text/plain")
    assert "at most 1000 bytes" in _error(response, 413)


def test_markers_pdf(client: FlaskClient):
    response = client.get("/api/markers.pdf")
    assert response.status_code == 200 and response.data.startswith(b"%PDF")
    assert "attachment" in response.headers["Content-Disposition"]


def test_the_empty_table_is_captured_on_the_next_settled_frame_and_can_be_forgotten(client: FlaskClient):
    assert client.get("/api/empty").get_json()["captured"] is False
    asked = client.post("/api/empty", headers=AUTH).get_json()
    assert asked["ok"] is True and asked["pending"] is True
    forgotten = client.delete("/api/empty", headers=AUTH).get_json()
    assert forgotten["ok"] is True and forgotten["forgotten"] is False


def test_recalibrate(client: FlaskClient):
    assert client.post("/api/calibrate", headers=AUTH).get_json() == {"ok": True}


def _png_header(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk + struct.pack(">I", zlib.crc32(chunk))


def _jpeg(width: int, height: int) -> bytes:
    rng = np.random.default_rng(4)
    image = rng.integers(0, 255, (height, width, 3), dtype=np.uint8)
    return bytes(cv2.imencode(".jpg", image)[1].tobytes())


def test_photo_upload_becomes_the_source(client: FlaskClient, live: LiveTable):
    response = client.post("/api/photo", data=_jpeg(320, 240), headers=AUTH, content_type="image/jpeg")
    assert response.get_json() == {"ok": True, "width_px": 320, "height_px": 240}
    wait_for(lambda: live.hub.snapshot().status.frame_size == (320, 240), what="the photo's frames")
    assert client.get("/api/status").get_json()["source"] == "uploaded photo"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"GIF89a......", "not an image"),
        (b"%PDF-1.4", "not an image"),
        (_png_header(100_000, 100_000), "at most 40000000 pixels"),
        (_png_header(0, 10), "gives no picture size"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "gives no picture size"),
        (_png_header(64, 64) + b"\x00" * 20, "does not decode"),
    ],
)
def test_bad_photos_are_refused(client: FlaskClient, body: bytes, message: str):
    response = client.post("/api/photo", data=body, headers=AUTH, content_type="application/octet-stream")
    assert message in _error(response, 400)


# --------------------------------------------------------------------------------------------------------------
# The judge report


def test_report_is_self_contained_html(client: FlaskClient):
    response = client.get("/api/report?pair=a1,a2&pair=c1,d1")
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert "attachment" in response.headers["Content-Disposition"]
    html = response.get_data(as_text=True)
    assert "data:image/jpeg;base64," in html
    assert "<script" not in html and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    state = rules.state_from_dict(client.get("/api/state").get_json())
    gap = rules.measure(state, "a1", "a2", rules.load_profile("skirmish")).gap_mm
    assert f"({gap:.2f} mm)" in html
    assert "Engaged" in html and "Overlapping bases" in html and "markers used" in html


@pytest.mark.parametrize(
    ("doubted", "said"),
    [
        ([], None),
        ([(700.0, 500.0, 32.0, 0.74)], ["(700, 500) mm, about 32 mm across (finder 0.74)"]),
        ([(700.0, 500.0, 32.0, 0.74), (910.4, 199.6, 25.0, 0.61)], ["(700, 500) mm", "(910, 200) mm"]),
    ],
)
def test_the_report_names_the_places_doubted(doubted: list[tuple[float, ...]], said: list[str] | None) -> None:
    data = sample_state_dict()
    data["doubted"] = [{"x_mm": x, "y_mm": y, "diameter_mm": d, "probability": p} for x, y, d, p in doubted]
    lt = state_live(data, name="doubted.json")
    try:
        html = create_app(lt, lt.settings, token=TOKEN).test_client().get("/api/report").get_data(as_text=True)
    finally:
        lt.stop()
    assert ("Places doubted" in html) is bool(doubted)
    for words in said or []:
        assert words in html
    if doubted:
        assert f"A base may stand at {len(doubted)} place" in html


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("pair=a1", "expected two model ids"),
        ("pair=a1,", "expected two model ids"),
        ("pair=a1,zz", "'zz' is not in the state"),
        ("&".join(["pair=a1,a2"] * 51), "at most 50"),
    ],
)
def test_report_refuses_bad_pairs(client: FlaskClient, query: str, message: str):
    assert message in _error(client.get(f"/api/report?{query}"), 400)


# --------------------------------------------------------------------------------------------------------------
# Errors


def test_unknown_paths_and_methods_answer_json(client: FlaskClient):
    _error(client.get("/api/nothing"), 404)
    _error(client.delete("/api/status", headers=AUTH), 405)
    _error(client.get("/static/../tableref/defaults.toml"), 404)


def test_reads_before_any_result_are_409(live: LiveTable):
    data = two_sides()

    class Silent(Feed):
        name = "nothing yet"
        kind = "camera"
        live = True

        def frames(self) -> Any:
            return iter(())

    lt = LiveTable(Silent(), live.spec, live.config, fast_settings(), rules.load_profile("skirmish"))
    client = create_app(lt, lt.settings, token=TOKEN).test_client()
    for path in ("/api/state", "/api/findings", "/api/result", "/api/roster/suggestions", "/api/report"):
        assert "no frame" in _error(client.get(path), 409)
    _error(client.get("/api/frame.jpg"), 404)
    assert "no frame" in _error(client.post("/api/measure", json={"a": "r1", "b": "r2"}), 409)
    assert "nothing to freeze" in _error(client.post("/api/freeze", json={"frozen": True}, headers=AUTH), 409)
    assert "no frame yet" in _error(client.put("/api/roster", json=data, headers=AUTH), 409)


def test_internal_errors_say_nothing_of_the_inside(app: Flask, monkeypatch: pytest.MonkeyPatch):
    import webui.blueprints.api as api

    def broken(*args: Any) -> Any:
        raise RuntimeError("secret detail /home/somebody/file.py")

    monkeypatch.setattr(api, "suggest_units", broken)
    message = _error(app.test_client().get("/api/roster/suggestions"), 500)
    assert "secret" not in message and "internal error" in message


@pytest.mark.parametrize(
    ("host", "local_only", "status"),
    [
        ("localhost", True, 200),
        ("127.0.0.1:8000", True, 200),
        ("[::1]:8000", True, 200),
        ("evil.example", True, 403),
        ("127.0.0.1.evil.example:8000", True, 403),
        ("evil.example", False, 200),
    ],
)
def test_host_check_guards_a_local_dashboard(live: LiveTable, host: str, local_only: bool, status: int):
    app = create_app(live, live.settings, token=TOKEN, local_only=local_only)
    response = app.test_client().get("/api/status", headers={"Host": host})
    assert response.status_code == status


# --------------------------------------------------------------------------------------------------------------
# Hostile bodies

DEEP = 100_000
DEEP_BODIES = ["[" * DEEP + "]" * DEEP, '{"a": ' * DEEP + "1" + "}" * DEEP]
JSON_ROUTES = [
    ("post", "/api/measure"),
    ("put", "/api/roster"),
    ("put", "/api/profile"),
    ("post", "/api/freeze"),
    ("put", "/api/spec"),
    ("post", "/review/units"),
]


@pytest.mark.parametrize("body", DEEP_BODIES, ids=["array", "object"])
@pytest.mark.parametrize(("method", "path"), JSON_ROUTES)
def test_json_nested_too_deep_is_a_400(
    client: FlaskClient, caplog: pytest.LogCaptureFixture, method: str, path: str, body: str
):
    response = getattr(client, method)(path, data=body, headers={**AUTH, "Content-Type": "application/json"})
    assert _error(response, 400)
    assert not [r for r in caplog.records if r.levelname == "ERROR"] and "Traceback" not in caplog.text


@pytest.mark.parametrize(
    ("method", "path", "body", "message"),
    [
        ("put", "/api/spec", "a = " + "[" * DEEP + "]" * DEEP, "nested too deep to read; expected a table spec"),
        ("put", "/api/roster", DEEP_BODIES[0], "the roster is nested too deep to read"),
        ("put", "/api/roster", '{"table": {"width_mm": ' + "9" * 5000 + "}}", "not usable JSON"),
    ],
)
def test_uploads_nested_too_deep_are_a_400(
    client: FlaskClient, caplog: pytest.LogCaptureFixture, method: str, path: str, body: str, message: str
):
    # as a file upload, not a JSON body: parsed by the upload's own reader
    upload = {"file": (io.BytesIO(body.encode()), "upload.txt")}
    response = getattr(client, method)(path, data=upload, headers=AUTH, content_type="multipart/form-data")
    assert message in _error(response, 400)
    assert "Traceback" not in caplog.text
