"""The table surface: the mat's texture (looked up through the pixel -> table map, so it stays put on the
table), the round things printed on it, and the ArUco markers (each code image from ``cv2.aruco`` warped onto the
table plane through the exact map)."""

from __future__ import annotations

import math

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.spec import MarkerSpec, TableSpec
from synth.camera import Camera
from synth.wide.raster import Canvas, circle, scaled, segments_for
from synth.wide.scene import Colour, MatLook, Print
from synth.wide.view import MARKER_PAPER_MM, table_map

Image = NDArray[np.float32]

INK: Colour = (0.05, 0.05, 0.055)
PAPER: Colour = (0.86, 0.87, 0.87)
# Fleck colours (BGR shifts) of grass tips and grit.
_BRIGHT_FLECK = np.array([0.02, 0.25, 0.3], dtype=np.float32)
_DARK_FLECK = np.array([-0.5, -0.5, -0.5], dtype=np.float32)
PAVING_JOINT_MM = 2.5


def _field(rng: np.random.Generator, table: TableSpec, cell_mm: float, x: Image, y: Image) -> Image:
    """Smooth noise of unit spread with features of about ``cell_mm``, read at table points ``x``, ``y``."""
    margin = 4
    nx = int(table.width_mm / cell_mm) + 2 * margin + 2
    ny = int(table.depth_mm / cell_mm) + 2 * margin + 2
    grid = np.asarray(cv2.GaussianBlur(rng.standard_normal((ny, nx)).astype(np.float32), (0, 0), 1.0), np.float32)
    grid /= max(float(grid.std()), 1e-6)
    # Past the table's edges the floor takes over, so the field only needs to cover the table and a margin.
    u = np.clip(x / np.float32(cell_mm) + margin, 0, nx - 1).astype(np.float32)
    v = np.clip(y / np.float32(cell_mm) + margin, 0, ny - 1).astype(np.float32)
    return np.asarray(cv2.remap(grid, u, v, cv2.INTER_CUBIC, borderMode=cv2.BORDER_REFLECT), dtype=np.float32)


