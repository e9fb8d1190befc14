"""Ceilings: proven upper ends of a family's count that are not the big-C MILP's bound,
and the certificate that holds a run's interval.

- :mod:`~rlopt.milp.ceilings.certificate`: the interval of a run over time (which step
  proved each end), and the block ceilings' nouns; Pyomo-free, so a report renders it
  without loading the solver;
- :mod:`~rlopt.milp.ceilings.regions`: the parameter-space branch and bound (an exact
  ceiling for simplex families of few parameters), run beside the solve;
- :mod:`~rlopt.milp.ceilings.hitting`: the records no parameter re-identifies together,
  hit by a set-cover master (combinatorial Benders); run on random blocks beside the
  solve when the region search cannot;
- :mod:`~rlopt.milp.ceilings.blocks`: the block ceilings (the records split into blocks,
  each block's MILP proven in a worker process or on a Dask cluster, the sum a ceiling).

The learning run (:mod:`rlopt.milp.pipeline`) starts them and hears them through
:mod:`rlopt.milp.beside`; none of them imports the learning run.
"""
