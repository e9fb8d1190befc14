"""An exact ceiling without big-C: the largest set of records one parameter re-identifies,
found as a maximum feasible subsystem by combinatorial Benders (Codato and Fischetti 2006).

Every linkage row ``coefs @ theta + constants >= margin`` of docs/method.md §3 is linear
in the parameter, so a set ``S`` of records is re-identified together by some admissible
parameter iff the LP "theta admissible, every row of every record of ``S``" is feasible.
A set no parameter re-identifies together is *infeasible*; each gives the row
``sum_{i in C} y_i >= 1`` (some record of ``C`` is given up). The *master*
(:class:`~rlopt.milp.solvers.covering.HittingMaster`) is the smallest hitting set of the
infeasible sets known: a relaxation, so ``n - bound(master)`` is a ceiling at every
iteration. The *slave* takes the master's records kept and, by row generation on one
warm LP (:class:`~rlopt.milp.solvers.lp.SlackLP`), either finds a parameter that
re-identifies them all (the optimum, once recounted) or an infeasible set: the records
of the rows with a positive dual (at most ``p + 1`` of them at a basic optimum, by
Helly), proven infeasible again by the reference LP on those rows and shrunk by a
deletion filter. It then drops one record of the set and goes on (a greedy search whose
last parameter is a lower end) until the rest is feasible.

An infeasible set is one whose LP ``max_theta min_rows slack`` (the screening's LP,
:func:`~rlopt.milp.solvers.lp.max_min_slack`, over some of its rows: a relaxation) is
below ``margin - SCREEN_TOL``, the test that fixes a record in the screening; every count
is made at the exact margin by the family's reference evaluator, as
:func:`rlopt.linkage.recount` counts. The master is HiGHS's MIP without presolve and
without a start (:mod:`rlopt.milp.solvers.covering` says why); its dual bound is the
ceiling's proof.

It pays where the big-C relaxation is weak and the parameter has few entries, above all on
blocks of records, whose masters stay small: on README's example (4 attributes) blocks
of 30 bound sb by 256 in 120 s against the MILP's 377, blocks of 60 ci by 194 in 22 s
against 201 (``benchmarks/README.md``, ``bench_ceilings``). On the whole file the master
stalls (sb's sets have 4 or more records: its LP bound is at most a quarter of them), and
for wm the MILP proves the optimum far sooner. A block's ceiling bounds the block's records
only; the blocks of a partition of the file sum to a ceiling of the file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rlopt.exceptions import InputError
from rlopt.families import LearnedFamily
from rlopt.milp.formulation import linkage_rows
from rlopt.milp.reductions.witnesses import SCREEN_TOL, attribute_names, past, separation
from rlopt.milp.solvers.covering import HittingMaster
from rlopt.milp.solvers.lp import SlackLP, max_min_slack

__all__ = ["HittingInfo", "hitting_set_ceiling", "BlockHitting", "applies", "block_companion", "BLOCK_SIZES"]

HITTING_BLOCKS = "hitting-set block ceilings"
"""The label a certificate gives the ceiling of :func:`block_companion`."""

MAX_PARAMS = 15
"""The most parameters a family may have for the block search to run beside its solve
(sb on up to 5 attributes, ci on 4): above, its infeasible sets grow and the masters
stop closing."""

BLOCK_SIZES = {"ci": 60}
"""Records per block by family (default :data:`BLOCK_SIZE`), as measured on README's
example (benchmarks/README.md, ``bench_ceilings``): sb's ceiling falls furthest with
blocks of 20-30, ci's with blocks of about 60."""

BLOCK_SIZE = 25

FIRST_ROWS = 8
"""Rows of each record the slave's LP starts from (the tightest at the last parameter)."""

ADDED_ROWS = 4
"""Rows of a record the slave adds per round: its most violated."""

FILTER_BAND = 1e-7
"""A value of the reused filter LP this close to the threshold is decided by the reference LP."""

DUAL_TOL = 1e-9
"""A row whose dual exceeds this is in the support of the LP's certificate."""


