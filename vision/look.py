"""One look at the table: steps 1-6 of :mod:`vision.detect` (seeds, footprints, refinement, the tests of a base,
duplicates, other readings) on one image, and the rules by which a later look's bases join those found already."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.candidates import split_detections
from vision.detections import BaseDetections
from vision.footprints import read_footprints, seeds_in_reach
from vision.measure import measure_bases, scored
from vision.other_readings import widen_for_other_readings
from vision.overlaps import resolve, resolve_overlaps
from vision.parallax import RimParallax
from vision.refine import refine_rims
from vision.rim import ray_directions
from vision.seeds import Seeds, find_seeds
from vision.settings import VisionSettings
from vision.verdicts import first_tests, other_impostors, printed_rings

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class View:
    """What every look at one top-down view shares: ``grey`` (H, W) uint8, where the appearance fit looks; ``bgr``
    (H, W, 3) or (H, W) uint8, the view as it was taken; ``scale`` px/mm; ``settings``; ``ignore`` (H, W) uint8,
    nonzero on pixels no base is looked for on (None: none); ``parallax`` (None: none); ``wanted_px`` (M, 4) the boxes
    bases are looked for in (see :func:`vision.detect.detect_bases`; None: everywhere)."""

    grey: NDArray[np.uint8]
    bgr: NDArray[np.uint8]
    scale: float
    settings: VisionSettings
    ignore: NDArray[np.uint8] | None
    parallax: RimParallax | None
    wanted_px: FloatArray | None


def one_look(
    view: View,
    image: NDArray[np.uint8],
    min_figure: float,
    chroma_pending: Future[NDArray[np.uint8] | None] | None,
    frame_blur_px: FloatArray | None = None,
    second_readings: bool = False,
    anchors: BaseDetections | None = None,
    seeds: Seeds | None = None,
) -> tuple[BaseDetections, BaseDetections, BaseDetections, FloatArray]:
    """Steps 1-6: seeds, edges, rings and the disc test in ``image`` (H, W) uint8, the view's grey image or the colour
    contrast of the second look; the appearance fit in the view's grey image, which shows the wall's shading and the
    contact shadow it models. A base's figure must vary by ``min_figure`` in both. ``chroma_pending`` gives (when
    done) the colour contrast (H, W) uint8, which tells a contact shadow from a coloured ring where ``image`` is grey
    (None, or a result of None: no such reading); it is waited for only after the appearance fit. ``frame_blur_px``
    (M,): the blur of the frame's fits in an earlier look (see :func:`vision.measure.excess_blur_mm`).
    ``second_readings``: also read each seed's best supported ring where it lies apart from the outermost (see
    ``rim.second_ring_mm``). The view as taken tells a fingertip's round end (see :mod:`vision.ends`). ``anchors``:
    bases an earlier look found, beside which a kin-only reading may stand. ``seeds``: the seeds, searched for already
    (None: searched for in ``image``). Returns the bases, the second readings that passed as bases where none of the
    first readings lies, the kin-only readings (bases only beside their unit's, see ``kin.min_bases``; where none of
    the first readings lies) and the blur (px) of this look's usable appearance fits."""
    grey, scale, settings, ignore, parallax = view.grey, view.scale, view.settings, view.ignore, view.parallax
    seeds = find_seeds(image, scale, settings, ignore) if seeds is None else seeds
    if view.wanted_px is not None:
        seeds = seeds[seeds_in_reach(seeds, view.wanted_px, settings.snap_tolerance_mm * scale)]
    nothing = BaseDetections.empty(), BaseDetections.empty(), BaseDetections.empty(), np.zeros(0)
    if len(seeds) == 0:
        return nothing
    found = read_footprints(image, ignore, seeds, scale, settings, second_readings)
    if len(found) == 0:
        return nothing
    directions = ray_directions(settings.rim.rays)
    found = refine_rims(image, ignore, found, scale, directions, settings, parallax)
    # the costliest tests (the rim model, the appearance fit) only for what passes the cheap ones
    found = first_tests(image, grey, found, min_figure, anchors, scale, directions, settings, parallax)
    found, chroma, blur_px = measure_bases(
        image, grey, found, chroma_pending, frame_blur_px, scale, directions, settings, parallax
    )
    found = printed_rings(found, chroma, scale, directions, settings)
    found = other_impostors(image, grey, view.bgr, found, min_figure, scale, directions, settings)
    found = scored(found, scale, directions, settings)
    found = resolve(found, scale, settings)
    found = widen_for_other_readings(image, ignore, found, scale, directions, settings, parallax)
    return (*split_detections(found), blur_px)


def read_beside(
    view: View,
    found: BaseDetections,
    seeds: Seeds,
    chroma: Future[NDArray[np.uint8] | None] | None,
    blur_px: FloatArray,
) -> BaseDetections:
    """Steps 2-6 in grey from ``seeds`` found by a later look, beside the bases ``found`` (see :func:`one_look`):
    the bases read."""
    min_figure = view.settings.verdicts.min_figure_contrast
    more, _spare, _kin, _blur = one_look(view, view.grey, min_figure, chroma, blur_px, anchors=found, seeds=seeds)
    return more


def kept_after(
    found: BaseDetections, more: BaseDetections, scale: float, settings: VisionSettings
) -> tuple[BaseDetections, NDArray[np.intp]]:
    """``found`` and ``more`` as one table, and the rows of it that stand, best first (:func:`resolve_overlaps`), where
    ``more``'s readings come after all of ``found``'s: they stand only where they clash with none of those, or take
    the place of those they hold."""
    both = BaseDetections.concatenate([found, more])
    later = np.arange(len(both)) >= len(found)
    return both, resolve_overlaps(both.center_px, both.radius_px, both.diameter_mm, both.score, scale, settings, later)


def covered(
    ignore: NDArray[np.uint8] | None, shape: tuple[int, ...], found: BaseDetections, margin_px: float
) -> NDArray[np.uint8]:
    """(H, W) uint8: ``ignore`` with every found base's disc, grown by ``margin_px``, set."""
    mask = np.zeros(shape[:2], np.uint8) if ignore is None else ignore.copy()
    for (x, y), r in zip(found.center_px, found.radius_px, strict=True):
        cv2.circle(mask, (round(x), round(y)), round(r + margin_px), 255, -1)
    return mask
