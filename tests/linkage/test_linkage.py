import numpy as np
import pandas as pd
import pytest

from rlopt.data import EIA_ATTRIBUTES, load_census, load_eia, standardise
from rlopt.exceptions import DataWarning, InputError
from rlopt.families import get_family
from rlopt.families.am import ArithmeticMeanDistance
from rlopt.families.md import Mahalanobis
from rlopt.linkage import dbrl, link_records
from rlopt.masking import build, microaggregate, published_recipe


def test_am_hand_worked_three_records():
    za = np.array([[0.0, 0.0], [1.0, 1.0], [3.0, 0.0]])
    zb = np.array([[0.0, 1.0], [2.0, 1.0], [3.0, 3.0]])
    # d(a0,.) = 0.5, 2.5, 9   -> correct
    # d(a1,.) = 0.5, 0.5, 4   -> own distance tied with b0: not correct
    # d(a2,.) = 5, 1, 4.5     -> nearest is b1: wrong
    distance = ArithmeticMeanDistance()
    np.testing.assert_allclose(distance.pairwise(za, zb), [[0.5, 2.5, 9.0], [0.5, 0.5, 4.0], [5.0, 1.0, 4.5]])
    result = link_records(za, zb, distance)
    assert (result.n_correct, result.n_ties, result.rate) == (1, 1, 1 / 3)
    assert list(result.correct) == [True, False, False]
    assert list(result.tied) == [False, True, False]
    assert list(result.linked_to) == [0, 0, 1]


def test_md_hand_worked_three_records_two_attributes():
    zb = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]])
    differences = np.array([[1.0, 1.0], [-1.0, 1.0], [0.0, -2.0]])
    za = zb + differences
    # Cov(ZA - ZB) (ddof=1) = [[2, 0], [0, 6]] / 2 = diag(1, 3), so d = dx^2 + dy^2 / 3
    distance = Mahalanobis().from_data(za, zb, ("x", "y"))
    np.testing.assert_allclose(distance.precision, np.diag([1.0, 1 / 3]), atol=1e-12)
    # d(a0,.) = 4/3, 13/3, 4 ; d(a1,.) = 13/3, 4/3, 7 ; d(a2,.) = 4/3, 31/3, 4/3 (tie)
    np.testing.assert_allclose(
        distance.pairwise(za, zb), [[4 / 3, 13 / 3, 4], [13 / 3, 4 / 3, 7], [4 / 3, 31 / 3, 4 / 3]]
    )
    result = link_records(za, zb, distance)
    assert (result.n_correct, result.n_ties) == (2, 1)


def test_unmasked_copy_am_is_100_percent_and_md_is_a_clear_error():
    census = load_census().iloc[:200]
    result = dbrl(census, census.copy(), distance="am")
    assert (result.n_correct, result.n_ties, result.rate) == (200, 0, 1.0)
    with pytest.raises(InputError, match="MD is undefined"):
        dbrl(census, census.copy(), distance="md")


def test_md_pseudo_inverse_when_an_attribute_is_unmasked():
    census = load_census().iloc[:200, :3]
    masked = microaggregate(census, groups=[(["AFNLWGT", "AGI"], 3)])  # EMCONTRB unmasked
    with pytest.warns(DataWarning, match=r"singular \(rank 2 of 3; unmasked attribute\(s\) \['EMCONTRB'\]"):
        result = dbrl(census, masked, distance="md")
    assert 0 < result.n_correct <= 200


def test_ties_are_not_correct():
    original = pd.DataFrame({"a": [0.0, 0.0, 5.0, 9.0], "b": [1.0, 1.0, 2.0, 7.0]})
    with pytest.warns(DataWarning, match="2 original records"):
        result = dbrl(original, original.copy())
    assert (result.n_correct, result.n_ties) == (2, 2)


def test_standardisation_is_per_file():
    census = load_census().iloc[:100, :4]
    rescaled = census * 7.0 + 3.0  # the same z-scores
    assert dbrl(census, rescaled).n_correct == 100


def test_shuffled_files_aligned_by_id_give_the_aligned_result():
    original, masked = build(published_recipe("M4-28"))
    aligned = dbrl(original, masked, distance="md")
    ids = [f"r{i:03d}" for i in range(len(original))]
    shuffled = masked.assign(rid=ids).sample(frac=1, random_state=11)
    by_id = dbrl(original.assign(rid=ids), shuffled, distance="md", id_column="rid")
    assert by_id.to_dict() == aligned.to_dict()
    np.testing.assert_array_equal(by_id.correct, aligned.correct)


def test_chunking_does_not_change_the_result():
    original, masked = build(published_recipe("M5-38"))
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    distance = get_family("md").from_data(za, zb, tuple(original.columns))
    whole = link_records(za, zb, distance)
    chunked = link_records(za, zb, distance, max_bytes=400 * 5 * 8 * 7)  # 7 rows a chunk
    np.testing.assert_array_equal(whole.correct, chunked.correct)
    np.testing.assert_array_equal(whole.tied, chunked.tied)


def test_am_is_euclidean_on_the_published_files():
    original, masked = build(published_recipe("M4-33"))
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    d = ((za[:, None, :] - zb[None, :, :]) ** 2).sum(axis=2)
    nearest_other = np.where(np.eye(400, dtype=bool), np.inf, d).min(axis=1)
    assert dbrl(original, masked).n_correct == int((np.diag(d) < nearest_other).sum())


def test_unknown_or_learned_distance_name():
    original, masked = build(published_recipe("M4-33"))
    with pytest.raises(InputError, match="unknown distance family 'xyz'"):
        dbrl(original, masked, distance="xyz")


def test_eia_full_file_runs_in_chunks():
    eia = load_eia()[list(EIA_ATTRIBUTES)]
    masked = microaggregate(eia, k=3)
    result = dbrl(eia, masked, distance="am")
    assert result.n_records == 4092 and 0 < result.n_correct < 4092
