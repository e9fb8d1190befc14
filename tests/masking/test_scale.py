"""The fast paths of masking at scale: the compiled rank-swapping walk makes the same
file as the Python walk; partitioned MDAV keeps every group at k .. 2k-1 records, is
exact MDAV when one part holds the file, and the MDAV attack rebuilds its partition."""

import numpy as np
import pandas as pd
import pytest

from rlopt.attacks import microaggregation_attack
from rlopt.masking import microaggregate
from rlopt.masking.mdav import EXACT_MDAV_RECORDS, PART_RECORDS, _parts, _scaled, mdav_partition
from rlopt.masking.swapping import _swap_column


@pytest.mark.parametrize("variant", ["plain", "p-distribution"])
def test_the_compiled_walk_makes_the_same_swaps(variant):
    for seed in range(40):
        draw = np.random.default_rng(seed)
        n = int(draw.integers(1, 300))
        window = int(draw.integers(0, n + 3))
        values = draw.normal(size=n).round(1)  # ties too
        python = _swap_column(values, window, np.random.default_rng(seed), variant, compiled=False)
        compiled = _swap_column(values, window, np.random.default_rng(seed), variant, compiled=True)
        np.testing.assert_array_equal(python, compiled)
        assert sorted(python) == sorted(values)  # a permutation of the column


def test_the_compiled_walk_keeps_the_window():
    values = np.random.default_rng(1).normal(size=50_000)
    swapped = _swap_column(values, 500, np.random.default_rng(2), "plain", compiled=True)
    rank = np.argsort(np.argsort(values, kind="stable"), kind="stable")
    sorted_values = np.sort(values, kind="stable")
    moved = np.abs(np.searchsorted(sorted_values, swapped) - rank)
    assert moved.max() <= 500 and (moved > 0).mean() > 0.9


def test_partitioned_mdav_is_exact_mdav_within_one_part():
    values = np.random.default_rng(3).normal(size=(PART_RECORDS, 3))
    np.testing.assert_array_equal(
        mdav_partition(values, 4, method="partitioned"), mdav_partition(values, 4, method="exact")
    )


@pytest.mark.parametrize("k", [2, 3, 7])
def test_partitioned_mdav_groups_have_k_to_2k_minus_1_records(k):
    values = np.random.default_rng(k).lognormal(size=(3 * PART_RECORDS + 17, 3))
    labels = mdav_partition(values, k, method="partitioned")
    sizes = np.bincount(labels)
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    parts = _parts(_scaled(values), np.arange(len(values)), PART_RECORDS)
    assert sorted(np.concatenate(parts)) == list(range(len(values)))  # a partition
    assert all(k <= part.size <= PART_RECORDS for part in parts)
    for part in parts:  # no group crosses a part
        assert set(labels[part]).isdisjoint(set(labels[np.setdiff1d(np.arange(len(values)), part)]))


def test_the_mdav_attack_rebuilds_the_partition_of_a_large_file():
    n = EXACT_MDAV_RECORDS + 500  # "auto" takes the partitioned path here
    original = pd.DataFrame(np.random.default_rng(5).normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    groups = [(["a", "b"], 3), (["c", "d"], 3)]
    masked = microaggregate(original, groups=groups)
    attacked = microaggregation_attack(original, masked, groups=groups).to_dict()
    # every record's own original is among its candidates: the attack found the groups
    assert attacked["n_missed"] == 0 and attacked["n_empty"] == 0
    assert attacked["n_correct"] > n // 2
    # an exact-MDAV file is another partition: the same attack then misses records
    exact = microaggregate(original, groups=groups, method="exact")
    assert microaggregation_attack(original, exact, groups=groups).to_dict()["n_missed"] > 0
