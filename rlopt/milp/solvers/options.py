"""The nouns of a solve, free of Pyomo and highspy: :class:`SolverOptions` (what a
solve may do), :class:`Cut` (a row added between rounds), :class:`Termination` (why the
solver stopped) and :class:`SolveResult` (what it returned). Importing them loads neither
solver library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from rlopt.validation import SEED, TIME_LIMIT, Interval, Options, check_params

__all__ = ["Cut", "SolverOptions", "SolveResult", "Termination", "MIP_FEASIBILITY_FLOOR", "SOLVER_NAMES"]

SOLVER_NAMES = {"highs": "HiGHS", "scip": "SCIP"}
"""How a message names the solver of a result's ``solver["name"]``."""


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
        contradicts (a block's re-solve, :mod:`rlopt.milp.ceilings.blocks`).
    seed : int, default=0
        HiGHS's random seed. A proof's time varies with it by large factors; the runs
        that race one family (:mod:`rlopt.milp.racing.race`) each take another. An optimum
        never depends on it.
    target : int, default=None
        Records: the run stops as soon as it decides whether some parameter re-identifies
        at least ``target`` of them: a verified count reaches it (the file fails the
        threshold) or a proven ceiling falls below it (it passes). The figure is then an
        interval with status ``decided``. ``None``: the run closes its interval.
    """

    time_limit: float | None = None
    rel_gap: float = 0.0
    threads: int | None = 1
    log: bool = False
    feasibility_tol: float = 1e-9
    max_cut_rounds: int = 100
    presolve: bool = True
    seed: int = 0
    target: int | None = None

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
        "seed": [SEED],
        "target": [Interval(Integral, 1), None],
    }

    def decided(self, lower: int | None, upper: int) -> bool:
        """Whether the interval ``[lower, upper]`` answers :attr:`target` (``False``
        without one): ``lower >= target`` or ``upper < target``."""
        return self.target is not None and ((lower or 0) >= self.target or upper < self.target)

    def __post_init__(self):
        check_params(vars(self), self._parameter_constraints)
        if self.threads is None:
            object.__setattr__(self, "threads", 1)


class Termination(StrEnum):
    """Why the solver stopped: the solver's word, never a figure's. The conclusion
    (:mod:`rlopt.milp.conclude`) turns it into the figure's :class:`rlopt.status.Status`
    (``optimal``, an interval, ...), or an error for ``infeasible`` and ``error``."""

    OPTIMAL = "optimal"  # HiGHS proved the optimum (and no cutting plane is missing)
    TIME_LIMIT = "time_limit"  # the time limit, or rows still missing when time ran out
    INTERRUPTED = "interrupted"  # Ctrl-C before a proof
    INFEASIBLE = "infeasible"
    ERROR = "error"  # any other end: unbounded, a numerical error, an unknown status
    STOPPED = "stopped"  # stopped because a proof arrived from elsewhere (a closed interval)

    @property
    def failed(self) -> bool:
        """Whether the solve failed: every model rlopt builds is feasible (it holds the
        parameter that re-identifies nothing, or a verified one) and bounded (its objective
        counts records), so ``infeasible`` and ``error`` are the solver's failure, never a
        finding, and nothing the solve returned bounds anything."""
        return self in (Termination.INFEASIBLE, Termination.ERROR)


@dataclass
class SolveResult:
    """What the solver returned.

    ``incumbent`` and ``objective_bound`` are the objective ``sum K`` (records *not*
    re-identified): the incumbent found and the proven lower bound. ``termination`` is
    ``optimal`` only when HiGHS proved the optimum and no cutting plane is missing.
    ``interrupted``: Ctrl-C arrived during the solve, which stopped there (termination
    ``interrupted`` unless the optimum was proven first); the caller should stop too.

    The bound of a failed solve (:attr:`Termination.failed`) is dropped here, whatever the
    solver reported with it: ``objective_bound`` is ``None`` then, so that no caller can
    read it as a ceiling. A limit (time, Ctrl-C, a proof from elsewhere) keeps the dual
    bound the solver had proven when it stopped.
    """

    termination: Termination
    incumbent: float | None
    objective_bound: float | None
    theta: np.ndarray | None
    seconds: float
    cut_rounds: int = 0
    cut_cap_hit: bool = False
    solver: dict = field(default_factory=dict)
    interrupted: bool = False

    def __post_init__(self):
        self.termination = Termination(self.termination)
        if self.termination.failed and self.objective_bound is not None:
            self.solver = {**self.solver, "dropped_bound": self.objective_bound}
            self.objective_bound = None
