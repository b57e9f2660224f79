"""Light and the camera's own doing: cast shadows, tint, brightness, uneven light, vignetting, glare (the sensor's
blur and noise: :mod:`synth.sensor`).

Shadows are planar: every caster's surface points are pushed along each lamp's direction down to the table
(z = 0), their convex hull there is the shadow, drawn into a frame-sized mask and blurred by the lamp's softness.
Low casters (bases, dice) shade only the table; tall ones (figures, terrain, hands) shade base tops as well."""

from __future__ import annotations

import math

import cv2
import numpy as np
from numpy.typing import NDArray

from synth.camera import Camera
from synth.wide.raster import SHIFT
from synth.wide.scene import FloatArray, LightLook

Image = NDArray[np.float32]

# Shadow outlines are cut into pieces of at most this (mm) before projecting, so the lens bends them.
SHADOW_STEP_MM = 10.0
# Shadows lose this share of a lamp's light (the rest is light bounced off the room).
SHADOW_DEPTH = 0.92


def shadow_outline(points: FloatArray, towards_light: FloatArray) -> FloatArray:
    """(K, 2) table polygon (mm) of the shadow that surface ``points`` (N, 3) cast on the table, lit from
    ``towards_light`` (unit, pointing up to the lamp)."""
    t = points[:, 2] / max(float(towards_light[2]), 1e-3)
    ground = points[:, :2] - t[:, None] * towards_light[None, :2]
    return np.asarray(cv2.convexHull(ground.astype(np.float32)).reshape(-1, 2), dtype=np.float64)


def _dense(poly: FloatArray) -> FloatArray:
    out = []
    for a, b in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        pieces = max(1, math.ceil(float(np.linalg.norm(b - a)) / SHADOW_STEP_MM))
        out.append(a + (np.arange(pieces)[:, None] / pieces) * (b - a))
    return np.concatenate(out)


def shadow_mask(camera: Camera, casters: list[FloatArray], towards_light: FloatArray, soft_px: float) -> Image:
    """(H, W) float32 in [0, 1]: how much of the lamp each frame pixel of the table loses to the casters
    (each (N, 3) surface points, mm), edges blurred by ``soft_px``."""
    mask = np.zeros((camera.image_height, camera.image_width), dtype=np.uint8)
    for pts in casters:
        ground = _dense(shadow_outline(pts, towards_light))
        px = camera.project(np.c_[ground, np.zeros(len(ground))])
        # One call per shadow: fillPoly fills several outlines by the even-odd rule, and overlapping shadows
        # must add up to one shadow, not cancel.
        cv2.fillPoly(mask, [np.asarray(np.rint(px * (1 << SHIFT)), dtype=np.int32)], 255, cv2.LINE_AA, SHIFT)
    out = mask.astype(np.float32) / np.float32(255.0)
    if soft_px > 0.3:
        out = np.asarray(cv2.GaussianBlur(out, (0, 0), soft_px), dtype=np.float32)
    return np.asarray(out, dtype=np.float32)


def shading(
    camera: Camera, light: LightLook, low: list[FloatArray], high: list[FloatArray], px_per_mm: float
) -> tuple[Image, Image]:
    """Brightness (H, W) of the table and of base tops under the lamps, 1 where no shadow falls: the table is
    shaded by every caster, base tops by the tall ones only."""
    h, w = camera.image_height, camera.image_width
    table = np.full((h, w), light.ambient, dtype=np.float32)
    tops = np.full((h, w), light.ambient, dtype=np.float32)
    for lamp in light.lamps:
        direct = np.float32(lamp.share * (1.0 - light.ambient))
        soft = lamp.softness_mm * px_per_mm
        towards = lamp.direction()
        tall = shadow_mask(camera, high, towards, soft)
        flat = shadow_mask(camera, low, towards, soft)
        table += direct * (1.0 - SHADOW_DEPTH * np.maximum(tall, flat))
        tops += direct * (1.0 - SHADOW_DEPTH * tall)
    return table, tops


def room_light(image: Image, light: LightLook) -> Image:
    """The room's light over the whole frame (H, W, 3): tint, brightness, a gradient across the frame,
    vignetting and a glare spot."""
    h, w = image.shape[:2]
    u = (np.arange(w, dtype=np.float32) - (w - 1) / 2) / (w / 2)
    v = (np.arange(h, dtype=np.float32) - (h - 1) / 2) / (h / 2)
    r2 = (u[None, :] ** 2 + v[:, None] ** 2) * np.float32(0.5)  # 1 at the corners
    gain = 1.0 + light.gradient[0] * u[None, :] + light.gradient[1] * v[:, None]
    gain = gain * (1.0 - light.vignetting * r2) * light.brightness
    out = image * gain[..., None] * np.asarray(light.gains, dtype=np.float32)
    gx, gy, radius, strength = light.glare
    if strength > 0:
        px, py = (u[None, :] * (w / 2) - (gx - 0.5) * w), (v[:, None] * (h / 2) - (gy - 0.5) * h)
        spot = np.exp(-(px**2 + py**2) / np.float32(2 * (radius * w) ** 2))
        out += (strength * spot)[..., None] * np.asarray((0.95, 0.97, 1.0), dtype=np.float32)
    return np.asarray(out, dtype=np.float32)
