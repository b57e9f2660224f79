"""Which detected model is which: identities carried over from a roster (or the state before), the bases a roster
declares, and units suggested for models of none."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

import rules
from tableref.assign import gated_assignment, match_models

MODEL_ID_PREFIX = "m"


def standing_on(
    table: rules.Table, models: Sequence[rules.Model], bases: Mapping[str, rules.RoundBase | rules.OvalBase]
) -> rules.TableState | None:
    """``models`` (where they were last seen) standing on the ``bases`` declared for them (by model id), as the
    ``roster`` of :func:`~tableref.pipeline.frame.detect_frame`; models with no declared base are left out. None when
    none is left. Only where they stand and what they stand on matter there: no units (a unit's leader may not be among
    them)."""
    listed = tuple(replace(m, unit=None, base=bases[m.id]) for m in models if m.id in bases)
    return rules.TableState(table, models=listed) if listed else None


def standing_on_declared(model: rules.Model, base: rules.RoundBase | rules.OvalBase) -> rules.Model:
    """``model`` standing on ``base``, declared for it (by a roster, or by a user where the camera read another size).
    Where both bases are round, a size read wrong by d mm (in diameter) widens the model's sigma by d / 2, in
    quadrature: the camera read part of the base (a circle inside its footprint, touching it on one side) or more
    than it (a circle about it and its shadow, or its figure), so the centre is off by about the radii's difference
    either way, and the measured size is not the base's."""
    if isinstance(model.base, rules.RoundBase) and isinstance(base, rules.RoundBase):
        misread_mm = abs(model.base.semi_axes_mm[0] - base.semi_axes_mm[0])
        return replace(model, base=base, sigma_mm=float(np.hypot(model.sigma_mm, misread_mm)))
    return replace(model, base=base)


def pairing(cost: NDArray[np.float64], gate: float, column_alone: NDArray[np.float64] | None = None) -> dict[int, int]:
    """Row -> column of the minimum-cost one-to-one pairing of a (R, C) cost matrix in which no pair costs more
    than ``gate`` (the others stay unpaired): the step every identity matcher ends in, whatever its costs. The least
    total, not each row's nearest: greedy matching swaps identities when two models close together both move. As
    many pairs as the gate allows; with ``column_alone`` (C,), each column's cost of staying unpaired instead: pairing
    it is not worth moving others by more than that in all."""
    if column_alone is None:
        rows, cols = gated_assignment(cost, gate)
    else:
        cols, rows = gated_assignment(np.asarray(cost, np.float64).T, gate, column_alone)
    return dict(zip(rows.tolist(), cols.tolist(), strict=True))


def nearest_pairing(detected: Sequence[rules.Model], known: Sequence[rules.Model], gate_mm: float) -> dict[int, int]:
    """Detected index -> known index: least total centre distance, no pair farther apart than ``gate_mm``, and a
    detection left unpaired at the cost of ``gate_mm``: a base found 1 mm from a model's place keeps that model's
    name, though another base 25 mm beside it (a false one, say) could then be paired too."""
    rows, cols = match_models(detected, known, gate_mm, unmatched_mm=gate_mm)
    return dict(zip(rows.tolist(), cols.tolist(), strict=True))


def with_identity(detected: rules.Model, known: rules.Model, take_base: bool = False) -> rules.Model:
    """A detection that is the ``known`` model: its id and unit, and with ``take_base`` its round base (see
    :func:`standing_on_declared`; the camera measures round bases only, and an oval's turn is not known)."""
    carried = replace(detected, id=known.id, unit=known.unit)
    if take_base and isinstance(known.base, rules.RoundBase):
        return standing_on_declared(carried, known.base)
    return carried


def led_by_present(units: Sequence[rules.Unit], present: set[str]) -> tuple[rules.Unit, ...]:
    """``units`` with a leader only where the leader is among the ``present`` model ids: a leader named but not
    placed leads no one here."""
    return tuple(u if u.leader is None or u.leader in present else replace(u, leader=None) for u in units)


