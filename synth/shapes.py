"""Solid shapes the renderer casts rays at: exact ray intersections, surface normals and albedo.

Every shape answers for one ray origin and many unit directions (any leading array shape, last axis xyz, table
frame with z up): :meth:`Shape.intersect` gives the distance along each ray to the first hit (``inf`` for a miss)
and a small surface code; :meth:`Shape.shade` gives the unit normal and albedo at hit points; :meth:`Shape.hull`
gives surface points whose projection bounds the shape (for its screen box and its shadow).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
Codes = NDArray[np.int8]
# Albedo of a surface point: (points (N, 3), surface codes (N,)) -> albedo (N, 3).
AlbedoFn = Callable[[FloatArray, Codes], FloatArray]

# Rays closer than this to parallel with a surface are treated as missing it (avoids 0/0 on grazing rays).
_EPS = 1e-12

# Cylinder surfaces.
TOP = 0
SIDE = 1

# Box faces: +z, -z, +x, -x, +y, -y in the box's own frame.
BOX_NORMALS = np.array([[0, 0, 1], [0, 0, -1], [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]], dtype=np.float64)

# Points on the surface used for screen boxes and shadows: enough that the projected outline between them bulges by
# well under a pixel.
_RING_POINTS = 72
_SPHERE_POINTS = 12


def _rot_z(deg: float) -> FloatArray:
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rot_pitch(deg: float) -> FloatArray:
    """Rotation that tips the local +x axis up towards +z by ``deg``."""
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])


def _unit_sphere_points() -> FloatArray:
    lat = np.linspace(-math.pi / 2, math.pi / 2, _SPHERE_POINTS)
    lon = np.linspace(0.0, 2 * math.pi, 2 * _SPHERE_POINTS, endpoint=False)
    la, lo = np.meshgrid(lat, lon)
    return np.stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)], axis=-1).reshape(-1, 3)


_SPHERE = _unit_sphere_points()


def uniform(colour: tuple[float, float, float]) -> AlbedoFn:
    """An albedo function of one colour everywhere."""
    c = np.asarray(colour, dtype=np.float64)

    def albedo(points: FloatArray, codes: Codes) -> FloatArray:
        return np.broadcast_to(c, points.shape).copy()

    return albedo


@dataclass
class Shape:
    """Common fields: ``role`` (base, figure, token, die, terrain, hand), the model id a base or figure part belongs
    to, whether it receives cast shadows, and whether it casts them onto raised surfaces (base tops) too."""

    role: str
    owner: str | None
    receives_shadow: bool
    casts_high: bool

    def intersect(self, origin: FloatArray, d: FloatArray) -> tuple[FloatArray, Codes]:
        raise NotImplementedError

    def shade(self, points: FloatArray, codes: Codes) -> tuple[FloatArray, FloatArray]:
        raise NotImplementedError

    def hull(self) -> FloatArray:
        raise NotImplementedError


@dataclass
class Cylinder(Shape):
    """A vertical cylinder of elliptic section (semi-axes ``a``, ``b`` turned by ``yaw_deg``) from ``z0`` to
    ``z1``: a base, a token. Codes: :data:`TOP`, :data:`SIDE`."""

    x: float
    y: float
    a: float
    b: float
    yaw_deg: float
    z0: float
    z1: float
    side_albedo: AlbedoFn
    top_albedo: AlbedoFn

    def _local(self, vx: FloatArray, vy: FloatArray) -> tuple[FloatArray, FloatArray]:
        a = math.radians(self.yaw_deg)
        c, s = math.cos(a), math.sin(a)
        return (c * vx + s * vy) / self.a, (-s * vx + c * vy) / self.b

    def local_xy(self, points: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Points' coordinates in the cylinder's turned frame, mm from its axis."""
        a = math.radians(self.yaw_deg)
        c, s = math.cos(a), math.sin(a)
        vx, vy = points[..., 0] - self.x, points[..., 1] - self.y
        return c * vx + s * vy, -s * vx + c * vy

    def intersect(self, origin: FloatArray, d: FloatArray) -> tuple[FloatArray, Codes]:
        ox, oy = self._local(np.asarray(origin[0] - self.x), np.asarray(origin[1] - self.y))
        dx, dy = self._local(d[..., 0], d[..., 1])
        qa = dx * dx + dy * dy
        qb = 2.0 * (ox * dx + oy * dy)
        qc = ox * ox + oy * oy - 1.0
        disc = qb * qb - 4.0 * qa * qc
        ok = (disc >= 0) & (qa > _EPS)
        with np.errstate(invalid="ignore", divide="ignore"):
            t_side = np.where(ok, (-qb - np.sqrt(np.where(ok, disc, 0.0))) / np.where(ok, 2.0 * qa, 1.0), np.inf)
            z_side = origin[2] + t_side * d[..., 2]
            t_side = np.where((t_side > 0) & (z_side >= self.z0) & (z_side <= self.z1), t_side, np.inf)
            t_top = np.where(d[..., 2] < -_EPS, (self.z1 - origin[2]) / d[..., 2], np.inf)
        tx = ox + np.where(np.isfinite(t_top), t_top, 0.0) * dx
        ty = oy + np.where(np.isfinite(t_top), t_top, 0.0) * dy
        t_top = np.where((t_top > 0) & (tx * tx + ty * ty <= 1.0), t_top, np.inf)
        codes = np.where(t_top <= t_side, TOP, SIDE).astype(np.int8)
        return np.minimum(t_top, t_side), codes

    def shade(self, points: FloatArray, codes: Codes) -> tuple[FloatArray, FloatArray]:
        lx, ly = self.local_xy(points)
        a = math.radians(self.yaw_deg)
        c, s = math.cos(a), math.sin(a)
        gx, gy = lx / (self.a * self.a), ly / (self.b * self.b)
        side_n = np.stack([c * gx - s * gy, s * gx + c * gy, np.zeros_like(gx)], axis=-1)
        side_n /= np.maximum(np.linalg.norm(side_n, axis=-1, keepdims=True), _EPS)
        top = (codes == TOP)[..., None]
        normals = np.where(top, np.array([0.0, 0.0, 1.0]), side_n)
        albedo = np.where(top, self.top_albedo(points, codes), self.side_albedo(points, codes))
        return normals, albedo

    def hull(self) -> FloatArray:
        t = np.linspace(0.0, 2 * math.pi, _RING_POINTS, endpoint=False)
        a = math.radians(self.yaw_deg)
        c, s = math.cos(a), math.sin(a)
        u, v = self.a * np.cos(t), self.b * np.sin(t)
        x, y = self.x + c * u - s * v, self.y + s * u + c * v
        return np.concatenate(
            [np.stack([x, y, np.full_like(x, z)], axis=-1) for z in (self.z0, self.z1)],
            axis=0,
        )


