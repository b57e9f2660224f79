"""Command-line options that several commands share: one wording and one default each."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path

import rules
from tableref.errors import UsageError

DEFAULT_PROFILE = "skirmish"


def add_table_options(p: argparse.ArgumentParser, camera: bool = True) -> None:
    """``--table SPEC`` and (unless ``camera`` is false) ``--camera camera.json``."""
    p.add_argument("--table", help="table spec TOML (default: the bundled 6'x4' table with 8 markers)")
    if camera:
        p.add_argument("--camera", help="camera.json from `tableref calibrate-camera` (corrects the lens)")


def add_config_option(p: argparse.ArgumentParser, section: str | None = None) -> None:
    """``--config SETTINGS.toml``; ``section`` names the part of the settings the command reads."""
    where = f"tableref's defaults ([{section}] section)" if section else "tableref's defaults"
    p.add_argument("--config", help=f"settings TOML overriding {where}")


def add_profile_option(p: argparse.ArgumentParser, purpose: str = "rule profile") -> None:
    """``--profile NAME|FILE.toml``, the skirmish profile by default; ``purpose`` says what it gives the command."""
    p.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help=f"{purpose}: {', '.join(rules.builtin_profiles())} or a .toml file (default: {DEFAULT_PROFILE}); "
        "a game's profile names its base sizes, and each base is read as one of them",
    )


def add_roster_options(p: argparse.ArgumentParser, required: bool, roster_help: str) -> None:
    """``--roster STATE.json`` (described by ``roster_help``) and ``--profile``."""
    p.add_argument("--roster", required=required, help=roster_help)
    add_profile_option(p)


def add_json_option(p: argparse.ArgumentParser, what: str = "JSON") -> None:
    """``--json``: print ``what`` instead of the text report."""
    p.add_argument("--json", action="store_true", help=f"print {what}")


def check_output(path: str | Path, option: str, expected: str, suffixes: tuple[str, ...] = ()) -> Path:
    """Before the work: ``path`` can take the file a command writes (``expected`` says what it is): a new file or a
    regular one to replace, in a folder that exists, ending with one of ``suffixes`` when given. A pipe or a device
    would block the writer for ever or take the file nowhere. Raises UsageError naming ``option``."""
    p = Path(path)
    if suffixes and p.suffix.lower() not in suffixes:
        raise UsageError(f"{option} {p}: expected a file ending {', '.join(suffixes)}")
    try:
        if p.is_dir():
            raise UsageError(f"{option} {p}: is a folder; expected {expected}")
        if p.exists() and not p.is_file():
            raise UsageError(f"{option} {p}: not a regular file; expected {expected}")
        if not p.parent.is_dir():
            raise UsageError(f"{option} {p}: no folder {p.parent} to write it into")
    except OSError as exc:
        # a name longer than the file system allows, say
        raise UsageError(f"{option} {p}: cannot write there ({exc.strerror or exc})") from None
    return p


@contextlib.contextmanager
def unfinished_removed(path: str | Path) -> Iterator[Path]:
    """Around the writing of ``path``: where the writing fails (a full disk, a read-only folder), a file it began is
    not left behind as if it were the output. A file that was there before is not removed."""
    p = Path(path)
    existed = p.exists()
    try:
        yield p
    except BaseException:
        if not existed:
            with contextlib.suppress(OSError):
                p.unlink(missing_ok=True)
        raise
