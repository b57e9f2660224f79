"""Reading the stage's input files: every failure becomes the caller's named error, saying what was expected."""

from __future__ import annotations

from pathlib import Path

from calibration.errors import CalibrationError


def read_text(path: str | Path, expected: str, error: type[CalibrationError]) -> str:
    """The text of ``path``; ``error`` naming the file and ``expected`` (what it should be) when it cannot be read."""
    p = Path(path)
    try:
        return p.read_text("utf-8")
    except FileNotFoundError:
        raise error(f"{p}: no such file; expected {expected}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{p}: cannot read it as text ({exc})") from None
