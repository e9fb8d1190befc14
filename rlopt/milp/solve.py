"""The only module that talks to the solver API (HiGHS through Pyomo's
``pyomo.contrib.solver`` interface, persistent).

Everything else sees a :class:`SolveResult`.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from rlopt.exceptions import InputError, SolverUnavailableError
from rlopt.status import Status
from rlopt.validation import TIME_LIMIT, Interval, Options, check_params

__all__ = [
    "Cut",
    "SolverOptions",
    "SolveResult",
    "SolverUnavailableError",
    "solve_model",
    "export_model",
    "highs_version",
    "max_min_slack",
    "SlackLP",
    "Projection",
    "solver_summary",
]


@dataclass(frozen=True)
class Cut:
    """A row ``coefs @ theta + k_coef * K[k_index] >= rhs`` added between solves."""

    coefs: np.ndarray
    rhs: float
    k_index: int | None = None
    k_coef: float = 0.0


MIP_FEASIBILITY_FLOOR = 1e-7
"""The smallest MIP feasibility tolerance rlopt gives HiGHS (its default is 1e-6). At 1e-9
HiGHS 1.15 proved a false optimum on a CPS1985 fold under PRAM, whose categorical ties put
records exactly at the margin: ``optimal`` with bound 93 of the lazy rounds' model while a
parameter satisfying every row (violation 8.5e-16) re-identifies 94; at 1e-8 to 1e-6 it
ended at 94 = 94 (and at 1e-9 with 7 of 8 random seeds). A row violated by 1e-7 is far
below the margin (1e-5), and every count is recounted."""


@dataclass(frozen=True)
class SolverOptions:
    """Options of a solve.

    Parameters
    ----------
    time_limit : float, default=None
        Seconds for the whole solve, cutting-plane rounds included; ``None``: no limit.
    rel_gap : float, default=0.0
        Relative MIP gap at which HiGHS may stop (0: prove the optimum).
    threads : int, default=1
        HiGHS threads of the MILP (``None``: 1). HiGHS's own default depends on the
        machine's core count, so rlopt never uses it (see :class:`_Scheduler`).
    log : bool, default=False
        Print HiGHS's log.
    feasibility_tol : float, default=1e-9
        HiGHS's primal feasibility tolerance, and its MIP feasibility (integrality)
        tolerance down to :data:`MIP_FEASIBILITY_FLOOR`; keep it well below
        ``margin / max C`` (docs/method.md, section 3).
    max_cut_rounds : int, default=100
        Cap on rounds of added rows (lazy linkage rows, sb_nc and sb_pd cuts).
    presolve : bool, default=True
        HiGHS's presolve; off for a second opinion on a bound that a verified count
        contradicts (a block's re-solve, :mod:`rlopt.milp.blocks`).
    """

    time_limit: float | None = None
    rel_gap: float = 0.0
    threads: int | None = 1
    log: bool = False
    feasibility_tol: float = 1e-9
    max_cut_rounds: int = 100
    presolve: bool = True

    @property
    def recount_tol(self) -> float:
        """The tolerance of a recount at the margin of a parameter met outside the model
        (a start, a baseline): a separation counts from ``margin - recount_tol``."""
        return 10 * self.feasibility_tol

    _parameter_constraints: ClassVar[dict] = {
        "time_limit": [TIME_LIMIT, None],
        "rel_gap": [Interval(Real, 0, 1, closed="left")],
        "threads": [Interval(Integral, 1), None],
        "feasibility_tol": [Interval(Real, 1e-10, 1e-5)],
        "max_cut_rounds": [Interval(Integral, 0)],
        "presolve": [Options((True, False))],
    }

    def __post_init__(self):
        check_params(vars(self), self._parameter_constraints)
        if self.threads is None:
            object.__setattr__(self, "threads", 1)


@dataclass
class SolveResult:
    """What the solver returned.

    ``incumbent`` and ``objective_bound`` are the objective ``sum K`` (records *not*
    re-identified): the incumbent found and the proven lower bound. ``status`` is
    ``optimal`` only when HiGHS proved the optimum and no cutting plane is missing.
    ``interrupted``: Ctrl-C arrived during the solve, which stopped there (status
    ``interrupted`` unless the optimum was proven first); the caller should stop too.
    """

    status: str
    incumbent: float | None
    objective_bound: float | None
    theta: np.ndarray | None
    seconds: float
    cut_rounds: int = 0
    cut_cap_hit: bool = False
    solver: dict = field(default_factory=dict)
    interrupted: bool = False


class _Scheduler:
    """HiGHS's task scheduler, one per process: the first HiGHS run starts it with that
    run's ``threads`` option (HiGHS's default: half the cores), and HiGHS refuses every
    later run whose ``threads`` differs (status ERROR) until it is restarted.

    Every HiGHS run of rlopt (MILP, LP, QP) goes through :meth:`hold`, so that any
    ``threads`` works after any other, on any number of cores: a run that needs another
    size waits until the runs in progress in this process have ended, then restarts
    the scheduler at its size. A MILP restarts it whenever none is running, which also
    mends a scheduler that other code in the process started at another size. An LP or
    QP runs at the size in place (its result does not depend on it; 1 if none is
    known). The count of threads is therefore always one rlopt chose, never one that
    depends on the machine."""

    def __init__(self):
        self._changed = threading.Condition()
        self.size: int | None = None  # the threads of the scheduler rlopt last started
        self.runs = 0  # HiGHS runs of rlopt in progress in this process

    @contextmanager
    def hold(self, threads: int | None, *, restart: bool = False):
        """One run at ``threads`` threads (``None``: any size); yields the ``threads``
        option to give the run. ``restart``: start the scheduler anew even at the size
        in place (after a run refused by a scheduler started elsewhere)."""
        highspy = _highspy()
        with self._changed:
            while self.runs and threads is not None and threads != self.size:
                self._changed.wait()
            if not self.runs and (restart or threads is not None or self.size is None):
                highspy.Highs.resetGlobalScheduler(True)
                self.size = threads or self.size or 1
            size = self.size
            self.runs += 1
        try:
            yield size
        finally:
            with self._changed:
                self.runs -= 1
                self._changed.notify_all()


_SCHEDULER = _Scheduler()


def _run_highs(h, *, deadline: float | None = None) -> None:
    """``h.run()`` of a plain highspy model (an LP or QP) through :data:`_SCHEDULER`,
    within ``deadline`` (a ``time.perf_counter()`` value; past it the run does not
    start) and Ctrl-C (the simplex and interior-point interrupt callbacks); the caller
    reads ``h.getModelStatus()``. A run refused by a scheduler that other code started
    at another size is run once more after a restart."""
    highspy = _highspy()
    if deadline is not None:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            h.clearSolver()
            return
        h.setOptionValue("time_limit", float(remaining))
    with _ctrl_c_stops_solver() as stop:
        hooks = [] if stop is None else [h.cbSimplexInterrupt, h.cbIpmInterrupt]
        for callback in hooks:
            callback.subscribe(stop.check)
        try:
            for restart in (False, True):
                with _SCHEDULER.hold(None, restart=restart) as size:
                    h.setOptionValue("threads", size)
                    status = h.run()
                if (
                    status != highspy.HighsStatus.kError
                    or h.getModelStatus() != highspy.HighsModelStatus.kNotset
                ):
                    break
        finally:
            for callback in hooks:
                callback.unsubscribe(stop.check)
    if stop is not None and stop.requested:
        raise KeyboardInterrupt


class _StopRequest:
    """The SIGINT handler during a solve: the first Ctrl-C asks HiGHS to stop at its
    next interrupt callback (the run then ends with its incumbent and bound); a
    second one raises KeyboardInterrupt at once."""

    requested = False

    def __call__(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def check(self, event) -> None:  # HiGHS's simplex / IPM / MIP interrupt callbacks
        if self.requested:
            event.interrupt()


@contextmanager
def _ctrl_c_stops_solver():
    """``_StopRequest`` while SIGINT is Python's default (raise KeyboardInterrupt) and
    this is the main thread; else ``None`` (e.g. a grid worker that ignores SIGINT)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield None
        return
    stop = _StopRequest()
    signal.signal(signal.SIGINT, stop)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextmanager
