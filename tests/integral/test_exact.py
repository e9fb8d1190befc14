"""The exact set M of integral privacy, worked by hand: a mean over integers whose
consistent modifications are known in closed form, the talk's definitions (M, its
intersection, its minimal elements, k) on a few records, a decision tree keyed by its
structure and thresholds, and one clear error for each bad input."""

import numpy as np
import pandas as pd
import pytest

from rlopt.exceptions import InputError
from rlopt.integral import (
    Modification,
    consistent_modifications,
    decision_tree,
    estimator,
    linear_regression,
    logistic_regression,
    mean,
    published,
)


def _values(*values, name="v"):
    return pd.DataFrame({name: list(values)}, index=[f"r{v}" for v in values])


def test_a_mean_over_integers_by_hand():
    """X = {1, 2, 3} (mean 2) becomes X' of mean 2.5, at most two records apart. The
    intruder knows X: adding d gives (6 + d)/4 = 2.5, d = 4; removing r gives (6 - r)/2 = 2.5,
    r = 1; no pair of changes over 1..5 gives 2.5. So M = {+r4, -r1}: two minimal elements,
    an empty intersection, integrally private with k = 2."""
    population = _values(1, 2, 3, 4, 5)
    learner = mean(["v"])
    x = ["r1", "r2", "r3"]
    before, after = published(population, learner, x), (2.5,)
    assert before == (2.0,)
    result = consistent_modifications(population, learner, before, after, known=x, max_changes=2)
    assert set(result.modifications) == {
        Modification(added=frozenset({"r4"})),
        Modification(frozenset({"r1"})),
    }
    assert result.k == 2 and result.integrally_private and result.k_anonymous(2) and not result.k_anonymous(3)
    assert result.members == frozenset()  # the intruder knew X


def test_one_explanation_reveals_its_record():
    """X = {1, 2} (mean 1.5) to mean 2 in one change: +r3 ((3 + 3)/3 = 2) or -r1 (2/1 = 2).
    Over the population {1, 2, 3} both are there; over {1, 2, 4} only -r1 ((3 + 4)/3 is not
    2): M = {-r1}, the intersection names r1, removed for sure: not integrally private."""
    both = consistent_modifications(
        _values(1, 2, 3), mean(["v"]), (1.5,), (2.0,), known=["r1", "r2"], max_changes=1
    )
    assert sorted(str(m) for m in both.modifications) == ["{+r3}", "{-r1}"] and both.integrally_private
    one = consistent_modifications(
        _values(1, 2, 4), mean(["v"]), (1.5,), (2.0,), known=["r1", "r2"], max_changes=1
    )
    assert [str(m) for m in one.modifications] == ["{-r1}"]
    assert one.removed_surely == {"r1"} and not one.integrally_private and one.k == 1


def test_minimal_elements_and_what_an_intruder_knowing_less_infers():
    """Values 2, 2, 4, 4 (labels a, b, c, d): G = mean 3 from X = {a, c}; G' = mean 3 again.
    Knowing only a, the candidate X with mean 3 holding a are {a, c}, {a, d} and {a, b, c, d};
    the empty modification explains G' = G, so it is the one minimal element (k = 1) and
    the intersection is empty. The intruder infers no member: c, d and b each miss from
    some candidate X."""
    population = pd.DataFrame({"v": [2, 2, 4, 4]}, index=list("abcd"))
    result = consistent_modifications(population, mean(["v"]), (3.0,), (3.0,), known=["a"], max_changes=2)
    assert Modification() in result.modifications and [str(m) for m in result.minimal] == ["{}"]
    assert result.k == 1 and result.integrally_private  # large-ish M, empty intersection
    assert {frozenset("ac"), frozenset("ad"), frozenset("abcd")} == set(result.databases)
    assert result.members == frozenset()
    # a change of G reveals: G' = mean 4 within one change of a candidate X holding a:
    # from {a, c} or {a, d}, remove a (leaving 4) is the only way; a is surely removed
    moved = consistent_modifications(population, mean(["v"]), (3.0,), (4.0,), known=["a"], max_changes=1)
    assert moved.removed_surely == {"a"} and not moved.integrally_private


