"""Integral privacy by sampling: when the draws cover every subset, the models and their
generators are the exact ones; random modifications stay within their size; the same
groups in worker processes; the selection never picks a model whose generators share a
record; bad input is one clear error."""

import itertools

import numpy as np
import pandas as pd
import pytest

from rlopt.exceptions import InputError
from rlopt.integral import (
    around,
    decision_tree,
    learn_all,
    linear_regression,
    mean,
    select_private,
    subsamples,
)


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
    train, validation, test = data.iloc[:80], data.iloc[80:100], data.iloc[100:]
    learner = decision_tree("y", ["a", "b"], max_depth=1, precision=1)
    sampled = learn_all(train, learner, subsamples(train.index, 200, size=60, seed=0))
    selection = select_private(train, test, learner, sampled, k=5, validation=validation)
    assert selection.chosen is not None and selection.chosen.generators >= 5 and not selection.chosen.common
    assert all(group.private(5) for group, _ in selection.candidates)
    # chosen on the validation records, scored on the test records, as published
    assert selection.candidates[0][0] == selection.chosen
    assert selection.candidates[0][1] == max(score for _, score in selection.candidates)
    published = learner.published(learner.fit(train.loc[sorted(selection.chosen.example)]))
    assert selection.score == published.score(test[["a", "b"]].to_numpy(), test["y"].to_numpy())
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


def test_a_model_is_scored_as_published_its_parameters_rounded():
    """y = 2.04 x read to 1 decimal is published as y = 2 x: its R² is below 1 on the
    line itself, the one its parameters rounded give."""
    x = np.arange(1.0, 41.0)
    data = pd.DataFrame({"x": x, "y": 2.04 * x})
    train, test = data.iloc[::2], data.iloc[1::2]
    line = linear_regression("y", ["x"], precision=1)
    sampled = learn_all(train, line, subsamples(train.index, 30, size=10, seed=0))
    selection = select_private(train, test, line, sampled, k=5, validation=test)
    (group,) = sampled.groups
    assert group.key == (0.0, 2.0) and selection.chosen == group
    expected = 1 - ((2.04 * test.x - 2.0 * test.x) ** 2).sum() / ((test.y - test.y.mean()) ** 2).sum()
    assert selection.score == pytest.approx(expected) and selection.score < 1
    assert selection.non_private_score == pytest.approx(expected)  # the whole data's line, published alike


def test_a_model_does_not_depend_on_the_order_its_records_are_listed_in_nor_on_the_workers():
    """MDAV groups by the records' order on ties, so a database is always read in the
    data's order: the same key in every process, whatever a set's iteration order."""
    from rlopt.data import load_cps1985
    from rlopt.integral import masked, published
    from rlopt.integral.learners import rows

    cps = load_cps1985()[["wage", "education", "experience", "age", "union"]]
    tree = decision_tree("union", ["wage", "education", "experience", "age"], max_depth=2, precision=0)
    learner = masked(tree, "mdav", k=5)
    drawn = subsamples(list(cps.index), 24, size=267, seed=0)
    for database in drawn:
        assert published(cps, learner, sorted(database, reverse=True)) == learner(rows(cps, database))
    assert learn_all(cps, learner, drawn).keys == learn_all(cps, learner, drawn, jobs=2).keys
