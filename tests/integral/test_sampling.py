"""Integral privacy by sampling: when the draws cover every subset, the models and their
generators are the exact ones; random modifications stay within their size; the same
groups in worker processes; the selection never picks a model whose generators share a
record; bad input is one clear error."""

import itertools

import numpy as np
import pandas as pd
import pytest

from rlopt.exceptions import InputError
from rlopt.integral import around, decision_tree, learn_all, mean, select_private, subsamples


def _every_subset(records):
    return {frozenset(c) for n in range(len(records) + 1) for c in itertools.combinations(records, n)}


def test_sampling_that_covers_every_subset_finds_the_exact_generators():
    data = pd.DataFrame({"v": [1, 2, 2, 3, 5]}, index=list("abcde"))
    drawn = subsamples(data.index, 2**5, seed=3)
    assert set(drawn) == _every_subset(data.index)  # all 32, each once
    sampled = learn_all(data, mean(["v"]), drawn)
    learner = mean(["v"])
    exact: dict = {}
    for subset in _every_subset(data.index):
        exact.setdefault(learner(data.loc[list(subset)]), []).append(subset)
    assert {g.key: g.generators for g in sampled.groups} == {key: len(made) for key, made in exact.items()}
    for group in sampled.groups:  # the records common to every generator, as in the exact set
        assert group.common == frozenset.intersection(*exact[group.key])
    # mean 2: {b}, {c}, {b, c}, {a, d}, {a, b, d}, {a, c, d}, {a, b, c, d}: 7 generators, none common
    two = next(g for g in sampled.groups if g.key == (2.0,))
    assert two.generators == 7 and two.common == frozenset() and two.private(7) and not two.private(8)


def test_random_modifications_stay_within_their_size_and_are_reproducible():
    records = list(range(30))
    x = set(range(10))
    drawn = around(records, x, 50, max_changes=3, seed=1)
    assert len(drawn) == 50 and len(set(drawn)) == 50
    assert all(1 <= len(d ^ x) <= 3 for d in drawn)
    assert drawn == around(records, x, 50, max_changes=3, seed=1)
    assert drawn != around(records, x, 50, max_changes=3, seed=2)
    sized = subsamples(records, 20, size=12, seed=0)
    assert all(len(d) == 12 for d in sized) and len(set(sized)) == 20


def test_the_same_groups_in_worker_processes_and_on_dask():
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x": rng.normal(size=40), "y": rng.integers(0, 2, size=40)})
    learner = decision_tree("y", ["x"], max_depth=1, precision=1)
    drawn = subsamples(data.index, 30, size=30, seed=0)
    alone = learn_all(data, learner, drawn)
    workers = learn_all(data, learner, drawn, jobs=2)
    assert alone.keys == workers.keys and [g.generators for g in alone.groups] == [
        g.generators for g in workers.groups
    ]


def test_the_selection_picks_no_model_whose_generators_share_a_record():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(120, 2))
    data = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": (x[:, 0] + 0.3 * x[:, 1] > 0).astype(int)})
    train, test = data.iloc[:80], data.iloc[80:]
    learner = decision_tree("y", ["a", "b"], max_depth=1, precision=1)
    sampled = learn_all(train, learner, subsamples(train.index, 200, size=60, seed=0))
    selection = select_private(train, test, learner, sampled, k=5)
    assert selection.chosen is not None and selection.chosen.generators >= 5 and not selection.chosen.common
    assert all(group.private(5) for group, _ in selection.candidates)
    assert selection.score == max(score for _, score in selection.candidates)
    assert (
        0 <= selection.non_private_score <= 1
        and selection.utility_lost == selection.non_private_score - selection.score
    )
    # a k no model reaches: nothing chosen, said so
    none = select_private(train, test, learner, sampled, k=10_000)
    assert none.chosen is None and none.score is None and none.to_dict()["chosen"] is None


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: subsamples(range(5), 0), "n=0 databases; expected an integer >= 1"),
        (lambda: subsamples(range(5), 3, size=9), "size=9; expected from 0 to the data's 5 records"),
        (lambda: around(range(5), [1, 2], 3, max_changes=6), "max_changes=6; expected an integer from 1 to"),
        (lambda: around(range(5), [7], 3, max_changes=1), "the database holds records outside the data"),
        (lambda: learn_all(pd.DataFrame({"v": [1.0]}), mean(["v"]), [frozenset([0])], jobs=0), "jobs=0"),
    ],
)
def test_bad_input_is_one_clear_error(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_a_model_that_fails_on_a_sampled_database_says_which():
    data = pd.DataFrame({"x": [0.0, 1.0, 2.0], "y": [0, 0, 1]})
    with pytest.raises(InputError, match=r"failed on a database of 2 records \(records \[0, 1\]\)"):
        learn_all(data, decision_tree("y", ["nope"]), [frozenset([0, 1])])


def test_masking_the_databases_first_makes_their_models_fewer_and_alike():
    """A(rho(X)): a tree on x rounded to tens can only split between tens, so the same
    subsamples give fewer distinct trees, each generated by more databases."""
    from rlopt.integral import masked

    rng = np.random.default_rng(1)
    x = rng.uniform(0, 100, size=60)
    data = pd.DataFrame({"x": x, "y": (x > 47).astype(int)})
    tree = decision_tree("y", ["x"], max_depth=1, precision=2)
    rounded = masked(tree, "recoding", base={"x": 10})
    drawn = subsamples(data.index, 200, size=30, seed=0)
    raw, coarse = learn_all(data, tree, drawn), learn_all(data, rounded, drawn)
    assert len(coarse.groups) < len(raw.groups)
    assert coarse.groups[0].generators > raw.groups[0].generators
    assert all(g.key[2][0] % 5 == 0 for g in coarse.groups)  # thresholds midway between tens present
    assert rounded.target == "y" and "masked by recoding" in rounded.name
    with pytest.raises(InputError, match="recoding"):
        masked(tree, "recoding", base="x:10")
