"""Ready-made scenes: a plausible game at random (:func:`random_scene`), and a bare table for exact tests
(:func:`plain_scene`). Every random choice comes from the seed; the same seed gives the same scene."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from calibration.spec import TableSpec, load_table_spec
from rules.state import Model, RoundBase, Unit
from synth.camera import Camera
from synth.errors import SceneError
from synth.prints import MARKER_MARGIN_MM
from synth.render import hand_shapes
from synth.scene import (
    BASE_COLOURS,
    Capsule,
    Colour,
    Die,
    Ellipsoid,
    Figure,
    Hand,
    Imaging,
    Lighting,
    Mat,
    Part,
    PrintedCircle,
    Scene,
    SceneModel,
    TerrainBlock,
    Token,
)

RESOLUTIONS: MappingProxyType[str, tuple[int, int]] = MappingProxyType(
    {"4k": (3840, 2160), "1080p": (1920, 1080), "720p": (1280, 720)}
)

# Base sizes a game uses (mm), and how often a unit stands on each: infantry on the small ones, elites and
# monsters on the large ones.
UNIT_BASES_MM = (25.0, 27.0, 28.5, 32.0, 40.0, 50.0, 60.0)
UNIT_BASE_WEIGHTS = (0.16, 0.18, 0.12, 0.26, 0.14, 0.08, 0.06)
UNIT_SIZES = (5, 10)  # models per unit, inclusive
BIG_BASE_MM = 50.0  # units on bases this large or more field fewer models
BIG_UNIT_SIZES = (1, 3)
RIM_HEIGHTS_MM = (3.0, 3.5, 4.0, 5.0)
PLAYERS = ("red", "blue")

# How the next model of a unit stands from a unit-mate: touching, about 1 mm apart (the cases the rules care
# about), or loosely spread; shares and gap ranges in mm.
GAP_TOUCHING_SHARE = 0.25
GAP_NEAR_SHARE = 0.2
GAP_NEAR_MM = (0.3, 1.6)
GAP_LOOSE_MM = (3.0, 40.0)
# Share of units that set up against an enemy unit (base contact or nearly).
ENGAGED_UNIT_SHARE = 0.45
PLACEMENT_TRIES = 60
# Clear table border for models and clutter (markers with their paper reach ~127 mm in from the edges).
EDGE_CLEARANCE_MM = 20.0
MARKER_CLEARANCE_MM = 8.0

# The camera of a random scene: height above the table, tilt of the optical axis from straight down, lens range.
CAMERA_HEIGHT_MM = (1200.0, 1600.0)
CAMERA_TILT_DEG = (0.0, 15.0)
CAMERA_ROLL_DEG = 4.0
LOOK_AT_JITTER_MM = 40.0
K1_RANGE = (-0.15, 0.1)
K2_RANGE = (-0.02, 0.02)
TANGENTIAL_RANGE = 1e-3
PRINCIPAL_JITTER = 0.01  # share of the image size
FRAME_MARGIN = 0.03  # the table fills the frame but for this share of the width on each side

# Presets of the look of a random scene.
MATS = (
    ((0.17, 0.40, 0.28), (0.22, 0.46, 0.43)),  # grass
    ((0.36, 0.52, 0.62), (0.30, 0.44, 0.56)),  # desert
    ((0.34, 0.35, 0.36), (0.27, 0.29, 0.30)),  # urban grey
    ((0.16, 0.26, 0.33), (0.20, 0.33, 0.32)),  # mud and moss
)
FLOOR = (0.09, 0.10, 0.11)
SKIN_TONES = ((0.45, 0.56, 0.76), (0.33, 0.45, 0.62), (0.20, 0.29, 0.42), (0.52, 0.64, 0.83))
PAINTS: tuple[Colour, ...] = (
    (0.85, 0.85, 0.85),
    (0.15, 0.2, 0.7),
    (0.7, 0.35, 0.15),
    (0.3, 0.6, 0.75),
    (0.2, 0.5, 0.25),
    (0.55, 0.55, 0.6),
    (0.1, 0.1, 0.12),
    (0.5, 0.3, 0.5),
)
METAL = ((0.12, 0.12, 0.13), (0.42, 0.42, 0.44), (0.1, 0.2, 0.3))
TERRAIN_COLOURS = ((0.4, 0.4, 0.42), (0.25, 0.32, 0.4), (0.3, 0.34, 0.3))
# A hand's fingertips stay this high over the table (mm): above the figures, or reaching down among them.
HAND_CLEARANCE_MM = (25.0, 70.0)
SUPERSAMPLE = MappingProxyType({"4k": 3, "1080p": 4, "720p": 4})


@dataclass(frozen=True)
class Clutter:
    """How much lies on the table besides the models."""

    dice: int
    tokens: int
    printed: int
    terrain: int
    hands: int


CLUTTER: MappingProxyType[str, Clutter] = MappingProxyType(
    {
        "none": Clutter(dice=0, tokens=0, printed=0, terrain=0, hands=0),
        "some": Clutter(dice=3, tokens=3, printed=3, terrain=2, hands=0),
        "lots": Clutter(dice=8, tokens=6, printed=6, terrain=4, hands=1),
    }
)


# --------------------------------------------------------------------------------------------------------------
# Camera


def fit_camera(
    table: TableSpec,
    image_size: tuple[int, int],
    position_mm: tuple[float, float, float],
    look_at_mm: tuple[float, float, float],
    *,
    dist: Sequence[float] = (0.0, 0.0, 0.0, 0.0, 0.0),
    principal_px: tuple[float, float] | None = None,
    roll_deg: float = 0.0,
    margin: float = FRAME_MARGIN,
) -> Camera:
    """A camera at the given pose whose focal length makes the whole table (distortion included) fill the frame
    but for ``margin`` x width on every side. Square pixels."""
    w, h = image_size
    cx, cy = principal_px if principal_px is not None else ((w - 1) / 2.0, (h - 1) / 2.0)
    k1, k2, p1, p2, k3 = (float(c) for c in dist)
    edge = np.linspace(0.0, 1.0, 33)
    outline = np.concatenate(
        [
            np.stack([edge * table.width_mm, np.zeros_like(edge)], axis=-1),
            np.stack([edge * table.width_mm, np.full_like(edge, table.depth_mm)], axis=-1),
            np.stack([np.zeros_like(edge), edge * table.depth_mm], axis=-1),
            np.stack([np.full_like(edge, table.width_mm), edge * table.depth_mm], axis=-1),
        ]
    )
    outline3 = np.concatenate([outline, np.zeros((len(outline), 1))], axis=1)
    pad = margin * w

    def camera(f: float) -> Camera:
        return Camera(w, h, f, f, cx, cy, k1, k2, p1, p2, k3, position_mm, look_at_mm, roll_deg)

    def fits(f: float) -> bool:
        px = camera(f).project(outline3)
        return bool(
            (px[:, 0].min() >= pad)
            and (px[:, 0].max() <= w - 1 - pad)
            and (px[:, 1].min() >= pad)
            and (px[:, 1].max() <= h - 1 - pad)
        )

    lo, hi = 50.0, 50000.0
    if not fits(lo):
        raise SceneError("the table does not fit the frame at any focal length from this pose; move the camera")
    for _ in range(50):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return camera(lo)


def random_camera(rng: np.random.Generator, table: TableSpec, image_size: tuple[int, int]) -> Camera:
    """A camera 1.2-1.6 m over the table centre's surroundings, tilted up to 15 degrees, with a realistic lens."""
    height = rng.uniform(*CAMERA_HEIGHT_MM)
    tilt = math.radians(rng.uniform(*CAMERA_TILT_DEG))
    heading = rng.uniform(0.0, 2 * math.pi)
    centre = (table.width_mm / 2.0, table.depth_mm / 2.0)
    look = (
        centre[0] + rng.uniform(-LOOK_AT_JITTER_MM, LOOK_AT_JITTER_MM),
        centre[1] + rng.uniform(-LOOK_AT_JITTER_MM, LOOK_AT_JITTER_MM),
        0.0,
    )
    offset = height * math.tan(tilt)
    position = (look[0] + offset * math.cos(heading), look[1] + offset * math.sin(heading), height)
    w, h = image_size
    principal = (
        (w - 1) / 2.0 + rng.normal(0.0, PRINCIPAL_JITTER * w / 2.0),
        (h - 1) / 2.0 + rng.normal(0.0, PRINCIPAL_JITTER * h / 2.0),
    )
    dist = (
        rng.uniform(*K1_RANGE),
        rng.uniform(*K2_RANGE),
        rng.uniform(-TANGENTIAL_RANGE, TANGENTIAL_RANGE),
        rng.uniform(-TANGENTIAL_RANGE, TANGENTIAL_RANGE),
        0.0,
    )
    roll = rng.uniform(-CAMERA_ROLL_DEG, CAMERA_ROLL_DEG)
    camera = fit_camera(table, image_size, position, look, dist=dist, principal_px=principal, roll_deg=roll)
    try:
        camera.check_lens()
    except SceneError:
        # A strong k2 against k1 can fold the lens at a wide frame's corners; k1 alone never does in its range.
        camera = fit_camera(
            table, image_size, position, look, dist=(dist[0], 0.0, *dist[2:]), principal_px=principal, roll_deg=roll
        )
    return camera


