"""The renderer: a scene in, a camera frame (BGR, uint8) and its exact ground truth out.

How a frame is made:

1. The table plane, one sample per pixel: every pixel's ray meets the table at a point, which takes the mat
   texture's colour there (or the floor's, past the table edge). Sharp prints on the table (markers, printed
   circles) are sampled ``supersample`` x ``supersample`` times per pixel, each sample on its own exact ray.
2. Light on the table: the main light (dimmed by soft cast shadows) and the fill light (dimmed near objects that
   stand on the table).
3. Solid shapes (bases, figures, tokens, dice, terrain, hands) are ray-cast at ``supersample`` x ``supersample``
   samples per pixel, in strips, over the screen box of each shape only: the nearest hit wins, so occlusion is
   exact; the samples are averaged into the pixel, so every outline is anti-aliased without bias.
4. Uneven light and vignetting, optics blur, sensor noise, 8-bit quantisation, JPEG.

Every ray goes through the exact inverse of the lens, so what lands on a pixel is what ``cv2.projectPoints`` says
(to machine precision, not a warp of an undistorted picture).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from rules.state import TableState, state_to_dict
from synth import shapes as sh
from synth.camera import Camera, table_hits
from synth.prints import prints
from synth.scene import (
    BASE_COLOURS,
    Capsule,
    Die,
    Ellipsoid,
    Hand,
    Scene,
    SceneModel,
    TerrainBlock,
    Token,
)
from synth.sensor import develop
from synth.texture import MAT_TEXEL_MM, mat_texture, value_noise

FloatArray = NDArray[np.float64]
Image = NDArray[np.uint8]

# Ray casting works on strips of this many image rows: big enough for numpy to pay off, small enough that a strip
# of 4K samples at 4 x 4 per pixel stays within a few tens of MB.
STRIP_ROWS = 32
# Screen boxes grow by this many pixels: the projected outline of a shape may bulge past its sampled hull points.
BOX_MARGIN_PX = 2
# Rows of the per-pixel table map computed at once (bounds the memory of the 4K lens inverse).
_HIT_CHUNK_ROWS = 256


# Shadow maps lie on the table in table coordinates, 1 texel per mm, reaching this far past the table edges.
SHADOW_TEXEL_MM = 1.0
SHADOW_MARGIN_MM = 250.0
# Fill light is dimmed next to anything standing on the table (ambient occlusion): by up to this fraction, over
# about this distance.
AMBIENT_OCCLUSION = 0.35
AMBIENT_OCCLUSION_MM = 2.5
# Fill light reaching a surface falls as it turns from the sky: a wall gets (1 - this) of a floor's.
SKY_FALLOFF = 0.35
# Light gain is kept within these bounds whatever gradient a scene asks for.
_GAIN_RANGE = (0.3, 2.0)

# Rim points per model for the visibility fraction (one per degree).
RIM_SAMPLES = 360
# A hit this much nearer than the rim point (mm) hides it; smaller differences are rounding on the rim itself.
VISIBILITY_EPS_MM = 1e-4

# Base tops carry a faint texture (flock, sand, brush strokes) of this relative strength and feature size.
FLOCK_STRENGTH = 0.12
FLOCK_CELL_MM = 1.2
# Terrain carries a stone-like texture of this strength.
STONE_STRENGTH = 0.18
STONE_CELL_MM = (14.0, 3.0)
# Dice pips: radius as a share of the die size, and their spacing from the face centre.
PIP_RADIUS = 0.09
PIP_OFFSET = 0.27
# Where the pips sit for each face value, in units of PIP_OFFSET.
_PIPS: Mapping[int, tuple[tuple[int, int], ...]] = MappingProxyType(
    {
        1: ((0, 0),),
        2: ((-1, -1), (1, 1)),
        3: ((-1, -1), (0, 0), (1, 1)),
        4: ((-1, -1), (-1, 1), (1, -1), (1, 1)),
        5: ((-1, -1), (-1, 1), (0, 0), (1, -1), (1, 1)),
        6: ((-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)),
    }
)
# Tokens: a printed ring between these shares of the radius.
TOKEN_RING = (0.62, 0.8)

# Hand and forearm proportions, mm: forearm radius at wrist and elbow, palm semi-axes (along, across, thickness),
# finger radius and lengths (index to little), offsets across the palm, thumb radius and length.
FOREARM_RADII_MM = (27.0, 36.0)
FOREARM_LENGTH_MM = 420.0
PALM_RADII_MM = (48.0, 40.0, 14.0)
FINGER_RADIUS_MM = 8.5
FINGER_LENGTHS_MM = (72.0, 80.0, 76.0, 62.0)
FINGER_OFFSETS_MM = (-27.0, -9.0, 9.0, 27.0)
FINGER_EXTRA_DOWN_DEG = 25.0
THUMB_RADIUS_MM = 10.0
THUMB_LENGTH_MM = 55.0


@dataclass(frozen=True)
class Truth:
    """The ground truth of one frame.

    ``state``: the exact table state (models with their units, or none, exact centres and base sizes; terrain);
    ``camera``: the camera.json content (``image_width``, ``image_height``, ``camera_matrix``, ``dist_coeffs``);
    ``visibility``: per model id, the fraction of its top rim (the outline of the base top, at the rim height)
    that the camera sees: inside the frame and hidden by nothing, its own figure included; ``params``: how the
    frame was made (pose, light, imaging, per-model looks and projected centres, clutter), JSON-ready.
    """

    state: TableState
    camera: Mapping[str, Any]
    visibility: Mapping[str, float]
    params: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The truth JSON: a table state that :func:`rules.state_from_dict` reads, with ``camera``, ``visibility``
        and ``render`` sections beside it."""
        out = state_to_dict(self.state)
        out["camera"] = dict(self.camera)
        out["visibility"] = dict(self.visibility)
        out["render"] = dict(self.params)
        return out


