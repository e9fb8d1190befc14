"""The MILP through Pyomo's persistent HiGHS interface: :func:`solve_model` runs the
rounds of added rows (lazy linkage rows, a family's cuts) under one time limit and
returns a :class:`~rlopt.milp.solvers.options.SolveResult`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from rlopt.exceptions import InputError
from rlopt.milp.solvers.options import MIP_FEASIBILITY_FLOOR, Cut, SolveResult, SolverOptions, Termination
from rlopt.milp.solvers.runtime import (
    SCHEDULER,
    Progress,
    StopRequest,
    ctrl_c_stops_solver,
    highs_solver,
)

__all__ = [
    "not_started",
    "solve_model",
    "export_model",
    "write_model",
    "mip_options",
    "solver_summary",
    "var_values",
    "add_cuts",
    "mip_start",
]


_TERMINATION = {
    "convergenceCriteriaSatisfied": Termination.OPTIMAL,
    "maxTimeLimit": Termination.TIME_LIMIT,
    "provenInfeasible": Termination.INFEASIBLE,
    "locallyInfeasible": Termination.INFEASIBLE,
    "infeasibleOrUnbounded": Termination.INFEASIBLE,
}


def var_values(var) -> np.ndarray:
    """Values of an indexed variable; one the solver never saw (in no row) takes the
    point of its bounds nearest 0, an optimal value like any other in its bounds."""

    def value(v):
        if v.value is not None:
            return v.value
        lo, hi = v.lb, v.ub
        return min(max(0.0, -np.inf if lo is None else lo), np.inf if hi is None else hi)

    return np.array([value(var[i]) for i in var], dtype=float)


def solve_model(
    model: pyo.ConcreteModel,
    options: SolverOptions = SolverOptions(),  # noqa: B008 (frozen)
    *,
    separate: Callable[[np.ndarray, np.ndarray], list[Cut]] | None = None,
    start: Callable[[np.ndarray | None, np.ndarray | None], tuple[np.ndarray, np.ndarray]] | None = None,
    carry_bound: bool = False,
    on_improve: Callable[[float | None, float | None, np.ndarray | None], None] | None = None,
    stop_when: Callable[[], bool] | None = None,
) -> SolveResult:
    """Solve the model with HiGHS; with ``separate(theta, K)``, add the rows it
    returns and re-solve (in place, through the persistent interface) until it
    returns none.

    The model must have variables ``theta`` and ``K``, an integer-valued objective
    to minimise (``sum K``), and a ``ConstraintList`` named ``cuts``.
    ``start(previous_theta, previous_K)`` (both ``None`` before the first solve)
    returns a ``(theta, K)`` handed to HiGHS as a MIP start.

    Rounds only add rows, so each round's model is a relaxation of the next: the
    proven optimum of a round is a lower bound of every later one. With
    ``carry_bound`` it is added as the row ``objective >= bound`` (exact: a start
    that reaches it is proven optimal at once, and a later round stopped by the
    time limit keeps the bound).

    ``on_improve(incumbent, bound, theta)`` is called after every round with the
    round's objective values (``sum K``, either ``None``) and parameter, and during
    a run on each improving solution HiGHS finds (``bound`` its dual bound then,
    ``theta`` ``None`` if it cannot be read) and on each rise of the dual bound's
    ceiling (``incumbent`` and ``theta`` ``None``; at most every 0.5 s). The bound
    holds for the full model (each round's model is a relaxation of it); the
    incumbent is of the round's model: the caller recounts ``theta`` before it
    believes it. A KeyboardInterrupt from ``on_improve`` stops the solve as Ctrl-C
    does; another exception stops the run and is raised after it.

    ``stop_when()`` is asked during a run (with ``on_improve``); when it returns true
    HiGHS stops and the termination is ``"stopped"``: the caller holds a proof from
    elsewhere (e.g. the parameter-space search closed the interval).
    """
    solver = highs_solver()
    t0 = time.perf_counter()
    theta_vars = [model.theta[t] for t in model.theta]
    with ctrl_c_stops_solver() as ctrl_c:
        stop = ctrl_c or StopRequest()  # also set by a KeyboardInterrupt in on_improve
        solver.stop = ctrl_c
        solver.progress = None if on_improve is None else Progress(on_improve, theta_vars, stop, stop_when)
        rounds = _solve_rounds(solver, model, options, t0, separate, start, carry_bound, on_improve, stop)
    return _solve_result(model, solver, options, rounds, separate, stop, t0)


@dataclass
class _Rounds:
    """Where the rounds of :func:`solve_model` ended: the last run's Pyomo results,
    termination and parameter (``None`` without a solution), the rounds of added rows,
    and how many MIP starts HiGHS was handed."""

    results: Any = None
    termination: Termination = Termination.ERROR
    theta: np.ndarray | None = None
    count: int = 0
    starts_passed: int = 0


def _solve_rounds(
    solver,
    model: pyo.ConcreteModel,
    options: SolverOptions,
    t0: float,
    separate: Callable | None,
    start: Callable | None,
    carry_bound: bool,
    on_improve: Callable | None,
    stop: StopRequest,
) -> _Rounds:
    """Run HiGHS; while ``separate`` returns rows (and time and ``max_cut_rounds``
    allow), add them and run it again (see :func:`solve_model`)."""
    k_vars = [model.K[i] for i in model.K]
    theta_vars = [model.theta[t] for t in model.theta]
    done = _Rounds()
    while True:
        if start is not None:
            theta0, k0 = start(done.theta, var_values(model.K)) if done.count else start(None, None)
            solver.start = mip_start(theta_vars, theta0, k_vars, k0)
        results = _run(solver, model, options, t0)
        done.starts_passed += solver.start_passed
        if not _solution_has_its_objective(model, results):
            # HiGHS 1.16.0 returns the MIP start itself when presolve maps it to a better
            # solution of the reduced model, with that one's objective; and a later run
            # starts from the stored solution again (tests/milp/test_highs_guard.py): run anew
            # from nothing, and never take a solution whose objective is not the claimed one
            solver.start = None
            solver._solver_model.clearSolver()
            results = _run(solver, model, options, t0)
            if not _solution_has_its_objective(model, results):
                done.results, done.termination, done.theta = results, Termination.ERROR, None
                return done
        done.results = results
        done.termination, done.theta = _outcome(solver, model, results)
        if on_improve is not None:
            on_improve(results.incumbent_objective, results.objective_bound, done.theta)
        if (
            done.termination != Termination.OPTIMAL
            or separate is None
            or stop.requested
            or done.theta is None
        ):
            return done
        cuts = separate(done.theta, var_values(model.K))
        if not cuts:
            return done
        if options.time_limit is not None and time.perf_counter() - t0 >= options.time_limit:
            done.termination = Termination.TIME_LIMIT  # rows are missing and no time is left to add them
            return done
        if done.count >= options.max_cut_rounds:
            return done
        done.count += 1
        if carry_bound:
            model.cuts.add(model.objective.expr >= math.ceil(results.objective_bound - 1e-6))
        add_cuts(model, cuts, theta_vars)


def _run(solver, model: pyo.ConcreteModel, options: SolverOptions, t0: float):
    """One HiGHS run within what is left of the time limit (from ``t0``); Pyomo's results."""
    remaining = None
    if options.time_limit is not None:
        remaining = max(1e-3, options.time_limit - (time.perf_counter() - t0))
    # what is left when HiGHS starts, the model loaded (a run of 1 ms at least, as before)
    solver.deadline = None if remaining is None else time.perf_counter() + remaining
    with SCHEDULER.hold(options.threads) as threads:
        return solver.solve(
            model,
            tee=options.log,
            load_solutions=False,
            raise_exception_on_nonoptimal_result=False,
            time_limit=remaining,
            rel_gap=options.rel_gap,
            threads=threads,
            solver_options=mip_options(options),
        )


def mip_options(options: SolverOptions) -> dict:
    """The HiGHS options of a MILP run besides time, gap and threads."""
    return {
        "primal_feasibility_tolerance": options.feasibility_tol,
        "mip_feasibility_tolerance": max(options.feasibility_tol, MIP_FEASIBILITY_FLOOR),
        "mip_abs_gap": 0.99,  # the objective is an integer: a gap below 1 proves it
        "random_seed": options.seed,
        **({} if options.presolve else {"presolve": "off"}),
    }


def _solution_has_its_objective(model: pyo.ConcreteModel, results) -> bool:
    """Whether the solution HiGHS returned (now loaded) has the objective it reports."""
    if results.incumbent_objective is None:
        return True
    results.solution_loader.load_vars()
    claimed = results.incumbent_objective
    return abs(pyo.value(model.objective) - claimed) <= 1e-6 * max(1.0, abs(claimed))


def _outcome(solver, model: pyo.ConcreteModel, results) -> tuple[Termination, np.ndarray | None]:
    """``(termination, theta)`` of a run, its solution loaded into the model; an error
    raised by ``on_improve`` during the run is raised here."""
    if solver.progress is not None and solver.progress.error is not None:
        raise solver.progress.error
    status = _TERMINATION.get(results.termination_condition.name, Termination.ERROR)
    if solver.progress is not None and solver.progress.stopped_when and status != Termination.OPTIMAL:
        status = Termination.STOPPED
    has_solution = results.incumbent_objective is not None
    if has_solution:
        results.solution_loader.load_vars()
    return status, var_values(model.theta) if has_solution else None


def _solve_result(
    model: pyo.ConcreteModel,
    solver,
    options: SolverOptions,
    rounds: _Rounds,
    separate: Callable | None,
    stop: StopRequest,
    t0: float,
) -> SolveResult:
    """The :class:`SolveResult` of the rounds: whether the cap on rounds left rows out,
    and the termination ``interrupted`` when Ctrl-C came before a proof."""
    status, theta, results = rounds.termination, rounds.theta, rounds.results
    cap_hit = (
        separate is not None
        and status == Termination.OPTIMAL
        and theta is not None
        and bool(separate(theta, var_values(model.K)))
    )
    interrupted = stop.requested
    if interrupted and (status != Termination.OPTIMAL or cap_hit):
        status, cap_hit = Termination.INTERRUPTED, False  # what HiGHS had: an incumbent and a bound
    bound = results.objective_bound
    return SolveResult(
        termination=status,
        incumbent=results.incumbent_objective,
        objective_bound=None if bound is None or not np.isfinite(bound) else float(bound),
        theta=theta,
        seconds=time.perf_counter() - t0,
        cut_rounds=rounds.count,
        cut_cap_hit=cap_hit,
        solver={
            **solver_summary(options),
            "version": ".".join(map(str, solver.version())),
            "starts_passed": rounds.starts_passed,
        },
        interrupted=interrupted,
    )


def solver_summary(options: SolverOptions) -> dict:
    """What a result says of its solver's settings."""
    return {
        "name": "highs",
        "feasibility_tol": options.feasibility_tol,
        "rel_gap": options.rel_gap,
        "threads": options.threads,
        "time_limit": options.time_limit,
        "seed": options.seed,
    }


def mip_start(theta_vars: list, theta0, k_vars: list, k0) -> list[tuple]:
    """The start as ``(variable, value)`` pairs: every K, a fixed one at its value. With
    the discrete part complete, HiGHS checks the start or completes it by an LP, never by
    a MIP whose callbacks would report the bound of that restricted problem as this one's."""
    return list(zip(theta_vars, theta0)) + [(v, v.value if v.fixed else k) for v, k in zip(k_vars, k0)]


def add_cuts(model: pyo.ConcreteModel, cuts: list[Cut], theta_vars: list) -> None:
    """Each cut ``coefs @ theta (+ k_coef K_i) >= rhs`` as a row of ``model.cuts``."""
    for cut in cuts:
        nz = np.flatnonzero(cut.coefs)
        coefs = [float(v) for v in cut.coefs[nz]]
        variables = [theta_vars[t] for t in nz]
        if cut.k_index is not None:
            coefs.append(float(cut.k_coef))
            variables.append(model.K[cut.k_index])
        expression = LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=variables)
        model.cuts.add(expression >= float(cut.rhs))