def _caller_streams():
    """``(stdout, stderr)`` writing where ``sys.stdout`` and ``sys.stderr`` write now,
    also while Pyomo captures a run's output (it redirects their file descriptors too):
    a stream with a descriptor is reopened on a copy of it."""
    streams, copies = [], []
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
            copy = open(
                os.dup(stream.fileno()),
                "w",
                buffering=1,
                encoding=getattr(stream, "encoding", None),
                errors="backslashreplace",
            )
        except (AttributeError, OSError, ValueError):  # no descriptor, e.g. a test runner's stream
            streams.append(stream)
        else:
            streams.append(copy)
            copies.append(copy)
    try:
        yield tuple(streams)
    finally:
        for copy in copies:
            copy.close()


class _Progress:
    """``on_improve`` during a HiGHS run (see :func:`solve_model`): each improving
    solution, and a dual bound whose ceiling rose, at most once per
    ``BOUND_INTERVAL`` seconds (bound-only reports). It runs with the caller's
    ``sys.stdout``/``sys.stderr`` and never raises into HiGHS: a KeyboardInterrupt
    stops the run as Ctrl-C does (``stop``), another exception stops it and is kept
    in ``error`` for the caller to raise (HiGHS is stopped from its MIP interrupt
    callback, the one that may stop it)."""

    BOUND_INTERVAL = 0.5

    def __init__(
        self,
        on_improve: Callable,
        theta_vars: list,
        stop: _StopRequest,
        stop_when: Callable[[], bool] | None = None,
    ):
        self.on_improve, self.theta_vars, self.stop = on_improve, theta_vars, stop
        self.stop_when = stop_when
        self.stopped_when = False  # stop_when() ended the run
        self.columns: np.ndarray | None = None  # theta's columns in HiGHS during a run
        self.streams: tuple | None = None
        self.ceiling = -math.inf  # the ceiling of the last bound reported
        self.last = -math.inf  # perf_counter of the last report
        self.error: Exception | None = None

    @contextmanager
    def running(self, columns: np.ndarray | None):
        """One run, with ``theta`` in HiGHS's columns ``columns`` (``None``: unknown)."""
        self.columns = columns
        with _caller_streams() as self.streams:
            yield

    def solution(self, event) -> None:  # cbMipImprovingSolution
        self._safely(self._solution, event)

    def poll(self, event) -> None:  # cbMipInterrupt
        self._safely(self._bound_rose, event)
        if not self.stopped_when and self.stop_when is not None:
            self._safely(self._ask_stop, event)
        if self.stop.requested or self.error is not None or self.stopped_when:
            event.interrupt()

    def _ask_stop(self, event) -> None:
        if self.stop_when is not None:
            self.stopped_when = bool(self.stop_when())

    def _safely(self, step: Callable, event) -> None:
        """``step(event)`` with the caller's streams; nothing it raises reaches HiGHS."""
        if self.stop.requested or self.error is not None:
            return
        caller = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = self.streams or caller
        try:
            step(event)
        except KeyboardInterrupt:
            self.stop.requested = True
        except Exception as exc:  # raised by solve_model after the run
            self.error = exc
        finally:
            sys.stdout, sys.stderr = caller

    def _solution(self, event) -> None:
        theta = None
        if self.columns is not None:
            solution = np.asarray(event.data_out.mip_solution, dtype=float)
            if solution.size > self.columns.max(initial=-1):
                theta = solution[self.columns]
        self._report(event.data_out.objective_function_value, self._bound(event), theta)

    def _bound_rose(self, event) -> None:
        bound = self._bound(event)
        if (
            bound is not None
            and math.ceil(bound - 1e-6) > self.ceiling
            and time.perf_counter() - self.last >= self.BOUND_INTERVAL
        ):
            self._report(None, bound, None)

    @staticmethod
    def _bound(event) -> float | None:
        """The run's dual bound, ``None`` when infinite or when it meets the incumbent:
        that proof ends the run and is reported with the round's figures, so a value
        HiGHS clamps to the incumbent in passing is never taken for one."""
        bound, incumbent = event.data_out.mip_dual_bound, event.data_out.mip_primal_bound
        if not math.isfinite(bound) or math.ceil(bound - 1e-6) >= incumbent - 1e-6:
            return None
        return bound

    def _report(self, incumbent: float | None, bound: float | None, theta: np.ndarray | None) -> None:
        if bound is not None:
            self.ceiling = max(self.ceiling, math.ceil(bound - 1e-6))
        self.last = time.perf_counter()
        self.on_improve(incumbent, bound, theta)