def mat_image(mat: MatLook, table: TableSpec, camera: Camera) -> Image:
    """The mat's colour (H, W, 3) float32 at every frame pixel: two colours in blotches, mottling, fine grain,
    flecks, paving joints; the floor past the table's edges."""
    rng = np.random.default_rng(mat.seed)
    x, y = table_map(camera)
    # A colour plane at a time and in place where it can be: a frame's worth of temporaries costs more than the
    # arithmetic (the same values as whole-image expressions).
    mix = _field(rng, table, mat.blotch_mm, x, y)
    mix *= np.float32(0.6)
    mix += np.float32(0.5)
    np.clip(mix, 0.0, 1.0, out=mix)
    mix *= np.float32(mat.blotch)
    rest = np.float32(1.0) - mix
    planes = []
    for a, b in zip(np.asarray(mat.colour_a, np.float32), np.asarray(mat.colour_b, np.float32), strict=True):
        plane = rest * a
        plane += mix * b
        planes.append(plane)
    mottle = 0.7 * _field(rng, table, mat.mottle_mm, x, y) + 0.3 * _field(rng, table, 3.0 * mat.mottle_mm, x, y)
    grain = cv2.GaussianBlur(rng.standard_normal(x.shape).astype(np.float32), (0, 0), 0.7) * 1.6
    lit = 1.0 + mat.mottle * mottle + mat.grain * grain
    for plane in planes:
        plane *= lit
    if mat.speckle > 0:
        u = rng.random(x.shape, dtype=np.float32)
        bright = np.nonzero(u < mat.speckle * 0.6)
        dark = np.nonzero((u >= mat.speckle * 0.6) & (u < mat.speckle))
        for plane, up, down in zip(planes, _BRIGHT_FLECK, 1.0 + _DARK_FLECK * 0.8, strict=True):
            plane[bright] += up
            plane[dark] *= down
    if mat.paving_mm > 0:
        fx = np.abs(np.mod(x, mat.paving_mm) - mat.paving_mm / 2) > mat.paving_mm / 2 - PAVING_JOINT_MM / 2
        fy = np.abs(
            np.mod(y + 0.5 * mat.paving_mm * (np.floor(x / mat.paving_mm) % 2), mat.paving_mm) - mat.paving_mm / 2
        )
        joint = np.nonzero(fx | (fy > mat.paving_mm / 2 - PAVING_JOINT_MM / 2))
        for plane in planes:
            plane[joint] *= 0.6
    off = (x < 0) | (x > table.width_mm) | (y < 0) | (y > table.depth_mm)
    if off.any():
        # The floor or the room round the table: a plain surface with broad uneven patches and fine grain.
        h, w = x.shape
        broad = cv2.resize(
            rng.standard_normal((h // 96 + 2, w // 96 + 2)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC
        )
        where = np.nonzero(off)
        floor = 1.0 + 0.12 * broad[where] + 0.05 * grain[where]
        for plane, colour in zip(planes, np.asarray(mat.floor, np.float32), strict=True):
            plane[where] = colour * floor
    for plane in planes:
        np.clip(plane, 0.0, 1.0, out=plane)
    return np.asarray(cv2.merge(planes), dtype=np.float32)


# --------------------------------------------------------------------------------------------------------------
# Prints


def _ring(canvas: Canvas, x: float, y: float, outer: float, inner: float, colour: Colour, ppm: float) -> None:
    n = segments_for(canvas, outer, ppm)
    polys = [canvas.project(circle(x, y, outer, 0.0, n))]
    if inner > 0:
        polys.append(canvas.project(circle(x, y, inner, 0.0, n)))
    canvas.fill(polys, colour, None)


def _tyre(canvas: Canvas, p: Print, ppm: float) -> None:
    """A tyre lying flat: dark rubber ring with tread blocks round its outside and a hub line inside."""
    r_in = p.radius_mm - p.line_mm
    _ring(canvas, p.x_mm, p.y_mm, p.radius_mm, r_in, p.colour, ppm)
    blocks = int(np.clip(p.radius_mm * 0.8, 14, 36))
    depth = 0.3 * p.line_mm
    tread = scaled(p.colour, 2.2)
    for k in range(0, 2 * blocks, 2):
        a0, a1 = k * math.pi / blocks, (k + 1) * math.pi / blocks
        quad = [
            (p.x_mm + r * math.cos(a), p.y_mm + r * math.sin(a), 0.0)
            for r, a in (
                (p.radius_mm - depth, a0),
                (p.radius_mm - 0.2, a0),
                (p.radius_mm - 0.2, a1),
                (p.radius_mm - depth, a1),
            )
        ]
        canvas.fill([canvas.project(np.asarray(quad))], tread, None)
    _ring(canvas, p.x_mm, p.y_mm, r_in + 1.0, r_in, p.colour_2, ppm)


def _manhole(canvas: Canvas, p: Print, ppm: float) -> None:
    """A grey cover with concentric grooves and bolts round its edge."""
    _ring(canvas, p.x_mm, p.y_mm, p.radius_mm, 0.0, p.colour, ppm)
    for share in (0.93, 0.7, 0.45):
        r = share * p.radius_mm
        _ring(canvas, p.x_mm, p.y_mm, r, r - 1.0, p.colour_2, ppm)
    for k in range(8):
        a = k * math.pi / 4
        bx, by = p.x_mm + 0.82 * p.radius_mm * math.cos(a), p.y_mm + 0.82 * p.radius_mm * math.sin(a)
        _ring(canvas, bx, by, 1.2, 0.0, p.colour_2, ppm)


def _crater(canvas: Canvas, p: Print, ppm: float) -> None:
    """A crater: faint ejecta, a dark rim, and a floor lightening towards the middle."""
    ejecta = scaled(p.colour_2, 0.9)
    n = segments_for(canvas, p.radius_mm * 1.3, ppm)
    canvas.fill([canvas.project(circle(p.x_mm, p.y_mm, p.radius_mm * 1.3, 0.0, n))], ejecta, None, 0.35)
    steps = 10
    for k in range(steps):
        t = k / (steps - 1)
        colour = tuple(float(c) for c in (1 - t) * np.asarray(p.colour) + t * np.asarray(p.colour_2))
        r = p.radius_mm * (1.0 - 0.9 * t)
        _ring(canvas, p.x_mm, p.y_mm, r, 0.0, (colour[0], colour[1], colour[2]), ppm)


def _debris(canvas: Canvas, p: Print) -> None:
    """A chip of rubble: an irregular polygon."""
    rng = np.random.default_rng(p.seed)
    k = int(rng.integers(5, 9))
    a = np.sort(rng.uniform(0, 2 * math.pi, k))
    r = p.radius_mm * rng.uniform(0.5, 1.0, k)
    pts = np.stack([p.x_mm + r * np.cos(a), p.y_mm + r * np.sin(a), np.zeros(k)], axis=1)
    canvas.fill([canvas.project(pts)], p.colour, None)


def draw_prints(canvas: Canvas, prints: tuple[Print, ...], ppm: float) -> None:
    """Every print, in the order given (later ones over earlier ones). The id buffer stays the table's."""
    for p in prints:
        if p.kind == "tyre":
            _tyre(canvas, p, ppm)
        elif p.kind == "manhole":
            _manhole(canvas, p, ppm)
        elif p.kind == "crater":
            _crater(canvas, p, ppm)
        elif p.kind == "debris":
            _debris(canvas, p)
        elif p.kind == "ring":
            _ring(canvas, p.x_mm, p.y_mm, p.radius_mm + p.line_mm / 2, p.radius_mm - p.line_mm / 2, p.colour, ppm)
        else:  # disc, star
            _ring(canvas, p.x_mm, p.y_mm, p.radius_mm, 0.0, p.colour, ppm)


# --------------------------------------------------------------------------------------------------------------
# Markers


def _marker(canvas: Canvas, spec: MarkerSpec, bits: NDArray[np.uint8]) -> None:
    half = spec.size_mm / 2.0 + MARKER_PAPER_MM
    a = math.radians(spec.rotation_deg)
    c, s = math.cos(a), math.sin(a)
    local = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    corners = np.c_[local @ np.array([[c, s], [-s, c]]) + np.array([spec.x_mm, spec.y_mm]), np.zeros(4)]
    px = canvas.project(corners)
    x0, y0 = np.floor(px.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(px.max(axis=0)).astype(int) + 3
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, canvas.width), min(y1, canvas.height)
    if x1 <= x0 or y1 <= y0:
        return
    tx, ty = table_map(canvas.camera, (int(x0), int(y0), int(x1), int(y1)), canvas.s)
    dx, dy = tx - spec.x_mm, ty - spec.y_mm
    # Into the marker's own frame (its top edge along +x before the turn).
    lu, lv = c * dx + s * dy, -s * dx + c * dy
    paper = (np.abs(lu) <= half) & (np.abs(lv) <= half)
    cells = bits.shape[0]
    col = np.floor((lu + spec.size_mm / 2) / spec.size_mm * cells).astype(np.intp)
    row = np.floor((lv + spec.size_mm / 2) / spec.size_mm * cells).astype(np.intp)
    in_code = (col >= 0) & (col < cells) & (row >= 0) & (row < cells)
    black = in_code & (bits[np.clip(row, 0, cells - 1), np.clip(col, 0, cells - 1)] == 0)
    patch = canvas.colour[y0:y1, x0:x1]
    patch[paper] = np.asarray(PAPER, np.float32)
    patch[black] = np.asarray(INK, np.float32)


def draw_markers(canvas: Canvas, table: TableSpec) -> None:
    """Every marker of the spec at its place: the code image (one pixel per cell, one-cell black border) from
    ``cv2.aruco.generateImageMarker``, read through the table coordinates of each canvas pixel."""
    dictionary = table.aruco_dictionary()
    cells = int(dictionary.markerSize) + 2
    for spec in table.markers:
        bits = np.asarray(cv2.aruco.generateImageMarker(dictionary, spec.id, cells, borderBits=1), dtype=np.uint8)
        _marker(canvas, spec, bits)
