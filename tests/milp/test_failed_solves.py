"""A solver's failure is never a ceiling, in every MILP of the package.

Every model rlopt builds is feasible (it holds the parameter that re-identifies nothing,
or a verified attack) and bounded (its objective counts records), so a solve that ends
``infeasible``, ``unbounded``, in an error or with an unknown status has failed: nothing
it reports bounds anything. A limit (time, Ctrl-C) keeps the dual bound proven when it
stopped, as an interval's upper end, never a proof. Each solve is faked here with each
termination: the solver layer (Pyomo's conditions), the linkage run, a block, the
hitting-set master, the membership attack; ``rlopt.integral`` solves no model.
"""

import math
import subprocess
import sys
from functools import partial
from types import SimpleNamespace

import numpy as np
import pytest

from rlopt.data import validate_pair
from rlopt.exceptions import Interrupted, RecountMismatchError, SolverError
from rlopt.families import get_family, get_learned_family
from rlopt.milp.ceilings.blocks import BlockLimits, block_bound, unsolved
from rlopt.milp.pipeline import Collaborators, learn, solve_block
from rlopt.milp.solvers import SolverOptions
from rlopt.milp.solvers.options import SolveResult, Termination
from tests._helpers import MARGIN, fit_with, noisy_file

FAILURES = [Termination.INFEASIBLE, Termination.ERROR]


# ---- the solver layer ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "termination"),
    [
        ("provenInfeasible", "infeasible"),
        ("infeasibleOrUnbounded", "infeasible"),
        ("locallyInfeasible", "infeasible"),
        ("unbounded", "error"),
        ("error", "error"),
        ("unknown", "error"),
        ("interrupted", "error"),  # HiGHS stopped, yet not by rlopt's Ctrl-C: not a limit
        ("maxTimeLimit", "time_limit"),
    ],
)
def test_each_pyomo_termination_and_the_bound_it_leaves(monkeypatch, condition, termination):
    import pyomo.environ as pyo
    from pyomo.contrib.solver.common.results import TerminationCondition

    import rlopt.milp.solvers.mip as mip

    model = pyo.ConcreteModel()
    model.theta = pyo.Var([0], bounds=(0, 1))
    model.K = pyo.Var([0], within=pyo.Binary)
    model.cuts = pyo.ConstraintList()
    model.objective = pyo.Objective(expr=model.K[0])
    claimed = SimpleNamespace(
        termination_condition=TerminationCondition[condition], incumbent_objective=None, objective_bound=1.0
    )
    monkeypatch.setattr(mip, "_run", lambda *args: claimed)
    solved = mip.solve_model(model, SolverOptions())
    assert solved.termination == termination
    if Termination(termination).failed:
        assert solved.objective_bound is None and solved.solver["dropped_bound"] == 1.0
    else:
        assert solved.objective_bound == 1.0


@pytest.mark.parametrize("termination", list(Termination))
def test_a_solve_result_keeps_a_bound_only_where_the_solver_did_not_fail(termination):
    solved = SolveResult(termination, None, 5.0, None, 0.0)
    assert (solved.objective_bound is None) == termination.failed
    assert termination.failed == (termination in FAILURES)


# ---- the linkage run and its blocks -----------------------------------------------------


def _claiming(termination: Termination, bound: float):
    """A fake MILP solve that ends with ``termination`` and claims ``bound`` (``sum K``)."""

    def solve(model, options, **kwargs):
        return SolveResult(termination, None, bound, None, 0.0, interrupted=termination == "interrupted")

    return solve


@pytest.mark.parametrize("termination", FAILURES)
def test_a_linkage_run_whose_solve_failed_reports_no_figure(termination):
    original, masked = noisy_file(3, 16, 2)
    collaborators = Collaborators(solve=_claiming(termination, 16.0))  # "nobody re-identified"
    with pytest.raises(SolverError, match=f"status '{termination}'.*no count is reported"):
        fit_with("wm", original, masked, collaborators=collaborators)


def test_a_linkage_run_stopped_by_ctrl_c_keeps_its_bound_as_an_interval_only():
    original, masked = noisy_file(3, 16, 2)
    with pytest.raises(Interrupted) as stopped:  # a valid bound: no record at all is certain
        fit_with(
            "wm", original, masked, searches="none", reductions="none",
            collaborators=Collaborators(solve=_claiming("interrupted", 0.0)),
        )  # fmt: skip
    assert stopped.value.partial.status == "interrupted" and stopped.value.partial.bound == 16


