"""The MILP pipeline of one family on one pair of files: what ``fit`` runs.

:func:`learn` takes validated data and a learned family and returns a
:class:`LearnResult` with the learned parameter. Its steps, each in its own function,
each bounded by the time limit:

1. the starts (:func:`_starts`): the neutral parameter, every parameter the caller
   knows that the family contains, MD's and NCA's matrices, recounted;
2. the reduce phase (:func:`_reduce`): screening LPs (records no parameter
   re-identifies), conflicting pairs, duplicates (:mod:`rlopt.milp.acceleration`);
3. the model (:func:`_build`, :mod:`rlopt.milp.formulation`) with per-row big-C and
   lazy linkage rows;
4. the incumbent searches (:func:`_search`, :mod:`rlopt.milp.search.portfolio`), which
   end early enough for the model to be loaded and solved within the limit;
5. the solve (:func:`_solve`, :mod:`rlopt.milp.solve`), with the parameter-space branch
   and bound beside it (:mod:`rlopt.milp.search.regions`);
6. the conclusion (:func:`_conclude`): the parameter recounted by the reference
   evaluator (plain numpy), the interval, the anytime certificate
   (:mod:`rlopt.milp.certificate`).

:func:`verify` proves a claimed optimum again with the plain model.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rlopt.data import LinkageData
from rlopt.exceptions import (
    DataWarning,
    InputError,
    Interrupted,
    RecountMismatchError,
    SolverError,
)
from rlopt.families import Distance, LearnedFamily
from rlopt.families.containment import embed
from rlopt.linkage import LinkageResult
from rlopt.linkage.distance_based import Method
from rlopt.milp import SolverOptions, build_model, export_model, solve_model
from rlopt.milp.acceleration import (
    LazyLinkageRows,
    Reductions,
    Screening,
    best_start,
    duplicate_groups,
    find_conflicts,
    nearest_pairs,
    screen_records,
    start_from,
)
from rlopt.milp.blocks import BLOCK_CEILINGS, BlockCeiling, BlockOptions, BlockSearch
from rlopt.milp.certificate import Certificate
from rlopt.milp.formulation import ModelInfo, largest_big_c
from rlopt.milp.search.exact import reach_margin
from rlopt.milp.search.portfolio import (
    REGION_SEARCH,
    Incumbent,
    describe_lower,
    recount,
    recount_parameter,
    search_incumbents,
)
from rlopt.milp.search.regions import Companion, can_fork, supports
from rlopt.milp.solve import Cut, SolveResult, solver_summary
from rlopt.processes import one_native_thread
from rlopt.status import Status

__all__ = ["LearnResult", "learn", "verify", "recount", "describe_lower"]


REDUCE_SHARE = 0.09
"""Share of a time limit that the reduce phases of a run (the screening and conflict LPs
of its quick pass and of its full pass together) may use: under 10 % with the last LP's
overshoot (5.4 s of a 60 s limit; on Census 1080x13 and EIA 4092x10 they used all of it)."""

PASS_REDUCE_SHARE = 0.3
"""Share of a pass's own time limit its reduce phase may use (a quick pass of 8 s: 2.4 s)."""

REDUCE_END = 0.7
"""The screening and conflict LPs end by this share of the limit (from the fit's start)
whatever the steps before them took, so the model and the MILP keep the rest."""

MIN_SOLVE_SHARE = 0.02
"""The MILP's time when the steps before it used the whole limit: this share of it (a
glimpse, given whenever loading the model takes less)."""

BLOCK_GRACE_SECONDS = 2.0
"""After the MILP's end, how long the run waits for blocks still finishing (their HiGHS
runs end at the same time, then recount their parameter)."""

CONCLUDE_SHARE = 0.05
"""Share of the limit kept after the MILP for the recount of its parameter and the result,
or ``RECOUNT_RESERVE`` times what a recount of every pair takes if that is more."""

RECOUNT_RESERVE = 2.0
"""After the MILP, its last parameter is recounted twice (as an improving solution, then
by the conclusion's check of every pair): on EIA 4092x10 with ``sb`` one took 0.57 s, 11 %
of a 5 s limit. A recount's time is that of the screening's evaluation of every pair, or
of the slowest start's recount (which may go through a nearest-neighbour tree)."""

LOAD_FACTOR = 1.5
"""Loading a model into HiGHS takes about this many times its build (1.9 s after a 1.4 s
build on EIA 4092x10 with ``sb``): a MILP whose load would take more than what is left of
the limit and more than the glimpse is not started (HiGHS would start past the limit)."""

SEARCH_SHARE = 0.5
"""With a time limit, the searches for a better start (:mod:`rlopt.milp.search.portfolio`),
which run once the model is built, end by this share of it plus what the reduce phase
and the model took."""

QUICK_SECONDS = 8.0
QUICK_SHARE = 0.15
"""Before its searches a run tries the plain solve from the known starts for
``min(QUICK_SECONDS, QUICK_SHARE * limit)``: on the published grid most cells are
proven in that time, and their searches bought nothing (experiments/README.md)."""

QUICK_MIN_SECONDS = 3.0
"""No quick pass below this budget (a limit under 20 s): its fixed costs (the model, the
recount of its parameter against every pair) would exceed it: on a mixed 2000-record
file a quick pass given 0.75 s took 4.2 s, and the fit 6.9 s of a 5 s limit."""

NARROW_RECORDS = 1
"""A quick pass that ends within this many records of its proven ceiling leaves the
searches out of the full pass: they could add at most that many records, and the solve
gets their time (a wider rule, 1 % of the records, lost M5-38 ci_m's lower end 345 to
342 on the published grid: the searches had found those records)."""


