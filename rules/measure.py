"""The judge's measurement: the edge-to-edge gap of two models with its uncertainty, against every line of a
profile."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rules.errors import StateError
from rules.findings import CLEAR, CLOSE
from rules.geometry import BaseArrays
from rules.lines import judge, seen_gap_mm
from rules.profile import RuleProfile
from rules.state import TableState


@dataclass(frozen=True)
class LineVerdict:
    """One line: ``within`` is gap <= limit_mm (inclusive); ``call`` is ``close`` when the line lies within
    ``close_sigmas`` of the gap's sigma, so the measurement cannot tell which side it is on."""

    line: str
    limit_mm: float
    within: bool
    call: str


@dataclass(frozen=True)
class Measurement:
    """Edge-to-edge gap of models ``a`` and ``b`` (negative: overlap depth) and its 1-sigma uncertainty."""

    a: str
    b: str
    gap_mm: float
    sigma_mm: float
    verdicts: tuple[LineVerdict, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "a": self.a,
            "b": self.b,
            "gap_mm": round(self.gap_mm, 3),
            "sigma_mm": round(self.sigma_mm, 3),
            "verdicts": [
                {"line": v.line, "limit_mm": v.limit_mm, "within": v.within, "call": v.call} for v in self.verdicts
            ],
        }


def judge_line(
    line: str, gap_mm: float, sigma_mm: float, limit_mm: float, close_sigmas: float, solid: bool = False
) -> LineVerdict:
    """Whether a gap of ``gap_mm`` (1-sigma ``sigma_mm``) is within ``limit_mm``, and whether that can be told;
    ``solid`` judges two measured bases, whose true gap cannot be negative (:func:`rules.lines.judge`)."""
    verdict = judge(np.array([gap_mm]), limit_mm, np.array([sigma_mm]), close_sigmas, solid=solid)
    return LineVerdict(
        line=line,
        limit_mm=limit_mm,
        within=bool(verdict.met[0]),
        call=CLOSE if verdict.close[0] else CLEAR,
    )


def pair_gap(state: TableState, a: str, b: str) -> tuple[float, float]:
    """Edge-to-edge gap (mm) of models ``a`` and ``b`` and its 1-sigma uncertainty (mm).

    Raises :class:`StateError` when a model id is not in the state or both ids are the same model.
    """
    index = {m.id: n for n, m in enumerate(state.models)}
    unseen = {m.id: m for m in state.unseen}
    for model_id in (a, b):
        if model_id in unseen:
            m = unseen[model_id]
            raise StateError(
                f"model {model_id!r} is not seen in this state (last seen at x {m.x_mm:.1f} mm, y {m.y_mm:.1f} mm): "
                "a measurement needs both models in view"
            )
        if model_id not in index:
            known = ", ".join(sorted(index)) or "none"
            raise StateError(f"model {model_id!r} is not in the state (models: {known})")
    if a == b:
        raise StateError(f"measure two different models, got {a!r} twice")
    bases = BaseArrays.from_state(state)
    i, j = np.array([index[a]], dtype=np.intp), np.array([index[b]], dtype=np.intp)
    gap = float(bases.gaps_mm(i, j)[0])
    return gap, float(bases.pair_sigma_mm(i, j)[0])


def _lines_between(state: TableState, a: str, b: str, profile: RuleProfile) -> dict[str, float]:
    """The lines of ``profile`` that apply to models ``a`` and ``b``: engagement between enemies, cohesion within a
    unit, base contact always; every line where a model's unit (or a unit's player) is not known."""
    units = {u.id: u for u in state.units}
    ua, ub = (units.get(state.model(x).unit or "") for x in (a, b))
    lines = profile.limits()
    if ua is None or ub is None:
        return lines
    if ua.id != ub.id:
        lines.pop("cohesion", None)
    if ua.player is not None and ub.player is not None and ua.player == ub.player:
        lines.pop("engagement", None)
    return lines


def measure(state: TableState, a: str, b: str, profile: RuleProfile) -> Measurement:
    """Measure models ``a`` and ``b`` of ``state`` against every line of ``profile`` (``RuleProfile.limits``) that
    applies to them: engagement between enemies, cohesion within a unit, base contact always.

    Raises :class:`StateError` when a model id is not in the state or both ids are the same model.
    """
    gap, sigma = pair_gap(state, a, b)
    k = profile.calls.close_sigmas
    solid = state.measured
    lines = _lines_between(state, a, b, profile)
    verdicts = tuple(judge_line(line, gap, sigma, limit, k, solid) for line, limit in lines.items())
    return Measurement(a, b, float(seen_gap_mm(np.array([gap]), solid)[0]), sigma, verdicts)
