"""What a wide-look frame shows, as plain data: bases with their figures, terrain blocks, dice, hands, the mat and
its prints, the light and the camera's imaging. Everything is in table millimetres (z up, as in
:mod:`synth.camera`); colours are BGR triples in [0, 1] (linear light, before the camera's tint)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from calibration.spec import TableSpec
from rules.state import Model, RoundBase, Table, TableState, Terrain, Unit
from synth.camera import Camera

Colour = tuple[float, float, float]
Vec3 = tuple[float, float, float]
FloatArray = NDArray[np.float64]

# Surface points sampled per convex part: enough that the hull of their projection is within a hundredth of the
# part's size of its true silhouette.
_RING = 24
_LATITUDES = 9


@dataclass(frozen=True)
class Blob:
    """An ellipsoid: ``centre`` (mm), semi-axes ``radii`` (mm) along x, y, z before it is turned by ``yaw_deg``
    about the vertical."""

    centre: Vec3
    radii: Vec3
    yaw_deg: float
    colour: Colour

    def surface(self) -> FloatArray:
        """(N, 3) points on the surface, mm."""
        lat = np.linspace(-math.pi / 2, math.pi / 2, _LATITUDES)
        lon = np.linspace(0.0, 2 * math.pi, _RING, endpoint=False)
        la, lo = np.meshgrid(lat, lon, indexing="ij")
        local = np.stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)], axis=-1).reshape(-1, 3)
        local = local * np.asarray(self.radii)
        a = math.radians(self.yaw_deg)
        c, s = math.cos(a), math.sin(a)
        x = c * local[:, 0] - s * local[:, 1]
        y = s * local[:, 0] + c * local[:, 1]
        return np.asarray(np.stack([x, y, local[:, 2]], axis=-1) + np.asarray(self.centre), dtype=np.float64)

    def normals(self) -> FloatArray:
        """(N, 3) unit outward normals at :meth:`surface`'s points."""
        p = self.surface() - np.asarray(self.centre)
        a = math.radians(-self.yaw_deg)
        c, s = math.cos(a), math.sin(a)
        local = np.stack([c * p[:, 0] - s * p[:, 1], s * p[:, 0] + c * p[:, 1], p[:, 2]], axis=-1)
        g = local / np.square(np.asarray(self.radii))
        b = math.radians(self.yaw_deg)
        c, s = math.cos(b), math.sin(b)
        n = np.stack([c * g[:, 0] - s * g[:, 1], s * g[:, 0] + c * g[:, 1], g[:, 2]], axis=-1)
        return np.asarray(n / np.linalg.norm(n, axis=1, keepdims=True), dtype=np.float64)


@dataclass(frozen=True)
class Stick:
    """A capsule from ``start`` to ``end`` (mm) of ``radius`` mm: limbs, spears, banner poles, fingers."""

    start: Vec3
    end: Vec3
    radius: float
    colour: Colour

    def surface(self) -> FloatArray:
        """(N, 3) points on the two end spheres (the capsule is their convex hull), mm."""
        return np.concatenate([self._sphere(self.start), self._sphere(self.end)])

    def normals(self) -> FloatArray:
        """(N, 3) unit normals at :meth:`surface`'s points."""
        return np.concatenate([self._sphere((0.0, 0.0, 0.0)) / self.radius] * 2)

    def _sphere(self, centre: Vec3) -> FloatArray:
        return Blob(centre, (self.radius,) * 3, 0.0, self.colour).surface()


@dataclass(frozen=True)
class Flag:
    """A flat four-cornered cloth (a banner), corners in mm, drawn from both sides."""

    corners: tuple[Vec3, Vec3, Vec3, Vec3]
    colour: Colour

    def surface(self) -> FloatArray:
        return np.asarray(self.corners, dtype=np.float64)

    def normals(self) -> FloatArray:
        c = self.surface()
        n = np.cross(c[1] - c[0], c[3] - c[0])
        n = n / max(float(np.linalg.norm(n)), 1e-9)
        # Two-sided: the side facing up catches the light.
        n = n if n[2] >= 0 else -n
        return np.repeat(n[None, :], 4, axis=0)


Part = Blob | Stick | Flag


@dataclass(frozen=True)
class WideBase:
    """A model: a round base (diameter and rim height in mm; a sloped bevel band ``bevel_mm`` wide at the top of
    the rim, rising ``bevel_rise_mm``, when ``bevel_mm`` > 0) and the figure standing on it.

    ``top`` and ``figure`` are the appearance categories the evaluation breaks results down by; ``parts`` are the
    figure's convex pieces in table mm. ``texture_seed`` makes flock and grain the same on every render."""

    id: str
    unit: str
    x_mm: float
    y_mm: float
    diameter_mm: float
    rim_height_mm: float
    bevel_mm: float
    bevel_rise_mm: float
    top: str
    top_colour: Colour
    rim: str
    rim_colour: Colour
    figure: str
    parts: tuple[Part, ...]
    texture_seed: int
    gloss: float = 0.15

    @property
    def radius_mm(self) -> float:
        return self.diameter_mm / 2.0

    @property
    def wall_mm(self) -> float:
        """Height of the vertical wall, below the bevel band."""
        return self.rim_height_mm - self.bevel_rise_mm


