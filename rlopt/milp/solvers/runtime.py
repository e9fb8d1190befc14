"""HiGHS's runtime in this process: the one task scheduler every run goes through
(:class:`_Scheduler`), Ctrl-C during a run (:class:`StopRequest`), the caller's streams
while Pyomo captures a run's output, and the bridge from HiGHS's callbacks to a run's
reports (:class:`Progress`, Pyomo's ``Highs`` with a MIP start).
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
from collections.abc import Callable
from contextlib import contextmanager, nullcontext

import numpy as np

from rlopt.exceptions import SolverUnavailableError

__all__ = [
    "highs_version",
    "SCHEDULER",
    "ctrl_c_stops_solver",
    "python_handles_ctrl_c",
    "highs_solver",
    "Progress",
    "StopRequest",
    "load_highspy",
    "run_highs",
    "stop_scheduler_before_fork",
]


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
        highspy = load_highspy()
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


SCHEDULER = _Scheduler()


def stop_scheduler_before_fork() -> None:
    """Stop HiGHS's worker threads (the scheduler starts again, at its size, with the next
    run): a child forked while they run inherits a scheduler without its threads, and
    its first HiGHS run crashed (a segmentation fault in the child restarting it, seen
    with the scheduler at 5 threads). Called before forking a search that runs HiGHS."""
    with SCHEDULER.hold(None, restart=True):
        pass


def run_highs(h, *, deadline: float | None = None) -> None:
    """``h.run()`` of a plain highspy model (an LP or QP) through :data:`SCHEDULER`,
    within ``deadline`` (a ``time.perf_counter()`` value; past it the run does not
    start) and Ctrl-C (the simplex and interior-point interrupt callbacks); the caller
    reads ``h.getModelStatus()``. A run refused by a scheduler that other code started
    at another size is run once more after a restart."""
    highspy = load_highspy()
    if deadline is not None:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            h.clearSolver()
            return
        h.setOptionValue("time_limit", float(remaining))
    with ctrl_c_stops_solver() as stop:
        hooks = [] if stop is None else [h.cbSimplexInterrupt, h.cbIpmInterrupt]
        for callback in hooks:
            callback.subscribe(stop.check)
        try:
            for restart in (False, True):
                with SCHEDULER.hold(None, restart=restart) as size:
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


class StopRequest:
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


def python_handles_ctrl_c() -> bool:
    """Whether SIGINT is Python's default (raise KeyboardInterrupt) and this is the main
    thread: only then may a solver take Ctrl-C (a grid worker ignores it)."""
    return (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )


@contextmanager
def ctrl_c_stops_solver():
    """``StopRequest`` while SIGINT is Python's default (raise KeyboardInterrupt) and
    this is the main thread; else ``None`` (e.g. a grid worker that ignores SIGINT)."""
    if not python_handles_ctrl_c():
        yield None
        return
    stop = StopRequest()
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


class Progress:
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
        stop: StopRequest,
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
        stop: StopRequest | None = None
        progress: Progress | None = None
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


def highs_solver():
    try:
        load_highspy()  # first: its banner silenced
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
    return ".".join(map(str, highs_solver().version()))


@functools.cache
def load_highspy():
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
