"""Rules of tabletop wargames as pure queries on a table state in millimetres.

The one verb is :func:`check`: a state and a rule profile in, every finding out; :func:`check_moves` judges the
moves between two states, and :func:`place_melee` proposes the rest of a melee. Knows nothing of cameras.
"""

from rules.actions import PLAN_NAMES, Activation
from rules.check import check
from rules.errors import ActionError, MeleeError, ProfileError, RulesError, StateError
from rules.findings import CLEAR, CLOSE, KINDS, UNSEEN, Finding, findings_document
from rules.geometry import BaseArrays
from rules.measure import LineVerdict, Measurement, judge_line, measure, pair_gap
from rules.melee import MeleeProposal, MeleeStep, place_melee
from rules.movement import ModelMove, UnitMove, check_moves, move_findings, moves_document
from rules.profile import RuleProfile, builtin_profiles, load_profile
from rules.state import (
    Model,
    OvalBase,
    RoundBase,
    Table,
    TableState,
    Terrain,
    Unit,
    base_from_dict,
    dump_state,
    load_state,
    read_json,
    state_from_dict,
    state_to_dict,
)

__all__ = [
    "CLEAR",
    "CLOSE",
    "KINDS",
    "PLAN_NAMES",
    "UNSEEN",
    "ActionError",
    "Activation",
    "BaseArrays",
    "Finding",
    "LineVerdict",
    "Measurement",
    "MeleeError",
    "MeleeProposal",
    "MeleeStep",
    "Model",
    "ModelMove",
    "OvalBase",
    "ProfileError",
    "RoundBase",
    "RuleProfile",
    "RulesError",
    "StateError",
    "Table",
    "TableState",
    "Terrain",
    "Unit",
    "UnitMove",
    "base_from_dict",
    "builtin_profiles",
    "check",
    "check_moves",
    "dump_state",
    "findings_document",
    "judge_line",
    "load_profile",
    "load_state",
    "measure",
    "move_findings",
    "moves_document",
    "pair_gap",
    "place_melee",
    "read_json",
    "state_from_dict",
    "state_to_dict",
]
