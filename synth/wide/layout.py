"""Where things stand in a wide-look frame: terrain blocks, units in loose formations and crowded melees, lone
models, dice and a hand, all within the part of the table the camera sees. Bases never overlap one another,
terrain, dice or the markers; they may touch (melees stand 0-0.5 mm apart)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.spec import TableSpec
from rules.state import Unit
from synth.camera import Camera
from synth.wide import looks
from synth.wide.scene import Blob, Block, Imaging, Lamp, LightLook, MatLook, Part, Stick, WideBase, WideScene
from synth.wide.view import MARKER_PAPER_MM, RESOLUTIONS, View, choose_view

FloatArray = NDArray[np.float64]
Spots = list[tuple[float, float, float]]  # (x, y, r) mm of the bases placed

# The table is sampled on this grid (mm) to know which of it the camera sees.
SEEN_CELL_MM = 4.0
# Models and terrain keep this far (px) inside the frame, and this far (mm) from the table edge and markers.
FRAME_INSET_PX = 6.0
EDGE_MM = 15.0
MARKER_KEEP_OUT_MM = 10.0
MODELS_PER_FRAME = (20, 80)
TRIES = 40
FORMATIONS = ("loose", "melee", "lone", "terrain")
FORMATION_WEIGHTS = (0.4, 0.32, 0.1, 0.18)
CONTACT_GAP_MM = (0.0, 0.5)
LOOSE_GAP_MM = (1.5, 35.0)
LOOSE_TOUCH_SHARE = 0.15
LONE_CLEARANCE_MM = 25.0
# Candidate directions tried when a melee model joins its cluster; the one nearest the cluster's middle wins, so
# melees pack two to four deep instead of stringing out.
MELEE_DIRECTIONS = 14
PLAYERS = ("red", "blue")


@dataclass
class Region:
    """The free table the camera sees, and what stands on it so far: circles (x, y, r) and boxes."""

    camera: Camera
    table: TableSpec
    seen: NDArray[np.bool_]
    circles: list[tuple[float, float, float]] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)

    @classmethod
    def of(cls, camera: Camera, table: TableSpec) -> Region:
        nx = math.ceil(table.width_mm / SEEN_CELL_MM) + 1
        ny = math.ceil(table.depth_mm / SEEN_CELL_MM) + 1
        gx, gy = np.meshgrid(np.arange(nx) * SEEN_CELL_MM, np.arange(ny) * SEEN_CELL_MM)
        pts = np.stack([gx.ravel(), gy.ravel(), np.zeros(gx.size)], axis=1)
        px = camera.project(pts)
        m = FRAME_INSET_PX
        ok = (px[:, 0] >= m) & (px[:, 0] <= camera.image_width - 1 - m)
        ok &= (px[:, 1] >= m) & (px[:, 1] <= camera.image_height - 1 - m)
        return cls(camera, table, ok.reshape(gy.shape))

    def seen_at(self, x: FloatArray, y: FloatArray) -> NDArray[np.bool_]:
        i = np.clip(np.rint(np.asarray(y) / SEEN_CELL_MM).astype(int), 0, self.seen.shape[0] - 1)
        j = np.clip(np.rint(np.asarray(x) / SEEN_CELL_MM).astype(int), 0, self.seen.shape[1] - 1)
        return np.asarray(self.seen[i, j], dtype=bool)

    def seen_points(self) -> FloatArray:
        """(K, 2) table points (mm) on the seen grid."""
        iy, ix = np.nonzero(self.seen)
        return np.stack([ix * SEEN_CELL_MM, iy * SEEN_CELL_MM], axis=1).astype(np.float64)

    def random_point(self, rng: np.random.Generator) -> tuple[float, float]:
        pts = self.seen_points()
        x, y = pts[int(rng.integers(len(pts)))]
        return float(x + rng.uniform(-2, 2)), float(y + rng.uniform(-2, 2))

    def _on_table(self, x: float, y: float, r: float) -> bool:
        t = self.table
        return EDGE_MM + r <= x <= t.width_mm - EDGE_MM - r and EDGE_MM + r <= y <= t.depth_mm - EDGE_MM - r

    def _clear_of_markers(self, x: float, y: float, r: float) -> bool:
        for m in self.table.markers:
            half = m.size_mm / 2.0 * math.sqrt(2.0) + MARKER_PAPER_MM + MARKER_KEEP_OUT_MM
            if abs(x - m.x_mm) < half + r and abs(y - m.y_mm) < half + r:
                return False
        return True

    def free(self, x: float, y: float, r: float, clearance: float = 0.0) -> bool:
        """Whether a base of radius ``r`` at (x, y) is on the seen table and touches nothing (``clearance`` mm
        of air required round it)."""
        if not (self._on_table(x, y, r) and self._clear_of_markers(x, y, r)):
            return False
        ring = np.array([0.0, 0.5, 1.0, 1.5]) * math.pi
        if not self.seen_at(np.append(x + r * np.cos(ring), x), np.append(y + r * np.sin(ring), y)).all():
            return False
        for b in self.blocks:
            if b.kind != "platform" and block_distance(b, x, y) < r + clearance:
                return False
        if self.circles:
            c = np.asarray(self.circles)
            if np.any(np.hypot(c[:, 0] - x, c[:, 1] - y) - c[:, 2] - r < clearance - 1e-9):
                return False
        return True

    def ceiling(self, x: float, y: float, r: float) -> float | None:
        """Height (mm) of the lowest platform over a base there, or None."""
        tops = [b.bottom_mm for b in self.blocks if b.kind == "platform" and block_distance(b, x, y) < r]
        return min(tops) if tops else None


def block_distance(b: Block, x: float, y: float) -> float:
    """Distance (mm) from a table point to a block's footprint (0 inside)."""
    a = math.radians(b.yaw_deg)
    dx, dy = x - b.x_mm, y - b.y_mm
    lx, ly = math.cos(a) * dx + math.sin(a) * dy, -math.sin(a) * dx + math.cos(a) * dy
    return math.hypot(max(abs(lx) - b.width_mm / 2.0, 0.0), max(abs(ly) - b.depth_mm / 2.0, 0.0))