# --------------------------------------------------------------------------------------------------------------
# Figures


def _paint(rng: np.random.Generator) -> Colour:
    return PAINTS[int(rng.integers(len(PAINTS)))]


def make_figure(rng: np.random.Generator, base_diameter_mm: float, colours: tuple[Colour, Colour]) -> Figure:
    """A miniature for a base of that size: a trooper on small bases (legs, body, head, arms, a weapon that may
    reach past the rim, sometimes a cloak), a creature on large ones (body, legs, neck and head, a tail). Parts
    are in the base frame (see :class:`Figure`)."""
    r = base_diameter_mm / 2.0
    main, second = colours
    metal = METAL[int(rng.integers(len(METAL)))]
    skin = SKIN_TONES[int(rng.integers(len(SKIN_TONES)))]
    parts: list[Part] = []
    if rng.random() < 0.3:  # a rock or a bit of ruin on the base
        a = rng.uniform(0, 2 * math.pi)
        d = rng.uniform(0.3, 0.6) * r
        size = rng.uniform(2.0, 4.5)
        parts.append(
            Ellipsoid(
                (d * math.cos(a), d * math.sin(a), 0.0),
                (size, size * rng.uniform(0.6, 1.0), size * 0.6),
                float(rng.uniform(0, 360)),
                0.0,
                (0.3, 0.32, 0.34),
            )
        )
    if base_diameter_mm >= BIG_BASE_MM:
        parts.extend(_creature(rng, r, main, second, metal))
        return Figure(tuple(parts))
    height = rng.uniform(24.0, 34.0) * (1.15 if base_diameter_mm >= 40 else 1.0)
    ox, oy = rng.uniform(-0.15, 0.15, size=2) * r
    hip = height * 0.42
    chest = height * 0.7
    for side in (-1.0, 1.0):
        stride = rng.uniform(-3.0, 3.0)
        parts.append(Capsule((ox + stride, oy + side * 2.2, 0.8), (ox, oy + side * 2.0, hip), 1.6, second))
    parts.append(Ellipsoid((ox, oy, (hip + chest) / 2.0), (4.2, 6.0, (chest - hip) / 2.0 + 2.0), 0.0, 0.0, main))
    parts.append(Ellipsoid((ox + 0.5, oy, height * 0.86), (3.0, 3.0, 3.4), 0.0, 0.0, skin))
    hand = (ox + rng.uniform(5.0, 8.0), oy + rng.uniform(-5.0, 5.0), height * rng.uniform(0.5, 0.65))
    for side in (-1.0, 1.0):
        end = hand if side > 0 else (ox + rng.uniform(-2.0, 5.0), oy - 6.5, height * rng.uniform(0.4, 0.6))
        parts.append(Capsule((ox, oy + side * 6.2, chest - 1.0), end, 1.7, main))
    # The weapon: a pistol, a rifle, or a spear or banner that reaches well past the rim.
    reach = rng.choice([8.0, 18.0, 32.0], p=[0.3, 0.45, 0.25])
    heading = math.radians(rng.uniform(-70.0, 70.0))
    rise = math.radians(rng.uniform(-25.0, 35.0))
    tip = (
        hand[0] + reach * math.cos(rise) * math.cos(heading),
        hand[1] + reach * math.cos(rise) * math.sin(heading),
        max(1.0, hand[2] + reach * math.sin(rise)),
    )
    butt = (hand[0] - 4.0 * math.cos(heading), hand[1] - 4.0 * math.sin(heading), hand[2] - 1.0)
    parts.append(Capsule(butt, tip, float(rng.uniform(0.7, 1.3)), metal))
    if rng.random() < 0.4:  # a cloak falling behind, sometimes over the rim
        spread = rng.uniform(4.5, 9.0)
        parts.append(
            Ellipsoid(
                (ox - 3.5 - spread * 0.4, oy, height * 0.42),
                (spread * 0.55, spread, height * 0.33),
                0.0,
                float(rng.uniform(-25.0, -5.0)),
                second,
            )
        )
    return Figure(tuple(parts))


