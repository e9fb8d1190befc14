"""Block ceilings: split the records into blocks ``S_1 .. S_m``. A block's best count
``r(S) = max_p #{i in S re-identified by p}`` (its records still compete against every
original) is a MILP with only ``|S|`` binaries, and no parameter re-identifies more than
``sum_b r(S_b)`` records: a ceiling for the whole file whose blocks are independent, so
they are solved beside the run in worker processes (``jobs``) or on a Dask cluster
(``scheduler``). Valid by construction:

- ``r(S)`` is the block MILP's proven bound (its dual bound, through the same certificate
  as every run), never its incumbent; a block not solved in time counts ``|S|``;
- every ``r(S)`` is compared with the records of ``S`` that each verified parameter of
  the run re-identifies (and with the block's own verified count); a block below one of
  them is *contradicted*: it is solved again with HiGHS's presolve off and a tenth of
  the feasibility tolerance while time is left, and a bound still contradicted counts
  ``|S|`` (a contradicted bound is never reported).

:class:`BlockSearch` is handed the function that solves one block
(:func:`rlopt.milp.pipeline.solve_block`, a learning run restricted to the block's
records): this module imports no learning run, so no import circle. The nouns
(:class:`~rlopt.milp.ceilings.certificate.BlockOptions`,
:class:`~rlopt.milp.ceilings.certificate.BlockCeiling`) are in
:mod:`rlopt.milp.ceilings.certificate`; the run hears the blocks through
:func:`rlopt.milp.beside.listen`.
"""

from __future__ import annotations

import concurrent.futures
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rlopt.milp.ceilings.certificate import BlockBound, BlockCeiling, BlockOptions

__all__ = [
    "BlockLimits",
    "BlockSearch",
    "block_bound",
    "partition",
    "MIN_BLOCK_SECONDS",
    "MIN_FEASIBILITY_TOL",
    "POLL_SECONDS",
    "unsolved",
]

MIN_BLOCK_SECONDS = 1.0
"""A block given less than this is not started (it counts ``|S|``)."""

POLL_SECONDS = 0.5
"""How often a running solve looks for newly finished blocks (:meth:`BlockSearch.update`)."""

MIN_FEASIBILITY_TOL = 1e-10
"""The tightest feasibility tolerance of a strict re-solve (SolverOptions' floor)."""


def partition(n_records: int, size: int, seed: int) -> list[np.ndarray]:
    """The records in random blocks of at most ``size``, as equal as can be (103 records
    in blocks of 10: 11 blocks of 9 or 10), each block's indices sorted."""
    order = np.random.default_rng(seed).permutation(n_records)
    parts = np.array_split(order, max(1, -(-n_records // size)))
    return [np.sort(part) for part in parts]


def unsolved(status: str, strict: bool = False) -> dict:
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


class BlockSearch:
    """The blocks of one run (each solved by ``solve``, e.g.
    :func:`rlopt.milp.pipeline.solve_block`), submitted at once to worker processes (or a Dask cluster)
    and collected as they finish; :meth:`wait` solves a contradicted block again (strict)
    while time is left; :meth:`ceiling` is the ceiling so far (blocks not yet finished
    count ``|S|``), checked against the run's verified parameters."""

    def __init__(
        self,
        data,
        family,
        margin: float,
        solver_options,
        options: BlockOptions,
        deadline: float,
        *,
        solve: Callable[..., dict],
    ):
        self.options = options
        self._solve = solve  # a block's MILP: a module-level function (pickled to the workers)
        n_records = data.original.shape[0]
        self.records = partition(n_records, options.size, options.seed)
        self._problem = (data, family, margin)
        self._limits = BlockLimits(options.block_seconds, solver_options.feasibility_tol)
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
            self._solve, *self._problem, self.records[b], deadline, self._limits, strict
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
                self._results[b] = unsolved("not_started")
            except Exception as exc:  # the block's own failure: it counts |S|, and says why
                self._results[b] = unsolved(f"failed: {type(exc).__name__}: {exc}")
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
class BlockLimits:
    """What a block's MILP needs of the run's options (picklable, small)."""

    block_seconds: float
    feasibility_tol: float
