"""Rule profiles: the numbers of one game's rules, as data.

A profile is a TOML file. Every profile starts from ``profiles/defaults.toml`` (the one place defaults live) and
names only what it changes; a user's file may also say ``extends = "legion"`` to start from a built-in profile.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any

from rules.errors import ProfileError
from rules.state import MAX_LENGTH, read_text

COHESION_MODES = ("chain", "leader", "none")
MOVEMENT_MODES = ("skirmish", "legion", "none")
_DEFAULTS = "defaults"
# The least value of each number of a profile: below it a rule would count gaps from the wrong side, or index
# past a unit's neighbours. [overlap] gap_mm has its own check (an overlap depth, <= 0). Every number is at most
# MAX_LENGTH in size, as a state's lengths are: far beyond any rule, and short of what overflows a gap's square or
# the calls' ratios (a range of 1e308 mm did).
_AT_LEAST: dict[str, int] = {
    "engagement.range_mm": 0,
    "contact.gap_mm": 0,
    "cohesion.range_mm": 0,
    "cohesion.neighbours": 1,
    "cohesion.large_unit_size": 0,
    "cohesion.large_unit_neighbours": 1,
    "placement.off_table_mm": 0,
    "placement.off_top_mm": 0,
    "calls.close_sigmas": 0,
    "movement.charge_fraction": 0,
    "movement.advance_moves": 0,
    "movement.dense_segment_cost_mm": 0,
    "movement.climb_min_height_mm": 0,
    "movement.climb_move_fraction": 0,
    "movement.climb_down_move_fraction": 0,
    "movement.still_mm": 0,
    "movement.melee_reach_moves": 0,
}


@dataclass(frozen=True)
class Engagement:
    range_mm: float


@dataclass(frozen=True)
class Contact:
    gap_mm: float


@dataclass(frozen=True)
class Cohesion:
    mode: str
    range_mm: float
    neighbours: int
    large_unit_size: int
    large_unit_neighbours: int

    def neighbours_needed(self, unit_size: int) -> int:
        """How many unit-mates a model must be within range of, in a unit of ``unit_size`` models."""
        if self.large_unit_size > 0 and unit_size >= self.large_unit_size:
            return self.large_unit_neighbours
        return self.neighbours


@dataclass(frozen=True)
class Overlap:
    gap_mm: float


@dataclass(frozen=True)
class MultiContact:
    enabled: bool


@dataclass(frozen=True)
class Placement:
    off_table_mm: float
    off_top_mm: float


@dataclass(frozen=True)
class Calls:
    close_sigmas: float


@dataclass(frozen=True)
class Movement:
    mode: str
    charge_fraction: float
    advance_moves: float
    dense_segment_cost_mm: float
    climb_min_height_mm: float
    climb_move_fraction: float
    climb_down_move_fraction: float
    still_mm: float
    melee_reach_moves: float


@dataclass(frozen=True)
class Bases:
    """The round base diameters (mm) the game's models stand on; empty: any size."""

    round_mm: tuple[float, ...]


@dataclass(frozen=True)
class RuleProfile:
    """One game's rule numbers. Gaps are edge to edge in millimetres; "within X" means gap <= X."""

    name: str
    title: str
    engagement: Engagement
    contact: Contact
    cohesion: Cohesion
    overlap: Overlap
    multi_contact: MultiContact
    placement: Placement
    calls: Calls
    movement: Movement
    bases: Bases

    def limits(self) -> dict[str, float]:
        """The lines a judge measures against, by name, in millimetres."""
        out = {"engagement": self.engagement.range_mm, "base_contact": self.contact.gap_mm}
        if self.cohesion.mode != "none":
            out["cohesion"] = self.cohesion.range_mm
        return out


_SECTIONS: dict[str, type] = {
    "engagement": Engagement,
    "contact": Contact,
    "cohesion": Cohesion,
    "overlap": Overlap,
    "multi_contact": MultiContact,
    "placement": Placement,
    "calls": Calls,
    "movement": Movement,
    "bases": Bases,
}


def builtin_profiles() -> list[str]:
    """Names of the profiles shipped with tableref."""
    names = [p.name[:-5] for p in resources.files("rules.profiles").iterdir() if p.name.endswith(".toml")]
    return sorted(n for n in names if n != _DEFAULTS)


def _read_builtin(name: str) -> dict[str, Any]:
    return tomllib.loads(resources.files("rules.profiles").joinpath(f"{name}.toml").read_text("utf-8"))