@dataclass
class HittingInfo:
    """What the search did: the infeasible sets found (record ids), the master's and the
    slave's seconds, the LPs solved, why it stopped and the interval over time
    (``history``: ``(seconds, lower, ceiling, sets)``)."""

    sets: list[np.ndarray] = field(default_factory=list)
    iterations: int = 0
    master_seconds: float = 0.0
    slave_seconds: float = 0.0
    lps: int = 0
    stopped: str = ""
    history: list[tuple[float, int, int, int]] = field(default_factory=list)

    def sizes(self) -> np.ndarray:
        return np.array([c.size for c in self.sets], dtype=int)


class _Rows:
    """Every linkage row of the records in scope, grouped by record (their order)."""

    def __init__(self, za, zb, family: LearnedFamily, margin: float, records: np.ndarray):
        rows = linkage_rows(za, zb, family, margin=margin, records=records)
        self.coefs, self.constants, self.record = rows.coefs, rows.constants, rows.record
        self.first = np.zeros(za.shape[0], dtype=int)
        self.last = np.zeros(za.shape[0], dtype=int)
        bounds = np.flatnonzero(np.r_[True, self.record[1:] != self.record[:-1], True])
        for start, stop in zip(bounds[:-1], bounds[1:]):
            self.first[self.record[start]], self.last[self.record[start]] = start, stop

    def of(self, i: int) -> np.ndarray:
        return np.arange(self.first[i], self.last[i])

    def slack(self, theta: np.ndarray) -> np.ndarray:
        return self.coefs @ theta + self.constants