@dataclass
class LearnResult:
    """The outcome of learning one family on one pair of files.

    ``n_correct`` is the solver's incumbent count (the proven optimum when the
    status is ``optimal``: the solver may have been stopped by the parameter-space
    branch and bound's proof); ``n_correct_verified`` the
    recount at the margin (up to ``recount_tol``); ``n_correct_strict`` the
    recount with ``> 0`` (ties not counted). ``bound`` is a proven upper bound
    on the number of correct re-identifications for the family (at this margin);
    ``at_risk`` marks the records some admissible parameter re-identifies (with
    ``fix_unreachable``), whichever optimum the solver returned;
    the truth lies in ``[n_correct_verified, bound]``, a single value only when
    ``status == "optimal"``. ``lower_source`` says where ``n_correct_verified``
    comes from: ``"solver"`` when the MILP found a parameter better than every
    start, else the label of the start (e.g. ``"neutral start (AM)"``) that the
    solver did not improve on -- never a learned figure.
    """

    family: str
    n_records: int
    n_correct: int | None
    n_correct_verified: int | None
    n_correct_strict: int | None
    status: str
    bound: int | None
    gap: float | None
    margin: float
    params: dict | None
    solver: dict
    seconds: dict
    model: dict
    recount_tol: float
    cut_rounds: int = 0
    correct: np.ndarray | None = field(default=None, repr=False)
    reductions: dict = field(default_factory=dict)
    at_risk: np.ndarray | None = field(default=None, repr=False)
    at_risk_exact: bool | None = None
    lower_source: str | None = None
    history: list[dict] = field(default_factory=list)
    verification: dict | None = None
    blocks: dict | None = None  # the block ceilings' certificate (BlockCeiling.to_dict())

    @property
    def n_at_risk(self) -> int | None:
        """Records that *some* admissible parameter re-identifies at the margin
        (``None`` without screening; an over-count where ``at_risk_exact`` is false)."""
        return None if self.at_risk is None else int(self.at_risk.sum())

    @property
    def rate(self) -> float | None:
        return None if self.n_correct_verified is None else self.n_correct_verified / self.n_records

    def to_dict(self) -> dict:
        """JSON-ready figures (the keys of ``rlopt learn --json``)."""
        return {
            "family": self.family,
            "n_records": self.n_records,
            "n_correct": self.n_correct,
            "n_correct_verified": self.n_correct_verified,
            "n_correct_strict": self.n_correct_strict,
            "rate": self.rate,
            "status": self.status,
            "bound": self.bound,
            "gap": self.gap,
            "margin": self.margin,
            "params": self.params,
            "solver": self.solver,
            "seconds": self.seconds,
            "model": self.model,
            "recount_tol": self.recount_tol,
            "cut_rounds": self.cut_rounds,
            "reductions": self.reductions,
            "n_at_risk": self.n_at_risk,
            "at_risk_exact": self.at_risk_exact,
            "lower_source": self.lower_source,
            "history": self.history,
            "verification": self.verification,
            "blocks": self.blocks,
        }


def learn(
    data: LinkageData,
    family: LearnedFamily,
    *,
    margin: float,
    options: SolverOptions,
    big_c: str | float = "tight",
    reductions: Reductions = Reductions(),  # noqa: B008 (frozen)
    on_mismatch: str = "raise",
    export: str | Path | None = None,
    standardised: bool = False,
    candidates: np.ndarray | None = None,
    known: Sequence[tuple[str, Distance]] = (),
    progress: Callable[[dict], None] | None = None,
    blocks: BlockOptions | None = None,
) -> tuple[LearnResult, Distance | None]:
    """Learn ``family`` on validated data (see :class:`LearnedDistanceLinkage`).

    ``standardised=True``: the files are already z-scores (e.g. of larger files
    that these records were drawn from) and are used as they are.

    ``candidates`` (bool, ``n_records x n_records``): masked record ``i`` can only be linked to
    the originals ``j`` with ``candidates[i, j]`` (an intruder who first narrows
    the file, e.g. by a transparency attack). Only the rows of candidate pairs
    enter the model, a record whose own original is not a candidate is fixed as
    not re-identified, and the recount is restricted likewise. The reductions
    that look at all pairs (screening, conflicts, lazy rows, the start, the
    parameter-space branch and bound) are off.

    ``known``: ``(label, distance)`` pairs the caller already has (a baseline, the
    optimum of a smaller family, saved parameters). Each one the family contains
    (:func:`rlopt.families.containment.embed`) with an admissible parameter is
    recounted, offered to the solver as a start and kept as a lower end: the
    result is never below it, and when the solver finds nothing better the
    result's ``lower_source`` names that parameter instead of ``"solver"``.

    ``progress(event)`` is called whenever the run's interval narrows (see
    :class:`rlopt.milp.certificate.Certificate`); the events are the result's ``history``.

    ``blocks``: block ceilings (:mod:`rlopt.milp.blocks`) proven beside the run, in worker
    processes or on a Dask cluster; the result's ``bound`` is at most their sum, and
    ``blocks`` its certificate. Not with ``candidates``.
    """
    if blocks is not None and candidates is not None:
        raise InputError(
            "blocks with candidates; expected one of the two (a block restricts the records itself)"
        )
    # BLAS and OpenMP on one thread for the whole fit, whatever the machine (its products
    # are small: many threads only slow them down); the parameter-space search, forked,
    # inherits it
    with one_native_thread():
        t0 = time.perf_counter()
        family.check_attributes(data.n_attributes)
        za, zb = (data.masked, data.original) if standardised else data.standardised()
        n_records = za.shape[0]
        if candidates is not None:
            candidates, reductions = _restricted(candidates, reductions, n_records)
        companion = _companion(za, zb, family, margin, options, t0) if reductions.parameter_bb else None
        certificate = Certificate(n_records, t0=t0, progress=progress)
        run = _Run(data, family, za, zb, t0, margin, options, reductions, candidates, companion, certificate)
        run.reduce_budget = None if options.time_limit is None else REDUCE_SHARE * options.time_limit
        try:
            if blocks is not None:
                run.blocks = BlockSearch(data, family, margin, options, blocks, deadline=_block_deadline(run))
            return _learn(run, big_c=big_c, on_mismatch=on_mismatch, export=export, known=known)
        finally:
            if companion is not None:
                companion.close()
            if run.blocks is not None:
                run.blocks.close()