def _creature(rng: np.random.Generator, r: float, main: Colour, second: Colour, metal: Colour) -> list[Part]:
    height = rng.uniform(30.0, 45.0)
    body_z = height * 0.55
    length = r * rng.uniform(0.55, 0.8)
    parts: list[Part] = [Ellipsoid((0.0, 0.0, body_z), (length, r * 0.38, height * 0.2), 0.0, 0.0, main)]
    for fx in (-0.55, 0.55):
        for side in (-1.0, 1.0):
            foot = (fx * length + rng.uniform(-2, 2), side * r * 0.45, 1.0)
            parts.append(Capsule(foot, (fx * length * 0.8, side * r * 0.25, body_z), 2.6, second))
    head = (length * rng.uniform(0.9, 1.3), rng.uniform(-4.0, 4.0), height * rng.uniform(0.75, 0.95))
    parts.append(Capsule((length * 0.6, 0.0, body_z + 2.0), head, 3.0, main))
    parts.append(Ellipsoid(head, (6.0, 4.0, 4.0), float(rng.uniform(-30, 30)), -10.0, second))
    tail_dir = math.radians(rng.uniform(140.0, 220.0))
    tail_len = r * rng.uniform(0.8, 1.5)
    parts.append(
        Capsule(
            (-length * 0.8, 0.0, body_z),
            (tail_len * math.cos(tail_dir), tail_len * math.sin(tail_dir), rng.uniform(3.0, body_z)),
            1.8,
            metal if rng.random() < 0.3 else main,
        )
    )
    return parts