# --------------------------------------------------------------------------------------------------------------
# Scene to shapes


def _ellipsoid(part: Ellipsoid, rot: FloatArray, offset: FloatArray, turn_deg: float, **kw: Any) -> sh.Shape:
    return sh.EllipsoidShape(
        center=rot @ np.asarray(part.center_mm, dtype=np.float64) + offset,
        radii=np.asarray(part.radii_mm, dtype=np.float64),
        yaw_deg=part.yaw_deg + turn_deg,
        pitch_deg=part.pitch_deg,
        albedo_fn=sh.uniform(part.colour),
        **kw,
    )


def _capsule(part: Capsule, rot: FloatArray, offset: FloatArray, **kw: Any) -> sh.Shape:
    return sh.CapsuleShape(
        start=rot @ np.asarray(part.start_mm, dtype=np.float64) + offset,
        end=rot @ np.asarray(part.end_mm, dtype=np.float64) + offset,
        radius=part.radius_mm,
        albedo_fn=sh.uniform(part.colour),
        **kw,
    )


def _flocked(colour: tuple[float, float, float], cx: float, cy: float, seed: int) -> sh.AlbedoFn:
    c = np.asarray(colour, dtype=np.float64)

    def albedo(points: FloatArray, codes: sh.Codes) -> FloatArray:
        n = value_noise(points[..., 0] - cx, points[..., 1] - cy, FLOCK_CELL_MM, seed)
        return c * (1.0 + FLOCK_STRENGTH * n)[..., None]

    return albedo


def model_shapes(m: SceneModel, index: int) -> list[sh.Shape]:
    """The base cylinder (first) and the figure's parts of one model."""
    base = m.model.base
    a, b = base.semi_axes_mm
    out: list[sh.Shape] = [
        sh.Cylinder(
            role="base",
            owner=m.model.id,
            receives_shadow=True,
            casts_high=False,
            x=m.model.x_mm,
            y=m.model.y_mm,
            a=a,
            b=b,
            yaw_deg=base.rotation_deg,
            z0=0.0,
            z1=m.rim_height_mm,
            side_albedo=sh.uniform(BASE_COLOURS[m.rim_colour]),
            top_albedo=_flocked(BASE_COLOURS[m.top_colour], m.model.x_mm, m.model.y_mm, index),
        )
    ]
    if m.figure is None:
        return out
    rot = sh._rot_z(m.facing_deg)
    offset = np.array([m.model.x_mm, m.model.y_mm, m.rim_height_mm])
    kw = {"role": "figure", "owner": m.model.id, "receives_shadow": False, "casts_high": True}
    for part in m.figure.parts:
        if isinstance(part, Ellipsoid):
            out.append(_ellipsoid(part, rot, offset, m.facing_deg, **kw))
        else:
            out.append(_capsule(part, rot, offset, **kw))
    return out


def _die_albedo(die: Die, box: sh.Box) -> sh.AlbedoFn:
    body = np.asarray(die.colour, dtype=np.float64)
    pip = np.asarray(die.pip_colour, dtype=np.float64)
    top = die.top_face
    side_x = 2 if top in (1, 6) else 1
    side_y = 3 if top in (1, 6, 2, 5) else 2
    # Opposite faces of a die add up to 7.
    values = (top, 7 - top, side_x, 7 - side_x, side_y, 7 - side_y)
    half = die.size_mm / 2.0

    def albedo(points: FloatArray, codes: sh.Codes) -> FloatArray:
        local = box.local(points) / half
        # Face coordinates: the two local axes that lie in the face.
        fu = np.where(codes < 2, local[..., 0], np.where(codes < 4, local[..., 1], local[..., 0]))
        fv = np.where(codes < 2, local[..., 1], local[..., 2])
        on_pip = np.zeros(codes.shape, dtype=bool)
        for face, value in enumerate(values):
            sel = codes == face
            for pu, pv in _PIPS[value]:
                du = fu - pu * PIP_OFFSET * 2.0
                dv = fv - pv * PIP_OFFSET * 2.0
                on_pip |= sel & (du * du + dv * dv <= (PIP_RADIUS * 2.0) ** 2)
        return np.where(on_pip[..., None], pip, body)

    return albedo


