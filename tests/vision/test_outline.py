"""The appearance fit (vision.outline) on drawn straight-walled bases seen with parallax: a top disc pushed away from
the nadir, the side wall showing on the near side, a contact shadow on the mat. Edge picking is pulled off the
footprint by a bright wall or a dark contact shadow; the fit is not."""

from __future__ import annotations

import dataclasses
import functools
import math

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

import vision.known
from tests.vision import vision_scenes as vs
from tests.vision.hand_rules import hand_rule_settings
from vision import BaseDetections, VisionError, VisionSettings
from vision.detect import detect_bases, fit_known_bases
from vision.known import _start_spread_px
from vision.measure import excess_blur_mm, outline_sigmas
from vision.outline import OutlineFit, cast_shadow_px, fit_outlines
from vision.parallax import RimParallax, middle_of
from vision.rim import ray_directions

SETTINGS = hand_rule_settings().replaced({"verdicts.min_figure_contrast": 0.0})
PX_PER_MM = 2.0
SIZE_PX = (240, 240)
# The nadir lies far to the upper left: the top disc shows pushed down and right, the wall up and left.
NADIR_PX = (-400.0, -300.0)
RIM_MM = 4.0
CAMERA_MM = 1400.0
SHIFT_RATIO = RIM_MM / (CAMERA_MM - RIM_MM)
SHADOW_MM = 2.5


VIEW = vs.RaisedView(PX_PER_MM, SIZE_PX, NADIR_PX, SHIFT_RATIO, SHADOW_MM)
PARALLAX = RimParallax(NADIR_PX, SHIFT_RATIO)
DIRECTIONS = ray_directions(SETTINGS.rim.rays)
# every drawn base stands here (footprint centre, px), off the pixel grid
CENTER = (118.3, 121.7)
TRUTH = np.array([CENTER])
ALL_RAYS = np.ones((1, len(DIRECTIONS)), np.bool_)


# mat, wall, top grey levels and contact shadow strength: the cases that pull edges off the footprint
LOOKS = [
    ("sand wall and top on a dark mat", 60.0, 120.0, 170.0, 0.25),
    ("black base on a dark mat", 70.0, 12.0, 14.0, 0.3),
    ("top the mat's grey, dark wall", 80.0, 30.0, 82.0, 0.3),
    ("grey base", 60.0, 100.0, 105.0, 0.2),
]


@pytest.mark.parametrize(("look", "mat", "wall", "top", "shadow"), LOOKS)
@pytest.mark.parametrize("radius_mm", [12.5, 16.0, 20.0])
def test_the_fit_finds_the_footprint(
    look: str, mat: float, wall: float, top: float, shadow: float, radius_mm: float
) -> None:
    grey = vs.draw_raised_base(VIEW, CENTER, radius_mm, mat, wall, top, shadow, seed=int(radius_mm * 10))
    # start where an edge fit might have put it: half a millimetre off, 0.6 mm too large
    start = middle_of(TRUTH, PARALLAX) + 0.5 * PX_PER_MM * np.array([[0.6, -0.8]])
    fit = fit_outlines(
        grey, start, np.array([(radius_mm + 0.6) * PX_PER_MM]), ALL_RAYS, DIRECTIONS, PX_PER_MM, PARALLAX, SETTINGS
    )
    assert fit.ok[0], look
    error_mm = np.hypot(*(fit.center_px[0] - TRUTH[0])) / PX_PER_MM
    assert error_mm < 0.1, f"{look}: footprint centre {error_mm:.3f} mm off"
    assert abs(fit.radius_px[0] / PX_PER_MM - radius_mm) < 0.15, f"{look}: radius {fit.radius_px[0] / PX_PER_MM:.2f}"


@pytest.mark.parametrize(("look", "mat", "wall", "top", "shadow"), LOOKS[:2])
def test_detection_reports_the_footprint_and_its_standard_size(
    look: str, mat: float, wall: float, top: float, shadow: float
) -> None:
    grey = vs.draw_raised_base(VIEW, CENTER, 16.0, mat, wall, top, shadow, seed=3)
    # a figure on the base, so that it passes for one (its top is not a plain disc)
    grey[110:128, 112:124] = np.uint8(np.clip(top + 60 if top < 128 else top - 80, 0, 255))
    dets = detect_bases(grey, PX_PER_MM, SETTINGS, parallax=PARALLAX)
    assert len(dets) == 1, look
    assert dets.diameter_mm[0] == 32.0
    # the detector reports the outline's middle (the base at half its rim height)
    expected = middle_of(TRUTH, PARALLAX)[0]
    assert np.hypot(*(dets.center_px[0] - expected)) / PX_PER_MM < 0.1


def cover_with_blob(grey: NDArray[np.uint8], grey_level: float) -> NDArray[np.uint8]:
    """``grey`` with a soft bright blob (a figure's cloak, a token) over the upper right of the base's rim."""
    blob = np.zeros(grey.shape, np.float64)
    cv2.ellipse(blob, (150, 100), (14, 8), 30, 0, 360, 1.0, -1)
    blob = cv2.GaussianBlur(blob, (0, 0), 1.0)
    return np.asarray(np.clip(grey * (1.0 - blob) + grey_level * blob, 0, 255), dtype=np.uint8)


