"""A wall where no wall is (vision.outline's near-side levels, vision.detect's doubt): the fit reports where its
wall's grey level came out on the side towards the nadir, between the top's and the mat's, and a fit whose wall is
lit like the mat on a dark base, or as bright as the top on a light one, is given a doubt along the line from the
nadir."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import pytest
from numpy.typing import NDArray

from tests.vision import vision_scenes as vs
from tests.vision.hand_rules import hand_rule_settings
from vision import BaseDetections, VisionSettings
from vision.detect import detect_bases, fit_known_bases
from vision.measure import wall_misplaced_mm
from vision.outline import OutlineFit, fit_outlines
from vision.parallax import RimParallax, middle_of
from vision.rim import ray_directions

SETTINGS = hand_rule_settings().replaced({"verdicts.min_figure_contrast": 0.0})
PX_PER_MM = 2.0
SHIFT_RATIO = 4.0 / 1396.0
SHADOW_MM = 2.5
DIRECTIONS = ray_directions(SETTINGS.rim.rays)

# One base far from the nadir (upper left), so that its wall shows a few pixels wide on that side.
NADIR_PX = (-900.0, -700.0)
VIEW = vs.RaisedView(PX_PER_MM, (240, 240), NADIR_PX, SHIFT_RATIO, SHADOW_MM)
PARALLAX = RimParallax(NADIR_PX, SHIFT_RATIO)
CENTER = (118.3, 121.7)
RADIUS_MM = 14.25

# mat, wall, top grey levels and the contact shadow's depth; the wall's place from the top (0) to the mat (1)
LOOKS = [
    ("black base", 90.0, 12.0, 10.0, 0.3, 0.025),
    ("black top, a grey wall", 90.0, 50.0, 10.0, 0.3, 0.5),
    ("black top, a wall brighter than the mat", 90.0, 130.0, 10.0, 0.3, 1.5),
    ("black base, a faint shadow", 90.0, 12.0, 10.0, 0.1, 0.025),
    ("sand base on a dark mat, its wall shaded", 60.0, 100.0, 170.0, 0.3, 0.636),
    ("sand base, its wall darker than the mat", 60.0, 40.0, 170.0, 0.3, 1.18),
]


@pytest.mark.parametrize(("look", "mat", "wall", "top", "shadow", "place"), LOOKS)
def test_the_fit_reports_where_the_wall_lies_towards_the_nadir(
    look: str, mat: float, wall: float, top: float, shadow: float, place: float
) -> None:
    grey = vs.draw_raised_base(VIEW, CENTER, RADIUS_MM, mat, wall, top, shadow, seed=7)
    start = middle_of(np.array([CENTER]), PARALLAX)
    radius = np.array([RADIUS_MM * PX_PER_MM])
    every_ray = np.ones((1, len(DIRECTIONS)), np.bool_)
    fit = fit_outlines(grey, start, radius, every_ray, DIRECTIONS, PX_PER_MM, PARALLAX, SETTINGS, radius_known=True)
    assert fit.ok[0], look
    assert fit.near_wall[0] == pytest.approx(place, abs=0.05), look
    # the shadow darkens the mat next to the footprint, the mat's level is its unshaded one
    assert fit.near_contrast[0] == pytest.approx(mat - top, abs=3.0), look


# Fits of one frame, their outline middles on a row to the right of the nadir.
ROW_PX = np.array([[400.0 + 60.0 * i, 300.0] for i in range(4)])
ROW_PARALLAX = RimParallax((0.0, 300.0), 0.01)

NAN = math.nan
DARK, LIGHT, ALIKE = 80.0, -80.0, 5.0
# the wall's place and the contrast of each fit, which of the usable ones get a doubt (wall_dark_max 0.15,
# wall_light_min 0.4, min_disc_contrast 10) and of what share of the top disc's whole shift (0.01 of the distance from
# the nadir), along the row: MILD (wall_misplaced_doubt) or, past wall_dark_far 0.3 or wall_light_far 0.1, FAR
# (wall_far_doubt)
MILD, FAR = 0.5, 1.5
DOUBT_CASES = [
    ("walls where they belong", [0.0, 0.1, 0.5, 1.5], [DARK, DARK, LIGHT, LIGHT], None, {}),
    ("a dark base's wall lit grey", [0.6, 0.0, 0.0, 0.0], [DARK, DARK, DARK, DARK], None, {0: FAR}),
    (
        "a dark base's wall a fifth of the way to the mat",
        [0.0, 0.2, 0.1, 0.0],
        [DARK, DARK, DARK, DARK],
        None,
        {1: MILD},
    ),
    ("a dark base's wall a third of the way to the mat", [0.0, 0.35, 0.1, 0.0], [DARK] * 4, None, {1: FAR}),
    ("a dark base's wall brighter than the mat", [0.0, 0.0, 0.0, 1.4], [DARK, DARK, DARK, DARK], None, {3: FAR}),
    ("a light base's wall as bright as its top", [1.2, 0.05, 1.0, 1.0], [LIGHT, LIGHT, LIGHT, LIGHT], None, {1: FAR}),
    ("a light base's wall a quarter of the way to the mat", [1.2, 0.5, 0.25, 1.0], [LIGHT] * 4, None, {2: MILD}),
    ("a light base's wall a seventh of the way", [1.2, 0.5, 0.15, 1.0], [LIGHT] * 4, None, {2: MILD}),
    ("top and mat alike: no wall place to judge", [0.6, -1.0, 0.0, 0.0], [ALIKE, -ALIKE, DARK, LIGHT], None, {3: FAR}),
    ("none of the side seen", [NAN, NAN, 0.0, 1.0], [NAN, NAN, DARK, LIGHT], None, {}),
    ("a failed fit is not scored", [0.6, 0.0, 0.6, 0.0], [DARK] * 4, [True, True, False, True], {0: FAR}),
]


@pytest.mark.parametrize(("case", "place", "contrast", "ok", "doubted"), DOUBT_CASES)
def test_a_wall_where_no_wall_is_leaves_a_doubt_along_the_nadir_line(
    case: str, place: list[float], contrast: list[float], ok: list[bool] | None, doubted: dict[int, float]
) -> None:
    fit = OutlineFit.none(len(place))
    good = np.ones(len(place), np.bool_) if ok is None else np.array(ok)
    look = dataclasses.replace(fit, near_wall=np.array(place), near_contrast=np.array(contrast), ok=good)
    middles = ROW_PX[good]
    settings = SETTINGS.replaced(
        {
            "outline.wall_dark_max": 0.15,
            "outline.wall_light_min": 0.4,
            "outline.wall_misplaced_doubt": MILD,
            "outline.wall_dark_far": 0.3,
            "outline.wall_light_far": 0.1,
            "outline.wall_far_doubt": FAR,
            "verdicts.min_disc_contrast": 10.0,
        }
    )
    got = wall_misplaced_mm(look, middles, PX_PER_MM, ROW_PARALLAX, settings)
    expected = np.zeros((int(good.sum()), 2))
    for i, share in doubted.items():
        whole_shift_mm = 0.01 * middles[i, 0] / PX_PER_MM
        # the nadir lies to the left: away from it is +x
        expected[i] = (share * whole_shift_mm, 0.0)
    np.testing.assert_allclose(got, expected, atol=1e-12, err_msg=case)


# Twelve bases round a nadir in the middle of the view, on a mid-grey mat; the first drawn with a wall of its own.
FRAME_NADIR_PX = (240.0, 180.0)
FRAME_VIEW = vs.RaisedView(PX_PER_MM, (360, 480), FRAME_NADIR_PX, 0.02, SHADOW_MM)
FRAME_PARALLAX = RimParallax(FRAME_NADIR_PX, 0.02)
FRAME_TRUTH = np.array([(70.0 + 110 * i + 3.3 * j, 70.0 + 110 * j + 1.7 * i) for i in range(4) for j in range(3)])
FRAME_MAT = 90.0


@functools.cache
def _frame(top: float, wall: float, first_wall: float) -> NDArray[np.uint8]:
    centers = [(float(x), float(y)) for x, y in FRAME_TRUTH]
    draw = functools.partial(vs.draw_raised_bases, FRAME_VIEW, centers, RADIUS_MM, FRAME_MAT)
    frame = draw(wall, top, 0.3, (0.0, 0.0), 0.0, 4)
    first = draw(first_wall, top, 0.3, (0.0, 0.0), 0.0, 4)
    x, y = (int(v) for v in FRAME_TRUTH[0])
    reach = int(24 * PX_PER_MM)
    frame[y - reach : y + reach, x - reach : x + reach] = first[y - reach : y + reach, x - reach : x + reach]
    return frame


# top, the walls' grey level, the first base's wall; the share of its shift as the doubt
WALL_CASES = [
    ("black bases", 10.0, 12.0, 12.0, 0.5, False),
    ("black bases, the first wall brighter than the mat", 10.0, 12.0, 150.0, 0.5, True),
    ("the same, no doubt for it", 10.0, 12.0, 150.0, 0.0, False),
    ("sand bases, walls shaded", 170.0, 60.0, 60.0, 0.5, False),
    ("sand bases, the first wall as bright as the top", 170.0, 60.0, 170.0, 0.5, True),
]


def _found(grey: NDArray[np.uint8], settings: VisionSettings, roster: bool) -> BaseDetections:
    """The twelve bases fitted at their known size (``roster``) or found without a roster, in FRAME_TRUTH's order."""
    n = len(FRAME_TRUTH)
    truth = middle_of(FRAME_TRUTH, FRAME_PARALLAX)
    if roster:
        ones = np.ones(n)
        dets = BaseDetections(truth + 0.4, np.full(n, RADIUS_MM * PX_PER_MM), np.full(n, 28.5), *([ones] * 7))
        return fit_known_bases(grey, PX_PER_MM, settings, dets, np.full(n, 28.5), ones, FRAME_PARALLAX)
    dets = detect_bases(grey, PX_PER_MM, settings, parallax=FRAME_PARALLAX)
    nearest = np.argmin(np.hypot(*(dets.center_px[:, None, :] - truth[None, :, :]).transpose(2, 0, 1)), axis=0)
    assert len(dets) == n and len(set(nearest.tolist())) == n
    return dets[nearest]


