"""The plumbing between the live loop's two threads: the analysis thread's in-tray (only the newest frame waits)
and the frame rate the reader shows."""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass, replace

from webui.feeds import FeedFrame
from webui.hub import FrameView

# Frames per second are counted over this window (s).
_FPS_WINDOW_S = 2.0


@dataclass(frozen=True)
class DetectJob:
    """A settled frame for the analysis thread to measure, with the view the viewers were sent of it."""

    frame: FeedFrame
    view: FrameView
    # measured whole, not built on the frame measured before
    whole: bool = False


class Jobs:
    """The analysis thread's in-tray: the newest frame to measure and a flag to re-run the rules."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._detect: DetectJob | None = None
        self._recheck = False
        self._closed = False

    def put_detect(self, job: DetectJob) -> None:
        with self._cond:
            if self._detect is not None and self._detect.whole:
                # a newer frame takes the place of one owed a whole measurement, and owes it in turn
                job = replace(job, whole=True)
            self._detect = job
            self._cond.notify()

    def put_recheck(self) -> None:
        with self._cond:
            self._recheck = True
            self._cond.notify()

    def close(self) -> None:
        """Wake the taker for good (the loop stops)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def take(self, timeout_s: float) -> DetectJob | bool | None:
        """The newest detect job, else True for a recheck, else None after ``timeout_s`` or once closed."""
        with self._cond:
            self._cond.wait_for(lambda: self._detect is not None or self._recheck or self._closed, timeout_s)
            job, self._detect = self._detect, None
            if job is not None:
                # A fresh measurement runs the rules with the newest roster and profile anyway.
                self._recheck = False
                return job
            if self._recheck:
                self._recheck = False
                return True
            return None


class RateMeter:
    def __init__(self) -> None:
        self._times: collections.deque[float] = collections.deque()

    def tick(self, now_s: float) -> float:
        self._times.append(now_s)
        while self._times[0] < now_s - _FPS_WINDOW_S:
            self._times.popleft()
        if len(self._times) < 2:
            return 0.0
        return (len(self._times) - 1) / max(self._times[-1] - self._times[0], 1e-9)
