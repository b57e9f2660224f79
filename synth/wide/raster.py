"""Drawing on a supersampled canvas: 3-D outlines go through the camera pose and lens (``cv2.projectPoints``) and
are filled as polygons (``cv2.fillPoly``), each fill also writing who drew it into an id buffer.

Canvas pixels are ``supersample`` times smaller than the frame's: canvas pixel (i, j) has its centre at frame
pixel ((j + 0.5) / s - 0.5, (i + 0.5) / s - 0.5), so ``cv2.resize(..., INTER_AREA)`` down by ``s`` averages exactly
the samples of each frame pixel."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from synth.camera import Camera, to_cv_frame
from synth.wide.scene import Colour, LightLook

FloatArray = NDArray[np.float64]
Texture = Callable[[int, int], NDArray[np.float32]]

# Sub-pixel bits of the polygon vertices handed to fillPoly (1/16 canvas px).
SHIFT = 4
# Id buffer values: 0 the table (mat, prints, markers), 1..N the top of base N-1, OTHER anything else.
TABLE_ID = 0
OTHER_ID = 65535
# Fill light reaching a vertical wall, as a share of what a level top gets (half the sky is below its horizon).
WALL_SKY = 0.6


@dataclass(frozen=True)
class Shade:
    """Brightness of a surface by its normal: fill light (less on surfaces turned from the sky) plus each lamp's
    direct light, scaled so that a level, unshadowed surface gets exactly 1."""

    ambient: float
    directions: NDArray[np.float64]  # (L, 3) unit vectors towards the lamps
    intensities: NDArray[np.float64]  # (L,) per unit of cos(incidence)

    @classmethod
    def of(cls, light: LightLook) -> Shade:
        dirs = np.array([lamp.direction() for lamp in light.lamps]).reshape(-1, 3)
        shares = np.array([lamp.share for lamp in light.lamps])
        # A level surface gets share * (1 - ambient) from each lamp: divide by sin(elevation) = l_z.
        intensities = shares * (1.0 - light.ambient) / np.maximum(dirs[:, 2], 1e-3)
        return cls(light.ambient, dirs, intensities)

    def of_normals(self, normals: FloatArray) -> FloatArray:
        """(N,) brightness of surfaces with unit ``normals`` (N, 3)."""
        n = np.asarray(normals, dtype=np.float64).reshape(-1, 3)
        sky = self.ambient * (WALL_SKY + (1.0 - WALL_SKY) * np.clip(n[:, 2], 0.0, 1.0))
        direct = np.clip(n @ self.directions.T, 0.0, None) @ self.intensities
        return np.asarray(sky + direct, dtype=np.float64)

    def specular(self, normals: FloatArray, points: FloatArray, camera_mm: FloatArray, power: float) -> FloatArray:
        """(N,) sheen (before the surface's gloss) of surfaces at ``points`` (N, 3) with ``normals`` (N, 3): each
        lamp's share where the normal lies near the half-way direction between lamp and camera."""
        n = np.asarray(normals, dtype=np.float64).reshape(-1, 3)
        view = camera_mm - np.asarray(points, dtype=np.float64).reshape(-1, 3)
        view /= np.linalg.norm(view, axis=1, keepdims=True)
        out = np.zeros(len(n))
        for lamp, weight in zip(self.directions, self.intensities * self.directions[:, 2], strict=True):
            half = view + lamp
            half /= np.linalg.norm(half, axis=1, keepdims=True)
            out += weight * np.clip(np.einsum("ij,ij->i", n, half), 0.0, None) ** power
        return out

    def of_normal(self, normal: tuple[float, float, float]) -> float:
        return float(self.of_normals(np.asarray(normal))[0])


def scaled(colour: Colour, gain: float) -> tuple[float, float, float]:
    return (colour[0] * gain, colour[1] * gain, colour[2] * gain)


class Canvas:
    """The supersampled frame being drawn: ``colour`` (Hs, Ws, 3) float32 radiance, ``ids`` (Hs, Ws) uint16."""

    def __init__(self, camera: Camera, supersample: int, background: NDArray[np.float32]) -> None:
        self.camera = camera
        self.s = supersample
        self.colour = background
        self.ids = np.zeros(background.shape[:2], dtype=np.uint16)
        self._rvec, self._tvec = camera.rvec_tvec()
        self._k = camera.matrix()
        self._dist = camera.dist_coeffs()
        self.position = np.asarray(camera.position_mm, dtype=np.float64)

    @property
    def height(self) -> int:
        return int(self.colour.shape[0])

    @property
    def width(self) -> int:
        return int(self.colour.shape[1])

    def project(self, points_mm: FloatArray) -> FloatArray:
        """(N, 2) canvas pixel positions of table points (N, 3) mm, z up."""
        pts = to_cv_frame(np.asarray(points_mm, dtype=np.float64).reshape(-1, 3))
        px, _ = cv2.projectPoints(pts, self._rvec, self._tvec, self._k, self._dist)
        return np.asarray((px.reshape(-1, 2) + 0.5) * self.s - 0.5, dtype=np.float64)

    def facing(self, points: FloatArray, normals: FloatArray) -> NDArray[np.bool_]:
        """(N,) whether surfaces at ``points`` with ``normals`` face the camera."""
        return np.asarray(np.einsum("ij,ij->i", normals, self.position - points) > 0.0, dtype=bool)

    @staticmethod
    def _fixed(poly: FloatArray, grow: float) -> NDArray[np.int32]:
        pts = erode(np.asarray(poly, dtype=np.float64).reshape(-1, 2), grow)
        return np.asarray(np.rint(pts * (1 << SHIFT)), dtype=np.int32)

    def _contours(self, polys: list[FloatArray]) -> list[NDArray[np.int32]]:
        # The first contour is the outline (eroded), the others are holes in it (grown by the same amount).
        return [self._fixed(p, -1.0 if k else 1.0) for k, p in enumerate(polys)]

    def _roi(self, polys: list[FloatArray]) -> tuple[int, int, int, int] | None:
        pts = np.concatenate([np.asarray(p).reshape(-1, 2) for p in polys])
        x0, y0 = np.floor(pts.min(axis=0)).astype(int)
        x1, y1 = np.ceil(pts.max(axis=0)).astype(int) + 1
        x0, y0, x1, y1 = max(int(x0), 0), max(int(y0), 0), min(int(x1), self.width), min(int(y1), self.height)
        return None if x1 <= x0 or y1 <= y0 else (x0, y0, x1, y1)

    def fill(self, polys: list[FloatArray], colour: Colour, ident: int | None, alpha: float = 1.0) -> None:
        """Fill the polygons (canvas px; several make holes by the even-odd rule) with ``colour``, blended at
        ``alpha``; write ``ident`` into the id buffer (None leaves it)."""
        fixed = self._contours(polys)
        if alpha >= 1.0:
            cv2.fillPoly(self.colour, fixed, colour, cv2.LINE_8, SHIFT)
        else:
            roi = self._roi(polys)
            if roi is None:
                return
            x0, y0, x1, y1 = roi
            mask = np.zeros((y1 - y0, x1 - x0), dtype=np.uint8)
            cv2.fillPoly(mask, fixed, 1, cv2.LINE_8, SHIFT, (-x0 << SHIFT, -y0 << SHIFT))
            sel = mask.astype(bool)
            patch = self.colour[y0:y1, x0:x1]
            patch[sel] = patch[sel] * (1.0 - alpha) + np.asarray(colour, dtype=np.float32) * alpha
        if ident is not None:
            cv2.fillPoly(self.ids, fixed, ident, cv2.LINE_8, SHIFT)

    def fill_texture(self, polys: list[FloatArray], texture: Texture, ident: int | None, gain: float = 1.0) -> None:
        """Fill the polygons with ``texture(h, w)`` ((h, w, 3) float32 over their bounding box) times ``gain``."""
        roi = self._roi(polys)
        if roi is None:
            return
        x0, y0, x1, y1 = roi
        fixed = self._contours(polys)
        mask = np.zeros((y1 - y0, x1 - x0), dtype=np.uint8)
        cv2.fillPoly(mask, fixed, 1, cv2.LINE_8, SHIFT, (-x0 << SHIFT, -y0 << SHIFT))
        sel = mask.astype(bool)
        self.colour[y0:y1, x0:x1][sel] = texture(y1 - y0, x1 - x0)[sel] * np.float32(gain)
        if ident is not None:
            cv2.fillPoly(self.ids, fixed, ident, cv2.LINE_8, SHIFT)

    def bbox(self, points_mm: FloatArray) -> tuple[float, float, float, float]:
        px = self.project(points_mm)
        return (float(px[:, 0].min()), float(px[:, 1].min()), float(px[:, 0].max()), float(px[:, 1].max()))


def erode(poly: FloatArray, sign: float = 1.0) -> FloatArray:
    """The polygon (N, 2) pulled in by what ``cv2.fillPoly`` adds: it fills every pixel whose centre lies
    within half a pixel of the outline in x or y, which grows a shape by the half-pixel square's support,
    0.5 (|n_x| + |n_y|), along each edge's normal n. Each edge is moved back by that much (``sign`` -1 grows
    instead, for holes), so filled areas match the true outline on average."""
    n = len(poly)
    if n < 3:
        return poly
    # the neighbours by index, not np.roll: the same values, at a fraction of the cost on a render's thousands of
    # small polygons
    after = np.arange(1, n + 1) % n
    before = np.arange(-1, n - 1) % n
    area2 = float(np.sum(poly[:, 0] * poly[after, 1] - poly[after, 0] * poly[:, 1]))
    if area2 == 0.0:
        return poly
    edge = poly[after] - poly
    length = np.maximum(np.hypot(edge[:, 0], edge[:, 1]), 1e-12)
    # Inward normal of each edge (vertex k to k + 1) for either winding.
    inward = np.stack([-edge[:, 1], edge[:, 0]], axis=1) / length[:, None] * math.copysign(1.0, area2)
    depth = sign * 0.5 * np.maximum(np.abs(inward[:, 0]), np.abs(inward[:, 1]))
    # Vertex k joins edge k - 1 and edge k: move it so both edges shift by their depth (mitre, capped).
    n0, d0 = inward[before], depth[before]
    n1, d1 = inward, depth
    det = n0[:, 0] * n1[:, 1] - n0[:, 1] * n1[:, 0]
    mitre = np.stack([d0 * n1[:, 1] - d1 * n0[:, 1], d1 * n0[:, 0] - d0 * n1[:, 0]], axis=1)
    flat = np.abs(det) < 0.2
    mitre[~flat] /= det[~flat, None]
    mitre[flat] = (0.5 * (n0 + n1) * (0.5 * (d0 + d1))[:, None])[flat]
    out = poly + mitre
    moved = float(np.sum(out[:, 0] * out[after, 1] - out[after, 0] * out[:, 1]))
    # A sliver thinner than a pixel would turn inside out: keep it as it was.
    return out if moved * area2 > 0 else poly


def circle(x: float, y: float, r: float, z: float, n: int) -> FloatArray:
    """(n, 3) points round a level circle, mm."""
    t = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    return np.stack([x + r * np.cos(t), y + r * np.sin(t), np.full(n, z)], axis=1)


def segments_for(canvas: Canvas, radius_mm: float, scale_px_per_mm: float) -> int:
    """Vertices for a circle of that radius: about one every 4 canvas px, 24 to 160."""
    return int(np.clip(2 * math.pi * radius_mm * scale_px_per_mm * canvas.s / 4.0, 24, 160))


def noise_texture(rng: np.random.Generator, colour: Colour, strength: float, blur_px: float) -> Texture:
    """A texture of ``colour`` with blotchy brightness noise of relative ``strength`` and feature ``blur_px``."""
    c = np.asarray(colour, dtype=np.float32)

    def make(h: int, w: int) -> NDArray[np.float32]:
        n = rng.standard_normal((h, w)).astype(np.float32)
        if blur_px > 0.3:
            n = np.asarray(cv2.GaussianBlur(n, (0, 0), blur_px), dtype=np.float32)
            n /= max(float(n.std()), 1e-6)
        return np.asarray(c * (1.0 + strength * np.clip(n, -2.5, 2.5))[..., None], dtype=np.float32)

    return make
