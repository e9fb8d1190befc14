"""SCIP through PySCIPOpt: the second exact solver, an optional extra (``pip install
"rlopt[scip]"``). It re-proves a claimed optimum (:func:`rlopt.milp.pipeline.verify`) with
a solver other than the one that made the claim. Every import of ``pyscipopt`` is in
this module, made when first needed, so rlopt works without it.

SCIP reads the model as rlopt exports it (:func:`~rlopt.milp.solvers.mip.write_model`:
the CPLEX LP file Pyomo writes, every name symbolic), so it solves the very rows HiGHS
is handed; Pyomo's own SCIP interface (from Pyomo 6.10 only) is not used.

- :func:`scip_available`, :func:`load_pyscipopt`, :func:`scip_version`;
- :func:`verifying_solver`: the solver a verification asks for (``"auto"``, ``"scip"``,
  ``"highs"``), checked;
- :func:`solve_model_scip`: :func:`~rlopt.milp.solvers.mip.solve_model`'s contract solved
  by SCIP (the rounds of added rows, the time limit over all of them, one thread);
- :func:`solve_file_scip`: a written ``.lp`` or ``.mps`` file (``rlopt learn --export``).

Both return a :class:`~rlopt.milp.solvers.options.SolveResult` whose ``solver`` names SCIP,
its version and SCIP's own word for why it stopped (``status``).
"""

from __future__ import annotations

import functools
import math
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rlopt.exceptions import InputError, SolverUnavailableError
from rlopt.milp.solvers.options import Cut, SolveResult, SolverOptions, Termination

if TYPE_CHECKING:
    import pyomo.environ as pyo

__all__ = [
    "INSTALL",
    "SOLVERS",
    "load_pyscipopt",
    "scip_available",
    "scip_version",
    "verifying_solver",
    "solve_model_scip",
    "solve_file_scip",
]

INSTALL = 'pip install "rlopt[scip]"'
"""What installs SCIP for rlopt (PySCIPOpt's wheels hold SCIP itself)."""

SOLVERS = ("auto", "scip", "highs")
"""The solvers a verification may ask for; ``"auto"``: SCIP when installed, else HiGHS."""

_TERMINATION = {
    "optimal": Termination.OPTIMAL,
    # the absolute gap below 1 (the objective is an integer) or the relative gap asked for:
    # HiGHS calls both optimal, and the conclusion reads the relative gap
    "gaplimit": Termination.OPTIMAL,
    "timelimit": Termination.TIME_LIMIT,
    "userinterrupt": Termination.INTERRUPTED,
    "infeasible": Termination.INFEASIBLE,
    "inforunbd": Termination.INFEASIBLE,
}
_OTHER_LIMITS = frozenset(
    ("nodelimit", "totalnodelimit", "stallnodelimit", "memlimit", "sollimit", "bestsollimit", "restartlimit")
)
"""Limits rlopt never sets: stopped by one, the solve is an interval as by the time limit
(the result's ``solver["status"]`` says which)."""


@functools.cache
def load_pyscipopt() -> Any:
    """The ``pyscipopt`` module; :class:`SolverUnavailableError` when it cannot be loaded."""
    try:
        import pyscipopt
    except (ImportError, OSError) as exc:  # OSError: a wheel whose SCIP library does not load
        raise SolverUnavailableError(
            f"SCIP (the pyscipopt package) cannot be loaded: {exc}; {INSTALL}"
        ) from exc
    return pyscipopt


def scip_available() -> bool:
    """Whether PySCIPOpt (and the SCIP inside it) loads."""
    try:
        load_pyscipopt()
    except SolverUnavailableError:
        return False
    return True


def scip_version() -> str:
    """SCIP's version, e.g. ``"10.0.2"``."""
    return _version(load_pyscipopt().Model())


def _version(scip) -> str:
    return f"{scip.getMajorVersion()}.{scip.getMinorVersion()}.{scip.getTechVersion()}"


def verifying_solver(name: str) -> str:
    """``"scip"`` or ``"highs"``: the solver ``name`` asks for (``"auto"``: SCIP when
    PySCIPOpt loads, else HiGHS). An unknown name, or ``"scip"`` without PySCIPOpt, is an
    :class:`~rlopt.exceptions.InputError` naming it."""
    if name not in SOLVERS:
        raise InputError(f"solver {name!r}; expected one of {', '.join(map(repr, SOLVERS))}")
    if name == "auto":
        return "scip" if scip_available() else "highs"
    if name == "scip" and not scip_available():
        raise InputError(
            f"solver 'scip', but PySCIPOpt is not installed ({INSTALL}); "
            "expected 'highs', or 'auto' (SCIP when installed, else HiGHS)"
        )
    return name


