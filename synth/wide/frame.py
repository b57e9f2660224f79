"""Render a wide-look scene into a camera frame and its ground truth, and write both to disk in the layout of
``sample_images/`` (``NAME.jpg``, ``NAME.truth.json``, ``NAME.camera.json``) that ``tableref evaluate`` reads.

The steps: the mat's texture at every frame pixel, scaled up to the supersampled canvas; prints and markers
drawn on it; the table's cast shadows multiplied in; every standing thing drawn in painter's order; the canvas
averaged down (``INTER_AREA``); shadows of tall things laid over base tops; the room's light; blur and noise.
The JPEG step is the file itself."""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections import Counter
from pathlib import Path
from types import MappingProxyType
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from synth.render import EMPTY_SEED_OFFSET, Truth
from synth.sensor import develop
from synth.wide.draw import base_item, block_item, part_item
from synth.wide.light import room_light, shading
from synth.wide.mat import draw_markers, draw_prints, mat_image
from synth.wide.order import Item, painter_order
from synth.wide.raster import Canvas, Shade, circle
from synth.wide.scene import FloatArray, WideBase, WideScene, contacts, part_dict
from synth.wide.view import px_per_mm

Image = NDArray[np.uint8]

# Rim points per base for its visibility, and how far inside the rim (canvas px) each is read from the id
# buffer: on the rim itself half the samples would fall on the neighbouring pixel by rounding.
RIM_SAMPLES = 180
RIM_INSET_PX = 1.0


def _casters(scene: WideScene) -> tuple[list[FloatArray], list[FloatArray]]:
    """Surface points (N, 3) of low casters (bases, dice) and tall ones (figures, terrain, hands)."""
    low: list[FloatArray] = []
    high: list[FloatArray] = []
    for b in scene.bases:
        low.append(np.concatenate([circle(b.x_mm, b.y_mm, b.radius_mm, z, 32) for z in (0.0, b.rim_height_mm)]))
        high.extend(p.surface() for p in b.parts)
    for block in scene.blocks:
        (low if block.kind == "die" else high).append(block.corners())
    for hand in scene.hands:
        high.extend(p.surface() for p in hand)
    return low, high


def _items(canvas: Canvas, shade: Shade, scene: WideScene, ppm: float) -> list[Item]:
    items = [base_item(canvas, shade, b, i + 1, ppm) for i, b in enumerate(scene.bases)]
    items += [part_item(canvas, shade, p) for b in scene.bases for p in b.parts]
    items += [block_item(canvas, shade, block, ppm) for block in scene.blocks]
    items += [part_item(canvas, shade, p) for hand in scene.hands for p in hand]
    return items


def rim_points(base: WideBase, inset_mm: float, n: int = RIM_SAMPLES) -> FloatArray:
    """(n, 3) points just inside the top rim of a base (on the bevel band where it has one), mm."""
    r = base.radius_mm - inset_mm
    z = base.rim_height_mm
    if base.bevel_mm > 0 and inset_mm < base.bevel_mm:
        z = base.wall_mm + inset_mm / base.bevel_mm * base.bevel_rise_mm
    return circle(base.x_mm, base.y_mm, r, z, n)


def visibility(canvas: Canvas, bases: tuple[WideBase, ...], ppm: float) -> dict[str, float]:
    """Per base id: the share of its rim that the camera sees, read from the id buffer the painter filled
    (inside the frame, and the base's own top where the rim is: nothing drawn later covers it)."""
    inset = RIM_INSET_PX / (ppm * canvas.s)
    out = {}
    for i, b in enumerate(bases):
        px = canvas.project(rim_points(b, inset))
        col, row = np.rint(px[:, 0]).astype(int), np.rint(px[:, 1]).astype(int)
        inside = (col >= 0) & (col < canvas.width) & (row >= 0) & (row < canvas.height)
        seen = np.zeros(len(px), dtype=bool)
        seen[inside] = canvas.ids[row[inside], col[inside]] == i + 1
        out[b.id] = float(seen.mean())
    return out


def _look(scene: WideScene, ppm: float) -> dict[str, Any]:
    light = scene.light
    soft = ["soft" if lamp.softness_mm >= 2.0 else "hard" for lamp in light.lamps]
    return {
        "mat": scene.mat.kind,
        "resolution": scene.resolution,
        "px_per_mm": ppm,
        "table": scene.table_name,
        "light": {
            "tint": light.tint,
            "lamps": len(light.lamps),
            "shadows": soft[0] if len(set(soft)) == 1 else "mixed",
            "brightness": light.brightness,
            "glare": light.glare[3] > 0,
        },
    }


def _model_params(scene: WideScene, camera_px: FloatArray) -> list[dict[str, Any]]:
    touching = contacts(scene.bases)
    return [
        {
            "id": b.id,
            "diameter_mm": b.diameter_mm,
            "rim_height_mm": b.rim_height_mm,
            "rim_center_px": camera_px[i].tolist(),
            "look": {
                "top": b.top,
                "rim": b.rim,
                "rim_height_mm": b.rim_height_mm,
                "bevel_mm": b.bevel_mm,
                "figure": b.figure,
                "contact": touching[i],
            },
            "top_colour": list(b.top_colour),
            "rim_colour": list(b.rim_colour),
            "parts": [part_dict(p) for p in b.parts],
        }
        for i, b in enumerate(scene.bases)
    ]


