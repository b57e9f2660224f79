"""Helpers shared by the rules tests: building states and comparing findings."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import rules

TABLE = {"width_mm": 1829.0, "depth_mm": 1219.0}


def model(
    model_id: str,
    unit: str | None,
    x_mm: float,
    y_mm: float,
    diameter_mm: float | None = 32.0,
    oval: tuple[float, float, float] | None = None,
    sigma_mm: float = 0.0,
) -> dict[str, Any]:
    base = {"width_mm": oval[0], "depth_mm": oval[1], "rotation_deg": oval[2]} if oval else {"diameter_mm": diameter_mm}
    return {"id": model_id, "unit": unit, "x_mm": x_mm, "y_mm": y_mm, "base": base, "sigma_mm": sigma_mm}


def state_of(models: list[dict[str, Any]], units: list[dict[str, Any]], **extra: Any) -> rules.TableState:
    return rules.state_from_dict({"table": extra.pop("table", TABLE), "units": units, "models": models, **extra})


def canonical(findings: list[rules.Finding]) -> list[tuple[Any, ...]]:
    """Findings as sortable tuples, pair order ignored, gaps rounded to a micrometre."""
    out = []
    for f in findings:
        gap = None if f.gap_mm is None else round(f.gap_mm, 3)
        out.append((f.kind, tuple(sorted(f.models)), tuple(sorted(f.units)), f.unit, gap, f.call, f.terrain))
    return sorted(out, key=repr)


@pytest.fixture(params=rules.builtin_profiles())
def any_profile(request: pytest.FixtureRequest) -> rules.RuleProfile:
    return rules.load_profile(request.param)


def moved(state: rules.TableState, **positions: tuple[float, float]) -> rules.TableState:
    models = tuple(
        dataclasses.replace(m, x_mm=positions[m.id][0], y_mm=positions[m.id][1]) if m.id in positions else m
        for m in state.models
    )
    return dataclasses.replace(state, models=models)


def duel(abilities: list[str], enemy_x: float = 1500.0, extra: list[dict[str, Any]] | None = None, **kw: Any):  # type: ignore[no-untyped-def]
    units = [
        {"id": "red", "player": "A", "move_in": 6, "abilities": abilities},
        {"id": "blue", "player": "B", "move_in": 6},
        {"id": "wall", "player": "A", "move_in": 6},
    ]
    models = [model("r1", "red", 300.0, 600.0, 32, **kw), model("b1", "blue", enemy_x, 600.0, 32)]
    return state_of(models + (extra or []), units)
