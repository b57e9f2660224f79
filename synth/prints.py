"""Prints on the table: markers and printed circles, each an outline (for its screen box) and, per point of the
table, whether it covers it and its colour there. The renderer samples them at every sample ray of a pixel."""

from __future__ import annotations

import math

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.spec import MarkerSpec
from synth.scene import PrintedCircle, Scene

FloatArray = NDArray[np.float64]

# Printed markers: black ink and white paper albedo, and the white margin around the black square.
INK = (0.045, 0.045, 0.05)
PAPER = (0.84, 0.86, 0.86)
MARKER_MARGIN_MM = 12.0


class _Print:
    """Something printed flat on the table: an outline for its screen box, and per-point coverage and colour."""

    def outline(self) -> FloatArray:
        raise NotImplementedError

    def paint(self, x: FloatArray, y: FloatArray) -> tuple[NDArray[np.bool_], FloatArray]:
        raise NotImplementedError


class _MarkerPrint(_Print):
    def __init__(self, spec: MarkerSpec, bits: NDArray[np.uint8]) -> None:
        self.spec = spec
        self.bits = bits
        self.half = spec.size_mm / 2.0
        self.paper_half = self.half + MARKER_MARGIN_MM

    def outline(self) -> FloatArray:
        edge = np.linspace(-1.0, 1.0, 17) * self.paper_half
        ones = np.full_like(edge, self.paper_half)
        local = np.concatenate(
            [np.stack(p, axis=-1) for p in ((edge, -ones), (edge, ones), (-ones, edge), (ones, edge))]
        )
        return self._to_table(local)

    def _to_table(self, local: FloatArray) -> FloatArray:
        a = math.radians(self.spec.rotation_deg)
        c, s = math.cos(a), math.sin(a)
        x = self.spec.x_mm + c * local[:, 0] - s * local[:, 1]
        y = self.spec.y_mm + s * local[:, 0] + c * local[:, 1]
        return np.stack([x, y, np.zeros_like(x)], axis=-1)

    def paint(self, x: FloatArray, y: FloatArray) -> tuple[NDArray[np.bool_], FloatArray]:
        a = math.radians(self.spec.rotation_deg)
        c, s = math.cos(a), math.sin(a)
        dx, dy = x - self.spec.x_mm, y - self.spec.y_mm
        lu, lv = c * dx + s * dy, -s * dx + c * dy
        inside = (np.abs(lu) <= self.paper_half) & (np.abs(lv) <= self.paper_half)
        cells = self.bits.shape[0]
        col = np.floor((lu + self.half) / self.spec.size_mm * cells).astype(np.intp)
        row = np.floor((lv + self.half) / self.spec.size_mm * cells).astype(np.intp)
        in_square = (col >= 0) & (col < cells) & (row >= 0) & (row < cells)
        black = in_square & (self.bits[np.clip(row, 0, cells - 1), np.clip(col, 0, cells - 1)] == 0)
        colour = np.where(black[..., None], np.asarray(INK), np.asarray(PAPER))
        return inside, colour


class _CirclePrint(_Print):
    def __init__(self, circle: PrintedCircle) -> None:
        self.c = circle

    def outline(self) -> FloatArray:
        t = np.linspace(0.0, 2 * math.pi, 72, endpoint=False)
        r = self.c.radius_mm + self.c.line_mm / 2.0
        x, y = self.c.x_mm + r * np.cos(t), self.c.y_mm + r * np.sin(t)
        return np.stack([x, y, np.zeros_like(x)], axis=-1)

    def paint(self, x: FloatArray, y: FloatArray) -> tuple[NDArray[np.bool_], FloatArray]:
        r = np.hypot(x - self.c.x_mm, y - self.c.y_mm)
        # A ring straddles its radius; a disc (line 0) fills it.
        half = self.c.line_mm / 2.0
        inner, outer = (self.c.radius_mm - half, self.c.radius_mm + half) if half > 0 else (0.0, self.c.radius_mm)
        inside = (r >= inner) & (r <= outer)
        return inside, np.broadcast_to(np.asarray(self.c.colour), (*x.shape, 3))


def prints(scene: Scene) -> list[_Print]:
    """What is printed flat on the scene's table: its markers, then its printed circles."""
    dictionary = scene.table.aruco_dictionary()
    cells = int(dictionary.markerSize) + 2  # the code and its one-cell black border
    out: list[_Print] = []
    for spec in scene.table.markers:
        bits = cv2.aruco.generateImageMarker(dictionary, spec.id, cells, borderBits=1)
        out.append(_MarkerPrint(spec, np.asarray(bits, dtype=np.uint8)))
    out.extend(_CirclePrint(c) for c in scene.printed)
    return out