def _not_interrupt_warning(record: logging.LogRecord) -> bool:
    return "kInterrupt" not in record.getMessage()  # Pyomo's "unhandled status": ours, see below


@functools.cache
def _highs_class():
    from pyomo.contrib.solver.solvers.highs import Highs

    logging.getLogger("pyomo.contrib.solver.solvers.highs").addFilter(_not_interrupt_warning)

    class HighsWithStart(Highs):
        """Pyomo's persistent HiGHS interface plus a MIP start: ``start`` is a list
        of ``(pyomo variable, value)`` handed to HiGHS (``setSolution``) right
        before each run. HiGHS checks the start and ignores an infeasible one, so
        a start can only help. It reads the interface's variable map, a private
        attribute; if that ever goes away, the start is skipped, never wrong."""

        start: list | None = None
        start_passed: bool = False
        stop: _StopRequest | None = None
        progress: _Progress | None = None
        deadline: float | None = None  # time.perf_counter() by which the run must end

        def _solve(self):
            self.start_passed = _pass_start(self)
            _limit_to_deadline(self)
            with _callbacks(self):
                return super()._solve()

    return HighsWithStart


def _limit_to_deadline(interface) -> None:
    """HiGHS's time limit set to what is left before ``interface.deadline``, now that the
    model is loaded (Pyomo passes the limit it was given before loading it: on EIA's 4092
    records the load took 0.6 s to 2 s more than a short limit). It writes the run's
    configuration, a private attribute; if that ever goes away, the limit stays Pyomo's."""
    config = getattr(interface, "_active_config", None)
    if config is None or interface.deadline is None or getattr(config, "time_limit", None) is None:
        return
    try:
        config.time_limit = max(1e-3, interface.deadline - time.perf_counter())
    except (AttributeError, TypeError, ValueError):  # pragma: no cover - Pyomo internals changed
        pass


