"""Review of a recorded game, on table states: identities from one settled state to the next, the moves between
them, each state's findings, the movement checks and the events of the game.

Everything here is pure (table states in, value types out), so the tracking and the timeline can be tested
exactly without images; :mod:`tableref.review.run` feeds it the settled states a recording shows.

A camera sees where models stood, not how they travelled: a displacement is a lower bound of the distance a
model really moved, and a move is called too long only when even its shortest legal path exceeds the allowance
by more than the measurement uncertainty (see :mod:`rules.movement`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import numpy as np

import rules
from tableref.pipeline.identity import (
    MODEL_ID_PREFIX,
    carry_identities,
    led_by_present,
    pairing,
    suggest_units,
    with_identity,
)
from tableref.review.fates import BaseThere, judge_fates
from tableref.review.groups import GroupMove, group_moves, held_by, holders, places_mm, size_agreement
from tableref.settings import ReviewSettings

MM_PER_INCH = 25.4
# Fresh model ids (MODEL_ID_PREFIX) and suggested unit ids: a prefix and a counter that never reuses an id of the
# game.
UNIT_PREFIX = "u"
EVENT_KINDS = (
    "engaged",
    "disengaged",
    "cohesion_broken",
    "cohesion_restored",
    "overlap",
    "illegal_move",
    "question",
)


@dataclass(frozen=True)
class Placement:
    """A model removed (where it was last seen) or added (where it was first seen) at settled state ``state``.
    ``returned``: an added model that had been missing and came back (kept its id)."""

    model: str
    unit: str | None
    state: int
    at_mm: tuple[float, float]
    returned: bool = False


@dataclass(frozen=True)
class Move(rules.ModelMove):
    """A model's move (see :class:`rules.ModelMove`) from settled state ``from_state`` to the next,
    ``to_state``."""

    from_state: int
    to_state: int


@dataclass(frozen=True)
class Event:
    """Something that changed at settled state ``state``: one of :data:`EVENT_KINDS`."""

    state: int
    kind: str
    units: tuple[str, ...]
    models: tuple[str, ...]
    detail: str


@dataclass(frozen=True)
class Track:
    """What identity tracking remembers after a settled state: the last identified state, the models on the table
    that it does not show (``gone``: unseen, at the place each was last seen), every id ever used, and every unit
    with its leader."""

    state: rules.TableState | None
    gone: Mapping[str, rules.Model]
    used_ids: frozenset[str]
    units: tuple[rules.Unit, ...]


EMPTY_TRACK = Track(None, MappingProxyType({}), frozenset(), ())


@dataclass(frozen=True)
class ReviewedState:
    """One settled state of the game, identified and judged, with what changed since the state before."""

    index: int
    frame: int
    time_s: float
    state: rules.TableState
    findings: tuple[rules.Finding, ...]
    moves: tuple[Move, ...]
    verdicts: tuple[rules.UnitMove, ...]
    removed: tuple[Placement, ...]
    added: tuple[Placement, ...]
    events: tuple[Event, ...]
    track: Track


# ----------------------------------------------------------------------------------------------------------------
# Identities


def _match(
    detected: Sequence[rules.Model],
    known: Sequence[rules.Model],
    reach_mm: Sequence[float],
    settings: ReviewSettings,
    expected_mm: np.ndarray | None = None,
    astray_mm: np.ndarray | None = None,
    held: np.ndarray | None = None,
) -> dict[int, int]:
    """detected index -> known index: minimum sum of squared displacements from where each known model is
    ``expected_mm`` (K, 2) (default: where it stood), none beyond the known model's ``reach_mm`` of where it stood,
    farther than its ``astray_mm`` (K,) from where it is expected (default: no limit), or across base sizes; a
    detection ``held`` (D,) by a known model (its index, -1: none) pairs with that one only.

    Squared, because models in a line that all move along it have the same total displacement whichever way
    they are paired; the sum of squares is least for the pairing in which they moved alike, as units do.

    The models held to their ``astray_mm`` (finite) are paired first, each left unpaired rather than cost more than
    the farthest pairing that allows (at a size read off): where one of a unit's models was not found, pairing it
    anyway takes a unit-mate's base and shifts every identity down the line by a place (each within astray_mm, all
    wrong). The others then pair with the detections left, as many as their reaches allow.
    """
    if not detected or not known:
        return {}
    a, b = places_mm(detected), places_mm(known)
    away = (a[:, None, 0] - b[None, :, 0]) ** 2 + (a[:, None, 1] - b[None, :, 1]) ** 2
    e = b if expected_mm is None else expected_mm
    off = (a[:, None, 0] - e[None, :, 0]) ** 2 + (a[:, None, 1] - e[None, :, 1]) ** 2
    same_size, near_size = size_agreement(detected, known, settings)
    # a size read a standard size off (the detector confuses neighbouring sizes on unseen looks) pairs at a price
    cost = np.where(same_size, off, off + settings.size_miss_cost_mm**2)
    reach = np.asarray(reach_mm, dtype=np.float64)
    gate = float(reach.max()) ** 2 + settings.size_miss_cost_mm**2
    barred = ~near_size | (away > reach[None, :] ** 2)
    if astray_mm is not None:
        # how far from where it is expected, whatever its size was read as
        barred |= off > np.asarray(astray_mm, dtype=np.float64)[None, :] ** 2
    if held is not None:
        holder = np.asarray(held, dtype=np.intp)[:, None]
        barred |= (holder >= 0) & (holder != np.arange(len(known))[None, :])
    cost[barred] = gate * 2.0 + 1.0
    tied = np.zeros(len(known), np.bool_) if astray_mm is None else np.isfinite(np.asarray(astray_mm, np.float64))
    if not tied.any():
        return pairing(cost, gate)
    # the models held to their group first, each left unpaired where that costs less; the others then pair with the
    # bases left, as many as their reaches allow
    alone = np.asarray(astray_mm, dtype=np.float64)[tied] ** 2 + settings.size_miss_cost_mm**2
    columns = np.flatnonzero(tied)
    first = {i: int(columns[j]) for i, j in pairing(cost[:, columns], gate, alone).items()}
    rows, free = np.setdiff1d(np.arange(len(detected)), list(first)), np.flatnonzero(~tied)
    rest = pairing(cost[np.ix_(rows, free)], gate) if rows.size and free.size else {}
    return {**first, **{int(rows[i]): int(free[j]) for i, j in rest.items()}}


def reach_mm(unit: rules.Unit | None, profile: rules.RuleProfile | None, settings: ReviewSettings) -> float:
    """The farthest a model of ``unit`` can be from where it stood one settled state before: its Move, the most
    the profile allows beyond it (an Advance and a Charge), and the measurement's margin; ``track_gate_mm`` when
    the unit's Move (or the profile) is not known."""
    if unit is None or unit.move_in is None or profile is None:
        return settings.track_gate_mm
    mv = profile.movement
    most_in = unit.move_in * (1.0 + mv.advance_moves) + math.ceil(unit.move_in * mv.charge_fraction)
    return most_in * MM_PER_INCH + settings.reach_margin_mm


