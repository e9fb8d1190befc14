"""The transparency attack on rank swapping (RSLD): per-attribute rank windows,
their intersection, then distance-based linkage inside it."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence

import numpy as np
from scipy.sparse import csr_array

from rlopt.attacks._common import AttackResult, link_in_candidates
from rlopt.data import LinkageData, validate_pair
from rlopt.exceptions import DataWarning, InputError
from rlopt.families import DEFAULT_BASELINE, Distance
from rlopt.masking.swapping import swap_window

__all__ = ["rank_swap_attack", "rank_windows", "RankWindows"]


def _rank_ranges(sorted_column: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ranks (0-based) a value occupies in a sorted column: ``[lo, hi]``.

    Tied values share the whole range of their ranks; a value absent from the
    column gets the empty range ``[lo, lo - 1]`` at the place it would be inserted.
    """
    order = np.argsort(values, kind="stable")  # sorted keys: searchsorted walks instead of jumping
    lo, hi = np.empty(values.size, dtype=np.int64), np.empty(values.size, dtype=np.int64)
    lo[order] = np.searchsorted(sorted_column, values[order], side="left")
    hi[order] = np.searchsorted(sorted_column, values[order], side="right") - 1
    return lo, hi


PAIR_QUERY_BLOCK = 1 << 16
"""Intruder records whose candidates are listed at once by :meth:`RankWindows.pairs`."""


