"""What every viewer reads: immutable snapshots of the frame to show, the result and the status, published by the
live table's threads through a :class:`Hub` that request handlers only read (see :mod:`webui.live`)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

import rules
from webui.errors import HTTP_CONFLICT, ApiError

# The camera state before the first frame.
STARTING = "starting"


@dataclass(frozen=True)
class FrameView:
    """A frame as viewers get it: ``jpeg`` scaled down for the screen; ``width_px`` x ``height_px`` is the full
    frame size (overlays are in full-frame pixels); ``wall_time`` in s since the epoch."""

    seq: int
    index: int
    wall_time: float
    jpeg: bytes
    width_px: int
    height_px: int
    scene: str


@dataclass(frozen=True)
class Result:
    """One settled frame measured and judged.

    ``state`` is the table state the rules saw (roster identities applied), ``outlines_px`` (N, V, 2) and
    ``centers_px`` (N, 2) its models' base outlines and centres in full-frame pixels of ``frame``, in state order;
    ``calibration`` the calibration section as the state's JSON holds it (a measured state's, see
    :class:`tableref.pipeline.state.CalibrationSection`, or the one of a state drawn without a camera); ``json`` the
    viewers' JSON, made once; ``to_px`` maps table millimetres to those pixels (at a rim height; ``rim_height_mm`` the
    one the bases were drawn at).
    """

    seq: int
    frame: FrameView
    state: rules.TableState
    findings: tuple[rules.Finding, ...]
    profile: rules.RuleProfile
    outlines_px: NDArray[np.float64]
    centers_px: NDArray[np.float64]
    calibration: Mapping[str, Any]
    analyzed_at: float
    analysis_ms: float
    json: str = field(repr=False)
    # table millimetres (N, 2) at a height (mm) -> frame pixels of ``frame`` (None: not known)
    to_px: Callable[[NDArray[np.float64], float], NDArray[np.float64]] | None = field(default=None, repr=False)
    rim_height_mm: float = 0.0

    def findings_document(self) -> dict[str, Any]:
        """The findings document of ``tableref check --json``."""
        return rules.findings_document(self.profile.name, list(self.findings))


@dataclass(frozen=True)
class Status:
    """What the status bar shows. Times are s since the epoch."""

    camera: str
    source: str
    source_kind: str
    settled: bool
    fps: float
    frame_seq: int
    frame_scene: str | None
    frame_size: tuple[int, int] | None
    result_seq: int
    result_scene: str | None
    last_update: float | None
    message: str | None
    analysing: bool
    frozen: bool
    frozen_at: float | None
    profile: str
    # the source an uploaded photo replaced, to go back to (None: no photo is being checked)
    back_to: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["fps"] = round(self.fps, 2)
        out["frame_size"] = list(self.frame_size) if self.frame_size else None
        return out


@dataclass(frozen=True)
class Snapshot:
    """What every reader sees at one moment: the frame to show (the frozen result's while frozen), the result,
    the status, and the status as JSON (made once per snapshot, not once per viewer)."""

    seq: int
    frame: FrameView | None
    result: Result | None
    status: Status
    status_json: str = field(repr=False)


_KEEP: Any = object()


class Hub:
    """The latest snapshot, and a condition viewers wait on for the next one."""

    def __init__(self, source: str, source_kind: str, profile: str) -> None:
        self._cond = threading.Condition()
        self._seq = 0
        self._frame: FrameView | None = None
        self._result: Result | None = None
        self._frozen: Result | None = None
        self._frozen_at: float | None = None
        self._status = Status(
            camera=STARTING,
            source=source,
            source_kind=source_kind,
            settled=False,
            fps=0.0,
            frame_seq=0,
            frame_scene=None,
            frame_size=None,
            result_seq=0,
            result_scene=None,
            last_update=None,
            message=None,
            analysing=False,
            frozen=False,
            frozen_at=None,
            profile=profile,
        )
        self._snapshot = self._compose()

    def _compose(self) -> Snapshot:
        result = self._frozen or self._result
        frame = self._frozen.frame if self._frozen else self._frame
        status = replace(
            self._status,
            frame_seq=frame.seq if frame else 0,
            frame_scene=frame.scene if frame else None,
            frame_size=(frame.width_px, frame.height_px) if frame else None,
            result_seq=result.seq if result else 0,
            result_scene=result.frame.scene if result else None,
            last_update=result.analyzed_at if result else None,
            frozen=self._frozen is not None,
            frozen_at=self._frozen_at,
        )
        return Snapshot(self._seq, frame, result, status, json.dumps(status.to_dict()))

    def update(self, frame: FrameView | None = _KEEP, result: Result | None = _KEEP, **status: Any) -> None:
        """Publish a new frame, result and/or status fields, and wake the viewers."""
        with self._cond:
            if frame is not _KEEP:
                self._frame = frame
            if result is not _KEEP:
                self._result = result
            if status:
                self._status = replace(self._status, **status)
            self._seq += 1
            self._snapshot = self._compose()
            self._cond.notify_all()

    def snapshot(self) -> Snapshot:
        with self._cond:
            return self._snapshot

    def wait(self, after_seq: int, timeout_s: float) -> Snapshot:
        """The first snapshot newer than ``after_seq``, or the current one after ``timeout_s``."""
        with self._cond:
            self._cond.wait_for(lambda: self._snapshot.seq > after_seq, timeout_s)
            return self._snapshot

    def wait_result(self, after_seq: int, timeout_s: float) -> Snapshot:
        """The first snapshot whose live result is newer than ``after_seq`` (or the current one on time-out)."""
        with self._cond:
            self._cond.wait_for(lambda: self._result is not None and self._result.seq > after_seq, timeout_s)
            return self._snapshot

    def live_result(self) -> Result | None:
        """The newest result, frozen or not."""
        with self._cond:
            return self._result

    def live_result_seq(self) -> int:
        with self._cond:
            return self._result.seq if self._result else 0

    def freeze(self) -> Snapshot:
        """Hold the current result and its frame for every reader until :meth:`unfreeze`. 409 with no result."""
        with self._cond:
            if self._result is None:
                raise ApiError("nothing to freeze yet: no frame has been measured", HTTP_CONFLICT)
            if self._frozen is None:
                self._frozen = self._result
                self._frozen_at = time.time()
        self.update()
        return self.snapshot()

    def unfreeze(self) -> Snapshot:
        with self._cond:
            self._frozen = None
            self._frozen_at = None
        self.update()
        return self.snapshot()
