"""Readable text for people: findings as a table, inches first with millimetres beside."""

from __future__ import annotations

import math
from typing import Any

import rules

MM_PER_INCH = 25.4

#: A heading per kind of finding, for every report.
TITLES = {
    "unseen": "Not seen (calls about them are open)",
    "engaged": "Engaged",
    "cohesion": "Out of cohesion",
    "overlap": "Overlapping bases",
    "multi_contact": "In base contact with two enemy units",
    "off_table": "Off the table",
    "in_terrain": "Standing in solid terrain",
    "illegal_move": "Illegal moves",
}


def finding_title(f: rules.Finding) -> str:
    """The heading of one finding: its kind's, save for a move not judged on its length (its unit's Move is not
    known), which is no illegal move."""
    if f.kind == "illegal_move" and f.limit_mm is None and f.call == rules.CLOSE:
        return "Move not judged"
    return TITLES.get(f.kind, f.kind)


def format_length(mm: float, sigma_mm: float | None = None) -> str:
    """``0.48" (12.30 mm)``, with ``±`` when the length has an uncertainty."""
    inches = mm / MM_PER_INCH
    if sigma_mm:
        return f'{inches:.2f}" ± {sigma_mm / MM_PER_INCH:.2f}" ({mm:.2f} ± {sigma_mm:.2f} mm)'
    return f'{inches:.2f}" ({mm:.2f} mm)'


def _unit_label(state: rules.TableState, unit_id: str) -> str:
    try:
        unit = state.unit(unit_id)
    except KeyError:
        return unit_id
    return f"{unit.name} ({unit.id})" if unit.name else unit.id


def describe_finding(state: rules.TableState, f: rules.Finding) -> str:
    """Who a finding is about, in words: units by name, then the models."""
    models = ", ".join(f.models)
    if f.kind == "unseen":
        owner = _unit_label(state, f.unit) if f.unit else "no unit"
        count = f"{len(f.models)} model{'s' if len(f.models) != 1 else ''}"
        return f"{count} of {owner} not seen: {models}"
    if f.kind == "engaged":
        a, b = f.units
        return f"{_unit_label(state, a)} and {_unit_label(state, b)}, closest {models}"
    if f.kind == "cohesion":
        assert f.unit is not None
        return f"{_unit_label(state, f.unit)}: {models}"
    if f.kind == "multi_contact":
        return f"{models} touches " + " and ".join(_unit_label(state, u) for u in f.units)
    if f.kind == "in_terrain":
        # a measured gap: the model stands on top of the piece, its base over the top's edge
        return f"{models} on {f.terrain}, over its edge" if f.gap_mm is not None else f"{models} in {f.terrain}"
    if f.kind == "illegal_move" and f.unit:
        # no allowance: the unit's Move is not known, so how far it went was not judged
        unknown = ": its Move is not known, the distance was not judged" if f.limit_mm is None else ""
        return f"{_unit_label(state, f.unit)} moved {models}{unknown}"
    return models


def finding_measure(f: rules.Finding) -> str:
    """What a finding measured, inches first with millimetres beside (empty when it measured nothing)."""
    if f.gap_mm is None or f.limit_mm is None:
        return ""
    if f.kind == "overlap":
        allowed = format_length(-f.limit_mm)
        if f.gap_mm < 0:
            return f"{format_length(-f.gap_mm, f.sigma_mm)} deep, allowed {allowed}"
        return f"measured {format_length(f.gap_mm, f.sigma_mm)} apart, may be over {allowed} deep"
    if f.kind in ("off_table", "in_terrain"):
        return f"{format_length(-f.gap_mm, f.sigma_mm)} over the edge"
    if f.kind == "illegal_move":
        # the gap of a move is the length of its shortest legal path (infinite: there is none)
        went = f"up to {format_length(f.gap_mm, f.sigma_mm)}" if math.isfinite(f.gap_mm) else "by no legal path"
        return f"moved {went}, allowed {format_length(f.limit_mm)}"
    return f"gap {format_length(f.gap_mm, f.sigma_mm)}, limit {format_length(f.limit_mm)}"


def finding_note(f: rules.Finding) -> str:
    """Why a call is open beyond its measurement (empty when it is not)."""
    if f.reason == rules.UNSEEN and f.kind != "unseen":
        return "open: a model it depends on is not seen"
    return ""