def _pass_start(interface) -> bool:
    """Hand ``interface.start`` to HiGHS (``setSolution``); whether it was handed over."""
    if not interface.start:
        return False
    try:
        index = np.array(
            [interface._pyomo_var_to_solver_var_map[id(v)] for v, _ in interface.start], dtype=np.int32
        )
        values = np.array([value for _, value in interface.start], dtype=float)
        interface._solver_model.setSolution(index.size, index, values)
    except (AttributeError, KeyError, TypeError):  # pragma: no cover - Pyomo internals changed
        return False
    return True


@contextmanager
def _callbacks(interface):
    """HiGHS's callbacks subscribed for one run of ``interface``: ``interface.stop``'s
    check on the interrupt callbacks and ``interface.progress``'s reports (which run
    with the caller's streams); unsubscribed after the run."""
    # Pyomo calls highspy's run(), which bypasses highspy's own Ctrl-C handling
    # (that is in solve()): Python's KeyboardInterrupt then surfaces inside a
    # HiGHS callback and run() raises, losing incumbent and bound. With our SIGINT
    # handler, HiGHS stops at its next interrupt callback (status kInterrupt).
    highs = interface._solver_model
    hooks = []
    if interface.stop is not None:
        hooks += [
            (callback, interface.stop.check)
            for callback in (highs.cbSimplexInterrupt, highs.cbIpmInterrupt, highs.cbMipInterrupt)
        ]
    running = nullcontext()
    if interface.progress is not None:
        hooks += [
            (highs.cbMipImprovingSolution, interface.progress.solution),
            (highs.cbMipInterrupt, interface.progress.poll),
        ]
        running = interface.progress.running(_theta_columns(interface))
    for callback, hook in hooks:
        callback.subscribe(hook)
    try:
        with running:
            yield
    finally:
        for callback, hook in hooks:
            callback.unsubscribe(hook)


