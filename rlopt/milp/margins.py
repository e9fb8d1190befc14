"""Every pair's margin as a linear function of the parameter, kept in memory.

For a learned family ``g_ij(theta) = d(a_i, b_j) - d(a_i, b_i)`` is linear in
``theta``: ``g_ij = slopes[:, i, j] @ theta + consts[i, j]``. The incumbent
searches (exact line search, surrogate ascent, greedy add) evaluate it for many
parameters; computing the features once makes each evaluation one product.
The array has ``P N^2`` numbers; it is built only when that fits a budget.

For the distances that are quadratic forms of the difference (``wm``, ``sb``) on
numeric files, :class:`QuadraticMargins` gives the margins of one parameter for a block
of records by one matrix product, without the features.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from rlopt.families import Distance, LearnedFamily
from rlopt.families.bilinear import BilinearDistance
from rlopt.families.wm import WeightedMeanDistance

__all__ = ["PairMargins", "MAX_MARGIN_BYTES", "QuadraticMargins", "quadratic_matrix"]

MAX_MARGIN_BYTES = 2**30
"""The margins of every pair for every coordinate are kept in memory up to this size
(filled in place, chunk by chunk: the peak is about this plus one 64 MiB chunk)."""


@dataclass
class PairMargins:
    """``slopes`` (shape ``P, N, N``: one contiguous matrix per coordinate) and
    ``consts`` (``N, N``) of every pair's margin (see the module)."""

    slopes: np.ndarray
    consts: np.ndarray

    @classmethod
    def build(
        cls,
        za: np.ndarray,
        zb: np.ndarray,
        family: LearnedFamily,
        *,
        deadline: float | None = None,
        max_bytes: int = MAX_MARGIN_BYTES,
    ) -> PairMargins | None:
        """The margins of the files' pairs, or ``None`` when they would not fit in
        ``max_bytes`` or ``deadline`` (``time.perf_counter()``) passes first."""
        n_records = za.shape[0]
        size = family.n_params(za.shape[1])
        if n_records * n_records * size * 8 > max_bytes:
            return None
        slopes, consts = np.empty((size, n_records, n_records)), np.empty((n_records, n_records))
        step = max(1, int(64 * 2**20 // max(1, n_records * size * 8)))
        for start in range(0, n_records, step):
            if deadline is not None and time.perf_counter() > deadline:
                return None
            rows = np.arange(start, min(n_records, start + step))
            phi, offset = family.features(za[rows], zb)
            own = np.arange(rows.size), rows
            slopes[:, rows, :] = np.moveaxis(phi - phi[own][:, None, :], 2, 0)
            consts[rows] = offset - offset[own][:, None]
        return cls(slopes, consts)

    @property
    def n_records(self) -> int:
        return self.consts.shape[0]

    def at(self, theta: np.ndarray) -> np.ndarray:
        """``g_ij(theta)`` for every pair, ``+inf`` on the diagonal (a record is not its own competitor)."""
        g = np.tensordot(np.asarray(theta, dtype=float), self.slopes, axes=1) + self.consts
        g[np.diag_indices(self.n_records)] = np.inf
        return g

    def pairs(self, records: np.ndarray, others: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(G, c)`` with ``g_ij = G[r, s] @ theta + c[r, s]`` for ``i = records[r]``,
        ``j = others[r, s]`` (``others`` of shape ``(len(records), K)``)."""
        rows = np.asarray(records)[:, None]
        return np.moveaxis(self.slopes[:, rows, others], 0, 2), self.consts[rows, others]


def quadratic_matrix(distance: Distance) -> np.ndarray | None:
    """``Q`` with ``d(a, b) = (a - b)^T Q (a - b)`` for the distances that are quadratic
    forms of the difference (wm's and sb's), else ``None``."""
    if type(distance) is WeightedMeanDistance:
        return np.diag(distance.weights)
    if type(distance) is BilinearDistance:
        return distance.matrix
    return None


class QuadraticMargins:
    """The margins of the distance ``(a - b)^T Q (a - b)`` on numeric z-scores by one
    matrix product per block: ``d(a_i, b_j) - a_i^T Q a_i = b_j^T Q b_j - 2 a_i^T Q b_j``,
    so ``g_ij = h_ij - h_ii`` with ``h = [a Q, 1] [-2 b, b^T Q b]^T``. The rounding differs
    from the reference evaluator's (about 1e-16 relative): a caller that decides at a
    threshold rechecks near it."""

    def __init__(self, zb: np.ndarray, q: np.ndarray):
        self.q = q
        self.right = np.column_stack([-2.0 * zb, np.einsum("jk,jk->j", zb @ q, zb)]).T

    def of(self, a: np.ndarray, own: np.ndarray) -> np.ndarray:
        """``g[r, j]`` for the records ``a`` (rows of the masked z-scores) whose own
        originals are ``own``; ``+inf`` at ``j = own[r]``."""
        h = np.column_stack([a @ self.q, np.ones(len(a))]) @ self.right
        rows = np.arange(len(a))
        g = h - h[rows, own][:, None]
        g[rows, own] = np.inf
        return g
