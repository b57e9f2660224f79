"""Moving into melee (seed 000): the whole procedure, judged between the states before and after a move, and a
placement assistant that carries it out.

The text orders the steps:

1. the unit leader of the unit moving into melee ends in base contact with an enemy model;
2. the other models of that unit are placed into base contact with models of the enemy unit their leader is now
   in melee with;
3. the opponent's unit leader, if it is not in base contact with an enemy model, is placed into base contact with
   a model of the unit that moved into melee;
4. the opponent's other models not in base contact with an enemy model, or not in cohesion, are placed into base
   contact with models of that unit.

A model that cannot be placed into base contact must still be placed in cohesion, and no model may move or be
placed into base contact with two enemy units. "Cannot" is judged on the table as the step found it: a model is
faulted for standing out of base contact only where a free spot in base contact existed that it could reach
(within its unit's Move, by the shortest legal path) and that kept it in cohesion; the finding names that spot.

A pair of states does not show in which order the models of one step were placed, so a spot counts as free when it
is free with the step's other models where they ended, and those that moved block no path. Models of later steps
stand where they stood before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rules.errors import MeleeError
from rules.findings import CLEAR, CLOSE, Finding
from rules.lines import judge
from rules.profile import RuleProfile
from rules.spots import Layout, SpotQuery, cohesion_spot, contact_spot
from rules.state import Model, TableState, Unit
from rules.travel import MM_PER_INCH

#: The kind of finding of a step of the melee procedure left undone.
MELEE = "melee"

# What a melee finding's ``step`` says was left undone.
#: The leader of the unit that moved into melee is not in base contact with an enemy model.
LEADER = "leader"
#: A model is out of base contact although a free spot in base contact was within its reach, in cohesion.
CONTACT = "contact"
#: A model touches only an enemy unit its leader is not in melee with.
OTHER_UNIT = "other_unit"
#: A model is neither in base contact nor in cohesion (or in base contact, out of cohesion).
COHESION = "cohesion"
#: A model placed in base contact with two or more enemy units.
MULTI_CONTACT = "multi_contact"
#: A model of the opponent that needed no placing (its leader in base contact with an enemy model; another model in
#: base contact and in cohesion) was moved: "it does not move".
STAY = "stay"

# Why a melee call is open (a finding's ``reason``) beyond the measurement itself.
#: The opponent's unit did not move: it may not have placed its models yet.
NOT_PLACED = "not_placed"
#: The unit's Move is not known: the spot was sought with no limit of reach.
MOVE_UNKNOWN = "move_unknown"

# Why a model goes where :func:`place_melee` puts it.
_KEPT = "already in base contact and in cohesion"
_PLACED = "the nearest free spot in base contact within its reach, in cohesion"

# The steps of :func:`place_melee`, in the text's order.
OTHERS = "others"
OPPONENT_LEADER = "opponent_leader"
OPPONENT_OTHERS = "opponent_others"


@dataclass(frozen=True)
class MeleeProblem:
    """One step of the melee procedure left undone: the finding, the problem in words, and why the call is open
    (``doubt``; empty when the call is clear)."""

    finding: Finding
    text: str
    doubt: str = ""


@dataclass(frozen=True)
class _Line:
    """One model judged against one line: ``met`` (nominally), ``close`` (the measurement cannot tell), and the
    gap behind it with its sigma."""

    met: bool
    close: bool
    gap_mm: float | None = None
    sigma_mm: float | None = None


def reach_mm(unit: Unit | None, profile: RuleProfile) -> float | None:
    """How far a model of ``unit`` may go when it is placed in a melee (None: its Move is not known)."""
    if unit is None or unit.move_in is None:
        return None
    return unit.move_in * MM_PER_INCH * profile.movement.melee_reach_moves


def _line(layout: Layout, model: int, others: Iterable[int], limit_mm: float, profile: RuleProfile, need: int) -> _Line:
    """Whether ``model`` is within ``limit_mm`` of at least ``need`` of ``others``."""
    targets = np.fromiter(others, dtype=np.intp)
    if len(targets) == 0:
        return _Line(False, False)
    me = np.full(len(targets), model, dtype=np.intp)
    gaps = layout.bases.gaps_mm(me, targets)
    sigmas = layout.bases.pair_sigma_mm(me, targets)
    order = np.argsort(gaps, kind="stable")
    k = int(order[min(need, len(order)) - 1])
    verdict = judge(
        gaps[k : k + 1], limit_mm, sigmas[k : k + 1], profile.calls.close_sigmas, solid=layout.state.measured
    )
    return _Line(bool(verdict.met[0]), bool(verdict.close[0]), float(gaps[k]), float(sigmas[k]))


def _contact(layout: Layout, model: int, units: Iterable[str], profile: RuleProfile) -> _Line:
    return _line(layout, model, layout.members(*units), profile.contact.gap_mm, profile, 1)


def _cohesion(layout: Layout, model: int, profile: RuleProfile) -> _Line:
    coh = profile.cohesion
    unit = layout.unit_of[model]
    group = layout.members(unit) if unit is not None else np.empty(0, dtype=np.intp)
    mates = group[group != model]
    if coh.mode == "none" or len(mates) == 0:
        return _Line(True, False)
    if coh.mode == "leader":
        leader = layout.leader(unit)
        if leader is None or leader == model:
            return _Line(True, False)
        return _line(layout, model, [leader], coh.range_mm, profile, 1)
    return _line(layout, model, mates, coh.range_mm, profile, coh.neighbours_needed(len(group)))


def _touched(layout: Layout, model: int, profile: RuleProfile) -> list[str]:
    """The enemy units model ``model`` is in base contact with, in state order."""
    mine = layout.unit_of[model]
    if mine is None:
        return []
    return [u for u in layout.enemy_units(mine) if _contact(layout, model, [u], profile).met]


def _step_world(before: TableState, after: TableState, later: set[str]) -> TableState:
    """``after`` with the models ``later`` (placed in a later step) back where they stood ``before``."""
    if not later:
        return after
    was = {m.id: m for m in before.models}
    models = tuple(
        replace(m, x_mm=was[m.id].x_mm, y_mm=was[m.id].y_mm) if m.id in later and m.id in was else m
        for m in after.models
    )
    return replace(after, models=models)


def _start(before: TableState, model: Model) -> tuple[float, float]:
    was = {m.id: m for m in before.models}.get(model.id, model)
    return (was.x_mm, was.y_mm)


def _spot_text(spot: tuple[float, float] | None) -> str:
    return "" if spot is None else f"({spot[0]:.1f}, {spot[1]:.1f}) mm"


def _problem(
    layout: Layout,
    step: str,
    model: int,
    line: _Line,
    limit_mm: float,
    units: tuple[str, ...],
    text: str,
    spot: tuple[float, float] | None = None,
    doubt: str = "",
    reason: str | None = None,
) -> MeleeProblem:
    finding = Finding(
        kind=MELEE,
        models=(layout.state.models[model].id,),
        units=units,
        unit=layout.unit_of[model],
        gap_mm=line.gap_mm,
        limit_mm=limit_mm,
        sigma_mm=line.sigma_mm,
        call=CLOSE if doubt else CLEAR,
        reason=reason,
        step=step,
        spot_mm=spot,
    )
    return MeleeProblem(finding, text, doubt)


def _cohesion_problem(
    layout: Layout, model: int, line: _Line, in_contact: bool, target: str | None, prefix: str, profile: RuleProfile
) -> MeleeProblem:
    name = layout.state.models[model].id
    if in_contact:
        text = f"{prefix}{name} in base contact but not in cohesion"
    else:
        text = f"{prefix}{name} neither in base contact{f' with {target}' if target else ''} nor in cohesion"
    text += f" (gap {line.gap_mm or 0.0:.1f} mm, cohesion {profile.cohesion.range_mm:.1f} mm)"
    doubt = "the measurement cannot tell" if line.close else ""
    return _problem(layout, COHESION, model, line, profile.cohesion.range_mm, (), text, doubt=doubt)


def _out_of_contact(
    layout: Layout,
    before: TableState,
    model: int,
    target: str,
    line: _Line,
    passable: frozenset[str],
    profile: RuleProfile,
    prefix: str = "",
    placed: bool = True,
) -> list[MeleeProblem]:
    """The problem of ``model``, out of base contact with ``target``: a free spot in reach was left untaken, or,
    when it was ``placed`` (not left where it stood), it touches only another enemy unit: the text places it "into
    base contact with" models of ``target``, and a model comes into base contact with an enemy only in a melee.
    ``prefix`` names the opponent's unit for its steps."""
    me = layout.state.models[model]
    unit = layout.units.get(me.unit or "")
    reach = reach_mm(unit, profile)
    spot = contact_spot(SpotQuery(layout, me.id, _start(before, me), reach, passable), target, profile)
    elsewhere = [u for u in _touched(layout, model, profile) if u != target] if placed else []
    measured = "the measurement cannot tell" if line.close else ""
    limit = profile.contact.gap_mm
    if elsewhere:
        whose = "the unit that moved into melee" if prefix else "the unit its leader is in melee with"
        text = f"{prefix}{me.id} touches only {', '.join(elsewhere)}, not {target}, {whose}"
        if spot is not None:
            text += f"; {target} had room at {_spot_text(spot)}"
        return [_problem(layout, OTHER_UNIT, model, line, limit, (*elsewhere, target), text, spot, measured)]
    if spot is None:
        return []
    who = f"its leader {me.id}" if layout.leader(me.unit) == model else me.id
    text = f"{prefix}{who} not in base contact with {target}, though a free spot in reach"
    text += f" kept it in cohesion at {_spot_text(spot)}"
    doubts = [measured] if measured else []
    reason = None
    if reach is None:
        doubts.append(f"the Move of {me.unit} is not known, so the spot may be out of reach")
        reason = MOVE_UNKNOWN
    return [_problem(layout, CONTACT, model, line, limit, (target,), text, spot, "; ".join(doubts), reason)]