def test_a_decision_tree_is_keyed_by_its_structure_and_thresholds():
    rows = pd.DataFrame(
        {"x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "y": [0, 0, 0, 1, 1, 1]}, index=[f"p{i}" for i in range(6)]
    )
    tree = decision_tree("y", ["x"], max_depth=2)
    split_at_3_5 = published(rows, tree, ["p0", "p1", "p2", "p3", "p4", "p5"])
    assert split_at_3_5 == ((1, -1, -1), (0, -1, -1), (3.5, 0.0, 0.0), ("", "0", "1"))
    # without p2 the split moves to (2 + 4)/2 = 3: another model
    assert published(rows, tree, ["p0", "p1", "p3", "p4", "p5"])[2][0] == 3.0
    # which single removals keep the published tree? those of p0, p1, p4, p5 (the split stays at 3.5)
    result = consistent_modifications(
        rows, tree, split_at_3_5, split_at_3_5, known=list(rows.index), max_changes=1
    )
    assert sorted(str(m) for m in result.modifications) == ["{-p0}", "{-p1}", "{-p4}", "{-p5}", "{}"]
    assert tree.describe(split_at_3_5) == "if x <= 3.5 then 0 else 1"


def test_a_published_tree_reads_as_its_rules_whatever_its_shape():
    """The key holds only the left children: each right child is recovered from
    scikit-learn's depth-first numbering, checked against the fitted tree's own."""
    from rlopt.integral.learners import _right_child

    rng = np.random.default_rng(3)
    rows = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    rows["y"] = ((rows.a > 0.2) ^ (rows.b < -0.5)).astype(int) + (rows.c > 1).astype(int)
    for depth in (1, 2, 4, 6):
        tree = decision_tree("y", ["a", "b", "c"], max_depth=depth, precision=2)
        fitted = tree.fit(rows).tree_
        left = fitted.children_left.tolist()
        inner = [i for i, child in enumerate(left) if child != -1]
        assert [_right_child(left, i) for i in inner] == fitted.children_right[inner].tolist()
        words = tree.describe(tree(rows))
        assert words.count("if ") == len(inner) and words.count(" else ") == len(inner)


def test_a_linear_model_reads_as_its_equation():
    rows = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "z": [1.0, 0.0, 1.0, 0.0]})
    rows["y"] = 1 + 2 * rows.x - 0.5 * rows.z
    line = linear_regression("y", ["x", "z"], precision=2)
    assert line.describe(published(rows, line, rows.index)) == "y = 1 + 2 x - 0.5 z"
    assert mean(["x"], 1).describe(published(rows, mean(["x"], 1), rows.index)) == "mean x = 1.5"
    # every digit the intruder reads, none beyond
    wide = linear_regression("Y", ["A", "B"], precision=3)
    assert wide.describe((12345.678, 0.001, -2500000.125)) == "Y = 12345.678 + 0.001 A - 2500000.125 B"


def test_a_logistic_model_names_the_class_of_its_log_odds():
    rows = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], "y": ["no", "no", "yes", "no", "yes", "yes"]})
    logistic = logistic_regression("y", ["x"], precision=1)
    key = published(rows, logistic, rows.index)
    assert key[0] == ("no", "yes") and logistic.describe(key).startswith("log-odds of y being yes = ")
    three = rows.assign(y=["a", "b", "c", "a", "b", "c"])
    described = logistic.describe(published(three, logistic, three.index))
    assert [part.split(" = ")[0] for part in described.split("; ")] == [
        "score of y being a",
        "score of y being b",
        "score of y being c",
    ]


def test_a_linear_model_compared_at_a_precision():
    rows = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "y": [0.0, 1.0, 2.001, 3.0]}, index=list("abcd"))
    coarse, fine = linear_regression("y", ["x"], precision=1), linear_regression("y", ["x"], precision=4)
    assert published(rows, coarse, "abcd") == published(rows, coarse, "abd")  # alike at 0.1
    assert published(rows, fine, "abcd") != published(rows, fine, "abd")  # told apart at 1e-4


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda p, l: consistent_modifications(p, l, (1.0,), (1.0,), max_changes=9),
            "max_changes=9; expected an integer from 0 to",
        ),
        (
            lambda p, l: consistent_modifications(p, l, (1.0,), (1.0,), known=["zz"]),
            r"known records \['zz'\] are not in",
        ),
        (
            lambda p, l: consistent_modifications(p, l, (1.0,), (1.0,)).k_anonymous(0),
            "k=0; expected an integer >= 1",
        ),
        (
            lambda p, l: consistent_modifications(pd.DataFrame({"v": range(17)}), l, (1.0,), (1.0,)),
            "a population of 17 records",
        ),
        (
            lambda p, l: published(
                p, estimator(lambda: _Unhashable(), "v", ["v"], key=lambda m: [1]), ["r1"]
            ),
            "not hashable",
        ),
        (
            lambda p, l: published(p, linear_regression("v", ["nope"]), ["r1", "r2"]),
            "a linear regression of v failed on a database of 2 records",
        ),
    ],
)
def test_bad_input_is_one_clear_error(call, message):
    with pytest.raises(InputError, match=message):
        call(_values(1, 2, 3), mean(["v"]))


class _Unhashable:
    def fit(self, x, y):
        return self


def test_the_empty_database_has_no_mean_and_is_a_candidate_like_any_other():
    result = consistent_modifications(_values(1, 3), mean(["v"]), None, (2.0,), max_changes=2)
    assert [str(m) for m in result.modifications] == ["{+r1, +r3}"] and result.added_surely == {"r1", "r3"}
    assert result.databases == [frozenset()] and result.members == frozenset()
