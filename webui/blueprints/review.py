"""The review screen: a recorded game reviewed by ``tableref review``, opened with ``tableref serve --review
GAME.sqlite``. A timeline of settled states with their events; stepping shows the frame, a top-down map with
ghosts of the previous positions and arrows with move lengths, and the state's findings. The game report is
the same pages in one HTML file."""

from __future__ import annotations

import base64
from dataclasses import replace
from pathlib import Path, PureWindowsPath
from typing import Any

from flask import Blueprint, Response, current_app, render_template, request, url_for

import rules
from tableref.labels import ID_SHARE, LINE_HEIGHT, Circle, label_for, place_labels, table_labels
from tableref.pipeline.state import doubted_of
from tableref.report import describe_finding, finding_measure, finding_note, finding_title
from tableref.review.store import ReviewStore
from tableref.review.timeline import ReviewedState, regroup
from webui.errors import ApiError
from webui.groups import group_findings
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
    previous positions of the models that moved or went, an arrow per move, and the labels (unit names, ids, each
    move's length) placed apart (:mod:`tableref.labels`)."""
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
        # places the measurement doubted: a base may stand there that the detector did not accept
        "doubted": [
            {"x": p.x_mm, "y": p.y_mm, "r": 0.5 * p.diameter_mm, "probability": p.probability}
            for p in doubted_of(current.state)
        ],
        "arrows": [{"x1": m.from_mm[0], "y1": m.from_mm[1], "x2": m.to_mm[0], "y2": m.to_mm[1]} for m in current.moves],
        "labels": _map_labels(current, font),
    }


def _map_labels(current: ReviewedState, font: float) -> list[dict[str, Any]]:
    """The map's labels placed apart: unit names above their units, each move's length on its arrow (clear of the
    bases where it can), each model's id on its base; ``cls`` says which, ``leader`` joins a label moved off its
    place to its anchor."""
    state = current.state
    circles = [Circle(m.id, m.x_mm, m.y_mm, m.base.semi_axes_mm[0]) for m in state.models]
    named = table_labels(
        circles, {m.id: m.unit for m in state.models}, {u.id: u.name or u.id for u in state.units}, font
    )
    names = [label for label in named if label.above]
    moves = [
        label_for(
            f'{m.model} {m.distance_mm / MM_PER_INCH:.1f}"',
            (m.from_mm[0] + m.to_mm[0]) / 2,
            (m.from_mm[1] + m.to_mm[1]) / 2,
            font * ID_SHARE,
            clear_of_bases=True,
        )
        for m in current.moves
    ]
    ids = [label for label in named if not label.above]
    labels = [*names, *moves, *ids]
    classes = ["unit-label"] * len(names) + ["move-label"] * len(moves) + ["id-label"] * len(ids)
    placed = place_labels(labels, (0.0, 0.0, state.table.width_mm, state.table.depth_mm), circles)
    return [
        {"text": label.text, "cls": cls, "font": label.height / LINE_HEIGHT, **p.to_dict()}
        for label, cls, p in zip(labels, classes, placed, strict=True)
        if p is not None
    ]


def findings_view(current: ReviewedState) -> list[dict[str, Any]]:
    """The state's findings in plain words, grouped by the units they are about, the strongest group first (as the
    Table screen groups them: :mod:`webui.groups`): each group's title names its units, each line says the finding,
    who it is about and what was measured."""
    state, findings = current.state, current.findings
    names = {u.id: u.name or u.id for u in state.units}
    out = []
    for g in group_findings(findings, state):
        lines = []
        for k in g.findings:
            f = findings[k]
            measured = "; ".join(x for x in (finding_measure(f), finding_note(f)) if x)
            lines.append(
                {"title": finding_title(f), "text": describe_finding(state, f), "measure": measured}
                | {"call": f.call or rules.CLEAR, "models": list(f.models)}
            )
        title = " – ".join(names.get(u, u) for u in g.units) or "Models of no unit"
        out.append({"title": title, "call": g.call, "lines": lines})
    return out


def verdicts_view(current: ReviewedState) -> list[dict[str, Any]]:
    """Each unit's move in words: a unit whose Move is not known is not judged on its distance, which its verdict
    says instead of a verdict it does not have (what else the move broke still stands)."""
    units = {u.id: u for u in current.state.units}
    out = []
    for v in current.verdicts:
        unit = units.get(v.unit)
        unknown = unit is None or unit.move_in is None
        name = unit.name if unit is not None and unit.name else v.unit
        if v.legal and unknown:
            text, cls = "Move unknown: set it on Units", "unknown"
        else:
            verdict = "legal" if v.legal else "ILLEGAL"
            note = v.note or ("too close to call" if v.call == rules.CLOSE else "")
            text = f"{v.action or 'no legal action'} {verdict}" + (f" ({note})" if note else "")
            cls = "ok" if v.legal else "bad"
        out.append({"unit": v.unit, "name": name, "text": text, "cls": cls, "problems": list(v.problems)})
    return out


def _page_data(states: list[ReviewedState], index: int) -> dict[str, Any]:
    current = states[index]
    previous = states[index - 1] if index > 0 else None
    return {
        "states": states,
        "current": current,
        "map": map_view(current, previous),
        "findings": findings_view(current),
        "verdicts": verdicts_view(current),
        # every unit of the game (later states may add some), for the unit editor
        "game_units": states[-1].track.units,
        "inch": MM_PER_INCH,
    }


def _source(meta: dict[str, str]) -> dict[str, str | None]:
    """The recording reviewed: its path as the review stored it, and its file's name, which the pages show."""
    source = meta.get("source")
    # a Windows path reads its name at either separator, a POSIX one at "/"
    return {"source": source, "source_name": PureWindowsPath(source).name if source else None}


@bp.get("/review")
def page() -> str:
    store = _store()
    if store is None:
        return render_screen("review.html", "review.page")
    with store:
        states = store.states()
        meta = store.meta()
    if not states:
        return render_screen("review.html", "review.page", **_source(meta), states=[])
    index = min(max(request.args.get("state", 0, type=int), 0), len(states) - 1)
    frame_url = url_for("review.frame", index=index)
    return render_screen(
        "review.html", "review.page", **_source(meta), frame_url=frame_url, **_page_data(states, index)
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
    html = render_template("review_report.html", **_source(meta), pages=pages, inch=MM_PER_INCH)
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