@dataclass
class _Run:
    """One SCIP run: its termination, objective values (``sum K``; either ``None``), the
    value of every variable by name (``None`` without a solution) and SCIP's status."""

    termination: Termination
    incumbent: float | None
    bound: float | None
    values: dict[str, float] | None
    status: str
    version: str


def _optimize(path: Path, options: SolverOptions, seconds: float | None, start: dict[str, float]) -> _Run:
    """SCIP on the model file ``path`` within ``seconds`` (``None``: no limit), ``start``
    (values by name) handed as a partial solution that SCIP completes or drops."""
    from rlopt.milp.solvers.runtime import python_handles_ctrl_c

    scip = load_pyscipopt().Model()
    scip.hideOutput(not options.log)  # before reading: the reader prints too
    scip.readProblem(str(path))
    if seconds is not None:
        scip.setParam("limits/time", max(1e-3, seconds))
    scip.setParam("limits/gap", options.rel_gap)
    scip.setParam("limits/absgap", 0.99)  # the objective is an integer: a gap below 1 proves it
    scip.setParam("numerics/epsilon", min(1e-9, options.feasibility_tol))  # SCIP's feastol >= epsilon
    scip.setParam("numerics/feastol", options.feasibility_tol)
    scip.setParam("misc/catchctrlc", python_handles_ctrl_c())  # Ctrl-C stops SCIP: an interval
    if start:
        _add_start(scip, start)
    scip.optimize()
    status, has_solution = scip.getStatus(), scip.getNSols() > 0
    bound = scip.getDualbound()
    termination = _TERMINATION.get(
        status, Termination.TIME_LIMIT if status in _OTHER_LIMITS else Termination.ERROR
    )
    return _Run(
        termination=termination,
        incumbent=float(scip.getPrimalbound()) if has_solution else None,
        bound=float(bound) if abs(bound) < scip.infinity() else None,
        values={var.name: scip.getVal(var) for var in scip.getVars()} if has_solution else None,
        status=status,
        version=_version(scip),
    )


def _add_start(scip, start: dict[str, float]) -> None:
    """``start`` as SCIP's partial solution (a variable it does not name, e.g. Pyomo's
    constant, is completed by SCIP)."""
    variables = {var.name: var for var in scip.getVars()}
    solution = scip.createPartialSol()
    for name, value in start.items():
        if name in variables:
            scip.setSolVal(solution, variables[name], float(value))
    scip.addSol(solution)


def _summary(options: SolverOptions, run: _Run) -> dict:
    """What a result says of SCIP, its run and its settings (SCIP runs on one thread)."""
    return {
        "name": "scip",
        "version": run.version,
        "status": run.status,
        "feasibility_tol": options.feasibility_tol,
        "rel_gap": options.rel_gap,
        "threads": 1,
        "time_limit": options.time_limit,
    }


def _remaining(options: SolverOptions, t0: float) -> float | None:
    return None if options.time_limit is None else options.time_limit - (time.perf_counter() - t0)


def solve_model_scip(
    model: pyo.ConcreteModel,
    options: SolverOptions = SolverOptions(),  # noqa: B008 (frozen)
    *,
    separate: Callable[[np.ndarray, np.ndarray], list[Cut]] | None = None,
    start: Callable[[np.ndarray | None, np.ndarray | None], tuple[np.ndarray, np.ndarray]] | None = None,
    carry_bound: bool = False,
    on_improve: Callable[[float | None, float | None, np.ndarray | None], None] | None = None,
    stop_when: Callable[[], bool] | None = None,
) -> SolveResult:
    """Solve the model with SCIP, as :func:`~rlopt.milp.solvers.mip.solve_model` does with
    HiGHS (the same arguments and result): each round writes the model
    (:func:`~rlopt.milp.solvers.mip.write_model`), SCIP solves the file, and the rows
    ``separate(theta, K)`` returns are added before the next, all within
    ``options.time_limit``.

    SCIP runs on one thread whatever ``options.threads``, with ``options.feasibility_tol``
    as its feasibility tolerance (integrality included). ``start`` is handed as a partial
    solution. ``on_improve`` is called after each round only, and ``stop_when`` is never
    asked (SCIP is not watched during a run). Ctrl-C stops SCIP with its incumbent and
    bound (termination ``interrupted``).
    """
    load_pyscipopt()  # a clear error before anything is written
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rlopt-scip-") as folder:
        run, theta, rounds, cap_hit = _rounds(
            model, options, Path(folder) / "model.lp", t0, separate, start, carry_bound, on_improve
        )
    interrupted = run.status == "userinterrupt"
    return SolveResult(
        termination=run.termination,
        incumbent=run.incumbent,
        objective_bound=run.bound,
        theta=theta,
        seconds=time.perf_counter() - t0,
        cut_rounds=rounds,
        cut_cap_hit=cap_hit,
        solver=_summary(options, run),
        interrupted=interrupted,
    )