@dataclass
class Box(Shape):
    """A box standing upright, turned by ``yaw_deg`` about z: terrain, a die. Codes index :data:`BOX_NORMALS`."""

    x: float
    y: float
    half_x: float
    half_y: float
    yaw_deg: float
    z0: float
    z1: float
    albedo_fn: AlbedoFn

    def local(self, points: FloatArray) -> FloatArray:
        """Points in the box's own frame (origin at the centre of its volume)."""
        a = math.radians(self.yaw_deg)
        c, s = math.cos(a), math.sin(a)
        vx, vy = points[..., 0] - self.x, points[..., 1] - self.y
        zc = 0.5 * (self.z0 + self.z1)
        return np.stack([c * vx + s * vy, -s * vx + c * vy, points[..., 2] - zc], axis=-1)

    def intersect(self, origin: FloatArray, d: FloatArray) -> tuple[FloatArray, Codes]:
        o = self.local(origin)
        a = math.radians(self.yaw_deg)
        c, s = math.cos(a), math.sin(a)
        dl = (c * d[..., 0] + s * d[..., 1], -s * d[..., 0] + c * d[..., 1], d[..., 2])
        half = (self.half_x, self.half_y, 0.5 * (self.z1 - self.z0))
        t_near = np.full(d.shape[:-1], -np.inf)
        t_far = np.full(d.shape[:-1], np.inf)
        codes = np.zeros(d.shape[:-1], dtype=np.int8)
        for axis in range(3):
            with np.errstate(divide="ignore", invalid="ignore"):
                inv = 1.0 / dl[axis]
                t1 = (-half[axis] - o[axis]) * inv
                t2 = (half[axis] - o[axis]) * inv
            lo = np.fmin(t1, t2)
            hi = np.fmax(t1, t2)
            # A ray parallel to this slab: inside it for all t, or never.
            parallel = np.abs(dl[axis]) < _EPS
            inside = abs(o[axis]) <= half[axis]
            lo = np.where(parallel, -np.inf if inside else np.inf, lo)
            hi = np.where(parallel, np.inf if inside else -np.inf, hi)
            # Entering through the face whose outward normal opposes the ray.
            face = np.where(dl[axis] > 0, 2 * ((axis + 1) % 3) + 1, 2 * ((axis + 1) % 3)).astype(np.int8)
            take = lo > t_near
            codes = np.where(take, face, codes)
            t_near = np.maximum(t_near, lo)
            t_far = np.minimum(t_far, hi)
        hit = (t_near <= t_far) & (t_near > 0)
        return np.where(hit, t_near, np.inf), codes

    def shade(self, points: FloatArray, codes: Codes) -> tuple[FloatArray, FloatArray]:
        local_n = BOX_NORMALS[codes.astype(np.intp)]
        rot = _rot_z(self.yaw_deg)
        return local_n @ rot.T, self.albedo_fn(points, codes)

    def hull(self) -> FloatArray:
        rot = _rot_z(self.yaw_deg)
        edge = np.linspace(-1.0, 1.0, 9)
        pts = []
        for sx in (-1.0, 1.0):
            for sy in (-1.0, 1.0):
                pts.append(np.stack([np.full(9, sx), np.full(9, sy), edge], axis=-1))
                pts.append(np.stack([np.full(9, sx), edge, np.full(9, sy)], axis=-1))
                pts.append(np.stack([edge, np.full(9, sx), np.full(9, sy)], axis=-1))
        unit = np.concatenate(pts)
        half = np.array([self.half_x, self.half_y, 0.5 * (self.z1 - self.z0)])
        centre = np.array([self.x, self.y, 0.5 * (self.z0 + self.z1)])
        return np.asarray((unit * half) @ rot.T + centre, dtype=np.float64)


