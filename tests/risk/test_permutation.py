"""The permutation paradigm: reverse mapping and its two parts, by hand and by the
methods' own invariants."""

import numpy as np
import pandas as pd
import pytest

from rlopt.data import load_census
from rlopt.masking import microaggregate, rank_swap
from rlopt.risk.permutation import permutation_analysis, reverse_mapping


def test_by_hand():
    # x = (10, 20, 30, 40); y = (31, 12, 44, 19): ranks of y (1->2, 2->0, 3->3, 4->1)
    # z = x at those ranks = (30, 10, 40, 20); displacements |2-0|, |0-1|, |3-2|, |1-3|
    x = np.array([[10.0], [20], [30], [40]])
    y = np.array([[31.0], [12], [44], [19]])
    z, moved = reverse_mapping(x, y)
    assert z[:, 0].tolist() == [30, 10, 40, 20]
    assert moved[:, 0].tolist() == [2, 1, 1, 2]
    table = permutation_analysis(pd.DataFrame(x, columns=["a"]), pd.DataFrame(y, columns=["a"]))
    assert table["mean_displacement"][0] == pytest.approx(6 / 4 / 3)
    assert table["max_displacement"][0] == 2 and table["moved"][0] == 1.0


def test_rank_swapping_is_a_pure_permutation_within_its_window():
    census = load_census().iloc[:, :5]
    swapped = rank_swap(census, 10, seed=3)
    z, moved = reverse_mapping(census.to_numpy(float), swapped.to_numpy(float))
    np.testing.assert_array_equal(z, swapped.to_numpy(float))  # Z is the masked file itself
    table = permutation_analysis(census, swapped)
    assert (table["residual_noise"] == 0).all()
    assert (table["max_displacement"] <= int(0.10 * len(census))).all()


@pytest.mark.parametrize("k", [2, 3, 7])
def test_univariate_mdav_moves_records_less_than_its_group_size(k):
    census = load_census().iloc[:, :4]
    for column in census.columns:
        one = census[[column]]
        table = permutation_analysis(one, microaggregate(one, k=k))
        assert table["max_displacement"][0] <= 2 * k - 1  # groups have k..2k-1 records


def test_a_random_permutation_moves_about_a_third():
    rng = np.random.default_rng(0)
    x = pd.DataFrame({"a": rng.normal(size=3000)})
    y = pd.DataFrame({"a": rng.permutation(x["a"].to_numpy())})
    assert permutation_analysis(x, y)["mean_displacement"][0] == pytest.approx(1 / 3, abs=0.02)
    assert permutation_analysis(x, x)["mean_displacement"][0] == 0.0
