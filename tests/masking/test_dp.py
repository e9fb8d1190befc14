import math
import warnings

import numpy as np
import pandas as pd
import pytest

from rlopt.exceptions import DataWarning, InputError
from rlopt.masking.dp import (
    dp_microaggregate,
    dp_microaggregation_scale,
    insensitive_microaggregation,
    laplace_noise,
    laplace_scale,
)
from rlopt.masking.mdav import group_means

UNIT = {"a": (0.0, 1.0), "b": (0.0, 10.0)}


def _random_file(rng, n, m=2):
    return rng.uniform(size=(n, m)) * [1.0, 10.0][:m]


# ---- the order and the clusters ------------------------------------------------------


def test_hand_worked_one_attribute():
    # order 1, 3, 5, 7, 9 (rows 1, 3, 2, 4, 0); k = 2: {1, 3} and the remainder {5, 7, 9}
    x = np.array([[9.0], [1.0], [5.0], [3.0], [7.0]])
    assert list(insensitive_microaggregation(x, 2, [(0.0, 10.0)])) == [1, 0, 1, 0, 1]


def test_ties_in_distance_broken_lexicographically():
    # (0, 1), (1, 0) are both at distance 1 from the corner (0, 0): (0, 1) comes first
    x = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.9], [1.0, 1.0]])
    labels = insensitive_microaggregation(x, 2, [(0.0, 1.0), (0.0, 1.0)])
    assert list(labels) == [0, 0, 1, 1]
    x = np.array([[1.0, 0.0], [0.9, 0.9], [0.0, 1.0], [1.0, 1.0], [0.1, 0.1], [0.95, 0.95]])
    assert list(insensitive_microaggregation(x, 2, [(0.0, 1.0), (0.0, 1.0)])) == [1, 1, 0, 2, 0, 2]


def test_order_uses_domain_standardised_distance():
    # b has width 10: (0, 5) is at distance 0.25, (0.6, 0) at 0.36 -> (0, 5) comes first
    frame = pd.DataFrame({"a": [0.6, 0.0, 1.0, 1.0], "b": [0.0, 5.0, 10.0, 9.0]})
    labels = insensitive_microaggregation(frame, 2, UNIT)
    assert list(labels) == [0, 0, 1, 1]


@pytest.mark.parametrize("n, k", [(10, 2), (11, 3), (7, 7), (50, 4), (23, 5)])
def test_clusters_have_k_to_2k_minus_1_records(n, k):
    x = _random_file(np.random.default_rng(n * k), n)
    sizes = np.bincount(insensitive_microaggregation(x, k, [(0, 1), (0, 10)]))
    assert sizes.size == n // k
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1 and sizes.sum() == n


def _members(labels):
    return [set(np.flatnonzero(labels == c)) for c in range(labels.max() + 1)]


