"""Combinatorial Benders on one published file: does it prove what the big-C MILP cannot?

    python experiments/benders_probe.py --file M5-38 --family sb --time-limit 480

A probe, not part of rlopt. The master problem has only the binaries K: minimise
sum K subject to the fixed records, the duplicate cliques, the pairwise conflicts
and cover cuts ``sum_{i in S} K_i >= 1``, one for each set S of records found to be
re-identifiable by no admissible parameter. Each iteration solves the master
(HiGHS MIP; its optimum is a lower bound on the records *not* re-identified),
then, for the records it counts, the LP ``max_theta min separation`` over their
rows (lazy, checked against every original): infeasible -> the records with
non-zero duals form an infeasible set, shrunk by a deletion filter to a minimal
one, cut, one of them dropped, repeat; feasible -> a parameter that re-identifies
the remaining records (an incumbent). Stops when the bounds meet (proven), no cut
is new, or at the time limit. Prints one line per 10 iterations.
"""

from __future__ import annotations

import argparse
import time

import highspy
import numpy as np

from rlopt import build, published_recipe
from rlopt.data import standardise, validate_pair
from rlopt.families import get_family
from rlopt.milp.formulation import linkage_rows
from rlopt.milp.reductions import (
    SCREEN_TOL,
    duplicate_groups,
    find_conflicts,
    nearest_pairs,
    screen_records,
)

MARGIN = 1e-5
INF = highspy.kHighsInf


