"""Fuzzy microaggregation (Torra 2017) and its transparency attack."""

import warnings

import numpy as np
import pandas as pd
import pytest

from rlopt.attacks.fuzzy import _fuzzy_posteriors, fuzzy_attack
from rlopt.data import load_census, validate_pair
from rlopt.exceptions import DataWarning, InputError
from rlopt.masking.fuzzy import (
    fit_scaling,
    fuzzy_c_means,
    fuzzy_microaggregate,
    memberships,
    squared_distances,
)

CRISP = 1.0 + 1e-9  # m2 this close to 1: the nearest centre gets membership 1


@pytest.fixture(scope="module")
def census():
    return load_census()


def _blobs(seed=3, n_per=15, n_attributes=4):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=6.0, size=(4, n_attributes))
    x = np.repeat(centres, n_per, axis=0) + rng.normal(size=(4 * n_per, n_attributes))
    return pd.DataFrame(x, columns=[f"a{k}" for k in range(n_attributes)])


# ---- memberships -----------------------------------------------------------------


def test_memberships_hand_worked():
    # 1-D points 0, 1, 3, 4; centres 0.5, 3.5; m2 = 2, so u_ij = (1/d2_ij) / sum_r (1/d2_ir):
    # x=0: d2 = 0.25, 12.25 -> 1/d2 = 4, 4/49 -> u = 4 / (4 + 4/49) = 49/50, then 1/50
    # x=1: d2 = 0.25, 6.25  -> 1/d2 = 4, 4/25 -> u = 25/26, 1/26
    # x=3, x=4: the mirror images: 1/26, 25/26 and 1/50, 49/50
    u = memberships([[0.0], [1.0], [3.0], [4.0]], [[0.5], [3.5]], 2.0)
    expected = [[49 / 50, 1 / 50], [25 / 26, 1 / 26], [1 / 26, 25 / 26], [1 / 50, 49 / 50]]
    np.testing.assert_allclose(u, expected, rtol=1e-12)


def test_memberships_of_a_record_on_a_centre():
    # on one centre: 1 there, 0 elsewhere; on two coincident centres: split equally
    u = memberships([[0.5], [2.0]], [[0.5], [3.5], [0.5]], 2.0)
    np.testing.assert_array_equal(u[0], [0.5, 0.0, 0.5])
    assert np.isfinite(u).all()
    np.testing.assert_allclose(u.sum(axis=1), 1.0)
    # exactly zero also in many dimensions (the expanded distance is recomputed exactly)
    x = np.random.default_rng(0).normal(size=(5, 7)) * 1e3
    np.testing.assert_array_equal(memberships(x, x[[2, 4]], 1.5)[[2, 4]], [[1.0, 0.0], [0.0, 1.0]])


def test_memberships_extreme_fuzziness_stays_finite():
    x = np.random.default_rng(1).normal(size=(40, 3))
    centres = x[:6] + 0.01
    crisp = memberships(x, centres, CRISP)
    nearest = squared_distances(x, centres).argmin(axis=1)
    np.testing.assert_array_equal(crisp, np.eye(6)[nearest])
    flat = memberships(x, centres, 1e6)
    assert np.abs(flat - 1 / 6).max() < 1e-3


# ---- fuzzy c-means ---------------------------------------------------------------


def test_fcm_finds_separated_blobs():
    x = _blobs().to_numpy()
    centres, u = fuzzy_c_means(x, 4, 2.0, seed=0)
    blob_means = x.reshape(4, 15, -1).mean(axis=1)
    gaps = np.abs(centres[:, None, :] - blob_means[None, :, :]).max(axis=2)
    assert sorted(gaps.argmin(axis=1)) == [0, 1, 2, 3] and gaps.min(axis=1).max() < 0.2
    np.testing.assert_allclose(u.sum(axis=1), 1.0)
    np.testing.assert_allclose(u, memberships(x, centres, 2.0), rtol=1e-12)


def test_fcm_lowers_the_objective_and_is_seeded():
    x = np.random.default_rng(2).normal(size=(80, 3))

    def objective(centres):
        return (memberships(x, centres, 2.0) ** 2 * squared_distances(x, centres)).sum()

    one, _ = fuzzy_c_means(x, 5, 2.0, seed=4, max_iter=1)
    full, _ = fuzzy_c_means(x, 5, 2.0, seed=4)
    assert objective(full) < objective(one)
    np.testing.assert_array_equal(full, fuzzy_c_means(x, 5, 2.0, seed=4)[0])
    assert not np.array_equal(full, fuzzy_c_means(x, 5, 2.0, seed=5)[0])


