"""The judge's measurement for the API and the report: ``rules.measure`` (the code ``tableref measure`` uses),
with inches beside millimetres and the profile it was judged by."""

from __future__ import annotations

from typing import Any

import rules
from webui.errors import ApiError

MM_PER_INCH = 25.4
# Reported lengths are rounded to a micrometre, as findings are: finer digits are float noise.
REPORT_DECIMALS = 3


def measurement_dict(m: rules.Measurement, profile: rules.RuleProfile) -> dict[str, Any]:
    """JSON of a measurement: gap and sigma in mm and inches, and each line's verdict with its limit in both."""

    def both(mm: float, key: str) -> dict[str, float]:
        return {f"{key}_mm": round(mm, REPORT_DECIMALS), f"{key}_in": round(mm / MM_PER_INCH, REPORT_DECIMALS)}

    return {
        "a": m.a,
        "b": m.b,
        **both(m.gap_mm, "gap"),
        **both(m.sigma_mm, "sigma"),
        "profile": profile.name,
        "close_sigmas": profile.calls.close_sigmas,
        "verdicts": [
            {"line": v.line, **both(v.limit_mm, "limit"), "within": v.within, "call": v.call} for v in m.verdicts
        ],
    }


def measure(state: rules.TableState, profile: rules.RuleProfile, a: str, b: str) -> rules.Measurement:
    """``rules.measure`` with an unknown or repeated model id turned into a 400 answer."""
    try:
        return rules.measure(state, a, b, profile)
    except rules.StateError as exc:
        raise ApiError(str(exc)) from None