def verify(
    data: LinkageData,
    family: LearnedFamily,
    claimed: LearnResult,
    *,
    options: SolverOptions,
    standardised: bool = False,
    candidates: np.ndarray | None = None,
) -> dict:
    """A second proof of ``claimed``'s interval by the plain model of docs/method.md:
    the MILP as written (uniform big-C, no reduction, no start, no search), solved anew
    within ``options``. Its own claim is recounted as any other.

    Returns ``{"method", "status", "n_correct", "bound", "seconds", "agrees"}``:
    ``agrees`` is true when the two intervals meet (both optimal: the same optimum),
    ``None`` when the plain model's interval, stopped by its limit, contains the claim
    without deciding it, false when they contradict (one of the two proofs is wrong)."""
    plain, _ = learn(
        data,
        family,
        margin=claimed.margin,
        options=options,
        big_c="uniform",
        reductions=Reductions.none(),
        standardised=standardised,
        candidates=candidates,
    )
    low, high = claimed.n_correct_verified, claimed.bound
    plain_low, plain_high = plain.n_correct_verified, plain.bound
    contradicted = (high is not None and plain_low is not None and plain_low > high) or (
        low is not None and plain_high is not None and low > plain_high
    )
    decided = claimed.status == Status.OPTIMAL and plain.status == Status.OPTIMAL
    return {
        "method": "plain model (uniform big-C, no reduction, no start)",
        "status": str(plain.status),
        "n_correct": plain_low,
        "bound": plain_high,
        "seconds": plain.seconds["total"],
        "agrees": False if contradicted else (True if decided else None),
    }


def _restricted(candidates, reductions: Reductions, n_records: int) -> tuple[np.ndarray, Reductions]:
    """The candidate matrix checked, and the reductions that look at all pairs switched off."""
    candidates = np.asarray(candidates)
    if candidates.shape != (n_records, n_records) or candidates.dtype != bool:
        raise InputError(
            f"candidates of shape {candidates.shape} and dtype {candidates.dtype}; "
            f"expected a boolean ({n_records}, {n_records}) matrix"
        )
    off = dict(fix_unreachable=False, conflicts=False, lazy=False, warm_start=False, parameter_bb=False)
    return candidates, dataclasses.replace(reductions, **off)


def _companion(
    za: np.ndarray, zb: np.ndarray, family: LearnedFamily, margin: float, options: SolverOptions, t0: float
) -> Companion | None:
    """The parameter-space branch and bound, started beside the run where it applies
    (not in a daemon process, e.g. a Dask worker: there the MILP runs alone)."""
    if not (supports(family, za.shape[1]) and can_fork()):
        return None
    # its ceiling must hold for every recount of the run: the largest tolerance they use
    tol = 10 * options.feasibility_tol * (1 + largest_big_c(za, zb, family, margin=margin))
    deadline = None if options.time_limit is None else t0 + options.time_limit
    return Companion(za, zb, family, margin=margin, tol=tol, deadline=deadline)


@dataclass
class _Run:
    """What the steps of one learning run share: the files (z-scores), the family, the
    options, and the interval so far (the certificate, fed by every step and by the
    branch and bound beside the solve)."""

    data: LinkageData
    family: LearnedFamily
    za: np.ndarray
    zb: np.ndarray
    t0: float
    margin: float
    options: SolverOptions
    reductions: Reductions
    candidates: np.ndarray | None
    companion: Companion | None
    certificate: Certificate
    # every parameter whose recount entered the certificate beside this pass's starts (the
    # solver's improving ones, the branch and bound's, an earlier pass's lower end): the
    # result's lower end is chosen among them too, so a count the certificate shows is
    # never lost with its parameter
    kept: list[Incumbent] = field(default_factory=list)
    # the reduce phases of the run's passes (the quick pass's, then the full pass's): a
    # pass reuses a complete one, and screens only the records an earlier one left undecided
    reduced: list[_Reduced] = field(default_factory=list)
    reduce_budget: float | None = None  # the seconds all of them may take
    largest_tol: float = 0.0  # the loosest tolerance a count of the run was made at
    blocks: BlockSearch | None = None  # the block ceilings proven beside the run
    starts: list[Incumbent] = field(default_factory=list)  # the pass's verified starts
    final: bool = True  # the run's last pass (not a quick pass that a full pass may follow)

    @property
    def n_records(self) -> int:
        return self.za.shape[0]

    def deadline(self, share: float = 1.0, since: float | None = None) -> float | None:
        """``since`` (the run's start by default) plus ``share`` of the time limit."""
        limit = self.options.time_limit
        return None if limit is None else (self.t0 if since is None else since) + share * limit

    @property
    def search_tol(self) -> float:
        """The recount tolerance of parameters met before (or beside) the model: that of a
        model without big-C, stricter than the model's own."""
        return self.options.recount_tol

    def recount(
        self, theta: np.ndarray, tol: float, *, method: Method = "auto"
    ) -> tuple[LinkageResult, np.ndarray]:
        self.largest_tol = max(self.largest_tol, tol)
        distance = self.family.distance(theta, self.data.columns)
        return recount(
            self.za, self.zb, distance, margin=self.margin, tol=tol, candidates=self.candidates, method=method
        )

    def found(self, count: int, source: str) -> None:
        """A verified count: recorded, and offered to the branch and bound (it prunes with it)."""
        self.certificate.found(count, source)
        if self.companion is not None:
            self.companion.offer(count)

    def incumbent(self, label: str, theta, tol: float, *, method: Method = "auto") -> Incumbent:
        """``theta`` recounted (at the margin up to ``tol``, and at the exact margin)."""
        linked, correct = self.recount(theta, tol, method=method)
        exact = linked.separation >= self.margin
        return Incumbent(label, np.asarray(theta, dtype=float), linked, correct, exact=exact)

    def keep(self, item: Incumbent) -> None:
        """A recounted parameter met during the run: kept when it beats those kept, and
        found (its count at the exact margin: a count it reaches)."""
        self.remember(item)
        self.found(item.exact_count, item.label)

    def remember(self, item: Incumbent) -> None:
        """``item`` kept when it beats those kept (they grow in count, within the
        recount's tolerance or at the exact margin)."""
        last = self.kept[-1] if self.kept else None
        if last is None or item.count > last.count or item.exact_count > last.exact_count:
            self.kept.append(item)

    def listen(self) -> bool:
        """What runs beside the solve: the blocks finished (their ceiling so far into the
        certificate) and the branch and bound's reports; true when a ceiling of either
        meets the verified lower end."""
        closed = self._blocks_heard()
        return self._companion_heard() or closed

    def _blocks_heard(self) -> bool:
        certificate = self.certificate
        if self.blocks is None:
            return False
        verified = [item.correct for item in [*self.starts, *self.kept]]
        if self.blocks.update(verified):  # a valid ceiling whenever: unfinished blocks count |S|
            certificate.bounded(self.blocks.ceiling(verified).total, BLOCK_CEILINGS)
        return (
            certificate.upper_source == BLOCK_CEILINGS
            and certificate.lower is not None
            and certificate.lower >= certificate.upper
        )

    def _companion_heard(self) -> bool:
        companion, certificate = self.companion, self.certificate
        if companion is None:
            return False
        reports = companion.poll()
        if reports:  # the latest ceiling, and the best parameter among those that arrived
            _, count, theta = max(reports, key=lambda report: report[1])
            if theta is not None and count > (certificate.lower or 0):
                item = recount_parameter(
                    REGION_SEARCH,
                    theta,
                    self.za,
                    self.zb,
                    self.family,
                    self.data.columns,
                    margin=self.margin,
                    tol=self.search_tol,
                )
                self.keep(item)
            if companion.upper is not None:
                certificate.bounded(companion.upper, REGION_SEARCH)
        return (
            companion.upper is not None
            and certificate.lower is not None
            and certificate.lower >= companion.upper
        )