class _Slave:
    """The slave: infeasible sets among the records kept, and a parameter for the rest."""

    def __init__(self, rows: _Rows, family: LearnedFamily, n_attributes: int, margin: float, tol: float):
        self.rows, self.margin, self.tol = rows, margin, tol
        self.threshold = margin - SCREEN_TOL
        self.lower, self.upper = family.bounds(n_attributes)
        constraints = family.constraints(n_attributes)
        self.matrix, self.lo, self.hi = (
            constraints.matrix(),
            np.array(constraints.lo),
            np.array(constraints.hi),
        )
        self.lps = 0
        self.filter_lp: SlackLP | None = None

    def infeasible(self, lp_rows: np.ndarray, *, reference: bool = True) -> bool:
        """Whether no parameter meets all these rows: the reference LP's verdict
        (:func:`~rlopt.milp.solvers.lp.max_min_slack`), or with ``reference`` false the
        reused filter LP's, the reference deciding a value within ``FILTER_BAND`` of the
        threshold."""
        self.lps += 1
        coefs, constants = self.rows.coefs[lp_rows], self.rows.constants[lp_rows]
        if not reference:
            if self.filter_lp is None:
                self.filter_lp = SlackLP(
                    self.matrix, self.lo, self.hi, self.lower, self.upper, cap=1e3, feasibility_tol=self.tol
                )
            self.filter_lp.drop_from(self.filter_lp.n_family_rows)
            self.filter_lp.add(coefs, constants)
            value, _ = self.filter_lp.solve()
            if value is not None and abs(value - self.threshold) > FILTER_BAND:
                return value < self.threshold
        value, _ = max_min_slack(
            coefs, constants, self.matrix, self.lo, self.hi, self.lower, self.upper, feasibility_tol=self.tol
        )
        return value is not None and value < self.threshold

    def shrink(self, support: np.ndarray, rows_of: dict[int, np.ndarray]) -> np.ndarray | None:
        """``support`` less every record without which its rows ``rows_of`` are still
        infeasible (a deletion filter), proven infeasible by the reference LP (``None`` if not)."""
        kept = list(support)
        for i in list(kept):
            if len(kept) > 1:
                rest = [r for r in kept if r != i]
                if self.infeasible(np.concatenate([rows_of[r] for r in rest]), reference=False):
                    kept = rest
        if not self.infeasible(np.concatenate([rows_of[i] for i in kept])):
            return None
        return np.array(sorted(kept), dtype=int)

    # over 60 lines: one loop of the row generation, its three outcomes side by side
    def run(
        self, kept: np.ndarray, theta0: np.ndarray, deadline: float | None
    ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray | None]:
        """Infeasible sets among ``kept``, the records dropped (one per LP below the
        margin), and a parameter meeting every row of the others (``None`` at the deadline)."""
        if not len(kept):  # no record left to link (a block whose records are all fixed)
            return [], np.zeros(0, dtype=int), theta0
        rows = self.rows
        lp = SlackLP(self.matrix, self.lo, self.hi, self.lower, self.upper, cap=1e3, feasibility_tol=self.tol)
        first_row = lp.n_family_rows
        in_lp = np.zeros(len(rows.record), dtype=bool)
        order: list[np.ndarray] = []  # the LP's rows beyond the family's, as global row ids
        slack = rows.slack(theta0)
        active = np.zeros(rows.first.size, dtype=bool)
        active[kept] = True

        def add(new: np.ndarray) -> None:
            new = new[~in_lp[new]]
            if new.size:
                lp.add(rows.coefs[new], rows.constants[new])
                in_lp[new] = True
                order.append(new)

        add(np.concatenate([i_rows[np.argsort(slack[i_rows])[:FIRST_ROWS]] for i_rows in map(rows.of, kept)]))
        sets: list[np.ndarray] = []
        dropped: list[int] = []
        while not past(deadline):
            value, theta = lp.solve(deadline)
            self.lps += 1
            if value is None or theta is None:
                break
            lp_rows = np.concatenate(order) if order else np.zeros(0, dtype=int)
            if value < self.margin:
                duals = np.abs(lp.duals()[first_row:])
                support_rows = lp_rows[duals > DUAL_TOL]
                support = np.unique(rows.record[support_rows])
                if not support.size:  # no certificate to read (the duals of s sum to 1)
                    break
                if value < self.threshold:
                    rows_of = {int(i): lp_rows[rows.record[lp_rows] == i] for i in support}
                    found = self.shrink(support, rows_of)
                    if found is not None:
                        sets.append(found)
                        support = found  # a record of it is dropped: it is not met again
                weight = np.bincount(
                    rows.record[support_rows], duals[duals > DUAL_TOL], minlength=active.size
                )
                drop = int(support[np.argmax(weight[support])])
                dropped.append(drop)
                active[drop] = False
                gone = np.flatnonzero(rows.record[lp_rows] == drop)
                lp.delete(first_row + gone)
                in_lp[lp_rows[gone]] = False
                keep = np.ones(lp_rows.size, dtype=bool)
                keep[gone] = False
                order = [lp_rows[keep]]
                continue
            slack = rows.slack(theta)
            violated = np.flatnonzero(active[rows.record] & (slack < self.margin) & ~in_lp)
            if not violated.size:
                return sets, np.array(dropped, dtype=int), theta
            worst = violated[np.lexsort((slack[violated], rows.record[violated]))]
            rank = np.arange(worst.size) - np.searchsorted(rows.record[worst], rows.record[worst])
            add(worst[rank < ADDED_ROWS])
        return sets, np.array(dropped, dtype=int), None


def _count(za, zb, family: LearnedFamily, theta: np.ndarray, margin: float, scope: np.ndarray) -> int:
    """Records of ``scope`` that ``theta`` re-identifies at the exact margin, by the family's
    reference evaluator (:func:`~rlopt.milp.reductions.witnesses.separation`, as
    :func:`rlopt.linkage.recount` counts them; only the records of ``scope``)."""
    distance = family.distance(theta, attribute_names(za.shape[1]))
    return int((separation(za, zb, distance, scope) >= margin).sum())


def greedy_hitting_set(sets: list[np.ndarray], n_elements: int) -> np.ndarray:
    """A hitting set of ``sets`` (bool per element): the element in most sets not yet hit,
    in turn, then every element without which it still hits them all left out."""
    chosen = np.zeros(n_elements, dtype=bool)
    if not sets:
        return chosen
    member = np.zeros((len(sets), n_elements), dtype=bool)
    for k, c in enumerate(sets):
        member[k, c] = True
    counts = member.sum(axis=0)
    unhit = np.ones(len(sets), dtype=bool)
    picks = []
    while unhit.any():
        e = int(np.argmax(counts))
        picks.append(e)
        chosen[e] = True
        newly = unhit & member[:, e]
        counts -= member[newly].sum(axis=0)
        unhit &= ~newly
    hits = member[:, chosen].sum(axis=1)
    for e in reversed(picks):  # the last picks first: the earlier ones hit the most
        if (hits[member[:, e]] > 1).all():
            chosen[e] = False
            hits -= member[:, e]
    return chosen