def _fresh(prefix: str, used: set[str]) -> str:
    n = 1 + max((int(x[len(prefix) :]) for x in used if re.fullmatch(rf"{prefix}\d+", x)), default=0)
    new = f"{prefix}{n}"
    used.add(new)
    return new


def _state_of(
    detected: rules.TableState,
    models: list[rules.Model],
    units: tuple[rules.Unit, ...],
    terrain: Any,
    unseen: Sequence[rules.Model] = (),
) -> rules.TableState:
    shown = led_by_present(units, {m.id for m in models} | {m.id for m in unseen})
    kept = tuple(sorted(unseen, key=lambda m: m.id))
    return rules.TableState(detected.table, shown, tuple(models), terrain, detected.extras, kept, detected.measured)


def identify(
    detected: rules.TableState,
    track: Track,
    index: int,
    settings: ReviewSettings,
    roster: rules.TableState | None = None,
    profile: rules.RuleProfile | None = None,
    changed: Mapping[str, float] | None = None,
    base_there: BaseThere | None = None,
) -> tuple[rules.TableState, list[Placement], list[Placement], Track, list[Event]]:
    """Give the models of a detected settled state (fresh ids, no units) the identities of the game so far.

    The first state takes them from ``roster`` (roster models not seen are unseen, at the roster's places), or
    suggests units. A later state matches the models of the state before and the unseen ones, each only within
    the distance its unit can move (:func:`reach_mm`; a model whose place did not change, only within
    ``still_reach_mm``), by a minimum-cost assignment on squared displacement at the same base size.

    ``changed`` (model id -> share of its base's place that changed in the picture since the state before; None: not
    known) decides what became of a model of the state before that the detector did not find
    (:func:`tableref.review.fates.judge_fates`): where its place did not change it is still there; where it changed
    and no new base of its size appeared within its reach, its place was seen empty: a casualty, removed (with a
    ``roster``, only a model it lists; the going of a base it does not list is a question), unless ``base_there``
    (the probability that a base of a size stands at a table place now, from the picture; None: not known) says a
    base of its size still stands there. Otherwise it stays on the table, unseen, at its last place; a new base of
    its size it was not paired with is a question (an event), never a move. Detections left over are added, with
    fresh ids and suggested units.

    Returns (identified state, removed, added, track after it, questions).
    """
    used, units, gone = set(track.used_ids), list(track.units), dict(track.gone)
    terrain: Any = track.state.terrain if track.state is not None else ()
    removed: list[Placement] = []
    added: list[Placement] = []
    questions: list[Event] = []
    if track.state is None and roster is not None:
        # the roster says what each model stands on: a base read at another size in this state would otherwise
        # keep that size, and the next state's reading of its true size would be taken for a new model on it
        carried = carry_identities(detected, roster, settings.roster_gate_mm, take_bases=True)
        used |= {m.id for m in roster.models + roster.unseen} | {m.id for m in carried.models}
        units, terrain = list(roster.units), roster.terrain
        gone, models = {m.id: m for m in carried.unseen}, list(carried.models)
        new = [k for k, m in enumerate(models) if m.unit is None]
    else:
        models, new, added, removed, questions, gone = _follow(
            detected, track, gone, units, used, index, settings, roster, profile, changed, base_there
        )
    if new:
        _suggest_for(detected.table, models, new, units, settings)
        if track.state is not None:
            added += [Placement(models[k].id, models[k].unit, index, (models[k].x_mm, models[k].y_mm)) for k in new]
    used |= {m.id for m in models}
    models.sort(key=lambda m: m.id)
    state = _state_of(detected, models, tuple(units), terrain, list(gone.values()))
    return state, removed, added, Track(state, MappingProxyType(gone), frozenset(used), tuple(units)), questions