def _rounds(
    model, options: SolverOptions, path: Path, t0: float, separate, start, carry_bound: bool, on_improve
) -> tuple[_Run, np.ndarray | None, int, bool]:
    """The rounds of :func:`solve_model_scip`: ``(last run, its theta, rounds of added
    rows, whether the cap on rounds left rows out)``."""
    from rlopt.milp.solvers.mip import add_cuts, mip_start, var_values, write_model

    theta_vars, k_vars = list(model.theta.values()), list(model.K.values())
    rounds, theta = 0, None
    while True:
        names = write_model(model, path)
        first = None
        if start is not None:
            theta0, k0 = start(theta, var_values(model.K)) if rounds else start(None, None)
            first = {
                names[id(var)]: value
                for var, value in mip_start(theta_vars, theta0, k_vars, k0)
                if id(var) in names
            }
        run = _optimize(path, options, _remaining(options, t0), first or {})
        theta = _load(model, names, run.values)
        if on_improve is not None:
            on_improve(run.incumbent, run.bound, theta)
        if run.termination != Termination.OPTIMAL or separate is None or theta is None:
            return run, theta, rounds, False
        cuts = separate(theta, var_values(model.K))
        if not cuts:
            return run, theta, rounds, False
        remaining = _remaining(options, t0)
        if remaining is not None and remaining <= 0:
            run.termination = Termination.TIME_LIMIT  # rows are missing and no time is left to add them
            return run, theta, rounds, False
        if rounds >= options.max_cut_rounds:
            return run, theta, rounds, True
        rounds += 1
        if carry_bound and run.bound is not None:
            model.cuts.add(model.objective.expr >= math.ceil(run.bound - 1e-6))
        add_cuts(model, cuts, theta_vars)


def _load(model, names: dict[int, str], values: dict[str, float] | None) -> np.ndarray | None:
    """The run's values loaded into ``theta`` and ``K`` (those written; the others keep
    theirs); ``theta`` (``None`` without a solution)."""
    from rlopt.milp.solvers.mip import var_values

    if values is None:
        return None
    for var in (*model.theta.values(), *model.K.values()):
        name = names.get(id(var))
        if name is not None and name in values:
            var.set_value(values[name], skip_validation=True)
    return var_values(model.theta)


def solve_file_scip(path: str | Path, options: SolverOptions = SolverOptions()) -> SolveResult:  # noqa: B008
    """SCIP on a model file rlopt wrote (``rlopt learn --export``, ``.lp`` or ``.mps``):
    the file's own optimum or interval, no row added (a file written before its lazy
    rows or cuts is a relaxation of the family's model). ``theta`` is read by the names
    ``theta(0)``, ``theta(1)``, ... when the file holds each of them."""
    path = Path(path)
    if path.suffix.lower() not in (".lp", ".mps") or not path.is_file():
        raise InputError(f"model file {str(path)!r}; expected an existing .lp or .mps file")
    t0 = time.perf_counter()
    run = _optimize(path, options, options.time_limit, {})
    return SolveResult(
        termination=run.termination,
        incumbent=run.incumbent,
        objective_bound=run.bound,
        theta=None if run.values is None else _theta_by_name(run.values),
        seconds=time.perf_counter() - t0,
        solver=_summary(options, run),
        interrupted=run.status == "userinterrupt",
    )


def _theta_by_name(values: dict[str, float]) -> np.ndarray | None:
    """``theta`` from the values named ``theta(i)``; ``None`` when an index is missing."""
    found = {int(m.group(1)): v for name, v in values.items() if (m := re.fullmatch(r"theta\((\d+)\)", name))}
    if not found or sorted(found) != list(range(len(found))):
        return None
    return np.array([found[i] for i in range(len(found))], dtype=float)
