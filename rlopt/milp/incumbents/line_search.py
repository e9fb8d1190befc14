"""Coordinate ascent on the exact count with an exact line search: a verified
incumbent for the MILP (a start and a lower end), never a bound.

For a learned family the distance is linear in its parameter, so for record ``i``
the margins ``g_ij(theta) = d(a_i, b_j) - d(a_i, b_i)`` are linear too. Along a
line ``theta + t v`` record ``i`` is re-identified (``g_ij >= margin`` for every
``j != i``) exactly on an interval of ``t``: the intersection of ``N - 1``
half-lines. One pass over the pairs gives every record's interval; the ``t``
covered by the most intervals (inside the range the family's bounds and linear
rows allow) is the best point on the line. Sweeping over coordinate directions
climbs the exact count; every accepted step re-identifies strictly more records
than the one before, as the margins predict. The caller recounts the result with
the family's reference evaluator and keeps it only if it is admissible.

Directions: each single coordinate (a move along it must keep the family's
equality rows, e.g. ``sum p = 1``, so for wm and owa only pairs move) and the
pairs ``e_k - e_l`` of the coordinates that share an equality row (wm's weights,
sb's diagonal) when there are at most :data:`MAX_PAIR_COORDINATES` of them.
"""

from __future__ import annotations

import time
from itertools import combinations

import numpy as np

from rlopt.families import LearnedFamily
from rlopt.milp.margins import PairMargins

__all__ = ["line_search_ascent", "MAX_PAIR_COORDINATES"]

MAX_PAIR_COORDINATES = 30
"""Pairs of coordinates are tried among at most this many coordinates."""

_PLAN_SLACK = 1e-9
"""A record is planned as re-identified only with this much to spare above the margin."""


def _directions(family: LearnedFamily, n_attributes: int) -> list[np.ndarray]:
    size = family.n_params(n_attributes)
    rows = family.constraints(n_attributes)
    equal = [np.flatnonzero(coefs) for coefs, lo, hi in zip(rows.coefs, rows.lo, rows.hi) if lo == hi]
    tied = set().union(*map(set, equal)) if equal else set()
    unit = np.eye(size)
    directions = [unit[k] for k in range(size) if k not in tied]
    for members in equal:
        if members.size <= MAX_PAIR_COORDINATES:
            for k, l in combinations(members.tolist(), 2):
                v = np.zeros(size)
                v[k], v[l] = 1.0, -1.0
                directions.append(v)
    return directions


def _step_range(
    theta: np.ndarray,
    v: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    matrix: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
) -> tuple[float, float]:
    """The ``t`` for which ``theta + t v`` keeps the bounds and the linear rows
    ``lo <= matrix @ theta <= hi``."""
    moving = v != 0
    ends = np.stack(
        [(lower[moving] - theta[moving]) / v[moving], (upper[moving] - theta[moving]) / v[moving]]
    )
    lo_t, hi_t = float(ends.min(axis=0).max()), float(ends.max(axis=0).min())
    if matrix.shape[0]:
        slope = matrix[:, moving] @ v[moving]
        turning = np.abs(slope) > 1e-15
        if turning.any():
            value = matrix[turning] @ theta
            a = (lo[turning] - value) / slope[turning]
            b = (hi[turning] - value) / slope[turning]
            with np.errstate(invalid="ignore"):
                lo_t = max(lo_t, float(np.nanmax(np.minimum(a, b))))
                hi_t = min(hi_t, float(np.nanmin(np.maximum(a, b))))
    return lo_t, hi_t


def _best_step(
    current: np.ndarray, slope: np.ndarray, margin: float, lo_t: float, hi_t: float
) -> tuple[float, int]:
    """The ``t`` in ``[lo_t, hi_t]`` that re-identifies the most records, and how many.

    ``current[i, j] + t * slope[i, j] >= margin`` for every ``j != i`` (the diagonal
    holds ``+inf`` in ``current``) defines record ``i``'s interval of ``t``.
    """
    need = margin + _PLAN_SLACK - current
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = need / slope
    up, down, flat = slope > 0, slope < 0, slope == 0
    lower = np.where(up, ratio, -np.inf).max(axis=1)
    upper = np.where(down, ratio, np.inf).min(axis=1)
    blocked = (flat & (need > 0)).any(axis=1)
    lower, upper = np.maximum(lower, lo_t), np.minimum(upper, hi_t)
    keep = ~blocked & (lower <= upper)
    if not keep.any():
        return 0.0, 0
    # deepest overlap of the intervals: opening ends before closing ends at a tie
    points = np.concatenate([lower[keep], upper[keep]])
    kinds = np.concatenate([np.zeros(keep.sum()), np.ones(keep.sum())])
    order = np.lexsort((kinds, points))
    depth = np.cumsum(np.where(kinds[order] == 0, 1, -1))
    best = int(np.argmax(depth))
    following = points[order][best + 1] if best + 1 < order.size else points[order][best]
    return 0.5 * (points[order][best] + following), int(depth[best])


def line_search_ascent(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    theta: np.ndarray,
    *,
    margin: float,
    margins: PairMargins,
    deadline: float | None = None,
) -> np.ndarray:
    """Climb the exact count from ``theta`` (admissible for the family's bounds and
    rows) by exact line searches along coordinate directions, until a sweep gains
    nothing or ``deadline`` (``time.perf_counter()``) passes.

    Returns the last parameter reached (``theta`` itself when nothing improved).
    The count it reaches is a plan: the caller recounts it and checks
    admissibility (cuts).
    """
    n_attributes = za.shape[1]
    slopes = margins.slopes
    theta = np.asarray(theta, dtype=float).copy()
    current = margins.at(theta)
    diagonal = np.diag_indices(margins.n_records)
    rows = family.constraints(n_attributes)
    matrix, lo, hi = rows.matrix(), np.array(rows.lo), np.array(rows.hi)
    lower, upper = family.bounds(n_attributes)
    directions = _directions(family, n_attributes)
    count = int(((current >= margin + _PLAN_SLACK).all(axis=1)).sum())
    improved = True
    while improved:
        improved = False
        for v in directions:
            if deadline is not None and time.perf_counter() > deadline:
                return theta
            lo_t, hi_t = _step_range(theta, v, lower, upper, matrix, lo, hi)
            if not lo_t < hi_t:
                continue
            moving = np.flatnonzero(v)
            slope = np.tensordot(v[moving], slopes[moving], axes=1)
            slope[diagonal] = 0.0
            t, reached = _best_step(current, slope, margin, lo_t, hi_t)
            if reached > count and t != 0.0:
                theta = np.clip(theta + t * v, lower, upper)
                current = current + t * slope
                count, improved = reached, True
    return theta
