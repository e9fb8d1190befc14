"""Experiments: configs, the grid runner (local processes or a Dask cluster), and
the reproduction of the published tables.

Modules:

- :mod:`~rlopt.experiments.config`: the configs, validated on load;
- :mod:`~rlopt.experiments.runner`: the cells in parallel (local processes or a Dask
  cluster), one tidy row per cell, atomic writes, resumable;
- :mod:`~rlopt.experiments.reproduce`: the published Tables 1 and 2 regenerated;
- :mod:`~rlopt.experiments.transparency`: the published rank-swapping table (Table 5);
- :mod:`~rlopt.experiments.compare`: ``rlopt compare``, every masking method on one
  risk-utility map whose risk axis is the proven worst case.
"""

from rlopt.experiments.config import ExperimentConfig, load_config
from rlopt.experiments.reproduce import paper_config, write_tables
from rlopt.experiments.runner import GridRun, run_grid

__all__ = ["ExperimentConfig", "load_config", "paper_config", "write_tables", "GridRun", "run_grid"]