# --------------------------------------------------------------------------------------------------------------
# Terrain, dice, hands

TERRAIN_COLOURS = ((0.38, 0.38, 0.4), (0.2, 0.27, 0.35), (0.25, 0.3, 0.25), (0.12, 0.14, 0.16), (0.5, 0.55, 0.58))


def _fits(region: Region, block: Block) -> bool:
    fp = block.footprint()
    if not region.seen_at(fp[:, 0], fp[:, 1]).all():
        return False
    r = 0.5 * math.hypot(block.width_mm, block.depth_mm)
    if not region._clear_of_markers(block.x_mm, block.y_mm, r):
        return False
    return all(
        math.hypot(o.x_mm - block.x_mm, o.y_mm - block.y_mm) > r + 0.5 * math.hypot(o.width_mm, o.depth_mm) + 5.0
        for o in region.blocks
    ) and all(block_distance(block, cx, cy) > cr for cx, cy, cr in region.circles)


def _pillars(platform: Block) -> list[Block]:
    """Four posts under a platform's corners, 8 mm square, set 6 mm in."""
    out = []
    hw, hd = platform.width_mm / 2.0 - 10.0, platform.depth_mm / 2.0 - 10.0
    a = math.radians(platform.yaw_deg)
    for k, (sx, sy) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
        lx, ly = sx * hw, sy * hd
        x = platform.x_mm + math.cos(a) * lx - math.sin(a) * ly
        y = platform.y_mm + math.sin(a) * lx + math.cos(a) * ly
        out.append(
            Block(
                f"{platform.id}p{k + 1}",
                "pillar",
                x,
                y,
                8.0,
                8.0,
                platform.yaw_deg,
                0.0,
                platform.bottom_mm,
                platform.colour,
            )
        )
    return out


def place_terrain(rng: np.random.Generator, region: Region, count: int) -> None:
    """Up to ``count`` blocks: solid boxes 30-150 mm tall, or platforms 50-75 mm up on four pillars."""
    for k in range(count):
        for _ in range(TRIES):
            x, y = region.random_point(rng)
            colour = looks.vary(rng, TERRAIN_COLOURS[int(rng.integers(len(TERRAIN_COLOURS)))], 0.15)
            w, d, yaw = float(rng.uniform(70.0, 220.0)), float(rng.uniform(50.0, 160.0)), float(rng.uniform(0, 180))
            if rng.random() < 0.35:
                bottom = float(rng.uniform(50.0, 75.0))
                block = Block(
                    f"terrain{k + 1}", "platform", x, y, w, d, yaw, bottom, bottom + float(rng.uniform(6, 18)), colour
                )
            else:
                block = Block(f"terrain{k + 1}", "solid", x, y, w, d, yaw, 0.0, float(rng.uniform(30.0, 150.0)), colour)
            if _fits(region, block):
                region.blocks.append(block)
                if block.kind == "platform":
                    region.blocks.extend(_pillars(block))
                break


