"""Racing runs (rlopt.milp.racing.race, rlopt.milp.racing.peers): a family's figure of several runs is
the best verified count and the lowest proven ceiling; a run hears its peers' ceilings
and recounts their parameters; a proven figure is the same for any number of workers."""

import dataclasses

import numpy as np
import pytest

from rlopt.data import validate_pair
from rlopt.exceptions import RecountMismatchError
from rlopt.families import get_learned_family
from rlopt.milp.pipeline import learn
from rlopt.milp.racing.peers import Peers, read_states
from rlopt.milp.racing.race import combine
from rlopt.milp.solvers.options import SolverOptions
from rlopt.risk import assess_risk
from rlopt.status import Status
from tests._helpers import MARGIN, fit, noisy_file


@pytest.fixture(scope="module")
def proven():
    original, masked = noisy_file(11, 24, 3, scale=(0.6, 0.9, 1.2))
    data = validate_pair(original, masked)
    result, distance = learn(data, get_learned_family("wm"), margin=MARGIN, options=SolverOptions())
    assert result.status == Status.OPTIMAL
    return data, result, distance


def test_combine_takes_the_best_verified_count_and_the_lowest_ceiling(proven):
    _, result, distance = proven
    n = result.n_correct_verified
    low = dataclasses.replace(result, status=Status.TIME_LIMIT, n_correct_verified=n - 2, bound=n + 1)
    high = dataclasses.replace(result, status=Status.TIME_LIMIT, n_correct_verified=n - 1, bound=n + 3)
    combined, _ = combine("wm", [(low, distance, 0), (high, distance, 1)])
    assert (combined.n_correct_verified, combined.bound, combined.status) == (n - 1, n + 1, Status.TIME_LIMIT)
    assert combined.solver["race"] == {"runs": 2, "seeds": [0, 1], "lower_from_seed": 1, "bound_from_seed": 0}
    # the ends meet across two runs: optimal, though neither run proved it alone
    meet = dataclasses.replace(low, bound=n - 1)
    combined, _ = combine("wm", [(meet, distance, 0), (high, distance, 1)])
    assert (combined.status, combined.n_correct_verified, combined.bound, combined.claimed) == (
        Status.OPTIMAL,
        n - 1,
        n - 1,
        n - 1,
    )


def test_a_count_above_another_runs_ceiling_is_a_mismatch(proven):
    _, result, distance = proven
    n = result.n_correct_verified
    below = dataclasses.replace(result, status=Status.TIME_LIMIT, n_correct_verified=n - 3, bound=n - 1)
    with pytest.raises(RecountMismatchError, match="above the ceiling"):
        combine("wm", [(result, distance, 0), (below, distance, 1)])


def test_the_channel_keeps_each_runs_latest_state(tmp_path):
    one, two = Peers(tmp_path, "wm-seed0"), Peers(tmp_path, "wm-seed1")
    one.publish("wm", 5, "solver", np.array([0.5, 0.5]), 9, "MILP bound", force=True)
    one.publish("wm", 6, "solver", np.array([0.4, 0.6]), 8, "MILP bound", force=True)
    heard = two.heard(force=True)
    assert [(s.run, s.lower, s.theta, s.upper) for s in heard] == [("wm-seed0", 6, (0.4, 0.6), 8)]
    assert one.heard(force=True) == [] and two.heard() is None  # its own state unheard; read again too soon
    assert [s.run for s in read_states(tmp_path)] == ["wm-seed0"]


def test_a_run_takes_a_peers_ceiling_and_recounts_its_parameter(proven, tmp_path):
    data, result, distance = proven
    family = get_learned_family("wm")
    theta = family.theta_from_params(result.params, data.columns)
    n = result.n_correct_verified
    Peers(tmp_path, "wm-seed0").publish("wm", n, "solver", theta, n, "proven optimum", force=True)
    raced, _ = learn(
        data, family, margin=MARGIN, options=SolverOptions(seed=1), peers=Peers(tmp_path, "wm-seed1")
    )
    assert (raced.status, raced.n_correct_verified, raced.bound) == (Status.OPTIMAL, n, n)
    assert any(e["upper_source"] == "a racing run's proven optimum" for e in raced.history)
    mine = [s for s in read_states(tmp_path) if s.run == "wm-seed1"]
    assert mine and mine[0].done and (mine[0].lower, mine[0].upper) == (n, n)


def test_a_wrong_ceiling_from_a_peer_is_caught_by_the_recount(proven, tmp_path):
    """A peer that claims a ceiling below what this run verifies: never a silent figure."""
    data, result, _ = proven
    n = result.n_correct_verified
    Peers(tmp_path, "wm-seed0").publish("wm", None, None, None, n - 2, "MILP bound", force=True)
    with pytest.raises(RecountMismatchError):
        learn(
            data,
            get_learned_family("wm"),
            margin=MARGIN,
            options=SolverOptions(seed=1),
            peers=Peers(tmp_path, "wm-seed1"),
        )


