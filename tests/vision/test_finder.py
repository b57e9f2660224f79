"""The learned finder: reading its maps, its file, what it sees on a rendered table, and the look it adds."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import onnxruntime
import pytest

from calibration.table import calibrate_table, rectified_to_table
from synth.wide import random_scene
from synth.wide.frame import write_frame
from synth.wide.tables import spec_toml
from tableref.config import load_config
from tableref.evaluate import FrameScore, load_samples, score_frame
from tableref.evaluate import Sample as EvalSample
from tableref.sources import read_image
from tests.vision import vision_scenes as vs
from tests.vision.hand_rules import hand_rule_settings
from vision import SettingsError
from vision.detect import detect_bases
from vision.finder import DIAMETER_UNIT_MM, FINDER_PX_PER_MM, STRIDE, FinderMaps, load_finder

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"


def _maps(cells: list[tuple[int, int, float, float, float, float]], view_px_per_mm: float) -> FinderMaps:
    """Maps of 30 x 40 cells with a peak per (ix, iy, probability, offset x, offset y, diameter mm)."""
    prob = np.zeros((30, 40), np.float32)
    offset = np.zeros((2, 30, 40), np.float32)
    log_d = np.zeros((30, 40), np.float32)
    for ix, iy, p, ox, oy, d in cells:
        prob[iy, ix] = p
        prob[iy, ix + 1] = p / 2  # a neighbour that is no peak of its own
        offset[:, iy, ix] = (ox, oy)
        log_d[iy, ix] = math.log(d / DIAMETER_UNIT_MM)
    return FinderMaps(prob, offset, log_d, view_px_per_mm)


@pytest.mark.parametrize(
    ("view_px_per_mm", "cell", "offset", "want_px"),
    [
        # the finder's own scale: cell (10, 5) plus a quarter cell covers pixels 40-43 and 20-23
        (1.0, (10, 5), (0.25, -0.25), (10.25 * STRIDE + 1.5, 4.75 * STRIDE + 1.5)),
        # a view twice as fine: the same place in mm, twice the pixels
        (2.0, (10, 5), (0.0, 0.0), ((10 * STRIDE + 2.0) * 2 - 0.5, (5 * STRIDE + 2.0) * 2 - 0.5)),
        # a coarser view
        (0.8, (3, 20), (0.5, 0.0), ((3.5 * STRIDE + 2.0) * 0.8 - 0.5, (20 * STRIDE + 2.0) * 0.8 - 0.5)),
    ],
)
def test_a_peak_is_read_at_its_place_in_the_views_pixels(
    view_px_per_mm: float, cell: tuple[int, int], offset: tuple[float, float], want_px: tuple[float, float]
) -> None:
    maps = _maps([(*cell, 0.9, *offset, 40.0)], view_px_per_mm)
    centre, diameter, prob = maps.peaks(0.5)
    assert FINDER_PX_PER_MM == 1.0
    assert centre == pytest.approx(np.array([want_px]), abs=1e-4)
    assert diameter == pytest.approx([40.0], rel=1e-5)
    assert prob == pytest.approx([0.9])


@pytest.mark.parametrize(
    ("min_probability", "want"),
    [
        (0.5, [0.9, 0.6]),  # most probable first; the halves beside them are no peaks
        (0.7, [0.9]),
        (0.95, []),
    ],
)
def test_peaks_below_the_bar_and_beside_a_higher_cell_are_left_out(min_probability: float, want: list[float]) -> None:
    maps = _maps([(5, 5, 0.6, 0.0, 0.0, 25.0), (20, 12, 0.9, 0.0, 0.0, 32.0)], 1.0)
    centre, diameter, prob = maps.peaks(min_probability)
    assert prob.tolist() == pytest.approx(want)
    assert centre.shape == (len(want), 2) and diameter.shape == (len(want),)


def test_the_probability_near_a_place_is_the_highest_cell_within_reach() -> None:
    maps = _maps([(10, 10, 0.8, 0.0, 0.0, 32.0)], 2.0)
    peak_px, _d, _p = maps.peaks(0.5)
    at = np.array([peak_px[0], peak_px[0] + [6.0 * 2, 0.0], peak_px[0] + [40.0 * 2, 0.0], [-500.0, -500.0]])
    # 6 mm away is within 8 mm; 40 mm away and off the maps are not
    assert maps.probability_near(at, 8.0) == pytest.approx([0.8, 0.8, 0.0, 0.0])


def test_the_diameter_near_a_place_is_that_of_the_most_probable_cell_within_reach() -> None:
    maps = _maps([(10, 10, 0.8, 0.0, 0.0, 32.0), (12, 10, 0.6, 0.0, 0.0, 25.0)], 1.0)
    peak_px, _d, _p = maps.peaks(0.5)
    at = np.array([peak_px[1], peak_px[1] + [30.0, 0.0], [-500.0, -500.0]])
    # at the 25 mm peak the 32 mm one, 8 mm away, is within 10 mm and more probable; 30 mm on, of the two only the
    # 25 mm one is within 32 mm; nothing is near a place off the maps
    got = np.concatenate([maps.diameter_near(at[:1], 10.0), maps.diameter_near(at[1:], 32.0)])
    assert got[:2] == pytest.approx([32.0, 25.0], abs=1e-3)
    assert np.isnan(got[2])


def test_a_file_that_is_no_finder_is_a_named_error(tmp_path: Path) -> None:
    bad = tmp_path / "finder.onnx"
    bad.write_bytes(b"not a net at all")
    with pytest.raises(SettingsError, match="not a base finder"):
        load_finder(bad)
    with pytest.raises(SettingsError, match="no such file"):
        load_finder(tmp_path / "missing.onnx")


class _Port:
    def __init__(self, shape: list[object]) -> None:
        self.name, self.shape = "x", shape


@pytest.mark.parametrize(
    ("inputs", "outputs"),
    [
        # two inputs, an input of an image without its batch, two outputs: nets, but not the finder
        ([[1, 3, "h", "w"], [1]], [[1, 4, "h", "w"]]),
        ([[3, "h", "w"]], [[1, 4, "h", "w"]]),
        ([[1, 3, "h", "w"]], [[1, 4, "h", "w"], [1]]),
    ],
)
def test_a_net_of_another_shape_is_no_finder(
    inputs: list[list[object]], outputs: list[list[object]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class OtherNet:
        def __init__(self, *_args: object, **_kwargs: object) -> None:
            pass

        def get_inputs(self) -> list[_Port]:
            return [_Port(shape) for shape in inputs]

        def get_outputs(self) -> list[_Port]:
            return [_Port(shape) for shape in outputs]

    path = tmp_path / "other.onnx"
    path.write_bytes(b"a net of another shape")
    monkeypatch.setattr(onnxruntime, "InferenceSession", OtherNet)
    with pytest.raises(SettingsError, match=r"not a base finder .*expected one input of shape"):
        load_finder(path)


@pytest.mark.parametrize("name", ["skirmish_1080p", "crowded_4k"])
def test_the_shipped_finder_sees_the_bases_of_a_sample_frame_and_not_a_bare_mat(name: str) -> None:
    sample = next(s for s in load_samples(SAMPLES) if s.name == name)
    image = read_image(sample.image)
    calibration = calibrate_table(image, sample.spec, sample.camera, settings=load_config().calibration)
    px_per_mm = calibration.px_per_mm
    view = calibration.rectify(image, px_per_mm)
    centre_px, _diameter_mm, _prob = load_finder().read(view, px_per_mm).peaks(0.5)
    seen = np.array([sample.truth["visibility"].get(m["id"], 1.0) >= 0.6 for m in sample.truth["models"]])
    truth_mm = np.array([[m["x_mm"], m["y_mm"]] for m in sample.truth["models"]])
    found_mm = rectified_to_table(centre_px, px_per_mm)
    apart = np.hypot(*(truth_mm[:, None, :] - found_mm[None, :, :]).transpose(2, 0, 1))
    assert np.mean(apart[seen].min(axis=1) <= 4.0) >= 0.9
    # nearly every peak is a base's (one hardly in view counts)
    assert np.mean(apart.min(axis=0) <= 4.0) >= 0.9
    bare = np.full_like(view, 110)
    assert len(load_finder().read(bare, px_per_mm).peaks(0.5)[0]) == 0


class _WideFrames:
    """Frames of the wide-look renderer (never fitted on), each rendered once for the module, and each frame's score
    with the settings as shipped, also computed once."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.samples: dict[tuple[int, str], EvalSample] = {}
        self.shipped: dict[tuple[int, str], FrameScore] = {}

    def sample(self, seed: int, resolution: str) -> EvalSample:
        key = (seed, resolution)
        if key not in self.samples:
            folder = self.folder / f"{resolution}_{seed}"
            folder.mkdir()
            scene = random_scene(seed, resolution)
            (folder / f"table_{scene.table_name}.toml").write_text(spec_toml(scene.table), encoding="utf-8")
            write_frame(scene, seed, folder, f"wide_{resolution}_{seed}")
            (self.samples[key],) = load_samples(folder)
        return self.samples[key]

    def scores(
        self,
        seed: int,
        resolution: str,
        off: str = "finder.seed_probability",
        both_off: tuple[str, ...] = (),
        before: float = 0.0,
    ) -> tuple[FrameScore, FrameScore]:
        """(with the setting ``off`` at ``before``, as shipped); the settings ``both_off`` at 0 in both, so that
        ``off`` is measured alone."""
        sample = self.sample(seed, resolution)
        config = load_config()
        config = dataclasses.replace(config, vision=config.vision.replaced(dict.fromkeys(both_off, 0.0)))
        without = dataclasses.replace(config, vision=config.vision.replaced({off: before}))
        if both_off:
            return score_frame(sample, without, without.evaluate), score_frame(sample, config, config.evaluate)
        if (seed, resolution) not in self.shipped:
            self.shipped[seed, resolution] = score_frame(sample, config, config.evaluate)
        return score_frame(sample, without, without.evaluate), self.shipped[seed, resolution]


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> _WideFrames:
    return _WideFrames(tmp_path_factory.mktemp("wide"))


