"""The conclusion, without a fit: every status transition of a solver's claim into the
interval a run reports (:mod:`rlopt.milp.conclude`), as tables."""

from types import SimpleNamespace

import numpy as np
import pytest

from rlopt.families import get_learned_family
from rlopt.milp.conclude import (
    FIGURE_STATUS,
    at_the_margin,
    check_stopped,
    checked_claim,
    closed,
    credited,
    solver_figures,
)
from rlopt.milp.incumbents.portfolio import Incumbent
from rlopt.milp.solvers import SolveResult
from rlopt.milp.solvers.options import Termination
from rlopt.status import Status

# status, bound, claimed, verified -> status, bound, claimed, a mismatch said
CLOSED = [
    pytest.param("optimal", 24, 24, 24, "optimal", 24, 24, False, id="optimal proven"),
    pytest.param("optimal", 30, 24, 24, "gap_limit", 30, 24, False, id="stopped at a relative gap"),
    pytest.param(
        "optimal", 24, 24, 21, "gap_limit", 24, 24, False, id="optimum not reached at the exact margin"
    ),
    pytest.param("optimal", 24, 24, 25, "optimal", 24, 25, True, id="a count above the proven bound"),
    pytest.param("time_limit", 30, 20, 22, "time_limit", 30, 20, False, id="time limit with incumbent"),
    pytest.param("time_limit", 22, 20, 22, "optimal", 22, 22, False, id="time limit, interval closed"),
    pytest.param("time_limit", 30, None, None, "time_limit", 30, None, False, id="no incumbent, no start"),
    pytest.param("time_limit", 30, None, 12, "time_limit", 30, None, False, id="no incumbent, a start"),
    pytest.param("interrupted", 30, 20, 20, "interrupted", 30, 20, False, id="interrupted"),
    pytest.param("interrupted", 20, 18, 20, "optimal", 20, 20, False, id="interrupted, interval closed"),
    pytest.param("cut_limit", 25, None, 20, "cut_limit", 25, None, False, id="cut cap"),
    pytest.param("cut_limit", 25, None, 25, "optimal", 25, 25, False, id="cut cap, repaired to the bound"),
    pytest.param("time_limit", 20, 18, 20, "optimal", 20, 20, False, id="stopped by a ceiling met"),
]


@pytest.mark.parametrize(
    ("status", "bound", "claimed", "verified", "status_", "bound_", "claimed_", "said"), CLOSED
)
def test_every_status_transition_of_the_two_ends(
    status, bound, claimed, verified, status_, bound_, claimed_, said
):
    messages: list[str] = []
    assert closed("wm", 1e-5, status, bound, claimed, verified, messages.append) == (
        status_,
        bound_,
        claimed_,
    )
    assert bool(messages) == said
    assert not said or "more than the proven bound" in messages[0]


def test_a_stop_for_an_interval_that_did_not_close_is_a_bug_not_a_figure():
    with pytest.raises(RuntimeError, match="did not close"):
        check_stopped("wm", Termination.STOPPED, Status.TIME_LIMIT, 19, 20)
    check_stopped("wm", Termination.STOPPED, Status.OPTIMAL, 20, 20)  # closed: the run stops rightly
    check_stopped("wm", Termination.TIME_LIMIT, Status.TIME_LIMIT, 19, 20)


def test_every_termination_but_a_failure_starts_a_figures_status():
    """The solver's word is never a figure's: each termination the conclusion sees maps
    to a status of a figure; infeasible and error never reach it (the pass raises)."""
    assert set(FIGURE_STATUS) == set(Termination) - {Termination.INFEASIBLE, Termination.ERROR}
    assert {str(s) for s in FIGURE_STATUS.values()} <= {str(s) for s in Status}
    assert not {str(t) for t in (Termination.INFEASIBLE, Termination.ERROR, Termination.STOPPED)} & {
        str(s) for s in Status
    }


# status, claimed, recounted, relaxed, rel_gap -> claimed, a mismatch said
CLAIMS = [
    pytest.param("optimal", 24, 24, False, 0.0, 24, False, id="the claim recounted"),
    pytest.param("optimal", 24, 23, False, 0.0, 24, True, id="a recount below the claim"),
    pytest.param("optimal", 24, 25, False, 0.0, 24, True, id="a proven optimum recounted higher"),
    pytest.param(
        "optimal", 24, 25, False, 0.1, 24, False, id="higher at a relative gap: K_i = 1 may hide one"
    ),
    pytest.param("time_limit", 30, 20, True, 0.0, 20, False, id="a relaxation's incumbent: its recount"),
    pytest.param("time_limit", 20, 22, False, 0.0, 20, False, id="an incumbent recounted higher"),
    pytest.param("time_limit", None, 22, False, 0.0, None, False, id="no claim"),
]