def _stone(colour: tuple[float, float, float], seed: int) -> sh.AlbedoFn:
    c = np.asarray(colour, dtype=np.float64)

    def albedo(points: FloatArray, codes: sh.Codes) -> FloatArray:
        # Walls use (along-wall, height) coordinates, so the texture is not smeared down them.
        u = points[..., 0] + points[..., 1]
        v = np.where(codes < 2, points[..., 1] - points[..., 0], points[..., 2] * 1.7)
        n = 0.6 * value_noise(u, v, STONE_CELL_MM[0], seed) + 0.4 * value_noise(u, v, STONE_CELL_MM[1], seed + 1)
        top_lift = np.where(codes == 0, 1.08, 1.0)
        return c * ((1.0 + STONE_STRENGTH * n) * top_lift)[..., None]

    return albedo


def _token_albedo(token: Token) -> sh.AlbedoFn:
    disc = np.asarray(token.colour, dtype=np.float64)
    ring = np.asarray(token.ring_colour, dtype=np.float64)
    radius = token.diameter_mm / 2.0

    def albedo(points: FloatArray, codes: sh.Codes) -> FloatArray:
        r = np.hypot(points[..., 0] - token.x_mm, points[..., 1] - token.y_mm) / radius
        in_ring = (r >= TOKEN_RING[0]) & (r <= TOKEN_RING[1])
        return np.where(in_ring[..., None], ring, disc)

    return albedo


def hand_shapes(hand: Hand) -> list[sh.Shape]:
    """Forearm, palm, four fingers and a thumb."""
    az = math.radians(hand.azimuth_deg)
    el = math.radians(hand.elevation_deg)
    fd = math.radians(hand.fingers_down_deg)
    wrist = np.asarray(hand.wrist_mm, dtype=np.float64)
    arm = np.array([math.cos(az) * math.cos(el), math.sin(az) * math.cos(el), math.sin(el)])
    ahead = np.array([-math.cos(az) * math.cos(fd), -math.sin(az) * math.cos(fd), -math.sin(fd)])
    side = np.array([-math.sin(az), math.cos(az), 0.0])
    fd2 = fd + math.radians(FINGER_EXTRA_DOWN_DEG)
    finger_dir = np.array([-math.cos(az) * math.cos(fd2), -math.sin(az) * math.cos(fd2), -math.sin(fd2)])
    skin = sh.uniform(hand.skin)
    kw: dict[str, Any] = {"role": "hand", "owner": None, "receives_shadow": False, "casts_high": True}
    elbow = wrist + arm * FOREARM_LENGTH_MM
    mid = wrist + arm * (FOREARM_LENGTH_MM * 0.45)
    out: list[sh.Shape] = [
        sh.CapsuleShape(start=wrist + arm * 10.0, end=mid, radius=FOREARM_RADII_MM[0], albedo_fn=skin, **kw),
        sh.CapsuleShape(start=mid, end=elbow, radius=FOREARM_RADII_MM[1], albedo_fn=skin, **kw),
        sh.EllipsoidShape(
            center=wrist + ahead * PALM_RADII_MM[0] * 0.9,
            radii=np.asarray(PALM_RADII_MM),
            yaw_deg=hand.azimuth_deg + 180.0,
            pitch_deg=-hand.fingers_down_deg,
            albedo_fn=skin,
            **kw,
        ),
    ]
    knuckles = wrist + ahead * PALM_RADII_MM[0] * 1.7
    for offset, length in zip(FINGER_OFFSETS_MM, FINGER_LENGTHS_MM, strict=True):
        start = knuckles + side * offset
        out.append(
            sh.CapsuleShape(start=start, end=start + finger_dir * length, radius=FINGER_RADIUS_MM, albedo_fn=skin, **kw)
        )
    thumb_start = wrist + ahead * 25.0 + side * 38.0
    thumb_dir = 0.7 * finger_dir + 0.7 * side
    out.append(
        sh.CapsuleShape(
            start=thumb_start,
            end=thumb_start + thumb_dir * THUMB_LENGTH_MM,
            radius=THUMB_RADIUS_MM,
            albedo_fn=skin,
            **kw,
        )
    )
    return out


