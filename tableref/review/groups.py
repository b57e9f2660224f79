"""A unit moves as a unit: where each unit of the state before went, read from the shape of its group of models
among the bases of the next state, before any model is paired on its own.

Pure (models in, displacements out); :mod:`tableref.review.timeline` pairs each model about where its unit's move
takes it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import rules
from tableref.settings import ReviewSettings


def places_mm(models: Sequence[rules.Model]) -> np.ndarray:
    return np.array([[m.x_mm, m.y_mm] for m in models], dtype=np.float64).reshape(-1, 2)


def size_mm(m: rules.Model) -> float:
    a, b = m.base.semi_axes_mm
    return 2.0 * max(a, b)


def size_agreement(
    detected: Sequence[rules.Model], known: Sequence[rules.Model], settings: ReviewSettings
) -> tuple[np.ndarray, np.ndarray]:
    """(D, K) each: whether a detection's base is a known model's size (within ``size_tolerance_mm`` and twice their
    size doubts: a size read in doubt may be either of two alike), and whether it is near enough to be that model
    read a size off (within ``size_confusion_mm`` more)."""
    sizes_a = np.array([size_mm(m) for m in detected]).reshape(-1)
    sizes_b = np.array([size_mm(m) for m in known]).reshape(-1)
    doubt_a = np.array([m.base.size_sigma_mm for m in detected]).reshape(-1)
    doubt_b = np.array([m.base.size_sigma_mm for m in known]).reshape(-1)
    slack = settings.size_tolerance_mm + 2.0 * np.hypot(doubt_a[:, None], doubt_b[None, :])
    off = np.abs(sizes_a[:, None] - sizes_b[None, :])
    return off <= slack, off <= slack + settings.size_confusion_mm


def held_by(
    detected: Sequence[rules.Model], known: Sequence[rules.Model], stays: Sequence[bool], settings: ReviewSettings
) -> np.ndarray:
    """(D,) per detection, the unit of the ``known`` model that ``stays`` where it stood (its picture unchanged)
    within ``still_reach_mm`` of it and of its size, or None: such a base is that model."""
    held = np.full(len(detected), None, dtype=object)
    rows = [j for j, s in enumerate(stays) if s]
    if not rows or not detected:
        return held
    a, b = places_mm(detected), places_mm([known[j] for j in rows])
    apart = np.hypot(a[:, None, 0] - b[None, :, 0], a[:, None, 1] - b[None, :, 1])
    close = (apart <= settings.still_reach_mm) & size_agreement(detected, [known[j] for j in rows], settings)[1]
    for d in np.flatnonzero(close.any(axis=1)):
        held[d] = known[rows[int(np.argmin(np.where(close[d], apart[d], np.inf)))]].unit
    return held


def group_shifts(
    detected: Sequence[rules.Model],
    known: Sequence[rules.Model],
    reach: Sequence[float],
    settings: ReviewSettings,
    held: np.ndarray | None = None,
) -> dict[str, tuple[float, float]]:
    """Per unit, the one displacement (mm) that brings the most of its ``known`` models (their last places) onto
    detections of their size within ``group_fit_mm``, each model within its ``reach``; standing still counts as one
    such displacement. Units are placed best first, each detection taken by one unit only: a unit of models of one
    size moved a few base widths lands a model or two on its own old places, or on a neighbour's, under a wrong
    displacement, but all of them only under the right one. Units no displacement fits at least two models of are
    left out (each of their models is paired on its own); units that stood still are in, with no displacement. A
    detection ``held`` (D,) by a unit (see :func:`held_by`) counts for that unit only."""
    a, b = places_mm(detected), places_mm(known)
    if len(a) == 0 or len(b) == 0:
        return {}
    alike = size_agreement(detected, known, settings)[1].T
    offsets = a[None, :, :] - b[:, None, :]  # (known, detected, 2)
    within = alike & (np.hypot(offsets[..., 0], offsets[..., 1]) <= np.asarray(reach, dtype=np.float64)[:, None])
    if held is not None:
        owner = np.array([m.unit for m in known], dtype=object)
        within &= (held[None, :] == None) | (held[None, :] == owner[:, None])  # noqa: E711 (elementwise)
    by_unit: dict[str, list[int]] = {}
    for j, m in enumerate(known):
        if m.unit is not None:
            by_unit.setdefault(m.unit, []).append(j)
    fits: list[tuple[int, float, str, np.ndarray, np.ndarray]] = []
    for unit, rows in by_unit.items():
        members = np.array(rows)
        # displacements a millimetre apart fit alike: each tried once
        tried = np.unique(np.round(np.concatenate([np.zeros((1, 2)), offsets[members][within[members]]])), axis=0)
        count, shift, near = best_landing(b[members], a, within[members], tried, settings.group_fit_mm)
        fits.append((count, -float(np.hypot(*shift)), unit, shift, near))
    taken = np.zeros(len(a), np.bool_)
    out: dict[str, tuple[float, float]] = {}
    for count, _short, unit, shift, near in sorted(fits, key=lambda f: (f[0], f[1]), reverse=True):
        free = near & ~taken[None, :]
        if count < 2 or free.any(axis=1).sum() < 2:
            continue
        taken |= free.any(axis=0)
        out[unit] = (float(shift[0]), float(shift[1]))
    return out


def best_landing(
    places_mm: np.ndarray, seen_mm: np.ndarray, allowed: np.ndarray, tried_mm: np.ndarray, fit_mm: float
) -> tuple[int, np.ndarray, np.ndarray]:
    """Of the displacements ``tried_mm`` (T, 2), the one that lands the most of the models at ``places_mm`` (M, 2)
    within ``fit_mm`` of a detection ``seen_mm`` (D, 2) they are ``allowed`` (M, D) to be, the closest landing of
    those: (how many, the displacement (2,), which detections each lands on (M, D)). Worked in slices of
    displacements, so that memory stays bounded however many models and detections there are."""
    m, d = len(places_mm), len(seen_mm)
    step = max(1, 2_000_000 // max(1, m * d))
    best: tuple[float, int, np.ndarray, np.ndarray] = (-1.0, 0, tried_mm[0], np.zeros((m, d), np.bool_))
    for start in range(0, len(tried_mm), step):
        part = tried_mm[start : start + step]
        landed = places_mm[None, :, None, :] + part[:, None, None, :] - seen_mm[None, None, :, :]
        apart = np.hypot(landed[..., 0], landed[..., 1])
        near = (apart <= fit_mm) & allowed[None, :, :]
        count = near.any(axis=2).sum(axis=1)
        # more models landed first; of as many, the closer landing: three bases of a unit packed in a triangle land
        # on a shape alike under a shorter wrong displacement too, but a few mm off
        off = np.where(near, apart, fit_mm).min(axis=2).sum(axis=1) + 1e-6 * np.hypot(part[:, 0], part[:, 1])
        rank = count - off / (fit_mm * (m + 1))
        k = int(np.argmax(rank))
        if rank[k] > best[0]:
            best = (float(rank[k]), int(count[k]), part[k], near[k])
    return best[1], best[2], best[3]
