"""The empty table as a cue: what changed since it was seen empty (vision.reference), and detection with it."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import tests.vision.vision_scenes as vs
from tableref.config import load_config
from vision import ImageError, detect_bases
from vision.reference import changed_share, compare, outline_share

SETTINGS = load_config().vision
PX_PER_MM = 1.5
SHAPE = (150, 240)
MAT_BGR = (70.0, 110.0, 80.0)


def _mat(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    grain = cv2.GaussianBlur(rng.normal(0, 1, SHAPE).astype(np.float32), (0, 0), 1.5)
    return np.clip(np.array(MAT_BGR, np.float32) + 12.0 * grain[..., None], 0, 255)


def _noisy(image: np.ndarray, seed: int) -> np.ndarray:
    noise = np.random.default_rng(seed).normal(0.0, 2.0, image.shape)
    return np.clip(np.round(image + noise), 0, 255).astype(np.uint8)


def _changes(frame: np.ndarray, empty: np.ndarray) -> np.ndarray:
    return compare(
        frame,
        empty,
        PX_PER_MM,
        SETTINGS.reference.blur_mm,
        SETTINGS.reference.light_cell_mm,
        SETTINGS.reference.light_reach_cells,
    ).change


def _light(kind: str) -> np.ndarray:
    """(H, W, 1) gain of the light in the frame against the empty table's."""
    h, w = SHAPE
    if kind == "same":
        return np.ones((h, w, 1), np.float32)
    if kind == "brighter":
        return np.full((h, w, 1), 1.25, np.float32)
    # a lamp at the left: 40 % brighter there, fading to the right
    return (1.0 + 0.4 * np.linspace(1.0, 0.0, w, dtype=np.float32))[None, :, None].repeat(h, axis=0)


def _grey(image: np.ndarray) -> np.ndarray:
    """``image`` as a grey picture file decodes: three equal channels."""
    return cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)


@pytest.mark.parametrize(
    ("light", "disc_bgr", "grey", "inside_min", "outside_max"),
    [
        # a sand disc put down on the green mat, under the same light, a brighter one, a lamp at one side
        ("same", (120.0, 160.0, 190.0), "", 40.0, 8.0),
        ("brighter", (120.0, 160.0, 190.0), "", 40.0, 8.0),
        ("lamp", (120.0, 160.0, 190.0), "", 40.0, 8.0),
        # a dark grey disc on the darker mat moves far less, but above the noise
        ("same", (60.0, 60.0, 60.0), "", 15.0, 8.0),
        # one of the two pictures grey: compared in grey, the mat unchanged (in colour it changed everywhere)
        ("same", (120.0, 160.0, 190.0), "empty", 40.0, 8.0),
        ("lamp", (120.0, 160.0, 190.0), "frame", 40.0, 8.0),
        ("same", (120.0, 160.0, 190.0), "both", 40.0, 8.0),
    ],
)
def test_a_disc_put_down_changes_and_the_mat_around_it_does_not(
    light: str, disc_bgr: tuple[float, float, float], grey: str, inside_min: float, outside_max: float
) -> None:
    empty_mat = _mat(1)
    # printed on the mat, of another colour: unchanged (a grey picture against a colour one differs there most)
    cv2.circle(empty_mat, (40, 40), 14, (40.0, 40.0, 170.0), -1, lineType=cv2.LINE_AA)
    frame = empty_mat.copy()
    cv2.circle(frame, (120, 75), 24, disc_bgr, -1, lineType=cv2.LINE_AA)
    now, empty = _noisy(frame * _light(light), 2), _noisy(empty_mat, 3)
    change = _changes(
        _grey(now) if grey in ("frame", "both") else now, _grey(empty) if grey in ("empty", "both") else empty
    )
    yy, xx = np.mgrid[: SHAPE[0], : SHAPE[1]]
    distance = np.hypot(xx - 120, yy - 75)
    assert np.percentile(change[distance < 18], 5) >= inside_min
    assert np.percentile(change[distance > 32], 99) <= outside_max


