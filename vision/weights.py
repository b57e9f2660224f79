"""Learned weights as the detector reads them: the file that ships in ``vision/data`` or one a user's settings name,
each read once (every frame's detection asks for them)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def weights_loader(shipped: str, read: Callable[[Path], T]) -> Callable[[str | Path | None], T]:
    """A loader: given no path, what ``read`` makes of ``vision/data/<shipped>``; given one, of that file (its
    errors are ``read``'s). Both are kept once read."""

    @lru_cache(maxsize=1)
    def shipped_one() -> T:
        with resources.as_file(resources.files("vision").joinpath("data", shipped)) as path:
            return read(path)

    @lru_cache(maxsize=4)
    def named(path: str) -> T:
        return read(Path(path))

    def load(path: str | Path | None = None) -> T:
        return shipped_one() if path is None else named(str(Path(path).resolve()))

    return load
