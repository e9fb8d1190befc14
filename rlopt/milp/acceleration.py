"""Exact reductions of the MILP: each one switchable, none changes the optimum.

- ``tight big-C``: the per-row ``C_ij`` of the family (:func:`~rlopt.milp.linkage_rows`);
  the naive model uses one constant, the largest ``C_ij``.
- ``drop_redundant``: rows with ``C_ij <= 0`` hold for every admissible parameter.
- ``drop_dominated``: rows implied by another row of the same record
  (:func:`~rlopt.milp.formulation.dominated`, families with parameters >= 0).
- ``fix_unreachable``: :func:`screen_records` solves, for every record that a
  known parameter does not already re-identify, the LP ``max_theta min_j
  d(a_i,b_j) - d(a_i,b_i)``; a record whose best separation is below the margin
  cannot be re-identified by any admissible parameter and gets ``K_i = 1``.
  The same LPs tell which records are at risk at all, a bound on the optimum
  that does not depend on which optimum the solver returns.
- ``conflicts``: pairs of records that no admissible parameter re-identifies
  together (:func:`find_conflicts`) give ``K_i + K_j >= 1``, valid inequalities
  that raise the LP bound the solver has to close.
- ``lazy``: start from the ``lazy_start`` nearest originals of each record; after
  each solve, check every pair of every counted record and add the violated rows
  (:class:`LazyLinkageRows`); when none is violated the optimum is the full one's.
- ``warm_start``: a MIP start for HiGHS: at the first solve the best of the
  neutral parameter (all attributes alike, the AM ordering) and the screening's
  LP optima (:func:`best_start`), the previous parameter after.
- ``carry_rounds``: between lazy rounds, the proven optimum of a round is a lower
  bound of the next (rounds only add rows) and enters it as ``sum K >= bound``; the
  next start re-identifies the records the round counted against every original
  when some parameter does (:meth:`LazyLinkageRows.complete`), and is then proven
  optimal at once instead of the round being solved again from scratch.
- ``nca_start``: the matrix scikit-learn's NCA learns, projected into the family, is
  one more start (:func:`rlopt.milp.search.portfolio.quadratic_starts`; MD's always is).
- ``surrogate``, ``line_search``, ``greedy_add``: before the solve, searches for a
  better parameter from the best start (:mod:`rlopt.milp.search.portfolio`, at most a
  share of the time limit); an admissible parameter that re-identifies more
  becomes the start and a lower end. They change where the solver starts, never
  the model.

Screening and conflict LPs may stop at a deadline (a share of the time limit):
stopping them early is exact, it only leaves records unscreened and pairs unchecked.

Speed without changing a result (issue 15): the witnesses of the conflict search and
of the best start are evaluated on all records by :func:`witness_hits` (one matrix
product per block for wm and sb instead of the reference evaluator per parameter,
with the reference deciding every record near the threshold), and the conflict LPs
of :func:`find_conflicts` go through :class:`_PairLP` (a pair that a known
admissible parameter re-identifies needs no LP; the others share one HiGHS LP). The
screening LPs generate their rows (:class:`_RecordLP`): each record's LP starts from its
rows tightest at the known parameter and adds the rows its optimum violates, in one
HiGHS LP re-used from record to record; a relaxation below the margin proves a record
unreachable, a parameter that meets every row at the margin proves it at risk, the same
decisions as the LP over all rows (10 times faster on the Census and EIA files).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, fields, replace

import numpy as np

from rlopt.data._standardise import categorical_columns, squared_diffs
from rlopt.exceptions import InputError
from rlopt.families import Distance, LearnedFamily
from rlopt.milp.formulation import linkage_rows
from rlopt.milp.margins import QuadraticMargins, quadratic_matrix
from rlopt.milp.solve import Cut, SlackLP, SolverUnavailableError, max_min_slack
from rlopt.processes import one_native_thread

__all__ = [
    "Reductions",
    "Screening",
    "screen_records",
    "find_conflicts",
    "best_start",
    "witness_hits",
    "nearest_pairs",
    "LazyLinkageRows",
    "separation",
    "start_from",
    "duplicate_groups",
]

SCREEN_TOL = 1e-7
"""A record is fixed only when its best separation is below ``margin - SCREEN_TOL``
(far beyond the LP's 1e-9 tolerances), so a rounding error can never fix a record
that some parameter re-identifies."""

_RECORD_BLOCK = 256
MAX_WITNESSES = 200
"""Witness parameters evaluated on all pairs to skip compatible pairs in the conflict search."""

WITNESS_SHARE = 0.5
"""Share of the time left to its deadline that the conflict search gives its witnesses
(on EIA's 4092 records each takes 0.1 s, and 125 of them used the whole window, leaving
no time for a single LP)."""


@dataclass(frozen=True)
class Reductions:
    """Which exact reductions to apply (all on by default; :meth:`none` is the naive model)."""

    drop_redundant: bool = True
    drop_dominated: bool = True
    fix_unreachable: bool = True
    conflicts: bool = True
    max_conflict_lps: int = 20000
    duplicate_cliques: bool = True
    lazy: bool = True
    lazy_start: int = 1
    lazy_per_round: int = 2
    warm_start: bool = True
    carry_rounds: bool = True
    nca_start: bool = True
    surrogate: bool = True
    line_search: bool = True
    greedy_add: bool = True
    parameter_bb: bool = True
    quick_solve: bool = True

    def __post_init__(self):
        minimum = {"lazy_start": 0, "lazy_per_round": 1, "max_conflict_lps": 1}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in minimum:
                if isinstance(value, bool) or not isinstance(value, int) or value < minimum[f.name]:
                    raise InputError(f"{f.name}={value!r}; expected an integer >= {minimum[f.name]}")
            elif not isinstance(value, bool):
                raise InputError(f"reduction {f.name}={value!r}; expected true or false")

    @classmethod
    def none(cls) -> Reductions:
        return cls(
            drop_redundant=False,
            drop_dominated=False,
            fix_unreachable=False,
            conflicts=False,
            duplicate_cliques=False,
            lazy=False,
            warm_start=False,
            carry_rounds=False,
            nca_start=False,
            surrogate=False,
            line_search=False,
            greedy_add=False,
            parameter_bb=False,
            quick_solve=False,
        )

    @classmethod
    def coerce(cls, value) -> Reductions:
        """From ``None``/``"all"`` (every reduction), ``"none"``, a dict of switches, or an instance."""
        if value is None or value == "all":
            return cls()
        if value == "none":
            return cls.none()
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            unknown = sorted(set(value) - {f.name for f in fields(cls)})
            if unknown:
                raise InputError(
                    f"unknown reduction(s) {unknown}; expected some of {[f.name for f in fields(cls)]}"
                )
            return cls(**value)
        raise InputError(f"reductions={value!r}; expected 'all', 'none' or a dict of switches")

    def to_dict(self) -> dict:
        return asdict(self)

    def without_searches(self) -> Reductions:
        """The same reductions with no incumbent search and no NCA start (a quick solve)."""
        return replace(
            self, nca_start=False, surrogate=False, line_search=False, greedy_add=False, quick_solve=False
        )

    def searches(self) -> tuple[str, ...]:
        """The incumbent searches switched on, in :data:`rlopt.milp.search.portfolio.SEARCHES` order."""
        return tuple(name for name in ("surrogate", "line_search", "greedy_add") if getattr(self, name))


def slack_blocks(za: np.ndarray, zb: np.ndarray, distance: Distance, records: np.ndarray):
    """``(block, slack)`` with ``slack[r, j] = d(a_i, b_j) - d(a_i, b_i)`` for the
    records ``i = block[r]``, ``slack[r, i] = inf``; a block of records at a time."""
    for start in range(0, records.size, _RECORD_BLOCK):
        block = records[start : start + _RECORD_BLOCK]
        d = distance.pairwise(za[block], zb)
        rows = np.arange(block.size)
        slack = d - d[rows, block][:, None]
        slack[rows, block] = np.inf
        yield block, slack


def separation(
    za: np.ndarray, zb: np.ndarray, distance: Distance, records: np.ndarray | None = None
) -> np.ndarray:
    """``min_{j != i} d(a_i, b_j) - d(a_i, b_i)`` for each record ``i`` of
    ``records`` (default: all), in that order."""
    records = np.arange(za.shape[0]) if records is None else np.asarray(records)
    out = np.empty(records.size)
    done = 0
    for block, slack in slack_blocks(za, zb, distance, records):
        out[done : done + block.size] = slack.min(axis=1)
        done += block.size
    return out


_FEATURE_PARAMS = 32
""":func:`witness_hits` goes through ``family.features`` for families with at most this
many parameters and no quadratic form; above it, the reference evaluator per parameter."""

_WITNESS_BATCH = 64
_GUARD = 1e-11
"""Relative width of the band around the threshold in which :func:`witness_hits`
rechecks a fast separation with the reference evaluator (rounding is ~1e-16 relative)."""


def _quadratic_separations(za, zb, q, records):
    """``separation`` for the distance ``(a - b)^T Q (a - b)`` through one matrix
    product per block (:class:`~rlopt.milp.margins.QuadraticMargins`), with a bound of
    its rounding error (and of the reference's) per record."""
    margins = QuadraticMargins(zb, q)
    norm_b = np.abs(zb).sum(axis=1).max()
    qmax = np.abs(q).max()
    sep, guard = np.empty(records.size), np.empty(records.size)
    for start in range(0, records.size, _RECORD_BLOCK):
        block = records[start : start + _RECORD_BLOCK]
        a = za[block]
        sep[start : start + block.size] = margins.of(a, block).min(axis=1)
        scale = qmax * (np.abs(a).sum(axis=1) + norm_b) ** 2
        guard[start : start + block.size] = _GUARD * (za.shape[1] + 2) * (1.0 + scale)
    return sep, guard


def _feature_separations(za, zb, family, thetas, records):
    """``separation`` for several parameters at once through ``family.features``
    (``phi @ theta + offset``), with a bound of the rounding error per record;
    shapes ``(len(thetas), records.size)``."""
    thetas = np.asarray(thetas, dtype=float).reshape(len(thetas), -1)
    p = thetas.shape[1]
    sep, guard = np.empty((len(thetas), records.size)), np.empty((len(thetas), records.size))
    l1 = np.abs(thetas).sum(axis=1)
    step = max(1, int(16 * 2**20 // (8 * zb.shape[0] * max(p, len(thetas)))))
    for start in range(0, records.size, step):
        block = records[start : start + step]
        phi, offset = family.features(za[block], zb)
        d = phi @ thetas.T + offset[..., None]  # (block, N, thetas)
        rows = np.arange(block.size)
        slack = d - d[rows, block][:, None, :]
        slack[rows, block] = np.inf
        sep[:, start : start + block.size] = slack.min(axis=1).T
        scale = np.abs(phi).max(axis=(1, 2))[None, :] * l1[:, None] + np.abs(offset).max(axis=1)[None, :]
        guard[:, start : start + block.size] = _GUARD * (p + 2) * (1.0 + scale)
    return sep, guard


def witness_hits(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    thetas: list,
    *,
    records: np.ndarray,
    threshold: float,
):
    """For each parameter of ``thetas`` in turn (a generator, so a caller may stop at a
    deadline): ``separation(za, zb, family.distance(theta), records) >= threshold``,
    the same booleans bit for bit.

    The separations are computed fast (one matrix product per block for wm and sb,
    ``features`` once for many parameters for the other small families); a record
    whose fast separation lies within a bound of the rounding error of the threshold
    is rechecked with the reference evaluator on the very block of records that
    :func:`separation` would evaluate it in."""
    names = _names(za.shape[1])
    records = np.asarray(records)
    batch: list[tuple[np.ndarray, np.ndarray]] = []
    # the matrix-product expansion needs numbers in every column; a mixed file's 0/1
    # mismatches are not a linear function of the records
    quadratic = not categorical_columns(za, zb).any()
    for w, theta in enumerate(thetas):
        distance = family.distance(theta, names)
        q = quadratic_matrix(distance) if quadratic else None
        if q is not None:
            with one_native_thread():
                sep, guard = _quadratic_separations(za, zb, q, records)
        elif family.n_params(za.shape[1]) <= _FEATURE_PARAMS:
            if not batch:
                with one_native_thread():
                    seps, guards = _feature_separations(
                        za, zb, family, thetas[w : w + _WITNESS_BATCH], records
                    )
                batch = list(zip(seps, guards))
            sep, guard = batch.pop(0)
        else:
            yield separation(za, zb, distance, records=records) >= threshold
            continue
        hit = sep >= threshold
        unsure = np.flatnonzero(~(np.abs(sep - threshold) > guard))  # NaN is unsure too
        for start in np.unique(unsure // _RECORD_BLOCK) * _RECORD_BLOCK:
            block = records[start : start + _RECORD_BLOCK]
            hit[start : start + block.size] = separation(za, zb, distance, records=block) >= threshold
        yield hit


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


class _FamilyLP:
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


_PAIR_BAND = 1e-7
"""A reused-LP value this close to the conflict threshold is re-solved by the
reference LP (:func:`~rlopt.milp.solve.max_min_slack`), so the decision is its."""

MAX_PAIR_WITNESSES = 2000
"""Parameters kept to decide pairs of :func:`find_conflicts` without an LP."""


class _PairLP:
    """The conflict LP of :func:`find_conflicts` for a pair of records: the same
    decision as ``_FamilyLP.best(...) < margin - SCREEN_TOL`` (at most ``max_lps``
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
        lp: _FamilyLP,
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
            if _past(deadline):
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
        if len(self.pending) >= _WITNESS_BATCH:
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
        LP of :func:`~rlopt.milp.solve.max_min_slack` without cuts), in the one HiGHS."""
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
    :meth:`_FamilyLP.best` (below ``margin - SCREEN_TOL``, or not) from a few of its rows.

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

    def __init__(self, lp: _FamilyLP, start: np.ndarray):
        self.lp, self.start = lp, np.asarray(start, dtype=float)
        self.threshold = lp.margin - SCREEN_TOL
        self.highs: SlackLP | None = None
        self.exact = not lp.family.has_cuts  # the LP has no cuts: a relaxation of cut families

    def best(
        self, coefs: np.ndarray, constants: np.ndarray, *, deadline: float | None = None
    ) -> tuple[float, np.ndarray | None, bool]:
        """``(value, theta, exact)`` as :meth:`_FamilyLP.best` with no cut round returns them
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
            separation(za, zb, family.distance(known, _names(n_attributes))) < margin + SCREEN_TOL
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
    lp = _FamilyLP(family, n_attributes, za, zb, margin, feasibility_tol, max_cut_rounds)
    record_lp = (
        _RecordLP(lp, family.neutral(n_attributes) if known is None else known) if max_cut_rounds == 0 else lp
    )
    for start in range(0, todo.size, 64):
        if _past(deadline):
            exact[todo[start:]] = False
            break
        block = todo[start : start + 64]
        rows = linkage_rows(za, zb, family, margin=margin, records=block)
        for i in block:
            if _past(deadline):
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


def _names(n_attributes: int) -> tuple[str, ...]:
    return tuple(f"x{k}" for k in range(n_attributes))


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
    if _past(deadline):
        return none
    risky = np.flatnonzero(screening.at_risk)
    compatible = np.zeros((risky.size, risky.size), dtype=bool)
    witnesses = _spread(screening.witnesses, MAX_WITNESSES)
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
    own_rows = _tightest_rows(za, zb, family, needed, margin=margin, count=rows_per_record, deadline=deadline)
    if own_rows is None:
        return none  # the deadline passed before any LP could run
    lp = _FamilyLP(family, n_attributes, za, zb, margin, feasibility_tol, max_cut_rounds=0)
    pair_lp = _PairLP(lp, needed, own_rows, screening.witnesses, margin=margin, deadline=deadline)
    found: list[tuple[int, int]] = []
    for tried, (i, j) in enumerate(zip(risky[a], risky[b])):
        if tried >= 500 and len(found) < 0.01 * tried:
            break  # conflicts are rare here (a broad family): more LPs would not pay
        if _past(deadline):
            break
        if pair_lp.conflict(i, j, deadline):
            found.append((i, j))
    return np.array(found, dtype=int).reshape(-1, 2)


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() > deadline


def _tightest_rows(za, zb, family, records, *, margin, count, deadline=None):
    """For each record, its ``count`` non-redundant rows with the smallest slack at
    the neutral parameter (its other rows left out: a relaxation); ``None`` once
    ``deadline`` has passed."""
    neutral = family.neutral(za.shape[1])
    out = {}
    for start in range(0, records.size, 64):
        if _past(deadline):
            return None
        rows = linkage_rows(za, zb, family, margin=margin, records=records[start : start + 64])
        slack = rows.coefs @ neutral + rows.constants
        for i in records[start : start + 64]:
            mine = np.flatnonzero(rows.record == i)
            mine = mine[np.argsort(slack[mine], kind="stable")[:count]]
            out[i] = (rows.coefs[mine], rows.constants[mine])
    return out


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
    for start in range(0, n_records, _RECORD_BLOCK):
        block = np.arange(start, min(n_records, start + _RECORD_BLOCK))
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
        self._lp: _FamilyLP | None = None

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
            self._lp = _FamilyLP(
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
            if _past(deadline):
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
    witnesses = _spread(screening.witnesses, max_candidates)
    hits = witness_hits(
        za, zb, family, witnesses, records=np.arange(za.shape[0]), threshold=margin + SCREEN_TOL
    )
    counts: list[int] = []
    for _ in witnesses:
        if counts and _past(deadline):
            break
        counts.append(int(next(hits).sum()))
    return np.asarray(witnesses[int(np.argmax(counts))], dtype=float)


def _spread(items: list, count: int) -> list:
    """The first item and ``count - 1`` others spread evenly over the list."""
    if len(items) <= count:
        return list(items)
    picks = np.linspace(0, len(items) - 1, count).round().astype(int)
    return [items[0]] + [items[i] for i in picks if i]


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
    sep = separation(za, zb, family.distance(theta, _names(za.shape[1])))
    k = (sep < margin + SCREEN_TOL).astype(float)
    if fixed is not None:
        k[fixed] = 1.0
    return np.asarray(theta, dtype=float), k