class RankWindows:
    """The candidate sets ``B_j(x)`` of the intersection attack and their intersection.

    Rank swapping with a window of ``w`` ranks moves each value at most ``w``
    ranks. The masked column is a permutation of the original one, so a value
    ``u`` of the intruder's record ``x`` occupies ranks ``[lo(u), hi(u)]`` of
    the sorted masked column (a range when values are tied), and the masked
    record ``b`` can be ``x``'s only if its value's ranks ``[lo(b), hi(b)]``
    come within ``w`` of them: ``lo(b) <= hi(u) + w`` and ``hi(b) >= lo(u) - w``.
    With ties this errs on the side of keeping a candidate, so with the true
    (or a larger) window the true record is always in the intersection.

    :meth:`pairs` finds the intersection without forming all ``N^2`` pairs: in
    each attribute the condition says that the centres of the two rank ranges are
    at most ``w`` plus their half-widths apart; divided by ``w`` plus the
    attribute's widest half-widths, every candidate lies in the unit
    Chebyshev ball of ``x``, which a KD-tree lists (``O(N log N)`` for bounded
    intersections); the exact condition then filters that list.
    """

    def __init__(self, original: np.ndarray, masked: np.ndarray, window: int):
        columns = np.sort(masked, axis=0)
        ranges = [_rank_ranges(columns[:, j], masked[:, j]) for j in range(masked.shape[1])]
        self.masked_lo = np.stack([lo for lo, _ in ranges], axis=1)
        self.masked_hi = np.stack([hi for _, hi in ranges], axis=1)
        ranges = [_rank_ranges(columns[:, j], original[:, j]) for j in range(original.shape[1])]
        self.original_lo = np.stack([lo for lo, _ in ranges], axis=1)
        self.original_hi = np.stack([hi for _, hi in ranges], axis=1)
        self.window = window

    def per_attribute(self, x: int, attribute: int) -> np.ndarray:
        """``B_j(x)``: the masked records allowed for record ``x`` by attribute ``j``."""
        masked = np.arange(self.masked_lo.shape[0])
        return masked[self.allowed(np.full(masked.size, x), masked, [attribute])]

    def intersection(self, start: int, stop: int, attributes: Sequence[int] | None = None) -> np.ndarray:
        """Bool array ``(stop - start, n_records)``: the intersection of the ``B_j``."""
        n_masked = self.masked_lo.shape[0]
        rows = np.repeat(np.arange(start, stop), n_masked)
        cols = np.tile(np.arange(n_masked), stop - start)
        return self.allowed(rows, cols, attributes).reshape(stop - start, n_masked)

    def allowed(
        self, rows: np.ndarray, cols: np.ndarray, attributes: Sequence[int] | None = None
    ) -> np.ndarray:
        """For each pair (original ``rows[p]``, masked ``cols[p]``): is the masked record in
        every ``B_j`` of the original record's?"""
        if attributes is None:
            attributes = range(self.masked_lo.shape[1])
        ok = np.ones(rows.size, dtype=bool)
        for j in attributes:
            ok &= self.masked_lo[cols, j] <= self.original_hi[rows, j] + self.window
            ok &= self.masked_hi[cols, j] >= self.original_lo[rows, j] - self.window
        return ok

    def pairs(self, *, workers: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """The intersection as pairs (original record, masked record), sorted by original record."""
        from scipy.spatial import cKDTree

        def centre_and_half(lo, hi):
            return (lo + hi) / 2.0, (hi - lo) / 2.0

        masked_centre, masked_half = centre_and_half(self.masked_lo, self.masked_hi)
        original_centre, original_half = centre_and_half(self.original_lo, self.original_hi)
        # centres are multiples of 1/2: a reach below 1/2 only lets equal centres through
        reach = np.maximum(self.window + masked_half.max(axis=0) + original_half.max(axis=0), 0.25)
        tree = cKDTree(masked_centre / reach)
        queries = original_centre / reach
        rows, cols = [], []
        for start in range(0, queries.shape[0], PAIR_QUERY_BLOCK):  # bounded lists of Python ints
            # a radius a hair over 1: the division may round a boundary candidate just outside
            found = tree.query_ball_point(
                queries[start : start + PAIR_QUERY_BLOCK], r=1.0 + 1e-9, p=np.inf, workers=workers
            )
            sizes = np.fromiter((len(f) for f in found), dtype=np.int64, count=len(found))
            block_rows = start + np.repeat(np.arange(len(found)), sizes)
            block_cols = np.fromiter(
                itertools.chain.from_iterable(found), dtype=np.int64, count=int(sizes.sum())
            )
            keep = self.allowed(block_rows, block_cols)
            rows.append(block_rows[keep])
            cols.append(block_cols[keep])
        return np.concatenate(rows), np.concatenate(cols)


def rank_windows(original: np.ndarray, masked: np.ndarray, window: int) -> RankWindows:
    """The per-attribute candidate sets of the intersection attack (validated arrays)."""
    return RankWindows(original, masked, window)


def rank_swap_attack(
    original,
    masked=None,
    *,
    p: float | None = None,
    window: int | None = None,
    distance: str | Distance = DEFAULT_BASELINE,
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
) -> AttackResult:
    """The intersection attack on a rank-swapped file (RSLD).

    Parameters
    ----------
    original, masked : DataFrame or array-like of shape (n_records, n_attributes)
        The intruder's file and the rank-swapped file, aligned record by record
        (or by ``id_column``) so that the attack can be scored.
    p : float, default=None
        The published rank swapping parameter, in percent of the records
        (window ``floor(p * N / 100)`` ranks). An upper bound works too when
        ``p`` is secret; a value that is too small empties some intersections.
    window : int, default=None
        The same range in ranks (the worked example counts ranks); give one of
        ``p`` and ``window``.
    distance : str or Distance, default=DEFAULT_BASELINE (``"am"``)
        Distance used inside the intersections (a baseline name or a fitted
        distance).
    columns, id_column
        Passed to :func:`rlopt.data.validate_pair`.

    Returns
    -------
    AttackResult
        ``method="rank_swap"``; ``n_sure_correct`` records are re-identified
        with certainty, ``n_empty`` intersections are empty.

    Warns
    -----
    DataWarning
        When a masked column is not a permutation of the original column: then
        the file was not rank-swapped from this original, and ranks are only
        approximate.
    """
    data = validate_pair(original, masked, columns=columns, id_column=id_column)
    width = swap_window(p, window, data.n_records)
    return _rank_swap_attack(data, width, distance, p)


def _rank_swap_attack(data: LinkageData, width: int, distance, p=None) -> AttackResult:
    """:func:`rank_swap_attack` for a caller that already holds validated data (the rank
    windows on the numeric attributes, which rank swapping masks; the link inside the
    intersections on every attribute)."""
    numeric = data.numeric_columns
    if not numeric:
        raise InputError("the rank-swapping attack needs numeric attributes; the files have none")
    differs = [
        data.columns[j]
        for j in numeric
        if not np.array_equal(np.sort(data.original[:, j]), np.sort(data.masked[:, j]))
    ]
    if differs:
        warnings.warn(
            f"masked column(s) {differs} hold other values than the original: not a rank "
            "swap of this file; the rank windows are approximate",
            DataWarning,
            stacklevel=3,
        )
    windows = RankWindows(data.original[:, numeric], data.masked[:, numeric], width)
    rows, cols = windows.pairs(workers=2)
    return link_in_candidates(
        data,
        csr_array((np.ones(rows.size, dtype=bool), (rows, cols)), shape=(data.n_records, data.n_records)),
        method="rank_swap",
        distance=distance,
        parameters={"window": width, "p": p},
    )
