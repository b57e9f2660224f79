"""Movement between two table states: what each unit that moved may have done, and whether it was legal.

A camera sees where models stood, not how they travelled, so a displacement is a lower bound of the distance
really moved. The length judged is the shortest legal path (around other models and solid terrain, unless an
ability lets the model pass), and a move is called too long only when even that path exceeds the allowance by
more than the measurement can explain.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

# PLAN_NAMES and PLANS are re-exported: callers know them as rules.movement's.
from rules.actions import PLAN_NAMES as PLAN_NAMES
from rules.actions import PLANS, Activation, Plan, activations_from
from rules.check import check
from rules.findings import CLEAR, CLOSE, Finding
from rules.geometry import BaseArrays
from rules.melee import MeleeProblem, judge_melee, judge_placed, leader_target
from rules.profile import RuleProfile
from rules.spots import Layout
from rules.state import TableState, Unit
from rules.travel import CLIMB as CLIMB
from rules.travel import FLY as FLY
from rules.travel import MM_PER_INCH, level_problems, model_path_mm
from rules.travel import THROUGH_MODELS as THROUGH_MODELS

# Ability names a unit may list in its "abilities"; those of travel are re-exported: callers know them as
# rules.movement's.
CHARGE = "charge"


@dataclass(frozen=True)
class ModelMove:
    """One model's move: straight ``distance_mm`` and the shortest legal ``path_mm`` (a lower bound of what it
    really travelled; ``inf`` where no legal path leads there), with ``sigma_mm`` the 1-sigma uncertainty of both."""

    model: str
    unit: str | None
    from_mm: tuple[float, float]
    to_mm: tuple[float, float]
    distance_mm: float
    path_mm: float
    sigma_mm: float

    @property
    def has_path(self) -> bool:
        """Whether any legal path leads from where it stood to where it stands."""
        return math.isfinite(self.path_mm)

    def to_dict(self) -> dict[str, Any]:
        """JSON data: millimetres to a micrometre, ``path_mm`` null where no legal path leads there (JSON has no
        infinity)."""
        return {
            "model": self.model,
            "unit": self.unit,
            "from_mm": [_mm(c) for c in self.from_mm],
            "to_mm": [_mm(c) for c in self.to_mm],
            "distance_mm": _mm(self.distance_mm),
            "path_mm": _mm(self.path_mm) if self.has_path else None,
            "sigma_mm": _mm(self.sigma_mm),
        }


def _mm(value: float) -> float:
    """A length as reports give it: finer digits than a micrometre are float noise, not measurement."""
    return round(float(value), 3)


@dataclass(frozen=True)
class UnitMove:
    """A unit that moved: the action judged (declared, or the cheapest that makes the move legal), the verdict,
    and every problem found. ``call`` is ``close`` when a legal verdict rests on a path length within the
    measurement's doubt of the allowance, or on no allowance at all, or (moving into melee) on a step that cannot
    be judged surely; ``note`` then says which. ``attack_action`` says the move as judged uses the unit's Attack
    Action (an Advance, or leaving engagement). ``findings`` are the steps of moving into melee left undone (kind
    ``melee``, see :mod:`rules.melee`): each names the model and, where one existed, the free spot it could have
    taken; clear ones are the ``problems`` too, close ones the ``note``."""

    unit: str
    action: str | None
    declared: bool
    legal: bool
    call: str
    allowance_mm: float | None
    models: tuple[ModelMove, ...]
    problems: tuple[str, ...]
    note: str = ""
    attack_action: bool = False
    findings: tuple[Finding, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON data (``tableref check-move --json``): every field, each model as :meth:`ModelMove.to_dict`, each
        finding as :meth:`rules.Finding.to_dict`."""
        out = asdict(replace(self, models=(), findings=()))
        out["allowance_mm"] = None if self.allowance_mm is None else _mm(self.allowance_mm)
        out["models"] = [m.to_dict() for m in self.models]
        out["problems"] = list(self.problems)
        out["findings"] = [f.to_dict() for f in self.findings]
        return out


