"""The assignment solver against brute force, and gating."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tableref.assign import gated_assignment, min_cost_assignment


def brute_force(cost: np.ndarray) -> float:
    r, c = cost.shape
    if r <= c:
        return min(sum(cost[i, p[i]] for i in range(r)) for p in itertools.permutations(range(c), r))
    return brute_force(cost.T)


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (3, 3), (4, 6), (6, 4), (5, 5), (2, 7)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_brute_force(rows: int, cols: int, seed: int) -> None:
    cost = np.random.default_rng(seed).uniform(0, 100, (rows, cols))
    r, c = min_cost_assignment(cost)
    assert len(r) == min(rows, cols)
    assert len(set(r.tolist())) == len(r) and len(set(c.tolist())) == len(c)
    assert cost[r, c].sum() == pytest.approx(brute_force(cost))


def test_crossing_moves_keep_identities() -> None:
    # Two models 30 mm apart both move 20 mm right: greedy matching of b's new spot to a would swap them.
    before = np.array([[0.0, 0.0], [30.0, 0.0]])
    after = np.array([[20.0, 0.0], [50.0, 0.0]])
    cost = np.linalg.norm(before[:, None] - after[None], axis=2)
    _, c = min_cost_assignment(cost)
    assert c.tolist() == [0, 1]


@pytest.mark.parametrize(
    ("cost", "gate", "pairs"),
    [
        ([[1.0, 50.0], [50.0, 2.0]], 10.0, [(0, 0), (1, 1)]),
        ([[1.0, 50.0], [50.0, 60.0]], 10.0, [(0, 0)]),
        ([[1.0, 2.0], [3.0, 50.0]], 10.0, [(0, 1), (1, 0)]),  # both matched beats the cheapest single pair
        ([[50.0]], 10.0, []),
        (np.zeros((0, 3)), 10.0, []),
    ],
)
def test_gated_assignment(cost: list[list[float]], gate: float, pairs: list[tuple[int, int]]) -> None:
    r, c = gated_assignment(np.asarray(cost, dtype=float), gate)
    assert list(zip(r.tolist(), c.tolist(), strict=True)) == pairs


@pytest.mark.parametrize(
    ("cost", "unmatched", "pairs"),
    [
        # a pair 0.7 apart is not broken to pair the other row as well: that would move the first by 24 more
        ([[0.7, 24.6], [25.1, 45.0]], 40.0, [(0, 0)]),
        ([[0.7, 24.6], [25.1, 45.0]], None, [(0, 1), (1, 0)]),
        # where the second pair costs less than leaving its row alone, both are paired
        ([[1.0, 2.0], [3.0, 50.0]], 10.0, [(0, 1), (1, 0)]),
        ([[1.0, 50.0], [50.0, 2.0]], 10.0, [(0, 0), (1, 1)]),
        # more rows than columns: the best row takes the column
        ([[5.0], [1.0], [3.0]], 40.0, [(1, 0)]),
        # one cost per row: the first pair and the second row alone cost 40.7, both rows paired 49.7
        ([[0.7, 24.6], [25.1, 45.0]], [40.0, 40.0], [(0, 0)]),
        # ... where that row alone costs 70, both are paired
        ([[0.7, 24.6], [25.1, 45.0]], [40.0, 70.0], [(0, 1), (1, 0)]),
    ],
)
def test_a_row_left_alone_costs_the_unmatched_cost(
    cost: list[list[float]], unmatched: float | list[float] | None, pairs: list[tuple[int, int]]
) -> None:
    alone = np.asarray(unmatched) if isinstance(unmatched, list) else unmatched
    r, c = gated_assignment(np.asarray(cost, dtype=float), 40.0, unmatched_cost=alone)
    assert list(zip(r.tolist(), c.tolist(), strict=True)) == pairs
