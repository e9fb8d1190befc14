"""Experiments: configs, the grid runner (local processes or a Dask cluster), and
the reproduction of the published tables."""

from rlopt.experiments.config import ExperimentConfig, load_config
from rlopt.experiments.reproduce import paper_config, write_tables
from rlopt.experiments.runner import GridRun, run_grid

__all__ = ["ExperimentConfig", "load_config", "paper_config", "write_tables", "GridRun", "run_grid"]