@pytest.mark.parametrize(("status", "claimed", "recounted", "relaxed", "rel_gap", "claimed_", "said"), CLAIMS)
def test_the_solvers_claim_is_checked_by_its_recount(
    status, claimed, recounted, relaxed, rel_gap, claimed_, said
):
    messages: list[str] = []
    out = checked_claim(
        "wm", 1e-5, status, claimed, recounted, relaxed=relaxed, rel_gap=rel_gap, mismatch=messages.append
    )
    assert out == claimed_ and bool(messages) == said


def item(label: str, count: int, exact: int, n: int = 30) -> Incumbent:
    """A recounted parameter: ``count`` records within the tolerance, ``exact`` at the margin."""
    correct = np.arange(n) < count
    linked = SimpleNamespace(n_correct=exact, separation=np.zeros(n))
    return Incumbent(label, np.zeros(2), linked, correct, 0.0, np.arange(n) < exact)


def test_the_lower_end_is_the_best_count_at_the_exact_margin():
    start, solver = item("neutral start (AM)", 24, 24), item("solver", 24, 24)
    assert at_the_margin([start, solver]).label == "neutral start (AM)"  # a tie: the start
    assert at_the_margin([]) is None
    short = item("solver", 24, 21)
    assert at_the_margin([item("start", 20, 20), short]) is short  # nothing moved: 21 at the margin
    assert at_the_margin([item("start", 22, 22), short]).label == "start"  # 22 > 21


def test_a_parameter_short_at_the_margin_is_moved_and_kept_only_when_it_gains():
    short, moved = item("solver", 24, 21), []

    def move(found):
        moved.append(found.label)
        return item(found.label, 24, 24)

    best = at_the_margin([item("start", 20, 20), short], move)
    assert moved == ["solver"] and best.exact_count == 24 and best.label == "solver"
    assert at_the_margin([item("start", 22, 22), short], lambda found: None).label == "start"
    assert (
        at_the_margin([item("start", 22, 22), short], lambda found: item("solver", 24, 22)).label == "start"
    )
    untouched = []
    at_the_margin([item("start", 24, 24), short], untouched.append)  # none can beat the start
    assert untouched == []


def test_of_the_parameters_tied_at_the_lower_end_the_one_its_history_credits():
    """The app showed wm's lower end found by the region search in its history and by
    surrogate ascent in its summary: two parameters tied, each ordered first by another
    rule. The one the history credits (the first to reach the count) is reported."""
    ascent, region = item("surrogate ascent", 23, 22), item("parameter-space branch and bound", 24, 22)
    best = at_the_margin([region, ascent])  # sorted by their count within the tolerance
    assert best is region
    assert credited(best, [region, ascent], 22, "surrogate ascent") is ascent
    assert credited(best, [region, ascent], 22, "parameter-space branch and bound") is region
    above = item("solver", 25, 25)  # above the history's lower end: it is the new lower end
    assert credited(above, [region, ascent, above], 22, "surrogate ascent") is above
    assert credited(best, [region], 22, "a racing run's parameter") is region  # not among them
    assert credited(None, [], None, None) is None


def solve_result(status="optimal", incumbent=6.0, objective_bound=6.0, cut_cap_hit=False):
    return SolveResult(status, incumbent, objective_bound, np.array([0.5, 0.5]), 1.0, cut_cap_hit=cut_cap_hit)


def test_the_solvers_figures_in_records_and_capped_by_every_ceiling():
    family, z = get_learned_family("wm"), np.zeros((30, 2))
    kw = dict(family=family, za=z, zb=z, feasibility_tol=1e-9)
    assert solver_figures(solve_result(), 30, **kw)[::2] == ("optimal", 24)  # 30 - 6
    status, theta, claimed, bound = solver_figures(
        solve_result(objective_bound=2.5), 30, ceilings=[29, None, 26], **kw
    )
    assert (status, claimed, bound) == ("optimal", 24, 26)  # 30 - ceil(2.5) = 27, capped at 26
    assert solver_figures(solve_result(incumbent=None, objective_bound=None), 30, **kw)[2:] == (None, 30)
    cut = solver_figures(solve_result(cut_cap_hit=True), 30, **kw)
    assert cut[0] == Status.CUT_LIMIT and cut[2] is None  # the relaxed optimum bounds; no claim