def _theta_columns(interface) -> np.ndarray | None:
    """The HiGHS columns of ``interface.progress.theta_vars`` (``None`` if unknown)."""
    try:
        return np.array(
            [interface._pyomo_var_to_solver_var_map[id(v)] for v in interface.progress.theta_vars],
            dtype=np.int64,
        )
    except (AttributeError, KeyError, TypeError):  # pragma: no cover - Pyomo internals changed
        return None


def _highs():
    try:
        _highspy()  # first: its banner silenced
        solver = _highs_class()()
        available = bool(solver.available())
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise SolverUnavailableError(
            f"HiGHS cannot be loaded ({exc}); install it with `pip install highspy`"
        ) from None
    if not available:
        raise SolverUnavailableError(
            "HiGHS is not available: the highspy package is missing or broken; "
            "install it with `pip install highspy`"
        )
    return solver


def highs_version() -> str:
    return ".".join(map(str, _highs().version()))


_STATUS = {
    "convergenceCriteriaSatisfied": Status.OPTIMAL,
    "maxTimeLimit": Status.TIME_LIMIT,
    "provenInfeasible": Status.INFEASIBLE,
    "locallyInfeasible": Status.INFEASIBLE,
    "infeasibleOrUnbounded": Status.INFEASIBLE,
}


def _values(var) -> np.ndarray:
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
    options: SolverOptions = SolverOptions(),
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
    HiGHS stops and the status is ``"stopped"``: the caller holds a proof from
    elsewhere (e.g. the parameter-space search closed the interval).
    """
    solver = _highs()
    t0 = time.perf_counter()
    theta_vars = [model.theta[t] for t in model.theta]
    with _ctrl_c_stops_solver() as ctrl_c:
        stop = ctrl_c or _StopRequest()  # also set by a KeyboardInterrupt in on_improve
        solver.stop = ctrl_c
        solver.progress = None if on_improve is None else _Progress(on_improve, theta_vars, stop, stop_when)
        rounds = _solve_rounds(solver, model, options, t0, separate, start, carry_bound, on_improve, stop)
    return _solve_result(model, solver, options, rounds, separate, stop, t0)


@dataclass
class _Rounds:
    """Where the rounds of :func:`solve_model` ended: the last run's Pyomo results,
    status and parameter (``None`` without a solution), the rounds of added rows,
    and how many MIP starts HiGHS was handed."""

    results: Any = None
    status: str = Status.ERROR
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
    stop: _StopRequest,
) -> _Rounds:
    """Run HiGHS; while ``separate`` returns rows (and time and ``max_cut_rounds``
    allow), add them and run it again (see :func:`solve_model`)."""
    k_vars = [model.K[i] for i in model.K]
    theta_vars = [model.theta[t] for t in model.theta]
    done = _Rounds()
    while True:
        if start is not None:
            theta0, k0 = start(done.theta, _values(model.K)) if done.count else start(None, None)
            solver.start = _mip_start(theta_vars, theta0, k_vars, k0)
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
                done.results, done.status, done.theta = results, Status.ERROR, None
                return done
        done.results = results
        done.status, done.theta = _outcome(solver, model, results)
        if on_improve is not None:
            on_improve(results.incumbent_objective, results.objective_bound, done.theta)
        if done.status != Status.OPTIMAL or separate is None or stop.requested or done.theta is None:
            return done
        cuts = separate(done.theta, _values(model.K))
        if not cuts:
            return done
        if options.time_limit is not None and time.perf_counter() - t0 >= options.time_limit:
            done.status = Status.TIME_LIMIT  # rows are missing and no time is left to add them
            return done
        if done.count >= options.max_cut_rounds:
            return done
        done.count += 1
        if carry_bound:
            model.cuts.add(model.objective.expr >= math.ceil(results.objective_bound - 1e-6))
        _add_cuts(model, cuts, theta_vars)


def _run(solver, model: pyo.ConcreteModel, options: SolverOptions, t0: float):
    """One HiGHS run within what is left of the time limit (from ``t0``); Pyomo's results."""
    remaining = None
    if options.time_limit is not None:
        remaining = max(1e-3, options.time_limit - (time.perf_counter() - t0))
    # what is left when HiGHS starts, the model loaded (a run of 1 ms at least, as before)
    solver.deadline = None if remaining is None else time.perf_counter() + remaining
    with _SCHEDULER.hold(options.threads) as threads:
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
        **({} if options.presolve else {"presolve": "off"}),
    }