def _follow(
    detected: rules.TableState,
    track: Track,
    gone: dict[str, rules.Model],
    units: list[rules.Unit],
    used: set[str],
    index: int,
    settings: ReviewSettings,
    roster: rules.TableState | None,
    profile: rules.RuleProfile | None,
    changed: Mapping[str, float] | None,
    base_there: BaseThere | None,
) -> tuple[list[rules.Model], list[int], list[Placement], list[Placement], list[Event], dict[str, rules.Model]]:
    """A state after the first, paired with the state before and the unseen models (see :func:`identify`): its
    models, the indices of the new ones, the models added, removed, the questions, and the unseen models after it."""
    previous = list(track.state.models) if track.state is not None else []
    known = previous + list(gone.values())

    def still(m: rules.Model) -> bool:
        return changed is not None and changed.get(m.id, 1.0) < settings.changed_share

    # whether each known model's picture stayed unchanged: one reading for its reach and for its place. An unseen
    # model's too: where nothing changed at its place it did not move, and a base read far off is not it
    stays = [still(m) for m in known]
    listed = None if roster is None else {m.id for m in roster.models + roster.unseen}
    # a base the roster does not list is as likely a printed ring or a figure's part read as a base as a model
    # it forgot: it keeps its name only where it stands still, never across the table
    tethered = set() if listed is None else {m.id for m in known} - listed
    to_known, reach, unit_moves, stays = _pairing(
        detected.models, known, units, settings, profile, stays, len(previous), tethered
    )
    models, new, added = _named(detected.models, known, to_known, len(previous), stays, changed, used, index, settings)
    for j in to_known.values():
        if j >= len(previous):  # seen again
            del gone[known[j].id]
    matched = {known[j].id for j in to_known.values()}
    fresh = [models[k] for k in new]
    # a unit a model of which was seen to move, though too few were found for the move of the whole unit: one of
    # its models not found more likely went with it than was taken off, and stays unseen at its last place
    seen_moving = _seen_moving(detected.models, previous, to_known, settings.still_reach_mm)
    unit_moves = {**{u: GroupMove() for u in seen_moving}, **unit_moves}
    fates = judge_fates(
        previous, gone, reach, matched, fresh, unit_moves, stays, changed, detected.models, settings, base_there
    )
    models += fates.still_seen
    removed, questions = _casualties(fates.casualties, listed, index)
    gone = fates.gone
    questions += [_question(p, alike, r, index) for p, alike, r in fates.questions]
    return models, new, added, removed, questions, gone


