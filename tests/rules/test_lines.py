"""Judging gaps against a line: the untruncated rule, and solid bases whose gap cannot be negative."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rules.lines import judge, log_tail, seen_gap_mm


@pytest.mark.parametrize("z", [-40.0, -3.0, -0.5, 0.0, 0.5, 3.0, 10.0, 29.9, 30.1, 60.0])
def test_log_tail_matches_the_normal_tail(z: float) -> None:
    exact = math.log(0.5 * math.erfc(z / math.sqrt(2.0))) if z < 37 else None
    got = float(log_tail(np.array([z]))[0])
    if exact is not None:
        assert got == pytest.approx(exact, rel=1e-3)
    assert math.isfinite(got)


@pytest.mark.parametrize(
    ("gap_mm", "sigma_mm", "met", "close"),
    [
        (0.5, 0.0, True, False),
        (1.0, 0.0, True, False),
        (1.5, 0.0, False, False),
        (0.3, 0.4, True, True),
        (1.7, 0.4, False, True),
        (1.8, 0.4, False, True),
        (1.9, 0.4, False, False),
        (-0.1, 0.4, True, False),
    ],
)
def test_untruncated_rule_is_within_k_sigma(gap_mm: float, sigma_mm: float, met: bool, close: bool) -> None:
    v = judge(np.array([gap_mm]), 1.0, np.array([sigma_mm]), 2.0)
    assert (bool(v.met[0]), bool(v.close[0])) == (met, close)


@pytest.mark.parametrize(
    ("gap_mm", "sigma_mm", "limit_mm", "loose_close", "solid_close", "solid_met"),
    [
        # A measured overlap at a contact line stays surely contact.
        (-0.3, 0.4, 1.0, False, False, True),
        (0.0, 0.6, 1.0, True, True, True),
        # Measured beyond the line: the mass below zero moves up, and the call gets sharper.
        (4.9, 2.0, 1.0, True, False, False),
        # Far from zero the truncation changes nothing.
        (20.0, 0.5, 25.4, False, False, True),
        (24.9, 0.5, 25.4, True, True, True),
        (26.3, 0.5, 25.4, True, True, False),
    ],
)
def test_solid_bases_truncate_the_gap_at_zero(
    gap_mm: float, sigma_mm: float, limit_mm: float, loose_close: bool, solid_close: bool, solid_met: bool
) -> None:
    g, s = np.array([gap_mm]), np.array([sigma_mm])
    loose = judge(g, limit_mm, s, 2.0)
    solid = judge(g, limit_mm, s, 2.0, solid=True)
    assert bool(loose.close[0]) is loose_close
    assert (bool(solid.close[0]), bool(solid.met[0])) == (solid_close, solid_met)


def test_solid_verdicts_agree_with_a_sampled_truncated_normal() -> None:
    rng = np.random.default_rng(7)
    for gap_mm, sigma_mm, limit_mm in [
        (-0.3, 0.5, 1.0),
        (0.4, 0.5, 1.0),
        (1.6, 0.4, 1.0),
        (0.1, 0.2, 0.5),
        (4.9, 2.0, 1.0),
    ]:
        draws = rng.normal(gap_mm, sigma_mm, 400_000)
        draws = draws[draws >= 0]
        beyond = float(np.mean(draws > limit_mm))
        v = judge(np.array([gap_mm]), limit_mm, np.array([sigma_mm]), 2.0, solid=True)
        tail = 0.5 * math.erfc(2.0 / math.sqrt(2.0))
        assert bool(v.met[0]) is (beyond < 0.5)
        if abs(beyond - tail) > 0.003 and abs(beyond - (1 - tail)) > 0.003:
            assert bool(v.close[0]) is (tail <= beyond <= 1 - tail)


@pytest.mark.parametrize(("limit_mm", "strict"), [(-1.0, True), (0.0, False)])
def test_a_line_at_or_below_zero_is_never_truncated(limit_mm: float, strict: bool) -> None:
    v = judge(np.array([-3.0]), limit_mm, np.array([0.5]), 2.0, strict=strict, solid=True)
    assert bool(v.met[0]) and not bool(v.close[0])


def test_seen_gap_is_never_negative_for_solid_pairs() -> None:
    gaps = np.array([-2.0, 0.5])
    assert seen_gap_mm(gaps, True).tolist() == [0.0, 0.5]
    assert seen_gap_mm(gaps, False).tolist() == [-2.0, 0.5]
