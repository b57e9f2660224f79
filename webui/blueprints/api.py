"""The JSON API (documented in the README's Dashboard section). Handlers read the latest snapshot or queue a
change for the live loop; none of them measures a frame."""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, jsonify, render_template, request

import calibration
import rules
from tableref.labels import Circle, Label, place_labels
from webui import measure as judge
from webui.errors import HTTP_NOT_FOUND, ApiError
from webui.feeds import ImageFeed, Scene
from webui.http import (
    app_state,
    current_result,
    json_body,
    live,
    model_id,
    needs_token,
    parse_image,
    parse_spec,
    snapshot,
    upload_bytes,
)
from webui.hub import Result
from webui.live import CHANGE_WAIT_S
from webui.report import report_context
from webui.roster import roster_from_bytes, roster_from_json, suggest_units

bp = Blueprint("api", __name__, url_prefix="/api")

# A judge report holds at most this many measurements (the query string stays short).
MAX_REPORT_PAIRS = 50
# A request to place labels holds at most this many labels and bases (a table holds far fewer models): a larger
# one would keep a request thread placing for seconds.
MAX_LABELS = 500
MAX_LABEL_BASES = 1000
# Browsers reconnect a dropped event stream after this long (ms).
SSE_RETRY_MS = 2000


def _no_store(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    return response


def _status_dict() -> dict[str, Any]:
    return snapshot().status.to_dict()


def _after_change(before: int, queued: bool) -> dict[str, Any]:
    """Wait (briefly) for the re-checked result a change queued, and say which result it is."""
    snap = live().hub.wait_result(before, CHANGE_WAIT_S) if queued else snapshot()
    return {"ok": True, "result_seq": snap.status.result_seq, "frozen": snap.status.frozen}


# --------------------------------------------------------------------------------------------------------------
# Reads


@bp.get("/status")
def status() -> Response:
    return _no_store(jsonify(_status_dict()))


@bp.get("/result")
def result() -> Response:
    """What the screens draw: state with outlines in frame pixels, findings, profile lines."""
    return _no_store(Response(current_result().json, mimetype="application/json"))


@bp.get("/state")
def state() -> Response:
    """The table state in the rules' JSON format, with the calibration report and the settled status."""
    snap = snapshot()
    res = current_result()
    doc = rules.state_to_dict(res.state)
    doc["calibration"] = dict(res.calibration)
    doc["status"] = {
        "settled": snap.status.settled,
        "frozen": snap.status.frozen,
        "camera": snap.status.camera,
        "result_seq": res.seq,
        "analyzed_at": res.analyzed_at,
        "profile": res.profile.name,
    }
    return _no_store(jsonify(doc))


@bp.get("/findings")
def findings() -> Response:
    """The findings document of ``tableref check --json``, and which result it belongs to."""
    res = current_result()
    doc = res.findings_document()
    doc["result_seq"] = res.seq
    doc["settled"] = snapshot().status.settled
    return _no_store(jsonify(doc))


@bp.get("/frame.jpg")
def frame() -> Response:
    snap = snapshot()
    if snap.frame is None:
        raise ApiError("no frame yet", HTTP_NOT_FOUND)
    return _no_store(Response(snap.frame.jpeg, mimetype="image/jpeg"))


@bp.get("/events")
def events() -> Response:
    """Server-sent events: ``status`` for every new snapshot (a new frame, a change of state), ``result`` when a
    new result is out. Every viewer gets the same pre-made JSON; an idle viewer costs a sleeping thread, so the
    streams are limited in all and per client address (:class:`webui.viewers.ViewerSlots`)."""
    state = app_state()
    viewers = state.viewers
    client = request.remote_addr or "unknown"
    viewers.take(client)
    hub = state.live.hub
    keepalive = state.settings.sse_keepalive_s

    def stream() -> Iterator[str]:
        yield f"retry: {SSE_RETRY_MS}\n\n"
        snap = hub.snapshot()
        sent_result = -1
        while True:
            if snap.result is not None and snap.result.seq != sent_result:
                sent_result = snap.result.seq
                yield f"event: result\ndata: {snap.result.json}\n\n"
            yield f"event: status\ndata: {snap.status_json}\n\n"
            newer = hub.wait(snap.seq, keepalive)
            while newer.seq == snap.seq:
                yield ": keep-alive\n\n"
                newer = hub.wait(snap.seq, keepalive)
            snap = newer

    response = Response(stream(), mimetype="text/event-stream")
    # Freed when the server closes the response, even one whose stream never started (a generator's own finally
    # would not run then, and the slot would be lost).
    response.call_on_close(lambda: viewers.give_back(client))
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


@bp.post("/measure")
def measure() -> Response:
    """``{"a": ID, "b": ID}`` -> the gap, its sigma, and the verdict at each of the profile's lines."""
    body = json_body()
    a, b = model_id(body, "a"), model_id(body, "b")
    res = current_result()
    m = judge.measure(res.state, res.profile, a, b)
    doc = judge.measurement_dict(m, res.profile)
    doc["result_seq"] = res.seq
    return jsonify(doc)


@bp.get("/roster")
def get_roster() -> Response:
    doc = rules.state_to_dict(live().roster())
    response = jsonify(doc)
    if request.args.get("download"):
        response.headers["Content-Disposition"] = 'attachment; filename="roster.json"'
    return _no_store(response)


@bp.get("/roster/suggestions")
def suggestions() -> Response:
    """Groups of unassigned models that look like units (same base, close together, same half of the table)."""
    res = current_result()
    groups = suggest_units(res.state, app_state().settings.group_gap_mm)
    return _no_store(jsonify({"result_seq": res.seq, "suggestions": [g.to_dict() for g in groups]}))


@bp.get("/profile")
def get_profile() -> Response:
    profile = live().profile
    names = rules.builtin_profiles()
    if profile.name not in names:
        names.append(profile.name)
    return jsonify(
        {
            "profile": profile.name,
            "title": profile.title,
            "limits_mm": profile.limits(),
            "close_sigmas": profile.calls.close_sigmas,
            # the game's base sizes, as the camera reads them (every standard size where the profile names none)
            "base_sizes_mm": list(live().config.vision.base_sizes_mm),
            "available": names,
        }
    )


@bp.get("/spec")
def get_spec() -> Response:
    return jsonify(live().spec.to_dict())


@bp.get("/markers.pdf")
def markers() -> Response:
    """The current table spec's markers at true size, with a placement sheet."""
    lt = live()
    with tempfile.TemporaryDirectory(prefix="tableref-") as tmp:
        out = Path(tmp) / "markers.pdf"
        calibration.markers_pdf(lt.spec, out, settings=lt.config.calibration)
        data = out.read_bytes()
    response = Response(data, mimetype="application/pdf")
    response.headers["Content-Disposition"] = 'attachment; filename="tableref-markers.pdf"'
    return response


def _pairs(res: Result) -> list[tuple[str, str]]:
    pairs = []
    for raw in request.args.getlist("pair"):
        parts = raw.split(",")
        if len(parts) != 2 or not all(parts):
            raise ApiError(f"pair {raw!r}: expected two model ids separated by a comma, such as pair=m1,m2")
        pairs.append((parts[0], parts[1]))
    if len(pairs) > MAX_REPORT_PAIRS:
        raise ApiError(f"{len(pairs)} pairs asked for; a report holds at most {MAX_REPORT_PAIRS}")
    return pairs


@bp.get("/report")
def report() -> Response:
    """The judge report: a self-contained HTML page (frame, overlays, measurements, findings, calibration)."""
    res = current_result()
    measurements = [judge.measure(res.state, res.profile, a, b) for a, b in _pairs(res)]
    html = render_template("report.html", **report_context(res, measurements, snapshot().status))
    response = Response(html, mimetype="text/html")
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(res.analyzed_at))
    response.headers["Content-Disposition"] = f'attachment; filename="tableref-report-{stamp}.html"'
    return response


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ApiError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _items(body: dict[str, Any], key: str, limit: int) -> list[dict[str, Any]]:
    given = body.get(key, [])
    if not isinstance(given, list) or not all(isinstance(x, dict) for x in given):
        raise ApiError(f"{key!r}: expected a list of objects")
    if len(given) > limit:
        raise ApiError(f"{key!r}: {len(given)} given; at most {limit} are placed in one request")
    return given


