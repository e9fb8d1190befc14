"""Rank swapping, attribute by attribute.

For each attribute on its own, with ``N`` records and the window
``w = floor(p * N / 100)`` ranks: sort the values (stable, so tied values get
distinct ranks ``0..N-1``); walk the ranks upwards and, for each value at
rank ``i`` not yet swapped, draw a partner rank ``l > i`` among the
not-yet-swapped ranks, swap the two values and mark both swapped (no
candidate: the value stays); then undo the sort. Attributes are processed in
column order from one generator. The variants differ in the partner:

- ``plain``: uniform in ``[i + 1, min(N - 1, i + w)]``; every value moves at
  most ``w`` ranks.
- ``p-buckets``: the ranks are cut into buckets of ``w`` consecutive ranks;
  from bucket ``r`` a bucket ``s >= r`` is drawn with probability
  ``2**-(s - r + 1) / K``, among the buckets that still hold a free rank
  above ``i`` (``K`` normalises over those), then a free rank uniformly in
  it. A value can move arbitrarily far, with geometrically small probability.
- ``p-distribution``: ``l = i + r`` with ``r`` drawn from a normal
  distribution with mean and standard deviation ``w / 2`` ranks, rounded;
  a draw below 1 counts as 1, and a taken or out-of-range ``l`` is replaced
  by the nearest free rank above ``i`` (the higher on a tie). Unbounded.

The published descriptions leave the bucket size, the normalisation and what
happens to a taken partner open; the choices above fill those gaps.

From :data:`COMPILED_SWAP_RECORDS` records, ``plain`` and ``p-distribution`` walk the
ranks in compiled code (:mod:`rlopt.masking._swap_kernel`) that makes the same draws
from the same generator: the same file for the same seed, 10^6 records in a fraction of
a second instead of about a minute.

References:

R. A. Moore, "Controlled data-swapping techniques for masking public use
microdata sets", U.S. Bureau of the Census (1996).
J. Nin, J. Herranz, V. Torra, "Rethinking rank swapping to decrease
disclosure risk", Data & Knowledge Engineering 64 (2008).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rlopt.data._validate import as_frame, validate_table
from rlopt.exceptions import DataWarning, InputError

__all__ = ["rank_swap", "rank_window", "swap_window", "VARIANTS", "COMPILED_SWAP_RECORDS"]

COMPILED_SWAP_RECORDS = 20_000
"""From this many records the ``plain`` and ``p-distribution`` walks run compiled
(below, compiling would cost more than it saves); the output is the same."""


def rank_window(p: float, n_records: int) -> int:
    """The largest rank distance a value may move: ``floor(p * n_records / 100)``.

    Raises
    ------
    InputError
        Unless ``0 < p <= 100``.
    """
    if (
        isinstance(p, bool)
        or not isinstance(p, (int, float, np.integer, np.floating))
        or not math.isfinite(p)
        or not 0 < p <= 100
    ):
        raise InputError(f"rank swapping parameter p={p!r}; expected a percentage 0 < p <= 100")
    return int(math.floor(p * n_records / 100 + 1e-9))


VARIANTS = ("plain", "p-buckets", "p-distribution")
"""The rank swapping variants: the classic bounded window and the two
transparency-aware variants of Nin, Herranz and Torra (2008)."""


def _plain_partner(i: int, free: np.ndarray, window: int, rng: np.random.Generator) -> int | None:
    """Uniform among the free ranks in ``[i + 1, i + window]``."""
    candidates = i + 1 + np.flatnonzero(free[i + 1 : i + window + 1])
    return int(rng.choice(candidates)) if candidates.size else None


def _bucket_partner(i: int, free: np.ndarray, window: int, rng: np.random.Generator) -> int | None:
    """A bucket ``s >= r`` with probability ``2**-(s - r + 1) / K``, then a free rank in it.

    Buckets are consecutive blocks of ``window`` ranks (the last may be
    shorter); ``r`` is the bucket of rank ``i``. Only buckets that still hold a
    free rank above ``i`` are eligible, and ``K`` normalises over those.
    """
    n = free.size
    size = max(window, 1)
    buckets = []
    for s in range(i // size, (n - 1) // size + 1):
        lo, hi = max(s * size, i + 1), min(n, (s + 1) * size)
        free_ranks = lo + np.flatnonzero(free[lo:hi])
        if free_ranks.size:
            buckets.append((s, free_ranks))
    if not buckets:
        return None
    weights = np.array([2.0 ** -(s - i // size + 1) for s, _ in buckets])
    s_index = rng.choice(len(buckets), p=weights / weights.sum())
    return int(rng.choice(buckets[s_index][1]))


def _distribution_partner(i: int, free: np.ndarray, window: int, rng: np.random.Generator) -> int | None:
    """``l = i + r``, ``r`` drawn from ``Normal(window / 2, window / 2)`` and rounded.

    A draw below 1 counts as 1; when rank ``l`` is taken (or beyond the last
    rank) the nearest free rank above ``i`` is used (the higher one on a tie).
    The window is unbounded: a value may move further than ``window`` ranks.
    """
    above = i + 1 + np.flatnonzero(free[i + 1 :])
    if above.size == 0:
        return None
    target = i + max(1, int(round(rng.normal(window / 2, window / 2))))
    gaps = np.abs(above - target)
    nearest = np.flatnonzero(gaps == gaps.min())
    return int(above[nearest[-1]])


_PARTNER = {"plain": _plain_partner, "p-buckets": _bucket_partner, "p-distribution": _distribution_partner}


def _swap_column(
    values: np.ndarray,
    window: int,
    rng: np.random.Generator,
    variant: str = "plain",
    *,
    compiled: bool | None = None,
) -> np.ndarray:
    """One attribute swapped; ``compiled`` (default: from :data:`COMPILED_SWAP_RECORDS`
    records, for ``plain`` and ``p-distribution``) walks in compiled code, same draws."""
    n = values.size
    order = np.argsort(values, kind="stable")  # tied values get distinct ranks
    if compiled is None:
        compiled = n >= COMPILED_SWAP_RECORDS and variant != "p-buckets"
    if compiled:
        from rlopt.masking._swap_kernel import swap_permutation

        out = np.empty_like(values)
        out[order] = values[order][swap_permutation(n, window, rng, variant == "p-distribution")]
        return out
    ranked = values[order].copy()
    free = np.ones(n, dtype=bool)
    pick = _PARTNER[variant]
    for i in range(n):
        if not free[i]:
            continue
        partner = pick(i, free, window, rng) if window > 0 else None
        if partner is None:
            continue
        ranked[i], ranked[partner] = ranked[partner], ranked[i]
        free[i] = free[partner] = False
    out = np.empty_like(values)
    out[order] = ranked
    return out


def swap_window(p, window, n_records: int) -> int:
    """The rank swapping range in ranks from exactly one of ``p`` (percent of the
    records) and ``window`` (ranks), each checked."""
    if (p is None) == (window is None):
        raise InputError(
            f"rank swapping: give exactly one of --p (percent of the records) and "
            f"--window (in ranks); got p={p!r}, window={window!r}"
        )
    if window is None:
        return rank_window(p, n_records)
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 0:
        raise InputError(f"rank swapping window={window!r}; expected a whole number of ranks >= 0")
    return int(window)


def _warn_nothing_swapped(p, window, n_records: int) -> None:
    """Warn (at the caller of :func:`rank_swap`) that a window of 0 ranks swaps nothing."""
    warnings.warn(
        f"rank swapping with {f'p={p}' if window is None else 'window=0'} on "
        f"{n_records} records allows a window of 0 ranks: nothing is swapped",
        DataWarning,
        stacklevel=3,
    )


def rank_swap(
    data,
    p: float | None = None,
    *,
    window: int | None = None,
    variant: str = "plain",
    seed: int | None = 0,
    columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Rank swapping with parameter ``p`` (a percentage of the records).

    Parameters
    ----------
    data : DataFrame or array-like of shape (n_records, n_attributes)
    p : float
        Swapping range as a percentage of the records, ``0 < p <= 100``.
    window : int, default=None
        The range in ranks instead of ``p`` (the worked example of the
        intersection attack counts ranks); give one of ``p`` and ``window``.
    variant : {"plain", "p-buckets", "p-distribution"}, default="plain"
        How the partner rank is drawn (see Notes).
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
    Each attribute on its own, in column order from one generator, with the window
    ``w = floor(p * N / 100)`` ranks: walk the sorted values upwards and swap each
    not-yet-swapped value with a not-yet-swapped partner rank ``l > i``. ``plain``:
    ``l`` uniform in ``[i + 1, min(N - 1, i + w)]``; ``p-buckets``: a bucket of
    ``w`` ranks drawn with geometrically decreasing probability, then a free rank
    in it; ``p-distribution``: ``l = i + r``, ``r ~ Normal(w / 2, w / 2)`` rounded,
    else the nearest free rank (unbounded). The module docstring gives the
    details, how they fill the gaps of the published descriptions, and the
    references (Moore 1996; Nin, Herranz and Torra 2008).
    """
    if variant not in VARIANTS:
        raise InputError(f"rank swapping variant={variant!r}; expected one of {list(VARIANTS)}")
    frame = as_frame(data, name="input")
    values, cols = validate_table(frame, columns=columns, name="input")
    width = swap_window(p, window, values.shape[0])
    if width == 0:
        _warn_nothing_swapped(p, window, values.shape[0])
    rng = np.random.default_rng(seed)
    result = frame.copy()
    for k, column in enumerate(cols):
        result[column] = _swap_column(values[:, k], width, rng, variant)
    return result
