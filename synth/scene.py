"""What a synthetic frame shows: the scene description, as frozen values.

Lengths are table millimetres (z up, the table top at z = 0; see :mod:`synth.camera`), angles degrees,
colours BGR albedo triples in [0, 1] (the share of light a surface reflects, before lighting).

"The base" of a model is a cylinder standing on the table: its side wall runs from z = 0 to ``rim_height_mm`` and
its top disc lies at ``rim_height_mm``. The outline of that top disc (the top rim) is the circle a detector sees and
the ground truth describes: its centre is the model's ``x_mm, y_mm`` and its size the model's base.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from types import MappingProxyType

from calibration.spec import TableSpec
from rules.errors import StateError
from rules.state import Model, RoundBase, Table, TableState, Terrain, Unit
from synth.camera import Camera
from synth.errors import SceneError

Colour = tuple[float, float, float]
Vec3 = tuple[float, float, float]

# Albedo of the usual base paints (BGR). Black and sand differ by an order of magnitude, as real paints do.
BASE_COLOURS: MappingProxyType[str, Colour] = MappingProxyType(
    {
        "black": (0.045, 0.045, 0.05),
        "grey": (0.33, 0.33, 0.32),
        "brown": (0.09, 0.17, 0.27),
        "green": (0.12, 0.32, 0.16),
        "sand": (0.42, 0.58, 0.68),
    }
)

DIE_FACES = (1, 2, 3, 4, 5, 6)


def _check_colour(colour: Colour, where: str) -> None:
    if len(colour) != 3 or not all(0.0 <= c <= 1.0 for c in colour):
        raise SceneError(f"{where}: colour must be three BGR albedo values in [0, 1], got {colour!r}")


@dataclass(frozen=True)
class Ellipsoid:
    """A blob: semi-axes ``radii_mm`` along its own x, y, z, turned by ``pitch_deg`` (own x up towards +z) and
    then ``yaw_deg`` (about z, from +x towards +y)."""

    center_mm: Vec3
    radii_mm: Vec3
    yaw_deg: float
    pitch_deg: float
    colour: Colour


@dataclass(frozen=True)
class Capsule:
    """A rod with round ends: every point within ``radius_mm`` of the segment from ``start_mm`` to ``end_mm``."""

    start_mm: Vec3
    end_mm: Vec3
    radius_mm: float
    colour: Colour


Part = Ellipsoid | Capsule


@dataclass(frozen=True)
class Figure:
    """A miniature standing on its base, as parts in the base's frame: origin at the centre of the base top, x
    towards the model's facing, z up. Parts may reach past the rim (a weapon, a cloak)."""

    parts: tuple[Part, ...]

    @property
    def height_mm(self) -> float:
        """Height of the figure's top over the base top (a bound: ellipsoids count their largest semi-axis)."""
        return max((_part_top(p) for p in self.parts), default=0.0)


def _part_top(part: Part) -> float:
    if isinstance(part, Ellipsoid):
        return part.center_mm[2] + max(part.radii_mm)
    return max(part.start_mm[2], part.end_mm[2]) + part.radius_mm


@dataclass(frozen=True)
class SceneModel:
    """A model on the table: the rules' :class:`rules.Model` (id, unit, exact centre, base size) and how it looks.

    ``rim_colour`` paints the side wall, ``top_colour`` the top disc (names from :data:`BASE_COLOURS`; the same name
    for a plain base). ``facing_deg`` turns the figure (from +x towards +y).
    """

    model: Model
    rim_height_mm: float
    rim_colour: str
    top_colour: str
    facing_deg: float
    figure: Figure | None

    def __post_init__(self) -> None:
        where = f"model {self.model.id!r}"
        if not self.rim_height_mm > 0:
            raise SceneError(f"{where}: rim_height_mm must be positive, got {self.rim_height_mm}")
        for name in (self.rim_colour, self.top_colour):
            if name not in BASE_COLOURS:
                raise SceneError(f"{where}: base colour {name!r} is not one of {', '.join(BASE_COLOURS)}")

    def stated(self) -> Model:
        """The rules' model as a roster would state it: a round base with its rim height."""
        if isinstance(self.model.base, RoundBase):
            return replace(self.model, base=replace(self.model.base, height_mm=self.rim_height_mm))
        return self.model


@dataclass(frozen=True)
class Die:
    """A cube die resting on the table, ``top_face`` pips up."""

    x_mm: float
    y_mm: float
    size_mm: float
    yaw_deg: float
    colour: Colour
    pip_colour: Colour
    top_face: int

    def __post_init__(self) -> None:
        if self.top_face not in DIE_FACES:
            raise SceneError(f"die top_face must be 1 to 6, got {self.top_face}")
        _check_colour(self.colour, "die")
        _check_colour(self.pip_colour, "die pips")


@dataclass(frozen=True)
class Token:
    """A flat round counter lying on the table: a disc of ``colour`` with a printed ring of ``ring_colour``."""

    x_mm: float
    y_mm: float
    diameter_mm: float
    height_mm: float
    colour: Colour
    ring_colour: Colour


@dataclass(frozen=True)
class PrintedCircle:
    """A circle printed on the mat (an objective marker, a crater): a ring of ``line_mm`` width, or a filled disc
    when ``line_mm`` is 0. Flat, and not a base."""

    x_mm: float
    y_mm: float
    radius_mm: float
    line_mm: float
    colour: Colour


