"""Where the camera of a wide-look frame stands, and the map from its pixels to the table.

A camera is drawn at random (table, pixel scale, height, tilt, heading, roll, lens) until it sees at least four
of the table's markers whole, those markers span enough of the table for the calibration to map it, and the
table fills a fair share of the frame. A big table may be seen only in part."""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.spec import TableSpec
from synth.camera import Camera, table_hits
from synth.errors import SceneError
from synth.wide.tables import TABLES

FloatArray = NDArray[np.float64]

RESOLUTIONS: MappingProxyType[str, tuple[int, int]] = MappingProxyType(
    {"1080p": (1920, 1080), "4k": (3840, 2160), "12mp": (4000, 3000)}
)
PX_PER_MM = (0.8, 2.5)
# Camera to look-at point (mm): a tripod or a boom over the table.
DISTANCE_MM = (800.0, 1800.0)
TILT_DEG = 15.0
ROLL_JITTER_DEG = 6.0
K1_RANGE = (-0.08, 0.0)
PRINCIPAL_JITTER = 0.01  # share of the image size
# White paper round each printed marker (mm): the detector needs it in view as well as the black square.
MARKER_PAPER_MM = 12.0
# Markers count as seen only this far (share of the image width) inside the frame.
FRAME_MARGIN = 0.012
MIN_MARKERS = 4
# The calibration wants the used markers to span 15 % of the table; ask for more, so a marker lost to glare or a
# hand still leaves a usable set.
MIN_SPAN = 0.24
# The table fills at least this share of the frame: a camera set up for a game frames the table, and the rest of
# the room is not what the frame is about.
MIN_COVERAGE = 0.3
# Each failed try lowers the top of the pixel-scale range by this factor: high scales on small frames see too
# little of any table.
_SCALE_BACKOFF = 0.99
_TRIES = 400
# The pixel -> table map is computed exactly on a grid this many pixels apart and interpolated between.
MAP_STEP_PX = 16


@dataclass(frozen=True)
class View:
    """A chosen camera: the table it looks at, its pixel scale on the table at the image centre (px/mm) and the
    ids of the markers it sees whole."""

    camera: Camera
    table_name: str
    table: TableSpec
    px_per_mm: float
    markers_seen: tuple[int, ...]


def make_camera(
    size: tuple[int, int],
    px_per_mm: float,
    distance_mm: float,
    look_at: tuple[float, float],
    tilt_deg: float,
    heading_deg: float,
    roll_deg: float,
    k1: float,
    principal: tuple[float, float] | None = None,
) -> Camera:
    """A camera ``distance_mm`` from the table point ``look_at`` (mm), its axis ``tilt_deg`` from straight down,
    leaning towards ``heading_deg``, with a focal length that gives about ``px_per_mm`` there."""
    w, h = size
    f = px_per_mm * distance_mm
    t, a = math.radians(tilt_deg), math.radians(heading_deg)
    position = (
        look_at[0] + distance_mm * math.sin(t) * math.cos(a),
        look_at[1] + distance_mm * math.sin(t) * math.sin(a),
        distance_mm * math.cos(t),
    )
    cx, cy = principal if principal is not None else ((w - 1) / 2.0, (h - 1) / 2.0)
    return Camera(w, h, f, f, cx, cy, k1, 0.0, 0.0, 0.0, 0.0, position, (look_at[0], look_at[1], 0.0), roll_deg)


def px_per_mm(camera: Camera) -> float:
    """Pixel scale on the table where the optical axis meets it (px/mm)."""
    return 1.0 / camera.mm_per_px()


def markers_in_view(camera: Camera, table: TableSpec, margin_px: float) -> tuple[int, ...]:
    """Ids of the markers whose black square and white paper lie wholly in the frame, ``margin_px`` inside."""
    seen = []
    for m in table.markers:
        half = m.size_mm / 2.0 + MARKER_PAPER_MM
        a = math.radians(m.rotation_deg)
        local = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        xy = local @ rot.T + np.array([m.x_mm, m.y_mm])
        px = camera.project(np.concatenate([xy, np.zeros((4, 1))], axis=1))
        inside = (px[:, 0] >= margin_px) & (px[:, 0] <= camera.image_width - 1 - margin_px)
        inside &= (px[:, 1] >= margin_px) & (px[:, 1] <= camera.image_height - 1 - margin_px)
        if inside.all():
            seen.append(m.id)
    return tuple(seen)


def marker_span(table: TableSpec, ids: tuple[int, ...]) -> float:
    """Area of the convex hull of the markers' centres as a share of the table's area."""
    if len(ids) < 3:
        return 0.0
    pts = np.array([[table.marker(i).x_mm, table.marker(i).y_mm] for i in ids], dtype=np.float32)
    return float(cv2.contourArea(cv2.convexHull(pts))) / (table.width_mm * table.depth_mm)