# --------------------------------------------------------------------------------------------------------------
# Placement


@dataclass
class _Layout:
    """What is on the table so far: circles (x, y, r) that nothing else may overlap, and keep-out boxes."""

    table: TableSpec
    circles: list[tuple[float, float, float]]
    boxes: list[tuple[float, float, float, float]]  # x0, y0, x1, y1

    def free(self, x: float, y: float, r: float, gap: float = 0.0) -> bool:
        if not (EDGE_CLEARANCE_MM + r <= x <= self.table.width_mm - EDGE_CLEARANCE_MM - r):
            return False
        if not (EDGE_CLEARANCE_MM + r <= y <= self.table.depth_mm - EDGE_CLEARANCE_MM - r):
            return False
        for x0, y0, x1, y1 in self.boxes:
            dx = max(x0 - x, 0.0, x - x1)
            dy = max(y0 - y, 0.0, y - y1)
            if dx * dx + dy * dy < (r + gap) ** 2:
                return False
        if self.circles:
            c = np.asarray(self.circles)
            # Round-off tolerance: two bases placed exactly touching must count as free.
            if np.any(np.hypot(c[:, 0] - x, c[:, 1] - y) - c[:, 2] - r < gap - 1e-9):
                return False
        return True


def _marker_boxes(table: TableSpec) -> list[tuple[float, float, float, float]]:
    out = []
    for m in table.markers:
        corners = m.corners_mm()
        half = MARKER_MARGIN_MM + MARKER_CLEARANCE_MM
        out.append(
            (
                float(corners[:, 0].min()) - half,
                float(corners[:, 1].min()) - half,
                float(corners[:, 0].max()) + half,
                float(corners[:, 1].max()) + half,
            )
        )
    return out


def _random_point(rng: np.random.Generator, table: TableSpec, inset: float) -> tuple[float, float]:
    return float(rng.uniform(inset, table.width_mm - inset)), float(rng.uniform(inset, table.depth_mm - inset))


def _gap(rng: np.random.Generator) -> float:
    u = rng.random()
    if u < GAP_TOUCHING_SHARE:
        return 0.0
    if u < GAP_TOUCHING_SHARE + GAP_NEAR_SHARE:
        return float(rng.uniform(*GAP_NEAR_MM))
    return float(rng.uniform(*GAP_LOOSE_MM))