def add_rows(h: highspy.Highs, matrix: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    r, c = np.nonzero(matrix)
    starts = np.searchsorted(r, np.arange(matrix.shape[0])).astype(np.int32)
    h.addRows(
        matrix.shape[0],
        np.where(np.isinf(lo), -INF, lo).astype(float),
        np.where(np.isinf(hi), INF, hi).astype(float),
        r.size,
        starts,
        c.astype(np.int32),
        matrix[r, c].astype(float),
    )


class Subproblem:
    """The LP over the records of a set, with their rows generated lazily."""

    def __init__(self, za, zb, family):
        self.za, self.zb, self.family = za, zb, family
        n = za.shape[1]
        rows = family.constraints(n)
        self.matrix, self.lo, self.hi = rows.matrix(), np.array(rows.lo), np.array(rows.hi)
        self.lower, self.upper = family.bounds(n)
        self.pairs = nearest_pairs(za, zb, 1)
        self.cache: dict[int, tuple] = {}
        self.n_lps = 0

    def rows(self, i):
        if i not in self.cache or self.cache[i][2] != self.pairs[i].sum():
            r = linkage_rows(
                self.za, self.zb, self.family, margin=MARGIN, pairs=self.pairs, records=np.array([i])
            )
            self.cache[i] = (r.coefs, r.constants, self.pairs[i].sum())
        return self.cache[i][:2]

    def best(self, records):
        """``(max min slack, theta, records with a non-zero dual)``."""
        self.n_lps += 1
        p = self.matrix.shape[1]
        parts = [self.rows(i) for i in records]
        coefs = np.vstack([c for c, _ in parts] + [np.zeros((0, p))])
        constants = np.concatenate([k for _, k in parts] + [np.zeros(0)])
        owner = np.concatenate([np.full(len(k), i) for i, (_, k) in zip(records, parts)] + [np.zeros(0, int)])
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        for option in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
            h.setOptionValue(option, 1e-9)
        h.addVars(p + 1, np.append(self.lower, -INF).astype(float), np.append(self.upper, 1e3).astype(float))
        h.changeColsCost(1, np.array([p], np.int32), np.array([1.0]))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        add_rows(h, np.column_stack([self.matrix, np.zeros(len(self.matrix))]), self.lo, self.hi)
        if len(constants):
            add_rows(
                h,
                np.column_stack([coefs, -np.ones(len(constants))]),
                -constants,
                np.full(len(constants), np.inf),
            )
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError("subproblem LP not solved to optimality")
        solution = h.getSolution()
        x = np.array(solution.col_value)
        duals = np.array(solution.row_dual)[len(self.matrix) :]
        return x[p], x[:p], np.unique(owner[np.abs(duals) > 1e-10]).astype(int)

    def feasible(self, records):
        """``(True, theta)`` re-identifying every record against every original, or
        ``(False, an infeasible subset)``."""
        records = list(records)
        while True:
            value, theta, support = self.best(records)
            if value < MARGIN + SCREEN_TOL:
                return False, list(support)
            d = self.family.distance(theta, tuple(f"x{k}" for k in range(self.za.shape[1]))).pairwise(
                self.za[records], self.zb
            )
            rows = np.arange(len(records))
            slack = d - d[rows, records][:, None]
            slack[rows, records] = np.inf
            bad = np.flatnonzero((slack < MARGIN).any(axis=1))
            if not bad.size:
                return True, theta
            self.pairs[np.asarray(records)[bad], np.argmin(slack[bad], axis=1)] = True

    def minimal(self, records):
        """Deletion filter: an infeasible set none of whose records can be left out."""
        records = list(records)
        for i in list(records):
            rest = [r for r in records if r != i]
            if self.best(rest)[0] < MARGIN - SCREEN_TOL:
                records = rest
        return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="M5-38")
    parser.add_argument("--family", default="sb")
    parser.add_argument("--time-limit", type=float, default=300.0)
    args = parser.parse_args()
    t0 = time.perf_counter()
    family = get_family(args.family)
    original, masked = build(published_recipe(args.file))
    data = validate_pair(original, masked)
    za, zb = standardise(data.masked), standardise(data.original)
    n_records, n = za.shape
    screening = screen_records(za, zb, family, margin=MARGIN, known=family.neutral(n))
    conflicts = find_conflicts(za, zb, family, screening, margin=MARGIN)
    cliques = duplicate_groups(za)
    sub = Subproblem(za, zb, family)

    master = highspy.Highs()
    master.setOptionValue("output_flag", False)
    master.setOptionValue("mip_abs_gap", 0.99)
    master.setOptionValue("threads", 1)
    master.addVars(n_records, screening.unreachable.astype(float), np.ones(n_records))
    everyone = np.arange(n_records, dtype=np.int32)
    master.changeColsCost(n_records, everyone, np.ones(n_records))
    master.changeColsIntegrality(n_records, everyone, np.array([highspy.HighsVarType.kInteger] * n_records))

    def cover(records, rhs=1):
        row = np.zeros((1, n_records))
        row[0, list(records)] = 1
        add_rows(master, row, np.array([float(rhs)]), np.array([np.inf]))

    for a, b in conflicts:
        cover([a, b])
    for group in cliques:
        cover(group, len(group) - 1)
    print(
        f"{args.file} {args.family}: {screening.unreachable.sum()} records fixed, {len(conflicts)} "
        f"conflicts, {len(cliques)} cliques, {time.perf_counter() - t0:.1f} s",
        flush=True,
    )
    cuts: set[tuple] = set()
    incumbent = n_records
    iteration = lower = 0
    while True:
        master.run()
        lower = master.getInfo().objective_function_value
        k = np.round(np.array(master.getSolution().col_value))
        remaining = [int(i) for i in np.flatnonzero(k < 0.5)]
        new = 0
        while True:
            ok, found = sub.feasible(remaining)
            if ok:
                break
            cut = tuple(sorted(sub.minimal(found)))
            if cut not in cuts:
                cuts.add(cut)
                cover(cut)
                new += 1
            remaining.remove(cut[-1])
        incumbent = min(incumbent, n_records - len(remaining))
        elapsed = time.perf_counter() - t0
        done = new == 0 or incumbent - lower < 0.5 or elapsed > args.time_limit
        if iteration % 10 == 0 or done:
            print(
                f"iteration {iteration}: re-identified in [{n_records - incumbent}, {n_records - round(lower)}], "
                f"{len(cuts)} cover cuts, {sub.n_lps} LPs, {elapsed:.1f} s",
                flush=True,
            )
        if done:
            break
        iteration += 1
    status = "proven" if incumbent - lower < 0.5 else "stopped"
    sizes = np.bincount([len(c) for c in cuts]) if cuts else []
    print(
        f"{status}: [{n_records - incumbent}, {n_records - round(lower)}]; cover cut sizes "
        f"{dict((s, int(c)) for s, c in enumerate(sizes) if c)}"
    )


if __name__ == "__main__":
    main()
