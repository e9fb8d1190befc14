"""The incumbents: searches for a verified lower end, run before the MILP.

- :mod:`~rlopt.milp.incumbents.portfolio`: the incumbent portfolio: every admissible
  parameter a run can name (the starts, MD's and NCA's matrices projected into the
  family), improved by the three searches below, each result recounted by the family's
  reference evaluator (a lower end, never a bound);
- :mod:`~rlopt.milp.incumbents.surrogate`: projected gradient ascent on a smooth surrogate
  of the count;
- :mod:`~rlopt.milp.incumbents.line_search`: coordinate ascent on the exact count with an
  exact line search;
- :mod:`~rlopt.milp.incumbents.greedy`: grow the set of re-identified records one LP at a time;
- :mod:`~rlopt.milp.incumbents.exact`: a parameter left on the margin moved off it, so
  that it re-identifies its records at the exact margin (the conclusion's last step).

The parameter-space branch and bound, a ceiling run beside the solve, is
:mod:`rlopt.milp.ceilings.regions` (beside the block ceilings of :mod:`rlopt.milp.ceilings.blocks`).
"""