def _terrain(rng: np.random.Generator, layout: _Layout, count: int) -> list[TerrainBlock]:
    out = []
    for k in range(count):
        for _ in range(PLACEMENT_TRIES):
            w, d = rng.uniform(100.0, 260.0), rng.uniform(70.0, 180.0)
            yaw = rng.uniform(0.0, 180.0)
            x, y = _random_point(rng, layout.table, 250.0)
            # Some pieces are walkways over the table; most stand on it.
            bottom = float(rng.uniform(45.0, 70.0)) if rng.random() < 0.2 else 0.0
            top = bottom + float(rng.uniform(15.0, 25.0)) if bottom > 0 else float(rng.uniform(40.0, 150.0))
            block = TerrainBlock(
                f"terrain{k + 1}",
                x,
                y,
                w,
                d,
                yaw,
                bottom,
                top,
                TERRAIN_COLOURS[int(rng.integers(len(TERRAIN_COLOURS)))],
            )
            pts = np.asarray(block.footprint_mm())
            box = (float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()))
            if all(box[2] < b[0] or box[0] > b[2] or box[3] < b[1] or box[1] > b[3] for b in layout.boxes):
                if bottom == 0.0:
                    layout.boxes.append(box)
                out.append(block)
                break
    return out


def _unit_plan(rng: np.random.Generator, n_models: int) -> list[tuple[float, int]]:
    """(base diameter, model count) per unit, adding up to ``n_models``."""
    plan = []
    left = n_models
    while left > 0:
        base = float(rng.choice(UNIT_BASES_MM, p=UNIT_BASE_WEIGHTS))
        lo, hi = BIG_UNIT_SIZES if base >= BIG_BASE_MM else UNIT_SIZES
        count = min(left, int(rng.integers(lo, hi + 1)))
        plan.append((base, count))
        left -= count
    return plan


def _units(rng: np.random.Generator, layout: _Layout, n_models: int) -> tuple[list[Unit], list[SceneModel]]:
    units: list[Unit] = []
    models: list[SceneModel] = []
    placed_by_player: dict[str, list[tuple[float, float, float]]] = {p: [] for p in PLAYERS}
    for k, (diameter, count) in enumerate(_unit_plan(rng, n_models)):
        unit_id = f"u{k + 1}"
        player = PLAYERS[k % len(PLAYERS)]
        r = diameter / 2.0
        rim = float(rng.choice(RIM_HEIGHTS_MM))
        rim_colour = str(rng.choice(list(BASE_COLOURS)))
        top_colour = rim_colour if rng.random() < 0.4 else str(rng.choice(list(BASE_COLOURS)))
        colours = (_paint(rng), _paint(rng))
        members: list[tuple[float, float, float]] = []
        enemies = placed_by_player[PLAYERS[(k + 1) % len(PLAYERS)]]
        for n in range(count):
            spot = None
            for _ in range(PLACEMENT_TRIES):
                if members:
                    ax, ay, ar = members[int(rng.integers(len(members)))]
                    dist = ar + r + _gap(rng)
                elif enemies and rng.random() < ENGAGED_UNIT_SHARE:
                    ax, ay, ar = enemies[int(rng.integers(len(enemies)))]
                    dist = ar + r + (0.0 if rng.random() < 0.5 else float(rng.uniform(*GAP_NEAR_MM)))
                else:
                    ax, ay = _random_point(rng, layout.table, 150.0)
                    dist = 0.0
                a = rng.uniform(0.0, 2 * math.pi)
                x, y = ax + dist * math.cos(a), ay + dist * math.sin(a)
                if layout.free(x, y, r):
                    spot = (x, y)
                    break
            if spot is None:
                continue
            x, y = spot
            members.append((x, y, r))
            layout.circles.append((x, y, r))
            model = Model(id=f"{unit_id}m{n + 1}", unit=unit_id, x_mm=x, y_mm=y, base=RoundBase(diameter))
            models.append(
                SceneModel(
                    model=model,
                    rim_height_mm=rim,
                    rim_colour=rim_colour,
                    top_colour=top_colour,
                    facing_deg=float(rng.uniform(0.0, 360.0)),
                    figure=make_figure(rng, diameter, colours),
                )
            )
        if not members:
            continue
        placed_by_player[player].extend(members)
        leader = f"{unit_id}m1" if any(m.model.id == f"{unit_id}m1" for m in models) else None
        units.append(Unit(id=unit_id, player=player, name=f"{player} unit {k + 1}", leader=leader))
    return units, models