def scene_shapes(scene: Scene) -> list[sh.Shape]:
    """Every solid shape of the scene; each model's base cylinder comes before its figure parts."""
    out: list[sh.Shape] = []
    for i, m in enumerate(scene.models):
        out.extend(model_shapes(m, i))
    for token in scene.tokens:
        r = token.diameter_mm / 2.0
        out.append(
            sh.Cylinder(
                role="token",
                owner=None,
                receives_shadow=True,
                casts_high=False,
                x=token.x_mm,
                y=token.y_mm,
                a=r,
                b=r,
                yaw_deg=0.0,
                z0=0.0,
                z1=token.height_mm,
                side_albedo=sh.uniform(token.colour),
                top_albedo=_token_albedo(token),
            )
        )
    for die in scene.dice:
        box = sh.Box(
            role="die",
            owner=None,
            receives_shadow=False,
            casts_high=True,
            x=die.x_mm,
            y=die.y_mm,
            half_x=die.size_mm / 2.0,
            half_y=die.size_mm / 2.0,
            yaw_deg=die.yaw_deg,
            z0=0.0,
            z1=die.size_mm,
            albedo_fn=sh.uniform(die.colour),
        )
        box.albedo_fn = _die_albedo(die, box)
        out.append(box)
    for k, block in enumerate(scene.terrain):
        out.append(_terrain_box(block, k))
    for hand in scene.hands:
        out.extend(hand_shapes(hand))
    return out


def _terrain_box(block: TerrainBlock, k: int) -> sh.Box:
    return sh.Box(
        role="terrain",
        owner=None,
        receives_shadow=False,
        casts_high=True,
        x=block.x_mm,
        y=block.y_mm,
        half_x=block.width_mm / 2.0,
        half_y=block.depth_mm / 2.0,
        yaw_deg=block.yaw_deg,
        z0=block.bottom_mm,
        z1=block.top_mm,
        albedo_fn=_stone(block.colour, 1000 + k),
    )


# --------------------------------------------------------------------------------------------------------------
# Screen boxes and sample grids


Box = tuple[int, int, int, int]  # u0, u1, v0, v1: pixel columns u0..u1-1, rows v0..v1-1


def screen_box(camera: Camera, points_mm: FloatArray) -> Box | None:
    """Pixel box (clipped to the image) that holds the projection of the given table points, or None."""
    px = camera.project(points_mm)
    u0 = max(0, math.floor(px[:, 0].min()) - BOX_MARGIN_PX)
    u1 = min(camera.image_width, math.ceil(px[:, 0].max()) + BOX_MARGIN_PX + 1)
    v0 = max(0, math.floor(px[:, 1].min()) - BOX_MARGIN_PX)
    v1 = min(camera.image_height, math.ceil(px[:, 1].max()) + BOX_MARGIN_PX + 1)
    if u0 >= u1 or v0 >= v1:
        return None
    return (u0, u1, v0, v1)


@lru_cache(maxsize=8)
def sample_offsets(s: int) -> FloatArray:
    """(s*s, 2) sample positions within a pixel, relative to its centre, in px.

    A rank-1 lattice: the k-th of N = s*s samples sits at x = (k + 1/2)/N, y = (a*k mod N + 1/2)/N (less 1/2),
    so no two samples share a column or a row. A regular s x s grid would put every edge that runs along the
    pixel grid (a marker seen from above) at one of only s positions per pixel, off by up to 1/(2s) px; here the
    step is 1/N. The multiplier ``a`` is the one that spreads the samples over the most distinct positions along
    every direction, then keeps them farthest apart.
    """
    n = s * s
    k = np.arange(n)
    best: tuple[tuple[int, float], int] | None = None
    for a in range(1, max(2, n)):
        if math.gcd(a, n) != 1:
            continue
        pts = np.stack([(k + 0.5) / n, ((a * k) % n + 0.5) / n], axis=-1)
        spread = min(
            len(np.unique(np.round(pts @ np.array([math.cos(t), math.sin(t)]), 9)))
            for t in np.linspace(0.0, math.pi, 37)
        )
        gaps = np.linalg.norm(pts[:, None] - pts[None], axis=-1) + np.eye(n) * 9.0
        score = (spread, float(gaps.min()))
        if best is None or score > best[0]:
            best = (score, a)
    a = 1 if best is None else best[1]
    out = np.stack([(k + 0.5) / n - 0.5, ((a * k) % n + 0.5) / n - 0.5], axis=-1)
    out.flags.writeable = False
    return out


