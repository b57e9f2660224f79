"""The progress bar: what it leaves on its stream when the job ends, and when the job fails (the error's line must
stand alone)."""

from __future__ import annotations

import contextlib
import io

import pytest

from tableref.progress import Progress

WIPE = "\r\x1b[2K"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("terminal", "advanced", "step_s", "fails", "last"),
    [
        (True, 3, 0.0, False, "[############################] 3/3 frames"),
        # off a terminal (a log) a short job says nothing of itself: an error found after it stands alone
        (False, 0, 0.0, False, None),
        (False, 3, 0.0, False, None),
        (False, 3, 3.0, False, None),
        # a long one is logged every 10 s and ends with its total
        (False, 3, 6.0, False, "[############################] 3/3 frames"),
        # a failed job leaves no bar for its error to follow: none drawn yet, or the one drawn wiped off its line
        (False, 0, 0.0, True, None),
        (False, 2, 0.0, True, None),
        (True, 0, 0.0, True, None),
        (True, 1, 0.0, True, ""),
    ],
)
def test_what_the_bar_leaves(
    monkeypatch: pytest.MonkeyPatch, terminal: bool, advanced: int, step_s: float, fails: bool, last: str | None
) -> None:
    # a clock that moves step_s at each item: no test waits
    now = [100.0]
    monkeypatch.setattr("tableref.progress.time.monotonic", lambda: now[0])
    stream = _Terminal() if terminal else io.StringIO()
    with pytest.raises(ValueError) if fails else contextlib.nullcontext(), Progress(3, "frames", stream=stream) as bar:
        for _ in range(advanced):
            now[0] += step_s
            bar.advance()
        if fails:
            raise ValueError("bad frame")
    text = stream.getvalue()
    if last is None:
        assert text == ""
        return
    # the stream's last line as a terminal shows it: what follows the last wipe, or the last line written
    shown = text.rsplit(WIPE, 1)[-1] if terminal else text.rstrip("\n").rsplit("\n", 1)[-1]
    assert shown.split(",")[0] == last.split(",")[0]
    assert text.endswith("\n") != fails
