"""The pack's completion by the finder (vision.later_looks.pack_completion): a base its unit's neighbours and a weak
finder peak vouch for, placed where solid bases leave room for it; which of the pack's seeds are worth reading
where the finder has looked; and which bases found the finder's doubt drops (vision.later_looks.finder_look)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tableref.config import load_config
from vision.circles import centre_distances
from vision.detections import BaseDetections
from vision.expected import ExpectedBases
from vision.finder import DIAMETER_UNIT_MM, STRIDE, FinderMaps
from vision.later_looks import _finder_may_keep, finder_look, pack_completion
from vision.look import View
from vision.seeds import Seeds

SCALE = 2.0  # px per mm of the view; the finder's maps are read at 1 px/mm
SETTINGS = load_config().vision


def _found(centres_mm: list[tuple[float, float]], diameter_mm: float) -> BaseDetections:
    n = len(centres_mm)
    centre_px = np.array(centres_mm, np.float64).reshape(-1, 2) * SCALE
    return BaseDetections(
        centre_px,
        np.full(n, 0.5 * diameter_mm * SCALE),
        np.full(n, diameter_mm),
        np.ones(n),
        np.ones(n),
        np.zeros(n),
        np.full(n, 0.1),
        np.zeros(n),
        np.zeros(n),
        np.ones(n),
    )


def _peak(x_mm: float, y_mm: float, probability: float, diameter_mm: float) -> FinderMaps:
    """Maps of a 200 x 200 mm view with one peak at (x_mm, y_mm)."""
    cells = 200 // STRIDE
    prob = np.zeros((cells, cells), np.float32)
    offset = np.zeros((2, cells, cells), np.float32)
    log_d = np.zeros((cells, cells), np.float32)
    # a cell's centre is at ((i + 0.5) * STRIDE - 0.5) px of the 1 px/mm view; the offset places the peak within it
    u, v = (x_mm + 0.5) / STRIDE - 0.5, (y_mm + 0.5) / STRIDE - 0.5
    ix, iy = round(u), round(v)
    prob[iy, ix] = probability
    offset[:, iy, ix] = (u - ix, v - iy)
    log_d[iy, ix] = math.log(diameter_mm / DIAMETER_UNIT_MM)
    return FinderMaps(prob, offset, log_d, SCALE)


# three 25 mm bases round a gap where a fourth stands: centres 25 mm from (100, 100) at 0, 120 and 240 degrees
RING = [(100 + 25 * math.cos(a), 100 + 25 * math.sin(a)) for a in np.radians([0, 120, 240])]


@pytest.mark.parametrize(
    ("found", "peak", "want_mm"),
    [
        # among three of its size, a weak peak is a base of theirs, its size theirs
        (_found(RING, 25.0), (100, 100, 0.45, 26.0), 25.0),
        # a peak 1.5 mm off the gap's middle is moved out of the base it overlaps
        (_found(RING, 25.0), (101.5, 100, 0.45, 25.0), 25.0),
        # below the bar: nothing
        (_found(RING, 25.0), (100, 100, 0.35, 25.0), None),
        # two neighbours are no pack
        (_found(RING[:2], 25.0), (100, 100, 0.45, 25.0), None),
        # neighbours of another size are not its kin
        (_found(RING, 40.0), (100, 100, 0.45, 25.0), None),
        # a peak deep inside a base found would need too long a move
        (_found(RING, 25.0), (112, 100, 0.45, 25.0), None),
    ],
)
def test_a_pack_gains_a_base_only_where_its_kin_and_the_finder_vouch_for_it(
    found: BaseDetections, peak: tuple[float, float, float, float], want_mm: float | None
) -> None:
    out = pack_completion(found, _peak(*peak), SCALE, SETTINGS, None)
    if want_mm is None:
        assert len(out) == len(found)
        return
    assert len(out) == len(found) + 1
    new = out[~np.any(centre_distances(out.center_px, found.center_px) < 1e-9, axis=1)]
    assert new.diameter_mm.tolist() == [want_mm]
    # solid: it overlaps none of its neighbours (beyond rounding), and stands within its peak's reach
    gap_mm = centre_distances(new.center_px, found.center_px) / SCALE - (want_mm + found.diameter_mm) / 2
    assert gap_mm.min() >= -0.05
    assert np.hypot(*(new.center_px[0] / SCALE - np.array(peak[:2]))) <= SETTINGS.finder.pack_move_mm
    assert new.center_sigma_px[0] >= SETTINGS.finder.centre_sigma_mm * SCALE


def test_the_completion_is_off_at_zero() -> None:
    off = SETTINGS.replaced({"finder.pack_probability": 0.0})
    assert len(pack_completion(_found(RING, 25.0), _peak(100, 100, 0.9, 25.0), SCALE, off, None)) == 3


def test_a_base_between_kin_of_two_sizes_takes_a_standard_size() -> None:
    # four neighbours round the gap, two of 25 mm and two of 27 mm: their median, 26 mm, is no base's size
    angles = np.radians([0, 90, 180, 270])
    ring = [(100 + 26.5 * math.cos(a), 100 + 26.5 * math.sin(a)) for a in angles]
    found = BaseDetections.concatenate([_found(ring[:2], 25.0), _found(ring[2:], 27.0)])
    out = pack_completion(found, _peak(100, 100, 0.45, 26.0), SCALE, SETTINGS, None)
    assert len(out) == len(found) + 1
    new = out[~np.any(centre_distances(out.center_px, found.center_px) < 1e-9, axis=1)]
    assert new.diameter_mm[0] in SETTINGS.base_sizes_mm


def _seeds(centres_mm: list[tuple[float, float]], diameter_mm: float) -> Seeds:
    n = len(centres_mm)
    radius_px = np.full(n, 0.5 * diameter_mm * SCALE)
    return Seeds(
        np.array(centres_mm, np.float64).reshape(-1, 2) * SCALE,
        radius_px,
        np.stack([0.8 * radius_px, 1.2 * radius_px], axis=1),
        np.ones(n, np.intp),
        np.full(n, 0.1),
    )


# the finder keeps a base within finder.reach_mm (8) of a peak of at least keep_probability (0.3); a reading lies
# within rim.seed_search_mm (3) of its seed, so a seed up to 11 mm from such a peak may yield a base it keeps
@pytest.mark.parametrize(
    ("seed_mm", "diameter_mm", "peak", "read"),
    [
        ((100, 100), 25.0, (100, 100, 0.9, 25.0), True),
        ((110, 100), 25.0, (100, 100, 0.35, 25.0), True),
        ((113, 100), 25.0, (100, 100, 0.9, 25.0), False),
        ((100, 100), 25.0, (100, 100, 0.2, 25.0), False),
        # of bases larger than it was fitted on the finder says nothing: their seeds are read
        ((100, 100), 80.0, (20, 20, 0.9, 25.0), True),
    ],
)
def test_a_pack_seed_is_read_only_where_the_finder_may_keep_its_base(
    seed_mm: tuple[float, float], diameter_mm: float, peak: tuple[float, float, float, float], read: bool
) -> None:
    assert _finder_may_keep(_seeds([seed_mm], diameter_mm), _peak(*peak), SCALE, SETTINGS).tolist() == [read]


def test_every_pack_seed_is_read_where_the_finder_drops_nothing() -> None:
    off = SETTINGS.replaced({"finder.keep_probability": 0.0})
    assert _finder_may_keep(_seeds([(100, 100)], 25.0), _peak(20, 20, 0.9, 25.0), SCALE, off).tolist() == [True]


@pytest.mark.parametrize(
    ("listed", "changed", "kept"),
    [
        # the finder sees nothing at either base: both dropped where no roster lists them ...
        (None, {}, []),
        # ... but one where a listed model of its size was last seen (2 mm off) stands
        ([(25.0, (52.0, 50.0))], {}, [0]),
        # not one of another size, nor one last seen farther off than expected.keep_mm, nor with the rule off
        ([(40.0, (50.0, 50.0))], {}, []),
        ([(25.0, (56.0, 50.0))], {}, []),
        ([(25.0, (50.0, 50.0))], {"expected.keep_mm": 0.0}, []),
    ],
)
def test_the_finders_doubt_drops_a_base_unless_the_state_before_saw_it_there(
    listed: list[tuple[float, tuple[float, float]]] | None, changed: dict[str, float], kept: list[int]
) -> None:
    settings = SETTINGS.replaced(changed)
    grey = np.full((400, 400), 120, np.uint8)
    view = View(grey, grey, SCALE, settings, None, None, None)
    found = _found([(50.0, 50.0), (150.0, 150.0)], 25.0)
    expected = None
    if listed is not None:
        expected = ExpectedBases(
            np.array([d for d, _ in listed]),
            np.array([p for _, p in listed], np.float64) * SCALE,
            np.full(len(listed), np.inf),
        )
    nothing = _peak(100, 100, 0.0, 25.0)
    out = finder_look(view, None, found, nothing, np.zeros(len(found)), expected)
    np.testing.assert_allclose(out.center_px, found.center_px[kept].reshape(-1, 2))
