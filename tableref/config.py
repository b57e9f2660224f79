"""The settings loader: every stage's settings (:class:`tableref.settings.Settings`) from TOML.
``tableref/defaults.toml`` holds every default (the one place they live); a user's file overrides any of them,
section by section.

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

from tableref.settings import Settings

T = TypeVar("T")
# Whole numbers beyond this lose digits as floats (and overflow them far beyond).
_LARGEST = 2**53
# A value quoted in a message is cut to this many characters.
_SHOWN_CHARS = 40


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
    return text if len(text) <= _SHOWN_CHARS else f"a number of {len(text)} digits"


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
    values = {n: _check_value(raw[n], hints[n], f"[{where}] {n}") for n in names}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        _check_range(values[f.name], f.metadata, f"[{where}] {f.name}")
    return cls(**values)


def _merge(base: dict[str, Any], top: dict[str, Any], where: str) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if key not in out:
            raise ConfigError(f"{where}: unknown setting {key!r}; known: {sorted(base)}")
        out[key] = _merge(out[key], value, f"{where}.{key}") if isinstance(value, dict) else value
    return out


def default_settings() -> dict[str, Any]:
    """The parsed defaults file."""
    return tomllib.loads(resources.files("tableref").joinpath("defaults.toml").read_text("utf-8"))


def _settings_data(path: str | Path | None) -> dict[str, Any]:
    """The defaults, merged with the user's TOML file at ``path`` if given."""
    data = default_settings()
    if path is not None:
        p = Path(path)
        try:
            user = tomllib.loads(p.read_text("utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{p}: no such settings file") from None
        except IsADirectoryError:
            raise ConfigError(f"{p}: is a folder; expected a settings TOML file") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{p}: not text (not UTF-8); expected a settings TOML file") from None
        except OSError as exc:
            raise ConfigError(f"{p}: cannot read it ({exc.strerror or exc}); expected a settings TOML file") from None
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
