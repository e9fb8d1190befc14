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
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "MAX_OPEN_BYTES",
    "RegionOutcome",
    "region_search",
    "parallel_region_search",
    "split_simplex",
    "ceiling_units",
    "best_threshold",
]

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


# (over 60 lines: the best-first loop and its four ways to end, proof, deadline, memory and
# Ctrl-C, each leaving a valid ceiling, in one place)
def region_search(
    phi_members: np.ndarray,
    phi_holdout: np.ndarray,
    vertices: np.ndarray,
    *,
    deadline: float | None,
    best_units: int = 0,
    best_theta: np.ndarray | None = None,
    parts: Sequence[np.ndarray] | None = None,
    shared: tuple[str, int, int] | None = None,
) -> RegionOutcome:
    """Search the simplex spanned by ``vertices`` (one per row), or only the simplices
    ``parts`` of it, for the best attack (``shared``: a worker's slot among its peers',
    :func:`parallel_region_search`).

    ``phi_members`` and ``phi_holdout`` are the features (records x synthetic x
    parameters); ``best_units`` a verified start (its ``best_theta``). Each open region
    keeps the pairs that can still be a record's nearest on it, so that a small region
    is bounded from a few pairs per record."""
    t0 = time.perf_counter()
    counter = itertools.count()
    parts = [vertices] if parts is None else list(parts)
    best_theta = parts[0].mean(axis=0) if best_theta is None else best_theta
    members, holdout = _Candidates(phi_members), _Candidates(phi_holdout)
    heap = []
    for part in parts:
        top_ceiling, kept_m, kept_h = _bound(part, members, holdout)
        heap.append((-top_ceiling, next(counter), part, kept_m, kept_h))
    heapq.heapify(heap)
    regions, open_ceiling, interrupted = 0, 0, False  # open_ceiling: a region popped, not yet split
    held = sum(item[3].phi.nbytes + item[4].phi.nbytes for item in heap)  # the open regions' pairs
    stuck = 0  # the highest ceiling of a region too small to split
    peers = _Peers(shared)
    try:
        while heap:
            top = -heap[0][0]
            if regions % PEER_EVERY == 0:
                peers.publish(best_units)
            if top <= max(best_units, peers.best) or (
                deadline is not None and time.perf_counter() > deadline
            ):
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
            halves = _halves(corners)
            if halves is None:  # no smaller region tells more (points where records tie)
                stuck = max(stuck, top)
            for child in halves or ():
                ceiling, kept_m, kept_h = _bound(child, members, holdout)
                if ceiling > max(best_units, peers.best):
                    heapq.heappush(heap, (-ceiling, next(counter), child, kept_m, kept_h))
                    held += kept_m.phi.nbytes + kept_h.phi.nbytes
            open_ceiling = 0
    except KeyboardInterrupt:  # Ctrl-C: the best so far, and every region still open bounds it
        interrupted = True
    peers.publish(best_units)
    peers.close()
    # a region dropped below a peer's best is bounded by that peer's (the caller combines)
    ceiling = max(best_units, open_ceiling, stuck, -heap[0][0] if heap else 0)
    seconds = time.perf_counter() - t0
    return RegionOutcome(
        best_theta, best_units, ceiling, ceiling <= best_units, regions, seconds, interrupted
    )


MIN_EDGE = 1e-12
"""A region whose longest edge (L1) is below this is not split: its ceiling stays open.
Where pairs of records tie at one parameter, the regions around it keep a ceiling no
parameter may reach, and below this size the bound's sums no longer tell their points
apart (a split there ends on how rounding breaks the tie, not on a proof); it also ends a
search without a deadline."""


PEER_EVERY = 32
"""How often (in regions) a worker publishes its best and reads its peers'."""


class _Peers:
    """The best counts of the workers of one search, in shared memory (one int64 per
    worker, written by it alone): a worker prunes with its peers' best as with its own.
    ``shared`` is ``(name, slot, workers)``, or None for a search alone."""

    def __init__(self, shared: tuple[str, int, int] | None):
        self.best, self.memory, self.slots, self.slot = 0, None, None, 0
        if shared is not None:
            from multiprocessing import shared_memory

            name, self.slot, workers = shared
            self.memory = shared_memory.SharedMemory(name=name)
            self.slots = np.ndarray((workers,), dtype=np.int64, buffer=self.memory.buf)

    def publish(self, units: int) -> None:
        if self.slots is not None:
            self.slots[self.slot] = max(int(self.slots[self.slot]), units)
            self.best = int(self.slots.max())

    def close(self) -> None:
        if self.memory is not None:
            self.slots = None
            self.memory.close()


