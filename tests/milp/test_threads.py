"""HiGHS threads on any machine: HiGHS keeps one task scheduler per process and refuses a
run whose ``threads`` differs from the size it was started with. These tests start it
at sizes that differ from the machine's default and from each other, in both orders,
so that a 2-core machine sees what a 16-core one does."""

import threading

import numpy as np
import pytest

from rlopt.experiments.runner import run_tasks
from rlopt.milp.solvers import SolverOptions
from rlopt.milp.solvers.lp import max_min_slack
from rlopt.milp.solvers.runtime import _Scheduler
from rlopt.processes import oversubscription
from tests._helpers import fit, fit_with, noisy_file, run_main

highspy = pytest.importorskip("highspy")


def _start_scheduler(threads: int) -> None:
    """Start HiGHS's scheduler at ``threads`` as code outside rlopt would: a plain MILP run."""
    highspy.Highs.resetGlobalScheduler(True)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", threads)
    h.addVars(2, np.zeros(2), np.full(2, 3.0))
    h.changeColsCost(2, np.array([0, 1], dtype=np.int32), np.ones(2))
    h.changeColsIntegrality(
        2, np.array([0, 1], dtype=np.int32), np.array([highspy.HighsVarType.kInteger] * 2)
    )
    assert h.run() == highspy.HighsStatus.kOk


@pytest.fixture(scope="module")
def pair():
    return noisy_file(3, n_records=25, n_attributes=3)


@pytest.fixture(scope="module")
def reference(pair):
    return fit("wm", *pair, threads=1).n_correct


@pytest.mark.parametrize("first, then", [(3, 1), (1, 3), (2, 4), (4, 2)])
def test_a_solve_after_a_scheduler_of_another_size(pair, reference, first, then):
    _start_scheduler(first)
    result = fit("wm", *pair, threads=then)
    assert result.status == "optimal"
    assert result.n_correct == reference


def test_an_lp_after_a_scheduler_of_another_size():
    _start_scheduler(3)
    value, theta = max_min_slack(
        np.array([[1.0, 0.0], [0.0, 1.0]]),
        np.zeros(2),
        np.ones((1, 2)),
        np.array([1.0]),
        np.array([1.0]),
        np.zeros(2),
        np.ones(2),
    )
    assert value == pytest.approx(0.5)
    assert theta == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_every_threads_option_on_the_command_line(tmp_path, capsys, pair, reference, threads):
    original, masked = pair
    original.to_csv(tmp_path / "a.csv", index=False)
    masked.to_csv(tmp_path / "b.csv", index=False)
    code = run_main(
        ["learn", tmp_path / "a.csv", tmp_path / "b.csv", "--family", "wm"]
        + ["--margin", "1e-4", "--threads", threads]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    assert f"wm: {reference} of 25 (proven optimal)" in out.out


def test_a_run_of_another_size_waits_for_the_runs_in_progress():
    """A run that needs another scheduler size waits until the runs in progress end (a
    restart under them would pull their threads away); an LP takes the size in place."""
    scheduler = _Scheduler()
    events: list = []

    def other_size():
        with scheduler.hold(1) as size:
            events.append(("other", size))

    with scheduler.hold(3) as size:
        assert size == 3
        with scheduler.hold(None) as lp_size:
            assert lp_size == 3
        waiting = threading.Thread(target=other_size)
        waiting.start()
        waiting.join(0.3)
        assert waiting.is_alive() and not events
        events.append(("first", size))
    waiting.join(10)
    assert events == [("first", 3), ("other", 1)]
    assert scheduler.size == 1 and scheduler.runs == 0


def test_threads_none_is_one_not_the_machine_default():
    assert SolverOptions(threads=None).threads == 1
    assert SolverOptions().threads == 1


def test_more_threads_than_cores_is_said():
    assert oversubscription(2, 2, cores=4) is None
    message = oversubscription(4, 2, cores=4)
    assert message is not None and "4 worker processes x 2 HiGHS thread(s) = 8 threads on 4 cores" in message
    assert "8 threads on 2 cores" in (oversubscription(8, 1, cores=2) or "")


def test_a_grid_that_oversubscribes_warns_before_it_starts(tmp_path):
    with pytest.warns(UserWarning, match="HiGHS thread"):
        run = run_tasks([], tmp_path / "out", work=print, columns=["key"], label="t", jobs=2, threads=10**6)
    assert run.rows == []


def test_a_fit_runs_blas_and_openmp_on_one_thread_whatever_the_machine(pair, reference):
    """On a 16-core machine OpenBLAS's threads made a whole fit twice as slow (M4-28 sb:
    14.7 s, 7.0 s on one thread): the fit runs on one, and gives the threads back."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from rlopt.milp.pipeline import Collaborators
    from rlopt.milp.solvers import solve_model

    seen: list = []

    def see(model, options, **kwargs):  # the fit's solve, inside the fit
        seen.extend(info["num_threads"] for info in threadpoolctl.threadpool_info())
        return solve_model(model, options, **kwargs)

    with threadpoolctl.threadpool_limits(limits=4):  # what a 4-core machine's BLAS starts with
        assert fit_with("wm", *pair, collaborators=Collaborators(solve=see)).n_correct == reference
        after = [info["num_threads"] for info in threadpoolctl.threadpool_info()]
    assert seen and set(seen) == {1}
    assert set(after) == {4}
