"""The roster: which detected model belongs to which unit and player, kept across frames.

A roster is a table state (the rules' JSON format) whose models are the models seen so far, at their last seen places,
with their units. Each new detection takes the identities of the roster's models near it
(:func:`tableref.pipeline.identity.carry_identities`), and the roster then moves its models to where they were seen, so
that identities follow models that move a little between settled frames.

A base size the detector got wrong can be overridden: the roster's top-level ``base_overrides`` section maps a
model id to a base (``{"m3": {"diameter_mm": 32}}``, a round one may add its rim height, ``"height_mm": 3.5``), and
that base replaces the detected one (a round size read wrong by d mm widens the model's sigma by d / 2, as with
``tableref analyze``'s roster). Overridden bases are declared: the next frames measure those models at that
size and rim height (:func:`declared_bases`, as ``tableref analyze`` does with its roster).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import rules
from tableref.assign import match_models
from tableref.pipeline import identity
from tableref.pipeline.identity import carry_identities, standing_on, standing_on_declared
from tableref.review.timeline import pair_within_reach
from tableref.settings import ReviewSettings
from webui.errors import UploadError

OVERRIDES = "base_overrides"
# Sections of a detected state that describe one frame, not the roster (a truth file's render details, say).
_FRAME_SECTIONS = ("calibration", "camera", "visibility", "render", "status")


def base_overrides(roster: rules.TableState) -> dict[str, rules.RoundBase | rules.OvalBase]:
    """The roster's base overrides by model id (empty when it has none)."""
    raw = roster.extras.get(OVERRIDES)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise UploadError(f"{OVERRIDES}: expected an object mapping model ids to bases, got {type(raw).__name__}")
    try:
        return {str(k): rules.base_from_dict(v, f"{OVERRIDES}[{k!r}]") for k, v in raw.items()}
    except rules.StateError as exc:
        raise UploadError(str(exc)) from None


def declared_bases(roster: rules.TableState | None) -> rules.TableState | None:
    """The roster's models whose bases the user declared (overrides), at their last seen places and standing on
    the declared bases: what the detector may fit them at (``roster`` of :func:`tableref.pipeline.frame.detect_frame`).
    None when nothing is declared."""
    if roster is None:
        return None
    return standing_on(roster.table, roster.models, base_overrides(roster))


def units_on_table(roster: rules.TableState | None) -> rules.TableState | None:
    """The roster's models that belong to a unit, seen or not, each where it was last seen: the bases a frame
    measured whole looks for where it lacks them (``looked_for`` of :func:`tableref.pipeline.frame.detect_frame`).
    A model of no unit is only what the detector once found, perhaps wrongly, and is not looked for again. None
    when no unit has a model."""
    if roster is None:
        return None
    models = tuple(m for m in roster.models if m.unit is not None)
    unseen = tuple(m for m in roster.unseen if m.unit is not None)
    if not models and not unseen:
        return None
    return replace(roster, models=models, unseen=unseen)


def roster_from_json(data: Any) -> rules.TableState:
    """A roster from parsed JSON (the table state format). Raises :class:`UploadError` saying what is wrong."""
    try:
        state = rules.state_from_dict(data)
    except rules.StateError as exc:
        raise UploadError(f"not a roster: {exc}") from None
    base_overrides(state)
    extras = {k: v for k, v in state.extras.items() if k not in _FRAME_SECTIONS}
    return replace(state, extras=MappingProxyType(extras))


