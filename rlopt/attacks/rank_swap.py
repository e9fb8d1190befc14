"""The transparency attack on rank swapping (RSLD): per-attribute rank windows,
their intersection, then distance-based linkage inside it."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from rlopt.attacks._common import AttackResult, link_in_candidates
from rlopt.data import LinkageData, validate_pair
from rlopt.exceptions import DataWarning, InputError
from rlopt.families import Distance
from rlopt.masking.swapping import swap_window

__all__ = ["rank_swap_attack", "rank_windows", "rank_swap_attack_validated"]


def _rank_ranges(sorted_column: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ranks (0-based) a value occupies in a sorted column: ``[lo, hi]``.

    Tied values share the whole range of their ranks; a value absent from the
    column gets the empty range ``[lo, lo - 1]`` at the place it would be inserted.
    """
    lo = np.searchsorted(sorted_column, values, side="left")
    hi = np.searchsorted(sorted_column, values, side="right") - 1
    return lo, hi


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
        return np.flatnonzero(self._allowed(slice(x, x + 1), [attribute])[0])

    def intersection(self, start: int, stop: int, attributes: Sequence[int] | None = None) -> np.ndarray:
        """Bool array ``(stop - start, n_records)``: the intersection of the ``B_j``."""
        if attributes is None:
            attributes = range(self.masked_lo.shape[1])
        return self._allowed(slice(start, stop), attributes)

    def _allowed(self, rows: slice, attributes) -> np.ndarray:
        lo_x, hi_x = self.original_lo[rows], self.original_hi[rows]
        allowed = np.ones((lo_x.shape[0], self.masked_lo.shape[0]), dtype=bool)
        for j in attributes:
            allowed &= self.masked_lo[None, :, j] <= hi_x[:, j, None] + self.window
            allowed &= self.masked_hi[None, :, j] >= lo_x[:, j, None] - self.window
        return allowed


def rank_windows(original: np.ndarray, masked: np.ndarray, window: int) -> RankWindows:
    """The per-attribute candidate sets of the intersection attack (validated arrays)."""
    return RankWindows(original, masked, window)


def rank_swap_attack(
    original,
    masked,
    *,
    p: float | None = None,
    window: int | None = None,
    distance: str | Distance = "am",
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
    distance : str or Distance, default="am"
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
    return rank_swap_attack_validated(data, width, distance, p)


def rank_swap_attack_validated(data: LinkageData, width: int, distance, p=None) -> AttackResult:
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
    return link_in_candidates(
        data,
        windows.intersection(0, data.n_records),
        method="rank_swap",
        distance=distance,
        parameters={"window": width, "p": p},
    )
