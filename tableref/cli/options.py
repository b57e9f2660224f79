"""Command-line options that several commands share: one wording and one default each."""

from __future__ import annotations

import argparse

import rules

DEFAULT_PROFILE = "skirmish"


def add_table_options(p: argparse.ArgumentParser, camera: bool = True) -> None:
    """``--table SPEC`` and (unless ``camera`` is false) ``--camera camera.json``."""
    p.add_argument("--table", help="table spec TOML (default: the bundled 6'x4' table with 8 markers)")
    if camera:
        p.add_argument("--camera", help="camera.json from `tableref calibrate-camera` (corrects the lens)")


def add_config_option(p: argparse.ArgumentParser, section: str | None = None) -> None:
    """``--config SETTINGS.toml``; ``section`` names the part of the settings the command reads."""
    where = f"tableref's defaults ([{section}] section)" if section else "tableref/defaults.toml"
    p.add_argument("--config", help=f"settings TOML overriding {where}")


def add_profile_option(p: argparse.ArgumentParser) -> None:
    """``--profile NAME|FILE.toml``, the skirmish profile by default."""
    p.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help=f"rule profile: {', '.join(rules.builtin_profiles())} or a .toml file (default: {DEFAULT_PROFILE})",
    )


def add_roster_options(p: argparse.ArgumentParser, required: bool, roster_help: str) -> None:
    """``--roster STATE.json`` (described by ``roster_help``) and ``--profile``."""
    p.add_argument("--roster", required=required, help=roster_help)
    add_profile_option(p)


def add_json_option(p: argparse.ArgumentParser, what: str = "JSON") -> None:
    """``--json``: print ``what`` instead of the text report."""
    p.add_argument("--json", action="store_true", help=f"print {what}")
