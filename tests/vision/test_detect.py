"""detect_bases on drawn top-down scenes with exact ground truth: recall, precision, centre error, sizes,
touching pairs, things that are not bases, masks, empty images and bad input."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pytest

from tableref.config import load_config
from tests.vision import vision_scenes as vs
from tests.vision.detect_helpers import DEFAULT_SETTINGS, FIGURE_PAINT, LOOKS, SETTINGS, Match, layout_scene, match
from vision import (
    BaseDetections,
    ImageError,
    MaskError,
    ScaleError,
    SettingsError,
    VisionSettings,
    detect_bases,
)
from vision.cues import figure_contrast, least_figure
from vision.rim import ray_directions

# px/mm, look, seed, median centre error bound (px)
SCENES = [
    (1.0, "clean", 1, 0.05),
    (2.0, "clean", 2, 0.05),
    (4.0, "clean", 3, 0.05),
    (1.0, "textured", 4, 0.2),
    (2.0, "textured", 5, 0.12),
    (4.0, "textured", 6, 0.08),
    (2.0, "rough", 7, 0.2),
    (4.0, "rough", 8, 0.15),
]


@pytest.mark.parametrize(("px_per_mm", "look", "seed", "median_px"), SCENES)
def test_every_base_found_once_with_its_size(px_per_mm: float, look: str, seed: int, median_px: float) -> None:
    scene = layout_scene(px_per_mm, LOOKS[look], seed)
    dets = detect_bases(scene.image_bgr, px_per_mm, SETTINGS)
    m = match(scene, dets)
    assert len(m.truth_index) == len(scene.bases), "every base found"
    assert m.extra == 0, "nothing else reported"
    np.testing.assert_array_equal(dets.diameter_mm[m.det_index], scene.diameters_mm[m.truth_index])
    assert np.median(m.distance_px) < median_px
    assert np.all(m.distance_px < 4 * median_px)
    # the reported fit quality describes what was seen
    assert np.all((dets.edge_coverage >= SETTINGS.verdicts.min_edge_coverage) & (dets.edge_coverage <= 1))
    assert np.all(dets.fit_rms_px <= SETTINGS.circle.max_rms_px)
    assert np.all((dets.score > 0) & (dets.score <= 1))
    assert np.all(np.diff(dets.score) <= 0), "best first"


@pytest.mark.parametrize(("px_per_mm", "look", "seed"), [(2.0, "textured", 5), (1.0, "textured", 4)])
@pytest.mark.parametrize("which", [[0], [1, 2], []])
def test_only_bases_that_reach_into_the_wanted_boxes_are_looked_for(
    px_per_mm: float, look: str, seed: int, which: list[int]
) -> None:
    scene = layout_scene(px_per_mm, LOOKS[look], seed)
    everywhere = detect_bases(scene.image_bgr, px_per_mm, SETTINGS)
    # a small box on each chosen base's rim: the base reaches into it, its neighbours need not
    radius = scene.diameters_mm / 2 * px_per_mm
    boxes = np.array(
        [
            [c[0] + 0.8 * r - 1, c[1] - 1, c[0] + 0.8 * r + 1, c[1] + 1]
            for c, r in zip(scene.centers_px[which], radius[which], strict=True)
        ]
    ).reshape(-1, 4)
    wanted = detect_bases(scene.image_bgr, px_per_mm, SETTINGS, wanted_px=boxes)
    m = match(scene, wanted)
    assert set(which) <= set(m.truth_index.tolist())
    # what it finds elsewhere lies near the boxes: no more than the bases that may reach them
    assert len(wanted) < len(everywhere) or len(scene.bases) <= len(which) + 2
    # and where both find a chosen base, they read it the same
    m_all = match(scene, everywhere)
    for t in which:
        a = wanted.center_px[m.det_index[m.truth_index == t][0]]
        b = everywhere.center_px[m_all.det_index[m_all.truth_index == t][0]]
        assert np.hypot(*(a - b)) < 0.05 * px_per_mm


@pytest.mark.parametrize("px_per_mm", [1.0, 2.0, 4.0])
@pytest.mark.parametrize("gap_mm", [0.0, 1.0])
def test_bases_in_contact_are_both_found_and_their_gap_measured(px_per_mm: float, gap_mm: float) -> None:
    rng = np.random.default_rng(int(px_per_mm * 10 + gap_mm))
    shape = (int(200 * px_per_mm), int(420 * px_per_mm))
    sizes = [(25.0, 25.0), (25.0, 32.0), (28.5, 27.0), (40.0, 60.0), (32.0, 50.0)]
    bases: list[vs.Placed] = []
    x_mm = 10.0
    for n, (d1, d2) in enumerate(sizes):
        width = d1 + d2 + gap_mm
        centre = ((x_mm + width / 2) * px_per_mm, (60 + 80 * (n % 2)) * px_per_mm)
        bases += vs.touching_pair(centre, px_per_mm, d1, d2, gap_mm, float(rng.uniform(-0.5, 0.5)))
        x_mm += width / 2 + 12
    scene = vs.draw_scene(shape, px_per_mm, bases, rng, vs.TEXTURED)
    dets = detect_bases(scene.image_bgr, px_per_mm, SETTINGS)
    m = match(scene, dets)
    assert len(m.truth_index) == len(bases)
    assert m.extra == 0
    found = dict(zip(m.truth_index.tolist(), m.det_index.tolist(), strict=True))
    for a in range(0, len(bases), 2):
        i, j = found[a], found[a + 1]
        assert dets.diameter_mm[i] == bases[a].diameter_mm and dets.diameter_mm[j] == bases[a + 1].diameter_mm
        # edge to edge, with the snapped sizes, as the rules measure it: right to a fraction of a pixel, and
        # within 3 of its own sigmas
        centre_mm = math.dist(dets.center_px[i], dets.center_px[j]) / px_per_mm
        gap = centre_mm - (dets.diameter_mm[i] + dets.diameter_mm[j]) / 2
        sigma_mm = math.hypot(dets.center_sigma_px[i], dets.center_sigma_px[j]) / px_per_mm
        assert abs(gap - gap_mm) <= max(0.1, 0.35 / px_per_mm)
        assert abs(gap - gap_mm) <= 3 * sigma_mm


@pytest.mark.parametrize("px_per_mm", [1.0, 2.0, 4.0])
def test_every_standard_size_snaps_to_itself(px_per_mm: float) -> None:
    rng = np.random.default_rng(40 + int(px_per_mm))
    shape = (int(260 * px_per_mm), int(560 * px_per_mm))
    bases = []
    x_mm, y_mm = 10.0, 60.0
    for d in vs.STANDARD_SIZES_MM:
        if x_mm + d > 550:
            x_mm, y_mm = 10.0, 190.0
        bases.append(
            vs.Placed(((x_mm + d / 2 + rng.uniform(0, 1)) * px_per_mm, (y_mm + rng.uniform(0, 1)) * px_per_mm), d)
        )
        x_mm += d + 8
    scene = vs.draw_scene(shape, px_per_mm, bases, rng, dataclasses.replace(vs.TEXTURED, shadows=False))
    dets = detect_bases(scene.image_bgr, px_per_mm, SETTINGS)
    m = match(scene, dets)
    assert len(m.truth_index) == len(bases) and m.extra == 0
    np.testing.assert_array_equal(dets.diameter_mm[m.det_index], scene.diameters_mm[m.truth_index])
    # the fitted radius (after the rim model) is the footprint's, inside the snapping tolerance
    radius_mm = dets.radius_px[m.det_index] / px_per_mm
    np.testing.assert_allclose(2 * radius_mm, scene.diameters_mm[m.truth_index], atol=SETTINGS.snap_tolerance_mm)


def distractor_scene(px_per_mm: float, kinds: tuple[str, ...], seed: int) -> tuple[vs.Scene, vs.Distractors]:
    rng = np.random.default_rng(seed)
    shape = (int(300 * px_per_mm), int(450 * px_per_mm))

    def at(x: float, y: float) -> tuple[float, float]:
        return (x * px_per_mm, y * px_per_mm)

    d = vs.Distractors()
    if "dice" in kinds:
        d.dice += [(at(40, 40), 16.0), (at(90, 40), 12.0), (at(140, 45), 20.0)]
    if "rings" in kinds:
        d.printed_rings += [(at(215, 45), 32.0), (at(300, 60), 50.0), (at(60, 250), 25.0)]
    if "rings at sizes" in kinds:
        # lines 0.8 mm wide whose outer edge is a standard size: the size alone cannot tell them
        d.printed_rings += [(at(215, 45), 31.2), (at(300, 60), 49.2), (at(60, 250), 24.2)]
    if "markers" in kinds:
        d.markers += [(at(385, 70), 70.0)]
    if "tokens" in kinds:
        d.tokens += [(at(150, 250), 20.0), (at(205, 262), 15.0)]
    things = d.dice + d.printed_rings + d.tokens
    keep_out = [(c, (s * 0.75 + 4) * px_per_mm) for c, s in things] + [(c, 60 * px_per_mm) for c, _ in d.markers]
    bases = vs.random_layout(rng, shape, px_per_mm, 8, keep_out=keep_out)
    return vs.draw_scene(shape, px_per_mm, bases, rng, vs.TEXTURED, d), d


# Printed rings are thin lines; at about 1 px/mm they blur into a base's dark wall (a documented limit).
@pytest.mark.parametrize(
    ("px_per_mm", "kinds", "seed"),
    [
        (1.0, ("dice", "tokens", "markers"), 50),
        (2.0, ("dice", "tokens", "markers", "rings"), 51),
        (4.0, ("dice", "tokens", "markers", "rings"), 52),
        (2.0, ("rings",), 53),
        (2.0, ("rings at sizes",), 55),
        (4.0, ("rings at sizes",), 56),
        (4.0, ("dice",), 54),
    ],
)
def test_dice_tokens_markers_and_printed_rings_are_not_bases(
    px_per_mm: float, kinds: tuple[str, ...], seed: int
) -> None:
    scene, _ = distractor_scene(px_per_mm, kinds, seed)
    dets = detect_bases(scene.image_bgr, px_per_mm, SETTINGS)
    m = match(scene, dets)
    assert len(m.truth_index) == len(scene.bases), "the bases are still found"
    assert m.extra == 0, "and nothing else"


# A base standing inside a printed ring a little larger than itself (an objective marker on the mat): the ring is the
# outermost ring round the seed, and fails as a base; the base's own rim is the best supported ring inside it.
@pytest.mark.parametrize(
    ("px_per_mm", "base_mm", "ring_mm", "seed"),
    [(2.0, 25.0, 34.0, 7), (2.0, 25.0, 34.0, 8), (2.0, 32.0, 42.0, 7), (2.0, 32.0, 42.0, 8), (3.0, 25.0, 34.0, 8)],
)
def test_a_base_inside_a_printed_ring_is_read_by_its_own_rim(
    px_per_mm: float, base_mm: float, ring_mm: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    middle = (60 * px_per_mm, 60 * px_per_mm)
    rings = vs.Distractors(printed_rings=[(middle, ring_mm)])
    scene = vs.draw_scene(
        (int(120 * px_per_mm), int(120 * px_per_mm)), px_per_mm, [vs.Placed(middle, base_mm)], rng, vs.TEXTURED, rings
    )
    dets = detect_bases(scene.image_bgr, px_per_mm, SETTINGS)
    m = match(scene, dets)
    assert len(m.truth_index) == 1 and m.extra == 0
    assert dets.diameter_mm.tolist() == [base_mm]
    assert m.distance_px[0] < 0.25 * px_per_mm
    # the outermost ring alone loses the base
    outermost_only = detect_bases(scene.image_bgr, px_per_mm, SETTINGS.replaced({"rim.second_ring_mm": 0.0}))
    assert len(match(scene, outermost_only).truth_index) == 0


def test_masked_pixels_are_ignored() -> None:
    px_per_mm = 2.0
    scene, _ = distractor_scene(px_per_mm, ("markers",), 60)
    mask = scene.marker_mask.copy()
    # hide the left third of the table as well: its bases are off limits
    mask[:, : mask.shape[1] // 3] = 255
    dets = detect_bases(scene.image_bgr, px_per_mm, SETTINGS, mask=mask)
    visible = scene.centers_px[:, 0] > mask.shape[1] / 3 + scene.diameters_mm / 2 * px_per_mm
    m = match(scene, dets)
    assert m.extra == 0
    assert set(m.truth_index.tolist()) >= set(np.flatnonzero(visible).tolist())
    assert np.all(dets.center_px[:, 0] > mask.shape[1] / 3)
    # a boolean mask works the same
    dets_bool = detect_bases(scene.image_bgr, px_per_mm, SETTINGS, mask=mask > 0)
    np.testing.assert_allclose(dets_bool.center_px, dets.center_px)


# Per-pixel noise of this spread (grey levels, each channel) over a plain mat: several times a camera's. Uniform noise
# over every level (0-255) is no image of a table: at 2 px/mm its chance circles pass a colour rim's roundness bar.
HEAVY_NOISE = 20.0
MAT_BGR = (90, 130, 120)


@pytest.mark.parametrize(
    ("kind", "px_per_mm"),
    [("uniform", 2.0), ("mat", 2.0), ("noise", 2.0), ("noise", 1.0)],
)
def test_images_without_bases_give_empty_detections(kind: str, px_per_mm: float) -> None:
    rng = np.random.default_rng(70)
    shape = (500, 700)
    if kind == "uniform":
        image = np.full((*shape, 3), 120, np.uint8)
    elif kind == "mat":
        image = vs.draw_scene(shape, px_per_mm, [], rng, vs.ROUGH).image_bgr
    else:
        noisy = np.asarray(MAT_BGR, np.float64) + rng.normal(0.0, HEAVY_NOISE, (*shape, 3))
        image = np.clip(noisy, 0, 255).astype(np.uint8)
    dets = detect_bases(image, px_per_mm, SETTINGS)
    assert len(dets) == 0
    assert dets.center_px.shape == (0, 2)


def test_grey_input_gives_the_same_bases() -> None:
    scene = layout_scene(2.0, vs.CLEAN, 80, count=4)
    grey = scene.image_bgr @ np.array([0.114, 0.587, 0.299])
    dets_bgr = detect_bases(scene.image_bgr, 2.0, SETTINGS)
    dets_grey = detect_bases(np.round(grey).astype(np.uint8), 2.0, SETTINGS)
    assert len(dets_grey) == len(dets_bgr)
    np.testing.assert_allclose(
        dets_grey.center_px[np.lexsort(dets_grey.center_px.T)],
        dets_bgr.center_px[np.lexsort(dets_bgr.center_px.T)],
        atol=0.02,
    )


def test_reported_sigma_is_honest() -> None:
    """Over textured scenes about 95 % of per-axis centre errors lie within 2 sigma, and sigma is not inflated
    far beyond the errors."""
    z, sigma, err = [], [], []
    for seed in range(3):
        scene = layout_scene(2.0, vs.TEXTURED, 90 + seed)
        dets = detect_bases(scene.image_bgr, 2.0, SETTINGS)
        m = match(scene, dets)
        s = dets.center_sigma_px[m.det_index]
        z += list((np.abs(m.error_px) / s[:, None]).ravel())
        sigma += list(s)
        err += list(np.abs(m.error_px).ravel())
    z_arr = np.array(z)
    assert 0.85 <= np.mean(z_arr <= 2.0) <= 1.0
    assert np.mean(z_arr <= 1.0) >= 0.55
    assert np.median(sigma) < 4 * np.median(err)


BAD_INPUT = [
    ("not an array", 2.0, None, ImageError, "numpy array"),
    (np.zeros((100, 100, 3), np.float32), 2.0, None, ImageError, "uint8"),
    (np.zeros((100, 100, 4), np.uint8), 2.0, None, ImageError, "shape"),
    (np.zeros((1, 100, 3), np.uint8), 2.0, None, ImageError, "at least"),
    (np.zeros((100, 100, 3), np.uint8), 0.0, None, ScaleError, "positive"),
    (np.zeros((100, 100, 3), np.uint8), -2.0, None, ScaleError, "positive"),
    (np.zeros((100, 100, 3), np.uint8), float("nan"), None, ScaleError, "positive"),
    (np.zeros((100, 100, 3), np.uint8), "2", None, ScaleError, "number"),
    (np.zeros((100, 100, 3), np.uint8), 0.2, None, ScaleError, "px/mm"),
    (np.zeros((100, 100, 3), np.uint8), 2.0, np.zeros((50, 50), np.uint8), MaskError, "shape"),
    (np.zeros((100, 100, 3), np.uint8), 2.0, np.zeros((100, 100), np.float32), MaskError, "uint8"),
]


@pytest.mark.parametrize(("image", "px_per_mm", "mask", "error", "words"), BAD_INPUT)
def test_bad_input_raises_named_errors(
    image: object, px_per_mm: object, mask: np.ndarray | None, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        detect_bases(image, px_per_mm, SETTINGS, mask=mask)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"base_sizes_mm": ()}, "base_sizes_mm"),
        ({"base_sizes_mm": (25.0, -3.0)}, "base_sizes_mm"),
        ({"rim.rays": 4}, "rim.rays"),
        ({"verdicts.min_edge_coverage": 1.5}, "verdicts.min_edge_coverage"),
        ({"verdicts.disc_inner_mm": (2.0, 1.0)}, "verdicts.disc_inner_mm"),
        ({"snap_tolerance_mm": float("inf")}, "finite"),
        ({"rim.sample_step_px": 0.0}, "rim.sample_step_px"),
        ({"rim.rays": 100, "outline.sectors": 12}, "outline.sectors must divide rim.rays"),
        ({"other_readings.max_rms_px": 0.0}, "other_readings.max_rms_px"),
        ({"other_readings.unseen_rim_coverage": 0.0}, "other_readings.unseen_rim_coverage must be in"),
        ({"other_readings.unseen_rim_sigma_share": -0.5}, "other_readings.unseen_rim_sigma_share must not be negative"),
        ({"outline.height_ratio": (1.1, 1.5)}, "outline.height_ratio"),
        ({"outline.height_sigma": 0.0}, "outline.height_sigma"),
        ({"other_readings.shifts": -1}, "other_readings.shifts"),
        ({"known.misfit_scale": -1.0}, "known.misfit_scale must not be negative"),
        ({"known.starts": ()}, "known.starts must list at least one start"),
        ({"known.read_starts": ()}, "known.read_starts must list at least one start"),
        ({"known.read_height_sigma": 0.0}, "known.read_height_sigma must be positive"),
        ({"size_vote.ring": (0.9, 0.7)}, "size_vote.ring must be"),
        ({"size_vote.ring": (0.7, 1.2)}, "size_vote.ring must be"),
        ({"size_vote.hops": 0}, "size_vote.hops must be at least 1"),
        ({"size_vote.colour": -1.0}, "size_vote.colour must not be negative"),
        ({"known.height_pool_min": -1}, "known.height_pool_min must not be negative"),
        ({"known.height_pool_gain": -0.5}, "known.height_pool_gain must not be negative"),
        ({"known.height_pool_starts": ()}, "known.height_pool_starts must list at least one start"),
        ({"outline.other_start_share": -0.1}, "outline.other_start_share must not be negative"),
        ({"rim.second_ring_mm": -1.0}, "rim.second_ring_mm must not be negative"),
        ({"rim.inner_ring_fraction": -0.1}, "rim.inner_ring_fraction must not be negative"),
        ({"overlaps.coarse_max_mm": -1.0}, "overlaps.coarse_max_mm must not be negative"),
        ({"rim.model_fallback_mm": -1.0}, "rim.model_fallback_mm must not be negative"),
        ({"outline.astray_short_mm": -1.0}, "outline.astray_short_mm must not be negative"),
        ({"verdicts.round_end_max_wobble": -0.1}, "verdicts.round_end_max_wobble must not be negative"),
        ({"verdicts.round_end_min_contrast": -1.0}, "verdicts.round_end_min_contrast must not be negative"),
        ({"overlaps.nest_top_mm": -1.0}, "overlaps.nest_top_mm must not be negative"),
        ({"overlaps.nest_score_share": -0.5}, "overlaps.nest_score_share must not be negative"),
        ({"verdicts.die_square_agreement": -0.1}, "verdicts.die_square_agreement must not be negative"),
        ({"outline.wall_dark_far": 0.1}, "outline.wall_dark_far must be at least wall_dark_max"),
        ({"outline.wall_light_far": 0.5}, "outline.wall_light_far at most wall_light_min"),
        ({"outline.wall_far_doubt": 0.2}, "outline.wall_far_doubt not below it"),
        ({"finder.no_such_setting": 1.0}, "no such vision setting"),
        ({"no_such_group.reach_mm": 1.0}, "no such vision setting"),
    ],
)
def test_inconsistent_settings_are_refused(change: dict[str, object], words: str) -> None:
    with pytest.raises(SettingsError, match=words):
        SETTINGS.replaced(change)  # type: ignore[arg-type]
    assert isinstance(SETTINGS, VisionSettings)


@pytest.mark.parametrize(("px_per_mm", "seed"), [(1.0, 90), (2.0, 91)])
def test_a_disc_without_a_figure_is_not_a_base(px_per_mm: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = (int(120 * px_per_mm), int(200 * px_per_mm))
    bases = [vs.Placed((60 * px_per_mm, 60 * px_per_mm), 32.0), vs.Placed((140 * px_per_mm, 60 * px_per_mm), 32.0)]
    figured = vs.draw_scene(shape, px_per_mm, bases[:1], rng, vs.TEXTURED)
    plain = vs.draw_scene(shape, px_per_mm, bases[1:], np.random.default_rng(seed), vs.CLEAN)
    # the left half from the scene with a figure, the right half (a plain disc, like a token) from the other
    image = figured.image_bgr.copy()
    image[:, shape[1] // 2 :] = plain.image_bgr[:, shape[1] // 2 :]
    dets = detect_bases(image, px_per_mm, DEFAULT_SETTINGS)
    assert len(dets) == 1
    assert abs(dets.center_px[0, 0] - 60 * px_per_mm) < 2


@pytest.mark.parametrize(
    ("px_per_mm", "count", "changed", "found"),
    [
        # a unit of three or four on plain bases (no figure on any), 5 mm apart, is found whole where figures blur
        # (drawn flat, with no wall, they pass for printed discs where the appearance fit runs) ...
        (1.0, 3, {}, 3),
        (1.0, 5, {}, 5),
        # ... but not with the group rule off, nor two alone (a pair of tokens)
        (1.0, 3, {"kin.group_min": 0}, 0),
        (1.0, 2, {}, 0),
    ],
)
def test_a_unit_on_plain_bases_is_found_as_a_group(
    px_per_mm: float, count: int, changed: dict[str, float], found: int
) -> None:
    shape = (int(100 * px_per_mm), int((80 + 37 * count) * px_per_mm))
    centres_px = np.array([((40 + 37 * i) * px_per_mm, 50 * px_per_mm) for i in range(count)])
    sand, green = (120.0, 160.0, 190.0), (70.0, 110.0, 80.0)
    # drawn as flat discs of the base's colour, with no figure: what a bare base looks like from above. The light
    # varies by up to 10 % along the row, which the tops' colours must bear (size_vote.colour)
    plain = [((float(x), float(y)), 32.0) for x, y in centres_px]
    scene = vs.draw_colour_scene(shape, px_per_mm, [], np.random.default_rng(count), green, sand, sand, plain)
    dets = detect_bases(scene.image_bgr, px_per_mm, DEFAULT_SETTINGS.replaced(changed))
    assert len(dets) == found
    if found:
        order = np.argsort(dets.center_px[:, 0])
        np.testing.assert_allclose(dets.center_px[order], centres_px, atol=0.3 * px_per_mm)
        np.testing.assert_array_equal(dets.diameter_mm, 32.0)


@pytest.mark.parametrize(("count", "group_min", "whole"), [(4, 3, True), (5, 3, True), (4, 0, False), (2, 3, False)])
def test_with_the_verifier_a_unit_on_plain_bases_still_stands_as_a_group(
    count: int, group_min: int, whole: bool
) -> None:
    # the default detector: its verifier takes a lone plain disc for a token, but not a unit of them side by side (the
    # finder, off here, sees such discs as bases whatever the verifier says of them)
    settings = load_config().vision.replaced({"kin.group_min": group_min, "finder.seed_probability": 0.0})
    assert settings.verifier.min_probability > 0
    shape = (100, 80 + 37 * count)
    centres_px = np.array([(40.0 + 37 * i, 50.0) for i in range(count)])
    sand, green = (120.0, 160.0, 190.0), (70.0, 110.0, 80.0)
    plain = [((float(x), float(y)), 32.0) for x, y in centres_px]
    scene = vs.draw_colour_scene(shape, 1.0, [], np.random.default_rng(count), green, sand, sand, plain)
    dets = detect_bases(scene.image_bgr, 1.0, settings)
    # without the group (the rule off, or a pair), the verifier alone keeps fewer of them
    assert (len(dets) == count) == whole
    if whole:
        np.testing.assert_allclose(dets.center_px[np.argsort(dets.center_px[:, 0])], centres_px, atol=0.3)


# A 30 mm disc on the mat at 1.5 px/mm (a 4K frame's top-down view), blurred and noisy, with a token's printed
# ring (0.62-0.8 of the radius, the grey levels of a blue token with a light blue ring) or a figure on it, looked at
# from a centre this far off its own: the figure test alone takes a token seen off centre for a base.
_TOKEN_DISC_GREY, _TOKEN_RING_GREY, _MAT_GREY = 62.0, 135.0, 110.0
_FIGURE_BGR = (120.0, 140.0, 170.0)


def _least_and_plain_figure(kind: str, off_mm: float, seed: int) -> tuple[float, float]:
    px_per_mm = 1.5
    rng = np.random.default_rng(seed)
    side = int(60 * px_per_mm)
    middle, radius_px = side / 2, 15 * px_per_mm
    image = np.full((side, side, 3), _MAT_GREY, np.float32)
    vs._disc(image, middle, middle, radius_px, (_TOKEN_DISC_GREY,) * 3)
    if kind == "token":
        vs._ring(image, middle, middle, 0.71 * radius_px, 0.18 * radius_px, (_TOKEN_RING_GREY,) * 3)
    else:
        vs._figure(image, middle, middle, radius_px, px_per_mm, rng, _FIGURE_BGR)
    image = cv2.GaussianBlur(image, (0, 0), 0.8) + rng.normal(0.0, 1.5, image.shape).astype(np.float32)
    grey = cv2.cvtColor(np.clip(image, 0, 255).astype(np.uint8), cv2.COLOR_BGR2GRAY)
    angle = rng.uniform(0.0, 2 * math.pi)
    center = np.array([[middle + off_mm * px_per_mm * math.cos(angle), middle + off_mm * px_per_mm * math.sin(angle)]])
    radius = np.array([radius_px])
    directions = ray_directions(DEFAULT_SETTINGS.rim.rays)
    reach_px = DEFAULT_SETTINGS.verdicts.off_centre_reach_mm * px_per_mm
    least = least_figure(grey, center, radius, directions, DEFAULT_SETTINGS, reach_px)
    return float(least[0]), float(figure_contrast(grey, center, radius, directions, DEFAULT_SETTINGS)[0])


@pytest.mark.parametrize(
    ("kind", "off_mm", "seed", "passes_figure_test", "concentric"),
    [
        ("token", 0.0, 1, False, True),
        ("token", 0.5, 2, True, True),
        ("token", 1.0, 3, True, True),
        ("token", 1.8, 4, True, True),
        ("figure", 0.0, 5, True, False),
        ("figure", 1.0, 6, True, False),
        ("figure", 1.8, 7, True, False),
    ],
)
def test_a_tokens_ring_seen_off_centre_is_the_same_all_the_way_round_from_a_centre_nearby(
    kind: str, off_mm: float, seed: int, passes_figure_test: bool, concentric: bool
) -> None:
    least, plain = _least_and_plain_figure(kind, off_mm, seed)
    assert (plain >= DEFAULT_SETTINGS.verdicts.min_figure_contrast) == passes_figure_test
    assert (least < DEFAULT_SETTINGS.verdicts.off_centre_figure_contrast) == concentric
    assert least <= plain


# Mat and base colours (BGR) of one grey level (BT.601 weights): only colour tells them apart. The figures are
# painted dark red.
ONE_GREY_LEVEL = {
    "grey on mud": ((60.0, 120.0, 150.0), (122.0, 122.0, 122.0)),
    "green on sand": ((90.0, 150.0, 170.0), (60.0, 222.0, 40.0)),
}


def _bases_and_tokens_of_one_grey_level(colours: str, px_per_mm: float, figure_bgr: vs.Colour) -> vs.Scene:
    """Four bases with figures of ``figure_bgr`` and two plain tokens, all of the mat's grey level
    (``ONE_GREY_LEVEL[colours]``)."""
    mat, base = ONE_GREY_LEVEL[colours]
    rng = np.random.default_rng(17)
    shape = (int(150 * px_per_mm), int(260 * px_per_mm))
    bases = [
        vs.Placed((45 * px_per_mm, 45 * px_per_mm), 32.0),
        vs.Placed((120 * px_per_mm, 50 * px_per_mm), 25.0),
        vs.Placed((200 * px_per_mm, 60 * px_per_mm), 40.0),
        vs.Placed((70 * px_per_mm, 110 * px_per_mm), 28.5),
    ]
    tokens = [((150 * px_per_mm, 115 * px_per_mm), 32.0), ((215 * px_per_mm, 120 * px_per_mm), 25.0)]
    return vs.draw_colour_scene(shape, px_per_mm, bases, rng, mat, base, figure_bgr, tokens)


# Not green on sand at 1 px/mm: there the first look reads the 32 mm base as a 27 mm circle on part of its rim and
# part of its dark figure (a limit of the edges, the same in grey alone).
@pytest.mark.parametrize(
    ("colours", "px_per_mm"),
    [("grey on mud", 1.0), ("grey on mud", 2.0), ("grey on mud", 3.0), ("green on sand", 2.0), ("green on sand", 3.0)],
)
def test_a_base_of_the_mats_grey_level_is_found_by_its_colour_and_a_token_is_not(
    colours: str, px_per_mm: float
) -> None:
    scene = _bases_and_tokens_of_one_grey_level(colours, px_per_mm, FIGURE_PAINT)
    dets = detect_bases(scene.image_bgr, px_per_mm, DEFAULT_SETTINGS)
    m = match(scene, dets)
    assert len(m.truth_index) == len(scene.bases), "every base found"
    assert m.extra == 0, "no token taken for a base"
    np.testing.assert_array_equal(dets.diameter_mm[m.det_index], scene.diameters_mm[m.truth_index])
    assert np.max(m.distance_px) < 0.5 * px_per_mm
    grey_only = detect_bases(scene.image_bgr, px_per_mm, DEFAULT_SETTINGS.replaced({"colour.gain": 0.0}))
    assert len(match(scene, grey_only).truth_index) < len(scene.bases), "the grey levels alone do not show them all"


# a figure about 30 grey levels darker than its green base (grey 120 against 149), but of another hue
MAUVE_PAINT = (200.0, 100.0, 130.0)


@pytest.mark.parametrize(
    ("px_per_mm", "changed", "found"),
    [
        (1.0, {}, 4),
        (1.0, {"colour.clear_figure_contrast": 255.0}, 2),
        # where figures resolve, the grey figure test stands
        (1.3, {}, 2),
    ],
)
def test_where_figures_blur_a_figure_that_shows_clearly_in_colour_needs_little_in_grey(
    px_per_mm: float, changed: dict[str, float], found: int
) -> None:
    scene = _bases_and_tokens_of_one_grey_level("green on sand", px_per_mm, MAUVE_PAINT)
    dets = detect_bases(scene.image_bgr, px_per_mm, DEFAULT_SETTINGS.replaced(changed))
    m = match(scene, dets)
    assert len(m.truth_index) == found
    assert m.extra == 0, "no token taken for a base"
    np.testing.assert_array_equal(dets.diameter_mm[m.det_index], scene.diameters_mm[m.truth_index])


# colour kept at half resolution, with noise: the colour contrast's edges come out rougher than the grey levels'
COARSE_CHROMA_NOISE = 8.0
COARSE_CHROMA_SEEDS = range(8)


def _found_in_coarse_chroma(px_per_mm: float, settings: VisionSettings) -> tuple[int, int]:
    """Bases found and false detections over the seeds' scenes of four grey-on-mud bases and two tokens, their
    colour kept coarse."""
    found = extra = 0
    for seed in COARSE_CHROMA_SEEDS:
        scene = _bases_and_tokens_of_one_grey_level("grey on mud", px_per_mm, FIGURE_PAINT)
        image = vs.coarse_chroma(scene.image_bgr, np.random.default_rng(seed), COARSE_CHROMA_NOISE)
        dets = detect_bases(image, px_per_mm, settings)
        m = match(scene, dets)
        found, extra = found + len(m.truth_index), extra + m.extra
    return found, extra


@pytest.mark.parametrize("px_per_mm", [1.0, 1.3])
def test_the_colour_look_takes_rougher_rims(px_per_mm: float) -> None:
    # where figures blur (1.0) and where they resolve (1.3) alike: the colour contrast's edges scatter more
    strict = DEFAULT_SETTINGS.replaced({"colour.max_fit_rms_px": DEFAULT_SETTINGS.circle.max_rms_px})
    found, extra = _found_in_coarse_chroma(px_per_mm, DEFAULT_SETTINGS)
    found_strict, extra_strict = _found_in_coarse_chroma(px_per_mm, strict)
    assert found > found_strict, f"{found} bases found against {found_strict}"
    assert extra <= extra_strict, f"false detections {extra} against {extra_strict}"


SAND_MAT = (90.0, 150.0, 170.0)
# the contact shadow: the mat's colour at half its brightness; the printed ring: red of about the same grey level
RINGS = {"contact shadow": tuple(0.5 * c for c in SAND_MAT), "red printed ring": (30.0, 30.0, 180.0)}


def _ringed_sand_bases(
    ring: str, px_per_mm: float, changed: dict[str, float]
) -> tuple[Match, BaseDetections, vs.Scene]:
    """Two sand bases (32 and 40 mm) with figures on the sand mat, each ringed 1.5 mm wide in ``ring``'s colour (the
    edges read the ring's outer edge, 3 mm too large), detected with the vision settings ``changed``."""
    rng = np.random.default_rng(5)
    shape = (int(120 * px_per_mm), int(200 * px_per_mm))
    bases = [vs.Placed((50 * px_per_mm, 55 * px_per_mm), 32.0), vs.Placed((140 * px_per_mm, 60 * px_per_mm), 40.0)]
    rings = [(b.center_px, b.diameter_mm, 1.5, RINGS[ring]) for b in bases]
    scene = vs.draw_colour_scene(shape, px_per_mm, bases, rng, SAND_MAT, SAND_MAT, FIGURE_PAINT, (), rings)
    dets = detect_bases(scene.image_bgr, px_per_mm, DEFAULT_SETTINGS.replaced(changed))
    return match(scene, dets), dets, scene


