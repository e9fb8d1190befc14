"""Racing: every core on the proof.

- :mod:`~rlopt.milp.racing.race`: several families of one pair in worker processes (or
  on a Dask cluster), spare workers racing the open families with other HiGHS seeds, and
  :func:`~rlopt.milp.racing.race.combine`, a family's figure of its runs;
- :mod:`~rlopt.milp.racing.peers`: what the runs of a race tell each other (ceilings, and
  parameters each run recounts before it counts them).

A proven figure is the family's optimum whatever the number of workers; only how fast it
comes depends on them.
"""