def _solution_has_its_objective(model: pyo.ConcreteModel, results) -> bool:
    """Whether the solution HiGHS returned (now loaded) has the objective it reports."""
    if results.incumbent_objective is None:
        return True
    results.solution_loader.load_vars()
    claimed = results.incumbent_objective
    return abs(pyo.value(model.objective) - claimed) <= 1e-6 * max(1.0, abs(claimed))


def _outcome(solver, model: pyo.ConcreteModel, results) -> tuple[str, np.ndarray | None]:
    """``(status, theta)`` of a run, its solution loaded into the model; an error
    raised by ``on_improve`` during the run is raised here."""
    if solver.progress is not None and solver.progress.error is not None:
        raise solver.progress.error
    status = _STATUS.get(results.termination_condition.name, Status.ERROR)
    if solver.progress is not None and solver.progress.stopped_when and status != Status.OPTIMAL:
        status = Status.STOPPED
    has_solution = results.incumbent_objective is not None
    if has_solution:
        results.solution_loader.load_vars()
    return status, _values(model.theta) if has_solution else None


def _solve_result(
    model: pyo.ConcreteModel,
    solver,
    options: SolverOptions,
    rounds: _Rounds,
    separate: Callable | None,
    stop: _StopRequest,
    t0: float,
) -> SolveResult:
    """The :class:`SolveResult` of the rounds: whether the cap on rounds left rows out,
    and the status ``interrupted`` when Ctrl-C came before a proof."""
    status, theta, results = rounds.status, rounds.theta, rounds.results
    cap_hit = (
        separate is not None
        and status == Status.OPTIMAL
        and theta is not None
        and bool(separate(theta, _values(model.K)))
    )
    interrupted = stop.requested
    if interrupted and (status != Status.OPTIMAL or cap_hit):
        status, cap_hit = Status.INTERRUPTED, False  # what HiGHS had: an incumbent and a bound
    bound = results.objective_bound
    return SolveResult(
        status=status,
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
    }


def _mip_start(theta_vars: list, theta0, k_vars: list, k0) -> list[tuple]:
    """The start as ``(variable, value)`` pairs: every K, a fixed one at its value. With
    the discrete part complete, HiGHS checks the start or completes it by an LP, never by
    a MIP whose callbacks would report the bound of that restricted problem as this one's."""
    return list(zip(theta_vars, theta0)) + [(v, v.value if v.fixed else k) for v, k in zip(k_vars, k0)]


def _add_cuts(model: pyo.ConcreteModel, cuts: list[Cut], theta_vars: list) -> None:
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
    path = Path(path)
    formats = {".lp": "lp", ".mps": "mps"}
    if path.suffix.lower() not in formats:
        raise InputError(f"cannot export the model to {str(path)!r}; expected a .lp or .mps file")
    model.write(str(path), format=formats[path.suffix.lower()], io_options={"symbolic_solver_labels": True})
    return path


def _add_dense_rows(h, matrix: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    """Rows ``lo <= matrix @ x <= hi`` (dense ``matrix``, its zeros left out) in the HiGHS model ``h``."""
    import highspy

    matrix = np.asarray(matrix, dtype=float)
    if not matrix.shape[0]:
        return
    inf = highspy.kHighsInf
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    rows, cols = np.nonzero(matrix)
    starts = np.searchsorted(rows, np.arange(matrix.shape[0])).astype(np.int32)
    h.addRows(
        matrix.shape[0],
        np.where(np.isinf(lo), -inf, lo),
        np.where(np.isinf(hi), inf, hi),
        rows.size,
        starts,
        cols.astype(np.int32),
        matrix[rows, cols],
    )


ITERATION_LIMIT = 1_000_000
"""Simplex and QP iterations an LP or QP may take, far more than a run that converges
needs: one that cycles ends, and the caller assumes nothing of it, instead of running on."""


def _new_highs(iterations: int):
    """A silent plain highspy model (an LP or QP) whose runs stop after ``iterations``."""
    h = _highspy().Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("simplex_iteration_limit", iterations)
    h.setOptionValue("qp_iteration_limit", iterations)
    return h


@functools.cache
def _highspy():
    try:
        import highspy
    except ImportError as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):  # Ctrl-C during its initialisation
            raise KeyboardInterrupt from None
        raise SolverUnavailableError(
            f"HiGHS cannot be loaded ({exc}); install it with `pip install highspy`"
        ) from None
    _silence_banner(highspy)
    return highspy