def _sample_rays(camera: Camera, box: Box, s: int) -> FloatArray:
    """Unit rays (rows, cols, s*s, 3) through the samples (:func:`sample_offsets`) of every pixel of ``box``.

    The lens inverse is solved exactly at the pixel centres around the box and interpolated bilinearly in between:
    the distortion field is so smooth that over one pixel this is off by less than 1e-4 px.
    """
    u0, u1, v0, v1 = box
    rows, cols = v1 - v0, u1 - u0
    gu, gv = np.meshgrid(np.arange(u0 - 1, u1 + 1, dtype=np.float64), np.arange(v0 - 1, v1 + 1, dtype=np.float64))
    gx, gy = camera.normalized(gu, gv)
    offsets = sample_offsets(s)
    xs = np.empty((rows, cols, len(offsets)))
    ys = np.empty_like(xs)
    for k, (ox, oy) in enumerate(offsets):
        # Node (1, 1) of the lattice is the pixel itself; step back one node for a sample left of / above it.
        i0, wu = (1, ox) if ox >= 0 else (0, 1.0 + ox)
        j0, wv = (1, oy) if oy >= 0 else (0, 1.0 + oy)
        for g, out in ((gx, xs), (gy, ys)):
            a, b = g[j0 : j0 + rows, i0 : i0 + cols], g[j0 : j0 + rows, i0 + 1 : i0 + 1 + cols]
            c, d = g[j0 + 1 : j0 + 1 + rows, i0 : i0 + cols], g[j0 + 1 : j0 + 1 + rows, i0 + 1 : i0 + 1 + cols]
            out[..., k] = (1.0 - wv) * ((1.0 - wu) * a + wu * b) + wv * ((1.0 - wu) * c + wu * d)
    return camera.directions(xs, ys)


@lru_cache(maxsize=2)
def _pixel_hits(camera: Camera) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Table coordinates (x, y) in mm, float32 (H, W), where each pixel centre's ray meets the table plane."""
    origin = np.asarray(camera.position_mm, dtype=np.float64)
    xs = np.empty((camera.image_height, camera.image_width), dtype=np.float32)
    ys = np.empty_like(xs)
    u = np.arange(camera.image_width, dtype=np.float64)
    for r0 in range(0, camera.image_height, _HIT_CHUNK_ROWS):
        r1 = min(camera.image_height, r0 + _HIT_CHUNK_ROWS)
        uu, vv = np.meshgrid(u, np.arange(r0, r1, dtype=np.float64))
        d = camera.rays(uu, vv)
        # Rays at or above the horizon would never meet the table: send them far away instead.
        d[..., 2] = np.minimum(d[..., 2], -1e-6)
        hit = table_hits(origin, d)
        xs[r0:r1] = hit[..., 0]
        ys[r0:r1] = hit[..., 1]
    xs.flags.writeable = False
    ys.flags.writeable = False
    return xs, ys


def _table_albedo(scene: Scene, s: int) -> NDArray[np.float32]:
    """Albedo (H, W, 3) of the table plane as each pixel sees it: mat, floor past the edge, prints."""
    cam = scene.camera
    xs, ys = _pixel_hits(cam)
    tex = mat_texture(scene.mat, scene.table.width_mm, scene.table.depth_mm)
    mat = cv2.remap(tex, xs / MAT_TEXEL_MM, ys / MAT_TEXEL_MM, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT_101)
    albedo = mat.astype(np.float32) * np.float32(1.0 / 255.0)
    inside_mm = np.minimum(np.minimum(xs, scene.table.width_mm - xs), np.minimum(ys, scene.table.depth_mm - ys))
    cover = np.clip(0.5 + inside_mm / cam.mm_per_px(), 0.0, 1.0)[..., None]
    albedo = cover * albedo + (1.0 - cover) * np.asarray(scene.mat.floor, dtype=np.float32)
    origin = np.asarray(cam.position_mm, dtype=np.float64)
    for p in prints(scene):
        box = screen_box(cam, p.outline())
        if box is None:
            continue
        u0, u1, v0, v1 = box
        hit = table_hits(origin, _sample_rays(cam, box, s))
        inside, colour = p.paint(hit[..., 0], hit[..., 1])
        cover_px = inside.mean(axis=2)[..., None]
        colour_px = (colour * inside[..., None]).mean(axis=2)
        albedo[v0:v1, u0:u1] = colour_px + (1.0 - cover_px) * albedo[v0:v1, u0:u1]
    return np.asarray(albedo, dtype=np.float32)


# --------------------------------------------------------------------------------------------------------------
# Light and shadow