@dataclass
class _Reduced:
    """The exact reductions' outcome: records fixed as not re-identified, the screening
    (records at risk), pairs of records no parameter re-identifies together."""

    fixed: np.ndarray
    screening: Screening | None = None
    conflicts: np.ndarray | None = None
    deadline: float | None = None
    seconds: float = 0.0
    complete: bool = False  # every step ran to its end (none stopped by the deadline or skipped)


@dataclass
class _Built:
    """The model and what its solve needs: lazy linkage rows and the round's separation."""

    model: object
    info: ModelInfo
    lazy_rows: LazyLinkageRows | None
    separate: Callable | None
    tol: float  # the recount tolerance of a model with this big-C
    seconds: float


def _learn(
    run: _Run,
    *,
    big_c: str | float,
    on_mismatch: str,
    export: str | Path | None,
    known: Sequence[tuple[str, Distance]],
) -> tuple[LearnResult, Distance | None]:
    """A quick pass (the known starts, the reductions and a short solve) where the run
    would search first: a file it proves ends there. Otherwise the full pass, which keeps
    the quick one's proven ceiling and verified count (the certificate is shared)."""
    quick = _quick_budget(run)
    quick_seconds = 0.0
    if quick is not None:
        quick_run = dataclasses.replace(
            run,
            options=dataclasses.replace(run.options, time_limit=quick),
            reductions=run.reductions.without_searches(),
            final=False,
        )
        result, distance = _pass(quick_run, big_c=big_c, on_mismatch=on_mismatch, export=export, known=known)
        quick_seconds = result.seconds["total"]
        if result.status == Status.OPTIMAL:
            result.seconds["quick"] = quick_seconds
            return result, distance
        if distance is not None:  # its verified parameter stays a start (and is kept)
            known = [*known, (result.lower_source or "solver", distance)]
        lower, upper = result.n_correct_verified or 0, result.bound
        if upper is not None and upper - lower <= NARROW_RECORDS:
            # a search could add at most these few records: the time goes to the proof
            run = dataclasses.replace(run, reductions=run.reductions.without_searches())
    result, distance = _pass(run, big_c=big_c, on_mismatch=on_mismatch, export=export, known=known)
    result.seconds["quick"] = quick_seconds  # the other steps' seconds are the full pass's
    return result, distance


def _quick_budget(run: _Run) -> float | None:
    """The quick pass's seconds (``None``: no quick pass): ``QUICK_SECONDS``, at most
    ``QUICK_SHARE`` of the limit and at least ``QUICK_MIN_SECONDS``, when searches would
    run and candidates do not restrict the linkage."""
    searching = run.reductions.searches() or run.reductions.nca_start
    if not (run.reductions.quick_solve and searching) or run.candidates is not None:
        return None
    limit = run.options.time_limit
    budget = QUICK_SECONDS if limit is None else min(QUICK_SECONDS, QUICK_SHARE * limit)
    return budget if budget >= QUICK_MIN_SECONDS else None


def _pass(
    run: _Run,
    *,
    big_c: str | float,
    on_mismatch: str,
    export: str | Path | None,
    known: Sequence[tuple[str, Distance]],
) -> tuple[LearnResult, Distance | None]:
    t_search = time.perf_counter()
    starts = _starts(run, known)
    search_seconds = time.perf_counter() - t_search
    closed = run.listen()  # the branch and bound proved the optimum already: the MILP only confirms
    reduced = _reduce(run, starts, skip_conflicts=closed)
    run.listen()
    size = largest_big_c(run.za, run.zb, run.family, margin=run.margin) if big_c == "uniform" else big_c
    built = _build(run, reduced, size, export)
    recount_seconds = _recount_seconds(starts, reduced)
    t_search = time.perf_counter()
    starts = _search(run, starts, reduced, built, recount_seconds)
    search_seconds += time.perf_counter() - t_search
    starts = _with_screening_start(run, starts, reduced, built.tol)
    run.starts = starts  # their counts check the blocks finished during the solve
    reserve = RECOUNT_RESERVE * recount_seconds
    solved = _solve(run, built, _start_function(run, starts, reduced, built.lazy_rows), built.tol, reserve)
    run.listen()
    if built.lazy_rows is not None:
        built.info.n_linkage_rows += built.lazy_rows.rows_added
    if solved.status in (Status.INFEASIBLE, Status.ERROR):
        # sum K = N (no record re-identified) is always feasible when the family's
        # admissible set is not empty: nothing this solve returned is a figure
        hint = (
            f" (big_c={size:g} is below what some pairs need)"
            if not isinstance(big_c, str) and solved.status == Status.INFEASIBLE
            else ""
        )
        raise SolverError(
            f"{run.family.name}: HiGHS ended with status {solved.status!r}{hint}; no "
            "count is reported from a failed solve"
        )
    starts = sorted(starts + run.kept, key=lambda item: -item.count)
    ceiling, interrupted = None, solved.interrupted
    if solved.status != Status.OPTIMAL and run.blocks is not None and run.final:
        ceiling, stopped_waiting = _block_ceiling(run, run.blocks, starts, wait=not interrupted)
        interrupted = interrupted or stopped_waiting
    result, distance = _conclude(run, solved, starts, reduced, built, on_mismatch)
    result.blocks = None if ceiling is None else ceiling.to_dict()
    result.seconds = {
        "reduce": reduced.seconds,
        "build": built.seconds,
        "search": search_seconds,
        "solve": solved.seconds,
        "total": time.perf_counter() - run.t0,
    }
    if interrupted:  # Ctrl-C during the solve (or the wait for the blocks): the interval so far, then stop
        raise Interrupted(f"{run.family.name}: interrupted", partial=result)
    return result, distance