def moved_models(before: TableState, after: TableState, profile: RuleProfile) -> list[ModelMove]:
    """Models present in both states whose centre moved by more than the stillness threshold plus the close
    band of the measurement, or that went onto or off a terrain top. Paths are left equal to the straight distance
    here."""
    k = profile.calls.close_sigmas
    previous = {m.id: m for m in before.models}
    out = []
    for m in after.models:
        old = previous.get(m.id)
        if old is None:
            continue
        distance = math.hypot(m.x_mm - old.x_mm, m.y_mm - old.y_mm)
        sigma = math.hypot(m.sigma_most_mm, old.sigma_most_mm)
        if distance > profile.movement.still_mm + k * sigma or m.on_terrain != old.on_terrain:
            out.append(ModelMove(m.id, m.unit, (old.x_mm, old.y_mm), (m.x_mm, m.y_mm), distance, distance, sigma))
    return out


def _path_mm(
    move: ModelMove,
    unit: Unit | None,
    before: TableState,
    bases: BaseArrays,
    profile: RuleProfile,
    bound_mm: float,
    moving: set[str],
    end_on: str | None,
) -> float:
    """The shortest legal path of one model, ending on top of ``end_on`` (None: on the table). Every other model
    blocks it, friendly ones and its own unit-mates included, except those in ``moving``: they moved too, in an
    order a pair of states does not show, so each may have been out of the way when this one passed."""
    mover = before.model(move.model)
    return model_path_mm(mover, move.from_mm, move.to_mm, unit, before, bases, profile, bound_mm, moving, end_on)


class _Engagement:
    """Which units are within engagement range (or base contact) of which enemy units in one state."""

    def __init__(self, state: TableState, range_mm: float) -> None:
        self.pairs: set[tuple[str, str]] = set()
        bases = BaseArrays.from_state(state)
        player = {u.id: u.player for u in state.units}
        units = [m.unit for m in state.models]
        n = len(units)
        if n < 2:
            return
        i, j = np.triu_indices(n, k=1)
        gap = bases.gaps_mm(i.astype(np.intp), j.astype(np.intp))
        for a, b in zip(i[gap <= range_mm + 1e-6], j[gap <= range_mm + 1e-6], strict=True):
            ua, ub = units[a], units[b]
            if ua and ub and player.get(ua) and player.get(ub) and player[ua] != player[ub]:
                self.pairs.add((ua, ub))
                self.pairs.add((ub, ua))

    def enemies_of(self, unit: str) -> set[str]:
        return {b for a, b in self.pairs if a == unit}


def _distance_verdict(moves: list[ModelMove], allowance_mm: float, k: float) -> tuple[list[ModelMove], bool]:
    """Models whose shortest path surely exceeds the allowance, and whether any path is too close to call.

    An excess within ``k`` sigmas is given the benefit of the doubt: not a problem, but a close call.
    """
    sure = [m for m in moves if m.path_mm - allowance_mm > max(k * m.sigma_mm, 1e-6)]
    close = any(m.sigma_mm > 0 and abs(m.path_mm - allowance_mm) <= k * m.sigma_mm for m in moves)
    return sure, close


def check_moves(
    before: TableState,
    after: TableState,
    profile: RuleProfile,
    actions: Mapping[str, str | Activation | Mapping[str, Any]] | None = None,
) -> list[UnitMove]:
    """Judge every unit that moved between ``before`` and ``after``.

    ``actions`` maps unit ids to a declared plan (one of :data:`PLAN_NAMES`), or to ``{"action": NAME,
    "attack_used": BOOL}`` (either key may be left out); an undeclared unit is judged by the cheapest plan that
    makes its move legal. Raises :class:`~rules.errors.ActionError` for an unknown action. Under a ``legion``
    movement mode a move into base contact is a move into melee, judged step by step (:mod:`rules.melee`). Pure:
    reads only its arguments.
    """
    declared = activations_from(actions)
    mode = profile.movement.mode
    moves = moved_models(before, after, profile)
    by_unit: dict[str, list[ModelMove]] = {}
    for m in moves:
        if m.unit is not None:
            by_unit.setdefault(m.unit, []).append(m)
    if mode == "none" or not by_unit:
        return []
    units = {u.id: u for u in after.units}
    bases = BaseArrays.from_state(before)
    eng_before = _Engagement(before, profile.engagement.range_mm)
    eng_after = _Engagement(after, profile.engagement.range_mm)
    roles = _melee_roles(before, after, by_unit, profile) if mode == "legion" else _MeleeRoles({}, {})
    moved = {m.model for m in moves}
    ends = _end_places(after, profile, moved)
    # Per model that moved, the tops it stood on before and after (None: the table).
    start_on = {m.id: m.on_terrain for m in before.models}
    tops = {m.id: (start_on.get(m.id), m.on_terrain) for m in after.models}
    out = []
    for unit_id, unit_moves in by_unit.items():
        unit = units.get(unit_id)
        move_mm = unit.move_in * MM_PER_INCH if unit and unit.move_in is not None else None
        longest = (move_mm or 0.0) * (2.0 + profile.movement.advance_moves)
        bound = max(longest, max(m.distance_mm for m in unit_moves)) * 1.5 + 100.0
        moving = {m.model for m in unit_moves}
        with_paths = [
            replace(m, path_mm=_path_mm(m, unit, before, bases, profile, bound, moving, tops[m.model][1]))
            for m in unit_moves
        ]
        if mode == "skirmish":
            activation = declared.get(unit_id, Activation())
            engagement = (eng_before.enemies_of(unit_id), eng_after.enemies_of(unit_id))
            verdict = _judge_skirmish(unit_id, unit, with_paths, move_mm, engagement, profile, activation)
        else:
            verdict = _judge_legion(unit_id, unit, with_paths, before, after, profile, roles, moved)
        heights = [p for m in unit_moves for p in level_problems(m.model, unit, *tops[m.model], after, profile)]
        end = ends.get(unit_id, _EndPlaces())
        out.append(_with_doubts(_with_problems(verdict, heights + end.problems), end.doubts))
    return out


