"""The top-down view's marker mask: the print stays masked, what stands over a marker is let through."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from calibration.spec import MarkerSpec, load_table_spec
from calibration.table import table_to_rectified
from synth.wide import random_scene
from synth.wide.frame import write_frame
from synth.wide.scene import Blob, Part, Stick, WideBase, WideScene
from synth.wide.tables import spec_toml
from tableref.config import load_config
from tableref.evaluate import load_samples
from tableref.pipeline.frame import detect_frame
from tableref.pipeline.view import marker_mask, over_markers
from tableref.sources import read_image

SPEC = load_table_spec()
SETTINGS = load_config().pipeline
PX_PER_MM = 2.0
SIZE_PX = (int(SPEC.width_mm * PX_PER_MM), int(SPEC.depth_mm * PX_PER_MM))
PAPER_MM = 10.0


@functools.cache
def _printed_table(seed: int) -> NDArray[np.uint8]:
    """(H, W, 3) a top-down view of a green mat with the spec's markers printed on white paper, each marker's paper
    drawn four times finer and averaged down, with sensor noise; drawn once, read-only: copy it."""
    fine = 4
    width, height = SIZE_PX
    mat = (70.0, 110.0, 80.0)
    view = np.zeros((height, width, 3), np.float32)
    view[:] = mat
    dictionary = SPEC.aruco_dictionary()
    cells = int(dictionary.markerSize) + 2
    for m in SPEC.markers:
        paper = dataclasses.replace(m, size_mm=m.size_mm + 2 * PAPER_MM)
        outline = table_to_rectified(paper.corners_mm(), PX_PER_MM)
        x0, y0 = np.maximum(np.floor(outline.min(axis=0)).astype(int) - 2, 0)
        x1, y1 = np.minimum(np.ceil(outline.max(axis=0)).astype(int) + 2, (width, height))
        # the paper's box drawn finer, whole coarse pixels to a side, so that its average is the coarse view's
        patch = np.zeros(((y1 - y0) * fine, (x1 - x0) * fine, 3), np.float32)
        patch[:] = mat
        corner_px = np.array([x0, y0], np.float64) * fine
        corners = table_to_rectified(paper.corners_mm(), PX_PER_MM * fine) - corner_px
        cv2.fillConvexPoly(patch, np.round(corners).astype(np.int32), (235.0,) * 3)
        code = cv2.aruco.generateImageMarker(dictionary, m.id, cells)
        # the code image's pixel centres at whole coordinates: its outer edges half a pixel out
        grid = np.array([[0, 0], [cells, 0], [cells, cells], [0, cells]], np.float32) - 0.5
        square = (table_to_rectified(m.corners_mm(), PX_PER_MM * fine) - corner_px).astype(np.float32)
        ink = cv2.warpPerspective(
            (code < 128).astype(np.uint8),
            cv2.getPerspectiveTransform(grid, square),
            patch.shape[1::-1],
            flags=cv2.INTER_NEAREST,
        )
        patch[ink > 0] = 20.0
        view[y0:y1, x0:x1] = cv2.resize(patch, (int(x1 - x0), int(y1 - y0)), interpolation=cv2.INTER_AREA)
    small = view + np.random.default_rng(seed).normal(0.0, 2.0, view.shape)
    view_px = np.asarray(np.clip(small, 0, 255), np.uint8)
    view_px.flags.writeable = False
    return view_px


def _disc(view: NDArray[np.uint8], center_mm: tuple[float, float], colour: tuple[int, int, int]) -> NDArray[np.bool_]:
    """Draws a 32 mm disc of ``colour`` on ``view``; returns where it lies."""
    where = np.zeros(view.shape[:2], np.uint8)
    centre = np.round(np.array(center_mm) * PX_PER_MM).astype(int)
    cv2.circle(where, (int(centre[0]), int(centre[1])), int(16 * PX_PER_MM), 255, -1)
    view[where > 0] = colour
    return where > 0


@pytest.mark.parametrize(
    ("colour", "let_through"),
    [
        # nothing over the marker: its print stays masked, blurred edges and noise included
        (None, False),
        # a sand or a red base partly over it: seen there
        ((110, 150, 180), True),
        ((40, 40, 170), True),
        # a base as white as the paper cannot be told from it: masked still
        ((235, 235, 235), False),
    ],
)
def test_what_stands_over_a_marker_is_let_through_its_mask(
    colour: tuple[int, int, int] | None, let_through: bool
) -> None:
    view = _printed_table(seed=4).copy()
    marker = SPEC.markers[0]
    on = np.zeros(view.shape[:2], np.bool_)
    if colour is not None:
        # centred on the marker's corner: a quarter over its black square, more over its paper
        corner = marker.corners_mm()[2]
        on = _disc(view, (float(corner[0]), float(corner[1])), colour)
    mask = marker_mask(SPEC, PX_PER_MM, SIZE_PX, SETTINGS.marker_mask_margin_mm)
    seen = (mask > 0) & (over_markers(mask, view, PX_PER_MM, SETTINGS) == 0)
    zone = mask > 0
    # the print (paper and square, the paper's blurred edge aside) is never let through; the mat the zone reaches
    # beyond the paper may be
    printed = marker_mask(SPEC, PX_PER_MM, SIZE_PX, PAPER_MM - 1.0) > 0
    assert seen[printed & ~on].mean() < 0.002
    share = seen[zone & on].mean() if np.any(zone & on) else 0.0
    assert (share > 0.8) == let_through, share


def _moved_onto(base: WideBase, x_mm: float, y_mm: float) -> WideBase:
    """``base`` and its figure moved to (x_mm, y_mm)."""
    dx, dy = x_mm - base.x_mm, y_mm - base.y_mm

    def at(p: tuple[float, float, float]) -> tuple[float, float, float]:
        return (p[0] + dx, p[1] + dy, p[2])

    def moved(part: Part) -> Part:
        if isinstance(part, Blob):
            return dataclasses.replace(part, centre=at(part.centre))
        if isinstance(part, Stick):
            return dataclasses.replace(part, start=at(part.start), end=at(part.end))
        a, b, c, d = (at(p) for p in part.corners)
        return dataclasses.replace(part, corners=(a, b, c, d))

    return dataclasses.replace(base, x_mm=x_mm, y_mm=y_mm, parts=tuple(moved(p) for p in base.parts))


def _base_over_a_marker(seed: int, resolution: str) -> WideScene:
    """A wide-look scene with its largest base up to 60 mm set down over the inner edge of a marker the camera sees
    well, every other base within reach of it taken away."""
    scene = random_scene(seed, resolution)
    base = max((b for b in scene.bases if b.diameter_mm <= 60), key=lambda b: b.diameter_mm)
    middle = np.array([scene.table.width_mm, scene.table.depth_mm]) / 2

    def place(marker: MarkerSpec) -> NDArray[np.float64]:
        # its centre just inside the black square's edge towards the table's middle: more than half of it over the
        # print
        inward = middle - [marker.x_mm, marker.y_mm]
        inward = inward / np.abs(inward).max()
        return np.array([marker.x_mm, marker.y_mm]) + inward * (marker.size_mm / 2 - 0.1 * base.diameter_mm)

    def in_view(marker: MarkerSpec) -> bool:
        u, v = np.asarray(scene.camera.project(np.array([[*place(marker), 0.0]]))).reshape(2)
        return 200 < u < scene.camera.image_width - 200 and 200 < v < scene.camera.image_height - 200

    marker = next(m for m in scene.table.markers if in_view(m))
    x_mm, y_mm = (float(v) for v in place(marker))
    others = tuple(
        b for b in scene.bases if b.id != base.id and np.hypot(b.x_mm - x_mm, b.y_mm - y_mm) > 2 * base.diameter_mm
    )
    bases = (_moved_onto(base, x_mm, y_mm), *others)
    units = []
    for unit in scene.units:
        ids = [b.id for b in bases if b.unit == unit.id]
        if ids:
            units.append(unit if unit.leader in ids else dataclasses.replace(unit, leader=ids[0]))
    return dataclasses.replace(scene, bases=bases, units=tuple(units), hands=())


@pytest.mark.parametrize(("seed", "resolution"), [(30003, "4k"), (30001, "1080p")])
def test_a_base_set_down_over_a_marker_is_found(tmp_path: Path, seed: int, resolution: str) -> None:
    scene = _base_over_a_marker(seed, resolution)
    (tmp_path / f"table_{scene.table_name}.toml").write_text(spec_toml(scene.table), encoding="utf-8")
    write_frame(scene, seed, tmp_path, f"wide_{resolution}_{seed}")
    (sample,) = load_samples(tmp_path)
    image = read_image(sample.image)
    moved = scene.bases[0]
    config = load_config()
    whole_zone = dataclasses.replace(config, pipeline=dataclasses.replace(config.pipeline, marker_uncover_mm=0.0))
    for settings, found in ((config, True), (whole_zone, False)):
        state = detect_frame(image, sample.spec, settings, sample.camera).state
        off_mm = min((np.hypot(m.x_mm - moved.x_mm, m.y_mm - moved.y_mm) for m in state.models), default=np.inf)
        assert (off_mm < 2.0) == found, (settings.pipeline.marker_uncover_mm, off_mm)