def _block_deadline(run: _Run) -> float:
    """When the blocks must be done, on the wall clock (shared with worker processes and
    Dask workers): when the run's MILP ends (``inf`` without a time limit)."""
    limit = run.options.time_limit
    return math.inf if limit is None else time.time() + (1 - CONCLUDE_SHARE) * limit


def _block_ceiling(
    run: _Run, blocks: BlockSearch, verified: list[Incumbent], *, wait: bool
) -> tuple[BlockCeiling, bool]:
    """In the run's last pass, when its MILP did not prove the optimum: the blocks' ceiling
    once those in flight are done (until the MILP's end; without ``wait``, after a
    Ctrl-C, those done; a contradicted one solved again, strict, in that time), checked
    against every verified parameter, into the certificate;
    and whether a Ctrl-C came while waiting."""
    stopped_waiting = False
    correct = [item.correct for item in verified]
    certificate = run.certificate
    if certificate.lower is not None and certificate.lower >= certificate.upper:
        wait = False  # closed (the blocks' ceiling met the lower end during the solve)
    if wait:
        limit = run.options.time_limit
        left = math.inf if limit is None else run.t0 + (1 - CONCLUDE_SHARE) * limit - time.perf_counter()
        try:
            blocks.wait(until=time.time() + max(0.0, left) + BLOCK_GRACE_SECONDS, verified=correct)
        except KeyboardInterrupt:
            stopped_waiting = True
    ceiling = blocks.ceiling(correct)
    run.certificate.bounded(ceiling.total, BLOCK_CEILINGS)
    return ceiling, stopped_waiting


def _starts(run: _Run, known: Sequence[tuple[str, Distance]]) -> list[Incumbent]:
    """Every admissible parameter the run knows, and MD's and NCA's matrices projected
    into the family, best first: each a verified lower end (counted at the tolerance of a
    model without big-C: stricter)."""
    n_attributes = run.za.shape[1]
    named = [("neutral start (AM)", run.family.neutral(n_attributes))]
    for label, known_distance in known:
        theta = embed(known_distance, run.family, n_attributes)
        if theta is not None:
            named.append((label, theta))
    return search_incumbents(
        run.za,
        run.zb,
        run.family,
        run.data.columns,
        named,
        margin=run.margin,
        tol=run.search_tol,
        feasibility_tol=run.options.feasibility_tol,
        searches=(),
        deadline=run.deadline(SEARCH_SHARE),
        candidates=run.candidates,
        quadratic=True,
        nca=run.reductions.nca_start,
        found=run.found,
    )


def _search(run: _Run, starts: list[Incumbent], reduced: _Reduced, built: _Built, recount: float):
    """The portfolio's searches from the starts (:mod:`rlopt.milp.search.portfolio`), once
    the model is built: they end by ``SEARCH_SHARE`` of the limit (plus what this pass's
    reduce phase and model took), and early enough for their last result to be recounted
    (``recount`` seconds), the screening's start to be tried, the model to be loaded and
    solved a little and the result concluded within the limit."""
    searches = run.reductions.searches()
    if not (searches and starts) or run.candidates is not None:
        return starts
    deadline, limit = run.deadline(SEARCH_SHARE), run.options.time_limit
    if deadline is not None and limit is not None:
        needed = (
            recount
            + 2 * MIN_SOLVE_SHARE * limit  # the screening's start and the glimpse of a solve
            + LOAD_FACTOR * built.seconds
            + max(CONCLUDE_SHARE * limit, RECOUNT_RESERVE * recount)
        )
        deadline = min(deadline + reduced.seconds + built.seconds, run.t0 + limit - needed)
    screening = reduced.screening
    return search_incumbents(
        run.za,
        run.zb,
        run.family,
        run.data.columns,
        (),
        met=starts,
        margin=run.margin,
        tol=run.search_tol,
        feasibility_tol=run.options.feasibility_tol,
        searches=searches,
        deadline=deadline,
        at_risk=None if screening is None else screening.at_risk,
        found=run.found,
    )


def _earliest(*deadlines: float | None) -> float | None:
    known = [d for d in deadlines if d is not None]
    return min(known) if known else None


