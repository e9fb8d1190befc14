"""Conflicts: pairs of records that no admissible parameter re-identifies together
(:func:`find_conflicts`) give ``K_i + K_j >= 1``; a pair a known admissible parameter
re-identifies needs no LP, the others share one HiGHS LP (:class:`_PairLP`).
"""

from __future__ import annotations

import time

import numpy as np

from rlopt.exceptions import SolverUnavailableError
from rlopt.families import LearnedFamily
from rlopt.milp.reductions.screening import FamilyLP, Screening, tightest_rows
from rlopt.milp.reductions.witnesses import SCREEN_TOL, WITNESS_BATCH, past, spread, witness_hits
from rlopt.milp.solvers.lp import SlackLP
from rlopt.processes import one_native_thread

__all__ = ["find_conflicts", "MAX_WITNESSES", "WITNESS_SHARE"]

MAX_WITNESSES = 200
"""Witness parameters evaluated on all pairs to skip compatible pairs in the conflict search."""

WITNESS_SHARE = 0.5
"""Share of the time left to its deadline that the conflict search gives its witnesses
(on EIA's 4092 records each takes 0.1 s, and 125 of them used the whole window, leaving
no time for a single LP)."""


_PAIR_BAND = 1e-7
"""A reused-LP value this close to the conflict threshold is re-solved by the
reference LP (:func:`~rlopt.milp.solvers.lp.max_min_slack`), so the decision is its."""

MAX_PAIR_WITNESSES = 2000
"""Parameters kept to decide pairs of :func:`find_conflicts` without an LP."""


class _PairLP:
    """The conflict LP of :func:`find_conflicts` for a pair of records: the same
    decision as ``FamilyLP.best(...) < margin - SCREEN_TOL`` (at most ``max_lps``
    of them), found faster.

    - *Witnesses*: a parameter of the LP's admissible set (the family's bounds and
      rows) whose smallest slack over the pair's rows is at least ``margin``
      proves the LP's optimum is, with ``SCREEN_TOL`` to spare, above the
      threshold: no conflict, and no LP. The screening's witnesses and the optimum
      of every LP solved here that was not a conflict are tried.
    - *One HiGHS LP*: the family's rows and the columns stay; each pair's rows
      replace the last pair's and the LP is re-solved from the last basis, instead
      of a new ``Highs()`` per pair. A value within ``_PAIR_BAND`` of the threshold
      (or no optimum) is decided by the reference LP.
    """

    def __init__(
        self,
        lp: FamilyLP,
        records: np.ndarray,
        own_rows: dict,
        witnesses: list,
        *,
        margin: float,
        cap: float = 1e3,
        deadline: float | None = None,
    ):
        self.lp, self.margin, self.cap = lp, margin, cap
        self.threshold = margin - SCREEN_TOL
        self.own_rows = own_rows
        self.records = np.asarray(records)
        self.position = {int(i): k for k, i in enumerate(self.records)}
        counts = np.array([len(own_rows[i][1]) for i in self.records], dtype=int)
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int)
        self.empty = counts == 0
        p = lp.lower.size
        self.all_coefs = np.ascontiguousarray(  # transposed: a record's rows are contiguous
            (
                np.vstack([own_rows[i][0] for i in self.records]).reshape(-1, p)
                if self.records.size
                else np.zeros((0, p))
            ).T
        )
        self.all_constants = (
            np.concatenate([own_rows[i][1] for i in self.records]) if self.records.size else np.zeros(0)
        )
        self.slack = np.empty((self.records.size, 64))  # per record and kept witness: its smallest slack
        self.n_kept = 0
        self.pending: list[np.ndarray] = []  # witnesses not in ``slack`` yet
        for theta in witnesses:
            if past(deadline):
                break
            self._add_witness(theta)
        self._flush()
        self.highs: SlackLP | None = None
        self.n_lps = self.n_skipped = self.n_reference = 0

    def _add_witness(self, theta: np.ndarray) -> None:
        """Keep ``theta``, clipped to the bounds, if it meets the family's rows (to the
        LP's own tolerance); they enter ``slack`` a batch at a time."""
        if self.n_kept + len(self.pending) >= MAX_PAIR_WITNESSES or not self.records.size:
            return
        theta = np.clip(np.asarray(theta, dtype=float), self.lp.lower, self.lp.upper)
        if len(self.lp.lo):
            values = self.lp.matrix @ theta
            tol = self.lp.tol
            if not ((values >= self.lp.lo - tol).all() and (values <= self.lp.hi + tol).all()):
                return
        self.pending.append(theta)
        if len(self.pending) >= WITNESS_BATCH:
            self._flush()

    def _flush(self) -> None:
        if not self.pending:
            return
        thetas = np.array(self.pending)
        self.pending = []
        columns = np.full((thetas.shape[0], self.records.size), np.inf)
        full = ~self.empty
        if full.any():
            with one_native_thread():
                values = thetas @ self.all_coefs + self.all_constants[None, :]
            columns[:, full] = np.minimum.reduceat(values, self.starts[full], axis=1)
        end = self.n_kept + thetas.shape[0]
        if end > self.slack.shape[1]:
            grown = np.empty((self.records.size, max(end, 2 * self.slack.shape[1])))
            grown[:, : self.n_kept] = self.slack[:, : self.n_kept]
            self.slack = grown
        self.slack[:, self.n_kept : end] = columns.T
        self.n_kept = end

    def _witnessed(self, i: int, j: int, coefs: np.ndarray, constants: np.ndarray) -> bool:
        """Does a kept witness have slack >= margin on every row of the pair?"""
        if self.n_kept:
            a = self.slack[self.position[i], : self.n_kept]
            b = self.slack[self.position[j], : self.n_kept]
            if np.minimum(a, b).max() >= self.margin:
                return True
        if self.pending:
            values = coefs @ np.array(self.pending).T + constants[:, None]
            return bool(values.min(axis=0).max() >= self.margin)
        return False

    def _solve(
        self, coefs: np.ndarray, constants: np.ndarray, deadline: float | None
    ) -> tuple[float | None, np.ndarray | None]:
        """``max s`` s.t. ``coefs @ theta + constants >= s`` over the admissible set (the
        LP of :func:`~rlopt.milp.solvers.lp.max_min_slack` without cuts), in the one HiGHS."""
        lp = self.lp
        if self.highs is None:
            self.highs = SlackLP(
                lp.matrix,
                lp.lo,
                lp.hi,
                lp.lower,
                lp.upper,
                cap=self.cap,
                feasibility_tol=lp.tol,
                presolve=True,
            )
        self.highs.drop_from(self.highs.n_family_rows)  # the previous pair's rows
        self.highs.add(coefs, constants)
        self.n_lps += 1
        return self.highs.solve(deadline)

    def conflict(self, i: int, j: int, deadline: float | None = None) -> bool:
        """Does no parameter of the relaxation re-identify ``i`` and ``j`` together?
        (``False`` when ``deadline`` passes before it is decided: no row is safer.)"""
        coefs = np.vstack([self.own_rows[i][0], self.own_rows[j][0]])
        constants = np.concatenate([self.own_rows[i][1], self.own_rows[j][1]])
        if self._witnessed(i, j, coefs, constants):
            self.n_skipped += 1
            return False
        try:
            value, theta = self._solve(coefs, constants, deadline)
        except (ImportError, SolverUnavailableError):  # pragma: no cover - no highspy: the reference says so
            value, theta = None, None
        if value is None or abs(value - self.threshold) <= _PAIR_BAND:
            self.n_reference += 1
            value, theta, _ = self.lp.best(coefs, constants, deadline=deadline)
        if value >= self.threshold and theta is not None:
            self._add_witness(theta)
        return value < self.threshold


