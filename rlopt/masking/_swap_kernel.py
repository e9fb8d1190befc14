"""Rank swapping's walk over the ranks, compiled (numba): the same draws from the same
generator as the Python walk of :mod:`rlopt.masking.swapping`, so the same file for the
same seed, with each partner found in ``O(log n)`` by a Fenwick tree over the free
ranks instead of a scan of the window. Imported only for large files (numba compiles on
first use)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["swap_permutation"]


@njit(cache=True)
def _add(tree, index, delta):
    index += 1
    while index < tree.size:
        tree[index] += delta
        index += index & -index


@njit(cache=True)
def _prefix(tree, index):
    """Free ranks in ``0 .. index`` (``index = -1``: none)."""
    total = 0
    index += 1
    while index > 0:
        total += tree[index]
        index -= index & -index
    return total


@njit(cache=True)
def _nth(tree, count):
    """The rank holding the ``count``-th free rank (1-based)."""
    position = 0
    step = 1
    while step * 2 < tree.size:
        step *= 2
    while step > 0:
        nxt = position + step
        if nxt < tree.size and tree[nxt] < count:
            position = nxt
            count -= tree[nxt]
        step //= 2
    return position  # 0-based rank


@njit(cache=True)
def _build(n):
    tree = np.zeros(n + 1, dtype=np.int64)
    for index in range(1, n + 1):
        tree[index] += 1
        parent = index + (index & -index)
        if parent <= n:
            tree[parent] += tree[index]
    return tree


@njit(cache=True)
def swap_permutation(n, window, rng, distribution):
    """``perm`` such that the swapped sorted column is ``sorted_values[perm]``:
    ``plain`` (``distribution`` false) or ``p-distribution`` (true)."""
    perm = np.arange(n)
    free = np.ones(n, dtype=np.bool_)
    tree = _build(n)
    for i in range(n):
        if not free[i] or window <= 0:
            continue
        before = _prefix(tree, i)
        if distribution:
            if _prefix(tree, n - 1) - before == 0:
                continue
            draw = rng.normal(window / 2, window / 2)
            target = i + max(1, int(round(draw)))
            at_or_below = _prefix(tree, min(target, n - 1)) - before
            below = -1 if at_or_below == 0 else _nth(tree, before + at_or_below)
            above_count = _prefix(tree, n - 1) - _prefix(tree, min(target, n) - 1)
            above = -1 if target >= n or above_count == 0 else _nth(tree, _prefix(tree, target - 1) + 1)
            if below == target:
                partner = below
            elif above < 0:
                partner = below
            elif below < 0:
                partner = above
            else:
                partner = above if above - target <= target - below else below
        else:
            count = _prefix(tree, min(n - 1, i + window)) - before
            if count == 0:
                continue
            partner = _nth(tree, before + 1 + rng.integers(0, count))
        perm[i], perm[partner] = perm[partner], perm[i]
        free[i] = False
        free[partner] = False
        _add(tree, i, -1)
        _add(tree, partner, -1)
    return perm
