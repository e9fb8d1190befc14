"""The parameter-space branch and bound: its optimum is the family's (brute force on two
attributes, the plain MILP on three), its ceiling never falls below a count some
parameter reaches, and switching it on leaves learning's optimum unchanged."""

import os
import signal
import threading
import time

import pytest

from rlopt.data import standardise
from rlopt.families import get_family
from rlopt.linkage.distance_based import recount
from rlopt.milp.ceilings.certificate import REGION_SEARCH
from rlopt.milp.ceilings.regions import MAX_DIMENSIONS, Companion, branch_and_bound, supports
from rlopt.milp.margins import PairMargins
from tests._helpers import MARGIN, brute_force_two_attributes, fit, noisy_file

TOL = 1e-9


def _search(name, original, masked, **kwargs):
    family = get_family(name)
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    margins = PairMargins.build(za, zb, family)
    result = branch_and_bound(margins, family.simplex_vertices(za.shape[1]), margin=MARGIN, tol=TOL, **kwargs)
    return result, family, za, zb


def _optimum(name, original, masked):
    plain = fit(name, original, masked, reductions="none")
    assert plain.status == "optimal"
    return plain.n_correct_verified


@pytest.mark.parametrize("seed", range(6))
def test_equals_brute_force_on_two_attributes(seed):
    n_records = [8, 15, 25, 40, 60, 90][seed]
    original, masked = noisy_file(seed, n_records, 2, scale=(0.3, 0.6))
    expected = brute_force_two_attributes(original, masked, MARGIN)
    for name, optimum in expected.items():
        result, *_ = _search(name, original, masked)
        assert result.proven and result.lower == result.upper == optimum, name


@pytest.mark.parametrize("name", ["wm", "wm_m", "owa"])
@pytest.mark.parametrize("seed", [3, 11])
def test_equals_the_plain_milp_and_its_parameter_recounts(name, seed):
    original, masked = noisy_file(seed, 40, 3, scale=(0.5, 0.9, 1.3))
    result, family, za, zb = _search(name, original, masked)
    assert result.proven
    assert result.lower == result.upper == _optimum(name, original, masked)
    assert family.is_admissible(result.theta, za, zb)
    _, correct = recount(za, zb, family.distance(result.theta, ("a", "b", "c")), margin=MARGIN, tol=TOL)
    assert int(correct.sum()) == result.lower


def test_a_stopped_search_holds_an_interval_around_the_optimum():
    original, masked = noisy_file(5, 120, 4, scale=(0.6, 0.9, 1.2, 1.5))
    learned = fit("wm", original, masked)
    assert learned.status == "optimal"
    optimum = learned.n_correct_verified
    early, *_ = _search("wm", original, masked, deadline=time.perf_counter() + 0.05)
    assert early.lower <= optimum <= early.upper
    reports = []
    done, *_ = _search("wm", original, masked, report=lambda *r: reports.append(r[:2]))
    assert done.proven and done.lower == done.upper == optimum
    uppers = [upper for upper, _ in reports]
    assert uppers == sorted(uppers, reverse=True) and uppers[-1] == optimum  # only ever falls


def test_a_count_found_elsewhere_prunes_without_changing_the_ceiling():
    original, masked = noisy_file(8, 60, 3, scale=(0.5, 0.9, 1.3))
    plain, *_ = _search("wm", original, masked)
    helped, *_ = _search("wm", original, masked, lower=lambda: plain.lower)
    assert helped.proven and helped.upper == plain.upper
    assert helped.regions <= plain.regions


def test_two_workers_find_the_same_optimum():
    original, masked = noisy_file(9, 150, 4, scale=(0.6, 0.9, 1.2, 1.5))
    one, *_ = _search("wm", original, masked)
    two, *_ = _search("wm", original, masked, workers=2)
    assert one.proven and two.proven and one.upper == two.upper == one.lower == two.lower


def test_applies_to_simplex_families_in_few_dimensions_only():
    assert supports(get_family("wm"), MAX_DIMENSIONS)
    assert supports(get_family("owa"), 3)
    assert not supports(get_family("wm"), MAX_DIMENSIONS + 1)
    assert not supports(get_family("sb"), 3) and not supports(get_family("ci"), 3)


def test_companion_reports_a_ceiling_and_closes():
    original, masked = noisy_file(4, 50, 3, scale=(0.5, 0.9, 1.3))
    family = get_family("wm")
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    companion = Companion(za, zb, family, margin=MARGIN, tol=TOL, deadline=time.perf_counter() + 30)
    try:
        until = time.perf_counter() + 30
        while companion.result is None and time.perf_counter() < until:
            companion.poll()
            time.sleep(0.05)
    finally:
        companion.close()
    assert companion.result is not None and companion.result.proven
    assert companion.upper == _optimum("wm", original, masked)


_CTRL_C_IN_FORK: list = []  # armed: the next fork's parent side sends itself a Ctrl-C


def _ctrl_c_in_fork() -> None:
    if _CTRL_C_IN_FORK:
        _CTRL_C_IN_FORK.clear()
        os.kill(os.getpid(), signal.SIGINT)


def test_a_ctrl_c_during_the_companions_fork_is_raised_not_lost():
    """Python drops a KeyboardInterrupt raised in an at-fork handler: a Ctrl-C landing in
    the fork of the search beside the solve was lost and the run went on (a CLI test saw
    it under load: the run still going 10 s after Ctrl-C)."""
    if not hasattr(os, "register_at_fork") or threading.current_thread() is not threading.main_thread():
        pytest.skip("needs fork and the main thread")
    if not getattr(_ctrl_c_in_fork, "registered", False):
        os.register_at_fork(after_in_parent=_ctrl_c_in_fork)
        _ctrl_c_in_fork.registered = True  # type: ignore[attr-defined]
    original, masked = noisy_file(4, 20, 3)
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    companion = None
    _CTRL_C_IN_FORK.append(True)
    try:
        with pytest.raises(KeyboardInterrupt):
            companion = Companion(
                za, zb, get_family("wm"), margin=MARGIN, tol=TOL, deadline=time.perf_counter() + 5
            )
    finally:
        _CTRL_C_IN_FORK.clear()
        if companion is not None:
            companion.close()


@pytest.mark.parametrize("name", ["wm", "owa"])
def test_learning_with_and_without_it_proves_the_same_optimum(name):
    original, masked = noisy_file(12, 80, 4, scale=(0.5, 0.8, 1.1, 1.4))
    on = fit(name, original, masked)
    off = fit(name, original, masked, searches={"parameter_bb": False})
    assert on.status == off.status == "optimal"
    assert on.n_correct_verified == off.n_correct_verified == on.bound == off.bound
    assert on.reductions["parameter_bb"] and not off.reductions["parameter_bb"]
    sources = {event["upper_source"] for event in on.history}
    assert REGION_SEARCH not in {event["upper_source"] for event in off.history}
    assert sources  # the history names where each ceiling came from
