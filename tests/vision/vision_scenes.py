"""Synthetic top-down table images with exact ground truth, for the vision tests and the vision benchmark.

A scene is what the calibration stage hands to vision: a rectified view in which table millimetres map linearly
to pixels, so every base is a circle of known radius. Pixel centres sit at integer coordinates (OpenCV's
convention), so a base drawn at ``center_px = (10.0, 20.0)`` is centred on pixel column 10, row 20.

Edges are anti-aliased analytically: a pixel's coverage of a disc is ``clip(0.5 - signed_distance_px, 0, 1)``,
which is symmetric about the true rim, so the drawn centre has no bias. Every random choice comes from the
generator passed in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.profile import normal_cdf

STANDARD_SIZES_MM = (25.0, 27.0, 28.5, 32.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0)

# Fixed-point bits for cv2 drawing calls: 1/256 px steps keep polygon corners where they are meant to be.
_SHIFT = 8
_ONE = 1 << _SHIFT

Colour = tuple[float, float, float]


@dataclass(frozen=True)
class Placed:
    """A base to draw: centre in pixels, nominal (footprint) diameter in mm."""

    center_px: tuple[float, float]
    diameter_mm: float


@dataclass(frozen=True)
class Look:
    """How a scene looks: mat texture strength (0: flat), image noise (grey levels, 1 sigma), optics blur (px),
    figures on the bases (with weapons and cloaks over the rim), and soft shadows around the bases."""

    texture: float = 0.0
    noise_sigma: float = 0.0
    blur_sigma_px: float = 0.6
    figures: bool = False
    shadows: bool = False


CLEAN = Look()
TEXTURED = Look(texture=1.0, noise_sigma=3.0, blur_sigma_px=0.8, figures=True, shadows=True)
ROUGH = Look(texture=1.0, noise_sigma=6.0, blur_sigma_px=1.2, figures=True, shadows=True)


@dataclass
class Distractors:
    """Things on the table that are not bases. Each entry is (centre_px, size_mm)."""

    dice: list[tuple[tuple[float, float], float]] = field(default_factory=list)
    printed_rings: list[tuple[tuple[float, float], float]] = field(default_factory=list)
    markers: list[tuple[tuple[float, float], float]] = field(default_factory=list)
    tokens: list[tuple[tuple[float, float], float]] = field(default_factory=list)


# --------------------------------------------------------------------------------------------------------------
# Layout


def random_layout(
    rng: np.random.Generator,
    shape_px: tuple[int, int],
    px_per_mm: float,
    count: int,
    sizes_mm: Sequence[float] = STANDARD_SIZES_MM,
    min_gap_mm: float = 2.0,
    margin_mm: float = 8.0,
    keep_out: Sequence[tuple[tuple[float, float], float]] = (),
    placed: Sequence[Placed] = (),
) -> list[Placed]:
    """``placed`` plus up to ``count`` bases of random standard sizes at random sub-pixel centres, clear of each
    other, of ``placed`` and of the ``keep_out`` discs (centre_px, radius_px) by ``min_gap_mm``."""
    h, w = shape_px
    placed = list(placed)
    count += len(placed)
    for _ in range(count * 60):
        if len(placed) == count:
            break
        d_mm = float(rng.choice(np.asarray(sizes_mm)))
        r_px = d_mm / 2.0 * px_per_mm
        pad = r_px + margin_mm * px_per_mm
        if 2 * pad >= min(w, h):
            continue
        cx = float(rng.uniform(pad, w - pad))
        cy = float(rng.uniform(pad, h - pad))
        ok = all(
            math.hypot(cx - p.center_px[0], cy - p.center_px[1])
            >= r_px + p.diameter_mm / 2.0 * px_per_mm + min_gap_mm * px_per_mm
            for p in placed
        ) and all(math.hypot(cx - k[0][0], cy - k[0][1]) >= r_px + k[1] + min_gap_mm * px_per_mm for k in keep_out)
        if ok:
            placed.append(Placed((cx, cy), d_mm))
    return placed


def touching_pair(
    center_px: tuple[float, float], px_per_mm: float, d1_mm: float, d2_mm: float, gap_mm: float, angle_rad: float
) -> list[Placed]:
    """Two bases whose rims are ``gap_mm`` apart (0: touching), the pair centred near ``center_px``."""
    r1 = d1_mm / 2.0 * px_per_mm
    r2 = d2_mm / 2.0 * px_per_mm
    dist = r1 + r2 + gap_mm * px_per_mm
    ux, uy = math.cos(angle_rad), math.sin(angle_rad)
    x0 = center_px[0] - ux * dist / 2.0
    y0 = center_px[1] - uy * dist / 2.0
    return [Placed((x0, y0), d1_mm), Placed((x0 + ux * dist, y0 + uy * dist), d2_mm)]


# --------------------------------------------------------------------------------------------------------------
# Drawing


def _blend(img: NDArray[np.float32], alpha: NDArray[np.float32], colour: Colour, y0: int, x0: int) -> None:
    h, w = alpha.shape
    region = img[y0 : y0 + h, x0 : x0 + w]
    a = alpha[..., None]
    region *= 1.0 - a
    region += a * np.asarray(colour, dtype=np.float32)


def _box(
    img: NDArray[np.float32], cx: float, cy: float, reach_px: float
) -> tuple[int, int, NDArray[np.float64], NDArray[np.float64]] | None:
    """Pixel grid of the square of half-size ``reach_px`` around a point, clipped to the image."""
    h, w = img.shape[:2]
    x0 = max(0, math.floor(cx - reach_px))
    x1 = min(w, math.ceil(cx + reach_px) + 1)
    y0 = max(0, math.floor(cy - reach_px))
    y1 = min(h, math.ceil(cy + reach_px) + 1)
    if x1 <= x0 or y1 <= y0:
        return None
    ys, xs = np.mgrid[y0:y1, x0:x1]
    return x0, y0, xs.astype(np.float64), ys.astype(np.float64)


def _disc(img: NDArray[np.float32], cx: float, cy: float, r_px: float, colour: Colour) -> None:
    box = _box(img, cx, cy, r_px + 2)
    if box is None:
        return
    x0, y0, xs, ys = box
    d = np.hypot(xs - cx, ys - cy) - r_px
    _blend(img, np.clip(0.5 - d, 0.0, 1.0).astype(np.float32), colour, y0, x0)


def _ring(img: NDArray[np.float32], cx: float, cy: float, r_px: float, width_px: float, colour: Colour) -> None:
    box = _box(img, cx, cy, r_px + width_px + 2)
    if box is None:
        return
    x0, y0, xs, ys = box
    d = np.abs(np.hypot(xs - cx, ys - cy) - r_px) - width_px / 2.0
    _blend(img, np.clip(0.5 - d, 0.0, 1.0).astype(np.float32), colour, y0, x0)


def _poly_alpha(shape: tuple[int, int], pts_px: NDArray[np.float64]) -> NDArray[np.float32]:
    mask = np.zeros(shape, np.uint8)
    pts = np.round(pts_px * _ONE).astype(np.int32).reshape(-1, 1, 2)
    cv2.fillPoly(mask, [pts], 255, lineType=cv2.LINE_AA, shift=_SHIFT)
    return mask.astype(np.float32) / 255.0


def _shadow(
    img: NDArray[np.float32], cx: float, cy: float, r_px: float, px_per_mm: float, rng: np.random.Generator
) -> None:
    """A dark halo offset away from the light, with a soft penumbra: what a raised base casts on the mat."""
    angle = rng.uniform(0, 2 * math.pi)
    off = rng.uniform(0.5, 1.5) * px_per_mm
    darkness = rng.uniform(0.2, 0.4)
    soft = rng.uniform(0.4, 1.0) * px_per_mm
    sx, sy = cx + off * math.cos(angle), cy + off * math.sin(angle)
    box = _box(img, sx, sy, r_px + 8 * soft + 2)
    if box is None:
        return
    x0, y0, xs, ys = box
    d = np.hypot(xs - sx, ys - sy) - r_px
    alpha = (darkness / (1.0 + np.exp(np.clip(d / soft, -50, 50)))).astype(np.float32)
    _blend(img, alpha, (0.0, 0.0, 0.0), y0, x0)


def _figure(
    img: NDArray[np.float32],
    cx: float,
    cy: float,
    r_px: float,
    px_per_mm: float,
    rng: np.random.Generator,
    colour: Colour | None = None,
) -> None:
    """A miniature seen from above: a body blob inside the base, a weapon and sometimes a cloak over the rim; of
    ``colour``, or a random one."""
    colour = colour or tuple(float(c) for c in rng.uniform(20, 235, size=3))
    shape = img.shape[:2]
    # body: a wobbly blob within ~60 % of the radius
    n = 14
    ang = np.sort(rng.uniform(0, 2 * math.pi, n))
    rad = r_px * rng.uniform(0.3, 0.6, n)
    body = np.stack([cx + rad * np.cos(ang), cy + rad * np.sin(ang)], axis=1)
    alpha = _poly_alpha(shape, body)
    # weapon: a thin bar from the body out past the rim
    a = rng.uniform(0, 2 * math.pi)
    reach = r_px + rng.uniform(2.0, 8.0) * px_per_mm
    half_w = rng.uniform(0.6, 1.2) * px_per_mm
    ux, uy = math.cos(a), math.sin(a)
    px, py = -uy * half_w, ux * half_w
    bar = np.array(
        [
            [cx + px, cy + py],
            [cx + ux * reach + px, cy + uy * reach + py],
            [cx + ux * reach - px, cy + uy * reach - py],
            [cx - px, cy - py],
        ]
    )
    alpha = np.maximum(alpha, _poly_alpha(shape, bar))
    if rng.random() < 0.5:
        # cloak: a lobe hanging over about a sixth of the rim
        a2 = rng.uniform(0, 2 * math.pi)
        t = np.linspace(-0.5, 0.5, 12)
        outer = r_px + rng.uniform(1.0, 4.0) * px_per_mm
        arc = np.stack([cx + outer * np.cos(a2 + t), cy + outer * np.sin(a2 + t)], axis=1)
        inner = np.stack([cx + 0.4 * r_px * np.cos(a2 + t[::-1]), cy + 0.4 * r_px * np.sin(a2 + t[::-1])], axis=1)
        alpha = np.maximum(alpha, _poly_alpha(shape, np.concatenate([arc, inner])))
    _blend(img, alpha, colour, 0, 0)


def _die(
    img: NDArray[np.float32], cx: float, cy: float, size_px: float, angle: float, rng: np.random.Generator
) -> None:
    h = size_px / 2.0
    rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    corners = np.array([[-h, -h], [h, -h], [h, h], [-h, h]]) @ rot.T + [cx, cy]
    body = tuple(float(c) for c in rng.uniform(150, 240, size=3))
    _blend(img, _poly_alpha(img.shape[:2], corners), body, 0, 0)
    pip_r = size_px * 0.09
    for px, py in [(-0.28, -0.28), (0.28, 0.28), (0.0, 0.0), (0.28, -0.28), (-0.28, 0.28)][: int(rng.integers(1, 6))]:
        ox, oy = rot @ np.array([px * size_px, py * size_px])
        _disc(img, cx + ox, cy + oy, pip_r, (25.0, 25.0, 25.0))


def _marker(img: NDArray[np.float32], cx: float, cy: float, size_px: float, marker_id: int) -> None:
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    side = round(size_px)
    # 4x4 bits plus a one-cell black border, drawn with a one-cell white margin around it.
    cells = 6
    cell = side / cells
    pattern = cv2.aruco.generateImageMarker(dictionary, marker_id, cells * 10)
    margin = round(cell)
    full = cv2.copyMakeBorder(
        cv2.resize(pattern, (side, side), interpolation=cv2.INTER_AREA),
        margin,
        margin,
        margin,
        margin,
        cv2.BORDER_CONSTANT,
        value=255,
    )
    fh, fw = full.shape
    x0, y0 = round(cx - fw / 2), round(cy - fh / 2)
    h, w = img.shape[:2]
    if x0 < 0 or y0 < 0 or x0 + fw > w or y0 + fh > h:
        return
    img[y0 : y0 + fh, x0 : x0 + fw] = full[..., None].astype(np.float32)


def _mat(shape: tuple[int, int], texture: float, rng: np.random.Generator) -> NDArray[np.float32]:
    h, w = shape
    base = rng.uniform(90, 170, size=3).astype(np.float32)
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    if texture > 0:
        # large soft blotches (uneven paint and light)
        lo = rng.normal(0, 1, (max(2, h // 40), max(2, w // 40), 3)).astype(np.float32)
        lo = cv2.GaussianBlur(cv2.resize(lo, (w, h), interpolation=cv2.INTER_CUBIC), (0, 0), 6)
        img += texture * (12.0 * lo[..., :1] + 4.0 * lo)
        # fine grain (flock, print dots)
        grain = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 1.0)
        img += texture * 18.0 * grain[..., None]
        # a few hard-edged printed strokes (rocks, cracks)
        strokes = np.zeros((h, w), np.uint8)
        for _ in range(max(1, (h * w) // 60000)):
            p0 = rng.uniform([0, 0], [w, h])
            p1 = p0 + rng.normal(0, 25, 2)
            cv2.line(
                strokes,
                tuple(int(v) for v in np.round(p0 * _ONE)),
                tuple(int(v) for v in np.round(p1 * _ONE)),
                255,
                thickness=int(rng.integers(1, 4)),
                lineType=cv2.LINE_AA,
                shift=_SHIFT,
            )
        img -= texture * 30.0 * (strokes.astype(np.float32) / 255.0)[..., None]
    return img


@dataclass(frozen=True)
class Scene:
    """A drawn scene and its truth."""

    image_bgr: NDArray[np.uint8]
    px_per_mm: float
    bases: tuple[Placed, ...]
    marker_mask: NDArray[np.uint8]

    @property
    def centers_px(self) -> NDArray[np.float64]:
        return np.array([b.center_px for b in self.bases], dtype=np.float64).reshape(-1, 2)

    @property
    def diameters_mm(self) -> NDArray[np.float64]:
        return np.array([b.diameter_mm for b in self.bases], dtype=np.float64)


def draw_scene(
    shape_px: tuple[int, int],
    px_per_mm: float,
    bases: Sequence[Placed],
    rng: np.random.Generator,
    look: Look = CLEAN,
    distractors: Distractors | None = None,
    wall_mm: tuple[float, float] = (1.3, 2.0),
) -> Scene:
    """Draw bases (dark side-wall ring of ``wall_mm`` width around a top disc) on a mat, with distractors.

    The footprint (outer rim of the side wall) is the circle of the nominal diameter: the truth."""
    distractors = distractors or Distractors()
    img = _mat(shape_px, look.texture, rng)
    for centre, size_mm in distractors.printed_rings:
        colour = (30.0, 30.0, 30.0) if rng.random() < 0.5 else (235.0, 235.0, 235.0)
        _ring(img, centre[0], centre[1], size_mm / 2.0 * px_per_mm, 0.8 * px_per_mm, colour)
    raised = [(b.center_px, b.diameter_mm) for b in bases] + list(distractors.tokens)
    if look.shadows:
        for centre, size_mm in raised:
            _shadow(img, centre[0], centre[1], size_mm / 2.0 * px_per_mm, px_per_mm, rng)
    for centre, size_mm in raised:
        r = size_mm / 2.0 * px_per_mm
        wall = float(rng.uniform(*wall_mm)) * px_per_mm
        wall_colour = tuple(float(c) for c in rng.uniform(10, 50, size=3))
        top_colour = tuple(float(c) for c in rng.uniform(60, 220, size=3))
        _disc(img, centre[0], centre[1], r, wall_colour)
        _disc(img, centre[0], centre[1], r - wall, top_colour)
    if look.figures:
        for b in bases:
            _figure(img, b.center_px[0], b.center_px[1], b.diameter_mm / 2.0 * px_per_mm, px_per_mm, rng)
    for centre, size_mm in distractors.dice:
        _die(img, centre[0], centre[1], size_mm * px_per_mm, float(rng.uniform(0, math.pi / 2)), rng)
    marker_mask = np.zeros(shape_px, np.uint8)
    for n, (centre, size_mm) in enumerate(distractors.markers):
        _marker(img, centre[0], centre[1], size_mm * px_per_mm, n)
        half = size_mm * px_per_mm * 4.0 / 6.0 + 2
        p0 = (max(0, int(centre[0] - half)), max(0, int(centre[1] - half)))
        p1 = (int(centre[0] + half), int(centre[1] + half))
        cv2.rectangle(marker_mask, p0, p1, 255, thickness=-1)
    if look.blur_sigma_px > 0:
        img = cv2.GaussianBlur(img, (0, 0), look.blur_sigma_px)
    if look.noise_sigma > 0:
        img += rng.normal(0, look.noise_sigma, img.shape).astype(np.float32)
    out = np.clip(np.round(img), 0, 255).astype(np.uint8)
    return Scene(out, px_per_mm, tuple(bases), marker_mask)


def draw_colour_scene(
    shape_px: tuple[int, int],
    px_per_mm: float,
    bases: Sequence[Placed],
    rng: np.random.Generator,
    mat_bgr: Colour,
    base_bgr: Colour,
    figure_bgr: Colour,
    tokens: Sequence[tuple[tuple[float, float], float]] = (),
    rings: Sequence[tuple[tuple[float, float], float, float, Colour]] = (),
) -> Scene:
    """Plain bases (wall and top alike) with figures of ``figure_bgr``, and flat tokens without, all of
    ``base_bgr``, on a mat of ``mat_bgr`` with fine grain, under light that varies smoothly by about 10 % over the
    table. When the two colours have one grey level, only colour tells a base from the mat. ``rings`` are drawn
    on the mat first: (centre px, inner diameter mm, width mm, colour) each (a contact shadow, a printed ring)."""
    img = np.empty((*shape_px, 3), np.float32)
    img[:] = mat_bgr
    grain = cv2.GaussianBlur(rng.normal(0, 1, shape_px).astype(np.float32), (0, 0), 1.0)
    img += 4.0 * grain[..., None]
    for centre, inner_mm, width_mm, colour in rings:
        r_px = (inner_mm / 2.0 + width_mm / 2.0) * px_per_mm
        _ring(img, centre[0], centre[1], r_px, width_mm * px_per_mm, colour)
    for b in bases:
        _disc(img, b.center_px[0], b.center_px[1], b.diameter_mm / 2.0 * px_per_mm, base_bgr)
    for centre, size_mm in tokens:
        _disc(img, centre[0], centre[1], size_mm / 2.0 * px_per_mm, base_bgr)
    for b in bases:
        _figure(img, b.center_px[0], b.center_px[1], b.diameter_mm / 2.0 * px_per_mm, px_per_mm, rng, figure_bgr)
    h, w = shape_px
    light = rng.normal(0, 1, (max(2, h // 60), max(2, w // 60))).astype(np.float32)
    light = cv2.GaussianBlur(cv2.resize(light, (w, h), interpolation=cv2.INTER_CUBIC), (0, 0), 8)
    img *= (1.0 + 0.08 * light)[..., None]
    img = cv2.GaussianBlur(img, (0, 0), 0.8)
    img += rng.normal(0, 2.0, img.shape).astype(np.float32)
    out = np.clip(np.round(img), 0, 255).astype(np.uint8)
    return Scene(out, px_per_mm, tuple(bases), np.zeros(shape_px, np.uint8))


def coarse_chroma(bgr: NDArray[np.uint8], rng: np.random.Generator, noise: float) -> NDArray[np.uint8]:
    """``bgr`` (H, W, 3) uint8 with its colour (YCrCb's Cr and Cb) kept at half the resolution and ``noise``
    (standard deviation, levels) added there, as a JPEG file and many cameras keep it; the grey levels as they were."""
    ycc = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb).astype(np.float32)
    h, w = bgr.shape[:2]
    for channel in (1, 2):
        half = cv2.resize(ycc[..., channel], (w // 2, h // 2), interpolation=cv2.INTER_AREA)
        half += rng.normal(0, noise, half.shape).astype(np.float32)
        ycc[..., channel] = cv2.resize(half, (w, h), interpolation=cv2.INTER_NEAREST)
    return np.asarray(cv2.cvtColor(np.clip(np.round(ycc), 0, 255).astype(np.uint8), cv2.COLOR_YCrCb2BGR))


# Raised bases are drawn at this many times the resolution and averaged down.
_SUPERSAMPLE = 4


@dataclass(frozen=True)
class RaisedView:
    """How a camera at a finite height sees a raised base: image scale and size (px, as (H, W)), the nadir in
    the image, how far the top disc shows pushed away from it per px of distance (rim height over camera height
    minus rim height), and the reach (mm) of the contact shadow."""

    px_per_mm: float
    size_px: tuple[int, int]
    nadir_px: tuple[float, float]
    shift_ratio: float
    shadow_mm: float


def _fine_grid(view: RaisedView) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """x and y (pixel units) of the points a view is drawn at, _SUPERSAMPLE to a pixel each way."""
    h, w = view.size_px
    ys, xs = np.mgrid[0 : h * _SUPERSAMPLE, 0 : w * _SUPERSAMPLE].astype(np.float64)
    return (xs + 0.5) / _SUPERSAMPLE - 0.5, (ys + 0.5) / _SUPERSAMPLE - 0.5


def _sensed(image: NDArray[np.float64], view: RaisedView, seed: int) -> NDArray[np.uint8]:
    """A finely drawn view averaged down to its pixels, blurred a little, with sensor noise."""
    h, w = view.size_px
    small = image.reshape(h, _SUPERSAMPLE, w, _SUPERSAMPLE).mean(axis=(1, 3))
    small = cv2.GaussianBlur(small, (0, 0), 0.6)
    rng = np.random.default_rng(seed)
    return np.asarray(np.clip(small + rng.normal(0.0, 1.5, small.shape), 0, 255), dtype=np.uint8)


def draw_raised_base(
    view: RaisedView,
    center_px: tuple[float, float],
    radius_mm: float,
    mat: float,
    wall: float,
    top: float,
    shadow: float,
    seed: int,
    bevel_mm: float = 0.0,
) -> NDArray[np.uint8]:
    """A grey image (H, W) of one base with its footprint at ``center_px``: the mat (grey level) darkened by a
    contact shadow (``shadow``: its depth, 0-1), the wall between footprint and the shifted top disc, the top
    (``bevel_mm`` smaller in radius than the footprint); drawn at a finer resolution, averaged down, blurred a
    little, with sensor noise."""
    xs, ys = _fine_grid(view)
    cx, cy = center_px
    r = radius_mm * view.px_per_mm
    shift = view.shift_ratio * np.array([cx - view.nadir_px[0], cy - view.nadir_px[1]])
    d_foot = np.hypot(xs - cx, ys - cy) - r
    top_r = (r - bevel_mm * view.px_per_mm) * (1.0 + view.shift_ratio)
    d_top = np.hypot(xs - cx - shift[0], ys - cy - shift[1]) - top_r
    image = mat * (1.0 - shadow * normal_cdf(-d_foot / (view.shadow_mm * view.px_per_mm)))
    image = np.where(d_foot <= 0, wall, image)
    image = np.where(d_top <= 0, top, image)
    return _sensed(image, view, seed)


# Softening widths past which a normal CDF is below 1e-15: no change to a float64 grey level.
_SHADOW_REACH = 8.2


def _window(
    view: RaisedView, center_px: tuple[float, float], cast_px: NDArray[np.float64], reach_px: float
) -> tuple[slice, slice]:
    """Rows and columns of the fine grid within ``reach_px`` of a base's footprint, its top (shifted from the
    nadir by at most the view's shift of the far corner) and its footprint swept by ``cast_px``."""
    h, w = view.size_px
    far_px = view.shift_ratio * (abs(center_px[0] - view.nadir_px[0]) + abs(center_px[1] - view.nadir_px[1]))
    reach_px += far_px
    x0 = min(center_px[0], center_px[0] + cast_px[0]) - reach_px
    x1 = max(center_px[0], center_px[0] + cast_px[0]) + reach_px
    y0 = min(center_px[1], center_px[1] + cast_px[1]) - reach_px
    y1 = max(center_px[1], center_px[1] + cast_px[1]) + reach_px

    def span(lo: float, hi: float, size: int) -> slice:
        first = int(np.clip(np.floor((lo + 0.5) * _SUPERSAMPLE), 0, size * _SUPERSAMPLE))
        last = int(np.clip(np.ceil((hi + 0.5) * _SUPERSAMPLE) + 1, 0, size * _SUPERSAMPLE))
        return slice(first, last)

    return span(y0, y1, h), span(x0, x1, w)


def draw_raised_bases(
    view: RaisedView,
    centers_px: list[tuple[float, float]],
    radius_mm: float,
    mat: float,
    wall: float,
    top: float,
    shadow: float,
    cast_px: tuple[float, float],
    cast_depth: float,
    seed: int,
) -> NDArray[np.uint8]:
    """Bases as :func:`draw_raised_base` draws one, each also casting a shadow on the mat: its footprint swept by
    ``cast_px`` (away from one main light), darkening the mat by ``cast_depth`` (0-1), with soft edges."""
    xs, ys = _fine_grid(view)
    r = radius_mm * view.px_per_mm
    blur = view.shadow_mm * view.px_per_mm
    light = np.ones_like(xs)
    inside = np.full(xs.shape, np.nan)
    cast = np.asarray(cast_px, dtype=np.float64)
    cast2 = max(float(cast @ cast), 1e-12)
    for cx, cy in centers_px:
        # beyond _SHADOW_REACH softening widths of the footprint, its sweep and the top, a base changes nothing
        rows, cols = _window(view, (cx, cy), cast, r * (1.0 + view.shift_ratio) + _SHADOW_REACH * blur)
        fx, fy = xs[rows, cols] - cx, ys[rows, cols] - cy
        along = np.clip((fx * cast[0] + fy * cast[1]) / cast2, 0.0, 1.0)
        d_cast = np.hypot(fx - along * cast[0], fy - along * cast[1]) - r
        d_foot = np.hypot(fx, fy) - r
        light[rows, cols] *= 1.0 - shadow * normal_cdf(-d_foot / blur)
        light[rows, cols] *= 1.0 - cast_depth * normal_cdf(-d_cast / (0.4 * blur))
        shift = view.shift_ratio * np.array([cx - view.nadir_px[0], cy - view.nadir_px[1]])
        d_top = np.hypot(fx - shift[0], fy - shift[1]) - r * (1.0 + view.shift_ratio)
        inside[rows, cols] = np.where(d_foot <= 0, wall, inside[rows, cols])
        inside[rows, cols] = np.where(d_top <= 0, top, inside[rows, cols])
    image = np.where(np.isnan(inside), mat * light, inside)
    return _sensed(image, view, seed)
