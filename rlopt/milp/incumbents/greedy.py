"""Greedy add: grow the set of re-identified records one LP at a time -- a
verified incumbent for the MILP (a start and a lower end), never a bound.

Let ``S`` be the records a parameter re-identifies. Whether ``S + {c}`` can be
re-identified *together* is one LP: ``max_theta min_{i in S+c, j != i} g_ij(theta)``
over the admissible polytope, which reaches the margin exactly when some
parameter does it. The LP keeps only a few rows per record (its nearest
competitors), so a value below the margin is conclusive (a relaxation) and a
value above it is checked against every pair; violated rows are added and the LP
solved again. One HiGHS model is kept: a candidate's rows are added, and removed
again when it is refused, so each test is a warm-started dual simplex.

Candidates are tried nearest first (largest separation below the margin). An
accepted candidate moves the parameter to the LP's optimum, the centre of the
new set, which may re-identify further records: they join ``S`` too.
"""

from __future__ import annotations

import time

import numpy as np

from rlopt.families import LearnedFamily
from rlopt.milp.margins import PairMargins
from rlopt.milp.solvers.lp import SlackLP

__all__ = ["greedy_add"]

ROWS_PER_RECORD = 8
"""Rows a record enters the LP with (its nearest competitors at the current parameter)."""

_SLACK = 1e-9
"""A set is accepted only when the LP's separation exceeds the margin by this much."""


def _set_lp(family: LearnedFamily, n_attributes: int, cap: float) -> SlackLP:
    rows = family.constraints(n_attributes)
    lower, upper = family.bounds(n_attributes)
    return SlackLP(
        rows.matrix(), np.array(rows.lo), np.array(rows.hi), lower, upper, cap=cap, feasibility_tol=1e-9
    )


def greedy_add(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    theta: np.ndarray,
    *,
    margin: float,
    margins: PairMargins,
    deadline: float | None = None,
    candidates: np.ndarray | None = None,
    rows_per_record: int = ROWS_PER_RECORD,
    max_checks: int = 20,
) -> tuple[np.ndarray, int]:
    """Grow the records ``theta`` re-identifies by adding candidates one LP at a time
    (see the module), until every candidate was tried or ``deadline`` passes.

    ``candidates`` (bool, ``N``): the records worth trying (e.g. those the screening
    did not prove unreachable); default all. Returns ``(theta, count)``: the last
    accepted parameter and the records it re-identifies by the pairs' margins -- a
    plan the caller recounts and checks for admissibility (cuts).
    """
    n_attributes = za.shape[1]
    theta = np.asarray(theta, dtype=float)
    g = margins.at(theta)
    sep = g.min(axis=1)
    members = sep >= margin + _SLACK
    count = int(members.sum())
    if not members.any():
        return theta, count
    lp = _set_lp(family, n_attributes, cap=max(1.0, 10 * float(np.abs(sep[np.isfinite(sep)]).max())))
    k = min(rows_per_record, margins.n_records - 1)
    lp.add(*_rows_of(margins, k, np.flatnonzero(members), g))
    pool = (
        np.ones(margins.n_records, dtype=bool) if candidates is None else np.asarray(candidates, dtype=bool)
    )
    order = [int(i) for i in np.argsort(-sep, kind="stable") if pool[i] and not members[i]]
    for c in order:
        if deadline is not None and time.perf_counter() > deadline:
            break
        if members[c]:
            continue  # joined with an earlier candidate
        accepted = _admit(
            lp, margins, k, members, c, g, margin=margin, max_checks=max_checks, deadline=deadline
        )
        if accepted is None:
            continue
        theta, g = accepted
        sep = g.min(axis=1)
        joined = (sep >= margin + _SLACK) & ~members
        joined[c] = False
        members = sep >= margin + _SLACK
        if joined.any():
            lp.add(*_rows_of(margins, k, np.flatnonzero(joined), g))
        count = int(members.sum())
    return theta, count


def _rows_of(
    margins: PairMargins, k: int, records: np.ndarray, g: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The records' rows with their ``k`` nearest competitors at the margins ``g``, one per pair."""
    nearest = np.argpartition(g[records], k - 1, axis=1)[:, :k]
    slopes, consts = margins.pairs(records, nearest)
    return slopes.reshape(-1, slopes.shape[-1]), consts.ravel()


def _admit(
    lp: SlackLP,
    margins: PairMargins,
    k: int,
    members: np.ndarray,
    c: int,
    g: np.ndarray,
    *,
    margin: float,
    max_checks: int,
    deadline: float | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Whether candidate ``c`` can join the ``members``: the LP's optimum and its margins
    ``(theta, g)`` when it re-identifies them all (checked against every pair, violated
    rows added, at most ``max_checks`` times); else ``None``, the candidate's rows removed."""
    first = lp.n_rows()
    lp.add(*_rows_of(margins, k, np.array([c]), g))
    for _ in range(max_checks):
        value, solution = lp.solve(deadline)
        if value is None or solution is None or value < margin + _SLACK:
            break  # a relaxation below the margin: no parameter adds c to the set
        candidate_g = margins.at(solution)
        group = members.copy()
        group[c] = True
        records = np.flatnonzero(group)
        bad = records[candidate_g[records].min(axis=1) < margin + _SLACK]
        if not bad.size:
            return solution, candidate_g
        lp.add(*_rows_of(margins, k, bad, candidate_g))
    lp.drop_from(first)
    return None