def _with_problems(verdict: UnitMove, problems: list[str]) -> UnitMove:
    """``verdict`` made illegal by ``problems`` that hold whatever the action (getting onto a terrain top, ending in
    no legal position)."""
    if not problems:
        return verdict
    return replace(verdict, legal=False, call=CLEAR, problems=verdict.problems + tuple(problems))


def _with_doubts(verdict: UnitMove, doubts: list[str]) -> UnitMove:
    """``verdict`` with ``doubts`` (problems the measurement cannot tell) in its note; a clear legal verdict becomes
    a close one."""
    if not doubts:
        return verdict
    note = "; ".join([verdict.note] * bool(verdict.note) + [f"open: {d} (the measurement cannot tell)" for d in doubts])
    call = CLOSE if verdict.legal else verdict.call
    return replace(verdict, note=note, call=call)


@dataclass(frozen=True)
class _EndPlaces:
    """Where a unit's moved models ended in no legal position: sure ``problems`` and ``doubts`` the measurement
    cannot settle."""

    problems: list[str] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)


def _end_places(after: TableState, profile: RuleProfile, moved: set[str]) -> dict[str, _EndPlaces]:
    """Per unit, its models among ``moved`` that ended where no move may end, as the placement checks of
    :func:`rules.check` find them in ``after``: overlapping another model (the seed: models cannot "end their
    movement overlapping another model"), inside solid or sealed terrain, with a base over the edge of the top they
    stand on or of the table (a move must "end ... in a legal position"). A pair of models that both moved is told
    once per unit."""
    unit_of = {m.id: m.unit for m in after.models}
    kinds = {t.id: t.kind for t in after.terrain}
    out: dict[str, _EndPlaces] = {}
    for f in check(after, profile):
        if f.kind not in _END_KINDS or f.reason is not None:
            continue
        told: set[str] = set()
        for mid in (m for m in f.models if m in moved):
            unit_id = unit_of.get(mid)
            if unit_id is None or unit_id in told:
                continue
            told.add(unit_id)
            place = out.setdefault(unit_id, _EndPlaces())
            (place.doubts if f.call == CLOSE else place.problems).append(_end_text(f, mid, kinds))
    return out


_END_KINDS = ("overlap", "in_terrain", "off_table")


def _end_text(f: Finding, model_id: str, kinds: Mapping[str, str]) -> str:
    depth = -(f.gap_mm or 0.0)
    if f.kind == "overlap":
        other = next((m for m in f.models if m != model_id), model_id)
        return f"{model_id} ended overlapping {other} by {depth:.1f} mm: a move cannot end overlapping another model"
    if f.kind == "off_table":
        return f"{model_id} ended {depth:.1f} mm over the table's edge: not a legal position"
    if f.gap_mm is not None:
        return f"{model_id} ended {depth:.1f} mm over the edge of the top of {f.terrain}: not a legal position"
    kind = kinds.get(f.terrain or "", "solid")
    return f"{model_id} ended inside {kind} terrain {f.terrain}: a move cannot end inside solid or sealed terrain"