def roster_from_bytes(payload: bytes) -> rules.TableState:
    """A roster from an uploaded JSON file. Raises :class:`UploadError`."""
    try:
        data = json.loads(payload.decode("utf-8"))
    except UnicodeDecodeError:
        raise UploadError("the roster is not UTF-8 text; expected a table state JSON file") from None
    except json.JSONDecodeError as exc:
        raise UploadError(f"the roster is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except ValueError as exc:
        # a whole number of more digits than Python converts
        raise UploadError(f"the roster is not usable JSON ({str(exc).split(';')[0]})") from None
    except RecursionError:
        raise UploadError("the roster is nested too deep to read; expected a table state JSON file") from None
    return roster_from_json(data)


def empty_roster(table: rules.Table, terrain: tuple[rules.Terrain, ...] = ()) -> rules.TableState:
    """A roster of nothing on a table (its ``terrain`` kept: a reset forgets the models, not the table)."""
    return rules.TableState(table, terrain=terrain)


def follow(
    roster: rules.TableState,
    detected: rules.TableState,
    gate_mm: float,
    profile: rules.RuleProfile | None = None,
    review: ReviewSettings | None = None,
) -> tuple[rules.TableState, rules.TableState]:
    """Identities for a detected state, and the roster moved along.

    Returns (state, roster): ``state`` is ``detected`` with the ids and units of the roster models each detection
    matched (within ``gate_mm``), the roster's units and terrain, and base overrides applied; the new roster has
    the matched models at their new places, the unmatched roster models where they were last seen, and every new
    detection as a model of no unit. A unit's model not seen is ``unseen`` in the state; a model of no unit not
    seen is not (no call the referee makes depends on it) but stays in the roster. With ``review`` settings, a
    detection left over is paired with a unit's unseen model within that unit's reach (a unit that moved farther
    than ``gate_mm`` between two results keeps its ids; see :func:`tableref.review.timeline.pair_within_reach`).
    """
    carried = carry_identities(detected, roster, gate_mm)
    if review is not None:
        known = {m.id for m in roster.models + roster.unseen}
        fresh = frozenset(m.id for m in carried.models if m.id not in known)
        carried = pair_within_reach(carried, fresh, profile, review)
    overrides = base_overrides(roster)
    models = tuple(standing_on_declared(m, overrides[m.id]) if m.id in overrides else m for m in carried.models)
    unseen = tuple(m for m in carried.unseen if m.unit is not None)
    units = identity.led_by_present(carried.units, {m.id for m in models + unseen})
    state = replace(carried, units=units, models=models, unseen=unseen)
    seen = {m.id: m for m in state.models}
    kept = [
        replace(
            m,
            x_mm=seen[m.id].x_mm,
            y_mm=seen[m.id].y_mm,
            base=seen[m.id].base,
            sigma_mm=seen[m.id].sigma_mm,
            doubt_mm=seen[m.id].doubt_mm,
        )
        if m.id in seen
        else m
        for m in roster.models + roster.unseen
    ]
    known = {m.id for m in roster.models + roster.unseen}
    kept += [m for m in state.models if m.id not in known]
    units = tuple(
        u if u.leader is None or any(m.id == u.leader and m.unit == u.id for m in kept) else replace(u, leader=None)
        for u in roster.units
    )
    new_roster = rules.TableState(detected.table, units, tuple(kept), roster.terrain, roster.extras)
    return state, new_roster


@dataclass(frozen=True)
class RosterMatch:
    """How the models on the table match the roster's: ``roster`` models of the roster are in a unit, ``seen``
    models are on the table, and ``matched`` of the roster's stand within reach of one of them (the roster's gate,
    each model on the table matched once). ``mismatch``: fewer than ``share`` of the smaller number matched, as
    when a photo of another table is measured with the roster of the last one (a table whose models were only taken
    off still matches: the ones left are the roster's; a unit that moved farther than the gate is one unit)."""

    roster: int
    seen: int
    matched: int
    share: float

    @property
    def mismatch(self) -> bool:
        return self.roster > 0 and self.seen > 0 and self.matched < self.share * min(self.roster, self.seen)

    def to_dict(self) -> dict[str, Any]:
        return {"roster": self.roster, "seen": self.seen, "matched": self.matched, "mismatch": self.mismatch}


def roster_match(roster: rules.TableState, detected: rules.TableState, gate_mm: float, share: float) -> RosterMatch:
    """How the models ``detected`` on the table match the roster's models in units, within ``gate_mm``; a mismatch
    below ``share`` of them (see :class:`RosterMatch`)."""
    in_units = [m for m in (*roster.models, *roster.unseen) if m.unit is not None]
    rows, _ = match_models(detected.models, in_units, gate_mm)
    return RosterMatch(len(in_units), len(detected.models), len(rows), share)


@dataclass(frozen=True)
class Suggestion:
    """Unassigned models that look like one unit: same base, close together, on the same half of the table."""

    models: tuple[str, ...]
    base: dict[str, float]
    side: str

    def to_dict(self) -> dict[str, Any]:
        return {"models": list(self.models), "base": self.base, "side": self.side}


def suggest_units(state: rules.TableState, gap_mm: float) -> list[Suggestion]:
    """The models of no unit in suggested units (:func:`tableref.pipeline.identity.suggest_units`), never across
    the middle of the table: in order of side, then from left to right."""
    out = []
    for members in identity.suggest_units(state, gap_mm, by_side=True):
        first = state.models[members[0]]
        out.append(
            Suggestion(
                models=tuple(state.models[k].id for k in members),
                base=first.base.to_dict(),
                side=identity.table_side(state.table, first.x_mm, first.y_mm),
            )
        )
    order = {"top": 0, "left": 0, "bottom": 1, "right": 1}
    return sorted(out, key=lambda s: (order[s.side], min(state.model(i).x_mm for i in s.models)))
