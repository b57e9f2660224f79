"""What a unit declared for its activation: the plan of its move, and whether its Attack Action was already used.

The skirmish seed: a unit may Move; a rule or ability may give it a Charge, which is not an Action and uses
neither the normal movement nor the Attack Action, so it may come on its own or beside a Move; an Advance is a
further Move that uses the Attack Action.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rules.errors import ActionError
from rules.state import read_json


@dataclass(frozen=True)
class Plan:
    """One reading of a unit's move: which of the normal Move, an Advance and a Charge it used."""

    name: str
    move: bool
    advance: bool
    charge: bool


# Cheapest first: an undeclared move is judged by the first plan that makes it legal. A Charge on its own comes
# after the Move because whatever it allows, a Move allows too; only a declared one is ever judged by it.
PLANS: tuple[Plan, ...] = (
    Plan("move", move=True, advance=False, charge=False),
    Plan("charge-only", move=False, advance=False, charge=True),
    Plan("charge", move=True, advance=False, charge=True),
    Plan("advance", move=True, advance=True, charge=False),
    Plan("advance+charge", move=True, advance=True, charge=True),
)
PLAN_NAMES = tuple(p.name for p in PLANS)
_LONG_FORM_KEYS = ("action", "attack_used")


@dataclass(frozen=True)
class Activation:
    """A unit's declared activation: ``action`` one of :data:`PLAN_NAMES` (None: not declared, judged by the
    cheapest legal plan); ``attack_used`` when its Attack Action was used before this move."""

    action: str | None = None
    attack_used: bool = False


def _known_action(name: Any, where: str) -> str:
    if not isinstance(name, str) or name not in PLAN_NAMES:
        raise ActionError(f"{where}: unknown action {name!r}; expected one of {', '.join(PLAN_NAMES)}")
    return name


def activation_from(value: Any, where: str) -> Activation:
    """One unit's entry: a plan name, an :class:`Activation`, or ``{"action": NAME, "attack_used": BOOL}`` (either
    key may be left out). Raises :class:`ActionError` naming ``where``."""
    if isinstance(value, Activation):
        return Activation(None if value.action is None else _known_action(value.action, where), value.attack_used)
    if isinstance(value, str):
        return Activation(_known_action(value, where))
    if not isinstance(value, Mapping):
        raise ActionError(
            f"{where}: expected an action name ({', '.join(PLAN_NAMES)}) or an object with "
            f"{' and '.join(_LONG_FORM_KEYS)}, got {type(value).__name__}"
        )
    unknown = sorted(set(value) - set(_LONG_FORM_KEYS))
    if unknown:
        raise ActionError(f"{where}: unknown keys {unknown}; expected {', '.join(_LONG_FORM_KEYS)}")
    action = value.get("action")
    attack_used = value.get("attack_used", False)
    if not isinstance(attack_used, bool):
        raise ActionError(f"{where}: attack_used must be true or false, got {attack_used!r}")
    return Activation(None if action is None else _known_action(action, where), attack_used)


def activations_from(data: Any, where: str = "actions") -> dict[str, Activation]:
    """Every unit's activation from an actions mapping (unit id to entry, see :func:`activation_from`)."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ActionError(f"{where}: expected an object mapping unit ids to actions, got {type(data).__name__}")
    return {str(unit): activation_from(value, f"{where}[{str(unit)!r}]") for unit, value in data.items()}


def read_actions(path: str | Path) -> dict[str, Any]:
    """The entries of an actions JSON file (unit id to a plan name or ``{"action": ..., "attack_used": ...}``), each
    checked as :func:`activations_from` checks it and kept as written (so that they can be stored as JSON again).
    Raises :class:`ActionError` or :class:`rules.StateError` naming the file."""
    data = read_json(path, expected="an actions JSON file (unit ids to actions)")
    if not isinstance(data, Mapping):
        # null too: a file says what each unit did (only a caller's None means "none declared")
        got = "null" if data is None else type(data).__name__
        raise ActionError(f"{Path(path)}: expected an object mapping unit ids to actions, got {got}")
    try:
        activations_from(data)
    except ActionError as exc:
        raise ActionError(f"{Path(path)}: {exc}") from None
    return {str(unit): entry for unit, entry in data.items()}
