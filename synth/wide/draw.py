"""The things standing on the table, drawn as projected polygons: bases (wall strips, bevel band, top disc,
clear acrylic blended over what is behind), figure parts (convex hulls of their projected surface points, in
three shading bands), boxes (terrain, dice: the faces the camera sees) and hands. Each becomes an
:class:`~synth.wide.order.Item` for the painter's order."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable

import cv2
import numpy as np
from numpy.typing import NDArray

from synth.wide.order import Item, box_planes
from synth.wide.raster import OTHER_ID, Canvas, Shade, circle, noise_texture, scaled, segments_for
from synth.wide.scene import Block, Colour, Part, WideBase

FloatArray = NDArray[np.float64]

# Shading bands of a figure part: the whole outline at the darkest level, then the brighter parts over it.
BAND_QUANTILES = (0.2, 0.55, 0.85)
# Parts larger than this on the canvas (px across) get finer shading, so a hand or a monster is not posterised.
FINE_BANDS_PX = 40.0
FINE_BAND_QUANTILES = (0.12, 0.3, 0.45, 0.6, 0.72, 0.84, 0.94)
# Clear acrylic: how much of what lies behind shows through the top and the wall, and the edge highlight.
ACRYLIC_TOP_ALPHA = 0.1
ACRYLIC_WALL_ALPHA = 0.3
ACRYLIC_EDGE_MM = 0.5
ACRYLIC_EDGE_ALPHA = 0.5
# Base tops carry fine texture: flock tufts, sand grains, brush strokes; strength and feature size (mm).
TOP_GRAIN = {"flock": (0.35, 0.35), "sand": (0.12, 0.2), "acrylic": (0.0, 0.0)}
DEFAULT_GRAIN = (0.05, 0.5)
FLOCK_SPECKS: tuple[Colour, ...] = ((0.1, 0.45, 0.55), (0.05, 0.12, 0.2), (0.15, 0.5, 0.3))
# Plastic sheen: sharpness of the highlight, and the width (mm) of the top's rounded outer edge that shows it.
SHEEN_POWER = 12.0
EDGE_SHEEN_MM = 0.4
PIP_RADIUS = 0.09  # of the die size
PIP_OFFSET = 0.27


def _hull(px: FloatArray) -> FloatArray:
    return np.asarray(cv2.convexHull(px.astype(np.float32)).reshape(-1, 2), dtype=np.float64)


def _centre_key(canvas: Canvas, points: FloatArray) -> float:
    return float(np.linalg.norm(points.mean(axis=0) - canvas.position))


# --------------------------------------------------------------------------------------------------------------
# Bases


def _top_texture(base: WideBase, colour: Colour, scale_px: float) -> Callable[[int, int], NDArray[np.float32]]:
    """Texture of a base top: grain for most, green and brown specks over tufts for flock."""
    rng = np.random.default_rng(base.texture_seed)
    strength, feature_mm = TOP_GRAIN.get(base.top, DEFAULT_GRAIN)
    plain = noise_texture(rng, colour, strength, feature_mm * scale_px)
    if base.top != "flock":
        return plain

    def flock(h: int, w: int) -> NDArray[np.float32]:
        tex = plain(h, w)
        specks = rng.random((h, w)) < 0.18
        pick = rng.integers(len(FLOCK_SPECKS), size=(h, w))
        palette = np.asarray(FLOCK_SPECKS, dtype=np.float32)
        tex[specks] = palette[pick[specks]] * rng.uniform(0.7, 1.2, (int(specks.sum()), 1)).astype(np.float32)
        return np.asarray(cv2.GaussianBlur(tex, (0, 0), max(0.5, 0.15 * scale_px)), dtype=np.float32)

    return flock


def _base_rings(base: WideBase, n: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Bottom circle, top of the wall, top disc outline: (n, 3) mm each."""
    r, x, y = base.radius_mm, base.x_mm, base.y_mm
    return (
        circle(x, y, r, 0.0, n),
        circle(x, y, r, base.wall_mm, n),
        circle(x, y, r - base.bevel_mm, base.rim_height_mm, n),
    )