def _multi_contact(layout: Layout, models: Iterable[int], profile: RuleProfile, prefix: str) -> list[MeleeProblem]:
    if not profile.multi_contact.enabled:
        return []
    out = []
    for n in models:
        touched = _touched(layout, n, profile)
        if len(touched) >= 2:
            name = layout.state.models[n].id
            text = f"{prefix}{name} is in base contact with enemy units {', '.join(sorted(touched))}"
            line = _contact(layout, n, touched, profile)
            out.append(_problem(layout, MULTI_CONTACT, n, line, profile.contact.gap_mm, tuple(touched), text))
    return out


def leader_target(layout: Layout, unit_id: str, enemies: Iterable[str], profile: RuleProfile) -> str | None:
    """The enemy unit of ``enemies`` that the leader of ``unit_id`` is in base contact with, the first in state
    order; None when it touches none of them, or the unit has no leader in ``layout``."""
    leader = layout.leader(unit_id)
    wanted = set(enemies)
    if leader is None:
        return None
    touched = [u for u in layout.units if u in wanted and _contact(layout, leader, [u], profile).met]
    return touched[0] if touched else None


def _ids(state: TableState, unit_id: str | None) -> set[str]:
    return {m.id for m in state.models if m.unit == unit_id}


def judge_melee(
    before: TableState, after: TableState, unit_id: str, enemies: set[str], moved: set[str], profile: RuleProfile
) -> list[MeleeProblem]:
    """Every step left undone by unit ``unit_id``, which moved into base contact with the units ``enemies``
    between ``before`` and ``after`` (``moved``: the ids of every model that moved): its leader's base contact,
    its other models' placement, and none of its models touching two enemy units. When the unit its leader is in
    melee with did not move, that unit's steps are judged too, as open calls: it may not have placed its models
    yet. Pure."""
    layout = Layout.of(after)
    target = leader_target(layout, unit_id, enemies, profile)
    leader = layout.leader(unit_id)
    out: list[MeleeProblem] = []
    if leader is not None and target is None:
        line = _contact(layout, leader, enemies, profile)
        name = layout.state.models[leader].id
        text = f"moved into melee but its leader {name} is not in base contact with an enemy model"
        ordered = tuple(u for u in layout.units if u in enemies)
        doubt = "the measurement cannot tell" if line.close else ""
        out.append(_problem(layout, LEADER, leader, line, profile.contact.gap_mm, ordered, text, doubt=doubt))
    out += _judge_others(before, after, unit_id, target, moved, profile)
    out += _multi_contact(layout, layout.members(unit_id), profile, "")
    if target is not None and not moved & _ids(after, target):
        why = f"{target} has not placed its models yet"
        for p in judge_placed(before, after, target, unit_id, moved, profile):
            doubt = "; ".join(d for d in (p.doubt, why) if d)
            out.append(replace(p, finding=replace(p.finding, call=CLOSE, reason=NOT_PLACED), doubt=doubt))
    return out


