"""The wiring between stages: rectified detections to table millimetres, identities, fusing frames."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import rules
from calibration.table import calibrate_table, table_to_rectified
from synth.generate import fit_camera, make_figure, plain_scene
from synth.render import render
from synth.scene import SceneModel
from tableref.config import load_config
from tableref.evaluate import load_samples
from tableref.pipeline.frame import detect_frame, fuse_frames, roster_expectation, roster_sizes
from tableref.pipeline.frame import empty_table as pipeline_empty_table
from tableref.pipeline.identity import carry_identities
from tableref.pipeline.state import (
    calibration_section,
    known_bases,
    seen_height_mm,
    size_sigma_mm,
    state_from_detections,
)
from tableref.settings import Settings
from tableref.sources import read_image
from tests.tableref.conftest import CAMERA_POSITION_MM, FRAME_SIZE, LENS, Rendered
from vision.detections import BaseDetections
from vision.doubts import Doubts

SIZES_MM = (25.0, 27.0, 28.5, 32.0, 40.0, 50.0)
TRUTH_MM = np.array([[300.0, 300.0], [914.5, 609.5], [1600.0, 1000.0], [150.0, 1100.0]])


def detections_at(points_px: np.ndarray, diameter_mm: float, sigma_px: float, px_per_mm: float) -> BaseDetections:
    n = len(points_px)
    return BaseDetections(
        center_px=points_px,
        radius_px=np.full(n, diameter_mm / 2.0 * px_per_mm),
        diameter_mm=np.full(n, diameter_mm),
        score=np.ones(n),
        edge_coverage=np.ones(n),
        fit_rms_px=np.full(n, 0.1),
        center_sigma_px=np.full(n, sigma_px),
        diameter_sigma_mm=np.full(n, 1.0),
        model_sigma_mm=np.full(n, 0.45),
        rim_height_share=np.ones(n),
    )


@pytest.mark.parametrize("rim_height_mm", [0.0, 4.0])
@pytest.mark.parametrize("lens", [True, False])
def test_rectified_rims_map_to_the_bases_below_them(
    empty_table: Rendered, config: Settings, rim_height_mm: float, lens: bool
) -> None:
    camera = empty_table.camera if lens else None
    cal = calibrate_table(empty_table.image, empty_table.spec, camera, settings=config.calibration)
    settings = dataclasses.replace(config.pipeline, rim_height_mm=rim_height_mm)
    px_per_mm = 2.0
    if lens:
        # Where each outline's middle (the axis at about half the rim height) appears in the frame, and where that
        # pixel lies on the table plane (the rectified view).
        seen_px = cal.table_to_image(TRUTH_MM, seen_height_mm(cal, rim_height_mm))
        on_plane = cal.image_to_table(seen_px, 0.0)
    else:
        on_plane = TRUTH_MM
    dets = detections_at(table_to_rectified(on_plane, px_per_mm), 32.0, 0.1, px_per_mm)
    state, random = state_from_detections(empty_table.spec, cal, dets, px_per_mm, settings, SIZES_MM)
    got = np.array([[m.x_mm, m.y_mm] for m in state.models])
    order = np.lexsort((TRUTH_MM[:, 0], TRUTH_MM[:, 1]))
    np.testing.assert_allclose(got, TRUTH_MM[order], atol=1e-6)
    assert [m.id for m in state.models] == ["m1", "m2", "m3", "m4"]
    assert all(m.unit is None and m.base.diameter_mm == 32.0 for m in state.models)
    # 32 mm stands 3.5 mm from 28.5 mm and 8 mm from 40 mm: some doubt, less than half the step to 28.5 mm.
    assert all(0.0 < m.base.size_sigma_mm < 3.5 / 2 for m in state.models)
    np.testing.assert_allclose(random, 0.1 / px_per_mm)
    sigma = np.array([m.sigma_mm for m in state.models])
    assert np.all(sigma >= random)
    if not lens:
        assert np.all(sigma >= config.pipeline.uncorrected_lens_sigma_mm)
    section = calibration_section(state)
    assert section is not None and section.report.lens_corrected is lens


def _state(points: list[tuple[str, str | None, float, float]], units: list[str]) -> rules.TableState:
    return rules.state_from_dict(
        {
            "table": {"width_mm": 1829, "depth_mm": 1219},
            "units": [{"id": u, "player": "P", "leader": f"{u}1"} for u in units],
            "models": [
                {"id": i, "unit": u, "x_mm": x, "y_mm": y, "base": {"diameter_mm": 32}, "sigma_mm": 0.2}
                for i, u, x, y in points
            ],
        }
    )


@pytest.mark.parametrize(("declared_mm", "off"), [(None, True), (5.0, False), (math.nan, True)])
def test_a_declared_rim_height_places_an_outline_the_edges_read(
    empty_table: Rendered, config: Settings, declared_mm: float | None, off: bool
) -> None:
    # outlines of bases with 5 mm rims, read by their edges (share 1); the pipeline assumes 4 mm
    cal = calibrate_table(empty_table.image, empty_table.spec, empty_table.camera, settings=config.calibration)
    settings = dataclasses.replace(config.pipeline, rim_height_mm=4.0)
    on_plane = cal.image_to_table(cal.table_to_image(TRUTH_MM, seen_height_mm(cal, 5.0)), 0.0)
    dets = detections_at(table_to_rectified(on_plane, 2.0), 32.0, 0.1, 2.0)
    rims = None if declared_mm is None else np.full(len(dets), declared_mm)
    state, _ = state_from_detections(empty_table.spec, cal, dets, 2.0, settings, SIZES_MM, rims)
    assumed, _ = state_from_detections(empty_table.spec, cal, dets, 2.0, settings, SIZES_MM)
    got = np.array([[m.x_mm, m.y_mm] for m in state.models])
    order = np.lexsort((TRUTH_MM[:, 0], TRUTH_MM[:, 1]))
    errors_mm = np.hypot(*(got - TRUTH_MM[order]).T)
    assert (errors_mm.max() > 0.05) == off and (errors_mm.max() < 1e-6) == (not off), errors_mm
    # a declared height leaves no doubt about it: the rim-height term leaves the sigma
    sigmas = [m.sigma_mm for m in state.models]
    assert all((a < b) == (not off) for a, b in zip(sigmas, [m.sigma_mm for m in assumed.models], strict=True))


@pytest.mark.parametrize(
    ("rim_mm", "declared_mm", "off"),
    [(4.0, None, False), (5.0, None, True), (5.0, 5.0, False), (3.0, 3.0, False)],
)
def test_an_outline_read_by_its_top_disc_stands_a_whole_shift_from_its_base(
    empty_table: Rendered, config: Settings, rim_mm: float, declared_mm: float | None, off: bool
) -> None:
    # the edges read each base's top disc (share 2), at the rim's full height, and moved it back half the parallax
    # shift of the 4 mm rim assumed, to where the outline's middle would stand
    cal = calibrate_table(empty_table.image, empty_table.spec, empty_table.camera, settings=config.calibration)
    settings = dataclasses.replace(config.pipeline, rim_height_mm=4.0)
    assert cal.camera_position_mm is not None
    nadir, camera_mm = cal.camera_position_mm[:2], float(cal.camera_position_mm[2])
    top = cal.image_to_table(cal.table_to_image(TRUTH_MM, rim_mm), 0.0)
    moved = nadir + (top - nadir) * (1.0 - 0.5 * 4.0 / (camera_mm - 4.0))
    dets = dataclasses.replace(
        detections_at(table_to_rectified(moved, 2.0), 32.0, 0.1, 2.0), rim_height_share=np.full(len(TRUTH_MM), 2.0)
    )
    rims = None if declared_mm is None else np.full(len(dets), declared_mm)
    state, _ = state_from_detections(empty_table.spec, cal, dets, 2.0, settings, SIZES_MM, rims)
    got = np.array([[m.x_mm, m.y_mm] for m in state.models])
    order = np.lexsort((TRUTH_MM[:, 0], TRUTH_MM[:, 1]))
    errors_mm = np.hypot(*(got - TRUTH_MM[order]).T)
    assert (errors_mm.max() > 0.1) == off and (errors_mm.max() < 1e-6) == (not off), errors_mm
    # read as an outline's middle (share 1) with the declared height, the same centres land off by half the
    # difference of the shifts: the top stands at the whole height
    if declared_mm is not None:
        middles = dataclasses.replace(dets, rim_height_share=np.ones(len(dets)))
        halfway, _ = state_from_detections(empty_table.spec, cal, middles, 2.0, settings, SIZES_MM, rims)
        halfway_mm = np.array([[m.x_mm, m.y_mm] for m in halfway.models])
        assert np.hypot(*(halfway_mm - TRUTH_MM[order]).T).max() > 0.1


@pytest.mark.parametrize(
    ("detected", "expected"),
    [
        # Two models side by side both moved 20 mm right: the optimal matching keeps them apart.
        ([(120.0, 100.0), (160.0, 100.0)], {"a1": (120.0, 100.0), "a2": (160.0, 100.0)}),
        # One model not seen (the leader): the other keeps its id; the leader is unseen, still the unit's leader.
        ([(140.0, 100.0)], {"a2": (140.0, 100.0)}),
        # A model found 1 mm from its place keeps its name, though a base 25 mm beside it (a false one, say) could
        # take it and push the model to the other's place 39 mm off: the other stays unseen, the stray base is new.
        ([(101.0, 100.0), (76.0, 100.0)], {"a1": (101.0, 100.0), "m1": (76.0, 100.0)}),
        # A newcomer far from every roster model gets a fresh id.
        (
            [(100.0, 100.0), (140.0, 100.0), (900.0, 900.0)],
            {"a1": (100.0, 100.0), "a2": (140.0, 100.0), "m1": (900.0, 900.0)},
        ),
    ],
)
def test_carry_identities(detected: list[tuple[float, float]], expected: dict[str, tuple[float, float]]) -> None:
    roster = _state([("a1", "a", 100.0, 100.0), ("a2", "a", 140.0, 100.0)], ["a"])
    found = _state([(f"m{k + 1}", None, x, y) for k, (x, y) in enumerate(detected)], [])
    state = carry_identities(found, roster, gate_mm=40.0)
    assert {m.id: (m.x_mm, m.y_mm) for m in state.models} == expected
    assert all((m.unit == "a") is m.id.startswith("a") for m in state.models)
    roster_place = {m.id: (m.x_mm, m.y_mm) for m in roster.models}
    assert {m.id: (m.x_mm, m.y_mm) for m in state.unseen} == {
        k: v for k, v in roster_place.items() if k not in expected
    }
    assert state.unit("a").leader == "a1"


ROUND_27 = rules.RoundBase(27.0)
OVAL = rules.OvalBase(60.0, 35.0)


@pytest.mark.parametrize(
    ("measured_mm", "declared", "take_bases", "expected", "sigma_mm"),
    [
        # a neighbouring standard size: the roster's, the centre as doubtful as half the difference
        (28.5, ROUND_27, True, ROUND_27, math.hypot(0.3, 0.75)),
        (25.0, ROUND_27, True, ROUND_27, math.hypot(0.3, 1.0)),
        # a circle about the base and more, or a part of it: the roster's base, the centre as doubtful
        (40.0, ROUND_27, True, ROUND_27, math.hypot(0.3, 6.5)),
        (28.5, rules.RoundBase(40.0, 0.8), True, rules.RoundBase(40.0, 0.8), math.hypot(0.3, 5.75)),
        # an oval in the roster: the camera measures round bases only, and the oval's turn is not known
        (28.5, OVAL, True, rules.RoundBase(28.5, 0.8), 0.3),
        # not asked for
        (28.5, ROUND_27, False, rules.RoundBase(28.5, 0.8), 0.3),
    ],
)
def test_a_matched_model_takes_the_rosters_round_base(
    measured_mm: float,
    declared: rules.RoundBase | rules.OvalBase,
    take_bases: bool,
    expected: object,
    sigma_mm: float,
) -> None:
    roster = rules.TableState(rules.Table(1829.0, 1219.0), models=(rules.Model("a1", None, 100.0, 100.0, declared),))
    found = rules.TableState(
        rules.Table(1829.0, 1219.0),
        models=(rules.Model("m1", None, 102.0, 100.0, rules.RoundBase(measured_mm, 0.8), 0.3),),
    )
    (model,) = carry_identities(found, roster, 40.0, take_bases).models
    assert model.id == "a1"
    assert (model.x_mm, model.y_mm) == (102.0, 100.0)
    assert model.base == expected
    assert model.sigma_mm == pytest.approx(sigma_mm)


def test_a_doubt_along_a_line_goes_with_its_model(empty_table: Rendered, config: Settings) -> None:
    # the top-down view's axes are the table's: a doubt (mm) there is the same on the table, whatever the order
    # the state lists the models in, and the roster's ids do not change it
    cal = calibrate_table(empty_table.image, empty_table.spec, None, settings=config.calibration)
    settings = dataclasses.replace(config.pipeline, rim_height_mm=0.0)
    doubt = np.array([[0.1, -0.2], [0.3, 0.0], [0.0, 0.5], [-0.7, 0.7]])
    dets = dataclasses.replace(detections_at(table_to_rectified(TRUTH_MM, 2.0), 32.0, 0.1, 2.0), model_doubt_mm=doubt)
    state, _ = state_from_detections(empty_table.spec, cal, dets, 2.0, settings, SIZES_MM)
    roster = rules.TableState(state.table, models=tuple(dataclasses.replace(m, id=f"r{m.id}") for m in state.models))
    carried = carry_identities(state, roster, gate_mm=5.0)
    for models in (state.models, carried.models):
        got = {(round(m.x_mm), round(m.y_mm)): m.doubt_mm for m in models}
        assert got == {(round(x), round(y)): tuple(d) for (x, y), d in zip(TRUTH_MM, doubt, strict=True)}


def test_fused_frames_shrink_only_the_random_part(empty_table: Rendered, config: Settings) -> None:
    from tableref.pipeline.frame import FrameAnalysis

    cal = calibrate_table(empty_table.image, empty_table.spec, empty_table.camera, settings=config.calibration)
    rng = np.random.default_rng(5)
    analyses = []
    for _ in range(4):
        noisy = TRUTH_MM + rng.normal(0, 0.05, TRUTH_MM.shape)
        on_plane = cal.image_to_table(cal.table_to_image(noisy, 4.0))
        dets = detections_at(table_to_rectified(on_plane, 2.0), 32.0, 0.4, 2.0)
        state, random = state_from_detections(empty_table.spec, cal, dets, 2.0, config.pipeline, SIZES_MM)
        analyses.append(FrameAnalysis(state, cal, dets, 2.0, {}, random))
    fused = fuse_frames(analyses, gate_mm=10.0)
    one = analyses[0].state.models[0].sigma_mm
    random = analyses[0].sigma_random_mm[0]
    systematic = np.sqrt(one**2 - random**2)
    assert fused.models[0].sigma_mm == pytest.approx(np.hypot(systematic, random / 2.0))
    section = calibration_section(fused)
    assert section is not None and section.frames_fused == 4
    mean = np.mean([[a.state.models[0].x_mm, a.state.models[0].y_mm] for a in analyses], axis=0)
    assert (fused.models[0].x_mm, fused.models[0].y_mm) == pytest.approx(tuple(mean))


@pytest.mark.parametrize(
    ("fitted_mm", "snapped_mm", "low", "high"),
    [
        (50.0, 50.0, 0.0, 0.01),  # 40 and 60 are far: the size is sure
        (40.3, 40.0, 0.0, 0.01),
        (27.0, 27.0, 0.8, 1.6),  # 25 and 28.5 are close by
        (27.8, 28.5, 1.0, 2.2),  # between 27 and 28.5, snapped to the farther one
    ],
)
def test_size_sigma_follows_the_neighbouring_sizes(
    fitted_mm: float, snapped_mm: float, low: float, high: float
) -> None:
    sigma = size_sigma_mm(np.array([fitted_mm]), np.array([snapped_mm]), SIZES_MM, fit_sigma_mm=1.1)
    assert low <= sigma[0] <= high


@pytest.mark.parametrize(
    ("declared", "diameter_mm", "height_ratio"),
    [
        (rules.RoundBase(32.0, height_mm=5.0), 32.0, 1.25),
        # a size the measurement allows (within roster_size_tolerance_mm of the 32 mm measured)
        (rules.RoundBase(28.5), 28.5, math.nan),
        # too far from what was measured: the match itself is in doubt
        (rules.RoundBase(40.0, height_mm=3.0), math.nan, math.nan),
        (rules.OvalBase(60.0, 35.0), math.nan, math.nan),
    ],
)
def test_known_bases_are_what_the_matched_roster_model_declares(
    empty_table: Rendered, config: Settings, declared: rules.Base, diameter_mm: float, height_ratio: float
) -> None:
    cal = calibrate_table(empty_table.image, empty_table.spec, empty_table.camera, settings=config.calibration)
    settings = dataclasses.replace(config.pipeline, rim_height_mm=4.0)
    on_plane = cal.image_to_table(cal.table_to_image(TRUTH_MM, seen_height_mm(cal, 4.0)), 0.0)
    dets = detections_at(table_to_rectified(on_plane, 2.0), 32.0, 0.1, 2.0)
    # the roster lists the second and third bases, 5 mm from where they are seen (models move between states)
    listed = (
        rules.Model("a1", None, TRUTH_MM[1, 0] + 5.0, TRUTH_MM[1, 1], declared),
        rules.Model("a2", None, TRUTH_MM[2, 0], TRUTH_MM[2, 1] - 5.0, rules.RoundBase(32.0, height_mm=3.0)),
    )
    roster = rules.TableState(rules.Table(1829.0, 1219.0), models=listed)
    diameter, height = known_bases(cal, dets, 2.0, roster, settings)
    np.testing.assert_array_equal(diameter, [math.nan, diameter_mm, 32.0, math.nan])
    np.testing.assert_array_equal(height, [math.nan, height_ratio, 0.75, math.nan])


def _errors_mm(state: rules.TableState, truth: rules.TableState) -> np.ndarray:
    carried = carry_identities(state, truth, 8.0)
    listed = {m.id: m for m in truth.models}
    # a detection matched to no listed model (a false one) takes a new id and has no error to count
    return np.array(
        [math.hypot(m.x_mm - listed[m.id].x_mm, m.y_mm - listed[m.id].y_mm) for m in carried.models if m.id in listed]
    )


def test_a_roster_that_declares_sizes_and_rim_heights_places_the_bases_better(config: Settings) -> None:
    # the sample's truth declares each base's size and rim height (3-5 mm), as a roster would
    (sample,) = [s for s in load_samples("sample_images") if s.name == "crowded_4k"]
    truth = rules.state_from_dict({k: sample.truth[k] for k in ("table", "units", "models")})
    assert {m.base.height_mm for m in truth.models if isinstance(m.base, rules.RoundBase)} == {3.0, 3.5, 4.0, 5.0}
    image = read_image(sample.image)
    alone = detect_frame(image, sample.spec, config, sample.camera)
    told = detect_frame(image, sample.spec, config, sample.camera, roster=truth)
    assert len(told.state.models) == len(alone.state.models)
    before, after = _errors_mm(alone.state, truth), _errors_mm(told.state, truth)
    # on this frame: median 0.14 -> 0.10 mm, 90th percentile 0.51 -> 0.37 mm (alone, each base is held at the size it
    # was read at too, its rim's height fitted, and its unit's vote reads every size right)
    medians = (np.median(before), np.median(after))
    assert medians[1] < 0.85 * medians[0] and medians[1] < 0.12, medians
    assert np.quantile(after, 0.9) < 0.8 * np.quantile(before, 0.9)
    assert all(m.base.size_sigma_mm == 0.0 for m in told.state.models)


@pytest.mark.parametrize(("known_min_px_per_mm", "fitted"), [(1.1, True), (1.2, False)])
def test_a_coarse_view_with_a_roster_is_fitted_at_the_declared_bases(
    config: Settings, known_min_px_per_mm: float, fitted: bool
) -> None:
    # the 4K sample viewed at 1.15 px/mm, as a 4K camera low over the table sees it: too coarse for the free
    # appearance fit (the edges read the bases), fine enough for the fit at a declared size and rim height
    (sample,) = [s for s in load_samples("sample_images") if s.name == "crowded_4k"]
    truth = rules.state_from_dict({k: sample.truth[k] for k in ("table", "units", "models")})
    coarse = dataclasses.replace(
        config,
        pipeline=dataclasses.replace(config.pipeline, max_rectified_px_per_mm=1.15),
        vision=config.vision.replaced({"known.min_px_per_mm": known_min_px_per_mm}),
    )
    assert coarse.vision.outline.min_px_per_mm > 1.15
    image = read_image(sample.image)
    alone = detect_frame(image, sample.spec, coarse, sample.camera)
    told = detect_frame(image, sample.spec, coarse, sample.camera, roster=truth)
    section = calibration_section(told.state)
    assert section is not None and section.declared_bases is not None
    declared = section.declared_bases.sizes
    before, after = _errors_mm(alone.state, truth), _errors_mm(told.state, truth)
    if fitted:
        # on this frame: 65 of 66 bases fitted again, median 0.26 -> 0.13 mm, 90th percentile 0.82 -> 0.43 mm (0.43
        # and 1.05 mm read by the edges before a base lighter than the mat was read by its top)
        assert declared >= 0.9 * len(told.state.models)
        median_mm = (float(np.median(before)), float(np.median(after)))
        assert median_mm[1] < 0.6 * median_mm[0] and median_mm[1] < 0.2, median_mm
        assert np.quantile(after, 0.9) < 0.7 * np.quantile(before, 0.9)
    else:
        assert declared == 0


def test_with_the_empty_table_only_what_was_put_down_since_is_a_base(empty_table: Rendered, config: Settings) -> None:
    rng = np.random.default_rng(12)
    placed = [(700.0, 500.0), (760.0, 500.0), (1100.0, 700.0)]
    paint = ((0.7, 0.2, 0.2), (0.8, 0.8, 0.7))
    models = [
        SceneModel(
            rules.Model(f"m{k}", "u", x, y, rules.RoundBase(32.0)),
            4.0,
            "black",
            "black",
            0.0,
            make_figure(rng, 32.0, paint),
        )
        for k, (x, y) in enumerate(placed)
    ]
    cam = fit_camera(empty_table.spec, FRAME_SIZE, CAMERA_POSITION_MM, (914.5, 609.5, 0.0), dist=LENS)
    scene = plain_scene(cam, empty_table.spec, models)
    frame, _truth = render(scene, seed=2)
    reference = pipeline_empty_table(empty_table.image, empty_table.spec, config, empty_table.camera)
    found = detect_frame(np.asarray(frame), empty_table.spec, config, empty_table.camera, reference=reference)
    got = np.array(sorted((m.x_mm, m.y_mm) for m in found.state.models))
    np.testing.assert_allclose(got, np.array(sorted(placed)), atol=2.0)
    # the frame as its own empty table: nothing was put down since
    itself = pipeline_empty_table(np.asarray(frame), empty_table.spec, config, empty_table.camera)
    assert (
        detect_frame(np.asarray(frame), empty_table.spec, config, empty_table.camera, reference=itself).state.models
        == ()
    )


@pytest.mark.parametrize(
    ("bases", "sizes"),
    [
        # the roster's round sizes, each once, in order
        ([rules.RoundBase(32.0), rules.RoundBase(25.0), rules.RoundBase(32.0)], (25.0, 32.0)),
        # ovals add none; a roster of ovals only leaves the standard sizes
        ([rules.RoundBase(40.0), rules.OvalBase(60.0, 35.0)], (40.0,)),
        ([rules.OvalBase(60.0, 35.0)], None),
    ],
)
def test_a_whole_roster_lets_bases_snap_only_to_its_sizes(
    config: Settings, bases: list[rules.RoundBase | rules.OvalBase], sizes: tuple[float, ...] | None
) -> None:
    roster = rules.TableState(
        rules.Table(1829.0, 1219.0),
        (),
        tuple(rules.Model(f"m{k}", None, 100.0 * k, 100.0, b) for k, b in enumerate(bases)),
    )
    cut = roster_sizes(config, roster)
    assert cut.vision.base_sizes_mm == (config.vision.base_sizes_mm if sizes is None else sizes)


@pytest.mark.parametrize(
    ("coarse_over_scale", "noted"),
    [
        (0.0, False),  # never
        (0.9, False),  # the frame is finer than the bar
        (1.1, True),  # coarser
    ],
)
def test_a_frame_coarser_than_the_bar_says_so_in_its_notes(
    empty_table: Rendered, config: Settings, coarse_over_scale: float, noted: bool
) -> None:
    cal = calibrate_table(empty_table.image, empty_table.spec, None, settings=config.calibration)
    settings = dataclasses.replace(config.pipeline, coarse_px_per_mm=coarse_over_scale * cal.px_per_mm)
    dets = detections_at(table_to_rectified(TRUTH_MM, 2.0), 32.0, 0.1, 2.0)
    state, _random = state_from_detections(empty_table.spec, cal, dets, 2.0, settings, SIZES_MM)
    section = calibration_section(state)
    assert section is not None
    notes = section.report.notes
    assert any(f"sees the table at {cal.px_per_mm:.2f} px/mm" in n for n in notes) is noted


def test_a_whole_roster_expects_its_round_bases_within_a_run_and_a_charge_of_where_each_was_last_seen() -> None:
    settings = load_config().pipeline
    units = (rules.Unit("red", player="A", move_in=6.0), rules.Unit("blue", player="B"))
    models = (
        rules.Model("r1", "red", 100.0, 200.0, rules.RoundBase(32.0)),
        rules.Model("b1", "blue", 300.0, 200.0, rules.RoundBase(40.0)),
        rules.Model("x1", None, 500.0, 200.0, rules.RoundBase(25.0)),
        rules.Model("o1", "red", 700.0, 200.0, rules.OvalBase(60.0, 35.0)),
    )
    unseen = (rules.Model("r2", "red", 130.0, 220.0, rules.RoundBase(32.0)),)
    roster = rules.TableState(rules.Table(1829.0, 1219.0), units, models, unseen=unseen)
    got = roster_expectation(roster, 2.0, settings)
    # the oval base is not looked for; the unseen model is, where it was last seen
    np.testing.assert_array_equal(got.diameter_mm, [32.0, 40.0, 25.0, 32.0])
    np.testing.assert_allclose(got.near_px, table_to_rectified([[100, 200], [300, 200], [500, 200], [130, 220]], 2.0))
    run_mm = 6.0 * 25.4 * settings.expected_reach_moves + settings.expected_reach_margin_mm
    # a unit whose Move is not known, or a model of no unit, is looked for about where it was last seen
    margin_mm = settings.expected_reach_margin_mm
    np.testing.assert_allclose(got.reach_px, [2.0 * run_mm, 2.0 * margin_mm, 2.0 * margin_mm, 2.0 * run_mm])


@pytest.mark.parametrize(("snap_to_roster", "only_roster_sizes"), [(True, True), (False, False)])
def test_a_whole_roster_need_not_cut_the_sizes_a_base_snaps_to(
    config: Settings, snap_to_roster: bool, only_roster_sizes: bool
) -> None:
    # the sample's truth as the roster, every base declared 32 mm: snapped to the roster's sizes every base reads 32;
    # otherwise the sizes read stand (the review pairs a base read a size off with its model at a price)
    (sample,) = [s for s in load_samples("sample_images") if s.name == "skirmish_1080p"]
    truth = rules.state_from_dict({k: sample.truth[k] for k in ("table", "units", "models")})
    roster = dataclasses.replace(
        truth, models=tuple(dataclasses.replace(m, base=rules.RoundBase(32.0)) for m in truth.models)
    )
    image = read_image(sample.image)
    got = detect_frame(
        image, sample.spec, config, sample.camera, roster=roster, whole_roster=True, snap_to_roster=snap_to_roster
    )
    sizes = {2.0 * m.base.semi_axes_mm[0] for m in got.state.models}
    truth_sizes = {2.0 * m.base.semi_axes_mm[0] for m in truth.models}
    assert len(truth_sizes) > 1
    assert (sizes == {32.0}) is only_roster_sizes


_R1 = rules.Model("r1", "red", 300.0, 300.0, rules.RoundBase(32.0))
_X1 = rules.Model("x1", None, 600.0, 300.0, rules.RoundBase(25.0))


@pytest.mark.parametrize(
    ("roster", "whole_roster", "looked_for", "wanted_mm"),
    [
        (None, False, None, None),
        # a roster that only declares bases looks for none of them
        ([_R1], False, None, None),
        ([_R1], True, None, [32.0]),
        # models looked for without a roster of the whole table (a dashboard's units)
        (None, False, [_R1, _X1], [32.0, 25.0]),
        # a whole roster is what is looked for
        ([_X1], True, [_R1], [25.0]),
    ],
)
def test_the_bases_looked_for_reach_the_detector(
    monkeypatch: pytest.MonkeyPatch,
    empty_table: Rendered,
    config: Settings,
    roster: list[rules.Model] | None,
    whole_roster: bool,
    looked_for: list[rules.Model] | None,
    wanted_mm: list[float] | None,
) -> None:
    table = rules.Table(empty_table.spec.width_mm, empty_table.spec.depth_mm)
    units = (rules.Unit("red", player="A", move_in=6.0),)

    def state(models: list[rules.Model] | None) -> rules.TableState | None:
        return None if models is None else rules.TableState(table, units, tuple(models))

    seen: list[object] = []

    def detect(*args: object, expected: object = None, **kwargs: object) -> tuple[BaseDetections, Doubts]:
        seen.append(expected)
        return BaseDetections.empty(), Doubts.empty()

    monkeypatch.setattr("tableref.pipeline.frame.detect_bases_and_doubts", detect)
    detect_frame(
        empty_table.image,
        empty_table.spec,
        config,
        empty_table.camera,
        roster=state(roster),
        whole_roster=whole_roster,
        looked_for=state(looked_for),
    )
    (expected,) = seen
    if wanted_mm is None:
        assert expected is None
        return
    assert expected is not None
    assert expected.diameter_mm.tolist() == wanted_mm