@pytest.mark.parametrize("roster", [True, False])
@pytest.mark.parametrize(("case", "top", "wall", "first_wall", "share", "doubted"), WALL_CASES)
def test_a_base_whose_wall_is_out_of_place_is_doubted(
    case: str, top: float, wall: float, first_wall: float, share: float, doubted: bool, roster: bool
) -> None:
    # both tiers alike: which one a drawn wall falls in is the table test's
    settings = SETTINGS.replaced({"outline.wall_misplaced_doubt": share, "outline.wall_far_doubt": share})
    known = _found(_frame(top, wall, first_wall), settings, roster)
    doubt_mm = np.hypot(*known.model_doubt_mm.T)
    # the others: no second reading about as good, no wall out of place
    assert np.all(doubt_mm[1:] < 0.05), (case, doubt_mm)
    if not doubted:
        assert doubt_mm[0] < 0.05, (case, doubt_mm)
        return
    half_px, away = FRAME_PARALLAX.half_shift(known.center_px[:1])
    expected_mm = share * 2.0 * half_px[0] / PX_PER_MM
    assert doubt_mm[0] == pytest.approx(expected_mm, rel=0.05), case
    # along the line from the nadir
    assert abs(float(known.model_doubt_mm[0] @ away[0])) == pytest.approx(doubt_mm[0], rel=1e-6), case
