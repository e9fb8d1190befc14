"""The MILP of docs/method.md §3 and everything that makes it fast and checked.

The learning run of one family on one pair of files, and the modules it calls in order:

- :mod:`~rlopt.milp.pipeline`: :func:`~rlopt.milp.pipeline.learn` (the run and its
  passes under one time limit), ``verify``, and ``solve_block`` (a block's MILP);
- :mod:`~rlopt.milp.budget`: every share of the time limit (:class:`~rlopt.milp.budget.Budget`);
- :mod:`~rlopt.milp.steps`: the steps of a pass (starts, reduce phase, model, searches,
  the MIP start);
- :mod:`~rlopt.milp.conclude`: the solver's claim turned into a verified interval;
- :mod:`~rlopt.milp.beside`: what runs beside the solve, heard while it runs (the
  ceilings' searches, the block ceilings, the racing runs) into the run's certificate;
- :mod:`~rlopt.milp.margins`: every pair's margin as a linear function of the parameter;
- :mod:`~rlopt.milp.formulation`: the pure Pyomo builder (data and a family in, a model out);
- :mod:`~rlopt.milp.incumbents`: the incumbent searches before the solve (its own map),
  and the move of a parameter off the margin;
- :mod:`~rlopt.milp.reductions`: the exact reductions (witnesses, screening, conflicts,
  lazy rows; its own map), each switchable, none changing the optimum; the searches'
  switches are :class:`~rlopt.milp.reductions.Searches`;
- :mod:`~rlopt.milp.solvers`: the one package that calls HiGHS (its options free of
  Pyomo; the runtime, MILP rounds through Pyomo, LPs and QPs directly) and SCIP, the
  second solver that re-proves a claimed optimum.

Two packages beside the run, each with its own map:

- :mod:`~rlopt.milp.ceilings`: the certificate (a run's interval over time) and the
  ceilings that are not the MILP's bound: the parameter-space region search, hitting
  sets, block ceilings;
- :mod:`~rlopt.milp.racing`: families side by side and spare workers racing the open
  ones (``race``), and what the runs tell each other (``peers``).

The membership attack's MILP and region search live with the attack, in
:mod:`rlopt.risk.membership`. The result is :class:`rlopt.results.LearnResult`; the
estimator users call is :class:`rlopt.learn.LearnedDistanceLinkage`. ``build_model``,
``solve_model`` and ``export_model`` load Pyomo when first used; ``SolverOptions`` loads
nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

from rlopt.milp.solvers.options import SolverOptions

__all__ = ["build_model", "SolverOptions", "solve_model", "export_model"]

_LAZY = {
    "build_model": "rlopt.milp.formulation",
    "solve_model": "rlopt.milp.solvers.mip",
    "export_model": "rlopt.milp.solvers.mip",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
