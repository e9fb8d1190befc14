"""Every share of a run's time limit, by hand: :class:`rlopt.milp.budget.Budget`."""

import math

import pytest

from rlopt.milp import budget
from rlopt.milp.budget import Budget


def test_without_a_limit_every_step_runs_to_its_end():
    b = Budget.of_run(100.0, None)
    assert b.reduce_seconds is None and b.deadline() is None and b.deadline(0.5) is None
    assert b.quick_pass() == budget.QUICK_SECONDS
    assert b.reduce_deadline(101.0, 0.0) is None
    assert b.search_deadline(1.0, 1.0, 1.0) is None
    assert b.window(101.0) is None and b.conclude_deadline(101.0) is None
    assert b.solve_limit(150.0, 10.0, 5.0) == (None, True)
    assert b.block_deadline(5.0) == math.inf and b.block_wait(101.0, 5.0) == math.inf


def test_deadlines_are_shares_of_the_limit_from_the_start():
    b = Budget.of_run(100.0, 60.0)
    assert b.reduce_seconds == pytest.approx(budget.REDUCE_SHARE * 60)
    assert b.deadline() == 160.0 and b.deadline(0.5) == 130.0 and b.deadline(0.5, since=110.0) == 140.0
    assert b.window(120.0) == pytest.approx(120.0 + budget.MIN_SOLVE_SHARE * 60)


@pytest.mark.parametrize(
    ("limit", "quick"),
    [(None, 8.0), (60.0, 8.0), (40.0, 6.0), (20.0, 3.0), (19.0, None), (5.0, None)],
)
def test_the_quick_pass_gets_at_most_8_s_and_a_share_and_none_below_3_s(limit, quick):
    seconds = Budget.of_run(0.0, limit).quick_pass()
    assert seconds == (None if quick is None else pytest.approx(quick))


def test_a_quick_pass_keeps_the_runs_reduce_share():
    run = Budget.of_run(0.0, 60.0)
    quick = run.with_limit(8.0)
    assert quick.limit == 8.0 and quick.reduce_seconds == run.reduce_seconds and quick.t0 == run.t0


def test_the_reduce_phase_ends_at_the_earliest_of_its_three_deadlines():
    b = Budget.of_run(0.0, 100.0)  # pass share 30 s, REDUCE_END at 70 s, the run's 9 s
    assert b.reduce_deadline(10.0, 0.0) == pytest.approx(19.0)  # the run's reduce share
    assert b.reduce_deadline(10.0, 5.0) == pytest.approx(14.0)  # what an earlier pass left
    assert b.reduce_deadline(10.0, 20.0) == pytest.approx(10.0)  # nothing left
    late = Budget(0.0, 100.0, reduce_seconds=None)
    assert late.reduce_deadline(65.0, 0.0) == pytest.approx(70.0)  # never past REDUCE_END
    assert late.reduce_deadline(10.0, 0.0) == pytest.approx(40.0)  # the pass's share


def test_the_searches_end_early_enough_for_the_solve_and_the_conclusion():
    b = Budget.of_run(0.0, 100.0)
    # SEARCH_SHARE (50 s) plus what the reduce phase (2 s) and the model (1 s) took
    assert b.search_deadline(0.1, 2.0, 1.0) == pytest.approx(53.0)
    # a slow recount and model: the end of the limit less what must follow
    needed = 10 + 2 * 2 + 1.5 * 30 + max(5, 2 * 10)
    assert b.search_deadline(10.0, 2.0, 30.0) == pytest.approx(100 - needed)


def test_the_milp_gets_what_is_left_less_the_conclusions_share_or_a_glimpse():
    b = Budget.of_run(0.0, 100.0)
    assert b.solve_limit(40.0, 1.0, 0.1) == (pytest.approx(55.0), True)  # 100 - 5 - 40
    assert b.solve_limit(40.0, 1.0, 10.0) == (pytest.approx(40.0), True)  # the recount's reserve: 20 s
    assert b.solve_limit(99.0, 1.0, 0.1) == (pytest.approx(2.0), True)  # a glimpse
    assert b.solve_limit(99.0, 2.0, 0.1) == (pytest.approx(2.0), False)  # the load would take 3 s


def test_the_blocks_end_with_the_milp_and_are_waited_for_a_grace():
    b = Budget.of_run(0.0, 100.0)
    assert b.block_deadline(1000.0) == pytest.approx(1095.0)
    assert b.block_wait(50.0, 1000.0) == pytest.approx(1000.0 + 45.0 + budget.BLOCK_GRACE_SECONDS)
    assert b.block_wait(99.0, 1000.0) == pytest.approx(1000.0 + budget.BLOCK_GRACE_SECONDS)


def test_the_conclusion_ends_by_the_limit_or_a_window_past_it():
    b = Budget.of_run(0.0, 100.0)
    assert b.conclude_deadline(50.0) == pytest.approx(100.0)
    assert b.conclude_deadline(99.5) == pytest.approx(101.5)