def test_changing_one_record_changes_at_most_one_record_per_cluster():
    rng = np.random.default_rng(1)
    bounds = [(0.0, 1.0), (0.0, 10.0)]
    for _ in range(200):
        n = int(rng.integers(4, 40))
        k = int(rng.integers(2, n // 2 + 1))
        x = _random_file(rng, n)
        x = np.where(rng.uniform(size=x.shape) < 0.2, np.round(x), x)  # some ties
        y = x.copy()
        y[rng.integers(n)] = _random_file(rng, 1)[0]
        before = _members(insensitive_microaggregation(x, k, bounds))
        after = _members(insensitive_microaggregation(y, k, bounds))
        assert len(before) == len(after) == n // k
        for old, new in zip(before, after):
            assert len(old - new) <= 1 and len(new - old) <= 1
        # hence every centroid of attribute a moves by at most width_a / k, and the
        # L1 change of the centroids of attribute a is within the sensitivity
        moved = np.abs(
            group_means(x, insensitive_microaggregation(x, k, bounds))
            - group_means(y, insensitive_microaggregation(y, k, bounds))
        )
        widths = np.array([1.0, 10.0])
        assert (moved <= widths / k + 1e-12).all()
        assert (moved.sum(axis=0) <= (n // k) * widths / k + 1e-12).all()


# ---- the noise scale -----------------------------------------------------------------


def test_dp_microaggregation_scale_by_hand():
    # n = 100, k = 10: 10 clusters, centroid sensitivity 10 * width / 10 = width per
    # attribute; epsilon = 2 over 2 attributes -> 1 each -> b = width
    np.testing.assert_allclose(dp_microaggregation_scale(100, 10, 2.0, [1.0, 4.0]), [1.0, 4.0])
    # n = 23, k = 5: 4 clusters; b = 3 * 4 * width / (5 * 0.5) = 4.8 * width
    np.testing.assert_allclose(dp_microaggregation_scale(23, 5, 0.5, [1.0, 2.0, 0.0]), [4.8, 9.6, 0.0])
    # laplace baseline: b = m * width / epsilon
    np.testing.assert_allclose(laplace_scale(2.0, [1.0, 4.0]), [1.0, 4.0])
    np.testing.assert_allclose(laplace_scale(0.5, [3.0]), [6.0])


def test_released_centroid_noise_has_the_laplace_spread():
    # a constant file: every centroid is 0.5 (and 5), 2000 clusters of 2
    n, k, epsilon = 4000, 2, 2000.0
    frame = pd.DataFrame({"a": np.full(n, 0.5), "b": np.full(n, 5.0)})
    labels = insensitive_microaggregation(frame, k, UNIT)
    released = dp_microaggregate(frame, k, epsilon, bounds=UNIT, seed=3).to_numpy()
    first = np.unique(labels, return_index=True)[1]
    noise = released[first] - [0.5, 5.0]
    b = dp_microaggregation_scale(n, k, epsilon, [1.0, 10.0])
    np.testing.assert_allclose(b, [1.0, 10.0])
    np.testing.assert_allclose(noise.std(axis=0), math.sqrt(2) * b, rtol=0.1)
    np.testing.assert_allclose(np.abs(noise).mean(axis=0), b, rtol=0.1)  # E|L| = b


def test_records_of_a_cluster_share_one_released_vector():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(_random_file(rng, 37), columns=["a", "b"])
    frame["id"] = np.arange(37)
    released = dp_microaggregate(frame, 4, 1.0, bounds=UNIT, columns=["a", "b"], seed=1)
    labels = insensitive_microaggregation(frame[["a", "b"]], 4, UNIT)
    for c in range(labels.max() + 1):
        rows = released.loc[labels == c, ["a", "b"]].to_numpy()
        assert (rows == rows[0]).all()
    assert released["id"].equals(frame["id"])
    assert released.index.equals(frame.index) and list(released.columns) == ["a", "b", "id"]


def test_huge_epsilon_gives_the_plain_centroids():
    x = _random_file(np.random.default_rng(9), 30)
    labels = insensitive_microaggregation(x, 3, [(0, 1), (0, 10)])
    released = dp_microaggregate(x, 3, 1e12, bounds={"x0": (0, 1), "x1": (0, 10)}).to_numpy()
    np.testing.assert_allclose(released, group_means(x, labels)[labels], atol=1e-9)


def test_clip_keeps_released_values_in_the_domain():
    x = _random_file(np.random.default_rng(2), 20)
    bounds = {"x0": (0.0, 1.0), "x1": (0.0, 10.0)}
    for release in (
        dp_microaggregate(x, 2, 0.1, bounds=bounds, clip=True),
        laplace_noise(x, 0.1, bounds=bounds, clip=True),
    ):
        assert (release["x0"].between(0, 1)).all() and (release["x1"].between(0, 10)).all()
    assert not dp_microaggregate(x, 2, 0.1, bounds=bounds)["x1"].between(0, 10).all()


# ---- the Laplace baseline -------------------------------------------------------------


def test_laplace_noise_scale_and_seeds():
    n, epsilon = 4000, 4.0
    frame = pd.DataFrame({"a": np.full(n, 0.5), "b": np.full(n, 5.0), "c": np.arange(n)})
    bounds = {"a": (0.0, 1.0), "b": (0.0, 10.0)}
    released = laplace_noise(frame, epsilon, bounds=bounds, seed=11, columns=["a", "b"])
    noise = released[["a", "b"]].to_numpy() - [0.5, 5.0]
    b = laplace_scale(epsilon, [1.0, 10.0])
    np.testing.assert_allclose(b, [0.5, 5.0])
    np.testing.assert_allclose(noise.std(axis=0), math.sqrt(2) * b, rtol=0.1)
    assert released["c"].equals(frame["c"])
    again = laplace_noise(frame, epsilon, bounds=bounds, seed=11, columns=["a", "b"])
    other = laplace_noise(frame, epsilon, bounds=bounds, seed=12, columns=["a", "b"])
    pd.testing.assert_frame_equal(released, again)
    assert not np.allclose(released[["a", "b"]], other[["a", "b"]])


def test_dp_microaggregate_seed_reproducibility():
    x = _random_file(np.random.default_rng(4), 12)
    bounds = {"x0": (0, 1), "x1": (0, 10)}
    first = dp_microaggregate(x, 3, 1.0, bounds=bounds, seed=7)
    pd.testing.assert_frame_equal(first, dp_microaggregate(x, 3, 1.0, bounds=bounds, seed=7))
    assert not first.equals(dp_microaggregate(x, 3, 1.0, bounds=bounds, seed=8))


# ---- bad inputs ----------------------------------------------------------------------

X = np.array([[0.1, 1.0], [0.2, 2.0], [0.3, 3.0], [0.4, 4.0]])
B = {"x0": (0.0, 1.0), "x1": (0.0, 10.0)}


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: dp_microaggregate(X, 2, 0, bounds=B),
            r"epsilon=0; expected a number > 0 \(the privacy budget\)",
        ),
        (lambda: dp_microaggregate(X, 2, -1.0, bounds=B), r"epsilon=-1\.0"),
        (lambda: dp_microaggregate(X, 2, math.inf, bounds=B), r"epsilon=inf"),
        (lambda: dp_microaggregate(X, 2, math.nan, bounds=B), r"epsilon=nan"),
        (lambda: dp_microaggregate(X, 2, True, bounds=B), r"epsilon=True"),
        (lambda: laplace_noise(X, "1", bounds=B), r"epsilon='1'"),
        (lambda: dp_microaggregate(X, 1, 1.0, bounds=B), r"k=1 .*2 <= k <= 4"),
        (lambda: dp_microaggregate(X, 5, 1.0, bounds=B), r"k=5 .*2 <= k <= 4"),
        (lambda: dp_microaggregate(X, 2.0, 1.0, bounds=B), r"k=2\.0; expected an integer"),
        (lambda: dp_microaggregate(X, True, 1.0, bounds=B), r"k=True"),
        (lambda: dp_microaggregate(X, 2, 1.0, bounds=B, seed=-1), r"seed=-1"),
        (lambda: laplace_noise(X, 1.0, bounds=B, seed="a"), r"seed='a'"),
        (lambda: dp_microaggregate(X, 2, 1.0, bounds={"x0": (0, 1)}), r"\['x1'\]"),
        (lambda: laplace_noise(X, 1.0, bounds={**B, "z": (0, 1)}), r"unknown column\(s\) \['z'\]"),
        (lambda: laplace_noise(X, 1.0, bounds={**B, "x1": (5, 1)}), r"'x1'.*lower=5 > upper=1"),
        (lambda: laplace_noise(X, 1.0, bounds={**B, "x1": (0, math.inf)}), r"'x1'.*finite"),
        (lambda: laplace_noise(X, 1.0, bounds={**B, "x1": 3}), r"'x1': 3; expected a pair"),
        (lambda: laplace_noise(X, 1.0, bounds={**B, "x1": (0, 3)}), r"'x1' has value 4\.0 \(row 3\) outside"),
        (lambda: insensitive_microaggregation(X, 2, None), r"bounds=None"),
        (lambda: insensitive_microaggregation(X, 2, [(0, 1)]), r"one \(lower, upper\) pair"),
        (lambda: insensitive_microaggregation(X, 2, [(0, 1), (2, 10)]), r"'x1' has value 1\.0"),
        (lambda: dp_microaggregation_scale(1, 2, 1.0, [1.0]), r"n_records=1"),
        (lambda: dp_microaggregation_scale(10, 2, 1.0, [-1.0]), r"widths=\[-1\.0\]"),
        (lambda: laplace_scale(0.0, [1.0]), r"epsilon=0\.0"),
    ],
)
def test_bad_inputs_raise_input_error(call, match):
    with pytest.raises(InputError, match=match):
        call()


def test_data_derived_bounds_warn():
    with pytest.warns(DataWarning, match="not differentially private"):
        released = dp_microaggregate(X, 2, 1.0)
    assert released.shape == X.shape
    with pytest.warns(DataWarning, match=r"bounds=\{column: \(lower, upper\)\}"):
        laplace_noise(X, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dp_microaggregate(X, 2, 1.0, bounds=B)
        laplace_noise(X, 1.0, bounds=B)
