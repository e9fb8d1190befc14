"""What runs beside the MILP: searches for a verified lower end, and a second ceiling.

- :mod:`~rlopt.milp.search.portfolio`: the incumbent portfolio, run before the MILP:
  every admissible parameter a run can name (the starts, MD's and NCA's matrices
  projected into the family), improved by the three searches below, each result
  recounted by the family's reference evaluator (a lower end, never a bound);
- :mod:`~rlopt.milp.search.surrogate`: projected gradient ascent on a smooth surrogate
  of the count;
- :mod:`~rlopt.milp.search.line_search`: coordinate ascent on the exact count with an
  exact line search;
- :mod:`~rlopt.milp.search.greedy`: grow the set of re-identified records one LP at a time;
- :mod:`~rlopt.milp.search.regions`: the parameter-space branch and bound of the
  low-dimensional simplex families (wm, wm_m, owa), run in a companion process beside
  the solve: an exact ceiling, and a proof when it meets a verified count.
"""