def _judge_others(
    before: TableState, after: TableState, unit_id: str, target: str | None, moved: set[str], profile: RuleProfile
) -> list[MeleeProblem]:
    """Step 2: the unit's other models, on the table as the step found it (the opponent's models where they
    stood before)."""
    layout = Layout.of(_step_world(before, after, _ids(after, target) if target else set()))
    leader = layout.leader(unit_id)
    others = [int(n) for n in layout.members(unit_id) if n != leader]
    passable = frozenset(moved & {layout.state.models[n].id for n in others})
    out: list[MeleeProblem] = []
    for n in others:
        in_contact = False
        if target is not None:
            line = _contact(layout, n, [target], profile)
            in_contact = line.met
            if not in_contact:
                out += _out_of_contact(layout, before, n, target, line, passable, profile)
        coh = _cohesion(layout, n, profile)
        if not coh.met:
            out.append(_cohesion_problem(layout, n, coh, in_contact, target, "", profile))
    return out


def judge_placed(
    before: TableState, after: TableState, unit_id: str, initiator: str, moved: set[str], profile: RuleProfile
) -> list[MeleeProblem]:
    """Steps 3 and 4 of unit ``unit_id``, the unit that ``initiator`` moved into melee with: its leader, if not in
    base contact with an enemy model, placed into base contact with ``initiator``; its other models out of base
    contact, or out of cohesion, placed into base contact with ``initiator`` where a free spot in reach existed,
    else in cohesion; none of the models it placed touching two enemy units, nor only another enemy unit. A model
    that needed no placing (the leader in base contact; another model in base contact and in cohesion) is not
    placed: moving it is a problem too. Pure."""
    own = _ids(after, unit_id)
    settled = Layout.of(_step_world(before, after, own))
    leader = settled.leader(unit_id)
    leader_id = None if leader is None else settled.state.models[leader].id
    others = own - {leader_id}
    prefix = f"defending {unit_id}: "
    enemies = settled.enemy_units(unit_id)
    out: list[MeleeProblem] = []
    if leader is not None and leader_id is not None:
        was = _contact(settled, leader, enemies, profile)
        if leader_id in moved and was.met:
            text = f"{prefix}its leader {leader_id} was in base contact with an enemy model, so it does not move"
            out.append(_stay_problem(settled, before, leader, was, text, profile))
        else:
            # Its leader is placed first: its other models still stand where they stood.
            layout = Layout.of(_step_world(before, after, others & moved))
            line = _contact(layout, leader, [initiator] if leader_id in moved else enemies, profile)
            if not line.met:
                out += _out_of_contact(
                    layout, before, leader, initiator, line, frozenset(), profile, prefix, leader_id in moved
                )
    # Its other models are placed once its leader is: judged as that step found them, then as they ended.
    found = Layout.of(_step_world(before, after, others))
    layout = Layout.of(after)
    passable = frozenset(others & moved)
    for n in (int(n) for n in layout.members(unit_id) if n != leader):
        mid = layout.state.models[n].id
        was = _contact(found, n, enemies, profile)
        if mid in moved and was.met and _cohesion(found, n, profile).met:
            text = f"{prefix}{mid} was in base contact and in cohesion, so it is not placed"
            out.append(_stay_problem(found, before, n, was, text, profile))
            continue
        line = _contact(layout, n, [initiator] if mid in moved else enemies, profile)
        if not line.met:
            out += _out_of_contact(layout, before, n, initiator, line, passable, profile, prefix, mid in moved)
        coh = _cohesion(layout, n, profile)
        if not coh.met:
            in_contact = _contact(layout, n, enemies, profile).met
            out.append(_cohesion_problem(layout, n, coh, in_contact, None, prefix, profile))
    placed = [int(n) for n in layout.members(unit_id) if layout.state.models[n].id in moved]
    return out + _multi_contact(layout, placed, profile, prefix)