# ---- fuzzy microaggregation ------------------------------------------------------


def test_one_cluster_gives_the_column_means(census):
    masked = fuzzy_microaggregate(census, c=1)
    means = census.mean(axis=0).to_numpy()
    np.testing.assert_allclose(masked.to_numpy(), np.broadcast_to(means, census.shape), rtol=1e-9)


def test_large_m2_gives_near_uniform_memberships(census):
    values = census.to_numpy(dtype=float)
    z = fit_scaling(values).apply(values)
    centres, _ = fuzzy_c_means(z, 10, 2.0, seed=0)
    u = memberships(z, centres, 1e6)
    assert np.abs(u - 1 / 10).max() < 1e-3


def test_group_size_is_about_n_over_c(census):
    # k = 5: c = 216 clusters. The records sharing a published centre form a group; the
    # mean group size over the centres that were drawn is N / (number drawn). With seed 0,
    # 213 of the 216 clusters are drawn: 5.07 records per group; tolerance 10 % of N/c.
    n, c = len(census), len(census) // 5
    masked = fuzzy_microaggregate(census, c=c, seed=0)
    _, sizes = np.unique(masked.to_numpy(), axis=0, return_counts=True)
    assert sizes.sum() == n and len(sizes) <= c
    assert abs(sizes.mean() - n / c) <= 0.10 * n / c


def test_groups_are_aggregated_on_their_own_and_others_kept():
    data = _blobs(n_attributes=5)
    masked = fuzzy_microaggregate(data, groups=[(["a0", "a1"], 6), (["a3"], 4)], seed=1)
    pd.testing.assert_frame_equal(masked[["a2", "a4"]], data[["a2", "a4"]])
    assert len(np.unique(masked[["a0", "a1"]].to_numpy(), axis=0)) <= 6
    assert masked["a3"].nunique() <= 4
    assert masked.index.equals(data.index) and list(masked.columns) == list(data.columns)
    only = fuzzy_microaggregate(data, c=3, columns=["a4"], seed=1)
    assert only["a4"].nunique() <= 3
    pd.testing.assert_frame_equal(only.drop(columns="a4"), data.drop(columns="a4"))


def test_seed_reproducibility():
    data = _blobs()
    first = fuzzy_microaggregate(data, c=6, m2=1.5, seed=11)
    pd.testing.assert_frame_equal(first, fuzzy_microaggregate(data, c=6, m2=1.5, seed=11))
    assert not first.equals(fuzzy_microaggregate(data, c=6, m2=1.5, seed=12))


def test_array_input_a_constant_column_and_a_single_record():
    x = np.column_stack([np.arange(10.0), np.full(10, 7.0)])
    masked = fuzzy_microaggregate(x, c=3)
    assert list(masked.columns) == ["x0", "x1"]
    np.testing.assert_allclose(masked["x1"], 7.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        single = fuzzy_microaggregate([[1.5, -3.0]], c=1)
    np.testing.assert_allclose(single.to_numpy(), [[1.5, -3.0]])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"c": 5000}, "c=5000 for 1080 records; expected 1 <= c <= 1080"),
        ({"c": 0}, "c=0 for 1080 records; expected 1 <= c <= 1080"),
        ({"c": 2.5}, "c=2.5; expected an integer with 1 <= c <= 1080"),
        ({"c": True}, "c=True; expected an integer"),
        ({"c": 10, "m1": 1.0}, "m1=1.0; expected a number > 1"),
        ({"c": 10, "m2": float("nan")}, "m2=nan; expected a number > 1"),
        ({"c": 10, "m2": float("inf")}, "m2=inf; expected a number > 1"),
        ({"c": 10, "m1": "2"}, "m1='2'; expected a number > 1"),
        ({"c": 10, "seed": -1}, "seed=-1; expected an integer >= 0"),
        ({}, "give exactly one of c=None and groups=None"),
        ({"c": 10, "groups": [(["AGI"], 10)]}, "give exactly one of c=10"),
        ({"groups": [(["AGI", "FICA"], 10), (["FICA"], 10)]}, "['FICA'] appear in more than one group"),
        ({"groups": [(["AGI"], 5000)]}, "c=5000 for 1080 records"),
        ({"groups": [(["AGI"], 10)], "columns": ["AGI"]}, "columns=['AGI'] with groups"),
        ({"c": 10, "columns": ["nope"]}, "unknown column(s) ['nope']"),
    ],
)
def test_bad_parameters_raise_input_error_naming_the_value(census, kwargs, message):
    with pytest.raises(InputError) as error:
        fuzzy_microaggregate(census, **kwargs)
    assert message in str(error.value)


