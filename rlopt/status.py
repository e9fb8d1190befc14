"""Every status a figure of rlopt carries, in one place (README, "Statuses").

A :class:`Status` is a ``str`` (``Status.OPTIMAL == "optimal"``), so results,
JSON and CSV files hold the plain value. It says what a figure *is*; why the solver
stopped is the solver's own word, :class:`rlopt.milp.solvers.options.Termination`, which
the conclusion turns into a status (docs/method.md, the glossary).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Status"]


class Status(StrEnum):
    # a learned family (LearnResult.status, the status column of grid results)
    OPTIMAL = "optimal"  # proven: one number
    TIME_LIMIT = "time_limit"  # stopped by the time limit: an interval
    GAP_LIMIT = "gap_limit"  # stopped at a relative gap > 0: an interval
    CUT_LIMIT = "cut_limit"  # the cap on rounds of added rows was reached: an interval
    INTERRUPTED = "interrupted"  # Ctrl-C: the interval so far
    DECIDED = "decided"  # stopped once the interval answered the threshold (--threshold): an interval
    # rows of a risk assessment or grid that are not learned
    BASELINE = "baseline"  # am, md in a grid
    EXACT = "exact"  # a baseline computed exactly
    APPLIED = "applied"  # saved parameters evaluated without solving
    FAILED = "failed"  # the solver failed on this family; the others are kept
    SAMPLED = "sampled"  # learned on a sample, recounted on the whole file: a lower end (ceiling: identical records)
    # the headline of a risk assessment
    PROVEN = "proven"
    INTERVAL = "interval"
    ESTIMATE = "estimate"  # an out-of-sample figure with its 95 % interval (a membership cell of a map)
    NONE = "none"  # neither a family nor an attack was assessed

    @property
    def is_interval(self) -> bool:
        """A figure with this status is an interval ``[lower, bound]``, not one number."""
        return self in (
            Status.TIME_LIMIT,
            Status.GAP_LIMIT,
            Status.CUT_LIMIT,
            Status.INTERRUPTED,
            Status.DECIDED,
            Status.INTERVAL,
        )