def _named(
    detected: Sequence[rules.Model],
    known: Sequence[rules.Model],
    to_known: Mapping[int, int],
    n_previous: int,
    stays: Sequence[bool],
    changed: Mapping[str, float] | None,
    used: set[str],
    index: int,
    settings: ReviewSettings,
) -> tuple[list[rules.Model], list[int], list[Placement]]:
    """The ``detected`` models named: those paired (``to_known``: detected row -> row of ``known``, the state
    before's ``n_previous`` models, then the unseen ones) as the known model, held where it stood if its place
    did not change; the rest under fresh ids (``used`` grows), no unit. Returns the models, the rows of the fresh
    ones, and the unseen models seen again (placements at ``index``)."""
    models: list[rules.Model] = []
    new: list[int] = []
    returned: list[Placement] = []
    for k, m in enumerate(detected):
        if k not in to_known:
            models.append(replace(m, id=_fresh(MODEL_ID_PREFIX, used), unit=None))
            new.append(len(models) - 1)
            continue
        j = to_known[k]
        share = changed.get(known[j].id, 1.0) if changed is not None else 1.0
        # an unseen model has no reading of its own to keep: the new one stands
        models.append(_as_known(_unmoved(m, known[j], stays[j] and j < n_previous, share, settings), known[j]))
        if j >= n_previous:
            returned.append(Placement(known[j].id, known[j].unit, index, (m.x_mm, m.y_mm), returned=True))
    return models, new, returned


def _casualties(
    taken_off: Sequence[rules.Model], listed: set[str] | None, index: int
) -> tuple[list[Placement], list[Event]]:
    """The models ``taken_off`` as casualties at ``index`` (those the roster lists, or all where ``listed`` is None),
    and questions for the rest."""
    removed: list[Placement] = []
    questions: list[Event] = []
    for p in taken_off:
        if listed is None or p.id in listed:
            removed.append(Placement(p.id, p.unit, index, (p.x_mm, p.y_mm)))
        else:
            # a base the roster does not list is as likely a printed ring or a token the detector took for one as a
            # model the roster forgot: its going is a question, not a casualty
            questions.append(_unlisted_gone(p, index))
    return removed, questions


def _seen_moving(
    detected: Sequence[rules.Model], previous: Sequence[rules.Model], to_known: Mapping[int, int], still_mm: float
) -> set[str]:
    """The units a model of which, seen in the state before, was paired (``to_known``: detected index -> index in
    ``previous`` and beyond) with a base more than ``still_mm`` from its place."""
    out: set[str] = set()
    for k, j in to_known.items():
        if j >= len(previous):
            continue
        was, now = previous[j], detected[k]
        if was.unit is not None and math.hypot(now.x_mm - was.x_mm, now.y_mm - was.y_mm) > still_mm:
            out.add(was.unit)
    return out


def _suggest_for(
    table: rules.Table,
    models: list[rules.Model],
    new: Sequence[int],
    units: list[rules.Unit],
    settings: ReviewSettings,
) -> None:
    """Put the ``new`` models (indices into ``models``) in suggested units of their own, added to ``units``."""
    unit_ids = {u.id for u in units}
    fresh = rules.TableState(table, models=tuple(models[k] for k in new))
    for group in suggest_units(fresh, settings.group_gap_mm):
        unit_id = _fresh(UNIT_PREFIX, unit_ids)
        units.append(rules.Unit(id=unit_id))
        for g in group:
            models[new[g]] = replace(models[new[g]], unit=unit_id)


