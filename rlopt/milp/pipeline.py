"""The MILP pipeline of one family on one pair of files: what ``fit`` runs.

:func:`learn` takes validated data and a learned family and returns a
:class:`~rlopt.results.LearnResult` with the learned parameter. A run (:class:`_Run`)
makes a quick pass where it would search first, then its full pass (:func:`_pass`), each
the steps of :mod:`rlopt.milp.steps` under one budget (:mod:`rlopt.milp.budget`):

1. the starts, recounted; 2. the reduce phase (screening, conflicts); 3. the model;
4. the incumbent searches; 5. the solve (:func:`_solve`, :mod:`rlopt.milp.solvers`),
with what runs beside it (:mod:`rlopt.milp.beside`: the parameter-space branch and
bound, the block ceilings); 6. the conclusion (:mod:`rlopt.milp.conclude`): the
solver's claim recounted, the interval, the anytime certificate.

The run is handed its collaborators (:class:`Collaborators`: the MILP's solve, the
screening, a block's solve), so a test gives it fakes. :func:`verify` proves a claimed
optimum again with the plain model, solved by SCIP where installed (the other solver);
:func:`solve_block` is one block's MILP.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rlopt.data import LinkageData
from rlopt.exceptions import InputError, Interrupted, RecountMismatchError, SolverError
from rlopt.families import Distance, LearnedFamily
from rlopt.linkage import LinkageResult
from rlopt.linkage.distance_based import Method, recount
from rlopt.linkage.identical import IDENTICAL_RECORDS, identical_records
from rlopt.milp import beside, steps
from rlopt.milp.budget import NARROW_RECORDS, Budget
from rlopt.milp.ceilings.blocks import (
    MIN_BLOCK_SECONDS,
    MIN_FEASIBILITY_TOL,
    BlockLimits,
    BlockSearch,
    unsolved,
)
from rlopt.milp.ceilings.certificate import BlockOptions, Certificate, describe_lower
from rlopt.milp.ceilings.regions import Companion
from rlopt.milp.conclude import conclude
from rlopt.milp.formulation import largest_big_c
from rlopt.milp.incumbents.portfolio import Incumbent
from rlopt.milp.racing.peers import Peers
from rlopt.milp.reductions import Reductions, Searches, screen_records
from rlopt.milp.solvers.mip import not_started, solve_model
from rlopt.milp.solvers.options import SOLVER_NAMES, SolveResult, SolverOptions, Termination
from rlopt.milp.solvers.scip import INSTALL, solve_model_scip, verifying_solver
from rlopt.processes import one_native_thread
from rlopt.results import LearnResult
from rlopt.status import Status

__all__ = ["Collaborators", "LearnResult", "learn", "verify", "solve_block", "recount", "describe_lower"]


@dataclass(frozen=True)
class Collaborators:
    """What a run calls that a test may replace: ``solve`` the MILP
    (:func:`~rlopt.milp.solvers.mip.solve_model`'s signature), ``screen`` the screening
    LPs (:func:`~rlopt.milp.reductions.screen_records`'), ``solve_block`` one block's
    MILP in a worker (:func:`solve_block`'s; module-level, so it pickles)."""

    solve: Callable[..., SolveResult] = solve_model
    screen: Callable = screen_records
    solve_block: Callable[..., dict] | None = None  # None: solve_block


# over 60 lines: its docstring documents every argument; the body only sets up the run
def learn(
    data: LinkageData,
    family: LearnedFamily,
    *,
    margin: float,
    options: SolverOptions,
    big_c: str | float = "tight",
    reductions: Reductions = Reductions(),  # noqa: B008 (frozen)
    searches: Searches = Searches(),  # noqa: B008 (frozen)
    on_mismatch: str = "raise",
    export: str | Path | None = None,
    candidates: np.ndarray | None = None,
    known: Sequence[tuple[str, Distance]] = (),
    progress: Callable[[dict], None] | None = None,
    blocks: BlockOptions | None = None,
    peers: Peers | None = None,
    collaborators: Collaborators = Collaborators(),  # noqa: B008 (frozen)
) -> tuple[LearnResult, Distance | None]:
    """Learn ``family`` on validated data (see :class:`LearnedDistanceLinkage`).

    The files are read as ``data.encoded``: a part of a larger file
    (:meth:`~rlopt.data.LinkageData.part`, a fold or a learning sample) keeps that
    file's encoding.

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
    :class:`rlopt.milp.ceilings.certificate.Certificate`); the events are the result's ``history``.

    ``blocks``: block ceilings (:mod:`rlopt.milp.ceilings.blocks`) proven beside the run, in worker
    processes or on a Dask cluster; the result's ``bound`` is at most their sum, and
    ``blocks`` its certificate. Not with ``candidates``.

    ``peers``: this run's end of a race (:mod:`rlopt.milp.racing.race`): the interval published
    as it narrows, the other runs' ceilings and parameters heard (the parameters
    recounted here), the solve stopped when the ends meet.

    ``reductions``: the exact reductions; ``searches``: the searches and what runs beside
    the solve (:class:`~rlopt.milp.reductions.Searches`). ``collaborators``: the MILP's
    solve, the screening and a block's solve (tests give fakes).
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
        za, zb = data.encoded.za, data.encoded.zb
        n_records = za.shape[0]
        if candidates is not None:
            candidates, reductions, searches = steps.restricted(candidates, reductions, searches, n_records)
        # with blocks the workers prove block ceilings: no hitting-set search beside them
        companion = (
            beside.companion(za, zb, family, margin, options, t0, blocks=blocks is None)
            if searches.parameter_bb
            else None
        )
        certificate = Certificate(n_records, t0=t0, progress=progress)
        if reductions.duplicate_cliques and margin > 0 and candidates is None:  # as the cliques' rows
            certificate.bounded(identical_records(za, zb).ceiling, IDENTICAL_RECORDS)
        run = _Run(
            data,
            family,
            za,
            zb,
            t0,
            margin,
            options,
            reductions,
            searches,
            candidates,
            companion,
            certificate,
        )
        run.budget, run.collaborators = Budget.of_run(t0, options.time_limit), collaborators
        run.peers = peers
        try:
            if blocks is not None:
                deadline = run.budget.block_deadline(time.time())
                solve = collaborators.solve_block or solve_block
                run.blocks = BlockSearch(data, family, margin, options, blocks, deadline, solve=solve)
            learned = _learn(run, big_c=big_c, on_mismatch=on_mismatch, export=export, known=known)
            if peers is not None:
                beside.published(run, learned[0])
            return learned
        finally:
            if companion is not None:
                companion.close()
            if run.blocks is not None:
                run.blocks.close()


def verify(
    data: LinkageData,
    family: LearnedFamily,
    result: LearnResult,
    *,
    options: SolverOptions,
    candidates: np.ndarray | None = None,
    solver: str = "auto",
) -> dict:
    """A second proof of ``result``'s interval by the plain model of docs/method.md:
    the MILP as written (uniform big-C, no reduction, no start, no search), solved anew
    within ``options`` by ``solver``: ``"scip"`` (the other solver, PySCIPOpt), ``"highs"``,
    or ``"auto"``: SCIP when installed, else HiGHS (``note`` then says so). Its own claim
    is recounted as any other.

    Returns ``{"method", "solver", "version", "status", "n_correct", "bound", "seconds",
    "agrees", "note"}``: ``agrees`` is true when the two intervals meet (both optimal: the
    same optimum), ``None`` when the plain model's interval, stopped by its limit,
    contains the claim without deciding it, false when they contradict (one of the two
    proofs is wrong). An unknown ``solver``, or ``"scip"`` without PySCIPOpt, is an
    :class:`~rlopt.exceptions.InputError`. Ctrl-C raises :class:`~rlopt.exceptions.Interrupted`
    whose ``partial`` is this answer so far (status ``interrupted``)."""
    name, t0 = verifying_solver(solver), time.perf_counter()
    fallback = solver == "auto" and name == "highs"
    try:
        plain, _ = learn(
            data,
            family,
            margin=result.margin,
            options=options,
            big_c="uniform",
            reductions=Reductions.none(),
            searches=Searches.none(),
            candidates=candidates,
            collaborators=Collaborators(solve=solve_model_scip) if name == "scip" else Collaborators(),
        )
    except KeyboardInterrupt as exc:  # Ctrl-C: the verification so far (never the claim's figure)
        so_far = getattr(exc, "partial", None)  # None: stopped before the solve
        seconds = time.perf_counter() - t0
        partial = _verification(result, so_far, name, fallback=fallback, seconds=seconds)
        raise Interrupted(f"{family.name}: verification interrupted", partial=partial) from None
    return _verification(result, plain, name, fallback=fallback, seconds=plain.seconds["total"])


def _verification(
    result: LearnResult, plain: LearnResult | None, solver: str, *, fallback: bool, seconds: float
) -> dict:
    """:func:`verify`'s answer: the plain model's interval by ``solver`` against the claim's
    (``plain`` ``None``: interrupted before it had one); ``fallback``: HiGHS because SCIP
    is not installed."""
    low, high = result.n_correct_verified, result.bound
    plain_low, plain_high = (None, None) if plain is None else (plain.n_correct_verified, plain.bound)
    contradicted = (high is not None and plain_low is not None and plain_low > high) or (
        low is not None and plain_high is not None and low > plain_high
    )
    decided = plain is not None and result.status == Status.OPTIMAL and plain.status == Status.OPTIMAL
    return {
        "method": "plain model (uniform big-C, no reduction, no start)",
        "solver": solver,
        "version": None if plain is None else plain.solver.get("version"),
        "status": str(Status.INTERRUPTED if plain is None else plain.status),
        "n_correct": plain_low,
        "bound": plain_high,
        "seconds": seconds,
        "agrees": False if contradicted else (True if decided else None),
        "note": f"SCIP is not installed ({INSTALL}): HiGHS, which made the claim, re-proved it"
        if fallback
        else None,
    }


def solve_block(
    data,
    family,
    margin: float,
    records: np.ndarray,
    deadline: float,
    limits: BlockLimits,
    strict: bool = False,
    *,
    learner: Callable[..., tuple[LearnResult, Distance | None]] | None = None,
) -> dict:
    """One block's MILP (in a worker; :class:`~rlopt.milp.ceilings.blocks.BlockSearch` is handed
    it): its records against every original, the others fixed as not re-identified;
    ``deadline`` on the wall clock (``time.time()``), shared by processes and machines.
    ``strict``: HiGHS's presolve off and a tenth of the feasibility tolerance, the second
    opinion on a contradicted bound; a block whose own parameter recounts above its bound
    gets it here at once. ``learner``: the learning run (:func:`learn`; a test's fake)."""
    learner = learn if learner is None else learner
    started = time.time()
    limit = min(limits.block_seconds, deadline - started)
    if limit < MIN_BLOCK_SECONDS:
        return unsolved("not_started", strict)
    n_records = data.original.shape[0]
    candidates = np.zeros((n_records, n_records), dtype=bool)
    candidates[records, :] = True
    tol = max(MIN_FEASIBILITY_TOL, limits.feasibility_tol / 10) if strict else limits.feasibility_tol
    try:
        result, _ = learner(
            data,
            family,
            margin=margin,
            options=SolverOptions(time_limit=limit, feasibility_tol=tol, presolve=not strict),
            candidates=candidates,
            searches=Searches().quick(),
        )
    except RecountMismatchError as exc:  # its own parameter above its bound
        if strict:
            return unsolved(f"contradicted: {exc}", strict)
        return solve_block(data, family, margin, records, deadline, limits, strict=True, learner=learner)
    return {
        "status": str(result.status),
        "bound": result.bound,
        "verified": result.n_correct_verified,
        "seconds": time.time() - started,
        "strict": strict,
    }


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
    searches: Searches
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
    reduced: list[steps.Reduced] = field(default_factory=list)
    budget: Budget = field(default_factory=lambda: Budget(0.0, None))  # every share of the limit
    collaborators: Collaborators = field(default_factory=Collaborators)
    largest_tol: float = 0.0  # the loosest tolerance a count of the run was made at
    blocks: BlockSearch | None = None  # the block ceilings proven beside the run
    peers: Peers | None = None  # the runs racing this one
    starts: list[Incumbent] = field(default_factory=list)  # the pass's verified starts
    final: bool = True  # the run's last pass (not a quick pass that a full pass may follow)

    @property
    def n_records(self) -> int:
        return self.za.shape[0]

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
        """What runs beside the solve heard (:func:`rlopt.milp.beside.listen`); true when a
        ceiling it proved meets the verified lower end."""
        return beside.listen(self)

    @property
    def screen(self) -> Callable:
        return self.collaborators.screen


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
            budget=run.budget.with_limit(quick),
            searches=run.searches.quick(),
            final=False,
        )
        result, distance = _pass(quick_run, big_c=big_c, on_mismatch=on_mismatch, export=export, known=known)
        quick_seconds = result.seconds["total"]
        if result.status in (Status.OPTIMAL, Status.DECIDED):  # proven, or the target answered
            result.seconds["quick"] = quick_seconds
            return result, distance
        if distance is not None:  # its verified parameter stays a start (and is kept)
            known = [*known, (result.lower_source or "solver", distance)]
        lower, upper = result.n_correct_verified or 0, result.bound
        if upper is not None and upper - lower <= NARROW_RECORDS:
            # a search could add at most these few records: the time goes to the proof
            run = dataclasses.replace(run, searches=run.searches.quick())
    result, distance = _pass(run, big_c=big_c, on_mismatch=on_mismatch, export=export, known=known)
    result.seconds["quick"] = quick_seconds  # the other steps' seconds are the full pass's
    return result, distance


def _quick_budget(run: _Run) -> float | None:
    """The quick pass's seconds (``None``: no quick pass, :meth:`Budget.quick_pass`), when
    searches would run and candidates do not restrict the linkage."""
    searching = run.searches.names() or run.searches.nca_start
    if not (run.searches.quick_solve and searching) or run.candidates is not None:
        return None
    return run.budget.quick_pass()


def _pass(
    run: _Run,
    *,
    big_c: str | float,
    on_mismatch: str,
    export: str | Path | None,
    known: Sequence[tuple[str, Distance]],
) -> tuple[LearnResult, Distance | None]:
    t_search = time.perf_counter()
    starts = steps.starts(run, known)
    search_seconds = time.perf_counter() - t_search
    closed = run.listen()  # the branch and bound proved the optimum already: the MILP only confirms
    reduced = steps.reduce(run, starts, skip_conflicts=closed)
    run.listen()
    size = largest_big_c(run.za, run.zb, run.family, margin=run.margin) if big_c == "uniform" else big_c
    built = steps.build(run, reduced, size, export)
    recount_seconds = steps.recount_seconds(starts, reduced)
    t_search = time.perf_counter()
    starts = steps.search(run, starts, reduced, built, recount_seconds)
    search_seconds += time.perf_counter() - t_search
    starts = steps.with_screening_start(run, starts, reduced, built.tol)
    run.starts = starts  # their counts check the blocks finished during the solve
    start = steps.start_function(run, starts, reduced, built.lazy_rows)
    solved = _solve(run, built, start, built.tol, recount_seconds)
    run.listen()
    if built.lazy_rows is not None:
        built.info.n_linkage_rows += built.lazy_rows.rows_added
    if solved.termination in (Termination.INFEASIBLE, Termination.ERROR):
        # sum K = N (no record re-identified) is always feasible when the family's
        # admissible set is not empty: nothing this solve returned is a figure
        hint = (
            f" (big_c={size:g} is below what some pairs need)"
            if not isinstance(big_c, str) and solved.termination == Termination.INFEASIBLE
            else ""
        )
        raise SolverError(
            f"{run.family.name}: {SOLVER_NAMES.get(str(solved.solver.get('name')), 'HiGHS')} ended with status "
            f"{str(solved.termination)!r}{hint}; no "
            "count is reported from a failed solve"
        )
    starts = sorted(starts + run.kept, key=lambda item: -item.count)
    ceiling, interrupted = None, solved.interrupted
    if solved.termination != Termination.OPTIMAL and run.blocks is not None and run.final:
        ceiling, stopped_waiting = beside.block_ceiling(run, run.blocks, starts, wait=not interrupted)
        interrupted = interrupted or stopped_waiting
    result, distance = conclude(run, solved, starts, reduced, built, on_mismatch)
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


def _solve(run: _Run, built: steps.Built, start: Callable | None, tol: float, recount: float) -> SolveResult:
    """The MILP, within what is left of the time limit (the limit covers the whole fit)
    less the conclusion's share (:meth:`Budget.solve_limit`; ``recount``: the seconds of
    one recount of every pair), its improving solutions recounted into the certificate;
    stopped when a ceiling beside it meets a verified count. Not started when the model
    could not even be loaded in what is left."""
    limit = run.budget.limit
    time_limit, started = run.budget.solve_limit(time.perf_counter(), built.seconds, recount)
    options = run.options if limit is None else dataclasses.replace(run.options, time_limit=time_limit)
    if run.options.decided(run.certificate.lower, run.certificate.upper):  # the target is answered
        solved = not_started(options, why="the interval already answers the target")
    else:
        solved = _solved(run, built, options, start, tol) if started else not_started(options)
    run.listen()
    solved.solver["time_limit"] = limit
    if run.companion is not None:  # what the search beside it had reached
        result = run.companion.result
        solved.solver[run.companion.key] = {
            "upper": run.companion.upper,
            **({} if result is None else result.to_dict()),
        }
    return solved


def _solved(
    run: _Run, built: steps.Built, options: SolverOptions, start: Callable | None, tol: float
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

    return run.collaborators.solve(
        built.model,
        options,
        separate=built.separate,
        start=start,
        carry_bound=run.reductions.carry_rounds,
        on_improve=on_improve,
        stop_when=run.listen if beside.heard_from(run) else None,
    )
