"""The ceiling of identical records: worked by hand, never below what any distance
re-identifies (brute force, the MILP), the number of records where nothing is identical."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from rlopt.data import validate_pair
from rlopt.families.owa import OWADistance
from rlopt.families.wm import WeightedMeanDistance
from rlopt.linkage import link_records, recount
from rlopt.linkage.distance_based import resolve_distance
from rlopt.linkage.identical import identical_records, row_groups
from tests._helpers import MARGIN, brute_force_two_attributes, fit, noisy_file


def _pair(original, masked, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate originals: a DataWarning, expected here
        return validate_pair(original, masked, **kwargs)


def six_records():
    """Masked: records 0, 1, 2 alike (an MDAV group), 3 and 4 alike, 5 alone. Originals:
    3 and 4 equal, the others distinct. Groups {0,1,2}: one at most; {3,4}: none (both
    originals have a twin); {5}: one. The ceiling is 2."""
    original = pd.DataFrame({"x": [0.0, 1.0, 2.0, 10.0, 10.0, 20.0], "y": [0.0, 1.0, 0.0, 5.0, 5.0, 9.0]})
    masked = pd.DataFrame({"x": [1.0, 1.0, 1.0, 10.0, 10.0, 20.0], "y": [0.5, 0.5, 0.5, 5.0, 5.0, 9.0]})
    return original, masked


def test_six_records_by_hand():
    data = _pair(*six_records())
    found = identical_records(data.encoded.za, data.encoded.zb)
    assert found.ceiling == 2 and found.n_records == 6
    assert found.n_masked_groups == 3 and found.n_shared_original == 2
    np.testing.assert_array_equal(found.shared_original, [False, False, False, True, True, False])
    groups = found.masked_group
    assert groups[0] == groups[1] == groups[2] != groups[3] == groups[4] != groups[5]
    assert found.to_dict() == {"ceiling": 2, "n_records": 6, "n_masked_groups": 3, "n_shared_original": 2}
    assert found.describe().startswith("identical records: at most 2 of 6 re-identified")
    # AM reaches it: record 0 or 1 (their masked record is nearest to original 1, at the
    # group's mean) and record 5; 3 and 4 are tied with each other's original
    am = link_records(
        data.encoded.za, data.encoded.zb, resolve_distance("am", *data.standardised(), data.columns)
    )
    assert am.n_correct == 2 and am.correct[5] and not am.correct[3:5].any()


def test_equality_is_what_the_distance_reads():
    # a nominal attribute with a blank: a blank equals a blank, never a level; ordinal
    # levels compare by their encoded rank, numbers by their z-scores
    original = pd.DataFrame({"n": [1.0, 2.0, 3.0, 4.0, 5.0], "c": ["a", "b", "a", "b", "a"]})
    masked = pd.DataFrame({"n": [1.0, 1.0, 1.0, 4.0, 4.0], "c": [None, None, "a", "b", "b"]})
    data = _pair(original, masked, kinds={"nominal": ["c"]})
    found = identical_records(data.encoded.za, data.encoded.zb)
    groups = found.masked_group
    assert groups[0] == groups[1] != groups[2]  # two blanks alike; a blank is not the level "a"
    assert groups[3] == groups[4]
    assert found.ceiling == 3 and found.n_shared_original == 0


def test_row_groups_are_byte_equality():
    z = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0 + 1e-15]])
    group, first = row_groups(z)
    np.testing.assert_array_equal(group, [0, 0, 1, 2])  # numbered by first appearance
    np.testing.assert_array_equal(first, [0, 2, 3])
    assert row_groups(z[:0])[0].size == 0
    np.testing.assert_array_equal(row_groups(z[[3, 2, 0]])[0], [0, 1, 2])  # none alike: the rows


def grid_file(seed, n_records=14):
    """Two attributes on a grid of 8 x 8 points, masked to cells of 2 x 2 points: masked
    records often alike, originals sometimes (seed 4: wm's optimum meets the ceiling)."""
    rng = np.random.default_rng(seed)
    original = rng.integers(0, 8, size=(n_records, 2)).astype(float)
    masked = np.floor(original / 2) * 2 + rng.integers(0, 2, size=original.shape)
    return pd.DataFrame(original, columns=["a", "b"]), pd.DataFrame(masked, columns=["a", "b"])


@pytest.mark.parametrize("seed", range(25))
def test_no_distance_beats_the_ceiling_on_small_files(seed):
    original, masked = grid_file(seed)
    if original.nunique().min() < 2 or masked.nunique().min() < 2:
        pytest.skip("a constant attribute")
    data = _pair(original, masked)
    za, zb = data.standardised()
    ceiling = identical_records(za, zb).ceiling
    # the exact optima of wm and owa (one free weight on two attributes), at the margin
    optima = brute_force_two_attributes(original, masked, MARGIN)
    assert max(optima.values()) <= ceiling
    if seed == 4:
        assert optima["wm"] == ceiling == 12  # reached: the ceiling is tight here
    # any parameter, strictly or at the margin
    rng = np.random.default_rng(seed)
    for distance in [
        resolve_distance("am", za, zb, data.columns),
        WeightedMeanDistance(rng.dirichlet([1, 1]), data.columns),
        OWADistance(rng.dirichlet([1, 1])),
    ]:
        linked, at_margin = recount(za, zb, distance, margin=MARGIN, tol=0.0)
        assert linked.n_correct <= ceiling and at_margin.sum() <= ceiling


@pytest.mark.parametrize("seed", [4, 18])
def test_the_milps_proven_optimum_is_within_the_ceiling(seed):
    original, masked = grid_file(seed)
    result = fit("wm", original, masked, time_limit=30)
    data = _pair(original, masked)
    ceiling = identical_records(*data.standardised()).ceiling
    assert result.status == "optimal" and result.n_correct_verified <= ceiling
    assert result.bound <= ceiling  # the run starts from it (certificate: identical records)
    assert ceiling < data.n_records
    assert result.history[0]["upper"] == ceiling and result.history[0]["upper_source"] == "identical records"


@pytest.mark.parametrize("seed", range(3))
def test_without_identical_records_the_ceiling_is_the_number_of_records(seed):
    original, masked = noisy_file(seed)
    data = _pair(original, masked)
    assert identical_records(*data.standardised()).ceiling == data.n_records
    result = fit("wm", original, masked, time_limit=30)
    assert all(event["upper_source"] != "identical records" for event in result.history)
