"""Reading the stage's input files: every failure becomes the caller's named error, saying what was expected."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from calibration.errors import CalibrationError

# A table spec or camera.json larger than this is none: real ones hold a few kB.
MAX_FILE_BYTES = 32_000_000


def read_text(path: str | Path, expected: str, error: type[CalibrationError]) -> str:
    """The text of ``path``; ``error`` naming the file and ``expected`` (what it should be) when it cannot be read.
    Only a regular file of at most :data:`MAX_FILE_BYTES` is read: a device or a pipe may never end."""
    p = Path(path)
    try:
        info = p.stat()
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{p}: is a folder; expected {expected}")
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{p}: not a regular file; expected {expected}")
        if info.st_size > MAX_FILE_BYTES:
            raise error(f"{p}: {info.st_size} bytes; expected {expected} of at most {MAX_FILE_BYTES} bytes")
        return p.read_text("utf-8")
    except FileNotFoundError:
        raise error(f"{p}: no such file; expected {expected}") from None
    except UnicodeDecodeError:
        raise error(f"{p}: not text (not UTF-8); expected {expected}") from None
    except OSError as exc:
        raise error(f"{p}: cannot read it ({exc.strerror or exc}); expected {expected}") from None


def read_json(path: str | Path, expected: str, error: type[CalibrationError]) -> Any:
    """The parsed JSON of ``path``, read as :func:`read_text` reads it; ``error`` when it is no usable JSON."""
    p = Path(path)
    text = read_text(p, expected, error)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{p}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except ValueError as exc:
        # a whole number of more digits than Python converts (4300 by default): no usable value has that many
        raise error(f"{p}: not usable JSON ({str(exc).split(';')[0]}); expected {expected}") from None
    except RecursionError:
        # the parser recurses once per level: a hostile file nests deeper than Python's stack
        raise error(f"{p}: JSON nested too deep to read; expected {expected}") from None