def format_findings(
    state: rules.TableState, profile: rules.RuleProfile, findings: list[rules.Finding], source: str = ""
) -> str:
    """A readable report of ``findings`` grouped by kind."""
    lines = [f"Profile: {profile.name} - {profile.title}"]
    units = len(state.units)
    lines.append(f"State: {source or 'table'} ({len(state.models)} models, {units} units)")
    if not findings:
        lines.append("\nNo findings: nothing engaged, every unit in cohesion, every base legally placed.")
        return "\n".join(lines)
    close = sum(f.call == rules.CLOSE for f in findings)
    lines.append(f"{len(findings)} findings ({close} too close to call)")
    for kind in rules.KINDS:
        group = [f for f in findings if f.kind == kind]
        if not group:
            continue
        lines.append(f"\n{TITLES[kind]} ({len(group)})")
        for f in group:
            call = f"[{f.call}]" if f.call else ""
            measure = finding_measure(f)
            note = finding_note(f)
            why = f"  ({note})" if note else ""
            lines.append(f"  {call:8} {describe_finding(state, f)}" + (f"  ({measure})" if measure else "") + why)
    return "\n".join(lines)


def _clock(time_s: float) -> str:
    minutes, seconds = divmod(time_s, 60.0)
    return f"{int(minutes)}:{seconds:04.1f}"


def format_game(doc: dict[str, Any]) -> str:
    """What happened in a reviewed game, state by state, from its timeline document
    (:func:`tableref.review.export.timeline`): moves with their verdicts, casualties, arrivals, events and
    questions."""
    moves: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for m in doc["moves"]:
        moves.setdefault((m["to_state"], m["unit"] or "-"), []).append(m)
    lines = []
    for s in doc["states"]:
        k = s["index"]
        findings = s["findings"]
        unseen = sum(len(f["models"]) for f in findings if f["kind"] == "unseen")
        counted = [f for f in findings if f["kind"] != "unseen"]
        head = f"State {k} at {_clock(s['time_s'])}: {len(s['models'])} models seen"
        head += f", {unseen} not seen" if unseen else ""
        lines.append(head + f"; {len(counted)} findings")
        for v in (v for v in doc["unit_moves"] if v["to_state"] == k):
            longest = max((m["distance_mm"] for m in moves.get((k, v["unit"]), [])), default=0.0)
            verdict = "legal" if v["legal"] else "ILLEGAL"
            call = f" ({v['note']})" if v.get("note") else ", too close to call" if v["call"] == rules.CLOSE else ""
            action = v["action"] or "no plan fits"
            why = f": {'; '.join(v['problems'])}" if v["problems"] and not v["legal"] else ""
            lines.append(f"  {v['unit']} moved up to {format_length(longest)}: {action}, {verdict}{call}{why}")
        for p in (p for p in doc["removed"] if p["state"] == k):
            lines.append(f"  {p['model']} ({p['unit'] or 'no unit'}) taken off: a casualty")
        arrived = [p for p in doc["added"] if p["state"] == k]
        back = [p["model"] for p in arrived if p.get("returned")]
        new = [p["model"] for p in arrived if not p.get("returned")]
        if back:
            lines.append(f"  seen again: {', '.join(back)}")
        if new:
            lines.append(f"  new on the table: {', '.join(new)}")
        if s.get("doubted"):
            places = ", ".join(f"({p['x_mm']:.0f}, {p['y_mm']:.0f}) mm" for p in s["doubted"])
            lines.append(f"  a base may stand, not accepted, at {places}: look again")
        for e in (e for e in doc["events"] if e["state"] == k and e["kind"] != "illegal_move"):
            lines.append(f"  {'question: ' if e['kind'] == 'question' else ''}{e['detail']}")
    illegal = sum(not v["legal"] for v in doc["unit_moves"])
    questions = sum(e["kind"] == "question" for e in doc["events"])
    lines.append(
        f"Game: {len(doc['states'])} settled states, {len(doc['unit_moves'])} unit moves ({illegal} illegal), "
        f"{len(doc['removed'])} casualties, {questions} questions"
    )
    return "\n".join(lines)
