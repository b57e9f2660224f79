"""The Judge screen's placement assistant: once a unit's leader is in base contact with an enemy model,
``rules.place_melee`` proposes the rest of the melee in the text's order. Nothing is kept: like a measurement, a
proposal is a read of the result on screen (the frozen one while frozen)."""

from __future__ import annotations

from typing import Any

import numpy as np
from flask import Blueprint, Response, jsonify

import rules
from rules.melee import OPPONENT_LEADER, OPPONENT_OTHERS, OTHERS
from webui.errors import ApiError
from webui.http import current_result, json_body
from webui.hub import Result
from webui.measure import MM_PER_INCH, REPORT_DECIMALS

bp = Blueprint("melee", __name__, url_prefix="/api")

# The profiles' movement mode that has the melee procedure (the Legion seed's).
MELEE_MODE = "legion"
# The steps of the procedure after the leader's, in the text's order, as the Judge screen titles them.
PHASES = (OTHERS, OPPONENT_LEADER, OPPONENT_OTHERS)
# A pair of bases farther apart than this beyond their radii is not looked at for base contact (mm).
_NEAR_MM = 5.0


def _name(state: rules.TableState, unit_id: str) -> str:
    unit = state.unit(unit_id)
    return unit.name or unit.id


def _touching(state: rules.TableState, profile: rules.RuleProfile, leader: rules.Model) -> list[str]:
    """The enemy units the model ``leader`` is in base contact with (the contact line of the profile), in state
    order."""
    mine = state.unit(leader.unit or "")
    units = {u.id: u for u in state.units}
    out: list[str] = []
    reach = max(leader.base.semi_axes_mm) + profile.contact.gap_mm + _NEAR_MM
    for m in state.models:
        other = units.get(m.unit or "")
        if other is None or other.id in out or not (other.player and mine.player) or other.player == mine.player:
            continue
        if np.hypot(m.x_mm - leader.x_mm, m.y_mm - leader.y_mm) > reach + max(m.base.semi_axes_mm):
            continue
        measured = rules.measure(state, leader.id, m.id, profile)
        if any(v.line == "base_contact" and v.within for v in measured.verdicts):
            out.append(other.id)
    return out


@bp.get("/melee/units")
def melee_units() -> Response:
    """The units whose leader is seen in base contact with an enemy model: those the assistant can start from."""
    res = current_result()
    state = res.state
    seen = {m.id: m for m in state.models}
    units = []
    for u in state.units:
        leader = seen.get(u.leader or "")
        if leader is None or leader.unit != u.id:
            continue
        touching = _touching(state, res.profile, leader)
        if touching:
            units.append({"id": u.id, "name": _name(state, u.id), "leader": leader.id, "touching": touching})
    response = jsonify(
        {
            "result_seq": res.seq,
            "profile": res.profile.name,
            "procedure": res.profile.movement.mode == MELEE_MODE,
            "units": units,
        }
    )
    response.headers["Cache-Control"] = "no-store"
    return response


def _pixels(res: Result, points_mm: list[tuple[float, float]]) -> list[list[float]] | None:
    if res.to_px is None or not points_mm:
        return None
    px = res.to_px(np.asarray(points_mm, dtype=np.float64), res.rim_height_mm)
    rounded: list[list[float]] = np.round(np.asarray(px, dtype=np.float64), 1).tolist()
    return rounded


def _step_dict(res: Result, n: int, step: rules.MeleeStep) -> dict[str, Any]:
    model = res.state.model(step.model)
    a, b = model.base.semi_axes_mm
    doc = step.to_dict()
    distance = step.distance_mm
    doc.update(
        {
            "n": n,
            "radius_mm": round(max(a, b), REPORT_DECIMALS),
            "distance_mm": round(distance, REPORT_DECIMALS),
            "distance_in": round(distance / MM_PER_INCH, REPORT_DECIMALS),
        }
    )
    px = _pixels(res, [step.from_mm, step.to_mm, (step.to_mm[0] + max(a, b), step.to_mm[1])])
    if px is not None:
        doc["from_px"], doc["to_px"] = px[0], px[1]
        doc["radius_px"] = round(float(np.hypot(px[2][0] - px[1][0], px[2][1] - px[1][1])), 1)
    return doc


@bp.post("/melee")
def melee() -> Response:
    """``{"unit": ID}`` -> the rest of the melee ``rules.place_melee`` proposes for the result on screen: each
    model's step with its place in table mm (and frame pixels), in the text's order. A melee that cannot start (a
    profile with no melee procedure, a leader in base contact with no enemy, ...) is a 400 saying why."""
    body = json_body()
    unit = body.get("unit")
    if not isinstance(unit, str) or not unit:
        raise ApiError("missing 'unit': expected the id of the unit that moved into melee, such as 'clones'")
    res = current_result()
    try:
        proposal = rules.place_melee(res.state, unit, res.profile)
    except rules.RulesError as exc:
        raise ApiError(str(exc)) from None
    return jsonify(
        {
            "result_seq": res.seq,
            "profile": res.profile.name,
            "unit": proposal.unit,
            "enemy": proposal.enemy,
            "unit_name": _name(res.state, proposal.unit),
            "enemy_name": _name(res.state, proposal.enemy),
            "note": proposal.note,
            "phases": list(PHASES),
            "steps": [_step_dict(res, n, s) for n, s in enumerate(proposal.steps, start=1)],
        }
    )
