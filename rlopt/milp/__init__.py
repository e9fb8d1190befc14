"""The MILP: a pure Pyomo builder (formulation) and the one module that calls HiGHS (solve)."""

from rlopt.milp.formulation import ModelInfo, build_model, linkage_rows
from rlopt.milp.solve import Cut, SolveResult, SolverOptions, export_model, solve_model

__all__ = [
    "build_model",
    "linkage_rows",
    "ModelInfo",
    "Cut",
    "SolveResult",
    "SolverOptions",
    "solve_model",
    "export_model",
]