# frames of the development set: crowded melees of dark and flock tops at 1080p, a 4K one
@pytest.mark.parametrize(("seed", "resolution"), [(30000, "1080p"), (30010, "4k")])
def test_the_finders_look_finds_bases_the_others_missed_and_keeps_what_they_found(
    seed: int, resolution: str, wide: _WideFrames
) -> None:
    without, with_finder = wide.scores(seed, resolution)
    found_before = without.truth_matched & without.truth_visible
    found_after = with_finder.truth_matched & with_finder.truth_visible
    assert found_after.sum() > found_before.sum()
    # a base found without it is dropped only where the finder is sure there is none: a few, far fewer than it adds
    lost = np.sum(found_before & ~found_after)
    assert lost <= 3 and np.sum(found_after & ~found_before) >= 3 * lost
    # and it adds no more than one reading that is no base of the truth
    assert with_finder.detected - with_finder.matched <= without.detected - without.matched + 1
    # its sizes no worse: they are standard ones exactly, and its diameters are voted with the rims'
    assert with_finder.size_right.mean() >= without.size_right.mean() - 0.05


# development frames: a unit of clear acrylic bases with no figure on an urban mat (4K), black tops in a melee on the
# black space mat (4K); the verifier took both for tokens
@pytest.mark.parametrize(("seed", "resolution", "more"), [(30022, "4k", 2), (30007, "4k", 5)])
def test_a_unit_only_the_finder_sees_stands_whatever_the_verifier_says(
    seed: int, resolution: str, more: int, wide: _WideFrames
) -> None:
    without, with_units = wide.scores(
        seed, resolution, off="finder.unit_probability", both_off=("finder.trust_probability",)
    )
    found_before = without.truth_matched & without.truth_visible
    found_after = with_units.truth_matched & with_units.truth_visible
    assert np.sum(found_after & ~found_before) >= more
    assert np.sum(found_before & ~found_after) == 0
    assert with_units.detected - with_units.matched <= without.detected - without.matched


