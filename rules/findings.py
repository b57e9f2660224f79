"""Findings: what the referee reports about a table state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The kinds of finding, in the order reports list them.
KINDS = (
    "unseen",
    "engaged",
    "cohesion",
    "overlap",
    "multi_contact",
    "off_table",
    "in_terrain",
    "illegal_move",
    "melee",
)

CLEAR = "clear"
CLOSE = "close"

#: Why a call is open beyond the measurement itself: a model it depends on is not seen.
UNSEEN = "unseen"

# Reports round millimetres to a micrometre: finer digits are float noise, not measurement.
_REPORT_DECIMALS = 3


@dataclass(frozen=True)
class Finding:
    """One thing the referee flags.

    ``gap_mm`` is the measured edge-to-edge gap behind the call and ``limit_mm`` the line it was judged against;
    ``sigma_mm`` is the 1-sigma uncertainty of that gap. ``call`` is ``clear`` when the measurement excludes the
    other side of the line and ``close`` when it cannot tell; ``reason`` says why a call is open beyond the
    measurement (``unseen``: a model it depends on is not seen). An ``unseen`` finding lists a unit's models the
    state does not show, with ``last_seen_mm`` ((id, x_mm, y_mm), ...) where each was last seen. A ``melee``
    finding is a step of moving into melee left undone: ``step`` names the step (see :mod:`rules.melee`) and
    ``spot_mm`` (x_mm, y_mm), when one existed, the free spot in base contact the model could have taken.
    """

    kind: str
    models: tuple[str, ...]
    units: tuple[str, ...] = ()
    unit: str | None = None
    gap_mm: float | None = None
    limit_mm: float | None = None
    sigma_mm: float | None = None
    call: str | None = None
    terrain: str | None = None
    reason: str | None = None
    last_seen_mm: tuple[tuple[str, float, float], ...] = ()
    step: str | None = None
    spot_mm: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.unit is not None:
            out["unit"] = self.unit
        if self.units:
            out["units"] = list(self.units)
        out["models"] = list(self.models)
        for key in ("gap_mm", "limit_mm", "sigma_mm"):
            value = getattr(self, key)
            if value is not None:
                out[key] = round(float(value), _REPORT_DECIMALS)
        if self.call is not None:
            out["call"] = self.call
        if self.terrain is not None:
            out["terrain"] = self.terrain
        if self.reason is not None:
            out["reason"] = self.reason
        if self.last_seen_mm:
            out["last_seen_mm"] = {
                m: [round(x, _REPORT_DECIMALS), round(y, _REPORT_DECIMALS)] for m, x, y in self.last_seen_mm
            }
        if self.step is not None:
            out["step"] = self.step
        if self.spot_mm is not None:
            out["spot_mm"] = [round(float(c), _REPORT_DECIMALS) for c in self.spot_mm]
        return out

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Finding:
        def opt_float(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else float(value)

        spot = data.get("spot_mm")
        return Finding(
            kind=str(data["kind"]),
            models=tuple(data.get("models", ())),
            units=tuple(data.get("units", ())),
            unit=data.get("unit"),
            gap_mm=opt_float("gap_mm"),
            limit_mm=opt_float("limit_mm"),
            sigma_mm=opt_float("sigma_mm"),
            call=data.get("call"),
            terrain=data.get("terrain"),
            reason=data.get("reason"),
            last_seen_mm=tuple((str(m), float(p[0]), float(p[1])) for m, p in data.get("last_seen_mm", {}).items()),
            step=data.get("step"),
            spot_mm=None if spot is None else (float(spot[0]), float(spot[1])),
        )


def findings_document(profile_name: str, findings: list[Finding]) -> dict[str, Any]:
    """The JSON document ``tableref check --json`` prints."""
    return {"profile": profile_name, "findings": [f.to_dict() for f in findings]}
