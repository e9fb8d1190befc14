"""The parameter-space branch and bound of the membership attack: an exact ceiling (and
verified attacks) for the simplex families on few attributes, independent of the MILP
(docs/method.md §9).

On a region ``R`` of the simplex (itself a simplex with vertices ``V``), a record's
distance to its nearest synthetic record ``d_r(theta) = min_j phi_rj . theta`` is
concave, so its least value on ``R`` is at a vertex (``lo_r``), and it is at most
``hi_r = min_j max_V phi_rj . v``. No parameter of ``R`` calls more members than those
with ``lo_r <= tau`` nor fewer held-out records than those with ``hi_q <= tau``: the
best ``tau`` of those counts is the region's ceiling. The search takes the region of
highest ceiling, recounts the attack at its centre, and splits it at the midpoint of
its longest edge; it ends when no region's ceiling exceeds the best recount (proven) or
at its deadline (the largest open ceiling is the bound).
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

__all__ = ["RegionOutcome", "region_search", "ceiling_units", "best_threshold"]


@dataclass
class RegionOutcome:
    """``best_theta`` with ``best_units`` (its attack counted from the features), the
    ``ceiling_units`` no parameter exceeds, whether it is ``proven``, and the regions explored."""

    best_theta: np.ndarray
    best_units: int
    ceiling_units: int
    proven: bool
    regions: int
    seconds: float
    interrupted: bool = False  # stopped by Ctrl-C: the ceiling is the open regions'


def best_threshold(member_d: np.ndarray, holdout_d: np.ndarray) -> tuple[float, int, int, int]:
    """``(threshold, units, TP, FP)`` of the threshold that maximises ``n_h TP - n_m FP``
    when a record is called a member at distance ``<= threshold`` (of equal units the
    smallest threshold; ``-inf`` when no threshold calls anyone with advantage)."""
    n_m, n_h = member_d.size, holdout_d.size
    values = np.concatenate([member_d, holdout_d])
    is_member = np.concatenate([np.ones(n_m, dtype=np.int64), np.zeros(n_h, dtype=np.int64)])
    order = np.argsort(values, kind="stable")
    values, is_member = values[order], is_member[order]
    tp = np.cumsum(is_member)
    fp = np.cumsum(1 - is_member)
    last = np.flatnonzero(np.append(values[1:] != values[:-1], True))  # the end of each tie
    units = n_h * tp[last] - n_m * fp[last]
    k = int(np.argmax(units))
    if units[k] <= 0:
        return -math.inf, 0, 0, 0
    i = last[k]
    return float(values[i]), int(units[k]), int(tp[i]), int(fp[i])


def ceiling_units(lo_members: np.ndarray, hi_holdout: np.ndarray) -> int:
    """``max_tau n_h #{lo_r <= tau} - n_m #{hi_q <= tau}`` (0 at a threshold below all)."""
    n_m, n_h = lo_members.size, hi_holdout.size
    taus = np.sort(lo_members)
    called = np.searchsorted(taus, taus, side="right")  # members with lo <= tau
    sure = np.searchsorted(np.sort(hi_holdout), taus, side="right")
    return int(max(0, (n_h * called - n_m * sure).max(initial=0)))


def _units(d_members: np.ndarray, d_holdout: np.ndarray) -> int:
    return best_threshold(d_members, d_holdout)[1]


def region_search(
    phi_members: np.ndarray,
    phi_holdout: np.ndarray,
    vertices: np.ndarray,
    *,
    deadline: float | None,
    best_units: int = 0,
    best_theta: np.ndarray | None = None,
) -> RegionOutcome:
    """Search the simplex spanned by ``vertices`` (one per row) for the best attack.

    ``phi_members`` and ``phi_holdout`` are the features (records x synthetic x
    parameters); ``best_units`` a verified start (its ``best_theta``)."""
    t0 = time.perf_counter()
    counter = itertools.count()
    best_theta = vertices.mean(axis=0) if best_theta is None else best_theta

    def bound(corners: np.ndarray) -> int:
        at_m, at_h = phi_members @ corners.T, phi_holdout @ corners.T  # (records, synthetic, corners)
        lo = at_m.min(axis=1).min(axis=1)
        hi = at_h.max(axis=2).min(axis=1)
        return ceiling_units(lo, hi)

    heap = [(-bound(vertices), next(counter), vertices)]
    regions, open_ceiling, interrupted = 0, 0, False  # open_ceiling: a region popped, not yet split
    try:
        while heap:
            top = -heap[0][0]
            if top <= best_units or (deadline is not None and time.perf_counter() > deadline):
                break
            _, _, corners = heapq.heappop(heap)
            open_ceiling = top
            regions += 1
            centre = corners.mean(axis=0)
            units = _units((phi_members @ centre).min(axis=1), (phi_holdout @ centre).min(axis=1))
            if units > best_units:
                best_units, best_theta = units, centre
            for child in _halves(corners):
                ceiling = bound(child)
                if ceiling > best_units:
                    heapq.heappush(heap, (-ceiling, next(counter), child))
            open_ceiling = 0
    except KeyboardInterrupt:  # Ctrl-C: the best so far, and every region still open bounds it
        interrupted = True
    ceiling = max(best_units, open_ceiling, -heap[0][0] if heap else 0)
    seconds = time.perf_counter() - t0
    return RegionOutcome(
        best_theta, best_units, ceiling, ceiling <= best_units, regions, seconds, interrupted
    )


def _halves(corners: np.ndarray) -> list[np.ndarray]:
    """The two halves of a simplex cut at the midpoint of its longest edge."""
    edges = [
        (np.abs(corners[a] - corners[b]).sum(), a, b)
        for a, b in itertools.combinations(range(len(corners)), 2)
    ]
    _, a, b = max(edges)
    middle = (corners[a] + corners[b]) / 2
    halves = []
    for replaced in (a, b):
        child = corners.copy()
        child[replaced] = middle
        halves.append(child)
    return halves
