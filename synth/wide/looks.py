"""Random appearance for wide-look frames: base tops and rims, figures, mats and their prints, light and imaging.

Every choice comes from the numpy Generator handed in, so a seed fixes the look. Colours are BGR in [0, 1]; the
ranges are wide on purpose (the detector must not lean on one renderer's palette)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from synth.wide.scene import Blob, Colour, Flag, Imaging, Lamp, LightLook, MatLook, Part, Print, Stick

TOPS = ("black", "grey", "brown", "sand", "painted", "flock", "acrylic")
TOP_WEIGHTS = (0.2, 0.12, 0.13, 0.13, 0.14, 0.16, 0.12)
FIGURES = ("none", "dark", "light", "uniform", "multi")
FIGURE_WEIGHTS = (0.1, 0.2, 0.18, 0.22, 0.3)
# Per model, on top of the unit's scheme: a spear or a banner that reaches well past the base.
SPEAR_SHARE = 0.1
BANNER_SHARE = 0.06
MATS = ("grass", "desert", "urban", "space")

PAINTS: tuple[Colour, ...] = (
    (0.08, 0.08, 0.55),  # red
    (0.55, 0.25, 0.06),  # blue
    (0.12, 0.45, 0.14),  # green
    (0.06, 0.6, 0.75),  # yellow
    (0.42, 0.1, 0.38),  # purple
    (0.05, 0.32, 0.78),  # orange
    (0.48, 0.42, 0.06),  # teal
    (0.8, 0.8, 0.8),  # white
)
DARKS: tuple[Colour, ...] = (
    (0.035, 0.035, 0.04),
    (0.09, 0.09, 0.1),
    (0.05, 0.08, 0.12),
    (0.05, 0.11, 0.06),
    (0.14, 0.06, 0.04),
    (0.13, 0.12, 0.12),
)
LIGHTS: tuple[Colour, ...] = (
    (0.6, 0.74, 0.8),  # bone
    (0.85, 0.85, 0.84),  # white
    (0.64, 0.64, 0.62),  # light grey
    (0.55, 0.8, 0.86),  # pale yellow
    (0.72, 0.71, 0.7),  # silver
    (0.86, 0.72, 0.58),  # pale blue
)
SKINS: tuple[Colour, ...] = ((0.45, 0.56, 0.76), (0.33, 0.45, 0.62), (0.2, 0.29, 0.42), (0.52, 0.64, 0.83))
METALS: tuple[Colour, ...] = ((0.3, 0.3, 0.31), (0.55, 0.55, 0.57), (0.12, 0.3, 0.45))
WOOD: Colour = (0.12, 0.22, 0.32)
RIM_NAMED: MappingProxyType[str, Colour] = MappingProxyType(
    {
        "black": (0.06, 0.06, 0.065),
        "grey": (0.3, 0.3, 0.3),
        "brown": (0.06, 0.12, 0.2),
        "green": (0.1, 0.28, 0.14),
        "sand": (0.38, 0.53, 0.64),
    }
)
BASE_SIZES_MM = (25.0, 27.0, 28.5, 32.0, 40.0, 50.0, 60.0)
BASE_SIZE_WEIGHTS = (0.19, 0.05, 0.13, 0.27, 0.17, 0.11, 0.08)
RIM_HEIGHT_MM = (2.0, 6.0)


def size_weights(sizes_mm: tuple[float, ...] | None = None) -> tuple[float, ...]:
    """The odds of each of ``BASE_SIZES_MM`` for a unit, only ``sizes_mm`` among them drawn (None: all)."""
    if sizes_mm is None:
        return BASE_SIZE_WEIGHTS
    kept = [w if d in sizes_mm else 0.0 for d, w in zip(BASE_SIZES_MM, BASE_SIZE_WEIGHTS, strict=True)]
    if sum(kept) == 0:
        raise ValueError(f"none of the sizes {sizes_mm} is drawn; expected some of {BASE_SIZES_MM}")
    return tuple(w / sum(kept) for w in kept)


BEVEL_SHARE = 0.4


def pick(rng: np.random.Generator, items: Sequence[Colour]) -> Colour:
    return items[int(rng.integers(len(items)))]


def vary(rng: np.random.Generator, colour: Colour, amount: float) -> Colour:
    """The colour with its brightness and each channel jittered by up to ``amount`` (share)."""
    gain = 1.0 + rng.uniform(-amount, amount)
    c = np.clip(np.asarray(colour) * gain * (1.0 + rng.uniform(-amount, amount, 3) * 0.5), 0.0, 1.0)
    return (float(c[0]), float(c[1]), float(c[2]))


@dataclass(frozen=True)
class BaseLook:
    """How a unit's bases look: top category and colour, rim name and colour, rim height and bevel (mm)."""

    top: str
    top_colour: Colour
    rim: str
    rim_colour: Colour
    rim_height_mm: float
    bevel_mm: float
    bevel_rise_mm: float
    gloss: float