def export_model(model: pyo.ConcreteModel, path: str | Path) -> Path:
    """Write the model as ``.lp`` or ``.mps`` (by suffix) to try other solvers."""
    write_model(model, path)
    return Path(path)


def write_model(model: pyo.ConcreteModel, path: str | Path) -> dict[int, str]:
    """Write the model as ``.lp`` or ``.mps`` (by suffix), every name symbolic
    (``theta(0)``, ``K(3)``); the name of each variable and row written, by ``id``. A
    variable in no row (or fixed) is not written."""
    from pyomo.opt import ProblemFormat

    path = Path(path)
    formats = {".lp": ProblemFormat.cpxlp, ".mps": ProblemFormat.mps}
    if path.suffix.lower() not in formats:
        raise InputError(f"cannot export the model to {str(path)!r}; expected a .lp or .mps file")
    # the format as Pyomo names it (the name "lp" made it warn that the file name does not
    # match); the symbol map is taken off the model, which would keep one per file written
    _, symbol_map_id = model.write(
        str(path), format=formats[path.suffix.lower()], io_options={"symbolic_solver_labels": True}
    )
    return dict(model.solutions.symbol_map.pop(symbol_map_id).byObject)


def not_started(
    options: SolverOptions, why: str = "the time limit left no time to load the model"
) -> SolveResult:
    """The solve of a run whose limit left no time to load the model (or that ``why``
    says needs none): no incumbent, no bound (the run's interval is what its other steps
    proved)."""
    return SolveResult(
        termination=Termination.TIME_LIMIT,
        incumbent=None,
        objective_bound=None,
        theta=None,
        seconds=0.0,
        solver={**solver_summary(options), "not_started": why},
    )