def place_dice(rng: np.random.Generator, region: Region, count: int) -> None:
    """Dice 12-16 mm, white with black pips or coloured with white ones, anywhere free."""
    for k in range(count):
        size = float(rng.choice([12.0, 14.0, 16.0]))
        for _ in range(TRIES):
            x, y = region.random_point(rng)
            if region.free(x, y, size * 0.72, clearance=1.0):
                white = rng.random() < 0.5
                body = (0.86, 0.86, 0.85) if white else looks.pick(rng, looks.PAINTS)
                pips = (0.04, 0.04, 0.04) if white else (0.9, 0.9, 0.9)
                region.circles.append((x, y, size * 0.72))
                yaw = float(rng.uniform(0, 90))
                pip_count = int(rng.integers(1, 7))
                region.blocks.append(
                    Block(f"die{k + 1}", "die", x, y, size, size, yaw, 0.0, size, body, pip_count, pips)
                )
                break


def make_hand(rng: np.random.Generator, tip: tuple[float, float], heading_deg: float, tip_z: float) -> tuple[Part, ...]:
    """A hand reaching in: fingertips near ``tip`` (mm) at ``tip_z`` mm up, pointing along ``heading_deg``,
    the forearm rising behind it."""
    skin = looks.pick(rng, looks.SKINS)
    a = math.radians(heading_deg)
    ux, uy = math.cos(a), math.sin(a)
    vx, vy = -uy, ux

    def at(along: float, across: float, z: float) -> tuple[float, float, float]:
        return (tip[0] + along * ux + across * vx, tip[1] + along * uy + across * vy, z)

    palm = at(-95.0, 0.0, tip_z + 35.0)
    parts: list[Part] = [
        Stick(at(-420.0, 0.0, tip_z + 190.0), at(-150.0, 0.0, tip_z + 55.0), float(rng.uniform(27.0, 34.0)), skin),
        Blob(palm, (48.0, 40.0, 15.0), heading_deg, skin),
    ]
    for k, across in enumerate((-27.0, -9.0, 9.0, 27.0)):
        length = (62.0, 80.0, 76.0, 60.0)[k]
        parts.append(Stick(at(-60.0, across, tip_z + 30.0), at(-60.0 + length, across * 1.1, tip_z + 8.0), 8.5, skin))
    side = 1.0 if rng.random() < 0.5 else -1.0
    parts.append(Stick(at(-110.0, side * 38.0, tip_z + 30.0), at(-55.0, side * 55.0, tip_z + 12.0), 10.0, skin))
    return tuple(parts)


def place_hand(rng: np.random.Generator, region: Region, markers_px: Sequence[FloatArray]) -> tuple[Part, ...] | None:
    """A hand whose outline covers none of the markers (the frame must stay calibratable), or None."""
    for _ in range(TRIES):
        tip = region.random_point(rng)
        hand = make_hand(rng, tip, float(rng.uniform(0, 360)), float(rng.uniform(45.0, 100.0)))
        if not any(_covers(region.camera, part, markers_px) for part in hand):
            return hand
    return None


def _covers(camera: Camera, part: Part, markers_px: Sequence[FloatArray]) -> bool:
    """Whether the part's outline in the image comes within 10 px of any marker's corners or centre."""
    hull = cv2.convexHull(camera.project(part.surface()).astype(np.float32))
    for m in markers_px:
        for p in (*m, m.mean(axis=0)):
            if cv2.pointPolygonTest(hull, (float(p[0]), float(p[1])), True) > -10.0:
                return True
    return False


# --------------------------------------------------------------------------------------------------------------
# Units


@dataclass(frozen=True)
class _Plan:
    """One unit to place: ids, player, base size, how many models, and how its bases and figures look."""

    id: str
    player: str
    diameter: float
    count: int
    base: looks.BaseLook
    scheme: looks.Scheme