def _label(raw: dict[str, Any], k: int) -> Label:
    where = f"labels[{k}]"
    x, y, width, height = (_number(raw.get(f), f"{where}.{f}") for f in ("x", "y", "width", "height"))
    pad, near = (_number(raw.get(f, 0.0), f"{where}.{f}") for f in ("pad", "near"))
    if min(width, height, pad, near) < 0:
        raise ApiError(f"{where}: width, height, pad and near must not be negative")
    own = raw.get("own")
    return Label(
        str(raw.get("text", "")),
        x,
        y,
        width,
        height,
        pad,
        above=bool(raw.get("above")),
        near=near,
        clear_of_bases=bool(raw.get("clear_of_bases")),
        own=None if own is None else str(own),
    )


@bp.post("/labels")
def labels() -> Response:
    """Where the labels of a drawing go so that none overlaps another (:mod:`tableref.labels`): the screens measure
    their labels and ask here, so that they and the reports place labels one way. Changes nothing: no token."""
    body = json_body()
    bounds = body.get("bounds")
    if not isinstance(bounds, list) or len(bounds) != 4:
        raise ApiError("'bounds': expected [x0, y0, x1, y1], the drawing's box")
    x0, y0, x1, y1 = (_number(v, "bounds") for v in bounds)
    bases = [
        Circle(str(c.get("id", "")), *(_number(c.get(f), f"bases[{k}].{f}") for f in ("x", "y", "r")))
        for k, c in enumerate(_items(body, "bases", MAX_LABEL_BASES))
    ]
    given = [_label(raw, k) for k, raw in enumerate(_items(body, "labels", MAX_LABELS))]
    placed = place_labels(given, (x0, y0, x1, y1), bases)
    return jsonify({"placed": [p.to_dict() if p else None for p in placed]})


