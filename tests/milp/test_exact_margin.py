"""The parameter a run returns re-identifies its verified count at the exact margin.

The MILP leaves its parameter on the margin: HiGHS meets each row ``g_ij >= margin``
up to its feasibility tolerance, so the recount that checks the solver's claim allows
that tolerance. The figure is another matter: on the first 30 wines (3 attributes,
noise k = 0.1) sb_nc's optimum is 24, but the solver's parameter re-identifies only
21 records at the margin itself (3 are separated by ``margin - 1e-9``); before the
conclusion moved it (``reach_margin``), the run reported 24 with that parameter.
"""

import warnings

import numpy as np
import pytest

from rlopt.data import validate_pair
from rlopt.families import get_learned_family
from rlopt.linkage.distance_based import recount
from rlopt.masking import additive_noise
from rlopt.milp import SolverOptions
from rlopt.milp.incumbents.exact import reach_margin
from rlopt.milp.pipeline import learn
from rlopt.status import Status

MARGIN = 1e-5


@pytest.fixture(scope="module")
def wine():
    datasets = pytest.importorskip("sklearn.datasets")
    frame = datasets.load_wine(as_frame=True).frame
    original = frame[list(frame.columns[:3])].sample(30, random_state=0).reset_index(drop=True)
    return validate_pair(original, additive_noise(original, 0.1, seed=0))


@pytest.fixture(scope="module")
def learned(wine):
    """sb_nc's optimum on the wines, without a time limit (a busy machine proves it too)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return learn(wine, get_learned_family("sb_nc"), margin=MARGIN, options=SolverOptions())


def exact_count(data, distance) -> int:
    za, zb = data.standardised()
    _, correct = recount(za, zb, distance, margin=MARGIN, tol=0.0)
    return int(correct.sum())


def test_the_returned_parameter_reaches_the_verified_count_at_the_exact_margin(wine, learned):
    result, distance = learned
    assert result.status == Status.OPTIMAL
    assert result.n_correct_verified == result.bound == 24  # the optimum is not understated
    assert exact_count(wine, distance) == 24  # was 21: three records on the margin, within its tolerance
    assert int(result.correct.sum()) == 24
    assert all(event["lower"] is None or event["lower"] <= 24 for event in result.history)


def test_reach_margin_moves_a_parameter_off_the_margin(wine, learned):
    family = get_learned_family("sb_nc")
    za, zb = wine.standardised()
    _, distance = learned
    theta = family.theta_from_params(distance.params(), wine.columns)
    # a parameter on the margin: each counted record separated by margin - 1e-9 at worst
    linked, _ = recount(za, zb, distance, margin=MARGIN, tol=0.0)
    records = linked.separation >= MARGIN - 1e-7
    moved = reach_margin(za, zb, family, theta, records, margin=MARGIN, feasibility_tol=1e-9)
    assert moved is not None and family.is_admissible(moved, za, zb, tol=1e-9)
    _, correct = recount(za, zb, family.distance(moved, wine.columns), margin=MARGIN, tol=0.0)
    assert np.all(correct[records])


def test_reach_margin_gives_up_at_its_deadline(wine):
    family = get_learned_family("sb_nc")
    za, zb = wine.standardised()
    theta = family.neutral(za.shape[1])
    records = np.ones(za.shape[0], dtype=bool)
    assert (
        reach_margin(za, zb, family, theta, records, margin=MARGIN, feasibility_tol=1e-9, deadline=0.0)
        is None
    )