def _band(
    canvas: Canvas,
    shade: Shade,
    rings: tuple[FloatArray, FloatArray],
    slope: float,
    colour: Colour,
    alpha: float,
    gloss: float,
) -> None:
    """A ring of quads between two circles (n, 3): a wall (slope 0) or a bevel (slope: tilt of its normal from
    level, radians). The quads the camera sees are drawn, each shaded by its normal with the plastic's sheen
    added, over an outline of the whole band in its mean shade (so no hairline shows between quads)."""
    low, high = rings
    n = len(low)
    t = (np.arange(n) + 0.5) * 2 * math.pi / n
    normals = np.stack([np.cos(t) * math.cos(slope), np.sin(t) * math.cos(slope), np.full(n, math.sin(slope))], axis=1)
    mids = 0.25 * (low + np.roll(low, -1, axis=0) + high + np.roll(high, -1, axis=0))
    seen = canvas.facing(mids, normals)
    if not seen.any():
        return
    gains = shade.of_normals(normals)
    sheen = gloss * shade.specular(normals, mids, canvas.position, SHEEN_POWER)
    pl, ph = canvas.project(low), canvas.project(high)
    if alpha >= 1.0:
        canvas.fill([_hull(np.concatenate([pl, ph]))], scaled(colour, float(gains[seen].mean())), OTHER_ID)
    for k in np.flatnonzero(seen):
        k1 = (k + 1) % n
        quad = np.array([pl[k], pl[k1], ph[k1], ph[k]])
        c = tuple(float(v) * float(gains[k]) + float(sheen[k]) for v in colour)
        canvas.fill([quad], (c[0], c[1], c[2]), OTHER_ID, alpha)


def _edge_sheen(canvas: Canvas, shade: Shade, base: WideBase, top: FloatArray, ident: int) -> None:
    """The top's outer edge catches the lamps: a thin band just inside it, brightened where its rounded
    edge (normal halfway between outwards and up) faces the half-way direction of lamp and camera."""
    n = len(top)
    t = (np.arange(n) + 0.5) * 2 * math.pi / n
    normals = np.stack([np.cos(t), np.sin(t), np.ones(n)], axis=1) / math.sqrt(2.0)
    sheen = base.gloss * shade.specular(normals, top, canvas.position, SHEEN_POWER)
    inner = circle(base.x_mm, base.y_mm, base.radius_mm - base.bevel_mm - EDGE_SHEEN_MM, base.rim_height_mm, n)
    po, pi = canvas.project(top), canvas.project(inner)
    for k in np.flatnonzero(sheen > 0.01):
        k1 = (k + 1) % n
        quad = np.array([po[k], po[k1], pi[k1], pi[k]])
        canvas.fill([quad], (1.0, 1.0, 1.0), ident, min(1.0, float(sheen[k])))


def draw_base(canvas: Canvas, shade: Shade, base: WideBase, ident: int, px_per_mm: float) -> None:
    """Wall, bevel band and top of one base; the top (and bevel) write ``ident`` into the id buffer."""
    n = segments_for(canvas, base.radius_mm, px_per_mm)
    bottom, wall_top, top = _base_rings(base, n)
    clear = base.top == "acrylic"
    wall_alpha = ACRYLIC_WALL_ALPHA if clear else 1.0
    _band(canvas, shade, (bottom, wall_top), 0.0, base.rim_colour, wall_alpha, base.gloss)
    if base.bevel_mm > 0:
        slope = math.atan2(base.bevel_mm, base.bevel_rise_mm)
        _band(canvas, shade, (wall_top, top), math.pi / 2 - slope, base.rim_colour, wall_alpha, base.gloss)
        canvas.fill([canvas.project(wall_top), canvas.project(top)], (0.0, 0.0, 0.0), ident, 0.0)
    outline = canvas.project(top)
    if clear:
        canvas.fill([outline], base.top_colour, ident, ACRYLIC_TOP_ALPHA)
        inner = circle(base.x_mm, base.y_mm, base.radius_mm - base.bevel_mm - ACRYLIC_EDGE_MM, base.rim_height_mm, n)
        canvas.fill([outline, canvas.project(inner)], (1.0, 1.0, 1.0), None, ACRYLIC_EDGE_ALPHA)
        return
    texture = _top_texture(base, base.top_colour, px_per_mm * canvas.s)
    canvas.fill_texture([outline], texture, ident, shade.of_normal((0.0, 0.0, 1.0)))
    _edge_sheen(canvas, shade, base, top, ident)


def base_item(canvas: Canvas, shade: Shade, base: WideBase, ident: int, px_per_mm: float) -> Item:
    bottom, wall_top, top = _base_rings(base, 16)
    pts = np.concatenate([bottom, wall_top, top])
    return Item(
        _centre_key(canvas, pts), pts, canvas.bbox(pts), lambda: draw_base(canvas, shade, base, ident, px_per_mm)
    )


# --------------------------------------------------------------------------------------------------------------
# Figure parts and hands


