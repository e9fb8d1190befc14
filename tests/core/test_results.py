"""One result type for every count of re-identified records."""

import numpy as np
import pytest

from rlopt.attacks import plan_attack
from rlopt.data import load_cps1985, validate_pair
from rlopt.linkage import dbrl, pld
from rlopt.masking import build, masking_spec, published_recipe
from rlopt.results import Reidentification


@pytest.fixture(scope="module")
def m433():
    original, masked = build(published_recipe("M4-33"))
    return original.iloc[:120].reset_index(drop=True), masked.iloc[:120].reset_index(drop=True)


def _attacked(original, spec):
    return plan_attack(validate_pair(original, spec.apply(original)), spec)("am")


def _results(m433):
    original, masked = m433
    groups = [(["AFNLWGT", "AGI"], 3), (["EMCONTRB", "FEDTAX"], 3)]
    yield dbrl(original, masked, distance="md")
    yield pld(original, masked)
    yield _attacked(original, masking_spec("mdav", groups=groups))
    yield _attacked(original, masking_spec("fuzzy", c=10))
    survey = load_cps1985().iloc[:80][["age", "sector", "gender", "occupation"]]
    yield _attacked(survey, masking_spec("pram", theta=0.8, columns=["sector", "gender", "occupation"]))


def test_every_count_is_a_reidentification_with_one_rate_and_one_dict(m433):
    sources = set()
    for result in _results(m433):
        assert isinstance(result, Reidentification), type(result)
        assert result.n_correct == int(np.sum(result.correct))
        assert result.correct.shape == result.linked_to.shape == (result.n_records,)
        assert result.rate == result.n_correct / result.n_records
        assert result.upper_rate == result.rate and result.status == "exact"
        figures = result.to_dict()
        common = {"n_records", "n_correct", "rate", "status"}
        assert common <= set(figures) and figures["rate"] == result.rate
        assert figures["status"] == "exact"
        sources.add(result.source)
    assert sources == {"md", "pld", "mdav attack", "fuzzy attack", "pram attack"}


def test_an_interval_count_reports_its_ceiling():
    result = Reidentification(
        n_records=4,
        n_correct=1,
        correct=np.array([1, 0, 0, 0], bool),
        linked_to=np.arange(4),
        status="interval",
        upper=3,
    )
    assert (result.rate, result.upper_rate) == (0.25, 0.75)
    with pytest.raises(NotImplementedError):
        result.source  # noqa: B018 - a method names itself; the base names nobody


def test_a_learn_result_lives_in_results_under_every_old_name_and_keeps_its_json_keys():
    import rlopt
    from rlopt.learn import LearnResult as from_learn
    from rlopt.results import LearnResult

    assert rlopt.LearnResult is from_learn is LearnResult
    result = LearnResult(
        family="wm",
        n_records=10,
        claimed=7,
        n_correct_verified=6,
        n_correct_strict=5,
        status="time_limit",
        bound=8,
        gap=0.25,
        margin=1e-5,
        params=None,
        solver={},
        seconds={},
        model={},
        recount_tol=1e-8,
    )
    assert result.n_correct == 7  # the solver's claim, under its old name
    figures = result.to_dict()
    assert list(figures) == [
        "family", "n_records", "n_correct", "n_correct_verified", "n_correct_strict", "rate", "status",
        "bound", "gap", "margin", "params", "solver", "seconds", "model", "recount_tol", "cut_rounds",
        "reductions", "n_at_risk", "at_risk_exact", "lower_source", "history", "verification", "blocks",
    ]  # fmt: skip
    assert figures["n_correct"] == 7 and figures["n_correct_verified"] == 6 and figures["rate"] == 0.6