@pytest.mark.parametrize(
    ("look", "mat", "wall", "top", "shadow", "pulled"),
    [
        # a bright blob over a black base's rim is nothing like it: the fit drops those rays and is not pulled
        (*LOOKS[1], False),
        (*LOOKS[2], True),
        (*LOOKS[3], True),
    ],
)
def test_the_misfit_grows_where_the_model_does_not_explain_the_outline(
    look: str, mat: float, wall: float, top: float, shadow: float, pulled: bool
) -> None:
    radius_mm = 16.0
    start = middle_of(TRUTH, PARALLAX) + 0.5 * PX_PER_MM * np.array([[0.6, -0.8]])
    clean = vs.draw_raised_base(VIEW, CENTER, radius_mm, mat, wall, top, shadow, seed=5)
    scale = SETTINGS.outline.misfit_scale / PX_PER_MM
    # one start: from another the fit may leave the blob out altogether
    one_start = SETTINGS.replaced({"outline.starts": (0.0,)})
    fits = {}
    for name, grey in (("clean", clean), ("covered", cover_with_blob(clean, 200.0))):
        fit = fit_outlines(
            grey, start, np.array([(radius_mm + 0.6) * PX_PER_MM]), ALL_RAYS, DIRECTIONS, PX_PER_MM, PARALLAX, one_start
        )
        assert fit.ok[0], f"{look}, {name}"
        error_mm = np.hypot(*(fit.center_px[0] - TRUTH[0])) / PX_PER_MM
        # honest, with the sigmas the detector reports: the centre within 2 sigma per axis (its error's length
        # within 2 sqrt(2) sigma), the diameter within 2 of its sigma
        sigma_mm = np.hypot(SETTINGS.outline.model_sigma_mm, scale * fit.misfit_px[0])
        assert error_mm <= 2.0 * math.sqrt(2.0) * sigma_mm, f"{look}, {name}"
        diameter_sigma_mm = np.hypot(SETTINGS.outline.diameter_sigma_mm, 2.0 * scale * fit.radius_misfit_px[0])
        assert abs(2.0 * fit.radius_px[0] / PX_PER_MM - 2.0 * radius_mm) <= 2.0 * diameter_sigma_mm, f"{look}, {name}"
        fits[name] = fit
    # where the blob pulls the fit, the fit says so; the clean base's misfit is a few hundredths of a millimetre
    assert scale * fits["clean"].misfit_px[0] < 0.1
    covered_error_mm = np.hypot(*(fits["covered"].center_px[0] - TRUTH[0])) / PX_PER_MM
    if pulled:
        assert covered_error_mm > 0.2, look
        assert fits["covered"].misfit_px[0] > 10 * fits["clean"].misfit_px[0], look
    else:
        assert covered_error_mm < 0.05, look


def _top_the_mats_grey(radius_mm: float) -> tuple[NDArray[np.uint8], NDArray[np.float64]]:
    """A base whose top is the mat's grey over a dark wall, and where the edges would put its top disc (1, 2) px."""
    _, mat, wall, top, shadow = LOOKS[2]
    grey = vs.draw_raised_base(VIEW, CENTER, radius_mm, mat, wall, top, shadow, seed=7)
    half, unit = PARALLAX.half_shift(TRUTH)
    return grey, middle_of(TRUTH, PARALLAX) + 2.0 * half[:, None] * unit


@pytest.mark.parametrize("radius_mm", [16.0, 20.0])
def test_a_start_nearer_the_truth_escapes_the_top_read_as_the_footprint(radius_mm: float) -> None:
    # the top the mat's grey over a dark wall: started where the edges would put the top disc, one fit settles with
    # the top disc for the footprint; the start one half shift towards the nadir finds the footprint (the rim's
    # height held, the mechanism on its own)
    grey, start = _top_the_mats_grey(radius_mm)
    errors_mm = {}
    for name, starts in (("one start", (0.0,)), ("the default starts", SETTINGS.outline.starts)):
        settings = SETTINGS.replaced({"outline.starts": starts, "outline.height_ratio": (1.0, 1.0)})
        fit = fit_outlines(
            grey, start, np.array([radius_mm * PX_PER_MM]), ALL_RAYS, DIRECTIONS, PX_PER_MM, PARALLAX, settings
        )
        assert fit.ok[0], name
        errors_mm[name] = float(np.hypot(*(fit.center_px[0] - TRUTH[0])) / PX_PER_MM)
    assert errors_mm["one start"] > 0.4, errors_mm
    assert errors_mm["the default starts"] < 0.1, errors_mm


@pytest.mark.parametrize("radius_mm", [16.0, 20.0])
def test_bases_fitted_from_the_first_start_only_keep_its_fit(radius_mm: float) -> None:
    # the base above twice in one fit, the second from the first start only: it keeps the top read as the footprint,
    # as one start alone does, while the first escapes it
    grey, start = _top_the_mats_grey(radius_mm)
    settings = SETTINGS.replaced({"outline.height_ratio": (1.0, 1.0)})
    radius = np.array([radius_mm * PX_PER_MM])
    both = fit_outlines(
        grey,
        np.repeat(start, 2, axis=0),
        np.repeat(radius, 2),
        np.repeat(ALL_RAYS, 2, axis=0),
        DIRECTIONS,
        PX_PER_MM,
        PARALLAX,
        settings,
        first_start_only=np.array([False, True]),
    )
    one_start = settings.replaced({"outline.starts": settings.outline.starts[:1]})
    alone = fit_outlines(grey, start, radius, ALL_RAYS, DIRECTIONS, PX_PER_MM, PARALLAX, one_start)
    assert both.ok.all() and alone.ok[0]
    errors_mm = np.hypot(*(both.center_px - TRUTH).T) / PX_PER_MM
    assert errors_mm[0] < 0.1 and errors_mm[1] > 0.4, errors_mm
    assert np.hypot(*(both.center_px[1] - alone.center_px[0])) < 1e-3