def top_colour(rng: np.random.Generator, top: str) -> Colour:
    """The main colour of a base top of category ``top`` (flock: the grass's, acrylic: the plastic's tint)."""
    if top == "black":
        return vary(rng, (0.06, 0.06, 0.065), 0.3)
    if top == "grey":
        g = float(rng.uniform(0.22, 0.55))
        return vary(rng, (g, g, g * 0.97), 0.05)
    if top == "brown":
        return vary(rng, (0.05, 0.1, 0.18), 0.3)
    if top == "sand":
        return vary(rng, (0.38, 0.54, 0.66), 0.15)
    if top == "painted":
        return vary(rng, pick(rng, PAINTS), 0.15)
    if top == "flock":
        return vary(rng, pick(rng, ((0.1, 0.33, 0.2), (0.12, 0.3, 0.3), (0.08, 0.2, 0.28))), 0.2)
    return (0.92, 0.93, 0.93)


def base_look(rng: np.random.Generator, top: str | None = None) -> BaseLook:
    """A unit's bases: top (random when None), rim (often black, or the top's colour), rim height 2-6 mm, sometimes
    a bevel."""
    if top is None:
        top = str(rng.choice(TOPS, p=TOP_WEIGHTS))
    colour = top_colour(rng, top)
    if top == "acrylic":
        rim, rim_colour = "clear", colour
    else:
        u = rng.random()
        if u < 0.5:
            rim, rim_colour = "black", vary(rng, RIM_NAMED["black"], 0.2)
        elif u < 0.8 and top != "flock":
            rim, rim_colour = "same", colour
        else:
            rim = str(rng.choice(sorted(RIM_NAMED)))
            rim_colour = vary(rng, RIM_NAMED[rim], 0.2)
    height = float(rng.uniform(*RIM_HEIGHT_MM))
    bevel, rise = 0.0, 0.0
    if rng.random() < BEVEL_SHARE:
        bevel = float(rng.uniform(0.6, 2.0))
        rise = height * float(rng.uniform(0.3, 0.55))
    gloss = float(rng.uniform(0.1, 0.45)) if top == "acrylic" else float(rng.uniform(0.08, 0.3))
    return BaseLook(top, colour, rim, rim_colour, height, bevel, rise, gloss)


@dataclass(frozen=True)
class Scheme:
    """A unit's paint scheme: the figure category and its colours (main, second, skin, metal)."""

    figure: str
    colours: tuple[Colour, Colour, Colour, Colour]


def scheme(rng: np.random.Generator) -> Scheme:
    """The figure category of a unit and colours that fit it."""
    figure = str(rng.choice(FIGURES, p=FIGURE_WEIGHTS))
    if figure == "dark":
        cs = tuple(vary(rng, pick(rng, DARKS), 0.2) for _ in range(4))
    elif figure == "light":
        cs = tuple(vary(rng, pick(rng, LIGHTS), 0.08) for _ in range(4))
    elif figure == "uniform":
        c = vary(rng, pick(rng, PAINTS), 0.1)
        cs = (c, c, c, c)
    else:
        cs = (
            vary(rng, pick(rng, PAINTS), 0.15),
            vary(rng, pick(rng, (*PAINTS, *DARKS, *LIGHTS)), 0.15),
            pick(rng, SKINS),
            pick(rng, METALS),
        )
    return Scheme(figure, (cs[0], cs[1], cs[2], cs[3]))


