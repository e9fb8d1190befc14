"""Screening: for every record that a known parameter does not already re-identify, the
LP ``max_theta min_j d(a_i,b_j) - d(a_i,b_i)`` (:func:`screen_records`, its rows generated
by :class:`_RecordLP`); a record whose best separation is below the margin is fixed as not
re-identified, and the records at risk bound the optimum. :func:`best_start` is the
screening LPs' best parameter, a MIP start.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from rlopt.families import LearnedFamily
from rlopt.milp.formulation import linkage_rows
from rlopt.milp.reductions.witnesses import (
    SCREEN_TOL,
    attribute_names,
    past,
    separation,
    spread,
    witness_hits,
)
from rlopt.milp.solvers.lp import SlackLP, max_min_slack

__all__ = ["Screening", "screen_records", "best_start", "FamilyLP", "tightest_rows"]


@dataclass
class Screening:
    """Per record: can *some* admissible parameter re-identify it at the margin?

    (Decided from ``max_theta min_j d(a_i,b_j) - d(a_i,b_i)`` over the admissible
    set, exact below the margin; an upper bound where ``exact[i]`` is false, i.e.
    the family's cutting planes were capped.) ``at_risk`` is the set of records some admissible parameter re-identifies
    (over-approximated where not exact); ``unreachable`` the records no
    admissible parameter re-identifies (exact: safe to fix ``K_i = 1``).
    ``witnesses`` are parameters that re-identify at least one record (the known
    one and the LP optima), used to find conflicts.
    """

    at_risk: np.ndarray
    unreachable: np.ndarray
    exact: np.ndarray
    witnesses: list[np.ndarray]
    screened: np.ndarray | None = None  # the records decided (by an LP or a known parameter)
    evaluation_seconds: float = 0.0  # what the reference evaluation of every pair at ``known`` took

    @property
    def n_at_risk(self) -> int:
        return int(self.at_risk.sum())


class FamilyLP:
    """The family's admissible set as LP data, and the per-record LP over it."""

    def __init__(
        self, family: LearnedFamily, n_attributes: int, za, zb, margin: float, tol: float, max_cut_rounds: int
    ):
        self.family, self.za, self.zb, self.margin, self.tol = family, za, zb, margin, tol
        self.lower, self.upper = family.bounds(n_attributes)
        rows = family.constraints(n_attributes)
        self.matrix, self.lo, self.hi = rows.matrix(), np.array(rows.lo), np.array(rows.hi)
        self.own_cuts = family.has_cuts
        self.max_cut_rounds = max_cut_rounds
        self.pool: list[tuple[np.ndarray, float]] = []
        self.n_lps = 0

    def best(
        self, coefs: np.ndarray, constants: np.ndarray, *, deadline: float | None = None
    ) -> tuple[float, np.ndarray | None, bool]:
        """``(value, theta, exact)`` of ``max_theta min_r coefs[r] @ theta + constants[r]``;
        ``(inf, None, False)`` when HiGHS proves nothing, e.g. by ``deadline``
        (``time.perf_counter()``; the caller assumes the worst)."""
        for round_ in range(self.max_cut_rounds + 1):
            left = None if deadline is None else deadline - time.perf_counter()
            if left is not None and left <= 0:
                return np.inf, None, False
            value, theta = max_min_slack(
                coefs,
                constants,
                self.matrix,
                self.lo,
                self.hi,
                self.lower,
                self.upper,
                cuts=self.pool,
                feasibility_tol=self.tol,
                time_limit=left,
            )
            self.n_lps += 1
            if value is None or theta is None:
                return np.inf, None, False
            if not self.own_cuts or value < self.margin - SCREEN_TOL:
                return value, theta, True  # a relaxation already below the margin is conclusive
            if self.max_cut_rounds == 0:
                return value, theta, False  # an upper bound is all the caller asked for
            new = self.family.separate(theta, self.za, self.zb)
            if not new:
                return value, theta, True
            if round_ == self.max_cut_rounds:
                return value, None, False
            self.pool.extend(new)  # cuts are valid for every record: shared
        raise AssertionError("unreachable")


_FIRST_ROWS = 16
"""A record's LP in :class:`_RecordLP` starts from this many of its rows beyond the
number of parameters (the tightest at the known parameter)."""

_ADDED_ROWS = 32
"""Rows a round of :class:`_RecordLP` adds: the most violated at its optimum."""

_MAX_ROUNDS = 20
"""Rounds of :class:`_RecordLP` before it asks the LP over all rows."""


class _RecordLP:
    """The screening LP of one record, ``max_theta min_r coefs[r] @ theta + constants[r]``
    over the family's admissible set without cuts, by row generation: the decision of
    :meth:`FamilyLP.best` (below ``margin - SCREEN_TOL``, or not) from a few of its rows.

    Each record starts from its rows tightest at ``start``; after each solve the rows
    violated at the optimum are added (one HiGHS LP, warm-started, re-used from record to
    record). A relaxed optimum below ``margin - SCREEN_TOL`` proves the record
    unreachable (the LP over all rows is lower still); an optimum that meets every row
    at ``margin`` proves it at risk (a witness; for a family with cutting planes, at
    risk in the LP's relaxation of its admissible set, ``exact`` false as before); an
    optimum that meets every row to the LP's tolerance is the full optimum. After
    ``_MAX_ROUNDS`` the full LP decides. A record is decided as the LP over all rows
    decides it, but for a relaxed optimum within the LP's tolerance above the threshold,
    which leaves the record at risk (the safe side).
    """

    def __init__(self, lp: FamilyLP, start: np.ndarray):
        self.lp, self.start = lp, np.asarray(start, dtype=float)
        self.threshold = lp.margin - SCREEN_TOL
        self.highs: SlackLP | None = None
        self.exact = not lp.family.has_cuts  # the LP has no cuts: a relaxation of cut families

    def best(
        self, coefs: np.ndarray, constants: np.ndarray, *, deadline: float | None = None
    ) -> tuple[float, np.ndarray | None, bool]:
        """``(value, theta, exact)`` as :meth:`FamilyLP.best` with no cut round returns them
        (``value`` is the full LP's optimum, or a bound on it on the side of the decision)."""
        first = _FIRST_ROWS + coefs.shape[1]
        if len(coefs) <= 2 * first:
            return self.lp.best(coefs, constants, deadline=deadline)
        lp = self.lp
        if self.highs is None:
            self.highs = SlackLP(lp.matrix, lp.lo, lp.hi, lp.lower, lp.upper, cap=1e3, feasibility_tol=lp.tol)
        highs = self.highs
        highs.drop_from(highs.n_family_rows)  # the previous record's rows
        rows = np.argsort(coefs @ self.start + constants, kind="stable")[:first]
        highs.add(coefs[rows], constants[rows])
        for _ in range(_MAX_ROUNDS):
            value, theta = highs.solve(deadline)
            if value is None or theta is None:  # the LP over all rows decides (or the deadline has passed)
                return lp.best(coefs, constants, deadline=deadline)
            if value < self.threshold:
                return value, theta, True  # a relaxation below the margin: unreachable
            slack = coefs @ theta + constants
            smallest = float(slack.min())
            if smallest >= lp.margin:  # theta re-identifies the record: a witness
                return smallest, theta, self.exact
            if smallest >= value - lp.tol:  # no row violated: the full LP's optimum
                return value, theta, self.exact
            rows = np.argsort(slack, kind="stable")[:_ADDED_ROWS]
            rows = rows[slack[rows] < value - lp.tol]
            highs.add(coefs[rows], constants[rows])
        return lp.best(coefs, constants, deadline=deadline)


# over 60 lines: its docstring; the known parameter, the witnesses, then the LPs, under one deadline
def screen_records(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    *,
    margin: float,
    known: np.ndarray | None = None,
    feasibility_tol: float = 1e-9,
    max_cut_rounds: int = 0,
    deadline: float | None = None,
    previous: Screening | None = None,
) -> Screening:
    """Solve the per-record LP for every record that the parameter ``known`` does
    not re-identify at ``margin`` (with a ``SCREEN_TOL`` safety) and that ``previous``
    (an earlier screening of the same files, family and margin, stopped by its deadline
    or not) has not decided: its decisions and witnesses are kept.

    For families with cutting planes (sb_nc, sb_pd) the LP is over the relaxed
    admissible set unless ``max_cut_rounds > 0`` rounds of the family's cuts are
    allowed: the unreachable records stay exact (a relaxation cannot miss one),
    ``at_risk`` may then over-count (``exact`` false for those records).
    Past ``deadline`` (a ``time.perf_counter()`` value) the remaining records are
    left unscreened: at risk, not exact, never fixed.
    """
    n_records, n_attributes = za.shape
    best = np.full(n_records, np.nan)
    exact = np.ones(n_records, dtype=bool)
    todo = np.arange(n_records)
    witnesses: list[np.ndarray] = []
    evaluation_seconds = 0.0
    if known is not None:
        witnesses.append(np.asarray(known, dtype=float))
        t0 = time.perf_counter()
        todo = np.flatnonzero(
            separation(za, zb, family.distance(known, attribute_names(n_attributes))) < margin + SCREEN_TOL
        )
        evaluation_seconds = time.perf_counter() - t0
    screened = np.ones(n_records, dtype=bool)
    screened[todo] = False  # the others: the known parameter re-identifies them
    if previous is not None and previous.screened is not None:
        best[previous.screened & previous.unreachable] = -np.inf
        exact[previous.screened] = previous.exact[previous.screened]
        screened |= previous.screened
        todo = todo[~previous.screened[todo]]
        witnesses.extend(previous.witnesses)
    lp = FamilyLP(family, n_attributes, za, zb, margin, feasibility_tol, max_cut_rounds)
    record_lp = (
        _RecordLP(lp, family.neutral(n_attributes) if known is None else known) if max_cut_rounds == 0 else lp
    )
    for start in range(0, todo.size, 64):
        if past(deadline):
            exact[todo[start:]] = False
            break
        block = todo[start : start + 64]
        rows = linkage_rows(za, zb, family, margin=margin, records=block)
        for i in block:
            if past(deadline):
                exact[i] = False  # left unscreened: at risk (best stays nan), never fixed
                continue
            mine = rows.record == i
            best[i], theta, exact[i] = record_lp.best(
                rows.coefs[mine], rows.constants[mine], deadline=deadline
            )
            screened[i] = theta is not None
            if theta is not None and best[i] >= margin:
                witnesses.append(theta)
    unreachable = best < margin - SCREEN_TOL  # nan (not screened) is not
    return Screening(
        at_risk=~unreachable,
        unreachable=unreachable,
        exact=exact,
        witnesses=witnesses,
        screened=screened,
        evaluation_seconds=evaluation_seconds,
    )


def tightest_rows(za, zb, family, records, *, margin, count, deadline=None):
    """For each record, its ``count`` non-redundant rows with the smallest slack at
    the neutral parameter (its other rows left out: a relaxation); ``None`` once
    ``deadline`` has passed."""
    neutral = family.neutral(za.shape[1])
    out = {}
    for start in range(0, records.size, 64):
        if past(deadline):
            return None
        rows = linkage_rows(za, zb, family, margin=margin, records=records[start : start + 64])
        slack = rows.coefs @ neutral + rows.constants
        for i in records[start : start + 64]:
            mine = np.flatnonzero(rows.record == i)
            mine = mine[np.argsort(slack[mine], kind="stable")[:count]]
            out[i] = (rows.coefs[mine], rows.constants[mine])
    return out


def best_start(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    screening: Screening,
    *,
    margin: float,
    max_candidates: int = 50,
    deadline: float | None = None,
) -> np.ndarray:
    """Of the screening's witnesses (the neutral parameter first, then up to
    ``max_candidates`` LP optima spread over the list), the one that re-identifies
    the most records: the first MIP start. Only for families without cutting
    planes, whose witnesses are admissible."""
    witnesses = spread(screening.witnesses, max_candidates)
    hits = witness_hits(
        za, zb, family, witnesses, records=np.arange(za.shape[0]), threshold=margin + SCREEN_TOL
    )
    counts: list[int] = []
    for _ in witnesses:
        if counts and past(deadline):
            break
        counts.append(int(next(hits).sum()))
    return np.asarray(witnesses[int(np.argmax(counts))], dtype=float)