@pytest.mark.parametrize("rim_mm", [3.0, 5.0])
@pytest.mark.parametrize(("look", "mat", "wall", "top", "shadow"), [LOOKS[0], LOOKS[1], LOOKS[3]])
def test_the_fit_finds_the_rims_own_height(
    rim_mm: float, look: str, mat: float, wall: float, top: float, shadow: float
) -> None:
    # drawn with a rim of rim_mm, fitted with the parallax of the RIM_MM assumed: the top's shift says the height
    view = dataclasses.replace(VIEW, shift_ratio=rim_mm / (CAMERA_MM - rim_mm))
    grey = vs.draw_raised_base(view, CENTER, 16.0, mat, wall, top, shadow, seed=11)
    radius = np.array([16.0 * PX_PER_MM])
    fit = fit_outlines(grey, middle_of(TRUTH, PARALLAX), radius, ALL_RAYS, DIRECTIONS, PX_PER_MM, PARALLAX, SETTINGS)
    assert fit.ok[0]
    assert abs(fit.height_ratio[0] - rim_mm / RIM_MM) < 0.07, look
    assert np.hypot(*(fit.center_px[0] - TRUTH[0])) / PX_PER_MM < 0.06, look


# where a 4K frame's far corner lies (px), whole pixels so that the samples fall alike
FAR_OFFSET_PX = (3520.0, 2310.0)


@pytest.mark.parametrize(("look", "mat", "wall", "top", "shadow"), LOOKS)
def test_a_base_far_from_the_image_origin_fits_as_near_it(
    look: str, mat: float, wall: float, top: float, shadow: float
) -> None:
    # the fit works in single precision, where coordinates of thousands of pixels resolve only a few ten-thousandths
    # of one: the same base and camera moved far out must fit the same, moved. The samples there already differ
    # (remap's maps are single precision too) by up to about 5e-4 px.
    near = vs.draw_raised_base(VIEW, CENTER, 16.0, mat, wall, top, shadow, seed=13)
    dx, dy = (int(v) for v in FAR_OFFSET_PX)
    far = np.zeros((dy + near.shape[0], dx + near.shape[1]), np.uint8)
    far[dy:, dx:] = near
    offset = np.array([FAR_OFFSET_PX])
    radius = np.array([16.6 * PX_PER_MM])
    start = middle_of(TRUTH, PARALLAX) + np.array([[0.4, -0.3]])
    fit_near = fit_outlines(near, start, radius, ALL_RAYS, DIRECTIONS, PX_PER_MM, PARALLAX, SETTINGS)
    far_parallax = RimParallax((NADIR_PX[0] + dx, NADIR_PX[1] + dy), SHIFT_RATIO)
    fit_far = fit_outlines(far, start + offset, radius, ALL_RAYS, DIRECTIONS, PX_PER_MM, far_parallax, SETTINGS)
    assert fit_near.ok[0] and fit_far.ok[0], look
    moved_px = np.hypot(*(fit_far.center_px[0] - offset[0] - fit_near.center_px[0]))
    assert moved_px < 2e-3, f"{look}: {moved_px:.2e} px apart"
    assert abs(fit_far.radius_px[0] - fit_near.radius_px[0]) < 2e-3, look
    assert abs(fit_far.height_ratio[0] - fit_near.height_ratio[0]) < 1e-3, look


def _started_at_the_top(settings: VisionSettings) -> OutlineFit:
    """The top the mat's grey over a dark wall, fitted from the top disc: the first start settles 0.6 mm off, another
    finds the footprint with a smaller residual."""
    grey, start = _top_the_mats_grey(16.0)
    held = settings.replaced({"outline.height_ratio": (1.0, 1.0)})
    return fit_outlines(grey, start, np.array([16.0 * PX_PER_MM]), ALL_RAYS, DIRECTIONS, PX_PER_MM, PARALLAX, held)


@pytest.mark.parametrize("margin", [0.95, 0.5])
def test_a_start_about_as_good_elsewhere_is_reported(margin: float) -> None:
    # a later start must beat the kept fit by the margin; with a margin of 0.5 the first fit stays, and the better
    # one, now "about as good", says how far off it may be
    fit = _started_at_the_top(SETTINGS.replaced({"outline.start_margin": margin}))
    error_px = TRUTH[0] - fit.center_px[0]
    error_mm = np.hypot(*error_px) / PX_PER_MM
    other_mm = np.hypot(*fit.other_start_px[0]) / PX_PER_MM
    if margin == 0.95:
        assert error_mm < 0.1 and other_mm < 0.05
    else:
        assert error_mm > 0.4 and 0.8 * error_mm <= other_mm <= 1.5 * error_mm
        # and it lies the way the truth does: the doubt runs along that line
        cos = np.dot(error_px, fit.other_start_px[0]) / (error_mm * other_mm * PX_PER_MM**2)
        assert cos > 0.9


