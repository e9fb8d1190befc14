"""Every share of a run's time limit, in one place.

A learning run has one time limit for the whole fit. :class:`Budget` (built from the
run's start and that limit) says when each step must end: the quick pass, the reduce
phase, the incumbent searches, the MILP, the wait for the block ceilings, and the
conclusion's share after the MILP. Without a limit every deadline is ``None`` (or
``inf`` on the wall clock) and every step runs to its end.

The constants are the shares; each says what it is for and which benchmark measures it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

__all__ = [
    "Budget",
    "REDUCE_SHARE",
    "PASS_REDUCE_SHARE",
    "REDUCE_END",
    "MIN_SOLVE_SHARE",
    "BLOCK_GRACE_SECONDS",
    "CONCLUDE_SHARE",
    "RECOUNT_RESERVE",
    "LOAD_FACTOR",
    "SEARCH_SHARE",
    "QUICK_SECONDS",
    "QUICK_SHARE",
    "QUICK_MIN_SECONDS",
    "NARROW_RECORDS",
]

REDUCE_SHARE = 0.09
"""Share of a time limit that the reduce phases of a run (the screening and conflict LPs
of its quick pass and of its full pass together) may use, the last LP's overshoot
included: under a tenth of the limit (measured by benchmarks/bench_reduce.py)."""

PASS_REDUCE_SHARE = 0.3
"""Share of a pass's own time limit its reduce phase may use."""

REDUCE_END = 0.7
"""The screening and conflict LPs end by this share of the limit (from the fit's start)
whatever the steps before them took, so the model and the MILP keep the rest."""

MIN_SOLVE_SHARE = 0.02
"""The MILP's time when the steps before it used the whole limit: this share of it (a
glimpse, given whenever loading the model takes less); also the window of the
screening's start and of the conclusion's move of a parameter to the margin."""

BLOCK_GRACE_SECONDS = 2.0
"""After the MILP's end, how long the run waits for blocks still finishing (their HiGHS
runs end at the same time, then recount their parameter; measured by
benchmarks/bench_blocks.py)."""

CONCLUDE_SHARE = 0.05
"""Share of the limit kept after the MILP for the recount of its parameter and the result,
or ``RECOUNT_RESERVE`` times what a recount of every pair takes if that is more."""

RECOUNT_RESERVE = 2.0
"""After the MILP, its last parameter is recounted twice (as an improving solution, then
by the conclusion's check of every pair); a recount's time is that of the screening's
evaluation of every pair, or of the slowest start's recount (measured by
benchmarks/bench_scale.py)."""

LOAD_FACTOR = 1.5
"""Loading a model into HiGHS takes about this many times its build: a MILP whose load
would take more than what is left of the limit and more than the glimpse is not started
(HiGHS would start past the limit; measured by benchmarks/bench_scale.py)."""

SEARCH_SHARE = 0.5
"""With a time limit, the searches for a better start (:mod:`rlopt.milp.incumbents.portfolio`),
which run once the model is built, end by this share of it plus what the reduce phase
and the model took."""

QUICK_SECONDS = 8.0
QUICK_SHARE = 0.15
"""Before its searches a run tries the plain solve from the known starts for
``min(QUICK_SECONDS, QUICK_SHARE * limit)``: on the published grid most cells are
proven in that time, and their searches bought nothing (measured by
benchmarks/bench_grid.py)."""

QUICK_MIN_SECONDS = 3.0
"""No quick pass below this budget (a limit under 20 s): its fixed costs (the model, the
recount of its parameter against every pair) would exceed it (measured by
benchmarks/bench_milp.py)."""

NARROW_RECORDS = 1
"""A quick pass that ends within this many records of its proven ceiling leaves the
searches out of the full pass: they could add at most that many records, and the solve
gets their time (a wider rule, 1 % of the records, lost lower ends on the published
grid: measured by benchmarks/bench_grid.py)."""