def draw_part(canvas: Canvas, shade: Shade, part: Part) -> None:
    """A convex part: its outline in its darker shade, then the brighter parts of what the camera sees."""
    pts, normals = part.surface(), part.normals()
    px = canvas.project(pts)
    gains = shade.of_normals(normals)
    seen = canvas.facing(pts, normals) | (len(pts) == 4)
    size = float(np.ptp(px, axis=0).max())
    quantiles = FINE_BAND_QUANTILES if size > FINE_BANDS_PX else BAND_QUANTILES
    levels = np.quantile(gains[seen], quantiles) if seen.any() else np.quantile(gains, quantiles)
    canvas.fill([_hull(px)], scaled(part.colour, float(levels[0])), OTHER_ID)
    if len(pts) == 4:
        return  # a flag is flat: one shade
    for level in levels[1:]:
        sel = seen & (gains >= level)
        if sel.sum() >= 3:
            canvas.fill([_hull(px[sel])], scaled(part.colour, float(level)), OTHER_ID)


def part_item(canvas: Canvas, shade: Shade, part: Part) -> Item:
    pts = part.surface()
    return Item(_centre_key(canvas, pts), pts, canvas.bbox(pts), lambda: draw_part(canvas, shade, part))


# --------------------------------------------------------------------------------------------------------------
# Boxes

_FACES = ((0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7))


def _face_outline(corners: FloatArray, face: tuple[int, ...], step_mm: float) -> FloatArray:
    """(K, 3) points round a face, its edges cut into pieces of at most ``step_mm`` so the lens bends them."""
    pts = []
    for a, b in zip(face, (*face[1:], face[0]), strict=True):
        pieces = max(1, math.ceil(float(np.linalg.norm(corners[b] - corners[a])) / step_mm))
        t = np.arange(pieces)[:, None] / pieces
        pts.append(corners[a] + t * (corners[b] - corners[a]))
    return np.concatenate(pts)


def draw_block(canvas: Canvas, shade: Shade, block: Block, px_per_mm: float) -> None:
    """The faces of a box that the camera sees, each shaded by its normal and textured (stone, paint)."""
    corners = block.corners()
    centre = corners.mean(axis=0)
    planes = box_planes(corners)
    # The texture's seed comes from the block itself, so it is the same on every render.
    rng = np.random.default_rng([zlib.crc32(block.id.encode()), int(block.x_mm * 1000) & 0xFFFFFFFF])
    seen = [(f, planes[k]) for k, f in enumerate(_FACES) if planes[k, :3] @ canvas.position + planes[k, 3] > 0]
    silhouette = _hull(canvas.project(corners))
    canvas.fill([silhouette], scaled(block.colour, shade.of_normal((0.0, 0.0, 1.0)) * 0.8), OTHER_ID)
    grain = 0.02 if block.kind == "die" else 0.12
    for face, plane in seen:
        outline = canvas.project(_face_outline(corners, face, 20.0))
        gain = float(shade.of_normals(plane[:3])[0])
        canvas.fill_texture(
            [outline], noise_texture(rng, block.colour, grain, 2.0 * px_per_mm * canvas.s), OTHER_ID, gain
        )
    if block.kind == "die" and block.pips:
        _pips(canvas, block, centre)


def _pips(canvas: Canvas, die: Block, centre: FloatArray) -> None:
    spots = {1: [(0, 0)], 2: [(-1, -1), (1, 1)], 3: [(-1, -1), (0, 0), (1, 1)], 4: [(-1, -1), (-1, 1), (1, -1), (1, 1)]}
    spots[5] = [*spots[4], (0, 0)]
    spots[6] = [*spots[4], (-1, 0), (1, 0)]
    a = math.radians(die.yaw_deg)
    for u, v in spots[die.pips]:
        lx, ly = u * PIP_OFFSET * die.width_mm, v * PIP_OFFSET * die.width_mm
        x = die.x_mm + math.cos(a) * lx - math.sin(a) * ly
        y = die.y_mm + math.sin(a) * lx + math.cos(a) * ly
        ring = circle(x, y, PIP_RADIUS * die.width_mm, die.top_mm + 0.01, 16)
        canvas.fill([canvas.project(ring)], die.pip_colour, OTHER_ID)


def block_item(canvas: Canvas, shade: Shade, block: Block, px_per_mm: float) -> Item:
    corners = block.corners()
    return Item(
        _centre_key(canvas, corners),
        corners,
        canvas.bbox(corners),
        lambda: draw_block(canvas, shade, block, px_per_mm),
        box_planes(corners),
    )