class _Search:
    """The Benders loop's state: the rows, the slave, the master, the interval."""

    def __init__(self, za, zb, family, margin, tol, scope, known, progress):
        self.t0 = time.perf_counter()
        self.za, self.zb, self.family, self.margin, self.scope = za, zb, family, margin, scope
        self.position = np.full(za.shape[0], -1)
        self.position[scope] = np.arange(scope.size)
        self.rows = _Rows(za, zb, family, margin, scope)
        self.slave = _Slave(self.rows, family, za.shape[1], margin, tol)
        self.master = HittingMaster(scope.size)
        self.info, self.progress = HittingInfo(), progress
        self.theta0 = family.neutral(za.shape[1]) if known is None else np.asarray(known, dtype=float)
        self.theta, self.lower = self.theta0, _count(za, zb, family, self.theta0, margin, scope)
        self.ceiling = scope.size
        self.report()

    def report(self) -> None:
        info = self.info
        info.history.append((time.perf_counter() - self.t0, self.lower, self.ceiling, len(info.sets)))
        if self.progress is not None:
            self.progress(info.history[-1])

    def exact(self, deadline: float | None):
        """The master solved (to ``deadline``): the ceiling, and its incumbent."""
        t = time.perf_counter()
        solution = self.master.solve(deadline)
        self.info.master_seconds += time.perf_counter() - t
        self.info.iterations += 1
        if self.scope.size - solution.bound < self.ceiling:
            self.ceiling = self.scope.size - solution.bound
            self.report()
        return solution

    def refute(self, chosen: np.ndarray, deadline: float | None) -> tuple[int, bool]:
        """The slave on the records ``chosen`` leaves: ``(new sets, feasible)``."""
        t = time.perf_counter()
        sets, _, theta = self.slave.run(self.scope[~chosen], self.theta0, deadline)
        self.info.slave_seconds += time.perf_counter() - t
        self.info.lps = self.slave.lps
        if theta is not None:
            self.theta0 = theta
            count = _count(self.za, self.zb, self.family, theta, self.margin, self.scope)
            if count > self.lower:
                self.lower, self.theta = count, theta
                self.report()
        self.info.sets.extend(sets)
        self.master.add([self.position[c] for c in sets])
        return len(sets), theta is not None and not sets

    def run(self, deadline: float | None) -> str:
        """Greedy masters while they meet new sets, the exact master when they do not
        (or after as long as the slave took since): why it stopped."""
        slave_since = 0.0
        while self.ceiling > self.lower:
            if past(deadline):
                return "deadline"
            t = time.perf_counter()
            cap = t + max(MIN_MASTER_SECONDS, slave_since)
            solution = self.exact(cap if deadline is None else min(cap, deadline))
            if solution.failed is not None:  # the ceiling is the last one a master proved
                return f"master failed ({solution.failed})"
            master_took = time.perf_counter() - t
            chosen = solution.chosen
            if chosen is None:
                chosen = greedy_hitting_set(self.master.sets, self.scope.size)
            if self.ceiling <= self.lower:
                break
            t = time.perf_counter()
            new, feasible = self.refute(chosen, deadline)
            while (
                new and not past(deadline) and time.perf_counter() - t < max(MIN_MASTER_SECONDS, master_took)
            ):
                new, _ = self.refute(greedy_hitting_set(self.master.sets, self.scope.size), deadline)
            slave_since = time.perf_counter() - t
            if feasible and solution.optimal and self.ceiling > self.lower:
                return "stalled"  # the master's optimum met, yet its recount is lower
        return "proven"


MIN_MASTER_SECONDS = 1.0
"""The exact master runs at least this long each time (or to its optimum)."""