# a development frame: a 60 mm base, painted yellow with a light figure, that the verifier takes for a token (4K)
@pytest.mark.parametrize(("seed", "resolution"), [(30013, "4k")])
def test_a_base_the_finder_is_sure_of_stands_whatever_the_verifier_says(
    seed: int, resolution: str, wide: _WideFrames
) -> None:
    without, with_trust = wide.scores(seed, resolution, off="finder.trust_probability")
    found_before = without.truth_matched & without.truth_visible
    found_after = with_trust.truth_matched & with_trust.truth_visible
    assert np.sum(found_after & ~found_before) >= 1
    assert np.sum(found_before & ~found_after) == 0
    assert with_trust.detected - with_trust.matched <= without.detected - without.matched


@pytest.mark.parametrize(
    ("keep_probability", "want_mm"),
    [
        (0.0, [32.0, 80.0]),  # no veto: both stand
        (2.0, [80.0]),  # a veto nothing passes: the finder was never shown an 80 mm base, which stands regardless
    ],
)
def test_the_finders_veto_spares_bases_larger_than_it_knows(keep_probability: float, want_mm: list[float]) -> None:
    px_per_mm = 1.5
    bases = [vs.Placed((60 * px_per_mm, 70 * px_per_mm), 32.0), vs.Placed((170 * px_per_mm, 70 * px_per_mm), 80.0)]
    scene = vs.draw_scene((int(140 * px_per_mm), int(240 * px_per_mm)), px_per_mm, bases, np.random.default_rng(3))
    settings = hand_rule_settings().replaced(
        {
            "verdicts.min_figure_contrast": 0.0,
            "finder.seed_probability": 2.0,  # on, but reading nothing of its own: only its veto acts
            "finder.sure_probability": 2.0,
            "finder.keep_probability": keep_probability,
        }
    )
    dets = detect_bases(scene.image_bgr, px_per_mm, settings)
    assert sorted(dets.diameter_mm.tolist()) == want_mm


