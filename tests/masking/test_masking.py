from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from rlopt.data import load_census
from rlopt.exceptions import InputError
from rlopt.masking import (
    PUBLISHED_FILES,
    Recipe,
    additive_noise,
    build,
    load_recipe,
    microaggregate,
    published_recipe,
    rank_swap,
)
from rlopt.masking.mdav import mdav_partition
from rlopt.masking.swapping import rank_window

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


# ---- MDAV -----------------------------------------------------------------------


def test_mdav_hand_worked_six_records():
    # k = 2, one attribute: 6 >= 3k, centroid 7.33 -> farthest r = 20, its nearest 11;
    # farthest from 20 among {0, 1, 2, 10} is s = 0, its nearest 1; {2, 10} (< 2k) is the last group.
    x = pd.DataFrame({"v": [0.0, 1.0, 2.0, 10.0, 11.0, 20.0]})
    assert list(mdav_partition(x.to_numpy(), 2)) == [1, 1, 2, 2, 0, 0]
    assert list(microaggregate(x, k=2)["v"]) == [0.5, 0.5, 6.0, 6.0, 15.5, 15.5]


def _group_sizes(labels):
    return np.bincount(labels)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 60), k=st.integers(1, 8), n_attr=st.integers(1, 4), seed=st.integers(0, 10**6))
def test_mdav_group_sizes_and_means(n, k, n_attr, seed):
    k = min(k, n)
    x = np.random.default_rng(seed).normal(size=(n, n_attr))
    labels = mdav_partition(x, k)
    sizes = _group_sizes(labels)
    if n >= 2 * k:
        assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    else:
        assert list(sizes) == [n]
    masked = microaggregate(pd.DataFrame(x), k=k).to_numpy()
    for g in range(labels.max() + 1):
        rows = labels == g
        np.testing.assert_allclose(masked[rows], np.broadcast_to(x[rows].mean(axis=0), masked[rows].shape))
    np.testing.assert_allclose(masked.mean(axis=0), x.mean(axis=0), atol=1e-12)


def test_mdav_k1_leaves_data_unchanged():
    census = load_census().iloc[:50]
    pd.testing.assert_frame_equal(microaggregate(census, k=1), census.astype(float))


def test_mdav_by_groups_touches_only_its_groups_and_is_deterministic():
    census = load_census().iloc[:100, :5]
    groups = [(["AFNLWGT", "AGI"], 3), (["EMCONTRB"], 5)]
    masked = microaggregate(census, groups=groups)
    pd.testing.assert_frame_equal(masked, microaggregate(census, groups=groups))
    assert (masked[["FEDTAX", "PTOTVAL"]] == census[["FEDTAX", "PTOTVAL"]]).all().all()
    # each group of attributes has its own partition: AFNLWGT and AGI share it
    pairs = masked[["AFNLWGT", "AGI"]].drop_duplicates()
    assert 100 // 5 <= len(pairs) <= 100 // 3
    assert masked["EMCONTRB"].nunique() <= 100 // 5


def test_mdav_bad_k():
    x = pd.DataFrame({"v": [1.0, 2.0, 3.0]})
    with pytest.raises(InputError, match="k=4 is larger than the number of records"):
        microaggregate(x, k=4)
    with pytest.raises(InputError, match=r"k=0; expected an integer >= 1"):
        microaggregate(x, k=0)
    with pytest.raises(InputError, match="more than one group"):
        microaggregate(pd.DataFrame({"a": [1.0, 2], "b": [1.0, 3]}), groups=[(["a"], 1), (["a", "b"], 1)])


