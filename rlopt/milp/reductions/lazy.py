"""Lazy linkage rows: start from each record's nearest originals (:func:`nearest_pairs`),
add the rows a solve violates (:class:`LazyLinkageRows`); duplicate records' cliques
(:func:`duplicate_groups`); a MIP start from a parameter (:func:`start_from`).
"""

from __future__ import annotations

import numpy as np

from rlopt.data._standardise import squared_diffs
from rlopt.families import LearnedFamily
from rlopt.milp.formulation import linkage_rows
from rlopt.milp.reductions.screening import FamilyLP
from rlopt.milp.reductions.witnesses import (
    RECORD_BLOCK,
    SCREEN_TOL,
    attribute_names,
    past,
    separation,
    slack_blocks,
)
from rlopt.milp.solvers.options import Cut

__all__ = ["duplicate_groups", "nearest_pairs", "LazyLinkageRows", "start_from"]


def duplicate_groups(za: np.ndarray) -> list[np.ndarray]:
    """Groups of two or more masked records with identical values.

    Records ``i`` and ``j`` with ``a_i = a_j`` are at the same distance from every
    original, so no parameter of any family re-identifies both with a margin > 0
    (``d(a, b_i) < d(a, b_j)`` and ``d(a, b_j) < d(a, b_i)`` exclude each other):
    of each group at most one record is correct, the clique ``sum K_i >= |G| - 1``.
    MDAV on all attributes makes every masked record a member of such a group.
    """
    _, inverse, counts = np.unique(za, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")
    starts = np.cumsum(counts) - counts
    return [order[start : start + count] for start, count in zip(starts, counts) if count > 1]


def nearest_pairs(za: np.ndarray, zb: np.ndarray, count: int) -> np.ndarray:
    """For each record, its ``count`` nearest other originals by the Euclidean distance."""
    n_records = za.shape[0]
    pairs = np.zeros((n_records, n_records), dtype=bool)
    for start in range(0, n_records, RECORD_BLOCK):
        block = np.arange(start, min(n_records, start + RECORD_BLOCK))
        d = squared_diffs(za[block], zb).sum(axis=2)
        d[np.arange(block.size), block] = np.inf
        if count == 1:  # the first nearest, as the stable sort's first (a sort of each row costs more)
            nearest = np.argmin(d, axis=1)[:, None]
        else:
            nearest = np.argsort(d, axis=1, kind="stable")[:, : min(count, n_records - 1)]
        pairs[block[:, None], nearest] = True
    return pairs


class LazyLinkageRows:
    """Lazy constraint generation: after each solve, every pair of every record the
    solver counts as re-identified is checked with the reference evaluator, and the
    ``per_round`` most violated rows per record not yet in the model are added.
    When none is violated, the reduced model's optimum is the full model's (it is a
    relaxation whose solution satisfies every row)."""

    def __init__(
        self,
        za,
        zb,
        family: LearnedFamily,
        columns,
        margin: float,
        big_c,
        pairs: np.ndarray,
        *,
        per_round: int = 2,
        tol: float = 1e-9,
        max_family_rounds: int = 20,
    ):
        self.za, self.zb, self.family, self.columns = za, zb, family, columns
        self.margin, self.big_c, self.pairs = margin, big_c, pairs
        self.per_round, self.tol = per_round, tol
        self.max_family_rounds = max_family_rounds
        self.rows_added = 0
        self._lp: FamilyLP | None = None

    def violated(self, theta: np.ndarray, k: np.ndarray, pairs: np.ndarray | None = None) -> np.ndarray:
        """Pairs not in ``pairs`` (default: the model's) whose row ``theta`` violates,
        for the records with ``K_i = 0``."""
        pairs = self.pairs if pairs is None else pairs
        distance = self.family.distance(theta, self.columns)
        new = np.zeros_like(pairs)
        for block, slack in slack_blocks(self.za, self.zb, distance, np.flatnonzero(k < 0.5)):
            slack[pairs[block]] = np.inf
            slack[np.isnan(slack)] = -np.inf
            worst = np.argsort(slack, axis=1, kind="stable")[:, : self.per_round]
            bad = np.take_along_axis(slack, worst, axis=1) < self.margin - self.tol
            r, c = np.nonzero(bad)
            new[block[r], worst[r, c]] = True
        return new

    def __call__(self, theta: np.ndarray, k: np.ndarray) -> list[Cut]:
        new = self.violated(theta, k)
        if not new.any():
            return []
        rows = linkage_rows(
            self.za,
            self.zb,
            self.family,
            margin=self.margin,
            big_c=self.big_c,
            pairs=new,
            records=np.flatnonzero(new.any(axis=1)),
        )
        self.pairs |= new
        self.rows_added += len(rows)
        return [
            Cut(rows.coefs[r], self.margin - rows.constants[r], int(rows.record[r]), rows.big_c[r])
            for r in range(len(rows))
        ]

    def complete(
        self, k: np.ndarray, *, max_rounds: int = 50, deadline: float | None = None
    ) -> np.ndarray | None:
        """A parameter that re-identifies, against every original, all the records
        that a solution of the reduced model counts (``K_i = 0``), or ``None``.

        The reduced model's solution only satisfies the rows in it; the records it
        counts may still be re-identified together by another parameter. The LP
        ``max_theta`` of their smallest separation, over their rows in the model
        plus the violated ones added round by round, finds that parameter when it
        exists (the family's cuts included). With the round's proven optimum as a
        lower bound (:func:`~rlopt.milp.solve_model`), a start from it is optimal.
        Gives up (``None``) once ``deadline`` (``time.perf_counter()``) has passed.
        """
        if self._lp is None:
            self._lp = FamilyLP(
                self.family,
                self.za.shape[1],
                self.za,
                self.zb,
                self.margin,
                self.tol,
                max_cut_rounds=self.max_family_rounds,
            )
        records = np.flatnonzero(k < 0.5)
        pairs = self.pairs.copy()
        for _ in range(max_rounds):
            if past(deadline):
                return None
            rows = linkage_rows(
                self.za, self.zb, self.family, margin=self.margin, pairs=pairs, records=records
            )
            value, theta, exact = self._lp.best(rows.coefs, rows.constants, deadline=deadline)
            if theta is None or not exact or value < self.margin + SCREEN_TOL:
                return None
            new = self.violated(theta, k, pairs)
            if not new.any():
                return theta
            pairs |= new
        return None


def start_from(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    theta: np.ndarray,
    *,
    margin: float,
    fixed: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A MIP start ``(theta, K)``: ``K_i = 0`` exactly for the records ``theta``
    re-identifies with the margin (plus ``SCREEN_TOL``), ``K_i = 1`` for the rest."""
    sep = separation(za, zb, family.distance(theta, attribute_names(za.shape[1])))
    k = (sep < margin + SCREEN_TOL).astype(float)
    if fixed is not None:
        k[fixed] = 1.0
    return np.asarray(theta, dtype=float), k
