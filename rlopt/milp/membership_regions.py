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

__all__ = ["MAX_OPEN_BYTES", "RegionOutcome", "region_search", "ceiling_units", "best_threshold"]

MAX_OPEN_BYTES = 2**31
"""The open regions keep at most this many bytes of candidate pairs (2 GiB); beyond it the
search stops with its ceiling, as at its deadline."""


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


class _Candidates:
    """The (record, synthetic record) pairs that may still be a record's nearest on a
    region: one side's features flattened to the pairs kept, with each pair's record."""

    def __init__(self, phi: np.ndarray):
        n_records, n_synthetic, _ = phi.shape
        self.n_records = n_records
        self.record = np.repeat(np.arange(n_records), n_synthetic)
        self.phi = phi.reshape(n_records * n_synthetic, -1)

    def on(self, corners: np.ndarray) -> tuple[np.ndarray, np.ndarray, _Candidates]:
        """``(lo, hi, kept)`` on the simplex ``corners``: per record, the least distance
        to its nearest synthetic record (at a vertex: concave) and a bound of the largest,
        and the pairs that can still be nearest somewhere on it (a pair whose least value
        exceeds the record's ``hi`` never is, on it or on any part of it)."""
        at = self.phi @ corners.T  # (pairs, corners)
        low, high = at.min(axis=1), at.max(axis=1)
        starts = self.starts()
        lo, hi = np.minimum.reduceat(low, starts), np.minimum.reduceat(high, starts)
        keep = low <= hi[self.record]
        kept = object.__new__(_Candidates)
        kept.n_records, kept.record, kept.phi = self.n_records, self.record[keep], self.phi[keep]
        return lo, hi, kept

    def nearest(self, theta: np.ndarray) -> np.ndarray:
        """Each record's distance to its nearest synthetic record at ``theta`` (a point
        of the region the pairs were kept on)."""
        return np.minimum.reduceat(self.phi @ theta, self.starts())

    def starts(self) -> np.ndarray:
        """Where each record's pairs begin: the pairs are in record order, and every record
        keeps one at least (the pair that gives its ``hi``)."""
        return np.flatnonzero(np.diff(self.record, prepend=-1))


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
    parameters); ``best_units`` a verified start (its ``best_theta``). Each open region
    keeps the pairs that can still be a record's nearest on it, so that a small region
    is bounded from a few pairs per record."""
    t0 = time.perf_counter()
    counter = itertools.count()
    best_theta = vertices.mean(axis=0) if best_theta is None else best_theta

    def bound(corners: np.ndarray, members: _Candidates, holdout: _Candidates):
        lo, _, members = members.on(corners)
        _, hi, holdout = holdout.on(corners)
        return ceiling_units(lo, hi), members, holdout

    top_ceiling, members, holdout = bound(vertices, _Candidates(phi_members), _Candidates(phi_holdout))
    heap = [(-top_ceiling, next(counter), vertices, members, holdout)]
    regions, open_ceiling, interrupted = 0, 0, False  # open_ceiling: a region popped, not yet split
    held = members.phi.nbytes + holdout.phi.nbytes  # the open regions' pairs
    try:
        while heap:
            top = -heap[0][0]
            if top <= best_units or (deadline is not None and time.perf_counter() > deadline):
                break
            if held > MAX_OPEN_BYTES:
                break
            _, _, corners, members, holdout = heapq.heappop(heap)
            held -= members.phi.nbytes + holdout.phi.nbytes
            open_ceiling = top
            regions += 1
            centre = corners.mean(axis=0)
            units = _units(members.nearest(centre), holdout.nearest(centre))
            if units > best_units:
                best_units, best_theta = units, centre
            for child in _halves(corners):
                ceiling, kept_m, kept_h = bound(child, members, holdout)
                if ceiling > best_units:
                    heapq.heappush(heap, (-ceiling, next(counter), child, kept_m, kept_h))
                    held += kept_m.phi.nbytes + kept_h.phi.nbytes
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