def _clutter(
    rng: np.random.Generator, layout: _Layout, amount: Clutter
) -> tuple[list[Die], list[Token], list[PrintedCircle]]:
    dice: list[Die] = []
    tokens: list[Token] = []
    printed: list[PrintedCircle] = []
    for _ in range(amount.printed):
        radius = float(rng.uniform(10.0, 35.0))
        x, y = _random_point(rng, layout.table, 150.0)
        line = float(rng.choice([0.0, 1.5, 3.0]))
        colour = PAINTS[int(rng.integers(len(PAINTS)))]
        printed.append(PrintedCircle(x, y, radius, line, colour))
    for _ in range(amount.tokens):
        d = float(rng.choice([20.0, 25.0, 30.0, 40.0]))
        for _ in range(PLACEMENT_TRIES):
            x, y = _random_point(rng, layout.table, 150.0)
            if layout.free(x, y, d / 2.0, gap=2.0):
                layout.circles.append((x, y, d / 2.0))
                tokens.append(Token(x, y, d, float(rng.uniform(1.5, 3.0)), _paint(rng), _paint(rng)))
                break
    for _ in range(amount.dice):
        size = float(rng.choice([12.0, 16.0]))
        for _ in range(PLACEMENT_TRIES):
            x, y = _random_point(rng, layout.table, 150.0)
            if layout.free(x, y, size * 0.72, gap=1.0):
                layout.circles.append((x, y, size * 0.72))
                white = rng.random() < 0.5
                body = (0.85, 0.85, 0.85) if white else _paint(rng)
                pips = (0.05, 0.05, 0.05) if white else (0.9, 0.9, 0.9)
                dice.append(Die(x, y, size, float(rng.uniform(0, 90)), body, pips, int(rng.integers(1, 7))))
                break
    return dice, tokens, printed


def random_hand(rng: np.random.Generator, table: TableSpec) -> Hand:
    """A hand reaching in over a random table edge, fingertips some 20-60 mm above the table."""
    edge = int(rng.integers(4))
    reach = rng.uniform(150.0, 420.0)
    along = rng.uniform(0.2, 0.8)
    if edge == 0:
        wrist, azimuth = (along * table.width_mm, reach), -90.0
    elif edge == 1:
        wrist, azimuth = (along * table.width_mm, table.depth_mm - reach), 90.0
    elif edge == 2:
        wrist, azimuth = (reach, along * table.depth_mm), 180.0
    else:
        wrist, azimuth = (table.width_mm - reach, along * table.depth_mm), 0.0
    hand = Hand(
        wrist_mm=(wrist[0], wrist[1], 0.0),
        azimuth_deg=azimuth + float(rng.uniform(-25.0, 25.0)),
        elevation_deg=float(rng.uniform(15.0, 35.0)),
        fingers_down_deg=float(rng.uniform(20.0, 40.0)),
        skin=SKIN_TONES[int(rng.integers(len(SKIN_TONES)))],
    )
    return lift_hand(hand, float(rng.uniform(*HAND_CLEARANCE_MM)))


def lift_hand(hand: Hand, lowest_mm: float) -> Hand:
    """The hand moved straight up or down so that its lowest point (a fingertip) is ``lowest_mm`` above the
    table."""
    low = min(float(s.hull()[:, 2].min()) for s in hand_shapes(hand))
    x, y, z = hand.wrist_mm
    return dataclasses.replace(hand, wrist_mm=(x, y, z + lowest_mm - low))


# --------------------------------------------------------------------------------------------------------------
# Scenes


def random_look(rng: np.random.Generator, resolution: str) -> tuple[Mat, Lighting, Imaging]:
    """Mat, light and imaging of a random scene: a textured mat, one main light with soft shadows, uneven light,
    vignetting, slight blur, sensor noise and JPEG."""
    a, b = MATS[int(rng.integers(len(MATS)))]
    mat = Mat(a, b, float(rng.uniform(0.05, 0.12)), float(rng.uniform(1.0, 6.0)), FLOOR, int(rng.integers(1 << 31)))
    lighting = Lighting(
        azimuth_deg=float(rng.uniform(0.0, 360.0)),
        elevation_deg=float(rng.uniform(45.0, 80.0)),
        ambient=float(rng.uniform(0.35, 0.55)),
        diffuse=float(rng.uniform(0.5, 0.75)),
        shadow_strength=float(rng.uniform(0.4, 0.75)),
        penumbra_mm=float(rng.uniform(0.3, 1.0)),
        penumbra_per_mm=float(rng.uniform(0.03, 0.1)),
        gradient_x=float(rng.uniform(-0.12, 0.12)),
        gradient_y=float(rng.uniform(-0.12, 0.12)),
        vignetting=float(rng.uniform(0.05, 0.3)),
    )
    imaging = Imaging(
        supersample=SUPERSAMPLE[resolution],
        blur_px=float(rng.uniform(0.45, 0.9)),
        read_noise=float(rng.uniform(0.8, 2.5)),
        shot_noise=float(rng.uniform(1.0, 3.5)),
        jpeg_quality=int(rng.integers(85, 96)),
    )
    return mat, lighting, imaging


