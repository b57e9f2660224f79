"""The review screen: a recorded game reviewed by ``tableref review``, opened with ``tableref serve --review
GAME.sqlite``. A timeline of settled states with their events; stepping shows the frame, a top-down map with
ghosts of the previous positions and arrows with move lengths, and the state's findings. The game report is
the same pages in one HTML file."""

from __future__ import annotations

import base64
from dataclasses import replace
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, render_template, request, url_for

import rules
from tableref.review.store import ReviewStore
from tableref.review.timeline import ReviewedState, regroup
from webui.errors import ApiError
from webui.http import json_body, needs_token
from webui.report import player_colour
from webui.screens import render_screen

bp = Blueprint("review", __name__)

# The app config key holding the path of the review database being shown (None: no review opened).
REVIEW_KEY = "TABLEREF_REVIEW"
MM_PER_INCH = 25.4
HTTP_NOT_FOUND = 404
# Grid lines of the map every 6 inches; models of no unit are grey.
GRID_MM = 6 * MM_PER_INCH
NO_UNIT = "#9e9e9e"
# Size of the map's text, as a fraction of the table's longer side (mm).
FONT_SHARE = 1 / 50


def _store(readonly: bool = True) -> ReviewStore | None:
    path = current_app.config.get(REVIEW_KEY)
    return None if path is None else ReviewStore(Path(path), readonly=readonly)


def _units(body: dict[str, Any], table: rules.Table) -> tuple[rules.Unit, ...]:
    """The units of a request body, validated as a state's units are (leaders checked per state later)."""
    given = body.get("units")
    if not isinstance(given, list):
        raise ApiError('missing \'units\': expected a list of units like {"id": "u1", "player": "red", "move_in": 6}')
    leaders = [u.get("leader") if isinstance(u, dict) else None for u in given]
    bare = [{k: v for k, v in u.items() if k != "leader"} if isinstance(u, dict) else u for u in given]
    try:
        parsed = rules.state_from_dict(
            {"table": {"width_mm": table.width_mm, "depth_mm": table.depth_mm}, "units": bare}
        ).units
    except rules.StateError as exc:
        raise ApiError(str(exc)) from None
    return tuple(
        replace(u, leader=leader if isinstance(leader, str) else None)
        for u, leader in zip(parsed, leaders, strict=True)
    )


def _membership(body: dict[str, Any]) -> dict[str, str | None]:
    given = body.get("membership", {})
    if not isinstance(given, dict) or not all(isinstance(v, str) or v is None for v in given.values()):
        raise ApiError('\'membership\' must map model ids to unit ids (or null for no unit), like {"m3": "u2"}')
    return {str(k): v for k, v in given.items()}


