"""The membership attack itself (docs/method.md §9): the three files standardised
together, each family's search, region search and MILP, the fixed Euclidean attack, and
:func:`membership_risk`, which runs them and the calibration
(:mod:`rlopt.risk.membership.calibration`)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from rlopt.data._standardise import DEFAULT_CHUNK_BYTES, Standardisation, chunk_rows
from rlopt.exceptions import InputError, RecountMismatchError
from rlopt.families import Distance, get_learned_family
from rlopt.milp.solvers.options import Termination
from rlopt.risk.membership.calibration import (
    Anchor,
    Fit,
    OutOfSample,
    check_folds,
    check_permutations,
    cross_fitted,
    permutation_null,
)
from rlopt.risk.membership.regions import best_threshold
from rlopt.risk.membership.result import Attack, FamilyFigure, MembershipRisk
from rlopt.status import Status

__all__ = [
    "MILP_PAIRS",
    "euclidean",
    "set_aside",
    "split_release",
    "fit",
    "distances",
    "membership_risk",
    "recount",
    "standardised",
]

MILP_PAIRS = 250_000
"""The most (member + held-out) x synthetic record pairs a family's MILP is built for;
above it only the region search bounds the family (a family of more than
:data:`REGION_PARAMS` parameters then has the trivial ceiling 1)."""

SEARCH_DRAWS = 48
"""Random parameters (Dirichlet, seeded) the search recounts besides the neutral one and
the simplex's vertices."""