@pytest.mark.parametrize(
    ("radius_px", "share"),
    [(24.0, 1.0), (12.0, 1.0), (60.0, 0.75)],
)
def test_the_changed_share_is_the_part_of_a_circles_inside_that_changed(radius_px: float, share: float) -> None:
    change = np.zeros(SHAPE, np.float32)
    cv2.circle(change, (120, 75), 36, 50.0, -1)
    got = changed_share(change, np.array([[120.0, 75.0]]), np.array([radius_px]), 10.0)
    # a circle of 60 px round a changed disc of 36 px: its samples at 0.15-0.55 of the radius changed, at 0.75 not
    assert got[0] == share


def test_a_circle_off_the_image_counts_as_unchanged() -> None:
    change = np.full(SHAPE, 50.0, np.float32)
    assert changed_share(change, np.array([[-100.0, -100.0]]), np.array([10.0]), 10.0)[0] == 0.0


def test_images_of_different_sizes_are_refused() -> None:
    with pytest.raises(ImageError, match="size"):
        _changes(np.zeros((10, 20, 3), np.uint8), np.zeros((10, 21, 3), np.uint8))


# a scene with one base on a textured mat, its figure on it
BASE_SCENE_SHAPE, BASE_CENTRE_PX = (180, 300), (150.0, 90.0)


@pytest.mark.parametrize(("in_reference", "found"), [(False, 1), (True, 0)])
def test_with_the_empty_table_a_base_must_have_changed(in_reference: bool, found: int) -> None:
    # a base with its figure; where it is already in the empty table's view (a base printed on the mat, to the
    # camera), it is no model put down since
    scene = vs.draw_scene(
        BASE_SCENE_SHAPE, PX_PER_MM, [vs.Placed(BASE_CENTRE_PX, 32.0)], np.random.default_rng(4), vs.TEXTURED
    )
    empty = scene.image_bgr if in_reference else _noisy(np.full((*BASE_SCENE_SHAPE, 3), 128.0), 5)
    assert len(detect_bases(scene.image_bgr, PX_PER_MM, SETTINGS)) == 1
    assert len(detect_bases(scene.image_bgr, PX_PER_MM, SETTINGS, reference_bgr=empty)) == found


def test_without_a_change_bar_the_reference_keeps_every_base() -> None:
    scene = vs.draw_scene(
        BASE_SCENE_SHAPE, PX_PER_MM, [vs.Placed(BASE_CENTRE_PX, 32.0)], np.random.default_rng(4), vs.TEXTURED
    )
    lax = SETTINGS.replaced({"reference.min_changed_share": 0.0})
    assert len(detect_bases(scene.image_bgr, PX_PER_MM, lax, reference_bgr=scene.image_bgr)) == 1


DARK_MAT_BGR = (20.0, 18.0, 16.0)
CENTRE_PX, RADIUS_PX = (120.0, 75.0), 24.0


def _drawn(mat_bgr: tuple[float, float, float], things: list[tuple[str, float]], seed: int) -> np.ndarray:
    """A plain mat with sensor noise and ``things`` drawn at CENTRE_PX: ("ring", grey level of a 3 px printed line)
    or ("disc", the level a base's top adds to the mat, its rim a line 12 levels brighter still)."""
    image = np.zeros((*SHAPE, 3), np.float32) + np.array(mat_bgr, np.float32)
    centre, r = (round(CENTRE_PX[0]), round(CENTRE_PX[1])), round(RADIUS_PX)
    for kind, level in things:
        if kind == "ring":
            cv2.circle(image, centre, r, (level, level, level), 3, cv2.LINE_AA)
        else:
            top = tuple(float(c) + level for c in mat_bgr)
            cv2.circle(image, centre, r, top, -1, cv2.LINE_AA)
            cv2.circle(image, centre, r, tuple(c + 12.0 for c in top), 1, cv2.LINE_AA)
    return _noisy(image, seed)


