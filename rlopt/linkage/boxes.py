"""Exact linkage for a distance that never decreases when a difference grows (am, wm,
owa, the Choquet families; :meth:`rlopt.families.Distance.monotone_slack`), without a
linear map: the originals in boxes, each box bounded below at its corner nearest a
masked record, and the family's own evaluator on the boxes that bound cannot rule out.

How it stays exact
------------------
The originals are split into boxes of at most :data:`BOX_RECORDS` records (a KD
partition: median cuts of the widest attribute). For a masked record ``u`` and a box
``[lo, hi]`` the gap ``g_k = max(lo_k - u_k, u_k - hi_k, 0)`` is at most
``|u_k - b_k|`` for every original ``b`` in the box (a category's mismatch: gap 0), and
rounding keeps that order (a subtraction rounds monotonically). The distance being
monotone up to its slack ``s``, ``d(g) <= d(u, b) + s * scale`` for every ``b`` in
the box, ``scale`` the largest squared difference the pair holds.

Each distinct masked record ``u`` (identical ones share every distance) evaluates the
originals of its best-bounded box first: the second smallest of those distances,
``r2``, is at least the second smallest from ``u`` over the whole file. Every original
at most ``r2`` away lies in a box bounded by ``r2 + s * scale``; the boxes within that,
plus a slack of :data:`BOX_RTOL` (relative) and :data:`BOX_ATOL` of ``scale``
(absolute) far above the rounding of the bound, are evaluated record by record with
the family's own evaluator (:meth:`~rlopt.families.Distance.paired`), and so is the own
original of every record of ``u``. A record's verdict reads its own distance, its
nearest other (one of ``u``'s two smallest, both at most ``r2``) and the lowest index
among exact ties of the smallest (all at most ``r2``): every number it reads is listed,
so counts, ties and links equal the brute-force evaluator's (``tests/linkage``). The
separations it reports (a record's nearest other distance less its own) equal them up to
rounding only (1.8e-15 off on numeric wm): the paired evaluator sums in another order than
the pairwise one, so no count or tie changes, but a separation is not bit-for-bit. A chunk
whose bounds rule out little (a distance that reads the smallest difference) is
evaluated pair by pair instead (:data:`BRUTE_SHARE`).
"""

from __future__ import annotations

import numpy as np

from rlopt.data._standardise import DEFAULT_CHUNK_BYTES, categorical_columns, chunk_rows
from rlopt.families import Distance
from rlopt.linkage.brute import Progress, block_verdicts
from rlopt.linkage.identical import row_groups
from rlopt.linkage.nearest import pair_distances

__all__ = ["box_verdicts", "kd_boxes", "BOX_RECORDS", "BOX_RTOL", "BOX_ATOL"]

BOX_RECORDS = 32
"""The most originals in one box."""
BOX_RTOL = 1e-9
"""Relative slack of the boxes kept over the second-nearest distance."""
BOX_ATOL = 1e-9
"""Absolute slack of the boxes kept, as a share of the largest squared difference."""
BRUTE_SHARE = 0.25
"""Where the bounds keep more than this share of the pairs of a chunk (a distance that
reads the smallest difference: an owa weighting its last rank), the chunk is evaluated
pair by pair instead (:func:`rlopt.linkage.brute.block_verdicts`: exact too, and cheaper)."""


def kd_boxes(zb: np.ndarray, size: int = BOX_RECORDS) -> tuple[np.ndarray, np.ndarray]:
    """``(order, starts)``: the originals sorted box by box and where each box begins
    (``starts[-1] = n``); a box holds at most ``size`` records, and at least 2 when the
    file has 2 (median cuts of a box's widest attribute)."""
    order = np.arange(zb.shape[0])
    cuts, stack = [0, zb.shape[0]], [(0, zb.shape[0])]
    while stack:
        start, stop = stack.pop()
        if stop - start <= size:
            continue
        block = zb[order[start:stop]]
        widest = int(np.argmax(block.max(axis=0) - block.min(axis=0)))
        half = (stop - start) // 2
        order[start:stop] = order[start:stop][np.argpartition(block[:, widest], half)]
        cuts.append(start + half)
        stack += [(start, start + half), (start + half, stop)]
    return order, np.array(sorted(cuts), dtype=np.int64)