def test_a_proven_figure_is_the_same_with_one_and_with_three_workers():
    original, masked = noisy_file(3, 20, 3, scale=(0.6, 0.9, 1.2))
    figures = {}
    for jobs in (1, 3):
        assessed = assess_risk(
            original,
            masked,
            families=["wm", "owa", "sb"],
            folds=0,
            n_jobs=jobs,
            margin=MARGIN,
            time_limit=None,
        )
        figures[jobs] = {f.family: (f.status, f.n_correct, f.bound) for f in assessed.families}
        figures[f"columns {jobs}"] = list(assessed.records.columns)  # in the families' order
    assert figures[1] == figures[3] and figures["columns 1"] == figures["columns 3"]
    assert all(status == Status.OPTIMAL for status, _, _ in figures[1].values())
    assert figures["columns 1"].index("reid_wm") < figures["columns 1"].index("reid_sb")
    assert figures[1]["wm"][1] == fit("wm", original, masked).n_correct_verified


def test_one_family_raced_by_two_workers_proves_the_same_optimum():
    original, masked = noisy_file(5, 20, 3, scale=(0.6, 0.9, 1.2))
    alone, raced = fit("ci", original, masked), fit("ci", original, masked, n_jobs=2)
    assert alone.status == raced.status == Status.OPTIMAL
    assert alone.n_correct_verified == raced.n_correct_verified
    assert raced.solver["race"]["runs"] >= 1


def test_a_race_on_a_dask_cluster_proves_the_same_figures():
    distributed = pytest.importorskip("distributed")
    original, masked = noisy_file(3, 20, 3, scale=(0.6, 0.9, 1.2))
    alone = assess_risk(original, masked, families=["wm", "owa"], folds=0, margin=MARGIN, time_limit=None)
    # one thread per worker process (see tests/milp/test_blocks.py)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        raced = assess_risk(
            original,
            masked,
            families=["wm", "owa"],
            folds=0,
            margin=MARGIN,
            time_limit=None,
            scheduler=cluster.scheduler_address,
        )
    figures = [{f.family: (f.status, f.n_correct, f.bound) for f in a.families} for a in (alone, raced)]
    assert figures[0] == figures[1]


def _failing_solve(*args, **kwargs):
    from rlopt.exceptions import SolverError

    raise SolverError("HiGHS ended with status 'error' (a test's solve)")


def test_a_family_whose_runs_all_fail_has_no_figure_and_says_why():
    from rlopt.milp.pipeline import Collaborators
    from rlopt.milp.racing.race import race

    original, masked = noisy_file(3, 20, 3, scale=(0.6, 0.9, 1.2))
    data = validate_pair(original, masked)
    failing = {"collaborators": Collaborators(solve=_failing_solve)}
    outcomes = race(
        data, ["wm", "owa"], margin=MARGIN, options=SolverOptions(time_limit=10), jobs=2, settings=failing
    )
    assert [(o.family, o.result) for o in outcomes] == [("wm", None), ("owa", None)]
    assert all("a test's solve" in o.error for o in outcomes)


def test_a_run_whose_folder_is_gone_publishes_nothing_and_goes_on(tmp_path):
    """A worker that does not share the channel's folder (a remote Dask worker) hears and
    says nothing; it does not fail."""
    peers = Peers(tmp_path / "not-here", "wm-seed0")
    peers.publish("wm", 3, "solver", None, 5, "MILP bound", force=True)
    assert peers.heard(force=True) == []


def test_spare_runs_take_seeds_after_the_users_and_a_stopped_family_starts_no_more():
    from rlopt.milp.racing.race import _Race

    original, masked = noisy_file(3, 20, 3, scale=(0.6, 0.9, 1.2))
    data = validate_pair(original, masked)
    wm = get_learned_family("wm")
    state = _Race(data, [wm], MARGIN, SolverOptions(seed=5, time_limit=60), [], "unused", print, None, {})
    family, first = state.next_run(0.0)
    assert first.seed == 5
    family.running, family.started = 1, 1
    _, spare = state.next_run(1.0)
    assert spare.seed == 6 and spare.time_limit == 59.0
    result, _ = learn(data, wm, margin=MARGIN, options=SolverOptions())
    family.outcomes.append((dataclasses.replace(result, status=Status.GAP_LIMIT), None, 5))
    assert family.closed() and state.next_run(2.0) is None  # stopped at its gap: no other seed


def test_two_families_of_one_name_are_refused_before_any_run():
    """A race keys a family's runs, states and ceilings by its name: ci_k with k = 2 and
    with k = 3 would share them, so both in one race is one clear error."""
    from rlopt.exceptions import InputError
    from rlopt.milp.racing.race import race

    original, masked = noisy_file(0, 12, 3)
    data = validate_pair(original, masked)
    two, three = get_learned_family("ci_k", k=2), get_learned_family("ci_k", k=3)
    with pytest.raises(InputError, match=r"families named \['ci_k'\] more than once"):
        race(data, [two, three], margin=MARGIN, options=SolverOptions(time_limit=1), jobs=2)
