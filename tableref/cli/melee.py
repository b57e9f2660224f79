"""``tableref melee``: once a unit's leader is in base contact with an enemy model, propose the rest of the melee."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import rules
from rules.melee import OPPONENT_LEADER, OPPONENT_OTHERS, OTHERS
from tableref.cli.options import add_json_option, check_output, unfinished_removed
from tableref.errors import UsageError
from tableref.report import format_length

EXIT_OK = 0
# The melee procedure is the Legion seed's: the other profiles have none.
DEFAULT_PROFILE = "legion"


def _label(state: rules.TableState, unit_id: str) -> str:
    unit = state.unit(unit_id)
    return f"{unit.name} ({unit.id})" if unit.name else unit.id


def _step_line(step: rules.MeleeStep) -> str:
    where = f"({step.to_mm[0]:.1f}, {step.to_mm[1]:.1f}) mm"
    touching = f", in base contact with {step.touching}" if step.touching else ""
    if step.moved:
        return f"{step.model}: moves {format_length(step.distance_mm)} to {where}{touching} - {step.reason}"
    return f"{step.model}: stays at {where}{touching} - {step.reason}"


def format_proposal(profile: rules.RuleProfile, proposal: rules.MeleeProposal, source: str) -> str:
    """The proposal as text: the steps in the text's order, one line per model, inches first with millimetres
    beside."""
    state = proposal.state
    unit, enemy = _label(state, proposal.unit), _label(state, proposal.enemy)
    lines = [f"Profile: {profile.name}", f"Melee of {unit} with {enemy} in {source}"]
    titles = {
        OTHERS: f"1. The other models of {unit}, into base contact with {enemy}:",
        OPPONENT_LEADER: f"2. The leader of {enemy}, into base contact with {unit} unless it already is:",
        OPPONENT_OTHERS: f"3. The other models of {enemy}, into base contact with {unit}:",
    }
    for key, title in titles.items():
        steps = [s for s in proposal.steps if s.step == key]
        lines += ["", title]
        lines += [f"  {_step_line(s)}" for s in steps] or ["  (none)"]
    moved = sum(s.moved for s in proposal.steps)
    lines += ["", f"{moved} model{'' if moved == 1 else 's'} placed, {len(proposal.steps) - moved} staying."]
    if proposal.note:
        lines.append(f"note: {proposal.note}")
    return "\n".join(lines)


def _write(state: rules.TableState, path: str) -> None:
    try:
        with unfinished_removed(path):
            rules.dump_state(state, path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the proposed state ({exc.strerror or exc})") from None


def _cmd_melee(args: argparse.Namespace) -> int:
    if args.out is not None:
        check_output(args.out, "--out", "a table state JSON file to write")
    profile = rules.load_profile(args.profile)
    state = rules.load_state(args.state)
    proposal = rules.place_melee(state, args.unit, profile)
    if args.out is not None:
        _write(proposal.state, args.out)
    if args.json:
        print(json.dumps({"profile": profile.name, **proposal.to_dict()}, indent=2))
    else:
        print(format_proposal(profile, proposal, Path(args.state).name))
        if args.out is not None:
            print(f"Proposed state written to {args.out}")
    return EXIT_OK


def add_melee(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "melee",
        help="propose the rest of a melee once a unit's leader is in base contact",
        description="Once the leader of UNIT is in base contact with an enemy model, propose the placements the "
        "melee procedure asks for, step by step: UNIT's other models, then the opponent's leader, then the "
        "opponent's other models, each into base contact where a free spot in reach keeps it in cohesion, else in "
        "cohesion.",
    )
    p.add_argument("state", help="table state JSON with UNIT's leader in base contact with an enemy model")
    p.add_argument("unit", help="id of the unit that moved into melee")
    p.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help=f'rule profile with the melee procedure ([movement] mode "legion"): {DEFAULT_PROFILE} or a .toml file '
        f"(default: {DEFAULT_PROFILE})",
    )
    add_json_option(p, "the proposed steps as JSON")
    p.add_argument("--out", help="write the proposed table state to this JSON file")
    p.set_defaults(func=_cmd_melee)