def carry_identities(
    detected: rules.TableState, roster: rules.TableState, gate_mm: float, take_bases: bool = False
) -> rules.TableState:
    """Give each detected model the id and unit of the roster model it matches (:func:`nearest_pairing`, within
    ``gate_mm``). Unmatched detections keep fresh ids that clash with no roster id; roster models matched by no
    detection are ``unseen``, at the roster's place for them; the roster's units, terrain and table come along. With
    ``take_bases``, a matched model also stands on the roster model's base when both are round: the roster says what
    each model stands on, the camera only measures it. A size read wrong by d mm (in diameter) widens the model's
    sigma by d / 2, in quadrature."""
    det = detected.models
    ros = roster.models + roster.unseen
    matched = nearest_pairing(det, ros, gate_mm)
    taken = {m.id for m in ros}
    fresh = (f"{MODEL_ID_PREFIX}{k}" for k in range(1, 10 * (len(det) + len(ros)) + 2))
    models = []
    for i, m in enumerate(det):
        if i in matched:
            r = ros[matched[i]]
            # whatever the size measured: kept as measured, a base read 8-11.5 mm too small left both the centre's
            # doubt and the size's in its gaps, and three calls at 1080p were wrongly clear
            models.append(with_identity(m, r, take_bases and isinstance(m.base, rules.RoundBase)))
        else:
            new_id = next(x for x in fresh if x not in taken)
            taken.add(new_id)
            models.append(rules.Model(new_id, None, m.x_mm, m.y_mm, m.base, m.sigma_mm, m.doubt_mm))
    present = {m.id for m in models}
    unseen = tuple(r for r in ros if r.id not in present)
    units = led_by_present(roster.units, present | {m.id for m in unseen})
    return rules.TableState(
        detected.table, units, tuple(models), roster.terrain, detected.extras, unseen, detected.measured
    )


def table_side(table: rules.Table, x_mm: float, y_mm: float) -> str:
    """Which half of the table a point is on: "top" or "bottom" of a table wider than deep, else "left" or "right".
    Armies deploy along the long edges, so the halves split the short dimension."""
    if table.width_mm >= table.depth_mm:
        return "top" if y_mm < table.depth_mm / 2.0 else "bottom"
    return "left" if x_mm < table.width_mm / 2.0 else "right"


def _same_base(a: rules.RoundBase | rules.OvalBase, b: rules.RoundBase | rules.OvalBase) -> bool:
    # the base's size and shape, not how sure the size is or which way an oval is turned
    return sorted(a.semi_axes_mm) == sorted(b.semi_axes_mm)


def suggest_units(state: rules.TableState, gap_mm: float, by_side: bool = False) -> list[list[int]]:
    """Groups (lists of indices into ``state.models``, ascending) of the models of no unit that look like one unit,
    a suggestion the user fixes: two models are linked when they stand on bases of one size at most ``gap_mm`` apart
    edge to edge, and each chain of links is one group. ``by_side``: models on opposite halves of the table
    (:func:`table_side`) are never linked, as armies deploy (the dashboard); a review leaves it off, since a unit
    may be first seen after it crossed the middle. Groups come front to back (by their least y), then left to
    right."""
    free = [k for k, m in enumerate(state.models) if m.unit is None]
    parent = list(range(len(free)))

    def root(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    if len(free) > 1:
        idx = np.array(free, dtype=np.intp)
        pi, pj = np.triu_indices(len(idx), k=1)
        gaps = rules.BaseArrays.from_state(state).gaps_mm(idx[pi], idx[pj])
        for a, b, gap in zip(pi.tolist(), pj.tolist(), gaps.tolist(), strict=True):
            ma, mb = state.models[free[a]], state.models[free[b]]
            apart = by_side and table_side(state.table, ma.x_mm, ma.y_mm) != table_side(state.table, mb.x_mm, mb.y_mm)
            if gap <= gap_mm and _same_base(ma.base, mb.base) and not apart:
                parent[root(a)] = root(b)
    groups: dict[int, list[int]] = {}
    for n, k in enumerate(free):
        groups.setdefault(root(n), []).append(k)

    def place(group: list[int]) -> tuple[float, float]:
        return min(state.models[k].y_mm for k in group), min(state.models[k].x_mm for k in group)

    return sorted(groups.values(), key=place)
