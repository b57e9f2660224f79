"""The review as JSON: the timeline document ``tableref review --json`` prints and its parts, as the store keeps
them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import rules
from tableref.pipeline.state import DOUBTED
from tableref.review.timeline import MM_PER_INCH, Event, Move, Placement, ReviewedState

# Reports round millimetres to a micrometre: finer digits are float noise, not measurement.
_DECIMALS = 3
LOWER_BOUND_NOTE = (
    "A displacement is where a model stood before and after, so it is a lower bound of the distance it really "
    "travelled; path_mm is the shortest legal path around other models and terrain."
)


def _r(value: float) -> float:
    return round(float(value), _DECIMALS)


def _pt(p: tuple[float, float]) -> list[float]:
    return [_r(p[0]), _r(p[1])]


def move_to_dict(m: Move) -> dict[str, Any]:
    return {
        "model": m.model,
        "unit": m.unit,
        "from_state": m.from_state,
        "to_state": m.to_state,
        "from_mm": _pt(m.from_mm),
        "to_mm": _pt(m.to_mm),
        "distance_mm": _r(m.distance_mm),
        # null: no legal path at all (walls or models close every way round)
        "path_mm": _r(m.path_mm) if m.has_path else None,
        "distance_in": round(m.distance_mm / MM_PER_INCH, 2),
        "path_in": round(m.path_mm / MM_PER_INCH, 2) if m.has_path else None,
        "sigma_mm": _r(m.sigma_mm),
    }


def placement_to_dict(p: Placement) -> dict[str, Any]:
    out: dict[str, Any] = {"model": p.model, "unit": p.unit, "state": p.state, "at_mm": _pt(p.at_mm)}
    if p.returned:
        out["returned"] = True
    return out


def event_to_dict(e: Event) -> dict[str, Any]:
    return {"state": e.state, "kind": e.kind, "units": list(e.units), "models": list(e.models), "detail": e.detail}


def verdict_to_dict(v: rules.UnitMove, to_state: int) -> dict[str, Any]:
    return {
        "unit": v.unit,
        "from_state": to_state - 1,
        "to_state": to_state,
        "action": v.action,
        "declared": v.declared,
        "legal": v.legal,
        "call": v.call,
        "allowance_mm": None if v.allowance_mm is None else _r(v.allowance_mm),
        "problems": list(v.problems),
        "note": v.note,
        # the steps of moving into melee left undone, each with its model and the free spot it could have taken
        "findings": [f.to_dict() for f in v.findings],
    }


def state_entry(s: ReviewedState) -> dict[str, Any]:
    """The timeline entry of one settled state."""
    state = rules.state_to_dict(s.state)
    return {
        "index": s.index,
        "frame": s.frame,
        "time_s": round(s.time_s, 3),
        "models": state["models"],
        "units": state["units"],
        "findings": [f.to_dict() for f in s.findings],
        # places its measurement doubted: a base may stand there that the detector did not accept
        "doubted": state.get(DOUBTED, []),
    }


def timeline(states: Sequence[ReviewedState], profile_name: str) -> dict[str, Any]:
    """The timeline document ``tableref review --json`` prints."""
    return {
        "profile": profile_name,
        "note": LOWER_BOUND_NOTE,
        "states": [state_entry(s) for s in states],
        "moves": [move_to_dict(m) for s in states for m in s.moves],
        "unit_moves": [verdict_to_dict(v, s.index) for s in states for v in s.verdicts],
        "removed": [placement_to_dict(p) for s in states for p in s.removed],
        "added": [placement_to_dict(p) for s in states for p in s.added],
        "events": [event_to_dict(e) for s in states for e in s.events],
    }
