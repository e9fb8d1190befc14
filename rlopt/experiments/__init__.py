"""Experiments: configs, the grid runner (local processes or a Dask cluster), and
the reproduction of the published tables."""

from rlopt.experiments.config import (
    Cell,
    ExperimentConfig,
    FileSpec,
    SolverSpec,
    expand,
    load_any_config,
    load_config,
)
from rlopt.experiments.reproduce import paper_config, write_tables
from rlopt.experiments.runner import COLUMNS, GridRun, run_cell, run_grid

__all__ = [
    "Cell",
    "ExperimentConfig",
    "FileSpec",
    "SolverSpec",
    "expand",
    "load_any_config",
    "load_config",
    "paper_config",
    "write_tables",
    "COLUMNS",
    "GridRun",
    "run_cell",
    "run_grid",
]