def test_bad_fcm_and_membership_input():
    x = np.zeros((4, 2))
    with pytest.raises(InputError, match="max_iter=0"):
        fuzzy_c_means(x, 2, 2.0, max_iter=0)
    with pytest.raises(InputError, match="c=5 for 4 records"):
        fuzzy_c_means(x, 5, 2.0)
    with pytest.raises(InputError, match=r"m=1; expected a number > 1"):
        fuzzy_c_means(x, 2, 1)
    with pytest.raises(InputError, match="centres have 3 attribute"):
        memberships(x, np.zeros((2, 3)), 2.0)
    with pytest.raises(InputError, match="NaN or infinity"):
        memberships([[np.nan, 0.0]], x, 2.0)


# ---- the transparency attack -----------------------------------------------------

ORIGINAL = pd.DataFrame({"v": [0.0, 1.0, 3.0, 4.0]})


def test_attack_hand_worked_one_attribute():
    # memberships as in test_memberships_hand_worked (z-scores keep 1-D distance ratios).
    # Masked 0.5, 3.5, 3.5, 3.5; score_ji = u(x_j, masked_i), P(i | j) = score / row sum:
    # x=0: 49/50, 1/50 x 3 -> P(0|0) = 49/52, strictly highest: correct
    # x=1: 25/26, 1/26 x 3 -> P(1|1) = 1/28, linked to 0
    # x=3: 1/26, 25/26 x 3 -> P(2|2) = 25/76, a tie with records 1 and 3: not correct
    # x=4: 1/50, 49/50 x 3 -> P(3|3) = 49/148, a tie: not correct
    masked = pd.DataFrame({"v": [0.5, 3.5, 3.5, 3.5]})
    result = fuzzy_attack(ORIGINAL, masked, c=2)
    own = [49 / 52, 1 / 28, 25 / 76, 49 / 148]
    np.testing.assert_allclose(result.posterior_own, own, rtol=1e-12)
    assert result.n_correct == 1 and result.rate == 0.25
    assert list(result.correct) == [True, False, False, False]
    assert list(result.linked_to) == [0, 0, 1, 1]
    assert result.expected_correct == pytest.approx(sum(own), rel=1e-12)
    assert result.expected_rate == pytest.approx(sum(own) / 4, rel=1e-12)
    summary = result.to_dict()
    assert summary["method"] == "fuzzy" and summary["parameters"]["n_centres"] == [2]


def test_attack_ties_are_not_re_identifications():
    # masked 0.5, 0.5, 3.5, 3.5: x=0 -> 49/50 twice, 1/50 twice: P = 0.49, 0.49, 0.01, 0.01;
    # x=1 -> 25/26 twice, 1/26 twice: P(1|1) = 25/52; every own record ties with another.
    masked = pd.DataFrame({"v": [0.5, 0.5, 3.5, 3.5]})
    result = fuzzy_attack(ORIGINAL, masked, c=2)
    np.testing.assert_allclose(result.posterior_own, [0.49, 25 / 52, 25 / 52, 0.49], rtol=1e-12)
    assert result.n_correct == 0 and result.rate == 0.0


def test_posteriors_sum_to_one_and_match_the_result():
    data_frame = _blobs(n_attributes=4)
    groups = [(["a0", "a1"], 8), (["a2", "a3"], 8)]
    masked = fuzzy_microaggregate(data_frame, groups=groups, m2=1.5, seed=2)
    data = validate_pair(data_frame, masked)
    posterior = _fuzzy_posteriors(data, groups, 1.5)
    np.testing.assert_allclose(posterior.sum(axis=1), 1.0, rtol=1e-12)
    result = fuzzy_attack(data, groups=groups, m2=1.5)
    np.testing.assert_allclose(result.posterior_own, posterior.diagonal(), rtol=1e-12)
    np.testing.assert_array_equal(result.linked_to, posterior.argmax(axis=1))
    assert result.expected_rate == pytest.approx(posterior.diagonal().mean())