@dataclass(frozen=True)
class _ShadowMaps:
    """Shadow and occlusion maps on the table plane: ``low`` from every shape (received by the table), ``high``
    from the tall ones (received by base and token tops), ``occlusion`` near footprints (fill light)."""

    x0: float
    y0: float
    low: NDArray[np.float32]
    high: NDArray[np.float32]
    occlusion: NDArray[np.float32]

    def sample(self, grid: NDArray[np.float32], x: FloatArray, y: FloatArray) -> FloatArray:
        fx = np.clip((x - self.x0) / SHADOW_TEXEL_MM, 0, grid.shape[1] - 1.001)
        fy = np.clip((y - self.y0) / SHADOW_TEXEL_MM, 0, grid.shape[0] - 1.001)
        ix, iy = np.floor(fx).astype(np.intp), np.floor(fy).astype(np.intp)
        ax, ay = fx - ix, fy - iy
        top = grid[iy, ix] * (1 - ax) + grid[iy, ix + 1] * ax
        bottom = grid[iy + 1, ix] * (1 - ax) + grid[iy + 1, ix + 1] * ax
        return np.asarray(top * (1 - ay) + bottom * ay, dtype=np.float64)

    def remap(self, grid: NDArray[np.float32], xs: NDArray[np.float32], ys: NDArray[np.float32]) -> NDArray[Any]:
        mx = (xs - np.float32(self.x0)) / np.float32(SHADOW_TEXEL_MM)
        my = (ys - np.float32(self.y0)) / np.float32(SHADOW_TEXEL_MM)
        return cv2.remap(grid, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _splat(grid: NDArray[np.float32], x0: float, y0: float, poly_mm: FloatArray, sigma_mm: float) -> None:
    """Max-combine a filled convex polygon, blurred by ``sigma_mm``, into ``grid``."""
    pts = (poly_mm - np.array([x0, y0])) / SHADOW_TEXEL_MM
    pad = math.ceil(3.0 * sigma_mm / SHADOW_TEXEL_MM) + 2
    c0 = max(0, math.floor(pts[:, 0].min()) - pad)
    c1 = min(grid.shape[1], math.ceil(pts[:, 0].max()) + pad + 1)
    r0 = max(0, math.floor(pts[:, 1].min()) - pad)
    r1 = min(grid.shape[0], math.ceil(pts[:, 1].max()) + pad + 1)
    if c0 >= c1 or r0 >= r1:
        return
    local = np.zeros((r1 - r0, c1 - c0), dtype=np.float32)
    hull = cv2.convexHull((pts - np.array([c0, r0])).astype(np.float32))
    shift = 4
    cv2.fillConvexPoly(local, np.round(hull * (1 << shift)).astype(np.int32), 1.0, cv2.LINE_AA, shift)
    if sigma_mm > 0:
        local = cv2.GaussianBlur(local, (0, 0), sigma_mm / SHADOW_TEXEL_MM)
    np.maximum(grid[r0:r1, c0:c1], local, out=grid[r0:r1, c0:c1])


def _shadow_maps(scene: Scene, shapes: list[sh.Shape]) -> _ShadowMaps:
    x0, y0 = -SHADOW_MARGIN_MM, -SHADOW_MARGIN_MM
    shape = (
        math.ceil((scene.table.depth_mm + 2 * SHADOW_MARGIN_MM) / SHADOW_TEXEL_MM) + 1,
        math.ceil((scene.table.width_mm + 2 * SHADOW_MARGIN_MM) / SHADOW_TEXEL_MM) + 1,
    )
    low = np.zeros(shape, dtype=np.float32)
    high = np.zeros(shape, dtype=np.float32)
    occlusion = np.zeros(shape, dtype=np.float32)
    light = np.asarray(scene.lighting.direction())
    for shp in shapes:
        pts = shp.hull()
        # Slide every point down the light onto the table.
        flat = pts[:, :2] - pts[:, 2:3] * (light[:2] / light[2])
        sigma = scene.lighting.penumbra_mm + scene.lighting.penumbra_per_mm * float(pts[:, 2].mean())
        _splat(low, x0, y0, flat, sigma)
        if shp.casts_high:
            _splat(high, x0, y0, flat, sigma)
        on_table = pts[pts[:, 2] <= 1e-9]
        if len(on_table) >= 3:
            _splat(occlusion, x0, y0, on_table[:, :2], AMBIENT_OCCLUSION_MM)
    return _ShadowMaps(x0, y0, low, high, occlusion)


def _sky(normals_z: FloatArray) -> FloatArray:
    return 1.0 - SKY_FALLOFF * (1.0 - normals_z)


def _light_table(scene: Scene, albedo: NDArray[np.float32], shadows: _ShadowMaps) -> NDArray[np.float32]:
    xs, ys = _pixel_hits(scene.camera)
    lt = scene.lighting
    light_z = np.float32(lt.direction()[2])
    shadow = shadows.remap(shadows.low, xs, ys)
    occl = shadows.remap(shadows.occlusion, xs, ys)
    shade = np.float32(lt.ambient) * (1.0 - np.float32(AMBIENT_OCCLUSION) * occl) + np.float32(lt.diffuse) * light_z * (
        1.0 - np.float32(lt.shadow_strength) * shadow
    )
    return np.asarray(albedo * shade[..., None], dtype=np.float32)


def _light_points(
    scene: Scene, shp: sh.Shape, points: FloatArray, normals: FloatArray, albedo: FloatArray, shadows: _ShadowMaps
) -> FloatArray:
    lt = scene.lighting
    light = np.asarray(lt.direction())
    direct = np.clip(normals @ light, 0.0, None)
    if shp.receives_shadow:
        fx = points[:, 0] - points[:, 2] * light[0] / light[2]
        fy = points[:, 1] - points[:, 2] * light[1] / light[2]
        direct = direct * (1.0 - lt.shadow_strength * shadows.sample(shadows.high, fx, fy))
    shade = lt.ambient * _sky(normals[:, 2]) + lt.diffuse * direct
    return np.asarray(albedo * shade[:, None], dtype=np.float64)


def _gain(scene: Scene) -> NDArray[np.float32]:
    """Uneven light across the table times lens vignetting, per pixel (H, W)."""
    cam = scene.camera
    xs, ys = _pixel_hits(cam)
    lt = scene.lighting
    gx = (xs - scene.table.width_mm / 2.0) / (scene.table.width_mm / 2.0)
    gy = (ys - scene.table.depth_mm / 2.0) / (scene.table.depth_mm / 2.0)
    gain = np.clip(1.0 + lt.gradient_x * gx + lt.gradient_y * gy, *_GAIN_RANGE)
    u = (np.arange(cam.image_width, dtype=np.float32) - cam.cx)[None, :]
    v = (np.arange(cam.image_height, dtype=np.float32) - cam.cy)[:, None]
    far = max(
        math.hypot(cx, cy) for cx in (cam.cx, cam.image_width - cam.cx) for cy in (cam.cy, cam.image_height - cam.cy)
    )
    vignette = 1.0 - lt.vignetting * (u * u + v * v) / np.float32(far * far)
    return np.asarray(gain * vignette, dtype=np.float32)


# --------------------------------------------------------------------------------------------------------------
# Ray casting the solid shapes


def _clusters(active: list[int], boxes: list[Box | None]) -> Iterator[tuple[int, int, list[int]]]:
    """Group shapes whose column ranges overlap: (first column, end column, shape indices)."""
    spans = sorted(active, key=lambda k: boxes[k][0])  # type: ignore[index]
    group: list[int] = []
    c0 = c1 = 0
    for k in spans:
        box = boxes[k]
        assert box is not None
        if group and box[0] < c1:
            group.append(k)
            c1 = max(c1, box[1])
            continue
        if group:
            yield c0, c1, group
        group, c0, c1 = [k], box[0], box[1]
    if group:
        yield c0, c1, group


def _cast(scene: Scene, image: NDArray[np.float32], shapes: list[sh.Shape], shadows: _ShadowMaps) -> None:
    cam = scene.camera
    s = scene.imaging.supersample
    origin = np.asarray(cam.position_mm, dtype=np.float64)
    boxes = [screen_box(cam, shp.hull()) for shp in shapes]
    for r0 in range(0, cam.image_height, STRIP_ROWS):
        r1 = min(cam.image_height, r0 + STRIP_ROWS)
        active = [k for k, b in enumerate(boxes) if b is not None and b[2] < r1 and b[3] > r0]
        for c0, c1, members in _clusters(active, boxes):
            d = _sample_rays(cam, (c0, c1, r0, r1), s)
            best = np.full(d.shape[:3], np.inf)
            owner = np.full(d.shape[:3], -1, dtype=np.int32)
            codes = np.zeros(d.shape[:3], dtype=np.int8)
            for k in members:
                u0, u1, v0, v1 = boxes[k]  # type: ignore[misc]
                rows = slice(max(v0, r0) - r0, min(v1, r1) - r0)
                cols = slice(max(u0, c0) - c0, min(u1, c1) - c0)
                t, c = shapes[k].intersect(origin, d[rows, cols])
                nearer = t < best[rows, cols]
                best[rows, cols][nearer] = t[nearer]
                owner[rows, cols][nearer] = k
                codes[rows, cols][nearer] = c[nearer]
            hit = owner >= 0
            if not hit.any():
                continue
            colour = np.repeat(image[r0:r1, c0:c1, None, :].astype(np.float64), d.shape[2], axis=2)
            for k in np.unique(owner[hit]):
                sel = owner == k
                points = origin + best[sel][:, None] * d[sel]
                normals, albedo = shapes[k].shade(points, codes[sel])
                colour[sel] = _light_points(scene, shapes[k], points, normals, albedo, shadows)
            image[r0:r1, c0:c1] = colour.mean(axis=2)


# --------------------------------------------------------------------------------------------------------------
# Ground truth


def visibility(scene: Scene, shapes: list[sh.Shape] | None = None) -> dict[str, float]:
    """Per model id: the fraction of its top rim the camera sees (inside the frame, hidden by no shape; the
    model's own figure counts as a hider, its own base does not)."""
    if not scene.models:
        return {}
    shapes = scene_shapes(scene) if shapes is None else shapes
    cam = scene.camera
    origin = np.asarray(cam.position_mm, dtype=np.float64)
    t = np.linspace(0.0, 2 * math.pi, RIM_SAMPLES, endpoint=False)
    rims = []
    for m in scene.models:
        a, b = m.model.base.semi_axes_mm
        rot = math.radians(m.model.base.rotation_deg)
        u, v = a * np.cos(t), b * np.sin(t)
        x = m.model.x_mm + math.cos(rot) * u - math.sin(rot) * v
        y = m.model.y_mm + math.sin(rot) * u + math.cos(rot) * v
        rims.append(np.stack([x, y, np.full_like(x, m.rim_height_mm)], axis=-1))
    points = np.stack(rims)  # (models, RIM_SAMPLES, 3)
    to_point = points - origin
    dist = np.linalg.norm(to_point, axis=-1)
    d = to_point / dist[..., None]
    hidden = np.zeros(dist.shape, dtype=bool)
    index = {m.model.id: i for i, m in enumerate(scene.models)}
    for shp in shapes:
        th, _ = shp.intersect(origin, d)
        blocks = th < dist - VISIBILITY_EPS_MM
        if shp.role == "base" and shp.owner is not None:
            blocks[index[shp.owner]] = False
        hidden |= blocks
    px = cam.project(points.reshape(-1, 3)).reshape(*dist.shape, 2)
    in_frame = (
        (px[..., 0] >= -0.5)
        & (px[..., 0] <= cam.image_width - 0.5)
        & (px[..., 1] >= -0.5)
        & (px[..., 1] <= cam.image_height - 0.5)
    )
    seen = (~hidden & in_frame).mean(axis=1)
    return {m.model.id: float(seen[i]) for i, m in enumerate(scene.models)}


def _params(scene: Scene, seed: int) -> dict[str, Any]:
    cam = scene.camera
    centres = np.array([[m.model.x_mm, m.model.y_mm, m.rim_height_mm] for m in scene.models]).reshape(-1, 3)
    centres_px = cam.project(centres) if len(centres) else np.zeros((0, 2))
    return {
        "seed": seed,
        "frame": "table mm, z up; OpenCV world frame is (x, y, -z); rvec/tvec map it to the camera",
        "camera_pose": cam.pose_json(),
        "table": scene.table.to_dict(),
        "models": [
            {
                "id": m.model.id,
                "rim_height_mm": m.rim_height_mm,
                "rim_colour": m.rim_colour,
                "top_colour": m.top_colour,
                "facing_deg": m.facing_deg,
                "figure_height_mm": 0.0 if m.figure is None else m.figure.height_mm,
                "rim_center_px": centres_px[i].tolist(),
            }
            for i, m in enumerate(scene.models)
        ],
        "dice": [dataclasses.asdict(d) for d in scene.dice],
        "tokens": [dataclasses.asdict(t) for t in scene.tokens],
        "printed": [dataclasses.asdict(p) for p in scene.printed],
        "hands": [dataclasses.asdict(h) for h in scene.hands],
        "mat": dataclasses.asdict(scene.mat),
        "lighting": dataclasses.asdict(scene.lighting),
        "imaging": dataclasses.asdict(scene.imaging),
    }


# --------------------------------------------------------------------------------------------------------------
# The camera's own doing, and the entry point


def _develop(radiance: NDArray[np.float32], scene: Scene, rng: np.random.Generator) -> Image:
    """Blur, sensor noise, 8-bit quantisation and JPEG: what the camera adds to the light it gets."""
    im = scene.imaging
    out: Image = develop(radiance, im.blur_px, im.read_noise, im.shot_noise, rng)
    if im.jpeg_quality > 0:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, im.jpeg_quality])
        assert ok, "cv2.imencode failed on a plain uint8 BGR image"
        out = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), dtype=np.uint8)
    return out


# The empty table's frame is rendered with other sensor noise than the game's: a capture of its own.
EMPTY_SEED_OFFSET = 1_000_003


def render(scene: Scene, seed: int) -> tuple[Image, Truth]:
    """Render one frame of ``scene``.

    Returns the image, BGR uint8 (image_height, image_width, 3), and its :class:`Truth`. The scene fixes every
    shape, colour and the mat; ``seed`` drives what changes from shot to shot (sensor noise), so one scene with
    two seeds gives two frames of the same table, and the same seed gives the identical image.
    """
    rng = np.random.default_rng(seed)
    shapes = scene_shapes(scene)
    shadows = _shadow_maps(scene, shapes)
    albedo = _table_albedo(scene, scene.imaging.supersample)
    radiance = _light_table(scene, albedo, shadows)
    _cast(scene, radiance, shapes, shadows)
    radiance *= _gain(scene)[..., None]
    image = _develop(radiance, scene, rng)
    truth = Truth(
        state=scene.state(),
        camera=MappingProxyType(scene.camera.to_json()),
        visibility=MappingProxyType(visibility(scene, shapes)),
        params=MappingProxyType(_params(scene, seed)),
    )
    return image, truth