def _turn(x: float, y: float, facing: float) -> tuple[float, float]:
    c, s = math.cos(facing), math.sin(facing)
    return c * x - s * y, s * x + c * y


def _trooper(rng: np.random.Generator, r: float, rim: float, height: float, cs: Sequence[Colour]) -> list[Part]:
    """A standing figure in its own frame (x forward, base top at z = ``rim``), ``height`` mm tall."""
    main, second, skin, metal = cs
    hip, chest = rim + 0.45 * height, rim + 0.68 * height
    leg = 0.065 * height
    parts: list[Part] = []
    for side in (-1.0, 1.0):
        stride = float(rng.uniform(-0.12, 0.12)) * height
        parts.append(Stick((stride, side * 0.09 * height, rim + leg), (0.0, side * 0.07 * height, hip), leg, second))
    parts.append(Blob((0.0, 0.0, (hip + chest) / 2.0), (0.13 * height, 0.19 * height, 0.2 * height), 0.0, main))
    parts.append(Blob((0.02 * height, 0.0, rim + 0.88 * height), (0.09 * height,) * 3, 0.0, skin))
    reach = float(rng.uniform(0.25, 0.6)) * height
    hand = (reach, float(rng.uniform(-0.25, 0.25)) * height, rim + float(rng.uniform(0.45, 0.7)) * height)
    for side in (-1.0, 1.0):
        end = hand if side > 0 else (float(rng.uniform(-0.1, 0.2)) * height, -0.26 * height, rim + 0.45 * height)
        parts.append(Stick((0.0, side * 0.2 * height, chest), end, 0.06 * height, main))
    if rng.random() < 0.7:  # a short weapon in the hand, sometimes past the rim
        tip = (hand[0] + float(rng.uniform(0.1, 0.45)) * height, hand[1], hand[2] + float(rng.uniform(-3, 4)))
        parts.append(Stick(hand, tip, float(rng.uniform(0.6, 1.2)), metal))
    if rng.random() < 0.35:  # a pack or a cloak behind
        parts.append(
            Blob((-0.16 * height, 0.0, hip + 0.1 * height), (0.1 * height, 0.2 * height, 0.22 * height), 0.0, second)
        )
    return parts


def _creature(rng: np.random.Generator, r: float, rim: float, height: float, cs: Sequence[Colour]) -> list[Part]:
    """A beast for a big base: body, four legs, neck and head that may reach past the rim, a tail."""
    main, second, _, metal = cs
    body_z = rim + 0.55 * height
    length = r * float(rng.uniform(0.55, 0.85))
    parts: list[Part] = [Blob((0.0, 0.0, body_z), (length, 0.4 * r, 0.22 * height), 0.0, main)]
    for fx in (-0.55, 0.55):
        for side in (-1.0, 1.0):
            foot = (fx * length, side * 0.45 * r, rim + 2.0)
            parts.append(Stick(foot, (0.8 * fx * length, side * 0.25 * r, body_z), 2.4, second))
    head = (
        length * float(rng.uniform(1.0, 1.45)),
        float(rng.uniform(-5, 5)),
        rim + float(rng.uniform(0.75, 1.0)) * height,
    )
    parts.append(Stick((0.6 * length, 0.0, body_z + 2.0), head, 3.2, main))
    parts.append(Blob(head, (6.5, 4.5, 4.5), float(rng.uniform(-30, 30)), second))
    tail = math.radians(float(rng.uniform(150.0, 210.0)))
    reach = r * float(rng.uniform(0.8, 1.5))
    end = (reach * math.cos(tail), reach * math.sin(tail), rim + float(rng.uniform(3.0, 0.5 * height)))
    parts.append(Stick((-0.8 * length, 0.0, body_z), end, 1.8, metal if rng.random() < 0.3 else main))
    return parts


