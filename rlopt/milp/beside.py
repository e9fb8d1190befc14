"""What runs beside a run's solve: the parameter-space branch and bound, the block
ceilings and the runs racing it (:mod:`rlopt.milp.racing.peers`).

Each reports while the MILP runs; :func:`listen` hears them (from the solve's callback and
between steps) and writes what they prove into the run's certificate, and tells the
solve to stop when a ceiling meets the verified lower end.

The block ceilings themselves (:class:`~rlopt.milp.ceilings.blocks.BlockSearch`) are in
:mod:`rlopt.milp.ceilings.blocks`; this module hears them.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

import numpy as np

from rlopt.families import get_learned_family
from rlopt.families.containment import embed
from rlopt.milp.ceilings import hitting
from rlopt.milp.ceilings.blocks import BlockSearch
from rlopt.milp.ceilings.certificate import BLOCK_CEILINGS, BlockCeiling
from rlopt.milp.ceilings.regions import Companion, can_fork, supports
from rlopt.milp.formulation import largest_big_c
from rlopt.milp.incumbents.portfolio import Incumbent, recount_parameter

if TYPE_CHECKING:
    from rlopt.families import LearnedFamily
    from rlopt.milp.solvers.options import SolverOptions

__all__ = ["block_ceiling", "companion", "heard_from", "listen", "published"]


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
    records (:mod:`rlopt.milp.ceilings.hitting`: sb and ci on few attributes; not with
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