@pytest.mark.parametrize(
    ("ring", "px_per_mm", "changed", "found"),
    [
        ("contact shadow", 1.0, {}, [0, 1]),
        ("contact shadow", 1.3, {}, [0, 1]),
        # without the shadow rule, at about 1 px/mm the 40 mm base's own rim is the best supported ring inside the
        # outermost one, read as a second reading (below); the 32 mm base's is not
        ("contact shadow", 1.0, {"colour.shadow_min_darkness": 255.0}, [1]),
        ("contact shadow", 1.3, {"colour.shadow_min_darkness": 255.0}, []),
        # a coloured ring is no shadow: its outer edge is no base's
        ("red printed ring", 1.0, {}, [1]),
        ("red printed ring", 1.3, {}, []),
        ("red printed ring", 1.0, {"colour.shadow_max_colour": 255.0}, [0, 1]),
        ("red printed ring", 1.3, {"colour.shadow_max_colour": 255.0}, [0, 1]),
    ],
)
def test_a_base_of_the_mats_colour_is_found_inside_its_contact_shadow_and_not_inside_a_coloured_ring(
    ring: str, px_per_mm: float, changed: dict[str, float], found: list[int]
) -> None:
    # the shadow rule alone: at about 1 px/mm the inner ring reading finds one of these bases by itself (below)
    m, dets, scene = _ringed_sand_bases(ring, px_per_mm, {"rim.inner_ring_fraction": 0.0, **changed})
    assert sorted(m.truth_index.tolist()) == found
    assert m.extra == 0
    np.testing.assert_array_equal(dets.diameter_mm[m.det_index], scene.diameters_mm[m.truth_index])
    # read by its edges at about 1 px/mm, where the figure and the ring's blur pull on them
    assert np.all(m.distance_px < 1.0 * px_per_mm)