def _spear(rng: np.random.Generator, rim: float, height: float, cs: Sequence[Colour]) -> list[Part]:
    """A long thin spear held at about waist height, poking well past the base."""
    length = float(rng.uniform(40.0, 75.0))
    rise = math.radians(float(rng.uniform(5.0, 40.0)))
    z = rim + 0.5 * height
    back = 0.25 * length
    start = (-back * math.cos(rise), 0.0, max(rim + 1.0, z - back * math.sin(rise)))
    end = ((length - back) * math.cos(rise), 0.0, z + (length - back) * math.sin(rise))
    shaft = WOOD if rng.random() < 0.6 else cs[3]
    return [Stick(start, end, float(rng.uniform(0.5, 0.9)), shaft), Blob(end, (2.5, 1.0, 1.0), 0.0, cs[3])]


def _banner(rng: np.random.Generator, rim: float, height: float, cs: Sequence[Colour]) -> list[Part]:
    """A pole rising above the figure with a cloth hanging from its top, sideways past the base."""
    top_z = rim + height + float(rng.uniform(12.0, 30.0))
    lean = float(rng.uniform(-4.0, 4.0))
    pole = Stick((-0.1 * height, 0.0, rim + 1.0), (-0.1 * height + lean, 0.0, top_z), 0.7, WOOD)
    width = float(rng.uniform(14.0, 28.0))
    drop = float(rng.uniform(16.0, 30.0))
    a = math.radians(float(rng.uniform(-60.0, 60.0)) + 90.0)
    x0, y0 = -0.1 * height + lean, 0.0
    x1, y1 = x0 + width * math.cos(a), y0 + width * math.sin(a)
    flag = Flag(((x0, y0, top_z), (x1, y1, top_z - 2.0), (x1, y1, top_z - drop - 2.0), (x0, y0, top_z - drop)), cs[1])
    return [pole, flag]


def figure_parts(
    rng: np.random.Generator, diameter: float, rim: float, sch: Scheme, max_height: float | None = None
) -> tuple[str, list[Part]]:
    """A figure for a base (its category and its parts in the base's own frame: x forward, z up from the
    table). Figures stand 20-40 mm tall and may reach past the rim. Under a ``max_height`` (mm above the table,
    for a base under a platform) the figure is kept lower and carries no spear or banner."""
    if sch.figure == "none":
        return "none", []
    r = diameter / 2.0
    height = float(rng.uniform(20.0, 40.0))
    if max_height is not None:
        height = max(8.0, min(height, max_height - rim))
    cs = sch.colours
    parts = _creature(rng, r, rim, height, cs) if diameter >= 50.0 else _trooper(rng, r, rim, height, cs)
    u = rng.random()
    if max_height is not None or diameter >= 50.0:
        return sch.figure, parts
    if u < SPEAR_SHARE:
        return "spear", parts + _spear(rng, rim, height, cs)
    if u < SPEAR_SHARE + BANNER_SHARE:
        return "banner", parts + _banner(rng, rim, height, cs)
    return sch.figure, parts


def place_parts(
    parts: Sequence[Part], x: float, y: float, offset: tuple[float, float], facing_deg: float
) -> tuple[Part, ...]:
    """Figure parts moved from the base's frame to the table: turned by ``facing_deg``, shifted off-centre by
    ``offset`` (mm), then to the base centre."""
    f = math.radians(facing_deg)

    def move(p: tuple[float, float, float]) -> tuple[float, float, float]:
        px, py = _turn(p[0], p[1], f)
        return (x + offset[0] + px, y + offset[1] + py, p[2])

    out: list[Part] = []
    for part in parts:
        if isinstance(part, Blob):
            out.append(Blob(move(part.centre), part.radii, part.yaw_deg + facing_deg, part.colour))
        elif isinstance(part, Stick):
            out.append(Stick(move(part.start), move(part.end), part.radius, part.colour))
        else:
            c = part.corners
            out.append(Flag((move(c[0]), move(c[1]), move(c[2]), move(c[3])), part.colour))
    return tuple(out)


# --------------------------------------------------------------------------------------------------------------
# Mat, prints, light, imaging

