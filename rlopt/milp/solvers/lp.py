"""Plain LPs and QPs straight through highspy (no Pyomo): the screening's and the
searches' :class:`SlackLP`, the surrogate's :class:`Projection`, and
:func:`max_min_slack`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from rlopt.milp.solvers.runtime import load_highspy, run_highs

__all__ = ["SlackLP", "Projection", "max_min_slack", "ITERATION_LIMIT"]


def _add_dense_rows(h, matrix: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    """Rows ``lo <= matrix @ x <= hi`` (dense ``matrix``, its zeros left out) in the HiGHS model ``h``."""
    import highspy

    matrix = np.asarray(matrix, dtype=float)
    if not matrix.shape[0]:
        return
    inf = highspy.kHighsInf
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    rows, cols = np.nonzero(matrix)
    starts = np.searchsorted(rows, np.arange(matrix.shape[0])).astype(np.int32)
    h.addRows(
        matrix.shape[0],
        np.where(np.isinf(lo), -inf, lo),
        np.where(np.isinf(hi), inf, hi),
        rows.size,
        starts,
        cols.astype(np.int32),
        matrix[rows, cols],
    )


ITERATION_LIMIT = 1_000_000
"""Simplex and QP iterations an LP or QP may take, far more than a run that converges
needs: one that cycles ends, and the caller assumes nothing of it, instead of running on."""


def _new_highs(iterations: int):
    """A silent plain highspy model (an LP or QP) whose runs stop after ``iterations``."""
    h = load_highspy().Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("simplex_iteration_limit", iterations)
    h.setOptionValue("qp_iteration_limit", iterations)
    return h


class SlackLP:
    """The LP ``max s`` s.t. ``coefs @ theta + constants >= s`` for the rows added,
    ``family_lo <= family_matrix @ theta <= family_hi``, ``lower <= theta <= upper``,
    ``s <= cap``: one HiGHS model whose rows are added and deleted in place, so that
    each solve after a change is a warm start (presolve off: it would drop the basis)."""

    def __init__(
        self,
        family_matrix: np.ndarray,
        family_lo: np.ndarray,
        family_hi: np.ndarray,
        lower: np.ndarray,
        upper: np.ndarray,
        *,
        cap: float,
        feasibility_tol: float = 1e-9,
        presolve: bool = False,
    ):
        highspy = self._highspy = load_highspy()
        p = len(lower)
        inf = highspy.kHighsInf
        h = _new_highs(iterations=ITERATION_LIMIT)
        h.setOptionValue("primal_feasibility_tolerance", feasibility_tol)
        h.setOptionValue("dual_feasibility_tolerance", feasibility_tol)
        if not presolve:
            h.setOptionValue("presolve", "off")
        h.addVars(
            p + 1,
            np.append(np.where(np.isinf(lower), -inf, lower), -inf).astype(float),
            np.append(np.where(np.isinf(upper), inf, upper), cap).astype(float),
        )
        h.changeColsCost(1, np.array([p], dtype=np.int32), np.array([1.0]))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        family_matrix = np.asarray(family_matrix, dtype=float).reshape(-1, p)
        _add_dense_rows(
            h, np.column_stack([family_matrix, np.zeros(len(family_matrix))]), family_lo, family_hi
        )
        self.highs, self.size = h, p
        self.n_family_rows = h.getNumRow()

    def add(self, coefs: np.ndarray, constants: np.ndarray) -> None:
        """Rows ``coefs @ theta + constants >= s`` (one per row of ``coefs``)."""
        if len(coefs):
            _add_dense_rows(
                self.highs,
                np.column_stack([coefs, -np.ones(len(coefs))]),
                -constants,
                np.full(len(coefs), np.inf),
            )

    def n_rows(self) -> int:
        return self.highs.getNumRow()

    def delete(self, rows: np.ndarray) -> None:
        """Delete the rows of these indices (added rows; the family's come first)."""
        rows = np.asarray(rows, dtype=np.int32)
        if rows.size:
            self.highs.deleteRows(rows.size, rows)

    def duals(self) -> np.ndarray:
        """The row duals of the last optimum (one per row, the family's first)."""
        return np.array(self.highs.getSolution().row_dual)

    def drop_from(self, first: int) -> None:
        """Delete the rows added since the model had ``first`` rows."""
        last = self.highs.getNumRow()
        if last > first:
            self.highs.deleteRows(last - first, np.arange(first, last, dtype=np.int32))

    def solve(self, deadline: float | None = None) -> tuple[float | None, np.ndarray | None]:
        """``(s, theta)`` at the optimum, ``(None, None)`` when HiGHS proves none (e.g.
        by ``deadline``, a ``time.perf_counter()`` value)."""
        run_highs(self.highs, deadline=deadline)
        if self.highs.getModelStatus() != self._highspy.HighsModelStatus.kOptimal:
            return None, None
        values = np.array(self.highs.getSolution().col_value)
        return float(values[self.size]), values[: self.size]


class Projection:
    """Euclidean projection onto ``{lower <= theta <= upper, lo <= matrix @ theta <= hi}``:
    the QP ``min 1/2 |theta - y|^2`` over the polytope, one HiGHS model re-used
    (only the linear cost ``-y`` changes between calls)."""

    def __init__(
        self, matrix: np.ndarray, lo: np.ndarray, hi: np.ndarray, lower: np.ndarray, upper: np.ndarray
    ):
        highspy = self._highspy = load_highspy()
        size = len(lower)
        inf = highspy.kHighsInf
        h = _new_highs(iterations=ITERATION_LIMIT)
        h.addVars(
            size,
            np.where(np.isinf(lower), -inf, lower).astype(float),
            np.where(np.isinf(upper), inf, upper).astype(float),
        )
        _add_dense_rows(h, np.asarray(matrix, dtype=float).reshape(-1, size), lo, hi)
        h.passHessian(
            size,
            size,
            highspy.HessianFormat.kTriangular,
            np.arange(size + 1, dtype=np.int32),
            np.arange(size, dtype=np.int32),
            np.ones(size),
        )
        self._highs, self._size, self._index = h, size, np.arange(size, dtype=np.int32)
        self._lower, self._upper = lower, upper

    def __call__(self, y: np.ndarray, deadline: float | None = None) -> np.ndarray | None:
        """The nearest admissible point to ``y``, or ``None`` when HiGHS proves none (e.g.
        by ``deadline``, a ``time.perf_counter()`` value, or its iteration limit)."""
        self._highs.changeColsCost(self._size, self._index, -np.asarray(y, dtype=float))
        run_highs(self._highs, deadline=deadline)
        if self._highs.getModelStatus() != self._highspy.HighsModelStatus.kOptimal:
            return None
        return np.clip(np.array(self._highs.getSolution().col_value), self._lower, self._upper)


def max_min_slack(
    coefs: np.ndarray,
    constants: np.ndarray,
    family_matrix: np.ndarray,
    family_lo: np.ndarray,
    family_hi: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    *,
    cuts: Sequence[tuple[np.ndarray, float]] = (),
    cap: float = 1e3,
    feasibility_tol: float = 1e-9,
    time_limit: float | None = None,
) -> tuple[float | None, np.ndarray | None]:
    """The LP ``max s`` s.t. ``coefs @ theta + constants >= s`` (every row),
    ``family_lo <= family_matrix @ theta <= family_hi``, ``lower <= theta <= upper``
    and ``cut @ theta >= rhs`` for each cut; ``s <= cap``.

    Returns ``(s, theta)`` at the optimum, or ``(None, None)`` when HiGHS does not
    prove one, e.g. within ``time_limit`` seconds (the caller must then assume nothing).
    """
    highspy = load_highspy()
    p = coefs.shape[1]
    h = _new_highs(iterations=ITERATION_LIMIT)
    h.setOptionValue("primal_feasibility_tolerance", feasibility_tol)
    h.setOptionValue("dual_feasibility_tolerance", feasibility_tol)
    h.addVars(p + 1, np.append(lower, -highspy.kHighsInf).astype(float), np.append(upper, cap).astype(float))
    h.changeColsCost(1, np.array([p], dtype=np.int32), np.array([1.0]))
    h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    blocks = [
        (np.column_stack([coefs, -np.ones(len(coefs))]), -constants, np.full(len(coefs), np.inf)),
        (np.column_stack([family_matrix, np.zeros(len(family_matrix))]), family_lo, family_hi),
    ]
    if len(cuts):
        blocks.append(
            (
                np.array([np.append(c, 0.0) for c, _ in cuts]),
                np.array([r for _, r in cuts]),
                np.full(len(cuts), np.inf),
            )
        )
    for matrix, lo, hi in blocks:
        _add_dense_rows(h, np.asarray(matrix, dtype=float).reshape(-1, p + 1), lo, hi)
    run_highs(h, deadline=None if time_limit is None else time.perf_counter() + max(1e-3, time_limit))
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None, None
    values = np.array(h.getSolution().col_value)
    return float(values[p]), values[:p]