def random_scene(
    seed: int,
    resolution: str = "1080p",
    n_models: int = 40,
    clutter: str | Clutter = "some",
    table: TableSpec | None = None,
) -> Scene:
    """A plausible game: ``n_models`` models in units of 5-10 (1-3 on 50/60 mm bases) of two players, in loose
    groups with some bases touching or about 1 mm apart, some units set up against an enemy; terrain, dice,
    tokens, printed circles and a hand as ``clutter`` says (a :data:`CLUTTER` name or a :class:`Clutter`); a
    camera 1.2-1.6 m up, tilted up to 15 degrees, with k1 in [-0.15, 0.1]. ``resolution``: a :data:`RESOLUTIONS`
    name. Models that find no free spot are left out, so a crowded table may hold fewer than asked."""
    if resolution not in RESOLUTIONS:
        raise SceneError(f"resolution {resolution!r} is not one of {', '.join(RESOLUTIONS)}")
    if isinstance(clutter, str):
        if clutter not in CLUTTER:
            raise SceneError(f"clutter {clutter!r} is not one of {', '.join(CLUTTER)}")
        clutter = CLUTTER[clutter]
    if n_models < 0:
        raise SceneError(f"n_models must not be negative, got {n_models}")
    rng = np.random.default_rng(seed)
    table = load_table_spec() if table is None else table
    camera = random_camera(rng, table, RESOLUTIONS[resolution])
    layout = _Layout(table, [], _marker_boxes(table))
    terrain = _terrain(rng, layout, clutter.terrain)
    units, models = _units(rng, layout, n_models)
    dice, tokens, printed = _clutter(rng, layout, clutter)
    hands = tuple(random_hand(rng, table) for _ in range(clutter.hands))
    mat, lighting, imaging = random_look(rng, resolution)
    return Scene(
        table=table,
        camera=camera,
        units=tuple(units),
        models=tuple(models),
        dice=tuple(dice),
        tokens=tuple(tokens),
        printed=tuple(printed),
        terrain=tuple(terrain),
        hands=hands,
        mat=mat,
        lighting=lighting,
        imaging=imaging,
    )


# A neutral look for exact tests: flat mat, flat light (every surface shows its albedo), no blur, noise or JPEG.
FLAT_MAT = Mat((0.3, 0.45, 0.35), (0.3, 0.45, 0.35), 0.0, 0.0, FLOOR, 0)
FLAT_LIGHT = Lighting(90.0, 90.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
SHARP = Imaging(supersample=4, blur_px=0.0, read_noise=0.0, shot_noise=0.0, jpeg_quality=0)


def plain_scene(camera: Camera, table: TableSpec | None = None, models: Sequence[SceneModel] = ()) -> Scene:
    """A bare table under flat light, seen sharp and noiseless: only the markers (and ``models``, if any, with
    units made up for them). Change the look with :func:`dataclasses.replace`."""
    table = load_table_spec() if table is None else table
    unit_ids = sorted({m.model.unit for m in models if m.model.unit is not None})
    return Scene(
        table=table,
        camera=camera,
        units=tuple(Unit(id=u) for u in unit_ids),
        models=tuple(models),
        dice=(),
        tokens=(),
        printed=(),
        terrain=(),
        hands=(),
        mat=FLAT_MAT,
        lighting=FLAT_LIGHT,
        imaging=SHARP,
    )


def with_models(scene: Scene, moved: dict[str, tuple[float, float]]) -> Scene:
    """The scene with some models moved to new centres (x_mm, y_mm); figures move with their bases."""
    models = tuple(
        dataclasses.replace(m, model=dataclasses.replace(m.model, x_mm=moved[m.model.id][0], y_mm=moved[m.model.id][1]))
        if m.model.id in moved
        else m
        for m in scene.models
    )
    return dataclasses.replace(scene, models=models)
