"""Block ceilings, valid by construction: on many small random files the sum of the
blocks' bounds is at least the plain model's proven optimum, and each block's bound at
least the optimal parameter's count inside it; a block below a verified count is
contradicted and counts all its records; a run's bound is at most the blocks' sum, with
their certificate in its JSON, whether the blocks ran in local workers or on Dask."""

import math

import numpy as np
import pytest

from rlopt.data import validate_pair
from rlopt.exceptions import InputError
from rlopt.families import get_family
from rlopt.milp.ceilings.blocks import BlockLimits, block_bound, partition
from rlopt.milp.ceilings.certificate import BlockOptions
from rlopt.milp.pipeline import solve_block
from tests._helpers import MARGIN, fit, fit_with, noisy_file

SOLVER = BlockLimits(block_seconds=60.0, feasibility_tol=1e-9)


def test_a_partition_holds_every_record_once_in_blocks_of_at_most_the_size():
    blocks = partition(103, 10, seed=4)
    assert sorted(np.concatenate(blocks).tolist()) == list(range(103))
    assert len(blocks) == 11 and {len(b) for b in blocks} == {9, 10}  # at most 10, as equal as can be
    assert all(np.array_equal(a, b) for a, b in zip(blocks, partition(103, 10, seed=4), strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(blocks, partition(103, 10, seed=5), strict=True))
    assert [len(b) for b in partition(5, 30, seed=0)] == [5]


@pytest.mark.parametrize(
    "seed, name",
    # wm and ci on all four files (about a second each); sb, whose plain model takes 9-40 s
    # per file to prove, on the first file in the default run and on the others with -m slow
    [
        pytest.param(seed, name, marks=pytest.mark.slow if name == "sb" and seed > 0 else ())
        for name in ("wm", "ci", "sb")
        for seed in range(4)
    ],
)
def test_the_blocks_sum_is_a_ceiling_of_the_proven_optimum(seed, name):
    original, masked = noisy_file(40 + seed, 24, 3, scale=(0.6, 0.9, 1.2))
    plain = fit(name, original, masked)
    assert plain.status == "optimal"
    data, family = validate_pair(original, masked), get_family(name)
    total = 0
    for records in partition(24, 6, seed=seed):
        found = solve_block(data, family, MARGIN, records, math.inf, SOLVER)
        assert found["status"] == "optimal" and found["verified"] == found["bound"]
        assert found["bound"] >= int(plain.correct[records].sum())  # the optimum's records in the block
        total += found["bound"]
    assert plain.n_correct_verified <= total <= 24


def test_a_block_below_a_verified_count_is_contradicted_and_counts_all_its_records():
    records = np.array([0, 2, 5])
    correct = np.zeros(8, dtype=bool)
    correct[[0, 2]] = True
    found = {"status": "optimal", "bound": 1, "verified": 1, "seconds": 0.1}
    block = block_bound(records, found, [correct])
    assert (block.status, block.bound, block.solver_bound) == ("contradicted", 3, 1)
    assert block_bound(records, {**found, "bound": 2}, [correct]).bound == 2
    assert block_bound(records, None).status == "not_started" and block_bound(records, None).bound == 3
    stopped = {"status": "not_started", "bound": None, "verified": None, "seconds": 0.0}
    assert block_bound(records, stopped).bound == 3
    failed = {**stopped, "status": "failed: SolverError: HiGHS ended with status 'error'"}
    assert (
        block_bound(records, failed).status.startswith("failed") and block_bound(records, failed).bound == 3
    )


def test_block_options_are_checked():
    with pytest.raises(InputError, match="size=1; expected an integer >= 2"):
        BlockOptions(size=1)
    with pytest.raises(InputError, match="jobs=0"):
        BlockOptions(jobs=0)
    with pytest.raises(InputError, match=r"unknown option\(s\) \['workers'\]"):
        BlockOptions.coerce({"workers": 2})
    assert BlockOptions.coerce({"size": 12}).size == 12
    with pytest.raises(InputError, match="blocks with candidates"):
        from rlopt.milp.pipeline import learn
        from rlopt.milp.solvers import SolverOptions

        original, masked = noisy_file(1, 10, 2)
        candidates = np.ones((10, 10), dtype=bool)
        data, options = validate_pair(original, masked), SolverOptions()
        learn(
            data,
            get_family("wm"),
            margin=MARGIN,
            options=options,
            candidates=candidates,
            blocks=BlockOptions(),
        )


def _hard_file():
    """sb on 60 records: the plain model stops at [20, 49] after 60 s; blocks of 10 prove 38."""
    return noisy_file(3, 60, 4, scale=(0.8, 1.0, 1.2, 1.5))


def _checked_run(result, n_blocks: int = 6, size: int = 10):
    blocks = result.blocks
    assert blocks is not None and blocks["n_blocks"] == n_blocks and blocks["size"] == size
    assert sorted(r for block in blocks["blocks"] for r in block["records"]) == list(range(60))
    assert blocks["ceiling"] == sum(block["bound"] for block in blocks["blocks"])
    assert blocks["complete"] == all(
        block["status"] in ("optimal", "time_limit") for block in blocks["blocks"]
    )
    assert result.n_correct_verified <= result.bound <= blocks["ceiling"] < 60
    assert result.to_dict()["blocks"] == blocks
    for block in blocks["blocks"]:  # the verified parameter's records in each block
        assert int(result.correct[block["records"]].sum()) <= block["bound"]
    return blocks["ceiling"]


RUN_OPTIONS = dict(searches={"quick_solve": False, "parameter_bb": False})
UNTIL_LOWERED = dict(time_limit=120, **RUN_OPTIONS)
"""With :class:`UntilTheBlocksLowerTheCeiling` the solve ends once the blocks' sum is the
run's ceiling; the limit is the outer timeout (blocks of 6 prove in well under a second
once their workers start; the workers took most of 8 s to start on a loaded machine)."""


def _some_block_proven(result):
    """At least one block proven below its size: the blocks bound the run."""
    return any(b["status"] == "optimal" and b["bound"] < len(b["records"]) for b in result.blocks["blocks"])


def test_a_run_is_bounded_by_its_blocks_solved_in_local_workers_and_hears_them_during_the_solve(monkeypatch):
    """The blocks' ceiling bounds the run, and enters its interval while the MILP solves
    (before: only at the MILP's end, and a user watching the interval saw nothing of them).
    The solve ends when the blocks lower the run's ceiling, however long the workers take
    to start."""
    import time

    from rlopt.milp.pipeline import Collaborators
    from tests._helpers import UntilTheBlocksLowerTheCeiling

    until = UntilTheBlocksLowerTheCeiling(monkeypatch)
    solves_ended, events = [], []

    def solve(*args, **kwargs):
        solved = until.solve(*args, **kwargs)
        solves_ended.append(time.perf_counter())
        return solved

    def progress(event):
        events.append((time.perf_counter(), event))

    result = fit_with(
        "sb",
        *_hard_file(),
        blocks={"size": 6, "jobs": 2},
        progress=progress,
        collaborators=Collaborators(solve=solve),
        **UNTIL_LOWERED,
    )
    assert until.lowered and result.status == "time_limit"
    assert _checked_run(result, n_blocks=10, size=6) < 60 and _some_block_proven(result)
    block_events = [(t, e) for t, e in events if e["upper_source"] == "block ceilings"]
    assert block_events and block_events[0][0] < solves_ended[-1]  # heard during the solve
    assert all(e["upper"] >= result.n_correct_verified for _, e in block_events)
    assert result.bound <= result.blocks["ceiling"] <= min(e["upper"] for _, e in block_events)


def test_the_same_blocks_on_a_dask_cluster(monkeypatch):
    distributed = pytest.importorskip("distributed")
    from rlopt.milp.pipeline import Collaborators
    from tests._helpers import UntilTheBlocksLowerTheCeiling

    until = UntilTheBlocksLowerTheCeiling(monkeypatch)
    # one thread per worker process: Pyomo captures a solve's output through the process's
    # file descriptors, so two solves in one process's threads would collide
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        result = fit_with(
            "sb",
            *_hard_file(),
            blocks={"size": 6, "scheduler": cluster.scheduler_address},
            collaborators=Collaborators(solve=until.solve),
            **UNTIL_LOWERED,
        )
    assert until.lowered and _checked_run(result, n_blocks=10, size=6) < 60 and _some_block_proven(result)


def test_a_ctrl_c_during_the_solve_does_not_wait_for_the_blocks(monkeypatch):
    """Before: after Ctrl-C stopped the solve, the run waited for its blocks (two of 30
    records, still in flight) until the time limit, then said it was interrupted. The
    blocks' wait is watched, not the clock: it is never entered."""
    import dataclasses

    from rlopt.exceptions import Interrupted
    from rlopt.milp.ceilings.blocks import BlockSearch
    from rlopt.milp.pipeline import Collaborators
    from rlopt.milp.solvers import solve_model

    def interrupted_solve(model, options, **kwargs):  # a short solve that Ctrl-C stopped
        solved = solve_model(model, dataclasses.replace(options, time_limit=3), **kwargs)
        return dataclasses.replace(solved, interrupted=True)

    waits, closes, close = [], [], BlockSearch.close
    monkeypatch.setattr(BlockSearch, "wait", lambda self, until, verified=(): waits.append(until))
    monkeypatch.setattr(BlockSearch, "close", lambda self: closes.append(close(self)))  # cancels the rest
    with pytest.raises(Interrupted) as stopped:
        fit_with(
            "sb",
            *_hard_file(),
            blocks={"size": 30, "block_seconds": 60},
            time_limit=60,
            collaborators=Collaborators(solve=interrupted_solve),
            **RUN_OPTIONS,
        )
    assert waits == [] and len(closes) == 1
    assert stopped.value.partial.blocks is not None  # the blocks done so far, if any, still count


def test_a_block_whose_own_parameter_recounts_above_its_bound_is_solved_again_strict():
    import rlopt.milp.pipeline as pipeline
    from rlopt.exceptions import RecountMismatchError

    original, masked = noisy_file(2, 12, 2)
    data, family, records = validate_pair(original, masked), get_family("wm"), np.arange(4)
    real_learn, seen = pipeline.learn, []

    def learn(*args, options, **kwargs):  # HiGHS's bound below its own parameter's recount, once
        seen.append(options)
        if len(seen) == 1:
            raise RecountMismatchError("wm: a parameter re-identifies 3 records, more than the bound 2")
        return real_learn(*args, options=options, **kwargs)

    found = solve_block(data, family, MARGIN, records, math.inf, SOLVER, learner=learn)
    assert [(o.presolve, o.feasibility_tol) for o in seen] == [(True, 1e-9), (False, 1e-10)]
    assert found["strict"] and found["status"] == "optimal" and found["bound"] == found["verified"]
    never = lambda *a, **k: (_ for _ in ()).throw(RecountMismatchError("x"))  # noqa: E731
    still = solve_block(data, family, MARGIN, records, math.inf, SOLVER, learner=never)
    assert still["strict"] and still["bound"] is None and still["status"].startswith("contradicted")
    assert block_bound(records, still).bound == 4  # it counts all its records


def test_a_strict_solve_proves_the_same_block_optimum():
    from rlopt.milp.solvers import SolverOptions
    from rlopt.milp.solvers.mip import mip_options

    assert mip_options(SolverOptions(presolve=False))["presolve"] == "off"
    assert "presolve" not in mip_options(SolverOptions())  # HiGHS's default: on
    with pytest.raises(InputError, match="presolve='no'"):
        SolverOptions(presolve="no")
    original, masked = noisy_file(5, 20, 3, scale=(0.6, 0.9, 1.2))
    data, family = validate_pair(original, masked), get_family("wm")
    for records in partition(20, 5, seed=1):
        plain = solve_block(data, family, MARGIN, records, math.inf, SOLVER)
        strict = solve_block(data, family, MARGIN, records, math.inf, SOLVER, strict=True)
        assert plain["status"] == strict["status"] == "optimal" and plain["bound"] == strict["bound"]


def _search_with(monkeypatch, bounds):
    """A BlockSearch of 8 records in blocks of 4, solved in a thread by a fake block MILP
    whose bound is ``bounds[strict]``."""
    import concurrent.futures
    import time

    import rlopt.processes
    from rlopt.milp.ceilings.blocks import BlockSearch
    from rlopt.milp.ceilings.certificate import BlockOptions
    from rlopt.milp.solvers import SolverOptions

    def fake(data, family, margin, records, deadline, options, strict=False):
        return {"status": "optimal", "bound": bounds[strict], "verified": 0, "seconds": 0.0, "strict": strict}

    monkeypatch.setattr(
        rlopt.processes, "local_pool", lambda jobs: concurrent.futures.ThreadPoolExecutor(jobs)
    )
    data = validate_pair(*noisy_file(1, 8, 2))
    options = BlockOptions(size=4, seed=0)
    return BlockSearch(data, get_family("wm"), MARGIN, SolverOptions(), options, time.time() + 60, solve=fake)


def test_a_block_a_verified_parameter_contradicts_is_solved_again_strict_while_time_is_left(monkeypatch):
    import time

    correct = np.zeros(8, dtype=bool)
    correct[partition(8, 4, seed=0)[0][:2]] = True  # two records of the first block re-identified
    search = _search_with(monkeypatch, {False: 1, True: 3})
    search.wait(until=time.time() + 30, verified=[correct])
    ceiling = search.ceiling([correct])
    first, second = ceiling.blocks
    assert (first.status, first.bound, first.strict) == ("optimal", 3, True)  # solved again
    assert (second.bound, second.strict) == (1, False)  # not contradicted: kept as it was
    assert ceiling.total == 4 and ceiling.complete
    search.close()

    still = _search_with(monkeypatch, {False: 1, True: 1})
    still.wait(until=time.time() + 30, verified=[correct])
    first = still.ceiling([correct]).blocks[0]
    assert (first.status, first.bound, first.solver_bound, first.strict) == ("contradicted", 4, 1, True)
    still.close()

    late = _search_with(monkeypatch, {False: 1, True: 3})
    late.wait(until=time.time() + 30)  # no verified parameter yet: nothing to solve again
    late.wait(until=time.time() - 1, verified=[correct])  # no time left for the strict solve
    assert late.ceiling([correct]).blocks[0].status == "contradicted"
    late.close()