def _pairing(
    detected: Sequence[rules.Model],
    known: Sequence[rules.Model],
    units: Sequence[rules.Unit],
    settings: ReviewSettings,
    profile: rules.RuleProfile | None,
    stays: Sequence[bool],
    seen_count: int,
    tethered: set[str],
) -> tuple[dict[int, int], list[float], dict[str, GroupMove], list[bool]]:
    """detected index -> ``known`` index (the state before's models, its first ``seen_count``, then the unseen ones),
    each known model's reach, the move of every unit that moved (its group's displacement and turn,
    :func:`group_moves`: the one reading of a unit's move, which also carries its unseen models), and whether each
    known model stayed. A model that ``stays`` (its picture unchanged) reaches only ``still_reach_mm`` (an unseen one
    ``roster_gate_mm``), unless its unit's move takes it onto a base of its size elsewhere (:func:`_left_with_unit`);
    once a unit is seen to move, each of its models is looked for where the unit's move takes it, and a unit that
    stood still did so as a whole where its models keep together (a cohesion rule). A ``tethered`` model (by id)
    reaches only ``still_reach_mm`` whatever its picture did."""
    by_id = {u.id: u for u in units}
    # an unseen model's place is where it was last read or where the roster put it, which the first state trusts to
    # roster_gate_mm: a reading that far off may be it, though nothing changed there
    unseen_still_mm = max(settings.still_reach_mm, settings.roster_gate_mm)
    still_mm = [settings.still_reach_mm if k < seen_count else unseen_still_mm for k in range(len(known))]

    def reaches(stays: Sequence[bool]) -> list[float]:
        return [
            r if s or m.id in tethered else reach_mm(by_id.get(m.unit or ""), profile, settings)
            for s, m, r in zip(stays, known, still_mm, strict=True)
        ]

    # a unit moves as a unit: the shape of its group, not each model's nearest base, says where it went (a unit moved
    # along itself leaves most of its places looking as they did: each model as far as its unit may go is tried as
    # well). A base at the place of a model whose picture did not change is that model's: another unit moved onto
    # its neighbours' old places must not count it as one of its own
    held = holders(detected, known, stays, settings)
    reach = reaches(stays)
    fitted = group_moves(detected, known, reach, settings, held_by(held, known), reaches([False] * len(known)))
    left = _left_with_unit(detected, known, stays, fitted, settings)
    if any(left):
        stays = [s and not gone for s, gone in zip(stays, left, strict=True)]
        held = holders(detected, known, stays, settings)
        reach = reaches(stays)
    places = places_mm(known)
    expected = places.copy()
    moved = set()
    for unit, move in fitted.items():
        rows = [j for j, m in enumerate(known) if m.unit == unit]
        expected[rows] = move.places(places[rows])
        if move.farthest_mm(places[rows]) > settings.still_reach_mm:
            moved.add(unit)
    # a model of a unit that moved as a group is looked for about its place in the group: paired far from it (with
    # a base its neighbour left, or a model of another unit), it would make up a move; not seen there, it is unseen.
    # Where units keep together (a cohesion rule), a unit that stood still did so as a whole too
    together = profile is None or profile.cohesion.mode != "none"
    stood = {u for u in fitted if together and u not in moved}
    if together:
        # too few of a unit's models found for a fit: where the picture stayed at every one found, it stood still too
        stood |= _stayed_whole(known[:seen_count], stays[:seen_count]) - set(fitted)
    astray = np.array(
        [
            settings.group_reach_mm if m.unit in moved else settings.still_reach_mm if m.unit in stood else np.inf
            for m in known
        ]
    )
    # ... and paired with another model, it would stand on the place of that one, kept there as unchanged: two models
    # on one base
    to_known = _match(detected, known, reach, settings, expected, astray, held)
    # a model of a unit that stood still went nowhere on its own: a base of its size farther from its place than a
    # model strays from its group is not where it went
    reach = [min(r, settings.group_reach_mm) if m.unit in stood else r for r, m in zip(reach, known, strict=True)]
    return to_known, reach, {u: fitted[u] for u in moved}, list(stays)


def _stayed_whole(seen: Sequence[rules.Model], stays: Sequence[bool]) -> set[str]:
    """The units every one of whose models ``seen`` ``stays`` (its picture unchanged)."""
    out = {m.unit for m, s in zip(seen, stays, strict=True) if s and m.unit is not None}
    return out - {m.unit for m, s in zip(seen, stays, strict=True) if not s}


def _left_with_unit(
    detected: Sequence[rules.Model],
    known: Sequence[rules.Model],
    stays: Sequence[bool],
    fitted: Mapping[str, GroupMove],
    settings: ReviewSettings,
) -> list[bool]:
    """Per known model, whether it ``stays`` by its picture but left with its unit: the unit's move (``fitted``)
    takes it beyond ``still_reach_mm`` onto a detected base of its size (within ``group_fit_mm``). A unit moving
    along itself puts a model on another's old place, and bases of one unit look alike: the picture there did not
    change, but the model that stood there went with its unit. So did one whose place a moving unit-mate takes, though
    the detector missed it where it went: two bases cannot stand on one place."""
    left = [False] * len(known)
    if not detected or not any(stays):
        return left
    seen = places_mm(detected)
    alike = size_agreement(detected, known, settings)[0]
    places = places_mm(known)
    landed = places.copy()
    moving = [False] * len(known)
    for j, m in enumerate(known):
        move = fitted.get(m.unit or "")
        if move is None:
            continue
        landed[j] = move.places(places[j : j + 1])[0]
        if math.dist(landed[j], places[j]) <= settings.still_reach_mm:
            continue
        moving[j] = True
        near = np.hypot(*(seen - landed[j]).T) <= settings.group_fit_mm
        left[j] = stays[j] and bool(np.any(near & alike[:, j]))
    while True:
        gone = [moving[i] and (left[i] or not stays[i]) for i in range(len(known))]
        taken = [
            j
            for j, m in enumerate(known)
            if moving[j]
            and stays[j]
            and not left[j]
            and any(
                gone[i] and known[i].unit == m.unit and math.dist(landed[i], places[j]) <= settings.group_fit_mm
                for i in range(len(known))
            )
        ]
        if not taken:
            return left
        for j in taken:
            left[j] = True