# --------------------------------------------------------------------------------------------------------------
# Changes (token)


@bp.put("/roster")
@needs_token
def put_roster() -> Response:
    """Replace the roster: a table state JSON body, or a file upload of one."""
    roster = roster_from_json(json_body()) if request.is_json else roster_from_bytes(upload_bytes("a roster JSON"))
    lt = live()
    before = lt.hub.live_result_seq()
    queued = lt.set_roster(roster)
    return jsonify(_after_change(before, queued))


@bp.delete("/roster")
@needs_token
def reset_roster() -> Response:
    """Forget the roster of the table on screen (units, ids, base overrides; its terrain stays): the models on the
    table are taken as new, of no unit. For a table the roster does not belong to; ``POST /api/roster/undo`` brings
    it back."""
    lt = live()
    before = lt.hub.live_result_seq()
    removed, queued = lt.reset_roster()
    return jsonify(_after_change(before, queued) | {"units_removed": removed})


@bp.post("/roster/undo")
@needs_token
def undo_roster_reset() -> Response:
    """Bring back the roster the last reset (or a photo of another table) set aside."""
    lt = live()
    before = lt.hub.live_result_seq()
    units, queued = lt.undo_reset()
    return jsonify(_after_change(before, queued) | {"units_restored": units})


@bp.put("/profile")
@needs_token
def put_profile() -> Response:
    body = json_body()
    name = body.get("profile")
    lt = live()
    current = lt.profile
    names = rules.builtin_profiles()
    if not isinstance(name, str) or (name not in names and name != current.name):
        raise ApiError(f"profile {name!r}: expected one of {', '.join([*names, current.name])}")
    profile = current if name == current.name else rules.load_profile(name)
    before = lt.hub.live_result_seq()
    queued = lt.set_profile(profile)
    return jsonify(_after_change(before, queued) | {"profile": profile.name, "limits_mm": profile.limits()})


@bp.post("/freeze")
@needs_token
def freeze() -> Response:
    """``{"frozen": true}`` holds the current result and its frame for every screen; false lets go."""
    body = json_body()
    frozen = body.get("frozen")
    if not isinstance(frozen, bool):
        raise ApiError("expected {'frozen': true} or {'frozen': false}")
    hub = live().hub
    snap = hub.freeze() if frozen else hub.unfreeze()
    return jsonify(snap.status.to_dict())


@bp.put("/spec")
@needs_token
def put_spec() -> Response:
    """A table spec TOML (raw body or a file upload): markers are looked for anew on the next settled frame."""
    spec = parse_spec(upload_bytes("a table spec TOML file"))
    live().set_spec(spec)
    return jsonify({"ok": True, "spec": spec.to_dict()})


@bp.post("/calibrate")
@needs_token
def recalibrate() -> Response:
    live().recalibrate()
    return jsonify({"ok": True})


@bp.get("/empty")
def empty_status() -> Response:
    """Whether the table seen empty is known for the scene on screen."""
    return jsonify(live().empty_status())


@bp.post("/empty")
@needs_token
def capture_empty() -> Response:
    """Take the next settled frame as the table seen empty (terrain on it, no models)."""
    live().capture_empty()
    return jsonify({"ok": True, **live().empty_status()})


@bp.delete("/empty")
@needs_token
def forget_empty() -> Response:
    """Detect without the empty table from now on."""
    forgotten = live().forget_empty()
    return jsonify({"ok": True, "forgotten": forgotten, **live().empty_status()})


@bp.post("/photo")
@needs_token
def photo() -> Response:
    """Watch an uploaded photo (JPEG or PNG) instead of the camera, with the roster of the table on screen; where
    its models do not match that roster (a photo of another table), from a fresh roster, the other kept for undo."""
    state = app_state()
    image = parse_image(upload_bytes("a JPEG or PNG photo"), state.settings.max_image_pixels)
    lt = state.live
    roster = lt.roster()
    key = f"photo-{time.time_ns()}"
    scene = Scene(key=key, roster=roster if roster.models else None, fresh_if_other=True)
    lt.watch_photo(ImageFeed(image, "uploaded photo", scene, state.settings.replay_fps))
    return jsonify({"ok": True, "width_px": image.shape[1], "height_px": image.shape[0]})


@bp.delete("/photo")
@needs_token
def put_photo_away() -> Response:
    """Stop checking the uploaded photo: the source it replaced (the camera, the demo's recording) comes back."""
    return jsonify({"ok": True, "source": live().back_to_source()})
