"""Edge-to-edge gaps of round and oval bases against closed forms and fine polygons."""

from __future__ import annotations

import dataclasses
import math
import tracemalloc

import numpy as np
import pytest
import shapely
import shapely.affinity

import rules
from rules import geometry
from rules.geometry import BaseArrays, candidate_pairs

# Polygons of 8192 vertices are within 2e-5 mm of a 100 mm ellipse: a reference far finer than 0.01 mm.
FINE_QUAD_SEGS = 2048
# 2048 vertices keep a 40 mm ellipse within 2e-4 mm: enough against the 0.02 mm margin, and 16 times quicker.
COARSER_QUAD_SEGS = 512


def bases(centers, axes, rotation_deg, sigma=None) -> BaseArrays:  # type: ignore[no-untyped-def]
    c = np.asarray(centers, dtype=float)
    a = np.asarray(axes, dtype=float)
    s = np.zeros(len(c)) if sigma is None else np.asarray(sigma, dtype=float)
    no_doubt = np.zeros((len(c), 2))
    return BaseArrays(c, a, np.deg2rad(np.asarray(rotation_deg, dtype=float)), a[:, 0] == a[:, 1], s, no_doubt)


@pytest.mark.parametrize(
    ("a", "b", "expected_mm"),
    [
        # (centre, semi-axes, rotation) of each base; expected gap worked out along the centre line.
        (((0, 0), (13.5, 13.5), 0), ((40, 0), (13.5, 13.5), 0), 13.0),
        (((0, 0), (30, 17.5), 0), ((60, 0), (12.5, 12.5), 0), 17.5),
        (((0, 0), (30, 17.5), 0), ((0, 60), (12.5, 12.5), 0), 30.0),
        (((0, 0), (30, 17.5), 90), ((60, 0), (12.5, 12.5), 0), 30.0),
        (((0, 0), (30, 17.5), 0), ((100, 0), (30, 17.5), 0), 40.0),
        (((0, 0), (30, 17.5), 0), ((0, 100), (30, 17.5), 180), 65.0),
        (((0, 0), (30, 17.5), 0), ((50, 0), (30, 17.5), 0), -10.0),  # overlapping along the long axis
        (((0, 0), (16, 16), 0), ((29, 0), (16, 16), 0), -3.0),
    ],
)
def test_gap_along_axes(a, b, expected_mm) -> None:  # type: ignore[no-untyped-def]
    arr = bases([a[0], b[0]], [a[1], b[1]], [a[2], b[2]])
    assert arr.gaps_mm(np.array([0]), np.array([1]))[0] == pytest.approx(expected_mm, abs=1e-6)
    assert arr.gaps_mm(np.array([1]), np.array([0]))[0] == pytest.approx(expected_mm, abs=1e-6)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_separated_ovals_match_fine_polygons(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 60
    arr = bases(rng.uniform(0, 250, (n, 2)), rng.uniform(10, 50, (n, 2)), rng.uniform(0, 180, n))
    i, j = np.arange(0, n, 2), np.arange(1, n, 2)
    got = arr.gaps_mm(i, j)
    polys = arr.polygons(np.arange(n), quad_segs=FINE_QUAD_SEGS)
    ref = shapely.distance(polys[i], polys[j])
    apart = ref > 0
    assert apart.sum() > 10
    assert np.abs(got[apart] - ref[apart]).max() < 0.01


@pytest.mark.parametrize("seed", [4, 5])
def test_overlap_depth_is_the_shortest_separating_shift(seed: int) -> None:
    """Shifting B by the depth along the best direction separates them; 0.02 mm less in any direction does not."""
    rng = np.random.default_rng(seed)
    for _ in range(4):
        axes = rng.uniform(10, 40, (2, 2))
        rot = rng.uniform(0, 180, 2)
        centers = np.array([[0.0, 0.0], rng.uniform(-15, 15, 2)])
        arr = bases(centers, axes, rot)
        gap = arr.gaps_mm(np.array([0]), np.array([1]))[0]
        assert gap < 0
        polys = arr.polygons(np.arange(2), quad_segs=COARSER_QUAD_SEGS)
        angles = np.deg2rad(np.arange(0, 360, 0.25))
        shifts = np.stack([np.cos(angles), np.sin(angles)], axis=1)
        moved_far = [shapely.affinity.translate(polys[1], *(s * (-gap + 0.02))) for s in shifts]
        moved_near = [shapely.affinity.translate(polys[1], *(s * (-gap - 0.02))) for s in shifts]
        assert shapely.disjoint(polys[0], moved_far).any()
        assert not shapely.disjoint(polys[0], moved_near).any()


def test_round_gap_is_centre_distance_minus_radii() -> None:
    rng = np.random.default_rng(7)
    c = rng.uniform(0, 500, (50, 2))
    r = rng.choice([12.5, 13.5, 16.0, 20.0, 25.0], 50)
    arr = bases(c, np.stack([r, r], axis=1), np.zeros(50))
    i, j = np.arange(25), np.arange(25, 50)
    expected = np.hypot(*(c[j] - c[i]).T) - r[i] - r[j]
    np.testing.assert_allclose(arr.gaps_mm(i, j), expected, atol=1e-9)


@pytest.mark.parametrize("reach_mm", [0.0, 25.4, 76.2])
def test_candidate_pairs_hold_every_pair_within_reach(reach_mm: float) -> None:
    rng = np.random.default_rng(11)
    n = 120
    arr = bases(rng.uniform(0, 400, (n, 2)), rng.uniform(10, 40, (n, 2)), rng.uniform(0, 180, n))
    i, j = candidate_pairs(arr, reach_mm)
    assert np.all(i < j)
    ii, jj = np.triu_indices(n, k=1)
    all_gaps = arr.gaps_mm(ii, jj)
    within = set(zip(ii[all_gaps <= reach_mm].tolist(), jj[all_gaps <= reach_mm].tolist(), strict=True))
    assert within
    assert within <= set(zip(i.tolist(), j.tolist(), strict=True))


def test_candidate_pairs_asked_in_slices_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(12)
    arr = bases(rng.uniform(0, 300, (200, 2)), rng.uniform(10, 40, (200, 2)), rng.uniform(0, 180, 200))
    whole = candidate_pairs(arr, 50.8)
    # a slice of 2 boxes at a time (400 possible pairs) instead of all 200 at once
    monkeypatch.setattr(geometry, "_QUERY_PAIRS", 400)
    sliced = candidate_pairs(arr, 50.8)
    assert len(whole[0]) > 200
    np.testing.assert_array_equal(sliced[0], whole[0])
    np.testing.assert_array_equal(sliced[1], whole[1])


# What the pair search may allocate (numpy arrays, which tracemalloc sees) on models all on one spot: all the pairs
# of 20,000 would be 20,000^2 / 2 = 200 million, 3.2 GB of indices alone.
STACKED_PEAK_BYTES = 400_000_000


@pytest.mark.parametrize(
    ("count", "profile", "words"),
    [
        (20_000, "skirmish", r"20000 models with more than 500,000 pairs .* stacked around \(500, 500\) mm"),
        (20_000, "legion", r"20000 models with more than 500,000 pairs .* stacked around \(500, 500\) mm"),
        # fewer pairs than the search keeps, but every one of them an overlap to report
        (900, "skirmish", r"900 models with more than 5,000 pairs standing on one another \(models stacked around"),
        (900, "legion", r"900 models with more than 5,000 pairs standing on one another \(models stacked around"),
    ],
)
def test_models_stacked_on_one_spot_are_refused_in_bounded_memory(count: int, profile: str, words: str) -> None:
    base = rules.RoundBase(25.0)
    units = (rules.Unit("a", player="p1"), rules.Unit("b", player="p2"))
    models = tuple(rules.Model(f"m{k}", "ab"[k % 2], 500.0, 500.0, base) for k in range(count))
    state = rules.TableState(rules.Table(1829.0, 1219.0), units, models)
    tracemalloc.start()
    try:
        with pytest.raises(rules.StateError, match=words):
            rules.check(state, rules.load_profile(profile))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < STACKED_PEAK_BYTES


def test_extent_of_turned_oval() -> None:
    arr = bases([[0, 0]], [[30, 17.5]], [90])
    np.testing.assert_allclose(arr.extent_mm()[0], [17.5, 30.0], atol=1e-9)


@pytest.mark.parametrize(
    ("center_b", "doubt_a", "expected_mm"),
    [
        ((50.0, 0.0), (1.0, 0.0), math.hypot(0.3, 0.4, 1.0)),
        ((0.0, 50.0), (1.0, 0.0), 0.5),
        ((30.0, 40.0), (1.0, 0.0), math.hypot(0.5, 0.6)),
        ((0.0, 0.0), (0.0, 1.0), math.hypot(0.5, 1.0)),  # centres together: no line, the whole doubt counts
    ],
)
def test_pair_sigma_takes_each_doubt_along_the_line_between_the_centres(
    center_b: tuple[float, float], doubt_a: tuple[float, float], expected_mm: float
) -> None:
    b = bases([(0.0, 0.0), center_b], [(10.0, 10.0), (10.0, 10.0)], [0.0, 0.0], sigma=[0.3, 0.4])
    b = dataclasses.replace(b, doubt_mm=np.array([doubt_a, (0.0, 0.0)]))
    one, two = np.array([0]), np.array([1])
    assert b.pair_sigma_mm(one, two)[0] == pytest.approx(expected_mm)
    assert b.pair_sigma_mm(two, one)[0] == pytest.approx(expected_mm)
    assert b.sigma_most_mm[0] == pytest.approx(math.hypot(0.3, *doubt_a))
