"""The steps of a pass, in the order it runs them, each bounded by the run's budget.

1. :func:`starts`: the neutral parameter, every parameter the caller knows that the
   family contains, MD's and NCA's matrices, recounted (:mod:`rlopt.milp.incumbents.portfolio`);
2. :func:`reduce`: screening LPs (records no parameter re-identifies), conflicting pairs
   (:mod:`rlopt.milp.reductions`), a complete earlier phase reused;
3. :func:`build`: the model (:mod:`rlopt.milp.formulation`) with per-row big-C and lazy
   linkage rows, and the separation of each round;
4. :func:`search`: the incumbent searches from the starts, ending early enough for the
   model to be loaded and solved within the limit; :func:`with_screening_start`;
5. :func:`start_function`: the MIP start of each round of the solve.

Each takes the pass's run (:class:`rlopt.milp.pipeline._Run`): its files, family,
options, budget and certificate.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rlopt.exceptions import InputError
from rlopt.families import Distance
from rlopt.families.containment import embed
from rlopt.milp.budget import SEARCH_SHARE
from rlopt.milp.formulation import ModelInfo, build_model
from rlopt.milp.incumbents.portfolio import Incumbent, search_incumbents
from rlopt.milp.reductions import (
    LazyLinkageRows,
    Reductions,
    Screening,
    Searches,
    best_start,
    duplicate_groups,
    find_conflicts,
    nearest_pairs,
    start_from,
)
from rlopt.milp.solvers.mip import export_model
from rlopt.milp.solvers.options import Cut

__all__ = [
    "restricted",
    "Reduced",
    "Built",
    "starts",
    "reduce",
    "build",
    "search",
    "with_screening_start",
    "start_function",
]


@dataclass
class Reduced:
    """The exact reductions' outcome: records fixed as not re-identified, the screening
    (records at risk), pairs of records no parameter re-identifies together."""

    fixed: np.ndarray
    screening: Screening | None = None
    conflicts: np.ndarray | None = None
    deadline: float | None = None
    seconds: float = 0.0
    complete: bool = False  # every step ran to its end (none stopped by the deadline or skipped)


@dataclass
class Built:
    """The model and what its solve needs: lazy linkage rows and the round's separation."""

    model: object
    info: ModelInfo
    lazy_rows: LazyLinkageRows | None
    separate: Callable | None
    tol: float  # the recount tolerance of a model with this big-C
    seconds: float


def starts(run, known: Sequence[tuple[str, Distance]]) -> list[Incumbent]:
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
        deadline=run.budget.deadline(SEARCH_SHARE),
        candidates=run.candidates,
        quadratic=True,
        nca=run.searches.nca_start,
        found=run.found,
    )


def search(run, starts: list[Incumbent], reduced: Reduced, built: Built, recount: float) -> list[Incumbent]:
    """The portfolio's searches from the starts (:mod:`rlopt.milp.incumbents.portfolio`), once
    the model is built: they end by ``SEARCH_SHARE`` of the limit (plus what this pass's
    reduce phase and model took), and early enough for their last result to be recounted
    (``recount`` seconds), the screening's start to be tried, the model to be loaded and
    solved a little and the result concluded within the limit."""
    searches = run.searches.names()
    if not (searches and starts) or run.candidates is not None:
        return starts
    deadline = run.budget.search_deadline(recount, reduced.seconds, built.seconds)
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


def reduce(run, starts: list[Incumbent], *, skip_conflicts: bool) -> Reduced:
    """Screening (records no parameter re-identifies are fixed) and conflicts, within
    the budget's reduce deadline (:meth:`~rlopt.milp.budget.Budget.reduce_deadline`)
    (stopping them early is exact). A complete reduce phase of an earlier pass is reused;
    an incomplete one's screening is continued."""
    t_reduce = time.perf_counter()
    earlier = run.reduced[-1] if run.reduced else None
    if earlier is not None and earlier.complete:
        reduced = dataclasses.replace(earlier, seconds=0.0)
        run.reduced.append(reduced)
        return reduced
    reduced = Reduced(
        fixed=np.zeros(run.n_records, dtype=bool) if run.candidates is None else ~run.candidates.diagonal(),
        # its share, and never past REDUCE_END of the limit: what the steps before it
        # overran is taken from here, not from the limit
        deadline=run.budget.reduce_deadline(t_reduce, sum(r.seconds for r in run.reduced)),
    )
    reductions, options = run.reductions, run.options
    if reductions.fix_unreachable or reductions.conflicts:
        # records the best start re-identifies need no LP (any admissible parameter would do)
        known = starts[0].theta if starts else run.family.neutral(run.za.shape[1])
        reduced.screening = run.screen(
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


def build(run, reduced: Reduced, big_c: str | float, export: str | Path | None) -> Built:
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
    return Built(model, info, lazy_rows, separate, tol, time.perf_counter() - t_build)


def with_screening_start(run, starts: list[Incumbent], reduced: Reduced, tol: float) -> list[Incumbent]:
    """The screening LPs' best parameter joins the starts when it is a new one."""
    if not run.reductions.warm_start or run.family.has_cuts or reduced.screening is None:
        return starts
    # its own short window: the reduce phase's has passed (the searches ran since)
    window = run.budget.window(time.perf_counter())
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


def start_function(
    run, starts: list[Incumbent], reduced: Reduced, lazy_rows: LazyLinkageRows | None
) -> Callable | None:
    """The MIP start of each round: the best start first, then the last round's parameter
    (completed against every original when lazy rows are carried)."""
    if not run.reductions.warm_start:
        return None
    family, za, zb = run.family, run.za, run.zb
    first = starts[0].theta if starts else family.neutral(za.shape[1])
    carry = lazy_rows if run.reductions.carry_rounds else None
    fit_deadline = run.budget.deadline()

    def start(previous, previous_k):
        not_admissible = previous is not None and family.has_cuts and family.separate(previous, za, zb)
        theta = first if previous is None or not_admissible else previous
        if previous is not None and carry is not None:
            # the records the last round counted, re-identified against every original
            completed = carry.complete(previous_k, deadline=fit_deadline)
            theta = theta if completed is None else completed
        return start_from(za, zb, family, theta, margin=run.margin, fixed=reduced.fixed)

    return start


def recount_seconds(starts: list[Incumbent], reduced: Reduced) -> float:
    """What one recount of every pair takes, as measured in this pass."""
    screening = reduced.screening
    return max(
        max((item.seconds for item in starts), default=0.0),
        0.0 if screening is None else screening.evaluation_seconds,
    )


def restricted(
    candidates, reductions: Reductions, searches: Searches, n_records: int
) -> tuple[np.ndarray, Reductions, Searches]:
    """The candidate matrix checked, and the reductions and the branch and bound that
    look at all pairs switched off."""
    candidates = np.asarray(candidates)
    if candidates.shape != (n_records, n_records) or candidates.dtype != bool:
        raise InputError(
            f"candidates of shape {candidates.shape} and dtype {candidates.dtype}; "
            f"expected a boolean ({n_records}, {n_records}) matrix"
        )
    off = dict(fix_unreachable=False, conflicts=False, lazy=False, warm_start=False)
    return (
        candidates,
        dataclasses.replace(reductions, **off),
        dataclasses.replace(searches, parameter_bb=False),
    )