@pytest.mark.parametrize(
    ("case", "now", "empty", "gain", "outline_at_least", "outline_below"),
    [
        ("a printed ring, there when the table was empty", [("ring", 200.0)], [("ring", 200.0)], 1.0, 0.9, None),
        ("the same ring in a light 25 % brighter", [("ring", 160.0)], [("ring", 160.0)], 1.25, 0.9, None),
        ("the plain mat: nothing new, nothing to read", [], [], 1.0, 0.8, None),
        # a black base on a black mat: its inside moved by fewer grey levels than a change, its outline is new
        ("a dark base on a dark mat, put down since", [("disc", 6.0)], [], 1.0, None, 0.5),
    ],
)
def test_the_outline_a_printed_circle_had_and_a_base_brings(
    case: str,
    now: list[tuple[str, float]],
    empty: list[tuple[str, float]],
    gain: float,
    outline_at_least: float | None,
    outline_below: float | None,
) -> None:
    frame = _drawn(DARK_MAT_BGR, now, 1)
    if gain != 1.0:
        frame = np.clip(frame.astype(np.float32) * gain, 0, 255).astype(np.uint8)
    seen = compare(
        frame,
        _drawn(DARK_MAT_BGR, empty, 2),
        PX_PER_MM,
        SETTINGS.reference.blur_mm,
        SETTINGS.reference.light_cell_mm,
        SETTINGS.reference.light_reach_cells,
    )
    centre, radius = np.array([CENTRE_PX]), np.array([RADIUS_PX])
    (share,) = outline_share(seen, centre, radius)
    if outline_at_least is not None:
        assert share >= outline_at_least, case
    if outline_below is not None:
        assert share < outline_below, case
    # none of them changed its inside enough for the inside's rule alone
    assert changed_share(seen.change, centre, radius, SETTINGS.reference.min_change)[0] < 0.5, case


@pytest.mark.parametrize(("outline_share_bar", "found"), [(SETTINGS.reference.outline_share, 1), (0.0, 0)])
def test_a_base_whose_inside_did_not_change_is_kept_where_its_outline_is_new(
    outline_share_bar: float, found: int
) -> None:
    # the empty table shows the base's inside as it is now (a top the mat's colour, to the comparison) but not its
    # wall and rim: a band from 0.7 to 1.5 radii round it is the bare mat
    scene = vs.draw_scene(
        BASE_SCENE_SHAPE, PX_PER_MM, [vs.Placed(BASE_CENTRE_PX, 32.0)], np.random.default_rng(4), vs.TEXTURED
    )
    bare = vs.draw_scene(BASE_SCENE_SHAPE, PX_PER_MM, [], np.random.default_rng(4), vs.TEXTURED).image_bgr
    rows, cols = np.mgrid[0 : BASE_SCENE_SHAPE[0], 0 : BASE_SCENE_SHAPE[1]]
    r = np.hypot(cols - BASE_CENTRE_PX[0], rows - BASE_CENTRE_PX[1]) / (16.0 * PX_PER_MM)
    band = (r > 0.7) & (r < 1.5)
    empty = scene.image_bgr.copy()
    empty[band] = bare[band]
    settings = SETTINGS.replaced({"reference.outline_share": outline_share_bar})
    alone = detect_bases(scene.image_bgr, PX_PER_MM, SETTINGS)
    assert len(alone) == 1
    got = detect_bases(scene.image_bgr, PX_PER_MM, settings, reference_bgr=empty)
    assert len(got) == found
    # the inside alone would not have kept it
    seen = compare(scene.image_bgr, empty, PX_PER_MM, 0.6, 8.0, 13)
    assert changed_share(seen.change, alone.center_px, alone.radius_px, SETTINGS.reference.min_change)[0] < 0.5