def test_crisp_memberships_make_it_an_intersection_attack():
    # m2 -> 1+: every record is put on its nearest centre in each group, and the attack
    # spreads the posterior evenly over the records whose centres equal its own nearest
    # centres in every group (the intersection of its groups), 0 elsewhere
    data_frame = _blobs(seed=5, n_attributes=4)
    groups = [(["a0", "a1"], 10), (["a2", "a3"], 10)]
    masked = fuzzy_microaggregate(data_frame, groups=groups, m2=CRISP, seed=0)
    result = fuzzy_attack(data_frame, masked, groups=groups, m2=CRISP)
    values = masked.to_numpy()
    same = (values[:, None, :] == values[None, :, :]).all(axis=2)
    intersection = same.sum(axis=1)
    np.testing.assert_allclose(result.posterior_own, 1.0 / intersection, rtol=1e-12)
    np.testing.assert_array_equal(result.correct, intersection == 1)
    assert 0 < result.n_correct < len(values)
    posterior = _fuzzy_posteriors(validate_pair(data_frame, masked), groups, CRISP)
    np.testing.assert_allclose(posterior, same / intersection[:, None], atol=1e-300)


def test_attack_on_a_file_masked_otherwise_warns():
    masked = ORIGINAL + np.array([[0.1], [-0.2], [0.3], [0.05]])
    with pytest.warns(DataWarning, match="4 distinct value vectors .* more than c=2"):
        fuzzy_attack(ORIGINAL, masked, c=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fuzzy_attack(ORIGINAL, masked, c=4)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give exactly one of c=None"),
        ({"c": 2, "groups": [(["v"], 2)]}, "give exactly one of c=2"),
        ({"c": 2, "m2": 0.5}, "m2=0.5; expected a number > 1"),
        ({"c": 2, "m1": 1}, "m1=1; expected a number > 1"),
        ({"c": 9}, "c=9 for 4 records"),
        ({"groups": [(["w"], 2)]}, "group column(s) ['w'] are not among the attributes ['v']"),
    ],
)
def test_attack_bad_parameters(kwargs, message):
    masked = pd.DataFrame({"v": [0.5, 3.5, 3.5, 3.5]})
    with pytest.raises(InputError) as error:
        fuzzy_attack(ORIGINAL, masked, **kwargs)
    assert message in str(error.value)


@pytest.mark.slow
def test_group_size_on_census_for_every_k(census):
    for k in (3, 5, 10):
        c = len(census) // k
        masked = fuzzy_microaggregate(census, c=c, seed=0)
        _, sizes = np.unique(masked.to_numpy(), axis=0, return_counts=True)
        assert abs(sizes.mean() - k) <= 0.10 * k


def test_registered_as_a_masking_method_with_its_attack(tmp_path, capsys):
    from rlopt.attacks import plan_attack
    from rlopt.data import validate_pair
    from rlopt.masking import masking_spec
    from tests._helpers import run_main

    census = load_census().iloc[:60, :3]
    spec = masking_spec("fuzzy-microaggregation", c=20, m1=1.5, m2=1.5, seed=4)
    masked = spec.apply(census)
    pd.testing.assert_frame_equal(masked, fuzzy_microaggregate(census, 20, 1.5, 1.5, seed=4))
    attacked = plan_attack(validate_pair(census, masked), spec)("am")
    assert attacked.method == "fuzzy" and 0 <= attacked.n_correct <= 60
    census.to_csv(tmp_path / "o.csv", index=False)
    masked.to_csv(tmp_path / "m.csv", index=False)
    code = run_main(
        ["attack", tmp_path / "o.csv", tmp_path / "m.csv", "--method", "fuzzy", "--c", "20", "--m2", "1.5"]
    )
    assert code == 0 and f"{attacked.n_correct} of 60 records re-identified" in capsys.readouterr().out
    code = run_main(
        ["mask", tmp_path / "o.csv", "--method", "fuzzy", "--c", "61", "--out", tmp_path / "x.csv"]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["error: fuzzy microaggregation c=61 for 60 records; expected 1 <= c <= 60"]


def test_the_risk_assessment_takes_fuzzy_groups_as_pairs_like_mdav_groups():
    from rlopt.masking import masking_spec
    from rlopt.risk import assess_risk

    census = load_census().iloc[:60, :4]
    groups = [(["AFNLWGT", "AGI"], 20), (["EMCONTRB", "FEDTAX"], 20)]
    masked = masking_spec("fuzzy", groups=groups).apply(census)
    risk = assess_risk(census, masked, families=[], folds=0, attack={"method": "fuzzy", "groups": groups})
    direct = fuzzy_attack(census, masked, groups=groups)
    assert risk.figures["attack"]["n_correct"] == direct.n_correct