# over 60 lines: its docstring; the witnesses, then the LPs, under one deadline
def find_conflicts(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    screening: Screening,
    *,
    margin: float,
    feasibility_tol: float = 1e-9,
    max_lps: int = 20000,
    rows_per_record: int = 64,
    deadline: float | None = None,
) -> np.ndarray:
    """Pairs of records that no admissible parameter re-identifies together: each
    gives the valid inequality ``K_i + K_j >= 1``, which tightens the relaxation
    without changing the optimum.

    Pairs re-identified together by a witness parameter are compatible and
    skipped; for the others, the LP ``max_theta`` of the smaller separation of the
    two records, over a subset of each record's rows (its ``rows_per_record``
    tightest at the neutral parameter -- a relaxation, so a conflict it proves is
    a conflict of the full model), decides. At most ``max_lps`` LPs, and none
    after the first 500 if fewer than 1 % of them were conflicts; any subset of
    conflicts is valid (so is stopping at ``deadline``).

    Returns
    -------
    ndarray of int, shape (n_conflicts, 2)
    """
    n_records, n_attributes = za.shape
    none = np.zeros((0, 2), dtype=int)
    if past(deadline):
        return none
    risky = np.flatnonzero(screening.at_risk)
    compatible = np.zeros((risky.size, risky.size), dtype=bool)
    witnesses = spread(screening.witnesses, MAX_WITNESSES)
    hits = witness_hits(za, zb, family, witnesses, records=risky, threshold=margin + SCREEN_TOL)
    # the witnesses (each costs one evaluation of all pairs) take at most half of the
    # time left: the pairs they leave undecided go to the LPs with the other half
    now = time.perf_counter()
    witness_deadline = None if deadline is None else now + WITNESS_SHARE * (deadline - now)
    for _ in witnesses:
        if witness_deadline is not None and time.perf_counter() > witness_deadline:
            break
        hit = next(hits)
        compatible[np.ix_(hit, hit)] = True
    a, b = np.nonzero(np.triu(~compatible, k=1))
    if not a.size:
        return none
    order = np.random.default_rng(0).permutation(a.size)[:max_lps]  # a fixed, spread-out subset
    a, b = a[order], b[order]
    needed = np.unique(np.concatenate([risky[a], risky[b]]))
    own_rows = tightest_rows(za, zb, family, needed, margin=margin, count=rows_per_record, deadline=deadline)
    if own_rows is None:
        return none  # the deadline passed before any LP could run
    lp = FamilyLP(family, n_attributes, za, zb, margin, feasibility_tol, max_cut_rounds=0)
    pair_lp = _PairLP(lp, needed, own_rows, screening.witnesses, margin=margin, deadline=deadline)
    found: list[tuple[int, int]] = []
    for tried, (i, j) in enumerate(zip(risky[a], risky[b])):
        if tried >= 500 and len(found) < 0.01 * tried:
            break  # conflicts are rare here (a broad family): more LPs would not pay
        if past(deadline):
            break
        if pair_lp.conflict(i, j, deadline):
            found.append((i, j))
    return np.array(found, dtype=int).reshape(-1, 2)