def _plan(rng: np.random.Generator, k: int, left: int, sizes_mm: tuple[float, ...] | None = None) -> _Plan:
    d = float(rng.choice(looks.BASE_SIZES_MM, p=looks.size_weights(sizes_mm)))
    lo, hi = (1, 3) if d >= 50.0 else (3, 10)
    count = max(1, min(left, int(rng.integers(lo, hi + 1))))
    return _Plan(f"u{k + 1}", PLAYERS[k % 2], d, count, looks.base_look(rng), looks.scheme(rng))


def _start(rng: np.random.Generator, region: Region, r: float, clearance: float = 0.0) -> tuple[float, float] | None:
    for _ in range(TRIES):
        x, y = region.random_point(rng)
        if region.free(x, y, r, clearance):
            return x, y
    return None


def _attach(
    rng: np.random.Generator, region: Region, anchor: tuple[float, float, float], r: float, gap: float
) -> tuple[float, float] | None:
    ax, ay, ar = anchor
    for _ in range(TRIES // 2):
        a = float(rng.uniform(0.0, 2 * math.pi))
        x, y = ax + (ar + r + gap) * math.cos(a), ay + (ar + r + gap) * math.sin(a)
        if region.free(x, y, r):
            return x, y
    return None


def _add(region: Region, spots: list[tuple[float, float, float]], xy: tuple[float, float] | None, r: float) -> None:
    if xy is not None:
        region.circles.append((xy[0], xy[1], r))
        spots.append((xy[0], xy[1], r))


def _loose(rng: np.random.Generator, region: Region, plan: _Plan, first: tuple[float, float] | None = None) -> Spots:
    """A unit spread out: each model 1.5-35 mm from a unit-mate, some touching."""
    r = plan.diameter / 2.0
    spots: list[tuple[float, float, float]] = []
    _add(region, spots, first if first is not None else _start(rng, region, r), r)
    for _ in range(plan.count - 1):
        if not spots:
            break
        gap = (
            float(rng.uniform(*CONTACT_GAP_MM))
            if rng.random() < LOOSE_TOUCH_SHARE
            else float(rng.uniform(*LOOSE_GAP_MM))
        )
        _add(region, spots, _attach(rng, region, spots[int(rng.integers(len(spots)))], r, gap), r)
    return spots


def _pack(
    rng: np.random.Generator, region: Region, cluster: Spots, anchors: Spots, r: float
) -> tuple[float, float] | None:
    """The free spot 0-0.5 mm from one of ``anchors`` that lies nearest the middle of ``cluster``."""
    middle = np.mean(np.asarray(cluster)[:, :2], axis=0)
    best, best_d = None, math.inf
    for _ in range(6):
        ax, ay, ar = anchors[int(rng.integers(len(anchors)))]
        gap = float(rng.uniform(*CONTACT_GAP_MM))
        for a in rng.uniform(0.0, 2 * math.pi, MELEE_DIRECTIONS):
            x, y = ax + (ar + r + gap) * math.cos(a), ay + (ar + r + gap) * math.sin(a)
            d = math.hypot(x - middle[0], y - middle[1])
            if d < best_d and region.free(x, y, r):
                best, best_d = (x, y), d
    return best


def _melee(rng: np.random.Generator, region: Region, a: _Plan, b: _Plan) -> tuple[Spots, Spots]:
    """Two units locked in combat: each packs tight (bases 0-0.5 mm apart, two to four deep) and the second
    presses against the first."""
    ra, rb = a.diameter / 2.0, b.diameter / 2.0
    side_a: list[tuple[float, float, float]] = []
    side_b: list[tuple[float, float, float]] = []
    _add(region, side_a, _start(rng, region, ra), ra)
    if not side_a:
        return [], []
    for _ in range(a.count - 1):
        _add(region, side_a, _pack(rng, region, side_a, side_a, ra), ra)
    for k in range(b.count):
        # The first ranks of the second unit press against the first; later ones pack behind their own.
        anchors = side_a if k < max(1, b.count // 2) or not side_b else side_b
        _add(region, side_b, _pack(rng, region, side_a + side_b, anchors, rb), rb)
    return side_a, side_b


def _lone(rng: np.random.Generator, region: Region, plan: _Plan) -> Spots:
    """Models standing apart from everything (characters, scouts)."""
    r = plan.diameter / 2.0
    spots: list[tuple[float, float, float]] = []
    for _ in range(min(plan.count, 2)):
        _add(region, spots, _start(rng, region, r, LONE_CLEARANCE_MM), r)
    return spots


def _by_terrain(rng: np.random.Generator, region: Region, plan: _Plan) -> Spots:
    """A unit gathered against a terrain block, or under a platform, where the block hides some of it."""
    blocks = [b for b in region.blocks if b.kind in ("solid", "platform")]
    if not blocks:
        return _loose(rng, region, plan)
    block = blocks[int(rng.integers(len(blocks)))]
    r = plan.diameter / 2.0
    first = None
    for _ in range(TRIES):
        lx = float(rng.uniform(-0.5, 0.5)) * block.width_mm
        ly = float(rng.uniform(-0.5, 0.5)) * block.depth_mm
        if block.kind == "solid":  # just outside one side
            if rng.random() < 0.5:
                lx = math.copysign(block.width_mm / 2.0 + r + float(rng.uniform(0.0, 3.0)), lx)
            else:
                ly = math.copysign(block.depth_mm / 2.0 + r + float(rng.uniform(0.0, 3.0)), ly)
        t = math.radians(block.yaw_deg)
        x = block.x_mm + math.cos(t) * lx - math.sin(t) * ly
        y = block.y_mm + math.sin(t) * lx + math.cos(t) * ly
        if region.free(x, y, r):
            first = (x, y)
            break
    return _loose(rng, region, plan, first) if first is not None else []


def _bases(rng: np.random.Generator, region: Region, plan: _Plan, spots: Spots) -> list[WideBase]:
    out = []
    for n, (x, y, r) in enumerate(spots):
        ceiling = region.ceiling(x, y, r)
        bl = plan.base
        figure, local = looks.figure_parts(
            rng, plan.diameter, bl.rim_height_mm, plan.scheme, None if ceiling is None else ceiling - 6.0
        )
        offset = tuple(rng.uniform(-0.18, 0.18, 2) * r)
        parts = looks.place_parts(local, x, y, (float(offset[0]), float(offset[1])), float(rng.uniform(0, 360)))
        out.append(
            WideBase(
                id=f"{plan.id}m{n + 1}",
                unit=plan.id,
                x_mm=x,
                y_mm=y,
                diameter_mm=plan.diameter,
                rim_height_mm=bl.rim_height_mm,
                bevel_mm=bl.bevel_mm,
                bevel_rise_mm=bl.bevel_rise_mm,
                top=bl.top,
                top_colour=looks.vary(rng, bl.top_colour, 0.04),
                rim=bl.rim,
                rim_colour=bl.rim_colour,
                figure=figure,
                parts=parts,
                texture_seed=int(rng.integers(1 << 31)),
                gloss=bl.gloss,
            )
        )
    return out


def place_units(
    rng: np.random.Generator, region: Region, target: int, sizes_mm: tuple[float, ...] | None = None
) -> tuple[list[Unit], list[WideBase]]:
    """Units until about ``target`` models stand (fewer when the seen table fills up)."""
    units: list[Unit] = []
    bases: list[WideBase] = []
    k = 0
    while len(bases) < target and k < 40:
        formation = str(rng.choice(FORMATIONS, p=FORMATION_WEIGHTS))
        plan = _plan(rng, k, target - len(bases), sizes_mm)
        if formation == "melee":
            k += 1
            other = _plan(rng, k, max(1, target - len(bases) - plan.count), sizes_mm)
            groups = list(zip((plan, other), _melee(rng, region, plan, other), strict=True))
        elif formation == "lone":
            groups = [(plan, _lone(rng, region, plan))]
        elif formation == "terrain":
            groups = [(plan, _by_terrain(rng, region, plan))]
        else:
            groups = [(plan, _loose(rng, region, plan))]
        k += 1
        for p, spots in groups:
            if spots:
                bases.extend(_bases(rng, region, p, spots))
                units.append(Unit(id=p.id, player=p.player, name=f"{p.player} unit {p.id[1:]}", leader=f"{p.id}m1"))
    return units, bases


# --------------------------------------------------------------------------------------------------------------
# Scenes


# A dark frame: the black space mat this often, and black tops on this share of the units (the looks a detector
# finds hardest, made common for fitting sets; the frame's camera, terrain and models stand where its seed puts them
# without ``dark``).
DARK_SPACE_SHARE = 0.7
DARK_TOP_SHARE = 0.6


def _darkened(seed: int, bases: Sequence[WideBase], mat: MatLook) -> tuple[list[WideBase], MatLook]:
    """``bases`` with black tops on a share of their units, and ``mat`` often the space mat, from a generator of
    their own (the seed's other draws stay as they were)."""
    rng = np.random.default_rng([seed, 0xDA])
    if rng.random() < DARK_SPACE_SHARE:
        mat = looks.random_mat(rng, "space")
    black = {u: looks.base_look(rng, "black") for u in sorted({b.unit for b in bases}) if rng.random() < DARK_TOP_SHARE}
    out = []
    for b in bases:
        bl = black.get(b.unit)
        if bl is not None:
            b = replace(
                b, top="black", top_colour=looks.vary(rng, bl.top_colour, 0.04), rim=bl.rim, rim_colour=bl.rim_colour
            )
        out.append(b)
    return out, mat


def random_scene(
    seed: int,
    resolution: str = "4k",
    view: View | None = None,
    dark: bool = False,
    sizes_mm: tuple[float, ...] | None = None,
) -> WideScene:
    """A random wide-look frame: camera (unless ``view`` is given), terrain, 20-80 models, dice, a hand now and
    then, mat and prints, light and imaging, all from ``seed``; with ``dark`` the black mat and black tops made
    common (see ``DARK_SPACE_SHARE``); ``sizes_mm``: the base sizes drawn, of ``looks.BASE_SIZES_MM`` (None: all)."""
    rng = np.random.default_rng(seed)
    if view is None:
        view = choose_view(rng, RESOLUTIONS[resolution])
    region = Region.of(view.camera, view.table)
    place_terrain(rng, region, int(rng.integers(0, 5)))
    units, bases = place_units(rng, region, int(rng.integers(MODELS_PER_FRAME[0], MODELS_PER_FRAME[1] + 1)), sizes_mm)
    if rng.random() < 0.45:
        place_dice(rng, region, int(rng.integers(1, 9)))
    hands: list[tuple[Part, ...]] = []
    if rng.random() < 0.25:
        markers = [view.camera.project(np.c_[m.corners_mm(), np.zeros(4)]) for m in view.table.markers]
        hand = place_hand(rng, region, markers)
        if hand is not None:
            hands.append(hand)
    mat = looks.random_mat(rng)
    if dark:
        bases, mat = _darkened(seed, bases, mat)
    return WideScene(
        table=view.table,
        table_name=view.table_name,
        camera=view.camera,
        resolution=resolution,
        units=tuple(units),
        bases=tuple(bases),
        blocks=tuple(region.blocks),
        hands=tuple(hands),
        mat=mat,
        prints=looks.random_prints(rng, mat, region.seen_points()),
        light=looks.random_light(rng),
        imaging=looks.random_imaging(rng, resolution),
    )


# A neutral look for exact tests: a flat light sand mat with no prints, flat light from straight above, a sharp
# noiseless camera.
PLAIN_MAT = MatLook(
    "desert", (0.55, 0.62, 0.66), (0.55, 0.62, 0.66), 0.0, 0.0, 10.0, 0.0, 100.0, 0.0, 0.0, (0.1, 0.1, 0.1), 0
)
PLAIN_LIGHT = LightLook(
    "neutral", (1.0, 1.0, 1.0), 0.6, (Lamp(0.0, 90.0, 1.0, 1.0),), 0.0, (0.0, 0.0, 0.0, 0.0), (0.0, 0.0), 1.0
)
PLAIN_IMAGING = Imaging(supersample=3, blur_px=0.0, read_noise=0.0, shot_noise=0.0, jpeg_quality=95)


def plain_scene(
    view: View, bases: Sequence[WideBase] = (), blocks: Sequence[Block] = (), mat: MatLook = PLAIN_MAT
) -> WideScene:
    """The given bases and blocks on a plain mat under flat light, seen sharp and noiseless (one unit per unit
    id the bases name). Change the look with :func:`dataclasses.replace`."""
    unit_ids = sorted({b.unit for b in bases})
    return WideScene(
        table=view.table,
        table_name=view.table_name,
        camera=view.camera,
        resolution="custom",
        units=tuple(Unit(id=u) for u in unit_ids),
        bases=tuple(bases),
        blocks=tuple(blocks),
        hands=(),
        mat=mat,
        prints=(),
        light=PLAIN_LIGHT,
        imaging=PLAIN_IMAGING,
    )