def _silence_banner(highspy) -> None:
    """HiGHS 1.16 prints its banner on stdout at the first ``Highs()`` of a process, before
    any option can be set (it would corrupt ``--json -``); a first instance whose console
    log is off when the banner is due marks it written for the process."""

    class QuietFirst(highspy.Highs):
        def enableCallbacks(self):
            self.setOptionValue("log_to_console", False)
            super().enableCallbacks()

    QuietFirst()


class SlackLP:
    """The LP ``max s`` s.t. ``coefs @ theta + constants >= s`` for the rows added,
    ``family_lo <= family_matrix @ theta <= family_hi``, ``lower <= theta <= upper``,
    ``s <= cap``: one HiGHS model whose rows are added and deleted in place, so that
    each solve after a change is a warm start (presolve off: it would drop the basis)."""

    def __init__(
        self,
        family_matrix: np.ndarray,
        family_lo: np.ndarray,
        family_hi: np.ndarray,
        lower: np.ndarray,
        upper: np.ndarray,
        *,
        cap: float,
        feasibility_tol: float = 1e-9,
        presolve: bool = False,
    ):
        highspy = self._highspy = _highspy()
        p = len(lower)
        inf = highspy.kHighsInf
        h = _new_highs(iterations=ITERATION_LIMIT)
        h.setOptionValue("primal_feasibility_tolerance", feasibility_tol)
        h.setOptionValue("dual_feasibility_tolerance", feasibility_tol)
        if not presolve:
            h.setOptionValue("presolve", "off")
        h.addVars(
            p + 1,
            np.append(np.where(np.isinf(lower), -inf, lower), -inf).astype(float),
            np.append(np.where(np.isinf(upper), inf, upper), cap).astype(float),
        )
        h.changeColsCost(1, np.array([p], dtype=np.int32), np.array([1.0]))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        family_matrix = np.asarray(family_matrix, dtype=float).reshape(-1, p)
        _add_dense_rows(
            h, np.column_stack([family_matrix, np.zeros(len(family_matrix))]), family_lo, family_hi
        )
        self.highs, self.size = h, p
        self.n_family_rows = h.getNumRow()

    def add(self, coefs: np.ndarray, constants: np.ndarray) -> None:
        """Rows ``coefs @ theta + constants >= s`` (one per row of ``coefs``)."""
        if len(coefs):
            _add_dense_rows(
                self.highs,
                np.column_stack([coefs, -np.ones(len(coefs))]),
                -constants,
                np.full(len(coefs), np.inf),
            )

    def n_rows(self) -> int:
        return self.highs.getNumRow()

    def drop_from(self, first: int) -> None:
        """Delete the rows added since the model had ``first`` rows."""
        last = self.highs.getNumRow()
        if last > first:
            self.highs.deleteRows(last - first, np.arange(first, last, dtype=np.int32))

    def solve(self, deadline: float | None = None) -> tuple[float | None, np.ndarray | None]:
        """``(s, theta)`` at the optimum, ``(None, None)`` when HiGHS proves none (e.g.
        by ``deadline``, a ``time.perf_counter()`` value)."""
        _run_highs(self.highs, deadline=deadline)
        if self.highs.getModelStatus() != self._highspy.HighsModelStatus.kOptimal:
            return None, None
        values = np.array(self.highs.getSolution().col_value)
        return float(values[self.size]), values[: self.size]


