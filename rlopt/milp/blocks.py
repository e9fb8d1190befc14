"""Block ceilings: an upper bound on a family's re-identifications, proven block by block.

Split the records into blocks ``S_1 .. S_m``. A block's best count
``r(S) = max_p #{i in S re-identified by p}`` (its records still compete against every
original) is a MILP with only ``|S|`` binaries, and no parameter re-identifies more than
``sum_b r(S_b)`` records: a ceiling for the whole file whose blocks are independent, so
they are solved beside the run in worker processes (``jobs``) or on a Dask cluster
(``scheduler``).

Valid by construction:

- ``r(S)`` is the block MILP's proven bound (its dual bound, through the same certificate
  as every run), never its incumbent; a block not solved in time counts ``|S|``;
- every ``r(S)`` is compared with the records of ``S`` that each verified parameter of
  the run re-identifies (and with the block's own verified count); a block below one of
  them is *contradicted*: it is solved again with HiGHS's presolve off and a tenth of
  the feasibility tolerance while time is left, and a bound still contradicted counts
  ``|S|`` (a contradicted bound is never reported).

Names: :class:`BlockOptions` (what the user chooses), :func:`partition`,
:class:`BlockBound` and :class:`BlockCeiling` (the certificate in the result),
:class:`BlockSearch` (the blocks of one run, solved beside it).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from rlopt.exceptions import InputError
from rlopt.validation import JOBS, SEED, Interval, check_params

__all__ = [
    "BLOCK_CEILINGS",
    "BlockBound",
    "BlockCeiling",
    "BlockOptions",
    "BlockSearch",
    "BlockSolver",
    "describe_blocks",
    "partition",
]

BLOCK_CEILINGS = "block ceilings"
"""The source the certificate names for a ceiling of the blocks."""

MIN_BLOCK_SECONDS = 1.0
"""A block given less than this is not started (it counts ``|S|``)."""

POLL_SECONDS = 0.5
"""How often a running solve looks for newly finished blocks (:meth:`BlockSearch.update`)."""

MIN_FEASIBILITY_TOL = 1e-10
"""The tightest feasibility tolerance of a strict re-solve (SolverOptions' floor)."""


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


def partition(n_records: int, size: int, seed: int) -> list[np.ndarray]:
    """The records in random blocks of at most ``size``, as equal as can be (103 records
    in blocks of 10: 11 blocks of 9 or 10), each block's indices sorted."""
    order = np.random.default_rng(seed).permutation(n_records)
    parts = np.array_split(order, max(1, -(-n_records // size)))
    return [np.sort(part) for part in parts]


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


def _unsolved(status: str, strict: bool = False) -> dict:
    """What :func:`solve_block` reports of a block without a figure (it counts ``|S|``)."""
    return {"status": status, "bound": None, "verified": None, "seconds": 0.0, "strict": strict}


def _least(records: np.ndarray, verified: Sequence[np.ndarray]) -> int:
    """The most records of a block that one verified parameter re-identifies."""
    return max((int(correct[records].sum()) for correct in verified), default=0)


def block_bound(records: np.ndarray, found: dict | None, verified: Sequence[np.ndarray] = ()) -> BlockBound:
    """What the ceiling counts for a block: its MILP's proven bound (``found``, from
    :func:`solve_block`; ``None``: not finished), or ``len(records)`` where there is none
    or a verified parameter re-identifies more of its records than the bound allows."""
    if found is None or found["bound"] is None:
        status = "not_started" if found is None else str(found["status"])
        return BlockBound(records, len(records), status, strict=bool(found and found.get("strict")))
    solver_bound = int(found["bound"])
    contradicted = solver_bound < _least(records, verified)
    return BlockBound(
        records,
        len(records) if contradicted else min(len(records), solver_bound),
        "contradicted" if contradicted else str(found["status"]),
        solver_bound=solver_bound,
        verified=found["verified"],
        seconds=found["seconds"],
        strict=bool(found.get("strict")),
    )


def solve_block(
    data, family, margin: float, records: np.ndarray, deadline: float, options, strict: bool = False
) -> dict:
    """One block's MILP (in a worker): its records against every original, the others
    fixed as not re-identified; ``deadline`` on the wall clock (``time.time()``), shared
    by processes and machines. ``strict``: HiGHS's presolve off and a tenth of the
    feasibility tolerance, the second opinion on a contradicted bound; a block whose own
    parameter recounts above its bound gets it here at once."""
    from rlopt.exceptions import RecountMismatchError
    from rlopt.milp.acceleration import Reductions
    from rlopt.milp.pipeline import learn
    from rlopt.milp.solve import SolverOptions

    started = time.time()
    limit = min(options.block_seconds, deadline - started)
    if limit < MIN_BLOCK_SECONDS:
        return _unsolved("not_started", strict)
    n_records = data.original.shape[0]
    candidates = np.zeros((n_records, n_records), dtype=bool)
    candidates[records, :] = True
    searches_off = Reductions(
        nca_start=False, surrogate=False, line_search=False, greedy_add=False, quick_solve=False
    )
    tol = max(MIN_FEASIBILITY_TOL, options.feasibility_tol / 10) if strict else options.feasibility_tol
    try:
        result, _ = learn(
            data,
            family,
            margin=margin,
            options=SolverOptions(time_limit=limit, feasibility_tol=tol, presolve=not strict),
            candidates=candidates,
            reductions=searches_off,
        )
    except RecountMismatchError as exc:  # its own parameter above its bound
        if strict:
            return _unsolved(f"contradicted: {exc}", strict)
        return solve_block(data, family, margin, records, deadline, options, strict=True)
    return {
        "status": str(result.status),
        "bound": result.bound,
        "verified": result.n_correct_verified,
        "seconds": time.time() - started,
        "strict": strict,
    }


class BlockSearch:
    """The blocks of one run, submitted at once to worker processes (or a Dask cluster)
    and collected as they finish; :meth:`wait` solves a contradicted block again (strict)
    while time is left; :meth:`ceiling` is the ceiling so far (blocks not yet finished
    count ``|S|``), checked against the run's verified parameters."""

    def __init__(self, data, family, margin: float, solver_options, options: BlockOptions, deadline: float):
        self.options = options
        n_records = data.original.shape[0]
        self.records = partition(n_records, options.size, options.seed)
        self._problem = (data, family, margin)
        self._solver = BlockSolver(options.block_seconds, solver_options.feasibility_tol)
        self._results: dict[int, dict] = {}
        self._deadline = deadline
        self._polled = -math.inf  # when update() last looked
        self._client = None
        if options.scheduler is not None:
            from rlopt.processes import dask_client

            self._client = dask_client(options.scheduler)
            self._executor = self._client.get_executor()
        else:
            from rlopt.processes import local_pool

            self._executor = local_pool(options.jobs)
        self._futures = {b: self._submit(b, deadline) for b in range(len(self.records))}

    def _submit(self, b: int, deadline: float, strict: bool = False) -> concurrent.futures.Future:
        return self._executor.submit(
            solve_block, *self._problem, self.records[b], deadline, self._solver, strict
        )

    def update(self, verified: Sequence[np.ndarray]) -> bool:
        """While the run solves (at most every :data:`POLL_SECONDS`): the blocks finished
        since, a contradicted one submitted again strict; whether any finished."""
        now = time.perf_counter()
        if now - self._polled < POLL_SECONDS:
            return False
        self._polled = now
        finished = self._collect()
        self._resolve_contradicted(verified, self._deadline)
        return finished

    def _collect(self) -> bool:
        """The results of the blocks finished since; whether there were any."""
        finished = False
        for b, future in self._futures.items():
            if b in self._results or not future.done():
                continue
            finished = True
            try:
                self._results[b] = future.result()
            except concurrent.futures.CancelledError:
                self._results[b] = _unsolved("not_started")
            except Exception as exc:  # the block's own failure: it counts |S|, and says why
                self._results[b] = _unsolved(f"failed: {type(exc).__name__}: {exc}")
        return finished

    def _resolve_contradicted(self, verified: Sequence[np.ndarray], deadline: float) -> None:
        """Submit again, strict, each block whose bound a verified parameter contradicts
        (while a block can still start before ``deadline``)."""
        if deadline - time.time() < MIN_BLOCK_SECONDS:
            return
        for b, found in list(self._results.items()):
            if found["bound"] is None or found.get("strict"):
                continue
            if int(found["bound"]) < _least(self.records[b], verified):
                del self._results[b]
                self._futures[b] = self._submit(b, deadline, strict=True)

    def wait(self, until: float, verified: Sequence[np.ndarray] = ()) -> None:
        """Wait for the blocks in flight until ``until`` (``time.time()``); a block that
        ``verified`` (the records each verified parameter re-identifies) contradicts is
        solved again, strict, within the same time."""
        while True:
            self._collect()
            self._resolve_contradicted(verified, until)
            pending = [f for b, f in self._futures.items() if b not in self._results]
            left = None if math.isinf(until) else until - time.time()
            if not pending or (left is not None and left <= 0):
                return
            concurrent.futures.wait(pending, timeout=left, return_when=concurrent.futures.FIRST_COMPLETED)

    def ceiling(self, verified: Sequence[np.ndarray] = ()) -> BlockCeiling:
        """The ceiling so far; ``verified``: the records each verified parameter of the run
        re-identifies (a block below one of them is contradicted and counts ``|S|``)."""
        self._collect()
        blocks = [
            block_bound(records, self._results.get(b), verified) for b, records in enumerate(self.records)
        ]
        return BlockCeiling(self.options.size, self.options.seed, blocks)

    def close(self) -> None:
        """Cancel the blocks not started and end the workers now."""
        from rlopt.processes import stop_pool

        if self._client is not None:
            for future in self._futures.values():
                future.cancel()
            self._client.close()
        else:
            stop_pool(self._executor)


@dataclass(frozen=True)
class BlockSolver:
    """What a block's MILP needs of the run's options (picklable, small)."""

    block_seconds: float
    feasibility_tol: float