@pytest.mark.parametrize(
    ("ring", "px_per_mm", "inner_ring_fraction", "found"),
    [
        # at about 1 px/mm the edges read the ring's outer edge, a size too large (the 32 mm base at 35 mm); the
        # base's own rim, of the other polarity, shows inside it. (The 40 mm base's rim is the best supported ring
        # there as well, and is read as a second reading without the inner ring.)
        ("contact shadow", 1.0, 0.7, [0, 1]),
        ("contact shadow", 1.0, 0.0, [1]),
        # whatever the ring's colour: the reading is the base's rim, not the ring's
        ("red printed ring", 1.0, 0.7, [0, 1]),
        ("red printed ring", 1.0, 0.0, [1]),
        # where figures resolve, the appearance fit reads bases, and no inner ring is read
        ("contact shadow", 1.3, 0.7, []),
        ("red printed ring", 1.3, 0.7, []),
    ],
)
def test_where_figures_blur_a_base_is_read_by_the_ring_inside_its_outermost(
    ring: str, px_per_mm: float, inner_ring_fraction: float, found: list[int]
) -> None:
    # the shadow rule off, so that only the inner ring reading can find a base inside its ring
    changed = {"colour.shadow_min_darkness": 255.0, "rim.inner_ring_fraction": inner_ring_fraction}
    m, dets, scene = _ringed_sand_bases(ring, px_per_mm, changed)
    assert sorted(m.truth_index.tolist()) == found
    assert m.extra == 0
    np.testing.assert_array_equal(dets.diameter_mm[m.det_index], scene.diameters_mm[m.truth_index])
    assert np.all(m.distance_px < 0.5 * px_per_mm)
