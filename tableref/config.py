"""The settings loader: every stage's settings (:class:`tableref.settings.Settings`) from TOML.
Each default lives in one place: the calibration and vision stages' in their own ``defaults.toml`` beside their
settings, the rest in ``tableref/defaults.toml``; a user's file overrides any of them, section by section.

Each stage declares its settings as a frozen dataclass with no defaults of its own; a section of the TOML file
fills it, and a key that the dataclass does not know, or a missing one, is an error that names it.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
import types
import typing
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from rules.state import read_text
from tableref.settings import Settings

T = TypeVar("T")
# Whole numbers beyond this lose digits as floats (and overflow them far beyond).
_LARGEST = 2**53
# A value quoted in a message is cut to this many characters.
_SHOWN_CHARS = 40


# The largest value of a setting, by the end of its name: far beyond what any table, camera or game needs, and near
# enough that no stage runs out of memory or time on it (a blur of 1e300 px, 1e20 iterations). The first end that
# fits counts; a setting of none of these ends is a count (a whole number, at most _MOST_COUNT) or a factor (at most
# _MOST).
_BOUNDS: tuple[tuple[str, float, str], ...] = (
    ("_bytes", 2_000_000_000, "bytes"),
    ("_pixels", 10**9, "pixels"),
    ("_px_per_mm", 1_000, "px per mm"),
    ("_side_px", 100_000, "px"),
    ("_thumb_px", 10_000, "px"),
    ("_blur_px", 100, "px"),
    ("_px", 10_000, "px"),
    ("_mm", 10_000, "mm"),
    ("_s", 86_400, "s"),
    ("_fps", 1_000, "frames per second"),
    # each ray is sampled round every candidate base: a few thousand of them hold gigabytes
    ("rays", 720, "rays"),
    # each pass or iteration runs over every candidate base: a few hundred already take minutes
    ("_passes", 100, "passes"),
    ("_iterations", 100, "iterations"),
)
_MOST = 10_000
_MOST_COUNT = 1_000
# Vision's lengths are about one base (the largest is 100 mm across): its searches and windows scale with them.
_SECTION_MOST_MM = {"vision": 1_000}
# The stages whose defaults live beside their settings (``<stage>/defaults.toml``); the rest are in
# ``tableref/defaults.toml``.
STAGES_WITH_DEFAULTS = ("calibration", "vision")


class ConfigError(ValueError):
    """A settings file that cannot be used: the message names the section and key."""


def _check_value(value: Any, annotation: Any, where: str) -> Any:
    origin = typing.get_origin(annotation)
    if annotation is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where} must be a number, got {value!r}")
        # TOML spells nan and inf, and whole numbers of any size: none of them is a usable setting.
        if (isinstance(value, int) and abs(value) > _LARGEST) or not math.isfinite(value):
            raise ConfigError(f"{where} must be a finite number, got {_shown(value)}")
        return float(value)
    if annotation is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where} must be a whole number, got {value!r}")
        return value
    if annotation is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if annotation is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where} must be a string, got {value!r}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise ConfigError(f"{where} must be a list, got {value!r}")
        (item,) = {a for a in typing.get_args(annotation) if a is not Ellipsis}
        return tuple(_check_value(v, item, f"{where}[{n}]") for n, v in enumerate(value))
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in typing.get_args(annotation):
            try:
                return _check_value(value, option, where)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0])
    raise ConfigError(f"{where}: unsupported setting type {annotation!r}")


def _shown(value: Any) -> str:
    text = repr(value)
    if len(text) <= _SHOWN_CHARS:
        return text
    return f"a number of {len(text)} digits" if isinstance(value, int) else f"{text[:_SHOWN_CHARS]}..."


def _check_range(value: float, meta: Mapping[str, Any], where: str) -> None:
    """The bounds set by ``tableref.settings.at_least`` or ``positive`` on a field."""
    if "low" not in meta:
        return
    low, high, above = meta["low"], meta["high"], meta["above"]
    if (value <= low if above else value < low) or (high is not None and value > high):
        if above:
            expected = f"more than {low:g}"
        elif high is None:
            expected = f"at least {low:g}"
        else:
            expected = f"from {low:g} to {high:g}"
        raise ConfigError(f"{where} must be {expected}, got {_shown(value)}")


def _check_bound(value: Any, name: str, section: str, where: str) -> None:
    """The upper bound of setting ``name`` by :data:`_BOUNDS` (each item of a list alike)."""
    whole = all(isinstance(v, int) for v in (value if isinstance(value, tuple) else (value,)))
    high, unit = float(_MOST_COUNT if whole else _MOST), ""
    for end, most, what in _BOUNDS:
        if name.endswith(end):
            high, unit = float(most), f" {what}"
            if end == "_mm":
                high = float(_SECTION_MOST_MM.get(section, most))
            break
    for item in value if isinstance(value, tuple) else (value,):
        if not isinstance(item, int | float) or isinstance(item, bool):
            continue
        if item > high:
            raise ConfigError(f"{where} must be at most {high:g}{unit}, got {_shown(item)}")
        if item < -high:
            raise ConfigError(f"{where} must be at least {-high:g}{unit}, got {_shown(item)}")


def section_from_dict(cls: type[T], raw: Any, where: str) -> T:
    """Fill settings dataclass ``cls`` from one TOML table; every field must be present, no other key."""
    if not isinstance(raw, dict):
        raise ConfigError(f"[{where}] must be a table")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    unknown = sorted(set(raw) - set(names))
    if unknown:
        raise ConfigError(f"[{where}] has unknown keys {unknown}; expected some of {names}")
    missing = [n for n in names if n not in raw]
    if missing:
        raise ConfigError(f"[{where}] is missing {missing}")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if dataclasses.is_dataclass(hints[f.name]):
            # a group of a stage's settings: its own table, [stage.group]
            values[f.name] = section_from_dict(hints[f.name], raw[f.name], f"{where}.{f.name}")
            continue
        values[f.name] = _check_value(raw[f.name], hints[f.name], f"[{where}] {f.name}")
        _check_range(values[f.name], f.metadata, f"[{where}] {f.name}")
        # a group's name is part of what a setting measures: circle.iterations are iterations
        named = f"{where.rpartition('.')[2]}_{f.name}" if "." in where else f.name
        _check_bound(values[f.name], named, where.partition(".")[0], f"[{where}] {f.name}")
    return cls(**values)


def _merge(base: dict[str, Any], top: dict[str, Any], where: str, section: str | None = None) -> dict[str, Any]:
    """``base`` with the values of ``top``; a key ``base`` lacks, a table where ``base`` holds a value, or a value
    where it holds a [section], is an error naming the key (``where``: the user's file)."""
    out = dict(base)
    for key, value in top.items():
        label = f"[{key}]" if section is None else f"[{section}] {key}"
        if key not in out:
            raise ConfigError(f"{where}: unknown setting {label}; {_known_keys(base, key, section)}")
        if isinstance(out[key], dict) != isinstance(value, dict):
            expected = "a table of settings" if isinstance(out[key], dict) else "a value, not a table"
            raise ConfigError(f"{where}: {label} must be {expected}, got {_shown(value)}")
        inner = key if section is None else f"{section}.{key}"
        out[key] = _merge(out[key], value, where, inner) if isinstance(value, dict) else value
    return out


def _known_keys(base: dict[str, Any], key: str, section: str | None) -> str:
    """What a section knows, for the message about an unknown ``key``: the group that holds a setting of that name
    (``finder_reach_mm`` or ``reach_mm`` where a group, ``[vision.finder]``, holds ``reach_mm``; a setting written
    outside any section, the section that holds it), or every key."""
    prefix = "" if section is None else f"{section}."
    homes = [
        f"[{prefix}{group}] {name}"
        for group, table in base.items()
        if isinstance(table, dict)
        for name in table
        if key in (name, f"{group}_{name}")
    ]
    if homes:
        return f"settings of this kind are in a table of their own: {', '.join(homes)}"
    return f"known: {sorted(base)}"


def default_settings() -> dict[str, Any]:
    """Every default: the app layer's file and each stage's own (its one section), as one parsed settings file."""
    app = tomllib.loads(resources.files("tableref").joinpath("defaults.toml").read_text("utf-8"))
    data: dict[str, Any] = {}
    for stage in STAGES_WITH_DEFAULTS:
        own = tomllib.loads(resources.files(stage).joinpath("defaults.toml").read_text("utf-8"))
        # each default lives in one place: a stage's file holds its own section and nothing else
        if set(own) != {stage} or stage in app:
            raise ConfigError(f"{stage}/defaults.toml: expected only a [{stage}] section, found {sorted(own)}")
        data[stage] = own[stage]
    return data | app


def _settings_data(path: str | Path | None) -> dict[str, Any]:
    """The defaults, merged with the user's TOML file at ``path`` if given."""
    data = default_settings()
    if path is not None:
        p = Path(path)
        text = read_text(p, "a settings TOML file", ConfigError)
        try:
            user = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{p}: not valid TOML ({exc})") from None
        except RecursionError:
            # the parser recurses once per level: a hostile file nests deeper than Python's stack
            raise ConfigError(f"{p}: TOML nested too deep to read; expected a settings TOML file") from None
        data = _merge(data, user, str(p))
    return data


def load_section(cls: type[T], name: str, path: str | Path | None = None) -> T:
    """One [name] section as settings dataclass ``cls``, for a package outside :class:`Settings` (nothing below it
    may import that package): defaults, overridden by the file at ``path``. Raises :class:`ConfigError`."""
    return section_from_dict(cls, _settings_data(path).get(name), name)


def load_config(path: str | Path | None = None) -> Settings:
    """Defaults, overridden by the TOML file at ``path`` if given. Raises :class:`ConfigError`."""
    data = _settings_data(path)
    hints = typing.get_type_hints(Settings)
    stages = {f.name: section_from_dict(hints[f.name], data.get(f.name), f.name) for f in dataclasses.fields(Settings)}
    return Settings(**stages)