def _reduce(run: _Run, starts: list[Incumbent], *, skip_conflicts: bool) -> _Reduced:
    """Screening (records no parameter re-identifies are fixed) and conflicts, within
    ``PASS_REDUCE_SHARE`` of the pass's limit and what the run's reduce budget has left
    (stopping them early is exact). A complete reduce phase of an earlier pass is reused;
    an incomplete one's screening is continued."""
    t_reduce = time.perf_counter()
    earlier = run.reduced[-1] if run.reduced else None
    if earlier is not None and earlier.complete:
        reduced = dataclasses.replace(earlier, seconds=0.0)
        run.reduced.append(reduced)
        return reduced
    reduced = _Reduced(
        fixed=np.zeros(run.n_records, dtype=bool) if run.candidates is None else ~run.candidates.diagonal(),
        # its share, and never past REDUCE_END of the limit: what the steps before it
        # overran is taken from here, not from the limit
        deadline=_earliest(
            run.deadline(PASS_REDUCE_SHARE, since=t_reduce),
            run.deadline(REDUCE_END),
            None
            if run.reduce_budget is None
            else t_reduce + max(0.0, run.reduce_budget - sum(r.seconds for r in run.reduced)),
        ),
    )
    reductions, options = run.reductions, run.options
    if reductions.fix_unreachable or reductions.conflicts:
        # records the best start re-identifies need no LP (any admissible parameter would do)
        known = starts[0].theta if starts else run.family.neutral(run.za.shape[1])
        reduced.screening = screen_records(
            run.za,
            run.zb,
            run.family,
            margin=run.margin,
            known=known,
            feasibility_tol=options.feasibility_tol,
            deadline=reduced.deadline,
            previous=None if earlier is None else earlier.screening,
        )
        if reductions.fix_unreachable:
            reduced.fixed = reduced.screening.unreachable
        if reductions.conflicts and not skip_conflicts:
            reduced.conflicts = find_conflicts(
                run.za,
                run.zb,
                run.family,
                reduced.screening,
                margin=run.margin,
                feasibility_tol=options.feasibility_tol,
                max_lps=reductions.max_conflict_lps,
                deadline=reduced.deadline,
            )
    reduced.seconds = time.perf_counter() - t_reduce
    reduced.complete = not (reductions.conflicts and skip_conflicts) and (
        reduced.deadline is None or time.perf_counter() < reduced.deadline
    )
    run.reduced.append(reduced)
    return reduced


def _build(run: _Run, reduced: _Reduced, big_c: str | float, export: str | Path | None) -> _Built:
    t_build = time.perf_counter()
    reductions, family, za, zb = run.reductions, run.family, run.za, run.zb
    cliques = (
        duplicate_groups(za)
        if reductions.duplicate_cliques and run.margin > 0 and run.candidates is None
        else None
    )
    pairs = nearest_pairs(za, zb, reductions.lazy_start) if reductions.lazy else None
    if run.candidates is not None:
        pairs = run.candidates & ~np.eye(run.n_records, dtype=bool)
    model, info = build_model(
        za,
        zb,
        family,
        margin=run.margin,
        columns=run.data.columns,
        big_c=big_c,
        drop_redundant=reductions.drop_redundant,
        drop_dominated=reductions.drop_dominated,
        pairs=pairs,
        fixed=reduced.fixed,
        conflicts=reduced.conflicts,
        cliques=cliques,
    )
    if export is not None:
        export_model(model, export)
    lazy_rows = None
    if reductions.lazy and pairs is not None:
        lazy_rows = LazyLinkageRows(
            za,
            zb,
            family,
            run.data.columns,
            run.margin,
            big_c,
            pairs,
            per_round=reductions.lazy_per_round,
            tol=run.options.feasibility_tol,
            max_family_rounds=run.options.max_cut_rounds,
        )
    separate = None
    if family.has_cuts or lazy_rows is not None:

        def separate(theta, k):  # the family's cuts and the violated linkage rows, in one round
            cuts = (
                [Cut(coefs, rhs) for coefs, rhs in family.separate(theta, za, zb)] if family.has_cuts else []
            )
            return cuts + (lazy_rows(theta, k) if lazy_rows is not None else [])

    tol = 10 * run.options.feasibility_tol * (1 + info.big_c_max)
    return _Built(model, info, lazy_rows, separate, tol, time.perf_counter() - t_build)


def _with_screening_start(
    run: _Run, starts: list[Incumbent], reduced: _Reduced, tol: float
) -> list[Incumbent]:
    """The screening LPs' best parameter joins the starts when it is a new one."""
    if not run.reductions.warm_start or run.family.has_cuts or reduced.screening is None:
        return starts
    # its own short window: the reduce phase's has passed (the searches ran since)
    limit = run.options.time_limit
    window = None if limit is None else time.perf_counter() + MIN_SOLVE_SHARE * limit
    witness = best_start(run.za, run.zb, run.family, reduced.screening, margin=run.margin, deadline=window)
    if any(np.array_equal(witness, item.theta) for item in starts):
        return starts
    starts = starts + search_incumbents(
        run.za,
        run.zb,
        run.family,
        run.data.columns,
        [("screening LP start", witness)],
        margin=run.margin,
        tol=tol,
        feasibility_tol=run.options.feasibility_tol,
        searches=(),
        candidates=run.candidates,
        found=run.found,
    )
    return sorted(starts, key=lambda item: -item.count)  # stable: an earlier start keeps a tie


def _start_function(
    run: _Run, starts: list[Incumbent], reduced: _Reduced, lazy_rows: LazyLinkageRows | None
) -> Callable | None:
    """The MIP start of each round: the best start first, then the last round's parameter
    (completed against every original when lazy rows are carried)."""
    if not run.reductions.warm_start:
        return None
    family, za, zb = run.family, run.za, run.zb
    first = starts[0].theta if starts else family.neutral(za.shape[1])
    carry = lazy_rows if run.reductions.carry_rounds else None
    fit_deadline = run.deadline()

    def start(previous, previous_k):
        not_admissible = previous is not None and family.has_cuts and family.separate(previous, za, zb)
        theta = first if previous is None or not_admissible else previous
        if previous is not None and carry is not None:
            # the records the last round counted, re-identified against every original
            completed = carry.complete(previous_k, deadline=fit_deadline)
            theta = theta if completed is None else completed
        return start_from(za, zb, family, theta, margin=run.margin, fixed=reduced.fixed)

    return start


