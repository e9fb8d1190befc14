"""The anytime certificate of a learning run: its interval over time.

At every moment of a run the truth lies in ``[lower, upper]``: ``lower`` is the
best *recounted* count of an admissible parameter the run has met (never a
solver's unverified claim), ``upper`` the best proven ceiling (the screening's
records at risk, the MILP's bound). Each improvement of either end is an event
``{"seconds", "lower", "lower_source", "upper", "upper_source"}``, so a user who
stops a run at any moment holds an honest interval and knows which step
produced each end.

The block ceilings' nouns live here too (:class:`BlockOptions`, what a user chooses;
:class:`BlockBound` and :class:`BlockCeiling`, the certificate a result carries;
:func:`describe_blocks`): the report and the CLI render them without loading the solver
(this module imports no Pyomo). The blocks themselves run in :mod:`rlopt.milp.ceilings.blocks`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from rlopt.exceptions import InputError
from rlopt.validation import JOBS, SEED, Interval, check_params

__all__ = [
    "Certificate",
    "describe_lower",
    "REGION_SEARCH",
    "SEARCH_NAMES",
    "BLOCK_CEILINGS",
    "BlockOptions",
    "BlockBound",
    "BlockCeiling",
    "describe_blocks",
]


REGION_SEARCH = "parameter-space branch and bound"
"""The label of what :mod:`rlopt.milp.ceilings.regions` finds or proves."""

SEARCH_NAMES = {"surrogate": "surrogate ascent", "line_search": "line search", "greedy_add": "greedy add"}


def describe_lower(source: str | None) -> str | None:
    """What to tell a user about a lower end's ``source`` (a result's ``lower_source``):
    ``None`` when the solver found it; else whether a search found it or it is a
    start that nothing improved (never presented as learned)."""
    if source in (None, "solver"):
        return None
    if source == REGION_SEARCH:
        return f"found by the {source} run beside the solver"
    steps = source.split(" from the ")[0].split(" + ")
    if all(step in SEARCH_NAMES.values() for step in steps):
        return f"found before the solve by {source}; the solver found nothing better"
    return f"no parameter better than the start was found ({source})"


"""The searches' names in a lower end's source (:mod:`rlopt.milp.incumbents.portfolio`)."""


@dataclass
class Certificate:
    """The interval of one run as it improves (``n_records`` records, clock from ``t0``,
    a ``time.perf_counter()`` value). ``progress(event)`` is called on every
    improvement (e.g. to print it)."""

    n_records: int
    t0: float = field(default_factory=time.perf_counter)
    progress: Callable[[dict], None] | None = None
    lower: int | None = None
    lower_source: str | None = None
    upper: int = field(init=False)
    upper_source: str = field(init=False)
    events: list[dict] = field(default_factory=list)

    def __post_init__(self):
        self.upper, self.upper_source = self.n_records, "number of records"

    def found(self, count: int, source: str) -> bool:
        """A verified count ``count`` (recounted from an admissible parameter) by
        ``source``; recorded when it raises the lower end. Returns whether it did."""
        if self.lower is not None and count <= self.lower:
            return False
        self.lower, self.lower_source = int(count), source
        self._event()
        return True

    def bounded(self, ceiling: int, source: str) -> bool:
        """A proven ceiling by ``source``; recorded when it lowers the upper end."""
        if ceiling >= self.upper:
            return False
        self.upper, self.upper_source = int(ceiling), source
        self._event()
        return True

    def _event(self) -> None:
        event = {
            "seconds": round(time.perf_counter() - self.t0, 3),
            "lower": self.lower,
            "lower_source": self.lower_source,
            "upper": self.upper,
            "upper_source": self.upper_source,
        }
        self.events.append(event)
        if self.progress is not None:
            self.progress(event)

    def to_list(self) -> list[dict]:
        return [dict(event) for event in self.events]


BLOCK_CEILINGS = "block ceilings"
"""The source the certificate names for a ceiling of the blocks."""


@dataclass(frozen=True)
class BlockOptions:
    """How a run proves block ceilings beside its solve.

    Parameters
    ----------
    size : int, default=30
        The most records per block (the blocks are as equal as can be).
    jobs : int, default=1
        Worker processes that solve the blocks, beside the run's own process; never
        derived from the machine's core count.
    scheduler : str, default=None
        A Dask scheduler's address: the blocks are solved there instead (``jobs`` unused).
        Its workers should run one thread each (``dask worker --nthreads 1``): Pyomo
        captures a solve's output through the process's file descriptors.
    seed : int, default=0
        Seed of the random partition.
    block_seconds : float, default=60
        The most one block's MILP may take (a block stopped by it counts its proven bound).
    """

    size: int = 30
    jobs: int = 1
    scheduler: str | None = None
    seed: int = 0
    block_seconds: float = 60.0

    _parameter_constraints: ClassVar[dict] = {
        "size": [Interval(Integral, 2)],
        "jobs": [JOBS],
        "seed": [SEED],
        "block_seconds": [Interval(Real, 0, closed="neither", note="seconds")],
    }

    def __post_init__(self):
        check_params(vars(self), self._parameter_constraints)
        if self.scheduler is not None and not isinstance(self.scheduler, str):
            raise InputError(f"scheduler={self.scheduler!r}; expected a Dask scheduler's address or None")

    @classmethod
    def coerce(cls, value) -> BlockOptions | None:
        """``None``, a :class:`BlockOptions`, or a dict of its fields."""
        if value is None or isinstance(value, cls):
            return value
        if not isinstance(value, dict):
            raise InputError(f"blocks={value!r}; expected a BlockOptions, a dict of its fields or None")
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise InputError(f"blocks has unknown option(s) {unknown}; expected some of {names}")
        return cls(**value)


@dataclass
class BlockBound:
    """One block's share of the ceiling: ``bound`` is what the ceiling counts (the block
    MILP's proven bound, or ``len(records)`` where there is none or it was contradicted)."""

    records: np.ndarray
    bound: int
    status: str  # optimal, time_limit, not_started, contradicted, failed: ...
    solver_bound: int | None = None
    verified: int | None = None  # the block's own best verified count
    seconds: float = 0.0
    strict: bool = False  # solved again, presolve off and a tighter tolerance (once contradicted)

    def to_dict(self) -> dict:
        return {
            "records": self.records.tolist(),
            "bound": self.bound,
            "status": self.status,
            "solver_bound": self.solver_bound,
            "verified": self.verified,
            "seconds": round(self.seconds, 3),
            "strict": self.strict,
        }


@dataclass
class BlockCeiling:
    """The ceiling ``sum r(S)`` with its certificate: the partition and each block's bound."""

    size: int
    seed: int
    blocks: list[BlockBound] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(block.bound for block in self.blocks)

    @property
    def complete(self) -> bool:
        """Every block counts its MILP's proven bound (none unsolved, failed or contradicted)."""
        return all(block.solver_bound is not None and block.status != "contradicted" for block in self.blocks)

    def to_dict(self) -> dict:
        return {
            "ceiling": self.total,
            "size": self.size,
            "seed": self.seed,
            "n_blocks": len(self.blocks),
            "complete": self.complete,
            "blocks": [block.to_dict() for block in self.blocks],
        }


def describe_blocks(certificate: dict) -> str:
    """``block ceiling 961 (36 of 36 blocks of at most 30 records proven optimal)``, from a
    :meth:`BlockCeiling.to_dict`."""
    proven = sum(block["status"] == "optimal" for block in certificate["blocks"])
    return (
        f"block ceiling {certificate['ceiling']} ({proven} of {certificate['n_blocks']} blocks of at most "
        f"{certificate['size']} records proven optimal)"
    )