@pytest.mark.parametrize(("share", "inside"), [(SETTINGS.outline.other_start_share, True), (0.5, False)])
def test_the_reading_not_taken_lies_inside_a_call_s_two_sigmas(share: float, inside: bool) -> None:
    # the fit above that kept the wrong one of two readings: the doubt along the line to the other is the share of
    # their distance. At half of it the truth (the other reading) stands on a call's 2-sigma line, or past it, before
    # any other term of the sigma counts
    settings = SETTINGS.replaced({"outline.start_margin": 0.5, "outline.other_start_share": share})
    fit = _started_at_the_top(settings)
    doubt_mm = np.hypot(*outline_sigmas(fit, PX_PER_MM, settings, settings.outline.misfit_scale)[2][0])
    other_mm = np.hypot(*fit.other_start_px[0]) / PX_PER_MM
    assert doubt_mm == pytest.approx(share * other_mm)
    error_mm = np.hypot(*(TRUTH[0] - fit.center_px[0])) / PX_PER_MM
    assert (error_mm < 2.0 * doubt_mm) == inside, f"{error_mm:.2f} mm off, doubt {doubt_mm:.2f} mm"


@pytest.mark.parametrize("rim_mm", [3.0, 5.0])
@pytest.mark.parametrize(("look", "mat", "wall", "top", "shadow"), LOOKS)
def test_a_size_and_rim_height_held_place_the_footprint(
    rim_mm: float, look: str, mat: float, wall: float, top: float, shadow: float
) -> None:
    # drawn with a rim of rim_mm; the parallax assumes RIM_MM. Held at the drawn height the footprint is found;
    # held at the assumed one it is pushed along the nadir line (the fit cannot take the height back)
    view = dataclasses.replace(VIEW, shift_ratio=rim_mm / (CAMERA_MM - rim_mm))
    grey = vs.draw_raised_base(view, CENTER, 16.0, mat, wall, top, shadow, seed=11)
    start = middle_of(TRUTH, PARALLAX) + 0.5 * PX_PER_MM * np.array([[0.6, -0.8]])
    radius = np.array([16.0 * PX_PER_MM])
    errors_mm = {}
    for name, ratio in (("drawn", rim_mm / RIM_MM), ("assumed", 1.0)):
        fit = fit_outlines(
            grey,
            start,
            radius,
            ALL_RAYS,
            DIRECTIONS,
            PX_PER_MM,
            PARALLAX,
            SETTINGS,
            radius_known=True,
            height_ratio=np.array([ratio]),
        )
        assert fit.ok[0], look
        assert (fit.radius_px[0], fit.height_ratio[0], fit.radius_misfit_px[0]) == (radius[0], ratio, 0.0)
        errors_mm[name] = float(np.hypot(*(fit.center_px[0] - TRUTH[0])) / PX_PER_MM)
    assert errors_mm["drawn"] < 0.04, (look, errors_mm)
    assert errors_mm["assumed"] > 0.1, (look, errors_mm)


def _detected_with_figure(rim_mm: float) -> tuple[NDArray[np.uint8], BaseDetections]:
    """A sand base of 32 mm with a rim of rim_mm and a figure on it, and its detection (the parallax assumes
    RIM_MM)."""
    _, mat, wall, top, shadow = LOOKS[0]
    view = dataclasses.replace(VIEW, shift_ratio=rim_mm / (CAMERA_MM - rim_mm))
    grey = vs.draw_raised_base(view, CENTER, 16.0, mat, wall, top, shadow, seed=5)
    grey[110:128, 112:124] = np.uint8(top - 80)
    dets = detect_bases(grey, PX_PER_MM, SETTINGS, parallax=PARALLAX)
    assert len(dets) == 1
    return grey, dets


@pytest.mark.parametrize("rim_mm", [3.0, 5.0])
def test_known_bases_are_fitted_again_at_their_size_and_height(rim_mm: float) -> None:
    grey, dets = _detected_with_figure(rim_mm)
    known = fit_known_bases(grey, PX_PER_MM, SETTINGS, dets, np.array([32.0]), np.array([rim_mm / RIM_MM]), PARALLAX)
    # reported as detect_bases reports a base: the outline's middle at the assumed height, over the footprint
    expected = middle_of(TRUTH, PARALLAX)[0]
    assert np.hypot(*(known.center_px[0] - expected)) / PX_PER_MM < 0.05
    assert known.diameter_mm[0] == 32.0 and known.radius_px[0] == 16.0 * PX_PER_MM
    assert known.diameter_sigma_mm[0] == 0.0 and known.rim_height_share[0] == 0.0
    assert 0.0 < known.model_sigma_mm[0] < 0.2
    assert known.score[0] == dets.score[0]


@pytest.mark.parametrize(
    ("bevel_mm", "check_mm", "covered"),
    [
        # a straight wall: no bevelled reading about as good, no doubt
        (0.0, 1.2, None),
        # a top 1.2 mm smaller than its footprint, fitted as straight-walled, sits about a millimetre towards the
        # nadir: beyond two sigmas, until the bevelled reading's doubt along that line covers it
        (1.2, 0.0, False),
        (1.2, 1.2, True),
    ],
)
def test_a_bevelled_top_read_about_as_well_is_a_doubt_along_the_nadir_line(
    bevel_mm: float, check_mm: float, covered: bool | None
) -> None:
    rim_mm = 5.0
    view = dataclasses.replace(VIEW, shift_ratio=rim_mm / (CAMERA_MM - rim_mm))
    _, mat, wall, top, shadow = LOOKS[0]
    grey = vs.draw_raised_base(view, CENTER, 16.0, mat, wall, top, shadow, seed=5, bevel_mm=bevel_mm)
    grey[110:128, 112:124] = np.uint8(top - 80)
    settings = SETTINGS.replaced({"known.bevel_check_mm": check_mm})
    dets = detect_bases(grey, PX_PER_MM, settings, parallax=PARALLAX)
    known = fit_known_bases(grey, PX_PER_MM, settings, dets, np.array([32.0]), np.array([rim_mm / RIM_MM]), PARALLAX)
    error_mm = (known.center_px[0] - middle_of(TRUTH, PARALLAX)[0]) / PX_PER_MM
    doubt_mm = known.model_doubt_mm[0]
    if covered is None:
        assert np.hypot(*doubt_mm) < 0.05 and np.hypot(*error_mm) < 0.05
        return
    assert np.hypot(*error_mm) > 0.5
    along_sigma_mm = np.hypot(known.model_sigma_mm[0], np.hypot(*doubt_mm))
    assert (np.hypot(*error_mm) <= 2.0 * along_sigma_mm) == covered