def table_coverage(camera: Camera, table: TableSpec) -> float:
    """Share of the frame's pixels that see the table (from a 48 x 36 grid of pixels)."""
    u, v = np.meshgrid(np.linspace(0.0, camera.image_width - 1.0, 48), np.linspace(0.0, camera.image_height - 1.0, 36))
    x, y = pixel_to_table(camera, u, v)
    return float(np.mean((x >= 0) & (x <= table.width_mm) & (y >= 0) & (y <= table.depth_mm)))


def _try_view(rng: np.random.Generator, size: tuple[int, int], name: str, top_scale: float) -> View | None:
    table = TABLES[name]
    scale = float(rng.uniform(PX_PER_MM[0], max(PX_PER_MM[0], top_scale)))
    roll = float(rng.choice([0.0, 0.0, 90.0, 180.0, -90.0]) + rng.uniform(-ROLL_JITTER_DEG, ROLL_JITTER_DEG))
    w, h = size
    across, down = w / scale, h / scale
    if abs(math.sin(math.radians(roll))) > 0.7:
        across, down = down, across
    # Look anywhere that keeps the view over the table; a view larger than the table looks near its centre.
    slack_x = max(0.0, table.width_mm - 0.9 * across) / 2.0 + 40.0
    slack_y = max(0.0, table.depth_mm - 0.9 * down) / 2.0 + 40.0
    look = (
        table.width_mm / 2.0 + float(rng.uniform(-slack_x, slack_x)),
        table.depth_mm / 2.0 + float(rng.uniform(-slack_y, slack_y)),
    )
    principal = (
        (w - 1) / 2.0 + float(rng.normal(0.0, PRINCIPAL_JITTER * w / 2.0)),
        (h - 1) / 2.0 + float(rng.normal(0.0, PRINCIPAL_JITTER * h / 2.0)),
    )
    camera = make_camera(
        size,
        scale,
        float(rng.uniform(*DISTANCE_MM)),
        look,
        float(rng.uniform(0.0, TILT_DEG)),
        float(rng.uniform(0.0, 360.0)),
        roll,
        float(rng.uniform(*K1_RANGE)),
        principal,
    )
    ids = markers_in_view(camera, table, FRAME_MARGIN * w)
    if len(ids) < MIN_MARKERS or marker_span(table, ids) < MIN_SPAN:
        return None
    if table_coverage(camera, table) < MIN_COVERAGE:
        return None
    measured = px_per_mm(camera)
    if not PX_PER_MM[0] * 0.95 <= measured <= PX_PER_MM[1] * 1.05:
        return None
    return View(camera, name, table, measured, ids)


def choose_view(rng: np.random.Generator, size: tuple[int, int], table_name: str | None = None) -> View:
    """A random camera of frame ``size`` (w, h px) over one of :data:`TABLES` (or the named one) that sees at
    least four markers spanning a quarter of the table. Raises SceneError when no try succeeds."""
    names = sorted(TABLES) if table_name is None else [table_name]
    top = PX_PER_MM[1]
    for _ in range(_TRIES):
        name = names[int(rng.integers(len(names)))]
        view = _try_view(rng, size, name, top)
        if view is not None:
            return view
        top *= _SCALE_BACKOFF
    raise SceneError(f"no camera of {size[0]} x {size[1]} px sees {MIN_MARKERS} markers of table {names}")


def pixel_to_table(camera: Camera, u: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Table x, y (mm) seen at pixel positions ``u``, ``v`` (any shape, OpenCV pixel centres)."""
    hits = table_hits(np.asarray(camera.position_mm, dtype=np.float64), camera.rays(u, v))
    return hits[..., 0], hits[..., 1]


def table_map(
    camera: Camera, box: tuple[int, int, int, int] | None = None, scale: int = 1
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Table x and y (mm) at the pixel centres of an image ``scale`` times finer than the frame, over ``box``
    (x0, y0, x1, y1 in that image's pixels; default the whole frame): two (h, w) float32 arrays.

    Exact on a grid MAP_STEP_PX apart, bilinear between: the map is smooth, so that is within micrometres, and far
    cheaper than inverting the lens at every pixel of a 12 MP frame."""
    if box is None:
        box = (0, 0, camera.image_width * scale, camera.image_height * scale)
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    step = MAP_STEP_PX
    nu, nv = w // step + 2, h // step + 2
    gi, gj = np.meshgrid(np.arange(nv) * float(step) + y0, np.arange(nu) * float(step) + x0, indexing="ij")
    # Fine pixel centre (j + 0.5) / scale - 0.5 in frame pixels.
    gx, gy = pixel_to_table(camera, (gj + 0.5) / scale - 0.5, (gi + 0.5) / scale - 0.5)
    # remap reads the coarse grid at fractional node positions: pixel (u, v) is node (u / step, v / step).
    su = np.ascontiguousarray(np.broadcast_to((np.arange(w, dtype=np.float32) / step)[None, :], (h, w)))
    sv = np.ascontiguousarray(np.broadcast_to((np.arange(h, dtype=np.float32) / step)[:, None], (h, w)))
    x = cv2.remap(gx.astype(np.float32), su, sv, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    y = cv2.remap(gy.astype(np.float32), su, sv, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.float32)