def _allowance_mm(plan: Plan, move_mm: float, profile: RuleProfile) -> float:
    charge_mm = math.ceil(profile.movement.charge_fraction * move_mm / MM_PER_INCH) * MM_PER_INCH
    moves = (1.0 if plan.move else 0.0) + (profile.movement.advance_moves if plan.advance else 0.0)
    return move_mm * moves + (charge_mm if plan.charge else 0.0)


def _plan_problems(
    plan: Plan, abilities: set[str], engaged: tuple[set[str], set[str]], activation: Activation
) -> list[str]:
    """What forbids ``plan`` besides its length; ``engaged`` holds the enemy units engaged before and after."""
    ends_engaged = bool(engaged[1])
    left = engaged[0] - engaged[1]
    problems = []
    if plan.charge and CHARGE not in abilities:
        problems.append("the unit has no rule or ability that gives it Charge")
    if plan.charge and not ends_engaged:
        problems.append("a Charge must end within engagement range of an enemy unit")
    if plan.advance and not plan.charge and ends_engaged:
        problems.append("an Advance cannot end within engagement range")
    if plan.advance and left:
        problems.append(f"left engagement range of {', '.join(sorted(left))} and Advanced: both need the Attack Action")
    if plan.advance and activation.attack_used:
        problems.append("Advanced after the Attack Action was used: an Advance uses the Attack Action")
    if left and activation.attack_used:
        problems.append(
            f"left engagement range of {', '.join(sorted(left))} after the Attack Action was used: "
            "a unit that has used it cannot leave engagement range"
        )
    return problems


def _judge_skirmish(
    unit_id: str,
    unit: Unit | None,
    moves: list[ModelMove],
    move_mm: float | None,
    engaged: tuple[set[str], set[str]],
    profile: RuleProfile,
    activation: Activation,
) -> UnitMove:
    k = profile.calls.close_sigmas
    declared = activation.action
    abilities = set(unit.abilities) if unit else set()
    results = []
    for plan in PLANS:
        if declared is not None and plan.name != declared:
            continue
        problems: list[str] = []
        close = False
        allowance = None
        if move_mm is not None:
            allowance = _allowance_mm(plan, move_mm, profile)
            over, close = _distance_verdict(moves, allowance, k)
            if over:
                worst = max(over, key=lambda m: m.path_mm)
                # no legal path at all: walls or models close every way round (the path is infinite)
                reached = (
                    f'moved up to {worst.path_mm / MM_PER_INCH:.2f}" (shortest legal path)'
                    if worst.has_path
                    else "could not have got there by any legal path"
                )
                problems.append(
                    f'{", ".join(m.model for m in over)} {reached} against {allowance / MM_PER_INCH:.2f}" allowed for '
                    f"{plan.name}"
                )
        problems += _plan_problems(plan, abilities, engaged, activation)
        results.append((plan, problems, close, allowance))
    # Leaving engagement uses the Attack Action whatever the plan; an Advance uses it too.
    left = bool(engaged[0] - engaged[1])
    legal = [r for r in results if not r[1]]
    if legal:
        plan, _, close, allowance = legal[0]
        attack = left or plan.advance
        if move_mm is None:
            # nothing to measure the distance against: legal as far as the rest goes, the distance open
            note = "the unit's Move is not known: how far it went was not judged"
            return UnitMove(unit_id, plan.name, declared is not None, True, CLOSE, None, tuple(moves), (), note, attack)
        note = "the path is within the measurement's doubt of the allowance" if close else ""
        return UnitMove(
            unit_id, plan.name, declared is not None, True, _call(close), allowance, tuple(moves), (), note, attack
        )
    if declared is not None:
        plan, problems, _, allowance = results[0]
        attack = left or plan.advance
        return UnitMove(
            unit_id, plan.name, True, False, CLEAR, allowance, tuple(moves), tuple(problems), attack_action=attack
        )
    # No plan makes the move legal: say why for each, so the judge sees every reading of the move.
    problems = [f"as {plan.name}: {p}" for plan, plan_problems, _, _ in results for p in plan_problems]
    return UnitMove(
        unit_id, None, False, False, CLEAR, results[0][3], tuple(moves), tuple(problems), attack_action=left
    )


def _call(close: bool) -> str:
    return CLOSE if close else CLEAR


#: The action of a unit whose models the opponent placed into a melee it did not start.
MELEE_PLACED = "melee-placed"


@dataclass(frozen=True)
class _MeleeRoles:
    """Per unit that moved: the enemy units it moved into melee with, and the units whose melee it was placed in."""

    started: dict[str, set[str]]
    placed_in: dict[str, set[str]]