def split_release(
    frame: pd.DataFrame,
    spec,
    *,
    holdout_share: float,
    seed: int = 0,
    columns: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(members, holdout, synthetic)``: ``frame``'s records split at random (``seed``)
    with ``holdout_share`` of them held out, and the members given to ``spec`` (a fully
    synthetic generator of the masking registry, or any object whose ``apply(frame,
    columns)`` returns a synthetic file)."""
    if not (isinstance(holdout_share, (int, float)) and 0 < holdout_share < 1):
        why = (
            "a share of 1 or more leaves no record to train the generator"
            if isinstance(holdout_share, (int, float)) and holdout_share >= 1
            else "the records kept out of the generator's training are the attack's non-members, "
            "and without them no false-positive rate exists"
        )
        raise InputError(f"held-out share {holdout_share!r}; expected a share in (0, 1): {why}")
    n = len(frame)
    n_holdout = int(round(holdout_share * n))
    if n_holdout < 2 or n - n_holdout < 2:
        raise InputError(
            f"held-out share {holdout_share:g} of {n} records leaves {n_holdout} held out and "
            f"{n - n_holdout} members; expected at least 2 of each"
        )
    order = np.random.default_rng(seed).permutation(n)
    holdout = frame.iloc[np.sort(order[:n_holdout])].reset_index(drop=True)
    members = frame.iloc[np.sort(order[n_holdout:])].reset_index(drop=True)
    synthetic = spec.apply(members, list(columns) if columns else None)
    return members, holdout, synthetic


def set_aside(
    frame: pd.DataFrame, share: float | None, *, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """``(the rest, the reserve)``: ``share`` of ``frame``'s records drawn at random
    (``seed``) and set aside as the ideal release (real records no generator sees);
    ``share`` ``None`` or 0: no reserve."""
    if share is None or share == 0:
        return frame, None
    if not (isinstance(share, (int, float)) and 0 < share < 1):
        raise InputError(f"reserve share {share!r}; expected a share in (0, 1)")
    n_reserve = int(round(share * len(frame)))
    if n_reserve < 2 or len(frame) - n_reserve < 4:
        raise InputError(
            f"reserve share {share:g} of {len(frame)} records sets aside {n_reserve}; expected at least 2 "
            "set aside and 4 left to split"
        )
    order = np.random.default_rng([seed, 53]).permutation(len(frame))
    reserve = frame.iloc[np.sort(order[:n_reserve])].reset_index(drop=True)
    return frame.iloc[np.sort(order[n_reserve:])].reset_index(drop=True), reserve


def _numeric(frame: pd.DataFrame, columns: Sequence[str], name: str) -> np.ndarray:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(
            f"{name}: column(s) {missing} not in the file; its columns: {list(map(str, frame.columns))}"
        )
    for c in columns:
        if not pd.api.types.is_numeric_dtype(frame[c]):
            raise InputError(
                f"{name}: column {c!r} is not numeric; the membership attack takes numeric "
                "attributes (choose them with --columns, Python: columns=[...])"
            )
    values = frame[list(columns)].to_numpy(dtype=np.float64)
    if not np.isfinite(values).all():
        raise InputError(f"{name}: a blank or non-finite value in {list(columns)}; expected finite numbers")
    if len(values) < 2:
        raise InputError(f"{name}: {len(values)} record(s); expected at least 2")
    return values


def standardised(
    members: np.ndarray, holdout: np.ndarray, synthetic: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The z-scores of the three files by the moments of their records together: each
    then lies within ``sqrt(n)`` of 0 (``n`` the records of the three), so the models stay
    well conditioned where one file's column is nearly constant. (By the synthetic file's
    moments alone, a synthetic column of sd 1e-5 put the members' z-scores at 1e5 and the
    MILP's features at 1e10, and HiGHS called the model infeasible.) wm's and wm_m's
    figures do not depend on the scaling; owa's distances do, as they do on any."""
    scaling = Standardisation.fit(np.vstack([members, holdout, synthetic]))
    return tuple(  # type: ignore[return-value]
        scaling.apply(values, name=name)
        for name, values in (("members", members), ("held-out", holdout), ("synthetic", synthetic))
    )


def nearest(distance: Distance, records: np.ndarray, synthetic: np.ndarray) -> np.ndarray:
    """Each record's distance to its nearest synthetic record (in chunks of rows)."""
    step = chunk_rows(synthetic.shape[0], synthetic.shape[1], max_bytes=DEFAULT_CHUNK_BYTES)
    out = np.empty(records.shape[0])
    for start in range(0, records.shape[0], step):
        out[start : start + step] = distance.pairwise(records[start : start + step], synthetic).min(axis=1)
    return out


def recount(
    family_name: str, distance: Distance, members: np.ndarray, holdout: np.ndarray, synthetic: np.ndarray
) -> Attack:
    """The attack of ``distance`` counted in plain numpy at its best threshold."""
    member_d, holdout_d = nearest(distance, members, synthetic), nearest(distance, holdout, synthetic)
    return _attack(family_name, distance.params(), member_d, holdout_d)


def _attack(family_name: str, params: dict, member_d: np.ndarray, holdout_d: np.ndarray) -> Attack:
    """The attack at its best threshold of the nearest distances ``member_d`` and ``holdout_d``."""
    threshold, units, tp, fp = best_threshold(member_d, holdout_d)
    n_m, n_h = member_d.size, holdout_d.size
    return Attack(family_name, params, threshold, units, tp / n_m, fp / n_h, units / (n_m * n_h))


def _search(family, columns, members, holdout, synthetic, seed: int) -> Attack:
    """The best recounted attack of the neutral parameter, the simplex's vertices and
    :data:`SEARCH_DRAWS` seeded random parameters of ``family``."""
    n = len(columns)
    vertices = family.simplex_vertices(n)
    rng = np.random.default_rng(seed)
    candidates = [
        family.neutral(n),
        *vertices,
        *(rng.dirichlet(np.ones(len(vertices)), SEARCH_DRAWS) @ vertices),
    ]
    first = recount(family.name, family.distance(candidates[0], columns), members, holdout, synthetic)
    return _best_of(family, columns, candidates[1:], first, members, holdout, synthetic)


def _drawn(family, columns, members, holdout, synthetic, lower: Attack, deadline, seed: int) -> Attack:
    """``lower`` or a better recounted attack of random parameters (Dirichlet, seeded,
    after the search's) drawn until ``deadline`` (none: one more batch)."""
    vertices = family.simplex_vertices(len(columns))
    rng = np.random.default_rng([seed, 1])
    while True:
        drawn = rng.dirichlet(np.ones(len(vertices)), 8) @ vertices
        lower = _best_of(family, columns, drawn, lower, members, holdout, synthetic)
        if deadline is None or time.perf_counter() > deadline:
            return lower


REGION_PARAMS = 6
"""Families with at most this many parameters get the region search
(:mod:`rlopt.risk.membership.regions`) before the MILP."""

REGION_SHARE = 0.8
"""The share of a family's time limit the region search may take when the MILP follows:
in the 20 family runs of ``benchmarks/bench_membership.py`` (Census and EIA, 300 x 3) the
MILP's ceiling, with half of the limit, never came below the region search's."""

MILP_CHECK_SECONDS = 30.0
"""The most seconds the MILP's check of a proven family takes (a check stopped by it says
so in the family's ``model``; the family stays proven by the region search)."""

MILP_CHECK_PAIRS = 20_000
"""After the region search has proven a family, the MILP re-proves it (a second, independent
ceiling) on files of at most this many (member + held-out) x synthetic record pairs; above,
it would spend the rest of the limit to confirm what is proven."""


def _solve_family(
    family, columns, members, holdout, synthetic, start: Attack, options, jobs: int = 1, check: bool = True
) -> FamilyFigure:
    """The family's worst case: the region search (few parameters), then the MILP in the
    time left (up to :data:`MILP_PAIRS`); every parameter either finds is recounted, and the
    lower of their ceilings is the family's. ``check`` False: no MILP re-proves what the
    region search proved (a cross-fitting fold reads only the attack)."""
    t0 = time.perf_counter()
    deadline = None if options.time_limit is None else t0 + options.time_limit
    n_m, n_h, n_s = members.shape[0], holdout.shape[0], synthetic.shape[0]
    scale = n_m * n_h
    n_params = family.n_params(len(columns))
    lower, interrupted, limited = start, False, False  # limited: a search stopped by the time limit
    ceilings: dict[str, int] = {}
    notes: dict[str, object] = {}
    if n_params <= REGION_PARAMS:
        milp_too = (n_m + n_h) * n_s <= MILP_PAIRS
        share = None if deadline is None else t0 + (deadline - t0) * (REGION_SHARE if milp_too else 1.0)
        found = _regions(family, columns, members, holdout, synthetic, start, share, jobs)
        limited = share is not None and not found.proven and time.perf_counter() >= share
        lower = _recounted(family, columns, found.best_theta, lower, members, holdout, synthetic)
        if lower.units < found.best_units:  # its count rested on a tie the recount breaks otherwise
            lower = _off_ties(
                family, columns, found.best_theta, lower, members, holdout, synthetic, options.seed
            )
        ceilings["regions"] = found.ceiling_units
        notes["regions"] = {"regions": found.regions, "seconds": found.seconds, "proven": found.proven}
        interrupted = found.interrupted
    lower, solver = _milp_or_why(
        family, columns, (members, holdout, synthetic), lower, options, deadline, interrupted, ceilings, notes,
        check,
    )  # fmt: skip
    ceiling = min(ceilings.values(), default=scale)
    if lower.units > ceiling:
        raise RecountMismatchError(
            f"membership {family.name}: a verified attack of advantage {lower.advantage:.6f} above "
            f"the ceiling {ceiling / scale:.6f} ({ceilings})"
        )
    limited = limited or solver.get("termination") == Termination.TIME_LIMIT
    status = _status(interrupted or bool(solver.get("interrupted")), lower.units, ceiling, limited)
    source = min(ceilings, key=lambda k: ceilings[k]) if ceilings else "none"
    return FamilyFigure(
        family.name, lower, ceiling / scale, status, time.perf_counter() - t0, source,
        solver=solver, model={"ceilings": {k: v / scale for k, v in ceilings.items()}, **notes},
    )  # fmt: skip


def _milp_or_why(
    family, columns, files, lower: Attack, options, deadline, interrupted, ceilings, notes, check
):
    """``(lower, solver summary)`` after the MILP where it runs (its ceiling added to
    ``ceilings``, what it did to ``notes``), or why it does not run; a family nothing bounds
    spends its time on random parameters."""
    members, holdout, synthetic = files
    n_pairs = (members.shape[0] + holdout.shape[0]) * synthetic.shape[0]
    solver: dict = {}
    if n_pairs > MILP_PAIRS:
        notes["milp"] = {"why": f"{n_pairs} record pairs > {MILP_PAIRS}: no MILP"}
        if not ceilings:  # nothing bounds the family: the time goes to the search for a lower end
            lower = _drawn(family, columns, members, holdout, synthetic, lower, deadline, options.seed)
            notes["why"] = (
                f"{family.n_params(len(columns))} parameters > {REGION_PARAMS} for the region search and "
                f"{n_pairs} record pairs > {MILP_PAIRS} for the MILP; choose fewer "
                "attributes (--columns) or records"
            )
    elif ceilings.get("regions") == lower.units and n_pairs > MILP_CHECK_PAIRS:
        notes["milp"] = {"why": f"proven by the region search; no MILP check above {MILP_CHECK_PAIRS} pairs"}
    elif ceilings.get("regions") == lower.units and not check:
        notes["milp"] = {"why": "proven by the region search; no MILP check asked"}
    elif not interrupted and (deadline is None or time.perf_counter() < deadline):
        until = deadline
        if ceilings.get("regions") == lower.units:  # a check of a proof: bounded, whatever the limit
            check = time.perf_counter() + MILP_CHECK_SECONDS
            until = check if deadline is None else min(deadline, check)
        milp_units, lower, solver, milp_notes = _milp_step(
            family, columns, members, holdout, synthetic, lower, options, until
        )
        notes["milp"] = milp_notes
        if milp_units is not None:
            ceilings["milp"] = milp_units
        elif not ceilings:  # a failed solve bounds nothing: said of a family left without a ceiling
            notes["why"] = milp_notes["why"]
    return lower, solver


def _status(interrupted: bool, lower: int, ceiling: int, limited: bool) -> Status:
    """A family's status from its best verified count and its ceiling: ``time_limit`` where
    a search the limit stopped left them apart (``limited``), else ``interval`` (no search
    bounds the family, a solver failed, or the ceiling rests on ties no recount breaks)."""
    if interrupted:
        return Status.INTERRUPTED
    if lower == ceiling:  # the trivial ceiling met too: an advantage of 1 is the most there is
        return Status.OPTIMAL
    return Status.TIME_LIMIT if limited else Status.INTERVAL


def _regions(family, columns, members, holdout, synthetic, start: Attack, until, jobs: int):
    """The region search of ``family`` until ``until`` (none: until proven), from ``start``,
    in this process or on ``jobs`` workers."""
    from rlopt.risk.membership.regions import parallel_region_search, region_search

    phi_m, _ = family.features(members, synthetic)
    phi_h, _ = family.features(holdout, synthetic)
    theta0 = family.theta_from_params(start.params, columns) if start.family == family.name else None
    vertices, best = family.simplex_vertices(len(columns)), start.units if theta0 is not None else 0
    if jobs == 1:
        return region_search(phi_m, phi_h, vertices, deadline=until, best_units=best, best_theta=theta0)
    seconds = None if until is None else max(0.0, until - time.perf_counter())
    return parallel_region_search(
        phi_m, phi_h, vertices, jobs=jobs, seconds=seconds, best_units=best, best_theta=theta0
    )


TIE_STEPS = (1e-7, 1e-5, 1e-3)
"""How far (as a share of the way to a random point of the simplex) :func:`_off_ties`
moves a parameter, 8 draws each."""


def _off_ties(family, columns, theta, lower: Attack, members, holdout, synthetic, seed: int) -> Attack:
    """``lower`` or a better recount of parameters moved a little from ``theta`` toward
    random points of the simplex: the region search counts from its features, whose sums
    may break a tie between a member's and a held-out record's distance otherwise than the
    recount does; a parameter off the tie keeps the separation the count relied on."""
    vertices = family.simplex_vertices(len(columns))
    rng = np.random.default_rng([seed, 2])
    for step in TIE_STEPS:
        moved = (1 - step) * theta + step * (rng.dirichlet(np.ones(len(vertices)), 8) @ vertices)
        lower = _best_of(family, columns, moved, lower, members, holdout, synthetic)
    return lower


def _best_of(family, columns, thetas, lower: Attack, members, holdout, synthetic) -> Attack:
    """``lower`` or the best recount of the parameters ``thetas`` (the first of equals)."""
    for theta in thetas:
        lower = _recounted(family, columns, theta, lower, members, holdout, synthetic)
    return lower


def _recounted(family, columns, theta, lower: Attack, members, holdout, synthetic) -> Attack:
    """The better of ``lower`` and the recount of ``theta`` (none: ``lower``)."""
    if theta is None:
        return lower
    found = recount(
        family.name, family.distance(np.asarray(theta, dtype=float), columns), members, holdout, synthetic
    )
    return found if found.units > lower.units else lower


SEPARATION = 1e-6
"""How much farther than the threshold (a share of ``max(1, tau_max)``) the strict MILP
(:func:`_milp_step`) keeps a held-out record it leaves uncalled: far above HiGHS's
feasibility tolerance (1e-9), so that the recount separates them too."""


def _milp_step(family, columns, members, holdout, synthetic, lower: Attack, options, until):
    """``(ceiling units, lower, solver summary, notes)`` of the MILP: the relaxation's
    bound is the ceiling (``None`` when the solve failed); its parameter is recounted, off
    its ties too, and where the recount stays below the ceiling, the strict model (held-out
    records uncalled by :data:`SEPARATION` beyond the threshold) is solved in the time left
    for a parameter that reaches it."""
    units, theta, solver = _milp(family, members, holdout, synthetic, lower, options, until)
    lower = _recounted(family, columns, theta, lower, members, holdout, synthetic)
    notes: dict = {"termination": solver.get("termination")}
    if units is None:
        notes["why"] = _failed_milp(solver)
        return units, lower, solver, notes
    if theta is not None and lower.units < units:
        # the model lets a held-out record sit at the threshold uncalled: a parameter a
        # little off its ties may keep the separation the model counted
        lower = _off_ties(family, columns, theta, lower, members, holdout, synthetic, options.seed)
    if (
        lower.units < units
        and not solver.get("interrupted")
        and (until is None or time.perf_counter() < until)
    ):
        _, strict_theta, strict = _milp(
            family, members, holdout, synthetic, None, options, until, strict=True
        )
        lower = _recounted(family, columns, strict_theta, lower, members, holdout, synthetic)
        notes["strict"] = {"termination": strict.get("termination"), "separation": strict.get("separation")}
        solver = solver | {"interrupted": bool(solver.get("interrupted") or strict.get("interrupted"))}
    return units, lower, solver, notes


def _failed_milp(solver: dict) -> str:
    """Why a failed MILP gives the family no ceiling, for its ``model`` notes."""
    return (
        f"HiGHS ended with status {solver.get('termination')!r} on a model that holds the verified "
        "attack: a solver failure, so the MILP bounds nothing (its parameter, if any, was recounted)"
    )


def _milp(family, members, holdout, synthetic, lower: Attack | None, options, deadline, strict: bool = False):
    """``(ceiling units, parameter, solver summary)`` of the membership MILP within
    ``deadline``, no worse than ``lower`` (``None``: no such row); the ceiling ``None``
    when the solve failed (any end but the optimum or a limit:
    :attr:`~rlopt.milp.solvers.options.Termination.failed`) or the model is ``strict``
    (a restriction, whose parameter is only a lower end once recounted)."""
    from dataclasses import replace

    from rlopt.milp.solvers.mip import solve_model
    from rlopt.risk.membership.milp import build_membership_model

    scale = members.shape[0] * holdout.shape[0]
    at_most = None if lower is None else scale - lower.units
    built = build_membership_model(
        family,
        members,
        holdout,
        synthetic,
        objective_at_most=at_most,
        separation=SEPARATION if strict else 0.0,
    )
    if deadline is not None:
        options = replace(options, time_limit=max(1e-3, deadline - time.perf_counter()))
    result = solve_model(built.model, options)
    if result.termination.failed or strict:
        units = None  # the relaxation holds the verified attack: infeasible is the solver's failure
    elif result.objective_bound is None:
        units = scale
    else:
        units = scale - math.ceil(result.objective_bound - 1e-6)
    solver = result.solver | {
        "termination": str(result.termination),
        "interrupted": result.interrupted,
        "tau_max": built.tau_max,
        "witnesses": built.n_witnesses,
        "holdout_rows": built.n_rows,
        **({"separation": built.separation} if strict else {}),
    }
    return units, result.theta, solver


def membership_risk(
    members: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    families: Sequence[str] = ("wm",),
    columns: Sequence[str] | None = None,
    time_limit: float | None = None,
    threads: int = 1,
    seed: int = 0,
    jobs: int = 1,
    folds: int = 5,
    permutations: int = 0,
    reserve: pd.DataFrame | None = None,
    anchors: bool = True,
    progress: Callable[[str], None] | None = None,
) -> MembershipRisk:
    """The worst-case membership attack on ``synthetic`` (generated from ``members``, not
    from ``holdout``), over each family in ``families`` (wm, wm_m, owa), beside the fixed
    Euclidean one; then its calibration (:mod:`rlopt.risk.membership.calibration`).

    The three files are standardised with the moments of their records together
    (:func:`standardised`). ``time_limit`` is per family; a family stopped by it is an interval.
    ``jobs`` worker processes share each family's region search (the proven figure is
    the same for every ``jobs``; an interval at the limit may narrow with it) and the
    permutation null's runs.

    ``folds`` (0: none): the cross-fitted, out-of-sample advantage, the headline; its
    ``folds`` fits share each family's ``time_limit``. ``permutations`` (0: none, else at
    least 19): the in-sample search on as many relabelled splits, each with the full
    ``time_limit``. ``anchors``: the same figures for a copy of ``members`` and, given a
    ``reserve`` of real records in neither file, for that reserve as the ideal release.
    ``progress(line)`` hears each step as it starts (a family's search, each stage of the
    calibration).
    """
    from rlopt.milp import SolverOptions

    say = progress or (lambda line: None)

    columns = tuple(map(str, columns or synthetic.columns))
    raw = _checked(members, holdout, synthetic, reserve, families, columns, jobs, folds, permutations)
    zm, zh, zs = standardised(raw["members"], raw["held-out"], raw["synthetic"])
    fixed, (member_d, holdout_d) = _fixed(columns, zm, zh, zs)  # one count, two figures
    level = chance_level(member_d, holdout_d, seed)
    closer = nearest_is_member(zm, zh, zs)
    options = SolverOptions(time_limit=time_limit, threads=threads, seed=seed)
    head = (columns, len(zm), len(zh), len(zs), fixed, closer, level)
    found = MembershipRisk(
        *head, *_each_family(families, columns, (zm, zh, zs), fixed, options, seed, jobs, say=say)
    )
    if found.interrupted:  # Ctrl-C: what finished
        return found
    return _calibrated(
        found, families, raw, (zm, zh, zs), options, seed, jobs, (folds, permutations, anchors), say
    )


def _checked(members, holdout, synthetic, reserve, families, columns, jobs, folds, permutations) -> dict:
    """The files' numeric arrays by role, once every input is checked (one clear error)."""
    from rlopt.risk.membership.milp import membership_families

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InputError(f"jobs={jobs!r}; expected a whole number of worker processes, at least 1")
    allowed = membership_families()
    unknown = [f for f in families if f not in allowed]
    if unknown:
        raise InputError(f"membership families {unknown}; expected some of {', '.join(allowed)}")
    frames = [("members", members), ("held-out", holdout), ("synthetic", synthetic), ("reserve", reserve)]
    raw = {name: _numeric(frame, columns, name) for name, frame in frames if frame is not None}
    if folds:
        check_folds(folds, len(raw["members"]), len(raw["held-out"]))
    if permutations:
        check_permutations(permutations)
    for name in families:
        get_learned_family(name).check_attributes(len(columns))
    return raw


def _calibrated(found: MembershipRisk, families, raw, z, options, seed, jobs, asked, say):
    """``found`` with its out-of-sample advantage, permutation null and anchors. Ctrl-C
    keeps what finished: the stage it stops says so in ``skipped``, and the stages after
    it (those asked for) are named there too, not run."""
    from dataclasses import replace

    columns = found.columns
    (zm, zh, zs), (folds, permutations, anchors) = z, asked
    later = [
        name
        for name, on in (("out-of-sample", folds), ("permutations", permutations), ("anchors", anchors))
        if on
    ]
    kept: dict = {}
    notes: list[str] = []

    def stop(stage: str, why: str = "stopped by Ctrl-C"):
        rest = later[later.index(stage) + 1 :]
        return replace(found, **kept, skipped=(*notes, f"{stage}: {why}", *rest), stopped=True)

    if folds:
        say(f"out of sample: {folds} folds, each called by the attack learned on the others")
        crossed = _cross_fitted(families, columns, (zm, zh, zs), options, seed, jobs, folds)
        if crossed is None:
            return stop("out-of-sample")
        kept["out_of_sample"] = crossed
    if permutations:
        say(f"chance level: the search on {permutations} relabelled splits")
        try:
            learn = _learner(families, columns, zs, options, seed, 1)
            null = permutation_null(
                learn, zm, zh, runs=permutations, observed=found.worst.advantage, observed_upper=found.upper,
                seed=seed, jobs=jobs,
            )  # fmt: skip
        except KeyboardInterrupt:
            null = None
        if null is None:
            return stop("permutations")
        kept["null"] = null
        if null.stopped:
            return stop("permutations", f"{null.runs} of {permutations} relabelled runs before Ctrl-C (kept)")
    if anchors:
        kept["anchors"] = {}
        releases = {"ideal": raw.get("reserve"), "copy": raw["members"]}
        if releases["ideal"] is None:
            del releases["ideal"]
            notes.append("ideal anchor: no reserve of real records (--reserve FILE or --reserve-share)")
        for kind, released in releases.items():
            say(f"the {kind} anchor: {len(released)} records measured as the release")
            anchor, stopped = _anchor(kind, families, columns, raw, released, options, seed, jobs, folds)
            if anchor is not None:
                kept["anchors"][kind] = anchor
            if stopped:
                return stop("anchors", f"the {kind} anchor stopped by Ctrl-C")
    return replace(found, **kept, skipped=tuple(notes))


def _anchor(kind, families, columns, raw, released, options, seed, jobs, folds) -> tuple[Anchor | None, bool]:
    """``(anchor, stopped)``: the release ``released`` (a reserve or the copy) measured as
    the release is; a Ctrl-C during its cross-fit keeps its in-sample figure."""
    zm, zh, zs = standardised(raw["members"], raw["held-out"], released)
    try:
        found = fit(families, columns, zm, zh, zs, options, seed, jobs)
    except KeyboardInterrupt:
        return None, True
    if found.interrupted:
        return None, True
    crossed = _cross_fitted(families, columns, (zm, zh, zs), options, seed, jobs, folds) if folds else None
    stopped = bool(folds) and crossed is None
    return Anchor(kind, len(released), found.attack.advantage, found.ceiling, crossed), stopped


def _cross_fitted(families, columns, z, options, seed, jobs, folds) -> OutOfSample | None:
    """The out-of-sample advantage on the z-scores ``z`` (members, held out, synthetic);
    ``None`` when Ctrl-C stopped it, wherever it came."""
    zm, zh, zs = z
    try:
        learn = _learner(families, columns, zs, options, seed, folds, check=False)
        return cross_fitted(learn, _caller(columns, zs), zm, zh, folds=folds, seed=seed, jobs=jobs)
    except KeyboardInterrupt:
        return None


def _learner(families, columns, zs, options, seed, share, check=True):
    """:func:`fit` on a split's members and held-out records in one process (so that its
    attack is the same whatever ``jobs``: the folds and relabelled runs are what run in
    parallel), each family given ``time_limit / share`` seconds; picklable."""
    from dataclasses import replace
    from functools import partial

    if options.time_limit is not None:
        options = replace(options, time_limit=options.time_limit / share)
    return partial(_fit_split, tuple(families), columns, zs, options, seed, check)


def _fit_split(families, columns, zs, options, seed, check, zm, zh) -> Fit:
    return fit(families, columns, zm, zh, zs, options, seed, check=check)


def _caller(columns, zs):
    from functools import partial

    return partial(distances, columns=columns, zs=zs)


def fit(
    families: Sequence[str], columns, zm, zh, zs, options, seed: int, jobs: int = 1, check: bool = True
) -> Fit:
    """The in-sample search on z-scores already standardised: the best verified attack
    over ``families`` and the fixed Euclidean distance, and the largest ceiling
    (``check``: the MILP re-proves a region search's proof). A Ctrl-C in a family's
    search or solve returns an interrupted :class:`Fit`, not an exception."""
    fixed, _ = _fixed(columns, zm, zh, zs)
    figures, not_started = _each_family(families, columns, (zm, zh, zs), fixed, options, seed, jobs, check)
    best = max([fixed, *(figure.lower for figure in figures.values())], key=lambda a: a.units)
    if not_started or any(figure.status == Status.INTERRUPTED for figure in figures.values()):
        return Fit(best, 1.0, Status.INTERRUPTED)
    ceiling = max([best.advantage, *(figure.ceiling for figure in figures.values())]) if families else 1.0
    return Fit(best, ceiling, Status.PROVEN if best.advantage >= ceiling else Status.INTERVAL)


def _fixed(columns, zm, zh, zs) -> tuple[Attack, tuple[np.ndarray, np.ndarray]]:
    """The fixed Euclidean attack (DCR), and the members' and held-out records' distances
    to their nearest synthetic records it counts."""
    distance = euclidean(columns)
    member_d, holdout_d = nearest(distance, zm, zs), nearest(distance, zh, zs)
    return _attack("euclidean", {"family": "euclidean"}, member_d, holdout_d), (member_d, holdout_d)


def _each_family(
    families, columns, z, fixed: Attack, options, seed: int, jobs: int, check: bool = True, say=None
) -> tuple[dict[str, FamilyFigure], tuple[str, ...]]:
    """Each family's figure on the z-scores ``z`` (members, held out, synthetic), and the
    families a Ctrl-C left not started: in a family's start search (that family too) or
    in its solve (the families after it; its figure says interrupted). Each family starts
    from its own search and the fixed attack (in every family), never from another
    family's attack: the family's ceiling may be below that one."""
    zm, zh, zs = z
    limit = "" if options.time_limit is None else f" (time limit {options.time_limit:g} s)"
    figures: dict[str, FamilyFigure] = {}
    for done, name in enumerate(families):
        if say is not None:
            say(f"learning {name} on {len(zm)} members, {len(zh)} held out, {len(zs)} synthetic{limit}")
        family = get_learned_family(name)
        try:
            start = max(_search(family, columns, zm, zh, zs, seed), fixed, key=lambda a: a.units)
        except KeyboardInterrupt:
            return figures, tuple(families[done:])
        figures[name] = _solve_family(family, columns, zm, zh, zs, start, options, jobs, check)
        if figures[name].status == Status.INTERRUPTED:
            return figures, tuple(families[done + 1 :])
    return figures, ()


def distances(attack: Attack, records: np.ndarray, *, columns, zs: np.ndarray) -> np.ndarray:
    """Each record's distance to its nearest synthetic record under ``attack``'s distance
    (the fixed attack's: wm's neutral parameter); ``attack`` calls it a member within its
    threshold."""
    if attack.family == "euclidean":
        return nearest(euclidean(columns), records, zs)
    family = get_learned_family(attack.family)
    return nearest(family.distance(family.theta_from_params(attack.params, columns), columns), records, zs)


def euclidean(columns: Sequence[str]) -> Distance:
    """The fixed attack's distance: wm at equal weights, the order of the Euclidean
    distance on z-scores (the DCR of other tools)."""
    wm = get_learned_family("wm")
    return wm.distance(wm.neutral(len(columns)), tuple(columns))


CHANCE_DRAWS = 200
"""Random relabellings behind :func:`chance_level`."""


def chance_level(member_d: np.ndarray, holdout_d: np.ndarray, seed: int) -> float:
    """The advantage at its best threshold that 5 % of :data:`CHANCE_DRAWS` random
    relabellings of the records (as many members and held-out records) reach, the
    distances kept: a release that favours no one gives about this much on the split."""
    d = np.concatenate([member_d, holdout_d])
    n_m, n_h = member_d.size, holdout_d.size
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(CHANCE_DRAWS):
        order = rng.permutation(d.size)
        draws.append(best_threshold(d[order[:n_m]], d[order[n_m:]])[1] / (n_m * n_h))
    return float(np.quantile(draws, 0.95))


def nearest_is_member(members: np.ndarray, holdout: np.ndarray, synthetic: np.ndarray) -> float:
    """The share of synthetic records whose nearest original (Euclidean) is a member, of
    equal distances counted half (the DCR test of SDMetrics and SynthEval)."""
    distance = euclidean([f"x{k}" for k in range(members.shape[1])])
    to_member = nearest(distance, synthetic, members)
    to_holdout = nearest(distance, synthetic, holdout)
    return float(np.mean((to_member < to_holdout) + 0.5 * (to_member == to_holdout)))
