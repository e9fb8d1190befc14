"""The conclusion of a pass: the solver's claim turned into a verified interval.

The solver returns a claim (its incumbent count, its bound, a parameter). Nothing of
it is reported as it stands:

1. :func:`solver_figures`: the status, the parameter (repaired where it violates a
   family cut), the claim and the bound, the bound also capped by every ceiling the run
   proved beside the solve;
2. :func:`checked_claim`: the solver's parameter recounted (every pair, plain numpy,
   within the recount's tolerance): a recount below the claim is a mismatch;
3. :func:`at_the_margin`: the lower end, the best count *at the exact margin* among the
   solver's parameter and every start, a parameter that the solver or a search left on
   the margin moved off it first (:func:`~rlopt.milp.incumbents.exact.reach_margin`): the
   parameter returned re-identifies the verified count at the margin itself;
4. :func:`closed`: the two ends compared: ``optimal`` wherever they meet, an interval
   wherever they do not, a count above a proven bound a mismatch.

Each is a plain function of a :class:`~rlopt.milp.solvers.options.SolveResult`, the
incumbents and the certificate's figures (tests/milp/test_conclude.py has the table of
every status transition); :func:`conclude` runs them for a pass and builds the
:class:`~rlopt.results.LearnResult`.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from rlopt.exceptions import DataWarning, RecountMismatchError
from rlopt.families import LearnedFamily
from rlopt.milp.incumbents.exact import reach_margin
from rlopt.milp.incumbents.portfolio import Incumbent
from rlopt.milp.solvers.options import SolveResult, Termination
from rlopt.results import LearnResult
from rlopt.status import Status

__all__ = [
    "conclude",
    "solver_figures",
    "checked_claim",
    "at_the_margin",
    "closed",
    "check_stopped",
    "answered",
    "repaired",
    "FIGURE_STATUS",
    "REPAIRS",
]

FIGURE_STATUS = {
    Termination.OPTIMAL: Status.OPTIMAL,
    Termination.TIME_LIMIT: Status.TIME_LIMIT,
    Termination.INTERRUPTED: Status.INTERRUPTED,
    Termination.STOPPED: Status.TIME_LIMIT,  # an interval until the two ends are seen to meet
}
"""The figure's status a solve's termination starts from (``infeasible`` and ``error``
never reach the conclusion: the pass raises). :func:`closed` then makes it ``optimal``
where the two ends meet, ``gap_limit`` where they do not though the solver proved."""

REPAIRS = 2
"""Parameters at most that the conclusion moves to reach the margin (the best ones that
fall short of their count within the recount's tolerance)."""


def conclude(run, solved: SolveResult, starts: list[Incumbent], reduced, built, on_mismatch: str):
    """The pass's result ``(LearnResult, distance)``: the solver's figures checked by the
    recount and compared with every start; the status ``optimal`` wherever the two ends
    meet. ``run`` is the pass's :class:`rlopt.milp.pipeline._Run`."""
    family, n_records = run.family, run.n_records
    mismatch = _mismatch(on_mismatch)
    screening = reduced.screening
    ceilings = [
        None if screening is None else screening.n_at_risk,  # over-approximates where not exact: a bound
        None if run.companion is None else run.companion.upper,
        run.certificate.upper,  # a ceiling proven earlier in the run (a quick pass's)
    ]
    tol = run.options.feasibility_tol
    status, theta, claimed, bound = solver_figures(
        solved, n_records, ceilings=ceilings, family=family, za=run.za, zb=run.zb, feasibility_tol=tol
    )
    solver = None
    if theta is not None:
        # the check of the solver's claim: every pair, plain numpy, independent of any search structure
        solver = run.incumbent("solver", theta, built.tol, method="brute")
        run.remember(solver)
        claimed = checked_claim(
            family.name,
            run.margin,
            status,
            claimed,
            solver.count,
            relaxed=built.separate is not None,
            rel_gap=run.options.rel_gap,
            mismatch=mismatch,
        )
    deadline = run.budget.conclude_deadline(time.perf_counter())
    candidates = [*starts, *([] if solver is None else [solver])]
    best = at_the_margin(candidates, lambda item: _moved(run, item, built.tol, deadline))
    best = credited(best, candidates, run.certificate.lower, run.certificate.lower_source)
    verified = None if best is None else best.exact_count
    if best is not None:
        run.remember(best)  # a later pass keeps it as it was counted
        theta = best.theta
    distance = None if theta is None else family.distance(theta, run.data.columns)
    status, bound, claimed = closed(family.name, run.margin, status, bound, claimed, verified, mismatch)
    status = answered(status, verified, bound, run.options)
    check_stopped(family.name, solved.termination, status, verified, bound)
    _warn_if_the_margin_hides_all(family.name, run.margin, verified, starts)
    if best is not None:
        run.certificate.found(best.exact_count, best.label)
    run.certificate.bounded(bound, "proven optimum" if status == Status.OPTIMAL else "MILP bound")
    return _result(run, solved, built, screening, best, (status, bound, claimed), distance), distance


def _result(run, solved: SolveResult, built, screening, best: Incumbent | None, ends: tuple, distance):
    """The pass's :class:`~rlopt.results.LearnResult` (its seconds filled by the pass);
    ``ends``: ``(status, bound, claimed)``."""
    family, (status, bound, claimed) = run.family, ends
    verified = None if best is None else best.exact_count
    return LearnResult(
        family=family.name,
        n_records=run.n_records,
        claimed=claimed,
        n_correct_verified=verified,
        n_correct_strict=None if best is None else best.linked.n_correct,
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
        correct=None if best is None else best.exact,
        reductions={**run.reductions.to_dict(), **run.searches.to_dict()},  # the JSON keeps both
        at_risk=None if screening is None else screening.at_risk,
        at_risk_exact=None if screening is None else bool(screening.exact.all()),
        lower_source=None if best is None else best.label,
        history=run.certificate.to_list(),
    )


def solver_figures(
    solved: SolveResult,
    n_records: int,
    *,
    ceilings: Sequence[int | None] = (),
    family: LearnedFamily,
    za: np.ndarray,
    zb: np.ndarray,
    feasibility_tol: float,
) -> tuple[str, np.ndarray | None, int | None, int]:
    """``(status, theta, claimed, bound)`` as the solve left them: the bound also capped by
    ``ceilings`` (``None``: none); a parameter that violates a family cut repaired (only a
    repaired one gives a count). ``claimed`` is the solver's count, unverified; ``status``
    the figure's, from the solver's termination (:data:`FIGURE_STATUS`)."""
    theta, status = solved.theta, FIGURE_STATUS[solved.termination]
    claimed = None if solved.incumbent is None else n_records - int(round(solved.incumbent))
    bound = (
        n_records
        if solved.objective_bound is None
        else n_records - int(math.ceil(solved.objective_bound - 1e-6))
    )
    bound = min([bound, *(ceiling for ceiling in ceilings if ceiling is not None)])
    if status == Status.OPTIMAL and solved.cut_cap_hit:
        status = Status.CUT_LIMIT  # the relaxed optimum bounds the family; repair theta for a count
        theta = repaired(family, theta, za, zb, feasibility_tol) if family.has_cuts else theta
        claimed = None
    elif (
        status != Status.OPTIMAL and family.has_cuts and theta is not None and family.separate(theta, za, zb)
    ):
        theta = repaired(family, theta, za, zb, feasibility_tol)
    return status, theta, claimed, bound


def checked_claim(
    name: str,
    margin: float,
    status: str,
    claimed: int | None,
    recounted: int,
    *,
    relaxed: bool,
    rel_gap: float,
    mismatch: Callable[[str], None],
) -> int | None:
    """The claim once the solver's parameter is recounted (``recounted`` records within
    the recount's tolerance): a solve stopped before every lazy row or cut was in
    (``relaxed``, not optimal) claims what its parameter really achieves; a recount below
    the claim, or other than a proven optimum, is a mismatch."""
    if relaxed and status != Status.OPTIMAL:
        claimed = recounted  # the incumbent is one of a relaxation
    proven = status == Status.OPTIMAL and rel_gap == 0  # else K_i = 1 may hide one
    if claimed is not None and (recounted < claimed or (proven and recounted != claimed)):
        mismatch(
            f"{name}: the solver claims {claimed} correct re-identifications "
            f"but the independent recount of its parameters at margin {margin:g} "
            f"finds {recounted}"
        )
    return claimed


def at_the_margin(
    items: Sequence[Incumbent], move: Callable[[Incumbent], Incumbent | None] | None = None
) -> Incumbent | None:
    """The item of most records re-identified at the exact margin (the first of a tie:
    a start before the solver's parameter), after ``move`` (a parameter moved off the
    margin, recounted; ``None``: none found) of the best ones, at most :data:`REPAIRS`,
    whose count within the recount's tolerance is higher than that."""
    if not items:
        return None
    best = max(items, key=lambda item: item.exact_count)
    short = [item for item in items if item.exact_count < item.count]
    for item in sorted(short, key=lambda item: -item.count)[: REPAIRS if move is not None else 0]:
        if item.count <= best.exact_count:
            break
        moved = move(item) if move is not None else None
        if moved is not None and moved.exact_count > best.exact_count:
            best = moved
    return best


def credited(
    best: Incumbent | None, items: Sequence[Incumbent], lower: int | None, source: str | None
) -> Incumbent | None:
    """Of the parameters tied with ``best`` at the exact margin, the one the history
    credits (``source``, the first to reach the lower end ``lower``), so that the
    history, the summary and the parameter shown name one step; ``best`` when it is
    above the history's lower end or none of the tied ones is that step's."""
    if best is None or best.exact_count != lower or best.label == source:
        return best
    tied = (item for item in items if item.label == source and item.exact_count == best.exact_count)
    return next(tied, best)


def closed(
    name: str,
    margin: float,
    status: str,
    bound: int,
    claimed: int | None,
    verified: int | None,
    mismatch: Callable[[str], None],
) -> tuple[str, int, int | None]:
    """``(status, bound, claimed)`` once the two ends are compared: ``optimal`` wherever
    they meet (then ``claimed`` is the optimum), ``gap_limit`` for a solve stopped at a
    relative gap, or whose optimum no parameter found reaches at the exact margin; a
    count above a proven bound is a mismatch."""
    if status == Status.OPTIMAL and claimed is not None and bound > claimed:
        status = Status.GAP_LIMIT  # stopped at a relative gap > 0: an interval, not the optimum
    if status == Status.OPTIMAL and claimed is not None:
        bound = min(bound, claimed)
    if verified is not None and verified > bound:
        mismatch(
            f"{name}: a parameter re-identifies {verified} records at margin {margin:g}, "
            f"more than the proven bound {bound} (the solver's, or a ceiling proven beside it)"
        )
    if status == Status.OPTIMAL and verified is not None and verified < bound:
        # the solver's optimum holds within its tolerance, but no parameter found reaches
        # it at the exact margin: an interval
        status = Status.GAP_LIMIT
    if status != Status.OPTIMAL and verified is not None and verified == bound:
        status = Status.OPTIMAL  # the interval closed: the verified count is the proven optimum
    if status == Status.OPTIMAL and verified is not None:
        claimed = verified  # the proven optimum (the solver may have been stopped before it)
    return status, bound, claimed


def answered(status: str, verified: int | None, bound: int, options) -> str:
    """``decided`` for an interval that answers the run's target (``options.target``:
    ``verified >= target`` or ``bound < target``; :meth:`SolverOptions.decided`), however
    the run ended short of the optimum (its limit, a stop, no solve at all); a proof or
    a Ctrl-C keeps its status."""
    if Status(status).is_interval and status != Status.INTERRUPTED and options.decided(verified, bound):
        return Status.DECIDED
    return status


def check_stopped(name: str, termination: Termination, status: str, verified: int | None, bound: int) -> None:
    """The solver is stopped only when a ceiling beside it met a verified count, or the
    interval answered the run's target: a stopped solve whose interval did neither is a
    bug, never a figure."""
    if termination == Termination.STOPPED and status not in (Status.OPTIMAL, Status.DECIDED):
        raise RuntimeError(
            f"{name}: the MILP was stopped for a closed interval that did not close ([{verified}, {bound}])"
        )


def repaired(family: LearnedFamily, theta, za, zb, tol: float) -> np.ndarray | None:
    """The family's repair of ``theta``, when it is admissible; else ``None`` (no count)."""
    theta = None if theta is None else family.repair(theta)
    return theta if theta is not None and family.is_admissible(theta, za, zb, tol=tol) else None


def _moved(run, item: Incumbent, tol: float, deadline: float | None) -> Incumbent | None:
    """``item``'s parameter moved off the margin over the records it counts, recounted."""
    family, tol_lp = run.family, run.options.feasibility_tol
    theta = reach_margin(
        run.za,
        run.zb,
        family,
        item.theta,
        item.correct,
        margin=run.margin,
        feasibility_tol=tol_lp,
        candidates=run.candidates,
        deadline=deadline,
    )
    if theta is not None and not family.is_admissible(theta, run.za, run.zb, tol=tol_lp):
        theta = repaired(family, theta, run.za, run.zb, tol_lp)
    return None if theta is None else run.incumbent(item.label, theta, tol, method="brute")


def _mismatch(on_mismatch: str) -> Callable[[str], None]:
    def mismatch(message: str) -> None:
        if on_mismatch == "raise":
            raise RecountMismatchError(message)
        warnings.warn(message, RuntimeWarning, stacklevel=5)

    return mismatch


def _warn_if_the_margin_hides_all(name: str, margin: float, verified: int | None, starts) -> None:
    strict_best = max(starts, key=lambda item: item.linked.n_correct, default=None)
    if verified == 0 and margin > 0 and strict_best is not None and strict_best.linked.n_correct:
        warnings.warn(
            f"{name}: no record is re-identified at margin {margin:g}, "
            f"though the {strict_best.label} re-identifies {strict_best.linked.n_correct} "
            "strictly: the margin is in units of the distance on z-scores (squared "
            "standard deviations); expected a small margin such as 1e-5",
            DataWarning,
            stacklevel=5,
        )


def _options(family: LearnedFamily) -> dict:
    return {"options": dict(family.options)} if family.options else {}