def _melee_roles(
    before: TableState, after: TableState, by_unit: Mapping[str, list[ModelMove]], profile: RuleProfile
) -> _MeleeRoles:
    """Who moved into melee with whom. Two units newly in base contact of which only one moved: that one did. When
    both moved (the opponent placed its models in the same pair of states), the one whose leader went farther
    started it (a leader placed in reply moves only as far as base contact), then the one that moved more."""
    contact = _Engagement(after, profile.contact.gap_mm)
    was = _Engagement(before, profile.contact.gap_mm)
    new = {u: contact.enemies_of(u) - was.enemies_of(u) for u in by_unit}
    order = {u.id: n for n, u in enumerate(after.units)}
    leaders = {u.id: u.leader for u in after.units}

    def weight(unit_id: str) -> tuple[float, float, int]:
        moves = by_unit[unit_id]
        leader = sum(m.distance_mm for m in moves if m.model == leaders.get(unit_id))
        return (leader, sum(m.distance_mm for m in moves), -order.get(unit_id, 0))

    started: dict[str, set[str]] = {u: set() for u in by_unit}
    placed_in: dict[str, set[str]] = {u: set() for u in by_unit}
    for unit_id, enemies in new.items():
        for enemy in enemies:
            if enemy in by_unit and unit_id in new[enemy] and weight(enemy) > weight(unit_id):
                placed_in[unit_id].add(enemy)
            else:
                started[unit_id].add(enemy)
    # A unit placed into a melee moved only to be placed: any other enemy it now touches is a misplacement of its
    # models (judged with its placement), not a melee of its own.
    for unit_id, initiators in placed_in.items():
        if initiators:
            started[unit_id] = set()
    return _MeleeRoles(started, placed_in)


def _judge_legion(
    unit_id: str,
    unit: Unit | None,
    moves: list[ModelMove],
    before: TableState,
    after: TableState,
    profile: RuleProfile,
    roles: _MeleeRoles,
    moved: set[str],
) -> UnitMove:
    """Moving into melee (or being placed into one) judged step by step (:mod:`rules.melee`). Problems the
    measurement, an unknown Move, or an opponent that may not have placed its models yet leave open are findings
    with ``call="close"`` and do not make the move illegal; ``note`` says which they are."""
    started = roles.started.get(unit_id, set())
    problems: list[str] = []
    found: list[MeleeProblem] = []
    if started and unit is not None and not unit.melee:
        problems.append(
            f"moved into base contact with {', '.join(sorted(started))} without a melee weapon: only a unit "
            "with a weapon of melee range may move into melee"
        )
    if started and unit is not None:
        found += judge_melee(before, after, unit_id, started, moved, profile)
    for initiator in sorted(roles.placed_in.get(unit_id, set())):
        # Only the unit its leader is in melee with is placed into the melee; any other contact is the initiator's
        # problem.
        if leader_target(Layout.of(after), initiator, roles.started.get(initiator, set()), profile) == unit_id:
            found += judge_placed(before, after, unit_id, initiator, moved, profile)
    problems += [p.text for p in found if not p.doubt]
    note = "; ".join(f"open: {p.text} ({p.doubt})" for p in found if p.doubt)
    action = "melee" if started else MELEE_PLACED if roles.placed_in.get(unit_id) else "move"
    findings = tuple(p.finding for p in found)
    call = CLOSE if note and not problems else CLEAR
    return UnitMove(
        unit_id, action, False, not problems, call, None, tuple(moves), tuple(problems), note, False, findings
    )


def moves_document(profile_name: str, moves: list[UnitMove]) -> dict[str, Any]:
    """The JSON document of move verdicts: ``{"profile": NAME, "moves": [verdict, ...]}``."""
    return {"profile": profile_name, "moves": [m.to_dict() for m in moves]}


def move_findings(moves: list[UnitMove]) -> list[Finding]:
    """Illegal moves as findings of kind ``illegal_move``, ``clear``; moves legal only thanks to the measurement's
    doubt about their length as ``illegal_move``, ``close``."""
    out = []
    for m in moves:
        if m.legal and m.call == CLEAR:
            continue
        worst = max(m.models, key=lambda x: x.path_mm)
        out.append(
            Finding(
                kind="illegal_move",
                unit=m.unit,
                models=tuple(x.model for x in m.models),
                gap_mm=worst.path_mm,
                limit_mm=m.allowance_mm,
                sigma_mm=worst.sigma_mm,
                call=m.call,
            )
        )
    return out