class Projection:
    """Euclidean projection onto ``{lower <= theta <= upper, lo <= matrix @ theta <= hi}``:
    the QP ``min 1/2 |theta - y|^2`` over the polytope, one HiGHS model re-used
    (only the linear cost ``-y`` changes between calls)."""

    def __init__(
        self, matrix: np.ndarray, lo: np.ndarray, hi: np.ndarray, lower: np.ndarray, upper: np.ndarray
    ):
        highspy = self._highspy = _highspy()
        size = len(lower)
        inf = highspy.kHighsInf
        h = _new_highs(iterations=ITERATION_LIMIT)
        h.addVars(
            size,
            np.where(np.isinf(lower), -inf, lower).astype(float),
            np.where(np.isinf(upper), inf, upper).astype(float),
        )
        _add_dense_rows(h, np.asarray(matrix, dtype=float).reshape(-1, size), lo, hi)
        h.passHessian(
            size,
            size,
            highspy.HessianFormat.kTriangular,
            np.arange(size + 1, dtype=np.int32),
            np.arange(size, dtype=np.int32),
            np.ones(size),
        )
        self._highs, self._size, self._index = h, size, np.arange(size, dtype=np.int32)
        self._lower, self._upper = lower, upper

    def __call__(self, y: np.ndarray, deadline: float | None = None) -> np.ndarray | None:
        """The nearest admissible point to ``y``, or ``None`` when HiGHS proves none (e.g.
        by ``deadline``, a ``time.perf_counter()`` value, or its iteration limit)."""
        self._highs.changeColsCost(self._size, self._index, -np.asarray(y, dtype=float))
        _run_highs(self._highs, deadline=deadline)
        if self._highs.getModelStatus() != self._highspy.HighsModelStatus.kOptimal:
            return None
        return np.clip(np.array(self._highs.getSolution().col_value), self._lower, self._upper)


def max_min_slack(
    coefs: np.ndarray,
    constants: np.ndarray,
    family_matrix: np.ndarray,
    family_lo: np.ndarray,
    family_hi: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    *,
    cuts: Sequence[tuple[np.ndarray, float]] = (),
    cap: float = 1e3,
    feasibility_tol: float = 1e-9,
    time_limit: float | None = None,
) -> tuple[float | None, np.ndarray | None]:
    """The LP ``max s`` s.t. ``coefs @ theta + constants >= s`` (every row),
    ``family_lo <= family_matrix @ theta <= family_hi``, ``lower <= theta <= upper``
    and ``cut @ theta >= rhs`` for each cut; ``s <= cap``.

    Returns ``(s, theta)`` at the optimum, or ``(None, None)`` when HiGHS does not
    prove one, e.g. within ``time_limit`` seconds (the caller must then assume nothing).
    """
    highspy = _highspy()
    p = coefs.shape[1]
    h = _new_highs(iterations=ITERATION_LIMIT)
    h.setOptionValue("primal_feasibility_tolerance", feasibility_tol)
    h.setOptionValue("dual_feasibility_tolerance", feasibility_tol)
    h.addVars(p + 1, np.append(lower, -highspy.kHighsInf).astype(float), np.append(upper, cap).astype(float))
    h.changeColsCost(1, np.array([p], dtype=np.int32), np.array([1.0]))
    h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    blocks = [
        (np.column_stack([coefs, -np.ones(len(coefs))]), -constants, np.full(len(coefs), np.inf)),
        (np.column_stack([family_matrix, np.zeros(len(family_matrix))]), family_lo, family_hi),
    ]
    if len(cuts):
        blocks.append(
            (
                np.array([np.append(c, 0.0) for c, _ in cuts]),
                np.array([r for _, r in cuts]),
                np.full(len(cuts), np.inf),
            )
        )
    for matrix, lo, hi in blocks:
        _add_dense_rows(h, np.asarray(matrix, dtype=float).reshape(-1, p + 1), lo, hi)
    _run_highs(h, deadline=None if time_limit is None else time.perf_counter() + max(1e-3, time_limit))
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None, None
    values = np.array(h.getSolution().col_value)
    return float(values[p]), values[:p]
