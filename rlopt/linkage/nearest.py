"""Linkage from lists of candidate pairs: exact nearest neighbours through a linear map,
and linkage inside a transparency attack's candidate sets.

Both paths end the same way: the distance of every listed pair ``(i, j)`` is
evaluated with the family's own evaluator (:meth:`rlopt.families.Distance.paired`,
the arithmetic of the brute-force reference), and each row keeps its own
distance, its nearest other distance and its nearest record (the lowest index
among exact ties). Those three are all the verdict of
:func:`rlopt.linkage.link_records` reads, so a pair list that holds every pair
the verdict can depend on gives the brute-force counts exactly.

How near-ties are decided on the nearest-neighbour path
--------------------------------------------------------
When ``d(a, b) = ||(za - zb) @ M||^2`` (am, md, wm, wm_m, and sb, sb_nc, sb_pd
with a positive semi-definite ``Q``), a KD-tree on the mapped originals finds
each masked record's nearest neighbours. The tree's distances are rounded
differently from the reference evaluator's, so the tree is only trusted to
*propose* candidates: for row ``i`` with mapped second-nearest squared distance
``r2``, every original within ``R_i = r2 (1 + NEAR_RTOL) + NEAR_ATOL * scale``
(mapped) is listed, and the reference evaluator decides among them. The
reference nearest other record of ``i`` is within ``R_i`` (one of the two
nearest mapped records is not ``i``), and so is every record the verdict's
relative tie tolerance (``TIE_RTOL = 1e-12``, far below ``NEAR_RTOL``) could
count as tied with it, provided the two roundings differ by less than the
slack -- ``scale`` bounds the size of every squared distance and mapped
coordinate, and double-precision rounding is below ``1e-13`` of it. Rows
whose third-nearest mapped record is still within ``R_i`` (identical original
records, exact ties) are asked again with a radius query, which lists all.
"""

from __future__ import annotations

import numpy as np

from rlopt.exceptions import NonFiniteError
from rlopt.families import Distance
from rlopt.linkage.brute import non_finite

__all__ = ["pair_verdicts", "tree_pairs", "NEAR_RTOL", "NEAR_ATOL", "PAIR_BLOCK", "pair_distances"]

NEAR_RTOL = 1e-9
"""Relative slack of the candidate radius over the mapped second-nearest distance."""
NEAR_ATOL = 1e-9
"""Absolute slack of the candidate radius, as a share of the files' distance scale."""
PAIR_BLOCK = 1 << 18
"""Pairs evaluated at once by :func:`pair_distances` (memory ~ block x attributes x 24 bytes)."""


def pair_distances(za: np.ndarray, zb: np.ndarray, distance: Distance, rows: np.ndarray, cols: np.ndarray):
    """``d(za[rows[p]], zb[cols[p]])`` for every listed pair, block by block; finite or an error."""
    values = np.empty(rows.size)
    for start in range(0, rows.size, PAIR_BLOCK):
        stop = min(rows.size, start + PAIR_BLOCK)
        values[start:stop] = distance.paired(za[rows[start:stop]], zb[cols[start:stop]])
    bad = ~np.isfinite(values)
    if bad.any():
        raise non_finite(distance, int(rows[np.argmax(bad)]))
    return values


def pair_verdicts(
    n_rows: int, rows: np.ndarray, cols: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: its own distance, its nearest other distance and its nearest record.

    ``rows, cols, values`` list pairs ``(i, j)`` with ``d(a_i, b_j)``, each pair at
    most once. A row without its own pair has own distance ``inf``, one without
    another pair nearest other ``inf``, one without any pair nearest record ``-1``;
    the nearest record is the lowest index among exactly equal smallest distances
    (as ``numpy.argmin`` on a full row).
    """
    if rows.size and (np.diff(rows) < 0).any():
        order = np.argsort(rows, kind="stable")
        rows, cols, values = rows[order], cols[order], values[order]
    linked_to = np.full(n_rows, -1, dtype=np.int64)
    nearest = np.full(n_rows, np.inf)
    own = np.full(n_rows, np.inf)
    nearest_other = np.full(n_rows, np.inf)
    if rows.size == 0:
        return own, nearest_other, linked_to
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    listed = rows[starts]
    nearest[listed] = np.minimum.reduceat(values, starts)
    lowest = np.where(values == nearest[rows], cols, np.iinfo(np.int64).max)
    linked_to[listed] = np.minimum.reduceat(lowest, starts)
    mine = rows == cols
    own[rows[mine]] = values[mine]
    others = np.where(mine, np.inf, values)
    nearest_other[listed] = np.minimum.reduceat(others, starts)
    return own, nearest_other, linked_to


def tree_pairs(
    za: np.ndarray, zb: np.ndarray, matrix: np.ndarray, *, n_jobs: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(i, j)`` holding, for every masked record ``i``, its own original and
    every original the verdict can depend on (see the module's notes), found with a
    KD-tree on ``zb @ matrix`` (``n_jobs`` threads query it). Needs at least 2 records."""
    from scipy.spatial import cKDTree

    ya, yb = za @ matrix, zb @ matrix
    if not (np.isfinite(ya).all() and np.isfinite(yb).all()):
        raise NonFiniteError("a mapped record is not finite; expected finite standardised records")
    n_records = zb.shape[0]
    reach = np.abs(np.concatenate([za, zb])).max(axis=0)  # per attribute
    scale = 4.0 * float(reach @ np.abs(matrix @ matrix.T) @ reach) + np.finfo(float).tiny
    k = min(3, n_records)
    workers = max(1, n_jobs or 1)
    tree = cKDTree(yb)
    found, neighbours = tree.query(ya, k=k, workers=workers)
    radius2 = found[:, 1] ** 2 * (1 + NEAR_RTOL) + NEAR_ATOL * scale
    inside = found**2 <= radius2[:, None]
    crowded = np.flatnonzero(inside[:, -1]) if k == 3 else np.arange(0)
    inside[crowded] = False
    rows = [np.nonzero(inside)[0]]
    cols = [neighbours[inside]]
    if crowded.size:
        near = tree.query_ball_point(
            ya[crowded], r=np.sqrt(radius2[crowded]) * (1 + NEAR_RTOL), workers=workers
        )
        for i, listed in zip(crowded, near):
            listed = np.asarray(listed, dtype=np.int64)
            keep = listed[((ya[i] - yb[listed]) ** 2).sum(axis=1) <= radius2[i]]
            rows.append(np.full(keep.size, i))
            cols.append(keep)
    own = np.arange(za.shape[0])
    rows.append(own)
    cols.append(own)
    rows_all, cols_all = np.concatenate(rows), np.concatenate(cols).astype(np.int64)
    # each pair once (a record's own original is usually among its neighbours too)
    key = np.unique(rows_all.astype(np.int64) * n_records + cols_all)
    return key // n_records, key % n_records