def _read_file(path: Path) -> dict[str, Any]:
    text = read_text(path, "a rule profile TOML file", ProfileError)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:
        # the parser recurses once per level: a hostile file nests deeper than Python's stack
        raise ProfileError(f"{path}: TOML nested too deep to read; expected a rule profile TOML file") from None


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def _coerce(section: str, cls: type, raw: Any, where: str) -> Any:
    if not isinstance(raw, dict):
        raise ProfileError(f"{where}: [{section}] must be a table")
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ProfileError(f"{where}: [{section}] has unknown keys {unknown}; expected {sorted(known)}")
    values: dict[str, Any] = {}
    for name, f in known.items():
        if name not in raw:
            raise ProfileError(f"{where}: [{section}] is missing {name!r}")
        value = raw[name]
        expected = f.type
        if expected == "tuple[float, ...]":
            values[name] = _lengths(value, f"{where}: [{section}] {name}")
            continue
        ok = (
            (expected == "bool" and isinstance(value, bool))
            or (expected == "int" and isinstance(value, int) and not isinstance(value, bool))
            or (expected == "float" and isinstance(value, int | float) and not isinstance(value, bool))
            or (expected == "str" and isinstance(value, str))
        )
        if not ok:
            raise ProfileError(f"{where}: [{section}] {name} must be a {expected}, got {value!r}")
        if expected in ("int", "float"):
            _check_number(value, _AT_LEAST.get(f"{section}.{name}"), f"{where}: [{section}] {name}")
        values[name] = float(value) if expected == "float" else value
    return cls(**values)


def _lengths(value: Any, label: str) -> tuple[float, ...]:
    """``value``, a TOML list of positive lengths, as a tuple of floats."""
    if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int | float) for v in value):
        raise ProfileError(f"{label} must be a list of lengths in mm, got {value!r}")
    for v in value:
        _check_number(v, 0, label)
        if v == 0:
            raise ProfileError(f"{label} must list positive lengths, got {value!r}")
    return tuple(float(v) for v in value)


def _check_number(value: float, least: int | None, label: str) -> None:
    # TOML spells nan and inf; either would turn every comparison with a gap into a silent "no".
    if isinstance(value, float) and not math.isfinite(value):
        raise ProfileError(f"{label} must be a finite number, got {value!r}")
    if abs(value) > MAX_LENGTH:
        shown = f"one of {len(str(value))} digits" if isinstance(value, int) else f"{value!r}"
        raise ProfileError(f"{label} must be a number of at most {MAX_LENGTH:g} in size, got {shown}")
    if least is not None and value < least:
        expected = "must not be negative" if least == 0 else f"must be at least {least}"
        raise ProfileError(f"{label} {expected}, got {value!r}")


def profile_from_dict(data: dict[str, Any], where: str = "profile") -> RuleProfile:
    """Build a profile from parsed TOML that already holds every section (defaults merged in)."""
    unknown = sorted(set(data) - set(_SECTIONS) - {"name", "title", "extends"})
    if unknown:
        raise ProfileError(f"{where}: unknown keys {unknown}; expected name, title and [{'], ['.join(_SECTIONS)}]")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ProfileError(f"{where}: missing name (a string)")
    title = data.get("title", name)
    if not isinstance(title, str):
        raise ProfileError(f"{where}: title must be a string, got {title!r}")
    sections = {s: _coerce(s, cls, data.get(s), where) for s, cls in _SECTIONS.items()}
    profile = RuleProfile(name=name, title=title, **sections)
    if profile.cohesion.mode not in COHESION_MODES:
        raise ProfileError(
            f"{where}: [cohesion] mode {profile.cohesion.mode!r} is not one of {', '.join(COHESION_MODES)}"
        )
    if profile.movement.mode not in MOVEMENT_MODES:
        raise ProfileError(
            f"{where}: [movement] mode {profile.movement.mode!r} is not one of {', '.join(MOVEMENT_MODES)}"
        )
    if profile.overlap.gap_mm > 0:
        raise ProfileError(f"{where}: [overlap] gap_mm is an overlap depth and must be <= 0")
    return profile


def load_profile(name_or_path: str | Path) -> RuleProfile:
    """A built-in profile by name (``skirmish``, ``legion``, ``40k``, ``killteam``) or a profile TOML file.

    Raises :class:`ProfileError` naming the profile and what was expected.
    """
    text = str(name_or_path)
    chain: list[tuple[str, dict[str, Any]]] = []
    if text in builtin_profiles():
        chain.append((text, _read_builtin(text)))
    elif text.endswith(".toml") or Path(text).exists():
        data = _read_file(Path(text))
        chain.append((text, data))
        parent = data.get("extends")
        if parent is not None:
            if not isinstance(parent, str) or parent not in builtin_profiles():
                raise ProfileError(
                    f"{text}: extends {parent!r}, which is not a built-in profile ({', '.join(builtin_profiles())})"
                )
            chain.append((parent, _read_builtin(parent)))
    else:
        raise ProfileError(f"unknown profile {text!r}: expected one of {', '.join(builtin_profiles())} or a .toml file")
    merged = _read_builtin(_DEFAULTS)
    for _, data in reversed(chain):
        merged = _merge(merged, data)
    return profile_from_dict(merged, where=chain[0][0])