def _bound(corners: np.ndarray, members: _Candidates, holdout: _Candidates):
    """``(ceiling, members' pairs, held-out pairs)`` of the simplex ``corners``."""
    lo, _, members = members.on(corners)
    _, hi, holdout = holdout.on(corners)
    return ceiling_units(lo, hi), members, holdout


REGIONS_PER_WORKER = 8
"""With workers, the simplex is first cut into about this many regions per worker."""


def split_simplex(vertices: np.ndarray, count: int) -> list[np.ndarray]:
    """The simplex cut in halves, each in halves again, until at least ``count`` parts."""
    parts = [vertices]
    while len(parts) < count:
        parts = [half for part in parts for half in (_halves(part) or [part])]
    return parts


# (over 60 lines: the pool, its Ctrl-C and the combination of the workers' bounds, the
# parts a lost worker held included, in one place)
def parallel_region_search(
    phi_members: np.ndarray,
    phi_holdout: np.ndarray,
    vertices: np.ndarray,
    *,
    jobs: int,
    seconds: float | None,
    best_units: int = 0,
    best_theta: np.ndarray | None = None,
) -> RegionOutcome:
    """:func:`region_search` on ``jobs`` worker processes (:func:`rlopt.processes.local_pool`),
    each given every ``jobs``-th part of the simplex cut by :func:`split_simplex` and
    ``seconds`` (none: until proven). Their best attacks and ceilings combine; a part
    whose worker Ctrl-C stopped keeps the ceiling it had before any search, so the
    combined ceiling holds whatever finished. The proven figure is the same for every
    ``jobs``; only how soon it comes, or how narrow an interval at the limit, is not."""
    from concurrent.futures import as_completed
    from multiprocessing import shared_memory

    from rlopt.processes import local_pool, stop_pool

    t0 = time.perf_counter()
    parts = split_simplex(vertices, jobs * REGIONS_PER_WORKER)
    members, holdout = _Candidates(phi_members), _Candidates(phi_holdout)
    first = [_bound(part, members, holdout)[0] for part in parts]  # a lost worker's parts' bound
    groups = [list(range(k, len(parts), jobs)) for k in range(jobs)]
    outcomes: dict[int, RegionOutcome] = {}
    interrupted = False
    memory = shared_memory.SharedMemory(create=True, size=8 * jobs)
    np.ndarray((jobs,), dtype=np.int64, buffer=memory.buf)[:] = best_units
    pool = local_pool(jobs)
    try:
        futures = {
            pool.submit(
                _search_for, phi_members, phi_holdout, vertices, seconds, best_units, best_theta,
                [parts[i] for i in group], (memory.name, k, jobs),
            ): k
            for k, group in enumerate(groups)
        }  # fmt: skip
        for future in as_completed(futures):
            outcomes[futures[future]] = future.result()
    except KeyboardInterrupt:  # the workers leave Ctrl-C to this process, which ends them
        interrupted = True
    finally:
        stop_pool(pool)
        memory.close()
        memory.unlink()
    lost = [max(first[i] for i in group) for k, group in enumerate(groups) if k not in outcomes]
    best = max(outcomes.values(), key=lambda o: o.best_units, default=None)
    if best is not None and best.best_units > best_units:
        best_units, best_theta = best.best_units, best.best_theta
    ceiling = max([best_units, *lost, *(o.ceiling_units for o in outcomes.values())])
    return RegionOutcome(
        vertices.mean(axis=0) if best_theta is None else best_theta,
        best_units,
        ceiling,
        ceiling <= best_units,
        sum(o.regions for o in outcomes.values()),
        time.perf_counter() - t0,
        interrupted or any(o.interrupted for o in outcomes.values()),
    )


def _search_for(
    phi_members, phi_holdout, vertices, seconds, best_units, best_theta, parts, shared
) -> RegionOutcome:
    """A worker's search of its parts for ``seconds`` from its own start (none: until proven)."""
    deadline = None if seconds is None else time.perf_counter() + seconds
    return region_search(
        phi_members, phi_holdout, vertices, deadline=deadline, best_units=best_units,
        best_theta=best_theta, parts=parts, shared=shared,
    )  # fmt: skip


def _halves(corners: np.ndarray) -> list[np.ndarray] | None:
    """The two halves of a simplex cut at the midpoint of its longest edge (None when that
    edge is shorter than :data:`MIN_EDGE`)."""
    edges = [
        (np.abs(corners[a] - corners[b]).sum(), a, b)
        for a, b in itertools.combinations(range(len(corners)), 2)
    ]
    length, a, b = max(edges)
    if length < MIN_EDGE:
        return None
    middle = (corners[a] + corners[b]) / 2
    halves = []
    for replaced in (a, b):
        child = corners.copy()
        child[replaced] = middle
        halves.append(child)
    return halves
