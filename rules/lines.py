"""Judging measured gaps against a rule's line: which side each gap is on, and whether the measurement can tell.

A gap ``g`` measured with 1-sigma ``s`` is judged as the normal distribution N(g, s^2) of the true gap. For
``solid`` pairs (two physical bases seen by a camera) the true gap cannot be negative, so the distribution is
truncated at zero: an apparent overlap of a few tenths of a millimetre is then read as contact. Truncation moves the
distribution's mass from below zero to above it, so a gap measured beyond a line is judged more surely beyond it,
and one measured inside is judged a little less surely inside. A verdict is ``close`` when the line holds between
``Q(k)`` and ``1 - Q(k)`` of that distribution, which for an untruncated gap is exactly ``|g - limit| <= k s``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

# Centre arithmetic leaves float noise of ~1e-12 mm and the oval search ~1e-6 mm; a line is judged with this
# slack so that a gap placed exactly on it counts as on it. It is far below any measurement.
EPS_MM = 1e-5

# Beyond this many sigmas math.erfc underflows; the tail's leading asymptotic term is exact to 0.1 % there.
_TAIL_SIGMAS = 30.0

_erfc = np.frompyfunc(math.erfc, 1, 1)


@dataclass(frozen=True)
class Verdict:
    """Per-gap judgement against one line: ``met`` (on the rule's side) and ``close`` (cannot tell)."""

    met: BoolArray
    close: BoolArray

    @property
    def reported(self) -> BoolArray:
        return self.met | self.close

    @property
    def surely_met(self) -> BoolArray:
        return self.met & ~self.close


def log_tail(z: FloatArray) -> FloatArray:
    """log P(Z > z) for a standard normal Z, elementwise; finite for every finite ``z`` (shape kept)."""
    z = np.asarray(z, dtype=np.float64)
    out = np.empty_like(z)
    far = z > _TAIL_SIGMAS
    near = ~far
    out[near] = np.log(0.5 * np.asarray(_erfc(z[near] / math.sqrt(2.0)), dtype=np.float64))
    zf = z[far]
    out[far] = -0.5 * zf**2 - np.log(zf) - 0.5 * math.log(2.0 * math.pi)
    return out


def _beyond_share(gap: FloatArray, limit: float, sigma: FloatArray) -> FloatArray:
    """P(true gap > limit | true gap >= 0) for gaps N(gap, sigma^2), sigma > 0 and limit >= 0 (shape of gap)."""
    return np.exp(np.minimum(log_tail((limit - gap) / sigma) - log_tail(-gap / sigma), 0.0))


def judge(
    gap_mm: FloatArray,
    limit_mm: float,
    sigma_mm: FloatArray,
    k: float,
    strict: bool = False,
    solid: BoolArray | bool = False,
) -> Verdict:
    """Whether each gap (N,) is within ``limit_mm`` (``gap <= limit``; ``gap < limit`` when ``strict``), and
    whether its 1-sigma ``sigma_mm`` (N,) at ``k`` sigmas leaves it ``close``. Where ``solid`` (N,) or scalar is
    true and ``limit_mm > 0``, the gap's distribution is truncated at zero (see the module's docstring)."""
    gap = np.asarray(gap_mm, dtype=np.float64)
    sigma = np.asarray(sigma_mm, dtype=np.float64)
    met = gap < limit_mm - EPS_MM if strict else gap <= limit_mm + EPS_MM
    close = (sigma > 0) & (np.abs(gap - limit_mm) <= k * sigma)
    # A line at or below zero has no truncated reading: every true gap of a solid pair lies beyond it.
    rows = np.flatnonzero(np.broadcast_to(solid, gap.shape) & (sigma > 0)) if limit_mm > EPS_MM else np.empty(0, int)
    if len(rows):
        beyond = _beyond_share(gap[rows], limit_mm, sigma[rows])
        tail = math.exp(float(log_tail(np.array([k]))[0]))
        met = met.copy()
        close = close.copy()
        met[rows] = beyond < 0.5
        close[rows] = (beyond >= tail) & (beyond <= 1.0 - tail)
    return Verdict(np.asarray(met, dtype=bool), np.asarray(close, dtype=bool))


def seen_gap_mm(gap_mm: FloatArray, solid: BoolArray | bool) -> FloatArray:
    """The gap a report shows: a solid pair's apparent overlap is contact, so its gap is never below zero."""
    gap = np.asarray(gap_mm, dtype=np.float64)
    return np.where(np.broadcast_to(solid, gap.shape), np.maximum(gap, 0.0), gap)