def box_verdicts(
    za: np.ndarray,
    zb: np.ndarray,
    distance: Distance,
    slack: float,
    *,
    max_bytes: int = DEFAULT_CHUNK_BYTES,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Own distance, nearest other distance and nearest record (lowest index among exact
    ties) of every masked record, as :func:`rlopt.linkage.brute.brute_verdicts` gives them,
    for a distance whose :meth:`~rlopt.families.Distance.monotone_slack` is ``slack``
    (see the module's notes), chunk by chunk of distinct masked records (about
    ``max_bytes`` for their bounds); ``progress(done, n_records)`` follows it. Needs at
    least 2 records."""
    group, first = row_groups(za)
    order, starts = kd_boxes(zb)
    lo = np.minimum.reduceat(zb[order], starts[:-1], axis=0)
    hi = np.maximum.reduceat(zb[order], starts[:-1], axis=0)
    numeric = ~categorical_columns(za, zb)
    reach = np.maximum(za.max(axis=0), zb.max(axis=0)) - np.minimum(za.min(axis=0), zb.min(axis=0))
    scale = float((np.where(numeric, reach, 1.0) ** 2).max())
    records = np.argsort(group, kind="stable")  # the records of each group together
    bounds = np.searchsorted(group[records], np.arange(first.size + 1))
    own = np.empty(za.shape[0])
    nearest_other = np.empty(za.shape[0])
    linked_to = np.empty(za.shape[0], dtype=np.int64)
    step = max(1, max_bytes // (16 * 8 * za.shape[1] * (starts.size - 1)))
    box = _Boxes(order, starts, lo, hi, numeric, (BOX_ATOL + slack) * scale)
    distinct = za[first]
    for g0 in range(0, first.size, step):
        g1 = min(first.size, g0 + step)
        mine = records[bounds[g0] : bounds[g1]]  # the records of groups g0 .. g1 - 1
        rows, cols = box.pairs(distinct[g0:g1], zb, distance)
        if rows.size > BRUTE_SHARE * (g1 - g0) * zb.shape[0]:
            brute = chunk_rows(zb.shape[0], zb.shape[1], max_bytes=max_bytes)
            verdict = block_verdicts(distinct[g0:g1], zb, distance, mine, group[mine] - g0, brute)
        else:
            rows, cols = _with_own(rows + g0, cols, group[mine], mine, zb.shape[0])
            values = pair_distances(distinct, zb, distance, rows, cols)
            verdict = _group_verdicts(rows, cols, values, group[mine], mine, zb.shape[0])
        own[mine], nearest_other[mine], linked_to[mine] = verdict
        if progress is not None:
            progress(int(bounds[g1]), za.shape[0])
    return own, nearest_other, linked_to


class _Boxes:
    """The boxes of the originals (:func:`kd_boxes`), their corners ``lo, hi``, which
    attributes are numeric, and the absolute slack ``atol`` of the boxes kept."""

    def __init__(self, order, starts, lo, hi, numeric, atol):
        self.order, self.starts, self.lo, self.hi = order, starts, lo, hi
        self.numeric, self.atol = numeric, atol

    def members(self, rows: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(row, original)`` for every original of box ``boxes[p]``, paired with ``rows[p]``."""
        sizes = self.starts[boxes + 1] - self.starts[boxes]
        at = np.repeat(self.starts[boxes] - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
        return np.repeat(rows, sizes), self.order[at]

    def pairs(self, zu: np.ndarray, zb: np.ndarray, distance: Distance) -> tuple[np.ndarray, np.ndarray]:
        """``(row, original)``: every original the verdicts of the distinct masked
        records ``zu`` can read (their own originals aside)."""
        gap = np.maximum(np.maximum(self.lo[None] - zu[:, None], zu[:, None] - self.hi[None]), 0.0)
        gap *= self.numeric  # a category's mismatch can be 0 anywhere
        bound = distance.combine(gap)
        rows, cols = self.members(np.arange(zu.shape[0]), bound.argmin(axis=1))
        second = _second_smallest(rows, distance.paired(zu[rows], zb[cols]))
        reach = second + BOX_RTOL * np.abs(second) + self.atol
        kept_rows, kept_boxes = np.nonzero(bound <= reach[:, None])
        return self.members(kept_rows, kept_boxes)


def _second_smallest(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The second smallest of ``values`` for each run of equal ``rows`` (sorted; runs of 2 or more)."""
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    sizes = np.diff(np.r_[starts, rows.size])
    smallest = np.minimum.reduceat(values, starts)
    where = np.arange(values.size)
    first = np.minimum.reduceat(np.where(values == np.repeat(smallest, sizes), where, values.size), starts)
    rest = values.copy()
    rest[first] = np.inf
    return np.minimum.reduceat(rest, starts)


def _with_own(rows, cols, groups, records, n_records: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(group, original)`` with each record's own original added, each once,
    sorted by group."""
    key = np.unique(np.concatenate([rows * n_records + cols, groups * n_records + records]))
    return key // n_records, key % n_records


def _group_verdicts(rows, cols, values, groups, records, n_records: int):
    """Per record (of group ``groups[p]``, record ``records[p]``): its own distance, its
    nearest other and its nearest record, from the listed pairs ``(group, original)``
    (sorted by group, each once, every record's own among them)."""
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    listed = rows[starts]
    nearest = np.minimum.reduceat(values, starts)
    at_min = values == np.repeat(nearest, np.diff(np.r_[starts, rows.size]))
    lowest = np.minimum.reduceat(np.where(at_min, cols, np.iinfo(np.int64).max), starts)
    others = np.where(cols == np.repeat(lowest, np.diff(np.r_[starts, rows.size])), np.inf, values)
    second = np.minimum.reduceat(others, starts)
    where = np.searchsorted(listed, groups)
    own = values[np.searchsorted(rows * n_records + cols, groups * n_records + records)]
    linked = lowest[where]
    return own, np.where(linked == records, second[where], nearest[where]), linked