@pytest.mark.parametrize(
    ("detected_mm", "angle_deg", "share"),
    [(32.0, 0.0, 0.5), (28.5, 0.0, 0.5), (28.5, 100.0, 0.5), (25.0, 200.0, 0.5), (25.0, 300.0, 1.0)],
)
def test_a_size_detected_wrong_is_fitted_from_round_it(detected_mm: float, angle_deg: float, share: float) -> None:
    # a base detected at a smaller size was read on part of its rim: a circle inside it touching it on one side,
    # its centre off by the difference of the radii. The fit at the known size starts round that reading too and
    # finds the base; the two readings stay a doubt of the share of that difference
    grey, dets = _detected_with_figure(4.0)
    off_px = (32.0 - detected_mm) / 2 * PX_PER_MM
    turn = np.deg2rad(angle_deg)
    misread = dataclasses.replace(
        dets,
        center_px=dets.center_px + off_px * np.array([[np.cos(turn), np.sin(turn)]]),
        diameter_mm=np.array([detected_mm]),
        radius_px=np.array([detected_mm / 2 * PX_PER_MM]),
    )
    settings = SETTINGS.replaced({"known.misread_share": share})
    known = fit_known_bases(grey, PX_PER_MM, settings, misread, np.array([32.0]), np.array([1.0]), PARALLAX)
    assert known.diameter_mm[0] == 32.0
    assert np.hypot(*(known.center_px[0] - middle_of(TRUTH, PARALLAX)[0])) / PX_PER_MM < 0.1
    least_mm = share * (32.0 - detected_mm) / 2
    assert least_mm <= known.model_sigma_mm[0] < least_mm + 0.2


@pytest.mark.parametrize(
    ("limit_mm", "misfit_mm", "astray"),
    [
        (1.0, 0.0, True),  # far from the edges' reading and explained no better than anything: the edges stand
        (1.0, 10.0, False),  # as far, but the model explains the pixels: the fit stands
        (5.0, 0.0, False),  # within the limit: the fit stands
    ],
)
def test_a_fit_far_from_its_edges_and_poorly_explained_gives_way_to_them(
    limit_mm: float, misfit_mm: float, astray: bool
) -> None:
    # edges read 1.75 mm off the base (a reading at 28.5 mm on part of its rim): the fit at the known 32 mm finds the
    # base; taken as astray (the bars lowered so that this clean base counts), the edges' place is kept instead
    grey, dets = _detected_with_figure(4.0)
    off = np.array([[(32.0 - 28.5) / 2 * PX_PER_MM, 0.0]])
    misread = dataclasses.replace(dets, center_px=dets.center_px + off)
    settings = SETTINGS.replaced(
        {"known.edge_limit_mm": limit_mm, "known.astray_misfit_mm": misfit_mm, "known.edge_share": 0.35}
    )
    known = fit_known_bases(grey, PX_PER_MM, settings, misread, np.array([32.0]), np.array([1.0]), PARALLAX)
    assert known.diameter_mm[0] == 32.0
    stayed = bool(np.all(known.center_px == misread.center_px))
    assert stayed == astray
    if astray:
        assert known.model_sigma_mm[0] >= 0.35 * 1.75 - 0.01
        assert known.rim_height_share[0] == misread.rim_height_share[0]
    else:
        assert np.hypot(*(known.center_px[0] - middle_of(TRUTH, PARALLAX)[0])) / PX_PER_MM < 0.1