def pair_within_reach(
    state: rules.TableState,
    fresh_ids: frozenset[str],
    profile: rules.RuleProfile | None,
    settings: ReviewSettings,
) -> rules.TableState:
    """``state`` with its fresh detections (``fresh_ids``, of no unit) paired with its unseen models, each only within
    its unit's reach (:func:`reach_mm`), least squared displacement first: a unit that moved farther than a
    frame-to-frame gate keeps its ids. A paired detection takes the unseen model's id and unit."""
    fresh = [k for k, m in enumerate(state.models) if m.id in fresh_ids]
    if not fresh or not state.unseen:
        return state
    units = {u.id: u for u in state.units}
    unseen = list(state.unseen)
    reach = [reach_mm(units.get(m.unit or ""), profile, settings) for m in unseen]
    to_unseen = _match([state.models[k] for k in fresh], unseen, reach, settings)
    models = list(state.models)
    for i, j in to_unseen.items():
        models[fresh[i]] = _as_known(models[fresh[i]], unseen[j])
    paired = {unseen[j].id for j in to_unseen.values()}
    return replace(state, models=tuple(models), unseen=tuple(m for m in unseen if m.id not in paired))


def _unmoved(
    detected: rules.Model, known: rules.Model, still: bool, share: float, settings: ReviewSettings
) -> rules.Model:
    """``detected``, paired with ``known``; where ``known`` is ``still`` (its picture did not change), at its last
    place when the reading lies farther off than both a move the picture would have shown (a disc of radius r
    shifted by d changes about 2d / (pi r) of its place, so where ``share`` of it changed it moved about
    share pi r / 2; nothing changed: it did not move) and ``still_misread_sigmas`` of the two readings' combined
    sigma. A reading beyond both is the detector's error, not a move."""
    hidden_mm = share * math.pi * min(known.base.semi_axes_mm) / 2.0
    noise_mm = settings.still_misread_sigmas * math.hypot(detected.sigma_mm, known.sigma_mm)
    if not still or math.hypot(detected.x_mm - known.x_mm, detected.y_mm - known.y_mm) <= max(hidden_mm, noise_mm):
        return detected
    return replace(detected, x_mm=known.x_mm, y_mm=known.y_mm, sigma_mm=known.sigma_mm, doubt_mm=known.doubt_mm)


def _as_known(detected: rules.Model, known: rules.Model) -> rules.Model:
    """A detection that is ``known``: its id and unit, and its base where the detector read the size no more surely
    (a base does not change between states: a roster's declared size, or the first reading, stands)."""
    return with_identity(detected, known, take_base=known.base.size_sigma_mm <= detected.base.size_sigma_mm)


def _unlisted_gone(lost: rules.Model, index: int) -> Event:
    """A base the roster does not list, seen before, whose place was seen empty."""
    detail = (
        f"{lost.id}, a base the roster does not list, is gone from ({lost.x_mm:.0f}, {lost.y_mm:.0f}) mm: taken off, "
        "or never a model (a printed ring or a token read as a base)"
    )
    return Event(index, "question", (lost.unit,) if lost.unit else (), (lost.id,), detail)


def _question(lost: rules.Model, alike: Sequence[rules.Model], reach: float, index: int) -> Event:
    """A model not found, and the nearest new base of its size that it was not paired with: beyond where it could
    have moved, or away from where its unit's move takes it."""
    d = [math.hypot(m.x_mm - lost.x_mm, m.y_mm - lost.y_mm) for m in alike]
    k = int(np.argmin(d))
    m = alike[k]
    why = (
        f"farther than it can move ({reach:.0f} mm)"
        if d[k] > reach
        else f"within its reach ({reach:.0f} mm) but not where its unit's move takes it"
    )
    detail = (
        f"{lost.id} not seen; a new model at ({m.x_mm:.0f}, {m.y_mm:.0f}) mm, {d[k]:.0f} mm from where {lost.id} "
        f"stood, {why}"
    )
    return Event(index, "question", (lost.unit,) if lost.unit else (), (lost.id,), detail)


# ----------------------------------------------------------------------------------------------------------------
# Moves, findings, events


