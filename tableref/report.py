"""Readable text for people: findings as a table, inches first with millimetres beside."""

from __future__ import annotations

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
        return f"{models} in {f.terrain}"
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
    if f.kind == "off_table":
        return f"{format_length(-f.gap_mm, f.sigma_mm)} over the edge"
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
