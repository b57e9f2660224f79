"""Optimal one-to-one assignment with gating: which detection is which known model.

Greedy nearest-neighbour matching swaps identities when two models stand close together and both move; the
minimum-cost assignment does not. Pairs farther apart than the gate are never matched.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

import rules

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


def min_cost_assignment(cost: FloatArray) -> tuple[IntArray, IntArray]:
    """Rows and columns of a minimum-cost matching of a (R, C) cost matrix (finite entries).

    Every row is matched when R <= C, every column when C <= R. Returns two (min(R, C),) index arrays, rows
    ascending. Shortest augmenting paths with potentials (the Jonker-Volgenant form of the Hungarian method),
    O(n^3).
    """
    cost = np.asarray(cost, dtype=np.float64)
    transposed = cost.shape[0] > cost.shape[1]
    if transposed:
        cost = cost.T
    n_rows, n_cols = cost.shape
    if n_rows == 0:
        empty = np.empty(0, dtype=np.intp)
        return empty, empty.copy()
    u = np.zeros(n_rows + 1)
    v = np.zeros(n_cols + 1)
    # col_match[j] = row (1-based) matched to column j (1-based); column 0 is the augmenting path's root.
    col_match = np.zeros(n_cols + 1, dtype=np.intp)
    way = np.zeros(n_cols + 1, dtype=np.intp)
    for row in range(1, n_rows + 1):
        col_match[0] = row
        j0 = 0
        min_to = np.full(n_cols + 1, np.inf)
        used = np.zeros(n_cols + 1, dtype=bool)
        while True:
            used[j0] = True
            i0 = col_match[j0]
            free = ~used[1:]
            reduced = cost[i0 - 1] - u[i0] - v[1:]
            better = free & (reduced < min_to[1:])
            min_to[1:][better] = reduced[better]
            way[1:][better] = j0
            candidates = np.where(free, min_to[1:], np.inf)
            j1 = int(np.argmin(candidates)) + 1
            delta = candidates[j1 - 1]
            u[col_match[used]] += delta
            v[used] -= delta
            min_to[1:][free] -= delta
            j0 = j1
            if col_match[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            col_match[j0] = col_match[j1]
            j0 = j1
    cols = np.flatnonzero(col_match[1:])
    rows = col_match[1:][cols] - 1
    if transposed:
        rows, cols = cols, rows
    order = np.argsort(rows)
    return rows[order].astype(np.intp), cols[order].astype(np.intp)


def gated_assignment(
    cost: FloatArray, gate: float, unmatched_cost: float | FloatArray | None = None
) -> tuple[IntArray, IntArray]:
    """Minimum-cost matching in which no pair costs more than ``gate``; others stay unmatched.

    Gated-out pairs get a cost above any feasible total, so the solver prefers leaving both ends unmatched to
    using them, and any that are still chosen are dropped: as many pairs as the gate allows. With
    ``unmatched_cost`` (one for every row, or (R,) one per row), a row may instead stay unmatched at that cost: one
    more pair is not worth moving the others by more than it in all. Returns (rows, cols) of the kept pairs.
    """
    cost = np.asarray(cost, dtype=np.float64)
    if cost.size == 0:
        empty = np.empty(0, dtype=np.intp)
        return empty, empty.copy()
    allowed = cost <= gate
    n_rows, n_cols = cost.shape
    alone_cost = None if unmatched_cost is None else np.broadcast_to(np.asarray(unmatched_cost, np.float64), n_rows)
    spare = 0.0 if alone_cost is None else float(alone_cost.sum())
    penalty = (float(np.abs(cost[allowed]).sum()) if allowed.any() else 0.0) + gate + spare + 1.0
    padded = np.where(allowed, cost, penalty)
    if alone_cost is not None:
        # a column of its own per row, open to that row alone: leaving it unmatched
        alone = np.full((n_rows, n_rows), penalty)
        np.fill_diagonal(alone, alone_cost)
        padded = np.hstack([padded, alone])
    rows, cols = min_cost_assignment(padded)
    real = cols < n_cols
    rows, cols = rows[real], cols[real]
    keep = allowed[rows, cols]
    return rows[keep], cols[keep]


def centres_mm(models: Sequence[rules.Model]) -> FloatArray:
    """(N, 2) centres of ``models`` in table millimetres."""
    return np.array([[m.x_mm, m.y_mm] for m in models], dtype=np.float64).reshape(-1, 2)


def match_models(
    a: Sequence[rules.Model], b: Sequence[rules.Model], gate_mm: float, unmatched_mm: float | None = None
) -> tuple[IntArray, IntArray]:
    """Which model of ``b`` each model of ``a`` is: minimum total centre distance, no pair farther apart than
    ``gate_mm`` (a model of ``a`` left unmatched at the cost of ``unmatched_mm``; None: as many pairs as the gate
    allows; see :func:`gated_assignment`). Returns (rows into a, cols into b) of the matched pairs."""
    pa, pb = centres_mm(a), centres_mm(b)
    cost = np.hypot(pa[:, None, 0] - pb[None, :, 0], pa[:, None, 1] - pb[None, :, 1])
    return gated_assignment(cost, gate_mm, unmatched_mm)