def moves_between(
    before: rules.TableState,
    after: rules.TableState,
    profile: rules.RuleProfile,
    actions: Mapping[str, Any] | None,
    index: int,
) -> tuple[list[Move], list[rules.UnitMove]]:
    """The models that moved from settled state ``index - 1`` to ``index`` (removed and added models are not
    moves) and the verdict on each unit that moved (empty for profiles without movement rules). A model ``before``
    did not show (unseen at its last place, which its unit's move carried) that ``after`` shows moved from there,
    where a model of its unit seen in both moved too: a place never seen (a roster's) may be stale, and alone it
    would make a move of that."""
    shown = {m.id for m in after.models}
    moved = rules.movement.moved_models(before, after, profile)
    units_moved = {m.unit for m in moved}
    back = tuple(m for m in before.unseen if m.id in shown and m.unit in units_moved)
    if back:
        before = replace(
            before, models=before.models + back, unseen=tuple(m for m in before.unseen if m.id not in shown)
        )
        moved = rules.movement.moved_models(before, after, profile)
    verdicts = rules.check_moves(before, after, profile, actions)
    paths = {m.model: m.path_mm for v in verdicts for m in v.models}
    moves = [
        Move(**{**vars(m), "path_mm": paths.get(m.model, m.path_mm)}, from_state=index - 1, to_state=index)
        for m in moved
    ]
    return moves, verdicts


def _keyed(findings: Sequence[rules.Finding], kind: str) -> dict[tuple[str, ...], rules.Finding]:
    out = {}
    for f in findings:
        if f.kind != kind:
            continue
        if kind == "engaged":
            key = tuple(sorted(f.units))
        elif kind == "cohesion":
            key = (f.unit or "",)
        else:
            key = tuple(sorted(f.models))
        out[key] = f
    return out


def events_between(
    before: Sequence[rules.Finding] | None,
    after: Sequence[rules.Finding],
    verdicts: Sequence[rules.UnitMove],
    index: int,
) -> list[Event]:
    """Events at settled state ``index``: units engaged or disengaged, cohesion broken or restored, new overlaps
    (against the findings of the state before; the first state reports what it starts with), illegal moves."""
    old = before or ()
    out: list[Event] = []
    was, now = _keyed(old, "engaged"), _keyed(after, "engaged")
    for key in sorted(now.keys() - was.keys()):
        out.append(Event(index, "engaged", key, now[key].models, f"{' and '.join(key)} engaged"))
    for key in sorted(was.keys() - now.keys()):
        out.append(Event(index, "disengaged", key, (), f"{' and '.join(key)} no longer engaged"))
    was, now = _keyed(old, "cohesion"), _keyed(after, "cohesion")
    for key in sorted(now.keys() - was.keys()):
        out.append(Event(index, "cohesion_broken", key, now[key].models, f"{key[0]} out of cohesion"))
    for key in sorted(was.keys() - now.keys()):
        out.append(Event(index, "cohesion_restored", key, (), f"{key[0]} back in cohesion"))
    was, now = _keyed(old, "overlap"), _keyed(after, "overlap")
    for key in sorted(now.keys() - was.keys()):
        out.append(Event(index, "overlap", now[key].units, key, f"{' and '.join(key)} overlap"))
    for v in verdicts:
        if not v.legal:
            problems = "; ".join(v.problems) or "no plan makes the move legal"
            out.append(Event(index, "illegal_move", (v.unit,), tuple(m.model for m in v.models), problems))
    return out


def roster_bases_where_seen(
    roster: rules.TableState | None, previous: rules.TableState | None
) -> rules.TableState | None:
    """The bases a game's roster declares, standing where each model was last seen (the previous reviewed
    state, its unseen models too; the roster's own places before the first): what the detector may fit them at,
    and look for where it finds fewer than it lists (``roster`` of :func:`tableref.pipeline.frame.detect_frame`, a
    whole roster). The roster's units stay, their Moves saying how far a model may have gone, with no leader (one
    may be gone). None without a roster or when no model of it is left."""
    if roster is None:
        return None
    if previous is None:
        return roster
    bases = {m.id: m.base for m in roster.models}
    units = tuple(replace(u, leader=None) for u in roster.units)
    known = {u.id for u in units}
    listed = tuple(
        replace(m, base=bases[m.id], unit=m.unit if m.unit in known else None)
        for m in (*previous.models, *previous.unseen)
        if m.id in bases
    )
    return rules.TableState(previous.table, units, listed) if listed else None