# ---- rank swapping --------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:rank swapping with p=")
@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 80), p=st.floats(0.5, 100), seed=st.integers(0, 10**6))
def test_rank_swap_keeps_values_and_respects_window(n, p, seed):
    rng = np.random.default_rng(seed)
    x = pd.DataFrame({"a": rng.integers(0, 10, n).astype(float), "b": rng.normal(size=n)})
    swapped = rank_swap(x, p, seed=seed)
    window = rank_window(p, n)
    for column in x:
        original = x[column].to_numpy()
        new = swapped[column].to_numpy()
        assert sorted(new) == sorted(original)  # same multiset
        rank_of = np.empty(n, dtype=int)
        rank_of[np.argsort(original, kind="stable")] = np.arange(n)
        # the value now in row r came from a rank at most `window` away from row r's rank
        sorted_vals = np.sort(original)
        for r in range(n):
            candidates = np.flatnonzero(sorted_vals == new[r])
            assert np.abs(candidates - rank_of[r]).min() <= window


def test_rank_swap_is_seeded_and_moves_values():
    census = load_census().iloc[:200, :3]
    a = rank_swap(census, 10, seed=1)
    pd.testing.assert_frame_equal(a, rank_swap(census, 10, seed=1))
    assert not a.equals(rank_swap(census, 10, seed=2))
    assert (a.to_numpy() != census.to_numpy()).mean() > 0.5
    assert rank_window(10, 200) == 20


@pytest.mark.parametrize("p", [0, -1, 100.5, float("nan")])
def test_rank_swap_bad_p(p):
    with pytest.raises(InputError, match=r"expected a percentage 0 < p <= 100"):
        rank_swap(pd.DataFrame({"a": [1.0, 2.0]}), p)


# ---- noise ----------------------------------------------------------------------


def test_additive_noise_variance_and_seed():
    rng = np.random.default_rng(0)
    x = pd.DataFrame({"a": rng.normal(size=20000) * 3, "b": rng.normal(size=20000)})
    noisy = additive_noise(x, 0.25, seed=5)
    pd.testing.assert_frame_equal(noisy, additive_noise(x, 0.25, seed=5))
    e = noisy - x
    np.testing.assert_allclose(e.mean(), 0, atol=0.05)
    np.testing.assert_allclose(e.var(), 0.25 * x.var(), rtol=0.05)
    with pytest.raises(InputError, match="variance_ratio=-1"):
        additive_noise(x, -1)


# ---- the published files ----------------------------------------------------------


def test_every_published_config_equals_its_preset():
    paths = sorted((CONFIGS / "published").glob("*.yaml"))
    assert {p.stem for p in paths} == set(PUBLISHED_FILES)
    for path in paths:
        assert load_recipe(path) == PUBLISHED_FILES[path.stem]


@pytest.mark.parametrize("name", list(PUBLISHED_FILES))
def test_published_files_are_400_records_with_the_published_groups(name):
    recipe = published_recipe(name)
    original, masked = build(recipe)
    assert original.shape == masked.shape == (400, int(name[1]))
    for group in recipe.masking.groups:
        labels = masked[group.columns].drop_duplicates()
        assert 400 // (2 * group.k - 1) <= len(labels) <= 400 // group.k
    census = load_census()
    assert original.merge(census, how="left", indicator=True)["_merge"].eq("both").all()


def test_sample_seed_changes_the_sample():
    a, _ = build(published_recipe("M4-33", sample_seed=0))
    b, _ = build(published_recipe("M4-33", sample_seed=1))
    assert not a.equals(b)
    with pytest.raises(InputError, match="unknown published file 'M9-99'"):
        published_recipe("M9-99")


def test_recipe_with_typo_or_bad_value_is_rejected(tmp_path):
    recipe = yaml.safe_load((CONFIGS / "published" / "M4-33.yaml").read_text())
    recipe["sampel_seed"] = 1
    (tmp_path / "typo.yaml").write_text(yaml.safe_dump(recipe))
    with pytest.raises(InputError, match="sampel_seed"):
        load_recipe(tmp_path / "typo.yaml")
    recipe.pop("sampel_seed")
    recipe["masking"]["groups"][0]["k"] = 0
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(recipe))
    with pytest.raises(InputError, match=r"groups\.0\.k"):
        load_recipe(tmp_path / "bad.yaml")
    with pytest.raises(ValueError, match="not in columns"):
        Recipe(
            name="x",
            data="census",
            columns=["AGI"],
            masking={"method": "mdav", "groups": [{"columns": ["FICA"], "k": 3}]},
        )