def hitting_set_ceiling(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    *,
    margin: float,
    tol: float = 1e-9,
    deadline: float | None = None,
    records: np.ndarray | None = None,
    known: np.ndarray | None = None,
    progress: Callable[[tuple[float, int, int, int]], None] | None = None,
) -> tuple[int, np.ndarray | None, HittingInfo]:
    """A proven ceiling on the records of ``records`` (default: all) that one admissible
    parameter of ``family`` re-identifies at ``margin``, by combinatorial Benders.

    Parameters
    ----------
    za, zb : ndarray of shape (n_records, n_attributes)
        Standardised masked and original files, aligned by row.
    family : LearnedFamily
        A family without cutting planes (not sb_nc, sb_pd).
    margin : float
        The margin of every re-identification (docs/method.md §4).
    tol : float, default=1e-9
        The LPs' primal and dual feasibility tolerance.
    deadline : float, default=None
        A ``time.perf_counter()`` value; the ceiling reached by then is returned.
    records : ndarray of int, default=None
        The records counted (a block); each is still linked against every original.
    known : ndarray, default=None
        An admissible parameter: its recount is the first lower end, its rows the first
        rows of the LPs.
    progress : callable, default=None
        Called with ``(seconds, lower, ceiling, sets)`` whenever the interval narrows.

    Returns
    -------
    ceiling : int
        No admissible parameter re-identifies more records of ``records`` at ``margin``.
    theta : ndarray
        The parameter of the best count met, ``known`` or the neutral one at first (its
        count is ``info.history``'s last lower end).
    info : HittingInfo
    """
    if family.has_cuts:
        raise InputError(f"family {family.name!r} has cutting planes; expected one without (wm, owa, ci, sb)")
    scope = np.arange(za.shape[0]) if records is None else np.unique(np.asarray(records, dtype=int))
    search = _Search(za, zb, family, margin, tol, scope, known, progress)
    search.info.stopped = search.run(deadline)
    return search.ceiling, search.theta, search.info


def applies(family: LearnedFamily, n_attributes: int) -> bool:
    """Whether the block search runs beside a solve of ``family``: no cutting planes and
    at most :data:`MAX_PARAMS` parameters."""
    return not family.has_cuts and family.n_params(n_attributes) <= MAX_PARAMS


@dataclass
class BlockHitting:
    """The block search's result: ``upper`` the sum of the blocks' ceilings (a block not
    reached counts its records), ``proven`` the blocks whose ceiling met their search's
    lower end, ``blocks`` how many. It finds no parameter of the whole file (``lower``
    0, ``theta`` ``None``)."""

    upper: int
    proven: int
    blocks: int
    lower: int = 0
    theta: np.ndarray | None = None

    def to_dict(self) -> dict:
        return {"upper": self.upper, "blocks": self.blocks, "blocks_proven": self.proven}


def block_companion(za, zb, family, margin, tol, deadline, offered, parent, send, *, seed: int = 0) -> None:
    """The hitting-set search on random blocks of the records (``seed``: the partition's;
    the runs racing one family each take another), one after another,
    each given an equal share of the time left: a forked process beside a run's solve
    (:class:`rlopt.milp.ceilings.regions.Companion`'s ``target``). Reports the blocks' sum after
    each block: a ceiling of the file, since a block's records are linked against every
    original and every record is in one block."""
    import signal

    from rlopt.processes import die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    die_with_parent(parent)
    n = za.shape[0]
    size = BLOCK_SIZES.get(family.name, BLOCK_SIZE)
    blocks = np.array_split(np.random.default_rng(seed).permutation(n), max(1, n // size))
    ceilings, proven = [block.size for block in blocks], 0
    for k, block in enumerate(blocks):
        now = time.perf_counter()
        share = None if deadline is None else now + (deadline - now) / (len(blocks) - k)
        ceiling, _, info = hitting_set_ceiling(
            za, zb, family, margin=margin, tol=tol, deadline=share, records=block
        )
        ceilings[k] = min(ceilings[k], ceiling)
        proven += info.stopped == "proven"
        send.send(("report", int(sum(ceilings)), 0, None))
        if deadline is not None and time.perf_counter() >= deadline:
            break
    send.send(("done", BlockHitting(int(sum(ceilings)), proven, len(blocks))))