def map_view(current: ReviewedState, previous: ReviewedState | None) -> dict[str, Any]:
    """What the top-down map draws, in table millimetres: bases of this state coloured by unit, ghosts of the
    previous positions of the models that moved or went, and an arrow per move with its length."""
    units = current.state.units
    players = list(dict.fromkeys(u.player for u in units if u.player))
    colour = {u.id: player_colour(players, u.player) for u in units}
    moved = {m.model for m in current.moves}
    gone = {p.model for p in current.removed}
    ghosts = []
    if previous is not None:
        ghosts = [
            {"x": m.x_mm, "y": m.y_mm, "r": m.base.semi_axes_mm[0], "removed": m.id in gone}
            for m in previous.state.models
            if m.id in moved or m.id in gone
        ]
    width, depth = current.state.table.width_mm, current.state.table.depth_mm
    font = max(width, depth) * FONT_SHARE
    return {
        "width": width,
        "depth": depth,
        # a line every 6", and a scale bar in a band under the table
        "grid_x": [k * GRID_MM for k in range(1, int(width // GRID_MM) + 1) if k * GRID_MM < width],
        "grid_y": [k * GRID_MM for k in range(1, int(depth // GRID_MM) + 1) if k * GRID_MM < depth],
        "font": font,
        "scale_in": 12 if width >= 24 * MM_PER_INCH else 6,
        "legend": [{"name": p, "colour": player_colour(players, p)} for p in players],
        "bases": [
            {
                "id": m.id,
                "x": m.x_mm,
                "y": m.y_mm,
                "r": m.base.semi_axes_mm[0],
                "colour": colour.get(m.unit or "", NO_UNIT),
            }
            for m in current.state.models
        ],
        "ghosts": ghosts,
        "arrows": _arrows(current, font, width, depth),
    }


def _arrows(current: ReviewedState, font: float, width: float, depth: float) -> list[dict[str, Any]]:
    """An arrow per move with its length, each label on its arrow where it overlaps no label placed before it
    (half way along first, then nearer either end, then beside it) and inside the table."""
    placed: list[tuple[float, float, float, float]] = []
    out = []
    for m in current.moves:
        (x1, y1), (x2, y2) = m.from_mm, m.to_mm
        label = f'{m.model} {m.distance_mm / MM_PER_INCH:.1f}"'
        half_w, half_h = len(label) * font * 0.3, font * 0.6
        spots = [(t, side) for side in (0.0, -1.0, 1.0, -2.0, 2.0) for t in (0.5, 0.35, 0.65, 0.2, 0.8)]
        boxes = []
        for t, side in spots:
            cx = min(max(x1 + (x2 - x1) * t + side * 2.2 * half_w, half_w), width - half_w)
            cy = min(max(y1 + (y2 - y1) * t, half_h), depth - half_h)
            boxes.append((cx - half_w, cy - half_h, cx + half_w, cy + half_h))
        free = [
            b for b in boxes if not any(b[0] < p[2] and p[0] < b[2] and b[1] < p[3] and p[1] < b[3] for p in placed)
        ]
        box = (free or boxes)[0]
        placed.append(box)
        out.append(
            {
                "x1": x1,
                "y1": y1,
                "x2": x2,
                "y2": y2,
                "label": label,
                "lx": (box[0] + box[2]) / 2,
                "ly": (box[1] + box[3]) / 2,
            }
        )
    return out


def _page_data(states: list[ReviewedState], index: int) -> dict[str, Any]:
    current = states[index]
    previous = states[index - 1] if index > 0 else None
    return {
        "states": states,
        "current": current,
        "map": map_view(current, previous),
        "findings": [f.to_dict() for f in current.findings],
        # every unit of the game (later states may add some), for the unit editor
        "game_units": states[-1].track.units,
        "inch": MM_PER_INCH,
    }


@bp.get("/review")
def page() -> str:
    store = _store()
    if store is None:
        return render_screen("review.html", "review.page")
    with store:
        states = store.states()
        meta = store.meta()
    if not states:
        return render_screen("review.html", "review.page", source=meta.get("source"), states=[])
    index = min(max(request.args.get("state", 0, type=int), 0), len(states) - 1)
    frame_url = url_for("review.frame", index=index)
    return render_screen(
        "review.html", "review.page", source=meta.get("source"), frame_url=frame_url, **_page_data(states, index)
    )


@bp.get("/review/frame/<int:index>.jpg")
def frame(index: int) -> Response:
    store = _store()
    image = None
    if store is not None:
        with store:
            image = store.image(index)
    if not image:
        raise ApiError(f"no stored frame for settled state {index}", HTTP_NOT_FOUND)
    return Response(image, mimetype="image/jpeg")


@bp.get("/review/report.html")
def report() -> Response:
    """The whole game in one HTML file: every settled state with its frame, map, moves and findings."""
    store = _store()
    if store is None:
        raise ApiError("no review is open; start the dashboard with --review GAME.sqlite", HTTP_NOT_FOUND)
    with store:
        states = store.states()
        meta = store.meta()
        pages = []
        for s in states:
            image = store.image(s.index)
            data = _page_data(states, s.index)
            data["frame_url"] = "data:image/jpeg;base64," + base64.b64encode(image).decode() if image else None
            pages.append(data)
    html = render_template("review_report.html", source=meta.get("source"), pages=pages, inch=MM_PER_INCH)
    return Response(
        html,
        mimetype="text/html",
        headers={"Content-Disposition": 'attachment; filename="game-report.html"'},
    )


@bp.post("/review/units")
@needs_token
def set_units() -> dict[str, Any]:
    """Fix the units of the reviewed game (suggested ones, or a roster's): ``{"units": [...], "membership":
    {model: unit}}``. Identities and positions stay; findings, move verdicts and events are judged again."""
    body = json_body()
    store = _store(readonly=False)
    if store is None:
        raise ApiError("no review is open; start the dashboard with --review GAME.sqlite", HTTP_NOT_FOUND)
    with store:
        states = store.states()
        if not states:
            raise ApiError("the review holds no settled state yet", HTTP_NOT_FOUND)
        meta = store.meta()
        units = _units(body, states[0].state.table)
        membership = _membership(body)
        try:
            profile = rules.load_profile(meta.get("profile", "skirmish"))
        except rules.ProfileError as exc:
            raise ApiError(f"the review's rule profile cannot be loaded: {exc}", HTTP_NOT_FOUND) from None
        actions = store.declared_actions()
        try:
            fixed = regroup(states, units, membership, profile, actions)
        except rules.StateError as exc:
            raise ApiError(str(exc)) from None
        store.rejudge(fixed)
    return {"states": len(fixed), "units": [u.id for u in units], "events": sum(len(s.events) for s in fixed)}
