"""The wide-look renderer: deterministic frames, truth that lands where the bases are drawn, honest visibility,
markers the calibration finds, and the evaluation's breakdown by look."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import MappingProxyType

import cv2
import numpy as np
import pytest

from calibration import calibrate_table, camera_from_dict
from synth.wide import TABLES, View, make_camera, random_scene, render_frame
from synth.wide.frame import write_empty, write_frame
from synth.wide.layout import plain_scene
from synth.wide.looks import random_mat
from synth.wide.scene import Block, MatLook, WideBase, contacts
from synth.wide.view import markers_in_view, px_per_mm
from tableref.config import load_config
from tableref.evaluate import FrameScore, format_report, look_breakdown, report_dict

SMALL = "30x22"
BLACK = (0.06, 0.06, 0.065)
WHITE = (0.85, 0.85, 0.85)
SPACE = MatLook("space", (0.05, 0.035, 0.03), (0.05, 0.035, 0.03), 0.0, 0.0, 10.0, 0.0, 100.0, 0.0, 0.0, BLACK, 0)


def small_view(tilt_deg: float = 0.0, k1: float = 0.0, heading_deg: float = 0.0) -> View:
    """A 640 x 480 camera about 0.75 px/mm over the whole 30" x 22" table."""
    table = TABLES[SMALL]
    centre = (table.width_mm / 2.0, table.depth_mm / 2.0)
    camera = make_camera((640, 480), 0.75, 1000.0, centre, tilt_deg, heading_deg, 0.0, k1)
    return View(camera, SMALL, table, px_per_mm(camera), markers_in_view(camera, table, 2.0))


def base(
    ident: str, x: float, y: float, top: str = "black", colour: tuple[float, float, float] = BLACK, d: float = 32.0
) -> WideBase:
    return WideBase(ident, "u1", x, y, d, 4.0, 0.0, 0.0, top, colour, "black", BLACK, "none", (), 7)


@pytest.mark.parametrize("seed", [5])
def test_the_same_seed_gives_the_same_frame(seed: int) -> None:
    first, truth_a = render_frame(random_scene(seed, "custom", view=small_view(8.0, -0.05)), seed)
    again, truth_b = render_frame(random_scene(seed, "custom", view=small_view(8.0, -0.05)), seed)
    assert np.array_equal(first, again)
    assert json.dumps(truth_a.to_dict(), sort_keys=True) == json.dumps(truth_b.to_dict(), sort_keys=True)
    other, _ = render_frame(random_scene(seed + 100, "custom", view=small_view(8.0, -0.05)), seed + 100)
    assert not np.array_equal(first, other)


def test_the_empty_table_shows_the_mat_and_terrain_without_the_models(tmp_path: Path) -> None:
    scene = random_scene(12, "custom", view=small_view())
    write_frame(scene, 12, tmp_path, "frame")
    write_empty(scene, 12, tmp_path, "frame")
    game, empty = (cv2.imread(str(tmp_path / f"frame{end}.jpg")).astype(np.float32) for end in ("", ".empty"))
    camera = scene.camera
    on_bases = np.zeros(game.shape[:2], np.uint8)
    for b in scene.bases:
        (u, v), edge = camera.project(np.array([[b.x_mm, b.y_mm, 0.0], [b.x_mm + b.radius_mm, b.y_mm, 0.0]]))
        cv2.circle(on_bases, (round(u), round(v)), round(1.5 * abs(edge[0] - u)) + 3, 1, -1)
    dice = [k for k in scene.blocks if k.kind == "die"]
    for k in dice:
        (u, v), *_ = camera.project(np.array([[k.x_mm, k.y_mm, 0.0]]))
        cv2.circle(on_bases, (round(u), round(v)), 12, 1, -1)
    changed = np.abs(game - empty).max(axis=2) > 40
    # the models are gone (their figures may overhang their bases a little)
    assert changed[on_bases == 1].mean() > 0.3
    # the rest is the same table, mat, prints and terrain, under its own sensor noise (this scene has no hand)
    assert not scene.hands
    assert changed[on_bases == 0].mean() < 0.01


def test_a_random_frame_has_its_looks_in_the_truth() -> None:
    scene = random_scene(11, "custom", view=small_view())
    _, truth = render_frame(scene, 11)
    doc = truth.to_dict()
    assert 20 <= len(doc["models"]) <= 80
    assert set(doc["visibility"]) == {m["id"] for m in doc["models"]}
    look = doc["render"]["look"]
    assert {"mat", "resolution", "px_per_mm", "light"} <= set(look)
    for m, b, touching in zip(doc["render"]["models"], scene.bases, contacts(scene.bases), strict=True):
        assert m["look"]["top"] == b.top and m["look"]["figure"] == b.figure
        assert m["look"]["contact"] == touching and 2.0 <= m["look"]["rim_height_mm"] <= 6.0
    # Bases never overlap.
    xy = np.array([[b.x_mm, b.y_mm] for b in scene.bases])
    r = np.array([b.radius_mm for b in scene.bases])
    gap = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1)) - r[:, None] - r[None, :]
    np.fill_diagonal(gap, np.inf)
    assert gap.min() >= -1e-6


@pytest.mark.parametrize(
    ("top", "colour", "mat", "dark"),
    [
        ("black", BLACK, None, True),
        ("grey", (0.12, 0.12, 0.12), None, True),
        ("painted", WHITE, SPACE, False),
        ("sand", (0.4, 0.55, 0.66), SPACE, False),
    ],
)
@pytest.mark.parametrize("tilt", [0.0, 14.0])
def test_truth_centres_land_on_the_drawn_bases(
    top: str, colour: tuple[float, float, float], mat: MatLook | None, dark: bool, tilt: float
) -> None:
    spots = [(250.0, 200.0), (520.0, 330.0), (381.0, 280.0)]
    bases = [base(f"u1m{k + 1}", x, y, top, colour) for k, (x, y) in enumerate(spots)]
    view = small_view(tilt, -0.06, 30.0)
    scene = plain_scene(view, bases) if mat is None else plain_scene(view, bases, mat=mat)
    image, truth = render_frame(scene, 1)
    grey = image.mean(axis=2)
    for m in truth.params["models"]:
        u, v = np.rint(m["rim_center_px"]).astype(int)
        centre = grey[v - 1 : v + 2, u - 1 : u + 2].mean()
        # 30 mm from the centre lies the mat.
        away = view.camera.project(np.array([[bases[0].x_mm - 30.0, bases[0].y_mm - 30.0, 0.0]]))[0]
        mat_level = grey[round(float(away[1])), round(float(away[0]))]
        if dark:
            assert centre < 45 < mat_level
        else:
            assert centre > 90 > mat_level


@pytest.mark.parametrize(("shift_mm", "most"), [(0.0, 0.05), (40.0, 0.8)])
def test_a_base_under_a_platform_is_partly_hidden(shift_mm: float, most: float) -> None:
    view = small_view(10.0)
    bases = [base("u1m1", 300.0, 280.0), base("u1m2", 480.0, 280.0)]
    platform = Block("terrain1", "platform", 300.0 + shift_mm, 280.0, 90.0, 90.0, 0.0, 55.0, 65.0, (0.4, 0.4, 0.42))
    _, truth = render_frame(plain_scene(view, bases, [platform]), 1)
    assert truth.visibility["u1m1"] < most
    assert truth.visibility["u1m2"] > 0.97


@pytest.mark.parametrize(("tilt", "k1", "seed"), [(0.0, 0.0, 21), (12.0, -0.08, 22), (6.0, -0.04, 23)])
def test_the_calibration_finds_the_markers_and_maps_the_table_as_the_truth_camera(
    tilt: float, k1: float, seed: int
) -> None:
    view = small_view(tilt, k1, 60.0)
    scene = random_scene(seed, "custom", view=view)
    image, truth = render_frame(scene, seed, jpeg=True)
    cal = calibrate_table(image, view.table, camera_from_dict(dict(truth.camera)), settings=load_config().calibration)
    assert len(cal.markers_used) >= 4
    gx, gy = np.meshgrid(np.linspace(60.0, 700.0, 9), np.linspace(60.0, 500.0, 7))
    table = np.stack([gx.ravel(), gy.ravel()], axis=1)
    px = view.camera.project(np.c_[table, np.zeros(len(table))])
    err = np.hypot(*(cal.image_to_table(px) - table).T)
    assert err.max() < 1.0


def test_random_mats_cover_every_kind() -> None:
    kinds = {random_mat(np.random.default_rng(s)).kind for s in range(40)}
    assert kinds == {"grass", "desert", "urban", "space"}


def test_a_dark_frame_keeps_its_seed_s_layout_and_makes_black_tops_and_the_space_mat_common() -> None:
    seeds = range(30, 42)
    plain = [random_scene(s, "custom", view=small_view()) for s in seeds]
    dark = [random_scene(s, "custom", view=small_view(), dark=True) for s in seeds]
    for a, b in zip(plain, dark, strict=True):
        assert [(p.id, p.x_mm, p.y_mm, p.diameter_mm) for p in a.bases] == [
            (q.id, q.x_mm, q.y_mm, q.diameter_mm) for q in b.bases
        ]
        assert a.blocks == b.blocks and a.camera == b.camera
    share = {
        name: (
            np.mean([sc.mat.kind == "space" for sc in scenes]),
            np.mean([p.top == "black" for sc in scenes for p in sc.bases]),
        )
        for name, scenes in (("plain", plain), ("dark", dark))
    }
    assert share["dark"][0] >= 0.5 > share["plain"][0]
    assert share["dark"][1] >= 0.45 > share["plain"][1]


@pytest.mark.parametrize(
    ("sizes_mm", "drawn_mm"),
    [
        (None, {25.0, 27.0, 28.5, 32.0, 40.0, 50.0, 60.0}),
        # a game's sizes: those the renderer draws among them (40k's larger ones it never draws)
        ((25.0, 28.5, 32.0, 40.0, 50.0, 60.0, 80.0), {25.0, 28.5, 32.0, 40.0, 50.0, 60.0}),
        ((27.0, 50.0, 70.0), {27.0, 50.0}),
    ],
)
def test_a_games_sizes_alone_are_drawn(sizes_mm: tuple[float, ...] | None, drawn_mm: set[float]) -> None:
    scenes = [random_scene(s, "custom", view=small_view(), sizes_mm=sizes_mm) for s in range(30, 42)]
    assert {b.diameter_mm for sc in scenes for b in sc.bases} == drawn_mm


def test_no_size_drawn_is_an_error() -> None:
    with pytest.raises(ValueError, match="none of the sizes"):
        random_scene(30, "custom", view=small_view(), sizes_mm=(70.0, 100.0))


def test_contact_means_within_half_a_millimetre() -> None:
    bases = [base("a", 100.0, 100.0), base("b", 132.4, 100.0), base("c", 100.0, 140.0)]
    assert contacts(bases) == [True, True, False]


# --------------------------------------------------------------------------------------------------------------
# The breakdown by look


def _score(name: str, mat: str, looks: list[dict[str, str]], matched: list[bool], errors: list[float]) -> FrameScore:
    n = len(looks)
    err = np.array([e if m else math.nan for e, m in zip(errors, matched, strict=True)])
    detected = sum(matched) + 1  # one false detection per frame
    return FrameScore(
        name=name,
        image_size=(1920, 1080),
        lens_corrected=True,
        truth_count=n,
        visible_count=n,
        detected=detected,
        matched=sum(matched),
        matched_visible=sum(matched),
        error_mm=err[~np.isnan(err)],
        z=np.zeros((sum(matched), 2)),
        visibility=np.ones(sum(matched)),
        size_right=np.ones(sum(matched), dtype=bool),
        time_ms=1.0,
        truth_visible=np.ones(n, dtype=bool),
        truth_matched=np.array(matched),
        truth_error_mm=err,
        truth_size_right=np.array([m and e < 1.0 for e, m in zip(errors, matched, strict=True)]),
        model_looks=tuple(looks),
        frame_look=MappingProxyType({"mat": mat, "resolution": "1080p"}),
    )


def _scores() -> list[FrameScore]:
    black, flock = {"top": "black", "figure": "dark"}, {"top": "flock", "figure": "dark"}
    return [
        _score("a", "grass", [black, black, flock, flock], [True, True, True, False], [0.2, 0.4, 2.0, 0.0]),
        _score("b", "space", [black, flock], [False, True], [0.0, 0.6]),
    ]


def _row(rows: list[dict], category: str, value: str) -> dict:
    (row,) = [r for r in rows if r["category"] == category and r["value"] == value]
    return row


@pytest.mark.parametrize(
    ("category", "value", "bases", "recall", "precision", "median", "sizes"),
    [
        ("top", "black", 3, 2 / 3, math.nan, 0.3, 1.0),
        ("top", "flock", 3, 2 / 3, math.nan, 1.3, 0.5),
        ("figure", "dark", 6, 4 / 6, math.nan, 0.5, 0.75),
        ("mat", "grass", 4, 3 / 4, 3 / 4, 0.4, 2 / 3),
        ("mat", "space", 2, 1 / 2, 1 / 2, 0.6, 1.0),
        ("resolution", "1080p", 6, 4 / 6, 4 / 6, 0.5, 0.75),
    ],
)
def test_breakdown_by_look(
    category: str, value: str, bases: int, recall: float, precision: float, median: float, sizes: float
) -> None:
    row = _row(look_breakdown(_scores()), category, value)
    assert row["bases"] == bases
    assert row["recall"] == pytest.approx(recall)
    assert row["median_mm"] == pytest.approx(median)
    assert row["size_right"] == pytest.approx(sizes)
    if math.isnan(precision):
        assert math.isnan(row["precision"])
    else:
        assert row["precision"] == pytest.approx(precision)


def test_the_report_shows_the_breakdown_only_when_asked_or_when_truths_have_looks() -> None:
    scores = _scores()
    assert "by_look" in report_dict(scores)
    assert "By look" in format_report(scores)
    plain = [FrameScore(**{**s.__dict__, "model_looks": (), "frame_look": MappingProxyType({})}) for s in scores]
    assert "by_look" not in report_dict(plain)
    assert "By look" not in format_report(plain)
    assert "By look" in format_report(plain, by_look=True)
