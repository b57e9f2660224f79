"""``tableref check-move``: judge the moves of every unit between two table states."""

from __future__ import annotations

import argparse
import json

import rules
from rules.actions import activations_from, read_actions
from tableref.cli.options import add_json_option, add_profile_option
from tableref.errors import UsageError
from tableref.report import format_length

EXIT_OK = 0


def load_actions(path: str | None) -> dict[str, rules.Activation] | None:
    """An actions file: unit ids to a plan name or ``{"action": NAME, "attack_used": BOOL}``; None without one."""
    if path is None:
        return None
    return activations_from(read_actions(path))


def format_moves(profile: rules.RuleProfile, moves: list[rules.UnitMove], before: str, after: str) -> str:
    """The verdicts as text: one block per unit that moved, inches first with millimetres beside."""
    lines = [f"Profile: {profile.name}", f"Moves from {before} to {after}", ""]
    if not moves:
        lines.append("No unit moved.")
    for m in moves:
        verdict = "legal" if m.legal else "ILLEGAL"
        action = m.action or "no action makes it legal"
        how = "declared" if m.declared else "judged"
        head = f"{m.unit}: {action} ({how}) - {verdict}, {m.call}"
        if m.allowance_mm is not None:
            head += f"; allowed {format_length(m.allowance_mm)}"
        if m.attack_action:
            head += "; uses the Attack Action"
        lines.append(head)
        if m.note:
            lines.append(f"  note: {m.note}")
        for p in m.problems:
            lines.append(f"  problem: {p}")
        for x in m.models:
            lines.append(
                f"  {x.model}: {format_length(x.distance_mm, x.sigma_mm)} straight, "
                + (f"{format_length(x.path_mm)} shortest legal path" if x.has_path else "no legal path")
            )
    return "\n".join(lines)


def _check_declared_units(actions: dict[str, rules.Activation] | None, after: rules.TableState, path: str) -> None:
    """A UsageError naming the units ``actions`` declares that the state has not: a misspelt id would leave its unit
    judged by the cheapest legal plan, as if nothing were declared."""
    known = [u.id for u in after.units]
    unknown = sorted(set(actions or {}) - set(known))
    if unknown:
        raise UsageError(
            f"{path}: actions for units not in the state: {', '.join(unknown)}; expected units of the state "
            f"({', '.join(known) or 'none'})"
        )


def _cmd_check_move(args: argparse.Namespace) -> int:
    profile = rules.load_profile(args.profile)
    before = rules.load_state(args.before)
    after = rules.load_state(args.after)
    actions = load_actions(args.actions)
    _check_declared_units(actions, after, args.actions)
    moves = rules.check_moves(before, after, profile, actions)
    if args.json:
        print(json.dumps(rules.moves_document(profile.name, moves), indent=2))
    else:
        print(format_moves(profile, moves, args.before, args.after))
    return EXIT_OK


def add_check_move(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "check-move",
        help="judge the moves between two table states",
        description="Judge every unit that moved between two table states: the action, the verdict and why.",
    )
    p.add_argument("before", help="table state JSON before the moves")
    p.add_argument("after", help="table state JSON after the moves")
    p.add_argument(
        "--actions",
        help='actions JSON: unit ids to "move", "charge-only", "charge", "advance" or "advance+charge", '
        'or to {"action": ..., "attack_used": true} (undeclared units: the cheapest legal plan)',
    )
    add_profile_option(p)
    add_json_option(p, "the move verdicts as JSON")
    p.set_defaults(func=_cmd_check_move)