@pytest.mark.parametrize("termination", FAILURES)
def test_a_block_whose_solve_failed_counts_all_its_records(termination):
    original, masked = noisy_file(4, 12, 2)
    data, family = validate_pair(original, masked), get_family("wm")
    records = np.array([0, 3, 7])
    failing = partial(learn, collaborators=Collaborators(solve=_claiming(termination, 12.0)))
    limits = BlockLimits(block_seconds=60.0, feasibility_tol=1e-9)
    with pytest.raises(SolverError):  # the block search keeps it as a failure (tests/milp/test_blocks.py)
        solve_block(data, family, MARGIN, records, math.inf, limits, learner=failing)
    failed = unsolved(f"failed: SolverError: HiGHS ended with status '{termination}'")
    assert block_bound(records, failed).bound == 3


# ---- the hitting-set master -------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "bounded"),
    [
        ("kInfeasible", False),
        ("kUnbounded", False),
        ("kUnboundedOrInfeasible", False),
        ("kSolveError", False),
        ("kUnknown", False),
        ("kOptimal", True),
        ("kTimeLimit", True),
        ("kInterrupt", True),
    ],
)
def test_the_hitting_master_reads_no_bound_from_a_failed_solve(monkeypatch, status, bounded):
    import highspy

    import rlopt.milp.solvers.covering as covering

    master = covering.HittingMaster(4)
    master.add([np.array([0, 1]), np.array([2, 3])])
    real = master.highs

    class Failing:  # HiGHS as it would answer after such a run: a dual bound of 3 (2 is the optimum)
        def getModelStatus(self):
            return getattr(highspy.HighsModelStatus, status)

        def getInfo(self):
            return SimpleNamespace(mip_dual_bound=3.0 if not bounded else 2.0, primal_solution_status=0)

        def modelStatusToString(self, s):
            return real.modelStatusToString(s)

    monkeypatch.setattr(covering, "run_highs", lambda h, deadline=None: None)
    master.highs = Failing()
    solution = master.solve()
    assert solution.bound == (2 if bounded else 0)
    assert (solution.failed is None) == bounded


def test_a_hitting_search_whose_master_fails_keeps_the_last_proven_ceiling(monkeypatch):
    import rlopt.milp.ceilings.hitting as hitting
    from rlopt.milp.solvers.covering import MasterSolution

    zb = np.array([[0.0, 0.0], [1.0, 1.0], [10.0, 10.0], [11.0, 11.0]])  # tests/milp/test_hitting.py's
    za = np.array([[0.0, 1.0], [1.0, 0.0], [11.0, 10.0], [10.0, 11.0]])  # first file: optimum 2
    monkeypatch.setattr(
        hitting.HittingMaster,
        "solve",
        lambda self, deadline=None: MasterSolution(None, 0, False, failed="Solve error"),
    )
    ceiling, _, info = hitting.hitting_set_ceiling(za, zb, get_learned_family("wm"), margin=MARGIN)
    assert ceiling == 4 and info.stopped == "master failed (Solve error)"


# ---- the membership attack ----------------------------------------------------------------


@pytest.mark.parametrize("termination", [*FAILURES, Termination.INTERRUPTED, Termination.TIME_LIMIT])
def test_a_membership_milp_that_failed_bounds_nothing(monkeypatch, termination):
    import rlopt.milp.solvers.mip as mip
    from rlopt.risk.membership import membership_risk
    from tests.risk.test_membership_scaling import release

    frames = release(1)  # 7 attributes: the MILP alone bounds wm; the search finds 0.833 (100 units)
    if termination.failed:  # "0.383 is the optimum", as the false proof said
        monkeypatch.setattr(mip, "solve_model", _claiming(termination, 120.0 - 46))
        figure = membership_risk(*frames, folds=0, anchors=False, families=["wm"], time_limit=10).families[
            "wm"
        ]
        assert figure.status == "interval" and figure.source == "none" and figure.ceiling == 1.0
        assert "solver failure" in figure.model["why"]
        return
    monkeypatch.setattr(mip, "solve_model", _claiming(termination, 10.0))  # a limit's bound: 110 units
    figure = membership_risk(*frames, folds=0, anchors=False, families=["wm"], time_limit=10).families["wm"]
    assert figure.status == termination and figure.source == "milp"
    assert figure.ceiling == pytest.approx(110 / 120)  # an interval's upper end
    monkeypatch.setattr(mip, "solve_model", _claiming(termination, 120.0 - 46))
    with pytest.raises(RecountMismatchError, match="above the ceiling 0.383"):  # below a verified attack
        membership_risk(*frames, folds=0, anchors=False, families=["wm"], time_limit=10)


def test_integral_privacy_solves_no_model():
    code = (
        "import sys, rlopt.integral; print(any(m in sys.modules for m in ('pyomo', 'highspy', 'rlopt.milp')))"
    )
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        == "False\n"
    )