def _solve(run: _Run, built: _Built, start: Callable | None, tol: float, reserve: float) -> SolveResult:
    """The MILP, within what is left of the time limit (the limit covers the whole fit)
    less the conclusion's share (at least ``reserve`` seconds), its improving solutions
    recounted into the certificate; stopped when the branch and bound's ceiling meets a
    verified count. Not started when the model could not even be loaded in what is left."""
    options, limit = run.options, run.options.time_limit
    not_started = False
    if limit is not None:  # what is left but the conclusion's share, and a glimpse when nothing is
        left = limit - max(CONCLUDE_SHARE * limit, reserve) - (time.perf_counter() - run.t0)
        not_started = LOAD_FACTOR * built.seconds > max(left, MIN_SOLVE_SHARE * limit)
        options = dataclasses.replace(options, time_limit=max(MIN_SOLVE_SHARE * limit, left))
    if not_started:
        solved = _not_started(options)
    else:
        solved = _solved(run, built, options, start, tol)
    run.listen()
    solved.solver["time_limit"] = limit
    if run.companion is not None:  # what the branch and bound beside it had reached
        result = run.companion.result
        solved.solver["parameter_bb"] = {
            "upper": run.companion.upper,
            **({} if result is None else result.to_dict()),
        }
    return solved


def _solved(
    run: _Run, built: _Built, options: SolverOptions, start: Callable | None, tol: float
) -> SolveResult:
    """The MILP within ``options`` (its time limit what is left of the run's)."""

    def on_improve(incumbent, bound, theta):  # a round's figures: the bound is proven, theta recounted
        if bound is not None and math.isfinite(bound):
            run.certificate.bounded(run.n_records - int(math.ceil(bound - 1e-6)), "MILP bound")
        if (
            theta is not None
            and incumbent is not None
            and run.family.is_admissible(theta, run.za, run.zb, tol=options.feasibility_tol)
        ):
            run.keep(run.incumbent("solver", theta, tol))

    return solve_model(
        built.model,
        options,
        separate=built.separate,
        start=start,
        carry_bound=run.reductions.carry_rounds,
        on_improve=on_improve,
        stop_when=run.listen if run.companion is not None or run.blocks is not None else None,
    )


def _recount_seconds(starts: list[Incumbent], reduced: _Reduced) -> float:
    """What one recount of every pair takes, as measured in this pass."""
    screening = reduced.screening
    return max(
        max((item.seconds for item in starts), default=0.0),
        0.0 if screening is None else screening.evaluation_seconds,
    )


def _not_started(options: SolverOptions) -> SolveResult:
    """The solve of a run whose limit left no time to load the model: no incumbent, no
    bound (the run's interval is what its other steps proved)."""
    return SolveResult(
        status=Status.TIME_LIMIT,
        incumbent=None,
        objective_bound=None,
        theta=None,
        seconds=0.0,
        solver={**solver_summary(options), "not_started": "the time limit left no time to load the model"},
    )


def _conclude(
    run: _Run,
    solved: SolveResult,
    starts: list[Incumbent],
    reduced: _Reduced,
    built: _Built,
    on_mismatch: str,
) -> tuple[LearnResult, Distance | None]:
    """The result: the solver's figures checked by the recount and compared with every
    start; the status ``optimal`` wherever the two ends meet."""
    family, n_records = run.family, run.n_records

    def mismatch(message: str) -> None:
        if on_mismatch == "raise":
            raise RecountMismatchError(message)
        warnings.warn(message, RuntimeWarning, stacklevel=5)

    status, theta, n_correct, bound = _solver_figures(run, solved, reduced)
    theta, n_correct, verified, strict, correct, lower_source = _lower_end(
        run, status, theta, n_correct, starts, built, mismatch
    )
    distance = None if theta is None else family.distance(theta, run.data.columns)
    status, bound, n_correct = _closed(family.name, run.margin, status, bound, n_correct, verified, mismatch)
    _warn_if_the_margin_hides_all(run, verified, starts)
    if verified is not None and lower_source is not None:
        run.certificate.found(verified, lower_source)
    run.certificate.bounded(bound, "proven optimum" if status == Status.OPTIMAL else "MILP bound")
    screening = reduced.screening
    result = LearnResult(
        family=family.name,
        n_records=n_records,
        n_correct=n_correct,
        n_correct_verified=verified,
        n_correct_strict=strict,
        status=status,
        bound=bound,
        gap=None if verified is None else (bound - verified) / max(bound, 1),
        margin=run.margin,
        params=None if distance is None else {**distance.params(), **_options(family)},
        solver=solved.solver,
        seconds={},
        model=built.info.to_dict(),
        recount_tol=max(built.tol, run.largest_tol),  # a count kept from a quick pass may be looser
        cut_rounds=solved.cut_rounds,
        correct=correct,
        reductions=run.reductions.to_dict(),
        at_risk=None if screening is None else screening.at_risk,
        at_risk_exact=None if screening is None else bool(screening.exact.all()),
        lower_source=lower_source,
        history=run.certificate.to_list(),
    )
    return result, distance


def _closed(
    name: str,
    margin: float,
    status: str,
    bound: int,
    n_correct: int | None,
    verified: int | None,
    mismatch: Callable[[str], None],
) -> tuple[str, int, int | None]:
    """``(status, bound, n_correct)`` once the two ends are compared: ``optimal``
    wherever they meet (then ``n_correct`` is the optimum), ``gap_limit`` for a solve
    stopped at a relative gap; a count above a proven bound is a mismatch."""
    if status == Status.OPTIMAL and n_correct is not None and bound > n_correct:
        status = Status.GAP_LIMIT  # stopped at a relative gap > 0: an interval, not the optimum
    if status == Status.OPTIMAL and n_correct is not None:
        bound = min(bound, n_correct)
    if verified is not None and verified > bound:
        mismatch(
            f"{name}: a parameter re-identifies {verified} records at margin {margin:g}, "
            f"more than the solver's proven bound {bound}"
        )
    if status == Status.OPTIMAL and verified is not None and verified < bound:
        # the solver's optimum holds within its tolerance, but no parameter found reaches
        # it at the exact margin: an interval
        status = Status.GAP_LIMIT
    if status != Status.OPTIMAL and verified is not None and verified == bound:
        status = Status.OPTIMAL  # the interval closed: the verified count is the proven optimum
    if status == Status.OPTIMAL and verified is not None:
        n_correct = verified  # the proven optimum (the solver may have been stopped before it)
    if status == Status.STOPPED:  # only stopped when the companion's ceiling met a verified count
        raise RuntimeError(
            f"{name}: the MILP was stopped for a closed interval that did not close ([{verified}, {bound}])"
        )
    return status, bound, n_correct


