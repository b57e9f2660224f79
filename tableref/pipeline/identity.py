"""Which detected model is which: identities carried over from a roster (or the state before), the bases a roster
declares, and units suggested for models of none."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

import rules
from tableref.assign import match_models

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


def carry_identities(
    detected: rules.TableState, roster: rules.TableState, gate_mm: float, take_bases: bool = False
) -> rules.TableState:
    """Give each detected model the id and unit of the roster model it matches (minimum total distance, no match farther
    than ``gate_mm``). Unmatched detections keep fresh ids that clash with no roster id; roster models matched by
    no detection are ``unseen``, at the roster's place for them; the
    roster's units, terrain and table come along. With ``take_bases``, a matched model also stands on the roster
    model's base when both are round: the roster says what each model stands on, the camera only measures it. A
    size read wrong by d mm (in diameter) widens the model's sigma by d / 2, in quadrature."""
    det = detected.models
    ros = roster.models + roster.unseen
    rows, cols = match_models(det, ros, gate_mm)
    matched = dict(zip(rows.tolist(), cols.tolist(), strict=True))
    taken = {m.id for m in ros}
    fresh = (f"{MODEL_ID_PREFIX}{k}" for k in range(1, 10 * (len(det) + len(ros)) + 2))
    models = []
    for i, m in enumerate(det):
        if i in matched:
            r = ros[matched[i]]
            carried = replace(m, id=r.id, unit=r.unit)
            # whatever the size measured: kept as measured, a base read 8-11.5 mm too small left both the centre's
            # doubt and the size's in its gaps, and three calls at 1080p were wrongly clear. The camera measures
            # round bases only, and an oval's turn is not known
            if take_bases and isinstance(m.base, rules.RoundBase) and isinstance(r.base, rules.RoundBase):
                carried = standing_on_declared(carried, r.base)
            models.append(carried)
        else:
            new_id = next(x for x in fresh if x not in taken)
            taken.add(new_id)
            models.append(rules.Model(new_id, None, m.x_mm, m.y_mm, m.base, m.sigma_mm, m.doubt_mm))
    present = {m.id for m in models}
    unseen = tuple(r for r in ros if r.id not in present)
    known = present | {m.id for m in unseen}
    # A leader the roster names but does not place leads no one here.
    units = tuple(u if u.leader is None or u.leader in known else replace(u, leader=None) for u in roster.units)
    return rules.TableState(
        detected.table, units, tuple(models), roster.terrain, detected.extras, unseen, detected.measured
    )
