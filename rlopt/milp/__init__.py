"""The MILP of docs/method.md §3 and everything that makes it fast and checked.

The pipeline of one family on one pair of files, and the modules it calls in order:

- :mod:`~rlopt.milp.pipeline`: :func:`~rlopt.milp.pipeline.learn`, the steps below
  under one time limit, and :class:`~rlopt.milp.pipeline.LearnResult`; ``verify``;
- :mod:`~rlopt.milp.search`: the incumbent searches before the solve and the
  parameter-space branch and bound beside it (its own map);
- :mod:`~rlopt.milp.acceleration`: the exact reductions (screening, conflicts, lazy
  rows, big-C per row, the start), each switchable, none changing the optimum;
- :mod:`~rlopt.milp.margins`: every pair's margin as a linear function of the parameter;
- :mod:`~rlopt.milp.formulation`: the pure Pyomo builder (data and a family in, a model out);
- :mod:`~rlopt.milp.solve`: the one module that calls HiGHS (MILP through Pyomo, LPs
  and QPs directly), its thread scheduler, deadlines, Ctrl-C and the guards on its word;
- :mod:`~rlopt.milp.certificate`: the interval of a run over time;
- :mod:`~rlopt.milp.blocks`: block ceilings, the records in blocks whose small MILPs
  (each a ``learn`` restricted to its records) are proven beside the run, in worker
  processes or on a Dask cluster.

The estimator users call is :class:`rlopt.learn.LearnedDistanceLinkage`.
"""

from rlopt.milp.formulation import build_model
from rlopt.milp.solve import SolverOptions, export_model, solve_model

__all__ = ["build_model", "SolverOptions", "solve_model", "export_model"]