def _solver_figures(run: _Run, solved: SolveResult, reduced: _Reduced):
    """``(status, theta, n_correct, bound)`` as the solve left them: the bound also
    capped by the records at risk and the branch and bound's ceiling; a parameter that
    violates a family cut repaired (only a repaired one gives a count)."""
    family, n_records = run.family, run.n_records
    theta, status = solved.theta, solved.status
    n_correct = None if solved.incumbent is None else n_records - int(round(solved.incumbent))
    bound = (
        n_records
        if solved.objective_bound is None
        else n_records - int(math.ceil(solved.objective_bound - 1e-6))
    )
    if reduced.screening is not None:  # at_risk over-approximates where not exact: still a bound
        bound = min(bound, reduced.screening.n_at_risk)
    if run.companion is not None and run.companion.upper is not None:
        bound = min(bound, run.companion.upper)
    bound = min(bound, run.certificate.upper)  # a ceiling proven earlier in the run (a quick pass's)
    tol = run.options.feasibility_tol
    if status == Status.OPTIMAL and solved.cut_cap_hit:
        status = Status.CUT_LIMIT  # the relaxed optimum bounds the family; repair theta for a count
        theta = _repaired(family, theta, run.za, run.zb, tol) if family.has_cuts else theta
        n_correct = None
    elif (
        status != Status.OPTIMAL
        and family.has_cuts
        and theta is not None
        and family.separate(theta, run.za, run.zb)
    ):
        theta = _repaired(family, theta, run.za, run.zb, tol)
    return status, theta, n_correct, bound


def _lower_end(
    run: _Run,
    status: str,
    theta,
    n_correct: int | None,
    starts: list[Incumbent],
    built: _Built,
    mismatch: Callable[[str], None],
):
    """``(theta, n_correct, verified, strict, correct, lower_source)``: the solver's claim
    checked by the recount of its parameter (within the recount's tolerance), and the
    lower end: the best count at the exact margin among the solver's parameter and every
    start (a start when it ties, labelled as the start it is), its parameter moved to
    reach the margin where it falls short of what it counts within the tolerance."""
    solver = None
    if theta is not None:
        # the check of the solver's claim: every pair, plain numpy, independent of any search structure
        solver = run.incumbent("solver", theta, built.tol, method="brute")
        run.remember(solver)
        if built.separate is not None and status != Status.OPTIMAL:
            # stopped before every lazy row / cut was in: the incumbent is one of a
            # relaxation, its recount is what the parameter really achieves
            n_correct = solver.count
        proven = status == Status.OPTIMAL and run.options.rel_gap == 0  # else K_i = 1 may hide one
        if n_correct is not None and (solver.count < n_correct or (proven and solver.count != n_correct)):
            mismatch(
                f"{run.family.name}: the solver claims {n_correct} correct re-identifications "
                f"but the independent recount of its parameters at margin {run.margin:g} "
                f"finds {solver.count}"
            )
    best = _at_the_margin(run, [*starts, *([] if solver is None else [solver])], built.tol)
    if best is None:
        return theta, n_correct, None, None, None, None
    run.remember(best)  # a later pass keeps it as it was counted
    return best.theta, n_correct, best.exact_count, best.linked.n_correct, best.exact, best.label


REPAIRS = 2
"""Parameters at most that the conclusion moves to reach the margin (the best ones that
fall short of their count within the recount's tolerance)."""


def _at_the_margin(run: _Run, items: list[Incumbent], tol: float) -> Incumbent | None:
    """The item of most records re-identified at the exact margin (the first of a tie),
    after moving (:func:`~rlopt.milp.search.exact.reach_margin`) the best ones whose
    count within the recount's tolerance is higher: the MILP and the searches leave
    their parameter on the margin, where rounding loses records."""
    if not items:
        return None
    best = max(items, key=lambda item: item.exact_count)
    limit = run.options.time_limit
    deadline = None if limit is None else max(run.t0 + limit, time.perf_counter() + MIN_SOLVE_SHARE * limit)
    short = [item for item in items if item.count > best.exact_count and item.exact_count < item.count]
    for item in sorted(short, key=lambda item: -item.count)[:REPAIRS]:
        if item.count <= best.exact_count:
            break
        theta = reach_margin(
            run.za,
            run.zb,
            run.family,
            item.theta,
            item.correct,
            margin=run.margin,
            feasibility_tol=run.options.feasibility_tol,
            candidates=run.candidates,
            deadline=deadline,
        )
        if theta is not None and not run.family.is_admissible(
            theta, run.za, run.zb, tol=run.options.feasibility_tol
        ):
            theta = _repaired(run.family, theta, run.za, run.zb, run.options.feasibility_tol)
        if theta is None:
            continue
        moved = run.incumbent(item.label, theta, tol, method="brute")
        if moved.exact_count > best.exact_count:
            best = moved
    return best


def _warn_if_the_margin_hides_all(run: _Run, verified: int | None, starts: list[Incumbent]) -> None:
    strict_best = max(starts, key=lambda item: item.linked.n_correct, default=None)
    if verified == 0 and run.margin > 0 and strict_best is not None and strict_best.linked.n_correct:
        warnings.warn(
            f"{run.family.name}: no record is re-identified at margin {run.margin:g}, "
            f"though the {strict_best.label} re-identifies {strict_best.linked.n_correct} "
            "strictly: the margin is in units of the distance on z-scores (squared "
            "standard deviations); expected a small margin such as 1e-5",
            DataWarning,
            stacklevel=5,
        )


def _repaired(family: LearnedFamily, theta, za, zb, tol: float) -> np.ndarray | None:
    """The family's repair of ``theta``, when it is admissible; else ``None`` (no count)."""
    theta = None if theta is None else family.repair(theta)
    return theta if theta is not None and family.is_admissible(theta, za, zb, tol=tol) else None


def _options(family: LearnedFamily) -> dict:
    return {"options": dict(family.options)} if family.options else {}