@dataclass
class EllipsoidShape(Shape):
    """An ellipsoid: centre, semi-axes, and the rotation ``yaw(pitch(.))`` of its own axes."""

    center: FloatArray
    radii: FloatArray
    yaw_deg: float
    pitch_deg: float
    albedo_fn: AlbedoFn

    def _rotation(self) -> FloatArray:
        return _rot_z(self.yaw_deg) @ _rot_pitch(self.pitch_deg)

    def intersect(self, origin: FloatArray, d: FloatArray) -> tuple[FloatArray, Codes]:
        rot = self._rotation()
        o = (rot.T @ (origin - self.center)) / self.radii
        dl = (d @ rot) / self.radii
        qa = np.einsum("...i,...i->...", dl, dl)
        qb = 2.0 * (dl @ o)
        qc = float(o @ o) - 1.0
        disc = qb * qb - 4.0 * qa * qc
        ok = disc >= 0
        t = (-qb - np.sqrt(np.where(ok, disc, 0.0))) / (2.0 * qa)
        return np.where(ok & (t > 0), t, np.inf), np.zeros(d.shape[:-1], dtype=np.int8)

    def shade(self, points: FloatArray, codes: Codes) -> tuple[FloatArray, FloatArray]:
        rot = self._rotation()
        local = ((points - self.center) @ rot) / (self.radii * self.radii)
        n = local @ rot.T
        n /= np.maximum(np.linalg.norm(n, axis=-1, keepdims=True), _EPS)
        return n, self.albedo_fn(points, codes)

    def hull(self) -> FloatArray:
        return np.asarray((_SPHERE * self.radii) @ self._rotation().T + self.center, dtype=np.float64)


@dataclass
class CapsuleShape(Shape):
    """Every point within ``radius`` of the segment ``start``-``end``."""

    start: FloatArray
    end: FloatArray
    radius: float
    albedo_fn: AlbedoFn

    def intersect(self, origin: FloatArray, d: FloatArray) -> tuple[FloatArray, Codes]:
        ba = self.end - self.start
        oa = origin - self.start
        baba = float(ba @ ba)
        bard = d @ ba
        baoa = float(ba @ oa)
        rdoa = d @ oa
        oaoa = float(oa @ oa)
        r2 = self.radius * self.radius
        qa = baba - bard * bard
        qb = baba * rdoa - baoa * bard
        qc = baba * oaoa - baoa * baoa - r2 * baba
        h = qb * qb - qa * qc
        body_ok = (h >= 0) & (qa > _EPS * baba)
        with np.errstate(invalid="ignore", divide="ignore"):
            t_body = (-qb - np.sqrt(np.where(body_ok, h, 0.0))) / np.where(body_ok, qa, 1.0)
        y = baoa + t_body * bard
        t = np.where(body_ok & (y > 0) & (y < baba) & (t_body > 0), t_body, np.inf)
        # The round ends: spheres at both ends of the segment, whichever is nearer.
        for centre in (self.start, self.end):
            oc = origin - centre
            b = d @ oc
            c = float(oc @ oc) - r2
            hh = b * b - c
            ok = hh >= 0
            tc = -b - np.sqrt(np.where(ok, hh, 0.0))
            t = np.where(ok & (tc > 0) & (tc < t), tc, t)
        return t, np.zeros(d.shape[:-1], dtype=np.int8)

    def shade(self, points: FloatArray, codes: Codes) -> tuple[FloatArray, FloatArray]:
        ba = self.end - self.start
        s = np.clip(((points - self.start) @ ba) / float(ba @ ba), 0.0, 1.0)
        n = points - (self.start + s[..., None] * ba)
        n /= np.maximum(np.linalg.norm(n, axis=-1, keepdims=True), _EPS)
        return n, self.albedo_fn(points, codes)

    def hull(self) -> FloatArray:
        ball = _SPHERE * self.radius
        return np.concatenate([ball + self.start, ball + self.end])