_MAT_COLOURS: MappingProxyType[str, tuple[Colour, Colour]] = MappingProxyType(
    {
        "grass": ((0.12, 0.27, 0.2), (0.14, 0.26, 0.3)),
        "desert": ((0.36, 0.54, 0.67), (0.25, 0.4, 0.52)),
        "urban": ((0.33, 0.34, 0.35), (0.22, 0.23, 0.25)),
        "space": ((0.05, 0.035, 0.03), (0.12, 0.05, 0.1)),
    }
)
FLOORS: tuple[Colour, ...] = ((0.05, 0.1, 0.16), (0.2, 0.2, 0.21), (0.1, 0.12, 0.14))
# Prints per mat kind: (kind, lowest count, highest count).
_PRINTS: MappingProxyType[str, tuple[tuple[str, int, int], ...]] = MappingProxyType(
    {
        "grass": (("crater", 1, 8), ("ring", 1, 6), ("disc", 0, 4), ("tyre", 0, 2), ("debris", 10, 60)),
        "desert": (("crater", 2, 10), ("tyre", 0, 5), ("ring", 1, 5), ("disc", 0, 3), ("debris", 20, 90)),
        "urban": (("manhole", 1, 6), ("tyre", 1, 6), ("ring", 1, 6), ("disc", 0, 4), ("debris", 20, 90)),
        "space": (("star", 300, 1500), ("crater", 1, 6), ("ring", 1, 6), ("disc", 0, 3), ("debris", 0, 20)),
    }
)
_PRINT_RADIUS_MM: MappingProxyType[str, tuple[float, float]] = MappingProxyType(
    {
        "crater": (10.0, 45.0),
        "tyre": (16.0, 40.0),
        "manhole": (12.0, 35.0),
        "ring": (10.0, 30.0),
        "disc": (10.0, 30.0),
        "debris": (1.5, 8.0),
        "star": (0.25, 1.2),
    }
)


def random_mat(rng: np.random.Generator, kind: str | None = None) -> MatLook:
    """A mat of ``kind`` (random when None) with texture at three scales."""
    if kind is None:
        kind = str(rng.choice(MATS))
    a, b = _MAT_COLOURS[kind]
    return MatLook(
        kind=kind,
        colour_a=vary(rng, a, 0.2),
        colour_b=vary(rng, b, 0.2),
        grain=float(rng.uniform(0.03, 0.1)),
        mottle=float(rng.uniform(0.05, 0.18)),
        mottle_mm=float(rng.uniform(4.0, 20.0)),
        blotch=float(rng.uniform(0.2, 0.8)),
        blotch_mm=float(rng.uniform(60.0, 250.0)),
        speckle=float(rng.uniform(0.02, 0.15)) if kind in ("grass", "desert") else float(rng.uniform(0.0, 0.04)),
        paving_mm=float(rng.uniform(120.0, 400.0)) if kind == "urban" and rng.random() < 0.6 else 0.0,
        floor=pick(rng, FLOORS),
        seed=int(rng.integers(1 << 31)),
    )


def _print_colours(rng: np.random.Generator, kind: str, mat: MatLook) -> tuple[Colour, Colour]:
    """Main and second colour of a print (tyre rubber and hub, crater rim and floor, ...)."""
    if kind == "tyre":
        return vary(rng, (0.05, 0.05, 0.055), 0.3), vary(rng, (0.3, 0.3, 0.31), 0.3)
    if kind == "manhole":
        return vary(rng, (0.3, 0.3, 0.3), 0.3), vary(rng, (0.16, 0.16, 0.17), 0.3)
    if kind == "crater":
        dark = tuple(0.45 * c for c in mat.colour_a)
        light = tuple(min(1.0, 1.35 * c + 0.04) for c in mat.colour_b)
        return vary(rng, (dark[0], dark[1], dark[2]), 0.2), vary(rng, (light[0], light[1], light[2]), 0.2)
    if kind == "star":
        return vary(rng, (0.9, 0.92, 0.95), 0.1), (1.0, 1.0, 1.0)
    if kind == "debris":
        c = pick(rng, (*DARKS, *LIGHTS, (0.2, 0.25, 0.3)))
        return vary(rng, c, 0.2), c
    c = pick(rng, (*PAINTS, (0.04, 0.04, 0.04), (0.85, 0.85, 0.85)))
    return vary(rng, c, 0.1), c


