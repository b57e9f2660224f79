"""What became of the models a settled state's detector did not find: still there, taken off (a casualty), or
unseen, carried with their unit's move. Pure (models in, fates out); :func:`tableref.review.timeline.identify` asks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import rules
from tableref.review.groups import GroupMove, size_agreement, size_mm
from tableref.settings import ReviewSettings

# The probability (0-1) that a base of about a size (diameter_mm) stands at a table place (x_mm, y_mm) in the state's
# picture.
BaseThere = Callable[[float, float, float], float]


@dataclass(frozen=True)
class Fates:
    """What became of the models the detector did not find in a state (see :func:`judge_fates`)."""

    still_seen: list[rules.Model]
    casualties: list[rules.Model]
    gone: dict[str, rules.Model]
    questions: list[tuple[rules.Model, list[rules.Model], float]]


def judge_fates(
    previous: Sequence[rules.Model],
    gone: Mapping[str, rules.Model],
    reach: Sequence[float],
    matched: set[str],
    fresh: Sequence[rules.Model],
    unit_moves: Mapping[str, GroupMove],
    stays: Sequence[bool],
    changed: Mapping[str, float] | None,
    detected: Sequence[rules.Model],
    settings: ReviewSettings,
    base_there: BaseThere | None = None,
) -> Fates:
    """The models of the state before (``previous``, with their ``reach`` and whether each ``stays``) that no detection
    was paired with (``matched`` ids were), beside the unseen ones (``gone``): where nothing changed at a model's place
    and its unit did not carry it off it is still there; where its place changed, no new base of its size appeared
    (``fresh``) within its reach and its unit did not move (``unit_moves``), its place was seen empty: a casualty.
    Otherwise it is unseen, carried with its unit's move. A new base of its size it was not paired with is a question, a
    casualty's too (it may have been moved farther than it may go). A model already unseen is judged only where the
    picture (``changed``: model id -> share of its place that changed; None: pictures not compared) changed more
    than ``unseen_gone_share`` of its place and no base ``detected`` now stands on it: the light, a neighbour's
    shadow or its figure change a part of a place no base was read at; a base taken off changes all of it. Nor is a
    model taken off where ``base_there`` gives at least ``gone_max_probability`` for a base of its size at its place: it
    stands there, and the detector did not find it."""
    out = Fates([], [], dict(gone), [])
    for p, r, stayed in zip(previous, reach, stays, strict=False):
        if p.id in matched:
            continue
        if stayed:
            # nothing changed where it stands: it is still there, the detector missed it
            out.still_seen.append(p)
            continue
        _judge_lost(p, r, fresh, unit_moves, changed is not None, settings, out, base_there)
    if changed is not None:
        for j, p in enumerate(gone.values(), start=len(previous)):
            if p.id in matched or changed.get(p.id, 0.0) <= settings.unseen_gone_share:
                continue
            if p.unit in unit_moves or _stands_on(p, detected):
                continue
            del out.gone[p.id]
            _judge_lost(p, reach[j], fresh, unit_moves, True, settings, out, base_there)
    return out


def _judge_lost(
    p: rules.Model,
    r: float,
    fresh: Sequence[rules.Model],
    unit_moves: Mapping[str, GroupMove],
    pictures_compared: bool,
    settings: ReviewSettings,
    out: Fates,
    base_there: BaseThere | None = None,
) -> None:
    """Record in ``out`` what became of ``p``, not found, whose place changed (see :func:`judge_fates`)."""
    # a base read a size off could be it too, but a casualty is judged on bases of its own size: with the
    # sizes the detector confuses, every model taken off would have some base of a size near it somewhere
    alike = [m for m, same in zip(fresh, size_agreement(fresh, [p], settings)[0][:, 0], strict=True) if same]
    # a base beyond where it could have gone is not it: its place was seen empty all the same
    reachable = [m for m in alike if math.hypot(m.x_mm - p.x_mm, m.y_mm - p.y_mm) <= r]
    # its unit moved: it left its place with them, and the detector missed it where it went; a base still seen at its
    # place (the finder sure of one the detector did not read) is it, not a place seen empty
    if (
        pictures_compared
        and not reachable
        and p.unit not in unit_moves
        and (
            base_there is None
            or settings.gone_max_probability >= 1
            or base_there(p.x_mm, p.y_mm, size_mm(p)) < settings.gone_max_probability
        )
    ):
        out.casualties.append(p)
        # ... unless it was moved farther than it may go: that is the player's to answer
        if alike:
            out.questions.append((p, alike, r))
        return
    # its unit moved as a unit: it went with them, unseen at its place in the group
    x, y = unit_moves.get(p.unit or "", GroupMove()).place(p.x_mm, p.y_mm)
    out.gone[p.id] = replace(p, x_mm=x, y_mm=y)
    if alike:
        out.questions.append((p, alike, r))


def _stands_on(p: rules.Model, detected: Sequence[rules.Model]) -> bool:
    """Whether a base ``detected`` stands on ``p``'s place (their centres nearer than the larger radius; a neighbour in
    contact stands farther): the place changed because a base came there, not because ``p`` left."""
    radius = min(p.base.semi_axes_mm)
    return any(math.hypot(m.x_mm - p.x_mm, m.y_mm - p.y_mm) < max(radius, min(m.base.semi_axes_mm)) for m in detected)