def _params(scene: WideScene, seed: int, ppm: float) -> dict[str, Any]:
    cam = scene.camera
    centres = np.array([[b.x_mm, b.y_mm, b.rim_height_mm] for b in scene.bases]).reshape(-1, 3)
    return {
        "renderer": "wide",
        "seed": seed,
        "frame": "table mm, z up; OpenCV world frame is (x, y, -z); rvec/tvec map it to the camera",
        "camera_pose": cam.pose_json(),
        "table": scene.table.to_dict(),
        "look": _look(scene, ppm),
        "models": _model_params(scene, cam.project(centres) if len(centres) else np.zeros((0, 2))),
        "blocks": [dataclasses.asdict(b) for b in scene.blocks],
        "hands": [[part_dict(p) for p in hand] for hand in scene.hands],
        "prints": dict(Counter(p.kind for p in scene.prints)),
        "mat": dataclasses.asdict(scene.mat),
        "light": dataclasses.asdict(scene.light),
        "imaging": dataclasses.asdict(scene.imaging),
    }


def render_frame(scene: WideScene, seed: int, jpeg: bool = False) -> tuple[Image, Truth]:
    """The frame (H, W, 3) BGR uint8 and its truth. ``seed`` drives the sensor noise only; the same scene and
    seed give the same bytes. With ``jpeg`` the frame goes through the scene's JPEG quality once."""
    cam = scene.camera
    w, h, s = cam.image_width, cam.image_height, scene.imaging.supersample
    ppm = px_per_mm(cam)
    shade = Shade.of(scene.light)
    background = cv2.resize(mat_image(scene.mat, scene.table, cam), (w * s, h * s), interpolation=cv2.INTER_LINEAR)
    canvas = Canvas(cam, s, np.asarray(background, dtype=np.float32))
    draw_prints(canvas, scene.prints, ppm)
    draw_markers(canvas, scene.table)
    low, high = _casters(scene)
    table_shade, top_shade = shading(cam, scene.light, low, high, ppm)
    canvas.colour *= cv2.resize(table_shade, (w * s, h * s), interpolation=cv2.INTER_LINEAR)[..., None]
    items = _items(canvas, shade, scene, ppm)
    for i in painter_order(items, canvas.position):
        items[i].draw()
    seen = visibility(canvas, scene.bases, ppm)
    image = np.asarray(cv2.resize(canvas.colour, (w, h), interpolation=cv2.INTER_AREA), dtype=np.float32)
    n = len(scene.bases)
    tops = cv2.resize(((canvas.ids >= 1) & (canvas.ids <= n)).astype(np.float32), (w, h), interpolation=cv2.INTER_AREA)
    del canvas, background
    image *= (1.0 - tops * (1.0 - top_shade))[..., None].astype(np.float32)
    image = room_light(image, scene.light)
    im = scene.imaging
    out = develop(image, im.blur_px, im.read_noise, im.shot_noise, np.random.default_rng(seed))
    if jpeg:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, im.jpeg_quality])
        assert ok, "cv2.imencode failed on a plain uint8 BGR image"
        out = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), dtype=np.uint8)
    truth = Truth(
        state=scene.state(),
        camera=MappingProxyType(cam.to_json()),
        visibility=MappingProxyType(seen),
        params=MappingProxyType(_params(scene, seed, ppm)),
    )
    return out, truth


def write_frame(scene: WideScene, seed: int, out: Path, name: str) -> tuple[float, Truth]:
    """Render and write ``NAME.jpg`` (at the scene's JPEG quality), ``NAME.truth.json`` and
    ``NAME.camera.json`` into ``out``; returns the render time (s) and the truth."""
    start = time.perf_counter()
    image, truth = render_frame(scene, seed)
    seconds = time.perf_counter() - start
    if not cv2.imwrite(str(out / f"{name}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, scene.imaging.jpeg_quality]):
        raise OSError(f"could not write {out / name}.jpg")
    doc = truth.to_dict()
    (out / f"{name}.truth.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    (out / f"{name}.camera.json").write_text(json.dumps(dict(truth.camera), indent=2) + "\n", encoding="utf-8")
    return seconds, truth


def write_empty(scene: WideScene, seed: int, out: Path, name: str) -> None:
    """Write ``NAME.empty.jpg``: the table of ``scene`` with its terrain and prints but no models, dice or hands, as
    a reference captured at set-up, with sensor noise of its own."""
    terrain = tuple(b for b in scene.blocks if b.kind != "die")
    bare = dataclasses.replace(scene, units=(), bases=(), hands=(), blocks=terrain)
    image, _truth = render_frame(bare, seed + EMPTY_SEED_OFFSET)
    if not cv2.imwrite(str(out / f"{name}.empty.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, scene.imaging.jpeg_quality]):
        raise OSError(f"could not write {out / name}.empty.jpg")


def seen_count(truth: Truth, threshold: float = 0.6) -> int:
    """Models with at least ``threshold`` of the rim visible."""
    return sum(1 for v in truth.visibility.values() if v >= threshold and not math.isnan(v))