@pytest.mark.parametrize(("declared_mm", "ring_from_one_start"), [(np.nan, True), (32.0, False)])
def test_a_ring_round_a_size_read_wrong_is_fitted_from_one_start(
    declared_mm: float, ring_from_one_start: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # read at 28.5 mm on part of its rim, put to 32 mm (by its unit's vote, or a roster): the ring of starts round the
    # reading spreads them already, so each is fitted from the first start along the nadir line only, but for a
    # roster's declared base
    grey, dets = _detected_with_figure(4.0)
    off_px = (32.0 - 28.5) / 2 * PX_PER_MM
    misread = dataclasses.replace(
        dets, center_px=dets.center_px + np.array([[off_px, 0.0]]), radius_px=np.array([28.5 / 2 * PX_PER_MM])
    )
    flags = []

    def fit_outlines_seen(*args: object, **kwargs: object) -> OutlineFit:
        flags.append(kwargs.get("first_start_only"))
        return fit_outlines(*args, **kwargs)

    monkeypatch.setattr(vision.known, "fit_outlines", fit_outlines_seen)
    known = fit_known_bases(grey, PX_PER_MM, SETTINGS, misread, np.array([declared_mm]), None, PARALLAX)
    ring = len(SETTINGS.known.misread_start_steps) * SETTINGS.known.misread_start_directions
    assert flags[0] is not None
    assert flags[0].tolist() == [False] + [ring_from_one_start] * ring
    assert known.diameter_mm[0] == 32.0
    assert np.hypot(*(known.center_px[0] - middle_of(TRUTH, PARALLAX)[0])) / PX_PER_MM < 0.1


INF = np.inf


@pytest.mark.parametrize(
    ("pulls", "places_px", "margin", "spread_px"),
    [
        # one start: nothing to disagree with
        ([1.0], [0.0], 0.25, 0.0),
        # the others end far worse, or fail: the kept fit stands alone
        ([1.0, 1.3, INF], [0.0, 5.0, 9.0], 0.25, 0.0),
        # one ends about as well 3 px away; a farther one pulls too much more
        ([1.0, 1.2, 1.4], [0.0, 3.0, 6.0], 0.25, 3.0),
        ([1.0, 1.2, 1.4], [0.0, 3.0, 6.0], 0.5, 6.0),
        # the kept one is the least pull, wherever it lies among the starts
        ([1.3, 1.0, 1.1], [4.0, 1.0, 0.0], 0.25, 1.0),
    ],
)
def test_the_spread_of_a_bases_starts_counts_the_fits_about_as_good_as_the_kept_one(
    pulls: list[float], places_px: list[float], margin: float, spread_px: float
) -> None:
    # two bases: the first with one start far off, then the starts under test
    pull = np.array([1.0, *pulls])
    middle = np.column_stack([np.array([100.0, *places_px]), np.zeros(len(pulls) + 1)])
    group = np.array([0, *[1] * len(pulls)])
    kept = np.array([0, 1 + int(np.argmin(pulls))])
    np.testing.assert_allclose(_start_spread_px(middle, pull, group, kept, margin), [0.0, spread_px])


@pytest.mark.parametrize(
    ("rim_mm", "declared_mm", "size_mm", "size_doubt"),
    [
        (3.0, np.nan, 32.0, True),
        (5.0, np.nan, 32.0, True),
        (5.0, 32.0, 32.0, False),
        # a roster's size stands even where the base was read at another
        (5.0, 40.0, 40.0, False),
    ],
)
def test_bases_no_roster_declares_are_fitted_again_at_the_size_read(
    rim_mm: float, declared_mm: float, size_mm: float, size_doubt: bool
) -> None:
    grey, dets = _detected_with_figure(rim_mm)
    known = fit_known_bases(grey, PX_PER_MM, SETTINGS, dets, np.array([declared_mm]), None, PARALLAX)
    assert known.diameter_mm[0] == size_mm and known.radius_px[0] == size_mm / 2.0 * PX_PER_MM
    # a size read keeps the doubt it was read with; a declared one has none
    assert known.diameter_sigma_mm[0] == (dets.diameter_sigma_mm[0] if size_doubt else 0.0)
    if size_doubt:
        error_mm = np.hypot(*(known.center_px[0] - middle_of(TRUTH, PARALLAX)[0])) / PX_PER_MM
        assert error_mm < 0.1
        assert known.center_px[0].tolist() != dets.center_px[0].tolist()


@pytest.mark.parametrize("rim_mm", [3.0, 5.0])
def test_with_the_size_held_the_rim_height_leans_less_on_the_one_assumed(rim_mm: float) -> None:
    # the rim's height (assumed 4 mm) is fitted with read_height_sigma where the size is held: a lean as tight as
    # the free fit's would keep a rim 1 mm off the one assumed from showing, and the centre with it
    grey, dets = _detected_with_figure(rim_mm)
    truth = middle_of(TRUTH, PARALLAX)[0]

    def error_mm(height_sigma: float) -> float:
        settings = SETTINGS.replaced({"known.read_height_sigma": height_sigma})
        known = fit_known_bases(grey, PX_PER_MM, settings, dets, np.array([np.nan]), None, PARALLAX)
        return float(np.hypot(*(known.center_px[0] - truth)) / PX_PER_MM)

    assert error_mm(SETTINGS.known.read_height_sigma) < 0.5 * error_mm(0.02)


@pytest.mark.parametrize(
    ("case", "diameter_mm", "settings", "parallax"),
    [
        ("size not known", np.array([np.nan]), SETTINGS.replaced({"known.refit_read_sizes": False}), PARALLAX),
        (
            "size not known, too coarse for the free fit",
            np.array([np.nan]),
            SETTINGS.replaced({"outline.min_px_per_mm": 3.0}),
            PARALLAX,
        ),
        ("size not known, no parallax", np.array([np.nan]), SETTINGS, None),
        ("no parallax", np.array([32.0]), SETTINGS, None),
        (
            "too coarse for the fit at a known size",
            np.array([32.0]),
            SETTINGS.replaced({"known.min_px_per_mm": 3.0}),
            PARALLAX,
        ),
    ],
)
def test_known_bases_left_as_found(
    case: str, diameter_mm: NDArray[np.float64], settings: VisionSettings, parallax: RimParallax | None
) -> None:
    grey, dets = _detected_with_figure(5.0)
    known = fit_known_bases(grey, PX_PER_MM, settings, dets, diameter_mm, None, parallax)
    assert known is dets, case


@pytest.mark.parametrize(
    ("outline_min", "known_min", "height_known", "fitted"),
    [
        (1.0, 1.0, True, True),
        (3.0, 1.0, True, True),
        (3.0, 3.0, True, False),
        (1.0, 3.0, True, False),
        (1.0, 1.0, False, True),
        (3.0, 1.0, False, False),
    ],
)
def test_the_fit_at_a_known_size_has_a_resolution_floor_of_its_own(
    outline_min: float, known_min: float, height_known: bool, fitted: bool
) -> None:
    # an image too coarse for the free appearance fit (the edges read the base) may still serve the fit at a known
    # size and height, where only the centre and the blur are free; with the height unknown it would trade off
    # against the footprint again, so there the size alone is not enough
    grey, dets = _detected_with_figure(3.0)
    coarse = SETTINGS.replaced({"outline.min_px_per_mm": outline_min, "known.min_px_per_mm": known_min})
    dets = detect_bases(grey, PX_PER_MM, coarse, parallax=PARALLAX)
    height = np.array([3.0 / RIM_MM if height_known else np.nan])
    known = fit_known_bases(grey, PX_PER_MM, coarse, dets, np.array([32.0]), height, PARALLAX)
    error_mm = np.hypot(*(known.center_px[0] - middle_of(TRUTH, PARALLAX)[0])) / PX_PER_MM
    assert (known is not dets) == fitted
    assert (known.diameter_sigma_mm[0] == 0.0) == fitted
    if fitted:
        assert error_mm < 0.05


def test_known_bases_need_one_size_per_detection() -> None:
    grey, dets = _detected_with_figure(4.0)
    with pytest.raises(VisionError, match=r"one size and one height ratio per detection \(1,\), got \(2,\)"):
        fit_known_bases(grey, PX_PER_MM, SETTINGS, dets, np.array([32.0, 25.0]))


# Twelve bases round a nadir in the middle of the view, each casting a shadow the same way (one main light).
CAST_NADIR_PX = (240.0, 180.0)
CAST_VIEW = vs.RaisedView(PX_PER_MM, (360, 480), CAST_NADIR_PX, SHIFT_RATIO, SHADOW_MM)
CAST_PARALLAX = RimParallax(CAST_NADIR_PX, SHIFT_RATIO)
CAST_TRUTH = np.array([(70.0 + 110 * i + 3.3 * j, 70.0 + 110 * j + 1.7 * i) for i in range(4) for j in range(3)])
# The fit at a known size from where the base was detected and half a shift towards the nadir only: from a start a
# whole shift towards it, some footprints the shadow pulls come out nearer, and the smeared base's kept fit pulls more,
# which mixes the starts into what these frames measure (the cast shadow's pull, the blur's share of the sigma).
TWO_STARTS = (0.0, 1.0)


@functools.cache
def _cast_frame(angle_deg: float | None, length_mm: float = 2.5, depth: float = 0.5) -> NDArray[np.uint8]:
    turn = math.radians(angle_deg or 0.0)
    cast = length_mm * PX_PER_MM * np.array([math.cos(turn), math.sin(turn)])
    centers = [(float(x), float(y)) for x, y in CAST_TRUTH]
    return vs.draw_raised_bases(
        CAST_VIEW, centers, 14.25, 80.0, 30.0, 90.0, 0.3, (cast[0], cast[1]), 0.0 if angle_deg is None else depth, 4
    )


@pytest.mark.parametrize(("angle_deg", "bases"), [(0.0, 12), (135.0, 12), (250.0, 12), (None, 12), (135.0, 6)])
def test_the_shadows_of_one_light_are_found(angle_deg: float | None, bases: int) -> None:
    # the direction the bases' darker sides agree on, at the length set; no direction when none is cast, or when
    # there are too few bases (cast_min_bases 8) to tell one from chance
    grey = _cast_frame(angle_deg)
    truth = CAST_TRUTH[:bases]
    start = middle_of(truth, CAST_PARALLAX) + 0.3
    radius = np.full(bases, 14.25 * PX_PER_MM)
    cast = cast_shadow_px(
        grey, start, radius, DIRECTIONS, PX_PER_MM, CAST_PARALLAX, SETTINGS, radius_known=True, height_ratio=None
    )
    if angle_deg is None or bases < SETTINGS.outline.cast_min_bases:
        np.testing.assert_array_equal(cast, [0.0, 0.0])
        return
    assert np.hypot(*cast) == pytest.approx(SETTINGS.outline.cast_shadow_mm * PX_PER_MM)
    off_deg = (math.degrees(math.atan2(cast[1], cast[0])) - angle_deg + 180.0) % 360.0 - 180.0
    assert abs(off_deg) < 20.0


@pytest.mark.parametrize("angle_deg", [0.0, 135.0, 250.0])
def test_a_cast_shadow_modelled_no_longer_pulls_the_footprint(angle_deg: float) -> None:
    grey = _cast_frame(angle_deg)
    n = len(CAST_TRUTH)
    ones = np.ones(n)
    expected = middle_of(CAST_TRUTH, CAST_PARALLAX)
    dets = BaseDetections(expected + 0.4, np.full(n, 14.25 * PX_PER_MM), np.full(n, 28.5), *([ones] * 7))
    errors = []
    for length_mm in (0.0, SETTINGS.outline.cast_shadow_mm):
        settings = SETTINGS.replaced({"outline.cast_shadow_mm": length_mm, "known.starts": TWO_STARTS})
        known = fit_known_bases(grey, PX_PER_MM, settings, dets, np.full(n, 28.5), ones, CAST_PARALLAX)
        errors.append(float(np.mean(np.hypot(*(known.center_px - expected).T))) / PX_PER_MM)
    without, with_cast = errors
    assert with_cast < 0.04 and with_cast < 0.7 * without


def _fits_with_blur(blur_px: list[float], ok: list[bool]) -> OutlineFit:
    k = len(blur_px)
    fit = OutlineFit.none(k)
    return dataclasses.replace(fit, sigma_px=np.array(blur_px), ok=np.array(ok))


# the frame's blur is the median of the usable fits' and of the frame's other fits' (1.0 px in every case); 1.1
# times it is free
TWICE_MM = 2.0 * math.sqrt(4.0 - 1.21) / 2.0
EXCESS_CASES = [
    ("every base blurred alike", [1.0] * 8, [True] * 8, None, [0.0] * 8),
    ("within the free tenth", [1.0] * 7 + [1.1], [True] * 8, None, [0.0] * 8),
    ("one base at twice the blur", [1.0] * 7 + [2.0], [True] * 8, None, [0.0] * 7 + [TWICE_MM]),
    ("too few fits to tell the frame's blur", [1.0] * 6 + [2.0], [True] * 7, None, [0.0] * 7),
    ("too few here, an earlier look tells it", [1.0, 2.0], [True] * 2, [1.0] * 6, [0.0, TWICE_MM]),
    ("too few here and there", [1.0, 2.0], [True] * 2, [1.0] * 5, [0.0, 0.0]),
    (
        "a failed fit neither counts nor is scored",
        [1.0] * 8 + [5.0, 2.0],
        [True] * 8 + [False, True],
        None,
        [0.0] * 8 + [TWICE_MM],
    ),
]


@pytest.mark.parametrize(("case", "blur_px", "ok", "frame_px", "expected_mm"), EXCESS_CASES)
def test_blur_beyond_the_frames_own_adds_to_the_sigma(
    case: str, blur_px: list[float], ok: list[bool], frame_px: list[float] | None, expected_mm: list[float]
) -> None:
    settings = SETTINGS.replaced(
        {"outline.excess_blur_free": 1.1, "outline.excess_blur_scale": 2.0, "outline.excess_blur_min_bases": 8}
    )
    frame = None if frame_px is None else np.array(frame_px)
    got = excess_blur_mm(_fits_with_blur(blur_px, ok), PX_PER_MM, settings, frame)
    np.testing.assert_allclose(got, expected_mm, atol=1e-12, err_msg=case)


def _smeared_frame(smear_px: float) -> NDArray[np.uint8]:
    """The twelve bases without a cast shadow, the first smeared by a Gaussian of ``smear_px`` (0: none)."""
    grey = _cast_frame(None).copy()
    if smear_px:
        x, y = (int(v) for v in CAST_TRUTH[0])
        reach = int(22 * PX_PER_MM)
        patch = grey[y - reach : y + reach, x - reach : x + reach]
        grey[y - reach : y + reach, x - reach : x + reach] = cv2.GaussianBlur(patch, (0, 0), smear_px)
    return grey


def _smeared_sigmas(roster: bool, smear_px: float, settings: VisionSettings) -> tuple[float, NDArray[np.float64]]:
    """The model sigma (mm) of the smeared base and those of the other eleven, fitted at their known size (``roster``)
    or found without a roster."""
    grey = _smeared_frame(smear_px)
    n = len(CAST_TRUTH)
    truth = middle_of(CAST_TRUTH, CAST_PARALLAX)
    if roster:
        ones = np.ones(n)
        dets = BaseDetections(truth + 0.4, np.full(n, 14.25 * PX_PER_MM), np.full(n, 28.5), *([ones] * 7))
        sigma = fit_known_bases(grey, PX_PER_MM, settings, dets, np.full(n, 28.5), ones, CAST_PARALLAX).model_sigma_mm
    else:
        dets = detect_bases(grey, PX_PER_MM, settings, parallax=CAST_PARALLAX)
        found = np.argmin(np.hypot(*(dets.center_px[:, None, :] - truth[None, :, :]).transpose(2, 0, 1)), axis=0)
        assert len(dets) == n and len(set(found.tolist())) == n
        sigma = dets.model_sigma_mm[found]
    return float(sigma[0]), sigma[1:]


# without a roster, smeared harder than 1.5 px the edges no longer find that base
SMEAR_CASES = [
    ("known size, none smeared", True, 0.0, SETTINGS.outline.excess_blur_scale, False),
    ("known size, smeared", True, 2.5, SETTINGS.outline.excess_blur_scale, True),
    ("known size, smeared, the excess not counted", True, 2.5, 0.0, False),
    ("no roster, none smeared", False, 0.0, SETTINGS.outline.excess_blur_scale, False),
    ("no roster, smeared", False, 1.5, SETTINGS.outline.excess_blur_scale, True),
    ("no roster, smeared, the excess not counted", False, 1.5, 0.0, False),
]


@pytest.mark.parametrize(("case", "roster", "smear_px", "scale", "less_sure"), SMEAR_CASES)
def test_a_base_smeared_beyond_the_frames_blur_is_less_sure(
    case: str, roster: bool, smear_px: float, scale: float, less_sure: bool
) -> None:
    # something the model lacks smears one base's edge (a figure's arm over the rim): its fit needs more blur than
    # the other eleven, and its sigma says so
    settings = SETTINGS.replaced(
        {"outline.cast_shadow_mm": 0.0, "outline.excess_blur_scale": scale, "known.starts": TWO_STARTS}
    )
    smeared, others = _smeared_sigmas(roster, smear_px, settings)
    if less_sure:
        assert smeared > 3.0 * float(np.median(others)), (case, smeared, others)
    else:
        assert smeared < 1.5 * float(others.max()), (case, smeared, others)
