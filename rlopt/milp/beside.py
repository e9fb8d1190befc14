"""What runs beside a run's solve: the parameter-space branch and bound, the block
ceilings and the runs racing it (:mod:`rlopt.milp.peers`).

Each reports while the MILP runs; :func:`listen` hears them (from the solve's callback and
between steps) and writes what they prove into the run's certificate, and tells the
solve to stop when a ceiling meets the verified lower end.

Block ceilings: split the records into blocks ``S_1 .. S_m``. A block's best count
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
(:class:`~rlopt.milp.certificate.BlockOptions`, :class:`~rlopt.milp.certificate.BlockCeiling`)
are in :mod:`rlopt.milp.certificate`.
"""

from __future__ import annotations

import concurrent.futures
import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rlopt.families import get_learned_family
from rlopt.families.containment import embed
from rlopt.milp import hitting
from rlopt.milp.certificate import BLOCK_CEILINGS, BlockBound, BlockCeiling, BlockOptions
from rlopt.milp.formulation import largest_big_c
from rlopt.milp.incumbents.portfolio import Incumbent, recount_parameter
from rlopt.milp.regions import Companion, can_fork, supports

if TYPE_CHECKING:
    from rlopt.families import LearnedFamily
    from rlopt.milp.solvers.options import SolverOptions