@dataclass(frozen=True)
class Block:
    """A box on the table: terrain (``kind`` solid, platform raised on pillars, pillar) or a die (kind die, with
    ``pips`` up). Centre, size and turn in mm and degrees; ``bottom_mm``/``top_mm`` its vertical extent."""

    id: str
    kind: str
    x_mm: float
    y_mm: float
    width_mm: float
    depth_mm: float
    yaw_deg: float
    bottom_mm: float
    top_mm: float
    colour: Colour
    pips: int = 0
    pip_colour: Colour = (0.9, 0.9, 0.9)

    def footprint(self) -> FloatArray:
        """(4, 2) corners of the footprint, mm, counter-clockwise seen from above with y down."""
        hw, hd = self.width_mm / 2.0, self.depth_mm / 2.0
        local = np.array([[-hw, -hd], [hw, -hd], [hw, hd], [-hw, hd]])
        a = math.radians(self.yaw_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        return np.asarray(local @ rot.T + np.array([self.x_mm, self.y_mm]), dtype=np.float64)

    def corners(self) -> FloatArray:
        """(8, 3) corners: the bottom four then the top four, mm."""
        f = self.footprint()
        low = np.concatenate([f, np.full((4, 1), self.bottom_mm)], axis=1)
        high = np.concatenate([f, np.full((4, 1), self.top_mm)], axis=1)
        return np.concatenate([low, high])


@dataclass(frozen=True)
class MatLook:
    """The gaming mat: its kind (grass, desert, urban, space), two colours mixed in large blotches, and texture
    strengths at three scales: fine grain (per pixel), mottling (``mottle_mm`` features) and blotches
    (``blotch_mm``). ``speckle`` is the share of pixels with a grass or grit fleck; ``paving_mm`` > 0 draws slab
    joints that far apart (urban)."""

    kind: str
    colour_a: Colour
    colour_b: Colour
    grain: float
    mottle: float
    mottle_mm: float
    blotch: float
    blotch_mm: float
    speckle: float
    paving_mm: float
    floor: Colour
    seed: int


@dataclass(frozen=True)
class Print:
    """Something round printed on the mat: a tyre, manhole, crater, ring, disc, debris chip or star. Centre and
    radius in mm; ``line_mm`` the ring width where it has one."""

    kind: str
    x_mm: float
    y_mm: float
    radius_mm: float
    line_mm: float
    colour: Colour
    colour_2: Colour
    seed: int


@dataclass(frozen=True)
class Lamp:
    """A point light far enough to treat as a direction: azimuth (from +x towards +y) and elevation in degrees,
    its share of the direct light, and the blur of its shadows' edges in mm (soft or hard)."""

    azimuth_deg: float
    elevation_deg: float
    share: float
    softness_mm: float

    def direction(self) -> FloatArray:
        """(3,) unit vector from the table towards the light."""
        a, e = math.radians(self.azimuth_deg), math.radians(self.elevation_deg)
        return np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])


@dataclass(frozen=True)
class LightLook:
    """The light of the room: a BGR tint (gains), fill light share ``ambient``, lamps, vignetting (share lost at
    the corners), a glare spot (image x, y as shares of the frame, radius as a share of its width, strength; 0
    for none), a linear brightness gradient across the frame and the global brightness."""

    tint: str
    gains: Colour
    ambient: float
    lamps: tuple[Lamp, ...]
    vignetting: float
    glare: tuple[float, float, float, float]
    gradient: tuple[float, float]
    brightness: float


@dataclass(frozen=True)
class Imaging:
    """The camera's own doing: supersampling of the drawing, optics blur (px), read and shot noise (grey levels),
    JPEG quality."""

    supersample: int
    blur_px: float
    read_noise: float
    shot_noise: float
    jpeg_quality: int


@dataclass(frozen=True)
class WideScene:
    """One frame's content. ``resolution`` names the camera (1080p, 4k, 12mp or custom)."""

    table: TableSpec
    table_name: str
    camera: Camera
    resolution: str
    units: tuple[Unit, ...]
    bases: tuple[WideBase, ...]
    blocks: tuple[Block, ...]
    hands: tuple[tuple[Part, ...], ...]
    mat: MatLook
    prints: tuple[Print, ...]
    light: LightLook
    imaging: Imaging

    def state(self) -> TableState:
        """The exact table state: models with rim heights, solid blocks as solid terrain, platforms as area."""
        models = tuple(
            Model(
                id=b.id,
                unit=b.unit,
                x_mm=b.x_mm,
                y_mm=b.y_mm,
                base=RoundBase(b.diameter_mm, height_mm=b.rim_height_mm),
            )
            for b in self.bases
        )
        terrain = tuple(
            Terrain(
                id=t.id,
                kind="solid" if t.kind == "solid" else "area",
                polygon=tuple((float(x), float(y)) for x, y in t.footprint()),
                height_mm=t.top_mm,
            )
            for t in self.blocks
            if t.kind in ("solid", "platform")
        )
        return TableState(
            table=Table(self.table.width_mm, self.table.depth_mm), units=self.units, models=models, terrain=terrain
        )


def contacts(bases: tuple[WideBase, ...] | list[WideBase], within_mm: float = 0.5) -> list[bool]:
    """Per base: whether another base's edge lies within ``within_mm`` of its own (base contact)."""
    if len(bases) < 2:
        return [False] * len(bases)
    xy = np.array([[b.x_mm, b.y_mm] for b in bases])
    r = np.array([b.radius_mm for b in bases])
    gap = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1]) - r[:, None] - r[None, :]
    np.fill_diagonal(gap, np.inf)
    return [bool(g) for g in (gap.min(axis=1) <= within_mm + 1e-9)]


def part_dict(part: Part) -> dict[str, Any]:
    """A figure part as JSON-ready data, with its kind."""
    kind = {Blob: "blob", Stick: "stick", Flag: "flag"}[type(part)]
    return {"kind": kind, **dataclasses.asdict(part)}