def random_prints(rng: np.random.Generator, mat: MatLook, points: np.ndarray) -> tuple[Print, ...]:
    """Round things printed on the mat at random spots among ``points`` ((K, 2) table mm, where the camera
    sees the table): craters, tyres, manholes, rings and discs at base-like sizes, debris chips, stars."""
    out: list[Print] = []
    for kind, lo, hi in _PRINTS[mat.kind]:
        for _ in range(int(rng.integers(lo, hi + 1))):
            x, y = points[int(rng.integers(len(points)))]
            radius = float(rng.uniform(*_PRINT_RADIUS_MM[kind]))
            line = 0.0
            if kind == "ring":
                line = float(rng.uniform(0.8, 3.0))
            elif kind == "tyre":
                line = radius * float(rng.uniform(0.3, 0.45))
            c1, c2 = _print_colours(rng, kind, mat)
            out.append(Print(kind, float(x), float(y), radius, line, c1, c2, int(rng.integers(1 << 31))))
    return tuple(out)


def random_light(rng: np.random.Generator) -> LightLook:
    """Warm, cool or neutral light from one to three lamps with soft or hard shadows, vignetting, sometimes a
    glare spot, brightness 0.6-1.3."""
    tint = str(rng.choice(["warm", "cool", "neutral"]))
    if tint == "warm":
        gains = (float(rng.uniform(0.78, 0.9)), float(rng.uniform(0.95, 1.0)), float(rng.uniform(1.05, 1.15)))
    elif tint == "cool":
        gains = (float(rng.uniform(1.05, 1.15)), float(rng.uniform(0.98, 1.03)), float(rng.uniform(0.82, 0.93)))
    else:
        gains = (1.0, 1.0, 1.0)
    n = int(rng.integers(1, 4))
    shares = rng.dirichlet(np.full(n, 2.0))
    lamps = tuple(
        Lamp(
            azimuth_deg=float(rng.uniform(0.0, 360.0)),
            elevation_deg=float(rng.uniform(35.0, 82.0)),
            share=float(s),
            softness_mm=float(rng.uniform(0.3, 1.2)) if rng.random() < 0.5 else float(rng.uniform(3.0, 10.0)),
        )
        for s in shares
    )
    glare = (0.0, 0.0, 0.0, 0.0)
    if rng.random() < 0.4:
        glare = (
            float(rng.uniform(0.1, 0.9)),
            float(rng.uniform(0.1, 0.9)),
            float(rng.uniform(0.04, 0.2)),
            float(rng.uniform(0.15, 0.7)),
        )
    return LightLook(
        tint=tint,
        gains=gains,
        ambient=float(rng.uniform(0.3, 0.6)),
        lamps=lamps,
        vignetting=float(rng.uniform(0.0, 0.35)),
        glare=glare,
        gradient=(float(rng.uniform(-0.12, 0.12)), float(rng.uniform(-0.12, 0.12))),
        brightness=float(rng.uniform(0.6, 1.3)),
    )


# Supersampling per frame size: fewer samples on the big frames keep a 12 MP canvas within a few hundred MB.
SUPERSAMPLE = MappingProxyType({"1080p": 3, "4k": 2, "12mp": 2})


def random_imaging(rng: np.random.Generator, resolution: str) -> Imaging:
    """Optics blur 0.5-1.3 px, sensor noise, JPEG quality 75-95."""
    return Imaging(
        supersample=SUPERSAMPLE.get(resolution, 3),
        blur_px=float(rng.uniform(0.5, 1.3)),
        read_noise=float(rng.uniform(0.8, 3.0)),
        shot_noise=float(rng.uniform(1.0, 4.0)),
        jpeg_quality=int(rng.integers(75, 96)),
    )