@dataclass(frozen=True)
class TerrainBlock:
    """A solid box of terrain from ``bottom_mm`` up to ``top_mm`` (bottom 0: standing on the table; above 0: an
    overhang such as a walkway). Footprint ``width_mm`` x ``depth_mm`` centred on ``x_mm, y_mm``, turned by
    ``yaw_deg``."""

    id: str
    x_mm: float
    y_mm: float
    width_mm: float
    depth_mm: float
    yaw_deg: float
    bottom_mm: float
    top_mm: float
    colour: Colour

    def footprint_mm(self) -> tuple[tuple[float, float], ...]:
        """The four footprint corners (x_mm, y_mm), counter-clockwise from +x towards +y."""
        a = math.radians(self.yaw_deg)
        c, s = math.cos(a), math.sin(a)
        hw, hd = self.width_mm / 2.0, self.depth_mm / 2.0
        local = ((-hw, -hd), (hw, -hd), (hw, hd), (-hw, hd))
        return tuple((self.x_mm + c * u - s * v, self.y_mm + s * u + c * v) for u, v in local)


@dataclass(frozen=True)
class Hand:
    """A player's hand and forearm reaching in over the table.

    ``wrist_mm`` is the wrist; the forearm runs from there towards ``azimuth_deg`` (the direction the arm comes
    from, from +x towards +y), rising at ``elevation_deg``. The palm and fingers point the other way, down by
    ``fingers_down_deg``.
    """

    wrist_mm: Vec3
    azimuth_deg: float
    elevation_deg: float
    fingers_down_deg: float
    skin: Colour


@dataclass(frozen=True)
class Mat:
    """The gaming mat: two colours mixed in patches, brightness grain (relative, 1 sigma), grass-like speckle
    (specks per cm²), and the floor colour beyond the table edge. ``seed`` fixes the texture, so a sequence of
    frames of one table shows the same mat."""

    colour_a: Colour
    colour_b: Colour
    grain: float
    speckle_per_cm2: float
    floor: Colour
    seed: int


@dataclass(frozen=True)
class Lighting:
    """One main light and the room's fill light.

    The main light comes from ``azimuth_deg`` (from +x towards +y) at ``elevation_deg`` above the table.
    ``ambient`` and ``diffuse`` weight the fill and the main light; ``shadow_strength`` is how much of the main
    light a shadow takes away. Shadows blur by ``penumbra_mm`` plus ``penumbra_per_mm`` per mm of the caster's
    height (a light of finite size). ``gradient_x`` / ``gradient_y`` change the light by that fraction from the
    table centre to its +x / +y edge; ``vignetting`` darkens the image corners by that fraction.
    """

    azimuth_deg: float
    elevation_deg: float
    ambient: float
    diffuse: float
    shadow_strength: float
    penumbra_mm: float
    penumbra_per_mm: float
    gradient_x: float
    gradient_y: float
    vignetting: float

    def __post_init__(self) -> None:
        if not 5.0 <= self.elevation_deg <= 90.0:
            raise SceneError(f"light elevation_deg must be 5 to 90, got {self.elevation_deg}")

    def direction(self) -> Vec3:
        """Unit vector from the table towards the main light."""
        az, el = math.radians(self.azimuth_deg), math.radians(self.elevation_deg)
        return (math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el))


@dataclass(frozen=True)
class Imaging:
    """What the camera does to the light: ``supersample`` x ``supersample`` samples per pixel, optics blur
    (Gaussian sigma, px), sensor noise (read noise in grey levels of 255, shot noise in grey levels at full white),
    and JPEG compression (quality 1-100, 0: none)."""

    supersample: int
    blur_px: float
    read_noise: float
    shot_noise: float
    jpeg_quality: int

    def __post_init__(self) -> None:
        if not 1 <= self.supersample <= 8:
            raise SceneError(f"supersample must be 1 to 8, got {self.supersample}")
        if not 0 <= self.jpeg_quality <= 100:
            raise SceneError(f"jpeg_quality must be 0 (none) or 1 to 100, got {self.jpeg_quality}")
        if self.blur_px < 0 or self.read_noise < 0 or self.shot_noise < 0:
            raise SceneError("blur_px, read_noise and shot_noise must not be negative")


@dataclass(frozen=True)
class Scene:
    """Everything in one frame: the table (with its markers), the camera, the units and models, the clutter, the
    mat, the light and the imaging."""

    table: TableSpec
    camera: Camera
    units: tuple[Unit, ...]
    models: tuple[SceneModel, ...]
    dice: tuple[Die, ...]
    tokens: tuple[Token, ...]
    printed: tuple[PrintedCircle, ...]
    terrain: tuple[TerrainBlock, ...]
    hands: tuple[Hand, ...]
    mat: Mat
    lighting: Lighting
    imaging: Imaging

    def __post_init__(self) -> None:
        self.camera.check_lens()
        try:
            self.state()  # validates ids, units and sizes the way the rules will read them
        except StateError as exc:
            raise SceneError(f"the scene's models and units do not make a table state: {exc}") from None
        if any(t.top_mm <= t.bottom_mm or t.bottom_mm < 0 for t in self.terrain):
            raise SceneError("terrain blocks need 0 <= bottom_mm < top_mm")

    def state(self) -> TableState:
        """The exact table state this scene shows (models with their units; standing blocks as solid terrain,
        overhangs as area terrain)."""
        terrain = tuple(
            Terrain(
                id=t.id,
                kind="solid" if t.bottom_mm == 0 else "area",
                polygon=t.footprint_mm(),
                height_mm=t.top_mm,
            )
            for t in self.terrain
        )
        return TableState(
            table=Table(self.table.width_mm, self.table.depth_mm),
            units=self.units,
            models=tuple(m.stated() for m in self.models),
            terrain=terrain,
        )
