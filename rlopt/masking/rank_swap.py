"""Rank swapping, attribute by attribute."""

from __future__ import annotations

import math
import warnings
from typing import Sequence

import numpy as np
import pandas as pd

from rlopt.data import as_frame, validate_table
from rlopt.exceptions import DataWarning, InputError

__all__ = ["rank_swap", "rank_window"]


def rank_window(p: float, n_records: int) -> int:
    """The largest rank distance a value may move: ``floor(p * n_records / 100)``.

    Raises
    ------
    InputError
        Unless ``0 < p <= 100``.
    """
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) \
            or not math.isfinite(p) or not 0 < p <= 100:
        raise InputError(f"rank swapping parameter p={p!r}; expected a percentage 0 < p <= 100")
    return int(math.floor(p * n_records / 100 + 1e-9))


def _swap_column(values: np.ndarray, window: int, rng: np.random.Generator) -> np.ndarray:
    n = values.size
    order = np.argsort(values, kind="stable")  # tied values get distinct ranks
    ranked = values[order].copy()
    swapped = np.zeros(n, dtype=bool)
    for i in range(n):
        if swapped[i]:
            continue
        hi = min(n - 1, i + window)
        candidates = i + 1 + np.flatnonzero(~swapped[i + 1:hi + 1])
        if candidates.size == 0:
            continue
        partner = int(rng.choice(candidates))
        ranked[i], ranked[partner] = ranked[partner], ranked[i]
        swapped[i] = swapped[partner] = True
    out = np.empty_like(values)
    out[order] = ranked
    return out


def rank_swap(data, p: float, *, seed: int | None = 0,
              columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Rank swapping with parameter ``p`` (a percentage of the records).

    Parameters
    ----------
    data : DataFrame or array-like of shape (n_records, n_attributes)
    p : float
        Swapping range as a percentage of the records, ``0 < p <= 100``.
    seed : int, default=0
        Seed of the random generator (``numpy.random.default_rng``); the same
        seed gives the same file.
    columns : list of str, default=None
        Attributes to swap (default: all); the others are left unchanged.

    Returns
    -------
    DataFrame
        Same shape, index and columns; each swapped column holds a permutation of
        its original values.

    Notes
    -----
    For each attribute on its own, with ``N`` records and the window
    ``w = floor(p * N / 100)`` ranks: sort the values (stable, so tied values get
    distinct ranks ``0..N-1``); walk the ranks upwards and, for each value at
    rank ``i`` not yet swapped, draw a partner ``l`` uniformly among the
    not-yet-swapped ranks in ``[i + 1, min(N - 1, i + w)]``, swap the two values
    and mark both swapped (no candidate: the value stays); then undo the sort.
    Every value thus moves at most ``w`` ranks. Attributes are processed in
    column order from one generator.

    References
    ----------
    R. A. Moore, "Controlled data-swapping techniques for masking public use
    microdata sets", U.S. Bureau of the Census (1996).
    """
    frame = as_frame(data, name="input")
    values, cols = validate_table(frame, columns=columns, name="input")
    window = rank_window(p, values.shape[0])
    if window == 0:
        warnings.warn(
            f"rank swapping with p={p} on {values.shape[0]} records allows a window of 0 "
            "ranks: nothing is swapped", DataWarning, stacklevel=2,
        )
    rng = np.random.default_rng(seed)
    result = frame.copy()
    for k, column in enumerate(cols):
        result[column] = _swap_column(values[:, k], window, rng)
    return result
