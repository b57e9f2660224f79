"""Slots for live event streams: each open stream holds a sleeping thread, so there are at most ``total`` at once,
and at most ``per_client`` for one client address, so that one client cannot take every slot and leave the others
polling."""

from __future__ import annotations

import threading
from collections import Counter

from webui.errors import HTTP_TOO_MANY, HTTP_UNAVAILABLE, ApiError


class ViewerSlots:
    """Counts the open event streams, in all and per client address. Thread-safe."""

    def __init__(self, total: int, per_client: int) -> None:
        self.total = total
        self.per_client = per_client
        self._lock = threading.Lock()
        self._open: Counter[str] = Counter()

    def take(self, client: str) -> None:
        """Take a slot for ``client`` (its address); :class:`ApiError` when none is free for it (the page then
        polls instead)."""
        with self._lock:
            if self._open[client] >= self.per_client:
                raise ApiError(
                    f"this client has {self._open[client]} live event streams open, the most one client may have; "
                    "close one, or poll /api/status instead",
                    HTTP_TOO_MANY,
                )
            if self._open.total() >= self.total:
                raise ApiError("too many live viewers; poll /api/status instead", HTTP_UNAVAILABLE)
            self._open[client] += 1

    def give_back(self, client: str) -> None:
        """Free a slot ``client`` took."""
        with self._lock:
            self._open[client] -= 1
            if self._open[client] <= 0:
                del self._open[client]

    def open_streams(self, client: str | None = None) -> int:
        """Streams open in all, or of ``client``."""
        with self._lock:
            return self._open.total() if client is None else self._open[client]