def review_state(
    detected: rules.TableState,
    frame: int,
    time_s: float,
    previous: ReviewedState | None,
    profile: rules.RuleProfile,
    settings: ReviewSettings,
    roster: rules.TableState | None = None,
    actions: Mapping[str, Any] | None = None,
    changed: Mapping[str, float] | None = None,
    base_there: BaseThere | None = None,
) -> ReviewedState:
    """Identify, judge and compare one detected settled state with the one before (None for the first);
    ``changed`` and ``base_there`` as :func:`identify` takes them."""
    index = 0 if previous is None else previous.index + 1
    track = EMPTY_TRACK if previous is None else previous.track
    state, removed, added, track, questions = identify(
        detected, track, index, settings, roster, profile, changed, base_there
    )
    findings, moves, verdicts, events = _judge(state, index, previous, profile, actions)
    events = (*events, *questions)
    return ReviewedState(
        index, frame, time_s, state, findings, moves, verdicts, tuple(removed), tuple(added), events, track
    )


def _judge(
    state: rules.TableState,
    index: int,
    previous: ReviewedState | None,
    profile: rules.RuleProfile,
    actions: Mapping[str, Any] | None,
) -> tuple[tuple[rules.Finding, ...], tuple[Move, ...], tuple[rules.UnitMove, ...], tuple[Event, ...]]:
    """Findings of an identified state, its moves and verdicts since ``previous``, and the events."""
    findings = rules.check(state, profile)
    moves: list[Move] = []
    verdicts: list[rules.UnitMove] = []
    if previous is not None:
        moves, verdicts = moves_between(previous.state, state, profile, actions, index)
        findings = [*findings, *rules.move_findings(verdicts)]
    events = events_between(previous.findings if previous else None, findings, verdicts, index)
    return tuple(findings), tuple(moves), tuple(verdicts), tuple(events)


def regroup(
    states: Sequence[ReviewedState],
    units: Sequence[rules.Unit],
    membership: Mapping[str, str | None],
    profile: rules.RuleProfile,
    actions: Mapping[str, Any] | None = None,
) -> list[ReviewedState]:
    """The same reviewed game with the units fixed by the user: ``units`` replace the game's units and
    ``membership`` (model id -> unit id, or None for no unit) moves models between them; models not named keep
    their unit. Identities and positions stay; findings, move verdicts and events are judged again.

    Raises :class:`rules.StateError` naming a unit that ``membership`` uses but ``units`` lacks, or a model no
    state has."""
    known = {u.id for u in units}
    ids = {m.id for s in states for m in s.state.models} | {m for s in states for m in s.track.gone}
    for model, unit in membership.items():
        if model not in ids:
            raise rules.StateError(f"model {model!r} is in no state of this game; expected one of its model ids")
        if unit is not None and unit not in known:
            raise rules.StateError(
                f"model {model!r}: unit {unit!r} is not one of the units ({', '.join(sorted(known))})"
            )

    def unit_of(model: str, unit: str | None) -> str | None:
        return membership.get(model, unit)

    unit_list = tuple(units)
    out: list[ReviewedState] = []
    for s in states:
        models = [replace(m, unit=unit_of(m.id, m.unit)) for m in s.state.models]
        unseen = [replace(m, unit=unit_of(m.id, m.unit)) for m in s.state.unseen]
        state = _state_of(s.state, models, unit_list, s.state.terrain, unseen)
        previous = out[-1] if out else None
        findings, moves, verdicts, events = _judge(state, s.index, previous, profile, actions)
        events = (*events, *(e for e in s.events if e.kind == "question"))
        gone = {k: replace(m, unit=unit_of(k, m.unit)) for k, m in s.track.gone.items()}
        track = Track(state, MappingProxyType(gone), s.track.used_ids, unit_list)
        removed = tuple(replace(p, unit=unit_of(p.model, p.unit)) for p in s.removed)
        added = tuple(replace(p, unit=unit_of(p.model, p.unit)) for p in s.added)
        out.append(
            ReviewedState(s.index, s.frame, s.time_s, state, findings, moves, verdicts, removed, added, events, track)
        )
    return out


def review_states(
    detected: Sequence[tuple[int, float, rules.TableState]],
    profile: rules.RuleProfile,
    settings: ReviewSettings,
    roster: rules.TableState | None = None,
    actions: Mapping[str, Any] | None = None,
    changed: Sequence[Mapping[str, float] | None] | None = None,
) -> list[ReviewedState]:
    """:func:`review_state` over a sequence of (frame, time_s, detected state), with ``changed`` per state."""
    out: list[ReviewedState] = []
    for k, (frame, time_s, state) in enumerate(detected):
        shares = changed[k] if changed is not None else None
        previous = out[-1] if out else None
        out.append(review_state(state, frame, time_s, previous, profile, settings, roster, actions, shares))
    return out
