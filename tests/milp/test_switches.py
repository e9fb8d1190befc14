"""The switches of a run: :class:`Reductions` (exact) and :class:`Searches` (never the
model), both checked by ``check_params``; the old spelling of a search as a reduction
still works for a release, with a FutureWarning; a result's JSON keeps every switch."""

import warnings

import pytest

from rlopt.exceptions import InputError
from rlopt.learn import LearnedDistanceLinkage
from rlopt.milp.reductions import Reductions, Searches, options_of
from tests._helpers import fit, noisy_file

OLD_KEYS = [
    "drop_redundant",
    "drop_dominated",
    "fix_unreachable",
    "conflicts",
    "max_conflict_lps",
    "duplicate_cliques",
    "lazy",
    "lazy_start",
    "lazy_per_round",
    "warm_start",
    "carry_rounds",
    "nca_start",
    "surrogate",
    "line_search",
    "greedy_add",
    "parameter_bb",
    "quick_solve",
]


def test_each_is_checked_as_every_options_type():
    with pytest.raises(InputError, match="lazy_per_round=0; expected an integer >= 1"):
        Reductions(lazy_per_round=0)
    with pytest.raises(InputError, match="lazy='yes'; expected True or False"):
        Reductions(lazy="yes")
    with pytest.raises(InputError, match="surrogate='no'; expected True or False"):
        Searches(surrogate="no")
    with pytest.raises(InputError, match=r"unknown reduction\(s\) \['lazzy'\]"):
        options_of({"lazzy": True})
    with pytest.raises(InputError, match=r"unknown search\(es\) \['lazy'\]"):
        options_of(None, {"lazy": False})


def test_all_none_and_the_naive_model():
    assert options_of() == options_of("all", "all") == (Reductions(), Searches())
    assert options_of("none") == (Reductions.none(), Searches.none())  # the naive model: no search either
    assert options_of("none", {"surrogate": False})[1] == Searches(surrogate=False)  # as given
    assert Searches().quick().names() == () and Searches().quick().parameter_bb


def test_a_search_spelled_as_a_reduction_still_works_with_a_future_warning():
    with pytest.warns(FutureWarning, match="searches="):
        reductions, searches = options_of({"lazy": False, "parameter_bb": False})
    assert not reductions.lazy and not searches.parameter_bb and searches.surrogate
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        options_of({"lazy": False}, {"parameter_bb": False})  # the new spelling: no warning
    with pytest.warns(FutureWarning):
        learner = LearnedDistanceLinkage("wm", reductions={"quick_solve": False})
        learner._checked()


def test_the_results_json_keeps_every_switch_in_its_order():
    result = fit("wm", *noisy_file(2, 12, 2), searches={"parameter_bb": False})
    assert list(result.to_dict()["reductions"]) == OLD_KEYS
    assert result.reductions["parameter_bb"] is False and result.reductions["lazy"] is True
