"""The solvers: the only package that imports highspy (and Pyomo's solver interface) and
pyscipopt.

Split as Pyomo's own ``contrib.solver`` is (common nouns apart from one solver's adapter):

- :mod:`~rlopt.milp.solvers.options`: :class:`SolverOptions`, :class:`Cut` and
  :class:`SolveResult`, free of Pyomo and highspy (importing them loads neither);
- :mod:`~rlopt.milp.solvers.runtime`: HiGHS in this process: its one task scheduler,
  Ctrl-C during a run, the caller's streams, the callback bridge to a run's reports;
- :mod:`~rlopt.milp.solvers.mip`: the MILP through Pyomo (:func:`solve_model`, its rounds
  of added rows, HiGHS's options, :func:`export_model`);
- :mod:`~rlopt.milp.solvers.lp`: plain LPs and QPs through highspy (:class:`SlackLP`,
  :class:`Projection`, :func:`max_min_slack`);
- :mod:`~rlopt.milp.solvers.scip`: SCIP through PySCIPOpt, the second exact solver (an
  optional extra) that re-proves a claimed optimum: :func:`solve_model_scip` (the MILP's
  rounds, reading the model file :func:`write_model` writes), :func:`solve_file_scip`.
- :mod:`~rlopt.milp.solvers.covering`: the hitting-set MIP of :mod:`rlopt.milp.ceilings.hitting`
  through highspy (:class:`HittingMaster`).

The names below are loaded when first used, so ``from rlopt.milp.solvers import
SolverOptions`` loads no solver library.
"""

from __future__ import annotations

import importlib
from typing import Any

from rlopt.exceptions import SolverUnavailableError
from rlopt.milp.solvers.options import Cut, SolveResult, SolverOptions

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
    "HittingMaster",
    "solver_summary",
    "write_model",
    "solve_model_scip",
    "solve_file_scip",
    "scip_available",
]

_LAZY = {
    "solve_model": "mip",
    "export_model": "mip",
    "write_model": "mip",
    "solve_model_scip": "scip",
    "solve_file_scip": "scip",
    "scip_available": "scip",
    "solver_summary": "mip",
    "mip_options": "mip",
    "highs_version": "runtime",
    "max_min_slack": "lp",
    "SlackLP": "lp",
    "Projection": "lp",
    "HittingMaster": "covering",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"rlopt.milp.solvers.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