__all__ = [
    "BlockLimits",
    "BlockSearch",
    "block_bound",
    "block_ceiling",
    "companion",
    "heard_from",
    "listen",
    "published",
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


def companion(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    margin: float,
    options: SolverOptions,
    t0: float,
    *,
    blocks: bool = True,
) -> Companion | None:
    """The search started beside the run where one applies (not in a daemon process,
    e.g. a Dask worker: there the MILP runs alone): the parameter-space branch and bound
    for few parameters on a simplex (wm, owa), else the hitting-set search on blocks of
    records (:mod:`rlopt.milp.hitting`: sb and ci on few attributes; not with
    ``blocks=False``, a run whose own block ceilings have the workers)."""
    if not can_fork():
        return None
    deadline = None if options.time_limit is None else t0 + options.time_limit
    if supports(family, za.shape[1]):
        # its ceiling must hold for every recount of the run: the largest tolerance they use
        tol = 10 * options.feasibility_tol * (1 + largest_big_c(za, zb, family, margin=margin))
        return Companion(za, zb, family, margin=margin, tol=tol, deadline=deadline)
    if blocks and hitting.applies(family, za.shape[1]):
        from rlopt.milp.solvers.runtime import stop_scheduler_before_fork

        stop_scheduler_before_fork()  # the forked search runs HiGHS
        return Companion(
            za,
            zb,
            family,
            margin=margin,
            tol=options.feasibility_tol,
            deadline=deadline,
            target=functools.partial(hitting.block_companion, seed=options.seed),
            label=hitting.HITTING_BLOCKS,
            key="hitting_blocks",
        )
    return None


def listen(run) -> bool:
    """What runs beside ``run``'s solve (a :class:`rlopt.milp.pipeline._Run`): the blocks
    finished (their ceiling so far into the certificate) and the branch and bound's
    reports; true when a ceiling of either meets the verified lower end, or when the
    interval answers the run's target (:meth:`SolverOptions.decided`)."""
    closed = _blocks_heard(run)
    closed = _companion_heard(run) or closed
    closed = _peers_heard(run) or closed
    return closed or run.options.decided(run.certificate.lower, run.certificate.upper)


def heard_from(run) -> bool:
    """Whether :func:`listen` should be asked during ``run``'s solve: something runs beside
    it, or a target may stop it."""
    return (
        run.companion is not None
        or run.blocks is not None
        or run.peers is not None
        or run.options.target is not None
    )


def published(run, result) -> None:
    """``run``'s final interval (its :class:`~rlopt.results.LearnResult`) told to its peers."""
    theta = None
    if result.params is not None and result.n_correct_verified is not None:
        theta = run.family.theta_from_params(result.params, run.data.columns)
    run.peers.publish(
        run.family.name,
        result.n_correct_verified,
        result.lower_source,
        theta,
        result.bound,
        run.certificate.upper_source if run.certificate.upper == result.bound else "MILP bound",
        done=True,
    )


def _peers_heard(run) -> bool:
    """The racing runs' news: a ceiling of the same family, a parameter of this family or
    of one it contains (recounted here before it counts); then this run's interval
    published. True when the lowest ceiling meets the verified lower end."""
    peers, certificate = run.peers, run.certificate
    if peers is None:
        return False
    for state in peers.heard() or ():
        if state.family == run.family.name and state.upper is not None:
            certificate.bounded(state.upper, f"a racing run's {state.upper_source}")
        news = state.theta is not None and state.lower is not None and state.lower > (certificate.lower or 0)
        if news and (state.run, state.lower) not in peers.recounted:  # each parameter recounted once
            peers.recounted.add((state.run, state.lower))
            item = _peer_parameter(run, state)
            if item is not None:
                run.keep(item)
    best = max(run.kept, key=lambda item: item.exact_count, default=None)
    peers.publish(
        run.family.name,
        certificate.lower,
        certificate.lower_source,
        None if best is None or best.exact_count != certificate.lower else best.theta,
        certificate.upper,
        certificate.upper_source,
    )
    return certificate.lower is not None and certificate.lower >= certificate.upper


def _peer_parameter(run, state) -> Incumbent | None:
    """A peer's parameter as one of this run's family (``None`` when the family does not
    contain it or it is not admissible here), recounted by this run."""
    given = np.asarray(state.theta, dtype=float)
    theta: np.ndarray | None = given
    if state.family != run.family.name:
        distance = get_learned_family(state.family).distance(given, run.data.columns)
        theta = embed(distance, run.family, run.za.shape[1])
    if theta is None or not run.family.is_admissible(theta, run.za, run.zb, tol=run.options.feasibility_tol):
        return None
    label = f"a racing run's parameter ({state.family}, {state.lower_source})"
    return recount_parameter(
        label, theta, run.za, run.zb, run.family, run.data.columns, margin=run.margin, tol=run.search_tol
    )


def _blocks_heard(run) -> bool:
    certificate = run.certificate
    if run.blocks is None:
        return False
    verified = [item.correct for item in [*run.starts, *run.kept]]
    if run.blocks.update(verified):  # a valid ceiling whenever: unfinished blocks count |S|
        certificate.bounded(run.blocks.ceiling(verified).total, BLOCK_CEILINGS)
    return (
        certificate.upper_source == BLOCK_CEILINGS
        and certificate.lower is not None
        and certificate.lower >= certificate.upper
    )


def _companion_heard(run) -> bool:
    companion, certificate = run.companion, run.certificate
    if companion is None:
        return False
    reports = companion.poll()
    if reports:  # the latest ceiling, and the best parameter among those that arrived
        _, count, theta = max(reports, key=lambda report: report[1])
        if theta is not None and count > (certificate.lower or 0):
            item = recount_parameter(
                companion.label,
                theta,
                run.za,
                run.zb,
                run.family,
                run.data.columns,
                margin=run.margin,
                tol=run.search_tol,
            )
            run.keep(item)
        if companion.upper is not None:
            certificate.bounded(companion.upper, companion.label)
    return (
        companion.upper is not None and certificate.lower is not None and certificate.lower >= companion.upper
    )


def block_ceiling(
    run, blocks: BlockSearch, verified: list[Incumbent], *, wait: bool
) -> tuple[BlockCeiling, bool]:
    """In the run's last pass, when its MILP did not prove the optimum: the blocks' ceiling
    once those in flight are done (until the MILP's end; without ``wait``, after a
    Ctrl-C, those done; a contradicted one solved again, strict, in that time), checked
    against every verified parameter, into the certificate;
    and whether a Ctrl-C came while waiting."""
    stopped_waiting = False
    correct = [item.correct for item in verified]
    certificate = run.certificate
    if certificate.lower is not None and certificate.lower >= certificate.upper:
        wait = False  # closed (the blocks' ceiling met the lower end during the solve)
    if run.options.decided(certificate.lower, certificate.upper):
        wait = False  # the interval answers the run's target
    if wait:
        try:
            blocks.wait(until=run.budget.block_wait(time.perf_counter(), time.time()), verified=correct)
        except KeyboardInterrupt:
            stopped_waiting = True
    ceiling = blocks.ceiling(correct)
    certificate.bounded(ceiling.total, BLOCK_CEILINGS)
    return ceiling, stopped_waiting


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
