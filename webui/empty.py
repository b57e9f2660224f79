"""The table seen empty, per camera position, for the live table: asked for from the Setup screen, taken from the
next settled frame by the analysis thread, and used as the reference of every detection after it (see
:mod:`vision.reference`). Thread-safe: the screens ask and read, the analysis thread takes."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

import calibration
from calibration.camera import CameraModel
from calibration.spec import TableSpec
from tableref.pipeline.frame import EmptyTable, empty_table
from tableref.settings import Settings

NOT_CAPTURED = "the empty table was not captured: "


class EmptyTables:
    """The empty table of each scene (camera position), the capture waiting for the next settled frame, and what
    came of the last one asked for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tables: dict[str, EmptyTable] = {}
        self._times: dict[str, float] = {}
        self._pending = False
        self._note: str | None = None

    def ask(self) -> None:
        """Take the next settled frame as the table seen empty."""
        with self._lock:
            self._pending = True

    def forget(self, key: str | None) -> bool:
        """Forget the empty table of scene ``key``; False when there was none."""
        with self._lock:
            self._times.pop(key or "", None)
            return key is not None and self._tables.pop(key, None) is not None

    def of(self, key: str) -> EmptyTable | None:
        with self._lock:
            return self._tables.get(key)

    def status(self, key: str | None) -> dict[str, Any]:
        """Whether scene ``key`` has one (and when it was captured, s since the epoch), whether a capture waits,
        and what came of the last one that did not succeed."""
        with self._lock:
            return {
                "captured": key is not None and key in self._tables,
                "captured_at": self._times.get(key or ""),
                "pending": self._pending,
                "note": self._note,
            }

    def due(self) -> bool:
        """Whether a capture waits; it no longer does once this said so."""
        with self._lock:
            due, self._pending = self._pending, False
            return due

    def take(
        self, key: str, frame_bgr: NDArray[np.uint8], spec: TableSpec, config: Settings, camera: CameraModel | None
    ) -> str:
        """Keep ``frame_bgr`` as the empty table of scene ``key``; returns what to tell the viewers."""
        try:
            table = empty_table(frame_bgr, spec, config, camera)
        except calibration.CalibrationError as exc:
            return self.failed(str(exc))
        with self._lock:
            self._tables[key] = table
            self._times[key] = time.time()
            self._note = None
        return "empty table captured: only what is put down from now on is measured"

    def failed(self, why: str) -> str:
        """Note that the capture asked for could not be made, and why; returns what to tell the viewers."""
        note = NOT_CAPTURED + why
        with self._lock:
            self._note = note
        return note
