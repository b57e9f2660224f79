"""A progress bar for long jobs on a terminal: items done, items per second, time left."""

from __future__ import annotations

import sys
import time
from typing import TextIO

_BAR_WIDTH = 28
# Redrawing more often than this only costs time; on a non-terminal, lines are printed at most this often too.
_MIN_INTERVAL_S = 0.2
_PLAIN_INTERVAL_S = 10.0


def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """``with Progress(total, "frames") as bar: ... bar.advance()``. ``total`` 0 means unknown."""

    def __init__(self, total: int, unit: str, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = total
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = 0
        self.start = time.monotonic()
        # on a terminal the bar is drawn at once; elsewhere (a log) a line is written only once the job has run a
        # while, so that a short one, or one that fails early, leaves its result or its error alone
        self.last = 0.0 if self.tty else self.start
        self.note = ""

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is not None:
            # the job failed: its one-line error is all that is said of it (on a terminal the bar is wiped off its
            # line, which the error would otherwise continue)
            if self.enabled and self.tty and self.last:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()
            return
        # off a terminal a job too short to have been logged says nothing of itself: its result (or an error found
        # after it) stands alone
        if self.tty or self.last > self.start:
            self._draw(final=True)
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def advance(self, count: int = 1, note: str = "") -> None:
        self.done += count
        self.note = note
        self._draw()

    def line(self) -> str:
        elapsed = time.monotonic() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        if self.total:
            frac = min(1.0, self.done / self.total)
            filled = round(frac * _BAR_WIDTH)
            left = (self.total - self.done) / rate if rate > 0 else 0.0
            bar = "#" * filled + "-" * (_BAR_WIDTH - filled)
            text = (
                f"[{bar}] {self.done}/{self.total} {self.unit}, {rate:.1f}/s, "
                f"{_clock(elapsed)} elapsed, {_clock(left)} left"
            )
        else:
            text = f"{self.done} {self.unit}, {rate:.1f}/s, {_clock(elapsed)} elapsed"
        return f"{text}  {self.note}" if self.note else text

    def _draw(self, final: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        interval = _MIN_INTERVAL_S if self.tty else _PLAIN_INTERVAL_S
        if not final and now - self.last < interval:
            return
        self.last = now
        if self.tty:
            self.stream.write("\r\x1b[2K" + self.line())
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