def _stay_problem(
    layout: Layout, before: TableState, model: int, line: _Line, text: str, profile: RuleProfile
) -> MeleeProblem:
    """A model of the opponent that needed no placing was moved: the finding names where it stood (``spot_mm``),
    the place it keeps, and its gap there to the nearest enemy model."""
    spot = _start(before, layout.state.models[model])
    doubt = "the measurement cannot tell" if line.close else ""
    return _problem(layout, STAY, model, line, profile.contact.gap_mm, (), text, spot, doubt)


# --------------------------------------------------------------------------------------------------------------
# The placement assistant


@dataclass(frozen=True)
class MeleeStep:
    """One model's placement proposed by :func:`place_melee`: the ``step`` of the procedure it belongs to
    (:data:`OTHERS`, :data:`OPPONENT_LEADER` or :data:`OPPONENT_OTHERS`), where the model stood and where it goes,
    the enemy model it ends in base contact with (None: none), and why, in a few words."""

    step: str
    model: str
    unit: str
    from_mm: tuple[float, float]
    to_mm: tuple[float, float]
    touching: str | None
    reason: str

    @property
    def moved(self) -> bool:
        return self.from_mm != self.to_mm

    @property
    def distance_mm(self) -> float:
        """Straight distance from where it stood to where it goes."""
        return float(np.hypot(self.to_mm[0] - self.from_mm[0], self.to_mm[1] - self.from_mm[1]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "model": self.model,
            "unit": self.unit,
            "from_mm": [round(c, 3) for c in self.from_mm],
            "to_mm": [round(c, 3) for c in self.to_mm],
            "moved": self.moved,
            "touching": self.touching,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class MeleeProposal:
    """The rest of a melee as :func:`place_melee` proposes it: the unit that moved into melee, the enemy unit its
    leader is in melee with, the proposed ``state``, and every model's placement in the text's order. ``note``
    says what the proposal could not take into account (a Move not known)."""

    unit: str
    enemy: str
    state: TableState
    steps: tuple[MeleeStep, ...]
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The proposal as JSON data: the units, the note and the steps (the state is written on its own)."""
        return {"unit": self.unit, "enemy": self.enemy, "note": self.note, "steps": [s.to_dict() for s in self.steps]}


def _melee_start(state: TableState, unit_id: str, profile: RuleProfile) -> str:
    """The enemy unit the leader of ``unit_id`` is in melee with; a named :class:`MeleeError` when the melee
    procedure cannot start."""
    if profile.movement.mode != "legion":
        raise MeleeError(
            f"profile {profile.name!r} has no melee procedure ([movement] mode {profile.movement.mode!r}); "
            'expected a profile whose [movement] mode is "legion", such as legion'
        )
    layout = Layout.of(state)
    unit = layout.units.get(unit_id)
    if unit is None:
        raise MeleeError(f"unknown unit {unit_id!r}; the state's units are {', '.join(layout.units) or 'none'}")
    if not unit.melee:
        raise MeleeError(f'unit {unit_id!r} has no weapon of melee range ("melee": false): it may not move into melee')
    leader = layout.leader(unit_id)
    if leader is None and unit.leader is None:
        raise MeleeError(f"unit {unit_id!r} has no leader: a melee starts from the unit leader in base contact")
    if leader is None:
        raise MeleeError(f"unit {unit_id!r}: its leader {unit.leader!r} is not seen in the state")
    name = layout.state.models[leader].id
    touched = _touched(layout, leader, profile)
    if not touched:
        raise MeleeError(
            f"unit {unit_id!r}: its leader {name!r} is not in base contact with an enemy model; "
            "move it into base contact first"
        )
    if len(touched) > 1:
        raise MeleeError(
            f"unit {unit_id!r}: its leader {name!r} is in base contact with enemy units "
            f"{', '.join(touched)}; a model may never touch two enemy units"
        )
    return touched[0]


def _moved_to(state: TableState, model_id: str, spot: tuple[float, float]) -> TableState:
    models = tuple(replace(m, x_mm=spot[0], y_mm=spot[1]) if m.id == model_id else m for m in state.models)
    return replace(state, models=models)


def _touching(layout: Layout, model: int, units: Iterable[str], profile: RuleProfile) -> str | None:
    """The nearest model of ``units`` that ``model`` is in base contact with (None: none)."""
    others = layout.members(*units)
    if len(others) == 0:
        return None
    gaps = layout.bases.gaps_mm(np.full(len(others), model, dtype=np.intp), others)
    k = int(np.argmin(gaps))
    return layout.state.models[others[k]].id if _contact(layout, model, units, profile).met else None


def _step_of(
    step: str,
    layout: Layout,
    model: int,
    origin: tuple[float, float],
    units: list[str],
    reason: str,
    profile: RuleProfile,
) -> MeleeStep:
    m = layout.state.models[model]
    touching = _touching(layout, model, units, profile)
    return MeleeStep(step, m.id, m.unit or "", origin, (m.x_mm, m.y_mm), touching, reason)


def _settled(layout: Layout, model: int, units: list[str], profile: RuleProfile) -> bool:
    """Whether ``model`` may stay: in base contact with ``units``, in cohesion, touching one enemy unit at most."""
    if not (_contact(layout, model, units, profile).met and _cohesion(layout, model, profile).met):
        return False
    return not profile.multi_contact.enabled or len(_touched(layout, model, profile)) < 2


def _contact_pass(
    work: TableState,
    origin: dict[str, tuple[float, float]],
    pending: list[str],
    target: str,
    reach: float | None,
    passable: frozenset[str],
    profile: RuleProfile,
) -> tuple[TableState, list[str]]:
    """One pass over ``pending``: each model that has a free spot in base contact with ``target`` goes there."""
    placed = []
    for mid in pending:
        spot = contact_spot(SpotQuery(Layout.of(work), mid, origin[mid], reach, passable), target, profile)
        if spot is not None:
            work = _moved_to(work, mid, spot)
            placed.append(mid)
    return work, placed


def _cohesion_pass(
    work: TableState,
    origin: dict[str, tuple[float, float]],
    pending: list[str],
    shifted: set[str],
    reach: float | None,
    passable: frozenset[str],
    profile: RuleProfile,
) -> tuple[TableState, bool]:
    """Each model of ``pending`` out of cohesion, not yet shifted, goes to the nearest free spot in cohesion."""
    moved_any = False
    for mid in pending:
        layout = Layout.of(work)
        if mid in shifted or _cohesion(layout, layout.index[mid], profile).met:
            continue
        shifted.add(mid)
        spot = cohesion_spot(SpotQuery(layout, mid, origin[mid], reach, passable), profile)
        if spot is not None:
            work = _moved_to(work, mid, spot)
            moved_any = True
    return work, moved_any


def _place_group(
    work: TableState, origin: dict[str, tuple[float, float]], unit_id: str, target: str, step: str, profile: RuleProfile
) -> tuple[TableState, list[MeleeStep]]:
    """Place the models of ``unit_id`` other than its leader into base contact with ``target`` where a free spot in
    reach keeps them in cohesion, else in cohesion. A model already settled stays; the rest are placed nearest
    first, and again while a placement frees room for another: the judge counts a spot as free with the step's
    other models where they ended, so the assistant leaves none that the judge would find."""
    layout = Layout.of(work)
    leader = layout.leader(unit_id)
    # The opponent's models stay when in base contact with any enemy; the moving unit's, with its leader's enemy.
    contact_units = layout.enemy_units(unit_id) if step == OPPONENT_OTHERS else [target]
    group = [int(n) for n in layout.members(unit_id) if n != leader]
    kept = [n for n in group if _settled(layout, n, contact_units, profile)]
    steps = [_step_of(step, layout, n, origin[layout.state.models[n].id], [target], _KEPT, profile) for n in kept]
    targets = layout.bases.center_mm[layout.members(target)]
    pending = [layout.state.models[n].id for n in group if n not in kept]
    pending.sort(key=lambda mid: float(np.min(np.hypot(*(targets - np.asarray(origin[mid])).T))))
    passable = frozenset(pending)
    reach = reach_mm(layout.units[unit_id], profile)
    placed: list[str] = []
    shifted: set[str] = set()
    while True:
        work, now = _contact_pass(work, origin, pending, target, reach, passable, profile)
        placed += now
        pending = [mid for mid in pending if mid not in now]
        if now:
            continue
        work, moved_any = _cohesion_pass(work, origin, pending, shifted, reach, passable, profile)
        if not moved_any:
            break
    layout = Layout.of(work)
    for mid in placed:
        steps.append(_step_of(step, layout, layout.index[mid], origin[mid], [target], _PLACED, profile))
    for mid in pending:
        n = layout.index[mid]
        if not _cohesion(layout, n, profile).met:
            reason = "no free spot in base contact or in cohesion within reach: left where it stands"
        elif mid in shifted and (layout.state.models[n].x_mm, layout.state.models[n].y_mm) != origin[mid]:
            reason = "no free spot in base contact in reach and in cohesion: moved into cohesion"
        else:
            reason = "no free spot in base contact in reach and in cohesion: stays, in cohesion"
        steps.append(_step_of(step, layout, n, origin[mid], [target], reason, profile))
    return work, steps


def _place_opponent_leader(
    work: TableState, origin: dict[str, tuple[float, float]], enemy: str, initiator: str, profile: RuleProfile
) -> tuple[TableState, list[MeleeStep]]:
    """Step 3: the opponent's leader, unless in base contact with an enemy model, into base contact with
    ``initiator`` where a free spot is within its reach."""
    layout = Layout.of(work)
    leader = layout.leader(enemy)
    if leader is None:
        return work, []
    mid = layout.state.models[leader].id
    enemies = layout.enemy_units(enemy)
    if _contact(layout, leader, enemies, profile).met:
        return work, [
            _step_of(OPPONENT_LEADER, layout, leader, origin[mid], enemies, "already in base contact", profile)
        ]
    reach = reach_mm(layout.units[enemy], profile)
    spot = contact_spot(SpotQuery(layout, mid, origin[mid], reach, frozenset()), initiator, profile)
    if spot is None:
        reason = "no free spot in base contact in reach and in cohesion: stays"
        return work, [_step_of(OPPONENT_LEADER, layout, leader, origin[mid], enemies, reason, profile)]
    work = _moved_to(work, mid, spot)
    layout = Layout.of(work)
    return work, [_step_of(OPPONENT_LEADER, layout, leader, origin[mid], [initiator], _PLACED, profile)]


def place_melee(state: TableState, unit_id: str, profile: RuleProfile) -> MeleeProposal:
    """Propose the rest of a melee once the leader of unit ``unit_id`` is in base contact with an enemy model, as
    the text orders it: the unit's other models, then the opponent's leader, then the opponent's other models.

    Each model goes into base contact with the other unit where a free spot within its reach (its unit's Move
    times ``[movement] melee_reach_moves``, by the shortest legal path) keeps it in cohesion, else into cohesion;
    a model already in base contact and in cohesion stays. No placement overlaps a base or solid terrain, leaves
    the table, or touches a second enemy unit. Pure and deterministic. Raises :class:`MeleeError` for an unknown
    unit, one with no melee weapon or no leader, a leader not in base contact with exactly one enemy unit, or a
    profile without the melee procedure (``[movement] mode`` other than ``legion``)."""
    enemy = _melee_start(state, unit_id, profile)
    origin = {m.id: (m.x_mm, m.y_mm) for m in state.models}
    work, steps = _place_group(state, origin, unit_id, enemy, OTHERS, profile)
    work, leader_steps = _place_opponent_leader(work, origin, enemy, unit_id, profile)
    work, opponent_steps = _place_group(work, origin, enemy, unit_id, OPPONENT_OTHERS, profile)
    unknown = [u for u in (unit_id, enemy) if reach_mm(state.unit(u), profile) is None]
    note = f"the Move of {' and '.join(unknown)} is not known: reach was not limited" if unknown else ""
    return MeleeProposal(unit_id, enemy, work, (*steps, *leader_steps, *opponent_steps), note)