# a development frame: bases inside a melee of their unit that the finder sees under its sure bar, overlapping their
# neighbours as it places them (4K)
@pytest.mark.parametrize(("seed", "resolution", "more"), [(30004, "4k", 1), (30015, "1080p", 1)])
def test_a_base_a_pack_lacks_stands_where_the_finder_sees_one_among_its_kin(
    seed: int, resolution: str, more: int, wide: _WideFrames
) -> None:
    without, with_packs = wide.scores(seed, resolution, off="finder.pack_probability")
    found_before = without.truth_matched & without.truth_visible
    found_after = with_packs.truth_matched & with_packs.truth_visible
    assert np.sum(found_after & ~found_before) >= more
    assert np.sum(found_before & ~found_after) == 0
    assert with_packs.detected - with_packs.matched <= without.detected - without.matched


# a development frame: a unit of black 32 mm bases on the black space mat, that the finder sees at 0.55-0.65 and no rim
# read shows (4K); below finder.sure_probability its bases stand only as a unit's
@pytest.mark.parametrize(("seed", "resolution", "more"), [(30010, "4k", 3)])
def test_the_finders_own_bases_below_its_sure_bar_stand_as_a_unit(
    seed: int, resolution: str, more: int, wide: _WideFrames
) -> None:
    sure = load_config().vision.finder.sure_probability
    without, with_units = wide.scores(seed, resolution, off="finder.unit_probability", before=sure)
    found_before = without.truth_matched & without.truth_visible
    found_after = with_units.truth_matched & with_units.truth_visible
    assert np.sum(found_after & ~found_before) >= more
    assert np.sum(found_before & ~found_after) == 0
    assert with_units.detected - with_units.matched <= without.detected - without.matched