@dataclass(frozen=True)
class Budget:
    """The deadlines of one pass: ``t0`` the run's start (``time.perf_counter()``),
    ``limit`` the pass's seconds (``None``: none), ``reduce_seconds`` what the reduce
    phases of every pass of the run may take together (``REDUCE_SHARE`` of the run's
    limit)."""

    t0: float
    limit: float | None
    reduce_seconds: float | None = None

    @classmethod
    def of_run(cls, t0: float, limit: float | None) -> Budget:
        """The budget of a run's (full) pass: the reduce phases get ``REDUCE_SHARE``."""
        return cls(t0, limit, None if limit is None else REDUCE_SHARE * limit)

    def with_limit(self, limit: float | None) -> Budget:
        """The same run's budget for a pass of ``limit`` seconds (the reduce share stays the run's)."""
        return dataclasses.replace(self, limit=limit)

    def deadline(self, share: float = 1.0, since: float | None = None) -> float | None:
        """``since`` (the run's start by default) plus ``share`` of the limit."""
        if self.limit is None:
            return None
        return (self.t0 if since is None else since) + share * self.limit

    def quick_pass(self) -> float | None:
        """The quick pass's seconds: ``QUICK_SECONDS``, at most ``QUICK_SHARE`` of the
        limit; ``None`` (no quick pass) below ``QUICK_MIN_SECONDS``."""
        seconds = QUICK_SECONDS if self.limit is None else min(QUICK_SECONDS, QUICK_SHARE * self.limit)
        return seconds if seconds >= QUICK_MIN_SECONDS else None

    def reduce_deadline(self, started: float, used: float) -> float | None:
        """When a reduce phase started at ``started`` ends: ``PASS_REDUCE_SHARE`` of the
        pass, never past ``REDUCE_END`` of the limit (what the steps before it overran is
        taken from here), nor past what the run's reduce share has left (``used``: what
        earlier passes' reduce phases took)."""
        left = None if self.reduce_seconds is None else started + max(0.0, self.reduce_seconds - used)
        return _earliest(self.deadline(PASS_REDUCE_SHARE, since=started), self.deadline(REDUCE_END), left)

    def search_deadline(self, recount: float, reduce_seconds: float, build_seconds: float) -> float | None:
        """When the searches after the model end: ``SEARCH_SHARE`` of the limit plus what
        the pass's reduce phase and model took, and early enough for their last result to
        be recounted (``recount`` seconds), the screening's start to be tried, the model to
        be loaded and solved a little and the result concluded within the limit."""
        deadline, limit = self.deadline(SEARCH_SHARE), self.limit
        if deadline is None or limit is None:
            return deadline
        needed = (
            recount
            + 2 * MIN_SOLVE_SHARE * limit  # the screening's start and the glimpse of a solve
            + LOAD_FACTOR * build_seconds
            + max(CONCLUDE_SHARE * limit, RECOUNT_RESERVE * recount)
        )
        return min(deadline + reduce_seconds + build_seconds, self.t0 + limit - needed)

    def window(self, now: float) -> float | None:
        """A short step's own deadline from ``now``: ``MIN_SOLVE_SHARE`` of the limit."""
        return None if self.limit is None else now + MIN_SOLVE_SHARE * self.limit

    def solve_limit(self, now: float, build_seconds: float, recount: float) -> tuple[float | None, bool]:
        """``(time_limit, started)`` of the MILP: what is left of the limit less the
        conclusion's share (at least ``RECOUNT_RESERVE * recount`` seconds), a glimpse when
        nothing is; not started when loading the model (``LOAD_FACTOR`` times its build)
        would take more than both."""
        if self.limit is None:
            return None, True
        limit = self.limit
        left = limit - max(CONCLUDE_SHARE * limit, RECOUNT_RESERVE * recount) - (now - self.t0)
        started = LOAD_FACTOR * build_seconds <= max(left, MIN_SOLVE_SHARE * limit)
        return max(MIN_SOLVE_SHARE * limit, left), started

    def block_deadline(self, wall_now: float) -> float:
        """When the blocks must be done, on the wall clock (``wall_now``, a ``time.time()``
        value, shared with worker processes and Dask workers): when the MILP ends."""
        return math.inf if self.limit is None else wall_now + (1 - CONCLUDE_SHARE) * self.limit

    def block_wait(self, now: float, wall_now: float) -> float:
        """Until when (``time.time()``) the run waits for the blocks in flight after its
        MILP: the MILP's end plus ``BLOCK_GRACE_SECONDS``."""
        if self.limit is None:
            return math.inf
        left = self.t0 + (1 - CONCLUDE_SHARE) * self.limit - now
        return wall_now + max(0.0, left) + BLOCK_GRACE_SECONDS

    def conclude_deadline(self, now: float) -> float | None:
        """The conclusion's steps end by the limit, or a window after ``now`` past it."""
        if self.limit is None:
            return None
        return max(self.t0 + self.limit, now + MIN_SOLVE_SHARE * self.limit)


def _earliest(*deadlines: float | None) -> float | None:
    known = [d for d in deadlines if d is not None]
    return min(known) if known else None
