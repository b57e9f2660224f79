"""The findings panel's groups: the findings about one set of units (a pair engaged with each other, or one unit out
of cohesion, its models not seen, ...) together, the strongest group first.

A finding belongs to the units it names (``units``, ``unit``) and to the units of its models; a finding about
models of no unit is grouped with the other findings of no unit. Strongest first means: what is illegal, then
engagements, then cohesion, then what the camera does not see; within each, clear calls before open ones; a group
is as strong as its strongest finding, and among equals the group of the finding listed first comes first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import rules

# How strong a kind of finding is: lower first. A kind not named here comes last.
KIND_RANK = {
    "illegal_move": 0,
    "overlap": 1,
    "off_table": 1,
    "in_terrain": 1,
    "multi_contact": 1,
    "melee": 1,
    "engaged": 2,
    "cohesion": 3,
    "unseen": 4,
}
_LAST = max(KIND_RANK.values()) + 1


def finding_rank(finding: rules.Finding) -> int:
    """The finding's strength, lower first: its kind's rank, an open call after a clear one of the same kind."""
    return KIND_RANK.get(finding.kind, _LAST) * 2 + (finding.call == rules.CLOSE)


@dataclass(frozen=True)
class FindingGroup:
    """The findings about ``units`` (state order; empty: models of no unit), as indices into the findings list,
    strongest first; ``models`` every model they name, in that order."""

    units: tuple[str, ...]
    findings: tuple[int, ...]
    rank: int
    models: tuple[str, ...]
    call: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "units": list(self.units),
            "findings": list(self.findings),
            "rank": self.rank,
            "models": list(self.models),
            "call": self.call,
        }


def _units_of(finding: rules.Finding, unit_of: dict[str, str | None], order: dict[str, int]) -> tuple[str, ...]:
    named = [*finding.units, *([finding.unit] if finding.unit else []), *(unit_of.get(m) for m in finding.models)]
    units = {u for u in named if u}
    return tuple(sorted(units, key=lambda u: (order.get(u, len(order)), u)))


def group_findings(findings: Sequence[rules.Finding], state: rules.TableState) -> list[FindingGroup]:
    """The findings grouped by the units they are about, the strongest group first."""
    unit_of = {m.id: m.unit for m in (*state.models, *state.unseen)}
    order = {u.id: k for k, u in enumerate(state.units)}
    members: dict[tuple[str, ...], list[int]] = {}
    for k, f in enumerate(findings):
        members.setdefault(_units_of(f, unit_of, order), []).append(k)
    groups = []
    for units, indices in members.items():
        ranked = sorted(indices, key=lambda k: (finding_rank(findings[k]), k))
        models = tuple(dict.fromkeys(m for k in ranked for m in findings[k].models))
        first = findings[ranked[0]]
        groups.append(FindingGroup(units, tuple(ranked), finding_rank(first), models, first.call or rules.CLEAR))
    return sorted(groups, key=lambda g: (g.rank, g.findings[0]))
